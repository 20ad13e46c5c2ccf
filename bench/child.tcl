# child.tcl --
#
#	The parts of the tclcprof benchmarks that run in a process of their
#	own, started by bench/run.tcl. Each prints one Tcl dict (or, for
#	peer, a number of seconds) as the last line of its standard output.
#
#	tclsh child.tcl peer WORKLOAD N WITH
#		Run one workload of workloads.tcl once at size N, with
#		tcllib's profiler when WITH is 1 (it instruments procs
#		defined after profiler::init, and for good, hence a
#		process); print the seconds the run took.
#	tclsh child.tcl memory SECONDS
#		Sample a changing workload at the default rate for SECONDS
#		and report VmRSS and VmHWM (/proc/self/status) before
#		starting and at 1/12, 1/2 and all of SECONDS (5, 30 and 60 s
#		for 60), with the profile's size.
#	tclsh child.tcl save DISTINCT SAMPLES DIR
#		Two live sampled runs (wall clock, 10 kHz), each saved
#		with tclcprof::save to a new file in DIR: one of random
#		deep stacks, until it has about DISTINCT distinct stacks
#		(DISTINCT / 0.65 samples); one of a fixed program (a few
#		thousand distinct stacks) until it has SAMPLES samples. Reports, for each, the time of the text reports
#		(tree, flat) of the live profile, of save, the file's size
#		and the time to read the run back (tclcprof::data -db).
#
# Copyright (c) 2026 The tclcprof authors.
# See the file "LICENSE" for terms of use.

set here [file dirname [file normalize [info script]]]
set cbLib [file join [expr {[info exists env(TCLCPROF_BUILDDIR)]
    ? $env(TCLCPROF_BUILDDIR) : "."}] libcbtest[info sharedlibextension]]
set haveCb [expr {[file exists $cbLib] && ![catch {load $cbLib Cbtest}]}]

proc seconds {script} {
    set t [clock microseconds]
    uplevel 1 $script
    expr {([clock microseconds] - $t) / 1e6}
}

proc procStatus {} {
    set f [open /proc/self/status]
    set text [read $f]
    close $f
    set d {}
    foreach key {VmRSS VmHWM} {
	if {[regexp -line "^$key:\\s+(\\d+) kB" $text -> kb]} {
	    dict set d [string tolower $key]_mib [format %.1f [expr {$kb / 1024.0}]]
	}
    }
    return $d
}

# --- random deep stacks ----------------------------------------------------
#
# K procs ::rp0 ... that call each other: at depth j a proc calls one of
# the first 2 + 4 j^2 procs (at most K), so stacks share their first
# frames and little else, as a large program's do. Leaves do a little
# string work, and every few leaves some C work (cbtest), sometimes under
# extra C frames. 'phase' shifts the vocabulary: a changing workload.

proc makeProcs {k} {
    global K leafWork
    set K $k
    set leafWork 0
    for {set i 0} {$i < $k} {incr i} {
	proc ::rp$i {j max phase} [string map [list @I@ $i] {
	    if {$j >= $max} {
		return [leaf @I@]
	    }
	    [pick $j $phase] [expr {$j + 1}] $max $phase
	}]
    }
}

proc makeTree {k} {
    for {set i 0} {$i < $k} {incr i} {
	set callees [lmap c {1 2 3} {expr {($i * 3 + $c) % $k}}]
	proc ::tp$i {j max} [string map [list @I@ $i @C@ $callees] {
	    if {$j >= $max} {
		return [leaf @I@]
	    }
	    tp[lindex {@C@} [expr {int(rand() * 3)}]] [expr {$j + 1}] $max
	}]
    }
}

proc pick {j phase} {
    global K
    set w [expr {min($K, 2 + 4 * $j * $j)}]
    return ::rp[expr {(int(rand() * $w) + $phase * $j) % $K}]
}

proc leaf {i} {
    global haveCb leafWork
    set x [string repeat ab [expr {$i % 40}]]
    for {set k 0} {$k < $leafWork} {incr k} {
	append x [string range $x 0 $k]
    }
    if {$haveCb && $i % 4 == 0} {
	if {$i % 8 == 0} {
	    cbtest::nest [expr {$i % 5}] {cbtest::work 3}
	} else {
	    cbtest::work 3
	}
    }
    string length $x
}

# One burst of random stacks, depths 4 to 19.
proc burst {n phase} {
    for {set b 0} {$b < $n} {incr b} {
	rp0 0 [expr {4 + int(rand() * 16)}] $phase
    }
}

proc countStacks {node} {
    set n [expr {[dict get $node self] > 0}]
    foreach c [dict get $node children] {
	incr n [countStacks $c]
    }
    return $n
}

# --- the modes -------------------------------------------------------------

proc child_peer {wname n with} {
    global here haveCb
    if {$with} {
	package require profiler
	::profiler::init
    }
    source [file join $here workloads.tcl]
    foreach {name desc wproc size needsCb} $::bench::workloads {
	if {$name eq $wname} {
	    set t [seconds {$wproc $n}]
	    puts $t
	    return
	}
    }
    error "no workload $wname"
}

proc child_memory {secs} {
    package require tclcprof
    expr {srand(7)}
    makeProcs 2000
    burst 200 0
    set result [dict create seconds $secs before [procStatus]]
    set checkpoints [list [expr {$secs / 12.0}] [expr {$secs / 2.0}] $secs]
    tclcprof::start -mode sample
    set t0 [clock milliseconds]
    set phase 0
    foreach cp $checkpoints {
	while {[clock milliseconds] - $t0 < $cp * 1000} {
	    burst 20 $phase
	    if {[incr tick] % 50 == 0} {
		incr phase
	    }
	}
	set s [dict get [tclcprof::status] sampling]
	dict set result at[format %.3g $cp] [dict merge [procStatus] \
	    [dict create samples [dict get $s samples] \
		nodes [dict get $s nodes]]]
    }
    tclcprof::stop
    dict set result names [tclcprof::debug names]
    dict set result drops [dict get [tclcprof::status] sampling drops]
    puts $result
}

# A live run sampled at 10 kHz wall clock until it has 'target' samples
# (at most 'limit' seconds), then its reports, save and read-back timed.
proc liveRun {target limit file body} {
    tclcprof::start -mode sample -clock wall -rate 10000
    set t0 [clock milliseconds]
    while {1} {
	uplevel 1 $body
	set s [dict get [tclcprof::status] sampling]
	if {[dict get $s samples] >= $target
		|| [clock milliseconds] - $t0 > $limit * 1000} {
	    break
	}
    }
    set elapsed [expr {([clock milliseconds] - $t0) / 1e3}]
    tclcprof::stop
    set s [dict get [tclcprof::status] sampling]
    set null [open /dev/null w]
    set r [dict create run_s $elapsed samples [dict get $s samples] \
	weight [dict get $s weight] nodes [dict get $s nodes] \
	rate_achieved [dict get $s rate_achieved]]
    dict set r report_tree_s [seconds {tclcprof::report -channel $null}]
    dict set r report_flat_s [seconds {
	tclcprof::report -type flat -channel $null}]
    close $null
    dict set r distinct_stacks [countStacks [dict get [tclcprof::data] tree]]
    dict set r save_s [seconds {set id [tclcprof::save $file]}]
    set size 0
    foreach f [glob -nocomplain $file $file-wal] {
	incr size [file size $f]
    }
    dict set r file_mib [format %.1f [expr {$size / 1048576.0}]]
    dict set r readback_s [seconds {tclcprof::data -db $file -run $id}]
    return $r
}

proc child_save {distinct samples dir} {
    package require tclcprof
    expr {srand(11)}
    makeProcs 400
    set leafWork 6
    burst 50 0
    set result {}
    # About two samples in three fall on a stack not seen before.
    dict set result distinct [liveRun [expr {int($distinct / 0.65)}] \
	[expr {$distinct / 2000}] \
	[file join $dir distinct.db] {burst 20 0}]

    # A fixed program: 60 procs, each calling one of three others, 6 to 9
    # deep: a few thousand distinct stacks.
    makeTree 60
    tp0 0 6
    dict set result samples [liveRun $samples [expr {$samples / 2000}] \
	[file join $dir samples.db] {
	    for {set b 0} {$b < 20} {incr b} {
		tp0 0 [expr {6 + $b % 4}]
	    }
	}]
    puts $result
}

set mode [lindex $argv 0]
child_$mode {*}[lrange $argv 1 end]
exit 0
