# smoke-aarch64.tcl --
#
#	The smoke set of an aarch64 build (tools/build-aarch64), run by the
#	host's tclsh:
#
#	    tclsh tools/smoke-aarch64.tcl BUILDDIR
#
#	BUILDDIR holds the cross-built library, libcbtest.so (the tests' C
#	extension), the demo's extension, the command-line tool and "tclsh",
#	which runs an aarch64 tclsh (the sysroot's tclsh8.6, or the Tcl 9
#	that build-aarch64 -tcl9 cross-built) under qemu-aarch64-static. Each
#	check runs the arm64 tclsh (qemu-user cannot start another arm64
#	program from inside one, so the host's tclsh drives) and prints one
#	line, "ok" or "FAILED", with the figures measured; the exit status
#	is the number of checks that failed.
#
#	1. machine: the tclsh is an aarch64 one (its Tcl version printed).
#	2. demo: "tclcprof run" of the bundled demo (examples/tok2column.tcl)
#	   into a database, read back with "tclcprof export -format folded":
#	   the mixed Tcl/C chain ::doWork2 > tok2column > tclprim_tok2column
#	   [C] > lang2lang_type [C] > ::MtiFS::Is...Language is there, its
#	   Tcl frames placed among the native ones (the wrapper's anchors
#	   calibrated, or, with the frames capture, 95% of samples spliced),
#	   and (almost) every sample has its native stack
#	   down to the program's entry point (the PLT case, unix/arch.h).
#	3. memory: every one of 3,000 blocks a C function leaks (memrate 1)
#	   counted, in the run and in its database read back.
#	4. exact: exact mode with the wrap capture (aarch64 thunks,
#	   unix/hookthunk.c): a proc called 100 times from a loop, 20 times,
#	   counts 2,000 calls.
#	5. frames: sample mode with -capture frames (Tcl's own frames read
#	   in the signal handler, captureframes.c): the capture in use, no frame
#	   stale, and the mixed chain proc > C command evaluating Tcl > proc
#	   > C in (almost) every sample, C frames in their places among the
#	   Tcl ones; the drain's fault-safe copy (qemu-user refuses
#	   process_vm_readv: a pipe there).
#
#	6. core: "tclcprof dump CORE" of a core file of the arm64 tclsh,
#	   killed (SIGABRT, from "exec kill" in ::c) inside ::a > ::b > ::c:
#	   qemu-user cannot ptrace an arm64 process, but it writes the
#	   guest's core file (ulimit -c unlimited; qemu_<prog>_<date>_<pid>.core
#	   in the current directory). The dump, run by the arm64 tclcprof,
#	   names the signal and shows ::a, ::b, ::c in that order among the
#	   native frames libdwfl unwinds from the core. The kill lands
#	   anywhere in exec's C code, a PLT stub included (which has no
#	   unwind information on aarch64; issue 27): the detail names the
#	   innermost native frame, its module and pc, so that a failure
#	   says where the unwind started.
#	   leaf: the same for a core of a call through a null function
#	   pointer (cbtest::mapsym null in ::c; SIGSEGV at pc 0, no module
#	   there, no unwind information): the native stack goes on from
#	   the link register (remotenative.c's leaf step), so MapsymCmd
#	   and ::a, ::b, ::c are all there, with native frames outside.
#
#	7. live: "tclcprof dump PID" of a running arm64 tclsh cannot work
#	   under qemu-user (it does not implement ptrace for its guests):
#	   the clear error "cannot trace process" (TCLCPROF ATTACH PTRACE,
#	   exit status 1), no hang, and the process runs on.
#
#	Under qemu, times mean little: the figures printed are ratios.
#	Each program run has a watchdog (LIMIT seconds; a check takes 2-20):
#	a hang fails its check, named, instead of stalling the build.
#
# Copyright (c) 2026 The tclcprof authors.
# See the file "LICENSE" for terms of use.

if {[llength $argv] != 1} {
    puts stderr "usage: tclsh smoke-aarch64.tcl BUILDDIR"
    exit 2
}
set build [file normalize [lindex $argv 0]]
set src [file dirname [file dirname [file normalize [info script]]]]
set tclsh [file join $build tclsh]
set tool [file join $build tclcprof]
set work [file join $build smoke]
file delete -force $work
file mkdir $work
set failed 0

# check name ok detail --
#	Print the outcome of one check.
proc check {name ok detail} {
    global failed
    if {$ok} {
        puts [format "smoke-aarch64: %-8s ok      %s" $name $detail]
    } else {
        puts [format "smoke-aarch64: %-8s FAILED  %s" $name $detail]
        incr failed
    }
}

# run cmd... --
#	exec cmd under a watchdog of LIMIT seconds (timeout(1), SIGKILL 10 s
#	after SIGTERM); a run killed so is an error that says so.
set LIMIT 300
proc run {args} {
    global LIMIT
    if {[catch {exec timeout -k 10 $LIMIT {*}$args} out opts]} {
        set code [dict get $opts -errorcode]
        if {[lindex $code 0] eq "CHILDSTATUS"
                && [lindex $code 2] in {124 137}} {
            set out "timed out after $LIMIT s (a hang): [lrange $args 0 1]...\n$out"
        }
        return -code error $out
    }
    return $out
}

# arm script --
#	Run script in the arm64 tclsh, in the build directory with the
#	package on auto_path; return its standard output.
proc arm {script} {
    global build tclsh work
    set f [file join $work script[incr ::scripts].tcl]
    set fd [open $f w]
    puts $fd [list lappend auto_path $build]
    puts $fd [list set build $build]
    puts $fd $script
    close $fd
    return [run $tclsh $f 2>@1]
}

# Helpers of the scripts run in the arm64 tclsh.
set helpers {
    package require tclcprof
    proc nodeOf {node name} {
        foreach c [dict get $node children] {
            if {[dict get $c name] eq $name} {
                return $c
            }
            set r [nodeOf $c $name]
            if {$r ne ""} {
                return $r
            }
        }
        return ""
    }
}

# --- 1. machine ------------------------------------------------------------

if {[catch {arm {puts [list $tcl_platform(machine) [info patchlevel]]}} out]} {
    check machine 0 $out
    exit 1
}
check machine [expr {[lindex $out 0] eq "aarch64"}] \
    "tcl_platform(machine) [lindex $out 0], Tcl [lindex $out 1]"

# --- 2. the demo's mixed tree -----------------------------------------------

set driver [file join $work demo.tcl]
set fd [open $driver w]
puts $fd {
    # The demo's workload under tclcprof run (its standalone part, which
    # starts profiling itself, left out).
    set argv0 demo
    source [file join [lindex $argv 0] examples tok2column.tcl]
    runWorkload [lindex $argv 1]
    set s [tclcprof::status]
    puts [list calibration [dict get $s calibration state] \
        capture [dict get $s capture in_use] \
        samples [dict get $s sampling samples] \
        splice_rate [dict get $s sampling splice_rate]]
}
close $fd
set db [file join $work demo.db]
set folded [file join $work demo.folded]
set env(TCLCPROF_DEMO_EXT) [file join $build libtclcprofdemo.so]
if {[catch {
    set out [run $tool run -db $db $driver $src 1.5 2>@1]
    run $tool export $db -format folded -file $folded 2>@1
    set fd [open $folded]
    set stacks [split [string trim [read $fd]] \n]
    close $fd
} msg]} {
    check demo 0 $msg
} else {
    set line [lsearch -inline [split $out \n] {calibration *}]
    set all 0
    set chain 0
    set rooted 0
    foreach s $stacks {
        if {![regexp {^(.*) ([0-9]+)$} $s -> stack w]} {
            continue
        }
        set frames [split $stack \;]
        incr all $w
        if {[string match {*::doWork2;tok2column;tclprim_tok2column \[C\];lang2lang_type \[C\];::MtiFS::Is*Language*} $s]} {
            incr chain $w
        }
        # A stack whose outermost frame is native reached the program's
        # entry point; one that starts with a Tcl frame lost its native
        # frames.
        if {[string match {*\[C\]} [lindex $frames 0]]} {
            incr rooted $w
        }
    }
    set full [expr {$all ? double($rooted) / $all : 0}]
    # Placed among the native frames: by the wrapper's calibrated anchors
    # (calibration ok) or, with the frames capture (the default), by the
    # trampolines' registers read per frame (no calibration: "none").
    set placed [expr {[dict get $line calibration] eq "ok"
        || ([dict get $line capture] eq "frames"
            && [dict get $line splice_rate] >= 0.95)}]
    check demo [expr {$chain > 0 && $placed}] \
        "mixed chain ::doWork2 > tok2column > tclprim_tok2column > lang2lang_type > ::MtiFS::Is*Language: $chain of $all samples; [lrange $line 0 end]"
    check native [expr {$all > 0 && $full >= 0.95}] \
        [format "samples with their whole native stack: %d of %d (%.1f%%)" \
        $rooted $all [expr {100 * $full}]]
}
unset env(TCLCPROF_DEMO_EXT)

# --- 3. memory profile and its database -------------------------------------

set mdb [file join $work memory.db]
set body {
    load [file join $build libcbtest.so] Cbtest
    tclcprof::profile -mode memory -memrate 1 -db $db {
        cbtest::memleak 1000 3000
    }
    set live [nodeOf [dict get [tclcprof::data] tree] LeakBlocks]
    set read [nodeOf [dict get [tclcprof::data -db $db] tree] LeakBlocks]
    puts [list [dict get $live alloc_objects] [dict get $live live_objects] \
        [dict get $read alloc_objects] [dict get $read live_objects]]
}
if {[catch {arm $helpers[list set db $mdb]\n$body} out]} {
    check memory 0 $out
} else {
    check memory [expr {$out eq "3000 3000 3000 3000"}] \
        "LeakBlocks: allocated, live (run) and the same read back from the database: $out (known: 3000 each)"
}

# --- 4. exact mode -----------------------------------------------------------

set body {
    proc f {n} { if {$n > 0} { f [expr {$n - 1}] } }
    proc g {} { for {set i 0} {$i < 100} {incr i} { f 3 } }
    set t0 [lindex [time g 20] 0]
    tclcprof::profile -mode exact {
        set t1 [lindex [time g 20] 0]
    }
    set gn [nodeOf [dict get [tclcprof::data] tree] ::g]
    set fn [nodeOf $gn ::f]
    puts [list [dict get $gn calls] [dict get $fn calls] \
        [dict get [tclcprof::status] capture in_use] \
        [format %.1f [expr {double($t1) / $t0}]]]
}
if {[catch {arm $helpers\n$body} out]} {
    check exact 0 $out
} else {
    lassign $out gCalls fCalls capture ratio
    check exact [expr {$gCalls == 20 && $fCalls == 2000 && $capture eq "wrap"}] \
        "calls ::g $gCalls (known 20), ::f from ::g $fCalls (known 2000), capture $capture, time ratio to unprofiled $ratio"
}

# --- 5. the frames capture -------------------------------------------------

set body {
    load [file join $build libcbtest.so] Cbtest
    proc leaf {} { cbtest::spin 25 }
    proc mid {} { cbtest::eval leaf }
    proc top {} { for {set i 0} {$i < 20} {incr i} { mid } }
    tclcprof::profile -capture frames -clock wall { top }
    set tree [dict get [tclcprof::data] tree]
    set all [dict get [nodeOf $tree ::top] total]
    set hit 0
    set n [nodeOf $tree ::top]
    foreach name {::mid cbtest::eval EvalCmd ::leaf cbtest::spin SpinCmd} {
        set next ""
        foreach c [dict get $n children] {
            if {[dict get $c name] eq $name} {
                set next $c
                break
            }
        }
        set n $next
        if {$n eq ""} break
    }
    if {$n ne ""} {
        set hit [dict get $n total]
    }
    set c [dict get [tclcprof::status] capture]
    puts [list [dict get $c in_use] [dict get $c frames stale] $hit $all \
        [tclcprof::debug safecopy]]
}
if {[catch {arm $helpers\n$body} out]} {
    check frames 0 $out
} else {
    lassign $out capture stale hit all way
    check frames [expr {$capture eq "frames" && $stale == 0 && $all >= 50
            && $hit >= 0.9 * $all}] \
        "capture $capture, stale $stale, ::top > ::mid > cbtest::eval > EvalCmd > ::leaf > cbtest::spin > SpinCmd: $hit of $all samples, copy by $way"
}

# --- 6. a core file: dump CORE ------------------------------------------------

# coreOf name body --
#	Run body (a script; $cbtest is libcbtest.so's path) in the arm64
#	tclsh in a directory of its own, where it dies of a signal; return
#	the core qemu wrote, or an error.
proc coreOf {name body} {
    global work tclsh build
    set cdir [file join $work $name]
    file mkdir $cdir
    set script [file join $cdir killed.tcl]
    set fd [open $script w]
    puts $fd [list set cbtest [file join $build libcbtest.so]]
    puts $fd $body
    close $fd
    # The arm64 tclsh is killed by the signal (a non-zero exit,
    # expected); qemu writes the guest's core, the host's kernel may
    # write qemu's own ("core"): removed.
    catch {run sh -c "cd [list $cdir] && ulimit -c unlimited && exec [list $tclsh] [list $script]"}
    set cores [glob -nocomplain -directory $cdir qemu_*.core]
    foreach f [glob -nocomplain -directory $cdir core core.*] {
	file delete $f
    }
    if {[llength $cores] != 1} {
	return -code error "no core file of the arm64 tclsh in $cdir (qemu writes qemu_<prog>_<date>_<pid>.core): [glob -nocomplain -directory $cdir *]"
    }
    return [lindex $cores 0]
}

# innermost core --
#	"innermost NAME (MODULE) pc PC": the innermost native frame of the
#	core's thread that has Tcl frames (tclcprof::attach::Stacks, run
#	by the arm64 tclsh), where its native unwind started.
proc innermost {core} {
    global helpers
    set body {
	foreach t [dict get [tclcprof::attach::Stacks $core] threads] {
	    set fs [dict get $t frames]
	    if {[lsearch -exact -index 1 $fs tcl] < 0} {
		continue
	    }
	    set c [lindex [lsearch -all -inline -exact -index 1 $fs c] end]
	    puts "innermost [dict get $c name] ([dict get $c module]) pc [dict get $c pc]"
	    break
	}
    }
    if {[catch {arm "$helpers[list set core $core]\n$body"} out]} {
	return "innermost frame unknown: [lindex [split $out \n] 0]"
    }
    return [string trim $out]
}

# coreCheck name core text folded ?lastC? --
#	The check of a core's dump: the signal line of text, ::a ::b ::c in
#	order in the main thread's folded stack, native frames outside ::a
#	and inside ::c (the innermost lastC if given).
proc coreCheck {name core text folded {lastC {}}} {
    set procs {}
    set stack {}
    foreach line [split $folded \n] {
	if {[regexp {^(.*) [0-9]+$} $line -> st] && [string match *::a* $st]} {
	    set stack [split $st \;]
	}
    }
    foreach f $stack {
	if {$f in {::a ::b ::c}} {
	    lappend procs $f
	}
    }
    set ia [lsearch -exact $stack ::a]
    set ic [lsearch -exact $stack ::c]
    set outer [expr {$ia > 0 && [string match {*\[C\]} [lindex $stack 0]]}]
    set inner [expr {$ic >= 0 && [string match {*\[C\]} [lindex $stack end]]
	&& ($lastC eq "" || [lrange $stack end-[expr {[llength $lastC] - 1}] end] eq $lastC)}]
    check $name [expr {$procs eq {::a ::b ::c} && $outer && $inner}] \
	"[file tail $core]: [lindex [split $text \n] 0]; Tcl procs in order: $procs (known ::a ::b ::c); native frames outside ::a $outer, inside ::c $inner; [innermost $core]; [llength $stack] frames: [join [lrange $stack [expr {max(0, $ia - 2)}] end] { > }]"
}

if {[catch {
    set core [coreOf core {
	proc c {} { exec kill -ABRT [pid]; after 10000 }
	proc b {} { c }
	proc a {} { b }
	a
    }]
    set text [run $tool dump $core 2>@1]
    set folded [run $tool dump $core -format folded 2>@1]
} msg]} {
    check core 0 $msg
} elseif {![string match {*signal 6 (SIGABRT)*} [lindex [split $text \n] 0]]} {
    check core 0 "[file tail $core]: not killed by SIGABRT: [lindex [split $text \n] 0]"
} else {
    coreCheck core $core $text $folded
}

# leaf: a call through a null function pointer.
if {[catch {
    set core [coreOf leaf {
	load $cbtest Cbtest
	proc c {} { cbtest::mapsym null }
	proc b {} { c }
	proc a {} { b }
	a
    }]
    set text [run $tool dump $core 2>@1]
    set folded [run $tool dump $core -format folded 2>@1]
} msg]} {
    check leaf 0 $msg
} elseif {![string match {*signal 11 (SIGSEGV)*} [lindex [split $text \n] 0]]} {
    check leaf 0 "[file tail $core]: not killed by SIGSEGV: [lindex [split $text \n] 0]"
} else {
    coreCheck leaf $core $text $folded {cbtest::mapsym {MapsymCmd [C]} {0x0 [C]}}
}

# --- 7. a live process: the clear error qemu-user leaves -------------------

set script [file join $work sleeper.tcl]
set fd [open $script w]
puts $fd {puts ready; flush stdout; after 60000}
close $fd
set chan [open |[list $tclsh $script] r]
gets $chan
set child [lindex [pid $chan] end]
set st [catch {run $tool dump $child} msg]
set alive [expr {![catch {exec kill -0 $child}]}]
catch {exec kill $child}
catch {close $chan}
check live [expr {$st == 1 && [string match "*cannot trace process $child*" $msg]
        && $alive}] \
    "dump of a running arm64 tclsh (pid $child) under qemu-user: [lindex [split $msg \n] 0]; process running after: $alive"

exit $failed
