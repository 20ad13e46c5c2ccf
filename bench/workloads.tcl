# workloads.tcl --
#
#	The workloads of the tclcprof benchmarks (bench/run.tcl), in a file
#	of their own so that child processes can source them after loading
#	tcllib's profiler, which instruments only procs defined after
#	profiler::init.
#
#	Each workload is a proc "w_NAME n" doing n units of work; n is
#	chosen per workload (see ::bench::workloads) so that one run takes
#	about a second unprofiled on the 2-core development VM. The list
#	::bench::workloads holds, for each: name, description, proc, the
#	size of a full run, and whether it needs the cbtest helper.
#
# Copyright (c) 2026 The tclcprof authors.
# See the file "LICENSE" for terms of use.

namespace eval ::bench {
    variable workloads {
	calls-loop {loop of calls to a small proc} w_callsloop 6000000 0
	calls-rec {recursive fib (n is its argument)} w_callsrec 32 0
	builtin {string/regexp/lsort/dict inside procs} w_builtin 80000 0
	c-heavy {C work, calling back into Tcl} w_cheavy 140 1
	events {after 0/after idle handlers, vwait} w_events 75000 0
	coro {coroutines: generators, create/resume} w_coro 2500000 0
	oo {TclOO: objects, methods, next} w_oo 1500000 0
	churn {commands made, called once, deleted (n thousand)} w_churn 100 1
    }
}

# --- call-heavy -----------------------------------------------------------

proc add {a b} {
    expr {$a + $b}
}

proc w_callsloop {n} {
    set s 0
    for {set i 0} {$i < $n} {incr i} {
	set s [add $s $i]
    }
    return $s
}

proc fib {n} {
    if {$n < 2} {
	return $n
    }
    expr {[fib [expr {$n - 1}]] + [fib [expr {$n - 2}]]}
}

# The size is fib's argument: fib n makes 2 fib(n+1) - 1 calls (7.1
# million for 32).
proc w_callsrec {n} {
    fib $n
}

# --- builtin-heavy: the time goes to C builtins working on strings and
# lists of some size, called from a small proc --------------------------

proc bi_step {text words i dVar} {
    upvar 1 $dVar d
    set s [string map [list alpha A$i beta B] $text]
    set digits [regexp -all -inline {[0-9]+} $s]
    set sorted [lsort -unique $words]
    set j [join $sorted ,]
    dict set d [expr {$i % 200}] [llength $digits]
    set parts [split $j ,]
    string length [string toupper [lindex $parts end]]$j
}

proc w_builtin {n} {
    set text [string repeat "alpha beta gamma 12345 delta epsilon 678 zeta " 8]
    set words [split $text]
    set d {}
    for {set i 0} {$i < $n} {incr i} {
	bi_step $text $words $i d
    }
    dict size $d
}

# --- C-heavy: C commands doing the work, one calling back into Tcl --------

proc cb_step {k} {
    set s 0
    foreach x {1 2 3 4 5 6 7 8} {
	incr s [expr {$x * $k}]
    }
    cbtest::work 400
    return $s
}

proc w_cheavy {n} {
    for {set i 0} {$i < $n} {incr i} {
	cbtest::work 2000
	cbtest::callback [list cb_step $i]
    }
}

# --- event loop: chains of after handlers, vwait for the last --------------
#
# Each handler does some work of its own (a message parsed and stored by
# small procs), and 64 chains run side by side, so that each pass of the
# event loop runs dozens of handlers: a threaded Tcl 8.6 wakes its
# notifier thread for every poll of the event loop (a write to a pipe and
# two context switches), which with few handlers per pass made run times
# vary by half from run to run.

proc ev_field {rec i} {
    lindex $rec $i
}

proc ev_store {key value} {
    global evStore
    set evStore($key) $value
}

proc ev_handler {chain left} {
    global evDone
    set rec [split "msg$chain:$left:[expr {$left * 31 % 977}]:payload" :]
    for {set k 0} {$k < 24} {incr k} {
	ev_store $chain,[expr {$left % 50}] [ev_field $rec [expr {$k % 4}]]
    }
    if {$left <= 0} {
	if {[incr evDone(chains) -1] == 0} {
	    set evDone(all) 1
	}
	return
    }
    if {$left % 3 == 0} {
	after idle [list ev_handler $chain [expr {$left - 1}]]
    } else {
	after 0 [list ev_handler $chain [expr {$left - 1}]]
    }
}

proc w_events {n} {
    global evDone
    set chains 64
    set evDone(chains) $chains
    for {set c 0} {$c < $chains} {incr c} {
	after 0 [list ev_handler $c [expr {$n / $chains}]]
    }
    vwait evDone(all)
}

# --- coroutines: a generator resumed n times, short-lived coroutines ------

proc co_square {x} {
    expr {$x * $x}
}

proc co_gen {} {
    yield
    set i 0
    while 1 {
	yield [co_square [incr i]]
    }
}

proc co_short {k} {
    set a [yield $k]
    return [expr {$a + $k}]
}

proc w_coro {n} {
    coroutine gen co_gen
    set s 0
    for {set i 0} {$i < $n} {incr i} {
	incr s [gen]
	if {$i % 10 == 0} {
	    coroutine short$i co_short $i
	    incr s [short$i 1]
	}
    }
    rename gen {}
    return $s
}

# --- TclOO: classes, methods, next, create/destroy -------------------------

oo::class create Shape {
    variable name
    constructor {n} {
	set name $n
    }
    method area {} {
	return 0
    }
    method describe {} {
	return "$name [my area]"
    }
}
oo::class create Rect {
    superclass Shape
    variable w h
    constructor {n a b} {
	next $n
	set w $a
	set h $b
    }
    method area {} {
	expr {$w * $h}
    }
}
oo::class create Square {
    superclass Rect
    constructor {n a} {
	next $n $a $a
    }
    method describe {} {
	return "square [next]"
    }
}

proc w_oo {n} {
    set shapes {}
    for {set i 0} {$i < 50} {incr i} {
	lappend shapes [Rect new r$i $i 2] [Square new s$i $i]
    }
    set total 0
    for {set i 0} {$i < $n} {incr i} {
	set s [lindex $shapes [expr {$i % 100}]]
	incr total [$s area]
	if {$i % 4 == 0} {
	    set d [$s describe]
	}
	if {$i % 50 == 0} {
	    set t [Square new tmp 3]
	    incr total [$t area]
	    $t destroy
	}
    }
    foreach s $shapes {
	$s destroy
    }
    return $total
}

# --- command churn: a C command per node, as DOM bindings make them (tdom's
# "$root childNodes" makes a domNode0x... command per child, the next call
# deletes them): batches of 1000 commands made, each called once, deleted
# by the next batch. The size is the number of batches (100: 100,000
# commands, about 0.2 s unprofiled) --------------------------------------

proc w_churn {n} {
    set s 0
    for {set i 0} {$i < $n} {incr i} {
	foreach c [cbtest::nodes 1000] {
	    incr s [$c]
	}
    }
    cbtest::nodes 0
    return $s
}
