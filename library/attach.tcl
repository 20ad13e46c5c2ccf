# attach.tcl --
#
#	Profiling a process from outside (attach layer, Tcl side): the
#	stacks of a running process that never loaded tclcprof, read by
#	unix/remote.c (::tclcprof::attach::Stacks), formatted as text, JSON
#	or folded stacks; the "dump" subcommand of the command-line tool.
#
#	    tclcprof::attach::dump pid ?-format text|json|folded?
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::attach {
    namespace export dump
}

# ::tclcprof::attach::dump --
#
#	The mixed Tcl and C stacks of every thread of process 'target'.
#
# Results:
#	The stacks in the format asked for; TCLCPROF ATTACH errors when the
#	process cannot be read, TCLCPROF USAGE on bad arguments.

proc ::tclcprof::attach::dump {target args} {
    set format text
    foreach {opt value} $args {
	switch -- $opt {
	    -format {
		if {$value ni {text json folded}} {
		    return -code error -errorcode {TCLCPROF USAGE} \
			"bad format \"$value\": must be text, json or folded"
		}
		set format $value
	    }
	    default {
		return -code error -errorcode {TCLCPROF USAGE} \
		    "bad option \"$opt\": must be -format"
	    }
	}
    }
    if {[llength $args] % 2} {
	return -code error -errorcode {TCLCPROF USAGE} \
	    "option \"[lindex $args end]\" has no value"
    }
    set r [Stacks $target]
    return [Format$format $target $r]
}

# FrameText, FrameLabel --
#	One frame as the text dump shows it / as folded stacks name it.

proc ::tclcprof::attach::FrameText {f} {
    if {[dict get $f kind] eq "c"} {
	return "[dict get $f name] \[C\] ([dict get $f module])"
    }
    set s [dict get $f name]
    if {[dict exists $f file]} {
	append s " ([dict get $f file]:[dict get $f line])"
    } elseif {[dict exists $f line]} {
	append s " (line [dict get $f line])"
    }
    return $s
}

proc ::tclcprof::attach::FrameLabel {f} {
    set name [::tclcprof::exportlib::FoldedName [dict get $f name]]
    if {[dict get $f kind] eq "c"} {
	return "$name \[C\]"
    }
    return $name
}

# Formattext --
#	py-spy's dump layout: each thread, innermost frame first.

proc ::tclcprof::attach::Formattext {target r} {
    set threads [dict get $r threads]
    set lines [list [format "Process %s: %d thread%s, %d interp%s,\
	    stopped %.2f ms" $target [llength $threads] \
	    [expr {[llength $threads] == 1 ? "" : "s"}] \
	    [dict get $r interps] \
	    [expr {[dict get $r interps] == 1 ? "" : "s"}] \
	    [expr {[dict get $r pause] / 1000.0}]]]
    foreach t $threads {
	lappend lines "" "Thread [dict get $t tid]:"
	foreach f [lreverse [dict get $t frames]] {
	    lappend lines "    [FrameText $f]"
	}
    }
    return [join $lines \n]
}

# Formatfolded --
#	One line a thread: its frames outermost first, then a count of 1.

proc ::tclcprof::attach::Formatfolded {target r} {
    set lines {}
    foreach t [dict get $r threads] {
	set names {}
	foreach f [dict get $t frames] {
	    lappend names [FrameLabel $f]
	}
	if {[llength $names]} {
	    lappend lines "[join $names {;}] 1"
	}
    }
    return [join $lines \n]
}

# Formatjson --
#	{"pid":..., "pause_ms":..., "interps":..., "threads":[{"tid":...,
#	"frames":[{"kind":"tcl","name":...,"file":...,"line":...}, ...]}]}
#	with frames innermost first.

proc ::tclcprof::attach::Formatjson {target r} {
    set ts {}
    foreach t [dict get $r threads] {
	set fs {}
	foreach f [lreverse [dict get $t frames]] {
	    set items {}
	    dict for {k v} $f {
		if {$k eq "line"} {
		    lappend items "\"line\":$v"
		} else {
		    lappend items "[JsonString $k]:[JsonString $v]"
		}
	    }
	    lappend fs "\{[join $items ,]\}"
	}
	lappend ts "\{\"tid\":[dict get $t tid],\"frames\":\[[join $fs ,]\]\}"
    }
    set head [expr {[string is integer -strict $target]
	? "\"pid\":$target" : "\"core\":[JsonString $target]"}]
    return "\{$head,\"pause_ms\":[format %.3f \
	[expr {[dict get $r pause] / 1000.0}]],\"interps\":[dict get $r\
	interps],\"threads\":\[[join $ts ,]\]\}"
}

proc ::tclcprof::attach::JsonString {s} {
    set map {\\ \\\\ \" \\\" \n \\n \r \\r \t \\t}
    set s [string map $map $s]
    if {[regexp {[\x00-\x1f]} $s]} {
	set out ""
	foreach c [split $s ""] {
	    if {[scan $c %c] < 0x20} {
		append out [format \\u%04x [scan $c %c]]
	    } else {
		append out $c
	    }
	}
	set s $out
    }
    return "\"$s\""
}

# ::tclcprof::cli::Dump --
#
#	tclcprof dump pid ?-format text|json|folded?

dict set ::tclcprof::cli::commands dump \
    {Dump "dump pid ?-format text|json|folded?"}

proc ::tclcprof::cli::Dump {args} {
    if {[llength $args] < 1 || [string match -* [lindex $args 0]]} {
	UsageError
    }
    puts [::tclcprof::attach::dump {*}$args]
    return 0
}
