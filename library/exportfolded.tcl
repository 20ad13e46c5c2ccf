# exportfolded.tcl --
#
#	export -format folded: one line per stack, frames joined by ';',
#	with its weight (flamegraph.pl, inferno, speedscope).
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::exportlib {}

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
