# testhooks.tcl --
#
#	Regression profiling with tcltest: tclcprof::tcltest::enable makes
#	every test of a tcltest suite a profile run of its own, written to
#	a profile database with the test's file and name (the runs table's
#	test_file and test_name), so that two runs of a suite can be
#	compared test by test (tclcprof::diff).
#
#	How: tcltest evaluates a test's body through its EvalTest hook;
#	profiling starts right before the body and stops right after it
#	(setup, cleanup and the result check are not profiled), so that the
#	body's commands are the outermost frames.
#	With -singleproc 0 (one process per test file) the suite's
#	interpreter is replaced, for runAllTests, by a wrapper that loads
#	tclcprof, enables the same profiling and then runs the test file;
#	a suite whose test files call loadTestedCommands can also be
#	profiled with tcltest's -load option, in either mode.
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::tcltest {
    namespace export enable

    # Options of tclcprof::start for each test ({} until enable).
    variable options {}
    # The hooks are in place.
    variable installed 0
    # For each test body running (tests can nest), whether profiling was
    # started for it: a stack.
    variable active {}
    # Failures to profile a test are reported once.
    variable warned 0
    # Where this package's files are (the child processes load it from
    # there).
    variable libdir [file dirname [file normalize [info script]]]
    # What each runAllTests running (a suite's all.tcl can source those
    # of subdirectories) changed, to restore afterwards: a stack.
    variable saved {}
    # The test whose body runs (set by the RunTest wrapper).
    variable current {}
    # The suite had an EvalTest hook of its own.
    variable userHook 0
    # The default options.
    variable defaults {-mode both}
}

# ::tclcprof::tcltest::enable --
#
#	tclcprof::tcltest::enable ?option value ...?
#
#	Profile every test run from now on (in this interpreter, and in the
#	child processes runAllTests starts) as a run of its own, with the
#	options of tclcprof::start (default: -mode both, written to
#	tclcprof.db in the current directory). Can be called again to
#	change the options.
#
# Results:
#	The empty string. Errors: those of the options, as tclcprof::start
#	would raise them, and of the database file (TCLCPROF DB ...).

proc ::tclcprof::tcltest::enable {args} {
    variable options
    variable installed
    variable defaults

    if {[llength $args] % 2} {
	return -code error -errorcode {TCLCPROF WRONGARGS} \
	    "wrong # args: should be \"tclcprof::tcltest::enable\
	    ?-option value ...?\""
    }
    set opts [dict merge $defaults $args]
    foreach opt {-test -duration} {
	if {[dict exists $opts $opt]} {
	    return -code error -errorcode [list TCLCPROF VALUE $opt] \
		"$opt cannot be given to tclcprof::tcltest::enable: each\
		test is a run of its own"
	}
    }
    if {[dict get $opts -mode] eq "stack"} {
	return -code error -errorcode {TCLCPROF VALUE -mode stack} \
	    "-mode stack cannot be given to tclcprof::tcltest::enable: it\
	    collects no profile"
    }
    if {![dict exists $opts -db]} {
	dict set opts -db $::tclcprof::cli::defaultDb
    }
    Check $opts

    # Tests may change directory: the file is named absolutely.
    dict set opts -db [file normalize [dict get $opts -db]]
    set options $opts
    package require tcltest 2.2
    if {!$installed} {
	Install
	set installed 1
    }
    return
}

# Check --
#
#	Check options before any test runs: that start accepts them (a run
#	is started and stopped, without -db, in a scratch interpreter), and
#	that the database is a profile database or can be created.

proc ::tclcprof::tcltest::Check {opts} {
    if {[dict get [::tclcprof::status] running]} {
	return -code error -errorcode {TCLCPROF STATE RUNNING} \
	    "profiling is already running: tclcprof::tcltest::enable\
	    profiles each test on its own"
    }
    set i [interp create]
    try {
	$i eval [list set auto_path $::auto_path]
	$i eval {
	    namespace eval ::tclcprof {variable noEnv 1}
	    package require tclcprof
	}
	set code [catch {
	    $i eval [list ::tclcprof::start {*}[dict remove $opts -db]]
	    $i eval ::tclcprof::stop
	} msg options]
    } finally {
	interp delete $i
    }
    if {$code} {
	return -options $options $msg
    }
    set db [dict get $opts -db]
    if {$db eq ""} {
	return -code error -errorcode {TCLCPROF VALUE -db} \
	    "-db cannot be empty for tclcprof::tcltest::enable: the runs\
	    go to a file"
    }
    if {[file exists $db] || [string first \0 $db] >= 0} {
	# (A name with a NUL: the error of tclcprof::runs.)
	::tclcprof::runs -db $db
    } elseif {![file isdirectory [file dirname [file normalize $db]]]} {
	return -code error -errorcode [list TCLCPROF DB OPEN $db] \
	    "cannot open profile database \"$db\": no such directory"
    } elseif {[catch {open $db {WRONLY CREAT EXCL}} chan]} {
	# It cannot be made (a name too long, a directory not writable).
	return -code error -errorcode [list TCLCPROF DB OPEN $db] \
	    "cannot open profile database \"$db\": $chan"
    } else {
	close $chan
	file delete $db
    }
}

# Install --
#
#	tcltest evaluates a test's body through the hook ::tcltest::EvalTest
#	when there is one: profiling starts and stops there, around the body
#	alone, which rethrows whatever the body returned at the same level.
#	A wrapper around ::tcltest::RunTest tells it the test's name, and one
#	around runAllTests carries profiling into child processes. A hook the
#	suite had already is kept and called inside ours (and excluded from
#	the profile).

proc ::tclcprof::tcltest::Install {} {
    variable userHook [expr {[info commands ::tcltest::EvalTest] ne ""}]

    if {$userHook} {
	rename ::tcltest::EvalTest ::tcltest::EvalTest_tclcprof_user
	proc ::tcltest::EvalTest {script} {
	    ::tclcprof::tcltest::Begin
	    set code [catch {
		uplevel 1 [list ::tcltest::EvalTest_tclcprof_user $script]
	    } result options]
	    ::tclcprof::tcltest::End
	    dict incr options -level
	    return -options $options $result
	}
    } else {
	proc ::tcltest::EvalTest {script} {
	    ::tclcprof::tcltest::Begin
	    set code [catch {uplevel 1 $script} result options]
	    ::tclcprof::tcltest::End
	    dict incr options -level
	    return -options $options $result
	}
    }
    rename ::tcltest::RunTest ::tcltest::RunTest_tclcprof
    proc ::tcltest::RunTest {name script} {
	set ::tclcprof::tcltest::current $name
	uplevel 1 [list ::tcltest::RunTest_tclcprof $name $script]
    }
    rename ::tcltest::runAllTests ::tcltest::runAllTests_tclcprof
    proc ::tcltest::runAllTests {{shell ""}} {
	set shell [::tclcprof::tcltest::ChildSetup $shell]
	try {
	    uplevel 1 [list ::tcltest::runAllTests_tclcprof {*}$shell]
	} finally {
	    ::tclcprof::tcltest::ChildCleanup
	}
    }
}

# Begin, End --
#
#	Around a test's body: start profiling it as a run of its own, and
#	stop (which writes the run). A test that runs while profiling is
#	already on (started by the program itself, or an outer test's body
#	running a test of its own) is left alone: it is part of that run.

proc ::tclcprof::tcltest::Begin {} {
    variable options
    variable active
    variable warned
    variable current
    variable userHook

    set name $current
    if {![llength $options] || [dict get [::tclcprof::status] running]} {
	lappend active 0
	return
    }
    set opts $options
    if {$userHook} {
	dict lappend opts -exclude ::tcltest::EvalTest_tclcprof_user
    }
    set file [TestFile]
    # tcltest's own procs run the body: not the test's frames (-seed 0,
    # unless the options say otherwise).
    if {[catch {::tclcprof::start -seed 0 {*}$opts -test [list $file $name]} msg]} {
	if {!$warned} {
	    puts stderr "tclcprof: cannot profile test $name: $msg"
	    set warned 1
	}
	lappend active 0
	return
    }
    lappend active 1
}

# ::tclcprof::tcltest::TestFile --
#
#	The test file a test belongs to: the outermost script being sourced
#	whose name ends in .test (a suite's file may source its tests from
#	another file, as tcllib's json.test sources json.testsuite); else
#	the script being sourced now.

proc ::tclcprof::tcltest::TestFile {} {
    for {set level 1} {$level < [info frame]} {incr level} {
	set frame [info frame $level]
	if {[dict get $frame type] eq "source" && [dict exists $frame file]
		&& [string match *.test [dict get $frame file]]} {
	    return [file tail [dict get $frame file]]
	}
    }
    return [file tail [info script]]
}

proc ::tclcprof::tcltest::End {} {
    variable active
    variable warned

    set started [lindex $active end]
    set active [lrange $active 0 end-1]
    if {$started ne "1"} {
	return
    }
    if {[dict get [::tclcprof::status] running]
	    && [catch {::tclcprof::stop} msg] && !$warned} {
	puts stderr "tclcprof: $msg"
	set warned 1
    }
}

# ChildSetup, ChildCleanup --
#
#	For runAllTests with -singleproc 0: the shell that runs each test
#	file (runAllTests' argument, else the suite's interpreter) is given
#	as a wrapper script that runs that shell on a preamble, which loads
#	tclcprof, enables the same profiling and sources the test file with
#	its arguments. The options reach the children in the environment
#	variable TCLCPROF_TCLTEST. ChildSetup returns runAllTests' argument
#	list.

proc ::tclcprof::tcltest::ChildSetup {shell} {
    variable options
    variable libdir
    variable saved

    if {![llength $options] || [::tcltest::singleProcess]} {
	lappend saved {}
	return [expr {$shell eq "" ? {} : [list $shell]}]
    }
    if {$shell eq ""} {
	set shell [::tcltest::interpreter]
    }
    set dir [::tcltest::temporaryDirectory]
    set tag tclcprof-[pid]-[clock microseconds]
    set preamble [file join $dir $tag-preamble.tcl]
    set wrapper [file join $dir $tag-tclsh]
    set chan [open $preamble w]
    puts $chan [list set auto_path [linsert $::auto_path 0 $libdir]]
    puts $chan {package require tclcprof
::tclcprof::tcltest::enable {*}$::env(TCLCPROF_TCLTEST)
set argv0 [lindex $argv 0]
set argv [lrange $argv 1 end]
set argc [llength $argv]
uplevel #0 [list source $argv0]}
    close $chan
    set chan [open $wrapper w]
    puts $chan "#!/bin/sh"
    puts $chan "exec [ShQuote $shell] [ShQuote $preamble] \"\$@\""
    close $chan
    file attributes $wrapper -permissions 0755
    set state [dict create files [list $preamble $wrapper]]
    if {[info exists ::env(TCLCPROF_TCLTEST)]} {
	dict set state env $::env(TCLCPROF_TCLTEST)
    }
    lappend saved $state
    set ::env(TCLCPROF_TCLTEST) $options
    return [list $wrapper]
}

proc ::tclcprof::tcltest::ChildCleanup {} {
    variable saved

    set state [lindex $saved end]
    set saved [lrange $saved 0 end-1]
    if {![dict exists $state files]} {
	return
    }
    file delete {*}[dict get $state files]
    if {[dict exists $state env]} {
	set ::env(TCLCPROF_TCLTEST) [dict get $state env]
    } else {
	unset -nocomplain ::env(TCLCPROF_TCLTEST)
    }
}

proc ::tclcprof::tcltest::ShQuote {s} {
    return '[string map {' '\\''} $s]'
}
