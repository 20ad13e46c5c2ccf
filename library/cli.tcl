# cli.tcl --
#
#	The tclcprof command-line tool (installed as <prefix>/bin/tclcprof
#	by "make install"; "make" builds one for the build directory):
#
#	    tclcprof run ?-tcltest 1? ?-eventloop auto|1|0? ?-serve port? ?option value ...? script.tcl ?arg ...?
#	    tclcprof report file ?file ...? ?option value ...?
#	    tclcprof export file ?file ...? -format format ?option value ...?
#	    tclcprof diff base new ?option value ...?
#	    tclcprof merge out in ?in ...? ?-run runs? ?-label label?
#	    tclcprof runs file
#	    tclcprof dump pid|core ?executable? ?-format text|json|folded?
#	    tclcprof record -pid pid ?option value ...?
#	    tclcprof top -pid pid ?option value ...?   (these three in attach.tcl)
#	    tclcprof help
#
#	"run" profiles a Tcl script in this process, as tclsh would run it
#	(the script sees its own argv0, argv and argc), and writes the run
#	to a profile database (tclcprof.db unless -db says otherwise). The
#	other subcommands read such files (report and export: the runs of
#	several merged; merge writes such a merge as a run of its own; a
#	-history directory stands for its files of a time window, Window). Each
#	maps to the Tcl command of the same name, so options and errors are
#	those of the man page.
#
#	Exit status: 0 on success, 1 on an error (its message, one line, on
#	stderr; output that cannot be written is one), 2 on a usage error
#	or an unknown subcommand; "run" exits with the script's own status
#	when the script calls exit; "diff" exits with 1 when it finds a
#	regression and 2 on an error (as diff(1) does); "diff -format html"
#	writes the differential flame graph (to stdout without -file) and
#	exits with 0.
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::cli {
    # Subcommands: name -> {proc usage}. Other library files add theirs.
    variable commands {
	run    {Run    "run ?-tcltest 1? ?-eventloop auto|1|0? ?-serve port? ?option value ...? script.tcl ?arg ...?"}
	report {Report "report file ?file ...? ?option value ...?"}
	export {Export "export file ?file ...? -format format ?option value ...?"}
	diff   {Diff   "diff base new ?option value ...?"}
	merge  {Merge  "merge out in ?in ...? ?-run runs? ?-label label?"}
	runs   {Runs   "runs file"}
	help   {Help   "help"}
    }
    # The default database of run (and of the TCLCPROF environment
    # variable).
    variable defaultDb tclcprof.db
}

# ::tclcprof::cli::main --
#
#	Run the command line 'arglist'.
#
# Results:
#	The exit status.

proc ::tclcprof::cli::main {arglist} {
    variable commands

    if {[llength $arglist] == 0} {
	Usage
	return 2
    }
    set arglist [lassign $arglist sub]
    if {$sub in {-h -help --help}} {
	set sub help
    }
    if {![dict exists $commands $sub]} {
	puts stderr "tclcprof: unknown subcommand \"$sub\": must be\
		[join [lrange [dict keys $commands] 0 end-1] {, }] or\
		[lindex [dict keys $commands] end]"
	Usage
	return 2
    }
    lassign [dict get $commands $sub] procName usage
    try {
	set status [$procName {*}$arglist]
	# Output that could not be written (a full disk) is an error too.
	flush stdout
	return $status
    } trap {POSIX EPIPE} {} {
	# The reader went away (tclcprof runs x.db | head): not an error.
	return 0
    } trap {TCLCPROF CHANNEL stdout} {msg} {
	if {[string match "*broken pipe*" $msg]} {
	    return 0
	}
	puts stderr "tclcprof: $msg"
	return 1
    } trap {TCLCPROF USAGE} {} {
	puts stderr "usage: tclcprof $usage"
	return 2
    } on error {msg} {
	# TCLCPROF errors, and failures to write the output (POSIX ...):
	# one line, no Tcl stack trace.
	puts stderr "tclcprof: $msg"
	return [expr {$sub eq "diff" ? 2 : 1}]
    }
}

proc ::tclcprof::cli::Usage {} {
    variable commands
    set lines {}
    foreach {name def} $commands {
	lappend lines "       tclcprof [lindex $def 1]"
    }
    puts stderr "usage: [string trimleft [join $lines \n]]"
}

proc ::tclcprof::cli::Help {args} {
    variable commands
    puts "tclcprof [package present tclcprof]: profile Tcl and C code together"
    puts ""
    foreach {name def} $commands {
	puts "  tclcprof [lindex $def 1]"
    }
    puts ""
    puts "run: profiles script.tcl (options as tclcprof::start; the run goes"
    puts "     to -db, tclcprof.db by default). The other subcommands read"
    puts "     profile databases: report and export the latest run of each"
    puts "     file, or -run ids or all, merged when there are several;"
    puts "     merge writes such a merge to out as a new run. A directory"
    puts "     written by -history stands for its files of the window of"
    puts "     -since and -until (diff: -base-since, -base-until), a file"
    puts "     written by -history FILE.db for its runs of the window. See"
    puts "     the tclcprof(n) manual page."
    return 0
}

proc ::tclcprof::cli::UsageError {} {
    return -code error -level 2 -errorcode {TCLCPROF USAGE} usage
}

# Run --
#
#	tclcprof run ?option value ...? script.tcl ?arg ...?
#
#	Options are those of tclcprof::start, up to the first argument that
#	does not start with "-" (or after "--"), and -tcltest and
#	-eventloop of run's own. When the script returns, a Tk program
#	enters the event loop (EventLoop).

proc ::tclcprof::cli::Run {args} {
    variable defaultDb

    set opts {}
    while {[llength $args]} {
	set a [lindex $args 0]
	if {$a eq "--"} {
	    set args [lrange $args 1 end]
	    break
	}
	if {![string match -* $a]} {
	    break
	}
	if {[llength $args] < 2} {
	    UsageError
	}
	lappend opts $a [lindex $args 1]
	set args [lrange $args 2 end]
    }
    if {[llength $args] == 0} {
	UsageError
    }
    set script [lindex $args 0]
    if {![file readable $script]} {
	return -code error -errorcode [list TCLCPROF FILE $script] \
	    "cannot read script \"$script\""
    }
    set eventLoop auto
    if {[dict exists $opts -eventloop]} {
	set eventLoop [dict get $opts -eventloop]
	dict unset opts -eventloop
	if {$eventLoop ne "auto" && ![string is boolean -strict $eventLoop]} {
	    return -code error \
		-errorcode [list TCLCPROF VALUE -eventloop $eventLoop] \
		"bad value \"$eventLoop\" for -eventloop: expected a boolean\
		or auto"
	}
    }
    set perTest 0
    if {[dict exists $opts -tcltest]} {
	set perTest [dict get $opts -tcltest]
	dict unset opts -tcltest
	if {![string is boolean -strict $perTest]} {
	    return -code error -errorcode [list TCLCPROF VALUE -tcltest $perTest] \
		"bad value \"$perTest\" for -tcltest: expected a boolean"
	}
    }
    # -serve PORT: the endpoint of tclcprof::serve while the script runs;
    # alone, the script runs unprofiled (requests make their own runs).
    set serve ""
    if {[dict exists $opts -serve]} {
	set serve [dict get $opts -serve]
	dict unset opts -serve
	if {$perTest} {
	    return -code error -errorcode [list TCLCPROF VALUE -serve $serve] \
		"-serve and -tcltest cannot be used together"
	}
    }
    if {$serve eq "" || [dict size $opts]} {
	if {![dict exists $opts -db] && ![dict exists $opts -history]
		&& [dict get [dict merge {-mode sample} \
		[::tclcprof::configure] $opts] -mode] ne "stack"} {
	    dict set opts -db $defaultDb
	}
    }
    if {$perTest} {
	return [RunTests $script [lrange $args 1 end] $opts]
    }

    # The script's view of the world, as tclsh would set it up.
    set ::argv0 $script
    set ::argv [lrange $args 1 end]
    set ::argc [llength $::argv]

    # Profiling starts as the script's source command is entered (from an
    # execution trace, which runs once that command has passed the
    # profiler's enter): the script's own commands are the profile's
    # outermost frames, not this source. An error of start (bad options,
    # an unusable -db) stops source before the script runs.
    variable started 0
    if {$serve ne ""} {
	set port [::tclcprof::servelib::FromOption $serve]
	puts stderr "tclcprof: serving on [set ::tclcprof::servelib::address]\
		port $port (http://[set ::tclcprof::servelib::address]:$port/debug/pprof/)"
    }
    set start [list ::tclcprof::cli::StartOnce $opts]
    if {$serve ne "" && ![dict size $opts]} {
	set started 1
    } else {
	trace add execution ::source enter $start
    }
    # A script that calls exit: the run's last write (at the exit) is
    # followed by the line that names it (cmdrundb.c's ExitFlush reads
    # exitNote).
    variable exitNote 1
    set code [catch {uplevel #0 [list source $script]} result options]
    if {!$started} {
	set exitNote 0
	catch {trace remove execution ::source enter $start}
	return -options $options $result
    }
    if {$code == 1} {
	puts stderr [ScriptErrorInfo $options]
    } else {
	# The event loop's command is entered here, not from a proc of
	# tclcprof's (whose frames hide what runs inside them): it is the
	# outermost frame of the handlers.
	switch -- [EventLoop $eventLoop] {
	    tk {
		set code [catch {tkwait window .} result options]
	    }
	    vwait {
		set code [catch {vwait ::tclcprof::cli::forever} result options]
	    }
	}
	if {$code == 1} {
	    puts stderr [dict get $options -errorinfo]
	}
    }
    set exitNote 0
    set status [::tclcprof::status]
    if {[dict get $status running]} {
	if {[catch {::tclcprof::stop} stopMsg]} {
	    puts stderr "tclcprof: $stopMsg"
	    return 1
	}
	set db [dict get $status db]
	if {[dict exists $opts -history]} {
	    puts stderr "tclcprof: history written to\
		[dict get $opts -history] (tclcprof report\
		[list [dict get $opts -history]] -since 1h)"
	} elseif {[dict size $db]} {
	    set run [WrittenRun [dict get $db file] [dict get $db run]]
	    puts stderr "tclcprof: run $run written to\
		[dict get $db file] (tclcprof report\
		[list [dict get $db file]] -run $run)"
	}
    }
    return [expr {$code == 1 ? 1 : 0}]
}

# WrittenRun --
#
#	The id of the run written to 'file' by this process, which started
#	as run 'id': a run whose whole is known only at its end (process
#	scope, when it took in other threads; a Tk program's does) is
#	written then as a new run, which replaces it: the latest run of
#	this process.

proc ::tclcprof::cli::WrittenRun {file id} {
    if {[catch {::tclcprof::runs -db $file} runs]} {
	return $id
    }
    set found $id
    foreach r $runs {
	if {[dict get $r id] == $id} {
	    return $id
	}
	if {[dict get $r pid] == [pid] && [dict get $r id] > $found} {
	    set found [dict get $r id]
	}
    }
    return $found
}

# EventLoop --
#
#	After the script of run has returned: which event loop Run enters.
#	As wish does, a script that loaded Tk (and left its main window)
#	gets the event loop until the main window is destroyed or the
#	script calls exit: "tk". -eventloop auto (the default) does that,
#	0 never enters a loop (""), 1 enters it whether Tk is loaded or not
#	(without Tk, "vwait": the loop ends when the script calls exit).

proc ::tclcprof::cli::EventLoop {mode} {
    # (winfo is an error once the script destroyed the main window.)
    set tk [expr {[package provide Tk] ne "" && [info commands ::winfo] ne ""
	&& ![catch {winfo exists .} exists] && $exists}]
    if {$mode eq "auto" ? !$tk : ![string is true $mode]} {
	return ""
    }
    return [expr {$tk ? "tk" : "vwait"}]
}

# RunTests --
#
#	run -tcltest 1: the script runs a tcltest suite; each test is
#	profiled as a run of its own (tclcprof::tcltest::enable), in this
#	process and in the processes runAllTests starts.

proc ::tclcprof::cli::RunTests {script arglist opts} {
    ::tclcprof::tcltest::enable {*}$opts
    set ::argv0 $script
    set ::argv $arglist
    set ::argc [llength $::argv]
    set code [catch {uplevel #0 [list source $script]} result options]
    if {$code == 1} {
	puts stderr [ScriptErrorInfo $options]
    }
    set db [expr {[dict exists $opts -db] ? [dict get $opts -db] : ""}]
    if {$db ne "" && [file exists $db]} {
	set n 0
	foreach r [::tclcprof::runs -db $db] {
	    if {[dict get $r test_name] ne ""} {
		incr n
	    }
	}
	puts stderr "tclcprof: $db holds $n test runs\
	    (tclcprof runs [list $db])"
    }
    return [expr {$code == 1 ? 1 : 0}]
}

# ScriptErrorInfo --
#	The error information of a script that failed, as tclsh prints it:
#	without the lines of run's own source and uplevel below it.

proc ::tclcprof::cli::ScriptErrorInfo {options} {
    set info [dict get $options -errorinfo]
    regsub {\n    invoked from within\n"source [^\n]*"\n    \("uplevel" body line 1\)\n    invoked from within\n"uplevel #0 \[list source \$script\]"$} \
	    $info {} info
    return $info
}

proc ::tclcprof::cli::StartOnce {opts args} {
    variable started
    trace remove execution ::source enter [list ::tclcprof::cli::StartOnce $opts]
    # Every thread and interpreter of the program, unless told otherwise.
    ::tclcprof::start -scope process {*}$opts
    set started 1
}

# Files --
#	The leading arguments that do not start with "-" (files), and the
#	others (options).

proc ::tclcprof::cli::Files {arglist} {
    set files {}
    while {[llength $arglist] && ![string match -* [lindex $arglist 0]]} {
	set arglist [lassign $arglist file]
	lappend files $file
    }
    return [Window $files $arglist {-since -until}]
}

# Window --
#	A directory among files is a -history directory: it stands for its
#	files whose runs overlap the window of the options named by 'names'
#	(-since and -until, or diff's -base-since and -base-until), which
#	are taken out of the options. Returns {files options}.

proc ::tclcprof::cli::Window {files arglist names} {
    set window {}
    set rest {}
    foreach {opt v} $arglist {
	set i [lsearch -exact $names $opt]
	if {$i >= 0} {
	    lappend window [lindex {-since -until} $i] $v
	} else {
	    lappend rest $opt
	    if {[llength $rest] < [llength $arglist]} {
		lappend rest $v
	    }
	}
    }
    set out {}
    if {[llength $window] && [llength $files] == 1
	    && [::tclcprof::HistoryDb [lindex $files 0]]} {
	# A history kept in one database: the runs of the window.
	set file [lindex $files 0]
	set picked [::tclcprof::history $file {*}$window]
	if {![llength $picked]} {
	    ::tclcprof::reportlib::Fail [list DB NORUN $file 0] "no run\
		of the history \"$file\" in the time given"
	}
	if {[lsearch -exact $rest -run] >= 0} {
	    ::tclcprof::reportlib::Fail [list VALUE -run] "-run and\
		[lindex $window 0] cannot be used together"
	}
	return [list $files [linsert $rest end -run $picked]]
    }
    foreach file $files {
	if {[file isdirectory $file]} {
	    set picked [::tclcprof::history $file {*}$window]
	    if {![llength $picked]} {
		::tclcprof::reportlib::Fail [list DB NORUN $file 0] "no run\
		    of the history \"$file\" in the time given"
	    }
	    lappend out {*}$picked
	} else {
	    lappend out $file
	}
    }
    if {[llength $window] && [llength $out] == [llength $files]
	    && ![llength [lmap f $files {
		if {![file isdirectory $f]} continue; set f}]]} {
	::tclcprof::reportlib::Fail [list VALUE [lindex $window 0]] \
	    "[lindex $window 0] selects runs of a -history directory or\
	    database: none is given"
    }
    return [list $out $rest]
}

# HistorySide --
#	A side of diff that is a -history directory: the runs of its window
#	merged into one, in a temporary file (removed at exit); else the
#	side as given.

proc ::tclcprof::cli::HistorySide {spec arglist names} {
    set db [expr {![file isdirectory $spec] && [::tclcprof::HistoryDb $spec]
	&& [llength [lmap {o v} $arglist {
	    if {$o ni $names} continue; set o}]]}]
    if {![file isdirectory $spec] && !$db} {
	lassign [Window {} $arglist $names] - rest
	return [list $spec $rest]
    }
    lassign [Window [list $spec] $arglist $names] files rest
    set runs ""
    if {$db} {
	set runs [dict get $rest -run]
	dict unset rest -run
    }
    set profile [::tclcprof::mergelib::Read $files $runs]
    set tmp [file join [expr {[info exists ::env(TMPDIR)] ? $::env(TMPDIR)
	: "/tmp"}] tclcprof-window-[pid]-[incr ::tclcprof::cli::windows].db]
    file delete $tmp
    ::tclcprof::save $tmp -data $profile
    variable temporary
    lappend temporary $tmp
    return [list $tmp $rest]
}

# Report, Runs --
#	tclcprof report file ?file ...? ?option value ...?
#	tclcprof runs file
#	Several files (or -run with several runs): their runs merged.

proc ::tclcprof::cli::Report {args} {
    lassign [Files $args] files args
    if {[llength $files] < 1} {
	UsageError
    }
    ::tclcprof::report -db $files {*}$args
    return 0
}

# Export --
#	tclcprof export file ?file ...? -format format ?option value ...?
#	Without -file, the export goes to stdout.

proc ::tclcprof::cli::Export {args} {
    lassign [Files $args] files args
    if {[llength $files] < 1} {
	UsageError
    }
    set out [::tclcprof::export -db $files {*}$args]
    if {$out ne ""} {
	if {[dict exists [OptionDict $args] -format]
		&& [string match p* [dict get [OptionDict $args] -format]]} {
	    chan configure stdout -translation binary
	} else {
	    chan configure stdout -encoding utf-8
	}
	puts -nonewline stdout $out
    }
    return 0
}

# OptionDict --
#	Options as given ("-option value ..."), as a dict; any odd one out
#	is ignored (the command they are for reports it).

proc ::tclcprof::cli::OptionDict {arglist} {
    if {[llength $arglist] % 2} {
	set arglist [lrange $arglist 0 end-1]
    }
    return $arglist
}

# Diff --
#	tclcprof diff base new ?option value ...?

proc ::tclcprof::cli::Diff {args} {
    variable temporary {}
    if {[llength $args] < 2} {
	UsageError
    }
    if {[catch {
	# History directories: the base's window is -base-since and
	# -base-until, the new side's -since and -until.
	set rest [lrange $args 2 end]
	lassign [HistorySide [lindex $args 0] $rest {-base-since -base-until}] \
	    base rest
	lassign [HistorySide [lindex $args 1] $rest {-since -until}] new rest
	set args [list $base $new {*}$rest]
    } msg]} {
	puts stderr "tclcprof: $msg"
	return 2
    }
    try {
	return [DiffFiles {*}$args]
    } finally {
	foreach tmp $temporary {
	    file delete $tmp $tmp-wal $tmp-shm $tmp-journal
	}
    }
}

proc ::tclcprof::cli::DiffFiles {args} {
    if {[catch {
	set o [::tclcprof::difflib::ParseOptions [lrange $args 2 end]]
	if {[dict get $o -format] eq "html"} {
	    # The differential flame graph: no comparison, no gate.
	    set page [::tclcprof::diff {*}$args]
	} else {
	    set result [::tclcprof::diff {*}$args -format dict]
	}
    } msg]} {
	puts stderr "tclcprof: $msg"
	return 2
    }
    if {[dict get $o -format] eq "html"} {
	if {$page ne ""} {
	    chan configure stdout -encoding utf-8
	    puts -nonewline stdout $page
	}
	return 0
    }
    puts [join [::tclcprof::difflib::Text $o $result] \n]
    return [expr {[llength [dict get $result regressions]] ? 1 : 0}]
}

# Merge --
#	tclcprof merge out in ?in ...? ?-run runs? ?-label label?
#	The runs of the files in (the latest of each, or -run) merged and
#	written to out as a new run: tclcprof::save out -data, of the merge
#	that tclcprof::data -db makes (even of a single run, so that its
#	meta says what it holds).

proc ::tclcprof::cli::Merge {args} {
    lassign [Files $args] files args
    if {[llength $files] < 2} {
	UsageError
    }
    set files [lassign $files out]
    set spec ""
    set label {}
    foreach {opt v} [::tclcprof::reportlib::OptionPairs $args {-label -run}] {
	switch -- $opt {
	    -run {
		set spec [::tclcprof::mergelib::RunSpec $v]
	    }
	    -label {
		set label [list -label $v]
	    }
	}
    }
    set profile [::tclcprof::mergelib::Read $files $spec]
    set id [::tclcprof::save $out -data $profile {*}$label]
    set runs [dict get $profile meta runs]
    puts stderr "tclcprof: $runs run[expr {$runs == 1 ? "" : "s"}] merged\
	into run $id of $out (tclcprof report [list $out] -run $id)"
    return 0
}

proc ::tclcprof::cli::Runs {args} {
    if {[llength $args] != 1} {
	UsageError
    }
    set runs [::tclcprof::runs -db [lindex $args 0]]
    puts [format "%5s  %-19s %8s %-8s %-5s %9s %10s  %-9s %s" \
	id started seconds mode clock samples calls status label]
    foreach r $runs {
	set started [clock format [expr {int([dict get $r start_time])}] \
	    -format "%Y-%m-%d %H:%M:%S"]
	set elapsed [dict get $r elapsed]
	if {$elapsed ne ""} {
	    set elapsed [format %.2f $elapsed]
	}
	set label [dict get $r label]
	if {[dict get $r test_name] ne ""} {
	    set label "[file tail [dict get $r test_file]] [dict get $r test_name]"
	}
	puts [format "%5d  %-19s %8s %-8s %-5s %9s %10s  %-9s %s" \
	    [dict get $r id] $started \
	    $elapsed \
	    [dict get $r mode] [dict get $r clock] [dict get $r samples] \
	    [dict get $r calls] [dict get $r status] $label]
    }
    return 0
}
