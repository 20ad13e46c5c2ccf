# exportcallgrind.tcl --
#
#	export -format callgrind: the callgrind format of KCachegrind and
#	callgrind_annotate, with Tcl and C source lines and call sites.
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::exportlib {}

# Callgrind --
#
#	The callgrind format of KCachegrind and callgrind_annotate: one
#	function per frame with its self cost, and per callee a call with
#	its count and inclusive cost. Exact trees: costs in ns, true call
#	counts, calls placed at the lines they were made from when the
#	profile has call sites (-lines 1). Sampled trees: costs in samples,
#	and the "calls" of a callee are the samples that saw the call.

proc ::tclcprof::exportlib::Callgrind {t profile} {
    Unpack $t meta exact fid self total fig fname fkind
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
