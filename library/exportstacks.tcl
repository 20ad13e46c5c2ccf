# exportstacks.tcl --
#
#	What the formats of export share: the profile's tree laid out for
#	them (Load), its frames' attributes, stacks (Paths, cut to at most
#	maxStack frames), parents and thread roots, weights, frame labels
#	and their escapes (folded, callgrind, JSON), the title of a
#	profile, and the call sites of an exact profile (SiteLines).
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::exportlib {}

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

# Unpack --
#	Keys of a Load dict t, each set in the caller's variable of its name.

proc ::tclcprof::exportlib::Unpack {t args} {
    foreach key $args {
	upvar 1 $key value
	set value [dict get $t $key]
    }
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

# FrameFiles --
#
#	The file each frame of the tree is shown in: a C function's module;
#	a Tcl frame's file of its calls when files (of SiteLines) knows it,
#	else the frame's own file attribute (FrameAttr, for all frames in
#	one pass).

proc ::tclcprof::exportlib::FrameFiles {t files} {
    set nodes [dict get $t node]
    set out {}
    foreach name [dict get $t fname] kind [dict get $t fkind] \
	    n [dict get $t fnode] {
	if {$kind eq "tcl" && [dict exists $files $name]} {
	    lappend out [dict get $files $name]
	    continue
	}
	set key [expr {$kind eq "c" ? "module" : "file"}]
	set node [lindex $nodes $n]
	lappend out [expr {[dict exists $node $key] ? [dict get $node $key]
		: ""}]
    }
    return $out
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
    if {$cutLabel eq ""} {
	set cutLabel [CutLabel]
    }
    # The outer part of cut stacks, joined, per anchor: the stacks below
    # one anchor (a deep recursion's) all share it.
    set outerPart {}
    set out {}
    set i 0
    foreach s [dict get $t self] {
	if {$i > 0 && $s > 0} {
	    set stack {}
	    set n $i
	    if {[lindex $depth $i] > $maxStack} {
		for {set k 0} {$k < $inner} {incr k} {
		    lappend stack [lindex $labels [lindex $fid $n]]
		    set n [lindex $up $n]
		}
		set a [lindex $anchor $i]
		if {![dict exists $outerPart $a]} {
		    set o {}
		    for {set n $a} {$n > 0} {set n [lindex $up $n]} {
			lappend o [lindex $labels [lindex $fid $n]]
		    }
		    dict set outerPart $a [join [lreverse $o] $sep]$sep$cutLabel
		}
		lappend out [dict get $outerPart $a]$sep[join [lreverse $stack] $sep] $s
	    } else {
		for {} {$n > 0} {set n [lindex $up $n]} {
		    lappend stack [lindex $labels [lindex $fid $n]]
		}
		lappend out [join [lreverse $stack] $sep] $s
	    }
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
