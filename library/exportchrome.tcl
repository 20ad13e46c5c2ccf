# exportchrome.tcl --
#
#	export -format chrome: the events of a profile made with -events 1
#	as Chrome trace events (chrome://tracing, Perfetto), balanced per
#	thread.
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::exportlib {}

# Events --
#
#	The events of a profile, checked and balanced: a leave whose frame
#	is not open is dropped; a leave of a frame below the innermost open
#	one closes the frames above it first; frames still open at the end
#	are closed at the last time. Times never go back.
#
# Results:
#	A flat list {ns E|L name ...} in which every enter has its leave.
#	Errors: TCLCPROF NODATA events (none), TCLCPROF DATA FORMAT.

proc ::tclcprof::exportlib::Events {profile} {
    ProfileMeta $profile
    if {![dict exists $profile events]
	    || ![llength [set events [dict get $profile events]]]} {
	Fail {NODATA events} "no events to export: profile with -events 1\
		(-mode exact or both)"
    }
    return [Balance $events]
}

# Balance --
#
#	Events checked and balanced (see Events).

proc ::tclcprof::exportlib::Balance {events} {
    if {[llength $events] % 3} {
	Fail {DATA FORMAT} "invalid profile: events is not a list of\
		time, type and name triples"
    }
    set out {}
    set stack {}
    set depth 0
    set last 0
    set n 0
    foreach {ns type name} $events {
	if {![string is entier -strict $ns] || $ns < 0} {
	    Fail {DATA FORMAT} "invalid profile: event $n: time\
		    [Quote $ns] is not a non-negative integer"
	}
	if {$ns < $last} {
	    set ns $last
	}
	switch -- $type {
	    E {
		if {$depth < [llength $stack]} {
		    lset stack $depth $name
		} else {
		    lappend stack $name
		}
		incr depth
		lappend out $ns E $name
		set last $ns
	    }
	    L {
		if {$depth > 0 && [lindex $stack $depth-1] eq $name} {
		    incr depth -1
		    lappend out $ns L $name
		    set last $ns
		} else {
		    # The innermost open frame of that name, if any.
		    for {set k [expr {$depth - 2}]} {$k >= 0} {incr k -1} {
			if {[lindex $stack $k] eq $name} {
			    break
			}
		    }
		    if {$k >= 0} {
			while {$depth > $k} {
			    incr depth -1
			    lappend out $ns L [lindex $stack $depth]
			}
			set last $ns
		    }
		}
	    }
	    default {
		Fail {DATA FORMAT} "invalid profile: event $n: type\
			[Quote $type] is not E or L"
	    }
	}
	incr n
    }
    while {$depth > 0} {
	incr depth -1
	lappend out $last L [lindex $stack $depth]
    }
    return $out
}

# Chrome --
#
#	Trace events (the JSON object format of chrome://tracing and
#	Perfetto): a begin (B) and end (E) event per call, times in
#	microseconds since the run started, in one process; one track
#	(thread) per thread of the profile (thread_events: the threads
#	other than the starting one), named as the profile's threads are.

proc ::tclcprof::exportlib::Chrome {profile} {
    set events [Events $profile]
    set meta [dict get $profile meta]
    set title [JsonString [Title $meta]]
    set first Tcl
    if {![catch {dict get $meta threads} threads] && [llength $threads] > 1
	    && ![catch {dict get [lindex $threads 0] name} name]} {
	set first $name
    }
    set tracks [list 1 $first $events]
    if {[dict exists $profile thread_events]} {
	set tid 2
	foreach te [dict get $profile thread_events] {
	    if {[catch {dict get $te events} tevents]
		    || [catch {dict get $te name} tname]} {
		Fail {DATA FORMAT} "invalid profile: thread_events is not a\
			list of dicts with name and events"
	    }
	    lappend tracks $tid $tname [Balance $tevents]
	    incr tid
	}
    }
    set lines [list \
	    "\{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":\{\"name\":$title\}\}"]
    foreach {tid tname tevents} $tracks {
	lappend lines "\{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":$tid,\"args\":\{\"name\":[JsonString $tname]\}\}"
	set tail ",\"pid\":1,\"tid\":$tid\}"
	foreach {ns type name} $tevents {
	    if {![info exists json($name)]} {
		set json($name) "\{\"name\":[JsonString $name],\"cat\":\"tcl\",\"ph\":"
	    }
	    lappend lines "$json($name)\"[expr {$type eq "E" ? "B" : "E"}]\",\"ts\":[format %.3f [expr {$ns / 1000.0}]]$tail"
	}
    }
    set other [list "\"exporter\":\"tclcprof [package provide tclcprof]\""]
    foreach key {mode clock label} {
	if {[dict exists $meta $key]} {
	    lappend other "[JsonString $key]:[JsonString [dict get $meta $key]]"
	}
    }
    set doubts [Doubts $meta]
    if {[llength $doubts]} {
	lappend other "\"warning\":[JsonString [join $doubts {, }]]"
    }
    return "\{\"traceEvents\":\[\n[join $lines ,\n]\n\],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":\{[join $other ,]\}\}\n"
}
