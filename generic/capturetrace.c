/*
 * capturetrace.c --
 *
 *	Capture by Tcl's object trace (-capture trace), the way tclcprof
 *	kept its level stack before command wrapping, kept for paths the
 *	wrapper cannot see and as a reference: with -capture check it feeds
 *	a shadow level stack that capture.c compares with the wrapper's.
 *
 *	One Tcl_CreateObjTrace trace, ENTER|LEAVE|ALLOW_INLINE_COMPILATION
 *	(without the inline flag every script is recompiled without inline
 *	bytecode, 7-11 times slower). Enter and leave are told apart by the
 *	private reverseScan flag of the active trace record: enter traces
 *	are scanned in reverse order. Tcl's trace machinery costs 160-240 ns
 *	per command however little the callback does, and makes Tcl build
 *	the string of every traced command (an [uplevel] of a list gets its
 *	string form; Tcl's own test uplevel-8.0 notices) and run a leave
 *	execution trace a proc adds on itself for the call that added it
 *	(trace-36.2): any interpreter trace does that.
 *
 *	The trace's callback runs at a fixed distance below the trampoline
 *	frame that runs the command: a local's address plus the calibrated
 *	distance is the frame's anchor.
 *
 *	Not traced: commands run by Tcl-level execution trace handlers (Tcl
 *	runs them with interpreter traces off).
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

/*
 * Calibration state, while the private command runs.
 */

typedef struct TraceCalib {
    Tcl_Command cmd;
    int calibrating;
    uintptr_t marker;		/* Marker address seen in its enter. */
    uintptr_t tramp;		/* Trampoline SP found from the callback. */
} TraceCalib;

static TraceCalib *
CalibOf(
    CprofCapture *capPtr)
{
    return (TraceCalib *) capPtr->traceCalibPtr;
}

/*
 * Commands the trace leaves alone, as the wrapper does: imported ones (the
 * original runs, one level in, and is traced), TclOO's [next] and
 * [nextto], [unload], and the calibration command.
 */

static inline int
Ignored(
    CprofCapture *capPtr,
    Command *cmdPtr,
    const CprofCmdName *namePtr)
{
    const CprofTclInternals *inPtr = capPtr->statePtr->naming.internals;

    return (namePtr->flags & CPROF_NAME_IMPORTED)
	    || cmdPtr->objProc == inPtr->unloadObjProc
	    || (cmdPtr->nreProc != NULL
		    && (cmdPtr->nreProc == inPtr->ooNextNreProc
		    || cmdPtr->nreProc == inPtr->ooNextToNreProc))
	    || (CalibOf(capPtr) != NULL
		    && (Tcl_Command) cmdPtr == CalibOf(capPtr)->cmd);
}

/*
 *----------------------------------------------------------------------
 *
 * TraceEnter, TraceLeave --
 *
 *	A command is about to run at 'level'; the command entered at
 *	'level' has finished.
 *
 *----------------------------------------------------------------------
 */

static void
TraceEnter(
    CprofCapture *capPtr,
    Interp *iPtr,
    int level,
    Command *cmdPtr,
    int objc,
    Tcl_Obj *const objv[],
    uintptr_t marker)
{
    CprofState *statePtr = capPtr->statePtr;
    CprofLevels *lvPtr = capPtr->tracedPtr;
    TraceCalib *calPtr = CalibOf(capPtr);
    const CprofCmdName *namePtr;
    CprofFrame *framePtr;
    CprofEntry entry;

    if (calPtr != NULL && (Tcl_Command) cmdPtr == calPtr->cmd) {
	if (calPtr->calibrating) {
	    uintptr_t sps[1];

	    calPtr->marker = marker;
	    calPtr->tramp = 0;
	    if (CprofNativeTrampolines(statePtr->calib.trampStart,
		    statePtr->calib.trampEnd, sps, 1) == 1) {
		calPtr->tramp = sps[0];
	    }
	}
	return;
    }
    if (lvPtr != &statePtr->levels && (capPtr->coverage
	    || statePtr->levels.quiet)) {
	/*
	 * -capture check: the wrapper counts coverage; while the profiler
	 * runs Tcl code of its own the wrapper pushes nothing.
	 */

	return;
    }
    namePtr = CprofNameCommand(&statePtr->naming, (Tcl_Command) cmdPtr);
    if (Ignored(capPtr, cmdPtr, namePtr)) {
	return;
    }
    if (capPtr->coverage) {
	CprofCoverageOf(statePtr, (Tcl_Command) cmdPtr, namePtr, objc, objv);
	return;
    }
    entry.kind = namePtr->kind;
    entry.flags = 0;
    entry.objKey = NULL;
    entry.methodKey = NULL;
    if (namePtr->flags & CPROF_NAME_OBJECT) {
	int fresh;

	entry.nameId = CprofNameMethodCall(&statePtr->naming,
		(Tcl_Command) cmdPtr, objc, objv, &fresh, &entry.methodKey);
	entry.flags = CPROF_FRAME_OBJCMD;
	entry.objKey = cmdPtr->objClientData;
	if (fresh && capPtr->methodsPtr != NULL) {
	    CprofMethodsSeeObject(capPtr, (Tcl_Command) cmdPtr);
	}
    } else if (namePtr->flags & CPROF_NAME_COROUTINE) {
	/*
	 * Resuming a coroutine: named for the code it runs.
	 */

	entry.nameId = CprofNameCoroutine(&statePtr->naming,
		CprofLevelsCoroutineBody(lvPtr, cmdPtr->objClientData, NULL));
    } else {
	entry.nameId = namePtr->nameId;
	if ((namePtr->flags & CPROF_NAME_ENSEMBLE) && objc > 1) {
	    entry.flags = CPROF_FRAME_FOLD;
	} else if (namePtr->flags & (CPROF_NAME_SUBCMD | CPROF_NAME_SCRIPT)) {
	    entry.nameId = CprofNameArgument(&statePtr->naming, namePtr,
		    objc, objv);
	}
    }
    if (namePtr->flags & CPROF_NAME_OWN) {
	entry.flags |= CPROF_FRAME_OWN;
    }
    if (namePtr->flags & CPROF_NAME_LOOP) {
	entry.flags |= CPROF_FRAME_LOOP;
    }
    entry.level = level;
    entry.anchor = (lvPtr == &statePtr->levels
	    && statePtr->calib.state == CPROF_CALIB_OK)
	    ? marker + statePtr->calib.offset : 0;
    if (lvPtr == &statePtr->levels && statePtr->eventsOn) {
	/*
	 * Event handlers (captureevents.c): the first command of one, and
	 * commands that schedule them.
	 */

	if (CprofEventsMayStart(statePtr, level)) {
	    CprofEventsBefore(statePtr, level, entry.anchor, objc, objv);
	}
	if (namePtr->flags & CPROF_NAME_ROLE_MASK) {
	    CprofEventsSchedule(statePtr, namePtr, level, objc, objv);
	}
    }
    entry.token = (Tcl_Command) cmdPtr;
    entry.envPtr = NULL;
    CprofEntrySite(statePtr, lvPtr, (Tcl_Interp *) iPtr, &entry);
    framePtr = CprofLevelsEnter(lvPtr, &entry);

    /*
     * Resuming a coroutine by its command: put its saved frames back above
     * the resumer now, so that they are visible even if the body runs no
     * traced command before it yields again.
     */

    if (framePtr != NULL && (namePtr->flags & CPROF_NAME_COROUTINE)) {
	framePtr->flags |= CPROF_FRAME_RESUME;
	CprofLevelsResume(lvPtr, cmdPtr->objClientData, level,
		entry.anchor);
    }
}

static void
TraceLeave(
    CprofCapture *capPtr,
    Interp *iPtr,
    int level,
    Command *cmdPtr)
{
    CprofState *statePtr = capPtr->statePtr;
    TraceCalib *calPtr = CalibOf(capPtr);
    const CprofCmdName *namePtr;

    if (calPtr != NULL && (Tcl_Command) cmdPtr == calPtr->cmd) {
	return;
    }
    if (capPtr->tracedPtr != &statePtr->levels && statePtr->levels.quiet) {
	return;
    }
    namePtr = CprofNameCommand(&statePtr->naming, (Tcl_Command) cmdPtr);
    if (Ignored(capPtr, cmdPtr, namePtr)) {
	return;
    }
    if ((namePtr->flags & CPROF_NAME_LOOP)
	    && capPtr->tracedPtr == &statePtr->levels) {
	CprofEventsLoopEnd(statePtr, level);
    }
    CprofLevelsLeaveLevel(capPtr->tracedPtr, level);
}

/*
 *----------------------------------------------------------------------
 *
 * TraceProc --
 *
 *	The object trace. 'marker' is a local whose address is the anchor
 *	base.
 *
 * Results:
 *	TCL_OK always.
 *
 *----------------------------------------------------------------------
 */

static int
TraceProc(
    ClientData clientData,
    Tcl_Interp *interp,
    int level,
    const char *command,
    Tcl_Command token,
    int objc,
    Tcl_Obj *const objv[])
{
    volatile char marker = 0;
    CprofCapture *capPtr = (CprofCapture *) clientData;
    CprofState *statePtr = capPtr->statePtr;
    Interp *iPtr = (Interp *) interp;
    int primary = (capPtr->tracedPtr == &statePtr->levels);

    if (capPtr->coverage || iPtr->activeInterpTracePtr->reverseScan) {
	TraceEnter(capPtr, iPtr, level, (Command *) token, objc, objv,
		(uintptr_t) &marker);
	if (token == capPtr->interpToken && token != NULL
		&& statePtr->childProc != NULL) {
	    /*
	     * `interp`, in a run of scope tree or process: an NRE callback
	     * queued now runs once the command has returned (after the
	     * command's own dispatch and leave traces).
	     */

	    statePtr->childProc(statePtr, interp, objc, objv);
	}
    } else {
	TraceLeave(capPtr, iPtr, level, (Command *) token);
	if (!primary && !statePtr->levels.quiet) {
	    CprofCheckStacks(capPtr, CPROF_CHECK_POP);
	}
	return TCL_OK;
    }

    /*
     * The command layer's timed duties (-duration, flushes to -db, a fork
     * to notice), every 256 commands. They may stop the run: that is done
     * here, on the way out of the callback, where nothing of the capture
     * is in use any more (Tcl allows a trace to be deleted from its own
     * callback).
     */

    if (primary && statePtr->polling
	    && (statePtr->levels.counters.enters & 255) == 0) {
	statePtr->pollProc(statePtr);
    }
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofTraceInstall, CprofTraceRemove --
 *
 *	Install and remove the object trace, feeding capPtr->tracedPtr.
 *
 *----------------------------------------------------------------------
 */

int
CprofTraceInstall(
    CprofCapture *capPtr)
{
    CprofState *statePtr = capPtr->statePtr;

    /*
     * Coverage needs no leaves: without them Tcl still runs its leave
     * machinery, but not our callback.
     */

    capPtr->interpToken = (capPtr->kind == CPROF_CAPTURE_TRACE)
	    ? Tcl_FindCommand(statePtr->interp, "::interp", NULL,
	    TCL_GLOBAL_ONLY) : NULL;
    capPtr->trace = Tcl_CreateObjTrace(statePtr->interp, 0,
	    TCL_TRACE_ENTER_EXEC | (capPtr->coverage ? 0
	    : TCL_TRACE_LEAVE_EXEC) | TCL_ALLOW_INLINE_COMPILATION,
	    TraceProc, capPtr, NULL);
    return TCL_OK;
}

void
CprofTraceRemove(
    CprofCapture *capPtr)
{
    TraceCalib *calPtr = CalibOf(capPtr);

    if (capPtr->trace != NULL) {
	Tcl_DeleteTrace(capPtr->statePtr->interp, capPtr->trace);
	capPtr->trace = NULL;
    }
    if (calPtr != NULL) {
	ckfree(calPtr);
	capPtr->traceCalibPtr = NULL;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CprofTraceCalibrate --
 *
 *	Find D, the distance from the trace callback's marker to the stack
 *	pointer of the trampoline frame (TclNRRunCallbacks) that runs the
 *	entered command. A private command is run once: its enter callback
 *	records the marker and the first trampoline frame of a native
 *	backtrace; the command itself takes another backtrace, whose first
 *	trampoline frame must be the same one.
 *
 * Results:
 *	TCL_OK. statePtr->calib says whether calibration succeeded; when it
 *	failed, anchors are 0 and the sampler reports stacks unspliced.
 *
 *----------------------------------------------------------------------
 */

static int
CalibrateObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofCapture *capPtr = (CprofCapture *) clientData;
    TraceCalib *tcPtr = CalibOf(capPtr);
    CprofCalibration *calPtr = &capPtr->statePtr->calib;
    uintptr_t sps[1];

    if (tcPtr == NULL || !tcPtr->calibrating) {
	return TCL_OK;
    }
    if (tcPtr->tramp == 0) {
	snprintf(calPtr->message, sizeof(calPtr->message),
		"no trampoline frame seen from the trace callback");
	return TCL_OK;
    }
    if (CprofNativeTrampolines(calPtr->trampStart, calPtr->trampEnd, sps, 1)
	    != 1) {
	snprintf(calPtr->message, sizeof(calPtr->message),
		"no trampoline frame seen from the command");
	return TCL_OK;
    }
    if (sps[0] != tcPtr->tramp) {
	snprintf(calPtr->message, sizeof(calPtr->message),
		"trampoline frames disagree (callback 0x%lx, command 0x%lx)",
		(unsigned long) tcPtr->tramp, (unsigned long) sps[0]);
	return TCL_OK;
    }
    calPtr->offset = (intptr_t) (tcPtr->tramp - tcPtr->marker);
    calPtr->state = CPROF_CALIB_OK;
    calPtr->message[0] = '\0';
    return TCL_OK;
}

int
CprofTraceCalibrate(
    CprofCapture *capPtr)
{
    CprofState *statePtr = capPtr->statePtr;
    CprofCalibration *calPtr = &statePtr->calib;
    Tcl_Interp *interp = statePtr->interp;
    TraceCalib *tcPtr;
    Tcl_InterpState saved;
    Tcl_Obj *cmdObj;
    int inTrace;

    calPtr->state = CPROF_CALIB_FAILED;
    if (!CprofTrampolineRange(&calPtr->trampStart, &calPtr->trampEnd,
	    calPtr->message, sizeof(calPtr->message))) {
	return TCL_OK;
    }
    tcPtr = (TraceCalib *) ckalloc(sizeof(TraceCalib));
    memset(tcPtr, 0, sizeof(TraceCalib));
    capPtr->traceCalibPtr = tcPtr;
    tcPtr->cmd = Tcl_CreateObjCommand(interp, "::tclcprof::Calibrate",
	    CalibrateObjCmd, capPtr, NULL);
    saved = Tcl_SaveInterpState(interp, TCL_OK);
    cmdObj = Tcl_NewStringObj("::tclcprof::Calibrate", -1);
    Tcl_IncrRefCount(cmdObj);
    tcPtr->calibrating = 1;

    /*
     * Started from a Tcl execution trace's script (tclcprof run starts on
     * source's enter trace), Tcl runs no object trace, ours included:
     * the flag that says so is lifted for the private command only.
     */

    inTrace = ((Interp *) interp)->flags & INTERP_TRACE_IN_PROGRESS;
    ((Interp *) interp)->flags &= ~INTERP_TRACE_IN_PROGRESS;
    Tcl_EvalObjv(interp, 1, &cmdObj, TCL_EVAL_GLOBAL);
    ((Interp *) interp)->flags |= inTrace;
    tcPtr->calibrating = 0;
    Tcl_DecrRefCount(cmdObj);
    Tcl_RestoreInterpState(interp, saved);
    Tcl_DeleteCommandFromToken(interp, tcPtr->cmd);
    tcPtr->cmd = NULL;
    return TCL_OK;
}
