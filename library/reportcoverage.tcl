# reportcoverage.tcl --
#
#	report -type coverage: the commands, procedures and lines that
#	ran, and those of the procedures known that did not.
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::reportlib {}

# Coverage --
#
#	-type coverage: which procedures ran (with their calls) and which,
#	though defined, never did; which commands ran; and which lines of
#	which files ran (with -lines 1). -focus restricts the procedures to
#	a pattern; -hide leaves procedures out (by default those of Tcl's
#	own library and of tcltest).

proc ::tclcprof::reportlib::Coverage {o profile} {
    variable coverageHide
    CheckProfile $o $profile coverage
    if {[catch {dict get $profile coverage} cov]} {
	Fail {NODATA coverage} "no coverage data: profile with -mode\
		coverage, exact or both"
    }
    set meta [dict get $profile meta]
    set hide [expr {[dict get $o hideGiven] ? [dict get $o -hide]
	    : $coverageHide}]
    set focusOn [dict get $o focusOn]
    set focus [dict get $o -focus]

    set keep [list apply {{hide focusOn focus name} {
	if {$focusOn && ![::tclcprof::reportlib::FocusMatch $focus $name \
		tcl]} {
	    return 0
	}
	expr {![::tclcprof::reportlib::Hidden $hide $name]}
    }} $hide $focusOn $focus]

    set executed {}
    set commands {}
    foreach c [dict get $cov commands] {
	set name [dict get $c name]
	lappend commands $name [dict get $c calls]
	if {[dict get $c tclkind] eq "proc" && [{*}$keep $name]} {
	    dict set executed $name [dict get $c calls]
	}
    }
    set defined {}
    foreach name [dict get $cov procs] {
	if {[{*}$keep $name]} {
	    dict set defined $name 1
	}
    }
    set never [lsort [lmap name [dict keys $defined] {
	if {[dict exists $executed $name]} continue
	set name
    }]]
    set nDefined [dict size [dict merge $defined $executed]]
    set execList [lsort -stride 2 -index 0 $executed]
    if {[dict get $o -sort] eq "calls"} {
	set execList [lsort -stride 2 -index 1 -integer -decreasing $execList]
    }
    set files {}
    foreach l [dict get $cov lines] {
	dict lappend files [dict get $l file] [dict get $l line] \
		[dict get $l calls]
    }
    set fileDict {}
    foreach f [lsort [dict keys $files]] {
	dict set fileDict $f [lsort -stride 2 -index 0 -integer \
		[dict get $files $f]]
    }

    if {[dict get $o -format] eq "dict"} {
	return [dict create procs_defined $nDefined \
		procs_executed [dict size $executed] executed $execList \
		never $never commands [lsort -stride 2 -index 0 $commands] \
		lines $fileDict]
    }
    set whole 0
    set lines [Header $o $meta $whole]
    set pct [expr {$nDefined > 0
	    ? [format %.1f [expr {100.0 * [dict size $executed] / $nDefined}]]
	    : "0.0"}]
    lappend lines "procs: [dict size $executed] of $nDefined executed\
	    ($pct%); [expr {[llength $commands] / 2}] distinct commands ran"
    if {[dict size $executed]} {
	lappend lines "executed:" [format "%9s  %s" Calls Proc]
	foreach {name calls} $execList {
	    lappend lines [format "%9s  %s" $calls [Escape $name]]
	}
    }
    if {[llength $never]} {
	lappend lines "never executed:"
	foreach name $never {
	    lappend lines "  [Escape $name]"
	}
    }
    if {[dict size $fileDict]} {
	set n 0
	dict for {f ls} $fileDict {
	    incr n [expr {[llength $ls] / 2}]
	}
	lappend lines "lines with commands that ran: $n in [dict size $fileDict]\
		file[expr {[dict size $fileDict] == 1 ? "" : "s"}]"
	dict for {f ls} $fileDict {
	    lappend lines "  [Escape [ShortPath $f]]: [Ranges [dict keys $ls]]"
	}
    }
    return [Output $o $lines]
}

# Ranges --
#	Sorted line numbers as "3 5 7-9".

proc ::tclcprof::reportlib::Ranges {numbers} {
    set out {}
    set start ""
    foreach n $numbers {
	if {$start eq ""} {
	    set start $n
	    set end $n
	} elseif {$n == $end + 1} {
	    set end $n
	} else {
	    lappend out [expr {$start == $end ? $start : "$start-$end"}]
	    set start $n
	    set end $n
	}
    }
    if {$start ne ""} {
	lappend out [expr {$start == $end ? $start : "$start-$end"}]
    }
    return [join $out]
}
