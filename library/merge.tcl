# merge.tcl --
#
#	Profiles of several runs merged into one: tclcprof::data -db with a
#	list of files, or -run with a list of run ids or "all" (and through
#	it report, export and diff), and the check of a profile value that
#	tclcprof::save -data writes as a run.
#
#	The merged profile sums, per identical stack (the same frames, by
#	kind, name and tclkind or module, from the root down), the weights
#	of its nodes and their exact figures: calls and times summed, the
#	least minimum (of the nodes with a completed call), the greatest
#	maximum. Call sites (per file, line, command) and coverage counts
#	(per command, per line) are summed the same way, the procedures
#	defined are the union of the runs'. Events, a timeline of each run,
#	are left out; timelines (of samples and memory over time) are
#	summed with the runs aligned at their start (timeline.tcl). Its meta says what was merged (merged: the file and
#	run id of each part; runs: how many runs were summed) and sums or
#	averages the runs' figures (see MergeMeta).
#
#	Memory profiles (mode memory, and the "memory" tree of mode sample
#	with memory samples too): each node's six figures are summed, bytes
#	and objects allocated, live at the end, and live at the peak. The
#	peak of a merge is the sum of the runs' peaks: what the runs would
#	hold at once if their peaks came together (runs of a suite side by
#	side, the processes of a server), an upper bound of any moment's
#	total; a stack's peak figure is its part of that sum, so that the
#	tree's total under -view peak is the meta's peak_bytes. Runs of
#	different -memrate are summed (each one's estimates are unbiased).
#
#	Only runs of the same mode, clock and sampling rate can be summed:
#	anything else is a TCLCPROF MERGE error. Merged runs are read one at
#	a time and added to the merge, so that at most one run's profile is
#	held besides it.
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::mergelib {
    namespace path ::tclcprof::reportlib

    # The keys of a node that merging computes; the others (name, kind,
    # tclkind, module, file, line ...) are the first node's.
    variable computed {self total calls total_ns self_ns min_ns max_ns
	suspended_ns children self_lines caller_lines alloc_bytes
	alloc_objects live_bytes live_objects peak_bytes peak_objects times}

    # A memory tree's figures, summed node by node.
    variable memoryKeys {alloc_bytes alloc_objects live_bytes live_objects
	peak_bytes peak_objects}
}

# RunSpec --
#
#	The value of -run: "all", or one or more run ids (positive
#	integers, each given once), returned as "all" or the list of ids in
#	decimal. Errors: TCLCPROF VALUE -run value.

proc ::tclcprof::mergelib::RunSpec {value} {
    if {$value eq "all"} {
	return all
    }
    set bad "bad value \"[Escape $value]\" for -run: expected a run id\
	(a positive integer), a list of run ids or \"all\""
    if {[catch {llength $value} n] || $n == 0} {
	Fail [list VALUE -run $value] $bad
    }
    set ids {}
    foreach id $value {
	if {![string is wideinteger -strict $id] || $id < 1} {
	    Fail [list VALUE -run $value] $bad
	}
	set id [expr {wide($id)}]
	if {[dict exists $ids $id]} {
	    Fail [list VALUE -run $value] "bad value \"[Escape $value]\" for\
		-run: run $id is given twice"
	}
	dict set ids $id 1
    }
    return [dict keys $ids]
}

# Files --
#
#	The files a value of -db names: one file when the value is the
#	name of an existing file (or not a list, or an empty one, which
#	names no file), else the elements of the list. Errors: TCLCPROF
#	VALUE -db (a file given twice).

proc ::tclcprof::mergelib::Files {value} {
    if {[file exists $value] || [catch {llength $value} n] || $n == 0} {
	return [list $value]
    }
    set seen {}
    foreach file $value {
	set key [file normalize $file]
	if {[dict exists $seen $key]} {
	    Fail [list VALUE -db $value] "bad value \"[Escape $value]\" for\
		-db: \"[Escape $file]\" is given twice"
	}
	dict set seen $key 1
    }
    return $value
}

# Parts --
#
#	The runs that files and a -run value name, in order (file by file;
#	in a file, as given, or by id for "all"): for each, the row of
#	tclcprof::runs plus its file. Without -run (spec ""), the latest
#	run of each file. Errors: those of tclcprof::runs (TCLCPROF DB ...)
#	and TCLCPROF DB NORUN file id for a run a file does not hold (0: no
#	runs at all).

proc ::tclcprof::mergelib::Parts {files spec} {
    set parts {}
    foreach file $files {
	set rows [::tclcprof::runs -db $file]
	if {![llength $rows]} {
	    Fail [list DB NORUN $file 0] "no runs in \"$file\""
	}
	set byId {}
	foreach row $rows {
	    dict set byId [dict get $row id] $row
	}
	switch -- $spec {
	    "" {
		set ids [list [dict get [lindex $rows end] id]]
	    }
	    all {
		set ids [dict keys $byId]
	    }
	    default {
		set ids $spec
	    }
	}
	foreach id $ids {
	    if {![dict exists $byId $id]} {
		Fail [list DB NORUN $file $id] "no run $id in \"$file\""
	    }
	    lappend parts [dict merge [dict get $byId $id] [list file $file]]
	}
    }
    return $parts
}

# Read --
#
#	tclcprof::data -db files -run spec when it names more than one run
#	(or -run all): the runs merged. Called by tclcprof::data (the C
#	command), with files a list and spec as -run was given ("" when
#	it was not).

proc ::tclcprof::mergelib::Read {files spec} {
    if {$spec ne ""} {
	set spec [RunSpec $spec]
    }
    return [MergeParts [Parts [Files $files] $spec]]
}

# MergeParts --
#	The merge of runs (as Parts lists them), read one at a time.

proc ::tclcprof::mergelib::MergeParts {parts} {
    Begin
    foreach part $parts {
	Add [::tclcprof::data -db [dict get $part file] -run [dict get $part id]] \
	    [list file [dict get $part file] run [dict get $part id]]
    }
    return [End]
}

# Begin, Add, End --
#
#	A merge, in the caller's array M: Begin starts it, Add adds a
#	profile (the part says where it comes from: {file F run R}), End
#	returns the merged profile. Each tree of the merge is kept as lists
#	indexed by node (0 the root; a child always after its parent):
#	M(T,base) the first node's keys other than the computed ones,
#	M(T,self), M(T,total), M(T,fig) (exact figures as reportlib's
#	Flatten lays them out, {} for none), M(T,susp) (suspended_ns),
#	M(T,parent), and M(T,child) a dict
#	"parent\0kind\0name\0tclkind\0module\0interp" -> node (a thread's
#	root by its name: threads of several runs are summed by name).

proc ::tclcprof::mergelib::Begin {} {
    upvar 1 M M
    array unset M
    array set M {metas {} parts {} lines {} lineIdx {} cmds {} cmdIdx {}
	covLines {} covLineIdx {} procs {} hasLines 1 siteCounts 1
	hasCoverage 0 trees {} handlers {}}
}

proc ::tclcprof::mergelib::Add {profile part} {
    upvar 1 M M

    # The profile is checked as reports check it (Flatten, below, checks
    # each tree).
    if {[catch {dict size $profile}] || ![dict exists $profile meta]
	    || [catch {dict size [dict get $profile meta]}]} {
	Fail {DATA FORMAT} "invalid profile: not a dictionary with meta"
    }
    set meta [dict get $profile meta]
    if {[llength $M(metas)]} {
	Compatible [lindex $M(metas) 0] [lindex $M(parts) 0] $meta $part
    }
    lappend M(metas) $meta
    lappend M(parts) $part

    foreach treeKey {tree exact memory} {
	if {[dict exists $profile $treeKey]} {
	    AddTree $profile $treeKey
	}
    }
    AddSides $profile $meta
    return
}

# AddSides --
#	Add a profile's call sites, coverage and event handlers to the
#	merge (Add; Sides).

proc ::tclcprof::mergelib::AddSides {profile meta} {
    upvar 1 M M

    # Event handlers, per origin and kind: counts and times summed, the
    # largest maximum.
    if {[dict exists $profile handlers]} {
	foreach h [dict get $profile handlers] {
	    if {[catch {dict get $h origin} origin]
		    || [catch {dict get $h kind} kind]} {
		Fail {DATA FORMAT} "invalid profile: a handler without\
		    origin or kind"
	    }
	    set key [list $origin $kind]
	    if {![dict exists $M(handlers) $key]} {
		dict set M(handlers) $key $h
		continue
	    }
	    set old [dict get $M(handlers) $key]
	    foreach k {count timed total_ns latency_count latency_ns} {
		if {[dict exists $h $k]} {
		    dict set old $k [expr {([dict exists $old $k]
			? [dict get $old $k] : 0) + [dict get $h $k]}]
		}
	    }
	    foreach k {max_ns latency_max_ns} {
		if {[dict exists $h $k]} {
		    dict set old $k [expr {[dict exists $old $k]
			? max([dict get $old $k], [dict get $h $k])
			: [dict get $h $k]}]
		}
	    }
	    dict set M(handlers) $key $old
	}
    }
    if {[dict exists $profile lines]} {
	CheckProfile {-format dict} $profile lines
	foreach r [dict get $profile lines] {
	    set key [list [dict get $r file] [dict get $r line] \
		[dict get $r name] [expr {[dict exists $r tclkind]
		? [dict get $r tclkind] : ""}]]
	    if {[dict exists $M(lineIdx) $key]} {
		set i [dict get $M(lineIdx) $key]
		set old [lindex $M(lines) $i]
		set fig [MergeFigures [list [LineFigures $old] [LineFigures $r]]]
		foreach k {calls total_ns self_ns min_ns max_ns} v $fig {
		    dict set old $k $v
		}
		lset M(lines) $i $old
	    } else {
		dict set M(lineIdx) $key [llength $M(lines)]
		lappend M(lines) $r
	    }
	}
    } else {
	set M(hasLines) 0
    }
    if {[catch {dict get $meta lines} on] || ![string is true -strict $on]} {
	set M(siteCounts) 0
    }
    if {[dict exists $profile coverage]} {
	CheckProfile {-format dict} $profile coverage
	set M(hasCoverage) 1
	set cov [dict get $profile coverage]
	foreach r [dict get $cov commands] {
	    AddCalls cmdIdx cmds \
		[list [dict get $r name] [dict get $r tclkind]] $r
	}
	foreach r [dict get $cov lines] {
	    AddCalls covLineIdx covLines \
		[list [dict get $r file] [dict get $r line]] $r
	}
	foreach name [dict get $cov procs] {
	    dict set M(procs) $name 1
	}
    }
    return
}

# AddCalls --
#
#	A coverage record r (a command or a line) added under key to the
#	caller's M(list), indexed by M(index): its calls added to those of
#	the record of the same key, or kept as a new record.

proc ::tclcprof::mergelib::AddCalls {index list key r} {
    upvar 1 M M
    if {[dict exists $M($index) $key]} {
	set i [dict get $M($index) $key]
	set old [lindex $M($list) $i]
	dict set old calls [expr {[dict get $old calls] + [dict get $r calls]}]
	lset M($list) $i $old
    } else {
	dict set M($index) $key [llength $M($list)]
	lappend M($list) $r
    }
}

# SidesDict --
#	The merged call sites, handlers and coverage, as profile keys.

proc ::tclcprof::mergelib::SidesDict {mode} {
    upvar 1 M M

    set out {}
    if {$M(hasLines) && $mode ni {sample coverage}} {
	dict set out lines $M(lines)
    }
    if {[dict size $M(handlers)]} {
	dict set out handlers [dict values $M(handlers)]
    }
    if {$M(hasCoverage)} {
	dict set out coverage [dict create commands $M(cmds) \
	    procs [dict keys $M(procs)] \
	    lines [expr {$M(siteCounts) ? $M(covLines) : {}}]]
    }
    return $out
}

# Sides --
#	A profile of several interpreters or threads (the C side calls this
#	when a session's members published parts): its call sites,
#	coverage and event handlers with those of the parts, summed as those
#	of merged runs are; with -events, each thread's events (those of all
#	its interpreters, in one sequence, other interpreters' frames named
#	"name [path]"), the starting thread's as events, the others' as
#	thread_events. Its trees are left as they are. Each part is a dict:
#	profile, thread (the index of its thread in meta threads), interp
#	(its path) and offset (ns from the profile's start to its own).

proc ::tclcprof::mergelib::Sides {profile parts} {
    Begin
    AddSides $profile [dict get $profile meta]
    set hasEvents [dict exists $profile events]
    set ev(0) {}
    if {$hasEvents} {
	lappend ev(0) [dict get $profile events]
    }
    foreach part $parts {
	set p [dict get $part profile]
	AddSides $p [dict get $p meta]
	if {$hasEvents && [dict exists $p events]} {
	    lappend ev([dict get $part thread]) [ShiftEvents \
		[dict get $p events] [dict get $part offset] \
		[dict get $part interp]]
	}
    }
    set mode [expr {[dict exists $profile meta mode]
	? [dict get $profile meta mode] : ""}]
    foreach key {lines handlers coverage} {
	dict unset profile $key
    }
    set profile [dict merge $profile [SidesDict $mode]]
    if {$hasEvents} {
	dict set profile events [MergeEvents $ev(0)]
	set threads [expr {[dict exists $profile meta threads]
	    ? [dict get $profile meta threads] : {}}]
	set others {}
	for {set i 1} {$i < [llength $threads]} {incr i} {
	    set th [lindex $threads $i]
	    lappend others [dict create thread [dict get $th thread] \
		name [dict get $th name] events [MergeEvents \
		[expr {[info exists ev($i)] ? $ev($i) : {}}]]]
	}
	if {[llength $others]} {
	    dict set profile thread_events $others
	}
    }
    return $profile
}

# ShiftEvents, MergeEvents --
#	Events {ns type name ...} moved by offset ns (not below 0), names of
#	another interpreter than the top one suffixed with [path]; lists of
#	events of one thread put in one order of time (a stable sort: at
#	the same time, the list given first goes first).

proc ::tclcprof::mergelib::ShiftEvents {events offset interp} {
    set out {}
    set suffix [expr {$interp eq "" ? "" : " \[$interp\]"}]
    foreach {ns type name} $events {
	set t [expr {$ns + $offset}]
	lappend out [expr {$t < 0 ? 0 : $t}] $type $name$suffix
    }
    return $out
}

proc ::tclcprof::mergelib::MergeEvents {lists} {
    if {[llength $lists] == 1} {
	return [lindex $lists 0]
    }
    lsort -stride 3 -index 0 -integer [concat {*}$lists]
}

# LineFigures --
#	A call site's exact figures, as MergeFigures takes them.

proc ::tclcprof::mergelib::LineFigures {r} {
    list [dict get $r calls] [dict get $r total_ns] [dict get $r self_ns] \
	[expr {[dict exists $r min_ns] ? [dict get $r min_ns]
	: [dict get $r max_ns]}] [dict get $r max_ns]
}

# Compatible --
#
#	Whether the runs of two metas can be summed: the same mode, the
#	same clock (for times and samples) and the same sampling rate.
#	Errors: TCLCPROF MERGE MODE|CLOCK|RATE first other.

proc ::tclcprof::mergelib::Compatible {first firstPart meta part} {
    set who [Who $part]
    set whom [Who $firstPart]
    set mode [expr {[dict exists $first mode] ? [dict get $first mode] : ""}]
    set m [expr {[dict exists $meta mode] ? [dict get $meta mode] : ""}]
    if {$m ne $mode} {
	Fail [list MERGE MODE $mode $m] "cannot merge $who (mode\
	    [Escape $m]) with $whom (mode [Escape $mode]): runs of different\
	    modes cannot be summed"
    }
    if {$mode ne "coverage" && [dict exists $first clock]
	    && [dict exists $meta clock]
	    && [dict get $first clock] ne [dict get $meta clock]} {
	set c1 [dict get $first clock]
	set c2 [dict get $meta clock]
	Fail [list MERGE CLOCK $c1 $c2] "cannot merge $who ([Escape $c2]\
	    clock) with $whom ([Escape $c1] clock): figures of different\
	    clocks cannot be summed"
    }
    if {[dict exists $first rate_requested] && [dict exists $meta rate_requested]} {
	set r1 [dict get $first rate_requested]
	set r2 [dict get $meta rate_requested]
	if {[catch {expr {$r1 != $r2}} differ] || $differ} {
	    Fail [list MERGE RATE $r1 $r2] "cannot merge $who (sampled at\
		[Escape $r2] Hz) with $whom (sampled at [Escape $r1] Hz):\
		samples of different rates cannot be summed"
	}
    }
}

proc ::tclcprof::mergelib::Who {part} {
    if {[dict exists $part file]} {
	return "run [dict get $part run] of \"[Escape [dict get $part file]]\""
    }
    return "profile [dict get $part index]"
}

# AddTree --
#
#	Add a tree of a profile (checked and laid out by reportlib's
#	Flatten) to the merge's tree of the same key.

proc ::tclcprof::mergelib::AddTree {profile treeKey} {
    upvar 1 M M
    variable computed

    Flatten $profile $treeKey
    set T $treeKey
    if {$treeKey ni $M(trees)} {
	lappend M(trees) $treeKey
	set root [lindex $inNode 0]
	set M($T,base) [list [dict remove $root {*}$computed]]
	set M($T,self) [list 0]
	set M($T,total) [list 0]
	set M($T,fig) [list {}]
	set M($T,susp) [list 0]
	set M($T,parent) [list -1]
	set M($T,child) {}
	set M($T,slines) [list {}]
	set M($T,clines) [list {}]
	set M($T,mem) [list {}]
    }

    # The merge's lists, taken out of M (unshared, so that lset changes
    # them in place) and put back at the end.
    foreach k {base self total fig susp parent child slines clines mem} {
	set $k $M($T,$k)
	unset M($T,$k)
    }
    variable memoryKeys

    # The merged node of each node of the profile: the root's is the
    # root, a child's is found (or made) under its parent's by its key,
    # {kind name tclkind module} (as a string, with its parent).
    set to [lrepeat [llength $inNode] 0]
    set i 0
    foreach node $inNode s $inSelf t $inTotal f $inFig kids $inKids {
	set m [lindex $to $i]
	foreach c $kids {
	    set cn [lindex $inNode $c]
	    set kind [lindex $inKind $c]
	    set tk [expr {$kind ne "c" && [dict exists $cn tclkind]
		? [dict get $cn tclkind] : ""}]
	    set mod [expr {$kind ne "tcl" && [dict exists $cn module]
		? [dict get $cn module] : ""}]
	    # An event handler's frame: by its origin too.
	    if {$kind eq "tcl" && [dict exists $cn origin]} {
		set mod [dict get $cn origin]
	    }
	    # A Tcl frame by its interpreter too (none: the top one).
	    set ip [expr {$kind eq "tcl" && [dict exists $cn interp]
		? [dict get $cn interp] : ""}]
	    set key $m\0$kind\0[lindex $inName $c]\0$tk\0$mod\0$ip
	    if {[dict exists $child $key]} {
		lset to $c [dict get $child $key]
	    } else {
		set mc [llength $self]
		dict set child $key $mc
		lappend base [dict remove $cn {*}$computed]
		lappend self 0
		lappend total 0
		lappend fig {}
		lappend susp 0
		lappend parent $m
		lappend slines {}
		lappend clines {}
		lappend mem {}
		lset to $c $mc
	    }
	}
	lset self $m [expr {[lindex $self $m] + $s}]
	lset total $m [expr {[lindex $total $m] + $t}]
	# Memory figures: summed (a node without them counts as 0).
	if {[dict exists $node alloc_bytes]} {
	    set old [lindex $mem $m]
	    if {![llength $old]} {
		set old {0 0 0 0 0 0}
	    }
	    set sum {}
	    foreach k $memoryKeys o $old {
		set v [expr {[dict exists $node $k] ? [dict get $node $k] : 0}]
		if {![string is wideinteger -strict $v] || $v < 0} {
		    Fail [list DATA WEIGHT $k] "invalid profile: node\
			\"[Escape [lindex $inName $i]]\": $k is\
			\"[Escape $v]\", expected a non-negative integer"
		}
		lappend sum [expr {$o + $v}]
	    }
	    lset mem $m $sum
	}
	# C source lines of sampled trees, {file line weight ...}: summed
	# by file and line.
	foreach {key var} {self_lines slines caller_lines clines} {
	    if {[dict exists $node $key]} {
		set lines [lindex [set $var] $m]
		lset $var $m {}
		foreach {file line w} [dict get $node $key] {
		    dict incr lines [list $file $line] $w
		}
		lset $var $m $lines
	    }
	}
	if {[llength $f]} {
	    # As reportlib's MergeFigures: counts and times summed, the
	    # least minimum of the nodes with a completed call, the greatest
	    # maximum.
	    set old [lindex $fig $m]
	    if {[llength $old]} {
		lassign $old c0 t0 s0 mn0 mx0
		lassign $f c1 t1 s1 mn1 mx1
		if {$c0 == 0 || ($c1 > 0 && $mn1 < $mn0)} {
		    set mn0 $mn1
		}
		set f [list [expr {$c0 + $c1}] [expr {$t0 + $t1}] \
		    [expr {$s0 + $s1}] $mn0 [expr {max($mx0, $mx1)}]]
	    }
	    lset fig $m $f
	    if {[dict exists $node suspended_ns]} {
		lset susp $m [expr {[lindex $susp $m]
		    + [dict get $node suspended_ns]}]
	    }
	}
	incr i
    }
    foreach k {base self total fig susp parent child slines clines mem} {
	set M($T,$k) [set $k]
    }
    # Timelines (timeline.tcl).
    AddTimes $profile $T $to $inNode
}

# SumTrees --
#
#	Call trees (root nodes) summed path by path into one, as runs are
#	(the threads of a profile folded by report -thread merge).

proc ::tclcprof::mergelib::SumTrees {roots} {
    Begin
    foreach root $roots {
	AddTree [dict create meta {} tree $root] tree
    }
    return [TreeDict tree]
}

# End --
#
#	The merged profile.

proc ::tclcprof::mergelib::End {} {
    upvar 1 M M
    variable computed

    if {![llength $M(metas)]} {
	Fail {NODATA} "nothing to merge"
    }
    set mode [expr {[dict exists [lindex $M(metas) 0] mode]
	? [dict get [lindex $M(metas) 0] mode] : ""}]

    # Mode both: a Tcl node of the sampled tree carries the exact
    # figures of its Tcl call path, those of the merged exact tree (a
    # path reached in a run without being sampled there counts too).
    if {"tree" in $M(trees) && "exact" in $M(trees)} {
	set n [llength $M(tree,self)]
	set eid [lrepeat $n -1]
	lset eid 0 0
	for {set m 1} {$m < $n} {incr m} {
	    set base [lindex $M(tree,base) $m]
	    set p [lindex $eid [lindex $M(tree,parent) $m]]
	    if {[dict get $base kind] ne "tcl"} {
		lset eid $m $p
		continue
	    }
	    if {$p < 0} {
		continue
	    }
	    set key $p\0tcl\0[dict get $base name]\0[expr {[dict exists \
		$base tclkind] ? [dict get $base tclkind] : ""}]\0[expr {
		[dict exists $base origin] ? [dict get $base origin] : ""}]\0[expr {
		[dict exists $base interp] ? [dict get $base interp] : ""}]
	    if {![dict exists $M(exact,child) $key]} {
		continue
	    }
	    set e [dict get $M(exact,child) $key]
	    lset eid $m $e
	    if {[llength [lindex $M(tree,fig) $m]]} {
		lset M(tree,fig) $m [lindex $M(exact,fig) $e]
		lset M(tree,susp) $m [lindex $M(exact,susp) $e]
	    }
	}
    }

    set profile [dict create meta [MergeMeta]]
    foreach T $M(trees) {
	dict set profile $T [TreeDict $T]
    }
    return [TimesEnd [dict merge $profile [SidesDict $mode]]]
}

# TreeDict --
#	A merged tree as nested node dicts, built from the last node back
#	(children come after their parents), without recursion.

proc ::tclcprof::mergelib::TreeDict {T} {
    upvar 1 M M
    variable ::tclcprof::reportlib::figureKeys
    variable memoryKeys

    # Nodes of a memory tree all have the figures.
    set memTree [expr {$T eq "memory" || ([llength $M(metas)]
	&& ![catch {dict get [lindex $M(metas) 0] mode} mode]
	&& $mode eq "memory")}]
    set n [llength $M($T,self)]
    set pending [lrepeat $n {}]
    for {set m [expr {$n - 1}]} {$m >= 0} {incr m -1} {
	set node [lindex $M($T,base) $m]
	dict set node self [lindex $M($T,self) $m]
	dict set node total [lindex $M($T,total) $m]
	set fig [lindex $M($T,fig) $m]
	if {[llength $fig]} {
	    foreach k $figureKeys v $fig {
		dict set node $k $v
	    }
	    if {[lindex $M($T,susp) $m] > 0} {
		dict set node suspended_ns [lindex $M($T,susp) $m]
	    }
	}
	set mem [lindex $M($T,mem) $m]
	if {[llength $mem]} {
	    foreach k $memoryKeys v $mem {
		dict set node $k $v
	    }
	} elseif {$memTree} {
	    foreach k $memoryKeys {
		dict set node $k 0
	    }
	}
	# Timelines (timeline.tcl), before the lines as a profile has them.
	set times [NodeTimesOf $T $m]
	if {[llength $times]} {
	    dict set node times $times
	}
	foreach {key var} {self_lines slines caller_lines clines} {
	    set lines [lindex $M($T,$var) $m]
	    if {[dict size $lines]} {
		set flat {}
		dict for {fl w} $lines {
		    lappend flat {*}$fl $w
		}
		dict set node $key $flat
	    }
	}
	# (Added last first.)
	dict set node children [lreverse [lindex $pending $m]]
	lset pending $m {}
	set p [lindex $M($T,parent) $m]
	if {$p < 0} {
	    return $node
	}
	::tclcprof::reportlib::ToParent pending $p $node
    }
}

# MergeMeta --
#
#	The meta of the merge, from the runs' metas: the first one's keys
#	and values, then: elapsed, samples, weight and calls summed;
#	running if any run was; lines and compensate if every run had
#	them; label and stopped_by when all runs agree (else empty);
#	subcommands, include and exclude the union of the runs' lists;
#	rate_achieved the average over the elapsed time; the counters of
#	sampling and exact summed, with splice_rate the average over the
#	samples, the handler's mean time the average over the signals (its
#	median and 99th percentile the largest of the runs'), the
#	compensation's times per call the average over the calls; merged,
#	the list of {file F run R} of
#	the parts, and runs, how many runs were summed (a merged run
#	counting for as many as it merged).

proc ::tclcprof::mergelib::MergeMeta {} {
    upvar 1 M M

    set metas $M(metas)
    set out {}
    foreach meta $metas {
	set out [dict merge $meta $out]
    }
    set out [dict merge [lindex $metas 0] $out]
    dict for {key -} $out {
	set values [lmap meta $metas {
	    if {![dict exists $meta $key]} continue
	    dict get $meta $key
	}]
	switch -- $key {
	    elapsed - samples - weight - calls {
		dict set out $key [Sum $values]
	    }
	    running {
		dict set out $key [expr {[llength [lmap v $values {
		    if {![string is true -strict $v]} continue
		    set v
		}]] > 0}]
	    }
	    lines - compensate {
		dict set out $key [expr {[llength $values] == [llength $metas]
		    && [llength [lmap v $values {
			if {[string is true -strict $v]} continue
			set v
		    }]] == 0}]
	    }
	    label - stopped_by {
		dict set out $key [expr {[llength [lsort -unique $values]] == 1
		    && [llength $values] == [llength $metas]
		    ? [lindex $values 0] : ""}]
	    }
	    subcommands - include - exclude {
		set union {}
		foreach v $values {
		    if {[catch {
			foreach item $v {
			    dict set union $item 1
			}
		    }]} {
			dict set union $v 1
		    }
		}
		dict set out $key [dict keys $union]
	    }
	    sampling - exact {
		dict set out $key [SumDicts $values]
	    }
	    memory {
		# Counts and estimates summed; the rate when the runs agree
		# (else empty: runs of different rates are summed too).
		set rates [lsort -unique [lmap v $values {
		    expr {[catch {dict get $v rate} r] ? "" : $r}
		}]]
		set m [SumDicts $values]
		if {![catch {dict size $m}]} {
		    dict set m rate [expr {[llength $rates] == 1
			&& [llength $values] == [llength $metas]
			? [lindex $rates 0] : ""}]
		}
		dict set out $key $m
	    }
	}
    }

    # Averages, weighted.
    set rate [Average $metas rate_achieved elapsed]
    if {$rate ne ""} {
	dict set out rate_achieved [expr {round($rate * 10) / 10.0}]
    }
    if {[dict exists $out sampling]} {
	set s [dict get $out sampling]
	if {$rate ne "" && [dict exists $s rate_achieved]} {
	    dict set s rate_achieved [dict get $out rate_achieved]
	}
	set v [Average $metas {sampling splice_rate} {sampling samples}]
	if {$v ne ""} {
	    dict set s splice_rate [expr {round($v * 10000) / 10000.0}]
	}
	set v [Average $metas {sampling handler mean_ns} {sampling signals}]
	if {$v ne ""} {
	    dict set s handler mean_ns [expr {round($v)}]
	}
	foreach k {median_ns p99_ns} {
	    set v [Largest $metas [list sampling handler $k]]
	    if {$v ne ""} {
		dict set s handler $k $v
	    }
	}
	if {[dict exists $s active]} {
	    dict set s active 0
	}
	dict set out sampling $s
    }
    if {[dict exists $out exact]} {
	set e [dict get $out exact]
	foreach k {inside_ns call_ns} {
	    set v [Average $metas [list exact compensation $k] {exact calls}]
	    if {$v ne ""} {
		dict set e compensation $k [expr {round($v)}]
	    }
	}
	if {[dict exists $e active]} {
	    dict set e active 0
	}
	dict set out exact $e
    }

    set runs 0
    foreach meta $metas {
	incr runs [expr {[dict exists $meta runs]
	    && [string is wideinteger -strict [dict get $meta runs]]
	    ? [dict get $meta runs] : 1}]
    }
    dict set out merged $M(parts)
    dict set out runs $runs
    return $out
}

# Sum, SumDicts, Average, Largest --
#
#	Sums of numbers (integers stay integers); dicts of counters summed
#	key by key (a value that is not a number in every dict, nor a
#	dict, is the first one's); the average of a figure over the metas
#	weighted by another, and the largest of a figure ("" when no meta
#	has them as numbers).

proc ::tclcprof::mergelib::Sum {values} {
    set sum 0
    foreach v $values {
	if {[string is double -strict $v]} {
	    set sum [expr {$sum + $v}]
	}
    }
    return $sum
}

proc ::tclcprof::mergelib::SumDicts {values} {
    set out {}
    foreach v $values {
	if {[catch {dict size $v}]} {
	    return [lindex $values 0]
	}
	set out [dict merge $v $out]
    }
    dict for {key -} $out {
	set vs [lmap v $values {
	    if {![dict exists $v $key]} continue
	    dict get $v $key
	}]
	set ints [lmap v $vs {
	    if {![string is wideinteger -strict $v]} continue
	    set v
	}]
	if {[llength $ints] == [llength $vs]} {
	    dict set out $key [Sum $vs]
	    continue
	}
	set dicts [lmap v $vs {
	    if {[catch {dict size $v} size] || $size == 0} continue
	    set v
	}]
	if {[llength $dicts] == [llength $vs]} {
	    dict set out $key [SumDicts $vs]
	} else {
	    dict set out $key [lindex $vs 0]
	}
    }
    return $out
}

proc ::tclcprof::mergelib::Average {metas path weightPath} {
    set sum 0.0
    set weights 0.0
    foreach meta $metas {
	if {[catch {dict get $meta {*}$path} v]
		|| [catch {dict get $meta {*}$weightPath} w]
		|| ![string is double -strict $v]
		|| ![string is double -strict $w]} {
	    continue
	}
	set sum [expr {$sum + $v * $w}]
	set weights [expr {$weights + $w}]
    }
    if {$weights <= 0} {
	return ""
    }
    expr {$sum / $weights}
}

proc ::tclcprof::mergelib::Largest {metas path} {
    set out ""
    foreach meta $metas {
	if {![catch {dict get $meta {*}$path} v]
		&& [string is double -strict $v]
		&& ($out eq "" || $v > $out)} {
	    set out $v
	}
    }
    return $out
}

# CheckMemory --
#
#	Check the memory figures of a tree's nodes (those it has): each a
#	non-negative integer. Errors: TCLCPROF DATA WEIGHT key.

proc ::tclcprof::mergelib::CheckMemory {root} {
    variable memoryKeys
    set queue [list $root]
    for {set i 0} {$i < [llength $queue]} {incr i} {
	set node [lindex $queue $i]
	foreach k $memoryKeys {
	    if {[dict exists $node $k]} {
		set v [dict get $node $k]
		if {![string is wideinteger -strict $v] || $v < 0} {
		    Fail [list DATA WEIGHT $k] "invalid profile: node\
			\"[Escape [dict get $node name]]\": $k is\
			\"[Escape $v]\", expected a non-negative integer"
		}
	    }
	}
	lappend queue {*}[dict get $node children]
    }
}

# CheckSave --
#
#	Check a profile value that tclcprof::save -data is to write as a
#	run: what a text report of each of its parts would check (see
#	-data of tclcprof::report), a mode the file can hold, and its
#	trees (sampled modes), exact tree (mode both) and events as the
#	file keeps them. Errors: TCLCPROF DATA ...

proc ::tclcprof::mergelib::CheckSave {profile} {
    set o {-format text}
    set meta [ProfileMeta $profile]
    if {![dict exists $meta mode]} {
	Fail {DATA KEY mode} "invalid profile: meta: missing key \"mode\""
    }
    set mode [dict get $meta mode]
    if {$mode ni {sample exact both coverage memory}} {
	Fail {DATA FORMAT} "invalid profile: meta: mode is\
	    \"[Escape $mode]\", expected sample, exact, both, coverage or\
	    memory"
    }
    Flatten $profile tree
    if {$mode eq "both"} {
	Flatten $profile exact
    }
    # Memory figures: the tree of mode memory, the memory tree of mode
    # sample (-mode {sample memory}).
    if {$mode eq "memory"} {
	CheckMemory [dict get $profile tree]
    } elseif {$mode eq "sample" && [dict exists $profile memory]} {
	Flatten $profile memory
	CheckMemory [dict get $profile memory]
    }
    foreach key {lines coverage} {
	if {[dict exists $profile $key]} {
	    CheckProfile $o $profile $key
	}
    }
    CheckMeta $o $meta [expr {$mode ne "sample"}]
    if {[dict exists $profile events]} {
	CheckEvents [dict get $profile events] events
    }
    if {[dict exists $profile thread_events]} {
	set te [dict get $profile thread_events]
	if {[catch {llength $te}]} {
	    Fail {DATA FORMAT} "invalid profile: thread_events is not a list"
	}
	set j 0
	foreach entry $te {
	    if {[catch {dict size $entry}] || ![dict exists $entry events]} {
		Fail {DATA FORMAT} "invalid profile: thread_events $j: not a\
		    dictionary with events"
	    }
	    CheckEvents [dict get $entry events] "thread_events $j events"
	    incr j
	}
    }
    return
}

# CheckEvents --
#	Fail unless events (what: where they are) is a list of time, type
#	and name triples, times non-negative integers, types E or L.

proc ::tclcprof::mergelib::CheckEvents {events what} {
    if {[catch {llength $events} n] || $n % 3} {
	Fail {DATA FORMAT} "invalid profile: $what is not a list of\
	    time, type and name triples"
    }
    set i 0
    foreach {ns type name} $events {
	if {![string is wideinteger -strict $ns] || $ns < 0
		|| $type ni {E L}} {
	    Fail {DATA FORMAT} "invalid profile: [expr {$what eq "events"
		? "event $i" : "$what: event $i"}]: not a non-negative\
		time, E or L, and a name"
	}
	incr i
    }
}

# ::tclcprof::history --
#
#	tclcprof::history dir ?-since time? ?-until time?
#
#	The files of a -history directory (tclcprof-*.db) whose run
#	overlaps the window [since, until], oldest first: what report,
#	export, merge and diff take as -db (several files are merged). A
#	run still being written (no end time) reaches to now. A time is
#	seconds since the epoch (a number of 9 digits or more), a time ago
#	(a number with s, m, h or d: 90m), or a date and time ISO 8601 style
#	(2026-11-28T03:00, 2026-11-28 03:00:00, a trailing Z for UTC, else
#	local time). Errors: TCLCPROF VALUE -since|-until value, TCLCPROF
#	VALUE history dir (not a directory).
#
#	A history kept in one database file (-history FILE.db): the ids of
#	its runs in the window, oldest first, for -run (with -db FILE).
#	(HistoryDb.)

namespace eval ::tclcprof {
    namespace export history
}

proc ::tclcprof::history {dir args} {
    set since -Inf
    set until Inf
    if {[llength $args] % 2} {
	::tclcprof::reportlib::Fail [list VALUE [lindex $args end]] \
	    "missing value for option \"[lindex $args end]\""
    }
    set now [expr {[clock milliseconds] / 1000.0}]
    foreach {opt v} $args {
	switch -- $opt {
	    -since {
		set since [::tclcprof::mergelib::Time $opt $v $now]
	    }
	    -until {
		set until [::tclcprof::mergelib::Time $opt $v $now]
	    }
	    default {
		::tclcprof::reportlib::Fail [list OPTION $opt] "bad option\
		    \"$opt\": must be -since or -until"
	    }
	}
    }
    if {[HistoryDb $dir]} {
	set found {}
	foreach row [::tclcprof::runs -db $dir] {
	    set start [dict get $row start_time]
	    set end [dict get $row end_time]
	    if {$end eq ""} {
		set end $now
	    }
	    if {$end >= $since && $start <= $until} {
		lappend found [list $start [dict get $row id]]
	    }
	}
	return [lmap pair [lsort -real -index 0 $found] {lindex $pair 1}]
    }
    if {![file isdirectory $dir]} {
	::tclcprof::reportlib::Fail [list VALUE history $dir] "\"$dir\" is\
	    not a history directory, nor a history database (FILE.db)"
    }
    set found {}
    foreach file [lsort [glob -nocomplain -directory $dir -types f \
	    tclcprof-*.db]] {
	if {[catch {::tclcprof::runs -db $file} rows] || ![llength $rows]} {
	    # A file being made, or dropped meanwhile.
	    continue
	}
	set row [lindex $rows end]
	set start [dict get $row start_time]
	set end [dict get $row end_time]
	if {$end eq ""} {
	    set end $now
	}
	if {$end >= $since && $start <= $until} {
	    lappend found [list $start $file]
	}
    }
    return [lmap pair [lsort -real -index 0 $found] {lindex $pair 1}]
}

# HistoryDb --
#	Whether path is a history kept in one database file: an existing
#	file whose name ends in .db.

proc ::tclcprof::HistoryDb {path} {
    expr {[string match *.db $path] && [file isfile $path]}
}

# Time --
#	A value of -since or -until as Unix seconds (see ::tclcprof::history).

proc ::tclcprof::mergelib::Time {opt v now} {
    if {[regexp {^\s*([0-9]+(?:\.[0-9]*)?)\s*([smhd])\s*$} $v -> n unit]} {
	return [expr {$now - $n * [dict get {s 1 m 60 h 3600 d 86400} $unit]}]
    }
    if {[regexp {^\s*[0-9]{9,}(\.[0-9]*)?\s*$} $v]} {
	return [expr {double($v)}]
    }
    set gmt [regsub {Z$} [string trim $v] {} t]
    foreach format {
	%Y-%m-%dT%H:%M:%S {%Y-%m-%d %H:%M:%S} %Y-%m-%dT%H:%M {%Y-%m-%d %H:%M}
	%Y-%m-%d
    } {
	if {![catch {clock scan $t -format $format -gmt $gmt} secs]} {
	    return [expr {double($secs)}]
	}
    }
    Fail [list VALUE $opt $v] "bad value \"[Escape $v]\" for $opt: expected\
	seconds since the epoch, a time ago (90m, 2h) or an ISO 8601 date\
	and time"
}
