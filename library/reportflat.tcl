# reportflat.tcl --
#
#	report -type flat: one row per frame (name and kind) wherever it
#	appears, recursion counted once per stack; in a profile of mode
#	both the calls and times of the exact tree by name; as a list of
#	dicts or as text lines.
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::reportlib {}

# FlatRows --
#
#	One row per (name, kind) of the output tree: self summed over its
#	nodes, total summed over its nodes that have no ancestor of the
#	same name and kind (a recursive frame counts once per stack). With
#	exact figures, a row also has {calls primitive total_ns self_ns
#	min_ns max_ns}: calls summed over its nodes, primitive calls and
#	total time over the outermost nodes only (as total), the rest
#	summed or extreme.
#
# Results:
#	A flat list of {key self total src fig} quintuples for the rows that
#	pass -min, sorted and limited, followed by the number and self
#	weight of the rows cut by -limit: {rows cut cutWeight}.

proc ::tclcprof::reportlib::FlatRows {o minWeight} {
    upvar 1 oSrc oSrc oKey oKey oSelf oSelf oTotal oTotal oKids oKids \
	    oFig oFig hasFig hasFig joined joined

    # Number the rows (distinct keys) in the order of first appearance,
    # and remember the first output node of each.
    # Row 0 is the root's, which is no row.
    set index {}
    set keys [list {}]
    set first {0}
    set oRow {0}
    set id 0
    foreach key [lrange $oKey 1 end] {
	incr id
	if {[dict exists $index $key]} {
	    lappend oRow [dict get $index $key]
	} else {
	    lappend oRow [llength $keys]
	    dict set index $key [llength $keys]
	    lappend keys $key
	    lappend first $id
	}
    }
    unset index
    set n [llength $keys]

    # The sums, in C (reportlib::FlatSums) for integer weights; else
    # here.
    set sums [FlatSums $oRow $oSelf $oTotal $oKids \
	    [expr {$hasFig ? $oFig : {}}] $n]
    if {[llength $sums]} {
	lassign $sums rowSelf rowTotal rowFig
    } else {
	set rowSelf [lrepeat $n 0]
	set rowTotal [lrepeat $n 0]
	set onPath [lrepeat $n 0]
	if {$hasFig} {
	    set rowFig [lrepeat $n {}]
	}

	# Depth first (in any order of siblings), counting the rows on the
	# current path; an exit is pushed as -1-id. The root is no row.
	set stack [lindex $oKids 0]
	while {[llength $stack]} {
	    set id [lindex $stack end]
	    set stack [lrange $stack[set stack {}] 0 end-1]
	    if {$id < 0} {
		set k [lindex $oRow [expr {-1 - $id}]]
		lset onPath $k [expr {[lindex $onPath $k] - 1}]
		continue
	    }
	    set k [lindex $oRow $id]
	    set outer [expr {[lindex $onPath $k] == 0}]
	    lset rowSelf $k [expr {[lindex $rowSelf $k] + [lindex $oSelf $id]}]
	    if {$outer} {
		lset rowTotal $k [expr {[lindex $rowTotal $k]
			+ [lindex $oTotal $id]}]
	    }
	    if {$hasFig && [llength [set f [lindex $oFig $id]]]} {
		lassign $f calls tns sns mn mx
		set rf [lindex $rowFig $k]
		if {![llength $rf]} {
		    set rf [list 0 0 0 0 $mn 0]
		}
		lassign $rf rc rp rt rs rmn rmx
		if {$calls > 0 && ($rc == 0 || $mn < $rmn)} {
		    set rmn $mn
		}
		lset rowFig $k [list [expr {$rc + $calls}] \
			[expr {$outer ? $rp + $calls : $rp}] \
			[expr {$outer ? $rt + $tns : $rt}] [expr {$rs + $sns}] \
			$rmn [expr {max($rmx, $mx)}]]
	    }
	    set kids [lindex $oKids $id]
	    if {[llength $kids]} {
		lset onPath $k [expr {[lindex $onPath $k] + 1}]
		lappend stack [expr {-1 - $id}] {*}$kids
	    }
	}
    }

    set withFig $hasFig
    if {!$hasFig && [info exists joined]} {
	set withFig 1
	set rowFig [lmap key $keys {
	    if {[lindex $key 1] eq "tcl"
		    && [dict exists $joined [lindex $key 0]]} {
		dict get $joined [lindex $key 0]
	    } else {
		list
	    }
	}]
    }

    set sort [dict get $o -sort]
    switch -- $sort {
	total {set weights $rowTotal}
	calls - max - avg {
	    # From the row figures: {calls primitive total self min max}.
	    set weights [lmap f $rowFig {
		if {![llength $f]} {
		    expr 0
		} elseif {$sort eq "calls"} {
		    lindex $f 0
		} elseif {$sort eq "max"} {
		    lindex $f 5
		} else {
		    expr {[lindex $f 1] > 0
			    ? double([lindex $f 2]) / [lindex $f 1] : 0}
		}
	    }]
	}
	default {set weights $rowSelf}
    }
    set items {}
    for {set k 1} {$k < $n} {incr k} {
	if {[lindex $rowTotal $k] * 100.0 < $minWeight} {
	    continue
	}
	lappend items $k {*}[lindex $keys $k] [lindex $weights $k]
    }
    set items [SortItems $items [expr {$sort eq "name"}]]
    set cut 0
    set cutWeight 0
    foreach {k - - -} [Limit items [dict get $o -limit]] {
	incr cut
	set cutWeight [expr {$cutWeight + [lindex $rowSelf $k]}]
    }
    set rows {}
    foreach {k - - -} $items {
	lappend rows [lindex $keys $k] [lindex $rowSelf $k] \
		[lindex $rowTotal $k] [lindex $oSrc [lindex $first $k]] \
		[expr {$withFig ? [lindex $rowFig $k] : {}}]
    }
    return [list $rows $cut $cutWeight]
}

# ExactByName --
#
#	Mode both: the exact flat figures of each Tcl command, from the
#	profile's exact tree, as a dict name -> {calls primitive total_ns
#	self_ns min_ns max_ns}.

proc ::tclcprof::reportlib::ExactByName {profile} {
    set o [dict create -channel stdout -focus {} -format dict -hide {} \
	    -limit {} -min 0.0 -sort self -type flat -view exact \
	    focusOn 0 hideGiven 0]
    set out {}
    foreach row [Report $o $profile] {
	dict set out [dict get $row name] [list [dict get $row calls] \
		[dict get $row primitive_calls] [dict get $row total_ns] \
		[dict get $row self_ns] [dict get $row min_ns] \
		[dict get $row max_ns]]
    }
    return $out
}

proc ::tclcprof::reportlib::FlatDict {rows whole} {
    upvar 1 inNode inNode
    variable rowKeys

    lmap {key s t src fig} [lindex $rows 0] {
	set row [dict create name [lindex $key 0] kind [lindex $key 1] \
		self $s total $t self_pct [Pct $s $whole 2] \
		total_pct [Pct $t $whole 2]]
	set node [lindex $inNode $src]
	foreach k $rowKeys {
	    if {[dict exists $node $k]} {
		dict set row $k [dict get $node $k]
	    }
	}
	if {[llength $fig]} {
	    lassign $fig calls prim tns sns mn mx
	    dict set row calls $calls
	    dict set row primitive_calls $prim
	    dict set row total_ns $tns
	    dict set row self_ns $sns
	    dict set row min_ns [expr {$calls > 0 ? $mn : 0}]
	    dict set row max_ns $mx
	    dict set row avg_ns [expr {$prim > 0 ? $tns / $prim : 0}]
	}
	set row
    }
}

proc ::tclcprof::reportlib::FlatLines {rows whole} {
    upvar 1 timeWeights timeWeights hasFig hasFig joined joined
    lassign $rows rows cut cutWeight
    set lines {}
    set div [expr {$whole > 0 ? $whole : 1}]
    set both [expr {!$timeWeights && ($hasFig || [info exists joined])}]
    foreach {key s t - fig} $rows {
	if {$timeWeights} {
	    lassign $fig calls prim - - - max
	    set line [format "%9s %9s %5.1f%% %9s %5.1f%% %9s %9s" \
		    [Calls $calls $prim] [Dur $t] [expr {100.0 * $t / $div}] \
		    [Dur $s] [expr {100.0 * $s / $div}] \
		    [expr {$prim > 0 ? [Dur [expr {$t / $prim}]] : ""}] \
		    [expr {$calls > 0 ? [Dur $max] : ""}]]
	} else {
	    set line [format "%8s %6s%% %8s %6s%%" \
		    [Wt $s] [Pct $s $whole 1] [Wt $t] [Pct $t $whole 1]]
	    if {$both} {
		if {[llength $fig]} {
		    append line [format " %9s %9s" \
			    [Calls [lindex $fig 0] [lindex $fig 1]] \
			    [Dur [lindex $fig 2]]]
		} else {
		    append line [format " %9s %9s" "" ""]
		}
	    }
	}
	lappend lines "$line  [Frame {*}$key]"
    }
    if {$cut} {
	set w [expr {$timeWeights ? [Dur $cutWeight] : [Wt $cutWeight]}]
	lappend lines "[Blank [expr {$timeWeights ? "exact"
		: ($both ? "both" : "sample")}]]  \u2026 $cut more (self $w,\
		[Pct $cutWeight $whole 1]%)"
    }
    return $lines
}
