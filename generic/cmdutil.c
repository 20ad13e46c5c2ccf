/*
 * cmdutil.c --
 *
 *	Command layer, its lowest part: what every other file of the
 *	package uses and that uses nothing of the package. The names of the
 *	options of start and configure and of their values (their order is
 *	that of the enums in cmdInt.h and cmdscopeInt.h), and the errors every
 *	command raises: a lowercase message with an error code that starts
 *	with TCLCPROF. Kept apart from cmdoptions.c (parsing) and tclcprof.c
 *	(loading the package), which call the layers below them, so that
 *	those layers can report errors without calling back up
 *	(tools/objcycles counts such circles between object files). And
 *	the table of the layer's calls up (CprofCmdHooks, cmdInt.h), which
 *	tclcprof.c registers.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "cmdscopeInt.h"

/*
 * Options of start and configure. The index order matches enum
 * CprofOption (cmdInt.h).
 */

const char *const cprofOptionNames[] = {
    "-capture", "-clock", "-commit", "-compensate", "-control", "-db",
    "-duration", "-eventlimit", "-events", "-every", "-exclude", "-flush",
    "-history", "-include", "-instances", "-keep", "-keep-hours", "-label",
    "-lines", "-memrate", "-mode", "-native", "-onslow", "-rate", "-scope",
    "-seed", "-slow", "-subcommands", "-test", NULL
};

const char *const cprofModeNames[] = {
    "sample", "stack", "exact", "both", "coverage", "memory", NULL
};
const char *const cprofClockNames[] = {
    "cpu", "wall", "auto", NULL
};
const char *const cprofNativeNames[] = {
    "user", "all", "none", NULL
};
const char *const cprofCommitNames[] = {
    "staged", "direct", NULL
};
const char *const cprofScopeNames[] = {
    "interp", "tree", "process", NULL
};

/*
 * The states of a session's threads (cmdscopeInt.h, enum ThreadState).
 */

const char *const cprofThreadStateNames[] = {
    "running", "stopped", "exited", "late"
};

/*
 * Errors: a lowercase message and a TCLCPROF error code.
 */

int
CprofStateError(
    Tcl_Interp *interp,
    const char *message,
    const char *what)
{
    Tcl_SetObjResult(interp, Tcl_NewStringObj(message, -1));
    Tcl_SetErrorCode(interp, "TCLCPROF", "STATE", what, NULL);
    return TCL_ERROR;
}

/*
 * The index of an option in a table, or a Tcl error with the code
 * TCLCPROF OPTION name.
 */

int
CprofOptionIndex(
    Tcl_Interp *interp,
    Tcl_Obj *nameObj,
    const char *const *table,
    int *indexPtr)
{
    if (Tcl_GetIndexFromObj(interp, nameObj, table, "option", 0,
	    indexPtr) != TCL_OK) {
	Tcl_SetErrorCode(interp, "TCLCPROF", "OPTION", Tcl_GetString(nameObj),
		NULL);
	return TCL_ERROR;
    }
    return TCL_OK;
}

/*
 * No profile to give or write: TCLCPROF NODATA.
 */

int
CprofNoData(
    Tcl_Interp *interp)
{
    Tcl_SetObjResult(interp, Tcl_NewStringObj(
	    "no profile data: start profiling with tclcprof::start", -1));
    Tcl_SetErrorCode(interp, "TCLCPROF", "NODATA", NULL);
    return TCL_ERROR;
}

/*
 * A bad value of an option: the value, the option and what was expected.
 */

int
CprofBadValue(
    Tcl_Interp *interp,
    const char *option,
    Tcl_Obj *valueObj,
    const char *what)
{
    Tcl_SetObjResult(interp, Tcl_ObjPrintf("bad value \"%s\" for %s: %s",
	    Tcl_GetString(valueObj), option, what));
    Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", option,
	    Tcl_GetString(valueObj), NULL);
    return TCL_ERROR;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofWrongArgs --
 *
 *	Tcl_WrongNumArgs with the error code of the package's other errors,
 *	TCLCPROF WRONGARGS (rather than Tcl's TCL WRONGARGS): every error
 *	of a tclcprof command has a code that starts with TCLCPROF.
 *
 *----------------------------------------------------------------------
 */

void
CprofWrongArgs(
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[],
    const char *message)
{
    Tcl_WrongNumArgs(interp, objc, objv, message);
    Tcl_SetErrorCode(interp, "TCLCPROF", "WRONGARGS", NULL);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofCmdSetHooks, CprofCmdHooksGet --
 *
 *	The command layer's calls up (cmdInt.h): set by tclcprof.c at each
 *	load (the same table every time), read by the files below it.
 *
 *----------------------------------------------------------------------
 */

static const CprofCmdHooks *cmdHooks;

void
CprofCmdSetHooks(
    const CprofCmdHooks *hooksPtr)
{
    __atomic_store_n(&cmdHooks, hooksPtr, __ATOMIC_RELEASE);
}

const CprofCmdHooks *
CprofCmdHooksGet(void)
{
    return __atomic_load_n(&cmdHooks, __ATOMIC_ACQUIRE);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofDictGet, CprofDictGetWide --
 *
 *	A key's value in a dict, NULL when it has none; as a wide integer,
 *	0 when it has none (or the dict is NULL).
 *
 *----------------------------------------------------------------------
 */

Tcl_Obj *
CprofDictGet(
    Tcl_Obj *dictObj,
    const char *key)
{
    Tcl_Obj *keyObj = Tcl_NewStringObj(key, -1), *valueObj = NULL;

    Tcl_IncrRefCount(keyObj);
    Tcl_DictObjGet(NULL, dictObj, keyObj, &valueObj);
    Tcl_DecrRefCount(keyObj);
    return valueObj;
}

Tcl_WideInt
CprofDictGetWide(
    Tcl_Obj *dictObj,
    const char *key)
{
    Tcl_Obj *valueObj = (dictObj != NULL) ? CprofDictGet(dictObj, key) : NULL;
    Tcl_WideInt w = 0;

    if (valueObj != NULL) {
	Tcl_GetWideIntFromObj(NULL, valueObj, &w);
    }
    return w;
}
