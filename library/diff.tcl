# diff.tcl --
#
#	tclcprof::diff: compare two profile runs, or two profile databases
#	test by test, and report what got slower or faster, or is called
#	more or less often, per test and per command, sorted by impact.
#
#	A side of the comparison is a profile database (all its runs) or a
#	list of them (all their runs), or, with -db (a file or a list of
#	files), one run id, several or "all": those runs of the files,
#	merged into one (merge.tcl). Runs are grouped by key: the test
#	they profile (test_file and test_name, from
#	tclcprof::tcltest::enable), else their label, else "(run)"; runs of
#	the same key on one side are repetitions, reduced to one figure per
#	command by -stat (min or median). Keys found on both sides are
#	compared.
#
#	Figures per command come from each run's flat profile (exact view
#	when the run has exact figures): calls, self and total time (ns;
#	a sampled run's self and total are samples), and samples (the
#	sampled flat total). Each test also has a row of its own (command
#	""): its total time (or samples, or all its calls).
#
#	A change is reported when it passes both the relative -threshold
#	(percent of the base) and the absolute -floor (in the metric's
#	unit): timing noise on a shared machine is tens of percent for
#	short calls, so small absolute changes are not news, and the
#	minimum of several repetitions is the steadiest estimate of a
#	time. Calls are exact: -metric calls with -threshold 0 flags any
#	change.
#
#	With -format html the result is instead the differential flame
#	graph of the new profile against the base (export -format html
#	-base, exporthtml.tcl): each side one profile, a run (-db) or a
#	file's latest run.
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof {
    namespace export diff
}

namespace eval ::tclcprof::difflib {
    namespace path ::tclcprof::reportlib

    variable optionNames {
	-by -channel -db -file -floor -format -label -limit -metric -normalize
	-stat -threshold -view
    }
    # The options of the comparison, and those of its flame graph.
    variable tableOptions {-channel -floor -limit -metric -stat -threshold}
    variable htmlOptions {-file -normalize -view}
    variable metrics {calls samples self total}
    # Default -floor per unit.
    variable floors {calls 0 ns 200000 samples 3}
}

# ::tclcprof::diff --
#
#	tclcprof::diff base new ?option value ...?
#
# Results:
#	Text written to -channel (the empty string), or with -format dict
#	the comparison as a dict: metric, unit, threshold, floor, stat,
#	base and new (each: source, runs, keys), only_base and only_new
#	(keys), compared (how many keys), regressions and improvements
#	(lists of row dicts: test {file name} or {} plus label, command,
#	kind, base, new, delta, pct; sorted by impact).

proc ::tclcprof::diff {args} {
    if {[llength $args] < 2} {
	return -code error -errorcode {TCLCPROF WRONGARGS} \
		"wrong # args: should be \"tclcprof::diff base new ?option\
		value ...?\""
    }
    set args [lassign $args base new]
    set o [difflib::ParseOptions $args]
    if {[dict get $o -format] eq "html"} {
	return [difflib::Html $base $new $o]
    }
    if {[dict get $o -format] eq "text"} {
	reportlib::CheckChannel [dict get $o -channel]
    }
    set b [difflib::Side $base $o]
    set n [difflib::Side $new $o]
    set result [difflib::Compare $o $b $n]
    if {[dict get $o -format] eq "dict"} {
	return $result
    }
    reportlib::Output [dict create -channel [dict get $o -channel]] \
	[difflib::Text $o $result]
    return
}

proc ::tclcprof::difflib::ParseOptions {arglist} {
    variable optionNames
    variable metrics

    set o [dict create -channel stdout -format text -limit {} \
	-metric total -stat min -threshold 25.0]
    set given {}
    foreach {opt v} [OptionPairs $arglist $optionNames] {
	switch -- $opt {
	    -metric {
		set v [Enum $opt $v metric $metrics]
	    }
	    -stat {
		set v [Enum $opt $v statistic {median min}]
	    }
	    -format {
		set v [Enum $opt $v format {dict html text}]
	    }
	    -threshold - -floor {
		# NaN is a double to [string is double] but compares with
		# nothing ([expr] fails on it); Inf would compare nothing.
		if {![string is double -strict $v]
			|| [catch {expr {$v >= 0 && $v < Inf}} ok] || !$ok} {
		    Fail [list VALUE $opt $v] "bad value \"$v\" for $opt:\
			expected a non-negative number"
		}
		set v [expr {double($v)}]
	    }
	    -limit {
		if {![string is entier -strict $v] || $v < 0} {
		    Fail [list VALUE $opt $v] "bad value \"$v\" for -limit:\
			expected a non-negative integer"
		}
	    }
	}
	dict set o $opt $v
	dict set given $opt 1
    }
    if {[dict exists $given -channel] && [dict get $o -format] eq "dict"} {
	Fail [list VALUE -channel [dict get $o -channel]] "-channel is for\
	    text output: it cannot be used with -format dict"
    }
    # -label, -by (labels.tcl), checked as report checks them.
    LabelOptions $o
    variable tableOptions
    variable htmlOptions
    set format [dict get $o -format]
    foreach opt [expr {$format eq "html" ? $tableOptions : $htmlOptions}] {
	if {[dict exists $given $opt]} {
	    Fail [list VALUE $opt] "$opt cannot be used with -format\
		$format: [expr {$format eq "html" ? "it is an option of\
		the text and dict comparison" : "it is an option of\
		-format html"}]"
	}
    }
    return $o
}

# Html --
#
#	diff -format html: the differential flame graph of new against
#	base (see ::tclcprof::export -base). With -db the two are run ids
#	of that file, else files whose latest runs are compared, as
#	tclcprof::data -db reads them. The options -file, -normalize and
#	-view are export's.
#
# Results:
#	The page, or the empty string with -file.

proc ::tclcprof::difflib::Html {base new o} {
    set eo [dict create -format html]
    foreach opt {-file -normalize -view -label -by} {
	if {[dict exists $o $opt]} {
	    dict set eo $opt [dict get $o $opt]
	}
    }
    set profiles {}
    foreach spec [list $base $new] {
	if {[dict exists $o -db]} {
	    # Two runs of one file, refused as Side refuses them.
	    set file [dict get $o -db]
	    if {![string is entier -strict $spec] || $spec < 1} {
		Fail [list VALUE run $spec] "bad run \"$spec\": with -db, the\
		    two sides are run ids"
	    }
	    set found [lmap r [::tclcprof::runs -db $file] {
		if {[dict get $r id] != $spec} continue
		set r
	    }]
	    if {![llength $found]} {
		Fail [list DB NORUN $file $spec] "no run $spec in \"$file\""
	    }
	    lappend profiles [::tclcprof::data -db $file \
		-run [dict get [lindex $found 0] id]]
	} else {
	    lappend profiles [::tclcprof::data -db $spec]
	}
    }
    return [::tclcprof::export {*}$eo -data [lindex $profiles 1] \
	    -base [lindex $profiles 0]]
}

# Side --
#
#	One side of the comparison: {source S runs N groups {key {label
#	figures-list} ...}}, where each figures value is a dict command
#	-> value for the metric, one per run of the key.

proc ::tclcprof::difflib::Side {spec o} {
    set metric [dict get $o -metric]
    if {[dict exists $o -db]} {
	# Runs of the files of -db, merged into one (merge.tcl).
	set files [::tclcprof::mergelib::Files [dict get $o -db]]
	if {[catch {::tclcprof::mergelib::RunSpec $spec} ids]} {
	    Fail [list VALUE run $spec] "bad run \"$spec\": with -db, the\
		two sides are run ids (or lists of them, or all)"
	}
	set parts [::tclcprof::mergelib::Parts $files $ids]
	set source "[join $files {, }] run[expr {[llength $ids] == 1
	    ? "" : "s"}] [join $ids {, }]"
    } else {
	# All the runs of a file, or of a list of files.
	set parts {}
	foreach file [::tclcprof::mergelib::Files $spec] {
	    set runs [::tclcprof::runs -db $file]
	    if {![llength $runs]} {
		Fail [list DB NORUN $file 0] "no runs in \"$file\""
	    }
	    foreach r $runs {
		lappend parts [dict merge $r [list file $file]]
	    }
	}
	set source [join [::tclcprof::mergelib::Files $spec] {, }]
    }
    set groups {}
    set units {}
    set complete [lmap r $parts {
	if {[dict get $r status] ne "complete"} continue
	set r
    }]
    if {[dict exists $o -db]} {
	# The runs of a side compared as one, whatever their labels.
	set reps [expr {[llength $complete] ? [list $complete] : {}}]
    } else {
	set reps [lmap r $complete {list $r}]
    }
    foreach rep $reps {
	set r [lindex $rep 0]
	if {[dict exists $o -db]} {
	    set key run
	    set label "run [join $ids {, }]"
	} else {
	    lassign [Key $r] key label
	}
	if {[llength $rep] == 1} {
	    set profile [::tclcprof::data -db [dict get $r file] \
		-run [dict get $r id]]
	    CheckRun $profile "run [dict get $r id] of\
		\"[Escape [dict get $r file]]\""
	} else {
	    set profile [::tclcprof::mergelib::MergeParts $rep]
	}
	lassign [Figures $profile $metric $o] unit figures
	if {$unit eq ""} {
	    continue
	}
	dict set units $unit 1
	if {![dict exists $groups $key]} {
	    dict set groups $key [list $label {}]
	}
	set g [dict get $groups $key]
	lset g 1 [linsert [lindex $g 1] end $figures]
	dict set groups $key $g
    }
    if {[dict size $units] > 1} {
	Fail [list VALUE -metric $metric] "-metric $metric is in different\
	    units in the runs of \"$source\" (exact and sampled runs)"
    }
    return [dict create source $source runs [llength $parts] \
	groups $groups unit [lindex [dict keys $units] 0]]
}

# Key --
#	A run's key and how to show it: its test, else its label.

proc ::tclcprof::difflib::Key {run} {
    if {[dict get $run test_name] ne ""} {
	set test [list [dict get $run test_file] [dict get $run test_name]]
	return [list [list test {*}$test] [join $test " "]]
    }
    set label [dict get $run label]
    if {$label ne ""} {
	return [list [list label $label] $label]
    }
    return [list run (run)]
}

# CheckRun --
#
#	Check what Figures reads of a run's profile before the report does
#	(a file's runs row holds its meta as it was written, or damaged):
#	a dictionary whose meta is a dictionary with a mode. Errors:
#	TCLCPROF DATA FORMAT, TCLCPROF DATA KEY mode.

proc ::tclcprof::difflib::CheckRun {profile who} {
    if {[catch {dict size $profile}] || ![dict exists $profile meta]
	    || [catch {dict size [dict get $profile meta]}]} {
	Fail {DATA FORMAT} "invalid profile: $who: meta is not a\
	    dictionary"
    }
    if {![dict exists $profile meta mode]} {
	Fail {DATA KEY mode} "invalid profile: $who: meta: missing key\
	    \"mode\""
    }
}

# Figures --
#
#	The metric's figure for each command of a profile, and for the
#	whole (command ""), with its unit (ns, samples or calls), or an
#	empty unit when the profile has no such figures. A command is
#	{name kind}, or {name kind set} with -by: the profile is first cut
#	by -label and -by (labels.tcl), and with -by each set of labels at
#	the top of the tree (every sample's, in a sampled tree) counts its
#	commands apart.

proc ::tclcprof::difflib::Figures {profile metric {o {}}} {
    set profile [Labels $o $profile]
    lassign [LabelOptions $o] filter by
    set split [expr {$by ne "*" && [llength $by]}]
    set meta [dict get $profile meta]
    set mode [dict get $meta mode]
    set exact [expr {$mode in {exact both}}]
    if {$metric eq "samples" || !$exact} {
	if {$mode ni {sample both} || $metric eq "calls"} {
	    return [list {} {}]
	}
	set view samples
	set unit samples
    } else {
	set view exact
	set unit [expr {$metric eq "calls" ? "calls" : "ns"}]
    }
    set treeKey [expr {$mode eq "both" && $view eq "exact" ? "exact"
	: "tree"}]
    # The parts counted apart: {set profile} (set "" for all, or for
    # what ran without one of the sets of -by).
    set parts [list [list "" $profile]]
    if {$split} {
	set parts [SplitBySets $profile $treeKey]
    }
    # The program's main script is "<script>" whatever its file (see
    # MainScripts).
    set mains [MainScripts [dict get $profile $treeKey]]
    set figures {}
    set whole 0
    set rows {}
    foreach part $parts {
	lassign $part set p
	if {[dict get $p $treeKey total] == 0
		&& ![llength [dict get $p $treeKey children]]} {
	    continue
	}
	foreach row [::tclcprof::report -data $p -type flat -format dict \
		-min 0 -view $view] {
	    if {[dict get $row kind] ne "labels"} {
		lappend rows [list $set $row]
	    }
	}
    }
    foreach pair $rows {
	lassign $pair set row
	set key [list [dict get $row name] [dict get $row kind]]
	if {[dict get $row kind] eq "tcl" && [dict get $row name] in $mains} {
	    set key [list <script> tcl]
	}
	if {$set ne ""} {
	    lappend key $set
	}
	switch -- $metric {
	    calls {
		set v [dict get $row calls]
		incr whole $v
	    }
	    self {
		set v [expr {$view eq "exact" ? [dict get $row self_ns]
		    : [dict get $row self]}]
	    }
	    total - samples {
		set v [expr {$view eq "exact" ? [dict get $row total_ns]
		    : [dict get $row total]}]
	    }
	}
	if {[dict exists $figures $key]} {
	    set v [expr {$v + [dict get $figures $key]}]
	}
	dict set figures $key $v
    }
    if {$metric ne "calls"} {
	set tree [dict get $profile [expr {$mode eq "both" && $view eq "exact"
	    ? "exact" : "tree"}]]
	set whole [dict get $tree total]
    }
    dict set figures {} $whole
    return [list $unit $figures]
}

# SplitBySets --
#	A profile (cut by -by) as parts: {set profile} for each node of a
#	set of labels at the top of its tree (under the root, or under a
#	thread's root), the profile holding that node alone; and {"" p},
#	p holding the rest.

proc ::tclcprof::difflib::SplitBySets {profile treeKey} {
    set root [dict get $profile $treeKey]
    set rest {}
    set sets {}
    foreach c [dict get $root children] {
	if {[dict get $c kind] eq "labels"} {
	    lappend sets [dict get $c name] [list $c]
	} elseif {[dict get $c kind] eq "thread"} {
	    # A thread's sets, each under a copy of the thread's root.
	    set others {}
	    foreach k [dict get $c children] {
		if {[dict get $k kind] eq "labels"} {
		    set t [dict replace $c self 0 total [dict get $k total] \
			children [list $k]]
		    lappend sets [dict get $k name] [list $t]
		} else {
		    lappend others $k
		}
	    }
	    set sum [dict get $c self]
	    foreach k $others {
		incr sum [dict get $k total]
	    }
	    lappend rest [dict replace $c total $sum children $others]
	} else {
	    lappend rest $c
	}
    }
    set parts {}
    foreach {set kids} $sets {
	set total 0
	foreach k $kids {
	    incr total [dict get $k total]
	}
	lappend parts [list $set [dict replace $profile $treeKey \
	    [dict replace $root self 0 total $total children $kids]]]
    }
    set total [dict get $root self]
    foreach k $rest {
	incr total [dict get $k total]
    }
    lappend parts [list "" [dict replace $profile $treeKey \
	[dict replace $root total $total children $rest]]]
    return $parts
}

# MainScripts --
#	The names of a tree's main scripts: its Tcl nodes <script NAME>
#	with no Tcl frame above them (those of the program's main file, as
#	tclcprof run makes them), which a comparison matches by that role,
#	as "<script>", so that two versions of a program in files of
#	different names are compared (export's MatchNames does the same for
#	the differential flame graph).

proc ::tclcprof::difflib::MainScripts {node} {
    set out {}
    foreach c [dict get $node children] {
	if {[dict get $c kind] eq "tcl"} {
	    if {[string match "<script *>" [dict get $c name]]} {
		lappend out [dict get $c name]
	    }
	} else {
	    lappend out {*}[MainScripts $c]
	}
    }
    return [lsort -unique $out]
}

# Stat --
#	Several repetitions' figures for one command (a missing one is 0)
#	reduced to one.

proc ::tclcprof::difflib::Stat {how values} {
    set values [lsort -real $values]
    set n [llength $values]
    if {$how eq "min" || $n == 1} {
	return [lindex $values 0]
    }
    if {$n % 2} {
	return [lindex $values [expr {$n / 2}]]
    }
    expr {([lindex $values [expr {$n / 2 - 1}]]
	+ [lindex $values [expr {$n / 2}]]) / 2.0}
}

proc ::tclcprof::difflib::Reduce {how reps} {
    set commands {}
    foreach figures $reps {
	foreach key [dict keys $figures] {
	    dict set commands $key 1
	}
    }
    set out {}
    foreach key [dict keys $commands] {
	set values [lmap figures $reps {
	    expr {[dict exists $figures $key] ? [dict get $figures $key] : 0}
	}]
	dict set out $key [Stat $how $values]
    }
    return $out
}

# Compare --
#	The comparison of two sides (see ::tclcprof::diff).

proc ::tclcprof::difflib::Compare {o b n} {
    variable floors

    set metric [dict get $o -metric]
    set unit [dict get $b unit]
    if {$unit eq ""} {
	set unit [dict get $n unit]
    }
    if {$unit ne "" && [dict get $n unit] ne "" && $unit ne [dict get $n unit]} {
	Fail [list VALUE -metric $metric] "-metric $metric is in\
	    [dict get $b unit] in the base and in [dict get $n unit] in\
	    the new runs: compare runs of the same kind"
    }
    if {$unit eq ""} {
	Fail [list NODATA $metric] "no run on either side has figures for\
	    -metric $metric"
    }
    set threshold [dict get $o -threshold]
    set floor [expr {[dict exists $o -floor] ? [dict get $o -floor]
	: [dict get $floors $unit]}]
    set stat [dict get $o -stat]
    set bg [dict get $b groups]
    set ng [dict get $n groups]
    set onlyBase {}
    set onlyNew {}
    set compared 0
    set reps Inf
    set regressions {}
    set improvements {}
    foreach key [dict keys $bg] {
	if {![dict exists $ng $key]} {
	    lappend onlyBase [lindex [dict get $bg $key] 0]
	    continue
	}
	incr compared
	lassign [dict get $bg $key] label breps
	set nreps [lindex [dict get $ng $key] 1]
	set reps [expr {min($reps, [llength $breps], [llength $nreps])}]
	set bf [Reduce $stat $breps]
	set nf [Reduce $stat $nreps]
	set test [expr {[lindex $key 0] eq "test" ? [lrange $key 1 2] : {}}]
	foreach cmd [lsort -unique [concat [dict keys $bf] [dict keys $nf]]] {
	    set bv [expr {[dict exists $bf $cmd] ? [dict get $bf $cmd] : 0}]
	    set nv [expr {[dict exists $nf $cmd] ? [dict get $nf $cmd] : 0}]
	    set delta [expr {$nv - $bv}]
	    if {$delta == 0 || abs($delta) < $floor || ($floor == 0
		    && abs($delta) == 0)} {
		continue
	    }
	    set pct [expr {$bv != 0 ? 100.0 * $delta / $bv : ""}]
	    if {$pct ne "" && abs($pct) <= $threshold} {
		continue
	    }
	    set row [dict create test $test label $label \
		command [lindex $cmd 0] kind [lindex $cmd 1] \
		labels [lindex $cmd 2] \
		base $bv new $nv delta $delta \
		pct [expr {$pct eq "" ? "" : double(round($pct * 10)) / 10}]]
	    if {$delta > 0} {
		lappend regressions $row
	    } else {
		lappend improvements $row
	    }
	}
    }
    foreach key [dict keys $ng] {
	if {![dict exists $bg $key]} {
	    lappend onlyNew [lindex [dict get $ng $key] 0]
	}
    }
    if {$compared == 0} {
	# A gate that compares nothing must not pass.
	Fail [list NODATA compared] "nothing to compare: no test (or run\
	    label) is on both sides"
    }
    # Times of single runs move by more than most thresholds from run to
    # run; counts of calls do not.
    set warnings {}
    if {$reps == 1 && $metric ne "calls"} {
	lappend warnings "single runs: each test ran once on a side, and\
	    times of single runs are noisy; repeat the suite and compare\
	    with -stat min over the repetitions"
    }
    return [dict create metric $metric unit $unit threshold $threshold \
	floor $floor stat $stat repetitions $reps warnings $warnings \
	base [dict create source [dict get $b source] runs [dict get $b runs] \
	    keys [dict size $bg]] \
	new [dict create source [dict get $n source] runs [dict get $n runs] \
	    keys [dict size $ng]] \
	compared $compared only_base $onlyBase only_new $onlyNew \
	regressions [ByImpact $regressions] \
	improvements [ByImpact $improvements]]
}

# ByImpact --
#	Rows sorted by the size of their change, largest first (then by
#	label and command: lsort is stable).

proc ::tclcprof::difflib::ByImpact {rows} {
    set keyed [lmap row $rows {
	list [expr {abs([dict get $row delta])}] \
	    "[dict get $row label]\0[dict get $row command]" $row
    }]
    set keyed [lsort -index 1 $keyed]
    set keyed [lsort -real -decreasing -index 0 $keyed]
    return [lmap k $keyed {lindex $k 2}]
}

# Text --
#	The comparison as lines of text.

proc ::tclcprof::difflib::Text {o result} {
    set unit [dict get $result unit]
    set what [dict get {calls calls self "self time" total "total time"
	samples samples} [dict get $result metric]]
    if {$unit eq "samples" && $what ne "samples"} {
	append what " (samples)"
    }
    set lines {}
    lappend lines "tclcprof diff: $what;\
	base [dict get $result base source] ([Count [dict get $result base runs] run]),\
	new [dict get $result new source] ([Count [dict get $result new runs] run])"
    lappend lines "[Count [dict get $result compared] test] compared;\
	changes beyond [Num [dict get $result threshold] 1]% and\
	[Value $unit [dict get $result floor]], [dict get $result stat]\
	of repetitions"
    foreach warning [dict get $result warnings] {
	lappend lines "warning: $warning"
    }
    foreach side {only_base only_new} what {"only in the base" "only in the new runs"} {
	set keys [dict get $result $side]
	if {[llength $keys]} {
	    lappend lines "[Count [llength $keys] test] $what: [join [lrange $keys 0 9] {, }][expr {[llength $keys] > 10 ? ", \u2026" : ""}]"
	}
    }
    set limit [dict get $o -limit]
    foreach section {regressions improvements} {
	set rows [dict get $result $section]
	lappend lines ""
	if {![llength $rows]} {
	    lappend lines "no $section"
	    continue
	}
	lappend lines "[Count [llength $rows] [string range $section 0 end-1]]:"
	lappend lines [format "%10s %10s %11s %8s  %s" Base New Change % \
	    "Test / command"]
	set shown $rows
	if {$limit ne "" && [llength $rows] > $limit} {
	    set shown [lrange $rows 0 [expr {$limit - 1}]]
	}
	foreach row $shown {
	    set pct [dict get $row pct]
	    set who [Escape [dict get $row label]]
	    if {[dict get $row command] ne ""} {
		append who "  " [Frame [dict get $row command] [dict get $row kind]]
	    }
	    if {[dict get $row labels] ne ""} {
		append who " \[[Escape [dict get $row labels]]\]"
	    }
	    lappend lines [format "%10s %10s %11s %8s  %s" \
		[Value $unit [dict get $row base]] \
		[Value $unit [dict get $row new]] \
		[expr {[dict get $row delta] > 0 ? "+" : "-"}][Value $unit [expr {abs([dict get $row delta])}]] \
		[expr {$pct eq "" ? "new" : [format %+.1f%% $pct]}] $who]
	}
	if {[llength $shown] < [llength $rows]} {
	    lappend lines "\u2026 [expr {[llength $rows] - [llength $shown]}] more"
	}
    }
    return $lines
}

proc ::tclcprof::difflib::Count {n what} {
    return "$n $what[expr {$n == 1 ? "" : "s"}]"
}

proc ::tclcprof::difflib::Value {unit v} {
    switch -- $unit {
	ns {
	    return [Dur $v]
	}
	default {
	    return [Num $v 2]
	}
    }
}
