# compare.tcl --
#
#	Compare two results files of the benchmarks (bench/run.tcl -out,
#	bench-results.tcl in the build directory after make bench): each
#	figure of both, side by side, with new / old.
#
#	Usage: tclsh compare.tcl OLD NEW ?PATTERN?
#	    PATTERN (glob) keeps only the figures whose names match, e.g.
#	    "workloads *" or "*sample*".
#
# Copyright (c) 2026 The tclcprof authors.
# See the file "LICENSE" for terms of use.

if {[llength $argv] < 2 || [llength $argv] > 3} {
    puts stderr "usage: tclsh compare.tcl OLD NEW ?PATTERN?"
    exit 2
}
lassign $argv oldFile newFile pattern
if {$pattern eq ""} {
    set pattern *
}

proc readResults {path} {
    set f [open $path]
    set d [read $f]
    close $f
    return $d
}

# The figures of a results dict, as a dict: name -> number.
proc figures {r} {
    set out {}
    if {[dict exists $r workloads]} {
	dict for {w d} [dict get $r workloads] {
	    dict set out "workloads $w base_s" [dict get $d base_s]
	    dict for {c v} [dict get $d ratio] {
		dict set out "workloads $w $c" $v
	    }
	    foreach k {peer exact_accuracy} {
		if {[dict exists $d $k]} {
		    dict set out "workloads $w $k" [dict get $d $k]
		}
	    }
	    dict for {c v} [dict get $d ns_per_cmd] {
		dict set out "ns_per_cmd $w $c" $v
	    }
	}
    }
    if {[dict exists $r handler]} {
	foreach h [dict get $r handler] {
	    foreach k {median_us p99_us} {
		dict set out "handler ~[dict get $h target] $k" [dict get $h $k]
	    }
	}
    }
    if {[dict exists $r memory]} {
	dict for {k v} [dict get $r memory] {
	    if {[string match at* $k] || $k eq "before"} {
		foreach m {vmrss_mib vmhwm_mib} {
		    dict set out "memory $k $m" [dict get $v $m]
		}
	    }
	}
    }
    if {[dict exists $r reports]} {
	foreach d [dict get $r reports] {
	    foreach k {tree_s flat_s} {
		dict set out "reports [dict get $d samples]/[dict get $d distinct]\
		    $k" [dict get $d $k]
	    }
	}
    }
    if {[dict exists $r save]} {
	dict for {run d} [dict get $r save] {
	    foreach k {samples distinct_stacks save_s file_mib report_tree_s
		    report_flat_s readback_s} {
		dict set out "save $run $k" [dict get $d $k]
	    }
	}
    }
    if {[dict exists $r proto]} {
	# Results of before the capture by wrapping (its prototype).
	dict for {p d} [dict get $r proto] {
	    dict set out "proto $p base_s" [dict get $d base_s]
	    dict for {c v} [dict get $d ratio] {
		dict set out "proto $p $c" $v
	    }
	}
    }
    if {[dict exists $r distortion]} {
	dict for {c v} [dict get $r distortion] {
	    dict set out "distortion $c" $v
	}
    }
    if {[dict exists $r capture_cost]} {
	dict for {call d} [dict get $r capture_cost] {
	    dict for {c v} $d {
		dict set out "capture_cost $call $c" $v
	    }
	}
    }
    if {[dict exists $r export]} {
	dict for {f d} [dict get $r export formats] {
	    dict set out "export $f seconds" [dict get $d seconds]
	}
    }
    return $out
}

set old [readResults $oldFile]
set new [readResults $newFile]
foreach {label r} [list old $old new $new] {
    set m [dict get $r machine]
    set s [dict get $r settings]
    puts "$label: [dict get $m date], [dict get $m nproc] CPUs,\
	[dict get $m cpu_model], Tcl [dict get $m tcl], commit\
	[dict get $m commit], load [dict get $m loadavg_start]\
	-> [dict get $m loadavg_end]; rounds [dict get $s rounds],\
	scale [dict get $s scale]"
}
set fo [figures $old]
set fn [figures $new]
set width 0
foreach k [dict keys [dict merge $fo $fn]] {
    if {[string match $pattern $k] && [string length $k] > $width} {
	set width [string length $k]
    }
}
puts [format "%-*s  %10s  %10s  %8s" $width figure old new new/old]
foreach k [dict keys [dict merge $fo $fn]] {
    if {![string match $pattern $k]} {
	continue
    }
    set a [expr {[dict exists $fo $k] ? [dict get $fo $k] : "-"}]
    set b [expr {[dict exists $fn $k] ? [dict get $fn $k] : "-"}]
    set q -
    if {[string is double -strict $a] && [string is double -strict $b]
	    && $a != 0} {
	set q [format %.2f [expr {double($b) / $a}]]
    }
    puts [format "%-*s  %10s  %10s  %8s" $width $k $a $b $q]
}
if {[dict exists $new targets]} {
    puts ""
    puts "targets (new):"
    foreach t [dict get $new targets] {
	puts [format "  %-4s  %-45s %s" [dict get $t pass] [dict get $t name] \
	    [dict get $t measured]]
    }
}
