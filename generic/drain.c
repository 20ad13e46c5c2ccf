/*
 * drain.c --
 *
 *	The drain: from the sampler's raw samples to the call tree, in
 *	normal context. CprofDrain (and CprofDrainSoon, which does not wait
 *	for symbol tables) takes the samples of the ring and the spool
 *	(unix/sampler.c, samplerspool.c) and, through the memory run's hook,
 *	the memory samples (drainmemory.c). Each sample goes through four
 *	stages (CprofAddSampleTo), one entry of its own file each:
 *	    1. its Tcl frames named and put in order (TclFrames, here);
 *	    2. spliced into its native frames (CprofDrainSplice,
 *	       drainsplice.c);
 *	    3. every frame resolved: C names and lines, Tcl lines, what the
 *	       options hide (CprofDrainResolve, drainresolve.c);
 *	    4. the resolved stack added to the call tree and its timeline
 *	       (CprofDrainAddStack, draintree.c).
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _GNU_SOURCE
#   define _GNU_SOURCE
#endif
#include "drainInt.h"
#include "captureframes.h"
#include <string.h>

/*
 * -capture check: the procedures of a sample's level stack (the wrapper's)
 * against those read from Tcl's own frames (captureframes.c), which follow them
 * in tcl[]: they agree, or differ by the one innermost frame that one saw
 * before the other (a proc being entered or left), Tcl's going on outside
 * the wrapper's (procs already running at start). tclcprof's own procs
 * are left out (the wrapper does not push them). Counted apart from the
 * wrapper's checks against the trace (status: capture check frames_*),
 * the first disagreement kept. Returns the number of the level stack's
 * frames.
 */

static int
ProcIds(
    const CprofTclRef *refs,
    int n,
    int *ids)
{
    int i, k = 0;

    for (i = 0; i < n; i++) {
	const char *name;

	if (refs[i].interpId >= 0 || refs[i].kind != CPROF_KIND_PROC) {
	    continue;
	}
	name = CprofNameString(refs[i].nameId);
	if (name != NULL && strncmp(name, "::tclcprof::", 12) == 0) {
	    continue;
	}
	ids[k++] = refs[i].nameId;
    }
    return k;
}

/*
 * Whether b[0..nb) ends with a[0..na): Tcl's frames go on outside what
 * the wrapper saw (procs already running at start).
 */

static int
EndsWith(
    const int *b,
    int nb,
    const int *a,
    int na)
{
    return nb >= na && memcmp(a, b + nb - na, na * sizeof(int)) == 0;
}

static int
CheckFrames(
    CprofState *statePtr,
    const CprofTclRef *tcl,
    int nTcl,
    int truncated)
{
    CprofTclRef named[CPROF_TCL_MAX];
    int a[CPROF_TCL_MAX], b[CPROF_TCL_MAX];
    int nWrap = 0, nNamed, na, nb, agree;

    while (nWrap < nTcl && tcl[nWrap].nameId != CPROF_FRAMES_RAW) {
	nWrap++;
    }
    if (statePtr->framesPtr == NULL || truncated) {
	return nWrap;
    }
    nNamed = CprofFramesResolve(statePtr->framesPtr, tcl + nWrap,
	    nTcl - nWrap, NULL, named);
    na = ProcIds(tcl, nWrap, a);
    nb = ProcIds(named, nNamed, b);
    agree = EndsWith(b, nb, a, na) || (na > 0 && EndsWith(b, nb, a, na - 1))
	    || (nb > 0 && EndsWith(b, nb - 1, a, na));
    statePtr->framesChecks++;
    if (!agree) {
	statePtr->framesDisagreements++;
	if (statePtr->framesFirst[0] == '\0') {
	    Tcl_DString ds;
	    int i;

	    Tcl_DStringInit(&ds);
	    Tcl_DStringAppend(&ds, "wrap:", -1);
	    for (i = 0; i < na; i++) {
		Tcl_DStringAppend(&ds, " ", 1);
		Tcl_DStringAppend(&ds, CprofNameString(a[i]), -1);
	    }
	    Tcl_DStringAppend(&ds, "; frames:", -1);
	    for (i = 0; i < nb; i++) {
		Tcl_DStringAppend(&ds, " ", 1);
		Tcl_DStringAppend(&ds, CprofNameString(b[i]), -1);
	    }
	    snprintf(statePtr->framesFirst, sizeof(statePtr->framesFirst),
		    "%s", Tcl_DStringValue(&ds));
	    Tcl_DStringFree(&ds);
	}
    }
    return nWrap;
}

/*
 * -capture frames: name a sample's raw references (captureframes.c) into out[]
 * and place them among its native frames; mark the frames -include and
 * -exclude leave out, as the wrapper would not push them. Returns how
 * many were written.
 */

static int
NameRawFrames(
    CprofState *statePtr,
    const CprofSample *samplePtr,
    CprofTclRef *out)
{
    CprofNativeStack native;
    int i, n;

    if (statePtr->framesPtr == NULL) {
	return 0;
    }
    native.ip = samplePtr->ip;
    native.cfa = samplePtr->cfa;
    native.n = samplePtr->nNative;
    native.trampStart = statePtr->calib.trampStart;
    native.trampEnd = statePtr->calib.trampEnd;
    n = CprofFramesResolve(statePtr->framesPtr, samplePtr->tcl,
	    samplePtr->nTcl, &native, out);
    if (statePtr->exact.includeObj != NULL
	    || statePtr->exact.excludeObj != NULL) {
	for (i = 0; i < n; i++) {
	    if (out[i].interpId < 0 && CprofFrameHidden(statePtr,
		    out[i].nameId, out[i].kind)) {
		out[i].flags |= CPROF_FRAME_HIDDEN;
	    }
	}
    }
    return n;
}

/*
 * A drain put off (CprofDrainSoon: symbol tables are being read): the Tcl
 * frames of the samples waiting in the ring are named now, in place,
 * while what they point at lives (the bytecode of a loop whose script is
 * freed when the loop ends, a procedure deleted before the next drain);
 * their native frames wait for the tables. The ring's published slots are
 * the drain's: the handler writes only unpublished ones.
 */

static void
NameFramesEarly(
    CprofState *statePtr,
    CprofSampler *sPtr)
{
    CprofTclRef named[CPROF_TCL_MAX];
    CprofSample *samplePtr;
    uint32_t i;
    int n;

    if (statePtr->framesPtr == NULL) {
	return;
    }
    for (i = 0; (samplePtr = CprofSamplerPeekAt(sPtr, i)) != NULL; i++) {
	if ((samplePtr->flags & (CPROF_SAMPLE_RAW | CPROF_SAMPLE_FRAMES_CHECK))
		!= CPROF_SAMPLE_RAW) {
	    continue;
	}
	n = NameRawFrames(statePtr, samplePtr, named);
	if (n > CPROF_TCL_MAX) {
	    n = CPROF_TCL_MAX;
	}
	memcpy(samplePtr->tcl, named, n * sizeof(CprofTclRef));
	samplePtr->nTcl = (uint16_t) n;
	samplePtr->flags &= ~CPROF_SAMPLE_RAW;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * TclFrames --
 *
 *	The drain's first stage: a sample's Tcl frames named (-capture
 *	frames: the handler's raw references, captureframesresolve.c) or
 *	compared (-capture check), put in the order of their native frames
 *	when they are of several interpreters, and, on the wall clock, an
 *	[idle] frame of exact timing's left out (its node kept for the
 *	[idle] the resolution puts in place of the wait). The frames are
 *	the sample's own or those of one of the buffers given.
 *
 * Results:
 *	The number of frames, *tclPtr pointing at them; *keptPtr, when
 *	not NULL, is the caller's to free.
 *
 *----------------------------------------------------------------------
 */

static int
TclFrames(
    CprofState *statePtr,
    const CprofSample *samplePtr,
    int mainTree,
    CprofTclRef *rawTcl,		/* CPROF_TCL_MAX each. */
    CprofTclRef *sortedTcl,
    const CprofTclRef **tclPtr,
    CprofTclRef **keptPtr,
    int *idleNodePtr)
{
    const CprofTclRef *tcl = samplePtr->tcl;
    int nTcl = samplePtr->nTcl;
    int i;

    *keptPtr = NULL;
    *idleNodePtr = -1;
    if (samplePtr->flags & CPROF_SAMPLE_CHECKED) {
	const uint64_t *c = samplePtr->check;

	/*
	 * -capture check: the two stacks agree, or differ by the one frame
	 * one capture saw before the other.
	 */

	statePtr->sampleChecks++;
	if (c[0] != c[2] && c[0] != c[3] && c[1] != c[2]) {
	    statePtr->sampleDisagreements++;
	}
    }

    /*
     * -capture frames: the handler's raw references named
     * (captureframesresolve.c).
     */

    if ((samplePtr->flags & CPROF_SAMPLE_RAW)
	    && (samplePtr->flags & CPROF_SAMPLE_FRAMES_CHECK)) {
	/*
	 * -capture check: the level stack's frames are the sample's, Tcl's
	 * own frames (after them) are compared with them.
	 */

	nTcl = CheckFrames(statePtr, tcl, nTcl,
		(samplePtr->flags & CPROF_SAMPLE_TCL_TRUNC) != 0);
    } else if (samplePtr->flags & CPROF_SAMPLE_RAW) {
	nTcl = NameRawFrames(statePtr, samplePtr, rawTcl);
	tcl = rawTcl;
    }

    /*
     * Frames of several interpreters (child interpreters, sampled with
     * their parent's thread): in the order of their native frames, the
     * outermost (highest stack address) first; frames of one
     * interpreter keep their order.
     */

    for (i = 0; i < nTcl; i++) {
	if (tcl[i].interpId >= 0) {
	    break;
	}
    }
    if (i < nTcl && nTcl > 1) {
	int j;

	memcpy(sortedTcl, tcl, nTcl * sizeof(CprofTclRef));
	for (i = 1; i < nTcl; i++) {
	    CprofTclRef ref = sortedTcl[i];

	    for (j = i; j > 0 && ref.anchor != 0
		    && sortedTcl[j - 1].anchor != 0
		    && sortedTcl[j - 1].anchor < ref.anchor
		    && sortedTcl[j - 1].interpId != ref.interpId; j--) {
		sortedTcl[j] = sortedTcl[j - 1];
	    }
	    sortedTcl[j] = ref;
	}
	tcl = sortedTcl;
    }

    /*
     * Waiting: a sample whose native stack is inside Tcl_WaitForEvent,
     * on the wall clock, gets a frame [idle] in place of what is inside
     * the wait (captureevents.c pushes one for exact timing: that one is
     * left out of the splice, its node kept for the frame put there).
     */

    if (statePtr->options.clock == CPROF_CLOCK_WALL && mainTree) {
	for (i = 0; i < nTcl; i++) {
	    if (tcl[i].kind == CPROF_KIND_IDLE) {
		break;
	    }
	}
	if (i < nTcl) {
	    CprofTclRef *keptTcl;
	    int j;

	    keptTcl = (CprofTclRef *) ckalloc(nTcl * sizeof(CprofTclRef));
	    for (i = j = 0; i < nTcl; i++) {
		if (tcl[i].kind == CPROF_KIND_IDLE) {
		    *idleNodePtr = tcl[i].node;
		} else {
		    keptTcl[j++] = tcl[i];
		}
	    }
	    *keptPtr = keptTcl;
	    tcl = keptTcl;
	    nTcl = j;
	}
    }
    *tclPtr = tcl;
    return nTcl;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofAddSample, CprofAddSampleTo --
 *
 *	One raw sample into the state's tree or the one given (memory
 *	samples: drainmemory.c), through the drain's four stages, each of
 *	its own file. CprofAddSampleTo returns the node the sample ends at.
 *
 *----------------------------------------------------------------------
 */

void
CprofAddSample(
    CprofState *statePtr,
    const CprofSample *samplePtr)
{
    if (CprofDrainOwnLeaf(statePtr, samplePtr)) {
	statePtr->ownLeafWeight += samplePtr->weight;
	statePtr->ownLeafCount += samplePtr->count;
	return;
    }
    CprofAddSampleTo(statePtr, &statePtr->tree, samplePtr);
}

int
CprofAddSampleTo(
    CprofState *statePtr,
    CprofTree *treePtr,
    const CprofSample *samplePtr)
{
    CprofSpliceEntry merged[CPROF_NATIVE_MAX + CPROF_TCL_MAX];
    CprofTclRef rawTcl[CPROF_TCL_MAX], sortedTcl[CPROF_TCL_MAX];
    CprofTclRef *keptTcl;
    const CprofTclRef *tcl;
    CprofDrainStack stack;
    int mainTree = (treePtr == &statePtr->tree);
    int nTcl, n, idleNode, leaf;

    /*
     * 1. Its Tcl frames, named and in order (this file).
     */

    nTcl = TclFrames(statePtr, samplePtr, mainTree, rawTcl, sortedTcl, &tcl,
	    &keptTcl, &idleNode);

    /*
     * 2. Spliced into its native frames (drainsplice.c).
     */

    n = CprofDrainSplice(statePtr, samplePtr, tcl, nTcl, merged);

    /*
     * 3. Every frame resolved: names, lines, what is left out
     *    (drainresolve.c).
     */

    CprofDrainResolve(statePtr, samplePtr, tcl, merged, n, mainTree,
	    idleNode, &stack);

    /*
     * 4. The stack added to the tree and the timeline (draintree.c).
     */

    leaf = CprofDrainAddStack(statePtr, treePtr, samplePtr, &stack);
    statePtr->hasData = 1;
    if (keptTcl != NULL) {
	ckfree(keptTcl);
    }
    return leaf;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofDrainSoon --
 *
 *	A drain in the middle of a run (the event loop's timer, or the
 *	handler asking from a command boundary), which waits for no file:
 *	when a module of the samples in the ring has no symbol table yet,
 *	the table is asked for on the reading thread (symreader.c) and the
 *	samples stay in the ring (the spool takes what overflows) for a
 *	later drain (not the first drain in a child after fork, which makes
 *	the child's timer). The samples are looked at in order up to the
 *	first that needs a table not read yet (the handler asks again at
 *	every sample once the ring is half full: each look stays short).
 *	Put off for PUT_OFF_MAX_NS at most in a row; then, or with samples
 *	spooled, it is a drain like any other. Stop, status, data and
 *	saving drain with CprofDrain, which waits.
 *
 *----------------------------------------------------------------------
 */

#define PUT_OFF_MAX_NS	3000000000u	/* 3 s */

void
CprofDrainSoon(
    CprofState *statePtr)
{
    CprofSampler *sPtr = statePtr->samplerPtr;

    if (sPtr != NULL && statePtr->symPtr != NULL && statePtr->memPtr == NULL
	    && !sPtr->forked && CprofSamplerSpoolEmpty(sPtr)
	    && CprofSamplerPeek(sPtr) != NULL) {
	uint64_t now = CprofClockNs(CLOCK_MONOTONIC);

	if (statePtr->putOffSinceNs == 0
		|| now - statePtr->putOffSinceNs < PUT_OFF_MAX_NS) {
	    CprofSample *samplePtr;
	    uint32_t i;
	    int warm = 1;

	    /*
	     * A sample landing here is the profiler's own, as in a drain.
	     */

	    int held = CprofSamplerOwn(sPtr);

	    if (statePtr->symLockPtr != NULL) {
		Tcl_MutexLock(statePtr->symLockPtr);
	    }
	    CprofSymRefresh(statePtr->symPtr);
	    for (i = 0; warm
		    && (samplePtr = CprofSamplerPeekAt(sPtr, i)) != NULL; i++) {
		warm = CprofSymWarm(statePtr->symPtr, samplePtr->ip,
			samplePtr->nNative);
	    }
	    if (statePtr->symLockPtr != NULL) {
		Tcl_MutexUnlock(statePtr->symLockPtr);
	    }
	    CprofSamplerOwnEnd(sPtr, held);
	    if (!warm) {
		if (statePtr->putOffSinceNs == 0) {
		    statePtr->putOffSinceNs = now;
		}
		statePtr->drainsPutOff++;
		sPtr->needDrain = 0;
		held = CprofSamplerOwn(sPtr);
		CprofMemGuard(1);
		NameFramesEarly(statePtr, sPtr);
		CprofMemGuard(0);
		CprofSamplerOwnEnd(sPtr, held);
		return;
	    }
	}
    }
    statePtr->putOffSinceNs = 0;
    CprofDrain(statePtr);
}

/*
 * The memory samples' drain (drainmemory.c), registered when memory profiling
 * first starts: memory profiles are built on the trees of this file, so
 * this file does not call up into drainmemory.c (tools/objcycles).
 */

static CprofDrainProc *memoryDrainProc = NULL;

void
CprofDrainSetMemory(
    CprofDrainProc *proc)
{
    memoryDrainProc = proc;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofDrain --
 *
 *	Process every sample waiting in the ring and in the spool (where the
 *	handler merges samples when the ring is full: the thread was away
 *	from Tcl for long). Runs in normal context in the sampled thread:
 *	from the trace callback when the handler asks, from an event-loop
 *	timer, and before data is read. Samples that land
 *	while it runs are counted as the profiler's own overhead. In a child
 *	process, the first drain after fork makes the sampler's timer again.
 *
 *----------------------------------------------------------------------
 */

void
CprofDrain(
    CprofState *statePtr)
{
    CprofSampler *sPtr = statePtr->samplerPtr;
    CprofSample *samplePtr;
    uint64_t t0 = 0;
    int held;

    /*
     * A time sample landing in any of this, the memory samples' drain
     * too, is the profiler's own.
     */

    held = CprofSamplerOwn(sPtr);
    if (statePtr->memPtr != NULL && memoryDrainProc != NULL) {
	if (statePtr->symLockPtr != NULL) {
	    Tcl_MutexLock(statePtr->symLockPtr);
	}
	memoryDrainProc(statePtr);
	if (statePtr->symLockPtr != NULL) {
	    Tcl_MutexUnlock(statePtr->symLockPtr);
	}
    }
    if (sPtr == NULL) {
	return;
    }

    /*
     * With memory samples too, what the drain allocates (names, the
     * symbolizer's tables) is the profiler's own: not counted.
     */

    CprofMemGuard(1);
    if (sPtr->forked) {
	CprofSamplerAfterFork(statePtr->interp, sPtr);
    }
    if (statePtr->exact.on) {
	t0 = CprofExactNow(statePtr);
    }
    sPtr->needDrain = 0;
    CprofSamplerModules();
    samplePtr = CprofSamplerTakeSpooled(sPtr);
    if (samplePtr != NULL || CprofSamplerPeek(sPtr) != NULL) {
	/*
	 * A symbolizer shared by the threads of a session (cmdscope.c) is
	 * used by one drain at a time.
	 */

	if (statePtr->symLockPtr != NULL) {
	    Tcl_MutexLock(statePtr->symLockPtr);
	}
	CprofSymRefresh(statePtr->symPtr);

	/*
	 * First what overflowed into the spool, then the ring.
	 */

	for (; samplePtr != NULL; samplePtr = CprofSamplerTakeSpooled(sPtr)) {
	    CprofAddSample(statePtr, samplePtr);
	}
	while ((samplePtr = CprofSamplerPeek(sPtr)) != NULL) {
	    CprofAddSample(statePtr, samplePtr);
	    CprofSamplerRelease(sPtr);
	}
	if (statePtr->symLockPtr != NULL) {
	    Tcl_MutexUnlock(statePtr->symLockPtr);
	}
    }
    CprofSamplerOwnEnd(sPtr, held);
    CprofMemGuard(0);

    /*
     * With exact timing on, the time spent here is not the program's.
     */

    if (statePtr->exact.on) {
	CprofExactShift(statePtr, CprofExactNow(statePtr) - t0);
    }
}
