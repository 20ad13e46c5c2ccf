# exportspeedscope.tcl --
#
#	export -format speedscope: speedscope's JSON file format, a
#	sampled profile per thread, with the events of an exact one.
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::exportlib {}

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
    set ffile [FrameFiles $t $files]
    set frames {}
    set index {}
    set f 0
    foreach name [dict get $t fname] kind [dict get $t fkind] {
	if {$f > 0} {
	    set json "\{\"name\":[JsonString [Label $name $kind]]"
	    set file [lindex $ffile $f]
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
