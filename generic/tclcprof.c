/*
 * tclcprof.c --
 *
 *	Package initialisation and the Tcl command layer of tclcprof: the
 *	::tclcprof ensemble, option parsing, per-interpreter state and
 *	errors. The collector itself lives in levelstack.c.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "tclcprofInt.h"
#include <tclOO.h>
#include <string.h>
#include <time.h>

/*
 * Options of start and configure. The index order matches the enum.
 */

static const char *const optionNames[] = {
    "-label", "-mode", NULL
};
enum CprofOption {
    OPT_LABEL, OPT_MODE
};

static const char *const modeNames[] = {
    "stack", NULL
};

/*
 * Per-interpreter state beyond what the collector needs.
 */

typedef struct CprofInterp {
    CprofState state;		/* Must be first. */
    Tcl_Obj *labelObj;		/* -label, never NULL. */
} CprofInterp;

static int		ConfigureObjCmd(ClientData clientData,
			    Tcl_Interp *interp, int objc,
			    Tcl_Obj *const objv[]);
static int		DebugObjCmd(ClientData clientData, Tcl_Interp *interp,
			    int objc, Tcl_Obj *const objv[]);
static void		DeleteState(ClientData clientData, Tcl_Interp *interp);
static int		PauseObjCmd(ClientData clientData, Tcl_Interp *interp,
			    int objc, Tcl_Obj *const objv[]);
static int		ResetObjCmd(ClientData clientData, Tcl_Interp *interp,
			    int objc, Tcl_Obj *const objv[]);
static int		ResumeObjCmd(ClientData clientData, Tcl_Interp *interp,
			    int objc, Tcl_Obj *const objv[]);
static int		StackObjCmd(ClientData clientData, Tcl_Interp *interp,
			    int objc, Tcl_Obj *const objv[]);
static int		StartObjCmd(ClientData clientData, Tcl_Interp *interp,
			    int objc, Tcl_Obj *const objv[]);
static int		StatusObjCmd(ClientData clientData, Tcl_Interp *interp,
			    int objc, Tcl_Obj *const objv[]);
static int		StopObjCmd(ClientData clientData, Tcl_Interp *interp,
			    int objc, Tcl_Obj *const objv[]);

/*
 * The commands of the ::tclcprof ensemble.
 */

static const struct {
    const char *name;
    Tcl_ObjCmdProc *proc;
} commandTable[] = {
    {"configure",	ConfigureObjCmd},
    {"debug",		DebugObjCmd},
    {"pause",		PauseObjCmd},
    {"reset",		ResetObjCmd},
    {"resume",		ResumeObjCmd},
    {"stack",		StackObjCmd},
    {"start",		StartObjCmd},
    {"status",		StatusObjCmd},
    {"stop",		StopObjCmd},
    {NULL, NULL}
};

#ifdef __cplusplus
extern "C" {
#endif
DLLEXPORT int		Tclcprof_Init(Tcl_Interp *interp);
DLLEXPORT int		Tclcprof_SafeInit(Tcl_Interp *interp);
DLLEXPORT int		Tclcprof_Unload(Tcl_Interp *interp, int flags);
DLLEXPORT int		Tclcprof_SafeUnload(Tcl_Interp *interp, int flags);
#ifdef __cplusplus
}
#endif

/*
 *----------------------------------------------------------------------
 *
 * CprofMonoNs --
 *
 *	Monotonic time in nanoseconds.
 *
 *----------------------------------------------------------------------
 */

Tcl_WideInt
CprofMonoNs(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (Tcl_WideInt) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * Errors: a lowercase message and a TCLCPROF error code.
 */

static int
StateError(
    Tcl_Interp *interp,
    const char *message,
    const char *what)
{
    Tcl_SetObjResult(interp, Tcl_NewStringObj(message, -1));
    Tcl_SetErrorCode(interp, "TCLCPROF", "STATE", what, NULL);
    return TCL_ERROR;
}

/*
 *----------------------------------------------------------------------
 *
 * ParseOptions --
 *
 *	Parse "-option value ..." into *optsPtr and *labelPtrPtr. Options
 *	that cannot change while profiling runs are refused when 'running'.
 *
 * Results:
 *	TCL_OK, or TCL_ERROR with a TCLCPROF error code; *optsPtr is then
 *	unchanged in meaning (the caller passes a copy).
 *
 *----------------------------------------------------------------------
 */

static int
ParseOptions(
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[],
    CprofOptions *optsPtr,
    Tcl_Obj **labelPtrPtr,
    int running)
{
    int i, index, value;

    for (i = 0; i < objc; i += 2) {
	if (Tcl_GetIndexFromObj(interp, objv[i], optionNames, "option", 0,
		&index) != TCL_OK) {
	    Tcl_SetErrorCode(interp, "TCLCPROF", "OPTION",
		    Tcl_GetString(objv[i]), NULL);
	    return TCL_ERROR;
	}
	if (i + 1 >= objc) {
	    Tcl_SetObjResult(interp, Tcl_ObjPrintf(
		    "missing value for option \"%s\"", optionNames[index]));
	    Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", optionNames[index],
		    NULL);
	    return TCL_ERROR;
	}
	switch ((enum CprofOption) index) {
	case OPT_LABEL:
	    *labelPtrPtr = objv[i+1];
	    break;
	case OPT_MODE:
	    if (Tcl_GetIndexFromObj(interp, objv[i+1], modeNames, "mode", 0,
		    &value) != TCL_OK) {
		Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", "-mode",
			Tcl_GetString(objv[i+1]), NULL);
		return TCL_ERROR;
	    }
	    if (running && value != optsPtr->mode) {
		Tcl_SetObjResult(interp, Tcl_NewStringObj(
			"cannot change -mode while profiling is running", -1));
		Tcl_SetErrorCode(interp, "TCLCPROF", "STATE", "RUNNING",
			NULL);
		return TCL_ERROR;
	    }
	    optsPtr->mode = value;
	    break;
	}
    }
    return TCL_OK;
}

static Tcl_Obj *
OptionValue(
    CprofInterp *ciPtr,
    int index)
{
    switch ((enum CprofOption) index) {
    case OPT_LABEL:
	return ciPtr->labelObj;
    case OPT_MODE:
	return Tcl_NewStringObj(modeNames[ciPtr->state.options.mode], -1);
    }
    return Tcl_NewObj();
}

static Tcl_Obj *
OptionsDict(
    CprofInterp *ciPtr)
{
    Tcl_Obj *dictObj = Tcl_NewDictObj();
    int i;

    for (i = 0; optionNames[i] != NULL; i++) {
	Tcl_DictObjPut(NULL, dictObj, Tcl_NewStringObj(optionNames[i], -1),
		OptionValue(ciPtr, i));
    }
    return dictObj;
}

static void
SetLabel(
    CprofInterp *ciPtr,
    Tcl_Obj *labelObj)
{
    Tcl_IncrRefCount(labelObj);
    Tcl_DecrRefCount(ciPtr->labelObj);
    ciPtr->labelObj = labelObj;
}

/*
 *----------------------------------------------------------------------
 *
 * StartObjCmd --
 *
 *	tclcprof::start ?-option value ...?
 *
 *	Install the trace, calibrate the native anchor and start counting.
 *
 *----------------------------------------------------------------------
 */

static int
StartObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofInterp *ciPtr = (CprofInterp *) clientData;
    CprofState *statePtr = &ciPtr->state;
    CprofOptions opts = statePtr->options;
    Tcl_Obj *labelObj = ciPtr->labelObj;

    if (objc % 2 != 1) {
	Tcl_WrongNumArgs(interp, 1, objv, "?-option value ...?");
	return TCL_ERROR;
    }
    if (statePtr->running) {
	return StateError(interp, "profiling is already running", "RUNNING");
    }
    if (ParseOptions(interp, objc - 1, objv + 1, &opts, &labelObj, 0)
	    != TCL_OK) {
	return TCL_ERROR;
    }
    statePtr->options = opts;
    SetLabel(ciPtr, labelObj);
    memset(&statePtr->counters, 0, sizeof(statePtr->counters));
    statePtr->stack.maxDepth = 0;
    CprofStackInstall(statePtr);
    CprofStackCalibrate(statePtr);
    statePtr->running = 1;
    statePtr->paused = 0;
    statePtr->pausedNs = 0;
    statePtr->startNs = CprofMonoNs();
    statePtr->stopNs = 0;
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * StopObjCmd, PauseObjCmd, ResumeObjCmd, ResetObjCmd --
 *
 *	tclcprof::stop
 *	tclcprof::pause
 *	tclcprof::resume
 *	tclcprof::reset
 *
 *	Pause removes the trace, so that a paused profile costs nothing per
 *	command; commands entered before resume and still running after it
 *	are not on the stack.
 *
 *----------------------------------------------------------------------
 */

static int
StopObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofState *statePtr = &((CprofInterp *) clientData)->state;

    if (objc != 1) {
	Tcl_WrongNumArgs(interp, 1, objv, NULL);
	return TCL_ERROR;
    }
    if (!statePtr->running) {
	return StateError(interp, "profiling is not running", "STOPPED");
    }
    CprofStackRemove(statePtr);
    statePtr->stopNs = CprofMonoNs();
    if (statePtr->paused) {
	statePtr->pausedNs += statePtr->stopNs - statePtr->pauseStartNs;
    }
    statePtr->running = 0;
    statePtr->paused = 0;
    return TCL_OK;
}

static int
PauseObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofState *statePtr = &((CprofInterp *) clientData)->state;

    if (objc != 1) {
	Tcl_WrongNumArgs(interp, 1, objv, NULL);
	return TCL_ERROR;
    }
    if (!statePtr->running) {
	return StateError(interp, "profiling is not running", "STOPPED");
    }
    if (statePtr->paused) {
	return StateError(interp, "profiling is already paused", "PAUSED");
    }
    CprofStackRemove(statePtr);
    statePtr->paused = 1;
    statePtr->pauseStartNs = CprofMonoNs();
    return TCL_OK;
}

static int
ResumeObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofState *statePtr = &((CprofInterp *) clientData)->state;

    if (objc != 1) {
	Tcl_WrongNumArgs(interp, 1, objv, NULL);
	return TCL_ERROR;
    }
    if (!statePtr->running) {
	return StateError(interp, "profiling is not running", "STOPPED");
    }
    if (!statePtr->paused) {
	return StateError(interp, "profiling is not paused", "NOTPAUSED");
    }
    statePtr->pausedNs += CprofMonoNs() - statePtr->pauseStartNs;
    statePtr->paused = 0;
    CprofStackInstall(statePtr);
    return TCL_OK;
}

static int
ResetObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofState *statePtr = &((CprofInterp *) clientData)->state;

    if (objc != 1) {
	Tcl_WrongNumArgs(interp, 1, objv, NULL);
	return TCL_ERROR;
    }

    /*
     * Counters and collected data go; the live stack stays, since the
     * commands on it are still running.
     */

    memset(&statePtr->counters, 0, sizeof(statePtr->counters));
    statePtr->stack.maxDepth = statePtr->stack.depth;
    statePtr->pausedNs = 0;
    statePtr->startNs = CprofMonoNs();
    if (statePtr->paused) {
	statePtr->pauseStartNs = statePtr->startNs;
    }
    if (!statePtr->running) {
	statePtr->stopNs = statePtr->startNs;
    }
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * StatusObjCmd --
 *
 *	tclcprof::status
 *
 * Results:
 *	A dict: running, paused, mode, label, options, depth, elapsed,
 *	counters, calibration.
 *
 *----------------------------------------------------------------------
 */

#define PUT(d, k, v) \
    Tcl_DictObjPut(NULL, (d), Tcl_NewStringObj((k), -1), (v))

static int
StatusObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofInterp *ciPtr = (CprofInterp *) clientData;
    CprofState *statePtr = &ciPtr->state;
    CprofCounters *cPtr = &statePtr->counters;
    CprofCalibration *calPtr = &statePtr->calib;
    Tcl_Obj *resultObj, *countersObj, *calObj;
    Tcl_WideInt now, elapsed;

    if (objc != 1) {
	Tcl_WrongNumArgs(interp, 1, objv, NULL);
	return TCL_ERROR;
    }
    now = statePtr->running ? CprofMonoNs() : statePtr->stopNs;
    elapsed = now - statePtr->startNs - statePtr->pausedNs;
    if (statePtr->paused) {
	elapsed -= now - statePtr->pauseStartNs;
    }
    if (statePtr->startNs == 0 || elapsed < 0) {
	elapsed = 0;
    }

    resultObj = Tcl_NewDictObj();
    PUT(resultObj, "running", Tcl_NewBooleanObj(statePtr->running));
    PUT(resultObj, "paused", Tcl_NewBooleanObj(statePtr->paused));
    PUT(resultObj, "mode",
	    Tcl_NewStringObj(modeNames[statePtr->options.mode], -1));
    PUT(resultObj, "label", ciPtr->labelObj);
    PUT(resultObj, "options", OptionsDict(ciPtr));
    PUT(resultObj, "depth", Tcl_NewIntObj(statePtr->running
	    && !statePtr->paused ? CprofStackLiveDepth(statePtr) : 0));
    PUT(resultObj, "elapsed", Tcl_NewDoubleObj(elapsed / 1e9));

    countersObj = Tcl_NewDictObj();
    PUT(countersObj, "enters", Tcl_NewWideIntObj(cPtr->enters));
    PUT(countersObj, "leaves", Tcl_NewWideIntObj(cPtr->leaves));
    PUT(countersObj, "missing_leaves",
	    Tcl_NewWideIntObj(cPtr->missingLeaves));
    PUT(countersObj, "stray_leaves", Tcl_NewWideIntObj(cPtr->strayLeaves));
    PUT(countersObj, "ensembles_folded", Tcl_NewWideIntObj(cPtr->folded));
    PUT(countersObj, "coroutine_saves", Tcl_NewWideIntObj(cPtr->coroSaves));
    PUT(countersObj, "coroutine_restores",
	    Tcl_NewWideIntObj(cPtr->coroRestores));
    PUT(countersObj, "next_frames", Tcl_NewWideIntObj(cPtr->nextFrames));
    PUT(countersObj, "max_depth", Tcl_NewIntObj(statePtr->stack.maxDepth));
    PUT(resultObj, "counters", countersObj);

    calObj = Tcl_NewDictObj();
    PUT(calObj, "state", Tcl_NewStringObj(
	    calPtr->state == CPROF_CALIB_OK ? "ok"
	    : calPtr->state == CPROF_CALIB_FAILED ? "failed" : "none", -1));
    PUT(calObj, "offset", Tcl_NewWideIntObj((Tcl_WideInt) calPtr->offset));
    PUT(calObj, "message", Tcl_NewStringObj(calPtr->message, -1));
    PUT(resultObj, "calibration", calObj);

    Tcl_SetObjResult(interp, resultObj);
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * ConfigureObjCmd --
 *
 *	tclcprof::configure
 *	tclcprof::configure -option
 *	tclcprof::configure -option value ?-option value ...?
 *
 *----------------------------------------------------------------------
 */

static int
ConfigureObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofInterp *ciPtr = (CprofInterp *) clientData;
    CprofState *statePtr = &ciPtr->state;
    CprofOptions opts = statePtr->options;
    Tcl_Obj *labelObj = ciPtr->labelObj;
    int index;

    if (objc == 1) {
	Tcl_SetObjResult(interp, OptionsDict(ciPtr));
	return TCL_OK;
    }
    if (objc == 2) {
	if (Tcl_GetIndexFromObj(interp, objv[1], optionNames, "option", 0,
		&index) != TCL_OK) {
	    Tcl_SetErrorCode(interp, "TCLCPROF", "OPTION",
		    Tcl_GetString(objv[1]), NULL);
	    return TCL_ERROR;
	}
	Tcl_SetObjResult(interp, OptionValue(ciPtr, index));
	return TCL_OK;
    }
    if (ParseOptions(interp, objc - 1, objv + 1, &opts, &labelObj,
	    statePtr->running) != TCL_OK) {
	return TCL_ERROR;
    }
    statePtr->options = opts;
    SetLabel(ciPtr, labelObj);
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * StackObjCmd --
 *
 *	tclcprof::stack
 *
 * Results:
 *	The tracked Tcl frames, outermost first, each a dict with name,
 *	level, kind and anchor. The frame of this command itself is left
 *	out. Empty when profiling is stopped or paused.
 *
 *----------------------------------------------------------------------
 */

static int
StackObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofState *statePtr = &((CprofInterp *) clientData)->state;
    Tcl_Obj *listObj;
    int i, depth;

    if (objc != 1) {
	Tcl_WrongNumArgs(interp, 1, objv, NULL);
	return TCL_ERROR;
    }
    listObj = Tcl_NewListObj(0, NULL);
    depth = (statePtr->running && !statePtr->paused)
	    ? CprofStackLiveDepth(statePtr) : 0;
    if (depth > 0 && statePtr->stack.frames[depth-1].token
	    == statePtr->stackCmd) {
	depth--;
    }
    for (i = 0; i < depth; i++) {
	CprofFrame *framePtr = &statePtr->stack.frames[i];
	Tcl_Obj *dictObj = Tcl_NewDictObj();
	const char *name = CprofNameString(framePtr->nameId);

	PUT(dictObj, "name", Tcl_NewStringObj(name ? name : "?", -1));
	PUT(dictObj, "level", Tcl_NewIntObj(framePtr->level));
	PUT(dictObj, "kind", Tcl_NewStringObj(CprofKindName(framePtr->kind),
		-1));
	PUT(dictObj, "anchor", Tcl_NewWideIntObj((Tcl_WideInt)
		framePtr->anchor));
	Tcl_ListObjAppendElement(NULL, listObj, dictObj);
    }
    Tcl_SetObjResult(interp, listObj);
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * DebugObjCmd --
 *
 *	tclcprof::debug trampolines
 *	tclcprof::debug names
 *
 *	Introspection for tests and bug reports: the stack pointers of the
 *	trampoline frames on the current native stack (innermost first, as
 *	found with libunwind), and the number of interned names.
 *
 *----------------------------------------------------------------------
 */

static int
DebugObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    static const char *const subNames[] = {"names", "trampolines", NULL};
    enum { SUB_NAMES, SUB_TRAMPOLINES };
    CprofState *statePtr = &((CprofInterp *) clientData)->state;
    int index;

    if (objc != 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "subcommand");
	return TCL_ERROR;
    }
    if (Tcl_GetIndexFromObj(interp, objv[1], subNames, "subcommand", 0,
	    &index) != TCL_OK) {
	Tcl_SetErrorCode(interp, "TCLCPROF", "SUBCOMMAND",
		Tcl_GetString(objv[1]), NULL);
	return TCL_ERROR;
    }
    switch (index) {
    case SUB_NAMES:
	Tcl_SetObjResult(interp, Tcl_NewIntObj(CprofNameCount()));
	break;
    case SUB_TRAMPOLINES: {
	uintptr_t sps[256], start, end;
	char msg[160];
	int n, i;
	Tcl_Obj *listObj = Tcl_NewListObj(0, NULL);

	if (statePtr->calib.trampEnd != 0) {
	    start = statePtr->calib.trampStart;
	    end = statePtr->calib.trampEnd;
	} else if (!CprofTrampolineRange(&start, &end, msg, sizeof(msg))) {
	    Tcl_SetObjResult(interp, Tcl_NewStringObj(msg, -1));
	    Tcl_SetErrorCode(interp, "TCLCPROF", "NATIVE", NULL);
	    return TCL_ERROR;
	}
	n = CprofNativeTrampolines(start, end, sps, 256);
	for (i = 0; i < n; i++) {
	    Tcl_ListObjAppendElement(NULL, listObj,
		    Tcl_NewWideIntObj((Tcl_WideInt) sps[i]));
	}
	Tcl_SetObjResult(interp, listObj);
	break;
    }
    }
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * DeleteState --
 *
 *	AssocData delete proc: the interpreter is going away (or the package
 *	is unloaded). Stop profiling and free everything.
 *
 *----------------------------------------------------------------------
 */

static void
DeleteState(
    ClientData clientData,
    Tcl_Interp *interp)
{
    CprofInterp *ciPtr = (CprofInterp *) clientData;
    CprofState *statePtr = &ciPtr->state;

    statePtr->deleting = 1;
    CprofStackRemove(statePtr);
    statePtr->running = 0;
    CprofStackFreeState(statePtr);
    Tcl_DecrRefCount(ciPtr->labelObj);
    ckfree(ciPtr);
}

/*
 *----------------------------------------------------------------------
 *
 * Tclcprof_Init --
 *
 *	Load the package into an interpreter: stubs first, then the
 *	::tclcprof namespace, its commands and ensemble, and provide last.
 *
 *----------------------------------------------------------------------
 */

int
Tclcprof_Init(
    Tcl_Interp *interp)
{
    Tcl_Namespace *nsPtr;
    CprofInterp *ciPtr;
    CprofState *statePtr;
    Tcl_Command ensemble;
    int i;

    if (Tcl_InitStubs(interp, "8.6", 0) == NULL) {
	return TCL_ERROR;
    }
    if (Tcl_OOInitStubs(interp) == NULL) {
	return TCL_ERROR;
    }
    if (CprofCheckTclVersion(interp) != TCL_OK) {
	return TCL_ERROR;
    }
    if (Tcl_GetAssocData(interp, CPROF_ASSOC, NULL) != NULL) {
	return Tcl_PkgProvideEx(interp, "tclcprof", PACKAGE_VERSION, NULL);
    }

    nsPtr = Tcl_FindNamespace(interp, "::tclcprof", NULL, 0);
    if (nsPtr == NULL) {
	nsPtr = Tcl_CreateNamespace(interp, "::tclcprof", NULL, NULL);
	if (nsPtr == NULL) {
	    return TCL_ERROR;
	}
    }

    ciPtr = (CprofInterp *) ckalloc(sizeof(CprofInterp));
    memset(ciPtr, 0, sizeof(CprofInterp));
    statePtr = &ciPtr->state;
    statePtr->interp = interp;
    statePtr->options.mode = CPROF_MODE_STACK;
    ciPtr->labelObj = Tcl_NewObj();
    Tcl_IncrRefCount(ciPtr->labelObj);
    CprofStackInitState(statePtr);
    Tcl_SetAssocData(interp, CPROF_ASSOC, DeleteState, ciPtr);

    for (i = 0; commandTable[i].name != NULL; i++) {
	Tcl_DString ds;
	Tcl_Command token;

	Tcl_DStringInit(&ds);
	Tcl_DStringAppend(&ds, "::tclcprof::", -1);
	Tcl_DStringAppend(&ds, commandTable[i].name, -1);
	token = Tcl_CreateObjCommand(interp, Tcl_DStringValue(&ds),
		commandTable[i].proc, ciPtr, NULL);
	if (commandTable[i].proc == StackObjCmd) {
	    statePtr->stackCmd = token;
	}
	Tcl_DStringFree(&ds);
	if (Tcl_Export(interp, nsPtr, commandTable[i].name, 0) != TCL_OK) {
	    return TCL_ERROR;
	}
    }
    ensemble = Tcl_FindEnsemble(interp, Tcl_NewStringObj("::tclcprof", -1),
	    0);
    if (ensemble == NULL) {
	Tcl_ResetResult(interp);
	ensemble = Tcl_CreateEnsemble(interp, "::tclcprof", nsPtr, 0);
	if (ensemble == NULL) {
	    return TCL_ERROR;
	}
    }
    Tcl_SetVar2Ex(interp, "::tclcprof::version", NULL,
	    Tcl_NewStringObj(PACKAGE_VERSION, -1), 0);
    return Tcl_PkgProvideEx(interp, "tclcprof", PACKAGE_VERSION, NULL);
}

/*
 *----------------------------------------------------------------------
 *
 * Tclcprof_SafeInit --
 *
 *	A safe interpreter may not install traces on its master's behalf or
 *	take signals: refuse.
 *
 *----------------------------------------------------------------------
 */

int
Tclcprof_SafeInit(
    Tcl_Interp *interp)
{
    Tcl_SetObjResult(interp, Tcl_NewStringObj(
	    "tclcprof cannot be loaded into a safe interpreter", -1));
    Tcl_SetErrorCode(interp, "TCLCPROF", "UNSAFE", NULL);
    return TCL_ERROR;
}

/*
 *----------------------------------------------------------------------
 *
 * Tclcprof_Unload --
 *
 *	unload: stop profiling in this interpreter and remove the package's
 *	commands and state. Nothing process-wide is left running (the level
 *	stack owns no timers or signals).
 *
 *----------------------------------------------------------------------
 */

int
Tclcprof_Unload(
    Tcl_Interp *interp,
    int flags)
{
    Tcl_Namespace *nsPtr;

    Tcl_DeleteAssocData(interp, CPROF_ASSOC);
    nsPtr = Tcl_FindNamespace(interp, "::tclcprof", NULL, 0);
    if (nsPtr != NULL) {
	Tcl_DeleteNamespace(nsPtr);
    }
    return TCL_OK;
}

int
Tclcprof_SafeUnload(
    Tcl_Interp *interp,
    int flags)
{
    return Tclcprof_Unload(interp, flags);
}
