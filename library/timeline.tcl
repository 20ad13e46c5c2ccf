# timeline.tcl --
#
#	Timelines (see TIMELINES in the man page): a sampled or memory
#	profile keeps, besides its tree, the key "timeline" (a memory tree
#	of mode {sample memory}: "memory_timeline"), a dict of width_ns (the
#	width of a bucket of time), buckets (how many), weights (per bucket,
#	the weight of the samples taken in it: samples, or bytes allocated)
#	and, for memory trees, live and peak (bytes per bucket); and each
#	node that samples ended at has "times", a list {bucket weight ...}
#	of its self weight per bucket. Bucket b covers the times from
#	b * width_ns to (b + 1) * width_ns after the run started.
#
#	Here: -from and -to of reports and exports (the profile cut to the
#	buckets of a range of time: each node's self is what its times say
#	there), report -type timeline, and the merge of timelines (runs
#	aligned at their start, the widest width taken).
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::reportlib {
    # The figures of a node that a time range cannot cut (exact timing,
    # source lines): left out of a cut profile.
    variable uncutKeys {calls total_ns self_ns min_ns max_ns suspended_ns
	self_lines caller_lines}
}

# TimeOptions --
#
#	-from and -to (seconds since the run started) as a list {from to},
#	{} {} when neither is given (to "" when only -from is). Errors:
#	TCLCPROF VALUE -from|-to value.

proc ::tclcprof::reportlib::TimeOptions {o} {
    set range {}
    foreach opt {-from -to} {
	set v ""
	if {[dict exists $o $opt]} {
	    set v [dict get $o $opt]
	    if {![string is double -strict $v] || [catch {expr {$v >= 0
		    && $v < 1e15}} ok] || !$ok} {
		Fail [list VALUE $opt $v] "bad value \"[Escape $v]\" for\
			$opt: expected seconds since the run started (a\
			number, 0 or more)"
	    }
	    set v [expr {double($v)}]
	}
	lappend range $v
    }
    lassign $range from to
    if {$to ne "" && $to <= ($from eq "" ? 0 : $from)} {
	Fail [list VALUE -to [dict get $o -to]] "bad value\
		\"[Escape [dict get $o -to]]\" for -to: must be after -from\
		([expr {$from eq "" ? 0 : [dict get $o -from]}])"
    }
    return $range
}

# TimelineKey --
#	The key of a tree's timeline in a profile: timeline for tree,
#	memory_timeline for memory, "" for others.

proc ::tclcprof::reportlib::TimelineKey {treeKey} {
    switch -- $treeKey {
	tree {return timeline}
	memory {return memory_timeline}
    }
    return ""
}

# BucketRange --
#	The buckets that overlap [from, to) (seconds; to "" for the end)
#	at width ns: {first last}, last -1 for no end.

proc ::tclcprof::reportlib::BucketRange {width from to} {
    set first [expr {$from eq "" ? 0 : int(floor($from * 1e9 / $width))}]
    set last [expr {$to eq "" ? -1
	    : int(ceil($to * 1e9 / $width)) - 1}]
    list $first $last
}

# TimeRange --
#
#	A profile as reports and exports read it after -from and -to: its
#	sampled tree (and memory tree) cut to the buckets of the range,
#	nodes that keep no weight left out, what cannot be cut (exact
#	figures and tree, source lines) taken out, and the range in the
#	meta (time_range). Without the options, the profile as it is.
#	Errors: TCLCPROF TIMELINE when the profile has no timeline, or a
#	memory view other than alloc.

proc ::tclcprof::reportlib::TimeRange {o profile} {
    lassign [TimeOptions $o] from to
    if {$from eq "" && $to eq ""} {
	return $profile
    }
    if {[catch {dict exists $profile timeline} has] || !$has} {
	Fail {TIMELINE} "-from and -to need a profile with a timeline\
		(a sampled or memory profile of this version)"
    }
    if {[dict exists $profile meta view]
	    && [dict get $profile meta view] ni {alloc ""}} {
	Fail {TIMELINE} "-from and -to cut the bytes allocated: -view\
		[dict get $profile meta view] cannot be cut by time"
    }
    if {[dict exists $profile meta unit]
	    && [dict get $profile meta unit] eq "objects"} {
	Fail {TIMELINE} "-from and -to cut the bytes allocated: -count 1\
		cannot be cut by time"
    }
    foreach treeKey {tree memory} {
	set tlKey [TimelineKey $treeKey]
	if {![dict exists $profile $treeKey]} {
	    continue
	}
	if {![dict exists $profile $tlKey width_ns]} {
	    dict unset profile $treeKey
	    continue
	}
	set width [dict get $profile $tlKey width_ns]
	lassign [BucketRange $width $from $to] first last
	dict set profile $treeKey [CutTree [dict get $profile $treeKey] \
		$first $last]
	dict set profile $tlKey [CutTimeline [dict get $profile $tlKey] \
		$first $last]
    }
    dict unset profile exact
    dict unset profile lines
    dict set profile meta time_range [list $from $to]
    return $profile
}

# CutTimeline --
#	A timeline with the weights of buckets out of [first, last] zero.

proc ::tclcprof::reportlib::CutTimeline {tl first last} {
    set i 0
    dict set tl weights [lmap w [dict get $tl weights] {
	set in [expr {$i >= $first && ($last < 0 || $i <= $last)}]
	incr i
	expr {$in ? $w : 0}
    }]
    return $tl
}

# CutTree --
#
#	A tree whose nodes' self is the sum of their times in buckets first
#	to last (-1: to the end), totals summed again, nodes with no weight
#	left out. A memory tree's alloc_bytes is its self, its
#	alloc_objects in proportion. Without recursion (trees are as deep
#	as the program's recursion): the nodes are laid out first.

proc ::tclcprof::reportlib::CutTree {root first last} {
    variable uncutKeys
    # Depth first, each node after its parent.
    set nodes [list $root]
    set parents [list -1]
    for {set i 0} {$i < [llength $nodes]} {incr i} {
	foreach c [dict get [lindex $nodes $i] children] {
	    lappend nodes $c
	    lappend parents $i
	}
    }
    set n [llength $nodes]
    set self [lrepeat $n 0]
    set total [lrepeat $n 0]
    set kids [lrepeat $n {}]
    for {set i 0} {$i < $n} {incr i} {
	set node [lindex $nodes $i]
	set s 0
	if {[dict exists $node times]} {
	    set kept {}
	    foreach {b w} [dict get $node times] {
		if {$b >= $first && ($last < 0 || $b <= $last)} {
		    incr s $w
		    lappend kept $b $w
		}
	    }
	    lset nodes $i [dict set node times $kept]
	}
	lset self $i $s
	lset total $i $s
    }
    # Up from the leaves: totals, and the nodes that keep weight.
    for {set i [expr {$n - 1}]} {$i >= 0} {incr i -1} {
	set node [lindex $nodes $i]
	set t [lindex $total $i]
	set old [dict get $node self]
	dict set node self [lindex $self $i]
	dict set node total $t
	if {[dict exists $node alloc_bytes]} {
	    set ab [dict get $node alloc_bytes]
	    if {[dict exists $node alloc_objects] && $ab > 0} {
		dict set node alloc_objects [expr {wide(round(
			[dict get $node alloc_objects] * double([lindex $self \
			$i]) / $ab))}]
	    }
	    dict set node alloc_bytes [lindex $self $i]
	}
	dict set node children [lreverse [lindex $kids $i]]
	if {![dict exists $node times] || ![llength [dict get $node times]]} {
	    dict unset node times
	}
	set node [dict remove $node {*}$uncutKeys]
	set p [lindex $parents $i]
	if {$p < 0} {
	    return $node
	}
	lset total $p [expr {[lindex $total $p] + $t}]
	if {$t > 0} {
	    set k [lindex $kids $p]
	    lset kids $p {}
	    lappend k $node
	    lset kids $p $k
	}
    }
}

# NodeTimes --
#	The weight per bucket of a tree, from its nodes' times: a dict
#	bucket -> weight, and per bucket the frame with the most self
#	weight in it (dict bucket -> {name weight}).

proc ::tclcprof::reportlib::NodeTimes {root} {
    set sums {}
    set top {}
    set stack [list $root]
    while {[llength $stack]} {
	set node [lindex $stack end]
	set stack [lreplace $stack end end]
	if {[dict exists $node times]} {
	    set name [dict get $node name]
	    foreach {b w} [dict get $node times] {
		dict incr sums $b $w
		dict incr per($b) $name $w
	    }
	}
	lappend stack {*}[dict get $node children]
    }
    dict for {b -} $sums {
	set best {}
	set bw -1
	dict for {name w} $per($b) {
	    if {$w > $bw} {
		set best $name
		set bw $w
	    }
	}
	dict set top $b [list $best $bw]
    }
    list $sums $top
}

# Timeline --
#
#	report -type timeline: one row per group of buckets (of -from to
#	-to; a power of 2 of them, so that a row of a sampled profile
#	stands for 10 sampling periods at least, and there are 64 rows at
#	most): its
#	start and end (seconds since the run started), the weight of the
#	samples taken in it (summed from the nodes' times, so that -thread
#	and -label apply), their share of the time the bucket stands for
#	(sampled profiles: weight / (rate * width), the CPU share of a run
#	on the CPU clock), the frame with the most self weight; memory
#	profiles: bytes allocated, live and peak. Errors: TCLCPROF TIMELINE
#	(no timeline).

proc ::tclcprof::reportlib::Timeline {o profile} {
    if {[catch {dict exists $profile timeline} has] || !$has} {
	Fail {TIMELINE} "the profile has no timeline (a sampled or memory\
		profile of this version has one)"
    }
    set tl [dict get $profile timeline]
    set meta [dict get $profile meta]
    set width [dict get $tl width_ns]
    set n [dict get $tl buckets]
    set memory [dict exists $tl live]
    lassign [NodeTimes [dict get $profile tree]] sums top
    lassign [TimeOptions $o] from to
    lassign [BucketRange $width $from $to] first last
    if {$last < 0 || $last >= $n} {
	set last [expr {$n - 1}]
    }
    set rate [expr {[dict exists $meta rate_requested]
	    ? [dict get $meta rate_requested] : ""}]
    # A row is a group of g buckets, g a power of 2 (from bucket 0), so
    # that a row of a sampled profile stands for 10 sampling periods at
    # least: a share of fewer samples says more of the sampling than of
    # the program.
    # And at most 64 rows.
    set g 1
    if {!$memory && [string is double -strict $rate] && $rate > 0} {
	while {$rate * $g * $width / 1e9 < 10 && $g < $n} {
	    set g [expr {$g * 2}]
	}
    }
    while {($last - $first + $g) / $g > 64} {
	set g [expr {$g * 2}]
    }
    set rows {}
    for {set r [expr {$first / $g}]} {$r <= $last / $g} {incr r} {
	set w 0
	set live 0
	set peak 0
	set best {}
	for {set b [expr {max($r * $g, $first)}]} {$b < ($r + 1) * $g
		&& $b <= $last} {incr b} {
	    if {[dict exists $sums $b]} {
		incr w [dict get $sums $b]
	    }
	    if {[dict exists $top $b]} {
		lassign [dict get $top $b] name tw
		dict incr best $name $tw
	    }
	    if {$memory} {
		set live [lindex [dict get $tl live] $b]
		set peak [expr {max($peak, [lindex [dict get $tl peak] $b])}]
	    }
	}
	set start [expr {max($r * $g, $first) * $width / 1e9}]
	set end [expr {min(($r + 1) * $g, $last + 1) * $width / 1e9}]
	set row [dict create start $start end $end weight $w]
	if {!$memory && [string is double -strict $rate] && $rate > 0} {
	    dict set row share [expr {$w / ($rate * ($end - $start))}]
	}
	if {$memory} {
	    dict set row live $live
	    dict set row peak $peak
	}
	if {[dict size $best]} {
	    dict set row top [lindex [lsort -stride 2 -index 1 -integer \
		    -decreasing $best] 0]
	}
	lappend rows $row
    }
    if {[dict get $o -format] eq "dict"} {
	return [dict create width_ns $width buckets $n row_ns \
		[expr {$g * $width}] rows $rows]
    }
    set clock [expr {[dict exists $meta clock] ? [dict get $meta clock] : ""}]
    set lines [list [format "Timeline: %d rows of %s%s" [llength $rows] \
	    [TimeSeconds [expr {$g * $width / 1e9}]] [expr {$memory
	    ? ", bytes allocated, live and peak" : [expr {$clock ne ""
	    ? ", samples on the $clock clock" : ""}]}]]]
    if {$memory} {
	lappend lines [format "%10s  %10s  %10s  %10s  %s" Time Alloc Live \
		Peak Top]
    } else {
	lappend lines [format "%10s  %8s  %6s  %-20s  %s" Time Samples \
		Share "" Top]
    }
    foreach row $rows {
	set t [TimeSeconds [dict get $row start]]
	set name [expr {[dict exists $row top] ? [Escape [dict get $row top]]
		: ""}]
	if {$memory} {
	    lappend lines [format "%10s  %10s  %10s  %10s  %s" $t \
		    [Size [dict get $row weight]] [Size [dict get $row live]] \
		    [Size [dict get $row peak]] $name]
	} else {
	    set share ""
	    set bar ""
	    if {[dict exists $row share]} {
		set s [dict get $row share]
		set share [format %.0f%% [expr {100 * $s}]]
		set bar [string repeat # [expr {min(20,
			int(round(20 * $s)))}]]
	    }
	    lappend lines [format "%10s  %8s  %6s  %-20s  %s" $t \
		    [dict get $row weight] $share $bar $name]
	}
    }
    return [Output $o $lines]
}

# TimeSeconds --
#	A time in seconds as text (3 decimals). (Bytes are written by
#	reporttext.tcl's Size.)

proc ::tclcprof::reportlib::TimeSeconds {s} {
    format %.3fs $s
}

namespace eval ::tclcprof::mergelib {}

# AddTimes, TimesEnd --
#
#	The merge of timelines (merge.tcl's Add and End): runs aligned at
#	their start, each run's buckets put at the widest width of the runs
#	(widths are 10 ms times a power of 2: a bucket of a narrower run
#	falls in one bucket of the wider), weights, live and peak bytes
#	summed bucket by bucket (as the merge sums the runs' peaks), each
#	node's times summed. A tree with no timeline in the profile (the
#	trees of one profile summed, SumTrees) keeps its nodes' buckets as
#	they are. M($T,times) is a dict merged node -> dict bucket ->
#	weight, M($T,tl) the merged timeline, M($T,width) its width.

proc ::tclcprof::mergelib::AddTimes {profile T to nodes} {
    upvar 1 M M
    set tlKey [::tclcprof::reportlib::TimelineKey $T]
    if {$tlKey eq "" && $T ne "tree"} {
	return
    }
    # Mode memory: its memory tree is "tree", its timeline "timeline".
    set tl {}
    if {$tlKey ne "" && [dict exists $profile $tlKey width_ns]} {
	set tl [dict get $profile $tlKey]
    }
    if {![info exists M($T,times)]} {
	set M($T,times) {}
	set M($T,width) 0
	set M($T,tl) {}
    }
    set w [expr {[dict size $tl] ? [dict get $tl width_ns] : 0}]
    # The wider width of the two: the merge's buckets regrouped, or this
    # run's.
    set factor 1
    if {$w > 0 && $M($T,width) > 0 && $w > $M($T,width)} {
	set f [expr {$w / $M($T,width)}]
	set regrouped {}
	dict for {m bw} $M($T,times) {
	    set d {}
	    dict for {b x} $bw {
		dict incr d [expr {$b / $f}] $x
	    }
	    dict set regrouped $m $d
	}
	set M($T,times) $regrouped
	set M($T,tl) [Regroup $M($T,tl) $f]
	set M($T,width) $w
    } elseif {$w > 0 && $M($T,width) > $w} {
	set factor [expr {$M($T,width) / $w}]
	set tl [Regroup $tl $factor]
    } elseif {$w > 0} {
	set M($T,width) $w
    }
    set i 0
    foreach node $nodes {
	if {[dict exists $node times]} {
	    set m [lindex $to $i]
	    set d [expr {[dict exists $M($T,times) $m]
		    ? [dict get $M($T,times) $m] : {}}]
	    foreach {b x} [dict get $node times] {
		dict incr d [expr {$b / $factor}] $x
	    }
	    dict set M($T,times) $m $d
	}
	incr i
    }
    if {[dict size $tl]} {
	set M($T,tl) [SumTimelines $M($T,tl) $tl]
    }
    return
}

# Regroup --
#	A timeline at f times its width: weights summed, live the last of
#	each group, peak the greatest.

proc ::tclcprof::mergelib::Regroup {tl f} {
    if {![dict size $tl] || $f == 1} {
	return $tl
    }
    set out [dict create width_ns [expr {[dict get $tl width_ns] * $f}] \
	    buckets 0]
    foreach key {weights live peak} {
	if {![dict exists $tl $key]} {
	    continue
	}
	set list {}
	set i 0
	foreach v [dict get $tl $key] {
	    set g [expr {$i / $f}]
	    if {$g == [llength $list]} {
		lappend list $v
	    } else {
		switch -- $key {
		    weights {lset list $g [expr {[lindex $list $g] + $v}]}
		    live {lset list $g $v}
		    peak {lset list $g [expr {max([lindex $list $g], $v)}]}
		}
	    }
	    incr i
	}
	dict set out $key $list
    }
    dict set out buckets [llength [dict get $out weights]]
    return $out
}

# SumTimelines --
#	Two timelines of one width summed bucket by bucket (a bucket one
#	lacks counts as 0; live and peak: a run that ended holds nothing).

proc ::tclcprof::mergelib::SumTimelines {a b} {
    if {![dict size $a]} {
	return $b
    }
    set out [dict create width_ns [dict get $b width_ns] buckets 0]
    foreach key {weights live peak} {
	if {![dict exists $a $key] && ![dict exists $b $key]} {
	    continue
	}
	set la [expr {[dict exists $a $key] ? [dict get $a $key] : {}}]
	set lb [expr {[dict exists $b $key] ? [dict get $b $key] : {}}]
	set n [expr {max([llength $la], [llength $lb])}]
	set sum {}
	for {set i 0} {$i < $n} {incr i} {
	    set x [lindex $la $i]
	    set y [lindex $lb $i]
	    lappend sum [expr {($x eq "" ? 0 : $x) + ($y eq "" ? 0 : $y)}]
	}
	dict set out $key $sum
    }
    dict set out buckets [llength [dict get $out weights]]
    return $out
}

# NodeTimesOf, TimesEnd --
#	A merged node's times as a list {bucket weight ...} in bucket
#	order ("" for none); the merged profile with its timelines.

proc ::tclcprof::mergelib::NodeTimesOf {T m} {
    upvar 1 M M
    if {![info exists M($T,times)] || ![dict exists $M($T,times) $m]} {
	return ""
    }
    set out {}
    foreach b [lsort -integer [dict keys [dict get $M($T,times) $m]]] {
	lappend out $b [dict get $M($T,times) $m $b]
    }
    return $out
}

proc ::tclcprof::mergelib::TimesEnd {profile} {
    upvar 1 M M
    # Each timeline right after its tree, as tclcprof::data has them.
    set out {}
    dict for {key value} $profile {
	dict set out $key $value
	set tlKey [::tclcprof::reportlib::TimelineKey $key]
	if {$tlKey ne "" && [info exists M($key,tl)]
		&& [dict size $M($key,tl)]} {
	    dict set out $tlKey $M($key,tl)
	}
    }
    return $out
}

# TimeHeader --
#	The line of a text report's header that says the range of time a
#	profile was cut to (-from, -to), or none.

proc ::tclcprof::reportlib::TimeHeader {meta} {
    if {![dict exists $meta time_range]} {
	return {}
    }
    lassign [dict get $meta time_range] from to
    list "time: [expr {$from eq "" ? "start" : [TimeSeconds $from]}] to\
	    [expr {$to eq "" ? "end" : [TimeSeconds $to]}] of the run"
}
