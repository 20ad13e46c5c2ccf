# tclcprof.tcl --
#
#	Tcl-level helpers of the tclcprof package, sourced by pkgIndex.tcl
#	right after the shared library has been loaded (the C side has
#	already created the ::tclcprof namespace by then).
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof {}
source -encoding utf-8 [file join [file dirname [info script]] report.tcl]
source -encoding utf-8 [file join [file dirname [info script]] export.tcl]
source -encoding utf-8 [file join [file dirname [info script]] flamegraph.tcl]
