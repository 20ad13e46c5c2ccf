# wordfreq.tcl --
#
#	A small library for the regression-profiling example: word
#	frequencies of a text. With the environment variable WORDFREQ_SLOW
#	set, tokenize normalizes every word through a helper that is
#	needlessly slow: the "regression" the example's diff catches.

namespace eval ::wordfreq {
    namespace export tokenize count top
    variable slow [info exists ::env(WORDFREQ_SLOW)]
}

# tokenize text --
#	The words of text, lowercased.

proc ::wordfreq::tokenize {text} {
    variable slow
    set words {}
    foreach w [regexp -all -inline {[[:alpha:]]+} $text] {
	if {$slow} {
	    set w [normalize $w]
	} else {
	    set w [string tolower $w]
	}
	lappend words $w
    }
    return $words
}

# normalize word --
#	The slow way to lowercase a word: one character at a time.

proc ::wordfreq::normalize {word} {
    set out ""
    foreach c [split $word ""] {
	append out [string tolower $c]
    }
    return $out
}

# count words --
#	A dict word -> occurrences.

proc ::wordfreq::count {words} {
    set counts {}
    foreach w $words {
	dict incr counts $w
    }
    return $counts
}

# top text n --
#	The n most frequent words of text, with their counts, most frequent
#	first (ties by word).

proc ::wordfreq::top {text n} {
    set counts [count [tokenize $text]]
    set pairs [lsort -index 0 [lmap {w c} $counts {list $w $c}]]
    set pairs [lsort -integer -decreasing -index 1 $pairs]
    return [lrange $pairs 0 [expr {$n - 1}]]
}
