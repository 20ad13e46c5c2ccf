# profiled.tcl --
#
#	The logstat example profiled from inside a script (README.md,
#	"Profiling your own program"): exact timing of one summary, its
#	flat profile on stdout, its flame graph in logstat-exact.html.
#
#	    TCLLIBPATH=$PWD tclsh examples/logstat/profiled.tcl access.log
#
# Copyright (c) 2026 The tclcprof authors.
# See the file "LICENSE" for terms of use.

package require tclcprof
source [file join [file dirname [info script]] logstat.tcl]

tclcprof::start -mode exact		;# time every call, not samples
logstat::main [lindex $argv 0]
tclcprof::stop

tclcprof::report -type flat -limit 5	;# the commands, heaviest first
tclcprof::export -format html -file logstat-exact.html
