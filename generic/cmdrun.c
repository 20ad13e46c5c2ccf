/*
 * cmdrun.c --
 *
 *	A run's lifecycle: start, stop, pause, resume, reset and profile;
 *	-duration (and its thread); the level stack's hooks (exact timing,
 *	the filter, the drain), connected for the run; the sampler's arming
 *	and its drain timer; the poll the capture makes every 256 commands.
 *	A run's -db is cmdrundb.c's.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _GNU_SOURCE
#   define _GNU_SOURCE		/* pthread_setname_np */
#endif
#include "cmdInt.h"
#include "captureframes.h"
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void		Poll(CprofState *statePtr);
static void		StopFrames(CprofState *statePtr);
static int		DoStartRun(CprofInterp *ciPtr, Tcl_Interp *interp,
			    int objc, Tcl_Obj *const objv[],
			    Tcl_Obj *topScriptObj);

/*
 *----------------------------------------------------------------------
 *
 * The level stack's consumers --
 *
 *	The level stack tells exact timing, the -include/-exclude filter
 *	and the sampler's drain of its changes through this table;
 *	ConnectLevels sets what a run uses.
 *
 *----------------------------------------------------------------------
 */

static void
HookEnter(
    void *data,
    CprofFrame *framePtr,
    CprofFrame *parentPtr,
    int siteKind,
    void *sitePtr,
    int siteOffset)
{
    CprofExactEnter((CprofState *) data, framePtr, parentPtr, siteKind,
	    sitePtr, siteOffset);
}

static void
HookRename(
    void *data,
    CprofFrame *framePtr,
    CprofFrame *parentPtr,
    int oldNameId)
{
    CprofExactRename((CprofState *) data, framePtr, parentPtr, oldNameId);
}

static uint64_t
HookLeave(
    void *data,
    int index)
{
    return CprofExactLeave((CprofState *) data, index);
}

static void
HookSlow(
    void *data,
    int index,
    uint64_t ns)
{
    CprofExactReportSlow((CprofState *) data, index, ns);
}

static void
HookSuspend(
    void *data,
    int first,
    int count)
{
    CprofExactSuspend((CprofState *) data, first, count);
}

static void
HookResume(
    void *data,
    int first,
    int count,
    uint64_t suspendedNs)
{
    CprofExactResume((CprofState *) data, first, count, suspendedNs);
}

static void
HookDropSuspended(
    void *data,
    const CprofFrame *frames,
    int count,
    uint64_t suspendedNs)
{
    CprofExactDropSuspended((CprofState *) data, frames, count,
	    suspendedNs);
}

static uint64_t
HookNow(
    void *data)
{
    return CprofExactNow((CprofState *) data);
}

static int
HookHidden(
    void *data,
    int nameId,
    int kind)
{
    return CprofFrameHidden((CprofState *) data, nameId, kind);
}

static void
HookDrain(
    void *data)
{
    CprofState *statePtr = (CprofState *) data;

    CprofDrainSoon(statePtr->hostPtr != NULL ? statePtr->hostPtr : statePtr);
}

static const CprofLevelHooks levelHooks = {
    HookEnter, HookRename, HookLeave, HookSlow, HookSuspend, HookResume,
    HookDropSuspended, HookNow, HookHidden, HookDrain
};

static void
ConnectLevels(
    CprofState *statePtr)
{
    CprofLevels *lvPtr = &statePtr->levels;

    lvPtr->hooks = &levelHooks;
    lvPtr->hookData = statePtr;
    lvPtr->timing = statePtr->exact.on;
    lvPtr->sites = statePtr->exact.lines;
    lvPtr->sampleSites = statePtr->options.lines
	    && CprofModeSamples(statePtr->options.mode);
    lvPtr->filtering = (statePtr->exact.includeObj != NULL
	    || statePtr->exact.excludeObj != NULL);
    lvPtr->needDrainPtr = (statePtr->samplerPtr != NULL)
	    ? &statePtr->samplerPtr->needDrain
	    : (statePtr->hostPtr != NULL
	    && statePtr->hostPtr->samplerPtr != NULL)
	    ? &statePtr->hostPtr->samplerPtr->needDrain
	    : (int *) CprofMemoryDrainFlag(statePtr);
    CprofLevelsRecheck(lvPtr);
}

/*
 * Install and remove the capture for the compensation's measurement
 * (CprofExactCalibrate): timing on, into the scratch state it set up.
 */

static int
CalibInstall(
    CprofState *statePtr)
{
    ConnectLevels(statePtr);
    statePtr->levels.timing = 1;
    CprofLevelsRecheck(&statePtr->levels);
    return CprofCaptureInstall(statePtr);
}

static void
CalibRemove(
    CprofState *statePtr)
{
    CprofCaptureRemove(statePtr);
    statePtr->levels.timing = 0;
    CprofLevelsRecheck(&statePtr->levels);
}

/*
 *----------------------------------------------------------------------
 *
 * Sampling life cycle --
 *
 *	StartSampling creates and arms the thread's sampler; PauseSampling
 *	disarms it and drains what it caught; CprofRunStopSampling also keeps its
 *	counters for status and frees it. DrainTimerProc drains the ring
 *	from the event loop, for programs that sit in vwait.
 *
 *----------------------------------------------------------------------
 */

#define DRAIN_MS 200

static void
DrainTimerProc(
    ClientData clientData)
{
    CprofState *statePtr = (CprofState *) clientData;

    statePtr->drainTimer = NULL;
    if (statePtr->samplerPtr != NULL || CprofMemoryRunning(statePtr)) {
	CprofDrainSoon(statePtr);
	statePtr->drainTimer = Tcl_CreateTimerHandler(DRAIN_MS,
		DrainTimerProc, statePtr);
    }
}

static void
KeepSamplerFigures(
    CprofState *statePtr)
{
    CprofSampler *sPtr = statePtr->samplerPtr;
    double secs = CprofSamplerSeconds(sPtr);

    statePtr->lastCounters = sPtr->counters;
    statePtr->lastRate = sPtr->rate;
    statePtr->lastClock = sPtr->clock;
    statePtr->lastAchieved = secs > 0 ? sPtr->counters.signals / secs : 0;
    statePtr->lastSeconds = secs;
    statePtr->lastSampledNs = (uint64_t) (secs * 1e9);
}

/*
 * -capture frames in a sampled mode: the reader of Tcl's frames
 * (captureframes.c) is made before the samplers that use it and goes after they are drained
 * and gone, its counters kept for status.
 */

/*
 * The samples read from Tcl's frames name their procedures at the drain:
 * an interpreter deleted while it is sampled (a thread's, when the thread
 * ends) tears its namespaces, procedures and all, down before its
 * associated data (this state) goes. Its limit handlers go first
 * (DeleteInterpProc, tclBasic.c:1459): a command-limit handler of ours,
 * which never runs (no limit is set), drains when it goes with its
 * interpreter, while the procedures still live. Removed at the run's
 * stop, it does nothing.
 */

static void
FramesLimitProc(
    ClientData clientData,
    Tcl_Interp *interp)
{
    (void) clientData;
    (void) interp;
}

static void
FramesLimitGone(
    ClientData clientData)
{
    CprofState *statePtr = (CprofState *) clientData;

    if (Tcl_InterpDeleted(statePtr->interp)
	    && statePtr->framesPtr != NULL && statePtr->samplerPtr != NULL) {
	CprofDrain(statePtr);
    }
}

static void
StartFrames(
    CprofState *statePtr)
{
    char note[160];

    if (statePtr->framesPtr != NULL) {
	StopFrames(statePtr);
    }
    statePtr->framesUsed = 0;
    statePtr->framesFirst[0] = '\0';
    statePtr->framesChecks = statePtr->framesDisagreements = 0;
    if (((CprofUsesFrames(&statePtr->options)
	    && CprofFramesUsable(statePtr, note, sizeof(note)))
	    || (CprofChecksFrames(&statePtr->options)
	    && CprofFramesCopyMethod(NULL) != CPROF_COPY_NONE))
	    && statePtr->hostPtr == NULL) {
	statePtr->framesPtr = CprofFramesNew(statePtr->interp,
		&statePtr->naming);
	if (!statePtr->options.seed) {
	    /*
	     * The frames running now are not shown (-seed 0), as the
	     * wrapper does not show them.
	     */

	    CprofFramesFloor(statePtr->framesPtr);
	}
	Tcl_LimitAddHandler(statePtr->interp, TCL_LIMIT_COMMANDS,
		FramesLimitProc, statePtr, FramesLimitGone);
	statePtr->framesUsed = 1;
	memset(statePtr->framesCounts, 0, sizeof(statePtr->framesCounts));
    }
}

static void
StopFrames(
    CprofState *statePtr)
{
    CprofFramesCounters counters;

    if (statePtr->framesPtr == NULL) {
	return;
    }
    if (!Tcl_InterpDeleted(statePtr->interp)) {
	Tcl_LimitRemoveHandler(statePtr->interp, TCL_LIMIT_COMMANDS,
		FramesLimitProc, statePtr);
    }
    CprofFramesCounts(statePtr->framesPtr, &counters);
    memcpy(statePtr->framesCounts, &counters, sizeof(counters));
    statePtr->allFramesChecks += statePtr->framesChecks;
    statePtr->allFramesDisagreements += statePtr->framesDisagreements;
    if (statePtr->allFramesFirst[0] == '\0') {
	memcpy(statePtr->allFramesFirst, statePtr->framesFirst,
		sizeof(statePtr->allFramesFirst));
    }
    CprofFramesFree(statePtr->framesPtr);
    statePtr->framesPtr = NULL;
}

/*
 * The run's symbolizer, made at its first sampled or memory run: C source
 * lines only with -lines 1 (a session's shared one is set when the
 * session makes it).
 */

static void
RunSymbolizer(
    CprofState *statePtr)
{
    if (statePtr->symPtr == NULL) {
	statePtr->symPtr = CprofSymNew();
    }
    if (statePtr->symLockPtr == NULL) {
	CprofSymSetLines(statePtr->symPtr, statePtr->options.lines);
    }
}

static int
StartSampling(
    CprofState *statePtr)
{
    CprofSampler *sPtr;
    Tcl_Interp *interp = statePtr->interp;
    double rate = statePtr->options.rate > 0 ? statePtr->options.rate
	    : CprofDefaultRate(statePtr->options.clock);
    int slots = 256;

    /*
     * The threads a session takes in drain every 200 ms like any other:
     * a smaller ring (256 slots of 6.4 KB, 1.6 MB, not 6.4) keeps 64 of
     * them affordable; a thread that runs no Tcl for long spills into its
     * spool. The thread that starts holds about a second of samples at
     * its rate, from 256 slots (the default 250 Hz) to 1024 (1000 Hz and
     * up): the ring's pages are all touched at start, and what a drain
     * does not take in time goes to the spool all the same.
     */

    if (!((CprofInterp *) statePtr)->member) {
	while (slots < 1024 && slots < rate) {
	    slots *= 2;
	}
    }
    if (CprofSamplerCreate(interp, &statePtr->levels.stack,
	    CprofNumLevelsPtr(interp), statePtr->options.clock,
	    statePtr->options.rate, slots, &sPtr) != TCL_OK) {
	return TCL_ERROR;
    }
    RunSymbolizer(statePtr);
    if (statePtr->options.lines) {
	/*
	 * Sampled lines: each frame's call site, and the pc of the bytecode
	 * a sample interrupts (when the engine is found).
	 */

	sPtr->lines = 1;
	if (!CprofBytecodeRange(interp, &sPtr->tebcStart, &sPtr->tebcEnd)) {
	    sPtr->tebcStart = sPtr->tebcEnd = 0;
	}
    }
    sPtr->framesPtr = statePtr->framesPtr;
    sPtr->framesCheck = CprofChecksFrames(&statePtr->options);
    statePtr->samplerPtr = sPtr;

    /*
     * The rest of the start is the profiler's own work: the timer is armed
     * with the sampler's flag set (its first signal can come before
     * timer_settime returns), and the caller clears it when the run has
     * started (CprofSamplerOwnEnd).
     */

    (void) CprofSamplerOwn(sPtr);
    if (CprofSamplerArm(interp, sPtr) != TCL_OK) {
	statePtr->samplerPtr = NULL;
	CprofSamplerDestroy(sPtr);
	return TCL_ERROR;
    }
    statePtr->drainTimer = Tcl_CreateTimerHandler(DRAIN_MS, DrainTimerProc,
	    statePtr);
    return TCL_OK;
}

/*
 * Memory samples (drainmemory.c): the hooks go in after the sampler (whose
 * record of the thread they use when it has one); the drain timer serves
 * both.
 */

static int
StartMemory(
    CprofState *statePtr)
{
    RunSymbolizer(statePtr);
    if (CprofMemoryStart(statePtr) != TCL_OK) {
	return TCL_ERROR;
    }
    if (statePtr->drainTimer == NULL) {
	statePtr->drainTimer = Tcl_CreateTimerHandler(DRAIN_MS,
		DrainTimerProc, statePtr);
    }
    return TCL_OK;
}

static void
PauseSampling(
    CprofState *statePtr)
{
    CprofSampler *sPtr = statePtr->samplerPtr;

    if (sPtr != NULL) {
	CprofSamplerDisarm(sPtr);
	CprofDrain(statePtr);
	if (CprofTreeAddTail(&statePtr->tree, sPtr->tailWeight)) {
	    sPtr->counters.signals++;
	    sPtr->counters.weight += sPtr->tailWeight;
	}
	sPtr->tailWeight = 0;
    }
}

void
CprofRunStopSampling(
    CprofState *statePtr)
{
    CprofSampler *sPtr = statePtr->samplerPtr;

    if (sPtr == NULL) {
	return;
    }
    PauseSampling(statePtr);
    KeepSamplerFigures(statePtr);
    statePtr->samplerPtr = NULL;
    statePtr->levels.needDrainPtr = NULL;
    CprofSamplerDestroy(sPtr);
    if (statePtr->drainTimer != NULL) {
	Tcl_DeleteTimerHandler(statePtr->drainTimer);
	statePtr->drainTimer = NULL;
    }
}

static void
ClearData(
    CprofState *statePtr)
{
    CprofTreeReset(&statePtr->tree);
    CprofSrcLinesFree(statePtr->srcLinesPtr);
    statePtr->srcLinesPtr = NULL;
    CprofMemoryClear(statePtr);
    CprofExactClear(statePtr);
    CprofEventsClear(statePtr);
    statePtr->stoppedBy = NULL;
    statePtr->splicedSamples = 0;
    statePtr->unsplicedSamples = 0;
    statePtr->unmatchedFrames = 0;
    statePtr->shortSamples = 0;
    CprofUnsplicedLogFree(statePtr);
    statePtr->ownLeafWeight = 0;
    statePtr->ownLeafCount = 0;
    statePtr->drainsPutOff = 0;
    statePtr->putOffSinceNs = 0;
    statePtr->hasData = 0;
    memset(&statePtr->lastCounters, 0, sizeof(statePtr->lastCounters));
    statePtr->lastAchieved = 0;
    statePtr->lastSeconds = 0;
    if (statePtr->samplerPtr != NULL) {
	CprofSampler *sPtr = statePtr->samplerPtr;

	/*
	 * Samples waiting in the ring (and spool) belong to the data being
	 * dropped.
	 * While 'draining' is set the handler writes no sample (it counts
	 * the signal as profiler overhead), so counters and ring are reset
	 * together, consistently.
	 */

	int held = CprofSamplerOwn(sPtr);

	CprofSamplerDiscard(sPtr);
	sPtr->cpuNs = sPtr->wallNs = 0;
	sPtr->startCpuNs = CprofClockNs(CLOCK_THREAD_CPUTIME_ID);
	sPtr->startWallNs = CprofClockNs(CLOCK_MONOTONIC);
	CprofSamplerOwnEnd(sPtr, held);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CprofStartObjCmd --
 *
 *	tclcprof::start ?-option value ...?
 *
 *	Install the trace, calibrate the native anchor, arm the sampler.
 *	A failed start changes nothing.
 *
 *----------------------------------------------------------------------
 */

/*
 * -duration: the run stops itself. The trace callback looks at the clock
 * every 256 commands; a timer covers a program sitting in the event loop;
 * and the deadline thread a program that runs bytecode only (a loop of
 * inline-compiled commands: no command boundary, no event loop).
 *
 * The deadline thread, one per process, made at the first run with
 * -duration and joined when the library leaves the process, sleeps until
 * 10 ms past the nearest deadline and then, if that run has not stopped
 * meanwhile, marks its Tcl asynchronous handler
 * (Tcl_AsyncMark, which may be called from any thread), which Tcl runs in
 * the run's own thread at its next safe point: every 64 bytecode
 * instructions, or between commands. The handler stops the run as the
 * poll would. Nothing of this runs in a signal handler.
 *
 * The same record rings the drain bell of a run that reads Tcl's frames
 * (-capture frames) and samples: every DRAIN_MS, as the event loop's drain
 * timer does for a program in vwait, the handler drains the ring
 * (CprofDrainSoon). Without it such a run was drained only at stop (no
 * command boundary of the wrapper's asks for it): the bytecode of a loop
 * at a script's top level was freed by then, and procedures deleted
 * meanwhile were [stale]. Fork: the child has no thread; the fork's
 * child handler marks the forking thread's armed records (what the thread
 * would have done), so that their handler, run in normal context in the
 * child, arms them again, which makes the thread again (the records of
 * other threads, which the child does not have, are disarmed). When the
 * thread was marking a handler at the fork (its mutex busy), nothing is
 * marked: the child's runs are then stopped by the poll and the timer,
 * and drained at stop, until its next run.
 */

struct CprofDeadline {
    Tcl_AsyncHandler async;	/* The run's thread's, marked here. */
    uint64_t atNs;		/* Monotonic time to mark it, 0: not armed. */
    pthread_t owner;		/* The run's thread. */
    CprofDeadline *nextPtr;	/* Every record, armed or not. */
};

enum { DEADLINE_NONE, DEADLINE_RUNNING, DEADLINE_FAILED };

/*
 * The thread wakes this long after a deadline: a program in the event loop
 * or between commands has been stopped by then (by the timer or the poll,
 * which disarm the record), so the thread only wakes, and the handler only
 * runs, for one that runs bytecode only.
 */

#define DEADLINE_GRACE_NS	10000000

static struct {
    pthread_mutex_t mutex;
    pthread_cond_t cond;	/* A record was armed, or quit. */
    CprofDeadline *records;
    int state;			/* DEADLINE_*. */
    int quit;			/* Asks the thread to end. */
    int forkHandlers;		/* pthread_atfork done. */
    pthread_t thread;
} deadlines = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL,
    DEADLINE_NONE, 0, 0, 0
};

static void *
DeadlineMain(
    void *arg)
{
    (void) arg;
    CprofMemGuard(1);			/* Never counted by memory profiles. */
    pthread_mutex_lock(&deadlines.mutex);
    while (!deadlines.quit) {
	uint64_t now = (uint64_t) CprofMonoNs(), next = 0;
	CprofDeadline *dlPtr;

	for (dlPtr = deadlines.records; dlPtr != NULL;
		dlPtr = dlPtr->nextPtr) {
	    uint64_t at = dlPtr->atNs + DEADLINE_GRACE_NS;

	    if (dlPtr->atNs == 0) {
		continue;
	    }
	    if (at <= now) {
		dlPtr->atNs = 0;
		Tcl_AsyncMark(dlPtr->async);
	    } else if (next == 0 || at < next) {
		next = at;
	    }
	}
	if (next == 0) {
	    pthread_cond_wait(&deadlines.cond, &deadlines.mutex);
	} else {
	    struct timespec ts;

	    ts.tv_sec = (time_t) (next / 1000000000);
	    ts.tv_nsec = (long) (next % 1000000000);
	    pthread_cond_timedwait(&deadlines.cond, &deadlines.mutex, &ts);
	}
    }
    pthread_mutex_unlock(&deadlines.mutex);
    return NULL;
}

/*
 * The mutex is taken at a fork if it is free, not waited for: the thread
 * could be marking a handler, waiting for a lock of Tcl's that Tcl's own
 * fork handler holds already.
 */

static __thread int deadlineForkLocked;	/* The forking thread's (two
						 * threads may fork at once). */

static void
DeadlineForkPrepare(void)
{
    deadlineForkLocked = (pthread_mutex_trylock(&deadlines.mutex) == 0);
}

static void
DeadlineForkParent(void)
{
    if (deadlineForkLocked) {
	pthread_mutex_unlock(&deadlines.mutex);
    }
}

static void
DeadlineForkChild(void)
{
    pthread_condattr_t attr;
    CprofDeadline *dlPtr;
    pthread_t self = pthread_self();
    int wasRunning = (deadlines.state == DEADLINE_RUNNING);

    pthread_mutex_init(&deadlines.mutex, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&deadlines.cond, &attr);
    pthread_condattr_destroy(&attr);
    if (wasRunning) {
	deadlines.state = DEADLINE_NONE;
    }

    /* Tcl_AsyncMark is safe here: Tcl's fork handlers have run. */
    for (dlPtr = deadlines.records; dlPtr != NULL; dlPtr = dlPtr->nextPtr) {
	if (!pthread_equal(dlPtr->owner, self)) {
	    dlPtr->atNs = 0;
	} else if (dlPtr->atNs != 0 && wasRunning && deadlineForkLocked) {
	    dlPtr->atNs = 0;
	    Tcl_AsyncMark(dlPtr->async);
	}
    }
}

/*
 * Under the mutex: the thread, made if there is none (every signal blocked
 * in it, its condition on the monotonic clock).
 */

static int
DeadlineUp(void)
{
    sigset_t all, old;

    if (deadlines.state != DEADLINE_NONE) {
	return deadlines.state == DEADLINE_RUNNING;
    }
    if (!deadlines.forkHandlers) {
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_destroy(&deadlines.cond);
	pthread_cond_init(&deadlines.cond, &attr);
	pthread_condattr_destroy(&attr);
	if (pthread_atfork(DeadlineForkPrepare, DeadlineForkParent,
		DeadlineForkChild) != 0) {
	    deadlines.state = DEADLINE_FAILED;
	    return 0;
	}
	deadlines.forkHandlers = 1;
    }
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    deadlines.quit = 0;
    CprofMemGuard(1);
    deadlines.state = (pthread_create(&deadlines.thread, NULL, DeadlineMain,
	    NULL) == 0) ? DEADLINE_RUNNING : DEADLINE_FAILED;
    CprofMemGuard(0);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (deadlines.state == DEADLINE_RUNNING) {
	/* At most 15 characters: a longer name is refused. */
	pthread_setname_np(deadlines.thread, "tclcprof-bell");
    }
    return deadlines.state == DEADLINE_RUNNING;
}

/*
 * Whether the run's record rings the drain bell: it samples (time or
 * memory) and reads Tcl's frames, with a sampler of its own (the run of
 * an interpreter a session took in, in a thread of its own, too; a child
 * interpreter sampled with its parent's thread is drained with it).
 */

static int
DrainBell(
    CprofInterp *ciPtr)
{
    CprofState *statePtr = &ciPtr->state;

    return statePtr->running && statePtr->framesUsed
	    && statePtr->hostPtr == NULL
	    && (statePtr->samplerPtr != NULL || CprofMemoryRunning(statePtr));
}

/*
 * The asynchronous handler, in the run's thread: the run stops if its
 * deadline has passed (else it was moved since: the thread is told again
 * when armed again). The interpreter's result and the code of what was
 * interrupted are kept.
 */

static int
DeadlineAsyncProc(
    ClientData clientData,
    Tcl_Interp *interp,
    int code)
{
    CprofInterp *ciPtr = (CprofInterp *) clientData;
    CprofState *statePtr = &ciPtr->state;

    (void) interp;
    if (ciPtr->rotating) {
	/*
	 * (Marked again by the rotation's end, CprofRunArmDeadline.)
	 */

	return code;
    }
    if (statePtr->running && !statePtr->paused && !ciPtr->member
	    && statePtr->deadlineNs != 0
	    && (uint64_t) CprofMonoNs() >= statePtr->deadlineNs
	    && !Tcl_InterpDeleted(statePtr->interp)) {
	Tcl_InterpState saved = Tcl_SaveInterpState(statePtr->interp,
		TCL_OK);

	CprofRunStopByItself(statePtr);
	Tcl_RestoreInterpState(statePtr->interp, saved);
    } else if (statePtr->running && !statePtr->paused && !ciPtr->member
	    && !Tcl_InterpDeleted(statePtr->interp)) {
	/*
	 * The drain bell (the interpreter's result is not touched by a
	 * drain); an interval of -history over (CprofRunDbPoll rotates
	 * when due); the record armed again for what is still to come.
	 */

	if (DrainBell(ciPtr)) {
	    CprofDrainSoon(statePtr);
	}
	CprofRunDbPoll(ciPtr, (uint64_t) CprofMonoNs());
	CprofRunArmDeadline(ciPtr);
    } else if (statePtr->running && !statePtr->paused && ciPtr->member
	    && !Tcl_InterpDeleted(statePtr->interp) && DrainBell(ciPtr)) {
	/*
	 * A member's run: its drain bell only (its session ends it).
	 */

	CprofDrainSoon(statePtr);
	CprofRunArmDeadline(ciPtr);
    }
    return code;
}

/*
 * DeadlinePrepare: the run's record (made in the run's thread, which its
 * asynchronous handler belongs to) and the thread, made before the run's
 * sampler is armed: their making is not the program's time.
 * DeadlineArm: arm (atNs > 0) or disarm (0) the run's record.
 */

static CprofDeadline *
DeadlinePrepare(
    CprofInterp *ciPtr)
{
    CprofDeadline *dlPtr = ciPtr->deadlinePtr;

    if (dlPtr == NULL) {
	CprofMemGuard(1);
	dlPtr = (CprofDeadline *) ckalloc(sizeof(CprofDeadline));
	dlPtr->async = Tcl_AsyncCreate(DeadlineAsyncProc, ciPtr);
	CprofMemGuard(0);
	dlPtr->atNs = 0;
	dlPtr->owner = pthread_self();
	pthread_mutex_lock(&deadlines.mutex);
	dlPtr->nextPtr = deadlines.records;
	deadlines.records = dlPtr;
	pthread_mutex_unlock(&deadlines.mutex);
	ciPtr->deadlinePtr = dlPtr;
    }
    pthread_mutex_lock(&deadlines.mutex);
    DeadlineUp();
    pthread_mutex_unlock(&deadlines.mutex);
    return dlPtr;
}

static void
DeadlineArm(
    CprofInterp *ciPtr,
    uint64_t atNs)
{
    CprofDeadline *dlPtr = ciPtr->deadlinePtr;

    if (dlPtr == NULL) {
	if (atNs == 0) {
	    return;
	}
	dlPtr = DeadlinePrepare(ciPtr);
    }
    pthread_mutex_lock(&deadlines.mutex);
    dlPtr->atNs = atNs;
    if (atNs != 0 && DeadlineUp()) {
	pthread_cond_signal(&deadlines.cond);
    }
    pthread_mutex_unlock(&deadlines.mutex);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofRunDeadlineFree, CprofRunDeadlineStop --
 *
 *	The interpreter's state goes: its record goes, in its thread.
 *	The library leaves the process (unload): the deadline thread ends
 *	and is joined.
 *
 *----------------------------------------------------------------------
 */

void
CprofRunDeadlineFree(
    CprofInterp *ciPtr)
{
    CprofDeadline *dlPtr = ciPtr->deadlinePtr, **linkPtr;

    if (dlPtr == NULL) {
	return;
    }
    pthread_mutex_lock(&deadlines.mutex);
    for (linkPtr = &deadlines.records; *linkPtr != NULL;
	    linkPtr = &(*linkPtr)->nextPtr) {
	if (*linkPtr == dlPtr) {
	    *linkPtr = dlPtr->nextPtr;
	    break;
	}
    }
    pthread_mutex_unlock(&deadlines.mutex);
    Tcl_AsyncDelete(dlPtr->async);
    ckfree(dlPtr);
    ciPtr->deadlinePtr = NULL;
}

void
CprofRunDeadlineStop(void)
{
    pthread_mutex_lock(&deadlines.mutex);
    if (deadlines.state == DEADLINE_RUNNING) {
	deadlines.quit = 1;
	pthread_cond_signal(&deadlines.cond);
	pthread_mutex_unlock(&deadlines.mutex);
	pthread_join(deadlines.thread, NULL);
	pthread_mutex_lock(&deadlines.mutex);
	deadlines.quit = 0;
	deadlines.state = DEADLINE_NONE;
    }
    pthread_mutex_unlock(&deadlines.mutex);
}

void
CprofRunStopByItself(
    CprofState *statePtr)
{
    statePtr->stoppedBy = "duration";
    CprofRunStop(statePtr);
    CprofRunDbFinish((CprofInterp *) statePtr, NULL, 0);
}

static void
DurationTimerProc(
    ClientData clientData)
{
    CprofInterp *ciPtr = (CprofInterp *) clientData;
    CprofState *statePtr = &ciPtr->state;

    ciPtr->durationTimer = NULL;
    if (!statePtr->running || statePtr->deadlineNs == 0) {
	return;
    }
    if ((uint64_t) CprofMonoNs() >= statePtr->deadlineNs) {
	if (!statePtr->paused) {
	    CprofRunStopByItself(statePtr);
	}
	return;
    }
    {
	/*
	 * Tcl's timers take an int of ms: wake up at least hourly and look
	 * again.
	 */

	uint64_t ms = (statePtr->deadlineNs - CprofMonoNs()) / 1000000 + 1;

	ciPtr->durationTimer = Tcl_CreateTimerHandler(
		ms > 3600000 ? 3600000 : (int) ms, DurationTimerProc, ciPtr);
    }
}

void
CprofRunSetDeadline(
    CprofInterp *ciPtr,
    double duration,
    uint64_t fromNs)
{
    CprofState *statePtr = &ciPtr->state;

    if (ciPtr->durationTimer != NULL) {
	Tcl_DeleteTimerHandler(ciPtr->durationTimer);
	ciPtr->durationTimer = NULL;
    }
    statePtr->deadlineNs = 0;
    if (duration > 0 && statePtr->running) {
	statePtr->deadlineNs = fromNs + (uint64_t) (duration * 1e9);
	if (!statePtr->paused) {
	    DurationTimerProc(ciPtr);
	}
    }
    CprofRunArmDeadline(ciPtr);
    CprofRunDbUpdatePolling(ciPtr);
}

/*
 * The deadline thread's record armed for the nearest of -duration's end
 * and the end of -history's current interval (both must come in a
 * program that runs bytecode only), or disarmed.
 */

void
CprofRunArmDeadline(
    CprofInterp *ciPtr)
{
    CprofState *statePtr = &ciPtr->state;
    uint64_t at = statePtr->deadlineNs;

    if (ciPtr->nextRotateNs != 0 && ciPtr->storePtr != NULL
	    && (at == 0 || ciPtr->nextRotateNs < at)) {
	at = ciPtr->nextRotateNs;
    }
    if (DrainBell(ciPtr)) {
	uint64_t bell = (uint64_t) CprofMonoNs()
		+ (uint64_t) DRAIN_MS * 1000000 - DEADLINE_GRACE_NS;

	if (at == 0 || bell < at) {
	    at = bell;
	}
    }
    DeadlineArm(ciPtr, (statePtr->running && !statePtr->paused) ? at : 0);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofTopScriptObjCmd, PushTopScript --
 *
 *	tclcprof::TopScript path (not exported; tclcprof.tcl's start from
 *	the TCLCPROF environment variable): the program's main script,
 *	'path', is running, and the next start is made from inside it (its
 *	package require). That start gives the script's top level a frame,
 *	"<script app.tcl>", as tclcprof run's source command has, at the
 *	bottom of the level stack (level 0, below its commands, which run at
 *	level 1 and above; the commands running already are not on the
 *	stack), anchored at the outermost trampoline, which runs the main
 *	script's code. The frame lasts until the run stops or the event loop
 *	waits at level 0 (the script returned to Tcl_Main or Tk's main
 *	loop: captureevents.c).
 *
 *----------------------------------------------------------------------
 */

int
CprofTopScriptObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofInterp *ciPtr = (CprofInterp *) Tcl_GetAssocData(interp,
	    CPROF_ASSOC, NULL);

    (void) clientData;
    if (objc != 2) {
	CprofWrongArgs(interp, 1, objv, "path");
	return TCL_ERROR;
    }
    if (ciPtr == NULL) {
	return TCL_OK;
    }
    if (ciPtr->topScriptObj != NULL) {
	Tcl_DecrRefCount(ciPtr->topScriptObj);
    }
    ciPtr->topScriptObj = objv[1];
    Tcl_IncrRefCount(objv[1]);
    return TCL_OK;
}

static void
PushTopScript(
    CprofState *statePtr,
    Tcl_Obj *pathObj)
{
    uintptr_t sps[512], anchor = 0;
    int n;

    if (statePtr->calib.state == CPROF_CALIB_OK) {
	n = CprofNativeTrampolines(statePtr->calib.trampStart,
		statePtr->calib.trampEnd, sps, 512);
	if (n > 0 && n < 512) {
	    anchor = sps[n - 1];
	}
    }
    CprofLevelsPushScript(&statePtr->levels, CprofNameScript(
	    &statePtr->naming, Tcl_GetString(pathObj)), anchor);
}

/*
 * A start under way in this thread. A start evaluates scripts of its own
 * (the frames capture's once-per-process probe, CprofFramesNew), and Tcl
 * runs asynchronous handlers and traces at their commands: a handler
 * that starts a run (a request of tclcprof::serve's endpoint, a run
 * injected by record -pid) would enter a start that is half done, and
 * the probe's mutex, which is not recursive, hung the thread for good.
 * Such a start fails instead (TCLCPROF STATE STARTING; the endpoint
 * answers 409 and the request may be made again).
 */

static __thread int startingRun;

static int
DoStart(
    CprofInterp *ciPtr,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Tcl_Obj *topScriptObj = ciPtr->topScriptObj;
    int code;

    if (startingRun) {
	return CprofStateError(interp, "a run is being started in this"
		" thread (tclcprof::start was called from an asynchronous"
		" handler or a trace that ran during a start)", "STARTING");
    }

    /*
     * tclcprof::TopScript told of the main script for this start only.
     */

    ciPtr->topScriptObj = NULL;
    startingRun = 1;
    code = DoStartRun(ciPtr, interp, objc, objv, topScriptObj);
    startingRun = 0;
    if (topScriptObj != NULL) {
	Tcl_DecrRefCount(topScriptObj);
    }
    return code;
}

static int
DoStartRun(
    CprofInterp *ciPtr,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[],
    Tcl_Obj *topScriptObj)
{
    CprofState *statePtr = &ciPtr->state;
    CprofOptions opts = ciPtr->defaults, saved = statePtr->options, run;
    CprofEvent *events = NULL;
    int64_t inNs = 0, callNs = 0;
    Tcl_Obj *objs[OBJ_COUNT];
    int given = 0, i;
    double startWall;
    void *below;

    if (statePtr->running && !ciPtr->member && !statePtr->paused
	    && statePtr->deadlineNs != 0
	    && (uint64_t) CprofMonoNs() >= statePtr->deadlineNs) {
	/*
	 * A -duration that ran out unnoticed: that run is over.
	 */

	CprofRunStopByItself(statePtr);
    }
    if (statePtr->running && !ciPtr->member) {
	return CprofStateError(interp, "profiling is already running", "RUNNING");
    }
    for (i = 0; i < OBJ_COUNT; i++) {
	objs[i] = ciPtr->defaultObjs[i];
    }
    if (CprofParseOptions(interp, objc, objv, &opts, objs, 0, &given) != TCL_OK
	    || CprofCheckModeOptions(interp, &opts, given) != TCL_OK) {
	return TCL_ERROR;
    }

    /*
     * The run's own options: its clock resolved, what does not apply to
     * its mode off.
     */

    if (CprofScopeCheckStart(ciPtr, interp, opts.scope) != TCL_OK) {
	return TCL_ERROR;
    }
    run = opts;
    run.clock = CprofRunClock(&opts);
    if (!CprofModeExact(run.mode)) {
	run.events = 0;
	run.slowMs = 0;
	run.compensate = 0;
	if (run.mode != CPROF_MODE_COVERAGE
		&& run.mode != CPROF_MODE_SAMPLE
		&& run.mode != CPROF_MODE_MEMORY) {
	    run.lines = 0;
	}
    }

    /*
     * What can fail comes first, while the last run's data is intact:
     * the file of -db (opened, the run added), the event buffer, then the
     * sampler. The compensation figures are measured (once per process)
     * before any of it runs.
     */

    startWall = CprofWallSeconds();
    if (ciPtr->member) {
	/*
	 * An interpreter a session took in starts a run of its own: it
	 * leaves the session first (what it collected so far is the
	 * session's).
	 */

	CprofRunStopMember(ciPtr);
    }
    ciPtr->nextRotateNs = 0;
    if (run.mode != CPROF_MODE_STACK && Tcl_GetCharLength(objs[OBJ_DB]) > 0) {
	/*
	 * The file is named absolutely: a child process that changes
	 * directory after fork writes to the same file.
	 */

	Tcl_Obj *pathObj = Tcl_FSGetNormalizedPath(interp, objs[OBJ_DB]);

	if (pathObj == NULL) {
	    Tcl_SetErrorCode(interp, "TCLCPROF", "DB", "OPEN",
		    Tcl_GetString(objs[OBJ_DB]), NULL);
	    return TCL_ERROR;
	}
	objs[OBJ_DB] = pathObj;
	if (CprofRunDbOpen(ciPtr, interp, &run, objs, startWall) != TCL_OK) {
	    return TCL_ERROR;
	}
    }
    if (run.mode != CPROF_MODE_STACK
	    && Tcl_GetCharLength(objs[OBJ_HISTORY]) > 0) {
	Tcl_Obj *pathObj;

	if (Tcl_GetCharLength(objs[OBJ_DB]) > 0) {
	    CprofRunDbDiscard(ciPtr);
	    Tcl_SetObjResult(interp, Tcl_NewStringObj(
		    "-history and -db cannot be used together", -1));
	    Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", "-history", NULL);
	    return TCL_ERROR;
	}
	pathObj = Tcl_FSGetNormalizedPath(interp, objs[OBJ_HISTORY]);
	if (pathObj == NULL) {
	    Tcl_SetErrorCode(interp, "TCLCPROF", "DB", "OPEN",
		    Tcl_GetString(objs[OBJ_HISTORY]), NULL);
	    return TCL_ERROR;
	}
	objs[OBJ_HISTORY] = pathObj;
	if (CprofRunHistoryOpen(ciPtr, interp, &run, objs, startWall)
		!= TCL_OK) {
	    return TCL_ERROR;
	}
    }
    if (CprofExactNeedEvents(statePtr, &run)) {
	events = (CprofEvent *) attemptckalloc((size_t) run.eventLimit
		* sizeof(CprofEvent));
	if (events == NULL) {
	    Tcl_SetObjResult(interp, Tcl_ObjPrintf(
		    "cannot allocate room for %d events", run.eventLimit));
	    Tcl_SetErrorCode(interp, "TCLCPROF", "MEMORY", NULL);
	    CprofRunDbDiscard(ciPtr);
	    return TCL_ERROR;
	}
    }
    if (run.compensate) {
	CprofOptions keep = statePtr->options;

	/*
	 * Exact timing with -capture frames times through the wrapper
	 * (CprofCaptureInstall): its figures are wrap's.
	 */

	statePtr->options = run;
	CprofExactCalibrate(statePtr, run.clock,
		run.capture == CPROF_CAPTURE_FRAMES ? CPROF_CAPTURE_WRAP
		: run.capture, CalibInstall, CalibRemove, &inNs, &callNs);
	statePtr->options = keep;
    }
    statePtr->options = run;
    StartFrames(statePtr);
    if (run.duration > 0 || ciPtr->nextRotateNs != 0
	    || (statePtr->framesUsed && (CprofModeSamples(run.mode)
	    || run.memory))) {
	DeadlinePrepare(ciPtr);
    }
    if ((CprofModeSamples(run.mode) && StartSampling(statePtr) != TCL_OK)
	    || (run.memory && StartMemory(statePtr) != TCL_OK)) {
	CprofRunStopSampling(statePtr);
	StopFrames(statePtr);
	statePtr->options = saved;
	if (events != NULL) {
	    ckfree(events);
	}
	CprofRunDbDiscard(ciPtr);
	return TCL_ERROR;
    }

    /*
     * Only now that the run can start is the last run's data dropped;
     * ClearData also drops what the new timer may already have put in the
     * ring, together with its counters. The rest of the start (the capture
     * installed and calibrated, other interpreters taken in: milliseconds
     * for a program of many commands) is the profiler's own work, not
     * sampled (StartSampling set the sampler's flag).
     */

    CprofScopeRelease(ciPtr);
    CprofExactPrepare(statePtr, &run, events, inNs, callNs);
    ClearData(statePtr);
    statePtr->exact.interpId = ciPtr->interpId = -1;
    CprofExactSetFilters(statePtr, objs[OBJ_INCLUDE], objs[OBJ_EXCLUDE]);
    if (statePtr->exact.onSlowObj != NULL) {
	Tcl_DecrRefCount(statePtr->exact.onSlowObj);
	statePtr->exact.onSlowObj = NULL;
    }
    if (run.slowMs > 0) {
	Tcl_Size n;

	Tcl_ListObjLength(NULL, objs[OBJ_ONSLOW], &n);
	if (n > 0) {
	    statePtr->exact.onSlowObj = objs[OBJ_ONSLOW];
	    Tcl_IncrRefCount(statePtr->exact.onSlowObj);
	}
    }
    memset(&statePtr->levels.counters, 0, sizeof(statePtr->levels.counters));
    statePtr->levels.stack.maxDepth = 0;
    ConnectLevels(statePtr);
    CprofNamingSetSubcommands(&statePtr->naming, objs[OBJ_SUBCOMMANDS]);
    CprofNamingSetInstances(&statePtr->naming, run.instances);
    statePtr->eventsOn = (run.mode != CPROF_MODE_COVERAGE);
    below = (run.scope != CPROF_SCOPE_INTERP && run.mode != CPROF_MODE_STACK)
	    ? CprofScopeListBelow(interp) : NULL;
    CprofSeedPrepare(interp);
    CprofCaptureInstall(statePtr);
    if (topScriptObj != NULL && !ciPtr->member) {
	PushTopScript(statePtr, topScriptObj);
    }

    /*
     * The frames running already (start called from inside procs, or
     * from an event handler) go on the stack, above the main script's.
     */

    if (run.seed) {
	CprofSeedFrames(statePtr);
    }

    /*
     * Coroutines suspended since before the start: their frames go back
     * above the command that resumes them, as Tcl's own frames show them
     * (the wrapper never saw them entered).
     */

    CprofSeedCoroutines(statePtr);
    CprofSetObjs(ciPtr->objs, objs);
    if (!ciPtr->asideBypass) {
	/*
	 * The program's own run: its latest profile kept aside while a
	 * request was served goes, as any latest profile would.
	 */

	CprofServeAsideDrop(ciPtr);
    }
    statePtr->running = 1;
    statePtr->paused = 0;
    statePtr->pausedNs = 0;
    statePtr->startNs = CprofMonoNs();
    statePtr->stopNs = 0;
    ciPtr->startWall = startWall;
    ciPtr->injected = cprofInjecting;
    ciPtr->unsaved = 1;
    statePtr->pollProc = Poll;
    CprofRunSetDeadline(ciPtr, statePtr->options.duration,
	    (uint64_t) statePtr->startNs);
    if (ciPtr->storePtr != NULL) {
	ciPtr->nextFlushNs = (uint64_t) statePtr->startNs
		+ (uint64_t) CprofRunDbFlushMs(&run) * 1000000;
	ciPtr->flushTimer = Tcl_CreateTimerHandler(
		CprofRunDbFirstWaitMs(ciPtr), CprofRunDbFlushTimerProc, ciPtr);
    }
    CprofRunDbUpdatePolling(ciPtr);
    if (below != NULL) {
	CprofScopeBegin(ciPtr, interp, below);
    }
    if (ciPtr->sessionPtr != NULL) {
	CprofExactJoinPeers(statePtr);
    }
    CprofSamplerOwnEnd(statePtr->samplerPtr, 0);
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofRunStartMember, CprofRunStopMember --
 *
 *	A run in an interpreter that a session of scope tree or process
 *	takes in (cmdscope.c), in that interpreter's thread: the session's
 *	options, the owner's anchors and compensation, no file. With a host
 *	(another profiled interpreter of the same thread, whose sampler
 *	samples the thread), the level stack is sampled by the host's
 *	sampler; else the interpreter samples its thread itself.
 *
 *----------------------------------------------------------------------
 */

int
CprofRunStartMember(
    CprofInterp *ciPtr,
    const CprofOptions *optsPtr,
    CprofInterp *ownerPtr,
    CprofInterp *hostPtr)
{
    CprofState *statePtr = &ciPtr->state;
    CprofOptions run = *optsPtr;
    CprofEvent *events = NULL;

    run.duration = 0;
    run.slowMs = 0;
    if (CprofExactNeedEvents(statePtr, &run)) {
	/*
	 * -events: a buffer of its own (the run's -eventlimit); without
	 * the room, the interpreter's calls are not in the trace.
	 */

	events = (CprofEvent *) attemptckalloc((size_t) run.eventLimit
		* sizeof(CprofEvent));
	if (events == NULL) {
	    run.events = 0;
	}
    }
    statePtr->calib = ownerPtr->state.calib;
    statePtr->calibKind = ownerPtr->state.calibKind;
    statePtr->callbackOffset = ownerPtr->state.callbackOffset;
    statePtr->options = run;
    statePtr->hostPtr = (hostPtr != NULL) ? &hostPtr->state : NULL;
    if (CprofModeSamples(run.mode)) {
	if (hostPtr == NULL) {
	    /*
	     * A thread of its own: its sampler reads its interpreter's
	     * frames with -capture frames.
	     */

	    StartFrames(statePtr);
	    if (StartSampling(statePtr) != TCL_OK) {
		StopFrames(statePtr);
		Tcl_ResetResult(statePtr->interp);
		statePtr->hostPtr = NULL;
		if (events != NULL) {
		    ckfree(events);
		}
		return TCL_ERROR;
	    }
	} else if (hostPtr->state.samplerPtr == NULL
		|| !CprofSamplerAddStack(hostPtr->state.samplerPtr,
		&statePtr->levels.stack, CprofNumLevelsPtr(statePtr->interp),
		ciPtr->interpId)) {
	    statePtr->hostPtr = NULL;
	    if (events != NULL) {
		ckfree(events);
	    }
	    return TCL_ERROR;
	}
    }
    CprofExactPrepare(statePtr, &run, events, ownerPtr->state.exact.inNs,
	    ownerPtr->state.exact.callNs);
    ClearData(statePtr);
    statePtr->exact.interpId = ciPtr->interpId;
    CprofNameHold(&statePtr->exact.refs, ciPtr->interpId);
    CprofExactJoinPeers(statePtr);
    memset(&statePtr->levels.counters, 0, sizeof(statePtr->levels.counters));
    statePtr->levels.stack.maxDepth = 0;
    ConnectLevels(statePtr);
    statePtr->eventsOn = (run.mode != CPROF_MODE_COVERAGE);
    CprofNamingSetInstances(&statePtr->naming, run.instances);
    CprofCaptureInstall(statePtr);
    statePtr->running = 1;
    statePtr->paused = 0;
    statePtr->pausedNs = 0;
    statePtr->startNs = CprofMonoNs();
    statePtr->stopNs = 0;
    ciPtr->startWall = CprofWallSeconds();
    ciPtr->unsaved = 1;
    ciPtr->nextRotateNs = 0;
    if (DrainBell(ciPtr)) {
	DeadlinePrepare(ciPtr);
	CprofRunArmDeadline(ciPtr);
    }
    statePtr->pollProc = Poll;
    CprofRunDbUpdatePolling(ciPtr);
    CprofSamplerOwnEnd(statePtr->samplerPtr, 0);
    return TCL_OK;
}

void
CprofRunStopMember(
    CprofInterp *ciPtr)
{
    CprofState *statePtr = &ciPtr->state;

    if (statePtr->running) {
	CprofRunStop(statePtr);
    }
}

int
CprofStartObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    if (objc % 2 != 1) {
	CprofWrongArgs(interp, 1, objv, "?-option value ...?");
	return TCL_ERROR;
    }
    return DoStart((CprofInterp *) clientData, interp, objc - 1, objv + 1);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofStopObjCmd, CprofPauseObjCmd, CprofResumeObjCmd, CprofResetObjCmd --
 *
 *	tclcprof::stop
 *	tclcprof::pause
 *	tclcprof::resume
 *	tclcprof::reset
 *
 *	Pause disarms the sampler and removes the trace, so that a paused
 *	profile costs nothing per command; commands entered before resume
 *	and still running after it are not on the stack.
 *
 *----------------------------------------------------------------------
 */

void
CprofRunStop(
    CprofState *statePtr)
{
    CprofInterp *ciPtr = (CprofInterp *) statePtr;

    /*
     * No deadline while stopping: what the stop evaluates (a flush's Tcl
     * code) gives the deadline's poll and handler a chance to run. What
     * the stop does before the timer is disarmed is the profiler's own
     * work, not sampled (the sampler goes with the disarm).
     */

    statePtr->deadlineNs = 0;
    (void) CprofSamplerOwn(statePtr->samplerPtr);
    if (ciPtr->sessionPtr != NULL && !ciPtr->member) {
	/*
	 * The owner of a session: its members stop first (those of this
	 * thread are sampled with its sampler).
	 */

	CprofScopeEnd(ciPtr);
    }
    if (statePtr->hostPtr != NULL) {
	CprofState *hostPtr = statePtr->hostPtr;

	if (hostPtr->samplerPtr != NULL) {
	    CprofDrain(hostPtr);
	    CprofSamplerRemoveStack(hostPtr->samplerPtr,
		    &statePtr->levels.stack);
	}
	if (CprofMemoryRunning(hostPtr)) {
	    /*
	     * Memory samples with this one's frames (whose names go with
	     * its stop) are the host's to take now.
	     */

	    CprofMemoryDrain(hostPtr);
	}
	statePtr->hostPtr = NULL;
	statePtr->levels.needDrainPtr = NULL;
    }
    CprofExactCloseAll(statePtr);
    CprofExactLeavePeers(statePtr);
    CprofMemoryStop(statePtr);
    CprofRunStopSampling(statePtr);
    StopFrames(statePtr);
    if (statePtr->drainTimer != NULL) {
	Tcl_DeleteTimerHandler(statePtr->drainTimer);
	statePtr->drainTimer = NULL;
    }
    CprofCaptureRemove(statePtr);
    CprofExactReleaseSites(statePtr);
    CprofEventsForget(statePtr);

    /*
     * Nothing of the capture uses the names it gave out any more (the
     * level stack is empty, the ring drained): those the profile does not
     * show go (naming.c).
     */

    CprofNamingClear(&statePtr->naming);
    statePtr->eventsOn = 0;
    statePtr->deadlineNs = 0;
    DeadlineArm(ciPtr, 0);
    if (ciPtr->durationTimer != NULL) {
	Tcl_DeleteTimerHandler(ciPtr->durationTimer);
	ciPtr->durationTimer = NULL;
    }
    statePtr->stopNs = CprofMonoNs();
    if (statePtr->paused) {
	statePtr->pausedNs += statePtr->stopNs - statePtr->pauseStartNs;
    }
    statePtr->running = 0;
    statePtr->paused = 0;
    CprofRunDbUpdatePolling(ciPtr);
    if (ciPtr->member) {
	CprofScopeMemberGone(ciPtr);
    }
}

/*
 * tclcprof::stop, pause and resume take no argument and need a run; pause
 * one that is not paused (PAUSE_NOT), resume one that is (PAUSE_IS).
 */

enum { PAUSE_ANY, PAUSE_NOT, PAUSE_IS };

static int
CheckRunning(
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[],
    CprofState *statePtr,
    int pause)
{
    if (objc != 1) {
	CprofWrongArgs(interp, 1, objv, NULL);
	return TCL_ERROR;
    }
    if (!statePtr->running) {
	return CprofStateError(interp, "profiling is not running", "STOPPED");
    }
    if (pause == PAUSE_NOT && statePtr->paused) {
	return CprofStateError(interp, "profiling is already paused", "PAUSED");
    }
    if (pause == PAUSE_IS && !statePtr->paused) {
	return CprofStateError(interp, "profiling is not paused", "NOTPAUSED");
    }
    return TCL_OK;
}

int
CprofStopObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofState *statePtr = &((CprofInterp *) clientData)->state;

    if (CheckRunning(interp, objc, objv, statePtr, PAUSE_ANY) != TCL_OK) {
	return TCL_ERROR;
    }
    if (((CprofInterp *) clientData)->member) {
	/*
	 * An interpreter a session took in: the whole session stops (its
	 * owner is told; this one stops now).
	 */

	CprofScopeEnd((CprofInterp *) clientData);
	return TCL_OK;
    }
    if (cprofInjecting) {
	/*
	 * The stop of "record -pid" (Ctrl-C or SIGTERM), by injection.
	 */

	statePtr->stoppedBy = "interrupt";
    }
    CprofRunStop(statePtr);

    /*
     * With -db, the run's last state is written: a failure is this
     * command's error, though profiling has stopped and the profile is
     * kept in memory (tclcprof::save can write it elsewhere).
     */

    return CprofRunDbFinish((CprofInterp *) clientData, interp, 0);
}

int
CprofPauseObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofState *statePtr = &((CprofInterp *) clientData)->state;
    int held;

    if (CheckRunning(interp, objc, objv, statePtr, PAUSE_NOT) != TCL_OK) {
	return TCL_ERROR;
    }
    held = CprofSamplerOwn(statePtr->samplerPtr);
    CprofExactCloseAll(statePtr);
    CprofExactLeavePeers(statePtr);
    PauseSampling(statePtr);
    CprofSamplerOwnEnd(statePtr->samplerPtr, held);
    CprofMemoryPause(statePtr, 1);
    CprofCaptureRemove(statePtr);
    CprofExactReleaseSites(statePtr);
    statePtr->paused = 1;
    statePtr->pauseStartNs = CprofMonoNs();
    return TCL_OK;
}

int
CprofResumeObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofState *statePtr = &((CprofInterp *) clientData)->state;
    int held;

    if (CheckRunning(interp, objc, objv, statePtr, PAUSE_IS) != TCL_OK) {
	return TCL_ERROR;
    }
    if (statePtr->deadlineNs != 0
	    && (uint64_t) statePtr->pauseStartNs >= statePtr->deadlineNs) {
	/*
	 * The run's -duration was up before the pause, unnoticed (the
	 * trace looks at the clock every 256 commands): it ends now.
	 */

	CprofRunStopByItself(statePtr);
	return TCL_OK;
    }
    held = CprofSamplerOwn(statePtr->samplerPtr);
    if (statePtr->samplerPtr != NULL
	    && CprofSamplerArm(interp, statePtr->samplerPtr) != TCL_OK) {
	CprofSamplerOwnEnd(statePtr->samplerPtr, held);
	return TCL_ERROR;
    }
    {
	Tcl_WideInt pausedNs = CprofMonoNs() - statePtr->pauseStartNs;

	statePtr->pausedNs += pausedNs;
	statePtr->paused = 0;

	/*
	 * -duration counts profiled time: push the deadline back.
	 */

	if (statePtr->deadlineNs != 0) {
	    CprofRunSetDeadline((CprofInterp *) statePtr,
		    (statePtr->deadlineNs + pausedNs - CprofMonoNs()) / 1e9,
		    (uint64_t) CprofMonoNs());
	}
    }
    CprofMemoryPause(statePtr, 0);
    ConnectLevels(statePtr);
    CprofCaptureInstall(statePtr);
    if (((CprofInterp *) statePtr)->sessionPtr != NULL) {
	CprofExactJoinPeers(statePtr);
    }
    CprofSamplerOwnEnd(statePtr->samplerPtr, held);
    return TCL_OK;
}

/*
 * -history: the data of the file just written goes, so that the next file
 * holds its own interval only (as reset, without touching the store).
 */

void
CprofRunClearInterval(
    CprofState *statePtr)
{
    int held = 0;

    if (statePtr->samplerPtr != NULL) {
	held = CprofSamplerOwn(statePtr->samplerPtr);
    }
    ClearData(statePtr);
    CprofExactRebase(statePtr);
    CprofSamplerOwnEnd(statePtr->samplerPtr, held);
    memset(&statePtr->levels.counters, 0,
	    sizeof(statePtr->levels.counters));
    statePtr->levels.stack.maxDepth = statePtr->levels.stack.depth;
    statePtr->pausedNs = 0;
    statePtr->startNs = CprofMonoNs();
}

int
CprofResetObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofState *statePtr = &((CprofInterp *) clientData)->state;
    int held = 0;

    if (objc != 1) {
	CprofWrongArgs(interp, 1, objv, NULL);
	return TCL_ERROR;
    }
    if (!((CprofInterp *) clientData)->asideBypass) {
	CprofServeAsideDrop((CprofInterp *) clientData);
    }

    /*
     * Counters and collected data go, samples waiting in the ring with
     * them; the live stack stays, since the commands on it are still
     * running.
     */

    if (statePtr->samplerPtr != NULL) {
	/*
	 * Mode both: samples copy the running frames' exact nodes, which
	 * the rebase renumbers. The handler records nothing while
	 * 'draining' is set (it counts the signal as the profiler's).
	 */

	held = CprofSamplerOwn(statePtr->samplerPtr);
    }
    ClearData(statePtr);
    CprofExactRebase(statePtr);
    CprofSamplerOwnEnd(statePtr->samplerPtr, held);
    if (((CprofInterp *) clientData)->storePtr != NULL) {
	CprofStoreClear(((CprofInterp *) clientData)->storePtr);
    }
    memset(&statePtr->levels.counters, 0,
	    sizeof(statePtr->levels.counters));
    statePtr->levels.stack.maxDepth = statePtr->levels.stack.depth;
    statePtr->pausedNs = 0;
    statePtr->startNs = CprofMonoNs();
    if (statePtr->paused) {
	statePtr->pauseStartNs = statePtr->startNs;
    }
    if (!statePtr->running) {
	/*
	 * Stopped: the data is gone, and nothing is left to lose.
	 */

	statePtr->stopNs = statePtr->startNs;
	((CprofInterp *) clientData)->unsaved = 0;
    }
    return TCL_OK;
}


/*
 * The capture's timed duties, every 256 commands.
 */

static void
Poll(
    CprofState *statePtr)
{
    CprofInterp *ciPtr = (CprofInterp *) statePtr;
    uint64_t now = (uint64_t) CprofMonoNs();

    if (ciPtr->rotating) {
	return;
    }
    if (ciPtr->member) {
	if (CprofScopeStopping(ciPtr)) {
	    CprofRunStopMember(ciPtr);
	} else if (CprofScopeIntervalAsked(ciPtr)) {
	    /*
	     * The owner's -history starts a new interval: what this member
	     * collected goes to the interval's file, and it starts again.
	     */

	    CprofScopePublishInterval(ciPtr);
	    CprofRunClearInterval(statePtr);
	}
	return;
    }
    if (statePtr->deadlineNs != 0 && now >= statePtr->deadlineNs) {
	CprofRunStopByItself(statePtr);
	return;
    }
    CprofRunDbPoll(ciPtr, now);
}
/*
 *----------------------------------------------------------------------
 *
 * CprofProfileObjCmd --
 *
 *	tclcprof::profile ?-option value ...? script
 *
 *	Evaluate script (NRE-enabled) under profiling and return its result;
 *	profiling stops however the script ends.
 *
 *----------------------------------------------------------------------
 */

static int
ProfileDone(
    ClientData data[],
    Tcl_Interp *interp,
    int result)
{
    CprofState *statePtr = (CprofState *) data[0];
    Tcl_InterpState saved;
    int code;

    if (statePtr->running) {
	CprofRunStop(statePtr);
    }

    /*
     * A failure to write -db is profile's error, unless the script failed
     * (its error is the one to see).
     */

    saved = Tcl_SaveInterpState(interp, result);
    code = CprofRunDbFinish((CprofInterp *) statePtr, interp, 0);
    if (code != TCL_OK && result == TCL_OK) {
	Tcl_DiscardInterpState(saved);
	return code;
    }
    if (code != TCL_OK) {
	Tcl_Obj *msgObj = Tcl_GetObjResult(interp);

	Tcl_IncrRefCount(msgObj);
	result = Tcl_RestoreInterpState(interp, saved);
	Tcl_AppendObjToErrorInfo(interp, Tcl_ObjPrintf(
		"\n    (and tclcprof could not write the profile: %s)",
		Tcl_GetString(msgObj)));
	Tcl_DecrRefCount(msgObj);
	return result;
    }
    return Tcl_RestoreInterpState(interp, saved);
}

int
CprofProfileNRCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofInterp *ciPtr = (CprofInterp *) clientData;

    if (objc < 2 || objc % 2 != 0) {
	CprofWrongArgs(interp, 1, objv, "?-option value ...? script");
	return TCL_ERROR;
    }
    if (DoStart(ciPtr, interp, objc - 2, objv + 1) != TCL_OK) {
	return TCL_ERROR;
    }
    Tcl_NRAddCallback(interp, ProfileDone, &ciPtr->state, NULL, NULL, NULL);
    return Tcl_NREvalObj(interp, objv[objc - 1], 0);
}

int
CprofProfileObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    return Tcl_NRCallObjProc(interp, CprofProfileNRCmd, clientData, objc, objv);
}
