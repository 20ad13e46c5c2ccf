# labels.tcl --
#
#	Labels as reports and exports take them (see LABELS in the man
#	page): -label keeps the samples and calls made under labels that
#	match, -by keeps only some keys of each set (one node per value of a
#	key: a split), -by {} takes the sets out. A set of labels is a node
#	of kind "labels" whose name is the set, a list "key value ..." sorted
#	by key; in a sampled tree it heads a sample's stack (under the root,
#	or under a thread's root), in an exact tree it stands where the set
#	took effect. Everything under a set's node is under that set, down
#	to a set's node further in (which holds the keys of those around it).
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::reportlib {
    # The figures of a node that are its own (charged to it, not to what
    # it called): left out of a node kept only for what it called.
    variable ownKeys {self self_ns calls alloc_bytes alloc_objects
	live_bytes live_objects peak_bytes peak_objects}
}

# LabelOptions --
#
#	The filters of -label (a list of key=value, each split at its first
#	"=") as a dict key -> value, and -by (a list of keys, or the absent
#	value "*", all keys). Errors: TCLCPROF VALUE -label|-by value.

proc ::tclcprof::reportlib::LabelOptions {o} {
    set filter {}
    if {[dict exists $o -label]} {
	set v [dict get $o -label]
	if {![string is list $v]} {
	    Fail [list VALUE -label $v] "bad -label \"$v\": must be a list\
		    of key=value"
	}
	foreach item $v {
	    set i [string first = $item]
	    if {$i < 1} {
		Fail [list VALUE -label $v] "bad -label \"$item\": must be\
			key=value"
	    }
	    dict set filter [string range $item 0 $i-1] \
		    [string range $item $i+1 end]
	}
    }
    set by *
    if {[dict exists $o -by]} {
	set by [dict get $o -by]
	if {![string is list $by]} {
	    Fail [list VALUE -by $by] "bad -by \"$by\": must be a list of\
		    label keys"
	}
	foreach k $by {
	    if {$k eq "" || [string first = $k] >= 0} {
		Fail [list VALUE -by $by] "bad -by \"$by\": \"$k\" is no\
			label key"
	    }
	}
    }
    list $filter $by
}

# Labels --
#
#	A profile as reports and exports read it after -label and -by: each
#	of its trees (tree, exact, memory) through LabelTree. Without those
#	options, or for a value that is not a profile, the profile as it
#	is.

proc ::tclcprof::reportlib::Labels {o profile} {
    lassign [LabelOptions $o] filter by
    if {![dict size $filter] && $by eq "*"} {
	return $profile
    }
    if {[catch {dict size $profile}]} {
	return $profile
    }
    foreach key {tree exact memory} {
	if {[catch {dict get $profile $key} root] || [catch {dict size $root}]
		|| [catch {dict get $root children} kids]
		|| ![string is list $kids]} {
	    continue
	}
	dict set profile $key [LabelTree $root $filter $by]
    }
    if {[dict exists $profile meta]
	    && ![catch {dict size [dict get $profile meta]}]} {
	if {[dict size $filter]} {
	    dict set profile meta label_filter $filter
	}
	if {$by ne "*"} {
	    dict set profile meta label_by $by
	}
    }
    return $profile
}

# LabelTree --
#
#	A tree with the nodes under sets that do not match the filter left
#	out (a node kept for what it called under a matching set keeps only
#	that: its own figures are 0), and each set's node renamed to the
#	keys of -by it has (a node with none of them is taken out, its
#	children going to its parent); nodes of the same stack are then
#	summed (mergelib's SumTrees). Walked with a stack of its own, never
#	by recursion (trees are as deep as the program's recursion).

proc ::tclcprof::reportlib::LabelTree {root filter by} {
    variable ownKeys

    # Pre-order: each node, its parent, and the set in effect there.
    set nodes [list $root]
    set parent [list -1]
    set sets [list {}]
    set isSet [list 0]
    for {set i 0} {$i < [llength $nodes]} {incr i} {
	set n [lindex $nodes $i]
	set set [lindex $sets $i]
	foreach c [dict get $n children] {
	    set cs $set
	    set lab [expr {![catch {dict get $c kind} k] && $k eq "labels"}]
	    if {$lab} {
		set cs [dict get $c name]
	    }
	    lappend nodes $c
	    lappend parent $i
	    lappend sets $cs
	    lappend isSet $lab
	}
	lset nodes $i [dict remove $n children]
    }

    # Bottom-up: each node with its children done. A node whose set
    # does not match keeps none of its own; a node with nothing left is
    # dropped; a set's node is renamed, or taken out (spliced).
    set n [llength $nodes]
    set kids [lrepeat $n {}]
    set spliced [lrepeat $n {}]
    for {set i [expr {$n - 1}]} {$i >= 0} {incr i -1} {
	set node [lindex $nodes $i]
	set match [LabelMatch [lindex $sets $i] $filter]
	set children [LabelMergeKids [lindex $kids $i] [lindex $spliced $i] \
		$node]
	set sum 0
	foreach c $children {
	    set sum [expr {$sum + [dict get $c total]}]
	}
	# The own weight of the sets taken out under it (samples with
	# nothing but their labels) is its own.
	set extra 0
	foreach c [lindex $spliced $i] {
	    set extra [expr {$extra + [dict get $c self]}]
	}
	if {!$match} {
	    foreach k $ownKeys {
		if {[dict exists $node $k]} {
		    dict set node $k 0
		}
	    }
	    set node [dict remove $node self_lines caller_lines]
	}
	if {!$match || [llength [lindex $spliced $i]]} {
	    set self [expr {[dict get $node self] + $extra}]
	    dict set node self $self
	    dict set node total [expr {$self + $sum}]
	    if {[dict exists $node total_ns]} {
		set sns [expr {[dict get $node self_ns] + $extra}]
		dict set node self_ns $sns
		dict set node total_ns [expr {$sns + $sum}]
	    }
	    if {$i > 0 && !$match && [dict get $node total] == 0
		    && ![llength $children]} {
		continue
	    }
	}
	dict set node children $children
	if {$i == 0} {
	    return $node
	}
	set p [lindex $parent $i]
	if {[lindex $isSet $i]} {
	    set name [LabelProject [dict get $node name] $by]
	    if {![llength $name]} {
		# Taken out: its own weight and its children go to the
		# parent.
		set l [lindex $spliced $p]
		lset spliced $p {}
		lappend l $node
		lset spliced $p $l
		continue
	    }
	    dict set node name $name
	}
	set l [lindex $kids $p]
	lset kids $p {}
	lappend l $node
	lset kids $p $l
    }
}

# LabelMatch --
#	Whether a set (key value ...) has every key=value of the filter.

proc ::tclcprof::reportlib::LabelMatch {set filter} {
    dict for {k v} $filter {
	if {![dict exists $set $k] || [dict get $set $k] ne $v} {
	    return 0
	}
    }
    return 1
}

# LabelProject --
#	A set's keys that -by keeps ("*": all), sorted by key.

proc ::tclcprof::reportlib::LabelProject {set by} {
    if {$by eq "*"} {
	return $set
    }
    set out {}
    foreach {k v} $set {
	if {$k in $by} {
	    lappend out $k $v
	}
    }
    return $out
}

# LabelMergeKids --
#
#	The children of a node: its own (kept) and those of the sets taken
#	out under it (whose own weight, if any, is the node's), the nodes of
#	the same frame or the same set summed. Children that cannot collide
#	(no set taken out, no two sets of one name) are returned as they
#	are.

proc ::tclcprof::reportlib::LabelMergeKids {kids spliced node} {
    set names {}
    set clash 0
    foreach c $kids {
	if {[dict get $c kind] eq "labels"} {
	    if {[dict exists $names [dict get $c name]]} {
		set clash 1
	    }
	    dict set names [dict get $c name] 1
	}
    }
    if {![llength $spliced] && !$clash} {
	return $kids
    }
    # Each group of siblings as a root of its own, summed.
    set parts [list [LabelPart $node $kids 0]]
    foreach s $spliced {
	lappend parts [LabelPart $s [dict get $s children] [dict get $s self]]
    }
    set sum [::tclcprof::mergelib::SumTrees $parts]
    # The spliced sets' own weight (samples with nothing but labels)
    # stays the node's: SumTrees put it on the root.
    return [dict get $sum children]
}

proc ::tclcprof::reportlib::LabelPart {node children self} {
    set total $self
    foreach c $children {
	set total [expr {$total + [dict get $c total]}]
    }
    set part [dict create name {} kind root self $self total $total \
	    children $children]
    if {[dict exists $node calls]} {
	dict set part calls 0
	dict set part total_ns $total
	dict set part self_ns $self
	dict set part min_ns 0
	dict set part max_ns 0
    }
    return $part
}

# LabelHeader --
#	The header line of a report after -label or -by, or none.

proc ::tclcprof::reportlib::LabelHeader {meta} {
    set parts {}
    if {[dict exists $meta label_filter]} {
	lappend parts [join [lmap {k v} [dict get $meta label_filter] {
	    string cat $k = $v
	}] " "]
    }
    if {[dict exists $meta label_by]} {
	set by [dict get $meta label_by]
	lappend parts [expr {[llength $by] ? "by [join $by { }]"
		: "sets taken out"}]
    }
    if {![llength $parts]} {
	return {}
    }
    list "labels: [join $parts {, }]"
}
