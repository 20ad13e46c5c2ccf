# exportpprof.tcl --
#
#	export -format pprof: the gzipped protocol buffer of go tool pprof
#	(profile.proto), encoded by hand: varints, fields, locations with
#	their lines, samples by stack.
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::exportlib {}

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
#	caller. A memory profile has Go's four sample types; its default
#	one (what go tool pprof shows without -sample_index) follows the
#	view asked for (memView, export's -view): alloc_space for alloc,
#	as Go's /debug/pprof/allocs; inuse_space otherwise, as Go's heap.

proc ::tclcprof::exportlib::Pprof {t profile {memView {}}} {
    Unpack $t meta exact fid fname fkind self fig kids

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
    set ffile [FrameFiles $t $files]
    set functions ""
    for {set f 1} {$f < [llength $fname]} {incr f} {
	set name [lindex $fname $f]
	set kind [lindex $fkind $f]
	set file [lindex $ffile $f]
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
    set default [lindex $types end-1]
    if {$memory && $memView eq "alloc"} {
	set default alloc_space
    }
    append tail [Field 14 [{*}$str $default]]

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
