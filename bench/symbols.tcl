# symbols.tcl --
#
#	Symbolization benchmark (make bench): what naming a native address
#	costs. For each of a few loaded modules (Tcl's library, stripped;
#	the C library, stripped; the tests' helper extension and tclcprof's
#	own library, both built with -g), addresses spread evenly over its
#	executable segments are resolved with tclcprof::debug symbols,
#	which times them in C:
#
#	    first  the first lookups in the process: the module's files are
#	           read and parsed (ns per address, parsing included)
#	    cold   a new symbolizer (as a new profile has), the files
#	           already parsed: nothing cached for the addresses
#	    warm   the same addresses again: every one cached (what a
#	           sample's frames cost once their addresses have been seen)
#
#	and how many distinct names (and, where the symbolizer gives them,
#	source lines) the addresses got.
#
#	Usage: tclsh symbols.tcl ?-addresses N? ?-quick 0|1? ?-out FILE?
#
#	-addresses N: at most N addresses per module (default 20000; -quick
#	1: 4000). -out FILE adds the figures to the results file
#	bench/run.tcl wrote (a Tcl dict), as its key "symbols"; other
#	options bench/run.tcl takes are ignored, so that make passes the
#	same BENCHFLAGS to both.

package require tclcprof

set opts [dict merge {-addresses 20000 -quick 0 -out ""} $argv]
if {[dict get $opts -quick] && ![dict exists $argv -addresses]} {
    dict set opts -addresses 4000
}

# The helper extension, from the build directory (the current one).
set cbLib [file join [pwd] libcbtest[info sharedlibextension]]
if {[file exists $cbLib]} {
    load $cbLib Cbtest
}

# Executable segments of a module, from /proc/self/maps: {start end ...}.
proc segments {pattern} {
    set f [open /proc/self/maps]
    set maps [split [read $f] \n]
    close $f
    set out {}
    foreach line $maps {
        lassign $line range perms - - - path
        if {[string index $perms 2] ne "x"
                || ![string match $pattern [file tail $path]]} {
            continue
        }
        lassign [split $range -] a b
        lappend out [expr {"0x$a"}] [expr {"0x$b"}]
    }
    return $out
}

# At most n addresses spread evenly over the segments.
proc addresses {segs n} {
    set size 0
    foreach {a b} $segs {
        incr size [expr {$b - $a}]
    }
    set step [expr {max(1, $size / $n)}]
    set out {}
    foreach {a b} $segs {
        for {set x [expr {$a + $step / 2}]} {$x < $b} {incr x $step} {
            lappend out $x
        }
    }
    return [lrange $out 0 [expr {$n - 1}]]
}

set results {}
puts "symbolization: ns per address (first: files parsed; cold: new\
    symbolizer; warm: cached)"
puts [format "  %-20s %7s %10s %10s %10s %8s %8s" module addresses first \
    cold warm names lines]
foreach {label pattern} {
    libtcl libtcl8.6.so
    libc libc.so.6
    libcbtest libcbtest.so
    libtclcprof libtclcprof*.so
} {
    set segs [segments $pattern]
    if {![llength $segs]} {
        continue
    }
    set addrs [addresses $segs [dict get $opts -addresses]]
    set first [tclcprof::debug symbols $addrs]
    set again [tclcprof::debug symbols $addrs]
    set names [llength [lsort -unique [dict get $again names]]]
    set lines ""
    if {[dict exists $again lines]} {
        set lines 0
        foreach l [dict get $again lines] {
            if {$l > 0} {
                incr lines
            }
        }
    }
    set r [dict create addresses [llength $addrs] \
        first_ns [format %.0f [dict get $first cold_ns]] \
        cold_ns [format %.0f [dict get $again cold_ns]] \
        warm_ns [format %.1f [dict get $again warm_ns]] names $names]
    if {$lines ne ""} {
        dict set r with_lines $lines
    }
    dict set results $label $r
    puts [format "  %-20s %7d %10s %10s %10s %8d %8s" $pattern \
        [llength $addrs] [dict get $r first_ns] [dict get $r cold_ns] \
        [dict get $r warm_ns] $names $lines]
}

set out [dict get $opts -out]
if {$out ne ""} {
    set all {}
    if {[file exists $out]} {
        set f [open $out]
        set all [read $f]
        close $f
    }
    dict set all symbols $results
    set f [open $out w]
    dict for {k v} $all {
        puts $f [list $k $v]
    }
    close $f
}
