# logstat.tcl --
#
#	The program of tclcprof's tutorial (doc/tutorial.md): it summarizes
#	a web server's access log (see genlog.tcl for the format), the way
#	a small operations tool would: requests and response times per
#	path (median and 95th percentile), status codes, the clients that
#	fetched the most bytes.
#
#	It reads the log from the event loop, a thousand lines per
#	[fileevent] handler, with a timer keeping a count of its progress
#	(printed to stderr with -progress), so that a GUI or server it were
#	part of would stay responsive.
#	Timestamps are converted with [clock scan] once per minute of the
#	log and cached. With the environment variable LOGSTAT_SLOW set, the
#	cache is bypassed: the "regression" the tutorial's gate catches.
#
#	    tclsh examples/logstat/logstat.tcl ?-progress? access.log ?top?
#
#	With the environment variable TCLCPROF set, it loads tclcprof, which
#	then profiles it (see README.md).
#
#	Sourced (by its tests), it defines the ::logstat procs and does
#	nothing else.
#
# Copyright (c) 2026 The tclcprof authors.
# See the file "LICENSE" for terms of use.

namespace eval ::logstat {
    variable slow [info exists ::env(LOGSTAT_SLOW)]
    variable minutes {}		;# "28/Nov/2026:09:00" -> its clock value
    variable done 0
    variable verbose 0		;# progress to stderr (-progress)
    variable lines 0
    variable bad 0
    variable hits {}		;# path -> requests
    variable status {}		;# status code -> requests
    variable bytes {}		;# client -> bytes sent to it
    variable ms			;# array: path -> list of response times
    variable first {}
    variable last {}
}

# ::logstat::reset --
#	Forget the statistics of earlier logs.

proc ::logstat::reset {} {
    variable ms
    variable lines 0
    variable bad 0
    variable hits {}
    variable status {}
    variable bytes {}
    variable first {}
    variable last {}
    array unset ms
    array set ms {}
}

# ::logstat::parse line --
#	The fields of one log line as a dict (client time method path status
#	bytes ms), or an empty string if the line is not a request.

proc ::logstat::parse {line} {
    if {![regexp {^(\S+) \S+ \S+ \[([^\]]+)\] "(\S+) (\S+) [^"]*" (\d{3}) (\d+|-) (\d+)$} \
	    $line -> client stamp method path code size ms]} {
	return ""
    }
    if {$size eq "-"} {
	set size 0
    }
    dict create client $client time [timestamp $stamp] method $method \
	path $path status $code bytes $size ms $ms
}

# ::logstat::timestamp text --
#	The clock value of a timestamp such as "28/Nov/2026:09:00:01 +0000".
#	[clock scan] takes tens of microseconds, so it runs once per minute
#	of the log; the seconds are added to the cached minute.

proc ::logstat::timestamp {text} {
    variable slow
    variable minutes
    set minute [string range $text 0 16]
    set seconds [scan [string range $text 18 19] %d]
    if {$slow || ![dict exists $minutes $minute]} {
	set t [clock scan "$minute:00 [string range $text 21 end]" \
	    -format {%d/%b/%Y:%H:%M:%S %z}]
	if {$slow} {
	    return [expr {$t + $seconds}]
	}
	dict set minutes $minute $t
    }
    expr {[dict get $minutes $minute] + $seconds}
}

# ::logstat::add record --
#	Count one parsed request.

proc ::logstat::add {record} {
    variable hits
    variable status
    variable bytes
    variable ms
    variable first
    variable last
    set path [dict get $record path]
    set time [dict get $record time]
    dict incr hits $path
    dict incr status [dict get $record status]
    dict incr bytes [dict get $record client] [dict get $record bytes]
    lappend ms($path) [dict get $record ms]
    if {$first eq "" || $time < $first} {
	set first $time
    }
    if {$last eq "" || $time > $last} {
	set last $time
    }
}

# ::logstat::percentile values p --
#	The p-th percentile (0-100) of a list of numbers.

proc ::logstat::percentile {values p} {
    set sorted [lsort -integer $values]
    set i [expr {int(ceil($p / 100.0 * [llength $sorted])) - 1}]
    lindex $sorted [expr {max($i, 0)}]
}

# ::logstat::summary ?top? --
#	The report, as text: the top paths by requests with their median and
#	95th percentile response times, the status codes, the top clients by
#	bytes.

proc ::logstat::summary {{top 5}} {
    variable lines
    variable bad
    variable hits
    variable status
    variable bytes
    variable ms
    variable first
    variable last
    set out {}
    lappend out [format "%d lines, %d requests, %d malformed, %s to %s" \
	$lines [expr {$lines - $bad}] $bad \
	[clock format $first -format %H:%M:%S -gmt 1] \
	[clock format $last -format %H:%M:%S -gmt 1]]
    lappend out "" [format "%-16s %8s %8s %8s" path requests p50 p95]
    set paths [lsort -stride 2 -index 1 -integer -decreasing $hits]
    foreach {path n} [lrange $paths 0 [expr {2 * $top - 1}]] {
	lappend out [format "%-16s %8d %6dms %6dms" $path $n \
	    [percentile $ms($path) 50] [percentile $ms($path) 95]]
    }
    lappend out "" "status: [lsort -stride 2 -index 0 $status]"
    set clients [lsort -stride 2 -index 1 -integer -decreasing $bytes]
    lappend out "top clients by bytes: [lrange $clients 0 5]"
    join $out \n
}

# ::logstat::read path --
#	Read and count the log at path from the event loop; ::logstat::done
#	is set to 1 at its end.

proc ::logstat::read {path} {
    variable done 0
    set chan [open $path r]
    fconfigure $chan -blocking 0 -buffersize 65536
    fileevent $chan readable [list ::logstat::chunk $chan]
    after 100 ::logstat::progress
}

# ::logstat::chunk chan --
#	The readable handler: up to a thousand lines at a time.

proc ::logstat::chunk {chan} {
    variable lines
    variable bad
    variable done
    for {set n 0} {$n < 1000 && [gets $chan line] >= 0} {incr n} {
	incr lines
	set record [parse $line]
	if {$record eq ""} {
	    incr bad
	    continue
	}
	add $record
    }
    if {[eof $chan]} {
	close $chan
	set done 1
    }
}

# ::logstat::progress --
#	Every 100 ms, the lines read so far (to stderr with -progress).

proc ::logstat::progress {} {
    variable lines
    variable done
    variable verbose
    if {!$done} {
	if {$verbose} {
	    puts stderr "logstat: $lines lines"
	}
	after 100 ::logstat::progress
    }
}

# ::logstat::main path ?top? --
#	Read the log and print its summary.

proc ::logstat::main {path {top 5}} {
    reset
    read $path
    vwait ::logstat::done
    puts [summary $top]
}

if {[info exists argv0] && [file tail $argv0] eq [file tail [info script]]} {
    # Profiling on demand, at no cost otherwise: with TCLCPROF set (to
    # the options of tclcprof::start), loading the package starts it.
    if {[info exists ::env(TCLCPROF)]} {
	package require tclcprof
    }
    if {[lindex $argv 0] eq "-progress"} {
	set ::logstat::verbose 1
	set argv [lrange $argv 1 end]
    }
    if {[llength $argv] < 1 || [llength $argv] > 2} {
	puts stderr "usage: tclsh [file tail $argv0] ?-progress? access.log ?top?"
	exit 2
    }
    ::logstat::main {*}$argv
}
