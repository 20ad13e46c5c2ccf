# report.tcl --
#
#	tclcprof::report: the call tree, the flat profile, the callers or
#	callees of a frame, the call sites (lines) or the coverage of a
#	profile value, as text on a channel or as Tcl values, with sorting,
#	pruning (-min, -limit), focusing on frames (-focus) and hiding
#	frames (-hide).
#
#	A profile is the dict {meta {...} tree NODE ...} returned by
#	tclcprof::data, where each NODE is a dict with at least name, kind,
#	self, total and children; nodes timed exactly also have calls,
#	total_ns, self_ns, min_ns and max_ns (the exact figures). In an
#	exact profile self and total are nanoseconds; in a sampled one they
#	are sample weights. See doc/tclcprof.n.
#
#	All the work is iterative (explicit stacks and queues), so that deep
#	trees cannot exhaust the interpreter's nesting limit, and linear or
#	n log n in the number of nodes: siblings are merged through dicts
#	keyed by [list name kind] and each child list is sorted once.
#
#	This file holds the command: its options, the profile it reads
#	(-data, -db, the current one; a memory profile's view) and the
#	dispatch by -type. Each type has a file of its own, report<type>.tcl
#	(tree, flat, callers for callers and callees, components, lines,
#	coverage, events); what they share is in reportbuild.tcl (the tree
#	flattened, hidden and focused), reportcheck.tcl (profile values
#	checked), reportheader.tcl (the header of text reports) and
#	reporttext.tcl (columns and text formatting). All of them define
#	procs of ::tclcprof::reportlib.
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
	-by -channel -count -data -db -focus -format -from -hide -label -limit
	-min -run -sort -thread -to -type -view
    }

    # The exact figures of a node, in the order they are kept.
    variable figureKeys {calls total_ns self_ns min_ns max_ns}

    # What -type coverage leaves out unless -hide is given: the procs of
    # Tcl's own library and of tcltest.
    variable coverageHide {
	::tcl::* ::tcltest::* ::auto_* ::tcl_* ::tclInit ::tclLog
	::tclPkg* ::unknown ::pkg_* ::oo::* ::msgcat::*
    }

    # Default -min (percent of the whole profile's total) by output
    # format: text is for reading, dict is for programs.
    variable defaultMin {text 0.5 dict 0}

    # Whether the weights of the report being made are bytes (Wt).
    variable byteWeights 0

    # Keys of a node that a flat row carries over from the first node of
    # its frame (the others, such as children, make no sense for a row).
    variable rowKeys {tclkind module interp thread file line}

    # Text trees are indented two spaces per level up to indentLevels
    # levels; deeper lines stay at that indentation, marked "[+N] " (N
    # levels deeper), so that a report grows linearly with the depth.
    variable indentLevels 64

    # The longest frame name, in bytes, a text report shows: a Tcl value
    # holds less than 2 GB, and escaping can make a name four times
    # longer (see CheckNames).
    variable maxName [expr {(0x7fffffff - 4096) / 4}]

    # Characters that text output shows escaped: C0 and C1 controls,
    # DEL, and the Unicode line and paragraph separators.
    variable controlRE {[\x00-\x1f\x7f-\x9f\u2028\u2029]}
    variable escapeMap [list \n {\n} \r {\r} \t {\t} \u2028 {\u2028} \
	    \u2029 {\u2029}]
    # (In a lambda: a plain i here would be the global i of a program
    # that loads the package while it has one, "namespace eval"'s lookup.)
    apply {{} {
	variable escapeMap
	for {set i 0} {$i < 0xa0} {incr i} {
	    if {($i < 0x20 || $i >= 0x7f) && $i ni {9 10 13}} {
		lappend escapeMap [format %c $i] [format {\x%02x} $i]
	    }
	}
    } ::tclcprof::reportlib}
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

    return [reportlib::Report $o [reportlib::Profile $o]]
}

# CheckSource, Profile --
#
#	The profile options name: -data, a run of a file (-db, -run), or
#	the current one. Shared by report and export. Errors of
#	tclcprof::data are theirs.

proc ::tclcprof::reportlib::CheckSource {o} {
    if {[dict exists $o -run] && ![dict exists $o -db]} {
	Fail [list VALUE -run] "-run needs -db: runs are read from a file"
    }
    if {[dict exists $o -db] && [dict exists $o -data]} {
	Fail [list VALUE -db] "-db and -data cannot be used together"
    }
}

proc ::tclcprof::reportlib::Profile {o} {
    set view [expr {[dict exists $o memView] ? [dict get $o memView] : ""}]
    set count [expr {[dict exists $o -count] ? [dict get $o -count] : 0}]
    if {[dict exists $o -data]} {
	set profile [dict get $o -data]
    } elseif {[dict exists $o -db]} {
	if {[dict exists $o -run]} {
	    set profile [::tclcprof::data -db [dict get $o -db] \
		    -run [dict get $o -run]]
	} else {
	    set profile [::tclcprof::data -db [dict get $o -db]]
	}
    } elseif {[llength [info commands ::tclcprof::data]]} {
	if {$view ne "" || $count} {
	    return [::tclcprof::data -view [expr {$view eq "" ? "alloc"
		    : $view}] -count $count]
	}
	return [::tclcprof::data]
    } else {
	return -code error -errorcode {TCLCPROF NODATA} \
		"no profile data: start profiling with tclcprof::start"
    }
    if {$view ne "" || $count} {
	set profile [MemoryView $profile [expr {$view eq "" ? "alloc"
		: $view}] $count]
    } elseif {![catch {dict get $profile meta mode} mode] && $mode eq "memory"
	    && ![dict exists $profile meta unit]} {
	# A memory profile's self and total are the bytes allocated.
	dict set profile meta view alloc
	dict set profile meta unit bytes
    }
    return $profile
}

# MemoryOptions, MemoryCount, MemoryView --
#
#	Memory profiles (-mode memory): -view alloc, live or peak and
#	-count (objects rather than bytes) choose which of a node's figures
#	(alloc_bytes alloc_objects live_bytes live_objects peak_bytes
#	peak_objects, the node's own) become its self and total.
#	MemoryOptions moves a memory view out of -view (into memView),
#	leaving -view auto for the rest of the report. MemoryView rewrites
#	a profile's tree for a view. Errors: TCLCPROF VALUE -view (a
#	profile with no memory figures).

proc ::tclcprof::reportlib::MemoryOptions {o} {
    if {[dict get $o -view] in {alloc live peak}} {
	dict set o memView [dict get $o -view]
	dict set o -view auto
    }
    return $o
}

proc ::tclcprof::reportlib::MemoryCount {v} {
    if {![string is boolean -strict $v]} {
	Fail [list VALUE -count $v] "bad value \"[Escape $v]\" for -count:\
		expected a boolean"
    }
    expr {!!$v}
}

proc ::tclcprof::reportlib::MemoryView {profile view count} {
    if {[catch {dict get $profile meta mode} mode]} {
	set mode ""
    }
    if {$mode eq "sample" && [dict exists $profile memory]} {
	# -mode {sample memory}: the memory tree, as data -view gives it.
	set profile [dict create meta [dict get $profile meta] \
	    tree [dict get $profile memory]]
	dict set profile meta mode memory
    } elseif {$mode ne "memory"} {
	Fail [list VALUE -view $view] "-view $view: the profile has no\
		memory samples (-mode memory)"
    }
    set key [expr {$count ? "${view}_objects" : "${view}_bytes"}]
    dict set profile tree [MemoryNode [dict get $profile tree] $key]
    dict set profile meta view $view
    dict set profile meta unit [expr {$count ? "objects" : "bytes"}]
    return $profile
}

# MemoryNode --
#	The tree with self and total from one memory figure (key): nodes
#	listed breadth first, then rebuilt from the last up, so that a tree
#	of any depth takes no recursion.
proc ::tclcprof::reportlib::MemoryNode {node key} {
    set nodes [list $node]
    set parents {-1}
    for {set i 0} {$i < [llength $nodes]} {incr i} {
	foreach c [dict get [lindex $nodes $i] children] {
	    lappend nodes $c
	    lappend parents $i
	}
    }
    set n [llength $nodes]
    set kids [lrepeat $n {}]
    set totals [lrepeat $n 0]
    for {set i [expr {$n - 1}]} {$i >= 0} {incr i -1} {
	set nd [lindex $nodes $i]
	lset nodes $i {}
	set self [expr {[dict exists $nd $key] ? [dict get $nd $key] : 0}]
	set total [expr {$self + [lindex $totals $i]}]
	dict set nd self $self
	dict set nd total $total
	dict set nd children [lreverse [lindex $kids $i]]
	lset kids $i {}
	set p [lindex $parents $i]
	if {$p < 0} {
	    return $nd
	}
	lset kids $p end+1 $nd
	lset totals $p [expr {[lindex $totals $p] + $total}]
    }
}

# Fail, Enum --
#
#	Raise a TCLCPROF error from the caller of the proc that calls Fail;
#	match an option's value against a table of words (abbreviations
#	allowed) or fail with TCLCPROF VALUE option value.

proc ::tclcprof::reportlib::Fail {code message} {
    return -code error -level 2 -errorcode [list TCLCPROF {*}$code] $message
}

proc ::tclcprof::reportlib::Enum {option value what table} {
    if {[catch {tcl::prefix match -message $what $table $value} r]} {
	Fail [list VALUE $option $value] $r
    }
    return $r
}

# OptionPairs --
#
#	Split "-option value ..." arguments into pairs, each option matched
#	against the list names (unique abbreviations allowed). Shared by
#	report and export.
#
# Results:
#	A flat list of full option names and their values, in the order
#	given. Errors: TCLCPROF OPTION name (unknown or ambiguous),
#	TCLCPROF VALUE option (an option without a value).

proc ::tclcprof::reportlib::OptionPairs {arglist names} {
    set pairs {}
    set n [llength $arglist]
    for {set i 0} {$i < $n} {incr i 2} {
	set arg [lindex $arglist $i]
	if {[catch {tcl::prefix match -message option $names $arg} opt]} {
	    Fail [list OPTION $arg] $opt
	}
	if {$i + 1 >= $n} {
	    Fail [list VALUE $opt] "missing value for option \"$opt\""
	}
	lappend pairs $opt [lindex $arglist [expr {$i + 1}]]
    }
    return $pairs
}

# ParseOptions --
#
#	Check the options of report.
#
# Results:
#	A dict of all options, defaults filled in; -data, -db and -run only
#	if given.
#	Errors: TCLCPROF OPTION name, TCLCPROF VALUE option ?value?.

proc ::tclcprof::reportlib::ParseOptions {arglist} {
    variable optionNames
    variable defaultMin

    set o [dict create -channel stdout -focus {} -format text -hide {} \
	    -limit {} -min {} -sort {} -type tree -view auto]
    set given {}
    foreach {opt v} [OptionPairs $arglist $optionNames] {
	switch -- $opt {
	    -type {
		set v [Enum $opt $v type {callees callers components\
			coverage events flat lines timeline tree}]
	    }
	    -sort {
		set v [Enum $opt $v "sort key" \
			{avg calls max name self total}]
	    }
	    -view {
		set v [Enum $opt $v view {alloc auto exact live peak samples}]
	    }
	    -count {
		set v [MemoryCount $v]
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
	    -run {
		# A run id, a list of them or all (merge.tcl).
		::tclcprof::mergelib::RunSpec $v
	    }
	    -thread {
		CheckThreadValue $v
	    }
	}
	dict set o $opt $v
	dict set given $opt 1
    }
    # -label, -by (labels.tcl); -from, -to (timeline.tcl).
    LabelOptions $o
    TimeOptions $o

    if {[dict get $o -sort] eq ""} {
	dict set o -sort [expr {[dict get $o -type] in {flat coverage}
		? "self" : "total"}]
    }
    dict set o hideGiven [dict exists $given -hide]
    if {[dict get $o -type] in {callers callees}
	    && ![dict exists $given -focus]} {
	Fail [list VALUE -focus] "-type [dict get $o -type] needs -focus:\
		the frames whose [string range [dict get $o -type] 0 end-1]s\
		to show"
    }
    if {[dict get $o -min] eq ""} {
	# The handlers of -type events are few: all of them by default.
	dict set o -min [expr {[dict get $o -type] eq "events" ? 0.0
		: [dict get $defaultMin [dict get $o -format]]}]
    }
    CheckSource $o
    set o [MemoryOptions $o]
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
    variable byteWeights 0
    set type [dict get $o -type]
    # -from and -to (timeline.tcl; the timeline type reads the range).
    if {$type ne "timeline"} {
	set profile [TimeRange $o $profile]
    }
    # -thread, and the frames of other interpreters named (threads.tcl).
    set profile [Threads $o $profile]
    # -label and -by (labels.tcl).
    set profile [Labels $o $profile]
    if {$type eq "timeline"} {
	return [Timeline $o $profile]
    }
    if {$type eq "coverage"} {
	return [Coverage $o $profile]
    }
    if {$type eq "lines"} {
	return [Lines $o $profile]
    }
    if {$type eq "events"} {
	return [Events $o $profile]
    }

    # Which tree: a profile of mode both has the sampled tree (tree) and
    # the exact one (exact); callers and callees default to the exact.
    set view [dict get $o -view]
    set treeKey tree
    if {[catch {dict exists $profile exact} hasExact]} {
	set hasExact 0
    }
    if {$view eq "exact" || ($view eq "auto" && $hasExact
	    && $type in {callers callees})} {
	if {$hasExact} {
	    set treeKey exact
	} elseif {$view eq "exact" && ![ExactProfile $profile]} {
	    Fail [list VALUE -view exact] "-view exact: the profile has\
		    no exact timing (-mode exact or both)"
	}
    }
    # Nothing sampled (a run shorter than a sampling period): the exact
    # tree, as export shows it.
    set fellBack [expr {$view eq "auto" && $hasExact && $treeKey eq "tree"
	    && [Unweighed $profile]}]
    if {$fellBack} {
	set treeKey exact
    }
    set meta [Flatten $profile $treeKey]
    CheckMeta $o $meta $timeWeights
    # The weights of a memory profile's bytes are written as sizes.
    set byteWeights [expr {[dict exists $meta unit]
	    && [dict get $meta unit] eq "bytes"}]
    set whole [lindex $inTotal 0]
    set sort [dict get $o -sort]
    if {!$hasFig && $sort in {calls avg max}} {
	Fail [list VALUE -sort $sort] "-sort $sort: the profile has no call\
		counts (they come with -mode exact or both)"
    }

    set hideOn [expr {[llength [dict get $o -hide]] > 0}]
    if {$hideOn} {
	set patterns [dict get $o -hide]
	set isHidden [lmap name $inName {
	    set h 0
	    foreach p $patterns {
		if {[NameMatch $p $name]} {
		    set h 1
		    break
		}
	    }
	    set h
	}]
	lset isHidden 0 0	;# the root is never hidden
    }
    set focusOn [expr {[dict get $o focusOn] && $type in {tree flat}}]
    Build $hideOn $focusOn [dict get $o -focus]
    set noMatch [expr {$focusOn && ![llength [lindex $oKids 0]]}]

    # Pruning threshold, as "total * 100 < minWeight" to avoid rounding:
    # -min is a percentage of the whole profile, or under -focus of the
    # focused total (the matched frames').
    set minWeight [expr {[dict get $o -min]
	    * ($focusOn ? [lindex $oTotal 0] : $whole)}]

    set format [dict get $o -format]
    switch -- $type {
	tree {
	    set vis [Visible $o $minWeight]
	    if {$format eq "dict"} {
		set root [TreeDict $vis $whole [expr {[dict get $o -limit] ne ""
			|| $minWeight > 0}]]
		if {$noMatch} {
		    dict set root nomatch 1
		}
		return $root
	    }
	    CheckNames $oName
	    set lines [Header $o $meta $whole]
	    if {$noMatch} {
		lappend lines [NoMatch $o]
		return [Output $o $lines]
	    }
	    lappend lines [Columns tree]
	    TreeLines $o $vis $whole
	}
	flat {
	    if {$hasExact && $treeKey eq "tree"} {
		# Mode both: a command's calls and times are those of the
		# exact tree (a sampled node can share its exact node with
		# others, so they cannot be summed from the sampled tree).
		set joined [ExactByName $profile]
		set hasFig 0
	    }
	    set rows [FlatRows $o $minWeight]
	    if {$format eq "dict"} {
		return [FlatDict $rows $whole]
	    }
	    CheckNames $oName
	    set lines [Header $o $meta $whole]
	    if {$noMatch} {
		lappend lines [NoMatch $o]
		return [Output $o $lines]
	    }
	    lappend lines [Columns flat]
	    lappend lines {*}[FlatLines $rows $whole]
	}
	components {
	    set comps [Components $o $minWeight]
	    if {$format eq "dict"} {
		return [lmap c $comps {
		    lassign $c weight frames
		    dict create weight $weight frames [lmap f $frames {
			lassign $f name kind self
			dict create name $name kind $kind self $self
		    }]
		}]
	    }
	    CheckNames $oName
	    set lines [Header $o $meta $whole]
	    lappend lines {*}[ComponentLines $comps $whole $timeWeights]
	}
	callers - callees {
	    set groups [Relatives $o $type]
	    if {$format eq "dict"} {
		return [RelativesDict $groups $whole]
	    }
	    CheckNames $oName
	    set lines [Header $o $meta $whole]
	    if {![llength $groups]} {
		lappend lines [NoMatch $o]
		return [Output $o $lines]
	    }
	    lappend lines {*}[RelativesLines $groups $type $whole]
	}
    }
    return [Output $o $lines]
}
