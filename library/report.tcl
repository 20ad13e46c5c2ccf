# report.tcl --
#
#	tclcprof::report: the call tree or the flat profile of a profile
#	value, as text on a channel or as Tcl values, with sorting,
#	pruning (-min, -limit), focusing on frames (-focus) and hiding
#	frames (-hide).
#
#	A profile is the dict {meta {...} tree NODE} returned by
#	tclcprof::data, where each NODE is a dict with at least name, kind,
#	self, total and children. See doc/tclcprof.n.
#
#	All the work is iterative (explicit stacks and queues), so that deep
#	trees cannot exhaust the interpreter's nesting limit, and linear or
#	n log n in the number of nodes: siblings are merged through dicts
#	keyed by [list name kind] and each child list is sorted once.
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof {
    namespace export report
}

namespace eval ::tclcprof::reportlib {
    variable optionNames {
	-channel -data -focus -format -hide -limit -min -sort -type
    }

    # Default -min (percent of the whole profile's total) by output
    # format: text is for reading, dict is for programs.
    variable defaultMin {text 0.5 dict 0}

    # Keys of a node that a flat row carries over from the first node of
    # its frame (the others, such as children, make no sense for a row).
    variable rowKeys {tclkind module file line}

    # Characters that text output shows escaped: C0 and C1 controls,
    # DEL, and the Unicode line and paragraph separators.
    variable controlRE {[\x00-\x1f\x7f-\x9f\u2028\u2029]}
    variable escapeMap [list \n {\n} \r {\r} \t {\t} \u2028 {\u2028} \
	    \u2029 {\u2029}]
    for {set i 0} {$i < 0xa0} {incr i} {
	if {($i < 0x20 || $i >= 0x7f) && $i ni {9 10 13}} {
	    lappend escapeMap [format %c $i] [format {\x%02x} $i]
	}
    }
    unset i
}

# ::tclcprof::report --
#
#	tclcprof::report ?-option value ...?
#
# Results:
#	The empty string for text output (written to -channel), the
#	filtered root node for -format dict -type tree, a list of rows for
#	-format dict -type flat.

proc ::tclcprof::report {args} {
    set o [reportlib::ParseOptions $args]

    if {[dict get $o -format] eq "text"} {
	reportlib::CheckChannel [dict get $o -channel]
    }

    if {[dict exists $o -data]} {
	set profile [dict get $o -data]
    } elseif {[llength [info commands ::tclcprof::data]]} {
	set profile [::tclcprof::data]
    } else {
	return -code error -errorcode {TCLCPROF NODATA} \
		"no profile data: start profiling with tclcprof::start"
    }

    return [reportlib::Report $o $profile]
}

# ParseOptions --
#
#	Check the options of report.
#
# Results:
#	A dict of all options, defaults filled in; -data only if given.
#	Errors: TCLCPROF OPTION name, TCLCPROF VALUE option ?value?.

proc ::tclcprof::reportlib::Fail {code message} {
    return -code error -level 2 -errorcode [list TCLCPROF {*}$code] $message
}

proc ::tclcprof::reportlib::Enum {option value what table} {
    if {[catch {tcl::prefix match -message $what $table $value} r]} {
	Fail [list VALUE $option $value] $r
    }
    return $r
}

proc ::tclcprof::reportlib::ParseOptions {arglist} {
    variable optionNames
    variable defaultMin

    set o [dict create -channel stdout -focus {} -format text -hide {} \
	    -limit {} -min {} -sort {} -type tree]
    set given {}
    set n [llength $arglist]
    for {set i 0} {$i < $n} {incr i 2} {
	set arg [lindex $arglist $i]
	if {[catch {tcl::prefix match -message option $optionNames $arg} opt]} {
	    Fail [list OPTION $arg] $opt
	}
	if {$i + 1 >= $n} {
	    Fail [list VALUE $opt] "missing value for option \"$opt\""
	}
	set v [lindex $arglist [expr {$i + 1}]]
	switch -- $opt {
	    -type {
		set v [Enum $opt $v type {flat tree}]
	    }
	    -sort {
		set v [Enum $opt $v "sort key" {name self total}]
	    }
	    -format {
		set v [Enum $opt $v format {dict text}]
	    }
	    -limit {
		if {![string is entier -strict $v] || $v < 0} {
		    Fail [list VALUE $opt $v] "bad value \"$v\" for -limit:\
			    expected a non-negative integer"
		}
		set v [expr {$v + 0}]
	    }
	    -min {
		if {![string is double -strict $v]
			|| [catch {expr {$v >= 0 && $v <= 100}} ok] || !$ok} {
		    Fail [list VALUE $opt $v] "bad value \"$v\" for -min:\
			    expected a percentage from 0 to 100"
		}
		set v [expr {double($v)}]
	    }
	    -hide {
		if {![string is list $v]} {
		    Fail [list VALUE $opt $v] "bad value \"$v\" for -hide:\
			    expected a list of glob patterns"
		}
	    }
	}
	dict set o $opt $v
	dict set given $opt 1
    }

    if {[dict get $o -sort] eq ""} {
	dict set o -sort [expr {[dict get $o -type] eq "tree" ? "total" : "self"}]
    }
    if {[dict get $o -min] eq ""} {
	dict set o -min [dict get $defaultMin [dict get $o -format]]
    }
    dict set o focusOn [dict exists $given -focus]
    if {[dict exists $given -channel] && [dict get $o -format] eq "dict"} {
	set chan [dict get $o -channel]
	Fail [list VALUE -channel $chan] "-channel is for text output:\
		it cannot be used with -format dict"
    }
    return $o
}

# CheckChannel --
#
#	Make sure that text can be written to a channel before any work is
#	done. Errors: TCLCPROF CHANNEL chan.

proc ::tclcprof::reportlib::CheckChannel {chan} {
    if {[catch {chan pending output $chan} pending]} {
	Fail [list CHANNEL $chan] "can not find channel named \"$chan\""
    }
    if {$pending < 0} {
	Fail [list CHANNEL $chan] "channel \"$chan\" wasn't opened for writing"
    }
}

# Report --
#
#	The report proper, on validated options and an unchecked profile.

proc ::tclcprof::reportlib::Report {o profile} {
    set meta [Flatten $profile]
    set whole [lindex $inTotal 0]

    set hideOn [expr {[llength [dict get $o -hide]] > 0}]
    if {$hideOn} {
	set patterns [dict get $o -hide]
	set isHidden [lmap name $inName {
	    set h 0
	    foreach p $patterns {
		if {[string match $p $name]} {
		    set h 1
		    break
		}
	    }
	    set h
	}]
	lset isHidden 0 0	;# the root is never hidden
    }
    Build $hideOn [dict get $o focusOn] [dict get $o -focus]

    # Pruning threshold, as "total * 100 < minWeight" to avoid rounding.
    set minWeight [expr {[dict get $o -min] * $whole}]

    set type [dict get $o -type]
    set format [dict get $o -format]
    if {$type eq "tree"} {
	set vis [Visible $o $minWeight]
	if {$format eq "dict"} {
	    return [TreeDict $vis $whole [expr {[dict get $o -limit] ne ""
		    || $minWeight > 0}]]
	}
	set lines [Header $o $meta $whole]
	lappend lines [format "%8s %7s %8s %7s  %s" Under % In % Frame]
	lappend lines {*}[TreeLines $vis $whole]
    } else {
	set rows [FlatRows $o $minWeight]
	if {$format eq "dict"} {
	    return [FlatDict $rows $whole]
	}
	set lines [Header $o $meta $whole]
	lappend lines [format "%8s %7s %8s %7s  %s" Self % Total % Frame]
	lappend lines {*}[FlatLines $rows $whole]
    }

    set chan [dict get $o -channel]
    if {[catch {
	puts $chan [join $lines \n]
	flush $chan
    } msg]} {
	Fail [list CHANNEL $chan] $msg
    }
    return
}

# Flatten --
#
#	Check a profile and lay its tree out breadth first in lists indexed
#	by node id (the root is 0; children have higher ids than their
#	parent), in the caller's variables inNode (the node dicts), inName,
#	inKind, inSelf, inTotal and inKids (lists of child ids).
#
# Results:
#	The meta dict. Errors: TCLCPROF DATA FORMAT|KEY key|WEIGHT key|TOTAL.

proc ::tclcprof::reportlib::Flatten {profile} {
    upvar 1 inNode queue inName names inKind kinds inSelf selfs \
	    inTotal totals inKids kids

    if {[catch {dict size $profile}]} {
	Fail {DATA FORMAT} "invalid profile: not a dictionary"
    }
    foreach key {meta tree} {
	if {![dict exists $profile $key]} {
	    Fail [list DATA KEY $key] "invalid profile: missing key \"$key\""
	}
    }
    set meta [dict get $profile meta]
    if {[catch {dict size $meta}]} {
	Fail {DATA FORMAT} "invalid profile: meta is not a dictionary"
    }

    set queue [list [dict get $profile tree]]
    lassign {} names kinds selfs totals kids
    set i 0
    try {
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
    } trap {TCLCPROF_REPORT TOTAL} {} {
	Fail {DATA TOTAL} "invalid profile: [NodePath $i]: total [Num $t]\
		is not self plus the children's totals ([Num $sum])"
    } on error {msg} {
	Fail {DATA FORMAT} "invalid profile: [NodePath $i]: $msg"
    }
    return $meta
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
#	outermost visible nodes whose name matches, and its self is 0.

proc ::tclcprof::reportlib::Build {hideOn focusOn focus} {
    upvar 1 inName inName inKind inKind inSelf inSelf inTotal inTotal \
	    inKids inKids isHidden isHidden \
	    oSrc oSrc oName oName oKind oKind oKey oKey oSelf oSelf \
	    oTotal oTotal oKids oKids

    set oSrc {0}
    set oName [list [lindex $inName 0]]
    set oKind [list [lindex $inKind 0]]
    set oKey [list [list [lindex $inName 0] [lindex $inKind 0]]]
    lassign {} oSelf oTotal oKids

    if {$focusOn} {
	# Outermost visible matches: search breadth first, not below a
	# match. Order does not matter: siblings are sorted later.
	set queue [lindex $inKids 0]
	set matches {}
	for {set j 0} {$j < [llength $queue]} {incr j} {
	    set c [lindex $queue $j]
	    if {$hideOn && [lindex $isHidden $c]} {
		lappend queue {*}[lindex $inKids $c]
	    } elseif {[string match $focus [lindex $inName $c]]} {
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
	} elseif {[llength $contributors] == 1} {
	    set c [lindex $contributors 0]
	    set s [lindex $inSelf $c]
	    set t [lindex $inTotal $c]
	    set pending [lindex $inKids $c]
	} else {
	    set pending {}
	    foreach c $contributors {
		set s [expr {$s + [lindex $inSelf $c]}]
		set t [expr {$t + [lindex $inTotal $c]}]
		lappend pending {*}[lindex $inKids $c]
	    }
	}
	lappend oSelf $s
	lappend oTotal $t
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
    upvar 1 oName oName oKind oKind oSelf oSelf oTotal oTotal oKids oKids

    set limit [dict get $o -limit]
    set sort [dict get $o -sort]
    set byName [expr {$sort eq "name"}]
    set weights [expr {$sort eq "self" ? $oSelf : $oTotal}]
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

# TreeDict --
#
#	The visible tree as nested node dicts, built bottom up (in reverse
#	order of ids, children before parents). Each node has name, kind,
#	self, total, children, its other keys, self_pct and total_pct.
#	When pruned (by -min or -limit), only the nodes shown are built.

proc ::tclcprof::reportlib::TreeDict {vis whole pruned} {
    upvar 1 inNode inNode oSrc oSrc oName oName oKind oKind \
	    oSelf oSelf oTotal oTotal

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
	    set extra [dict remove $node name kind self total children]
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
#	The visible tree as text lines, depth first.

proc ::tclcprof::reportlib::TreeLines {vis whole} {
    upvar 1 oName oName oKind oKind oSelf oSelf oTotal oTotal
    variable controlRE

    set div [expr {$whole > 0 ? $whole : 1}]
    set lines {}
    # Items: {id depth}, or {-1 depth count weight} for a "more" line.
    set stack {}
    lassign [lindex $vis 0] children cut cutWeight
    if {$cut} {
	lappend stack [list -1 0 $cut $cutWeight]
    }
    foreach c [lreverse $children] {
	lappend stack [list $c 0]
    }
    while {[llength $stack]} {
	set item [lindex $stack end]
	set stack [lrange $stack[set stack {}] 0 end-1]
	lassign $item id depth
	if {![info exists indent($depth)]} {
	    set indent($depth) [string repeat "  " $depth]
	}
	if {$id < 0} {
	    lassign $item - - count weight
	    lappend lines [format "%8s %7s %8s %7s  %s" "" "" "" "" \
		    "$indent($depth)\u2026 $count more ([Num $weight],\
		    [Pct $weight $whole 1]%)"]
	    continue
	}
	set t [lindex $oTotal $id]
	set s [lindex $oSelf $id]
	# Weights repeat a lot: format each one once.
	if {![info exists cell($t)]} {
	    set cell($t) [format "%8s %6.1f%%" [Num $t] \
		    [expr {100.0 * $t / $div}]]
	}
	if {![info exists cell($s)]} {
	    set cell($s) [format "%8s %6.1f%%" [Num $s] \
		    [expr {100.0 * $s / $div}]]
	}
	set name [lindex $oName $id]
	if {[regexp $controlRE $name]} {
	    set name [Escape $name]
	}
	set kind [lindex $oKind $id]
	if {$kind ne "tcl"} {
	    set name [Frame $name $kind]
	}
	lappend lines "$cell($t) $cell($s)  $indent($depth)$name"

	lassign [lindex $vis $id] children cut cutWeight
	incr depth
	if {$cut} {
	    lappend stack [list -1 $depth $cut $cutWeight]
	}
	foreach c [lreverse $children] {
	    lappend stack [list $c $depth]
	}
    }
    return $lines
}

# FlatRows --
#
#	One row per (name, kind) of the output tree: self summed over its
#	nodes, total summed over its nodes that have no ancestor of the
#	same name and kind (a recursive frame counts once per stack).
#
# Results:
#	A flat list of {key self total src} quadruples for the rows that
#	pass -min, sorted and limited, followed by the number and self
#	weight of the rows cut by -limit: {rows cut cutWeight}.

proc ::tclcprof::reportlib::FlatRows {o minWeight} {
    upvar 1 oSrc oSrc oKey oKey oSelf oSelf oTotal oTotal oKids oKids

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
    set rowSelf [lrepeat $n 0]
    set rowTotal [lrepeat $n 0]
    set onPath [lrepeat $n 0]

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
	lset rowSelf $k [expr {[lindex $rowSelf $k] + [lindex $oSelf $id]}]
	if {[lindex $onPath $k] == 0} {
	    lset rowTotal $k [expr {[lindex $rowTotal $k]
		    + [lindex $oTotal $id]}]
	}
	set kids [lindex $oKids $id]
	if {[llength $kids]} {
	    lset onPath $k [expr {[lindex $onPath $k] + 1}]
	    lappend stack [expr {-1 - $id}] {*}$kids
	}
    }

    set sort [dict get $o -sort]
    set weights [expr {$sort eq "total" ? $rowTotal : $rowSelf}]
    set items {}
    for {set k 1} {$k < $n} {incr k} {
	if {[lindex $rowTotal $k] * 100.0 < $minWeight} {
	    continue
	}
	lappend items $k {*}[lindex $keys $k] [lindex $weights $k]
    }
    set items [SortItems $items [expr {$sort eq "name"}]]
    set limit [dict get $o -limit]
    set cut 0
    set cutWeight 0
    if {$limit ne "" && [llength $items] > 4 * $limit} {
	foreach {k - - -} [lrange $items [expr {4 * $limit}] end] {
	    incr cut
	    set cutWeight [expr {$cutWeight + [lindex $rowSelf $k]}]
	}
	set items [lrange $items 0 [expr {4 * $limit - 1}]]
    }
    set rows {}
    foreach {k - - -} $items {
	lappend rows [lindex $keys $k] [lindex $rowSelf $k] \
		[lindex $rowTotal $k] [lindex $oSrc [lindex $first $k]]
    }
    return [list $rows $cut $cutWeight]
}

proc ::tclcprof::reportlib::FlatDict {rows whole} {
    upvar 1 inNode inNode
    variable rowKeys

    lmap {key s t src} [lindex $rows 0] {
	set row [dict create name [lindex $key 0] kind [lindex $key 1] \
		self $s total $t self_pct [Pct $s $whole 2] \
		total_pct [Pct $t $whole 2]]
	set node [lindex $inNode $src]
	foreach k $rowKeys {
	    if {[dict exists $node $k]} {
		dict set row $k [dict get $node $k]
	    }
	}
	set row
    }
}

proc ::tclcprof::reportlib::FlatLines {rows whole} {
    lassign $rows rows cut cutWeight
    set lines {}
    foreach {key s t -} $rows {
	lappend lines [format "%8s %6s%% %8s %6s%%  %s" \
		[Num $s] [Pct $s $whole 1] [Num $t] [Pct $t $whole 1] \
		[Frame {*}$key]]
    }
    if {$cut} {
	lappend lines [format "%8s %7s %8s %7s  %s" "" "" "" "" \
		"\u2026 $cut more (self [Num $cutWeight],\
		[Pct $cutWeight $whole 1]%)"]
    }
    return $lines
}

# Header --
#
#	The first lines of a text report: what was measured, the label, and
#	the view (type, sort and the filters applied).

proc ::tclcprof::reportlib::Header {o meta whole} {
    upvar 1 oSelf oSelf oTotal oTotal

    set what {}
    if {[dict exists $meta samples]} {
	lappend what "[Num [dict get $meta samples]] samples"
    }
    if {[dict exists $meta weight]} {
	lappend what "(weight [Num [dict get $meta weight]])"
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
    if {![llength $parts]} {
	lappend parts "profile of weight [Num $whole]"
    }
    set lines [list "tclcprof: [join $parts {, }]"]

    if {[dict exists $meta label] && [dict get $meta label] ne ""} {
	lappend lines "label: [Escape [dict get $meta label]]"
    }

    set view "[dict get $o -type] sorted by [dict get $o -sort]"
    if {[dict get $o -min] > 0} {
	append view ", min [format %g [dict get $o -min]]%"
    }
    if {[dict get $o -limit] ne ""} {
	append view ", limit [dict get $o -limit]"
    }
    if {[dict get $o focusOn]} {
	set t [lindex $oTotal 0]
	append view ", focus [Quote [dict get $o -focus]]\
		([Num $t], [Pct $t $whole 1]%)"
    }
    if {[llength [dict get $o -hide]]} {
	append view ", hide [join [lmap p [dict get $o -hide] {Quote $p}]]"
    }
    lappend lines "view: $view"

    set s [lindex $oSelf 0]
    if {$s > 0} {
	lappend lines "without a frame: [Num $s] ([Pct $s $whole 1]%)"
    }
    return $lines
}

# Helpers for text.

# Escape --
#	A string on one line: control characters as \n, \t, \r, \xHH,
#	line and paragraph separators as \u2028 and \u2029.

proc ::tclcprof::reportlib::Escape {s} {
    variable controlRE
    variable escapeMap
    if {[regexp $controlRE $s]} {
	return [string map $escapeMap $s]
    }
    return $s
}

proc ::tclcprof::reportlib::Quote {s} {
    return "\"[Escape $s]\""
}

# Frame --
#	A frame for text: its name, escaped, with " [C]" for C functions
#	and " [kind]" for kinds other than tcl and c.

proc ::tclcprof::reportlib::Frame {name kind} {
    variable controlRE
    if {[regexp $controlRE $name]} {
	set name [Escape $name]
    }
    switch -- $kind {
	tcl {return $name}
	c {return "$name \[C\]"}
	default {return "$name \[[Escape $kind]\]"}
    }
}

# Num --
#	A number for text: integers as they are, other numbers with the
#	given number of decimals (integral ones without, unless fixed).

proc ::tclcprof::reportlib::Num {v {decimals 2} {fixed 0}} {
    if {[string is entier -strict $v] && !$fixed} {
	return $v
    }
    if {[string is double -strict $v]
	    && ![catch {expr {$v == floor($v) && abs($v) < 1e15}} integral]} {
	if {$integral && !$fixed} {
	    return [format %.0f $v]
	}
	return [format %.${decimals}f $v]
    }
    return [Escape $v]
}

# Pct --
#	w as a percentage of whole, with the given number of decimals.

proc ::tclcprof::reportlib::Pct {w whole decimals} {
    if {$whole > 0} {
	return [format %.${decimals}f [expr {100.0 * $w / $whole}]]
    }
    return [format %.${decimals}f 0]
}
