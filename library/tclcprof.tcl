# tclcprof.tcl --
#
#	Tcl-level helpers of the tclcprof package, sourced by the shared
#	library's initialisation (Tclcprof_Init, after it has created the
#	::tclcprof namespace and its commands), from the library's own
#	directory.
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof {}
source -encoding utf-8 [file join [file dirname [info script]] report.tcl]
source -encoding utf-8 [file join [file dirname [info script]] reportbuild.tcl]
source -encoding utf-8 [file join [file dirname [info script]] reporttree.tcl]
source -encoding utf-8 [file join [file dirname [info script]] reportflat.tcl]
source -encoding utf-8 [file join [file dirname [info script]] reportcallers.tcl]
source -encoding utf-8 [file join [file dirname [info script]] reportcomponents.tcl]
source -encoding utf-8 [file join [file dirname [info script]] reportlines.tcl]
source -encoding utf-8 [file join [file dirname [info script]] reportcoverage.tcl]
source -encoding utf-8 [file join [file dirname [info script]] reportcheck.tcl]
source -encoding utf-8 [file join [file dirname [info script]] reportheader.tcl]
source -encoding utf-8 [file join [file dirname [info script]] reporttext.tcl]
source -encoding utf-8 [file join [file dirname [info script]] threads.tcl]
source -encoding utf-8 [file join [file dirname [info script]] labels.tcl]
source -encoding utf-8 [file join [file dirname [info script]] timeline.tcl]
source -encoding utf-8 [file join [file dirname [info script]] reportevents.tcl]
source -encoding utf-8 [file join [file dirname [info script]] export.tcl]
source -encoding utf-8 [file join [file dirname [info script]] exportstacks.tcl]
source -encoding utf-8 [file join [file dirname [info script]] exportfolded.tcl]
source -encoding utf-8 [file join [file dirname [info script]] exportspeedscope.tcl]
source -encoding utf-8 [file join [file dirname [info script]] exportchrome.tcl]
source -encoding utf-8 [file join [file dirname [info script]] exportcallgrind.tcl]
source -encoding utf-8 [file join [file dirname [info script]] exportpprof.tcl]
source -encoding utf-8 [file join [file dirname [info script]] exportdot.tcl]
source -encoding utf-8 [file join [file dirname [info script]] exporthtml.tcl]
source -encoding utf-8 [file join [file dirname [info script]] exporttimeline.tcl]
source -encoding utf-8 [file join [file dirname [info script]] exportfile.tcl]
source -encoding utf-8 [file join [file dirname [info script]] cli.tcl]
source -encoding utf-8 [file join [file dirname [info script]] testhooks.tcl]
source -encoding utf-8 [file join [file dirname [info script]] diff.tcl]
source -encoding utf-8 [file join [file dirname [info script]] serve.tcl]
source -encoding utf-8 [file join [file dirname [info script]] merge.tcl]
source -encoding utf-8 [file join [file dirname [info script]] attach.tcl]
source -encoding utf-8 [file join [file dirname [info script]] attachinject.tcl]

# An unknown subcommand of the ensemble is a TCLCPROF error too, with
# Tcl's message.

proc ::tclcprof::UnknownSubcommand {ensemble subcommand args} {
    set names [lsort [namespace eval ::tclcprof {namespace export}]]
    return -code error -errorcode [list TCLCPROF SUBCOMMAND $subcommand] \
	"unknown subcommand \"$subcommand\": must be\
	[join [lrange $names 0 end-1] {, }], or [lindex $names end]"
}
namespace ensemble configure ::tclcprof \
    -unknown ::tclcprof::UnknownSubcommand

# Activation without editing the program: the environment variable
# TCLCPROF holds options of tclcprof::start (a Tcl list), and profiling
# starts as soon as the package is loaded, into tclcprof.db unless -db
# says otherwise. The run is written when it stops: by tclcprof::stop, or
# when the program exits or deletes its interpreter. A bad value is an
# error of package require itself, with the start's error code.

proc ::tclcprof::EnvStart {value} {
    if {[catch {llength $value}] || [llength $value] % 2} {
	return -code error -errorcode [list TCLCPROF VALUE TCLCPROF $value] \
	    "bad TCLCPROF environment variable \"$value\": expected\
	    options of tclcprof::start (-option value ...)"
    }
    set opts $value
    # -serve PORT: the endpoint of tclcprof::serve; alone, no run is
    # started (requests make their own).
    if {[dict exists $opts -serve]} {
	set serve [dict get $opts -serve]
	dict unset opts -serve
	try {
	    ::tclcprof::servelib::FromOption $serve
	} on error {msg options} {
	    return -code error -errorcode [dict get $options -errorcode] \
		"TCLCPROF environment variable: $msg"
	}
	if {![dict size $opts]} {
	    return
	}
    }
    if {![dict exists $opts -db] && ![dict exists $opts -history]
	    && [dict get [dict merge {-mode sample} \
	    [::tclcprof::configure] $opts] -mode] ne "stack"} {
	dict set opts -db $::tclcprof::cli::defaultDb
    }
    # Loaded from the program's main script (at its top level or deeper):
    # its top level gets a frame, <script app.tcl>, as with tclcprof run.
    set main [::tclcprof::MainScript]
    if {$main ne ""} {
	::tclcprof::TopScript $main
    }
    try {
	# Every thread and interpreter of the program, unless told otherwise.
	::tclcprof::start -scope process {*}$opts
    } on error {msg options} {
	return -code error -errorcode [dict get $options -errorcode] \
	    "TCLCPROF environment variable: $msg"
    }
}

# The file of the program's main script when the outermost command running
# is one of its top level (tclsh app.tcl: Tcl_Main evaluates it), else "".

proc ::tclcprof::MainScript {} {
    if {![info exists ::argv0] || [info frame] < 1} {
	return ""
    }
    set outer [info frame 1]
    if {[dict get $outer type] ne "source" || ![dict exists $outer file]} {
	return ""
    }
    set file [dict get $outer file]
    if {[file normalize $::argv0] eq [file normalize $file]
	    || ([file pathtype $::argv0] ne "absolute"
		&& [file tail $::argv0] eq [file tail $file])} {
	# (A relative argv0 of a program that changed directory since.)
	return $file
    }
    return ""
}

if {[info exists ::env(TCLCPROF)] && [string trim $::env(TCLCPROF)] ne ""
	&& ![info exists ::tclcprof::noEnv]
	&& ![dict get [::tclcprof::status] running]} {
    ::tclcprof::EnvStart $::env(TCLCPROF)
}
