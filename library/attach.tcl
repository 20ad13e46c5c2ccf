# attach.tcl --
#
#	Profiling a process from outside (attach layer, Tcl side): the
#	stacks of a running process that never loaded tclcprof, read by
#	unix/remote.c (::tclcprof::attach::Stacks), formatted as text, JSON
#	or folded stacks; profiles sampled from outside; a live view; the
#	"dump", "record" and "top" subcommands of the command-line tool.
#
#	    tclcprof::attach::dump pid|core ?executable? ?-format text|json|folded?
#	    tclcprof::attach::record pid ?option value ...?
#	    tclcprof::attach::top pid ?option value ...?
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::attach {
    namespace export dump record top
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
    if {[dict exists $f interp]} {
	append s " \[[dict get $f interp]\]"
    }
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
    set parts {}
    foreach {key name} {stopping stopping_ms reading reading_ms
	    resuming resuming_ms} {
	if {[dict exists $r $key]} {
	    append parts ",\"$name\":[format %.3f \
		[expr {[dict get $r $key] / 1000.0}]]"
	}
    }
    return "\{$head,\"pause_ms\":[format %.3f \
	[expr {[dict get $r pause] / 1000.0}]]$parts,\"interps\":[dict get $r\
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

# ::tclcprof::attach::record --
#
#	tclcprof::attach::record pid ?-duration S? ?-rate HZ? ?-clock cpu|wall?
#	    ?-samples N? ?-label L? ?-db FILE | -file FILE -format F?
#	tclcprof::attach::record pid -mode memory|exact|both ?-duration S?
#	    ?-memrate B? ?-rate HZ? ?-timeout S? ?-label L? ?-db FILE | ...?
#
#	The second form loads tclcprof into the process and starts a run
#	there (attachinject.tcl, RecordInjected). The first:
#	Sample process pid from outside: every 1/HZ s its threads are
#	stopped, their stacks read and the threads resumed (unix/remote.c,
#	with what does not change kept between samples). With the cpu clock
#	(the default) a thread's stack weighs the clock ticks of CPU time
#	it used since the previous sample (threads that used none are not
#	counted), with the wall clock 1 a sample. Ends after S seconds or N
#	samples, at Ctrl-C or SIGTERM (without -duration), or when the
#	process exits, with what was collected.
#
# Results:
#	The profile (a dictionary as tclcprof::data returns), after it was
#	saved to -db or exported to -file when asked.

proc ::tclcprof::attach::record {pid args} {
    set o [dict create -duration {} -rate 100 -clock cpu -label {} -db {} \
	-file {} -format {} -samples 0 -timeout 5 -memrate {}]
    set mode sample
    set rateGiven 0
    if {[llength $args] % 2} {
	return -code error -errorcode {TCLCPROF USAGE} \
	    "option \"[lindex $args end]\" has no value"
    }
    foreach {opt value} $args {
	if {![dict exists $o $opt] || $opt eq "-mode"} {
	    if {$opt eq "-mode"} {
		if {$value ni {sample memory exact both}} {
		    return -code error -errorcode {TCLCPROF USAGE} \
			"bad mode \"$value\": must be sample, memory, exact or\
			both"
		}
		set mode $value
		continue
	    }
	    return -code error -errorcode {TCLCPROF USAGE} \
		"bad option \"$opt\": must be -clock, -db, -duration,\
		-file, -format, -label, -memrate, -mode, -rate, -samples or\
		-timeout"
	}
	if {$opt eq "-rate"} {
	    set rateGiven 1
	}
	dict set o $opt $value
    }
    set rate [dict get $o -rate]
    if {![string is double -strict $rate] || !($rate > 0 && $rate <= 1000)} {
	return -code error -errorcode {TCLCPROF VALUE -rate} \
	    "bad -rate \"$rate\": must be a number of Hz, above 0, at most 1000"
    }
    set duration [dict get $o -duration]
    if {$duration ne "" && (![string is double -strict $duration]
	    || !($duration > 0 && $duration < 1e7))} {
	return -code error -errorcode {TCLCPROF VALUE -duration} \
	    "bad -duration \"$duration\": must be a number of seconds above 0"
    }
    set maxSamples [dict get $o -samples]
    if {![string is integer -strict $maxSamples] || $maxSamples < 0} {
	return -code error -errorcode {TCLCPROF VALUE -samples} \
	    "bad -samples \"$maxSamples\": must be a non-negative integer"
    }
    if {[dict get $o -clock] ni {cpu wall}} {
	return -code error -errorcode {TCLCPROF VALUE -clock} \
	    "bad -clock \"[dict get $o -clock]\": must be cpu or wall"
    }
    if {([dict get $o -file] eq "") != ([dict get $o -format] eq "")} {
	return -code error -errorcode {TCLCPROF USAGE} \
	    "-file and -format go together"
    }

    if {$mode ne "sample"} {
	# Memory and exact profiles are made by hooks in the process (its
	# allocator's calls, every command's entry and exit), which reading
	# it from outside cannot see: tclcprof is loaded into it
	# (attachinject.tcl).
	dict set o -rateGiven $rateGiven
	return [RecordInjected $pid $mode $o]
    }
    if {[dict get $o -memrate] ne ""} {
	return -code error -errorcode {TCLCPROF USAGE} \
	    "-memrate is for -mode memory or both"
    }
    # The first read checks the process (errors are the caller's).
    set wall [expr {[dict get $o -clock] eq "wall"}]
    set r [Stacks $pid 0 1]
    set last {}
    foreach t [dict get $r threads] {
	dict set last [dict get $t tid] [dict get $t cpu]
    }
    set stacks {}
    set threads {}
    set samples 0
    set weight 0
    set reads 0
    set pauses {}
    set start [clock microseconds]
    set end [expr {$duration eq "" ? Inf : $start + $duration * 1e6}]
    set period [expr {1e6 / $rate}]
    set next $start
    set stoppedBy duration
    if {$duration eq ""} {
	Interrupt arm
    }
    try {
	while 1 {
	    set now [clock microseconds]
	    if {$now >= $end} {
		break
	    }
	    if {$maxSamples && $samples >= $maxSamples} {
		set stoppedBy samples
		break
	    }
	    if {$duration eq "" && [Interrupt check]} {
		set stoppedBy interrupt
		break
	    }
	    set next [expr {max($next + $period, $now)}]
	    set wait [expr {int(($next - $now) / 1000)}]
	    if {$wait > 0} {
		after $wait
	    }
	    try {
		set r [Stacks $pid 0 1]
	    } trap {TCLCPROF ATTACH} {msg opts} {
		# The process ended (or became untraceable): what was
		# collected is the recording.
		set stoppedBy exit
		break
	    }
	    incr reads
	    lappend pauses [dict get $r pause]
	    foreach t [dict get $r threads] {
		set tid [dict get $t tid]
		set cpu [dict get $t cpu]
		ThreadSeen threads $t [dict get $r hz]
		set w 1
		if {!$wall} {
		    set w [expr {[dict exists $last $tid]
			? $cpu - [dict get $last $tid] : 0}]
		    dict set last $tid $cpu
		    if {$w <= 0} {
			continue
		    }
		}
		set key [list $tid]
		foreach f [dict get $t frames] {
		    if {[dict get $f kind] eq "c"} {
			lappend key [list c [dict get $f name] \
			    [dict get $f module]]
		    } else {
			lappend key [list tcl [dict get $f name] \
			    [dict get $f tclkind] [expr {[dict exists $f interp]
				? [dict get $f interp] : {}}]]
		    }
		}
		dict incr stacks $key $w
		dict set threads $tid samples \
		    [expr {[dict get $threads $tid samples] + 1}]
		dict set threads $tid weight \
		    [expr {[dict get $threads $tid weight] + $w}]
		incr samples
		incr weight $w
	    }
	}
    } finally {
	if {$duration eq ""} {
	    Interrupt disarm
	}
    }
    set elapsed [expr {([clock microseconds] - $start) / 1e6}]
    set profile [Profile $stacks $o $elapsed $samples $weight $reads \
	$stoppedBy $pauses $threads]
    if {[dict get $o -db] ne ""} {
	::tclcprof::save [dict get $o -db] -data $profile \
	    {*}[expr {[dict get $o -label] ne "" ?
		[list -label [dict get $o -label]] : {}}]
    }
    if {[dict get $o -file] ne ""} {
	::tclcprof::export -format [dict get $o -format] \
	    -file [dict get $o -file] -data $profile
    }
    return $profile
}

# ThreadSeen --
#	Keep what a recording's meta says of a thread (as meta threads of
#	a profile made in the process: its Tcl thread id, its interps'
#	paths, its CPU time since it was first seen), from a read of it.

proc ::tclcprof::attach::ThreadSeen {varName t hz} {
    upvar 1 $varName threads
    set tid [dict get $t tid]
    set cpu [dict get $t cpu]
    if {![dict exists $threads $tid]} {
	dict set threads $tid [dict create thread [dict get $t thread] \
	    interps {} samples 0 weight 0 cpu0 $cpu cpu $cpu hz $hz]
    }
    dict with threads $tid {
	set cpu [dict get $t cpu]
	foreach path [dict get $t interps] {
	    if {$path ni $interps} {
		lappend interps $path
	    }
	}
	if {$thread eq ""} {
	    set thread [dict get $t thread]
	}
    }
}

# Profile --
#	The profile of a recording: a tree of the stacks counted (threads
#	under the root when more than one thread was sampled); meta threads
#	(each thread's Tcl thread id, interps, samples, CPU time) and scope
#	process, as a profile made in the process has them.

proc ::tclcprof::attach::Profile {stacks o elapsed samples weight reads
	stoppedBy pauses threads} {
    set tids [lsort -unique [lmap k [dict keys $stacks] {lindex $k 0}]]
    set byThread [expr {[llength $tids] > 1}]
    # Nodes in a flat table: id -> {name kind extra children-ids total self}
    set nodes(0) {}
    set kids(0) {}
    set total(0) 0
    set self(0) 0
    set attrs(0) {name root kind root}
    set ids [dict create]
    set n 0
    dict for {key w} $stacks {
	set parent 0
	incr total(0) $w
	set path [lrange $key 1 end]
	if {$byThread} {
	    set path [linsert $path 0 [list thread [lindex $key 0]]]
	}
	foreach f $path {
	    set k [list $parent $f]
	    if {![dict exists $ids $k]} {
		set id [incr n]
		dict set ids $k $id
		lappend kids($parent) $id
		set kids($id) {}
		set total($id) 0
		set self($id) 0
		switch -- [lindex $f 0] {
		    c {
			set attrs($id) [list name [lindex $f 1] kind c \
			    module [lindex $f 2]]
		    }
		    tcl {
			set attrs($id) [list name [lindex $f 1] kind tcl \
			    tclkind [lindex $f 2] interp [lindex $f 3]]
		    }
		    thread {
			set tid [lindex $f 1]
			set attrs($id) [list name [expr {$tid == [lindex \
			    $tids 0] ? "main" : $tid}] kind thread \
			    thread [ThreadId $threads $tid] tid $tid]
		    }
		}
	    }
	    set parent [dict get $ids $k]
	    incr total($parent) $w
	}
	incr self($parent) $w
    }
    # Build the nested value from the leaves up.
    for {set id $n} {$id >= 0} {incr id -1} {
	set children {}
	foreach c $kids($id) {
	    lappend children $node($c)
	    unset node($c)
	}
	set node($id) [dict create {*}$attrs($id) self $self($id) \
	    total $total($id) children $children]
    }
    set ps [lsort -real $pauses]
    set median [expr {[llength $ps] ? [lindex $ps [expr {[llength $ps] / 2}]] / 1e3 : 0}]
    set p90 [expr {[llength $ps]
	? [lindex $ps [expr {int(ceil(0.9 * [llength $ps])) - 1}]] / 1e3 : 0}]
    set max [expr {[llength $ps] ? [lindex $ps end] / 1e3 : 0}]
    set meta [dict create mode sample clock [dict get $o -clock] \
	elapsed $elapsed label [dict get $o -label] running 0 \
	stopped_by $stoppedBy subcommands 0 \
	rate_requested [dict get $o -rate] \
	rate_achieved [expr {$elapsed > 0 ? $reads / $elapsed : 0}] \
	samples $samples weight $weight native 1 sampling remote lines 0 \
	remote_pause_median_ms $median remote_pause_p90_ms $p90 \
	remote_pause_max_ms $max scope process]
    set list {}
    set state [expr {$stoppedBy eq "exit" ? "exited" : "running"}]
    foreach tid [lsort -integer [dict keys $threads]] {
	set ti [dict get $threads $tid]
	set hz [dict get $ti hz]
	lappend list [dict create name [expr {$tid == [lindex $tids 0]
	    ? "main" : $tid}] thread [ThreadId $threads $tid] tid $tid \
	    state $state cpu_ns [expr {$hz > 0 ? ([dict get $ti cpu]
		- [dict get $ti cpu0]) * 1000000000 / $hz : 0}] \
	    samples [dict get $ti samples] weight [dict get $ti weight] \
	    interps [lsort -command InterpOrder [dict get $ti interps]]]
    }
    dict set meta threads $list
    return [dict create meta $meta tree $node(0)]
}

# ThreadId --
#	A thread's Tcl thread id (tid0x...) in a recording, else its tid.

proc ::tclcprof::attach::ThreadId {threads tid} {
    if {[dict exists $threads $tid thread]
	    && [dict get $threads $tid thread] ne ""} {
	return [dict get $threads $tid thread]
    }
    return $tid
}

# InterpOrder --
#	Interp paths, the top one first, then by depth and name.

proc ::tclcprof::attach::InterpOrder {a b} {
    if {[llength $a] != [llength $b]} {
	return [expr {[llength $a] - [llength $b]}]
    }
    return [string compare $a $b]
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

# ::tclcprof::cli::Record --
#
#	tclcprof record -pid pid ?-duration S? ?-rate HZ? ?-clock C?
#	    ?-label L? ?-db FILE | -o FILE -format F?
#	(-db tclcprof.db when neither -db nor -o is given).

dict set ::tclcprof::cli::commands record \
    {Record "record -pid pid ?-duration S? ?-samples N? ?-rate HZ? ?-mode sample|memory|exact|both? ?-clock cpu|wall? ?-timeout S? ?-db file | -o file -format format?"}

proc ::tclcprof::cli::Record {args} {
    variable defaultDb
    if {[llength $args] % 2} {
	UsageError
    }
    set pid {}
    set opts {}
    foreach {opt value} $args {
	switch -- $opt {
	    -pid {set pid $value}
	    -o {lappend opts -file $value}
	    default {lappend opts $opt $value}
	}
    }
    if {$pid eq ""} {
	UsageError
    }
    if {"-db" ni $opts && "-file" ni $opts} {
	lappend opts -db $defaultDb
    }
    set p [::tclcprof::attach::record $pid {*}$opts]
    set m [dict get $p meta]
    if {[dict exists $m injection]} {
	set i [dict get $m injection]
	puts stderr [format "tclcprof: %s profile of process %s over %.2f s\
	    (%s), tclcprof loaded into it: stopped %.2f ms to start%s" \
	    [dict get $m mode] $pid [dict get $m elapsed] \
	    [dict get $m stopped_by] [dict get $i start_stall_ms] \
	    [expr {[dict exists $i stop_stall_ms] ? [format ", %.2f ms to stop" \
		[dict get $i stop_stall_ms]] : ""}]]
	if {[dict exists $i stop_timeout]} {
	    puts stderr "tclcprof: process $pid reached no safe point to stop\
		the run, which goes on there until its exit (written then);\
		this is what it had written so far"
	}
	return 0
    }
    puts stderr [format "tclcprof: %d samples of process %s over %.2f s\
	(%s), stopped %.2f ms a sample (median; 90th percentile %.2f ms)" \
	[dict get $m samples] $pid [dict get $m elapsed] \
	[dict get $m stopped_by] [dict get $m remote_pause_median_ms] \
	[dict get $m remote_pause_p90_ms]]
    return 0
}

# ::tclcprof::attach::top --
#
#	tclcprof::attach::top pid ?-rate HZ? ?-interval S? ?-iterations N?
#	    ?-limit N? ?-clear 0|1? ?-channel chan?
#
#	A live view of process pid (py-spy top): every interval (1 s), the
#	Tcl procs and C functions with the most samples over it, by self
#	(the innermost frame; for a Tcl frame, the innermost Tcl frame,
#	with the C it runs) then total (the frame on the stack), written
#	to the channel (stdout), the terminal cleared first when -clear is
#	1 (the default when the channel is a terminal). Runs for N
#	intervals, else until Ctrl-C, SIGTERM or the process's exit.
#
# Results:
#	The number of intervals shown.

proc ::tclcprof::attach::top {pid args} {
    set o [dict create -rate 100 -interval 1 -iterations 0 -limit 20 \
	-clear auto -channel stdout]
    if {[llength $args] % 2} {
	return -code error -errorcode {TCLCPROF USAGE} \
	    "option \"[lindex $args end]\" has no value"
    }
    foreach {opt value} $args {
	if {![dict exists $o $opt]} {
	    return -code error -errorcode {TCLCPROF USAGE} \
		"bad option \"$opt\": must be -channel, -clear, -interval,\
		-iterations, -limit or -rate"
	}
	dict set o $opt $value
    }
    foreach {opt lo hi} {-rate 0 1000 -interval 0 3600} {
	set v [dict get $o $opt]
	if {![string is double -strict $v] || !($v > $lo && $v <= $hi)} {
	    return -code error -errorcode [list TCLCPROF VALUE $opt] \
		"bad $opt \"$v\": must be a number above $lo, at most $hi"
	}
    }
    foreach opt {-iterations -limit} {
	set v [dict get $o $opt]
	if {![string is integer -strict $v] || $v < 0} {
	    return -code error -errorcode [list TCLCPROF VALUE $opt] \
		"bad $opt \"$v\": must be a non-negative integer"
	}
    }
    set chan [dict get $o -channel]
    set clear [dict get $o -clear]
    if {$clear eq "auto"} {
	set clear [expr {![catch {fconfigure $chan -mode}]}]
    }
    Stacks $pid 0 1
    set period [expr {1e6 / [dict get $o -rate]}]
    set shown 0
    Interrupt arm
    try {
	while {[dict get $o -iterations] == 0
		|| $shown < [dict get $o -iterations]} {
	    set end [expr {[clock microseconds] + [dict get $o -interval] * 1e6}]
	    set self {}
	    set total {}
	    set n 0
	    set gone 0
	    while {[clock microseconds] < $end} {
		if {[Interrupt check]} {
		    return $shown
		}
		set t0 [clock microseconds]
		try {
		    set r [Stacks $pid 0 1]
		} trap {TCLCPROF ATTACH} {} {
		    set gone 1
		    break
		}
		foreach t [dict get $r threads] {
		    set frames [dict get $t frames]
		    if {![llength $frames]} {
			continue
		    }
		    incr n
		    set seen {}
		    set tcl {}
		    foreach f $frames {
			set name [dict get $f name]
			if {[dict get $f kind] eq "c"} {
			    append name " \[C\]"
			} else {
			    set tcl $name
			}
			if {![dict exists $seen $name]} {
			    dict set seen $name 1
			    dict incr total $name
			}
		    }
		    # Self: the innermost frame, and the innermost Tcl frame
		    # (with the C functions it runs) for Tcl rows.
		    dict incr self $name
		    if {$tcl ne ""} {
			dict incr self $tcl
		    }
		}
		set wait [expr {int(($t0 + $period - [clock microseconds]) / 1000)}]
		if {$wait > 0} {
		    after $wait
		}
	    }
	    incr shown
	    set lines {}
	    if {$clear} {
		lappend lines "\033\[H\033\[2J"
	    }
	    lappend lines [format "tclcprof top: process %s, %d samples in the\
		last %.1f s" $pid $n [dict get $o -interval]] \
		[format "%7s %7s  %s" Total% Self% Frame]
	    # By self, then by total (py-spy top's order).
	    set rows {}
	    dict for {name w} $total {
		lappend rows [list $name $w [expr {[dict exists $self $name]
		    ? [dict get $self $name] : 0}]]
	    }
	    set rows [lsort -index 2 -integer -decreasing \
		[lsort -index 1 -integer -decreasing $rows]]
	    foreach row [lrange $rows 0 [dict get $o -limit]-1] {
		lassign $row name w s
		lappend lines [format "%6.1f%% %6.1f%%  %s" \
		    [expr {100.0 * $w / max($n, 1)}] \
		    [expr {100.0 * $s / max($n, 1)}] $name]
	    }
	    puts $chan [join $lines \n]
	    flush $chan
	    if {$gone} {
		puts $chan "tclcprof top: process $pid has exited"
		break
	    }
	}
    } finally {
	Interrupt disarm
    }
    return $shown
}

# ::tclcprof::cli::Top --
#
#	tclcprof top -pid pid ?-rate HZ? ?-interval S? ?-iterations N? ?-limit N?

dict set ::tclcprof::cli::commands top \
    {Top "top -pid pid ?-rate HZ? ?-interval S? ?-iterations N? ?-limit N?"}

proc ::tclcprof::cli::Top {args} {
    if {[llength $args] % 2 || [lindex $args 0] ne "-pid"} {
	UsageError
    }
    ::tclcprof::attach::top {*}[lrange $args 1 end]
    return 0
}

# help stays the last subcommand listed.
apply {{} {
    set help [dict get $::tclcprof::cli::commands help]
    dict unset ::tclcprof::cli::commands help
    dict set ::tclcprof::cli::commands help $help
}}
