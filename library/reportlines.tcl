# reportlines.tcl --
#
#	report -type lines: the call sites of an exact profile made with
#	-lines 1 (Lines), or the sampled source lines of Tcl and C frames
#	(SampledLines).
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::reportlib {}

# RowFilters --
#
#	The row filters of a table view (lines, events), set in the caller's
#	variables focus, focusOn, hide, sort and minWeight (-min as a share
#	of whole).

proc ::tclcprof::reportlib::RowFilters {o whole} {
    upvar 1 focus focus focusOn focusOn hide hide sort sort \
	    minWeight minWeight
    set focus [dict get $o -focus]
    set focusOn [dict get $o focusOn]
    set hide [dict get $o -hide]
    set sort [dict get $o -sort]
    set minWeight [expr {[dict get $o -min] * $whole}]
}

# RowShown --
#
#	Whether a row of a table view is shown: its name matches -focus (as
#	a frame of that kind, FocusMatch; a kind "" as a glob pattern), it is
#	not hidden and its weight t is -min at least. Reads the caller's
#	RowFilters variables; sets its variable matched to 1 for a row -focus
#	keeps.

proc ::tclcprof::reportlib::RowShown {name kind t} {
    upvar 1 focus focus focusOn focusOn hide hide minWeight minWeight \
	    matched matched
    if {$focusOn && !($kind eq "" ? [string match $focus $name]
	    : [FocusMatch $focus $name $kind])} {
	return 0
    }
    set matched 1
    expr {![Hidden $hide $name] && $t * 100.0 >= $minWeight}
}

# Lines --
#
#	-type lines: the call sites of the profile's lines (-lines 1), one
#	row per command at a file and line, with its calls and times.

proc ::tclcprof::reportlib::Lines {o profile} {
    CheckProfile $o $profile lines
    set view [dict get $o -view]
    if {$view eq "samples"
	    || ($view eq "auto" && ![dict exists $profile lines])} {
	return [SampledLines $o $profile]
    }
    if {[catch {dict get $profile lines} rows]} {
	Fail {NODATA lines} "no call-site data: profile with -lines 1\
		(-mode exact or both)"
    }
    set meta [dict get $profile meta]
    # Percentages of the whole exact profile.
    set whole 0
    foreach key {exact tree} {
	if {[dict exists $profile $key total_ns]} {
	    set whole [dict get $profile $key total_ns]
	    break
	}
    }
    RowFilters $o $whole
    set items {}
    set kept {}
    set matched 0
    foreach r $rows {
	set name [dict get $r name]
	set t [dict get $r total_ns]
	if {![RowShown $name tcl $t]} {
	    continue
	}
	set calls [dict get $r calls]
	switch -- $sort {
	    self {set w [dict get $r self_ns]}
	    calls {set w $calls}
	    max {set w [dict get $r max_ns]}
	    avg {set w [expr {$calls > 0 ? double($t) / $calls : 0}]}
	    name {set w 0}
	    default {set w $t}
	}
	lappend items [llength $kept] \
		[format %s:%09d [dict get $r file] [dict get $r line]] $name $w
	lappend kept $r
    }
    set items [SortItems $items [expr {$sort eq "name"}]]
    set cut [expr {[llength [Limit items [dict get $o -limit]]] / 4}]
    set out {}
    foreach {i - - -} $items {
	set r [lindex $kept $i]
	set calls [dict get $r calls]
	dict set r total_pct [Pct [dict get $r total_ns] $whole 2]
	dict set r self_pct [Pct [dict get $r self_ns] $whole 2]
	dict set r avg_ns [expr {$calls > 0 ? [dict get $r total_ns] / $calls
		: 0}]
	lappend out $r
    }
    if {[dict get $o -format] eq "dict"} {
	return $out
    }
    set timeWeights 1
    set lines [Header $o $meta $whole]
    if {$focusOn && !$matched} {
	lappend lines [NoMatch $o]
	return [Output $o $lines]
    }
    lappend lines [format "%9s %9s %6s %9s %6s %9s %9s  %s" \
	    Calls Total % Self % Avg Max Location]
    set div [expr {$whole > 0 ? $whole : 1}]
    foreach r $out {
	set calls [dict get $r calls]
	lappend lines [format "%9s %9s %5.1f%% %9s %5.1f%% %9s %9s  %s:%d %s" \
		$calls [Dur [dict get $r total_ns]] \
		[expr {100.0 * [dict get $r total_ns] / $div}] \
		[Dur [dict get $r self_ns]] \
		[expr {100.0 * [dict get $r self_ns] / $div}] \
		[Dur [dict get $r avg_ns]] \
		[expr {$calls > 0 ? [Dur [dict get $r max_ns]] : ""}] \
		[Escape [ShortPath [dict get $r file]]] [dict get $r line] \
		[Escape [dict get $r name]]]
    }
    if {$cut} {
	lappend lines "[Blank exact]  \u2026 $cut more"
    }
    return [Output $o $lines]
}

# SampledLines --
#
#	-type lines of a sampled tree: the source lines of its frames, C
#	functions with debug information and, from runs with -lines 1, Tcl
#	procedures and scripts of sourced files: one row per frame, file
#	and line, with the samples taken there (In: the sampled instruction
#	or command, or the call to a frame not shown, such as Tcl's own
#	code, is on that line) and through it (Under: In plus the samples
#	under the calls made from that line). Like the flat report, a line
#	of a recursive frame counts a sample once: where no caller of the
#	same frame has that line.

proc ::tclcprof::reportlib::SampledLines {o profile} {
    variable byteWeights
    set meta [Flatten $profile]
    set byteWeights [expr {[dict exists $meta unit]
	    && [dict get $meta unit] eq "bytes"}]
    set noData [list Fail {NODATA lines} "no line data: profile with -lines\
	    1 (-mode sample, both or memory; C functions need debug\
	    information)"]
    set sort [dict get $o -sort]
    if {$sort in {calls avg max}} {
	Fail [list VALUE -sort $sort] "-sort $sort: sampled lines have no\
		call counts"
    }
    set whole [lindex $inTotal 0]
    set focus [dict get $o -focus]
    set focusOn [dict get $o focusOn]
    set hide [dict get $o -hide]
    set lined [NodeLines $inNode]
    if {![llength $lined]} {
	{*}$noData
    }
    foreach {id sl cl} $lined {
	if {$sl ne ""} {
	    set selfL($id) [SourceLines [lindex $inNode $id] self_lines]
	}
	if {$cl ne ""} {
	    set callerL($id) [SourceLines [lindex $inNode $id] caller_lines]
	}
    }

    # Depth first, keys "name module file line kind" on the path counted
    # in onPath; an exit is pushed as -1-id.
    set rowSelf {}
    set rowTotal {}
    set onPath {}
    set found 0
    set stack [lindex $inKids 0]
    while {[llength $stack]} {
	set id [lindex $stack end]
	set stack [lrange $stack[set stack {}] 0 end-1]
	if {$id < 0} {
	    foreach key [dict get $left [expr {-1 - $id}]] {
		dict incr onPath $key -1
	    }
	    dict unset left [expr {-1 - $id}]
	    continue
	}
	set kids [lindex $inKids $id]
	set here {}
	set kind [lindex $inKind $id]
	if {$kind in {c tcl}} {
	    set node [lindex $inNode $id]
	    set name [lindex $inName $id]
	    set module [expr {[dict exists $node module]
		    ? [dict get $node module] : ""}]
	    set self {}
	    set under {}
	    if {[info exists selfL($id)]} {
		foreach {file line w} $selfL($id) {
		    dict incr self [list $name $module $file $line $kind] $w
		    dict incr under [list $name $module $file $line $kind] $w
		}
	    }
	    foreach c $kids {
		if {[info exists callerL($c)]} {
		    foreach {file line w} $callerL($c) {
			dict incr under [list $name $module $file $line $kind] $w
		    }
		}
	    }
	    dict for {key w} $under {
		set found 1
		dict incr rowTotal $key 0
		dict incr rowSelf $key 0
		if {![dict exists $onPath $key] || [dict get $onPath $key] == 0} {
		    dict incr rowTotal $key $w
		}
		if {[dict exists $self $key]} {
		    dict incr rowSelf $key [dict get $self $key]
		}
		dict incr onPath $key
		lappend here $key
	    }
	}
	if {[llength $kids]} {
	    dict set left $id $here
	    lappend stack [expr {-1 - $id}] {*}$kids
	} else {
	    foreach key $here {
		dict incr onPath $key -1
	    }
	}
    }
    if {!$found} {
	{*}$noData
    }

    set minWeight [expr {[dict get $o -min] * $whole}]
    set items {}
    set matched 0
    set kinds {}
    dict for {key t} $rowTotal {
	lassign $key name module file line kind
	if {![RowShown $name $kind $t]} {
	    continue
	}
	set s [dict get $rowSelf $key]
	lappend items $key [format %s:%09d $file $line] $name \
		[expr {$sort eq "self" ? $s : $t}]
    }
    set items [SortItems $items [expr {$sort eq "name"}]]
    set cut [expr {[llength [Limit items [dict get $o -limit]]] / 4}]
    set out {}
    foreach {key - - -} $items {
	lassign $key name module file line kind
	set s [dict get $rowSelf $key]
	set t [dict get $rowTotal $key]
	lappend out [dict create file $file line $line name $name \
		module $module self $s total $t self_pct [Pct $s $whole 2] \
		total_pct [Pct $t $whole 2] kind $kind]
	dict set kinds $kind 1
    }
    if {[dict get $o -format] eq "dict"} {
	return $out
    }
    set timeWeights 0
    set lines [Header $o $meta $whole]
    lset lines end "[lindex $lines end], [expr {[dict exists $kinds tcl]
	    ? "Tcl and C" : "C"}] lines of the samples"
    if {$focusOn && !$matched} {
	lappend lines [NoMatch $o]
	return [Output $o $lines]
    }
    lappend lines [format "%8s %7s %8s %7s  %s" Under % In % Location]
    foreach r $out {
	lappend lines [format "%8s %6s%% %8s %6s%%  %s:%d %s" \
		[Wt [dict get $r total]] [Pct [dict get $r total] $whole 1] \
		[Wt [dict get $r self]] [Pct [dict get $r self] $whole 1] \
		[Escape [ShortPath [dict get $r file]]] [dict get $r line] \
		[Frame [dict get $r name] [dict get $r kind]]]
    }
    if {$cut} {
	lappend lines "[Blank sample]  \u2026 $cut more"
    }
    return [Output $o $lines]
}

# SourceLines --
#
#	A node's C source lines (key self_lines or caller_lines), checked:
#	a flat list {file line weight ...} of non-negative integer lines
#	and weights. Errors: TCLCPROF DATA FORMAT.

proc ::tclcprof::reportlib::SourceLines {node key} {
    set v [dict get $node $key]
    if {![string is list $v] || [llength $v] % 3} {
	Fail {DATA FORMAT} "invalid profile: node \"[Escape [dict get $node \
		name]]\": $key is not a list of file, line and weight"
    }
    foreach {file line w} $v {
	if {![string is wideinteger -strict $line] || $line < 0
		|| ![string is wideinteger -strict $w] || $w < 0} {
	    Fail {DATA FORMAT} "invalid profile: node \"[Escape [dict get \
		    $node name]]\": $key has \"[Escape $line]\" and\
		    \"[Escape $w]\", expected a line and a weight\
		    (non-negative integers)"
	}
    }
    return $v
}

# ShortPath --
#	A file name relative to the current directory when it is below it.

proc ::tclcprof::reportlib::ShortPath {path} {
    set here [pwd]/
    if {[string first $here $path] == 0} {
	return [string range $path [string length $here] end]
    }
    return $path
}
