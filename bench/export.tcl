# export.tcl --
#
#	Export benchmark (make bench): a synthetic sampled profile of
#	100,000 distinct stacks, aggregated by tclcprof itself
#	(tclcprof::debug aggregate), exported once in every tree format to
#	a file. Prints the seconds each export takes, the size of the file
#	and, for comparison, the seconds tclcprof::report takes to check
#	and lay out the same tree (reportlib::Flatten, which every export
#	starts with).
#
#	The stacks are 4 to 19 frames deep, a third of them C functions,
#	drawn from a vocabulary that is narrow near the root and wide below
#	(2 + 4 d^2 names at depth d, at most 400), so that they share their
#	first frames and little else, as a large program's do: about
#	770,000 nodes.
#
#	Usage: tclsh export.tcl ?-stacks N? ?-seed N? ?-formats LIST?
#	    ?-quick 0|1? ?-out FILE?
#
#	-quick 1 makes 20,000 stacks instead of 100,000. -out FILE adds the
#	figures to the results file bench/run.tcl wrote (a Tcl dict), as its
#	key "export"; other options bench/run.tcl takes are ignored, so that
#	make passes the same BENCHFLAGS to both.

source [file join [file dirname [info script]] common.tcl]
package require tclcprof

set opts [dict merge {-stacks 100000 -seed 1
    -formats {folded speedscope callgrind pprof html} -quick 0 -out ""} $argv]
if {[dict get $opts -quick] && ![dict exists $argv -stacks]} {
    dict set opts -stacks 20000
}

proc stacks {n seed} {
    expr {srand($seed)}
    set names {}
    for {set i 0} {$i < 400} {incr i} {
        lappend names [expr {$i % 3 == 0
            ? [list c fn_$i] : [list tcl ::app::proc$i]}]
    }
    set seen {}
    set stacks {}
    while {[dict size $seen] < $n} {
        set s {}
        set depth [expr {4 + int(rand() * 16)}]
        for {set j 0} {$j < $depth} {incr j} {
            lappend s [lindex $names [expr {int(rand() * min(400, 2 + 4 * $j * $j))}]]
        }
        if {[dict exists $seen $s]} {
            continue
        }
        dict set seen $s 1
        lappend stacks [list [expr {1 + int(rand() * 5)}] $s]
    }
    return $stacks
}

proc seconds {script} {
    set t [clock microseconds]
    uplevel 1 $script
    format %.2f [expr {([clock microseconds] - $t) / 1e6}]
}

set n [dict get $opts -stacks]
set s [seconds {set stacks [stacks $n [dict get $opts -seed]]}]
set a [seconds {set tree [tclcprof::debug aggregate $stacks]}]
unset stacks
set profile [dict create meta {mode sample clock cpu rate_requested 250
    label "export benchmark"} tree $tree]
unset tree
set f [seconds {tclcprof::reportlib::Flatten $profile}]
puts "export benchmark: $n distinct stacks, [llength $inName] nodes\
    (made in $s s, aggregated in $a s, checked and laid out in $f s)"
set results [dict create stacks $n nodes [llength $inName] aggregate_s $a \
    layout_s $f]
unset inName inKind inSelf inTotal inKids inFig inNode

set dir [file join [expr {[info exists env(TMPDIR)] ? $env(TMPDIR) : "/tmp"}] \
    tclcprof-bench-[pid]]
file mkdir $dir
try {
    foreach format [dict get $opts -formats] {
        set file [file join $dir profile.$format]
        set t [seconds {tclcprof::export -format $format -data $profile -file $file}]
        puts [format "  %-10s %6s s  %10d bytes" $format $t [file size $file]]
        dict set results formats $format [list seconds $t bytes [file size $file]]
        file delete $file
    }
} finally {
    file delete -force $dir
}

::bench::addResults [dict get $opts -out] export $results
