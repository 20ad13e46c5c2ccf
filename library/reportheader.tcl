# reportheader.tcl --
#
#	The header of text reports: what the profile is (mode, clock,
#	samples or calls, time, threads), and warnings of what makes it
#	doubtful (Doubts, shared with export and the flame graph).
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::reportlib {}

# Header --
#
#	The first lines of a text report: what was measured, the label, the
#	exact timing, what makes the profile doubtful (see Doubts), and the
#	view (type, sort, the filters applied and, for a profile of mode
#	both, which tree).

proc ::tclcprof::reportlib::Header {o meta whole} {
    upvar 1 oSelf oSelf oTotal oTotal timeWeights timeWeights \
	    hasExact hasExact treeKey treeKey fellBack fellBack

    set what {}
    if {[dict exists $meta samples]} {
	lappend what "[Num [dict get $meta samples]] samples"
    }
    if {[dict exists $meta weight]} {
	lappend what "(weight [Num [dict get $meta weight]])"
    }
    if {[dict exists $meta calls]} {
	if {[llength $what]} {
	    lset what end "[lindex $what end],"
	}
	lappend what "[Num [dict get $meta calls]] calls"
    }
    if {[dict exists $meta elapsed]} {
	lappend what "over [Num [dict get $meta elapsed] 2 1] s"
    }
    set parts {}
    if {[llength $what]} {
	lappend parts [join $what]
    }
    if {[dict exists $meta clock]} {
	lappend parts "[Escape [dict get $meta clock]] clock"
    }
    if {[dict exists $meta rate_achieved] || [dict exists $meta rate_requested]} {
	set rates {}
	foreach key {rate_achieved rate_requested} {
	    lappend rates [expr {[dict exists $meta $key]
		    ? [Num [dict get $meta $key] 1] : "?"}]
	}
	lappend parts "[join $rates /] Hz"
    }
    if {[dict exists $meta mode]} {
	lappend parts "mode [Escape [dict get $meta mode]]"
    }
    if {[dict exists $meta view] && [dict exists $meta unit]} {
	# A memory profile: which figures, in what.
	lappend parts "[Escape [dict get $meta view]]\
		[Escape [dict get $meta unit]]"
    }
    if {![llength $parts]} {
	lappend parts "profile of weight [Num $whole]"
    }
    set lines [list "tclcprof: [join $parts {, }]"]

    if {[dict exists $meta label] && [dict get $meta label] ne ""} {
	lappend lines "label: [Escape [dict get $meta label]]"
    }
    lappend lines {*}[ThreadHeader $meta [expr {[info exists timeWeights]
	    && $timeWeights}]]
    if {[dict exists $meta merged] && [string is list [dict get $meta merged]]} {
	# A merge of runs (merge.tcl): how many, from how many files.
	set files {}
	foreach part [dict get $meta merged] {
	    if {![catch {dict get $part file} file]} {
		dict set files $file 1
	    }
	}
	set runs [expr {[dict exists $meta runs]
		? [dict get $meta runs] : [llength [dict get $meta merged]]}]
	set line "merged: [Escape $runs] run[expr {$runs == 1 ? "" : "s"}]"
	if {[dict size $files]} {
	    append line " from [dict size $files]\
		    file[expr {[dict size $files] == 1 ? "" : "s"}]"
	}
	lappend lines $line
    }
    lappend lines {*}[ExactHeader $meta]
    set doubts [Doubts $meta]
    if {[llength $doubts]} {
	lappend lines "warning: [join $doubts {, }]"
    }
    lappend lines {*}[TickNote $meta]
    if {[dict exists $meta capture_note]
	    && [dict get $meta capture_note] ne ""} {
	lappend lines "note: capture: [Escape [dict get $meta capture_note]]"
    }

    set type [dict get $o -type]
    if {$type in {callers callees}} {
	set view "$type of [Quote [dict get $o -focus]], sorted by\
		[dict get $o -sort]"
    } elseif {$type eq "coverage"} {
	set view "coverage of procs"
	if {[dict get $o focusOn]} {
	    append view " matching [Quote [dict get $o -focus]]"
	}
    } else {
	set view "$type sorted by [dict get $o -sort]"
    }
    if {[dict get $o -min] > 0 && $type ne "coverage"} {
	append view ", min [format %g [dict get $o -min]]%"
	if {$type in {callers callees}} {
	    append view " of the frame"
	} elseif {[dict get $o focusOn] && $type in {tree flat}} {
	    append view " of the focus"
	}
    }
    if {[dict get $o -limit] ne "" && $type ne "coverage"} {
	append view ", limit [dict get $o -limit]"
    }
    if {[dict get $o focusOn] && $type in {tree flat}} {
	set t [lindex $oTotal 0]
	set w [expr {[info exists timeWeights] && $timeWeights
		? [Dur $t] : [Num $t]}]
	append view ", focus [Quote [dict get $o -focus]] ($w,\
		[Pct $t $whole 1]%)"
    }
    if {[llength [dict get $o -hide]]} {
	append view ", hide [join [lmap p [dict get $o -hide] {Quote $p}]]"
    }
    if {[info exists hasExact] && $hasExact && $type ni {lines coverage}} {
	# Mode both: which of the two trees.
	if {$treeKey eq "tree"} {
	    append view ", sampled tree"
	} elseif {$fellBack} {
	    append view ", exact tree (nothing sampled)"
	} else {
	    append view ", exact tree"
	}
    }
    if {[info exists timeWeights] && $timeWeights} {
	append view ", times in [dict get $meta clock] time"
    }
    lappend lines "view: $view"
    lappend lines {*}[LabelHeader $meta] {*}[TimeHeader $meta]

    set s [expr {[info exists oSelf] ? [lindex $oSelf 0] : 0}]
    if {$s > 0} {
	set w [expr {[info exists timeWeights] && $timeWeights
		? [Dur $s] : [Num $s]}]
	lappend lines "without a frame: $w ([Pct $s $whole 1]%)"
    }
    return $lines
}

# ExactHeader --
#
#	Header lines about exact timing: compensation (when there was any:
#	its absence is a warning, see Doubts), unfinished calls, suspended
#	coroutines, a run that stopped by itself, dropped events.

proc ::tclcprof::reportlib::ExactHeader {meta} {
    set lines {}
    if {![dict exists $meta exact]} {
	return $lines
    }
    set ex [dict get $meta exact]
    set notes {}
    if {[Compensated $meta]} {
	lappend notes "compensated ([Dur [dict get $ex compensation call_ns]]\
		per call)"
    }
    if {[dict exists $ex unfinished] && [dict get $ex unfinished] > 0} {
	lappend notes "[dict get $ex unfinished] unfinished (time counted,\
		not the call)"
    }
    if {[dict exists $ex suspended_ns] && [dict get $ex suspended_ns] > 0} {
	lappend notes "coroutines suspended [Dur [dict get $ex suspended_ns]]"
    }
    if {[dict exists $ex events dropped] && [dict get $ex events dropped]} {
	lappend notes "[dict get $ex events dropped] events dropped"
    }
    if {[dict exists $meta stopped_by] && [dict get $meta stopped_by] ne ""} {
	set by [dict get $meta stopped_by]
	lappend notes [dict get [dict merge [list $by "stopped by $by"] {
	    duration "stopped by -duration"
	    exit "stopped at the program's exit"
	    deleted "stopped when its interpreter was deleted"
	}] $by]
    }
    if {[llength $notes]} {
	lappend lines "exact: [join $notes {, }]"
    }
    return $lines
}

# MetaNumber, Compensated, Doubts --
#
#	What makes a profile doubtful, from its meta (a profile may come
#	from anywhere: keys missing or not numbers are no doubt), as
#	phrases for a warning: nothing sampled; a splice rate below 99%
#	(Tcl frames not placed among the native ones as their anchors
#	say); samples dropped (ring full, handler re-entered, process
#	forking; not the profiler's own time) or truncated (stacks deeper
#	than a sample holds, no signal frame, the tree full); a CPU-time
#	timer that fired for less than half the ticks of CPU time the
#	thread used (a busy machine); calls of the
#	exact tree charged to their caller (the tree full); exact times not
#	compensated (-compensate 0, or no cost per call measured).
#	Shared by report and export.

proc ::tclcprof::reportlib::MetaNumber {meta args} {
    if {[catch {dict get $meta {*}$args} v] || ![string is double -strict $v]
	    || [catch {expr {$v >= 0 && $v < Inf}} ok] || !$ok} {
	return ""
    }
    return $v
}

proc ::tclcprof::reportlib::Compensated {meta} {
    set call [MetaNumber $meta exact compensation call_ns]
    expr {![catch {dict get $meta compensate} on] && [string is true -strict $on]
	    && $call ne "" && $call > 0}
}

proc ::tclcprof::reportlib::Doubts {meta} {
    set doubts {}
    set n [MetaNumber $meta samples]
    if {$n ne "" && $n == 0} {
	lappend doubts "nothing sampled"
    }
    set rate [MetaNumber $meta sampling splice_rate]
    if {$rate ne "" && $rate < 0.99} {
	lappend doubts "splice rate [format %.1f [expr {100.0 * $rate}]]%\
		(below 99%)"
    }
    # The kernel checks a thread's CPU-time timer at its clock ticks, and
    # on a busy machine may not fire it while the thread runs: samples
    # then stand for far less CPU time than the thread used.
    set secs [MetaNumber $meta sampling clock_seconds]
    set req [MetaNumber $meta sampling rate_requested]
    set w [MetaNumber $meta sampling weight]
    if {![catch {dict get $meta sampling clock} clk] && $clk eq "cpu"
	    && $secs ne "" && $req ne "" && $w ne ""
	    && $secs * $req >= 20 && $w < 0.5 * $secs * $req} {
	lappend doubts "the CPU-time timer fired for [Num $w] of\
		[Num [expr {round($secs * $req)}]] ticks of CPU time (the\
		kernel's CPU timers lag on a busy machine: -clock wall\
		samples anyway)"
    }
    set n [MetaNumber $meta sampling short_native_stacks]
    if {$n ne "" && $n > 0} {
	lappend doubts "[Num $n] native stacks ended early (C code without\
		unwind tables?): their Tcl frames are placed above the C\
		frames found"
    }
    foreach {what keys} {
	dropped {drops ring_full drops reentered drops forking}
	truncated {truncated native truncated tcl truncated no_signal_frame
	    truncated tree_nodes}
    } {
	set n 0
	foreach {a b} $keys {
	    set v [MetaNumber $meta sampling $a $b]
	    if {$v ne ""} {
		set n [expr {$n + $v}]
	    }
	}
	if {$n > 0} {
	    lappend doubts "[Num $n] samples $what"
	}
    }
    set n [MetaNumber $meta exact truncated_nodes]
    if {$n ne "" && $n > 0} {
	lappend doubts "[Num $n] calls charged to their caller (exact tree\
		full)"
    }
    if {[dict exists $meta compensate] && ![Compensated $meta]} {
	lappend doubts "not compensated"
    }
    return $doubts
}

# TickNote --
#
#	Why a CPU-clock profile has fewer samples than its -rate asked (a
#	line "note: ..." of the header, or nothing): CPU-time timers fire at
#	the kernel's scheduler tick (250 Hz on Debian), so a higher rate
#	brings heavier samples, not more (weighted by the timer overruns:
#	the totals are right). Said when the rate achieved is at most two
#	thirds of the rate asked and the samples are heavier than one tick
#	on average (the overruns show it; a timer that lagged on a busy
#	machine is a warning of Doubts instead).

proc ::tclcprof::reportlib::TickNote {meta} {
    if {[catch {dict get $meta sampling clock} clk] || $clk ne "cpu"} {
	return {}
    }
    set req [MetaNumber $meta sampling rate_requested]
    set got [MetaNumber $meta sampling rate_achieved]
    set n [MetaNumber $meta sampling samples]
    set w [MetaNumber $meta sampling weight]
    if {$req eq "" || $got eq "" || $n eq "" || $w eq "" || $n < 1
	    || $got <= 0 || $got > $req * 2.0 / 3 || $w < 1.5 * $n} {
	return {}
    }
    return [list "note: [Num $got 1] of [Num $req 1] Hz: the cpu clock's\
	    timer fires at the kernel's tick, and each sample weighs the\
	    periods it stands for ([Num [expr {double($w) / $n}] 1] on\
	    average): the totals are right, the resolution is the tick's;\
	    -clock wall samples at [Num $req 1] Hz"]
}
