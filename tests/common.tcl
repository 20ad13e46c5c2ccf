# common.tcl --
#
#	Shared set-up for the tclcprof test files: loads the package and the
#	cbtest helper extension (C commands that call back into Tcl), and
#	defines the probe used to read the level stack from inside a context.

package require tcltest 2.5
namespace import -force ::tcltest::*

package require tclcprof

# The helper extension is built next to the package library by
# "make test"; TCLCPROF_BUILDDIR names that directory.
proc ::cbtestLib {} {
    set name libcbtest[info sharedlibextension]
    foreach dir [list [expr {[info exists ::env(TCLCPROF_BUILDDIR)]
            ? $::env(TCLCPROF_BUILDDIR) : ""}] \
            [file dirname [testsDirectory]] [pwd]] {
        if {$dir ne "" && [file exists [file join $dir $name]]} {
            return [file normalize [file join $dir $name]]
        }
    }
    return ""
}
# The package library's file name: Tcl 9 builds name it libtcl9tclcprof.
proc ::pkgLibFile {} {
    set v [package present tclcprof]
    if {[package vsatisfies [package provide Tcl] 9]} {
        return libtcl9tclcprof$v[info sharedlibextension]
    }
    return libtclcprof$v[info sharedlibextension]
}

# A file's permission bits in octal digits: Tcl 8.6 answers 00640, Tcl 9
# 0o640.
proc ::octalPerms {file} {
    string trimleft [file attributes $file -permissions] 0o
}

# Constraints for what differs between Tcl 8.6 and Tcl 9.
testConstraint tcl9 [package vsatisfies [package provide Tcl] 9]
testConstraint tcl86 [package vsatisfies [package provide Tcl] 8.6-9]

if {[info commands ::cbtest::eval] eq "" && [cbtestLib] ne ""} {
    load [cbtestLib] Cbtest
}
testConstraint cbtest [llength [info commands ::cbtest::eval]]

# Under valgrind (make valgrind) the process runs 20-50 times slower and
# its threads one at a time: tests of rates and of times are left out.
testConstraint notValgrind [expr {![info exists ::env(TCLCPROF_VALGRIND)]}]

# The capture the tests run under (all.tcl runs the files that exercise
# the level stack under each): frames (the default: sample and memory
# modes read Tcl's frames, the others wrap), wrap, trace or check. The
# default is left as it is (not configured), as a program leaves it.
set ::tclcprofCapture [expr {[info exists ::env(TCLCPROF_TEST_CAPTURE)]
        ? $::env(TCLCPROF_TEST_CAPTURE) : "frames"}]
if {$::tclcprofCapture ne "frames"} {
    tclcprof::configure -capture $::tclcprofCapture
}

# tcltest runs each test's body inside its own procs (::tcltest::test,
# RunTest): a run started there would have them below every frame (-seed,
# the frames running at start). The tests of seeding turn it on.
tclcprof::configure -seed 0

# TCLCPROF_TEST_TIMES=FILE appends a line per test to FILE: capture, test
# file, test name, wall milliseconds and CPU milliseconds of this process
# and its waited-for children (/proc/self/stat, in clock ticks). It is
# how the suite's cost is found (all.tcl prints the dearest tests at the
# end). The wrapper runs tcltest's test one level up, so a test's body
# still runs in its caller's frame.
if {[info exists ::env(TCLCPROF_TEST_TIMES)]
        && [info commands ::tcltest::TclcprofTimedTest] eq ""
        && [file readable /proc/self/stat]} {
    namespace eval ::tclcprof_alltests {}
    proc ::tclcprof_alltests::Cpu {} {
        set f [open /proc/self/stat]
        set stat [read $f]
        close $f
        set fields [split [string range $stat \
                [expr {[string last ")" $stat] + 2}] end]]
        # utime stime cutime cstime: fields 14-17, 11-14 after the name.
        return [tcl::mathop::+ {*}[lrange $fields 11 14]]
    }
    rename ::tcltest::test ::tcltest::TclcprofTimedTest
    proc ::tcltest::test {name args} {
        set wall [clock milliseconds]
        set cpu [::tclcprof_alltests::Cpu]
        try {
            uplevel 1 [list ::tcltest::TclcprofTimedTest $name {*}$args]
        } finally {
            set f [open $::env(TCLCPROF_TEST_TIMES) a]
            puts $f [list $::tclcprofCapture \
                    [file tail [info script]] $name \
                    [expr {[clock milliseconds] - $wall}] \
                    [expr {([::tclcprof_alltests::Cpu] - $cpu) * 10}]]
            close $f
        }
    }
    namespace eval :: {namespace import -force ::tcltest::test}
}
testConstraint captureWrap [expr {$::tclcprofCapture eq "wrap"}]
testConstraint captureFrames [expr {$::tclcprofCapture eq "frames"}]
testConstraint captureTrace [expr {$::tclcprofCapture eq "trace"}]
testConstraint captureCheck [expr {$::tclcprofCapture eq "check"}]
# A test whose result does not depend on the capture (native stacks,
# symbol files, fork, rates, -duration) runs once: in the pass of the
# default capture, not again in all.tcl's passes of the other captures.
testConstraint oncePerSuite [expr {$::tclcprofCapture eq "frames"}]

# byCapture wrap WRAP trace TRACE ?check CHECK? ?frames FRAMES? --
#	The expected value for the capture in use: under check the wrapper's
#	stack is the one reported, unless a value for check is given; under
#	frames (sampled runs) too, unless a value for frames is given.
proc ::byCapture {args} {
    if {[dict exists $args $::tclcprofCapture]} {
        return [dict get $args $::tclcprofCapture]
    }
    dict get $args wrap
}

# stackCapture --
#	The capture of the tests of the level stack's own workings (its
#	counters, its records of coroutines, its frame vector, the wrapper's
#	status): wrap under the default (sampled runs then keep no level
#	stack: they read Tcl's frames), the capture in use otherwise.
proc ::stackCapture {} {
    expr {$::tclcprofCapture eq "frames" ? "wrap" : $::tclcprofCapture}
}

# checkedCaptures --
#	Under -capture check: the two captures' disagreements over every run
#	of the file, which must be none.
proc ::checkedCaptures {} {
    set c [tclcprof::debug checks]
    if {[dict get $c disagreements] == 0 && [dict get $c checks] > 0} {
        return ok
    }
    return $c
}
testConstraint thread [expr {![catch {package require Thread}]}]
testConstraint procfs [file readable /proc/self/stat]
testConstraint aarch64 [expr {$::tcl_platform(machine) eq "aarch64"}]

# probe --
#	Record the names of the tracked frames, without the probe itself, in
#	::seen (one list per call).
proc ::probe {} {
    lappend ::seen [lmap f [lrange [tclcprof::stack] 0 end-1] {
        dict get $f name
    }]
    return
}

# probeKinds --
#	Like probe, with "name/kind" for each frame.
proc ::probeKinds {} {
    lappend ::seen [lmap f [lrange [tclcprof::stack] 0 end-1] {
        string cat [dict get $f name] / [dict get $f kind]
    }]
    return
}

# collect script ?option value ...? --
#	Run script at global level with profiling on (start's options);
#	return what the probes saw. collect's own frame is not tracked (it
#	was entered before start) and the uplevel that runs the script is
#	left out.
proc ::collect {script args} {
    set ::seen {}
    tclcprof::start {*}$args
    try {
        uplevel #0 $script
    } finally {
        tclcprof::stop
    }
    set out {}
    foreach s $::seen {
        lappend out [lrange $s 1 end]
    }
    return $out
}

# Run a script in a child tclsh with the package available; return its
# stdout (trimmed). Used for tests that need a pristine process.
proc ::childTclsh {script} {
    set f [makeFile $script child[pid][incr ::childCount].tcl]
    try {
        return [string trim [exec [interpreter] $f 2>@1]]
    } finally {
        removeFile $f
    }
}

# --- helpers for sampled profiles -------------------------------------

# findNodes node name --
#	All nodes named name in the tree below node (not below a match),
#	the heaviest first (by total; equal totals in tree order), so that
#	[lindex [findNodes ...] 0] is the node that holds the samples: a
#	sample whose frames found no anchor in the native stack (rare, under
#	load) puts a stray copy of them at the root, above the whole native
#	stack, and that copy can come first in tree order (store 6.63 in a
#	CI run: the main script's frame of 1 sample under _start > ... >
#	main, met before the main that held the other 1,413).
proc ::findNodes {node name} {
    set out {}
    foreach n [FindNodesIn $node $name] {
        lappend out [list [dict get $n total] $n]
    }
    lmap p [lsort -real -decreasing -index 0 $out] {lindex $p 1}
}
proc ::FindNodesIn {node name} {
    set out {}
    foreach c [dict get $node children] {
        if {[dict get $c name] eq $name} {
            lappend out $c
        } else {
            lappend out {*}[FindNodesIn $c $name]
        }
    }
    return $out
}

# chainWeight tree chain --
#	{chain root}: the weight of samples whose stack contains the frames of
#	chain consecutively, starting at a frame named [lindex $chain 0];
#	and the total weight under the frames named [lindex $chain 0].
proc ::chainWeight {tree chain} {
    set hit 0
    set all 0
    foreach n [findNodes $tree [lindex $chain 0]] {
        incr all [dict get $n total]
        incr hit [ChainFrom $n [lrange $chain 1 end]]
    }
    list $hit $all
}
proc ::ChainFrom {node rest} {
    if {![llength $rest]} {
        return [dict get $node total]
    }
    set w 0
    foreach c [dict get $node children] {
        if {[dict get $c name] eq [lindex $rest 0]} {
            incr w [ChainFrom $c [lrange $rest 1 end]]
        }
    }
    return $w
}

# nodeTotal tree name --
#	Sum of the totals of the outermost nodes named name.
proc ::nodeTotal {tree name} {
    set w 0
    foreach n [findNodes $tree $name] {
        incr w [dict get $n total]
    }
    return $w
}

# treePaths node --
#	Every path from below node to a node with self weight, as
#	{path self} pairs; names joined with " > ".
proc ::treePaths {node {prefix {}}} {
    set out {}
    foreach c [dict get $node children] {
        set p [expr {$prefix eq "" ? [dict get $c name]
                : "$prefix > [dict get $c name]"}]
        if {[dict get $c self] > 0} {
            lappend out $p [dict get $c self]
        }
        lappend out {*}[treePaths $c $p]
    }
    return $out
}

# threadProfile ?mode? --
#	A profile of two threads and two interpreters, made by hand in the
#	format of a process-wide profile (issue 14): thread roots "main" and
#	"worker1", frames of the child interpreter "kid", and ::kidwork in
#	both interpreters of worker1. Mode sample (weights), exact (the same
#	figures in ns: weight * 1000, with calls) or both (the two trees).
proc ::threadProfile {{mode sample}} {
    # {name kind tclkind-or-module interp self total calls children}
    set shape {
        {main thread tid0x1 {} 0 6 0 {
            {::app::run tcl proc {} 1 6 1 {
                {::kidwork tcl proc kid 3 3 3 {}}
                {Tcl_EvalObjv c libtcl8.6.so {} 2 2 0 {}}}}}}
        {worker1 thread tid0x2 {} 0 4 0 {
            {::work tcl proc {} 1 4 2 {
                {::kidwork tcl proc kid 2 2 4 {}}
                {::kidwork tcl proc {} 1 1 1 {}}}}}}
    }
    set threads {
        {name main thread tid0x1 tid 100 state running cpu_ns 60000000
            samples 6 weight 6 interps {{} kid}}
        {name worker1 thread tid0x2 tid 101 state exited cpu_ns 40000000
            samples 4 weight 4 interps {{} kid}}
    }
    set sampled [dict create name {} kind root self 0 total 10 \
        children [lmap n $shape {ThreadNode $n 0}]]
    set exact [dict create name {} kind root self 0 total 10000 calls 0 \
        total_ns 10000 self_ns 0 min_ns 0 max_ns 0 \
        children [lmap n $shape {ThreadNode $n 1}]]
    set meta [dict create mode $mode clock cpu elapsed 0.5 label threads \
        running 0 stopped_by {} scope process threads $threads]
    switch -- $mode {
        sample {
            dict set meta rate_requested 100.0
            dict set meta rate_achieved 100.0
            dict set meta samples 10
            dict set meta weight 10
            return [dict create meta $meta tree $sampled]
        }
        exact {
            dict set meta calls 11
            return [dict create meta $meta tree $exact \
                coverage {commands {} procs {} lines {}}]
        }
        both {
            dict set meta rate_requested 100.0
            dict set meta samples 10
            dict set meta weight 10
            dict set meta calls 11
            return [dict create meta $meta tree $sampled exact $exact \
                coverage {commands {} procs {} lines {}}]
        }
    }
}

proc ::ThreadNode {spec exact} {
    lassign $spec name kind aux interp self total calls children
    set n [dict create name $name kind $kind]
    switch -- $kind {
        thread {dict set n thread $aux}
        c {dict set n module $aux}
        tcl {dict set n tclkind $aux; dict set n interp $interp}
    }
    if {$exact} {
        if {$kind eq "c"} {
            return -code continue
        }
        set self [expr {$self * 1000}]
        set total [expr {$total * 1000}]
        if {$kind eq "tcl" && $name eq "::app::run"} {
            # The C frame is not in the exact tree: its time is the proc's.
            incr self 2000
        }
        dict set n calls $calls
        dict set n total_ns $total
        dict set n self_ns $self
        dict set n min_ns [expr {$calls ? $total / $calls / 2 : 0}]
        dict set n max_ns [expr {$calls ? $total / $calls : 0}]
    }
    dict set n self $self
    dict set n total $total
    dict set n children [lmap c $children {ThreadNode $c $exact}]
    return $n
}

# canonTree node --
#	A tree as a value that does not depend on the order of children or
#	of keys: to compare trees.
proc ::canonTree {node} {
    dict set node children [lsort [lmap c [dict get $node children] {
        canonTree $c
    }]]
    set out {}
    foreach k [lsort [dict keys $node]] {
        lappend out $k [dict get $node $k]
    }
    return $out
}

# memoryProfile --
#	A memory profile (-mode memory) made by hand: ::app allocates 512
#	bytes, ::big 3 MiB (1 MiB live), ::mid 20 KiB (10 KiB live).
proc ::memoryProfile {} {
    set node {apply {{name kind ab ao lb lo pb po args} {
        set t $ab
        foreach c $args {
            incr t [dict get $c total]
        }
        dict create name $name kind $kind self $ab total $t alloc_bytes $ab \
            alloc_objects $ao live_bytes $lb live_objects $lo \
            peak_bytes $pb peak_objects $po children $args
    }}}
    dict create meta {mode memory clock wall elapsed 0.5} \
        tree [{*}$node {} root 0 0 0 0 0 0 [{*}$node ::app tcl 512 2 0 0 512 2 \
            [{*}$node ::big tcl 3145728 3 1048576 1 2097152 2] \
            [{*}$node ::mid tcl 20480 5 10240 1 20480 5]]]
}

# cpuClockTrial script --
#
#	Evaluates script, which measures the CPU clock's sampling and returns
#	a list whose first element is 1 when the measurement holds, up to two
#	times, and returns the last result. For the tests that count samples
#	against a thread's CPU time: once in a suite run at load 10 or more
#	(this machine is a virtual one), three such tests within a minute saw
#	30-60% of the timer's expirations neither signalled nor counted as
#	overruns (tclcprof-3.41, 3.42, 5.23); the same tests at load 11 alone
#	kept the weight within 1.2%. The second trial, a second later, tells
#	a kernel's bad moment from a sampler that loses weight (which fails
#	both).
proc ::cpuClockTrial {script} {
    for {set i 0} {$i < 2} {incr i} {
	set r [uplevel 1 $script]
	if {[lindex $r 0] eq "1"} {
	    break
	}
	after 1000
    }
    return $r
}
