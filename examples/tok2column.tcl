# tok2column.tcl --
#
#	The tok2column workload of Griffin & Pahlmeyer, "Integrated Tcl/C
#	Performance Profiling" (Figure 6), for tclcprof: Tcl procs call a
#	C command that calls back into Tcl procs before doing its real work
#	in C. The call tree a mixed Tcl/C profile should show:
#
#	  ::app::run > doWork > doWork2 > tok2column (C command)
#	    > tclprim_tok2column (C)
#	      > lang2lang_type (C)              the language lookup, ~60%
#	          > ::MtiFS::IsVhdlLanguage     (Tcl, called back from C)
#	          > ::MtiFS::IsVerilogLanguage  (Tcl, called back from C)
#	              > ::MtiFS::VerilogLanguage
#	              > ::MtiFS::IsLanguage > ::MtiFS::CanonicalName,
#	                    regexp, dict for ... (182 aliases per call)
#	      > tokenize_line (C)               the tokenizing, ~25%
#	          > scan_token > is_keyword, ScanWord ...
#	  the rest (~13%) is Tcl in doWork2: making each call's ~32 KB of
#	  Verilog text (join) and checking the answer against it (split).
#
#	As in the paper, tok2column spends most of its time finding out
#	which language "Verilog" is, by asking Tcl procs that rescan a table
#	of language aliases on every call, and much less on the tokenizing
#	it nominally exists for.
#
#	The C side is examples/tok2column.c, built by "make demo" (or
#	"make demo-ext") into libtclcprofdemo.so in the build directory;
#	"make demo" passes its path in TCLCPROF_DEMO_EXT. Run this script
#	standalone from the build directory with
#
#	    make demo-ext
#	    make shell SCRIPT=examples/tok2column.tcl
#
#	(or tclsh examples/tok2column.tcl with TCLLIBPATH set), or source it
#	and call "runWorkload seconds". Standalone, it prints the call tree
#	and the flat profile, and writes the flame graph
#	tok2column-flame.html in the current directory.
#
# Copyright (c) 2026 The tclcprof authors.
# See the file "LICENSE" for terms of use.

#------------------------------------------------------------------------
# The C extension.
#------------------------------------------------------------------------

namespace eval ::app {
    variable Here [file dirname [file normalize [info script]]]
}

# ::app::FindExtension --
#
#	The path of the demo extension: $env(TCLCPROF_DEMO_EXT), else
#	libtclcprofdemo.so (any shared library suffix) in the build
#	directory make names in TCLCPROF_BUILDDIR, next to this script's
#	directory (an in-tree build), or in the current directory.

proc ::app::FindExtension {} {
    variable Here
    global env
    if {[info exists env(TCLCPROF_DEMO_EXT)] && $env(TCLCPROF_DEMO_EXT) ne ""} {
        return $env(TCLCPROF_DEMO_EXT)
    }
    set name libtclcprofdemo[info sharedlibextension]
    set dirs {}
    if {[info exists env(TCLCPROF_BUILDDIR)]} {
        lappend dirs $env(TCLCPROF_BUILDDIR)
    }
    lappend dirs [file dirname $Here] [pwd]
    foreach dir $dirs {
        set path [file join $dir $name]
        if {[file exists $path]} {
            return $path
        }
    }
    return -code error "cannot find $name (looked in [join $dirs {, }]):\
        run \"make demo-ext\" or set TCLCPROF_DEMO_EXT"
}

if {[info commands ::tok2column] eq ""} {
    load [file normalize [::app::FindExtension]] Tok2column
}

#------------------------------------------------------------------------
# The language predicates that tok2column's C code calls back.
#------------------------------------------------------------------------

namespace eval ::MtiFS {
    # Every spelling of an HDL name the tool accepts: alias -> dict with
    # the language family and the standard's year (0 if none).
    variable Dialects [dict create]
}

proc ::MtiFS::VerilogLanguage {} { return Verilog }
proc ::MtiFS::VhdlLanguage {} { return VHDL }

# ::MtiFS::CanonicalName --
#
#	A language name without case, surrounding blanks, version or
#	extension suffix: "VHDL-2008", "vhdl_93", " Vhdl " -> "vhdl";
#	"SystemVerilog 2017" -> "systemverilog"; "Verilog-AMS" -> "verilog".

proc ::MtiFS::CanonicalName {name} {
    set n [string tolower [string trim $name]]
    regsub {(?:[-_ ]?(?:\d{2,4}|ams|xl|ext))+$} $n {} n
    return $n
}

# ::MtiFS::IsLanguage --
#
#	Whether name is a spelling of a language of the given family. The
#	slow way, on purpose: the whole alias table is scanned on every
#	call, each alias cut down to its base name with a regexp, whatever
#	family it belongs to, so the two predicates below cost about the
#	same whatever they are asked (the paper's observation about
#	IsVHDLLanguage and IsVerilogLanguage).

proc ::MtiFS::IsLanguage {name family} {
    variable Dialects
    set want [CanonicalName $name]
    set hits 0
    dict for {alias info} $Dialects {
        if {[regexp {^[[:alpha:]]+} $alias base]
                && [string compare -nocase $base $want] == 0
                && [dict get $info family] eq $family} {
            incr hits
        }
    }
    return [expr {$hits > 0}]
}

proc ::MtiFS::IsVhdlLanguage {type} {
    if {[IsLanguage $type [VhdlLanguage]]} {return 1}
    return 0
}

proc ::MtiFS::IsVerilogLanguage {type} {
    if {[IsLanguage $type [VerilogLanguage]]} {return 1}
    return 0
}

# The alias table: base names times standards times separators, in a
# few case variants.

apply {{} {
    set families {
        Verilog {
            names {verilog vlog systemverilog sv}
            years {1995 2001 2005 2009 2012 2017}
        }
        VHDL {
            names {vhdl vhd vcom}
            years {87 93 2000 2002 2008 2019}
        }
    }
    dict for {family spec} $families {
        foreach base [dict get $spec names] {
            foreach spelling [list $base [string toupper $base]] {
                dict set ::MtiFS::Dialects $spelling \
                    [dict create family $family year 0]
                foreach year [dict get $spec years] {
                    foreach sep {- _} {
                        dict set ::MtiFS::Dialects $spelling$sep$year \
                            [dict create family $family year $year]
                    }
                }
            }
        }
    }
}}

#------------------------------------------------------------------------
# The text to tokenize: a Verilog source file of ~30 KB, made from a
# template in which each doWork2 call puts its own instance number. The
# template is kept as the list of pieces between the "@N@" markers, for
# join: string map would make a Unicode string, and tok2column would pay
# for converting it back to UTF-8.
#------------------------------------------------------------------------

namespace eval ::app {
    variable TemplatePieces {}
    variable TemplateCopies 32
}

apply {{} {
    set module {
// Round-robin arbiter @N@.@K@, generated for the tok2column demo.
`timescale 1ns / 1ps
module arbiter_@N@_@K@ #(parameter WIDTH = 8, parameter DEPTH = 16) (
    input  wire             clk,
    input  wire             rst_n,
    input  wire [WIDTH-1:0] req,
    output reg  [WIDTH-1:0] grant,
    output wire             busy
);
    reg [3:0] ptr;          /* rotating priority pointer */
    integer   i;
    assign busy = |grant;
    always @(posedge clk or negedge rst_n) begin
        if (!rst_n) begin
            grant <= {WIDTH{1'b0}};
            ptr   <= 4'h0;
        end else begin
            grant <= 8'b0000_0000;
            for (i = 0; i < WIDTH; i = i + 1) begin
                if (req[(ptr + i) % WIDTH] && grant == 0) begin
                    grant[(ptr + i) % WIDTH] <= 1'b1;
                    ptr <= (ptr + i + 1) % WIDTH;
                end
            end
            if (req === 8'hFF && ptr >= 4'd7) $display("arbiter @N@.@K@: all requesting, t=%0t", $time);
        end
    end
endmodule
}
    set text ""
    for {set k 0} {$k < $::app::TemplateCopies} {incr k} {
        append text [string map [list @K@ $k] $module]
    }
    set text [string trimleft $text]
    # split on the 3-character marker: mark it with a single character
    # that the template does not contain.
    set ::app::TemplatePieces [split [string map {@N@ \x01} $text] \x01]
}}

#------------------------------------------------------------------------
# The workload (Figure 6 of the paper).
#------------------------------------------------------------------------

proc doWork {howMany} {
    set l [list]
    for {set i 0} {$i < $howMany} {incr i} {
        set l [doWork2 $i]
    }
    return $l
}

proc doWork2 {i} {
    set line [join $::app::TemplatePieces $i]
    set l [tok2column Verilog 23 $line]
    # Check the answer against the text: the token must be found at its
    # columns of its line (the template has no tabs, so columns are
    # character indices).
    set n [dict get $l line]
    if {$n > 0} {
        set text [lindex [split $line \n] $n-1]
        set found [string range $text [dict get $l start] [dict get $l end]-1]
        if {$found ne [dict get $l token]} {
            error "tok2column: expected \"[dict get $l token]\" at line $n,\
                columns [dict get $l start]-[dict get $l end], found \"$found\""
        }
    }
    return $l
}

# ::app::run --
#
#	The application's outer loop: rounds of doWork.

proc ::app::run {rounds perRound} {
    set last {}
    for {set r 0} {$r < $rounds} {incr r} {
        set last [doWork $perRound]
    }
    return $last
}

# runWorkload --
#
#	Runs the workload for about the given number of seconds (the
#	process is CPU-bound, so wall-clock and CPU time agree): rounds of
#	a few doWork2 calls until the time is up. Returns a dict: calls,
#	seconds, result (the last tok2column result).

proc runWorkload {{seconds 2.0}} {
    set perRound 10
    set t0 [clock microseconds]
    set deadline [expr {$t0 + int($seconds * 1e6)}]
    set rounds 0
    set result {}
    while {$rounds == 0 || [clock microseconds] < $deadline} {
        set result [::app::run 1 $perRound]
        incr rounds
    }
    set elapsed [expr {([clock microseconds] - $t0) / 1e6}]
    return [dict create calls [expr {$rounds * $perRound}] \
        seconds $elapsed result $result]
}

#------------------------------------------------------------------------
# Standalone: tclsh examples/tok2column.tcl
#------------------------------------------------------------------------

if {[info exists ::argv0] && [file tail $::argv0] eq [file tail [info script]]} {
    package require tclcprof
    set seconds [expr {[llength $::argv] ? [lindex $::argv 0] : 2.0}]
    puts "Profiling the tok2column workload for $seconds s of CPU\
        (the scenario of Figure 6 of \"Integrated Tcl/C Performance Profiling\")."
    puts ""
    tclcprof::start
    set r [runWorkload $seconds]
    tclcprof::stop
    tclcprof::report -min 1
    puts ""
    tclcprof::report -type flat -limit 12
    # The same profile as an interactive flame graph, in the current
    # directory.
    set flame [file join [pwd] tok2column-flame.html]
    tclcprof::export -format html -file $flame
    puts ""
    puts "Flame graph: $flame (open it in a web browser)"
}
