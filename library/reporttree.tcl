# reporttree.tcl --
#
#	report -type tree: the nodes kept by -min and -limit (Visible),
#	sorted, as a dict (TreeDict) or as indented text lines (TreeLines).
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::reportlib {}

# Visible --
#
#	Prune (-min), sort (-sort) and limit (-limit) the children of every
#	node of the output tree of the caller. A node whose total is below
#	-min is dropped with its subtree (no descendant can weigh more).
#
# Results:
#	A list indexed by node id: {children cut cutWeight}, where children
#	are the child ids to show, in order, and cut and cutWeight the
#	number and total weight of the children cut by -limit; {{} 0 0}
#	for nodes without children to show and for nodes below -min.

proc ::tclcprof::reportlib::Visible {o minWeight} {
    upvar 1 oName oName oKind oKind oSelf oSelf oTotal oTotal oKids oKids \
	    oFig oFig

    set limit [dict get $o -limit]
    set sort [dict get $o -sort]
    set byName [expr {$sort eq "name"}]
    set weights [SortWeights $sort $oSelf $oTotal \
	    [expr {[info exists oFig] ? $oFig : {}}]]
    set single [expr {$limit eq "" || $limit > 0}]

    set n [llength $oKids]
    set vis [lrepeat $n {{} 0 0}]
    for {set id 0} {$id < $n} {incr id} {
	set kids [lindex $oKids $id]
	if {![llength $kids]
		|| ($id > 0 && [lindex $oTotal $id] * 100.0 < $minWeight)} {
	    continue
	}
	if {[llength $kids] == 1 && $single} {
	    # A single child needs no sorting.
	    if {[lindex $oTotal [lindex $kids 0]] * 100.0 >= $minWeight} {
		lset vis $id [list $kids 0 0]
	    }
	    continue
	}
	set items {}
	foreach c $kids {
	    if {[lindex $oTotal $c] * 100.0 < $minWeight} {
		continue
	    }
	    lappend items $c [lindex $oName $c] [lindex $oKind $c] \
		    [lindex $weights $c]
	}
	if {[llength $items] > 4} {
	    set items [SortItems $items $byName]
	}
	# -limit, as Limit does, inline: this runs per node.
	set cut 0
	set cutWeight 0
	if {$limit ne "" && [llength $items] > 4 * $limit} {
	    foreach {c - - -} [lrange $items [expr {4 * $limit}] end] {
		incr cut
		set cutWeight [expr {$cutWeight + [lindex $oTotal $c]}]
	    }
	    set items [lrange $items 0 [expr {4 * $limit - 1}]]
	}
	set children {}
	foreach {c - - -} $items {
	    lappend children $c
	}
	lset vis $id [list $children $cut $cutWeight]
    }
    return $vis
}

# SortWeights --
#
#	The weight each node (or row) is sorted by: self, total, or from its
#	exact figures calls, avg (total time per call) or max (the longest
#	call); 0 for nodes without figures.

proc ::tclcprof::reportlib::SortWeights {sort selfs totals figs} {
    switch -- $sort {
	self {return $selfs}
	calls {
	    return [lmap f $figs {
		expr {[llength $f] ? [lindex $f 0] : 0}
	    }]
	}
	avg {
	    return [lmap f $figs {
		expr {[llength $f] && [lindex $f 0] > 0
			? double([lindex $f 1]) / [lindex $f 0] : 0}
	    }]
	}
	max {
	    return [lmap f $figs {
		expr {[llength $f] ? [lindex $f 4] : 0}
	    }]
	}
	default {return $totals}
    }
}

# TreeDict --
#
#	The visible tree as nested node dicts, built bottom up (in reverse
#	order of ids, children before parents). Each node has name, kind,
#	self, total, children, its other keys, self_pct and total_pct.
#	When pruned (by -min or -limit), only the nodes shown are built.

proc ::tclcprof::reportlib::TreeDict {vis whole pruned} {
    upvar 1 inNode inNode oSrc oSrc oName oName oKind oKind \
	    oSelf oSelf oTotal oTotal oFig oFig hasFig hasFig
    variable figureKeys

    set div [expr {$whole > 0 ? $whole : 1}]
    set n [llength $vis]
    if {$pruned} {
	# Only build what will be shown.
	set show [lrepeat $n 0]
	lset show 0 1
	for {set id 0} {$id < $n} {incr id} {
	    if {[lindex $show $id]} {
		foreach c [lindex $vis $id 0] {
		    lset show $c 1
		}
	    }
	}
    }
    set built [lrepeat $n {}]
    for {set id [expr {$n - 1}]} {$id >= 0} {incr id -1} {
	if {$pruned && ![lindex $show $id]} {
	    continue
	}
	set list {}
	foreach c [lindex $vis $id 0] {
	    lappend list [lindex $built $c]
	    lset built $c {}
	}
	set s [lindex $oSelf $id]
	set t [lindex $oTotal $id]
	# Built as a list (a dict value all the same): much cheaper than
	# copying the node dict. Keys beyond the five of every node
	# follow in their order.
	set node [lindex $inNode [lindex $oSrc $id]]
	set size [dict size $node]
	if {$size == 5} {
	    set extra {}
	} elseif {$size == 6 && [dict exists $node tclkind]} {
	    # What tclcprof::data gives: one of tclkind or module.
	    set extra [list tclkind [dict get $node tclkind]]
	} elseif {$size == 6 && [dict exists $node module]} {
	    set extra [list module [dict get $node module]]
	} else {
	    set extra [dict remove $node name kind self total children \
		    {*}$figureKeys]
	    if {$hasFig} {
		set fig [lindex $oFig $id]
		if {[llength $fig]} {
		    foreach k $figureKeys v $fig {
			lappend extra $k $v
		    }
		}
	    }
	}
	if {![info exists pct($s)]} {
	    set pct($s) [format %.2f [expr {100.0 * $s / $div}]]
	}
	if {![info exists pct($t)]} {
	    set pct($t) [format %.2f [expr {100.0 * $t / $div}]]
	}
	lset built $id [list name [lindex $oName $id] \
		kind [lindex $oKind $id] self $s total $t children $list \
		{*}$extra self_pct $pct($s) total_pct $pct($t)]
    }
    return [lindex $built 0]
}

# TreeLines --
#
#	The visible tree as text lines, depth first, appended to the
#	caller's list lines, which is written out (see Output) whenever it
#	holds 1024 lines: what is kept is bounded whatever the size of the
#	tree. A line is indented two spaces per level up to indentLevels
#	levels; a deeper one stays at that indentation after "[+N] ", N the
#	levels beyond it, so that the text grows linearly with the depth.

proc ::tclcprof::reportlib::TreeLines {o vis whole} {
    upvar 1 oName oName oKind oKind oSelf oSelf oTotal oTotal oFig oFig \
	    hasFig hasFig timeWeights timeWeights lines lines
    variable controlRE
    variable indentLevels

    set div [expr {$whole > 0 ? $whole : 1}]
    for {set d 0} {$d <= $indentLevels} {incr d} {
	set indent($d) [string repeat "  " $d]
    }
    set deepest $indent($indentLevels)
    # Items: {id depth}, or {-1 depth count weight} for a "more" line.
    set stack {}
    lassign [lindex $vis 0] children cut cutWeight
    if {$cut} {
	lappend stack [list -1 0 $cut $cutWeight]
    }
    foreach c [lreverse $children] {
	lappend stack [list $c 0]
    }
    # Exact trees show times; sampled trees with figures (mode both) add
    # the calls and time of their Tcl frames after the weights.
    set blank [expr {$timeWeights ? [Blank exact] : ($hasFig
	    ? [Blank both] : [Blank sample])}]
    while {[llength $stack]} {
	if {[llength $lines] >= 1024} {
	    Output $o $lines 0
	    set lines {}
	}
	set item [lindex $stack end]
	set stack [lrange $stack[set stack {}] 0 end-1]
	lassign $item id depth
	if {$depth <= $indentLevels} {
	    set pad $indent($depth)
	} else {
	    set pad "$deepest\[+[expr {$depth - $indentLevels}]\] "
	}
	if {$id < 0} {
	    lassign $item - - count weight
	    set w [expr {$timeWeights ? [Dur $weight] : [Wt $weight]}]
	    lappend lines "$blank  $pad\u2026 $count more ($w,\
		    [Pct $weight $whole 1]%)"
	    continue
	}
	set t [lindex $oTotal $id]
	set s [lindex $oSelf $id]
	if {$timeWeights} {
	    set cells [ExactCells [lindex $oFig $id] $t $s $div]
	} else {
	    # Weights repeat a lot: format each one once.
	    if {![info exists cell($t)]} {
		set cell($t) [format "%8s %6.1f%%" [Wt $t] \
			[expr {100.0 * $t / $div}]]
	    }
	    if {![info exists cell($s)]} {
		set cell($s) [format "%8s %6.1f%%" [Wt $s] \
			[expr {100.0 * $s / $div}]]
	    }
	    set cells "$cell($t) $cell($s)"
	    if {$hasFig} {
		append cells " " [BothCells [lindex $oFig $id]]
	    }
	}
	set name [lindex $oName $id]
	if {[regexp $controlRE $name]} {
	    set name [Escape $name]
	}
	set kind [lindex $oKind $id]
	if {$kind ne "tcl"} {
	    set name [Frame $name $kind]
	}
	lappend lines "$cells  $pad$name"

	lassign [lindex $vis $id] children cut cutWeight
	incr depth
	if {$cut} {
	    lappend stack [list -1 $depth $cut $cutWeight]
	}
	foreach c [lreverse $children] {
	    lappend stack [list $c $depth]
	}
    }
}
