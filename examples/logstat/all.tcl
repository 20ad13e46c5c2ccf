# all.tcl -- run the logstat example's tcltest suite (every *.test file
# here): tclsh examples/logstat/all.tcl ?tcltest option value ...?
package require tcltest 2.2
tcltest::configure -testdir [file dirname [file normalize [info script]]]
tcltest::configure {*}$argv
tcltest::runAllTests
