# reportcheck.tcl --
#
#	Checks of what -type lines, coverage and events read of a profile
#	value (the other types check theirs in Flatten): its meta, its
#	line and coverage records. Errors: TCLCPROF DATA ...
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::reportlib {}

# ProfileMeta --
#
#	Check that a profile value is a dictionary with the given keys
#	(meta first) and that its meta is a dictionary. Errors: TCLCPROF
#	DATA FORMAT, TCLCPROF DATA KEY key.
#
# Results:
#	The meta.

proc ::tclcprof::reportlib::ProfileMeta {profile {keys meta}} {
    if {[catch {dict size $profile}]} {
	Fail {DATA FORMAT} "invalid profile: not a dictionary"
    }
    foreach key $keys {
	if {![dict exists $profile $key]} {
	    Fail [list DATA KEY $key] "invalid profile: missing key \"$key\""
	}
    }
    set meta [dict get $profile meta]
    if {[catch {dict size $meta}]} {
	Fail {DATA FORMAT} "invalid profile: meta is not a dictionary"
    }
    return $meta
}

# CheckProfile, CheckRecords --
#
#	Check what -type lines or coverage reads of a profile (the other
#	types check theirs in Flatten): a dictionary with meta and, when it
#	has them, its lines (records with file, line, name and exact
#	figures) or its coverage (commands, procs and lines), where counts
#	are non-negative integers. Errors: TCLCPROF DATA FORMAT|KEY
#	key|WEIGHT key.

proc ::tclcprof::reportlib::CheckProfile {o profile key} {
    ProfileMeta $profile
    if {![dict exists $profile $key]} {
	return
    }
    if {$key eq "lines"} {
	foreach tree {exact tree} {
	    if {[dict exists $profile $tree total_ns]} {
		set t [dict get $profile $tree total_ns]
		if {![string is double -strict $t]
			|| [catch {expr {$t >= 0 && $t < Inf}} ok] || !$ok} {
		    Fail {DATA WEIGHT total_ns} "invalid profile: node\
			    $tree: total_ns is \"[Escape $t]\", expected a\
			    non-negative number"
		}
		break
	    }
	}
	CheckRecords lines [dict get $profile lines] \
		{file line name calls total_ns self_ns max_ns} \
		{line calls total_ns self_ns max_ns}
	CheckMeta $o [dict get $profile meta] 1
	return
    }
    set cov [dict get $profile coverage]
    if {[catch {dict size $cov}]} {
	Fail {DATA FORMAT} "invalid profile: coverage is not a dictionary"
    }
    foreach k {commands procs lines} {
	if {![dict exists $cov $k]} {
	    Fail [list DATA KEY $k] "invalid profile: coverage: missing key\
		    \"$k\""
	}
    }
    CheckRecords "coverage commands" [dict get $cov commands] \
	    {name tclkind calls} {calls}
    if {![string is list [dict get $cov procs]]} {
	Fail {DATA FORMAT} "invalid profile: coverage procs is not a list"
    }
    CheckRecords "coverage lines" [dict get $cov lines] {file line calls} \
	    {line calls}
    CheckMeta $o [dict get $profile meta] 0
}

# CheckMeta --
#
#	Check what the header of a text report reads of a profile's meta as
#	numbers (rates, exact's figures) and booleans (compensate), and that
#	the clock of times is named (timed: the weights are times). Nothing
#	for -format dict, which does not read meta. Errors: TCLCPROF DATA
#	FORMAT|KEY clock.

proc ::tclcprof::reportlib::CheckMeta {o meta timed} {
    if {[dict get $o -format] ne "text"} {
	return
    }
    if {$timed && ![dict exists $meta clock]} {
	Fail {DATA KEY clock} "invalid profile: meta: missing key \"clock\"\
		(the clock of the times)"
    }
    foreach key {rate_achieved rate_requested} {
	if {![dict exists $meta $key]} {
	    continue
	}
	set v [dict get $meta $key]
	if {![string is double -strict $v]
		|| [catch {expr {$v >= 0 && $v < Inf}} ok] || !$ok} {
	    Fail {DATA FORMAT} "invalid profile: meta: $key is\
		    \"[Escape $v]\", expected a non-negative number"
	}
    }
    if {[dict exists $meta compensate]
	    && ![string is boolean -strict [dict get $meta compensate]]} {
	Fail {DATA FORMAT} "invalid profile: meta: compensate is\
		\"[Escape [dict get $meta compensate]]\", expected a boolean"
    }
    if {![dict exists $meta exact]} {
	return
    }
    set ex [dict get $meta exact]
    if {[catch {dict size $ex}]} {
	Fail {DATA FORMAT} "invalid profile: meta: exact is not a dictionary"
    }
    foreach path {{compensation call_ns} unfinished suspended_ns
	    {events dropped}} {
	if {![dict exists $ex {*}$path]} {
	    continue
	}
	set v [dict get $ex {*}$path]
	if {![string is double -strict $v]
		|| [catch {expr {$v >= 0 && $v < Inf}} ok] || !$ok} {
	    Fail {DATA FORMAT} "invalid profile: meta: exact $path is\
		    \"[Escape $v]\", expected a non-negative number"
	}
    }
}

proc ::tclcprof::reportlib::CheckRecords {what records keys counts} {
    if {![string is list $records]} {
	Fail {DATA FORMAT} "invalid profile: $what is not a list"
    }
    set i 0
    foreach r $records {
	if {[catch {dict size $r}]} {
	    Fail {DATA FORMAT} "invalid profile: $what record $i: not a\
		    dictionary"
	}
	foreach k $keys {
	    if {![dict exists $r $k]} {
		Fail [list DATA KEY $k] "invalid profile: $what record $i:\
			missing key \"$k\""
	    }
	}
	foreach k $counts {
	    set v [dict get $r $k]
	    if {![string is wideinteger -strict $v] || $v < 0} {
		Fail {DATA FORMAT} "invalid profile: $what record $i: $k is\
			\"[Escape $v]\", expected a non-negative integer"
	    }
	}
	incr i
    }
}
