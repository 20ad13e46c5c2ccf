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
if {[info commands ::cbtest::eval] eq "" && [cbtestLib] ne ""} {
    load [cbtestLib] Cbtest
}
testConstraint cbtest [llength [info commands ::cbtest::eval]]

# Under valgrind (make valgrind) the process runs 20-50 times slower and
# its threads one at a time: tests of rates and of times are left out.
testConstraint notValgrind [expr {![info exists ::env(TCLCPROF_VALGRIND)]}]

# The capture the tests run under (all.tcl runs the files that exercise
# the level stack under each): wrap (the default), trace or check.
set ::tclcprofCapture [expr {[info exists ::env(TCLCPROF_TEST_CAPTURE)]
        ? $::env(TCLCPROF_TEST_CAPTURE) : "wrap"}]
tclcprof::configure -capture $::tclcprofCapture
testConstraint captureWrap [expr {$::tclcprofCapture eq "wrap"}]
testConstraint captureTrace [expr {$::tclcprofCapture eq "trace"}]
testConstraint captureCheck [expr {$::tclcprofCapture eq "check"}]

# byCapture wrap WRAP trace TRACE ?check CHECK? --
#	The expected value for the capture in use: under check the wrapper's
#	stack is the one reported, unless a value for check is given.
proc ::byCapture {args} {
    if {[dict exists $args $::tclcprofCapture]} {
        return [dict get $args $::tclcprofCapture]
    }
    dict get $args wrap
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

# collect script --
#	Run script at global level with profiling on; return what the probes
#	saw. collect's own frame is not tracked (it was entered before start)
#	and the uplevel that runs the script is left out.
proc ::collect {script} {
    set ::seen {}
    tclcprof::start
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
#	All nodes named name in the tree below node (not below a match).
proc ::findNodes {node name} {
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
