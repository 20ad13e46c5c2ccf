# export.tcl --
#
#	tclcprof::export: a profile value in the file formats of other
#	tools: folded stacks (flamegraph.pl, inferno, speedscope), speedscope
#	JSON, Chrome trace events (chrome://tracing, Perfetto), callgrind
#	(KCachegrind, callgrind_annotate), pprof (go tool pprof) and a
#	self-contained interactive HTML flame graph (flamegraph.tcl).
#
#	The profile is read and checked as report reads it
#	(reportlib::Flatten): the tree laid out breadth first in lists
#	indexed by node id, each node's children contiguous. Every format
#	works from those lists in a few linear passes, without recursion,
#	so that profiles of a million nodes export in seconds. Distinct
#	frames (name and kind) are numbered once; names are escaped once per
#	frame, not once per node.
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof {
    namespace export export
}

namespace eval ::tclcprof::exportlib {
    # Fail, Enum, OptionPairs, Flatten, ExactProfile, Unweighed, Doubts,
    # Escape, Quote, SourceLines, NodeLines.
    namespace path ::tclcprof::reportlib

    variable optionNames {-base -basedb -baserun -by -count -data -db -file
	-format -label -min -normalize -run -thread -view}
    variable formats {callgrind chrome dot folded html pprof speedscope}

    # Which tree of a profile of mode both each format uses with -view
    # auto: the exact one where the format is about call counts.
    variable autoExact {callgrind}

    # What the escapes of folded stacks and callgrind names cover: '%'
    # itself, C0 and C1 controls, DEL, U+2028 and U+2029 (as the %XX of
    # their UTF-8 bytes), and in folded stacks the frame separator ';'
    # and the brackets of the " [C]" mark.
    variable foldedRE {[%;\[\]\x00-\x1f\x7f-\x9f\u2028\u2029]}
    variable callgrindRE {[%\x00-\x1f\x7f-\x9f\u2028\u2029]}
    variable foldedMap {}
    variable callgrindMap {}
    apply {{} {
	variable foldedMap
	variable callgrindMap
	set chars [list % \u2028 \u2029]
	for {set i 0} {$i < 0xa0} {incr i} {
	    if {$i < 0x20 || $i >= 0x7f} {
		lappend chars [format %c $i]
	    }
	}
	foreach c $chars {
	    set hex ""
	    binary scan [encoding convertto utf-8 $c] cu* bytes
	    foreach b $bytes {
		append hex [format %%%02X $b]
	    }
	    lappend foldedMap $c $hex
	    lappend callgrindMap $c $hex
	}
	lappend foldedMap \; %3B \[ %5B \] %5D
    } ::tclcprof::exportlib}

    # JSON strings: quotes, backslashes and controls as JSON requires;
    # '<', '>' and '&' too, so that a name can never close the <script>
    # element of the HTML page; U+2028 and U+2029, which older
    # JavaScript does not allow in strings; surrogates, which UTF-8
    # cannot carry alone (see JsonString).
    variable jsonRE {[\x00-\x1f\x7f"\\<>&\u2028\u2029\ud800-\udfff]}
    variable jsonMap [list \" {\"} \\ {\\} \n {\n} \r {\r} \t {\t} \
	    < {\u003c} > {\u003e} & {\u0026} \x7f {\u007f} \
	    \u2028 {\u2028} \u2029 {\u2029}]
    apply {{} {
	variable jsonMap
	for {set i 0} {$i < 0x20} {incr i} {
	    if {$i ni {9 10 13}} {
		lappend jsonMap [format %c $i] [format {\u%04x} $i]
	    }
	}
    } ::tclcprof::exportlib}
}

# ::tclcprof::export --
#
#	tclcprof::export -format FORMAT ?-file PATH? ?-data PROFILE?
#	    ?-db FILES ?-run IDS?? ?-view auto|samples|exact? ?-min PCT?
#	    ?-base PROFILE | -basedb FILE ?-baserun ID?? ?-normalize 0|1?
#
# Results:
#	The exported text (pprof: the gzipped bytes, as a byte array), or
#	the empty string with -file, after the file has been written.

proc ::tclcprof::export {args} {
    set o [exportlib::ParseOptions $args]
    if {[dict exists $o -file]} {
	exportlib::CheckFile [dict get $o -file]
    }
    set profile [reportlib::Profile $o]
    if {[exportlib::Differential $o]} {
	set out [exportlib::DiffHtml $o $profile [exportlib::BaseProfile $o]]
    } else {
	set out [exportlib::Export $o $profile]
    }
    if {[dict exists $o -file]} {
	exportlib::WriteFile [dict get $o -file] $out \
		[expr {[dict get $o -format] eq "pprof"}]
	return
    }
    return $out
}

# ParseOptions --
#
#	Check the options of export.
#
# Results:
#	A dict of the options given, -view defaulted to auto. Errors:
#	TCLCPROF OPTION name, TCLCPROF VALUE option ?value?.

proc ::tclcprof::exportlib::ParseOptions {arglist} {
    variable optionNames
    variable formats

    set o [dict create -view auto]
    foreach {opt v} [OptionPairs $arglist $optionNames] {
	switch -- $opt {
	    -format {
		set v [Enum $opt $v format $formats]
	    }
	    -view {
		set v [Enum $opt $v view {alloc auto exact live peak samples}]
	    }
	    -count {
		set v [MemoryCount $v]
	    }
	    -min {
		if {![string is double -strict $v] || !($v >= 0 && $v <= 100)} {
		    Fail [list VALUE $opt $v] "bad value \"[Escape $v]\" for\
			    -min: expected a percentage from 0 to 100"
		}
	    }
	    -normalize {
		if {![string is boolean -strict $v]} {
		    Fail [list VALUE $opt $v] "bad value \"[Escape $v]\" for\
			    -normalize: expected a boolean"
		}
		set v [expr {!!$v}]
	    }
	    -thread {
		CheckThreadValue $v
	    }
	    -file - -db - -basedb {
		# No file name has a NUL (the database's name is checked
		# where it is opened).
		if {$v eq "" || ($opt eq "-file" && [string first \0 $v] >= 0)} {
		    Fail [list VALUE $opt $v] "bad value \"[Escape $v]\" for\
			    $opt: expected a file name"
		}
	    }
	}
	dict set o $opt $v
    }
    # -label, -by (labels.tcl).
    LabelOptions $o
    if {![dict exists $o -format]} {
	Fail {VALUE -format} "-format is needed: one of [join \
		[lrange $formats 0 end-1] {, }] or [lindex $formats end]"
    }
    if {[dict exists $o -min] && [dict get $o -format] ne "dot"} {
	Fail {VALUE -min} "-min applies to -format dot only (the other\
		formats keep every stack)"
    }
    CheckSource $o
    set o [MemoryOptions $o]
    # A base profile: the differential flame graph of -format html.
    if {[dict exists $o -baserun] && ![dict exists $o -basedb]} {
	Fail {VALUE -baserun} "-baserun needs -basedb: runs are read from a\
		file"
    }
    if {[dict exists $o -basedb] && [dict exists $o -base]} {
	Fail {VALUE -basedb} "-base and -basedb cannot be used together"
    }
    if {![Differential $o]} {
	if {[dict exists $o -normalize]} {
	    Fail {VALUE -normalize} "-normalize needs a base profile (-base\
		    or -basedb)"
	}
    } elseif {[dict get $o -format] ne "html"} {
	set opt [expr {[dict exists $o -base] ? "-base" : "-basedb"}]
	Fail [list VALUE $opt] "$opt applies to -format html only (the\
		differential flame graph)"
    }
    return $o
}

# Differential, BaseProfile --
#	Whether export options name a base profile; that profile, from
#	-base or from -basedb (tclcprof::data -db FILE ?-run ID?).

proc ::tclcprof::exportlib::Differential {o} {
    expr {[dict exists $o -base] || [dict exists $o -basedb]}
}

proc ::tclcprof::exportlib::BaseProfile {o} {
    if {[dict exists $o -base]} {
	return [dict get $o -base]
    }
    if {[dict exists $o -baserun]} {
	try {
	    return [::tclcprof::data -db [dict get $o -basedb] \
		    -run [dict get $o -baserun]]
	} trap {TCLCPROF VALUE -run} {msg opts} {
	    # (The option is -baserun here.)
	    Fail [list VALUE -baserun {*}[lrange [dict get $opts -errorcode] 3 end]] \
		    [string map {-run -baserun} $msg]
	}
    }
    return [::tclcprof::data -db [dict get $o -basedb]]
}

# DiffHtml --
#
#	The differential flame graph page of profile against base (both
#	unchecked), the trees chosen by -view in each, with -normalize
#	(default 1). Errors: those of Load for either profile, TCLCPROF
#	VALUE -base when the trees are weighed differently, TCLCPROF
#	NODATA base when the base's tree has no weight.

proc ::tclcprof::exportlib::DiffHtml {o profile base} {
    # The thread picked (or merge) in both; all: paths from the threads'
    # roots, compared thread by thread.
    set profile [Threads $o $profile]
    if {[dict exists $o -thread] && [dict get $o -thread] ni {all merge}} {
	if {[catch {Threads $o $base} b]} {
	    set b [Threads [dict remove $o -thread] $base]
	}
	set base $b
    } else {
	set base [Threads $o $base]
    }
    set profile [Labels $o $profile]
    set base [Labels $o $base]
    set t [Load $profile [TreeKey $o $profile html]]
    if {[catch {Load $base [TreeKey $o $base html]} b opts]} {
	set code [dict get $opts -errorcode]
	if {[lrange $code 0 1] eq {TCLCPROF NODATA}} {
	    Fail {NODATA base} "no call tree in the base profile: it has no\
		    samples or timed calls"
	}
	return -options $opts "base profile: $b"
    }
    set normalize [expr {[dict exists $o -normalize]
	    ? [dict get $o -normalize] : 1}]
    return [Html $t [DiffTree $t $b $normalize]]
}

# Export --
#
#	The text of one format, from validated options and an unchecked
#	profile.

proc ::tclcprof::exportlib::Export {o profile} {
    set format [dict get $o -format]
    if {$format eq "chrome"} {
	if {[dict exists $o -thread]} {
	    # (Every thread has its track: -thread is only checked.)
	    CheckThread $profile [dict get $o -thread]
	}
	return [Chrome $profile]
    }
    # -thread, and the frames of other interpreters named (threads.tcl);
    # -label and -by (labels.tcl).
    set profile [Labels $o [Threads $o $profile]]
    set t [Load $profile [TreeKey $o $profile $format]]
    switch -- $format {
	folded {return [Folded $t]}
	speedscope {return [Speedscope $t $profile]}
	callgrind {return [Callgrind $t $profile]}
	pprof {return [Pprof $t $profile]}
	html {return [Html $t]}
	dot {
	    return [Dot $t [expr {[dict exists $o -min]
		    ? [dict get $o -min] : 0.5}]]
	}
    }
}

# TreeKey --
#
#	Which tree of the profile a format exports: "tree" or, in a
#	profile of mode both, "exact" (-view exact, or -view auto for the
#	formats of autoExact). Errors: TCLCPROF VALUE -view exact (no exact
#	tree), TCLCPROF VALUE -view samples (no sampled tree).

proc ::tclcprof::exportlib::TreeKey {o profile format} {
    variable autoExact
    set view [dict get $o -view]
    if {[catch {dict exists $profile exact} hasExact]} {
	set hasExact 0
    }
    switch -- $view {
	exact {
	    if {$hasExact} {
		return exact
	    }
	    if {![ExactProfile $profile]} {
		Fail {VALUE -view exact} "-view exact: the profile has no\
			exact timing (-mode exact or both)"
	    }
	}
	samples {
	    if {[ExactProfile $profile]} {
		Fail {VALUE -view samples} "-view samples: the profile has\
			no samples (-mode sample or both)"
	    }
	}
	auto {
	    # The exact tree for the formats about calls, and when nothing
	    # was sampled (a run shorter than a sampling period).
	    if {$hasExact && ($format in $autoExact || [Unweighed $profile])} {
		return exact
	    }
	}
    }
    return tree
}

# Load --
#
#	Check a profile's tree (the one under treeKey) and lay it out.
#
# Results:
#	A dict: meta, the lists of reportlib::Flatten (name kind self total
#	kids fig node: one element per node, breadth first, node 0 the
#	root, each node's children contiguous), exact (whether weights are
#	ns: an exact tree), hasFig, and the frames: fid (each node's frame
#	number), and per frame fname, fkind and fnode (its first node).
#	Frame 0 is the root's. Errors: those of Flatten (TCLCPROF DATA),
#	TCLCPROF NODATA tree for a tree without weight.

proc ::tclcprof::exportlib::Load {profile treeKey} {
    set meta [Flatten $profile $treeKey]
    if {[lindex $inTotal 0] == 0} {
	Fail {NODATA tree} "no call tree to export: the profile has no\
		samples or timed calls"
    }
    set fid {}
    set fname {}
    set fkind {}
    set fnode {}
    set i 0
    foreach name $inName kind $inKind {
	set key $kind\u0000$name
	if {![info exists idx($key)]} {
	    set idx($key) [llength $fname]
	    lappend fname $name
	    lappend fkind $kind
	    lappend fnode $i
	}
	lappend fid $idx($key)
	incr i
    }
    dict create meta $meta name $inName kind $inKind self $inSelf \
	    total $inTotal kids $inKids fig $inFig node $inNode \
	    exact $timeWeights hasFig $hasFig fid $fid fname $fname \
	    fkind $fkind fnode $fnode
}

# FrameAttr --
#	A key of a frame's first node (module, tclkind, file, line), or "".

proc ::tclcprof::exportlib::FrameAttr {t f key} {
    set node [lindex [dict get $t node] [lindex [dict get $t fnode] $f]]
    if {[dict exists $node $key]} {
	return [dict get $node $key]
    }
    return ""
}

# Paths --
#
#	The stacks of a tree: for every node other than the root with a
#	self weight, the labels of the frames from the outermost to it
#	joined by sep, and its self weight. A stack is made only for a
#	node that has weight, from its parents, so that the work is that
#	of the output: a deep chain with weight at its end is one stack,
#	not one per level (each as long as its depth). A stack deeper than
#	maxStack frames is cut (see StackCut); cutLabel, when not empty, is
#	the label of the frame standing for what was cut.
#
# Results:
#	A flat list {path weight ...}, in breadth-first order.

proc ::tclcprof::exportlib::Paths {t labels sep {cutLabel ""}} {
    variable maxStack
    set fid [dict get $t fid]
    set up [Parents $t]
    lassign [StackCut $up] depth anchor outer inner
    set out {}
    set i 0
    foreach s [dict get $t self] {
	if {$i > 0 && $s > 0} {
	    set stack {}
	    set n $i
	    set d [lindex $depth $i]
	    if {$d > $maxStack} {
		for {set k 0} {$k < $inner} {incr k} {
		    lappend stack [lindex $labels [lindex $fid $n]]
		    set n [lindex $up $n]
		}
		lappend stack [expr {$cutLabel eq "" ? [CutLabel] : $cutLabel}]
		set n [lindex $anchor $i]
	    }
	    for {} {$n > 0} {set n [lindex $up $n]} {
		lappend stack [lindex $labels [lindex $fid $n]]
	    }
	    lappend out [join [lreverse $stack] $sep] $s
	}
	incr i
    }
    return $out
}

# StackCut, CutLabel --
#
#	Exports that list whole stacks (folded, speedscope, pprof) keep at
#	most maxStack frames of one: a deeper one keeps its outermost
#	'outer' and innermost 'inner' frames and, in between, one frame named
#	"[frames not shown]" (one name, so that such stacks still add up). Without it an exact profile of a
#	recursion 100,000 levels deep, each level with time of its own,
#	would be 100,000 stacks of up to 100,000 frames (gigabytes, hours).
#	StackCut gives, from each node's parent (up, parents before
#	children, -1 for the root): each node's depth (the root 0), its
#	ancestor at depth 'outer' (-1 above it), and outer and inner. Each
#	stack is then made in at most maxStack steps.

namespace eval ::tclcprof::exportlib {
    variable maxStack 128
}

proc ::tclcprof::exportlib::StackCut {up} {
    variable maxStack
    set outer [expr {$maxStack / 2}]
    set inner [expr {$maxStack - $outer - 1}]
    set depth {}
    set anchor {}
    foreach p $up {
	if {$p < 0} {
	    lappend depth 0
	    lappend anchor -1
	    continue
	}
	set d [expr {[lindex $depth $p] + 1}]
	lappend depth $d
	lappend anchor [expr {$d == $outer ? [llength $anchor]
		: $d > $outer ? [lindex $anchor $p] : -1}]
    }
    list $depth $anchor $outer $inner
}

proc ::tclcprof::exportlib::CutLabel {} {
    return "\[frames not shown\]"
}

# Parents --
#	Each node's parent in a tree laid out by Load (the root's: -1).

proc ::tclcprof::exportlib::Parents {t} {
    set up [lrepeat [llength [dict get $t fid]] -1]
    set i 0
    foreach ks [dict get $t kids] {
	foreach c $ks {
	    lset up $c $i
	}
	incr i
    }
    return $up
}

# Weight --
#	A weight as text: integers as they are, others as decimals without
#	an exponent (what flame graph tools read).

proc ::tclcprof::exportlib::Weight {w} {
    if {[string is entier -strict $w]} {
	return [expr {$w + 0}]
    }
    if {$w == floor($w) && $w < 1e15} {
	return [format %.0f $w]
    }
    return [string trimright [format %.6f $w] 0]
}

# IntWeight --
#	A weight rounded to an integer (callgrind and pprof costs).

proc ::tclcprof::exportlib::IntWeight {w} {
    if {[string is entier -strict $w]} {
	return [expr {$w + 0}]
    }
    return [expr {round($w)}]
}

# Label --
#	A frame as flame graph tools show it: C functions with " [C]",
#	frames of kinds other than tcl and c with their kind in brackets.

proc ::tclcprof::exportlib::Label {name kind} {
    switch -- $kind {
	tcl {return $name}
	c {return "$name \[C\]"}
	default {return "$name \[$kind\]"}
    }
}

# FoldedName, CallgrindName --
#	A name escaped for folded stacks or callgrind files (%XX).

proc ::tclcprof::exportlib::FoldedName {s} {
    variable foldedRE
    variable foldedMap
    if {[regexp $foldedRE $s]} {
	return [string map $foldedMap $s]
    }
    return $s
}

proc ::tclcprof::exportlib::CallgrindName {s} {
    variable callgrindRE
    variable callgrindMap
    if {[regexp $callgrindRE $s]} {
	set s [string map $callgrindMap $s]
    }
    # "(N) name" is callgrind's name compression, and readers skip the
    # spaces a name starts with.
    switch -- [string index $s 0] {
	( {set s %28[string range $s 1 end]}
	" " {set s %20[string range $s 1 end]}
    }
    return $s
}

# JsonString --
#	A string as a JSON string, safe inside an HTML <script> element.

proc ::tclcprof::exportlib::JsonString {s} {
    variable jsonRE
    variable jsonMap
    if {![regexp $jsonRE $s]} {
	return "\"$s\""
    }
    set s [string map $jsonMap $s]
    if {[regexp {[\ud800-\udfff]} $s]} {
	set out ""
	foreach c [split $s ""] {
	    scan $c %c code
	    if {$code >= 0xd800 && $code <= 0xdfff} {
		append out [format {\u%04x} $code]
	    } else {
		append out $c
	    }
	}
	set s $out
    }
    return "\"$s\""
}

# JsonNumber --
#	A weight as a JSON number.

proc ::tclcprof::exportlib::JsonNumber {w} {
    if {[string is entier -strict $w]} {
	return [expr {$w + 0}]
    }
    return [expr {double($w)}]
}

# Title --
#	What a profile is, for the names formats give it.

proc ::tclcprof::exportlib::Title {meta} {
    set parts {}
    if {[dict exists $meta label] && [dict get $meta label] ne ""} {
	return [dict get $meta label]
    }
    if {[dict exists $meta mode]} {
	lappend parts "mode [dict get $meta mode]"
    }
    if {[dict exists $meta clock]} {
	lappend parts "[dict get $meta clock] clock"
    }
    if {![llength $parts]} {
	return tclcprof
    }
    return "tclcprof: [join $parts {, }]"
}

# --- folded --------------------------------------------------------------

# Folded --
#
#	One line per distinct stack, "frame;frame;... weight", sorted, with
#	the stack's self weight (samples, or ns in an exact tree). Weight
#	without a frame (the root's self) is on a line "[no frame] weight":
#	brackets are escaped in names, so no frame can be called that.

proc ::tclcprof::exportlib::Folded {t} {
    set f -1
    set labels [lmap name [dict get $t fname] kind [dict get $t fkind] {
	incr f
	if {$kind eq "tcl"} {
	    # A frame of another interpreter: "name [interp]", its
	    # brackets as they are (threads.tcl).
	    set ip [expr {$f ? [FrameAttr $t $f interp] : ""}]
	    set n [expr {[string length $ip] + 3}]
	    if {$ip ne "" && [string range $name end-[expr {$n - 1}] end]
		    eq " \[$ip\]"} {
		set name [string range $name 0 end-$n]
		Label [FoldedName $name] [FoldedName $ip]
	    } else {
		FoldedName $name
	    }
	} else {
	    Label [FoldedName $name] [FoldedName $kind]
	}
    }]
    set pairs [Paths $t $labels ";"]
    set rootSelf [lindex [dict get $t self] 0]
    if {$rootSelf > 0} {
	lappend pairs {[no frame]} $rootSelf
    }
    set lines {}
    set last ""
    set sum 0
    # Sorted; a stack given twice (siblings of the same name and kind in
    # a hand-made profile) is one line.
    foreach {p w} [lsort -stride 2 -index 0 $pairs] {
	if {$p eq $last && [llength $lines]} {
	    set sum [expr {$sum + $w}]
	    lset lines end "$p [Weight $sum]"
	    continue
	}
	set last $p
	set sum $w
	lappend lines "$p [Weight $w]"
    }
    return [join $lines \n]\n
}

# --- events: chrome and speedscope's evented profile ---------------------

# Events --
#
#	The events of a profile, checked and balanced: a leave whose frame
#	is not open is dropped; a leave of a frame below the innermost open
#	one closes the frames above it first; frames still open at the end
#	are closed at the last time. Times never go back.
#
# Results:
#	A flat list {ns E|L name ...} in which every enter has its leave.
#	Errors: TCLCPROF NODATA events (none), TCLCPROF DATA FORMAT.

proc ::tclcprof::exportlib::Events {profile} {
    if {[catch {dict size $profile}]} {
	Fail {DATA FORMAT} "invalid profile: not a dictionary"
    }
    if {![dict exists $profile meta]} {
	Fail {DATA KEY meta} "invalid profile: missing key \"meta\""
    }
    if {[catch {dict size [dict get $profile meta]}]} {
	Fail {DATA FORMAT} "invalid profile: meta is not a dictionary"
    }
    if {![dict exists $profile events]
	    || ![llength [set events [dict get $profile events]]]} {
	Fail {NODATA events} "no events to export: profile with -events 1\
		(-mode exact or both)"
    }
    return [Balance $events]
}

# Balance --
#
#	Events checked and balanced (see Events).

proc ::tclcprof::exportlib::Balance {events} {
    if {[llength $events] % 3} {
	Fail {DATA FORMAT} "invalid profile: events is not a list of\
		time, type and name triples"
    }
    set out {}
    set stack {}
    set depth 0
    set last 0
    set n 0
    foreach {ns type name} $events {
	if {![string is entier -strict $ns] || $ns < 0} {
	    Fail {DATA FORMAT} "invalid profile: event $n: time\
		    [Quote $ns] is not a non-negative integer"
	}
	if {$ns < $last} {
	    set ns $last
	}
	switch -- $type {
	    E {
		if {$depth < [llength $stack]} {
		    lset stack $depth $name
		} else {
		    lappend stack $name
		}
		incr depth
		lappend out $ns E $name
		set last $ns
	    }
	    L {
		if {$depth > 0 && [lindex $stack $depth-1] eq $name} {
		    incr depth -1
		    lappend out $ns L $name
		    set last $ns
		} else {
		    # The innermost open frame of that name, if any.
		    for {set k [expr {$depth - 2}]} {$k >= 0} {incr k -1} {
			if {[lindex $stack $k] eq $name} {
			    break
			}
		    }
		    if {$k >= 0} {
			while {$depth > $k} {
			    incr depth -1
			    lappend out $ns L [lindex $stack $depth]
			}
			set last $ns
		    }
		}
	    }
	    default {
		Fail {DATA FORMAT} "invalid profile: event $n: type\
			[Quote $type] is not E or L"
	    }
	}
	incr n
    }
    while {$depth > 0} {
	incr depth -1
	lappend out $last L [lindex $stack $depth]
    }
    return $out
}

# Chrome --
#
#	Trace events (the JSON object format of chrome://tracing and
#	Perfetto): a begin (B) and end (E) event per call, times in
#	microseconds since the run started, in one process; one track
#	(thread) per thread of the profile (thread_events: the threads
#	other than the starting one), named as the profile's threads are.

proc ::tclcprof::exportlib::Chrome {profile} {
    set events [Events $profile]
    set meta [dict get $profile meta]
    set title [JsonString [Title $meta]]
    set first Tcl
    if {![catch {dict get $meta threads} threads] && [llength $threads] > 1
	    && ![catch {dict get [lindex $threads 0] name} name]} {
	set first $name
    }
    set tracks [list 1 $first $events]
    if {[dict exists $profile thread_events]} {
	set tid 2
	foreach te [dict get $profile thread_events] {
	    if {[catch {dict get $te events} tevents]
		    || [catch {dict get $te name} tname]} {
		Fail {DATA FORMAT} "invalid profile: thread_events is not a\
			list of dicts with name and events"
	    }
	    lappend tracks $tid $tname [Balance $tevents]
	    incr tid
	}
    }
    set lines [list \
	    "\{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":\{\"name\":$title\}\}"]
    foreach {tid tname tevents} $tracks {
	lappend lines "\{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":$tid,\"args\":\{\"name\":[JsonString $tname]\}\}"
	set tail ",\"pid\":1,\"tid\":$tid\}"
	foreach {ns type name} $tevents {
	    if {![info exists json($name)]} {
		set json($name) "\{\"name\":[JsonString $name],\"cat\":\"tcl\",\"ph\":"
	    }
	    lappend lines "$json($name)\"[expr {$type eq "E" ? "B" : "E"}]\",\"ts\":[format %.3f [expr {$ns / 1000.0}]]$tail"
	}
    }
    set other [list "\"exporter\":\"tclcprof [package provide tclcprof]\""]
    foreach key {mode clock label} {
	if {[dict exists $meta $key]} {
	    lappend other "[JsonString $key]:[JsonString [dict get $meta $key]]"
	}
    }
    set doubts [Doubts $meta]
    if {[llength $doubts]} {
	lappend other "\"warning\":[JsonString [join $doubts {, }]]"
    }
    return "\{\"traceEvents\":\[\n[join $lines ,\n]\n\],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":\{[join $other ,]\}\}\n"
}

# --- speedscope ----------------------------------------------------------

# Speedscope --
#
#	The speedscope file format: a sampled profile of the tree, one
#	sample per stack with its self weight (unit none for samples,
#	nanoseconds for an exact tree), ordered depth first; and, when the
#	profile has events, an evented profile of them. The frames are
#	shared: Tcl frames by name (with the file of their call sites when
#	the profile has them), C frames as "name [C]" with their module as
#	file.

proc ::tclcprof::exportlib::Speedscope {t profile} {
    set meta [dict get $t meta]
    lassign [expr {[dict get $t exact] ? [SiteLines $profile] : {{} {}}}] \
	    - files
    set frames {}
    set index {}
    set f 0
    foreach name [dict get $t fname] kind [dict get $t fkind] {
	if {$f > 0} {
	    set json "\{\"name\":[JsonString [Label $name $kind]]"
	    if {$kind eq "c"} {
		set file [FrameAttr $t $f module]
	    } elseif {$kind eq "tcl" && [dict exists $files $name]} {
		set file [dict get $files $name]
	    } else {
		set file [FrameAttr $t $f file]
	    }
	    if {$file ne ""} {
		append json ",\"file\":[JsonString $file]"
		set line [FrameAttr $t $f line]
		if {[string is entier -strict $line] && $line > 0} {
		    append json ",\"line\":$line"
		}
	    }
	    lappend frames "$json\}"
	    dict set index $kind\u0000$name [expr {$f - 1}]
	}
	incr f
    }

    # Samples: paths of frame numbers, sorted so that each subtree's
    # samples are together (a path's prefix sorts before its extensions,
    # and "," before any digit).
    set labels [list {}]
    for {set f 1} {$f < [llength [dict get $t fname]]} {incr f} {
	lappend labels [expr {$f - 1}]
    }
    # A frame for the middle of stacks cut (see StackCut), when one is.
    variable maxStack
    set cutLabel ""
    if {[tcl::mathfunc::max 0 {*}[lindex [StackCut [Parents $t]] 0]]
	    > $maxStack} {
	set cutLabel [llength $frames]
	lappend frames "\{\"name\":[JsonString [CutLabel]]\}"
    }
    set pairs [lsort -stride 2 -index 0 [Paths $t $labels , $cutLabel]]
    set rootSelf [lindex [dict get $t self] 0]
    if {$rootSelf > 0} {
	set pairs [linsert $pairs 0 {} $rootSelf]
    }
    set exact [dict get $t exact]
    set title [Title $meta]
    set unit [expr {$exact ? "nanoseconds" : "none"}]
    set what [expr {$exact ? "exact" : "samples"}]

    # Memory profiles: bytes (objects with -count are plain counts).
    if {[dict exists $meta unit] && [dict exists $meta view]} {
	set what "[dict get $meta view] [dict get $meta unit]"
	set unit [expr {[dict get $meta unit] eq "bytes" ? "bytes" : "none"}]
    }

    # Threads' roots: one profile per thread, named after it, its
    # samples those under its root, without it (weight on no frame goes
    # to the first).
    set threads [ThreadRoots $t]
    if {[llength $threads]} {
	set byThread {}
	foreach {p w} $pairs {
	    set at [string first , $p]
	    set head [expr {$at < 0 ? $p : [string range $p 0 $at-1]}]
	    set rest [expr {$at < 0 ? "" : [string range $p $at+1 end]}]
	    if {$head eq "" || ![dict exists $threads [expr {$head + 1}]]} {
		set head [expr {[lindex [dict keys $threads] 0] - 1}]
		set rest $p
	    }
	    dict lappend byThread [expr {$head + 1}] $rest $w
	}
	set profiles {}
	dict for {f node} $threads {
	    set samples {}
	    set weights {}
	    if {[dict exists $byThread $f]} {
		foreach {p w} [dict get $byThread $f] {
		    lappend samples "\[$p\]"
		    lappend weights [JsonNumber $w]
		}
	    }
	    lappend profiles "\{\"type\":\"sampled\",\"name\":[JsonString \
		"[lindex [dict get $t fname] $f] ($what)"],\"unit\":\"$unit\",\"startValue\":0,\"endValue\":[JsonNumber \
		[lindex [dict get $t total] $node]],\n\"samples\":\[[join $samples ,]\],\n\"weights\":\[[join $weights ,]\]\}"
	}
    } else {
	set samples {}
	set weights {}
	foreach {p w} $pairs {
	    lappend samples "\[$p\]"
	    lappend weights [JsonNumber $w]
	}
	set profiles [list "\{\"type\":\"sampled\",\"name\":[JsonString \
		"$title ($what)"],\"unit\":\"$unit\",\"startValue\":0,\"endValue\":[JsonNumber \
		[lindex [dict get $t total] 0]],\n\"samples\":\[[join $samples ,]\],\n\"weights\":\[[join $weights ,]\]\}"]
    }

    if {![catch {dict get $profile events} ev] && [llength $ev]} {
	set events {}
	set first ""
	foreach {ns type name} [Events $profile] {
	    if {![dict exists $index tcl\u0000$name]} {
		dict set index tcl\u0000$name [llength $frames]
		lappend frames "\{\"name\":[JsonString $name]\}"
	    }
	    if {$first eq ""} {
		set first $ns
	    }
	    lappend events "\{\"type\":\"[expr {$type eq "E" ? "O" : "C"}]\",\"frame\":[dict get $index tcl\u0000$name],\"at\":$ns\}"
	}
	lappend profiles "\{\"type\":\"evented\",\"name\":[JsonString \
		"$title (events)"],\"unit\":\"nanoseconds\",\"startValue\":$first,\"endValue\":$ns,\n\"events\":\[[join $events ,\n]\]\}"
    }

    return "\{\"\$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n\"exporter\":\"tclcprof [package provide tclcprof]\",\n\"name\":[JsonString $title],\n\"activeProfileIndex\":0,\n\"shared\":\{\"frames\":\[\n[join $frames ,\n]\n\]\},\n\"profiles\":\[\n[join $profiles ,\n]\n\]\}\n"
}

# ThreadRoots --
#
#	The threads' roots of a laid-out tree (Load): the root's children
#	of kind thread, as a dict frame -> node, in tree order; empty when
#	the root has none.

proc ::tclcprof::exportlib::ThreadRoots {t} {
    set out {}
    foreach c [lindex [dict get $t kids] 0] {
	if {[lindex [dict get $t kind] $c] eq "thread"} {
	    set f [lindex [dict get $t fid] $c]
	    if {![dict exists $out $f]} {
		dict set out $f $c
	    }
	}
    }
    return $out
}

# --- callgrind -----------------------------------------------------------

# SiteLines --
#
#	From the call sites of an exact profile (its lines, each with the
#	caller of the command at that site), per Tcl caller and callee the
#	sites, and per Tcl frame the file it calls from.
#
# Results:
#	{calls files}: calls is a dict "caller\0callee" -> list of {line
#	calls total_ns}, files a dict caller -> file (the file of most of
#	its calls). Empty without lines or with lines made before callers
#	were recorded. Errors: TCLCPROF DATA FORMAT|KEY.

proc ::tclcprof::exportlib::SiteLines {profile} {
    if {[catch {dict get $profile lines} recs]} {
	return {{} {}}
    }
    set sites {}
    set count {}
    set i 0
    try {
	foreach r $recs {
	    if {[catch {dict size $r}]} {
		throw {TCLCPROF_EXPORT RECORD} {}
	    }
	    if {![dict exists $r caller]} {
		return {{} {}}
	    }
	    foreach key {file line name calls total_ns} {
		set rec($key) [dict get $r $key]
	    }
	    set caller [dict get $r caller]
	    if {![string is wideinteger -strict $rec(line)] || $rec(line) < 0
		    || ![string is wideinteger -strict $rec(calls)]
		    || $rec(calls) < 0
		    || ![string is double -strict $rec(total_ns)]
		    || [catch {expr {$rec(total_ns) >= 0
			    && $rec(total_ns) < Inf}} ok] || !$ok} {
		throw {TCLCPROF_EXPORT FIGURE} {}
	    }
	    dict lappend sites $caller\u0000$rec(name) \
		    [list $rec(line) $rec(calls) $rec(total_ns)]
	    dict incr count $caller\u0000$rec(file) $rec(calls)
	    incr i
	}
    } trap {TCL LOOKUP DICT} {msg opts} {
	set key [lindex [dict get $opts -errorcode] end]
	Fail [list DATA KEY $key] "invalid profile: lines record $i:\
		missing key \"$key\""
    } trap {TCLCPROF_EXPORT RECORD} {} {
	Fail {DATA FORMAT} "invalid profile: lines record $i: not a\
		dictionary"
    } trap {TCLCPROF_EXPORT FIGURE} {} {
	Fail {DATA FORMAT} "invalid profile: lines record $i: line, calls\
		or total_ns is not a non-negative number"
    } on error {msg} {
	Fail {DATA FORMAT} "invalid profile: lines record $i: $msg"
    }
    set files {}
    set best {}
    dict for {key n} $count {
	lassign [split $key \u0000] caller file
	if {![dict exists $best $caller] || $n > [dict get $best $caller]} {
	    dict set best $caller $n
	    dict set files $caller $file
	}
    }
    return [list $sites $files]
}

# Callgrind --
#
#	The callgrind format of KCachegrind and callgrind_annotate: one
#	function per frame with its self cost, and per callee a call with
#	its count and inclusive cost. Exact trees: costs in ns, true call
#	counts, calls placed at the lines they were made from when the
#	profile has call sites (-lines 1). Sampled trees: costs in samples,
#	and the "calls" of a callee are the samples that saw the call.

proc ::tclcprof::exportlib::Callgrind {t profile} {
    set meta [dict get $t meta]
    set exact [dict get $t exact]
    set fid [dict get $t fid]
    set self [dict get $t self]
    set total [dict get $t total]
    set fig [dict get $t fig]
    set fname [dict get $t fname]
    set fkind [dict get $t fkind]
    set nf [llength $fname]

    # Self cost per frame, and the calls between frames: for each
    # "caller callee" key, its calls n(key) and inclusive cost w(key).
    set fself [lrepeat $nf 0]
    set callsOf [expr {$exact ? [lmap f $fig {
	expr {[llength $f] ? [lindex $f 0] : 0}
    }] : $total}]
    set root 1
    foreach ks [dict get $t kids] s $self f $fid {
	lset fself $f [expr {[lindex $fself $f] + $s}]
	if {$root} {
	    # The root's children are called from no function.
	    set root 0
	    continue
	}
	foreach c $ks {
	    set key "$f [lindex $fid $c]"
	    if {[info exists n($key)]} {
		set n($key) [expr {$n($key) + [lindex $callsOf $c]}]
		set w($key) [expr {$w($key) + [lindex $total $c]}]
	    } else {
		set n($key) [lindex $callsOf $c]
		set w($key) [lindex $total $c]
		lappend callees($f) [lindex $fid $c]
	    }
	}
    }

    lassign [expr {$exact ? [SiteLines $profile] : {{} {}}}] sites files
    # C source lines (sampled trees): each C frame's self cost by line,
    # the calls of each caller by the line they were made from, and the
    # file a frame is mostly in.
    if {!$exact} {
	CLines $t cself ccall cfile
    }
    set fl {}
    set ob {}
    set fn {}
    for {set f 0} {$f < $nf} {incr f} {
	set kind [lindex $fkind $f]
	set name [lindex $fname $f]
	set file ""
	if {$kind eq "tcl" && [dict exists $files $name]} {
	    set file [dict get $files $name]
	} elseif {[info exists cfile($f)]} {
	    set file $cfile($f)
	} elseif {$kind ne "c"} {
	    set file [FrameAttr $t $f file]
	}
	lappend fl [expr {$file eq "" ? "???" : [CallgrindName $file]}]
	if {$kind eq "c"} {
	    set module [FrameAttr $t $f module]
	    lappend ob [expr {$module eq "" ? "???" : [CallgrindName $module]}]
	} else {
	    lappend ob {[Tcl]}
	}
	lappend fn [expr {$f == 0 ? {[no frame]} : [CallgrindName \
		[expr {$kind in {tcl c} ? $name : [Label $name $kind]}]]}]
    }

    set event [expr {$exact ? "ns" : "Samples"}]
    set whole [IntWeight [lindex $total 0]]
    set lines [list "# callgrind format" "version: 1" \
	    "creator: tclcprof [package provide tclcprof]"]
    # What makes the profile doubtful, as a comment.
    set doubts [Doubts $meta]
    if {[llength $doubts]} {
	lappend lines "# warning: [join $doubts {, }]"
    }
    lappend lines "cmd: [CallgrindName [Title $meta]]" "positions: line" \
	    "event: $event : [expr {$exact ? "Time (ns)" : "Samples"}]" \
	    "events: $event" "summary: $whole" ""
    # Weight without a frame (the root's self) is the cost of a function
    # of its own, "[no frame]", in an object and file called
    # "[tclcprof]", apart from the functions of frames.
    lset ob 0 {[tclcprof]}
    lset fl 0 {[tclcprof]}
    for {set f 0} {$f < $nf} {incr f} {
	set s [IntWeight [lindex $fself $f]]
	if {$f == 0 && $s == 0} {
	    continue
	}
	lappend lines "ob=[lindex $ob $f]" "fl=[lindex $fl $f]" \
		"fn=[lindex $fn $f]"
	set at [lindex $fl $f]
	if {[info exists cself($f)]} {
	    foreach {file line lw} [SortedLines $cself($f)] {
		set lw [IntWeight $lw]
		set s [expr {$s - $lw}]
		lappend lines {*}[InFile at [CallgrindName $file]] "$line $lw"
	    }
	    if {$s > 0} {
		lappend lines {*}[InFile at [lindex $fl $f]] "0 $s"
	    }
	} else {
	    lappend lines "0 $s"
	}
	if {![info exists callees($f)]} {
	    lappend lines ""
	    continue
	}
	set caller [lindex $fname $f]
	foreach g $callees($f) {
	    set key "$f $g"
	    set cost [IntWeight $w($key)]
	    set calls [IntWeight $n($key)]
	    if {$cost == 0 && $calls == 0} {
		continue
	    }
	    # A call that never completed (still running when profiling
	    # stopped) has time but no count: callgrind needs a count.
	    if {$calls < 1} {
		set calls 1
	    }
	    set callee "cob=[lindex $ob $g]\ncfl=[lindex $fl $g]\ncfn=[lindex $fn $g]"
	    if {[info exists ccall($key)]} {
		# Sampled: the samples of each line of the call.
		foreach {file line lw} [SortedLines $ccall($key)] {
		    set lw [IntWeight $lw]
		    set cost [expr {$cost - $lw}]
		    set calls [expr {$calls - $lw}]
		    lappend lines {*}[InFile at [CallgrindName $file]] \
			    $callee "calls=$lw 0" "$line $lw"
		}
		if {$cost > 0} {
		    lappend lines {*}[InFile at [lindex $fl $f]] $callee \
			    "calls=[expr {max($calls, 1)}] 0" "0 $cost"
		}
		continue
	    }
	    if {[lindex $fkind $f] eq "tcl" && [lindex $fkind $g] eq "tcl"
		    && [dict exists $sites $caller\u0000[lindex $fname $g]]} {
		set sitesAt [SplitCalls \
			[dict get $sites $caller\u0000[lindex $fname $g]] $calls $cost]
	    } else {
		set sitesAt [list [list 0 $calls $cost]]
	    }
	    foreach site $sitesAt {
		lassign $site line count cost
		lappend lines $callee "calls=$count 0" "$line $cost"
	    }
	}
	lappend lines ""
    }
    lappend lines "totals: $whole"
    return [join $lines \n]\n
}

# CLines --
#
#	The C source lines of a sampled tree (the nodes' self_lines and
#	caller_lines), by frame, in the caller's arrays: selfVar(f), the
#	self weight of frame f by line; callVar("f g"), the weight of the
#	calls of f to g by the line of f they were made from (both dicts
#	"file\0line" -> weight); fileVar(f), the file most of f's weight
#	is in.

proc ::tclcprof::exportlib::CLines {t selfVar callVar fileVar} {
    upvar 1 $selfVar cself $callVar ccall $fileVar cfile
    set nodes [dict get $t node]
    set lined [NodeLines $nodes]
    if {![llength $lined]} {
	return
    }
    set fid [dict get $t fid]
    # Each node's parent (the caller of caller_lines).
    set parent [lrepeat [llength $fid] 0]
    set i 0
    foreach ks [dict get $t kids] {
	foreach c $ks {
	    lset parent $c $i
	}
	incr i
    }
    foreach {i sl cl} $lined {
	if {$i == 0} {
	    continue
	}
	set f [lindex $fid $i]
	set node [lindex $nodes $i]
	if {$sl ne ""} {
	    foreach {file line w} [SourceLines $node self_lines] {
		dict incr cself($f) $file\u0000$line $w
		dict incr byFile($f) $file $w
	    }
	}
	set p [lindex $parent $i]
	if {$cl ne "" && $p > 0} {
	    set pf [lindex $fid $p]
	    set key "$pf $f"
	    foreach {file line w} [SourceLines $node caller_lines] {
		dict incr ccall($key) $file\u0000$line $w
		dict incr byFile($pf) $file $w
	    }
	}
    }
    foreach f [array names byFile] {
	set best ""
	set most -1
	dict for {file w} $byFile($f) {
	    if {$w > $most} {
		set best $file
		set most $w
	    }
	}
	set cfile($f) $best
    }
}

# SortedLines --
#	A dict "file\0line" -> weight as a flat list {file line weight ...},
#	by file and line.

proc ::tclcprof::exportlib::SortedLines {d} {
    set out {}
    foreach key [lsort -dictionary [dict keys $d]] {
	lassign [split $key \u0000] file line
	lappend out $file $line [dict get $d $key]
    }
    return $out
}

# InFile --
#	The callgrind line that makes file the current one (fi=), or none
#	when it is already (the caller's variable atVar).

proc ::tclcprof::exportlib::InFile {atVar file} {
    upvar 1 $atVar at
    if {$at eq $file} {
	return {}
    }
    set at $file
    return [list "fi=$file"]
}

# SplitCalls --
#
#	Place the calls of a caller to a callee at the lines they were made
#	from: each site gets its calls (as many as remain), its share of the
#	inclusive cost in proportion to the time recorded there (to its
#	calls, when some calls were made where no line is known: those go
#	to line 0).
#
# Results:
#	A list of {line calls cost} whose calls and costs add up to those
#	given.

proc ::tclcprof::exportlib::SplitCalls {sites calls cost} {
    set sites [lsort -integer -index 0 $sites]
    set placed 0
    set time 0
    foreach s $sites {
	incr placed [lindex $s 1]
	set time [expr {$time + [lindex $s 2]}]
    }
    set byTime [expr {$placed == $calls && $time > 0}]
    set out {}
    set leftCalls $calls
    set leftCost $cost
    foreach s $sites {
	lassign $s line n ns
	if {$n > $leftCalls} {
	    set n $leftCalls
	}
	if {$n <= 0} {
	    continue
	}
	set share [expr {$byTime ? double($ns) / $time : double($n) / $calls}]
	set c [expr {min($leftCost, round($cost * $share))}]
	lappend out [list $line $n $c]
	incr leftCalls -$n
	set leftCost [expr {$leftCost - $c}]
    }
    if {$leftCalls > 0} {
	lappend out [list 0 $leftCalls $leftCost]
    } elseif {$leftCost != 0 && [llength $out]} {
	# Rounding: the rest to the last site.
	lset out end 2 [expr {[lindex $out end 2] + $leftCost}]
    }
    return $out
}

# --- pprof ---------------------------------------------------------------

# Varint --
#	An unsigned integer as a protobuf varint, one character per byte.

proc ::tclcprof::exportlib::Varint {n} {
    if {$n < 128} {
	return [format %c $n]
    }
    set out ""
    while {$n >= 128} {
	append out [format %c [expr {($n & 127) | 128}]]
	set n [expr {$n >> 7}]
    }
    append out [format %c $n]
}

# Field, Bytes --
#	A varint field (wire type 0) and a length-delimited field (2) of a
#	protobuf message.

proc ::tclcprof::exportlib::Field {num value} {
    return [Varint [expr {$num << 3}]][Varint $value]
}

proc ::tclcprof::exportlib::Bytes {num payload} {
    return [Varint [expr {($num << 3) | 2}]][Varint [string length $payload]]$payload
}

# CLoc --
#	The location of frame f at a C source line, made on first use:
#	with the function of the frame and file (made on first use too).
#	Works in Pprof's variables.

proc ::tclcprof::exportlib::CLoc {f file line} {
    upvar 1 cfn cfn cloc cloc nextFn nextFn nextLoc nextLoc venc venc \
	    locations locations functions functions fname fname str str \
	    strings strings
    set key $f\u0000$file\u0000$line
    if {[dict exists $cloc $key]} {
	return [dict get $cloc $key]
    }
    if {![dict exists $cfn $f\u0000$file]} {
	set id $nextFn
	incr nextFn
	dict set cfn $f\u0000$file $id
	set n [{*}$str [lindex $fname $f]]
	append functions [Bytes 5 [Field 1 $id][Field 2 $n][Field 3 $n][Field 4 [{*}$str $file]]]
    }
    set loc [incr nextLoc]
    dict set cloc $key $loc
    lappend venc [Varint $loc]
    append locations [Bytes 4 [Field 1 $loc][Bytes 4 \
	    [Field 1 [dict get $cfn $f\u0000$file]][Field 2 $line]]]
    return $loc
}

# Pprof --
#
#	The profile.proto of pprof, gzipped. Exact trees: one sample per
#	call path with values calls (count) and time (nanoseconds, self);
#	sampled trees: one sample per stack with values samples (count) and
#	cpu or wall (nanoseconds: samples times the sampling period). Each
#	frame is a function (C functions with their module as file name,
#	Tcl frames with their source file when known); call sites of an
#	exact profile with -lines 1 give the line of each call in its
#	caller.

proc ::tclcprof::exportlib::Pprof {t profile} {
    set meta [dict get $t meta]
    set exact [dict get $t exact]
    set fid [dict get $t fid]
    set fname [dict get $t fname]
    set fkind [dict get $t fkind]
    set self [dict get $t self]
    set fig [dict get $t fig]
    set kids [dict get $t kids]

    set strings [dict create "" 0]
    set str [list apply {{s} {
	upvar 1 strings strings
	if {![dict exists $strings $s]} {
	    dict set strings $s [dict size $strings]
	}
	dict get $strings $s
    }}]

    # Functions: one per frame other than the root (id = frame number).
    lassign [expr {$exact ? [SiteLines $profile] : {{} {}}}] sites files
    set functions ""
    for {set f 1} {$f < [llength $fname]} {incr f} {
	set name [lindex $fname $f]
	set kind [lindex $fkind $f]
	if {$kind eq "c"} {
	    set file [FrameAttr $t $f module]
	} elseif {$kind eq "tcl" && [dict exists $files $name]} {
	    set file [dict get $files $name]
	} else {
	    set file [FrameAttr $t $f file]
	}
	# A C function's system name is its name, which pprof demangles
	# (C++ symbols); other frames have none, so that pprof takes
	# their names as demangled already and keeps them as they are
	# (its simplification of C++ names would cut "<script app.tcl>"
	# or "(x)" out of them).
	set n [{*}$str $name]
	set sys [expr {$kind eq "c" ? $n : 0}]
	append functions [Bytes 5 [Field 1 $f][Field 2 $n][Field 3 $sys][Field 4 [{*}$str $file]]]
    }

    # The line each Tcl caller calls a callee from: its busiest site.
    set lineOf {}
    dict for {key list} $sites {
	set best [lindex [lsort -integer -decreasing -index 1 $list] 0]
	dict set lineOf $key [lindex $best 0]
    }

    # C source lines (sampled trees): a function per C frame and source
    # file (named as the frame, with the file), numbered after the
    # frames; a location per frame, file and line (see CLoc).
    set nodes [dict get $t node]
    set cfn {}
    set cloc {}
    set nextFn [llength $fname]
    set hasLines 0
    # A memory profile: Go's four sample types, from each node's own
    # figures.
    set memory [expr {[dict exists $meta mode]
	    && [dict get $meta mode] eq "memory"}]
    if {!$exact && !$memory} {
	foreach {i sl cl} [NodeLines $nodes] {
	    set hasLines 1
	    if {$sl ne ""} {
		set selfL($i) [SourceLines [lindex $nodes $i] self_lines]
	    }
	    if {$cl ne ""} {
		set callerL($i) [SourceLines [lindex $nodes $i] caller_lines]
	    }
	}
    }

    # Locations: one per frame and line; frame f at line 0 is location
    # f, others are numbered after the frames.
    set nf [llength $fname]
    set locLine {}
    set venc [list {}]
    for {set f 1} {$f < $nf} {incr f} {
	lappend venc [Varint $f]
    }
    set locations ""
    for {set f 1} {$f < $nf} {incr f} {
	append locations [Bytes 4 [Field 1 $f][Bytes 4 [Field 1 $f]]]
    }
    set nextLoc [expr {$nf - 1}]

    # Samples, breadth first: each node's path is the packed ids of the
    # locations of its callers, innermost first. A node keeps only its
    # step (the location of its caller, packed) and the node it comes
    # from (up, -1 where the path ends): a path is made from them for a
    # node that has a sample, so that the work is that of the output (a
    # deep chain is not a path per level, each as long as its depth).
    set step [lrepeat [llength $fid] {}]
    set up [lrepeat [llength $fid] -1]
    # Each node's number of steps, and its node at 'outer' steps, for
    # paths deeper than maxStack (see StackCut); cutLoc, the location
    # standing for the steps left out, is made when one is.
    variable maxStack
    set cnt [lrepeat [llength $fid] 0]
    set anc [lrepeat [llength $fid] -1]
    set outer [expr {$maxStack / 2}]
    # (A sample's own location and its path: maxStack in all, as in
    # folded and speedscope.)
    set cut [list [expr {$maxStack - 1}] $outer \
	    [expr {$maxStack - $outer - 2}] {}]
    set samples ""
    if {$exact} {
	set period 0
    } else {
	set rate 0
	if {[dict exists $meta rate_requested]} {
	    set rate [dict get $meta rate_requested]
	}
	# (A rate that is no finite positive number is not used.)
	set period [expr {[string is double -strict $rate]
		&& ![catch {expr {$rate > 0 && $rate < Inf}} ok] && $ok
		? round(1e9 / $rate) : 0}]
    }
    # Threads' roots are no location: each sample under one has the
    # label "thread" (its name) instead. Nor are sets of labels: each
    # sample under one has its keys and values as labels (the innermost
    # set's, which holds those of the sets around it).
    set threadOf [lrepeat [llength $fid] {}]
    set setOf [lrepeat [llength $fid] {}]
    set threadNodes [dict values [ThreadRoots $t]]
    set tkey [{*}$str thread]
    set i 0
    foreach ks $kids s $self {
	unset -nocomplain p
	set f [lindex $fid $i]
	set isThread [expr {$i in $threadNodes}]
	set isSet [expr {$i > 0 && [lindex $fkind $f] eq "labels"}]
	if {$isThread} {
	    lset threadOf $i [Bytes 3 [Field 1 $tkey][Field 2 \
		    [{*}$str [lindex $fname $f]]]]
	} elseif {$isSet} {
	    set bytes ""
	    foreach {k v} [lindex $fname $f] {
		append bytes [Bytes 3 [Field 1 [{*}$str $k]][Field 2 [{*}$str $v]]]
	    }
	    lset setOf $i $bytes
	}
	set label [lindex $threadOf $i][lindex $setOf $i]
	foreach c $ks {
	    lset threadOf $c [lindex $threadOf $i]
	    lset setOf $c [lindex $setOf $i]
	    if {$isSet} {
		# Callers' locations run through a set as if it were not
		# there.
		lset step $c [lindex $step $i]
		lset up $c [lindex $up $i]
		lset cnt $c [lindex $cnt $i]
		lset anc $c [lindex $anc $i]
	    }
	}
	if {$hasLines && $i > 0 && [info exists selfL($i)]} {
	    set p [PackedPath $step $up $i $cnt $anc cut]
	    # The self weight at each line, the rest at the frame.
	    set s [IntWeight $s]
	    foreach {file line w} $selfL($i) {
		set w [IntWeight $w]
		set s [expr {$s - $w}]
		set values [Varint $w]
		if {$period > 0} {
		    append values [Varint [expr {$w * $period}]]
		}
		set loc [CLoc $f $file $line]
		append samples [Bytes 2 [Bytes 1 [lindex $venc $loc]$p][Bytes 2 $values]$label]
	    }
	}
	if {$memory} {
	    set node [lindex $nodes $i]
	    set values ""
	    set keep 0
	    foreach key {alloc_objects alloc_bytes live_objects live_bytes} {
		set v [expr {[dict exists $node $key]
			? [IntWeight [dict get $node $key]] : 0}]
		append values [Varint $v]
		set keep [expr {$keep || $v > 0}]
	    }
	} elseif {$exact} {
	    set calls [lindex $fig $i 0]
	    if {$calls eq ""} {
		set calls 0
	    }
	    set values [Varint $calls][Varint [IntWeight $s]]
	    set keep [expr {$s > 0 || $calls > 0}]
	} else {
	    set w [IntWeight $s]
	    set values [Varint $w]
	    if {$period > 0} {
		append values [Varint [expr {$w * $period}]]
	    }
	    set keep [expr {$w > 0}]
	}
	if {$keep} {
	    if {$i == 0 || $isThread} {
		set here ""
	    } elseif {$isSet} {
		set here [PackedPath $step $up $i $cnt $anc cut]
	    } else {
		if {![info exists p]} {
		    set p [PackedPath $step $up $i $cnt $anc cut]
		}
		set here [lindex $venc $f]$p
	    }
	    append samples [Bytes 2 [Bytes 1 $here][Bytes 2 $values]$label]
	}
	if {$i > 0 && !$isThread && !$isSet} {
	    set caller [lindex $fname $f]
	    foreach c $ks {
		set loc $f
		if {$hasLines && [info exists callerL($c)]} {
		    # The caller at its busiest line for this callee.
		    set most -1
		    foreach {file line w} $callerL($c) {
			if {$w > $most} {
			    set most $w
			    set loc [CLoc $f $file $line]
			}
		    }
		} elseif {[dict size $lineOf] && [lindex $fkind $f] eq "tcl"} {
		    set key $caller\u0000[lindex $fname [lindex $fid $c]]
		    if {[dict exists $lineOf $key]} {
			set line [dict get $lineOf $key]
			if {![dict exists $locLine $f,$line]} {
			    dict set locLine $f,$line [incr nextLoc]
			    lappend venc [Varint $nextLoc]
			    append locations [Bytes 4 [Field 1 $nextLoc][Bytes 4 \
				    [Field 1 $f][Field 2 $line]]]
			}
			set loc [dict get $locLine $f,$line]
		    }
		}
		lset step $c [lindex $venc $loc]
		lset up $c $i
		set k [expr {[lindex $cnt $i] + 1}]
		lset cnt $c $k
		lset anc $c [expr {$k == $outer ? $c
			: $k > $outer ? [lindex $anc $i] : -1}]
	    }
	}
	incr i
    }

    # The sample types, period, duration, comments.
    if {$memory} {
	set types [list alloc_objects count alloc_space bytes \
		inuse_objects count inuse_space bytes]
	set period 0
	if {[dict exists $meta memory rate]
		&& [string is entier -strict [dict get $meta memory rate]]} {
	    set period [dict get $meta memory rate]
	}
    } elseif {$exact} {
	set types [list calls count time nanoseconds]
    } else {
	set clock [expr {[dict exists $meta clock]
		&& [dict get $meta clock] eq "wall" ? "wall" : "cpu"}]
	set types [list samples count]
	if {$period > 0} {
	    lappend types $clock nanoseconds
	}
    }
    set head ""
    foreach {type unit} $types {
	append head [Bytes 1 [Field 1 [{*}$str $type]][Field 2 [{*}$str $unit]]]
    }
    set tail ""
    if {[dict exists $meta elapsed]
	    && [string is double -strict [dict get $meta elapsed]]
	    && ![catch {expr {max(0, round([dict get $meta elapsed] * 1e9))}} ns]
	    && $ns < 2**63} {
	# (An elapsed time that is no finite number is not used.)
	append tail [Field 10 $ns]
    }
    if {$memory && $period > 0} {
	append tail [Bytes 11 [Field 1 [{*}$str space]][Field 2 [{*}$str bytes]]]
	append tail [Field 12 $period]
    } elseif {!$exact && $period > 0} {
	append tail [Bytes 11 [Field 1 [{*}$str $clock]][Field 2 [{*}$str nanoseconds]]]
	append tail [Field 12 $period]
    }
    append tail [Field 13 [{*}$str [Title $meta]]]
    set doubts [Doubts $meta]
    if {[llength $doubts]} {
	append tail [Field 13 [{*}$str "warning: [join $doubts {, }]"]]
    }
    append tail [Field 14 [{*}$str [lindex $types end-1]]]

    set table ""
    foreach s [dict keys $strings] {
	append table [Bytes 6 [encoding convertto utf-8 $s]]
    }
    return [zlib gzip [encoding convertto iso8859-1 \
	    $head$samples$locations$functions$table$tail]]
}

# PackedPath --
#	The path of node i in Pprof: the steps from it up to the first node
#	without a caller of its own (up -1), innermost first. A path of more
#	than maxStack steps keeps its innermost and outermost ones (cnt and
#	anc: each node's number of steps and its node at 'outer' steps) with
#	one location between them, the frame "[frames not shown]" (see
#	StackCut); cutVar names the caller's {maxStack outer inner cutLoc},
#	cutLoc made at the first cut path.

proc ::tclcprof::exportlib::PackedPath {step up i cnt anc cutVar} {
    upvar 1 $cutVar cut
    lassign $cut maxStack outer inner
    set p ""
    set n [lindex $cnt $i]
    if {$n > $maxStack} {
	for {set k 0} {$k < $inner} {incr k} {
	    append p [lindex $step $i]
	    set i [lindex $up $i]
	}
	append p [CutLocation cut]
	set i [lindex $anc $i]
    }
    for {} {[lindex $up $i] >= 0} {set i [lindex $up $i]} {
	append p [lindex $step $i]
    }
    return $p
}

# CutLocation --
#	In Pprof (two levels up): the packed location of the frame standing
#	for the steps left out of a path, made at first use.

proc ::tclcprof::exportlib::CutLocation {cutVar} {
    upvar 1 $cutVar cut
    if {[lindex $cut 3] eq ""} {
	upvar 2 nextFn nextFn nextLoc nextLoc locations locations \
		functions functions str str strings strings
	set id $nextFn
	incr nextFn
	set name [{*}$str [CutLabel]]
	append functions [Bytes 5 [Field 1 $id][Field 2 $name]]
	set loc [incr nextLoc]
	append locations [Bytes 4 [Field 1 $loc][Bytes 4 [Field 1 $id]]]
	lset cut 3 [Varint $loc]
    }
    lindex $cut 3
}

# --- files ---------------------------------------------------------------

# CheckFile --
#
#	Fail early, before the work, when -file cannot be written: a
#	directory in the way, or no directory to write it in. Errors:
#	TCLCPROF FILE path.

proc ::tclcprof::exportlib::CheckFile {path} {
    set dir [file dirname $path]
    if {[file isdirectory $path]} {
	Fail [list FILE $path] "cannot write \"$path\": it is a directory"
    }
    if {![file isdirectory $dir]} {
	Fail [list FILE $path] "cannot write \"$path\": no directory\
		\"$dir\""
    }
}

# Destination --
#
#	Where an export to path goes: {file target}, a new file renamed
#	over target once complete, where target is path or, for a symbolic
#	link, the end of its chain of links (the file it names is replaced,
#	not the link); or {through path}, to open path and write into it:
#	anything that is not a regular file (a device, a FIFO), and what
#	is in /proc or links there (such as /dev/stdout and /dev/fd/1),
#	which names open files rather than paths. Errors: TCLCPROF FILE
#	path (a directory, a loop of links).

proc ::tclcprof::exportlib::Destination {path} {
    set p $path
    for {set hops 0} {$hops < 40} {incr hops} {
	if {[string match /proc/* [file normalize $p]]} {
	    return [list through $path]
	}
	if {[catch {file lstat $p st}]} {
	    # Nothing there yet.
	    return [list file $p]
	}
	switch -- $st(type) {
	    file {
		return [list file $p]
	    }
	    directory {
		Fail [list FILE $path] "cannot write \"$path\": it is a\
			directory"
	    }
	    link {
	    }
	    default {
		return [list through $path]
	    }
	}
	if {[catch {file readlink $p} to]} {
	    Fail [list FILE $path] "cannot write \"$path\": $to"
	}
	set p [file join [file dirname $p] $to]
    }
    Fail [list FILE $path] "cannot write \"$path\": too many levels of\
	    symbolic links"
}

# WriteFile --
#
#	Write data to path: text in UTF-8, binary data as bytes. A regular
#	file (or the one a symbolic link leads to) is written whole or not
#	at all: into a new file in its directory, renamed over it once
#	complete; a file that exists keeps its permissions, a new one is
#	readable by all (0644). Anything else is written through, opened as
#	it is (see Destination). Errors: TCLCPROF FILE path (a regular file
#	is left as it was).

proc ::tclcprof::exportlib::WriteFile {path data binary} {
    CheckFile $path
    lassign [Destination $path] how target
    if {$how eq "through"} {
	WriteThrough $path $data $binary
	return
    }
    set dir [file dirname $target]
    if {[catch {file tempfile tmp [file join $dir .[file tail $target]]} chan]} {
	Fail [list FILE $path] "cannot write \"$path\": $chan"
    }
    try {
	Encode $chan $binary
	puts -nonewline $chan $data
	close $chan
	set chan ""
	set mode 0644
	if {[file exists $target]
		&& ![catch {file attributes $target -permissions} m]} {
	    set mode $m
	}
	catch {file attributes $tmp -permissions $mode}
	file rename -force $tmp $target
    } on error {msg} {
	if {$chan ne ""} {
	    catch {close $chan}
	}
	catch {file delete $tmp}
	Fail [list FILE $path] "cannot write \"$path\": $msg"
    }
    return
}

# WriteThrough --
#	Write data into a device or a FIFO (which must exist), as WriteFile
#	would into a file. A full device (/dev/full) is an error.

proc ::tclcprof::exportlib::WriteThrough {path data binary} {
    if {[catch {open $path {WRONLY TRUNC}} chan]} {
	Fail [list FILE $path] "cannot write \"$path\": $chan"
    }
    try {
	Encode $chan $binary
	puts -nonewline $chan $data
	flush $chan
    } on error {msg} {
	# The channel is closed even when its last flush fails.
	catch {close $chan}
	Fail [list FILE $path] "cannot write \"$path\": $msg"
    }
    if {[catch {close $chan} msg]} {
	Fail [list FILE $path] "cannot write \"$path\": $msg"
    }
    return
}

proc ::tclcprof::exportlib::Encode {chan binary} {
    if {$binary} {
	chan configure $chan -translation binary
    } else {
	chan configure $chan -encoding utf-8 -translation lf
    }
}
