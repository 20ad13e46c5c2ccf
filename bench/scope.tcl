# scope.tcl --
#
#	Whole-process benchmarks (make bench). Each figure is
#	measured in child processes, unprofiled and profiled alternately,
#	and the median of several rounds is kept (the machine is shared):
#
#	    threads   4 Thread-package workers each burning a known number
#	              of loop turns at once: wall time of the whole, and
#	              the sum of their CPU, unprofiled vs -scope process
#	              (ratio of profiled to unprofiled)
#	    idle      64 workers blocked in thread::wait for 2 s, on the
#	              wall clock at 1 kHz: the process's CPU time, profiled
#	              and not (what sampling idle threads costs)
#	    rss       the process's resident memory after 64 threads were
#	              profiled, against the same run unprofiled
#
#	(Memory profiling has its own, bench/memory.tcl.)
#
#	Usage: tclsh scope.tcl ?-rounds N? ?-quick 0|1? ?-out FILE?

source [file join [file dirname [info script]] common.tcl]
namespace import ::bench::median

set opts [dict merge {-rounds 5 -quick 0 -out ""} $argv]
if {[dict get $opts -quick] && ![dict exists $argv -rounds]} {
    dict set opts -rounds 3
}
set rounds [dict get $opts -rounds]
set build [pwd]
if {[catch {package require Thread}]} {
    puts "scope.tcl: the Thread package is missing (tcl-thread): skipped"
    exit 0
}

# Run a script in a child tclsh with the package at hand; its last line
# of output is its result.
proc child {script} {
    set f [file join [file dirname [info script]] .scope[pid].tcl]
    set fd [open $f w]
    puts $fd [list set auto_path [linsert $::auto_path 0 $::build]]
    puts $fd [list set build $::build]
    puts $fd $script
    close $fd
    try {
        set out [exec [info nameofexecutable] $f 2>@1]
    } finally {
        file delete $f
    }
    return [lindex [split [string trim $out] \n] end]
}

# The CPU time of this process in ns, and its resident memory in KB.
set helpers $::bench::rssProc
append helpers {
    proc cpuNs {} {
        set f [open /proc/self/stat]
        set fields [lrange [split [read $f] " "] 13 14]
        close $f
        expr {([lindex $fields 0] + [lindex $fields 1]) * 10000000}
    }
}

set threadsScript $helpers
append threadsScript {
    package require Thread
    if {$argv eq "on"} {
        package require tclcprof
        tclcprof::start -scope process
    }
    set t0 [clock microseconds]
    set ids {}
    for {set i 0} {$i < 4} {incr i} {
        set t [thread::create {
            proc burn {n} { for {set i 0} {$i < $n} {incr i} {} }
            thread::wait
        }]
        lappend ids $t
        thread::send -async $t {burn 3000000} ::done($t)
    }
    foreach t $ids {
        if {![info exists ::done($t)]} { vwait ::done($t) }
    }
    set wall [expr {[clock microseconds] - $t0}]
    if {$argv eq "on"} { tclcprof::stop }
    puts "$wall [cpuNs]"
}

set idleScript $helpers
append idleScript {
    package require Thread
    if {$argv eq "on"} {
        package require tclcprof
        tclcprof::start -scope process -clock wall -rate 1000
    }
    set ids {}
    for {set i 0} {$i < 64} {incr i} {
        lappend ids [thread::create { thread::wait }]
    }
    after 300
    set c0 [cpuNs]
    after 2000
    set c1 [cpuNs]
    set rss [rssKb]
    if {$argv eq "on"} { tclcprof::stop }
    puts "[expr {$c1 - $c0}] $rss"
}

proc runPair {script} {
    set on [child "set argv on\n$script"]
    set off [child "set argv off\n$script"]
    list $off $on
}

set results {}
puts "whole process (-scope process), medians of $rounds rounds:"
set walls {}; set cpus {}
for {set r 0} {$r < $rounds} {incr r} {
    lassign [runPair $threadsScript] off on
    lappend walls [expr {double([lindex $on 0]) / [lindex $off 0]}]
    lappend cpus [expr {double([lindex $on 1]) / [lindex $off 1]}]
}
dict set results threads_wall_ratio [format %.3f [median $walls]]
dict set results threads_cpu_ratio [format %.3f [median $cpus]]
puts [format "  4 busy threads: wall %.3fx, CPU %.3fx" [median $walls] \
    [median $cpus]]

set idleOff {}; set idleOn {}; set rssOff {}; set rssOn {}
for {set r 0} {$r < $rounds} {incr r} {
    lassign [runPair $idleScript] off on
    lappend idleOff [expr {[lindex $off 0] / 2e9 * 100}]
    lappend idleOn [expr {[lindex $on 0] / 2e9 * 100}]
    lappend rssOff [lindex $off 1]
    lappend rssOn [lindex $on 1]
}
dict set results idle64_cpu_pct_off [format %.2f [median $idleOff]]
dict set results idle64_cpu_pct_on [format %.2f [median $idleOn]]
dict set results rss64_kb_off [median $rssOff]
dict set results rss64_kb_on [median $rssOn]
puts [format "  64 idle threads, wall clock 1 kHz: %.2f%% of a core\
    (unprofiled %.2f%%)" [median $idleOn] [median $idleOff]]
puts [format "  64 threads: RSS %d KB profiled, %d KB not (%.1f KB a\
    thread)" [median $rssOn] [median $rssOff] \
    [expr {([median $rssOn] - [median $rssOff]) / 64.0}]]

::bench::addResults [dict get $opts -out] scope $results
