# reporttext.tcl --
#
#	Text layout shared by the report types, diff and the CLI: the
#	columns and cells of tree and flat reports, times, counts,
#	numbers, sizes and percentages for text, frame names escaped and
#	checked for length, and the output of a report's lines to its
#	channel.
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::reportlib {}

# NoMatch --
#	The line of a text report whose -focus matches no frame.

proc ::tclcprof::reportlib::NoMatch {o} {
    return "no frame matches -focus [Quote [dict get $o -focus]]"
}

# Output --
#
#	Write lines of a text report to -channel, each ending with a
#	newline, in pieces of at most 1024 lines, so that no string is as
#	large as the report; with done, flush the channel: the report is
#	complete. A report writes nothing until it is known to succeed
#	(the profile checked, the rows computed, CheckNames passed): only
#	an error of the channel can stop it halfway.

proc ::tclcprof::reportlib::Output {o lines {done 1}} {
    set chan [dict get $o -channel]
    if {[catch {
	set n [llength $lines]
	for {set i 0} {$i < $n} {incr i 1024} {
	    puts $chan [join [lrange $lines $i [expr {$i + 1023}]] \n]
	}
	if {$done} {
	    flush $chan
	}
    } msg]} {
	Fail [list CHANNEL $chan] $msg
    }
    return
}

# CheckNames --
#
#	Fail before anything is written when a frame name is too long for
#	a line of text (more than maxName bytes): the line would exceed
#	the size of a Tcl value. Errors: TCLCPROF LIMIT text. Bytes of
#	UTF-8 (Tcl 9 has no string bytelength); a name of at most maxName/4
#	characters is short enough without encoding it.

proc ::tclcprof::reportlib::CheckNames {names} {
    variable maxName
    set short [expr {$maxName / 4}]
    foreach name $names {
	if {[string length $name] <= $short} {
	    continue
	}
	set bytes [string length [encoding convertto utf-8 $name]]
	if {$bytes > $maxName} {
	    Fail {LIMIT text} "frame name too long for a text report:\
		    $bytes bytes (at most $maxName)"
	}
    }
}

# Columns, Blank, ExactCells, BothCells --
#
#	The columns of tree and flat reports: sample weights (Under/In or
#	Self/Total with percentages); for exact trees calls, total and self
#	time with percentages, average and longest call; for sampled trees
#	with exact figures (mode both) the weights and then calls and total
#	time.

proc ::tclcprof::reportlib::Columns {type} {
    upvar 1 hasFig hasFig timeWeights timeWeights joined joined
    if {$timeWeights} {
	set title [format "%9s %9s %6s %9s %6s %9s %9s" \
		Calls Total % Self % Avg Max]
    } elseif {$type eq "tree"} {
	set title [format "%8s %7s %8s %7s" Under % In %]
    } else {
	set title [format "%8s %7s %8s %7s" Self % Total %]
    }
    if {!$timeWeights && ($hasFig || [info exists joined])} {
	append title [format " %9s %9s" Calls Time]
    }
    return "$title  Frame"
}

proc ::tclcprof::reportlib::Blank {what} {
    # As wide as the cells of Columns.
    switch -- $what {
	exact {return [string repeat " " 63]}
	both {return [string repeat " " 53]}
	default {return [string repeat " " 33]}
    }
}

proc ::tclcprof::reportlib::ExactCells {fig t s div} {
    if {![llength $fig]} {
	set fig [list 0 $t $s 0 0]
    }
    lassign $fig calls - - - max
    set avg [expr {$calls > 0 ? $t / $calls : ""}]
    format "%9s %9s %5.1f%% %9s %5.1f%% %9s %9s" [Calls $calls] [Dur $t] \
	    [expr {100.0 * $t / $div}] [Dur $s] [expr {100.0 * $s / $div}] \
	    [Dur $avg] [expr {$calls > 0 ? [Dur $max] : ""}]
}

proc ::tclcprof::reportlib::BothCells {fig} {
    if {![llength $fig]} {
	return [format "%9s %9s" "" ""]
    }
    format "%9s %9s" [Calls [lindex $fig 0]] [Dur [lindex $fig 1]]
}

# Dur --
#	A time in ns for text, in ns, \u00b5s, ms or s; "" stays "".

proc ::tclcprof::reportlib::Dur {ns} {
    if {$ns eq ""} {
	return ""
    }
    if {$ns < 1000} {
	return "[expr {round($ns)}]ns"
    } elseif {$ns < 1000000} {
	return [format %.1f\u00b5s [expr {$ns / 1e3}]]
    } elseif {$ns < 1000000000} {
	return [format %.1fms [expr {$ns / 1e6}]]
    }
    return [format %.2fs [expr {$ns / 1e9}]]
}

# Calls --
#	A call count; "calls/primitive" when a recursive frame's outermost
#	calls are fewer.

proc ::tclcprof::reportlib::Calls {calls {prim ""}} {
    if {$prim ne "" && $prim != $calls} {
	return $calls/$prim
    }
    return $calls
}

# Escape --
#	A string on one line: control characters as \n, \t, \r, \xHH,
#	line and paragraph separators as \u2028 and \u2029.

proc ::tclcprof::reportlib::Escape {s} {
    variable controlRE
    variable escapeMap
    if {[regexp $controlRE $s]} {
	return [string map $escapeMap $s]
    }
    return $s
}

proc ::tclcprof::reportlib::Quote {s} {
    return "\"[Escape $s]\""
}

# Frame --
#	A frame for text: its name, escaped, with " [C]" for C functions
#	and " [kind]" for kinds other than tcl and c.

proc ::tclcprof::reportlib::Frame {name kind} {
    variable controlRE
    if {[regexp $controlRE $name]} {
	set name [Escape $name]
    }
    switch -- $kind {
	tcl {return $name}
	c {return "$name \[C\]"}
	default {return "$name \[[Escape $kind]\]"}
    }
}

# Num --
#	A number for text: integers as they are, other numbers with the
#	given number of decimals (integral ones without, unless fixed).

proc ::tclcprof::reportlib::Num {v {decimals 2} {fixed 0}} {
    if {[string is entier -strict $v] && !$fixed} {
	return $v
    }
    if {[string is double -strict $v]
	    && ![catch {expr {$v == floor($v) && abs($v) < 1e15}} integral]} {
	if {$integral && !$fixed} {
	    return [format %.0f $v]
	}
	return [format %.${decimals}f $v]
    }
    return [Escape $v]
}

# Wt, Size --
#	A weight for text: as Num, or as a size (Size) when the report's
#	weights are bytes (byteWeights, a memory profile's bytes); a number
#	of bytes in B, KiB, MiB, GiB or TiB, in at most 7 characters.

proc ::tclcprof::reportlib::Wt {v} {
    variable byteWeights
    if {$byteWeights} {
	return [Size $v]
    }
    return [Num $v]
}

proc ::tclcprof::reportlib::Size {v} {
    if {![string is double -strict $v]
	    || [catch {expr {abs($v) < Inf}} ok] || !$ok} {
	return [Num $v]
    }
    if {abs($v) < 1024} {
	return "[Num [expr {round($v)}]]B"
    }
    foreach unit {KiB MiB GiB TiB} {
	set v [expr {$v / 1024.0}]
	if {abs($v) < 1023.5 || $unit eq "TiB"} {
	    break
	}
    }
    return [format [expr {abs($v) < 9.95 ? "%.1f%s" : "%.0f%s"}] $v $unit]
}

# Pct --
#	w as a percentage of whole, with the given number of decimals.

proc ::tclcprof::reportlib::Pct {w whole decimals} {
    if {$whole > 0} {
	return [format %.${decimals}f [expr {100.0 * $w / $whole}]]
    }
    return [format %.${decimals}f 0]
}
