/*
 * cbtest.c --
 *
 *	A small C extension used only by the test suite and the benchmarks:
 *	C commands that call back into Tcl through each public evaluation
 *	entry point, and an empty object trace to measure what Tcl's trace
 *	machinery costs by itself.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include <tcl.h>

/*
 * cbtest::evalobjv cmd ?arg ...?	-- Tcl_EvalObjv
 */

static int
EvalObjvCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    if (objc < 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "cmd ?arg ...?");
	return TCL_ERROR;
    }
    return Tcl_EvalObjv(interp, objc - 1, objv + 1, 0);
}

/*
 * cbtest::eval script			-- Tcl_Eval of a string
 */

static int
EvalCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    if (objc != 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "script");
	return TCL_ERROR;
    }
    return Tcl_Eval(interp, Tcl_GetString(objv[1]));
}

/*
 * cbtest::evalobjex count script	-- Tcl_EvalObjEx in a loop; returns
 *					   the list of results
 */

static int
EvalObjExCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    int count, i, code;
    Tcl_Obj *listObj;

    if (objc != 3) {
	Tcl_WrongNumArgs(interp, 1, objv, "count script");
	return TCL_ERROR;
    }
    if (Tcl_GetIntFromObj(interp, objv[1], &count) != TCL_OK) {
	return TCL_ERROR;
    }
    listObj = Tcl_NewListObj(0, NULL);
    Tcl_IncrRefCount(listObj);
    for (i = 0; i < count; i++) {
	code = Tcl_EvalObjEx(interp, objv[2], 0);
	if (code != TCL_OK) {
	    Tcl_DecrRefCount(listObj);
	    return code;
	}
	Tcl_ListObjAppendElement(NULL, listObj, Tcl_GetObjResult(interp));
    }
    Tcl_SetObjResult(interp, listObj);
    Tcl_DecrRefCount(listObj);
    return TCL_OK;
}

/*
 * cbtest::nest depth script		-- recurse 'depth' C frames, then
 *					   Tcl_EvalObjEx the script
 */

static int
Nest(
    Tcl_Interp *interp,
    int depth,
    Tcl_Obj *scriptObj)
{
    volatile char pad[64];

    pad[0] = (char) depth;
    if (depth <= 0) {
	return Tcl_EvalObjEx(interp, scriptObj, 0) + pad[0] * 0;
    }
    return Nest(interp, depth - 1, scriptObj) + pad[0] * 0;
}

static int
NestCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    int depth;

    if (objc != 3) {
	Tcl_WrongNumArgs(interp, 1, objv, "depth script");
	return TCL_ERROR;
    }
    if (Tcl_GetIntFromObj(interp, objv[1], &depth) != TCL_OK) {
	return TCL_ERROR;
    }
    return Nest(interp, depth, objv[2]);
}

/*
 * cbtest::emptytrace on|off		-- an object trace that does nothing,
 *					   with the flags tclcprof uses
 */

static int
EmptyTraceProc(
    ClientData clientData,
    Tcl_Interp *interp,
    int level,
    const char *command,
    Tcl_Command token,
    int objc,
    Tcl_Obj *const objv[])
{
    return TCL_OK;
}

static int
EmptyTraceCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    static Tcl_Trace trace = NULL;
    int on;

    if (objc != 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "boolean");
	return TCL_ERROR;
    }
    if (Tcl_GetBooleanFromObj(interp, objv[1], &on) != TCL_OK) {
	return TCL_ERROR;
    }
    if (on && trace == NULL) {
	trace = Tcl_CreateObjTrace(interp, 0, 1 | 2
		| TCL_ALLOW_INLINE_COMPILATION, EmptyTraceProc, NULL, NULL);
    } else if (!on && trace != NULL) {
	Tcl_DeleteTrace(interp, trace);
	trace = NULL;
    }
    return TCL_OK;
}

DLLEXPORT int
Cbtest_Init(
    Tcl_Interp *interp)
{
    if (Tcl_InitStubs(interp, "8.6", 0) == NULL) {
	return TCL_ERROR;
    }
    Tcl_CreateObjCommand(interp, "cbtest::evalobjv", EvalObjvCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "cbtest::eval", EvalCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "cbtest::evalobjex", EvalObjExCmd, NULL,
	    NULL);
    Tcl_CreateObjCommand(interp, "cbtest::nest", NestCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "cbtest::emptytrace", EmptyTraceCmd, NULL,
	    NULL);
    return Tcl_PkgProvideEx(interp, "cbtest", "1.0", NULL);
}
