/*
 * capture.c --
 *
 *	The capture: how the level stack learns what the interpreter runs.
 *	This file chooses and installs one (-capture wrap, the default,
 *	capturewrap.c; -capture trace, capturetrace.c; -capture check,
 *	both), with the TclOO method capture (captureoomethods.c) beside
 *	it, calibrates the anchors, and removes it all again, restoring every command, table
 *	and method it changed; and on unload, callbacks of the library still
 *	queued on NRE stacks (a pop of a frame entered before the unload,
 *	inside a suspended coroutine) are made no-ops, pointed at a callback
 *	outside the library, so that nothing calls into unmapped code.
 *
 *	It is the top of the capture layer: it calls capturewrap.c,
 *	capturetrace.c and captureoomethods.c, which call capturebase.c below them, never this file.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include <tclInt.h>
#include "captureInt.h"
#include "captureframes.h"
#include <string.h>
#include <stdlib.h>
#include <stdio.h>

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

/*
 *----------------------------------------------------------------------
 *
 * CprofFramesUsable --
 *
 *	Whether -capture frames can work in this process: its Tcl frames
 *	are placed among the C frames by the frames of Tcl's trampoline
 *	(TclNRRunCallbacks) in the native stack (captureframes.c, Anchor), whose
 *	range is found once here (calib.trampStart/End), and its drain needs
 *	a copy of memory that cannot fault (captureframes.c, SafeCopy).
 *	TCLCPROF_TEST_NO_TRAMPOLINE in the environment makes the first
 *	fail, for the tests of the fallback.
 *
 * Results:
 *	1, or 0 with why wrap is used instead in note.
 *
 *----------------------------------------------------------------------
 */

int
CprofFramesUsable(
    CprofState *statePtr,
    char *note,
    size_t noteLen)
{
    char why[96];

    why[0] = '\0';
    if (getenv("TCLCPROF_TEST_NO_TRAMPOLINE") != NULL) {
	snprintf(why, sizeof(why), "%s", "TCLCPROF_TEST_NO_TRAMPOLINE set");
    } else if (statePtr->calib.trampEnd == 0
	    && !CprofTrampolineRange(&statePtr->calib.trampStart,
		    &statePtr->calib.trampEnd, why, sizeof(why))) {
	statePtr->calib.trampStart = statePtr->calib.trampEnd = 0;
    } else {
	why[0] = '\0';
    }
    if (why[0] != '\0') {
	snprintf(note, noteLen, "frames need Tcl's trampoline, not found"
		" (%.90s): wrap is used", why);
	return 0;
    }
    if (CprofFramesCopyMethod(NULL) == CPROF_COPY_NONE) {
	snprintf(note, noteLen, "%s", "frames need a fault-safe copy of"
		" memory, and neither process_vm_readv nor a pipe gives one"
		" here: wrap is used");
	return 0;
    }
    return 1;
}

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

    /*
     * First the handlers pending already (it may ask Tk about its
     * bindings: nothing of that is to be captured).
     */

    if (kind == CPROF_CAPTURE_FRAMES) {
	if (CprofUsesFrames(&statePtr->options) && statePtr->hostPtr == NULL
		&& !CprofFramesUsable(statePtr, statePtr->captureNote,
			sizeof(statePtr->captureNote))) {
	    /*
	     * The note says why wrap is used.
	     */
	} else if (CprofUsesFrames(&statePtr->options)
		&& statePtr->hostPtr == NULL) {
	    /*
	     * Tcl's own frames, read at each sample (captureframes.c): nothing runs
	     * per command. The records of event handlers (captureevents.c) take
	     * the commands that schedule them, and name the handlers'
	     * frames at the drain.
	     */

	    capPtr->kind = kind;
	    CprofEventsInstall(capPtr);
	    return TCL_OK;
	}
	if (statePtr->captureNote[0] == '\0'
		&& (statePtr->options.captureAsked
		|| CprofUsesFrames(&statePtr->options))) {
	    snprintf(statePtr->captureNote, sizeof(statePtr->captureNote),
		    "%s", CprofUsesFrames(&statePtr->options)

		    /*
		     * A child interpreter sampled with its parent's thread:
		     * the parent's sampler reads the parent's frames and
		     * copies the child's level stack.
		     */

		    ? "a child interpreter sampled with its parent's thread"
		    " keeps its frames by wrapping"
		    : "frames are read only for samples (modes sample and"
		    " memory): exact timing, coverage and stack use wrap");
	}
	kind = CPROF_CAPTURE_WRAP;
    }
    CprofEventsInstall(capPtr);
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
    return CprofIsPopCallback(procPtr) || CprofWrapIsOurs(procPtr)
	    || CprofEventsIsOurs(procPtr);
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
	if (capPtr->tracedPtr != NULL
		&& capPtr->tracedPtr != &statePtr->levels) {
	    /*
	     * Under check, the trace's: the pops of the frames of a
	     * coroutine seeded at start (captureseed.c) are on its stack.
	     */

	    CprofLevelsCoroutines(capPtr->tracedPtr, DisarmCoroutine,
		    CprofThunkIdentity());
	}
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
    CprofEventsRemove(capPtr);
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
 *	(the running environment and the ones that resumed it, and every
 *	suspended coroutine's, profiled now or in an earlier run) no-ops.
 *	Without a no-op callback (no thunks on this system) nothing is
 *	changed and the unload is refused if any is queued.
 *
 * Results:
 *	TCL_OK, or TCL_ERROR with a message and {TCLCPROF STATE UNLOAD}
 *	when some could not be (no no-op callback exists on this system).
 *
 *----------------------------------------------------------------------
 */

/*
 * Every suspended coroutine of the interpreter, found by its command (in
 * every namespace, and among the hidden commands): whatever the level
 * stack remembers of it (nothing once profiling stopped), its stack may
 * hold callbacks of the library, queued by frames pushed inside it.
 */

static void
DisarmCoroutineCmd(
    Command *cmdPtr,
    Tcl_ObjCmdProc *coroNreProc,
    void *identity)
{
    if (cmdPtr->nreProc == coroNreProc && cmdPtr->objClientData != NULL) {
	CoroutineData *corPtr = (CoroutineData *) cmdPtr->objClientData;

	if (corPtr->eePtr != NULL && COR_IS_SUSPENDED(corPtr)) {
	    DisarmStack(&corPtr->eePtr->callbackPtr, identity, 1);
	}
    }
}

static void
DisarmCoroutinesIn(
    Namespace *nsPtr,
    Tcl_ObjCmdProc *coroNreProc,
    void *identity)
{
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    for (hPtr = Tcl_FirstHashEntry(&nsPtr->cmdTable, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	DisarmCoroutineCmd(Tcl_GetHashValue(hPtr), coroNreProc, identity);
    }
#ifndef BREAK_NAMESPACE_COMPAT
    for (hPtr = Tcl_FirstHashEntry(&nsPtr->childTable, &search);
	    hPtr != NULL; hPtr = Tcl_NextHashEntry(&search)) {
	DisarmCoroutinesIn(Tcl_GetHashValue(hPtr), coroNreProc, identity);
    }
#else
    if (nsPtr->childTablePtr != NULL) {
	for (hPtr = Tcl_FirstHashEntry(nsPtr->childTablePtr, &search);
		hPtr != NULL; hPtr = Tcl_NextHashEntry(&search)) {
	    DisarmCoroutinesIn(Tcl_GetHashValue(hPtr), coroNreProc, identity);
	}
    }
#endif
}

int
CprofCaptureUnload(
    Tcl_Interp *interp)
{
    Interp *iPtr = (Interp *) interp;
    ExecEnv *envPtr = iPtr->execEnvPtr;
    void *identity = CprofThunkIdentity();
    CprofState *statePtr = (CprofState *)
	    Tcl_GetAssocData(interp, CPROF_ASSOC, NULL);
    int left = 0;

    while (envPtr != NULL) {
	left += DisarmStack(&envPtr->callbackPtr, identity, 0);
	envPtr = envPtr->corPtr ? envPtr->corPtr->callerEEPtr : NULL;
    }
    if (left == 0 && statePtr != NULL && statePtr->naming.internals != NULL
	    && statePtr->naming.internals->coroNreProc != NULL) {
	Tcl_ObjCmdProc *coroNreProc = statePtr->naming.internals->coroNreProc;

	DisarmCoroutinesIn((Namespace *) Tcl_GetGlobalNamespace(interp),
		coroNreProc, identity);
	if (iPtr->hiddenCmdTablePtr != NULL) {
	    Tcl_HashSearch search;
	    Tcl_HashEntry *hPtr;

	    for (hPtr = Tcl_FirstHashEntry(iPtr->hiddenCmdTablePtr, &search);
		    hPtr != NULL; hPtr = Tcl_NextHashEntry(&search)) {
		DisarmCoroutineCmd(Tcl_GetHashValue(hPtr), coroNreProc,
			identity);
	    }
	}
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
    if (statePtr->framesPtr != NULL || statePtr->framesUsed) {
	/*
	 * -capture frames: what the handler read, what it left out as torn,
	 * how the drain named it.
	 */

	CprofFramesCounters counters;

	if (statePtr->framesPtr != NULL) {
	    CprofFramesCounts(statePtr->framesPtr, &counters);
	} else {
	    memcpy(&counters, statePtr->framesCounts, sizeof(counters));
	}
	PUT(dictObj, "frames", CprofFramesStatus(&counters));
    }
    CprofThunkCounts(&inUse, &total);
    PUT(dictObj, "thunks", Tcl_NewWideIntObj((Tcl_WideInt) inUse));
    PUT(dictObj, "thunks_made", Tcl_NewWideIntObj((Tcl_WideInt) total));
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
	PUT(checkObj, "frames_checks",
		Tcl_NewWideIntObj((Tcl_WideInt) statePtr->framesChecks));
	PUT(checkObj, "frames_disagreements", Tcl_NewWideIntObj(
		(Tcl_WideInt) statePtr->framesDisagreements));
	PUT(checkObj, "frames_first",
		Tcl_NewStringObj(statePtr->framesFirst, -1));
	PUT(dictObj, "check", checkObj);
    }
#undef PUT
    return dictObj;
}
