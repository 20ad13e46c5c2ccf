# memory.tcl --
#
#	Memory profiling benchmark (make bench): what -mode memory costs on
#	an allocation-heavy workload, at the default rate (-memrate 512
#	KiB). The workload, a "pass": a simulator's event queue in C
#	(cbtest::memsim 300000: each event and its payload, 24 bytes to 8
#	KiB, allocated, written, queued, read and freed 1024 events later,
#	a log buffer grown by realloc), a 100,000-element Tcl list built and
#	freed, and a 400 KB Tcl string built by append: 1.2 million calls
#	of the hooks, 330 MB allocated, 630 samples at the default rate,
#	some 30 ms unprofiled, about 38% of it in malloc, realloc and free
#	(perf record, unprofiled: malloc, _int_malloc, free, _int_free,
#	unlink_chunk, malloc_consolidate and the PLT stubs). The worst case
#	too, "churn": a loop of nothing but malloc and free (2,000,000 pairs
#	of 64 bytes and 200,000 of 4096, cbtest::memchurn) and a 200,000-
#	element list: 4.4 million calls, 950 MB, 1,850 samples in some 45
#	ms. Figures:
#
#	    steady    the cost per allocation: in one process, the package
#	              loaded in both cases, after one profiled pass (so
#	              that what a profile does once per process is done),
#	              passes unprofiled and profiled alternate (start and
#	              stop outside the timing), their order swapped each
#	              round; in each of 9 processes (their address layouts
#	              differ: ASLR moves a process's figures by a few
#	              percent), the median of 7 rounds' ratios of the
#	              thread's CPU time (the thread CPU clock: the time
#	              other processes take on a shared machine is not
#	              counted); the median of the processes', at the
#	              default rate and with -memrate 1 TiB (no samples: the
#	              hooks' fast paths alone); for the pass (the figure the
#	              1.05x goal is about) and for the churn
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
#	-rounds N: processes and rounds of the steady figure (N+2 of N+2:
#	default 9 of 7; -quick 1: 3 of 3) and rounds of the others (N: 5;
#	-quick 1: 3). -out FILE adds the figures to
#	the results file bench/run.tcl wrote (a Tcl dict), as its key
#	"memprof"; other options bench/run.tcl takes are ignored.

source [file join [file dirname [info script]] common.tcl]
namespace import ::bench::median

set opts [dict merge {-rounds 0 -quick 0 -out ""} $argv]
set quick [dict get $opts -quick]
set steadyRounds [expr {[dict get $opts -rounds] > 0
    ? [dict get $opts -rounds] + 2 : ($quick ? 3 : 7)}]
set steadyProcs [expr {[dict get $opts -rounds] > 0
    ? [dict get $opts -rounds] + 2 : ($quick ? 3 : 9)}]
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
    puts $fd $::bench::rssProc
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

# What every child has: the workload, a timer (and resident memory,
# common.tcl's rssKb).
set common {
    load $cbLib Cbtest
    proc pass {} {
        cbtest::memsim 300000
        set l {}
        for {set i 0} {$i < 100000} {incr i} { lappend l [list $i x] }
        set s {}
        for {set i 0} {$i < 2000} {incr i} {
            append s [string repeat "line $i " 20]
        }
    }
    proc churn {} {
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
    # The CPU time of this thread (clock_gettime's thread CPU clock, in
    # cbtest): unlike wall time, not inflated by the time other
    # processes of a shared machine take the CPU. Not schedstat: the
    # kernel brings a running thread's figure there up to date only at
    # its scheduler tick (4 ms steps here, on passes of 15-50 ms).
    proc cpuUs {script} {
        set t0 [cbtest::cputime]
        uplevel 1 $script
        expr {[cbtest::cputime] - $t0}
    }
}

set results {}
puts "memory profiling (-mode memory), an allocation-heavy workload:"

# --- steady: per allocation ----------------------------------------------

set steadyScript {
    package require tclcprof
    lassign $argv rounds rate pass
    $pass
    tclcprof::start -mode memory -memrate $rate
    $pass
    tclcprof::stop
    set ratios {}
    set offs {}
    set ons {}
    for {set r 0} {$r < $rounds} {incr r} {
        foreach which [expr {$r % 2 ? {on off} : {off on}}] {
            if {$which eq "on"} {
                tclcprof::start -mode memory -memrate $rate
                set on [cpuUs $pass]
                tclcprof::stop
            } else {
                set off [cpuUs $pass]
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
foreach {pass prefix what} {
    pass steady "the pass"
    churn churn "the churn (nothing but malloc and free)"
} {
    foreach {key rate label} {
        default 524288 "default rate (512 KiB)"
        unsampled 1099511627776 "-memrate 1 TiB (no samples: the hooks alone)"
    } {
        # Several processes: each has its own address layout (ASLR), which
        # moves a process's ratios by a few percent one way or the other
        # (glibc's heap, cache sets); the median of their medians.
        set medians {}
        set offs {}
        set ons {}
        for {set p 0} {$p < $steadyProcs} {incr p} {
            lassign [child "set argv {$steadyRounds $rate $pass}\n$steadyScript"] \
                offs1 ons1 ratios sampled overhead
            lappend medians [median $ratios]
            lappend offs {*}$offs1
            lappend ons {*}$ons1
        }
        set ratio [median $medians]
        set sorted [lsort -real $medians]
        dict set results ${prefix}_${key}_ratio [format %.3f $ratio]
        dict set results ${prefix}_${key}_ratio_range [format "%.3f %.3f" \
            [lindex $sorted 0] [lindex $sorted end]]
        dict set results ${prefix}_${key}_ms_off \
            [format %.1f [expr {[median $offs] / 1000.0}]]
        dict set results ${prefix}_${key}_ms_on \
            [format %.1f [expr {[median $ons] / 1000.0}]]
        if {$key eq "default"} {
            dict set results ${prefix}_samples_per_pass $sampled
            dict set results ${prefix}_overhead_bytes $overhead
        }
        puts [format "  per allocation, %s, %s: %.3fx (processes' medians\
            %.3f to %.3f; %.1f ms of CPU profiled, %.1f unprofiled; %d\
            processes of %d rounds)" $what $label $ratio [lindex $sorted 0] \
            [lindex $sorted end] [expr {[median $ons] / 1000.0}] \
            [expr {[median $offs] / 1000.0}] $steadyProcs $steadyRounds]
    }
    puts [format "    %d samples a pass; the profiler's memory after it:\
        %.1f KB (overhead_bytes)" \
        [dict get $results ${prefix}_samples_per_pass] \
        [expr {[dict get $results ${prefix}_overhead_bytes] / 1024.0}]]
}

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
