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
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof {
    namespace export report
}

namespace eval ::tclcprof::reportlib {
    variable optionNames {
	-by -channel -count -data -db -focus -format -hide -label -limit -min
	-run -sort -thread -type -view
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
			coverage events flat lines tree}]
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
    # -label, -by (labels.tcl).
    LabelOptions $o

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
    # -thread, and the frames of other interpreters named (threads.tcl).
    set profile [Threads $o $profile]
    # -label and -by (labels.tcl).
    set profile [Labels $o $profile]
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

# Components --
#
#	-type components: the connected components of the graph whose
#	vertices are the frames (name and kind) of the output tree and whose
#	edges join a caller to its callee, the analysis of TURTLES: parts of
#	a program that never call each other. The root's children (what runs
#	at the top level) are joined through nothing. A component weighs the
#	self weight of its frames; those under -min percent of the whole go,
#	the heaviest first, at most -limit of them.
#
# Results:
#	A list of {weight frames}, frames a list of {name kind self},
#	heaviest first (then by name).

proc ::tclcprof::reportlib::Components {o minWeight} {
    upvar 1 oName oName oKind oKind oSelf oSelf oKids oKids

    # Union-find over frames, with path halving.
    set parent {}
    set ids {}
    set fselfs {}
    set i -1
    foreach name $oName kind $oKind s $oSelf {
	incr i
	if {$i == 0} {
	    lappend ids -1
	    continue
	}
	set key [list $name $kind]
	if {![dict exists $fselfs $key]} {
	    dict set fselfs $key 0
	    dict set index $key [llength $parent]
	    lappend parent [llength $parent]
	}
	dict set fselfs $key [expr {[dict get $fselfs $key] + $s}]
	lappend ids [dict get $index $key]
    }
    set find {{parentVar x} {
	upvar 1 $parentVar parent
	while {[lindex $parent $x] != $x} {
	    set up [lindex $parent [lindex $parent $x]]
	    lset parent $x $up
	    set x $up
	}
	return $x
    }}
    set i -1
    foreach ks $oKids id $ids {
	incr i
	if {$i == 0} {
	    continue
	}
	foreach c $ks {
	    set a [apply $find parent $id]
	    set b [apply $find parent [lindex $ids $c]]
	    if {$a != $b} {
		lset parent $b $a
	    }
	}
    }
    set members {}
    dict for {key s} $fselfs {
	set r [apply $find parent [dict get $index $key]]
	dict lappend members $r [list {*}$key $s]
    }
    set comps {}
    dict for {r frames} $members {
	set weight 0
	foreach f $frames {
	    set weight [expr {$weight + [lindex $f 2]}]
	}
	if {$weight * 100 < $minWeight} {
	    continue
	}
	set frames [lsort -real -decreasing -index 2 [lsort -index 0 $frames]]
	lappend comps [list $weight $frames]
    }
    set comps [lsort -real -decreasing -index 0 [lsort -index {1 0 0} $comps]]
    set limit [dict get $o -limit]
    if {$limit ne "" && [llength $comps] > $limit} {
	set comps [lrange $comps 0 [expr {$limit - 1}]]
    }
    return $comps
}

# ComponentLines --
#	The text of -type components: per component a line with its weight
#	and size, then its frames, heaviest first (ten at most).

proc ::tclcprof::reportlib::ComponentLines {comps whole time} {
    set div [expr {$whole > 0 ? $whole : 1}]
    set lines {}
    set n 0
    foreach c $comps {
	lassign $c weight frames
	set w [expr {$time ? [Dur $weight] : [Wt $weight]}]
	lappend lines [format "component %d: %s (%.1f%%), %d frame%s" \
		[incr n] $w [expr {100.0 * $weight / $div}] [llength $frames] \
		[expr {[llength $frames] == 1 ? "" : "s"}]]
	foreach f [lrange $frames 0 9] {
	    lassign $f name kind self
	    lappend lines [format "  %10s  %s" \
		    [expr {$time ? [Dur $self] : [Wt $self]}] [Frame $name $kind]]
	}
	if {[llength $frames] > 10} {
	    lappend lines "  \u2026 [expr {[llength $frames] - 10}] more"
	}
    }
    if {![llength $comps]} {
	lappend lines "no component above -min"
    }
    return $lines
}

# NoMatch --
#	The line of a text report whose -focus matches no frame.

proc ::tclcprof::reportlib::NoMatch {o} {
    return "no frame matches -focus [Quote [dict get $o -focus]]"
}

# Output --
#
#	Write lines of a text report to -channel, each ending with a
#	newline, in pieces of at most 1024 lines, so that no string is as
#	large as the report; with done, flush the channel: the report is
#	complete. A report writes nothing until it is known to succeed
#	(the profile checked, the rows computed, CheckNames passed): only
#	an error of the channel can stop it halfway.

proc ::tclcprof::reportlib::Output {o lines {done 1}} {
    set chan [dict get $o -channel]
    if {[catch {
	set n [llength $lines]
	for {set i 0} {$i < $n} {incr i 1024} {
	    puts $chan [join [lrange $lines $i [expr {$i + 1023}]] \n]
	}
	if {$done} {
	    flush $chan
	}
    } msg]} {
	Fail [list CHANNEL $chan] $msg
    }
    return
}

# CheckNames --
#
#	Fail before anything is written when a frame name is too long for
#	a line of text (more than maxName bytes): the line would exceed
#	the size of a Tcl value. Errors: TCLCPROF LIMIT text. Bytes of
#	UTF-8 (Tcl 9 has no string bytelength); a name of at most maxName/4
#	characters is short enough without encoding it.

proc ::tclcprof::reportlib::CheckNames {names} {
    variable maxName
    set short [expr {$maxName / 4}]
    foreach name $names {
	if {[string length $name] <= $short} {
	    continue
	}
	set bytes [string length [encoding convertto utf-8 $name]]
	if {$bytes > $maxName} {
	    Fail {LIMIT text} "frame name too long for a text report:\
		    $bytes bytes (at most $maxName)"
	}
    }
}

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

    if {[catch {dict size $profile}]} {
	Fail {DATA FORMAT} "invalid profile: not a dictionary"
    }
    foreach key [list meta $treeKey] {
	if {![dict exists $profile $key]} {
	    Fail [list DATA KEY $key] "invalid profile: missing key \"$key\""
	}
    }
    set meta [dict get $profile meta]
    if {[catch {dict size $meta}]} {
	Fail {DATA FORMAT} "invalid profile: meta is not a dictionary"
    }

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

# Columns, Blank, ExactCells, BothCells --
#
#	The columns of tree and flat reports: sample weights (Under/In or
#	Self/Total with percentages); for exact trees calls, total and self
#	time with percentages, average and longest call; for sampled trees
#	with exact figures (mode both) the weights and then calls and total
#	time.

proc ::tclcprof::reportlib::Columns {type} {
    upvar 1 hasFig hasFig timeWeights timeWeights joined joined
    if {$timeWeights} {
	set title [format "%9s %9s %6s %9s %6s %9s %9s" \
		Calls Total % Self % Avg Max]
    } elseif {$type eq "tree"} {
	set title [format "%8s %7s %8s %7s" Under % In %]
    } else {
	set title [format "%8s %7s %8s %7s" Self % Total %]
    }
    if {!$timeWeights && ($hasFig || [info exists joined])} {
	append title [format " %9s %9s" Calls Time]
    }
    return "$title  Frame"
}

proc ::tclcprof::reportlib::Blank {what} {
    # As wide as the cells of Columns.
    switch -- $what {
	exact {return [string repeat " " 63]}
	both {return [string repeat " " 53]}
	default {return [string repeat " " 33]}
    }
}

proc ::tclcprof::reportlib::ExactCells {fig t s div} {
    if {![llength $fig]} {
	set fig [list 0 $t $s 0 0]
    }
    lassign $fig calls - - - max
    set avg [expr {$calls > 0 ? $t / $calls : ""}]
    format "%9s %9s %5.1f%% %9s %5.1f%% %9s %9s" [Calls $calls] [Dur $t] \
	    [expr {100.0 * $t / $div}] [Dur $s] [expr {100.0 * $s / $div}] \
	    [Dur $avg] [expr {$calls > 0 ? [Dur $max] : ""}]
}

proc ::tclcprof::reportlib::BothCells {fig} {
    if {![llength $fig]} {
	return [format "%9s %9s" "" ""]
    }
    format "%9s %9s" [Calls [lindex $fig 0]] [Dur [lindex $fig 1]]
}

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

# Header --
#
#	The first lines of a text report: what was measured, the label, the
#	exact timing, what makes the profile doubtful (see Doubts), and the
#	view (type, sort, the filters applied and, for a profile of mode
#	both, which tree).

proc ::tclcprof::reportlib::Header {o meta whole} {
    upvar 1 oSelf oSelf oTotal oTotal timeWeights timeWeights \
	    hasExact hasExact treeKey treeKey fellBack fellBack

    set what {}
    if {[dict exists $meta samples]} {
	lappend what "[Num [dict get $meta samples]] samples"
    }
    if {[dict exists $meta weight]} {
	lappend what "(weight [Num [dict get $meta weight]])"
    }
    if {[dict exists $meta calls]} {
	if {[llength $what]} {
	    lset what end "[lindex $what end],"
	}
	lappend what "[Num [dict get $meta calls]] calls"
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
    if {[dict exists $meta view] && [dict exists $meta unit]} {
	# A memory profile: which figures, in what.
	lappend parts "[Escape [dict get $meta view]]\
		[Escape [dict get $meta unit]]"
    }
    if {![llength $parts]} {
	lappend parts "profile of weight [Num $whole]"
    }
    set lines [list "tclcprof: [join $parts {, }]"]

    if {[dict exists $meta label] && [dict get $meta label] ne ""} {
	lappend lines "label: [Escape [dict get $meta label]]"
    }
    lappend lines {*}[ThreadHeader $meta [expr {[info exists timeWeights]
	    && $timeWeights}]]
    if {[dict exists $meta merged] && [string is list [dict get $meta merged]]} {
	# A merge of runs (merge.tcl): how many, from how many files.
	set files {}
	foreach part [dict get $meta merged] {
	    if {![catch {dict get $part file} file]} {
		dict set files $file 1
	    }
	}
	set runs [expr {[dict exists $meta runs]
		? [dict get $meta runs] : [llength [dict get $meta merged]]}]
	set line "merged: [Escape $runs] run[expr {$runs == 1 ? "" : "s"}]"
	if {[dict size $files]} {
	    append line " from [dict size $files]\
		    file[expr {[dict size $files] == 1 ? "" : "s"}]"
	}
	lappend lines $line
    }
    lappend lines {*}[ExactHeader $meta]
    set doubts [Doubts $meta]
    if {[llength $doubts]} {
	lappend lines "warning: [join $doubts {, }]"
    }
    lappend lines {*}[TickNote $meta]
    if {[dict exists $meta capture_note]
	    && [dict get $meta capture_note] ne ""} {
	lappend lines "note: capture: [Escape [dict get $meta capture_note]]"
    }

    set type [dict get $o -type]
    if {$type in {callers callees}} {
	set view "$type of [Quote [dict get $o -focus]], sorted by\
		[dict get $o -sort]"
    } elseif {$type eq "coverage"} {
	set view "coverage of procs"
	if {[dict get $o focusOn]} {
	    append view " matching [Quote [dict get $o -focus]]"
	}
    } else {
	set view "$type sorted by [dict get $o -sort]"
    }
    if {[dict get $o -min] > 0 && $type ne "coverage"} {
	append view ", min [format %g [dict get $o -min]]%"
	if {$type in {callers callees}} {
	    append view " of the frame"
	} elseif {[dict get $o focusOn] && $type in {tree flat}} {
	    append view " of the focus"
	}
    }
    if {[dict get $o -limit] ne "" && $type ne "coverage"} {
	append view ", limit [dict get $o -limit]"
    }
    if {[dict get $o focusOn] && $type in {tree flat}} {
	set t [lindex $oTotal 0]
	set w [expr {[info exists timeWeights] && $timeWeights
		? [Dur $t] : [Num $t]}]
	append view ", focus [Quote [dict get $o -focus]] ($w,\
		[Pct $t $whole 1]%)"
    }
    if {[llength [dict get $o -hide]]} {
	append view ", hide [join [lmap p [dict get $o -hide] {Quote $p}]]"
    }
    if {[info exists hasExact] && $hasExact && $type ni {lines coverage}} {
	# Mode both: which of the two trees.
	if {$treeKey eq "tree"} {
	    append view ", sampled tree"
	} elseif {$fellBack} {
	    append view ", exact tree (nothing sampled)"
	} else {
	    append view ", exact tree"
	}
    }
    if {[info exists timeWeights] && $timeWeights} {
	append view ", times in [dict get $meta clock] time"
    }
    lappend lines "view: $view"
    lappend lines {*}[LabelHeader $meta]

    set s [expr {[info exists oSelf] ? [lindex $oSelf 0] : 0}]
    if {$s > 0} {
	set w [expr {[info exists timeWeights] && $timeWeights
		? [Dur $s] : [Num $s]}]
	lappend lines "without a frame: $w ([Pct $s $whole 1]%)"
    }
    return $lines
}

# ExactHeader --
#
#	Header lines about exact timing: compensation (when there was any:
#	its absence is a warning, see Doubts), unfinished calls, suspended
#	coroutines, a run that stopped by itself, dropped events.

proc ::tclcprof::reportlib::ExactHeader {meta} {
    set lines {}
    if {![dict exists $meta exact]} {
	return $lines
    }
    set ex [dict get $meta exact]
    set notes {}
    if {[Compensated $meta]} {
	lappend notes "compensated ([Dur [dict get $ex compensation call_ns]]\
		per call)"
    }
    if {[dict exists $ex unfinished] && [dict get $ex unfinished] > 0} {
	lappend notes "[dict get $ex unfinished] unfinished (time counted,\
		not the call)"
    }
    if {[dict exists $ex suspended_ns] && [dict get $ex suspended_ns] > 0} {
	lappend notes "coroutines suspended [Dur [dict get $ex suspended_ns]]"
    }
    if {[dict exists $ex events dropped] && [dict get $ex events dropped]} {
	lappend notes "[dict get $ex events dropped] events dropped"
    }
    if {[dict exists $meta stopped_by] && [dict get $meta stopped_by] ne ""} {
	set by [dict get $meta stopped_by]
	lappend notes [dict get [dict merge [list $by "stopped by $by"] {
	    duration "stopped by -duration"
	    exit "stopped at the program's exit"
	    deleted "stopped when its interpreter was deleted"
	}] $by]
    }
    if {[llength $notes]} {
	lappend lines "exact: [join $notes {, }]"
    }
    return $lines
}

# MetaNumber, Compensated, Doubts --
#
#	What makes a profile doubtful, from its meta (a profile may come
#	from anywhere: keys missing or not numbers are no doubt), as
#	phrases for a warning: nothing sampled; a splice rate below 99%
#	(Tcl frames not placed among the native ones as their anchors
#	say); samples dropped (ring full, handler re-entered, process
#	forking; not the profiler's own time) or truncated (stacks deeper
#	than a sample holds, no signal frame, the tree full); a CPU-time
#	timer that fired for less than half the ticks of CPU time the
#	thread used (a busy machine); calls of the
#	exact tree charged to their caller (the tree full); exact times not
#	compensated (-compensate 0, or no cost per call measured).
#	Shared by report and export.

proc ::tclcprof::reportlib::MetaNumber {meta args} {
    if {[catch {dict get $meta {*}$args} v] || ![string is double -strict $v]
	    || [catch {expr {$v >= 0 && $v < Inf}} ok] || !$ok} {
	return ""
    }
    return $v
}

proc ::tclcprof::reportlib::Compensated {meta} {
    set call [MetaNumber $meta exact compensation call_ns]
    expr {![catch {dict get $meta compensate} on] && [string is true -strict $on]
	    && $call ne "" && $call > 0}
}

proc ::tclcprof::reportlib::Doubts {meta} {
    set doubts {}
    set n [MetaNumber $meta samples]
    if {$n ne "" && $n == 0} {
	lappend doubts "nothing sampled"
    }
    set rate [MetaNumber $meta sampling splice_rate]
    if {$rate ne "" && $rate < 0.99} {
	lappend doubts "splice rate [format %.1f [expr {100.0 * $rate}]]%\
		(below 99%)"
    }
    # The kernel checks a thread's CPU-time timer at its clock ticks, and
    # on a busy machine may not fire it while the thread runs: samples
    # then stand for far less CPU time than the thread used.
    set secs [MetaNumber $meta sampling clock_seconds]
    set req [MetaNumber $meta sampling rate_requested]
    set w [MetaNumber $meta sampling weight]
    if {![catch {dict get $meta sampling clock} clk] && $clk eq "cpu"
	    && $secs ne "" && $req ne "" && $w ne ""
	    && $secs * $req >= 20 && $w < 0.5 * $secs * $req} {
	lappend doubts "the CPU-time timer fired for [Num $w] of\
		[Num [expr {round($secs * $req)}]] ticks of CPU time (the\
		kernel's CPU timers lag on a busy machine: -clock wall\
		samples anyway)"
    }
    set n [MetaNumber $meta sampling short_native_stacks]
    if {$n ne "" && $n > 0} {
	lappend doubts "[Num $n] native stacks ended early (C code without\
		unwind tables?): their Tcl frames are placed above the C\
		frames found"
    }
    foreach {what keys} {
	dropped {drops ring_full drops reentered drops forking}
	truncated {truncated native truncated tcl truncated no_signal_frame
	    truncated tree_nodes}
    } {
	set n 0
	foreach {a b} $keys {
	    set v [MetaNumber $meta sampling $a $b]
	    if {$v ne ""} {
		set n [expr {$n + $v}]
	    }
	}
	if {$n > 0} {
	    lappend doubts "[Num $n] samples $what"
	}
    }
    set n [MetaNumber $meta exact truncated_nodes]
    if {$n ne "" && $n > 0} {
	lappend doubts "[Num $n] calls charged to their caller (exact tree\
		full)"
    }
    if {[dict exists $meta compensate] && ![Compensated $meta]} {
	lappend doubts "not compensated"
    }
    return $doubts
}

# TickNote --
#
#	Why a CPU-clock profile has fewer samples than its -rate asked (a
#	line "note: ..." of the header, or nothing): CPU-time timers fire at
#	the kernel's scheduler tick (250 Hz on Debian), so a higher rate
#	brings heavier samples, not more (weighted by the timer overruns:
#	the totals are right). Said when the rate achieved is at most two
#	thirds of the rate asked and the samples are heavier than one tick
#	on average (the overruns show it; a timer that lagged on a busy
#	machine is a warning of Doubts instead).

proc ::tclcprof::reportlib::TickNote {meta} {
    if {[catch {dict get $meta sampling clock} clk] || $clk ne "cpu"} {
	return {}
    }
    set req [MetaNumber $meta sampling rate_requested]
    set got [MetaNumber $meta sampling rate_achieved]
    set n [MetaNumber $meta sampling samples]
    set w [MetaNumber $meta sampling weight]
    if {$req eq "" || $got eq "" || $n eq "" || $w eq "" || $n < 1
	    || $got <= 0 || $got > $req * 2.0 / 3 || $w < 1.5 * $n} {
	return {}
    }
    return [list "note: [Num $got 1] of [Num $req 1] Hz: the cpu clock's\
	    timer fires at the kernel's tick, and each sample weighs the\
	    periods it stands for ([Num [expr {double($w) / $n}] 1] on\
	    average): the totals are right, the resolution is the tick's;\
	    -clock wall samples at [Num $req 1] Hz"]
}

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
	set s 0
	set t 0
	foreach id $ids {
	    set s [expr {$s + [lindex $oSelf $id]}]
	    if {![lindex $rec $id]} {
		set t [expr {$t + [lindex $oTotal $id]}]
	    }
	}
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
	    set rs 0
	    set rt 0
	    set allRec 1
	    foreach id $rids {
		set rs [expr {$rs + [lindex $oSelf $id]}]
		if {![lindex $rec $id]} {
		    set rt [expr {$rt + [lindex $oTotal $id]}]
		    set allRec 0
		}
	    }
	    if {$rt * 100.0 < $min * $t && !$allRec} {
		continue
	    }
	    lappend rows [list $rkey $rs $rt [RelFig $rids $rec] $allRec]
	}
	lappend result [list $key $own [SortRows $o $rows]]
    }
    return $result
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
    set limit [dict get $o -limit]
    if {$limit ne "" && [llength $items] > 4 * $limit} {
	set items [lrange $items 0 [expr {4 * $limit - 1}]]
    }
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

# CheckProfile, CheckRecords --
#
#	Check what -type lines or coverage reads of a profile (the other
#	types check theirs in Flatten): a dictionary with meta and, when it
#	has them, its lines (records with file, line, name and exact
#	figures) or its coverage (commands, procs and lines), where counts
#	are non-negative integers. Errors: TCLCPROF DATA FORMAT|KEY
#	key|WEIGHT key.

proc ::tclcprof::reportlib::CheckProfile {o profile key} {
    if {[catch {dict size $profile}]} {
	Fail {DATA FORMAT} "invalid profile: not a dictionary"
    }
    if {![dict exists $profile meta]} {
	Fail {DATA KEY meta} "invalid profile: missing key \"meta\""
    }
    if {[catch {dict size [dict get $profile meta]}]} {
	Fail {DATA FORMAT} "invalid profile: meta is not a dictionary"
    }
    if {![dict exists $profile $key]} {
	return
    }
    if {$key eq "lines"} {
	foreach tree {exact tree} {
	    if {[dict exists $profile $tree total_ns]} {
		set t [dict get $profile $tree total_ns]
		if {![string is double -strict $t]
			|| [catch {expr {$t >= 0 && $t < Inf}} ok] || !$ok} {
		    Fail {DATA WEIGHT total_ns} "invalid profile: node\
			    $tree: total_ns is \"[Escape $t]\", expected a\
			    non-negative number"
		}
		break
	    }
	}
	CheckRecords lines [dict get $profile lines] \
		{file line name calls total_ns self_ns max_ns} \
		{line calls total_ns self_ns max_ns}
	CheckMeta $o [dict get $profile meta] 1
	return
    }
    set cov [dict get $profile coverage]
    if {[catch {dict size $cov}]} {
	Fail {DATA FORMAT} "invalid profile: coverage is not a dictionary"
    }
    foreach k {commands procs lines} {
	if {![dict exists $cov $k]} {
	    Fail [list DATA KEY $k] "invalid profile: coverage: missing key\
		    \"$k\""
	}
    }
    CheckRecords "coverage commands" [dict get $cov commands] \
	    {name tclkind calls} {calls}
    if {![string is list [dict get $cov procs]]} {
	Fail {DATA FORMAT} "invalid profile: coverage procs is not a list"
    }
    CheckRecords "coverage lines" [dict get $cov lines] {file line calls} \
	    {line calls}
    CheckMeta $o [dict get $profile meta] 0
}

# CheckMeta --
#
#	Check what the header of a text report reads of a profile's meta as
#	numbers (rates, exact's figures) and booleans (compensate), and that
#	the clock of times is named (timed: the weights are times). Nothing
#	for -format dict, which does not read meta. Errors: TCLCPROF DATA
#	FORMAT|KEY clock.

proc ::tclcprof::reportlib::CheckMeta {o meta timed} {
    if {[dict get $o -format] ne "text"} {
	return
    }
    if {$timed && ![dict exists $meta clock]} {
	Fail {DATA KEY clock} "invalid profile: meta: missing key \"clock\"\
		(the clock of the times)"
    }
    foreach key {rate_achieved rate_requested} {
	if {![dict exists $meta $key]} {
	    continue
	}
	set v [dict get $meta $key]
	if {![string is double -strict $v]
		|| [catch {expr {$v >= 0 && $v < Inf}} ok] || !$ok} {
	    Fail {DATA FORMAT} "invalid profile: meta: $key is\
		    \"[Escape $v]\", expected a non-negative number"
	}
    }
    if {[dict exists $meta compensate]
	    && ![string is boolean -strict [dict get $meta compensate]]} {
	Fail {DATA FORMAT} "invalid profile: meta: compensate is\
		\"[Escape [dict get $meta compensate]]\", expected a boolean"
    }
    if {![dict exists $meta exact]} {
	return
    }
    set ex [dict get $meta exact]
    if {[catch {dict size $ex}]} {
	Fail {DATA FORMAT} "invalid profile: meta: exact is not a dictionary"
    }
    foreach path {{compensation call_ns} unfinished suspended_ns
	    {events dropped}} {
	if {![dict exists $ex {*}$path]} {
	    continue
	}
	set v [dict get $ex {*}$path]
	if {![string is double -strict $v]
		|| [catch {expr {$v >= 0 && $v < Inf}} ok] || !$ok} {
	    Fail {DATA FORMAT} "invalid profile: meta: exact $path is\
		    \"[Escape $v]\", expected a non-negative number"
	}
    }
}

proc ::tclcprof::reportlib::CheckRecords {what records keys counts} {
    if {![string is list $records]} {
	Fail {DATA FORMAT} "invalid profile: $what is not a list"
    }
    set i 0
    foreach r $records {
	if {[catch {dict size $r}]} {
	    Fail {DATA FORMAT} "invalid profile: $what record $i: not a\
		    dictionary"
	}
	foreach k $keys {
	    if {![dict exists $r $k]} {
		Fail [list DATA KEY $k] "invalid profile: $what record $i:\
			missing key \"$k\""
	    }
	}
	foreach k $counts {
	    set v [dict get $r $k]
	    if {![string is wideinteger -strict $v] || $v < 0} {
		Fail {DATA FORMAT} "invalid profile: $what record $i: $k is\
			\"[Escape $v]\", expected a non-negative integer"
	    }
	}
	incr i
    }
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
    set focus [dict get $o -focus]
    set focusOn [dict get $o focusOn]
    set hide [dict get $o -hide]
    set sort [dict get $o -sort]
    set minWeight [expr {[dict get $o -min] * $whole}]
    set items {}
    set kept {}
    set matched 0
    foreach r $rows {
	set name [dict get $r name]
	if {$focusOn && ![FocusMatch $focus $name tcl]} {
	    continue
	}
	set matched 1
	set skip [Hidden $hide $name]
	set t [dict get $r total_ns]
	if {$skip || $t * 100.0 < $minWeight} {
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
    set limit [dict get $o -limit]
    set cut 0
    if {$limit ne "" && [llength $items] > 4 * $limit} {
	set cut [expr {[llength $items] / 4 - $limit}]
	set items [lrange $items 0 [expr {4 * $limit - 1}]]
    }
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
	    1, or samples in C functions with debug information (-mode\
	    sample or both)"]
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
	if {$focusOn && ![FocusMatch $focus $name $kind]} {
	    continue
	}
	set matched 1
	set skip [Hidden $hide $name]
	if {$skip || $t * 100.0 < $minWeight} {
	    continue
	}
	set s [dict get $rowSelf $key]
	lappend items $key [format %s:%09d $file $line] $name \
		[expr {$sort eq "self" ? $s : $t}]
    }
    set items [SortItems $items [expr {$sort eq "name"}]]
    set limit [dict get $o -limit]
    set cut 0
    if {$limit ne "" && [llength $items] > 4 * $limit} {
	set cut [expr {[llength $items] / 4 - $limit}]
	set items [lrange $items 0 [expr {4 * $limit - 1}]]
    }
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

# Coverage --
#
#	-type coverage: which procedures ran (with their calls) and which,
#	though defined, never did; which commands ran; and which lines of
#	which files ran (with -lines 1). -focus restricts the procedures to
#	a pattern; -hide leaves procedures out (by default those of Tcl's
#	own library and of tcltest).

proc ::tclcprof::reportlib::Coverage {o profile} {
    variable coverageHide
    CheckProfile $o $profile coverage
    if {[catch {dict get $profile coverage} cov]} {
	Fail {NODATA coverage} "no coverage data: profile with -mode\
		coverage, exact or both"
    }
    set meta [dict get $profile meta]
    set hide [expr {[dict get $o hideGiven] ? [dict get $o -hide]
	    : $coverageHide}]
    set focusOn [dict get $o focusOn]
    set focus [dict get $o -focus]

    set keep [list apply {{hide focusOn focus name} {
	if {$focusOn && ![::tclcprof::reportlib::FocusMatch $focus $name \
		tcl]} {
	    return 0
	}
	expr {![::tclcprof::reportlib::Hidden $hide $name]}
    }} $hide $focusOn $focus]

    set executed {}
    set commands {}
    foreach c [dict get $cov commands] {
	set name [dict get $c name]
	lappend commands $name [dict get $c calls]
	if {[dict get $c tclkind] eq "proc" && [{*}$keep $name]} {
	    dict set executed $name [dict get $c calls]
	}
    }
    set defined {}
    foreach name [dict get $cov procs] {
	if {[{*}$keep $name]} {
	    dict set defined $name 1
	}
    }
    set never [lsort [lmap name [dict keys $defined] {
	if {[dict exists $executed $name]} continue
	set name
    }]]
    set nDefined [dict size [dict merge $defined $executed]]
    set execList [lsort -stride 2 -index 0 $executed]
    if {[dict get $o -sort] eq "calls"} {
	set execList [lsort -stride 2 -index 1 -integer -decreasing $execList]
    }
    set files {}
    foreach l [dict get $cov lines] {
	dict lappend files [dict get $l file] [dict get $l line] \
		[dict get $l calls]
    }
    set fileDict {}
    foreach f [lsort [dict keys $files]] {
	dict set fileDict $f [lsort -stride 2 -index 0 -integer \
		[dict get $files $f]]
    }

    if {[dict get $o -format] eq "dict"} {
	return [dict create procs_defined $nDefined \
		procs_executed [dict size $executed] executed $execList \
		never $never commands [lsort -stride 2 -index 0 $commands] \
		lines $fileDict]
    }
    set whole 0
    set lines [Header $o $meta $whole]
    set pct [expr {$nDefined > 0
	    ? [format %.1f [expr {100.0 * [dict size $executed] / $nDefined}]]
	    : "0.0"}]
    lappend lines "procs: [dict size $executed] of $nDefined executed\
	    ($pct%); [expr {[llength $commands] / 2}] distinct commands ran"
    if {[dict size $executed]} {
	lappend lines "executed:" [format "%9s  %s" Calls Proc]
	foreach {name calls} $execList {
	    lappend lines [format "%9s  %s" $calls [Escape $name]]
	}
    }
    if {[llength $never]} {
	lappend lines "never executed:"
	foreach name $never {
	    lappend lines "  [Escape $name]"
	}
    }
    if {[dict size $fileDict]} {
	set n 0
	dict for {f ls} $fileDict {
	    incr n [expr {[llength $ls] / 2}]
	}
	lappend lines "lines with commands that ran: $n in [dict size $fileDict]\
		file[expr {[dict size $fileDict] == 1 ? "" : "s"}]"
	dict for {f ls} $fileDict {
	    lappend lines "  [Escape [ShortPath $f]]: [Ranges [dict keys $ls]]"
	}
    }
    return [Output $o $lines]
}

# Ranges --
#	Sorted line numbers as "3 5 7-9".

proc ::tclcprof::reportlib::Ranges {numbers} {
    set out {}
    set start ""
    foreach n $numbers {
	if {$start eq ""} {
	    set start $n
	    set end $n
	} elseif {$n == $end + 1} {
	    set end $n
	} else {
	    lappend out [expr {$start == $end ? $start : "$start-$end"}]
	    set start $n
	    set end $n
	}
    }
    if {$start ne ""} {
	lappend out [expr {$start == $end ? $start : "$start-$end"}]
    }
    return [join $out]
}

# Helpers for text.

# Dur --
#	A time in ns for text, in ns, \u00b5s, ms or s; "" stays "".

proc ::tclcprof::reportlib::Dur {ns} {
    if {$ns eq ""} {
	return ""
    }
    if {$ns < 1000} {
	return "[expr {round($ns)}]ns"
    } elseif {$ns < 1000000} {
	return [format %.1f\u00b5s [expr {$ns / 1e3}]]
    } elseif {$ns < 1000000000} {
	return [format %.1fms [expr {$ns / 1e6}]]
    }
    return [format %.2fs [expr {$ns / 1e9}]]
}

# Calls --
#	A call count; "calls/primitive" when a recursive frame's outermost
#	calls are fewer.

proc ::tclcprof::reportlib::Calls {calls {prim ""}} {
    if {$prim ne "" && $prim != $calls} {
	return $calls/$prim
    }
    return $calls
}

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

# Wt, Size --
#	A weight for text: as Num, or as a size (Size) when the report's
#	weights are bytes (byteWeights, a memory profile's bytes); a number
#	of bytes in B, KiB, MiB, GiB or TiB, in at most 7 characters.

proc ::tclcprof::reportlib::Wt {v} {
    variable byteWeights
    if {$byteWeights} {
	return [Size $v]
    }
    return [Num $v]
}

proc ::tclcprof::reportlib::Size {v} {
    if {![string is double -strict $v]
	    || [catch {expr {abs($v) < Inf}} ok] || !$ok} {
	return [Num $v]
    }
    if {abs($v) < 1024} {
	return "[Num [expr {round($v)}]]B"
    }
    foreach unit {KiB MiB GiB TiB} {
	set v [expr {$v / 1024.0}]
	if {abs($v) < 1023.5 || $unit eq "TiB"} {
	    break
	}
    }
    return [format [expr {abs($v) < 9.95 ? "%.1f%s" : "%.0f%s"}] $v $unit]
}

# Pct --
#	w as a percentage of whole, with the given number of decimals.

proc ::tclcprof::reportlib::Pct {w whole decimals} {
    if {$whole > 0} {
	return [format %.${decimals}f [expr {100.0 * $w / $whole}]]
    }
    return [format %.${decimals}f 0]
}
