# reportcallers.tcl --
#
#	report -type callers and -type callees: for each frame matching
#	-focus, gprof style, the frames that call it or that it calls,
#	with the calls, self and total time made between the two.
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::reportlib {}

# Relatives --
#
#	-type callers|callees: for each frame (name and kind) of the output
#	tree whose name matches -focus, its callers (the frames it is
#	called from; the top level is "(top)") or its callees, gprof style.
#	A row sums its nodes' calls and self; its total counts a node only
#	when no frame of the same name and kind is above it, so recursion
#	is not counted twice: a row whose every node is recursive has total
#	0 and is marked recursive.
#
# Results:
#	A list of groups {key figure rows}, one per matching frame; figure
#	is {self total fig} of the frame itself, rows a list of
#	{key self total fig recursive}; all sorted and limited. -min
#	leaves out the rows whose total is less than that percentage of
#	their frame's total.

proc ::tclcprof::reportlib::Relatives {o type} {
    upvar 1 oName oName oKind oKind oKey oKey oSelf oSelf oTotal oTotal \
	    oKids oKids oFig oFig hasFig hasFig

    set n [llength $oKey]
    set parent [lrepeat $n -1]
    set rec [lrepeat $n 0]

    # Depth first: each node's parent, and whether a node of the same key
    # is above it.
    set onPath {}
    set stack [lreverse [lindex $oKids 0]]
    foreach c [lindex $oKids 0] {
	lset parent $c 0
    }
    while {[llength $stack]} {
	set id [lindex $stack end]
	set stack [lrange $stack[set stack {}] 0 end-1]
	if {$id < 0} {
	    set key [lindex $oKey [expr {-1 - $id}]]
	    dict incr onPath $key -1
	    continue
	}
	set key [lindex $oKey $id]
	if {[dict exists $onPath $key] && [dict get $onPath $key] > 0} {
	    lset rec $id 1
	}
	dict incr onPath $key
	lappend stack [expr {-1 - $id}]
	foreach c [lindex $oKids $id] {
	    lset parent $c $id
	    lappend stack $c
	}
    }

    set focus [dict get $o -focus]
    set groups {}
    for {set id 1} {$id < $n} {incr id} {
	if {[FocusMatch $focus [lindex $oName $id] [lindex $oKind $id]]} {
	    dict lappend groups [lindex $oKey $id] $id
	}
    }
    set min [dict get $o -min]

    set result {}
    dict for {key ids} $groups {
	# The frame itself.
	lassign [RelSums $ids $rec] s t
	set own [list $s $t [RelFig $ids $rec]]

	# Its relatives: {key -> node ids}, each id counted for the total
	# only when not recursive.
	set rel {}
	foreach id $ids {
	    if {$type eq "callers"} {
		set p [lindex $parent $id]
		set pkey [expr {$p <= 0 ? [list "(top)" root]
			: [lindex $oKey $p]}]
		dict lappend rel $pkey $id
	    } else {
		foreach c [lindex $oKids $id] {
		    dict lappend rel [lindex $oKey $c] $c
		}
	    }
	}
	set rows {}
	dict for {rkey rids} $rel {
	    lassign [RelSums $rids $rec] rs rt allRec
	    if {$rt * 100.0 < $min * $t && !$allRec} {
		continue
	    }
	    lappend rows [list $rkey $rs $rt [RelFig $rids $rec] $allRec]
	}
	lappend result [list $key $own [SortRows $o $rows]]
    }
    return $result
}

# RelSums --
#	The weights of a set of nodes as a row's: {self total allRec}, self
#	of all, total of the non-recursive ones (rec), whether all are.

proc ::tclcprof::reportlib::RelSums {ids rec} {
    upvar 1 oSelf oSelf oTotal oTotal
    set s 0
    set t 0
    set allRec 1
    foreach id $ids {
	set s [expr {$s + [lindex $oSelf $id]}]
	if {![lindex $rec $id]} {
	    set t [expr {$t + [lindex $oTotal $id]}]
	    set allRec 0
	}
    }
    list $s $t $allRec
}

# RelFig --
#	The exact figures of a set of nodes as a row's: calls of all,
#	total time of the non-recursive ones, self time of all, extremes.

proc ::tclcprof::reportlib::RelFig {ids rec} {
    upvar 1 oFig oFig hasFig hasFig
    if {!$hasFig} {
	return {}
    }
    set figs {}
    foreach id $ids {
	set f [lindex $oFig $id]
	if {[llength $f] && [lindex $rec $id]} {
	    lset f 1 0
	}
	lappend figs $f
    }
    return [MergeFigures $figs]
}

# SortRows --
#	Sort and limit rows {key self total fig recursive} by -sort.

proc ::tclcprof::reportlib::SortRows {o rows} {
    set sort [dict get $o -sort]
    set items {}
    set i 0
    foreach r $rows {
	lassign $r key s t fig
	switch -- $sort {
	    self {set w $s}
	    calls {set w [expr {[llength $fig] ? [lindex $fig 0] : 0}]}
	    max {set w [expr {[llength $fig] ? [lindex $fig 4] : 0}]}
	    avg {
		set w [expr {[llength $fig] && [lindex $fig 0] > 0
			? double([lindex $fig 1]) / [lindex $fig 0] : 0}]
	    }
	    default {set w $t}
	}
	lappend items $i {*}$key $w
	incr i
    }
    set items [SortItems $items [expr {$sort eq "name"}]]
    Limit items [dict get $o -limit]
    set out {}
    foreach {i - - -} $items {
	lappend out [lindex $rows $i]
    }
    return $out
}

proc ::tclcprof::reportlib::RelativesDict {groups whole} {
    upvar 1 type type
    set which [expr {$type eq "callers" ? "callers" : "callees"}]
    lmap g $groups {
	lassign $g key own rows
	set d [RelRowDict $key {*}$own 0 $whole]
	dict set d $which [lmap r $rows {
	    lassign $r rkey rs rt fig recursive
	    RelRowDict $rkey $rs $rt $fig $recursive $whole
	}]
	set d
    }
}

proc ::tclcprof::reportlib::RelRowDict {key s t fig recursive whole} {
    set d [dict create name [lindex $key 0] kind [lindex $key 1] \
	    self $s total $t self_pct [Pct $s $whole 2] \
	    total_pct [Pct $t $whole 2] recursive $recursive]
    if {[llength $fig]} {
	foreach k {calls total_ns self_ns min_ns max_ns} v $fig {
	    dict set d $k $v
	}
    }
    return $d
}

proc ::tclcprof::reportlib::RelativesLines {groups type whole} {
    upvar 1 timeWeights timeWeights hasFig hasFig
    set div [expr {$whole > 0 ? $whole : 1}]
    set lines {}
    set who [expr {$type eq "callers" ? "Caller" : "Callee"}]
    if {$timeWeights} {
	set title [format "%9s %9s %6s %9s %6s" Calls Total % Self %]
    } else {
	set title [format "%8s %7s %8s %7s" Under % In %]
	if {$hasFig} {
	    append title [format " %9s %9s" Calls Time]
	}
    }
    foreach g $groups {
	lassign $g key own rows
	lassign $own s t fig
	set what [expr {$timeWeights ? [Dur $t] : [Wt $t]}]
	set head "[Frame {*}$key]: total $what ([Pct $t $whole 1]%)"
	if {[llength $fig]} {
	    set head "[Frame {*}$key]: [lindex $fig 0] calls, total $what\
		    ([Pct $t $whole 1]%)"
	}
	lappend lines "" $head "$title  $who"
	foreach r $rows {
	    lassign $r rkey rs rt rfig recursive
	    set name [Frame {*}$rkey]
	    if {$recursive} {
		append name " (recursive)"
	    }
	    if {$timeWeights} {
		set calls [expr {[llength $rfig] ? [lindex $rfig 0] : ""}]
		lappend lines [format "%9s %9s %6s %9s %5.1f%%  %s" $calls \
			[expr {$recursive ? "-" : [Dur $rt]}] \
			[expr {$recursive ? "-" : "[Pct $rt $whole 1]%"}] \
			[Dur $rs] [expr {100.0 * $rs / $div}] $name]
	    } else {
		set line [format "%8s %6s%% %8s %6s%%" \
			[expr {$recursive ? "-" : [Wt $rt]}] \
			[expr {$recursive ? "-" : [Pct $rt $whole 1]}] \
			[Wt $rs] [Pct $rs $whole 1]]
		if {$hasFig} {
		    append line [BothCells $rfig]
		}
		lappend lines "$line  $name"
	    }
	}
    }
    return $lines
}
