# memory.tcl --
#
#	Memory profiling benchmark (make bench): what -mode memory costs on
#	an allocation-heavy workload, at the default rate (-memrate 512
#	KiB). The workload, a "pass": 2,000,000 malloc/free pairs of 64
#	bytes and 200,000 of 4096 bytes from C (cbtest::memchurn), and a
#	200,000-element Tcl list built and freed: 4.4 million calls of the
#	hooks and about 950 MB allocated, some 50 ms unprofiled. Figures:
#
#	    steady    the cost per allocation: in one process, the package
#	              loaded in both cases, after one profiled pass (so
#	              that what a profile does once per process is done),
#	              passes unprofiled and profiled alternate (start and
#	              stop outside the timing), their order swapped each
#	              round; the median of the rounds' ratios of the
#	              thread's CPU time (schedstat: the time other processes
#	              take on a shared machine is not counted), at the
#	              default rate and with -memrate 1 TiB (no samples: the
#	              hooks' fast paths alone)
#	    once      what is paid once, in fresh processes (medians):
#	              package require, the first start (the hooks patched
#	              into every module's GOT), the first profiled pass
#	              less a later one (the symbolizer reads the symbol
#	              tables and line tables of the modules the samples go
#	              through: shared with sample mode, once per process),
#	              stop (the entries put back, the last drain), and a
#	              later start and stop
#	    fresh     a pass in a fresh process unprofiled (the package never
#	              loaded), against package require, start, the pass and
#	              stop in another: the one-time costs and the
#	              per-allocation cost together, on a 50 ms run
#	    insns     with valgrind: instructions (callgrind, repeatable on a
#	              loaded machine) added per unsampled malloc/free pair
#	              (-memrate 1 TiB, 200,000 pairs of 64 bytes, counted
#	              inside the C function that makes them), and per pass
#	              of the workload at the default rate against
#	              unprofiled (samples, drains and all)
#	    memory    the profiler's memory after a profiled pass (the
#	              meta's overhead_bytes: records of live sampled blocks,
#	              the table slots in use, the filter, the rule cache of
#	              the unwinder, the tree's figures), and the resident
#	              memory of the fresh profiled process against the
#	              unprofiled one
#
#	Usage: tclsh memory.tcl ?-rounds N? ?-quick 0|1? ?-out FILE?
#
#	-rounds N: rounds of the steady figure (4N+1: default 21; -quick 1: 5)
#	and of the others (5; -quick 1: 3). -out FILE adds the figures to
#	the results file bench/run.tcl wrote (a Tcl dict), as its key
#	"memprof"; other options bench/run.tcl takes are ignored.

source [file join [file dirname [info script]] common.tcl]
namespace import ::bench::median

set opts [dict merge {-rounds 0 -quick 0 -out ""} $argv]
set quick [dict get $opts -quick]
set steadyRounds [expr {[dict get $opts -rounds] > 0
    ? 4 * [dict get $opts -rounds] + 1 : ($quick ? 5 : 21)}]
set rounds [expr {[dict get $opts -rounds] > 0
    ? [dict get $opts -rounds] : ($quick ? 3 : 5)}]
set build [pwd]
set cbLib [file join $build libcbtest[info sharedlibextension]]
if {![file exists $cbLib]} {
    puts "memory.tcl: $cbLib is missing (make libcbtest.so): skipped"
    exit 0
}

# Run a script in a child tclsh with the package at hand; its last line
# of output is its result. With a prefix (a command list), under it.
proc child {script {prefix {}}} {
    set f [file join [file dirname [info script]] .memory[pid].tcl]
    set fd [open $f w]
    puts $fd [list set auto_path [linsert $::auto_path 0 $::build]]
    puts $fd [list set cbLib $::cbLib]
    puts $fd $::common
    puts $fd $script
    close $fd
    try {
        set out [exec {*}$prefix [info nameofexecutable] $f 2>@1]
    } finally {
        file delete $f
    }
    return [lindex [split [string trim $out] \n] end]
}

# What every child has: the workload, a timer, resident memory.
set common {
    load $cbLib Cbtest
    proc pass {} {
        cbtest::memchurn 64 2000000
        cbtest::memchurn 4096 200000
        set l {}
        for {set i 0} {$i < 200000} {incr i} { lappend l [list $i x] }
    }
    proc us {script} {
        set t0 [clock microseconds]
        uplevel 1 $script
        expr {[clock microseconds] - $t0}
    }
    # The CPU time of this thread in ns (/proc/thread-self/schedstat):
    # unlike wall time, not inflated by the time other processes of a
    # shared machine take the CPU.
    proc cpuNs {} {
        set f [open /proc/thread-self/schedstat]
        set ns [lindex [read $f] 0]
        close $f
        return $ns
    }
    proc cpuUs {script} {
        set t0 [cpuNs]
        uplevel 1 $script
        expr {([cpuNs] - $t0) / 1000}
    }
    proc rssKb {} {
        set f [open /proc/self/status]
        set kb 0
        foreach line [split [read $f] \n] {
            if {[regexp {^VmRSS:\s+(\d+)} $line -> kb]} break
        }
        close $f
        return $kb
    }
}

set results {}
puts "memory profiling (-mode memory), an allocation-heavy workload:"

# --- steady: per allocation ----------------------------------------------

set steadyScript {
    package require tclcprof
    lassign $argv rounds rate
    pass
    tclcprof::start -mode memory -memrate $rate
    pass
    tclcprof::stop
    set ratios {}
    set offs {}
    set ons {}
    for {set r 0} {$r < $rounds} {incr r} {
        foreach which [expr {$r % 2 ? {on off} : {off on}}] {
            if {$which eq "on"} {
                tclcprof::start -mode memory -memrate $rate
                set on [cpuUs pass]
                tclcprof::stop
            } else {
                set off [cpuUs pass]
            }
        }
        lappend offs $off
        lappend ons $on
        lappend ratios [expr {double($on) / $off}]
    }
    set m [dict get [tclcprof::data] meta memory]
    puts [list $offs $ons $ratios [dict get $m sampled] \
        [dict get $m overhead_bytes]]
}
foreach {key rate label} {
    default 524288 "default rate (512 KiB)"
    unsampled 1099511627776 "-memrate 1 TiB (no samples: the hooks alone)"
} {
    lassign [child "set argv {$steadyRounds $rate}\n$steadyScript"] \
        offs ons ratios sampled overhead
    set ratio [median $ratios]
    dict set results steady_${key}_ratio [format %.3f $ratio]
    dict set results steady_${key}_ms_off \
        [format %.1f [expr {[median $offs] / 1000.0}]]
    dict set results steady_${key}_ms_on \
        [format %.1f [expr {[median $ons] / 1000.0}]]
    if {$key eq "default"} {
        dict set results samples_per_pass $sampled
        dict set results overhead_bytes $overhead
    }
    puts [format "  per allocation, %s: %.3fx (%.1f ms of CPU profiled,\
        %.1f unprofiled, median of %d rounds)" $label $ratio \
        [expr {[median $ons] / 1000.0}] \
        [expr {[median $offs] / 1000.0}] [llength $ratios]]
}
puts [format "    %d samples a pass; the profiler's memory after it: %.1f\
    KB (overhead_bytes)" [dict get $results samples_per_pass] \
    [expr {[dict get $results overhead_bytes] / 1024.0}]]

# --- once, and fresh -----------------------------------------------------

set onceScript {
    set load [us {package require tclcprof}]
    pass
    set start [us {tclcprof::start -mode memory}]
    set first [us pass]
    set second [us pass]
    set stop [us {tclcprof::stop}]
    set again [us {tclcprof::start -mode memory; tclcprof::stop}]
    puts [list $load $start [expr {$first - $second}] $stop $again]
}
set freshScript {
    if {$argv eq "on"} {
        set t [us {
            package require tclcprof
            tclcprof::start -mode memory
            pass
            tclcprof::stop
        }]
    } else {
        set t [us pass]
    }
    puts [list $t [rssKb]]
}
set once {}
set fresh {}
set rss {}
for {set r 0} {$r < $rounds} {incr r} {
    set row [child $onceScript]
    foreach k {load start first stop again} v $row {
        dict lappend once $k [expr {$v / 1000.0}]
    }
    lassign [child "set argv off\n$freshScript"] off rssOff
    lassign [child "set argv on\n$freshScript"] on rssOn
    lappend fresh [expr {double($on) / $off}]
    dict lappend rss off $rssOff
    dict lappend rss on $rssOn
}
foreach k {load start first stop again} {
    dict set results once_${k}_ms [format %.1f [median [dict get $once $k]]]
}
dict set results fresh_ratio [format %.3f [median $fresh]]
dict set results rss_kb_off [median [dict get $rss off]]
dict set results rss_kb_on [median [dict get $rss on]]
puts [format "  once per process: package require %.1f ms, first start\
    %.1f ms, first profiled pass %.1f ms more than the next (symbol\
    tables read), stop %.1f ms; a later start and stop %.1f ms" \
    {*}[lmap k {load start first stop again} {
        dict get $results once_${k}_ms}]]
puts [format "  a fresh process, package, start, pass and stop against an\
    unprofiled pass: %.3fx" [median $fresh]]
puts [format "  resident memory of that process: %d KB, unprofiled %d KB\
    (+%d KB)" [median [dict get $rss on]] [median [dict get $rss off]] \
    [expr {[median [dict get $rss on]] - [median [dict get $rss off]]}]]

# --- instructions (valgrind) ---------------------------------------------

if {[auto_execok valgrind] ne ""} {
    set cgOut [file join [file dirname [info script]] .memory[pid].cg]
    # Instructions counted inside ChurnBlocks: 200,000 pairs of 64 bytes.
    set pairScript {
        package require tclcprof
        cbtest::memchurn 64 1000
        if {$argv eq "on"} {
            tclcprof::start -mode memory -memrate 1099511627776
        }
        cbtest::memchurn 64 200000
        if {$argv eq "on"} { tclcprof::stop }
        puts ok
    }
    # Whole processes of one and of three passes: the difference is two.
    set passScript {
        package require tclcprof
        lassign $argv mode n
        pass
        if {$mode eq "on"} {
            tclcprof::start -mode memory; pass; tclcprof::stop
            tclcprof::start -mode memory
        }
        for {set i 0} {$i < $n} {incr i} { pass }
        if {$mode eq "on"} { tclcprof::stop }
        puts ok
    }
    proc insns {script argv args} {
        set log [file join [file dirname [info script]] .memory[pid].log]
        child "set argv {$argv}\n$script" [list valgrind --tool=callgrind \
            --callgrind-out-file=$::cgOut --log-file=$log {*}$args]
        set f [open $log]
        set text [read $f]
        close $f
        file delete $log $::cgOut
        if {![regexp {Collected : (\d+)} $text -> n]} {
            return -code error "valgrind: $text"
        }
        return $n
    }
    set off [insns $pairScript off --toggle-collect=ChurnBlocks]
    set on [insns $pairScript on --toggle-collect=ChurnBlocks]
    set perPair [expr {($on - $off) / 200000.0}]
    set basePair [expr {$off / 201000.0}]
    dict set results insns_per_pair_added [format %.1f $perPair]
    dict set results insns_per_pair_base [format %.1f $basePair]
    set n {}
    foreach mode {off on} {
        set one [insns $passScript "$mode 1"]
        set three [insns $passScript "$mode 3"]
        dict set n $mode [expr {($three - $one) / 2.0}]
    }
    set insRatio [expr {[dict get $n on] / [dict get $n off]}]
    dict set results insns_pass_off [expr {round([dict get $n off])}]
    dict set results insns_pass_on [expr {round([dict get $n on])}]
    dict set results insns_pass_ratio [format %.3f $insRatio]
    puts [format "  instructions (callgrind): %.1f added per unsampled\
        malloc/free pair (%.1f without the hooks); a pass %.1f M\
        unprofiled, %.1f M at the default rate (%.3fx)" $perPair $basePair \
        [expr {[dict get $n off] / 1e6}] [expr {[dict get $n on] / 1e6}] \
        $insRatio]
} else {
    puts "  (valgrind is missing: no instruction counts)"
}

::bench::addResults [dict get $opts -out] memprof $results
