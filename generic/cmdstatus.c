/*
 * cmdstatus.c --
 *
 *	What the package tells about itself and its profile: status, data
 *	(the profile as a dict with its meta), save and runs (a profile
 *	written to and listed from a file), and stack (the level stack
 *	now).
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "cmdInt.h"
#include "captureframes.h"
#include <string.h>

/*
 *----------------------------------------------------------------------
 *
 * CprofStatusObjCmd --
 *
 *	tclcprof::status
 *
 * Results:
 *	A dict: running, paused, mode, label, options, depth, elapsed,
 *	counters, calibration, sampling.
 *
 *----------------------------------------------------------------------
 */



/*
 * The depth status gives: the level stack's, or the number of Tcl's frames
 * when the run reads them (-capture frames) and has no level stack.
 */

static int
FramesDepth(
    CprofState *statePtr)
{
    CprofTclRef raw[CPROF_TCL_MAX], named[CPROF_TCL_MAX];
    uint32_t flags = 0;
    int n;

    if (statePtr->framesPtr == NULL
	    || CprofChecksFrames(&statePtr->options)) {
	return CprofLevelsLiveDepth(&statePtr->levels);
    }
    n = CprofFramesRead(statePtr->framesPtr, raw, CPROF_TCL_MAX, &flags);
    return CprofFramesResolve(statePtr->framesPtr, raw, n, NULL, named);
}

int
CprofStatusObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofInterp *ciPtr = (CprofInterp *) clientData;
    CprofState *statePtr = &ciPtr->state;
    CprofCounters *cPtr = &statePtr->levels.counters;
    CprofCalibration *calPtr = &statePtr->calib;
    Tcl_Obj *resultObj, *countersObj, *calObj;
    Tcl_WideInt now, elapsed;

    if (objc != 1) {
	CprofWrongArgs(interp, 1, objv, NULL);
	return TCL_ERROR;
    }
    if (CprofAside(ciPtr) != NULL) {
	/*
	 * The program's latest profile is kept aside while the collector
	 * serves a request (cmdserve.c): its status then, but whether
	 * the collector runs (a start is refused meanwhile) now.
	 */

	resultObj = Tcl_DuplicateObj(CprofServeAsideGet(ciPtr, "status"));
	PUT(resultObj, "running", Tcl_NewBooleanObj(statePtr->running));
	PUT(resultObj, "paused", Tcl_NewBooleanObj(statePtr->paused));
	Tcl_SetObjResult(interp, resultObj);
	return TCL_OK;
    }
    if (statePtr->samplerPtr != NULL || statePtr->memPtr != NULL) {
	CprofDrain(statePtr);
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
    PUT(resultObj, "mode", statePtr->options.memory
	    && statePtr->options.mode != CPROF_MODE_MEMORY
	    ? Tcl_ObjPrintf("%s memory",
		cprofModeNames[statePtr->options.mode])
	    : Tcl_NewStringObj(cprofModeNames[statePtr->options.mode], -1));
    PUT(resultObj, "label", ciPtr->objs[OBJ_LABEL]);
    PUT(resultObj, "unsaved", Tcl_NewBooleanObj(ciPtr->unsaved));
    PUT(resultObj, "options", CprofOptionsDict(ciPtr));
    PUT(resultObj, "depth", Tcl_NewIntObj(statePtr->running
	    && !statePtr->paused ? FramesDepth(statePtr) : 0));
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
    PUT(countersObj, "method_frames", Tcl_NewWideIntObj(cPtr->methodFrames));
    PUT(countersObj, "max_depth",
	    Tcl_NewIntObj(statePtr->levels.stack.maxDepth));
    PUT(resultObj, "counters", countersObj);
    PUT(resultObj, "capture", CprofCaptureStatus(statePtr));

    calObj = Tcl_NewDictObj();
    PUT(calObj, "state", Tcl_NewStringObj(
	    calPtr->state == CPROF_CALIB_OK ? "ok"
	    : calPtr->state == CPROF_CALIB_FAILED ? "failed" : "none", -1));
    PUT(calObj, "offset", Tcl_NewWideIntObj((Tcl_WideInt) calPtr->offset));
    PUT(calObj, "message", Tcl_NewStringObj(calPtr->message, -1));
    PUT(resultObj, "calibration", calObj);
    PUT(resultObj, "sampling", CprofSamplingDict(statePtr));
    PUT(resultObj, "exact", CprofExactDict(statePtr));
    PUT(resultObj, "memory", CprofMemoryDict(statePtr));
    PUT(resultObj, "labels", CprofLabelsStatus());
    PUT(resultObj, "db", ciPtr->storePtr != NULL
	    ? CprofStoreStatus(ciPtr->storePtr) : Tcl_NewDictObj());

    Tcl_SetObjResult(interp, resultObj);
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofDataObjCmd --
 *
 *	tclcprof::data ?-db files? ?-run ids?
 *
 * Results:
 *	The profile as a value: {meta {...} tree NODE}, where NODE is
 *	{name kind self total children ...}. See the man page. From memory,
 *	or with -db, a run of a file (the latest one without -run), or
 *	several runs merged (store.c, CprofStoreRead).
 *
 *----------------------------------------------------------------------
 */


/*
 * tclcprof::data -view or -count asked of a profile that is not of -mode
 * memory.
 */

static int
MemoryOnly(
    Tcl_Interp *interp,
    Tcl_Obj *viewObj)
{
    const char *option = viewObj != NULL ? "-view" : "-count";

    Tcl_SetObjResult(interp, Tcl_ObjPrintf(
	    "%s applies to profiles of -mode memory", option));
    Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", option, NULL);
    return TCL_ERROR;
}

int
CprofDataObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    static const char *const dataOptions[] = {
	"-db", "-run", "-view", "-count", NULL
    };
    CprofInterp *ciPtr = (CprofInterp *) clientData;
    CprofState *statePtr = &ciPtr->state;
    int mode = statePtr->options.mode, i, index;
    Tcl_Obj *resultObj, *dbObj = NULL, *runObj = NULL, *viewObj = NULL;
    Tcl_WideInt runId;
    int view = 0, count = 0;

    if (objc % 2 != 1) {
	CprofWrongArgs(interp, 1, objv,
		"?-db files? ?-run ids? ?-view alloc|live|peak? ?-count bool?");
	return TCL_ERROR;
    }
    for (i = 1; i < objc; i += 2) {
	if (CprofOptionIndex(interp, objv[i], dataOptions, &index)
		!= TCL_OK) {
	    return TCL_ERROR;
	}
	if (index == 0) {
	    dbObj = objv[i+1];
	} else if (index == 2) {
	    if (CprofMemoryView(interp, objv[i+1], &view) != TCL_OK) {
		return TCL_ERROR;
	    }
	    viewObj = objv[i+1];
	} else if (index == 3) {
	    if (Tcl_GetBooleanFromObj(NULL, objv[i+1], &count) != TCL_OK) {
		return CprofBadValue(interp, "-count", objv[i+1],
			"expected a boolean");
	    }
	} else if (CprofStoreCheckRuns(interp, objv[i+1], &runId) != TCL_OK) {
	    return TCL_ERROR;
	} else {
	    runObj = objv[i+1];
	}
    }

    /*
     * From a file, or several runs merged (store.c).
     */

    if (dbObj != NULL) {
	resultObj = CprofStoreRead(interp, dbObj, runObj);
	if (resultObj == NULL) {
	    return TCL_ERROR;
	}
	Tcl_SetObjResult(interp, resultObj);
	if (viewObj != NULL || count) {
	    /*
	     * A memory profile read back: the view is chosen in Tcl, as for
	     * reports (reportlib::MemoryView).
	     */

	    Tcl_Obj *cmd[4];
	    int code;

	    cmd[0] = Tcl_NewStringObj("::tclcprof::reportlib::MemoryView", -1);
	    cmd[1] = resultObj;
	    cmd[2] = viewObj ? viewObj : Tcl_NewStringObj("alloc", -1);
	    cmd[3] = Tcl_NewBooleanObj(count);
	    for (i = 0; i < 4; i++) {
		Tcl_IncrRefCount(cmd[i]);
	    }
	    code = Tcl_EvalObjv(interp, 4, cmd, 0);
	    for (i = 0; i < 4; i++) {
		Tcl_DecrRefCount(cmd[i]);
	    }
	    return code;
	}
	return TCL_OK;
    }
    if (runObj != NULL) {
	Tcl_SetObjResult(interp, Tcl_NewStringObj(
		"-run needs -db: runs are read from a file", -1));
	Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", "-run", NULL);
	return TCL_ERROR;
    }

    /*
     * The program's latest profile kept aside while the collector serves
     * a request: as it was (each view of a memory profile was kept).
     */

    if (CprofAside(ciPtr) != NULL) {
	Tcl_Obj *keptObj = CprofServeAsideGet(ciPtr, "data");

	if (keptObj == NULL) {
	    return CprofNoData(interp);
	}
	if (viewObj != NULL || count) {
	    Tcl_Obj *viewsObj = CprofServeAsideGet(ciPtr, "views");
	    Tcl_Obj *keyObj = Tcl_ObjPrintf("%s %d", viewObj != NULL
		    ? Tcl_GetString(viewObj) : "alloc", count);

	    Tcl_IncrRefCount(keyObj);
	    keptObj = NULL;
	    if (viewsObj != NULL && Tcl_DictObjGet(NULL, viewsObj, keyObj,
		    &keptObj) != TCL_OK) {
		keptObj = NULL;
	    }
	    Tcl_DecrRefCount(keyObj);
	    if (keptObj == NULL) {
		return MemoryOnly(interp, viewObj);
	    }
	}
	Tcl_SetObjResult(interp, keptObj);
	return TCL_OK;
    }

    /*
     * From memory.
     */

    if (statePtr->samplerPtr != NULL || statePtr->memPtr != NULL) {
	CprofDrain(statePtr);
    }
    if (statePtr->startNs == 0 || mode == CPROF_MODE_STACK) {
	return CprofNoData(interp);
    }
    if ((viewObj != NULL || count) && !statePtr->options.memory) {
	return MemoryOnly(interp, viewObj);
    }
    Tcl_SetObjResult(interp, CprofScopeProfile(ciPtr,
	    CprofProfileValue(ciPtr, viewObj != NULL ? view : -1, count)));
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSaveObjCmd, CprofRunsObjCmd --
 *
 *	tclcprof::save file ?-label string? ?-data profile?
 *	tclcprof::runs -db file
 *
 *	Write the current profile to a file as a new run (the file is
 *	created if needed); list the runs of a file.
 *
 * Results:
 *	save: the run's id. runs: a list of dicts, one per run.
 *
 *----------------------------------------------------------------------
 */

int
CprofSaveObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    static const char *const saveOptions[] = {"-label", "-data", NULL};
    CprofInterp *ciPtr = (CprofInterp *) clientData;
    CprofState *statePtr = &ciPtr->state;
    CprofStore *storePtr;
    Tcl_Obj *objs[OBJ_COUNT], *infoObj, *metaObj, *labelObj = NULL;
    Tcl_Obj *dataObj = NULL;
    int i, index, code;

    if (objc < 2 || objc % 2 != 0) {
	CprofWrongArgs(interp, 1, objv,
		"file ?-label string? ?-data profile?");
	return TCL_ERROR;
    }
    for (i = 0; i < OBJ_COUNT; i++) {
	objs[i] = ciPtr->objs[i];
    }
    objs[OBJ_DB] = objv[1];
    for (i = 2; i < objc; i += 2) {
	if (CprofOptionIndex(interp, objv[i], saveOptions, &index)
		!= TCL_OK) {
	    return TCL_ERROR;
	}
	if (index == 0) {
	    objs[OBJ_LABEL] = labelObj = objv[i+1];
	} else {
	    dataObj = objv[i+1];
	}
    }

    /*
     * A profile value (a merge of runs, say): store.c checks and writes
     * it.
     */

    if (dataObj != NULL) {
	return CprofStoreSaveData(interp, objv[1], dataObj, labelObj);
    }
    if (CprofAside(ciPtr) != NULL) {
	/*
	 * The program's latest profile, kept aside while the collector
	 * serves a request, is written from its value.
	 */

	Tcl_Obj *keptObj = CprofServeAsideGet(ciPtr, "data");
	Tcl_Obj *stObj;

	if (keptObj == NULL) {
	    return CprofNoData(interp);
	}
	code = CprofStoreSaveData(interp, objv[1], keptObj, labelObj);
	if (code == TCL_OK) {
	    /*
	     * Saved: status says so.
	     */

	    Tcl_Obj *resObj = Tcl_GetObjResult(interp);

	    Tcl_IncrRefCount(resObj);
	    if (Tcl_IsShared(ciPtr->asideObj)) {
		Tcl_Obj *copyObj = Tcl_DuplicateObj(ciPtr->asideObj);

		Tcl_IncrRefCount(copyObj);
		Tcl_DecrRefCount(ciPtr->asideObj);
		ciPtr->asideObj = copyObj;
	    }
	    stObj = Tcl_DuplicateObj(CprofServeAsideGet(ciPtr, "status"));
	    PUT(stObj, "unsaved", Tcl_NewBooleanObj(0));
	    PUT(ciPtr->asideObj, "status", stObj);
	    Tcl_SetObjResult(interp, resObj);
	    Tcl_DecrRefCount(resObj);
	}
	return code;
    }
    if (statePtr->samplerPtr != NULL) {
	CprofDrain(statePtr);
    }
    if (statePtr->startNs == 0 || statePtr->options.mode == CPROF_MODE_STACK) {
	return CprofNoData(interp);
    }
    if (CprofStoreOpen(interp, objv[1], 0, &storePtr) != TCL_OK) {
	return TCL_ERROR;
    }
    infoObj = CprofRunDbInfo(ciPtr, &statePtr->options, objs, 0, ciPtr->startWall);
    Tcl_IncrRefCount(infoObj);
    metaObj = CprofMetaDict(ciPtr);
    PUT(metaObj, "label", objs[OBJ_LABEL]);
    Tcl_IncrRefCount(metaObj);
    code = CprofStoreSave(interp, storePtr, statePtr, infoObj, metaObj);
    Tcl_DecrRefCount(metaObj);
    Tcl_DecrRefCount(infoObj);
    if (code == TCL_OK) {
	Tcl_SetObjResult(interp, Tcl_NewWideIntObj(CprofStoreRunId(storePtr)));
	if (!statePtr->running) {
	    ciPtr->unsaved = 0;
	}
    } else {
	/*
	 * A file made by this save goes again.
	 */

	CprofStoreDiscardRun(storePtr);
    }
    CprofStoreClose(storePtr);
    return code;
}

int
CprofRunsObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    static const char *const runsOptions[] = {"-db", NULL};
    Tcl_Obj *listObj;
    int index;

    if (objc != 3) {
	CprofWrongArgs(interp, 1, objv, "-db file");
	return TCL_ERROR;
    }
    if (CprofOptionIndex(interp, objv[1], runsOptions, &index) != TCL_OK) {
	return TCL_ERROR;
    }
    listObj = CprofStoreRuns(interp, objv[2]);
    if (listObj == NULL) {
	return TCL_ERROR;
    }
    Tcl_SetObjResult(interp, listObj);
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofStackObjCmd --
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

int
CprofStackObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofState *statePtr = &((CprofInterp *) clientData)->state;
    Tcl_Obj *listObj;
    int i, depth;

    if (objc != 1) {
	CprofWrongArgs(interp, 1, objv, NULL);
	return TCL_ERROR;
    }
    listObj = Tcl_NewListObj(0, NULL);
    if (statePtr->running && !statePtr->paused
	    && statePtr->framesPtr != NULL && !CprofChecksFrames(
	    &statePtr->options)) {
	/*
	 * -capture frames: no level stack; Tcl's frames, read and named as
	 * a sample's are (their position for a level, no anchor).
	 */

	CprofTclRef *named;

	depth = CprofFramesStack(statePtr->framesPtr, &named);
	if (depth > 0) {
	    const char *last = CprofNameString(named[depth - 1].nameId);

	    if (last != NULL && (strcmp(last, "tclcprof::stack") == 0
		    || strcmp(last, "::tclcprof::stack") == 0
		    || strcmp(last, "tclcprof stack") == 0)) {
		depth--;
	    }
	}
	for (i = 0; i < depth; i++) {
	    Tcl_Obj *dictObj = Tcl_NewDictObj();
	    const char *name = CprofNameString(named[i].nameId);

	    PUT(dictObj, "name", Tcl_NewStringObj(name ? name : "?", -1));
	    PUT(dictObj, "level", Tcl_NewIntObj(i + 1));
	    PUT(dictObj, "kind", Tcl_NewStringObj(
		    CprofKindName(named[i].kind), -1));
	    PUT(dictObj, "anchor", Tcl_NewWideIntObj(0));
	    Tcl_ListObjAppendElement(NULL, listObj, dictObj);
	}
	ckfree(named);
	Tcl_SetObjResult(interp, listObj);
	return TCL_OK;
    }
    depth = (statePtr->running && !statePtr->paused)
	    ? CprofLevelsLiveDepth(&statePtr->levels) : 0;
    if (depth > 0 && statePtr->levels.stack.frames[depth-1].token
	    == statePtr->stackCmd) {
	depth--;
    }
    for (i = 0; i < depth; i++) {
	CprofFrame *framePtr = &statePtr->levels.stack.frames[i];
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

