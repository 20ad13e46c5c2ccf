# events.tcl --
#
#	An event-driven program under tclcprof: a local line server with
#	[fileevent] handlers, a client talking to it, a periodic timer doing
#	housekeeping, idle callbacks, and a handler that fails now and then
#	(the background error handler reports it). It runs for about a
#	second, profiled on the wall clock, then prints:
#
#	- the call tree, where each handler the event loop ran is a frame of
#	  kind event under vwait ("fileevent sock... readable", "after
#	  ::app::housekeeping"), and the time the loop waited is [idle];
#	- report -type events: per origin (the procedure and file:line that
#	  scheduled the handlers) and kind, how many ran, their time, and
#	  for timers how late they ran.
#
#	tclsh examples/events.tcl ?exact|sample|both?

package require tclcprof

namespace eval ::app {
    variable served 0
    variable requests 0
    variable ticks 0
}

# The server: one handler per client connection.
proc ::app::accept {chan addr port} {
    fconfigure $chan -buffering line -blocking 0
    fileevent $chan readable [list ::app::serve $chan]
}

proc ::app::serve {chan} {
    variable served
    if {[gets $chan line] < 0} {
        if {[eof $chan]} {
            close $chan
        }
        return
    }
    incr served
    # Some work per request: a checksum of a few kilobytes.
    set sum 0
    foreach c [split [string repeat $line 40] ""] {
        set sum [expr {($sum * 31 + [scan $c %c]) & 0xffffff}]
    }
    puts $chan "$sum"
    after idle [list ::app::flushLog $served]
}

proc ::app::flushLog {n} {
    lappend ::app::log "served $n"
}

# The client: sends a request, waits for the answer, sends the next one
# a little later.
proc ::app::answer {chan} {
    variable requests
    if {[gets $chan line] < 0} {
        return
    }
    if {[incr requests] >= 40} {
        close $chan
        set ::app::done 1
        return
    }
    after 15 [list ::app::request $chan]
}

proc ::app::request {chan} {
    puts $chan "request $::app::requests [string repeat x 50]"
}

# Housekeeping every 50 ms; every third time it fails.
proc ::app::housekeeping {} {
    variable ticks
    incr ticks
    set keep [lrange [lsort -dictionary [lreverse $::app::log]] 0 100]
    if {$ticks % 3 == 0} {
        error "housekeeping failed at tick $ticks"
    }
    after 50 ::app::housekeeping
}

proc ::app::failed {msg opts} {
    lappend ::app::errors $msg
    after 50 ::app::housekeeping
}

proc ::app::main {} {
    set srv [socket -server ::app::accept -myaddr 127.0.0.1 0]
    set port [lindex [fconfigure $srv -sockname] 2]
    set c [socket 127.0.0.1 $port]
    fconfigure $c -buffering line -blocking 0
    fileevent $c readable [list ::app::answer $c]
    after 50 ::app::housekeeping
    ::app::request $c
    vwait ::app::done
    close $srv
}

set ::app::log {}
set ::app::errors {}
interp bgerror {} ::app::failed
set mode [expr {$argc > 0 ? [lindex $argv 0] : "exact"}]
tclcprof::start -mode $mode -clock wall
::app::main
tclcprof::stop

puts "== the call tree: handlers under vwait, the waits as \[idle\]"
tclcprof::report -min 2
puts ""
puts "== report -type events"
tclcprof::report -type events
puts ""
puts "($::app::served requests served, [llength $::app::errors] background\
        errors reported)"
