# reportcomponents.tcl --
#
#	report -type components: the connected components of the call
#	graph (frames joined when one calls the other), heaviest first.
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::reportlib {}

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
