/*
 * capturebase.c --
 *
 *	What the captures (capturewrap.c, capturetrace.c,
 *	captureoomethods.c) share, below them all: they call it, it calls none of them.
 *
 *	- the capture's names (-capture wrap|trace|check);
 *	- the state of an interpreter, cached per thread for the method
 *	  capture's hook, which learns only the interpreter;
 *	- the NRE callback that pops a frame by its serial number when the
 *	  command (or method) whose frame it is completes;
 *	- coverage counting (coverage mode keeps no stack);
 *	- -capture check: the wrapper's stack and the trace's shadow stack
 *	  compared after every push of the one and leave of the other,
 *	  disagreements counted and the first one kept.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include <tclInt.h>
#include "captureInt.h"
#include "capturelevelsInline.h"
#include <string.h>
#include <stdio.h>

/*
 * Set while an injection's request runs (unix/remoteinject.c): a start
 * then is marked "attach injected" (cmdrun.c) and seeds the running
 * frames from the trampoline outside its own (captureseed.c).
 */

int cprofInjecting = 0;

static const char *const captureNames[] = {
    "wrap", "trace", "check", "frames", NULL
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
    return (kind >= 0 && kind <= CPROF_CAPTURE_FRAMES) ? captureNames[kind]
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
 * CprofSchedulePop, CprofPopCallback --
 *
 *	Queue, on the current NRE stack, the pop of the frame with 'serial':
 *	it runs when what was queued after it (the command's own NRE work)
 *	has completed. A loop's pop (captureevents.c) ends its loop, then
 *	pops the same way.
 *
 *----------------------------------------------------------------------
 */

int
CprofPopCallback(
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
    Tcl_NRAddCallback(statePtr->interp, CprofPopCallback, statePtr, lvPtr,
	    (ClientData) (uintptr_t) serial, NULL);
}

int
CprofIsPopCallback(
    Tcl_NRPostProc *procPtr)
{
    return procPtr == CprofPopCallback;
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
	    : CprofNameArgument(&statePtr->naming, namePtr, objc, objv);
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

	if (!(framePtr->flags & CPROF_FRAME_SYNTH)
		&& framePtr->level <= numLevels) {
	    break;
	}
	i++;
    }
    return i;
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

