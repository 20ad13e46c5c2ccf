/*
 * capture.c --
 *
 *	The capture: how the level stack learns what the interpreter runs.
 *	This file chooses and installs one (-capture wrap, the default,
 *	wrap.c; -capture trace, trace.c; -capture check, both), with the
 *	TclOO method capture (oomethods.c) beside it, calibrates the
 *	anchors, and removes it all again, restoring every command, table
 *	and method it changed. It also holds what the captures share:
 *
 *	- the NRE callback that pops a frame by its serial number when the
 *	  command (or method) whose frame it is completes;
 *	- coverage counting (coverage mode keeps no stack);
 *	- -capture check: the wrapper's stack and the trace's shadow stack
 *	  compared after every push of the one and leave of the other, and
 *	  at every sample, disagreements counted and the first one kept;
 *	- unload: callbacks of the library still queued on NRE stacks (a
 *	  pop of a frame entered before the unload, inside a suspended
 *	  coroutine) are made no-ops, pointed at a callback outside the
 *	  library, so that nothing calls into unmapped code.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include <tclInt.h>
#include "captureInt.h"
#include <string.h>
#include <stdio.h>

static const char *const captureNames[] = {
    "wrap", "trace", "check", NULL
};

/*
 * The last interpreter asked about in this thread, and its state: the
 * method capture's hook learns the state from the interpreter alone.
 */

static __thread __attribute__((tls_model("initial-exec"))) struct {
    Tcl_Interp *interp;
    CprofState *statePtr;
} lastState;

const char *
CprofCaptureName(
    int kind)
{
    return (kind >= 0 && kind <= CPROF_CAPTURE_CHECK) ? captureNames[kind]
	    : "?";
}

const char *const *
CprofCaptureNames(void)
{
    return captureNames;
}

CprofState *
CprofStateOfInterp(
    Tcl_Interp *interp)
{
    CprofState *statePtr;

    if (lastState.interp == interp) {
	return lastState.statePtr;
    }
    statePtr = (CprofState *) Tcl_GetAssocData(interp, CPROF_ASSOC, NULL);
    lastState.interp = interp;
    lastState.statePtr = statePtr;
    return statePtr;
}

/*
 * The state is going away: forget it.
 */

void
CprofCaptureForgetState(
    CprofState *statePtr)
{
    if (lastState.statePtr == statePtr) {
	lastState.interp = NULL;
	lastState.statePtr = NULL;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSchedulePop, PopCallback --
 *
 *	Queue, on the current NRE stack, the pop of the frame with 'serial':
 *	it runs when what was queued after it (the command's own NRE work)
 *	has completed.
 *
 *----------------------------------------------------------------------
 */

static int
PopCallback(
    ClientData data[],
    Tcl_Interp *interp,
    int result)
{
    CprofState *statePtr = (CprofState *) data[0];
    CprofLevels *lvPtr = (CprofLevels *) data[1];
    uint64_t serial = (uint64_t) (uintptr_t) data[2];

    if (statePtr->capturePtr == NULL) {
	return result;
    }
    CprofLevelsLeaveTop(lvPtr, serial);
    return result;
}

void
CprofSchedulePop(
    CprofState *statePtr,
    CprofLevels *lvPtr,
    uint64_t serial)
{
    Tcl_NRAddCallback(statePtr->interp, PopCallback, statePtr, lvPtr,
	    (ClientData) (uintptr_t) serial, NULL);
}

int
CprofIsPopCallback(
    Tcl_NRPostProc *procPtr)
{
    return procPtr == PopCallback;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofCoverageOf --
 *
 *	Coverage mode: count a command entered (methods by their name, "Class
 *	method"), with its call site under -lines; no stack is kept.
 *
 *----------------------------------------------------------------------
 */

int
CprofCoverageOf(
    CprofState *statePtr,
    Tcl_Command token,
    const CprofCmdName *namePtr,
    int objc,
    Tcl_Obj *const objv[])
{
    int nameId, siteKind = CPROF_SITE_NONE, siteOffset = 0, fresh;
    void *sitePtr = NULL;
    const void *method;

    statePtr->levels.counters.enters++;
    if (namePtr->flags & CPROF_NAME_OWN) {
	return 0;
    }
    nameId = (namePtr->flags & CPROF_NAME_OBJECT)
	    ? CprofNameMethodCall(&statePtr->naming, token, objc, objv, &fresh,
		    &method)
	    : namePtr->nameId;
    if (statePtr->exact.lines) {
	siteKind = CprofSiteKey(statePtr->interp, &sitePtr, &siteOffset);
    }
    CprofExactCoverage(statePtr, nameId, namePtr->kind, siteKind, sitePtr,
	    siteOffset);
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofCheckStacks --
 *
 *	-capture check: compare the wrapper's stack with the trace's at a
 *	place where they must agree. Frames are compared by command, level
 *	and environment; method frames (the method capture feeds only the
 *	wrapper's stack) and frames above the current level (a coroutine
 *	that has just yielded, seen by one capture before the other) are
 *	left out, and nothing is compared while a Tcl-level execution
 *	trace handler runs (Tcl runs it with interpreter traces off).
 *
 *----------------------------------------------------------------------
 */

static Tcl_Obj *
StackDescription(
    CprofLevels *lvPtr)
{
    Tcl_Obj *listObj = Tcl_NewListObj(0, NULL);
    int i;

    for (i = 0; i < lvPtr->stack.depth; i++) {
	CprofFrame *framePtr = &lvPtr->stack.frames[i];
	const char *name = CprofNameString(framePtr->nameId);

	Tcl_ListObjAppendElement(NULL, listObj, Tcl_ObjPrintf("%s@%d%s",
		name ? name : "?", framePtr->level,
		(framePtr->flags & CPROF_FRAME_METHOD) ? "m" : ""));
    }
    return listObj;
}

static int
NextCompared(
    CprofLevels *lvPtr,
    int i,
    int numLevels)
{
    while (i < lvPtr->stack.depth) {
	CprofFrame *framePtr = &lvPtr->stack.frames[i];

	if (!(framePtr->flags & CPROF_FRAME_METHOD)
		&& framePtr->level <= numLevels) {
	    break;
	}
	i++;
    }
    return i;
}

/*
 * The samples compared since the capture was installed (drained so far).
 */

static void
CprofCheckSamples(
    CprofCapture *capPtr)
{
    CprofState *statePtr = capPtr->statePtr;
    uint64_t dis;

    if (capPtr->kind != CPROF_CAPTURE_CHECK) {
	return;
    }
    capPtr->checks[CPROF_CHECK_SAMPLE] = statePtr->sampleChecks
	    - capPtr->sampleChecks0;
    dis = statePtr->sampleDisagreements - capPtr->sampleDisagreements0;
    if (dis > capPtr->disagreements[CPROF_CHECK_SAMPLE]
	    && capPtr->firstDisagreement == NULL) {
	capPtr->firstDisagreement = Tcl_NewStringObj("sample", -1);
	Tcl_IncrRefCount(capPtr->firstDisagreement);
    }
    capPtr->disagreements[CPROF_CHECK_SAMPLE] = dis;
}

void
CprofCheckStacks(
    CprofCapture *capPtr,
    int place)
{
    CprofLevels *aPtr = &capPtr->statePtr->levels, *bPtr = capPtr->tracedPtr;
    int numLevels = ((Interp *) capPtr->statePtr->interp)->numLevels;
    int i = 0, j = 0, same = 1;

    if (bPtr == NULL || bPtr == aPtr) {
	return;
    }
    if (((Interp *) capPtr->statePtr->interp)->flags
	    & INTERP_TRACE_IN_PROGRESS) {
	/*
	 * A Tcl-level execution trace handler runs: Tcl runs it with
	 * interpreter traces off, the wrapper sees its commands.
	 */

	return;
    }
    capPtr->checks[place]++;
    while (1) {
	i = NextCompared(aPtr, i, numLevels);
	j = NextCompared(bPtr, j, numLevels);
	if (i >= aPtr->stack.depth || j >= bPtr->stack.depth) {
	    same = (i >= aPtr->stack.depth && j >= bPtr->stack.depth);
	    break;
	}
	if (aPtr->stack.frames[i].token != bPtr->stack.frames[j].token
		|| aPtr->stack.frames[i].level != bPtr->stack.frames[j].level
		|| aPtr->stack.frames[i].envPtr
			!= bPtr->stack.frames[j].envPtr) {
	    same = 0;
	    break;
	}
	i++;
	j++;
    }
    if (!same) {
	capPtr->disagreements[place]++;
	if (capPtr->firstDisagreement == NULL) {
	    Tcl_Obj *objs[3];

	    objs[0] = Tcl_NewStringObj(place == CPROF_CHECK_PUSH ? "push"
		    : place == CPROF_CHECK_POP ? "pop" : "sample", -1);
	    objs[1] = StackDescription(aPtr);
	    objs[2] = StackDescription(bPtr);
	    capPtr->firstDisagreement = Tcl_NewListObj(3, objs);
	    Tcl_IncrRefCount(capPtr->firstDisagreement);
	}
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CprofCaptureInstall, CprofCaptureRemove --
 *
 *	Install the capture the run's options ask for (falling back to the
 *	trace when wrapping cannot work here, which status tells) and
 *	calibrate its anchors; remove it, restoring everything it changed,
 *	and forget the stack (its frames cannot be kept true without it).
 *
 * Results:
 *	CprofCaptureInstall: TCL_OK.
 *
 *----------------------------------------------------------------------
 */

int
CprofCaptureInstall(
    CprofState *statePtr)
{
    CprofCapture *capPtr;
    int kind = statePtr->options.capture;

    if (statePtr->capturePtr != NULL) {
	return TCL_OK;
    }
    capPtr = (CprofCapture *) ckalloc(sizeof(CprofCapture));
    memset(capPtr, 0, sizeof(CprofCapture));
    capPtr->statePtr = statePtr;
    capPtr->coverage = (statePtr->options.mode == CPROF_MODE_COVERAGE);
    statePtr->capturePtr = capPtr;
    statePtr->captureGeneration++;
    statePtr->captureNote[0] = '\0';
    __atomic_store_n(&statePtr->levels.stack.depth, 0, __ATOMIC_RELEASE);

    if (kind != CPROF_CAPTURE_TRACE) {
	Tcl_InterpState saved = Tcl_SaveInterpState(statePtr->interp, TCL_OK);

	if (CprofWrapInstall(capPtr) != TCL_OK) {
	    snprintf(statePtr->captureNote, sizeof(statePtr->captureNote),
		    "%s", Tcl_GetString(Tcl_GetObjResult(statePtr->interp)));
	    kind = CPROF_CAPTURE_TRACE;
	}
	Tcl_RestoreInterpState(statePtr->interp, saved);
    }
    capPtr->kind = kind;
    if (kind == CPROF_CAPTURE_CHECK) {
	capPtr->tracedPtr = (CprofLevels *) ckalloc(sizeof(CprofLevels));
	CprofLevelsInit(capPtr->tracedPtr, statePtr->interp,
		&statePtr->naming);
	CprofTraceInstall(capPtr);
	if (statePtr->samplerPtr != NULL) {
	    statePtr->samplerPtr->shadowPtr = &capPtr->tracedPtr->stack;
	}
	capPtr->sampleChecks0 = statePtr->sampleChecks;
	capPtr->sampleDisagreements0 = statePtr->sampleDisagreements;
    } else if (kind == CPROF_CAPTURE_TRACE) {
	capPtr->tracedPtr = &statePtr->levels;
	CprofTraceInstall(capPtr);
    }
    if (!capPtr->coverage) {
	CprofMethodsInstall(capPtr);
    }
    if (statePtr->calib.state != CPROF_CALIB_OK
	    || statePtr->calibKind != (kind == CPROF_CAPTURE_TRACE)) {
	statePtr->calibKind = (kind == CPROF_CAPTURE_TRACE);
	if (kind == CPROF_CAPTURE_TRACE) {
	    CprofTraceCalibrate(capPtr);
	} else {
	    CprofWrapCalibrate(capPtr);
	    statePtr->callbackOffset = capPtr->callbackOffset;
	}
    }
    capPtr->callbackOffset = statePtr->callbackOffset;
    capPtr->anchored = (statePtr->calib.state == CPROF_CALIB_OK);
    capPtr->wrapOffset = statePtr->calib.offset;
    capPtr->plain = !capPtr->coverage && kind == CPROF_CAPTURE_WRAP;
    return TCL_OK;
}

/*
 * Make this library's NRE callbacks on one NRE stack no-ops (or, on a
 * suspended coroutine's stack, unlink them when no no-op exists).
 * Returns the number left that could not be disarmed.
 */

static int
IsOurCallback(
    Tcl_NRPostProc *procPtr)
{
    return procPtr == PopCallback || CprofWrapIsOurs(procPtr);
}

static int
DisarmStack(
    NRE_callback **headPtr,
    void *identity,
    int canUnlink)
{
    NRE_callback **linkPtr = headPtr;
    int left = 0;

    while (*linkPtr != NULL) {
	NRE_callback *cbPtr = *linkPtr;

	if (IsOurCallback(cbPtr->procPtr)) {
	    if (identity != NULL) {
		cbPtr->procPtr = (Tcl_NRPostProc *) identity;
	    } else if (canUnlink) {
		*linkPtr = cbPtr->nextPtr;
		continue;
	    } else {
		left++;
	    }
	}
	linkPtr = &cbPtr->nextPtr;
    }
    return left;
}

static void
DisarmCoroutine(
    void *corKey,
    int saved,
    void *data)
{
    CoroutineData *corPtr = (CoroutineData *) corKey;

    if (corPtr->eePtr != NULL && COR_IS_SUSPENDED(corPtr)) {
	DisarmStack(&corPtr->eePtr->callbackPtr, data, 1);
    }
}

void
CprofCaptureRemove(
    CprofState *statePtr)
{
    CprofCapture *capPtr = statePtr->capturePtr;

    if (capPtr == NULL) {
	CprofLevelsClear(&statePtr->levels);
	return;
    }

    /*
     * Suspended coroutines will not be resumed under this capture: the
     * callbacks queued on their stacks go (the registry of coroutines is
     * about to be cleared).
     */

    if (!statePtr->deleting) {
	CprofLevelsCoroutines(&statePtr->levels, DisarmCoroutine,
		CprofThunkIdentity());
    }
    if (statePtr->samplerPtr != NULL) {
	if (capPtr->kind == CPROF_CAPTURE_CHECK) {
	    /*
	     * The samples compared so far are counted once drained.
	     */

	    CprofDrain(statePtr);
	}
	statePtr->samplerPtr->shadowPtr = NULL;
    }
    CprofCheckSamples(capPtr);
    CprofMethodsRemove(capPtr);
    CprofTraceRemove(capPtr);
    CprofLevelsClear(&statePtr->levels);
    CprofWrapRemove(capPtr);
    statePtr->capturePtr = NULL;
    statePtr->captureGeneration++;
    if (capPtr->tracedPtr != NULL && capPtr->tracedPtr != &statePtr->levels) {
	capPtr->tracedPtr->deleting = statePtr->deleting;
	CprofLevelsFree(capPtr->tracedPtr);
	ckfree(capPtr->tracedPtr);
    }
    statePtr->lastCapture = capPtr->kind;
    {
	int i;

	for (i = 0; i < CPROF_CHECK_PLACES; i++) {
	    statePtr->allChecks += capPtr->checks[i];
	    statePtr->allDisagreements += capPtr->disagreements[i];
	}
    }
    if (statePtr->firstDisagreement == NULL
	    && capPtr->firstDisagreement != NULL) {
	statePtr->firstDisagreement = capPtr->firstDisagreement;
	Tcl_IncrRefCount(statePtr->firstDisagreement);
    }
    memcpy(statePtr->lastChecks, capPtr->checks, sizeof(capPtr->checks));
    memcpy(statePtr->lastDisagreements, capPtr->disagreements,
	    sizeof(capPtr->disagreements));
    if (statePtr->lastFirstDisagreement != NULL) {
	Tcl_DecrRefCount(statePtr->lastFirstDisagreement);
    }
    statePtr->lastFirstDisagreement = capPtr->firstDisagreement;
    ckfree(capPtr);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofCaptureUnload --
 *
 *	The package is about to be unloaded from 'interp': make the
 *	library's callbacks still queued on the interpreter's NRE stacks
 *	(the running environment and the ones that resumed it) no-ops.
 *	Without a no-op callback (no thunks on this system) nothing is
 *	changed and the unload is refused if any is queued.
 *
 * Results:
 *	TCL_OK, or TCL_ERROR with a message and {TCLCPROF STATE UNLOAD}
 *	when some could not be (no no-op callback exists on this system).
 *
 *----------------------------------------------------------------------
 */

int
CprofCaptureUnload(
    Tcl_Interp *interp)
{
    Interp *iPtr = (Interp *) interp;
    ExecEnv *envPtr = iPtr->execEnvPtr;
    void *identity = CprofThunkIdentity();
    int left = 0;

    while (envPtr != NULL) {
	left += DisarmStack(&envPtr->callbackPtr, identity, 0);
	envPtr = envPtr->corPtr ? envPtr->corPtr->callerEEPtr : NULL;
    }
    if (left > 0) {
	Tcl_SetObjResult(interp, Tcl_ObjPrintf(
		"cannot unload tclcprof while %d of its callbacks are pending"
		" (profiled commands still running)", left));
	Tcl_SetErrorCode(interp, "TCLCPROF", "STATE", "UNLOAD", NULL);
	return TCL_ERROR;
    }
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofCaptureStatus --
 *
 *	status's "capture" dict: the capture asked for and in use (and why
 *	not the one asked for), what it wraps and hooks, and -capture
 *	check's comparisons.
 *
 *----------------------------------------------------------------------
 */

Tcl_Obj *
CprofCaptureStatus(
    CprofState *statePtr)
{
    CprofCapture *capPtr = statePtr->capturePtr;
    Tcl_Obj *dictObj = Tcl_NewDictObj(), *checkObj;
    int kind = capPtr ? capPtr->kind : statePtr->lastCapture;
    const uint64_t *checks = capPtr ? capPtr->checks : statePtr->lastChecks;
    const uint64_t *dis = capPtr ? capPtr->disagreements
	    : statePtr->lastDisagreements;
    Tcl_Obj *firstObj;
    size_t inUse, total;

    if (capPtr != NULL) {
	CprofCheckSamples(capPtr);
    }
    firstObj = capPtr ? capPtr->firstDisagreement
	    : statePtr->lastFirstDisagreement;

#define PUT(d, k, v) Tcl_DictObjPut(NULL, (d), Tcl_NewStringObj((k), -1), (v))
    PUT(dictObj, "requested", Tcl_NewStringObj(
	    CprofCaptureName(statePtr->options.capture), -1));
    PUT(dictObj, "in_use", Tcl_NewStringObj(CprofCaptureName(kind), -1));
    PUT(dictObj, "note", Tcl_NewStringObj(statePtr->captureNote, -1));
    if (capPtr != NULL) {
	CprofWrapStatus(capPtr, dictObj);
	CprofMethodsStatus(capPtr, dictObj);
    }
    CprofThunkCounts(&inUse, &total);
    PUT(dictObj, "thunks", Tcl_NewWideIntObj((Tcl_WideInt) inUse));
    if (kind == CPROF_CAPTURE_CHECK) {
	checkObj = Tcl_NewDictObj();
	PUT(checkObj, "push_checks",
		Tcl_NewWideIntObj((Tcl_WideInt) checks[CPROF_CHECK_PUSH]));
	PUT(checkObj, "pop_checks",
		Tcl_NewWideIntObj((Tcl_WideInt) checks[CPROF_CHECK_POP]));
	PUT(checkObj, "sample_checks",
		Tcl_NewWideIntObj((Tcl_WideInt) checks[CPROF_CHECK_SAMPLE]));
	PUT(checkObj, "push_disagreements",
		Tcl_NewWideIntObj((Tcl_WideInt) dis[CPROF_CHECK_PUSH]));
	PUT(checkObj, "pop_disagreements",
		Tcl_NewWideIntObj((Tcl_WideInt) dis[CPROF_CHECK_POP]));
	PUT(checkObj, "sample_disagreements",
		Tcl_NewWideIntObj((Tcl_WideInt) dis[CPROF_CHECK_SAMPLE]));
	PUT(checkObj, "disagreements", Tcl_NewWideIntObj((Tcl_WideInt)
		(dis[CPROF_CHECK_PUSH] + dis[CPROF_CHECK_POP]
		+ dis[CPROF_CHECK_SAMPLE])));
	PUT(checkObj, "first", firstObj ? firstObj : Tcl_NewObj());
	PUT(dictObj, "check", checkObj);
    }
#undef PUT
    return dictObj;
}
