/*
 * capturelevelsInline.h --
 *
 *	The level stack's fast paths (capturelevels.c has the rest), inline for
 *	the captures' hot paths. In a header of their own, included by the
 *	captures only, so that the units the level stack builds on (names)
 *	do not see the level stack through tclcprofInt.h.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _LEVELSINLINE_H
#define _LEVELSINLINE_H

#include "tclcprofInt.h"

/*
 * The common cases of CprofLevelsEnter and CprofLevelsLeave, inline for the
 * captures' hot paths.
 *
 * CprofLevelsPushPlain: a command entered in the same environment as the
 * top frame, with no flags but CPROF_FRAME_OBJCMD or CPROF_FRAME_FOLD, and
 * nothing to tell the hooks but its timing (no filter, no call sites, no
 * quiet, no drain due), that cannot start an event handler (it is not
 * entered right above an event loop's or a handler's frame, nor on an
 * empty stack while handlers may run: lvPtr->rootEvents, unless the
 * caller has found it does not, CPROF_PUSH_NO_EVENT in 'flags'). With 'lazy'
 * set (a capture that schedules no pop for it: no timing, outside
 * coroutines) the frame is CPROF_FRAME_LAZY, and lazy frames at its level
 * or above, whose calls have completed, are popped first (as leaves).
 * Returns NULL when the case is not that one: the caller then calls
 * CprofLevelsEnter. The caller passes the current execution environment
 * and its coroutine.
 *
 * CprofLevelsLeaveTop: the top frame's own leave.
 */

#define CPROF_PUSH_NO_EVENT	0x8000	/* Not a frame flag: the command was
					 * found not to start a handler. */

/*
 * Whether a command entered on an empty stack may start an event handler:
 * handlers may run (lvPtr->rootEvents), and the script running is not the
 * one last found to be no handler (captureevents.c keeps its command frame in
 * lvPtr->rootNoEvent). Reads the interpreter: the captures include
 * tclInt.h.
 */

static inline int
CprofLevelsRootMayStart(
    CprofLevels *lvPtr)
{
    return lvPtr->rootEvents && lvPtr->rootNoEvent
	    != (void *) ((Interp *) lvPtr->interp)->cmdFramePtr;
}

/*
 * Sampled lines: where the command being pushed was invoked from, read
 * from Tcl's current command frame (the caller's bytecode and the pc of
 * the call; CprofFrameSite from a given one), kept as keys for the drain
 * to resolve.
 */

static inline void
CprofFrameSite(
    CprofFrame *framePtr,
    const CmdFrame *cfPtr)
{
    if (cfPtr != NULL && cfPtr->type == TCL_LOCATION_BC) {
	const char *codePtr = (const char *) cfPtr->data.tebc.codePtr;

	framePtr->siteCode = codePtr;
	framePtr->siteOffset = (int) (cfPtr->data.tebc.pc - codePtr);
    } else {
	framePtr->siteCode = NULL;
    }
}

static inline void
CprofLevelsNoteSite(
    CprofLevels *lvPtr,
    CprofFrame *framePtr)
{
    CprofFrameSite(framePtr, ((Interp *) lvPtr->interp)->cmdFramePtr);
}

static inline __attribute__((always_inline)) CprofFrame *
CprofLevelsPushPlain(
    CprofLevels *lvPtr,
    int nameId,
    int kind,
    int level,
    uintptr_t anchor,
    Tcl_Command token,
    void *envPtr,
    void *corPtr,
    int lazy,
    int flags,
    void *objKey)
{
    CprofStack *stackPtr = &lvPtr->stack;
    int depth = stackPtr->depth, popped = 0;
    CprofFrame *framePtr;

    if (!lvPtr->plain
	    || (lvPtr->needDrainPtr != NULL && *lvPtr->needDrainPtr)) {
	return NULL;
    }
    while (depth > 0) {
	const CprofFrame *topPtr = &stackPtr->frames[depth - 1];

	if (topPtr->envPtr != envPtr
		|| (topPtr->flags & (CPROF_FRAME_FOLD | CPROF_FRAME_OWN
		| CPROF_FRAME_LOOP | CPROF_FRAME_ABOVE))) {
	    return NULL;
	}
	if (topPtr->level < level) {
	    break;
	}
	if (!(topPtr->flags & CPROF_FRAME_LAZY)) {
	    return NULL;
	}
	depth--;
	popped++;
    }
    if ((depth == 0 && (corPtr != NULL || (!(flags & CPROF_PUSH_NO_EVENT)
	    && CprofLevelsRootMayStart(lvPtr))))
	    || depth == stackPtr->capacity) {
	return NULL;
    }
    if (popped) {
	/*
	 * Readers must not see the slot rewritten under the old depth.
	 */

	__atomic_store_n(&stackPtr->depth, depth, __ATOMIC_RELEASE);
	lvPtr->counters.leaves += popped;
    }
    lvPtr->counters.enters++;
    framePtr = &stackPtr->frames[depth];
    framePtr->nameId = nameId;
    framePtr->level = level;
    framePtr->anchor = anchor;
    framePtr->envPtr = envPtr;
    framePtr->corPtr = corPtr;
    framePtr->token = token;
    framePtr->objKey = objKey;
    if (lvPtr->sampleSites) {
	CprofLevelsNoteSite(lvPtr, framePtr);
    }
    framePtr->serial = ++lvPtr->serial;
    framePtr->kind = (unsigned short) kind;
    framePtr->flags = (unsigned short) ((flags & ~CPROF_PUSH_NO_EVENT)
	    | (lazy ? CPROF_FRAME_LAZY : 0));
    framePtr->node = -1;
    __atomic_store_n(&stackPtr->depth, depth + 1, __ATOMIC_RELEASE);
    if (depth + 1 > stackPtr->maxDepth) {
	stackPtr->maxDepth = depth + 1;
    }
    if (lvPtr->timing) {
	lvPtr->hooks->enter(lvPtr->hookData, framePtr,
		depth > 0 ? framePtr - 1 : NULL, CPROF_SITE_NONE, NULL, 0);
    }
    return framePtr;
}

static inline int
CprofLevelsLeaveTop(
    CprofLevels *lvPtr,
    uint64_t serial)
{
    CprofStack *stackPtr = &lvPtr->stack;
    int depth = stackPtr->depth;

    if (depth > 0 && !lvPtr->timing
	    && stackPtr->frames[depth - 1].serial == serial) {
	/*
	 * (With timing, CprofLevelsLeave finds the top frame first.)
	 */

	lvPtr->counters.leaves++;
	__atomic_store_n(&stackPtr->depth, depth - 1, __ATOMIC_RELEASE);
	return 1;
    }
    return CprofLevelsLeave(lvPtr, serial);
}

#endif /* _LEVELSINLINE_H */
