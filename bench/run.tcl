# run.tcl --
#
#	tclcprof benchmarks (make bench). Each workload runs unprofiled and
#	under each configuration in turn, interleaved round by round, so that
#	machine noise hits all of them alike; the figure reported is the
#	median over the rounds of each configuration's time divided by the
#	unprofiled time of the same round.
#
#	Besides tclcprof's modes, tcllib's profiler package (the usual pure
#	Tcl profiler) is measured on the same workloads when it is
#	installed: it redefines proc for good, so it runs in child processes,
#	a child with it and a child without it per round.
#
#	Exact mode's compensation is checked too: the compensated total of a
#	workload's top frame against its unprofiled time.
#
#	Usage: tclsh run.tcl ?-rounds N? ?-out FILE? ?-only PATTERN?
#	    ?-peer 0|1?

package require tclcprof

set opts [dict merge {-rounds 7 -out "" -only * -peer 1} $argv]
set rounds [dict get $opts -rounds]
set benchScript [file normalize [info script]]

# The cbtest helper provides an empty object trace with tclcprof's flags:
# the cost of Tcl's trace machinery alone.
set cbLib [file join [expr {[info exists env(TCLCPROF_BUILDDIR)]
    ? $env(TCLCPROF_BUILDDIR) : "."}] libcbtest[info sharedlibextension]]
if {[file exists $cbLib]} {
    load $cbLib Cbtest
}

# --- workloads ------------------------------------------------------------

proc tiny {} {}
proc w_tinyloop {} {
    for {set i 0} {$i < 1000000} {incr i} { tiny }
}
proc fib {n} {
    if {$n < 2} { return $n }
    expr {[fib [expr {$n - 1}]] + [fib [expr {$n - 2}]]}
}
proc w_fib {} { fib 25 }
proc w_builtin {} {
    set s ""
    for {set i 0} {$i < 200000} {incr i} {
        append s [string map {a b} "abc$i"]
        if {[regexp {9$} $i]} { set s [string range $s end-50 end] }
        dict set d [expr {$i % 100}] $i
    }
    lsort [dict keys $d]
}

proc w_cheavy {} {
    # C doing the work, called from a Tcl loop and calling back into Tcl.
    for {set i 0} {$i < 100} {incr i} {
        cbtest::work 2000
        cbtest::callback {cbtest::work 500}
    }
}

set workloads {
    tinyloop {1e6 calls of an empty proc} w_tinyloop
    fib      {recursive fib 25 (250k calls)} w_fib
    builtin  {string/regexp/dict/lsort in a loop} w_builtin
}
if {[llength [info commands cbtest::spin]]} {
    lappend workloads cheavy {C work, C calling back into Tcl} w_cheavy
}

# --- configurations -------------------------------------------------------

set configs [list base {} {}]
if {[llength [info commands cbtest::emptytrace]]} {
    lappend configs emptytrace {cbtest::emptytrace 1} {cbtest::emptytrace 0}
}
lappend configs stack {tclcprof::start -mode stack} {tclcprof::stop}
lappend configs sample {tclcprof::start -mode sample -clock cpu} {tclcprof::stop}
lappend configs sample-wall {tclcprof::start -mode sample -clock wall} {tclcprof::stop}
lappend configs exact {tclcprof::start -mode exact} {tclcprof::stop}
lappend configs exact-lines {tclcprof::start -mode exact -lines 1} {tclcprof::stop}
lappend configs coverage {tclcprof::start -mode coverage} {tclcprof::stop}

# tcllib's profiler in a child: "tclsh run.tcl -child WORKLOAD 0|1" runs
# the workload once, with the profiler when 1, and prints the seconds.
if {[dict exists $opts -child]} {
    lassign [dict get $opts -child] wproc withPeer
    if {$withPeer} {
        package require profiler
        ::profiler::init
        # Only procs defined from now on are instrumented: define them
        # again.
        foreach p {tiny fib w_tinyloop w_fib w_builtin w_cheavy} {
            if {[llength [info procs ::$p]]} {
                proc ::$p [info args ::$p] [info body ::$p]
            }
        }
    }
    # One run: compiling counts alike with and without the profiler.
    set t0 [clock microseconds]
    $wproc
    puts [expr {([clock microseconds] - $t0) / 1e6}]
    exit 0
}
set havePeer [expr {[dict get $opts -peer]
    && ![catch {package require profiler}]}]
proc peerTime {wproc with} {
    global benchScript
    exec [info nameofexecutable] $benchScript -child [list $wproc $with]
}

proc median {l} {
    set l [lsort -real $l]
    set n [llength $l]
    if {$n % 2} { return [lindex $l [expr {$n / 2}]] }
    expr {([lindex $l [expr {$n/2 - 1}]] + [lindex $l [expr {$n/2}]]) / 2.0}
}

proc timeit {script} {
    set t0 [clock microseconds]
    uplevel #0 $script
    expr {([clock microseconds] - $t0) / 1e6}
}

set machine [list cores [exec nproc] tcl [info patchlevel] \
    host [info hostname] date [clock format [clock seconds] -gmt 1]]
puts "tclcprof [package present tclcprof] benchmarks: $machine"
puts "median ratio over $rounds interleaved rounds (time / unprofiled time of the same round)"
puts ""
set results {}
foreach {wname wdesc wproc} $workloads {
    if {![string match [dict get $opts -only] $wname]} continue
    # warm up: compile everything once
    $wproc
    set times {}
    for {set r 0} {$r < $rounds} {incr r} {
        foreach {cname on off} $configs {
            uplevel #0 $on
            set t [timeit $wproc]
            uplevel #0 $off
            dict lappend times $cname $t
        }
        if {$havePeer} {
            dict lappend times peer-base [peerTime $wproc 0]
            dict lappend times profiler [peerTime $wproc 1]
        }
    }
    set base [dict get $times base]
    set row [list workload $wname base_s [format %.3f [median $base]]]
    set line [format "%-9s %-40s base %.3fs" $wname $wdesc [median $base]]
    foreach {cname on off} $configs {
        if {$cname eq "base"} continue
        set ratios [lmap t [dict get $times $cname] b $base {expr {$t / $b}}]
        set m [median $ratios]
        dict set row $cname [format %.3f $m]
        append line [format "  %s %.2fx" $cname $m]
    }
    if {$havePeer} {
        set ratios [lmap t [dict get $times profiler] \
            b [dict get $times peer-base] {expr {$t / $b}}]
        set m [median $ratios]
        dict set row tcllib-profiler [format %.3f $m]
        append line [format "  tcllib-profiler %.1fx" $m]
    }
    puts $line
    lappend results $row
}

# Compensation: exact mode's compensated time of the workload's proc (its
# node's total_ns) against the unprofiled time of the same round; with
# -compensate 0 for comparison.
puts ""
puts "exact mode: compensated total / unprofiled time (median over $rounds rounds)"
foreach {wname wdesc wproc} $workloads {
    if {![string match [dict get $opts -only] $wname]} continue
    set comp {}
    set raw {}
    for {set r 0} {$r < $rounds} {incr r} {
        set b [timeit $wproc]
        foreach c {1 0} {
            tclcprof::start -mode exact -compensate $c
            $wproc
            tclcprof::stop
            if {$c} {
                set cal [dict get [tclcprof::status] exact compensation]
            }
            foreach n [dict get [tclcprof::data] tree children] {
                if {[dict get $n name] eq "::$wproc"} {
                    lappend [expr {$c ? "comp" : "raw"}] \
                        [expr {[dict get $n total_ns] / 1e9 / $b}]
                }
            }
        }
    }
    puts [format "%-9s compensated %.2fx   uncompensated %.2fx   (%d ns per call, %d inside)" \
        $wname [median $comp] [median $raw] [dict get $cal call_ns] \
        [dict get $cal inside_ns]]
    lappend results [list compensation $wname compensated \
        [format %.3f [median $comp]] uncompensated [format %.3f [median $raw]]]
}
# Per-sample handler cost at native depths ~20 and ~60 (C recursion adds
# one frame per level), from the handler's own timing histogram.
if {[llength [info commands cbtest::nest]]} {
    puts ""
    foreach extra {0 40} {
        tclcprof::start -mode sample -clock cpu
        cbtest::nest $extra {cbtest::spin 2000}
        set d [tclcprof::data]
        set h [dict get [tclcprof::status] sampling handler]
        tclcprof::stop
        proc depth {n} {
            set m 0
            foreach c [dict get $n children] {
                set x [depth $c]
                if {$x > $m} { set m $x }
            }
            expr {$m + 1}
        }
        # Count native frames as the sampler saw them: -native all.
        tclcprof::start -mode sample -clock cpu -native all
        cbtest::nest $extra {cbtest::spin 300}
        set native [expr {[depth [dict get [tclcprof::data] tree]] - 1}]
        tclcprof::stop
        puts [format "handler at native depth ~%d: median %.1f us, p99 %.1f us, mean %.1f us" \
            $native [expr {[dict get $h median_ns] / 1e3}] \
            [expr {[dict get $h p99_ns] / 1e3}] [expr {[dict get $h mean_ns] / 1e3}]]
        lappend results [list handler_depth $native median_us \
            [expr {[dict get $h median_ns] / 1e3}] p99_us [expr {[dict get $h p99_ns] / 1e3}]]
    }
}

if {[dict get $opts -out] ne ""} {
    set f [open [dict get $opts -out] w]
    puts $f [list machine $machine rounds $rounds results $results]
    close $f
}
