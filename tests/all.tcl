# all.tcl --
#
#	Runs tclcprof's test suite: every *.test file in this directory,
#	each in a child tclsh of its own (so a crash is confined to one
#	file), through tcltest's runAllTests.
#
#	    tclsh all.tcl ?tcltest option value ...?
#
#	Options go to tcltest::configure, e.g. -file 'level*.test',
#	-match 'stack-*', -verbose bpe, -singleproc 1.  "make test" runs
#	this script with TCLLIBPATH pointing at the build directory and
#	passes TESTFLAGS as the options.
#
#	Every file runs under the default capture (frames: sampled runs
#	read Tcl's own frames, exact timing wraps commands); the files that
#	exercise the level stack (levelstack, capture, api, exact, sample,
#	events, by default) run once more under each other capture: the
#	wrapper's (-capture wrap), Tcl's trace (-capture trace) and both
#	compared (-capture check, which also asserts that the two never
#	disagreed). The test files read the capture from the environment
#	variable TCLCPROF_TEST_CAPTURE. "-captures LIST" chooses the
#	captures (the first runs every file; the others run the
#	capture-sensitive files, or those of -file).
#	TCLCPROF_TEST_JOBS=2 runs the other captures' passes beside the
#	first, in a second child.
#
#	The exit status is 1 when any test failed or any test file did not
#	run to completion (error, crash, non-zero exit), and 0 otherwise,
#	so that "make test" fails along with the tests.
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

package require Tcl 8.6-
package require tcltest 2.2

# Not ::tclcprof: with -singleproc 1 that namespace belongs to the
# package, whose C code creates it.
namespace eval ::tclcprof_alltests {
    variable failed 0
}

tcltest::configure -testdir [file dirname [file normalize [info script]]]

# Temporary files go to a directory of their own, not the source tree.
set ::tclcprof_alltests::tmp [file join \
    [expr {[info exists ::env(TMPDIR)] ? $::env(TMPDIR) : "/tmp"}] \
    tclcprof-tests-[pid]]
file mkdir $::tclcprof_alltests::tmp
tcltest::configure -tmpdir $::tclcprof_alltests::tmp

# A watchdog: each test file runs in a child tclsh that is killed after
# ten minutes, so that a hang fails the suite instead of stalling it.
if {![catch {exec timeout --version}]} {
    set wrapper [file join $::tclcprof_alltests::tmp tclsh-watchdog]
    set f [open $wrapper w]
    puts $f "#!/bin/sh"
    puts $f "exec timeout -s KILL 600 [list [info nameofexecutable]] \"\$@\""
    close $f
    file attributes $wrapper -permissions 0755
    tcltest::interpreter $wrapper
}
set ::tclcprof_alltests::captures {frames wrap trace check}

# The failures, named again at the end: CI shows a log's tail, and the
# "==== name FAILED" lines of tcltest are far above it. Every line the
# suite prints passes through scan::line, which notes the test file
# being run and each failing test or test file under the current
# capture.
namespace eval ::tclcprof_alltests::scan {
    variable file ""
    variable capture ""
    variable failures {}
    variable buf ""
    proc line {text} {
	variable file
	variable capture
	variable failures
	if {[regexp {^=== capture (\S+)$} $text -> capture]} {
	    set file ""
	} elseif {[regexp {^(\S+\.test)$} $text -> file]} {
	} elseif {[regexp {^==== (\S+) .*FAILED\s*$} $text -> name]} {
	    lappend failures "$capture $file: $name"
	} elseif {[regexp {^Test file error: (.*)$} $text -> what]} {
	    lappend failures "$capture $file: test file error: $what"
	}
    }
    # A channel transform on stdout: every line written passes, as it is.
    proc initialize {h mode} {
	return {initialize finalize write flush}
    }
    proc finalize {h} {}
    proc write {h data} {
	variable buf
	append buf $data
	while {[set i [string first \n $buf]] >= 0} {
	    line [string range $buf 0 $i-1]
	    set buf [string range $buf $i+1 end]
	}
	return $data
    }
    proc flush {h} {
	return ""
    }
    # The closing list, just before the counts.
    proc report {} {
	variable failures
	set seen {}
	foreach f $failures {
	    if {![dict exists $seen $f]} {
		dict set seen $f 1
		puts "tclcprof: FAILED: $f"
	    }
	}
    }
    namespace export *
    namespace ensemble create -subcommands {initialize finalize write flush}
}
chan push stdout ::tclcprof_alltests::scan

if {[set i [lsearch -exact $argv -captures]] >= 0} {
    set ::tclcprof_alltests::captures [lindex $argv $i+1]
    set argv [lreplace $argv $i $i+1]
}
set ::tclcprof_alltests::captureFiles {
    levelstack.test capture.test api.test exact.test sample.test events.test
}
set ::tclcprof_alltests::userFiles [expr {[lsearch -exact $argv -file] >= 0}]

# With TCLCPROF_TEST_JOBS=2, the passes of the other captures run beside
# the first, in a second child tclsh, when there are several and the
# tests run in child processes (not -singleproc 1): they share no files,
# ports or X displays, and on two cores the suite takes the time of its
# longest pass. The first pass prints as it goes; the others' output
# follows, then one closing line with the counts of all. Not the default:
# the CPU clock's sampling tests lose samples when the suite loads the
# machine itself (scope.test 32.2 once).
set ::tclcprof_alltests::jobs [expr {[info exists ::env(TCLCPROF_TEST_JOBS)]
	? $::env(TCLCPROF_TEST_JOBS) : 1}]
set ::tclcprof_alltests::single [expr {[set i [lsearch -exact $argv \
	-singleproc]] >= 0 && [string is true -strict [lindex $argv $i+1]]}]
if {$::tclcprof_alltests::jobs > 1 && !$::tclcprof_alltests::single
	&& [llength $::tclcprof_alltests::captures] > 1} {
    set rest [lrange $::tclcprof_alltests::captures 1 end]
    set log [file join $::tclcprof_alltests::tmp rest.log]
    set me [list [info nameofexecutable] [file normalize [info script]]]
    set env(TCLCPROF_TEST_JOBS) 1
    set restChan [open "|[list {*}$me -captures $rest {*}$argv >& $log]" w]
    set firstChan [open "|[list {*}$me -captures \
	    [lindex $::tclcprof_alltests::captures 0] {*}$argv 2>@1]" r]
    set failed 0
    set counts {0 0 0}
    set closing {^tclcprof: (\d+) passed, (\d+) failed, (\d+) skipped$}
    foreach chan [list $firstChan $restChan] {
	if {$chan eq $restChan} {
	    if {[catch {close $restChan}]} {
		set failed 1
	    }
	    set chan [open $log r]
	}
	while {[gets $chan line] >= 0} {
	    if {[regexp $closing $line -> p f k]} {
		set counts [lmap a $counts b [list $p $f $k] {expr {$a + $b}}]
		continue
	    }
	    puts $line
	}
	if {[catch {close $chan}]} {
	    set failed 1
	}
    }
    catch {file delete -force $::tclcprof_alltests::tmp}
    lassign $counts passed nfailed skipped
    ::tclcprof_alltests::scan::report
    puts "tclcprof: $passed passed, $nfailed failed, $skipped skipped"
    if {$failed || $nfailed} {
	puts stderr "all.tcl: FAILED (see the failing tests or test files above)"
	exit 1
    }
    exit 0
}

tcltest::configure {*}$argv

if {![llength [glob -nocomplain -directory [tcltest::testsDirectory] *.test]]} {
    puts stderr "all.tcl: no *.test files in [tcltest::testsDirectory]"
    exit 1
}

# tcltest resets its counts as it reports them, so look at them from
# the cleanup hook, which runs just before: in the final report of
# runAllTests (counts summed over the child processes, and the names of
# failing files) and, with -singleproc 1, after each test file.
proc tcltest::cleanupTestsHook {} {
    variable numTests
    variable failFiles
    if {$numTests(Failed) > 0 || [llength $failFiles] > 0} {
	set ::tclcprof_alltests::failed 1
    }
    # The last call is the final report, with the counts of all files.
    set ::tclcprof_alltests::last [list $numTests(Passed) \
	    $numTests(Failed) $numTests(Skipped)]
}

# One pass per capture; counts are summed over them.
set ::tclcprof_alltests::counts {0 0 0}
foreach capture $::tclcprof_alltests::captures {
    set ::env(TCLCPROF_TEST_CAPTURE) $capture
    if {$capture ne [lindex $::tclcprof_alltests::captures 0]
	    && !$::tclcprof_alltests::userFiles} {
	tcltest::configure -file $::tclcprof_alltests::captureFiles
    }
    puts "\n=== capture $capture"
    unset -nocomplain ::tclcprof_alltests::last
    # runAllTests itself (tcltest 2.5 and later) returns true when a test
    # failed or a test file exited with an error or died; older versions
    # return nothing.
    set result [tcltest::runAllTests]
    if {[string is true -strict $result]} {
	set ::tclcprof_alltests::failed 1
    }
    if {[info exists ::tclcprof_alltests::last]} {
	set ::tclcprof_alltests::counts [lmap a $::tclcprof_alltests::counts \
		b $::tclcprof_alltests::last {expr {$a + $b}}]
    }
}

catch {file delete -force $::tclcprof_alltests::tmp}

# A plain closing line that CI systems recognise.
if {[info exists ::tclcprof_alltests::counts]} {
    lassign $::tclcprof_alltests::counts passed failed skipped
    ::tclcprof_alltests::scan::report
    puts "tclcprof: $passed passed, $failed failed, $skipped skipped"
}

if {$::tclcprof_alltests::failed} {
    puts stderr "all.tcl: FAILED (see the failing tests or test files above)"
    exit 1
}
exit 0
