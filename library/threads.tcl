# threads.tcl --
#
#	Profiles of several threads and interpreters (tclcprof::start
#	-scope tree or process) as reports and exports take them: -thread
#	picks one thread's tree, keeps the threads' roots (all) or folds
#	them into one tree (merge, summed path by path by merge.tcl); a
#	Tcl frame of an interpreter other than its thread's top one is
#	named "name [interp]", so that every report and export, which know
#	frames by name and kind, tells it from the same command of another
#	interpreter, and shows where it ran.
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::reportlib {}

# ThreadList --
#
#	The threads of a profile: the roots of kind thread under its tree's
#	root (name and Tcl thread id), with their system thread id from
#	meta threads; for a profile without thread roots, the threads of
#	its meta (a profile of one thread may list it).
#
# Results:
#	A list of dicts {name N thread T tid I}, in tree order.

proc ::tclcprof::reportlib::ThreadList {profile} {
    set byId {}
    set metaList {}
    if {![catch {dict get $profile meta threads} threads]
	    && [string is list $threads]} {
	foreach th $threads {
	    if {[catch {dict size $th}]} {
		continue
	    }
	    set d [dict create name "" thread "" tid ""]
	    foreach k {name thread tid} {
		if {[dict exists $th $k]} {
		    dict set d $k [dict get $th $k]
		}
	    }
	    lappend metaList $d
	    if {[dict get $d thread] ne ""} {
		dict set byId [dict get $d thread] [dict get $d tid]
	    }
	}
    }
    set out {}
    foreach key {tree exact} {
	if {[catch {dict get $profile $key children} kids]
		|| ![string is list $kids]} {
	    continue
	}
	foreach c $kids {
	    if {[catch {dict get $c kind} kind] || $kind ne "thread"
		    || [catch {dict get $c name} name]} {
		continue
	    }
	    set id [expr {[dict exists $c thread] ? [dict get $c thread] : ""}]
	    if {[lsearch -exact [lmap d $out {dict get $d name}] $name] >= 0} {
		continue
	    }
	    lappend out [dict create name $name thread $id \
		    tid [expr {[dict exists $byId $id] ? [dict get $byId $id]
		    : ""}]]
	}
	if {[llength $out]} {
	    return $out
	}
    }
    return $metaList
}

# HasThreadRoots --
#	Whether a tree's root has children of kind thread.

proc ::tclcprof::reportlib::HasThreadRoots {root} {
    if {[catch {dict get $root children} kids] || ![string is list $kids]} {
	return 0
    }
    foreach c $kids {
	if {![catch {dict get $c kind} kind] && $kind eq "thread"} {
	    return 1
	}
    }
    return 0
}

# CheckThread --
#
#	The thread of a profile that a value of -thread names, by its name,
#	its Tcl thread id or its system thread id, as a dict of ThreadList;
#	"all" and "merge" are returned as they are. Errors: TCLCPROF THREAD
#	value (no such thread; the message lists the profile's).

proc ::tclcprof::reportlib::CheckThread {profile value} {
    if {$value in {all merge}} {
	return $value
    }
    set threads [ThreadList $profile]
    foreach k {name thread tid} {
	foreach th $threads {
	    if {[dict get $th $k] ne "" && [dict get $th $k] eq $value} {
		return $th
	    }
	}
    }
    set known [lmap th $threads {
	set ids [lmap k {thread tid} {
	    expr {[dict get $th $k] eq "" ? [continue] : [dict get $th $k]}
	}]
	expr {[llength $ids] ? "[Quote [dict get $th name]] ([join $ids {, }])"
		: [Quote [dict get $th name]]}
    }]
    Fail [list THREAD $value] "no thread [Quote $value] in the profile:\
	    [expr {[llength $known] ? "its threads are [join $known {, }]"
	    : "it has no thread roots (a profile of one thread)"}]"
}

# Threads --
#
#	A profile as reports and exports read it, after -thread (default
#	all) and with the frames of other interpreters named "name
#	[interp]": in its tree and exact tree, a selected thread's tree
#	(the root with the thread's children and total), or, with merge,
#	the trees of all threads summed path by path (MergeThreads); the
#	profile's meta gets "thread", the thread picked (its name) or
#	"merge". Values that are not profiles are returned as they are (the
#	report's checks say what is wrong).
#
# Results:
#	The profile. Errors: TCLCPROF THREAD value.

proc ::tclcprof::reportlib::Threads {o profile} {
    set sel [expr {[dict exists $o -thread] ? [dict get $o -thread] : "all"}]
    if {[catch {dict size $profile}]} {
	return $profile
    }
    set th [CheckThread $profile $sel]
    set rename [InterpNamed $profile]
    if {$sel eq "all" && !$rename} {
	return $profile
    }
    foreach key {tree exact} {
	if {[catch {dict get $profile $key} root] || [catch {dict size $root}]
		|| [catch {dict get $root children} kids]
		|| ![string is list $kids]} {
	    continue
	}
	if {$sel ne "all" && [HasThreadRoots $root]} {
	    if {$sel eq "merge"} {
		set root [MergeThreads $profile $key]
	    } else {
		set root [PickThread $root [dict get $th name]]
	    }
	}
	if {$rename} {
	    set root [InterpRename $root]
	}
	dict set profile $key $root
    }
    if {$sel ne "all" && [dict exists $profile meta]
	    && ![catch {dict size [dict get $profile meta]}]} {
	dict set profile meta thread [expr {$sel eq "merge" ? "merge"
		: [dict get $th name]}]
    }
    return $profile
}

# PickThread --
#	The tree of one thread: a root with its children and weights.

proc ::tclcprof::reportlib::PickThread {root name} {
    foreach c [dict get $root children] {
	if {![catch {dict get $c kind} kind] && $kind eq "thread"
		&& ![catch {dict get $c name} n] && $n eq $name} {
	    set new [dict remove $c name kind thread]
	    return [dict merge [dict create name {} kind root] $new]
	}
    }
    # (Only in the tree that lacks the thread: an exact tree of a thread
    # that ran no timed call.)
    set new [dict create name {} kind root self 0 total 0 children {}]
    foreach k {calls total_ns self_ns min_ns max_ns} {
	if {[dict exists $root $k]} {
	    dict set new $k 0
	}
    }
    return $new
}

# MergeThreads --
#
#	The tree under key of a profile with thread roots, its threads
#	folded: each thread's subtree made a tree of its own and the trees
#	summed by merge.tcl (weights and exact figures path by path, the
#	least minimum, the greatest maximum); what the root had of its own
#	stays its own.

proc ::tclcprof::reportlib::MergeThreads {profile key} {
    set root [dict get $profile $key]
    set parts {}
    set other {}
    foreach c [dict get $root children] {
	if {![catch {dict get $c kind} kind] && $kind eq "thread"} {
	    lappend parts [dict merge [dict create name {} kind root] \
		    [dict remove $c name kind thread]]
	} else {
	    lappend other $c
	}
    }
    # The root's own weight and its children that are no thread's, as
    # one more part.
    set own [dict get $root self]
    if {[llength $other] || $own > 0} {
	set rest [dict create name {} kind root self $own children $other]
	set sum $own
	foreach c $other {
	    set sum [expr {$sum + [dict get $c total]}]
	}
	dict set rest total $sum
	if {[dict exists $root calls]} {
	    dict set rest calls 0
	    dict set rest total_ns $sum
	    dict set rest self_ns $own
	    dict set rest min_ns 0
	    dict set rest max_ns 0
	}
	lappend parts $rest
    }
    return [::tclcprof::mergelib::SumTrees $parts]
}

# InterpNamed --
#
#	Whether the frames of a profile are named after their interpreter:
#	a profile of several interpreters (meta scope tree or process, or
#	meta threads), unless its threads say that only their top
#	interpreters were profiled (every "interps" of meta threads is {{}}:
#	no name to change, no walk of the tree). A profile of one
#	interpreter (scope interp, and those of earlier versions) keeps its
#	names as they are.

proc ::tclcprof::reportlib::InterpNamed {profile} {
    if {[catch {dict get $profile meta} meta] || [catch {dict size $meta}]} {
	return 0
    }
    if {[dict exists $meta scope] && [dict get $meta scope] eq "interp"} {
	return 0
    }
    if {![dict exists $meta threads]} {
	return [dict exists $meta scope]
    }
    if {[catch {
	foreach th [dict get $meta threads] {
	    if {![dict exists $th interps]} {
		return 1
	    }
	    foreach ip [dict get $th interps] {
		if {$ip ne ""} {
		    return 1
		}
	    }
	}
    }]} {
	return 1
    }
    return 0
}

# InterpRename --
#
#	A tree whose Tcl frames with a non-empty interp are named
#	"name [interp]", built without recursion (from the last node of a
#	breadth-first walk back to the root).

proc ::tclcprof::reportlib::InterpRename {root} {
    set queue [list $root]
    set parent [list -1]
    for {set i 0} {$i < [llength $queue]} {incr i} {
	set node [lindex $queue $i]
	if {[catch {dict get $node children} kids]
		|| ![string is list $kids]} {
	    continue
	}
	foreach c $kids {
	    lappend queue $c
	    lappend parent $i
	}
    }
    set pending [lrepeat [llength $queue] {}]
    for {set i [expr {[llength $queue] - 1}]} {$i >= 0} {incr i -1} {
	set node [lindex $queue $i]
	if {![catch {dict get $node interp} ip] && $ip ne ""
		&& ![catch {dict get $node kind} kind] && $kind eq "tcl"
		&& ![catch {dict get $node name} name]} {
	    dict set node name "$name \[$ip\]"
	}
	if {[dict exists $node children]} {
	    dict set node children [lreverse [lindex $pending $i]]
	}
	lset pending $i {}
	set p [lindex $parent $i]
	if {$p < 0} {
	    return $node
	}
	ToParent pending $p $node
    }
}

# ToParent --
#
#	A tree built from its last node back to its root (InterpRename,
#	mergelib's trees): a node made joins the children its parent (index
#	p) has waiting in the list of the caller's variable pendingVar.

proc ::tclcprof::reportlib::ToParent {pendingVar p node} {
    upvar 1 $pendingVar pending
    set kids [lindex $pending $p]
    lset pending $p {}
    lappend kids $node
    lset pending $p $kids
}

# Bare --
#	A frame's name without the " [interp]" InterpRename gives it (the
#	name as it is when it has none).

proc ::tclcprof::reportlib::Bare {name} {
    if {[string index $name end] eq "\]"
	    && [regexp {^(.*) \[[^\[\]]*\]$} $name -> bare]} {
	return $bare
    }
    return $name
}

# NameMatch --
#	Whether a glob pattern matches a frame's name, with or without its
#	" [interp]".

proc ::tclcprof::reportlib::NameMatch {pattern name} {
    expr {[string match $pattern $name]
	    || ([string index $name end] eq "\]"
	    && [string match $pattern [Bare $name]])}
}

# ThreadHeader --
#
#	Text header lines about the threads of a profile of several: each
#	thread with its state, CPU time and weight of samples (and share of
#	the threads' weight; none when nothing was sampled, as in mode
#	exact), with times (an exact tree shown) its calls (and share), and
#	which -thread the report shows.

proc ::tclcprof::reportlib::ThreadHeader {meta {times 0}} {
    set lines {}
    if {[catch {dict get $meta threads} threads] || ![string is list $threads]
	    || [llength $threads] < 2} {
	return $lines
    }
    set sum 0
    set callSum 0
    foreach th $threads {
	if {![catch {dict get $th weight} w] && [string is double -strict $w]} {
	    set sum [expr {$sum + $w}]
	}
	if {![catch {dict get $th calls} c] && [string is double -strict $c]} {
	    set callSum [expr {$callSum + $c}]
	}
    }
    set line "threads: [llength $threads]"
    if {[dict exists $meta scope]} {
	append line " (scope [Escape [dict get $meta scope]])"
    }
    if {[dict exists $meta thread]} {
	set t [dict get $meta thread]
	append line [expr {$t eq "merge" ? ", merged into one tree"
		: ", showing [Quote $t]"}]
    }
    lappend lines $line
    foreach th $threads {
	if {[catch {dict size $th}]} {
	    continue
	}
	set name [expr {[dict exists $th name] ? [dict get $th name] : "?"}]
	set ids [lmap k {thread tid state} {
	    if {![dict exists $th $k] || [dict get $th $k] eq ""} {
		continue
	    }
	    Escape [dict get $th $k]
	}]
	set figs {}
	if {![catch {dict get $th cpu_ns} ns] && [string is entier -strict $ns]} {
	    lappend figs "cpu [Dur $ns]"
	}
	if {$sum > 0 && ![catch {dict get $th weight} w]
		&& [string is double -strict $w]} {
	    lappend figs "weight [Num $w] ([Pct $w $sum 1]%)"
	}
	if {$times && ![catch {dict get $th calls} c]
		&& [string is double -strict $c]} {
	    lappend figs "calls [Num $c] ([Pct $c $callSum 1]%)"
	}
	set l "  [Frame $name thread]"
	if {[llength $ids]} {
	    append l " ([join $ids {, }])"
	}
	if {[llength $figs]} {
	    append l ": [join $figs {, }]"
	}
	lappend lines $l
    }
    return $lines
}

# CheckThreadValue --
#	The value of -thread, before the profile is read: a name, a Tcl or
#	system thread id, "all" or "merge"; not empty. Errors: TCLCPROF
#	VALUE -thread.

proc ::tclcprof::reportlib::CheckThreadValue {value} {
    if {$value eq ""} {
	Fail [list VALUE -thread $value] "bad value \"\" for -thread:\
		expected a thread's name or id, \"all\" or \"merge\""
    }
}
