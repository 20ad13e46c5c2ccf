# exportfile.tcl --
#
#	export -file: the destination checked before any work, and the
#	export written to it (atomically where it can be: a temporary file
#	renamed), as text in UTF-8 or as bytes.
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof::exportlib {}

# CheckFile --
#
#	Fail early, before the work, when -file cannot be written: a
#	directory in the way, or no directory to write it in. Errors:
#	TCLCPROF FILE path.

proc ::tclcprof::exportlib::CheckFile {path} {
    set dir [file dirname $path]
    if {[file isdirectory $path]} {
	Fail [list FILE $path] "cannot write \"$path\": it is a directory"
    }
    if {![file isdirectory $dir]} {
	Fail [list FILE $path] "cannot write \"$path\": no directory\
		\"$dir\""
    }
}

# Destination --
#
#	Where an export to path goes: {file target}, a new file renamed
#	over target once complete, where target is path or, for a symbolic
#	link, the end of its chain of links (the file it names is replaced,
#	not the link); or {through path}, to open path and write into it:
#	anything that is not a regular file (a device, a FIFO), and what
#	is in /proc or links there (such as /dev/stdout and /dev/fd/1),
#	which names open files rather than paths. Errors: TCLCPROF FILE
#	path (a directory, a loop of links).

proc ::tclcprof::exportlib::Destination {path} {
    set p $path
    for {set hops 0} {$hops < 40} {incr hops} {
	if {[string match /proc/* [file normalize $p]]} {
	    return [list through $path]
	}
	if {[catch {file lstat $p st}]} {
	    # Nothing there yet.
	    return [list file $p]
	}
	switch -- $st(type) {
	    file {
		return [list file $p]
	    }
	    directory {
		Fail [list FILE $path] "cannot write \"$path\": it is a\
			directory"
	    }
	    link {
	    }
	    default {
		return [list through $path]
	    }
	}
	if {[catch {file readlink $p} to]} {
	    Fail [list FILE $path] "cannot write \"$path\": $to"
	}
	set p [file join [file dirname $p] $to]
    }
    Fail [list FILE $path] "cannot write \"$path\": too many levels of\
	    symbolic links"
}

# WriteFile --
#
#	Write data to path: text in UTF-8, binary data as bytes. A regular
#	file (or the one a symbolic link leads to) is written whole or not
#	at all: into a new file in its directory, renamed over it once
#	complete; a file that exists keeps its permissions, a new one is
#	readable by all (0644). Anything else is written through, opened as
#	it is (see Destination). Errors: TCLCPROF FILE path (a regular file
#	is left as it was).

proc ::tclcprof::exportlib::WriteFile {path data binary} {
    CheckFile $path
    lassign [Destination $path] how target
    if {$how eq "through"} {
	WriteThrough $path $data $binary
	return
    }
    set dir [file dirname $target]
    if {[catch {file tempfile tmp [file join $dir .[file tail $target]]} chan]} {
	Fail [list FILE $path] "cannot write \"$path\": $chan"
    }
    try {
	Encode $chan $binary
	puts -nonewline $chan $data
	close $chan
	set chan ""
	set mode 0644
	if {[file exists $target]
		&& ![catch {file attributes $target -permissions} m]} {
	    set mode $m
	}
	catch {file attributes $tmp -permissions $mode}
	file rename -force $tmp $target
    } on error {msg} {
	if {$chan ne ""} {
	    catch {close $chan}
	}
	catch {file delete $tmp}
	Fail [list FILE $path] "cannot write \"$path\": $msg"
    }
    return
}

# WriteThrough --
#	Write data into a device or a FIFO (which must exist), as WriteFile
#	would into a file. A full device (/dev/full) is an error.

proc ::tclcprof::exportlib::WriteThrough {path data binary} {
    if {[catch {open $path {WRONLY TRUNC}} chan]} {
	Fail [list FILE $path] "cannot write \"$path\": $chan"
    }
    try {
	Encode $chan $binary
	puts -nonewline $chan $data
	flush $chan
    } on error {msg} {
	# The channel is closed even when its last flush fails.
	catch {close $chan}
	Fail [list FILE $path] "cannot write \"$path\": $msg"
    }
    if {[catch {close $chan} msg]} {
	Fail [list FILE $path] "cannot write \"$path\": $msg"
    }
    return
}

proc ::tclcprof::exportlib::Encode {chan binary} {
    if {$binary} {
	chan configure $chan -translation binary
    } else {
	chan configure $chan -encoding utf-8 -translation lf
    }
}
