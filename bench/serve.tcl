# serve.tcl --
#
#	What tclcprof::serve costs the program it serves (its thread and
#	its idle event loop), measured in child processes, unserved and
#	served alternately, medians of several rounds (the machine is
#	shared):
#
#	    busy      a loop of proc calls (about a second of CPU): the
#	              child's CPU time served (no request) / unserved
#	    scraped   the same while a client asks for the index every
#	              50 ms: served and scraped / unserved
#	    idle      the child waits 3 s in the event loop (vwait): its
#	              CPU time in that wait, served and not (ms)
#
#	A profile request costs what profiling costs (bench/run.tcl,
#	bench/scope.tcl): it is a run of -scope process.
#
#	Usage (in the build directory): tclsh bench/serve.tcl ?-rounds N?

set opts [dict merge {-rounds 7} $argv]
set rounds [dict get $opts -rounds]
set build [pwd]

proc median {l} {
    set l [lsort -real $l]
    lindex $l [expr {[llength $l] / 2}]
}

# The child: its CPU time (user + system, ms, from /proc) over the
# measured part, the last line of its output.
proc child {serve kind} {
    set f [file join [file dirname [info script]] .serve[pid].tcl]
    set fd [open $f w]
    puts $fd [list set auto_path [linsert $::auto_path 0 $::build]]
    puts $fd [list set serve $serve]
    puts $fd [list set kind $kind]
    puts $fd {
	package require tclcprof
	proc cpu {} {
	    set f [open /proc/self/stat]
	    set s [read $f]
	    close $f
	    set fields [split [string range $s [string last ) $s]+2 end]]
	    expr {([lindex $fields 11] + [lindex $fields 12]) * 10}
	}
	if {$serve} {
	    set port [tclcprof::serve -port 0]
	}
	if {$kind eq "scraped"} {
	    set pipe [open |[list sh -c "while :; do curl -s -o /dev/null\
		    http://127.0.0.1:$port/debug/pprof/; sleep 0.05; done"]]
	}
	proc f {x} {expr {$x + 1}}
	set c0 [cpu]
	if {$kind eq "idle"} {
	    after 3000 {set done 1}
	    vwait done
	} else {
	    set x 0
	    for {set i 0} {$i < 3000000} {incr i} {set x [f $x]}
	}
	puts [expr {[cpu] - $c0}]
	if {$kind eq "scraped"} {
	    exec kill [pid $pipe]
	}
	exit 0
    }
    close $fd
    try {
	lindex [split [string trim [exec [info nameofexecutable] $f]] \n] end
    } finally {
	file delete $f
    }
}

foreach kind {busy scraped idle} {
    set plain {}
    set served {}
    for {set r 0} {$r < $rounds} {incr r} {
	lappend plain [child 0 [expr {$kind eq "scraped" ? "busy" : $kind}]]
	lappend served [child 1 $kind]
    }
    if {$kind eq "idle"} {
	puts [format "%-8s unserved %d ms CPU, served %d ms CPU (medians of %d)" \
		$kind [median $plain] [median $served] $rounds]
    } else {
	set ratios [lmap p $plain s $served {expr {double($s) / max(1, $p)}}]
	puts [format "%-8s served/unserved CPU %.3f (median of %d; unserved\
		median %d ms)" $kind [median $ratios] $rounds [median $plain]]
    }
}
