/*
 * captureInt.h --
 *
 *	Shared by the units of the capture, which tell the level stack what
 *	the interpreter runs:
 *
 *	  capture.c	choosing a capture, installing and removing it,
 *			anchor calibration, the NRE callback that pops a
 *			frame, -capture check, unload.
 *	  capturewrap.c	capture by wrapping commands (the default): each
 *			command's nreProc becomes a thunk into one wrapper;
 *			commands created later are wrapped as they appear;
 *			coroutines are followed by callbacks on their NRE
 *			stacks.
 *	  capturetrace.c	capture by Tcl's object trace (-capture trace), and
 *			the shadow stack of -capture check.
 *	  captureoomethods.c	TclOO methods, for both: a frame for each
 *			procedure-bodied method when its body starts.
 *	  captureevents.c	event handlers, for both: a frame for each handler
 *			the event loop runs, with its origin; the loop's
 *			waits (captureeventrecs.c below it keeps the records:
 *			captureeventsInt.h).
 *
 *	These read Tcl's private structures; include tclInt.h first.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _CAPTUREINT_H
#define _CAPTUREINT_H

#include "tclcprofInt.h"
#include "capturelevelsInline.h"

typedef struct CprofWrap CprofWrap;
typedef struct CprofMethods CprofMethods;
typedef struct CprofCapture CprofCapture;

/*
 * Check mode: places where the two captures' stacks are compared.
 */

enum {
    CPROF_CHECK_PUSH = 0,	/* After the wrapper pushed a frame. */
    CPROF_CHECK_POP,		/* After the trace's leave. */
    CPROF_CHECK_SAMPLE,		/* At a sample (drained). */
    CPROF_CHECK_PLACES
};

/*
 * The capture of one interpreter, while installed.
 */

struct CprofCapture {
    CprofState *statePtr;
    int kind;			/* enum CprofCaptureKind in use. */
    CprofWrap *wrapPtr;		/* capturewrap.c, for wrap and check. */
    Tcl_Trace trace;		/* capturetrace.c's trace, for trace and check. */
    void *traceCalibPtr;	/* capturetrace.c's calibration record. */
    CprofLevels *tracedPtr;	/* The level stack capturetrace.c feeds: the
				 * state's, or for check a shadow. */
    CprofMethods *methodsPtr;	/* captureoomethods.c, unless coverage. */
    void (*lookPending)(CprofCapture *capPtr);
				/* capturewrap.c's: wrap the commands made since
				 * its last look (captureoomethods.c calls it
				 * through here, not by name). */
    int coverage;		/* Coverage mode: count, keep no stack. */
    Tcl_Command interpToken;	/* capturetrace.c, capture trace alone: ::interp,
				 * whose calls go to statePtr->childProc
				 * (the wrapper does it otherwise). */

    /* Anchors: the trampoline frame's stack pointer is a fixed distance
     * above the frame of the capture's callback. */
    int anchored;		/* Calibrated: anchors are known. */
    intptr_t wrapOffset;	/* From the wrapper's CFA. */
    intptr_t callbackOffset;	/* From an NRE callback's CFA. */
    int plain;			/* The wrapper's fast path applies: not
				 * coverage, not check. */

    /* -capture check. */
    uint64_t checks[CPROF_CHECK_PLACES];
    uint64_t sampleChecks0;	/* The state's sample counts at install. */
    uint64_t sampleDisagreements0;
    uint64_t disagreements[CPROF_CHECK_PLACES];
    Tcl_Obj *firstDisagreement;	/* Both stacks at the first one. */
};

/*
 * capturebase.c
 */

MODULE_SCOPE void	CprofSchedulePop(CprofState *statePtr,
			    CprofLevels *lvPtr, uint64_t serial);
MODULE_SCOPE int	CprofIsPopCallback(Tcl_NRPostProc *procPtr);
MODULE_SCOPE Tcl_NRPostProc CprofPopCallback;
MODULE_SCOPE void	CprofCheckStacks(CprofCapture *capPtr, int place);
MODULE_SCOPE CprofState *CprofStateOfInterp(Tcl_Interp *interp);
MODULE_SCOPE int	CprofCoverageOf(CprofState *statePtr,
			    Tcl_Command token, const CprofCmdName *namePtr,
			    int objc, Tcl_Obj *const objv[]);

/*
 * capturewrap.c
 */

MODULE_SCOPE int	CprofWrapInstall(CprofCapture *capPtr);
MODULE_SCOPE void	CprofWrapRemove(CprofCapture *capPtr);
MODULE_SCOPE int	CprofWrapCalibrate(CprofCapture *capPtr);
MODULE_SCOPE int	CprofWrapIsOurs(Tcl_NRPostProc *procPtr);
MODULE_SCOPE void	CprofWrapStatus(CprofCapture *capPtr,
			    Tcl_Obj *dictObj);

/*
 * capturetrace.c
 */

MODULE_SCOPE int	CprofTraceInstall(CprofCapture *capPtr);
MODULE_SCOPE void	CprofTraceRemove(CprofCapture *capPtr);
MODULE_SCOPE int	CprofTraceCalibrate(CprofCapture *capPtr);

/*
 * captureoomethods.c
 */

MODULE_SCOPE void	CprofMethodsInstall(CprofCapture *capPtr);
MODULE_SCOPE void	CprofMethodsRemove(CprofCapture *capPtr);
MODULE_SCOPE void	CprofMethodsSeeObject(CprofCapture *capPtr,
			    Tcl_Command objCmd);
MODULE_SCOPE void	CprofMethodsStatus(CprofCapture *capPtr,
			    Tcl_Obj *dictObj);

/*
 * captureevents.c: event handlers. The captures call CprofEventsSchedule before
 * a command that schedules handlers (after, fileevent, bind, close: the
 * CPROF_NAME_ROLE_MASK flags), and CprofEventsBefore before pushing a
 * frame for which CprofEventsMayStart holds: the command is entered right
 * above a loop's frame or a handler's (or on an empty stack while
 * handlers may run), so it may be the first of a handler.
 */

MODULE_SCOPE void	CprofEventsInstall(CprofCapture *capPtr);
MODULE_SCOPE int	CprofEventsIsOurs(Tcl_NRPostProc *procPtr);
MODULE_SCOPE void	CprofEventsLoopEnd(CprofState *statePtr, int level);
MODULE_SCOPE void	CprofEventsSchedulePop(CprofState *statePtr,
			    CprofLevels *lvPtr, CprofFrame *framePtr);
MODULE_SCOPE void	CprofEventsRemove(CprofCapture *capPtr);
MODULE_SCOPE void	CprofEventsSchedule(CprofState *statePtr,
			    const CprofCmdName *namePtr, int level, int objc,
			    Tcl_Obj *const objv[]);
MODULE_SCOPE void	CprofEventsBefore(CprofState *statePtr, int level,
			    uintptr_t anchor, int objc,
			    Tcl_Obj *const objv[]);
MODULE_SCOPE void	CprofEventsBeforeResume(CprofState *statePtr,
			    int level, uintptr_t anchor, void *envPtr,
			    void *cfPtr);

/*
 * A frame's call site, known only to an exact run with -lines (naming.c's
 * CprofSiteKey); CPROF_SITE_NONE otherwise.
 */

static inline void
CprofEntrySite(
    CprofState *statePtr,
    CprofLevels *lvPtr,
    Tcl_Interp *interp,
    CprofEntry *entryPtr)
{
    entryPtr->siteKind = CPROF_SITE_NONE;
    if (lvPtr->timing && statePtr->exact.lines) {
	entryPtr->siteKind = CprofSiteKey(interp, &entryPtr->sitePtr,
		&entryPtr->siteOffset);
    }
}

static inline int
CprofEventsMayStart(
    CprofState *statePtr,
    int level)
{
    CprofStack *stackPtr = &statePtr->levels.stack;
    int i = stackPtr->depth - 1;

    if (statePtr->eventsPtr == NULL || !statePtr->eventsOn) {
	return 0;
    }
    while (i >= 0 && stackPtr->frames[i].level >= level
	    && !(stackPtr->frames[i].level == level
	    && (stackPtr->frames[i].flags & CPROF_FRAME_EVENT))) {
	i--;
    }
    if (i < 0) {
	/*
	 * On an empty stack: not the script last found to be no handler
	 * (its command frame, captureevents.c's negative cache).
	 */

	return CprofLevelsRootMayStart(&statePtr->levels);
    }
    return ((stackPtr->frames[i].flags & CPROF_FRAME_LOOP)
	    && stackPtr->frames[i].level == level - 1)
	    || (stackPtr->frames[i].flags & CPROF_FRAME_EVENT);
}

#endif /* _CAPTUREINT_H */
