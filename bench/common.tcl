# common.tcl --
#
#	What the benchmark scripts that run after run.tcl (scope.tcl,
#	memory.tcl, names.tcl, export.tcl) share: the median of a list of
#	figures, the merge of their results into the file -out names, and a
#	proc their child scripts take in.
#
# Copyright (c) 2026 The tclcprof authors.
# See the file "LICENSE" for terms of use.

namespace eval ::bench {
    namespace export median
}

# bench::rssProc --
#	The text of a proc rssKb, the resident memory of the process in KB
#	(/proc/self/status), for the scripts the benchmarks run in children.

set ::bench::rssProc {
    proc rssKb {} {
        set f [open /proc/self/status]
        set kb 0
        foreach line [split [read $f] \n] {
            if {[regexp {^VmRSS:\s+(\d+)} $line -> kb]} break
        }
        close $f
        return $kb
    }
}

# bench::median --
#	The middle figure of a list (the upper one of an even count).

proc ::bench::median {l} {
    set l [lsort -real $l]
    lindex $l [expr {[llength $l] / 2}]
}

# bench::addResults --
#	Put a script's results under key in the results file (a Tcl dict
#	of key/value lines, kept as it is otherwise); nothing when out is
#	empty.

proc ::bench::addResults {out key results} {
    if {$out eq ""} {
	return
    }
    set all {}
    if {[file exists $out]} {
	set f [open $out]
	set all [read $f]
	close $f
    }
    dict set all $key $results
    set f [open $out w]
    dict for {k v} $all {
	puts $f [list $k $v]
    }
    close $f
}
