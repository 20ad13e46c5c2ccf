# attach.tcl --
#
#	Profiling a process from outside (attach layer, Tcl side): the
#	stacks of a running process that never loaded tclcprof, read by
#	unix/remote.c (::tclcprof::attach::Stacks), formatted as text, JSON
#	or folded stacks; the "dump" subcommand of the command-line tool.
#
#	    tclcprof::attach::dump pid|core ?executable? ?-format text|json|folded?
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
#	The mixed Tcl and C stacks of every thread of process 'target', or
#	of core file 'target' (of executable exe, the first argument after
#	it when args has an odd length, else found from the core).
#
# Results:
#	The stacks in the format asked for; TCLCPROF ATTACH errors when the
#	process cannot be read, TCLCPROF USAGE on bad arguments.

proc ::tclcprof::attach::dump {target args} {
    set format text
    set exe {}
    if {[llength $args] % 2 && ![string is integer -strict $target]} {
	set args [lassign $args exe]
    }
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
    set r [Stacks $target {*}$exe]
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
    set head [format "%d thread%s, %d interp%s" [llength $threads] \
	[expr {[llength $threads] == 1 ? "" : "s"}] [dict get $r interps] \
	[expr {[dict get $r interps] == 1 ? "" : "s"}]]
    if {[dict exists $r signal]} {
	set sig [dict get $r signal]
	set lines [list "Core file $target: $head, signal $sig[SignalName $sig]"]
    } else {
	set lines [list [format "Process %s: %s, stopped %.2f ms" $target \
	    $head [expr {[dict get $r pause] / 1000.0}]]]
    }
    foreach t $threads {
	lappend lines "" "Thread [dict get $t tid]:"
	foreach f [lreverse [dict get $t frames]] {
	    lappend lines "    [FrameText $f]"
	}
    }
    return [join $lines \n]
}

# SignalName --
#	" (SIGSEGV)" for 11, from the signals this platform names.

proc ::tclcprof::attach::SignalName {n} {
    set names {1 SIGHUP 2 SIGINT 3 SIGQUIT 4 SIGILL 5 SIGTRAP 6 SIGABRT
	7 SIGBUS 8 SIGFPE 9 SIGKILL 10 SIGUSR1 11 SIGSEGV 12 SIGUSR2
	13 SIGPIPE 14 SIGALRM 15 SIGTERM 24 SIGXCPU 25 SIGXFSZ 31 SIGSYS}
    if {[dict exists $names $n]} {
	return " ([dict get $names $n])"
    }
    return ""
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
    if {[dict exists $r signal]} {
	append head ",\"signal\":[dict get $r signal]"
    }
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
#	tclcprof dump pid|core ?executable? ?-format text|json|folded?

dict set ::tclcprof::cli::commands dump \
    {Dump "dump pid|core ?executable? ?-format text|json|folded?"}

proc ::tclcprof::cli::Dump {args} {
    if {[llength $args] < 1 || [string match -* [lindex $args 0]]} {
	UsageError
    }
    puts [::tclcprof::attach::dump {*}$args]
    return 0
}
