# stack.tcl --
#
#	A small nested workload (procs, an ensemble, TclOO with next, a
#	generator coroutine, lsort -command and an event handler) run under
#	tclcprof. At a few points it prints the live level
#	stack, the frames the sampler splices into native stacks.
#
#	tclsh examples/stack.tcl

package require tclcprof

proc showStack {where} {
    puts "-- $where"
    set indent ""
    foreach f [lrange [tclcprof::stack] 0 end-1] {
        puts [format "   %s%-28s %-8s level %d" $indent \
            [dict get $f name] [dict get $f kind] [dict get $f level]]
        append indent "  "
    }
}

namespace eval ::shapes {
    namespace export area
    namespace ensemble create
    proc area {kind size} {
        ::showStack "inside an ensemble subcommand"
        expr {$kind eq "square" ? $size * $size : 3.14159 * $size * $size}
    }
}

oo::class create Base {
    method describe {} {
        ::showStack "inside a method reached with next"
        return base
    }
}
oo::class create Item {
    superclass Base
    method describe {} { return "item/[next]" }
}

proc producer {} {
    yield
    foreach n {1 2 3} {
        if {$n == 2} { ::showStack "inside a coroutine resumed from another proc" }
        yield $n
    }
    return done
}
proc consume {} { return [gen] }

proc onTimer {} {
    ::showStack "inside an after handler run by vwait"
    set ::demoDone 1
}

proc compare {a b} {
    if {$a == 3} { ::showStack "inside lsort -command" }
    expr {$a - $b}
}

namespace eval app {
    proc run {} {
        step
        [Item new] describe
        coroutine ::gen ::producer
        consume; consume
        lsort -command ::compare {5 3 1}
        after 0 ::onTimer
        vwait ::demoDone
    }
    proc step {} { shapes area square 3 }
}

tclcprof::start -mode stack
app::run
set s [tclcprof::status]
tclcprof::stop

puts ""
puts "counters: [dict get $s counters]"
puts "native anchor calibration: [dict get $s calibration state]\
    (offset [dict get $s calibration offset])"
