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
