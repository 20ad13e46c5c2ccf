# deep.tcl --
#
#	Issue 28's first crash: no C code of the profiler may recurse once per
#	level of a tree. deepRun profiles a recursion 100,000 levels deep in
#	the given modes, in a child tclsh under a watchdog, then reads its
#	data, reports and exports, and the database back in a process of its
#	own. Sourced by deep.test (exact mode) and deepmodes.test (the other
#	modes): two files, so that with TCLCPROF_TEST_JOBS they run side by
#	side (together they take most of a minute of CPU on a busy machine).

namespace eval ::tclcprof_test {
    # deepChain --
    #	A script defining deepChain node name: the longest run of nested
    #	frames named name in the tree below node, walked with a list, not
    #	by recursion. The trees of tclcprof-4.14 are 100,000 levels deep:
    #	their string form (puts) would recurse in Tcl itself, as deep.
    variable deepChain {
        proc deepChain {node name} {
            set best 0
            set todo [list $node 0]
            while {[llength $todo]} {
                set n [lindex $todo end-1]
                set run [lindex $todo end]
                set todo [lrange $todo 0 end-2]
                set run [expr {[dict get $n name] eq $name ? $run + 1 : 0}]
                if {$run > $best} {
                    set best $run
                }
                foreach c [dict get $n children] {
                    lappend todo $c $run
                }
            }
            return $best
        }
    }

    # deepRun modes --
    #	The results as {what n ...}: the longest chain of ::r per mode
    #	and per mode read back (read-MODE), for exact the folded and
    #	speedscope cuts. The database is left in the caller's db.
    proc deepRun {modes} {
        variable deepChain
        upvar 1 db db
        set db [makeFile {} deep[pid].db]
        file delete $db
        set script [string map [list @DB@ $db @MODES@ $modes] {
            package require tclcprof
            interp recursionlimit {} 200000
            proc r {n} {
                if {$n > 0} {
                    r [expr {$n - 1}]
                } else {
                    for {set i 0} {$i < 20000} {incr i} {
                        lappend l [string repeat x 64]
                    }
                }
            }
            foreach mode {@MODES@} {
                tclcprof::start -mode $mode -db @DB@ {*}[expr {$mode eq "memory"
                    ? {-memrate 4096} : {-clock wall -rate 1000}}]
                r 100000
                tclcprof::stop
                # The profile is put together by data (the C side,
                # without recursing); the reports and exports walk its
                # deep tree in the Tcl half (the flat report given data's
                # result: without -data it asks data for the same tree
                # again, 1.5 s of CPU here for nothing new).
                set d [tclcprof::data]
                set f [tclcprof::report -data $d -type flat -format dict -limit 1]
                set chan [open /dev/null w]
                tclcprof::report -data $d -type tree -limit 1 -min 50 -channel $chan
                close $chan
                tclcprof::export -data $d -format callgrind -file @DB@.cg
                tclcprof::export -data $d -format dot -file @DB@.dot
                if {$mode eq "exact"} {
                    # Stacks of more than 128 frames are cut in the
                    # middle: one line (every level has time of its own).
                    tclcprof::export -data $d -format folded -file @DB@.folded
                    set chan [open @DB@.folded]
                    set widest 0
                    set cut 0
                    foreach line [split [string trim [read $chan]] \n] {
                        set stack [string range $line 0 \
                            [expr {[string last " " $line] - 1}]]
                        set widest [expr {max($widest,
                            [llength [split $stack ";"]])}]
                        incr cut [regexp {\[frames not shown\]} $stack]
                    }
                    close $chan
                    puts [list folded [list $widest [expr {$cut >= 1}]]]
                    # speedscope: one frame for the cut, in every cut stack.
                    tclcprof::export -data $d -format speedscope -file @DB@.json
                    set chan [open @DB@.json]
                    set json [read $chan]
                    close $chan
                    puts [list speedscope [regexp -all {"name":"\[frames not shown\]"} $json]]
                }
                puts [list $mode [deepChain [dict get $d tree] ::r]]
                flush stdout
            }
        }]
        set f [makeFile $deepChain$script deep[pid].tcl]
        # (A hang's bound: 22 s of CPU, its whole first part took over
        # 300 s once at load 12.)
        set out [exec timeout -s KILL 900 [interpreter] $f 2>@1]
        # Read back in a process of its own, at the default recursion
        # limit: one run per mode.
        set runs {}
        for {set i 1} {$i <= [llength $modes]} {incr i} {
            lappend runs $i
        }
        append out \n [exec timeout -s KILL 900 [interpreter] << $deepChain[string map [list @DB@ $db @RUNS@ $runs] {
            package require tclcprof
            foreach run {@RUNS@} {
                set d [tclcprof::data -db @DB@ -run $run]
                set chan [open /dev/null w]
                tclcprof::report -data $d -type tree -limit 1 -min 50 -channel $chan
                close $chan
                puts [list read-[dict get $d meta mode] [deepChain [dict get $d tree] ::r]]
            }
        }] 2>@1]
        set got {}
        foreach line [split [string trim $out] \n] {
            lassign $line mode n
            # Exact trees keep every level; sampled stacks keep their
            # innermost 128 frames.
            lappend got $mode [expr {[string match *exact $mode] || $mode in {folded speedscope}
                ? $n : $n >= 100}]
        }
        set got
    }
}
