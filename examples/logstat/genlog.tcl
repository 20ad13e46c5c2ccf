# genlog.tcl --
#
#	Makes a web server access log for the logstat example: lines in
#	the Common Log Format with the response time in milliseconds
#	appended, as nginx and Apache write them with a custom format:
#
#	  10.0.3.17 - - [28/Nov/2026:09:00:01 +0000] "GET /api/items HTTP/1.1" 200 5120 12
#
#	The same count gives the same log (a fixed seed). As a script it
#	writes the log to stdout; sourced, it defines ::genlog::lines.
#
#	    tclsh examples/logstat/genlog.tcl ?count? > access.log
#
# Copyright (c) 2026 The tclcprof authors.
# See the file "LICENSE" for terms of use.

namespace eval ::genlog {}

# ::genlog::lines count --
#	A list of count log lines, twenty requests a second from 09:00:00 on
#	28 November 2026, about one in fifty of them malformed.

proc ::genlog::lines {count} {
    expr {srand(1128)}
    set paths {/ /index.html /api/items /api/items/42 /api/search
	/api/login /static/app.js /static/app.css /static/logo.png
	/api/orders /api/orders/7 /health}
    set statuses {200 200 200 200 200 200 200 304 304 404 500 302}
    set methods {GET GET GET GET POST}
    set t0 [clock scan "2026-11-28 09:00:00" -format "%Y-%m-%d %H:%M:%S" \
	-gmt 1]
    set lines {}
    for {set i 0} {$i < $count} {incr i} {
	if {$i % 50 == 49} {
	    lappend lines "garbage line $i"
	    continue
	}
	set client 10.0.[expr {int(rand() * 8)}].[expr {int(rand() * 40)}]
	set stamp [clock format [expr {$t0 + $i / 20}] \
	    -format {%d/%b/%Y:%H:%M:%S +0000} -gmt 1]
	set path [lindex $paths [expr {int(rand() * [llength $paths])}]]
	set method [lindex $methods [expr {int(rand() * 5)}]]
	set status [lindex $statuses [expr {int(rand() * 12)}]]
	set bytes [expr {$status == 304 ? "-" : int(rand() * 20000)}]
	set ms [expr {int(-log(1.0 - rand()) * 40)}]
	lappend lines "$client - - \[$stamp\] \"$method $path HTTP/1.1\"\
	    $status $bytes $ms"
    }
    return $lines
}

if {[info exists argv0] && [file tail $argv0] eq [file tail [info script]]} {
    set count [expr {[llength $argv] ? [lindex $argv 0] : 20000}]
    puts [join [::genlog::lines $count] \n]
}
