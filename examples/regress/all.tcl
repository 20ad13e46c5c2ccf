# all.tcl -- run the example's tcltest suite (every *.test file here).
package require tcltest 2.2
tcltest::configure -testdir [file dirname [file normalize [info script]]]
tcltest::configure {*}$argv
tcltest::runAllTests
