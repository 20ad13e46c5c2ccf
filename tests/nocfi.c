/*
 * nocfi.c --
 *
 *	Part of the tests' helper extension (package cbtest), compiled
 *	without unwind tables (-fno-asynchronous-unwind-tables
 *	-fno-unwind-tables), as embedded builds often are: a native stack
 *	that reaches this code ends there, because the unwinder cannot get
 *	past a function it has no unwind information for.
 *
 *	cbtest::nocfieval script -- evaluate script from C code that has no
 *				   unwind tables (nocfi_run)
 *
 *	and, on x86-64 and aarch64, cbtest_mapsym_entry (cbtest.c's
 *	cbtest::mapsym spin): code that only a mapping symbol names.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include <tcl.h>

int	CbtestNocfiCmd(ClientData clientData, Tcl_Interp *interp,
	    int objc, Tcl_Obj *const objv[]);

/*
 * Not inlined, and not a tail call, so that the frame stays on the stack
 * while the script runs.
 */

__attribute__((noinline, noclone)) int
nocfi_run(
    Tcl_Interp *interp,
    Tcl_Obj *scriptObj)
{
    volatile int code = Tcl_EvalObjEx(interp, scriptObj, 0);

    return code;
}

int
CbtestNocfiCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    volatile int code;

    if (objc != 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "script");
	return TCL_ERROR;
    }
    code = nocfi_run(interp, objv[1]);
    return code;
}

/*
 * cbtest_mapsym_entry --
 *	A function of one jump, to code that spins forever and that no
 *	function symbol covers, only a mapping symbol of its own, "$x.spin":
 *	a symbolizer that took the nearest symbol below a program counter
 *	there would call it "$x.spin" (as the ARM and AArch64 assemblers
 *	mark every start of code with "$x", and PLT stubs have no other
 *	symbol). No unwind information either.
 */

#if defined(__x86_64__) || defined(__aarch64__)
#   if defined(__x86_64__)
#	define MAPSYM_JUMP	"jmp"
#	define MAPSYM_TYPE	"@function"
#   else
#	define MAPSYM_JUMP	"b"
#	define MAPSYM_TYPE	"%function"
#   endif
__asm__(
    "	.text\n"
    "	.globl	cbtest_mapsym_entry\n"
    "	.hidden	cbtest_mapsym_entry\n"
    "	.type	cbtest_mapsym_entry, " MAPSYM_TYPE "\n"
    "cbtest_mapsym_entry:\n"
    "	" MAPSYM_JUMP "	\"$x.spin\"\n"
    "	.size	cbtest_mapsym_entry, .-cbtest_mapsym_entry\n"
    "\"$x.spin\":\n"
    "	" MAPSYM_JUMP "	\"$x.spin\"\n");
#endif
