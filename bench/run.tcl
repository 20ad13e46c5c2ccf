# run.tcl --
#
#	tclcprof's benchmarks (make bench; bench/README tells how to read
#	them). Prints tables on stdout and, with -out, writes the same
#	figures as a Tcl dict (bench/compare.tcl compares two such files).
#
#	 1. Slowdown: each workload of workloads.tcl (about a second
#	    unprofiled) runs unprofiled and under each configuration (the
#	    default capture, wrap, and for comparison Tcl's trace, -capture
#	    trace, in sample and exact mode), all
#	    interleaved round by round (the order rotating), so that machine
#	    noise hits all of them alike; the figure is the median over the
#	    rounds of time / unprofiled time of the same round. Time is the
#	    process's CPU time (every thread's: the profiler's own included)
#	    of the run and its stop (which drains what the run left), not
#	    its start: what a process pays once (symbol tables) is paid by a
#	    warm-up before the rounds. tcllib's
#	    profiler, the usual pure-Tcl profiler, is the peer: it redefines
#	    proc for good, so it runs in child processes, with and without
#	    it, at 1/-peerdiv of the size.
#	 2. Capture cost per captured command: (time - unprofiled time) /
#	    the number of commands the level stack sees in one run.
#	 3. -db while running: sample and exact mode writing a profile
#	    database, staged (every 5 s, and every 200 ms) and direct.
#	 4. Exact mode's compensated total against the unprofiled time.
#	 5. The signal handler's time per sample at native depths ~20 and
#	    ~60, and under Tcl procs 10, 100 and 1000 deep (tclcprof::status,
#	    sampling handler).
#	 6. Memory over a long run, and 7. saving live profiles: in child
#	    processes (bench/child.tcl), run side by side.
#	 8. Reports of large synthetic sampled profiles.
#	 9. Distortion: a program whose Tcl part (small proc calls) and C
#	    part take the same time unprofiled: the Tcl share a sampled
#	    profile reports, per capture, against the unprofiled share.
#	    And the capture's cost per call of a proc, a C command, a TclOO
#	    method and a coroutine resume, in ns.
#	10. Targets, each passed or failed.
#
#	Usage: tclsh run.tcl ?option value ...?
#	    -rounds N		rounds of the interleaved measurements (5)
#	    -scale F		workload size factor (1: about 1 s each)
#	    -only PATTERN	workloads to run (glob; default *)
#	    -configs PATTERNS	configurations of section 1 to run (a list
#				of globs; default *; the unprofiled base
#				always)
#	    -sections LIST	of: workloads handler children reports
#				distortion (default all)
#	    -peer 0|1		measure tcllib's profiler if installed (1)
#	    -peerrounds N	rounds with the peer (3)
#	    -peerdiv N		the peer runs at 1/N of the size (25)
#	    -dbworkloads PAT	workloads measured with -db too (calls-loop)
#	    -memseconds N	length of the memory run (60)
#	    -savedistinct N	distinct stacks of the first saved run (1e5)
#	    -savesamples N	samples of the second saved run (1e6)
#	    -quick 0|1		a short run (about a minute): 3 rounds,
#				scale 0.1, 10 s of memory run, smaller saves
#	    -out FILE		write the results there as a Tcl dict
#				(default bench-results.tcl; "" for none)
#
# Copyright (c) 2026 The tclcprof authors.
# See the file "LICENSE" for terms of use.

package require tclcprof

set here [file dirname [file normalize [info script]]]
set defaults {-rounds 5 -scale 1.0 -only * -peer 1 -peerrounds 3
    -peerdiv 25 -dbworkloads calls-loop -memseconds 60 -savedistinct 100000
    -savesamples 1000000 -quick 0 -out bench-results.tcl
    -sections {workloads handler children reports distortion} -configs *}
if {[llength $argv] % 2} {
    puts stderr "usage: tclsh run.tcl ?option value ...?"
    exit 2
}
foreach {k v} $argv {
    if {![dict exists $defaults $k]} {
	puts stderr "run.tcl: unknown option $k; options: [dict keys $defaults]"
	exit 2
    }
}
if {[dict exists $argv -quick] && [dict get $argv -quick]} {
    set defaults [dict merge $defaults {-rounds 3 -scale 0.1 -peerrounds 1
	-memseconds 10 -savedistinct 20000 -savesamples 100000}]
}
set opts [dict merge $defaults $argv]
set rounds [dict get $opts -rounds]
set scale [dict get $opts -scale]
set sections [dict get $opts -sections]
set buildDir [expr {[info exists env(TCLCPROF_BUILDDIR)]
    ? $env(TCLCPROF_BUILDDIR) : [pwd]}]

# The cbtest helper (tests/cbtest.c): C commands for the C-heavy workload
# and the handler's depth, and an empty object trace with tclcprof's
# flags: the cost of Tcl's trace machinery alone.
set cbLib [file join $buildDir libcbtest[info sharedlibextension]]
set haveCb [expr {[file exists $cbLib] && ![catch {load $cbLib Cbtest}]}]

source [file join $here workloads.tcl]

set tmpDir [file join [expr {[info exists env(TMPDIR)] ? $env(TMPDIR)
    : "/tmp"}] tclcprof-bench-[pid]]
file mkdir $tmpDir

# --- helpers ---------------------------------------------------------------

proc median {l} {
    set l [lsort -real $l]
    set n [llength $l]
    if {$n == 0} {
	return 0
    }
    if {$n % 2} {
	return [lindex $l [expr {$n / 2}]]
    }
    expr {([lindex $l [expr {$n/2 - 1}]] + [lindex $l [expr {$n/2}]]) / 2.0}
}

proc timeit {script} {
    set t0 [clock microseconds]
    uplevel #0 $script
    expr {([clock microseconds] - $t0) / 1e6}
}

# cputime script -- the process's CPU time (every thread's, the
# profiler's included) taken by script, in seconds; its wall time where
# the test extension (cbtest::cputime) is not built.
proc cputime {script} {
    if {![llength [info commands cbtest::cputime]]} {
	return [timeit $script]
    }
    set t0 [cbtest::cputime process]
    uplevel #0 $script
    expr {([cbtest::cputime process] - $t0) / 1e6}
}

proc loadavg {} {
    set f [open /proc/loadavg]
    set l [lrange [read $f] 0 2]
    close $f
    return $l
}

proc readFile {path} {
    set f [open $path]
    set text [read $f]
    close $f
    return $text
}

# Print rows (lists) as a table: the first row is the header; columns
# after the first are right-aligned.
proc table {rows {indent "  "}} {
    set widths {}
    foreach row $rows {
	set i 0
	foreach cell $row {
	    set w [string length $cell]
	    if {$i >= [llength $widths]} {
		lappend widths $w
	    } elseif {$w > [lindex $widths $i]} {
		lset widths $i $w
	    }
	    incr i
	}
    }
    foreach row $rows {
	set line $indent
	set i 0
	foreach cell $row {
	    set w [lindex $widths $i]
	    if {$i == 0} {
		append line [format "%-*s" $w $cell]
	    } else {
		append line [format "  %*s" $w $cell]
	    }
	    incr i
	}
	puts [string trimright $line]
    }
}

proc x {ratio} {
    if {$ratio eq ""} {
	return -
    }
    format [expr {$ratio >= 10 ? "%.0fx" : "%.2fx"}] $ratio
}

# The first node named 'name' in a profile's tree, breadth first; or "".
proc findNode {tree name} {
    set level [list $tree]
    while {[llength $level]} {
	set next {}
	foreach node $level {
	    if {[dict get $node name] eq $name} {
		return $node
	    }
	    lappend next {*}[dict get $node children]
	}
	set level $next
    }
    return ""
}

# The outermost nodes named 'name' below node.
proc findNodes {node name} {
    set out {}
    foreach c [dict get $node children] {
	if {[dict get $c name] eq $name} {
	    lappend out $c
	} else {
	    lappend out {*}[findNodes $c $name]
	}
    }
    return $out
}

# 1234 -> 1234, 56789 -> 57k, 1234567 -> 1.2M
proc count {n} {
    if {$n >= 1e6} {
	return [format %.1fM [expr {$n / 1e6}]]
    } elseif {$n >= 1e4} {
	return [format %.0fk [expr {$n / 1e3}]]
    }
    return $n
}

proc heading {text} {
    puts ""
    puts $text
}

# The size of a workload run at a given scale. fib's size is its argument:
# scale by the golden ratio's powers.
proc sized {wname n factor} {
    if {$wname eq "calls-rec"} {
	return [expr {max(10, $n + int(round(log($factor) / log(1.618034))))}]
    }
    expr {max(1, int($n * $factor))}
}

# --- the machine ------------------------------------------------------------

set cpuModel unknown
regexp -line {^model name\s*:\s*(.*)$} [readFile /proc/cpuinfo] -> cpuModel
set commit ""
catch {set commit [exec git -C $here rev-parse --short HEAD 2>/dev/null]}
set machine [dict create \
    nproc [exec nproc] cpu_model $cpuModel \
    kernel [exec uname -sr] host [info hostname] \
    tcl [info patchlevel] tclcprof [package present tclcprof] \
    commit $commit \
    date [clock format [clock seconds] -format "%Y-%m-%d %H:%M:%S UTC" -gmt 1] \
    loadavg_start [loadavg]]
set settings [dict create rounds $rounds scale $scale quick [dict get $opts -quick] \
    peerdiv [dict get $opts -peerdiv] peerrounds [dict get $opts -peerrounds] \
    memseconds [dict get $opts -memseconds] only [dict get $opts -only]]
set results [dict create format 1 machine $machine settings $settings]

puts "tclcprof [dict get $machine tclcprof] benchmarks, [dict get $machine date]\
    ([expr {$commit ne "" ? "commit $commit" : "no git"}])"
puts "machine: [dict get $machine nproc] CPUs, $cpuModel,\
    [dict get $machine kernel], Tcl [info patchlevel]"
puts "load average at start: [dict get $machine loadavg_start]"
puts "rounds $rounds, workloads at scale $scale (1: about 1 s each unprofiled)"

# --- configurations ---------------------------------------------------------
#
# name, script before the run, script after it. The run is timed alone:
# start and stop are outside the timed region.

set configs [list base {} {}]
if {$haveCb} {
    lappend configs emptytrace {cbtest::emptytrace 1} {cbtest::emptytrace 0}
}
lappend configs \
    stack {tclcprof::start -mode stack} {tclcprof::stop} \
    sample {tclcprof::start -mode sample -clock cpu} {tclcprof::stop} \
    sample-wrap {tclcprof::start -mode sample -clock cpu -capture wrap} \
	{tclcprof::stop} \
    sample-lines {tclcprof::start -mode sample -clock cpu -lines 1} \
	{tclcprof::stop} \
    sample-wall {tclcprof::start -mode sample -clock wall} {tclcprof::stop} \
    exact {tclcprof::start -mode exact} {tclcprof::stop} \
    exact-lines {tclcprof::start -mode exact -lines 1} {tclcprof::stop} \
    coverage {tclcprof::start -mode coverage} {tclcprof::stop} \
    sample-trace {tclcprof::start -mode sample -capture trace} {tclcprof::stop} \
    exact-trace {tclcprof::start -mode exact -capture trace} {tclcprof::stop}
set kept {}
foreach {cname on off} $configs {
    foreach pattern [dict get $opts -configs] {
	if {$cname eq "base" || [string match $pattern $cname]} {
	    lappend kept $cname $on $off
	    break
	}
    }
}
set configs $kept
set dbFile [file join $tmpDir run.db]
set dbOff [list apply {{file} {
    tclcprof::stop
    file delete $file $file-wal $file-shm $file-journal
}} $dbFile]
set dbConfigs {}
foreach mode {sample exact} {
    foreach {suffix extra} {db {} db-200 {-flush 200} db-direct {-commit direct}} {
	lappend dbConfigs $mode+$suffix \
	    [list tclcprof::start -mode $mode -db $dbFile {*}$extra] $dbOff
    }
}
set columns {emptytrace stack sample sample-wrap sample-lines sample-wall
    exact exact-lines coverage sample-trace exact-trace}
set colTitle {emptytrace {empty trace} stack stack sample sample
    sample-wrap {sample wrap}
    sample-lines {sample lines} sample-wall {sample wall} exact exact
    exact-lines {exact lines}
    coverage coverage sample-trace {sample trace} exact-trace {exact trace}}

set havePeer [expr {[dict get $opts -peer]
    && ![catch {exec [info nameofexecutable] << {
	package require profiler; puts ok}}]}]
proc peerTime {wname n with} {
    global here
    lindex [exec [info nameofexecutable] [file join $here child.tcl] \
	peer $wname $n $with] end
}

# Warm up: every configuration once, so that first-start costs (exact
# mode's calibration of its own cost, per clock) fall outside the rounds.
foreach {cname on off} [concat $configs $dbConfigs] {
    uplevel #0 $on
    add 1 2
    uplevel #0 $off
}

# The sections run inside this try (not indented), so that the temporary
# directory is removed whatever happens.
try {

# --- 1-4. workloads ----------------------------------------------------------

set wresults {}
if {"workloads" in $sections} {
    heading "1. Slowdown: median over $rounds rounds of (time / unprofiled time of\
	the same round);\n   time: the process's CPU time (every thread's) of the run\
	and its stop[expr {$haveCb ? {} : { (wall time here: no cbtest)}}]"
    set rows {}
    set costRows {}
    set dbRows {}
    set compRows {}
    foreach {wname wdesc wproc wsize needsCb} $::bench::workloads {
	if {![string match [dict get $opts -only] $wname]
		|| ($needsCb && !$haveCb)} {
	    continue
	}
	set n [sized $wname $wsize $scale]
	set cfgs $configs
	set withDb [string match [dict get $opts -dbworkloads] $wname]
	if {$withDb} {
	    lappend cfgs {*}$dbConfigs
	}
	# Warm up (compile), and count the commands the level stack sees.
	$wproc $n
	tclcprof::start -mode stack
	$wproc $n
	set traced [dict get [tclcprof::status] counters enters]
	tclcprof::stop

	set times {}
	set stops {}
	set accuracy {}
	set ncfg [expr {[llength $cfgs] / 3}]
	for {set r 0} {$r < $rounds} {incr r} {
	    for {set k 0} {$k < $ncfg} {incr k} {
		set i [expr {3 * (($k + $r) % $ncfg)}]
		lassign [lrange $cfgs $i $i+2] cname on off
		uplevel #0 $on
		set t [cputime [list $wproc $n]]
		if {$cname in {exact exact-trace}} {
		    set node [findNode [dict get [tclcprof::data] tree] ::$wproc]
		    if {$node ne ""} {
			dict lappend accuracy $cname \
			    [list [dict get $node total_ns] $r]
		    }
		}
		# The stop's work (the samples not yet drained) counts; its
		# wall time is section 3's figure (a database's final flush
		# waits on the file, which CPU time does not see).
		set w0 [clock microseconds]
		set stop [cputime $off]
		dict lappend stops $cname [expr {([clock microseconds] - $w0) / 1e6}]
		dict lappend times $cname [expr {$t + $stop}]
	    }
	    if {$havePeer && $r < [dict get $opts -peerrounds]} {
		set pn [sized $wname $wsize [expr {$scale / [dict get $opts -peerdiv]}]]
		dict lappend times peer-base [peerTime $wname $pn 0]
		dict lappend times peer [peerTime $wname $pn 1]
	    }
	}
	set base [dict get $times base]
	set ratio {}
	set nsPerCmd {}
	foreach {cname on off} $cfgs {
	    if {$cname eq "base"} {
		continue
	    }
	    dict set ratio $cname [format %.3f [median [lmap t [dict get $times $cname] \
		b $base {expr {$t / $b}}]]]
	    dict set nsPerCmd $cname [format %.0f [median [lmap t [dict get $times $cname] \
		b $base {expr {($t - $b) / $traced * 1e9}}]]]
	}
	set w [dict create desc $wdesc n $n traced $traced \
	    base_s [format %.4f [median $base]] \
	    base_spread [format %.3f [expr {([lindex [lsort -real $base] end] \
		- [lindex [lsort -real $base] 0]) / [median $base]}]] \
	    ratio $ratio ns_per_cmd $nsPerCmd]
	if {$havePeer && [dict exists $times peer]} {
	    dict set w peer [format %.2f [median [lmap t [dict get $times peer] \
		b [dict get $times peer-base] {expr {$t / $b}}]]]
	    dict set w peer_n $pn
	}
	foreach {cname key} {exact exact_accuracy exact-trace exact_accuracy_trace} {
	    if {[dict exists $accuracy $cname]} {
		dict set w $key [format %.3f [median [lmap a \
		    [dict get $accuracy $cname] {
		    expr {[lindex $a 0] / 1e9 / [lindex $base [lindex $a 1]]}}]]]
	    }
	}
	if {$withDb} {
	    foreach {cname on off} $dbConfigs {
		dict set w stop_s $cname [format %.3f [median [dict get $stops $cname]]]
	    }
	}
	dict set wresults $wname $w

	set row [list $wname [format %.3f [median $base]] [count $traced]]
	foreach c $columns {
	    lappend row [expr {[dict exists $ratio $c] ? [x [dict get $ratio $c]] : "-"}]
	}
	lappend row [expr {[dict exists $w peer] ? [x [dict get $w peer]] : "-"}]
	lappend rows $row
	# Only where the trace's cost is well above the noise: at least 1e5
	# traced commands per second.
	if {$traced / [median $base] >= 1e5} {
	    set crow [list $wname]
	    foreach c $columns {
		lappend crow [expr {[dict exists $nsPerCmd $c]
		    ? [dict get $nsPerCmd $c] : "-"}]
	    }
	    lappend costRows $crow
	}
	if {[dict exists $w exact_accuracy]} {
	    lappend compRows [list $wname [format %.2f [dict get $w exact_accuracy]] \
		[expr {[dict exists $w exact_accuracy_trace]
		    ? [format %.2f [dict get $w exact_accuracy_trace]] : "-"}]]
	}
	if {$withDb} {
	    foreach mode {sample exact} {
		set drow [list "$wname $mode" [x [dict get $ratio $mode]]]
		foreach s {db db-200 db-direct} {
		    lappend drow [x [dict get $ratio $mode+$s]]
		}
		foreach s {db db-200 db-direct} {
		    lappend drow [format %.3f [dict get $w stop_s $mode+$s]]
		}
		lappend dbRows $drow
	    }
	}
	puts -nonewline "."
	flush stdout
    }
    puts ""
    set header [list workload {base s} traced]
    foreach c $columns {
	lappend header [dict get $colTitle $c]
    }
    lappend header {tcllib profiler}
    table [linsert $rows 0 $header]
    puts "  base s: unprofiled CPU seconds (median); traced: commands the level stack\
	sees per run;"
    puts "  empty trace: an empty Tcl_CreateObjTrace with tclcprof's flags (the\
	floor of -capture"
    puts "  trace); stack: -mode stack; sample: -clock cpu, sample wall:\
	-clock wall,"
    puts "  both at the default 250 Hz; sample trace, exact trace: -capture trace\
	(the capture before"
    puts "  wrapping); tcllib profiler: [expr {$havePeer
	? "child processes at 1/[dict get $opts -peerdiv] size, median of\
	[dict get $opts -peerrounds] rounds (procs only)" : "not installed"}]."

    heading "2. Capture cost per captured command, ns: (time - unprofiled\
	time) / captured commands\n   (workloads with at least 1e5 captured commands\
	a second)"
    set header [list workload]
    foreach c $columns {
	lappend header [dict get $colTitle $c]
    }
    table [linsert $costRows 0 $header]

    if {[llength $dbRows]} {
	heading "3. -db while running: ratio to unprofiled, and seconds of the final\
	    flush at stop"
	table [linsert $dbRows 0 {run {no db} {staged 5 s} {staged 200 ms}
	    {direct 200 ms} {stop staged} {stop 200 ms} {stop direct}}]
	puts "  staged 5 s: the run is shorter than 5 s, so its only flush is the\
	    one at stop"
    }
    if {[llength $compRows]} {
	heading "4. Exact mode, compensated total of the workload's proc /\
	    unprofiled time (1.00 = exact)"
	table [linsert $compRows 0 {workload {ratio} {ratio, -capture trace}}]
    }
    dict set results workloads $wresults
}

# --- 5. the signal handler ---------------------------------------------------

proc nativeDepth {extra} {
    llength [cbtest::nest $extra {tclcprof::debug cfas}]
}

if {"handler" in $sections && $haveCb} {
    heading "5. Signal handler per sample (status: sampling handler), sampling\
	C code under extra C frames"
    set spinMs [expr {[dict get $opts -quick] ? 500 : 2000}]
    set base [nativeDepth 0]
    set hrows {}
    set hresults {}
    foreach target {20 60} {
	set extra [expr {max(0, $target - $base)}]
	tclcprof::start -mode sample -clock cpu
	cbtest::nest $extra [list cbtest::spin $spinMs]
	set s [dict get [tclcprof::status] sampling]
	tclcprof::stop
	set h [dict get $s handler]
	set d [dict create target $target depth [nativeDepth $extra] \
	    samples [dict get $s samples] \
	    median_us [expr {[dict get $h median_ns] / 1e3}] \
	    p99_us [expr {[dict get $h p99_ns] / 1e3}] \
	    mean_us [expr {[dict get $h mean_ns] / 1e3}]]
	lappend hresults $d
	lappend hrows [list [dict get $d depth] [dict get $d samples] \
	    [format %.1f [dict get $d median_us]] [format %.1f [dict get $d p99_us]] \
	    [format %.1f [dict get $d mean_us]]]
    }
    table [linsert $hrows 0 {{native frames} samples {median us} {p99 us} {mean us}}]
    puts "  (the handler's own timing; the kernel's signal delivery, about 20 us\
	here, comes on top)"
    dict set results handler $hresults

    # The same under Tcl procs 10, 100 and 1000 deep (Tcl frames copied
    # by the handler; the native stack stays short: Tcl 8.6 does not
    # nest C frames for proc calls).
    proc tclDeep {n script} {
	if {$n <= 0} {
	    return [uplevel #0 $script]
	}
	tclDeep [expr {$n - 1}] $script
    }
    set trows {}
    set tresults {}
    set oldLimit [interp recursionlimit {}]
    interp recursionlimit {} 5000
    foreach tdepth {10 100 1000} {
	tclcprof::start -mode sample -clock cpu
	tclDeep $tdepth [list cbtest::spin $spinMs]
	set s [dict get [tclcprof::status] sampling]
	tclcprof::stop
	set h [dict get $s handler]
	set d [dict create tcl_depth $tdepth \
	    native [tclDeep $tdepth {llength [tclcprof::debug cfas]}] \
	    samples [dict get $s samples] \
	    median_us [expr {[dict get $h median_ns] / 1e3}] \
	    p99_us [expr {[dict get $h p99_ns] / 1e3}] \
	    mean_us [expr {[dict get $h mean_ns] / 1e3}]]
	lappend tresults $d
	lappend trows [list $tdepth [dict get $d native] [dict get $d samples] \
	    [format %.1f [dict get $d median_us]] \
	    [format %.1f [dict get $d p99_us]] [format %.1f [dict get $d mean_us]]]
    }
    interp recursionlimit {} $oldLimit
    table [linsert $trows 0 {{Tcl depth} {native frames} samples {median us} {p99 us} {mean us}}]
    dict set results handler_tcl $tresults
}

# --- 6, 7. memory and saves, in child processes run side by side ------------

if {"children" in $sections} {
    set secs [dict get $opts -memseconds]
    heading "6-7. Memory over $secs s, and live profiles saved (two child\
	processes, side by side)..."
    flush stdout
    set child [file join $here child.tcl]
    set memPipe [open |[list [info nameofexecutable] $child memory $secs] r]
    set savePipe [open |[list [info nameofexecutable] $child save \
	[dict get $opts -savedistinct] [dict get $opts -savesamples] $tmpDir] r]
    set memOut [lindex [split [string trim [read $memPipe]] \n] end]
    close $memPipe
    set saveOut [lindex [split [string trim [read $savePipe]] \n] end]
    close $savePipe

    heading "6. Memory: sampling a changing workload at the default rate for $secs s\
	(/proc/self/status)"
    set mrows [list [list before [dict get $memOut before vmrss_mib] \
	[dict get $memOut before vmhwm_mib] - -]]
    foreach key [dict keys $memOut at*] {
	set m [dict get $memOut $key]
	lappend mrows [list "[string range $key 2 end] s" [dict get $m vmrss_mib] \
	    [dict get $m vmhwm_mib] [dict get $m samples] [dict get $m nodes]]
    }
    table [linsert $mrows 0 {{} {VmRSS MiB} {VmHWM MiB} samples {tree nodes}}]
    dict set results memory $memOut

    heading "7. Live sampled runs (wall clock, 10 kHz) saved with tclcprof::save"
    set srows {}
    foreach {key title} {distinct {random deep stacks} samples {fixed program}} {
	set s [dict get $saveOut $key]
	lappend srows [list $title [dict get $s samples] [dict get $s distinct_stacks] \
	    [dict get $s nodes] [format %.2f [dict get $s report_tree_s]] \
	    [format %.2f [dict get $s report_flat_s]] [format %.2f [dict get $s save_s]] \
	    [dict get $s file_mib] [format %.2f [dict get $s readback_s]]]
    }
    table [linsert $srows 0 {run samples {distinct stacks} nodes {report tree s}
	{report flat s} {save s} {file MiB} {read back s}}]
    dict set results save $saveOut
}

# --- 8. reports of synthetic profiles ----------------------------------------
#
# Stacks 4 to 19 frames deep, a third of them C functions, from a
# vocabulary narrow near the root and wide below (as in export.tcl), with
# Zipf-distributed weights summing to the number of samples.

proc synthStacks {distinct samples seed} {
    expr {srand($seed)}
    set names {}
    for {set i 0} {$i < 400} {incr i} {
	lappend names [expr {$i % 3 == 0
	    ? [list c fn_$i] : [list tcl ::app::proc$i]}]
    }
    set seen {}
    while {[dict size $seen] < $distinct} {
	set s {}
	set depth [expr {4 + int(rand() * 16)}]
	for {set j 0} {$j < $depth} {incr j} {
	    lappend s [lindex $names [expr {int(rand() * min(400, 2 + 4 * $j * $j))}]]
	}
	dict set seen $s 1
    }
    set h 0.0
    for {set k 1} {$k <= $distinct} {incr k} {
	set h [expr {$h + 1.0 / $k}]
    }
    set stacks {}
    set k 0
    set left $samples
    foreach s [dict keys $seen] {
	incr k
	set w [expr {max(1, int($samples / $h / $k))}]
	lappend stacks [list $w $s]
	incr left -$w
    }
    # The rounding remainder goes to the heaviest stack.
    lset stacks 0 0 [expr {[lindex $stacks 0 0] + max(0, $left)}]
    return $stacks
}

proc countNodes {node} {
    set n 1
    foreach c [dict get $node children] {
	incr n [countNodes $c]
    }
    return $n
}

if {"reports" in $sections} {
    heading "8. Reports of synthetic sampled profiles (tclcprof::report -data,\
	text to /dev/null; default options)"
    set cases {100000 10000 1000000 30000}
    set rrows {}
    set rresults {}
    set null [open /dev/null w]
    foreach {samples distinct} $cases {
	set tree [tclcprof::debug aggregate [synthStacks $distinct $samples 1]]
	set profile [dict create meta {mode sample clock cpu rate_requested 250
	    label "report benchmark"} tree $tree]
	set nodes [countNodes $tree]
	unset tree
	# Three times each (the median), once if it takes more than a second.
	set tt {}
	set tf {}
	for {set r 0} {$r < 3} {incr r} {
	    lappend tt [timeit [list tclcprof::report -data $profile -channel $null]]
	    lappend tf [timeit [list tclcprof::report -data $profile -type flat \
		-channel $null]]
	    if {[lindex $tt end] + [lindex $tf end] > 2} {
		break
	    }
	}
	set d [dict create samples $samples distinct $distinct nodes $nodes \
	    tree_s [format %.3f [median $tt]] flat_s [format %.3f [median $tf]]]
	lappend rresults $d
	lappend rrows [list $samples $distinct $nodes [dict get $d tree_s] \
	    [dict get $d flat_s]]
	unset profile
    }
    close $null
    table [linsert $rrows 0 {samples {distinct stacks} nodes {tree s} {flat s}}]
    puts "  (Zipf-distributed weights; median of 3 runs, or 1 when slow)"
    dict set results reports $rresults
}

# --- 9. distortion, and the capture's cost per call -------------------------

proc dleaf {x} { return $x }
proc dtcl {n} { for {set i 0} {$i < $n} {incr i} { dleaf $i } }
proc dc {n} { cbtest::work $n }
proc dmixed {rounds n k} {
    for {set r 0} {$r < $rounds} {incr r} { dtcl $n; dc $k }
}
proc cproc {} {}
proc cprocs {n} { for {set i 0} {$i < $n} {incr i} { cproc } }
proc ccmds {n} { for {set i 0} {$i < $n} {incr i} { cbtest::nop } }
oo::class create CCls { method m {} {} }
CCls create cobj
proc cmethods {n} { for {set i 0} {$i < $n} {incr i} { cobj m } }
proc cgenbody {} { while 1 { yield } }
proc cresumes {n} {
    coroutine cgen cgenbody
    for {set i 0} {$i < $n} {incr i} { cgen }
    rename cgen {}
}

if {"distortion" in $sections && $haveCb} {
    heading "9. Distortion: Tcl part and C part of equal time unprofiled,\
	alternating;\n   the Tcl share each configuration reports (median of\
	$rounds runs)"
    # Size both parts to ~20 ms; 2 s of the mixed program per run.
    dtcl 1000; dc 10
    set dn [expr {int(20000.0 / [lindex [time {dtcl 10000} 3] 0] * 10000)}]
    set dk [expr {int(20000.0 / [lindex [time {dc 100} 3] 0] * 100)}]
    set drounds [expr {[dict get $opts -quick] ? 25 : 50}]
    set dcfgs {
	sample {-mode sample} both {-mode both}
	sample-wrap {-mode sample -capture wrap}
	sample-wall {-mode sample -clock wall -rate 1000}
	sample-trace {-mode sample -capture trace}
	both-trace {-mode both -capture trace}
    }
    set plain {}
    set shares {}
    for {set r 0} {$r < $rounds} {incr r} {
	set ta [lindex [time {dtcl $dn}] 0]
	set tb [lindex [time {dc $dk}] 0]
	lappend plain [expr {100.0 * $ta / ($ta + $tb)}]
	foreach {cname copts} $dcfgs {
	    tclcprof::start {*}$copts
	    dmixed $drounds $dn $dk
	    tclcprof::stop
	    set t [dict get [tclcprof::data] tree]
	    set a 0
	    set b 0
	    foreach node [findNodes $t ::dtcl] { incr a [dict get $node total] }
	    foreach node [findNodes $t ::dc] { incr b [dict get $node total] }
	    dict lappend shares $cname [expr {100.0 * $a / max(1, $a + $b)}]
	}
    }
    set dres [dict create plain [format %.1f [median $plain]]]
    set drows {}
    foreach {cname copts} $dcfgs {
	set m [median [dict get $shares $cname]]
	dict set dres $cname [format %.1f $m]
	lappend drows [list $cname [format %.1f%% $m] \
	    [format %+.1f [expr {$m - [median $plain]}]]]
    }
    table [linsert $drows 0 [list configuration {Tcl share} \
	"points off [format %.1f%% [median $plain]] unprofiled"]]
    dict set results distortion $dres

    heading "   The capture's cost per call, ns ((time - unprofiled time) /\
	calls, median of $rounds rounds)"
    set cn [expr {[dict get $opts -quick] ? 200000 : 1000000}]
    set ccases [list proc cprocs {C command} ccmds {TclOO method} cmethods \
	{coroutine resume} cresumes]
    set ccfgs {
	stack {tclcprof::start -mode stack} {tclcprof::stop}
	sample {tclcprof::start -mode sample -clock cpu} {tclcprof::stop}
	sample-lines {tclcprof::start -mode sample -clock cpu -lines 1}
	    {tclcprof::stop}
	exact {tclcprof::start -mode exact} {tclcprof::stop}
	stack-trace {tclcprof::start -mode stack -capture trace} {tclcprof::stop}
	exact-trace {tclcprof::start -mode exact -capture trace} {tclcprof::stop}
    }
    set cres {}
    set crows {}
    foreach {clabel cproc} $ccases {
	$cproc 1000
	set times {}
	for {set r 0} {$r < $rounds} {incr r} {
	    dict lappend times base [timeit [list $cproc $cn]]
	    foreach {cname on off} $ccfgs {
		uplevel #0 $on
		dict lappend times $cname [timeit [list $cproc $cn]]
		uplevel #0 $off
	    }
	}
	set row [list $clabel]
	foreach {cname on off} $ccfgs {
	    set ns [median [lmap t [dict get $times $cname] \
		b [dict get $times base] {expr {($t - $b) / $cn * 1e9}}]]
	    dict set cres $clabel $cname [format %.0f $ns]
	    lappend row [format %.0f $ns]
	}
	lappend crows $row
    }
    table [linsert $crows 0 {call stack sample {sample, lines} exact
	{stack, trace} {exact, trace}}]
    puts "  unprofiled loops of $cn calls; the loop's own time subtracts out"
    dict set results capture_cost $cres
}

# --- 10. targets -------------------------------------------------------------------

proc wratio {wname cname} {
    global results
    if {[dict exists $results workloads $wname ratio $cname]} {
	return [dict get $results workloads $wname ratio $cname]
    }
    return ""
}

set targets {}
proc target {name limit measured {note ""}} {
    global targets
    if {$measured eq ""} {
	lappend targets [dict create name $name limit $limit measured - pass - note $note]
	return
    }
    set pass [expr {$measured <= $limit ? "PASS" : "FAIL"}]
    lappend targets [dict create name $name limit $limit measured $measured \
	pass $pass note $note]
}

# Issue 26's targets: sample mode (the frames capture, nothing per
# command) within 2% everywhere but the command churn, exact mode (the
# wrapper) within 25% on calls, 50% on coroutines and TclOO.
foreach {wname limit} {calls-loop 1.02 calls-rec 1.02 builtin 1.02
	c-heavy 1.02 events 1.02 coro 1.02 oo 1.02 churn 1.05} {
    set m [wratio $wname sample]
    target "sample <= ${limit}x on $wname" $limit \
	[expr {$m eq "" ? "" : [format %.3f $m]}]
}
foreach {wname limit} {calls-loop 1.25 calls-rec 1.25 coro 1.5 oo 1.5
	churn 1.3} {
    set m [wratio $wname exact]
    target "exact <= ${limit}x on $wname" $limit \
	[expr {$m eq "" ? "" : [format %.2f $m]}]
}
if {[dict exists $results workloads]} {
    dict for {wname w} [dict get $results workloads] {
	if {[dict exists $w exact_accuracy]} {
	    target "exact compensated total within 5% on $wname" 0.05 \
		[format %.2f [expr {abs([dict get $w exact_accuracy] - 1)}]]
	}
    }
}
foreach cname {sample both} {
    set m ""
    if {[dict exists $results distortion $cname]} {
	set m [format %.1f [expr {abs([dict get $results distortion $cname]
	    - [dict get $results distortion plain])}]]
    }
    set limit [expr {$cname eq "sample" ? 2 : 3}]
    target "distortion: $cname Tcl share within $limit points" $limit $m
}
set h60 ""
if {[dict exists $results handler]} {
    set h60 [format %.1f [dict get [lindex [dict get $results handler] end] median_us]]
}
target "handler median <= 5 us at native depth ~60" 5 $h60
set mem ""
set memNote ""
if {[dict exists $results memory]} {
    set last [lindex [dict keys [dict get $results memory] at*] end]
    set mem [dict get $results memory $last vmhwm_mib]
    if {[dict get $opts -memseconds] < 60} {
	set memNote "run of [dict get $opts -memseconds] s only"
    }
}
target "VmHWM <= 64 MiB after 60 s of sampling" 64 $mem $memNote
set rep ""
if {[dict exists $results reports]} {
    foreach d [dict get $results reports] {
	if {[dict get $d samples] == 1000000 && [dict get $d distinct] == 30000} {
	    set rep [expr {max([dict get $d tree_s], [dict get $d flat_s])}]
	}
    }
}
target "report of 1e6 samples (30k stacks) <= 1 s" 1.0 $rep "tree and flat each"

heading "10. Targets"
set trows {}
foreach t $targets {
    lappend trows [list [dict get $t name] [dict get $t measured] [dict get $t pass] \
	[dict get $t note]]
}
table [linsert $trows 0 {target measured result note}]
dict set results targets $targets

dict set results machine loadavg_end [loadavg]
puts ""
puts "load average at end: [dict get $results machine loadavg_end]"
} finally {
    file delete -force $tmpDir
}

set out [dict get $opts -out]
if {$out ne ""} {
    set f [open $out w]
    dict for {k v} $results {
	puts $f [list $k $v]
    }
    close $f
    puts "results written to [file normalize $out]"
}
