# names.tcl --
#
#	A long run of a program that makes and destroys TclOO objects and
#	coroutines all the time (make bench): each of them made, called and
#	destroyed N times (per-object methods, coroutines resumed directly
#	and from the event loop), unprofiled and under sample and exact
#	mode, in child processes. Figures: the process's resident memory
#	and the names tclcprof keeps (tclcprof::debug names) half way
#	through the loop and at its end, and after stop and reset; what the
#	loop's second half added is what grows without bound (the first
#	half has what is made once: the symbolizer's tables, caches).
#
#	Usage: tclsh names.tcl ?-n N? ?-quick 0|1? ?-out FILE?

source [file join [file dirname [info script]] common.tcl]

set opts [dict merge {-n 200000 -quick 0 -out ""} $argv]
if {[dict get $opts -quick] && ![dict exists $argv -n]} {
    dict set opts -n 20000
}
set n [dict get $opts -n]
set build [pwd]

set script $::bench::rssProc
append script {
    oo::class create C {
        method m {} { return 1 }
        destructor {}
    }
    proc body {} { yield; return }
    proc sleeper {} { after 0 [info coroutine]; yield; incr ::woke }
    proc churn {from to} {
        for {set i $from} {$i < $to} {incr i} {
            set o [C new]
            oo::objdefine $o method pm {} { return 2 }
            $o m
            $o pm
            $o destroy
            coroutine ::co$i body
            ::co$i
            coroutine ::sl$i sleeper
            vwait ::woke
        }
    }
    proc names {} {
        expr {[info commands ::tclcprof::debug] eq "" ? 0
            : [tclcprof::debug names]}
    }
    lassign $argv mode n
    if {$mode ne "none"} {
        package require tclcprof
        tclcprof::start -mode $mode
    }
    churn 0 [expr {$n / 2}]
    set r [list [rssKb] [names]]
    churn [expr {$n / 2}] $n
    lappend r [rssKb] [names]
    if {$mode ne "none"} {
        tclcprof::stop
        lappend r [names]
        tclcprof::reset
        lappend r [names]
    }
    puts $r
}

proc child {args} {
    set f [file join [file dirname [info script]] .names[pid].tcl]
    set fd [open $f w]
    puts $fd [list set auto_path [linsert $::auto_path 0 $::build]]
    puts $fd $::script
    close $fd
    try {
        set out [exec [info nameofexecutable] $f {*}$args 2>@1]
    } finally {
        file delete $f
    }
    return [lindex [split [string trim $out] \n] end]
}

set results {}
puts "objects and coroutines made and destroyed $n times\
    (RSS in KB half way and at the end; names kept):"
foreach mode {none sample exact} {
    lassign [child $mode $n] rss1 names1 rss2 names2 stopped reset
    dict set results ${mode}_rss_half_kb $rss1
    dict set results ${mode}_rss_end_kb $rss2
    if {$mode eq "none"} {
	puts [format "  %-9s RSS %6d -> %6d KB (+%d)" unprofiled $rss1 \
	    $rss2 [expr {$rss2 - $rss1}]]
	continue
    }
    dict set results ${mode}_names_half $names1
    dict set results ${mode}_names_end $names2
    dict set results ${mode}_names_stopped $stopped
    dict set results ${mode}_names_reset $reset
    puts [format "  %-9s RSS %6d -> %6d KB (+%d), names %d -> %d,\
	%d after stop, %d after reset" $mode $rss1 $rss2 \
	[expr {$rss2 - $rss1}] $names1 $names2 $stopped $reset]
}

::bench::addResults [dict get $opts -out] names $results
