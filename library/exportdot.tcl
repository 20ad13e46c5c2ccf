# exportdot.tcl --
#
#	export -format dot: the call graph of a profile in Graphviz's
#	language. One node per frame (a Tcl command or a C function, all
#	its call paths merged), labelled with its self and total cost; one
#	edge per caller -> callee pair, labelled with the calls (an exact
#	tree) or the weight (a sampled tree) that went that way. Tcl and C
#	frames are drawn apart (Tcl: boxes, C: rounded and shaded), procs
#	grouped in clusters by namespace and C functions by module. Nodes
#	below -min percent of the whole are left out, and edges below a
#	fifth of that, as pprof's node and edge fractions do.
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::exportlib {}

# DotString --
#	A string as a Graphviz quoted string (backslashes and quotes
#	escaped, control characters as spaces).

proc ::tclcprof::exportlib::DotString {s} {
    set s [string map [list \\ \\\\ \" \\\" \n \\n] $s]
    return "\"[regsub -all {[\x00-\x1f\x7f]} $s { }]\""
}

# DotCost --
#	A cost as a label shows it: durations for an exact tree, weights
#	(samples) otherwise.

proc ::tclcprof::exportlib::DotCost {exact w} {
    if {$exact} {
	return [Dur $w]
    }
    return [Weight $w]
}

# DotGroup --
#	The cluster of a frame: a proc's namespace ("::" for global ones),
#	a C function's module; "" for none (other kinds).

proc ::tclcprof::exportlib::DotGroup {t f} {
    set name [lindex [dict get $t fname] $f]
    switch -- [lindex [dict get $t fkind] $f] {
	c {
	    return [FrameAttr $t $f module]
	}
	tcl {
	    if {[string match ::* $name] && [FrameAttr $t $f tclkind]
		    in {proc {}}} {
		set ns [namespace qualifiers $name]
		return [expr {$ns eq "" ? "::" : $ns}]
	    }
	}
    }
    return ""
}

# Dot --
#
#	The graph, as text. minPct: -min (percent of the whole).
#
# Results:
#	A "digraph" in the dot language.

proc ::tclcprof::exportlib::Dot {t minPct} {
    Unpack $t exact fid self total kids fig fname fkind
    set nf [llength $fname]
    set whole [lindex $total 0]
    set div [expr {$whole > 0 ? double($whole) : 1.0}]

    # Per frame: self, and total counted once per path (a frame below
    # itself, recursion, adds nothing more), by a depth-first walk that
    # knows which frames are on the path.
    # Edges between frames (caller callee): the calls (exact) and the
    # callee's total, counted, as a frame's is, only where the callee is
    # not already on the path above.
    set callsOf [lmap f $fig {
	expr {$exact && [llength $f] ? [lindex $f 0] : 0}
    }]
    set fself [lrepeat $nf 0]
    set ftotal [lrepeat $nf 0]
    set onPath [lrepeat $nf 0]
    # The stack's top is element sp-1: popping only moves sp, as taking
    # the last element off a list copies the rest in Tcl 8.6 (a chain
    # 100,000 deep took 20 s).
    set stack [list [list 0 0 -1]]
    set sp 1
    while {$sp > 0} {
	lassign [lindex $stack $sp-1] node visited parent
	set f [lindex $fid $node]
	if {$visited} {
	    incr sp -1
	    if {$node != 0} {
		lset onPath $f [expr {[lindex $onPath $f] - 1}]
	    }
	    continue
	}
	lset stack $sp-1 1 1
	if {$node != 0} {
	    set outer [expr {[lindex $onPath $f] == 0}]
	    set w [expr {$outer ? [lindex $total $node] : 0}]
	    lset fself $f [expr {[lindex $fself $f] + [lindex $self $node]}]
	    lset ftotal $f [expr {[lindex $ftotal $f] + $w}]
	    lset onPath $f [expr {[lindex $onPath $f] + 1}]
	    if {$parent > 0} {
		set key "[lindex $fid $parent] $f"
		if {![info exists ew($key)]} {
		    set ew($key) 0
		    set en($key) 0
		}
		set ew($key) [expr {$ew($key) + $w}]
		set en($key) [expr {$en($key) + [lindex $callsOf $node]}]
	    }
	}
	foreach c [lindex $kids $node] {
	    if {$sp < [llength $stack]} {
		lset stack $sp [list $c 0 $node]
	    } else {
		lappend stack [list $c 0 $node]
	    }
	    incr sp
	}
    }

    # What is shown: frames of at least -min percent of the whole, edges
    # of at least a fifth of that between shown frames.
    set nodeMin [expr {$minPct / 100.0 * $whole}]
    set edgeMin [expr {$nodeMin / 5.0}]
    set shown {}
    for {set f 1} {$f < $nf} {incr f} {
	if {[lindex $ftotal $f] > 0 && [lindex $ftotal $f] >= $nodeMin} {
	    dict set shown $f 1
	}
    }

    set title [Title [dict get $t meta]]
    set out [list "digraph tclcprof \{"]
    lappend out "  label=[DotString "$title\nnodes below\
	    [format %g $minPct]% of [DotCost $exact $whole] left out"];\
	    labelloc=t; fontname=\"Helvetica\";"
    lappend out "  node \[fontname=\"Helvetica\", shape=box\];"
    lappend out "  edge \[fontname=\"Helvetica\"\];"

    # Nodes, in clusters: their font grows with their self share, as
    # pprof's do; C functions rounded and shaded.
    set groups {}
    foreach f [dict keys $shown] {
	dict lappend groups [DotGroup $t $f] $f
    }
    set g 0
    foreach group [lsort [dict keys $groups]] {
	set indent "  "
	if {$group ne ""} {
	    lappend out "  subgraph cluster_[incr g] \{"
	    lappend out "    label=[DotString $group]; style=dashed;\
		    color=\"#999999\";"
	    set indent "    "
	}
	foreach f [dict get $groups $group] {
	    set s [lindex $fself $f]
	    set tt [lindex $ftotal $f]
	    set label "[lindex $fname $f]\n"
	    append label "self [DotCost $exact $s]\
		    ([format %.1f [expr {100.0 * $s / $div}]]%)\n"
	    append label "total [DotCost $exact $tt]\
		    ([format %.1f [expr {100.0 * $tt / $div}]]%)"
	    set size [expr {8 + round(24.0 * $s / $div)}]
	    set attrs "label=[DotString $label], fontsize=$size"
	    switch -- [lindex $fkind $f] {
		c {
		    append attrs ", style=\"rounded,filled\",\
			    fillcolor=\"#dde7f3\", tooltip=\"C\""
		}
		tcl {
		    append attrs ", style=filled, fillcolor=\"#f5e6c8\",\
			    tooltip=\"Tcl\""
		}
		default {
		    append attrs ", style=dotted,\
			    tooltip=[DotString [lindex $fkind $f]]"
		}
	    }
	    lappend out "${indent}f$f \[$attrs\];"
	}
	if {$group ne ""} {
	    lappend out "  \}"
	}
    }

    # Edges, heaviest widest.
    foreach key [lsort -dictionary [array names ew]] {
	lassign $key a b
	if {![dict exists $shown $a] || ![dict exists $shown $b]} {
	    continue
	}
	if {$ew($key) <= 0 || $ew($key) < $edgeMin} {
	    # Recursion (its cost is already the outer call's) shows with
	    # its calls; anything else below the limit goes.
	    if {!($exact && $en($key) > 0 && $ew($key) == 0)} {
		continue
	    }
	}
	if {$exact} {
	    set label "[expr {$en($key) == 1 ? "1 call"
		    : "$en($key) calls"}]"
	    if {$ew($key) > 0} {
		append label "\n[DotCost $exact $ew($key)]"
	    }
	} else {
	    set label [DotCost $exact $ew($key)]
	}
	set width [format %.2f [expr {1 + 4.0 * $ew($key) / $div}]]
	lappend out "  f$a -> f$b \[label=[DotString $label],\
		penwidth=$width\];"
    }
    lappend out "\}"
    return "[join $out \n]\n"
}
