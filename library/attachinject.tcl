# attachinject.tcl --
#
#	Recording a running process by injection (attach layer, Tcl side):
#	"record -pid PID -mode memory|exact|both" loads tclcprof into the
#	process at a safe point (unix/remoteinject.c,
#	::tclcprof::attach::Inject) and starts a run there, as the TCLCPROF
#	environment variable does; the run writes itself into a database
#	when it stops (its -duration, a second injection that stops it, or
#	the process's exit), which the recording then reads back.
#
#	    ::tclcprof::attach::Injected request	(in the target)
#	    ::tclcprof::attach::RecordInjected pid options	(the tracer)
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::attach {}

# ::tclcprof::attach::Injected --
#
#	Evaluated in the target by Tclcprof_Inject, at its safe point:
#	request is "start OPTIONS" (options of tclcprof::start) or "stop".
#	The start is that of the TCLCPROF environment variable: every
#	thread and interpreter (-scope process), the main script's top
#	level as a frame, the procs already running seeded; the run is
#	written to its -db when it stops, also at the program's exit.
#
# Results:
#	start: the run's id in its database; stop: "stopped", or
#	"not running" when the run had ended already. TCLCPROF ATTACH
#	RUNNING when a run is active at start.

proc ::tclcprof::attach::Injected {request} {
    set opts [lassign $request what]
    switch -- $what {
	start {
	    if {[dict get [::tclcprof::status] running]} {
		return -code error -errorcode {TCLCPROF ATTACH RUNNING} \
		    "a tclcprof run is active in process [pid] already"
	    }
	    set main [::tclcprof::MainScript]
	    if {$main ne ""} {
		::tclcprof::TopScript $main
	    }
	    ::tclcprof::start -scope process {*}[lindex $opts 0]
	    return [dict get [::tclcprof::status] db run]
	}
	stop {
	    if {![dict get [::tclcprof::status] running]} {
		return "not running"
	    }
	    ::tclcprof::stop
	    return stopped
	}
	default {
	    return -code error -errorcode {TCLCPROF USAGE} \
		"bad request \"$what\": must be start or stop"
	}
    }
}

# ::tclcprof::attach::RecordInjected --
#
#	record -pid of the modes that need tclcprof in the process. o: the
#	options of record, checked (attach.tcl); mode: memory, exact or
#	both. The run goes into -db (made absolute: the process has its own
#	working directory), or into a temporary database for -file, which
#	is removed after the export.
#
# Results:
#	The profile as tclcprof::data -db reads it, its meta with attach
#	injected (stored too) and, not stored, injection: the stall and
#	wait of the start's injection (start_stall_ms, start_wait_ms; and
#	start_insert_ms, start_stepped: the breakpoint's hits by other
#	threads stepped over) and
#	of the stop's (stop_stall_ms, stop_wait_ms) when one was made, or
#	stop_timeout 1 when the process reached no safe point for the stop
#	(the run goes on there; the profile is what its last flush wrote).

proc ::tclcprof::attach::RecordInjected {pid mode o} {
    if {![string is integer -strict $pid] || $pid <= 0} {
	return -code error -errorcode {TCLCPROF ATTACH NOPID} \
	    "bad pid \"$pid\": must be a process id"
    }
    if {$::tcl_platform(os) ne "Linux"
	    || $::tcl_platform(machine) ni {x86_64 amd64}} {
	return -code error -errorcode {TCLCPROF ATTACH PLATFORM} \
	    "-mode $mode from outside loads tclcprof into the process,\
	    which is supported on x86-64 Linux only"
    }
    if {[dict get $o -samples]} {
	return -code error -errorcode {TCLCPROF USAGE} \
	    "-samples is for -mode sample from outside; -mode $mode ends\
	    with -duration, Ctrl-C or the process's exit"
    }
    set timeout [dict get $o -timeout]
    if {![string is double -strict $timeout] || !($timeout > 0
	    && $timeout <= 3600)} {
	return -code error -errorcode {TCLCPROF VALUE -timeout} \
	    "bad -timeout \"$timeout\": must be a number of seconds above 0,\
	    at most 3600"
    }
    set timeoutMs [expr {max(1, int($timeout * 1000))}]
    set temp {}
    if {[dict get $o -db] ne ""} {
	set db [file normalize [dict get $o -db]]
    } else {
	set dir [expr {[info exists ::env(TMPDIR)] && $::env(TMPDIR) ne ""
	    ? $::env(TMPDIR) : "/tmp"}]
	set temp [file join $dir tclcprof-inject-[pid]-[clock clicks].db]
	set db $temp
    }
    set start [list -mode $mode -db $db]
    if {[dict get $o -duration] ne ""} {
	lappend start -duration [dict get $o -duration]
    }
    if {[dict get $o -label] ne ""} {
	lappend start -label [dict get $o -label]
    }
    if {$mode ne "memory" && [dict get $o -rateGiven]} {
	lappend start -rate [dict get $o -rate]
    }
    if {[dict get $o -memrate] ne ""} {
	lappend start -memrate [dict get $o -memrate]
    }
    set duration [dict get $o -duration]
    set injection [dict create]
    try {
	set r [Inject $pid [list start $start] $timeoutMs]
	dict set injection start_stall_ms [dict get $r stall_ms]
	dict set injection start_wait_ms [dict get $r wait_ms]
	dict set injection start_insert_ms [dict get $r insert_ms]
	dict set injection start_stepped [dict get $r stepped]
	if {[dict get $r status] ne "ok"} {
	    set code [dict get $r errorcode]
	    if {[lrange $code 0 1] ne {TCLCPROF ATTACH}} {
		set code [list TCLCPROF ATTACH START {*}$code]
	    }
	    return -code error -errorcode $code \
		"cannot start a run in process $pid: [dict get $r result]"
	}
	set run [dict get $r result]
	set t0 [clock milliseconds]
	set end [expr {$duration eq "" ? Inf : $t0 + $duration * 1000}]
	set stoppedBy duration
	if {$duration eq ""} {
	    Interrupt arm
	}
	try {
	    # Wait: -duration (the run stops itself in the process), Ctrl-C
	    # or SIGTERM without it, or the process's exit.
	    while 1 {
		if {[Gone $pid]} {
		    set stoppedBy exit
		    break
		}
		if {$duration eq "" && [Interrupt check]} {
		    set stoppedBy interrupt
		    break
		}
		if {[clock milliseconds] >= $end} {
		    break
		}
		after 50
	    }
	} finally {
	    if {$duration eq ""} {
		Interrupt disarm
	    }
	}
	if {$stoppedBy eq "duration"} {
	    # The run ended by itself: its last write follows at once (or,
	    # in a process that sits in the event loop, at its timer).
	    set deadline [expr {[clock milliseconds] + 2000}]
	    while {[clock milliseconds] < $deadline
		    && ![Gone $pid]
		    && [RunStatus $db $run] ne "complete"} {
		after 100
	    }
	    if {![Gone $pid] && [RunStatus $db $run] ne "complete"} {
		set stoppedBy interrupt
	    }
	}
	if {$stoppedBy eq "interrupt"} {
	    try {
		set r [Inject $pid stop $timeoutMs]
		dict set injection stop_stall_ms [dict get $r stall_ms]
		dict set injection stop_wait_ms [dict get $r wait_ms]
		if {[dict get $r status] ne "ok"} {
		    return -code error -errorcode {TCLCPROF ATTACH STOP} \
			"cannot stop the run in process $pid:\
			[dict get $r result]"
		}
	    } trap {TCLCPROF ATTACH EXITED} {} - trap {TCLCPROF ATTACH NOPID} {} {
		set stoppedBy exit
	    } trap {TCLCPROF ATTACH TIMEOUT} {} {
		# Idle (Tcl 8.6's event loop, a blocking read): the run goes
		# on in the process; what its last flush wrote is read (it
		# flushes from the event loop when the program waits).
		dict set injection stop_timeout 1
	    }
	}
	if {$stoppedBy eq "exit"} {
	    # The exit flush of the process has written the run; a process
	    # killed leaves what its last flush wrote.
	}
	if {[catch {::tclcprof::data -db $db -run $run} profile opts]} {
	    return -code error -errorcode {TCLCPROF ATTACH NODATA} \
		"the run of process $pid could not be read from $db: $profile"
	}
	if {![dict exists $profile meta mode]} {
	    # A run that had written nothing yet (its first flush comes
	    # 5 s after its start): an empty profile of its mode.
	    dict set profile meta [dict merge [dict create mode $mode \
		clock wall elapsed 0 label [dict get $o -label] running 1 \
		stopped_by {}] [dict get $profile meta]]
	}
	dict set profile meta injection $injection
	if {[dict get $o -file] ne ""} {
	    ::tclcprof::export -format [dict get $o -format] \
		-file [dict get $o -file] -data $profile
	}
	return $profile
    } finally {
	if {$temp ne ""} {
	    foreach f [list $temp $temp-wal $temp-shm $temp-journal] {
		file delete -- $f
	    }
	}
    }
}

# RunStatus --
#	The status of run id in database db (running, complete), or "" when
#	it cannot be read now (the process writing it).

proc ::tclcprof::attach::RunStatus {db run} {
    if {![file exists $db]
	    || [catch {::tclcprof::runs -db $db} runs]} {
	return ""
    }
    foreach r $runs {
	if {[dict get $r id] == $run} {
	    return [dict get $r status]
	}
    }
    return ""
}

# Gone --
#	Whether process pid has exited (no more, or a zombie its parent has
#	not waited for yet).

proc ::tclcprof::attach::Gone {pid} {
    if {[catch {open /proc/$pid/stat} chan]} {
	return 1
    }
    set s [read $chan]
    close $chan
    return [expr {[string index $s [string last ) $s]+2] in {Z X}}]
}
