/*
 * cmdconfigure.c --
 *
 *	tclcprof::configure: the options later runs start from, reported
 *	and set (parsed and checked by cmdoptions.c), and, while a run goes
 *	on, those of its options that may change then (cmdrun.c's deadline
 *	for -duration).
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "cmdInt.h"
#include <string.h>

/*
 *----------------------------------------------------------------------
 *
 * CprofConfigureObjCmd --
 *
 *	tclcprof::configure
 *	tclcprof::configure -option
 *	tclcprof::configure -option value ?-option value ...?
 *
 *----------------------------------------------------------------------
 */

int
CprofConfigureObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofInterp *ciPtr = (CprofInterp *) clientData;
    CprofState *statePtr = &ciPtr->state;
    CprofOptions opts = statePtr->options, defaults = ciPtr->defaults;
    Tcl_Obj *objs[OBJ_COUNT], *defaultObjs[OBJ_COUNT];
    int index, i, given = 0;

    if (objc == 1) {
	Tcl_SetObjResult(interp, CprofOptionsDict(ciPtr));
	return TCL_OK;
    }
    if (objc == 2) {
	if (CprofOptionIndex(interp, objv[1], cprofOptionNames, &index)
		!= TCL_OK) {
	    return TCL_ERROR;
	}
	Tcl_SetObjResult(interp, CprofOptionValue(ciPtr, index));
	return TCL_OK;
    }
    if (objc % 2 != 1) {
	CprofWrongArgs(interp, 1, objv, "?-option? ?value -option value ...?");
	return TCL_ERROR;
    }
    for (i = 0; i < OBJ_COUNT; i++) {
	objs[i] = ciPtr->objs[i];
	defaultObjs[i] = ciPtr->defaultObjs[i];
    }

    /*
     * configure sets the options later runs start from and, while a
     * profile runs, changes it too where that makes sense (-label,
     * -native, -control, -include, -exclude, -slow, -onslow, -duration;
     * not what the collector was built with).
     */

    if (statePtr->running) {
	if (CprofParseOptions(interp, objc - 1, objv + 1, &opts, objs, 1, &given)
		!= TCL_OK) {
	    return TCL_ERROR;
	}
	for (i = 0; i < 4; i++) {
	    static const int fixed[] = {
		OBJ_DB, OBJ_TEST, OBJ_SUBCOMMANDS, OBJ_HISTORY
	    };
	    static const char *const fixedNames[] = {
		"-db", "-test", "-subcommands", "-history"
	    };
	    int obj = fixed[i];

	    if (strcmp(Tcl_GetString(objs[obj]),
		    Tcl_GetString(ciPtr->objs[obj])) != 0) {
		Tcl_SetObjResult(interp, Tcl_ObjPrintf(
			"cannot change %s while profiling is running",
			fixedNames[i]));
		Tcl_SetErrorCode(interp, "TCLCPROF", "STATE", "RUNNING",
			NULL);
		return TCL_ERROR;
	    }
	}
    }
    if (CprofParseOptions(interp, objc - 1, objv + 1, &defaults, defaultObjs, 0,
	    NULL) != TCL_OK) {
	return TCL_ERROR;
    }
    ciPtr->defaults = defaults;
    CprofSetObjs(ciPtr->defaultObjs, defaultObjs);
    if (statePtr->running) {
	if (!CprofModeExact(opts.mode)) {
	    opts.slowMs = 0;
	}
	statePtr->options = opts;
	CprofSetObjs(ciPtr->objs, objs);
	if (given & ((1 << OPT_INCLUDE) | (1 << OPT_EXCLUDE))) {
	    CprofExactSetFilters(statePtr, objs[OBJ_INCLUDE],
		    objs[OBJ_EXCLUDE]);
	}
	if (given & ((1 << OPT_SLOW) | (1 << OPT_ONSLOW))) {
	    Tcl_Size n;

	    CprofExactSetSlow(statePtr, opts.slowMs);
	    if (statePtr->exact.onSlowObj != NULL) {
		Tcl_DecrRefCount(statePtr->exact.onSlowObj);
		statePtr->exact.onSlowObj = NULL;
	    }
	    Tcl_ListObjLength(NULL, objs[OBJ_ONSLOW], &n);
	    if (n > 0) {
		statePtr->exact.onSlowObj = objs[OBJ_ONSLOW];
		Tcl_IncrRefCount(statePtr->exact.onSlowObj);
	    }
	}
	if (given & (1 << OPT_DURATION)) {
	    CprofRunSetDeadline(ciPtr, opts.duration, (uint64_t) statePtr->startNs
		    + (uint64_t) statePtr->pausedNs);
	}
    }
    return TCL_OK;
}
