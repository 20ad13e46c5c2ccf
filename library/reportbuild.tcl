# reportbuild.tcl --
#
#	The tree every type of report starts from: the profile checked and
#	laid out in lists indexed by node id (Flatten, in the caller's
#	frame), exact figures merged, frames hidden (-hide) and focused
#	(-focus), and the tree of merged siblings that the types read
#	(Build). Shared with export, merge and reportevents.tcl.
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::reportlib {}

# ExactProfile --
#
#	Whether a profile's tree is timed exactly (self and total in ns).

proc ::tclcprof::reportlib::ExactProfile {profile} {
    expr {![catch {dict get $profile meta mode} mode]
	    && $mode in {exact coverage}}
}

# Unweighed --
#	Whether a profile's tree has a total of 0.

proc ::tclcprof::reportlib::Unweighed {profile} {
    expr {![catch {dict get $profile tree total} total]
	    && [string is double -strict $total] && $total == 0}
}

# Flatten --
#
#	Check a profile and lay its tree (the one under treeKey) out
#	breadth first in lists indexed by node id (the root is 0; children
#	have higher ids than their parent), in the caller's variables
#	inNode (the node dicts), inName, inKind, inSelf, inTotal, inKids
#	(lists of child ids) and inFig (each node's exact figures as the
#	list {calls total_ns self_ns min_ns max_ns}, or {} for a node
#	without them); hasFig tells whether any node has them, timeWeights
#	whether self and total are times (an exact tree). With inUnique set
#	(no node has two children of the same name and kind), inKey holds
#	each node's {name kind} and inIds the ids: Build has nothing to do.
#
#	Profiles as tclcprof makes them (integer weights) are laid out by
#	Layout, in C; anything else, or anything wrong, by the Tcl code
#	below, which also says precisely what is wrong.
#
# Results:
#	The meta dict. Errors: TCLCPROF DATA FORMAT|KEY key|WEIGHT key|TOTAL.

proc ::tclcprof::reportlib::Flatten {profile {treeKey tree}} {
    upvar 1 inNode queue inName names inKind kinds inSelf selfs \
	    inTotal totals inKids kids inFig figs hasFig hasFig \
	    timeWeights timeWeights inUnique unique inKey keys inIds ids
    variable figureKeys

    set meta [ProfileMeta $profile [list meta $treeKey]]

    # An exact tree is one of times even when its root has no figures
    # (the root and threads' roots of a profile of several threads made
    # before they had them).
    set exactTree [expr {$treeKey eq "exact" || ([dict exists $meta mode]
	    && [dict get $meta mode] eq "exact")}]
    set layout [Layout [dict get $profile $treeKey]]
    if {[llength $layout]} {
	lassign $layout queue names kinds selfs totals kids figs hasFig \
		timeWeights unique keys ids
	set timeWeights [expr {$timeWeights || $exactTree}]
	return $meta
    }
    set unique 0

    set queue [list [dict get $profile $treeKey]]
    lassign {} names kinds selfs totals kids figs
    set hasFig 0
    set i 0
    try {
	set timeWeights [expr {[dict exists [lindex $queue 0] total_ns]
		|| $exactTree}]
	for {} {$i < [llength $queue]} {incr i} {
	    set node [lindex $queue $i]
	    lappend names [dict get $node name]
	    lappend kinds [dict get $node kind]
	    set s [dict get $node self]
	    set t [dict get $node total]
	    if {![string is double -strict $s] || ![string is double -strict $t]
		    || !($s >= 0 && $s < Inf && $t >= 0 && $t < Inf)} {
		throw {TCLCPROF_REPORT WEIGHT} {}
	    }
	    lappend selfs $s
	    lappend totals $t
	    if {[dict exists $node calls]} {
		set fig {}
		foreach k $figureKeys {
		    set v [dict get $node $k]
		    if {![string is entier -strict $v] || $v < 0} {
			set key $k
			throw {TCLCPROF_REPORT FIGURE} {}
		    }
		    lappend fig $v
		}
		lappend figs $fig
		set hasFig 1
	    } else {
		lappend figs {}
	    }
	    set ids {}
	    foreach child [dict get $node children] {
		lappend ids [llength $queue]
		lappend queue $child
	    }
	    lappend kids $ids
	}

	# A node's total is its self plus its children's totals (with
	# some slack for weights that are not integers).
	# Checked from the leaves up, so that the node reported is the
	# one whose numbers are wrong rather than an ancestor.
	for {set i [llength $queue]} {[incr i -1] >= 0} {} {
	    set sum [lindex $selfs $i]
	    foreach c [lindex $kids $i] {
		set sum [expr {$sum + [lindex $totals $c]}]
	    }
	    set t [lindex $totals $i]
	    if {$sum != $t && (([string is entier -strict $sum]
		    && [string is entier -strict $t])
		    || abs($sum - $t) > 1e-9 * max(1.0, $t))} {
		throw {TCLCPROF_REPORT TOTAL} {}
	    }
	}
    } trap {TCL LOOKUP DICT} {msg opts} {
	set key [lindex [dict get $opts -errorcode] end]
	Fail [list DATA KEY $key] "invalid profile: [NodePath $i]:\
		missing key \"$key\""
    } trap {TCLCPROF_REPORT WEIGHT} {} {
	set key [expr {[string is double -strict $s]
		&& [catch {expr {$s >= 0 && $s < Inf}} ok] == 0 && $ok
		? "total" : "self"}]
	set v [dict get $node $key]
	Fail [list DATA WEIGHT $key] "invalid profile: [NodePath $i]:\
		$key is \"[Escape $v]\", expected a non-negative number"
    } trap {TCLCPROF_REPORT FIGURE} {} {
	Fail [list DATA WEIGHT $key] "invalid profile: [NodePath $i]:\
		$key is \"[Escape $v]\", expected a non-negative integer"
    } trap {TCLCPROF_REPORT TOTAL} {} {
	Fail {DATA TOTAL} "invalid profile: [NodePath $i]: total [Num $t]\
		is not self plus the children's totals ([Num $sum])"
    } on error {msg} {
	Fail {DATA FORMAT} "invalid profile: [NodePath $i]: $msg"
    }
    return $meta
}

# MergeFigures --
#
#	The exact figures of a group of nodes: counts and times summed,
#	the least minimum, the greatest maximum; {} when none has any.

proc ::tclcprof::reportlib::MergeFigures {figList} {
    set out {}
    foreach f $figList {
	if {![llength $f]} {
	    continue
	}
	if {![llength $out]} {
	    set out $f
	    continue
	}
	lassign $out c t s mn mx
	lassign $f c2 t2 s2 mn2 mx2
	# A node with no completed call has no minimum.
	if {$c == 0} {
	    set mn $mn2
	} elseif {$c2 > 0 && $mn2 < $mn} {
	    set mn $mn2
	}
	set out [list [expr {$c + $c2}] [expr {$t + $t2}] [expr {$s + $s2}] \
		$mn [expr {max($mx, $mx2)}]]
    }
    return $out
}

# NodePath --
#
#	Where node id is, for error messages: "node root/2/0" (child
#	positions from the root) and its name, if it got that far.

proc ::tclcprof::reportlib::NodePath {id} {
    upvar 1 kids kids names names
    # For error messages only: parents are not kept, find them now.
    set p 0
    foreach ids $kids {
	set at 0
	foreach c $ids {
	    set up($c) [list $p $at]
	    incr at
	}
	incr p
    }
    set path {}
    set n $id
    while {$n > 0} {
	lassign $up($n) n at
	set path [linsert $path 0 $at]
    }
    set where "node [join [linsert $path 0 root] /]"
    if {$id > 0 && $id < [llength $names]} {
	append where " \"[Escape [lindex $names $id]]\""
    }
    return $where
}

# Hidden --
#	Whether a name matches one of the -hide patterns (string match) of
#	a report whose rows are not tree frames (lines, events, coverage).

proc ::tclcprof::reportlib::Hidden {patterns name} {
    foreach p $patterns {
	if {[string match $p $name]} {
	    return 1
	}
    }
    return 0
}

# TailMatch, FocusMatch --
#
#	Whether a -focus pattern matches a frame: its whole name, or, for a
#	pattern without "::", the last component of the name of a frame
#	other than a C function (so that "f" matches the proc "::app::f";
#	a C function is matched by its plain name only). TailMatch tells
#	whether the pattern is of the second sort.

proc ::tclcprof::reportlib::TailMatch {pattern} {
    expr {[string first :: $pattern] < 0}
}

proc ::tclcprof::reportlib::FocusMatch {pattern name kind} {
    if {[string match $pattern $name] || ([TailMatch $pattern]
	    && $kind ne "c" && [string match $pattern [namespace tail $name]])} {
	return 1
    }
    # A frame of another interpreter, "name [interp]" (threads.tcl): by
    # its name alone too.
    if {$kind eq "tcl" && [string index $name end] eq "\]"} {
	set bare [Bare $name]
	return [expr {$bare ne $name && [FocusMatch $pattern $bare $kind]}]
    }
    return 0
}

# Build --
#
#	Apply -hide and -focus to the flattened tree of the caller, into an
#	output tree in the caller's lists oSrc (id of the first input node
#	merged into each output node), oName, oKind, oKey ([list name kind]),
#	oSelf, oTotal and oKids. Output ids are breadth first too.
#
#	Each output node is made from a group of input nodes with the same
#	name and kind (its contributors). Its children are the children of
#	all contributors, where a hidden child is replaced by its own
#	children and its self added to the output node's self, grouped by
#	name and kind. With -focus, the root's contributors are the
#	outermost visible nodes whose name matches (see FocusMatch), and
#	its self is 0.

proc ::tclcprof::reportlib::Build {hideOn focusOn focus} {
    upvar 1 inName inName inKind inKind inSelf inSelf inTotal inTotal \
	    inKids inKids isHidden isHidden inFig inFig hasFig hasFig \
	    oSrc oSrc oName oName oKind oKind oKey oKey oSelf oSelf \
	    oTotal oTotal oKids oKids oFig oFig inUnique inUnique \
	    inKey inKey inIds inIds

    if {!$hideOn && !$focusOn && $inUnique} {
	# Nothing to merge: the output tree is the input tree.
	set oSrc $inIds
	set oName $inName
	set oKind $inKind
	set oKey $inKey
	set oSelf $inSelf
	set oTotal $inTotal
	set oKids $inKids
	set oFig [expr {$hasFig ? $inFig : {}}]
	return
    }

    set oSrc {0}
    set oName [list [lindex $inName 0]]
    set oKind [list [lindex $inKind 0]]
    set oKey [list [list [lindex $inName 0] [lindex $inKind 0]]]
    lassign {} oSelf oTotal oKids oFig

    if {$focusOn} {
	# Outermost visible matches: search breadth first, not below a
	# match. Order does not matter: siblings are sorted later.
	set queue [lindex $inKids 0]
	set matches {}
	for {set j 0} {$j < [llength $queue]} {incr j} {
	    set c [lindex $queue $j]
	    if {$hideOn && [lindex $isHidden $c]} {
		lappend queue {*}[lindex $inKids $c]
	    } elseif {[FocusMatch $focus [lindex $inName $c] \
		    [lindex $inKind $c]]} {
		lappend matches $c
	    } else {
		lappend queue {*}[lindex $inKids $c]
	    }
	}
	unset queue
    }

    set work [list 0]
    for {set id 0} {$id < [llength $work]} {incr id} {
	set contributors [lindex $work $id]
	lset work $id {}
	set s 0
	set t 0
	if {$id == 0 && $focusOn} {
	    set pending $matches
	    foreach c $matches {
		set t [expr {$t + [lindex $inTotal $c]}]
	    }
	    if {$hasFig} {
		set fig [MergeFigures [lmap c $matches {lindex $inFig $c}]]
		if {[llength $fig]} {
		    lset fig 2 0
		}
	    }
	} elseif {[llength $contributors] == 1} {
	    set c [lindex $contributors 0]
	    set s [lindex $inSelf $c]
	    set t [lindex $inTotal $c]
	    set pending [lindex $inKids $c]
	    if {$hasFig} {
		set fig [lindex $inFig $c]
	    }
	} else {
	    set pending {}
	    foreach c $contributors {
		set s [expr {$s + [lindex $inSelf $c]}]
		set t [expr {$t + [lindex $inTotal $c]}]
		lappend pending {*}[lindex $inKids $c]
	    }
	    if {$hasFig} {
		set fig [MergeFigures [lmap c $contributors {lindex $inFig $c}]]
	    }
	}
	lappend oSelf $s
	lappend oTotal $t
	if {$hasFig} {
	    lappend oFig $fig
	}
	if {[llength $pending] == 1 && !$hideOn} {
	    # The common case of a single child: nothing to merge.
	    set c [lindex $pending 0]
	    set name [lindex $inName $c]
	    set kind [lindex $inKind $c]
	    lappend oKids [llength $work]
	    lappend work $pending
	    lappend oSrc $c
	    lappend oKey [list $name $kind]
	    lappend oName $name
	    lappend oKind $kind
	    continue
	}
	set groups {}
	for {set j 0} {$j < [llength $pending]} {incr j} {
	    set c [lindex $pending $j]
	    if {$hideOn && [lindex $isHidden $c]} {
		lset oSelf $id [expr {[lindex $oSelf $id] + [lindex $inSelf $c]}]
		lappend pending {*}[lindex $inKids $c]
		if {$hasFig && [llength [lindex $inFig $c]]
			&& [llength [lindex $oFig $id]]} {
		    # A hidden frame's own time is its caller's.
		    lset oFig $id 2 [expr {[lindex $oFig $id 2]
			    + [lindex $inFig $c 2]}]
		}
	    } else {
		dict lappend groups [list [lindex $inName $c] [lindex $inKind $c]] $c
	    }
	}
	set children {}
	dict for {key group} $groups {
	    lappend children [llength $work]
	    lappend work $group
	    lappend oSrc [lindex $group 0]
	    lappend oKey $key
	    lappend oName [lindex $key 0]
	    lappend oKind [lindex $key 1]
	}
	lappend oKids $children
    }
}

# SortItems --
#
#	Sort a flat list of {id name kind weight} quadruples: heaviest first
#	(unless by name), then by name, then by kind.

proc ::tclcprof::reportlib::SortItems {items byName} {
    if {[llength $items] > 4} {
	set items [lsort -stride 4 -index 2 $items]
	set items [lsort -stride 4 -index 1 $items]
	if {!$byName} {
	    set items [lsort -stride 4 -index 3 -real -decreasing $items]
	}
    }
    return $items
}

# Limit --
#
#	-limit: keep the first limit items of the sorted quadruples in the
#	caller's variable itemsVar ("" keeps them all).
#
# Results:
#	The quadruples left out, in order.

proc ::tclcprof::reportlib::Limit {itemsVar limit} {
    upvar 1 $itemsVar items
    if {$limit eq "" || [llength $items] <= 4 * $limit} {
	return {}
    }
    set out [lrange $items [expr {4 * $limit}] end]
    set items [lrange $items 0 [expr {4 * $limit - 1}]]
    return $out
}
