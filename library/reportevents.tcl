# reportevents.tcl --
#
#	tclcprof::report -type events: the event handlers a profile saw
#	(its "handlers" key, see doc/tclcprof.n, PROFILES), one row per
#	origin (the procedure and file:line that scheduled them) and kind
#	(after, after idle, fileevent readable|writable, bind, bgerror):
#	how many ran, their total and longest time, and for timers the
#	latency from due time to run.
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::reportlib {}

# Events --
#
#	-type events. -sort total (the default), max, calls (the count),
#	avg (total per timed handler) or name (the origin); -focus keeps the
#	rows whose origin matches a glob pattern, -hide leaves out those
#	whose origin matches one of its patterns; -min is a percentage of
#	the time of all handlers; -limit keeps the first rows.
#
# Results:
#	For -format dict, the rows: dictionaries with origin, kind, count,
#	timed (of count, the handlers whose time is known), total and max
#	(ns), and latency: for timers {mean ns max ns} over the runs whose due
#	time is known, empty otherwise. For text, the empty string.

proc ::tclcprof::reportlib::Events {o profile} {
    set meta [ProfileMeta $profile]
    set rows {}
    if {[dict exists $profile handlers]} {
	set rows [dict get $profile handlers]
	CheckRecords handlers $rows {origin kind count total_ns max_ns} \
		{count total_ns max_ns}
	foreach r $rows {
	    foreach k {timed latency_count latency_ns latency_max_ns} {
		if {[dict exists $r $k]} {
		    CheckRecords handlers [list $r] {} $k
		}
	    }
	}
    }
    CheckMeta $o $meta 1
    set whole 0
    foreach r $rows {
	incr whole [dict get $r total_ns]
    }
    RowFilters $o $whole
    set items {}
    set out {}
    set matched 0
    foreach r $rows {
	set origin [dict get $r origin]
	set t [dict get $r total_ns]
	if {![RowShown $origin "" $t]} {
	    continue
	}
	set count [dict get $r count]
	set timed [expr {[dict exists $r timed] ? [dict get $r timed]
		: $count}]
	set latency {}
	if {[dict exists $r latency_count]
		&& [dict get $r latency_count] > 0} {
	    set latency [dict create \
		    mean [expr {[dict get $r latency_ns]
			/ [dict get $r latency_count]}] \
		    max [dict get $r latency_max_ns]]
	}
	switch -- $sort {
	    self - total {set w $t}
	    calls {set w $count}
	    max {set w [dict get $r max_ns]}
	    avg {set w [expr {$timed > 0 ? double($t) / $timed : 0}]}
	    default {set w 0}
	}
	lappend items [llength $out] $origin [dict get $r kind] $w
	lappend out [dict create origin $origin kind [dict get $r kind] \
		count $count timed $timed total $t \
		max [dict get $r max_ns] latency $latency]
    }
    set items [SortItems $items [expr {$sort eq "name"}]]
    set cut [expr {[llength [Limit items [dict get $o -limit]]] / 4}]
    set sorted [lmap {i - - -} $items {lindex $out $i}]
    if {[dict get $o -format] eq "dict"} {
	return $sorted
    }

    set timeWeights 1
    set lines [Header $o $meta $whole]
    if {![llength $rows]} {
	lappend lines "no event handler ran"
	return [Output $o $lines]
    }
    if {$focusOn && !$matched} {
	lappend lines [NoMatch $o]
	return [Output $o $lines]
    }
    lappend lines [format "%9s %9s %9s %9s %9s  %-20s %s" \
	    Count Total Max Latency (max) Kind Origin]
    foreach r $sorted {
	set lat [dict get $r latency]
	lappend lines [format "%9s %9s %9s %9s %9s  %-20s %s" \
		[EventCount $r] [Dur [dict get $r total]] \
		[expr {[dict get $r timed] > 0 ? [Dur [dict get $r max]] : ""}] \
		[expr {[llength $lat] ? [Dur [dict get $lat mean]] : ""}] \
		[expr {[llength $lat] ? [Dur [dict get $lat max]] : ""}] \
		[dict get $r kind] [Escape [dict get $r origin]]]
    }
    if {$cut} {
	lappend lines "[string repeat { } 49]  \u2026 $cut more"
    }
    return [Output $o $lines]
}

# EventCount --
#	A row's count, "count/timed" when some handlers ran without a
#	command of their own (no time is known for them).

proc ::tclcprof::reportlib::EventCount {r} {
    set count [dict get $r count]
    set timed [dict get $r timed]
    if {$timed != $count} {
	return $count/$timed
    }
    return $count
}
