# export.tcl --
#
#	tclcprof::export: a profile value in the file formats of other
#	tools: folded stacks (flamegraph.pl, inferno, speedscope), speedscope
#	JSON, Chrome trace events (chrome://tracing, Perfetto), callgrind
#	(KCachegrind, callgrind_annotate), pprof (go tool pprof), Graphviz
#	dot and a self-contained interactive HTML flame graph.
#
#	The profile is read and checked as report reads it
#	(reportlib::Flatten): the tree laid out breadth first in lists
#	indexed by node id, each node's children contiguous. Every format
#	works from those lists in a few linear passes, without recursion,
#	so that profiles of a million nodes export in seconds. Distinct
#	frames (name and kind) are numbered once; names are escaped once per
#	frame, not once per node.
#
#	This file holds the command: its options, the base profile of a
#	differential flame graph, the dispatch by -format and the tree a
#	format exports (-view). Each format has a file of its own,
#	export<format>.tcl (folded, speedscope, chrome, callgrind, pprof,
#	dot, html); what they share is in exportstacks.tcl (the tree laid
#	out, stacks, weights, labels and escapes) and exportfile.tcl
#	(-file). All of them define procs of ::tclcprof::exportlib.
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
	-format -from -label -min -normalize -run -thread -to -view}
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
    # -label, -by (labels.tcl); -from, -to (timeline.tcl).
    LabelOptions $o
    TimeOptions $o
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
    # -from and -to (timeline.tcl); -thread, and the frames of other
    # interpreters named (threads.tcl); -label and -by (labels.tcl).
    set profile [Labels $o [Threads $o [TimeRange $o $profile]]]
    set t [Load $profile [TreeKey $o $profile $format]]
    if {$format eq "html"} {
	set t [TimelineData $t $profile [TreeKey $o $profile $format]]
    }
    switch -- $format {
	folded {return [Folded $t]}
	speedscope {return [Speedscope $t $profile]}
	callgrind {return [Callgrind $t $profile]}
	pprof {
	    return [Pprof $t $profile [expr {[dict exists $o memView]
		    ? [dict get $o memView] : ""}]]
	}
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
