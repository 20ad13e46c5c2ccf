/*
 * cmdmeta.c --
 *
 *	What a run says about itself, as dicts: its meta (mode, options,
 *	clock, figures of the sampler and of exact timing), as the data
 *	command, save and every flush to a -db write it, and the sampling
 *	and exact parts that status shows too; and the profile value the
 *	meta heads (CprofProfileValue), which data, save, the flushes and
 *	a session's members (cmdscope.c, cmdscopedata.c) take.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "cmdInt.h"
#include <string.h>
#include <time.h>

/*
 * A quantile of the handler-time histogram, in ns (bucket midpoint).
 */

static double
HistQuantile(
    const CprofSamplerCounters *cPtr,
    double q)
{
    uint64_t n = 0, seen = 0, want;
    int i;

    for (i = 0; i < CPROF_HIST_BUCKETS; i++) {
	n += cPtr->handlerHist[i];
    }
    if (n == 0) {
	return 0;
    }
    want = (uint64_t) (q * (double) n);
    if (want >= n) {
	want = n - 1;
    }
    for (i = 0; i < CPROF_HIST_BUCKETS; i++) {
	seen += cPtr->handlerHist[i];
	if (seen > want) {
	    double lo, hi;

	    CprofHistBounds(i, &lo, &hi);
	    return (lo + hi) / 2;
	}
    }
    return 0;
}

Tcl_Obj *
CprofSamplingDict(
    CprofState *statePtr)
{
    Tcl_Obj *dictObj = Tcl_NewDictObj(), *dropsObj, *truncObj, *handlerObj;
    CprofSampler *sPtr = statePtr->samplerPtr;
    const CprofSamplerCounters *cPtr;
    double achieved, rate, secs;
    int clock;
    Tcl_WideInt spliced, total;

    if (sPtr != NULL) {
	secs = CprofSamplerSeconds(sPtr);
	cPtr = &sPtr->counters;
	achieved = secs > 0 ? cPtr->signals / secs : 0;
	rate = sPtr->rate;
	clock = sPtr->clock;
    } else {
	cPtr = &statePtr->lastCounters;
	achieved = statePtr->lastAchieved;
	secs = statePtr->lastSeconds;
	rate = statePtr->lastRate;
	clock = statePtr->lastClock;
    }
    PUT(dictObj, "active", Tcl_NewBooleanObj(sPtr != NULL && sPtr->armed));
    PUT(dictObj, "clock", Tcl_NewStringObj(cprofClockNames[clock], -1));
    PUT(dictObj, "signal", Tcl_NewStringObj(CprofSignalName(), -1));
    PUT(dictObj, "rate_requested", Tcl_NewDoubleObj(rate));
    PUT(dictObj, "rate_achieved",
	    Tcl_NewDoubleObj(((int) (achieved * 10 + 0.5)) / 10.0));
    PUT(dictObj, "clock_seconds",
	    Tcl_NewDoubleObj(((Tcl_WideInt) (secs * 1e6 + 0.5)) / 1e6));
    PUT(dictObj, "signals", Tcl_NewWideIntObj((Tcl_WideInt) cPtr->signals));
    PUT(dictObj, "samples", Tcl_NewWideIntObj((Tcl_WideInt) cPtr->samples
	    - statePtr->ownLeafCount));
    PUT(dictObj, "weight", Tcl_NewWideIntObj((Tcl_WideInt) cPtr->weight));
    PUT(dictObj, "aggregated",
	    Tcl_NewWideIntObj((Tcl_WideInt) statePtr->tree.weight));
    PUT(dictObj, "spooled", Tcl_NewWideIntObj((Tcl_WideInt)
	    __atomic_load_n(&cPtr->spooled, __ATOMIC_RELAXED)));
    dropsObj = Tcl_NewDictObj();
    PUT(dropsObj, "ring_full",
	    Tcl_NewWideIntObj((Tcl_WideInt) cPtr->dropsFull));
    PUT(dropsObj, "reentered",
	    Tcl_NewWideIntObj((Tcl_WideInt) cPtr->dropsBusy));
    PUT(dropsObj, "profiler", Tcl_NewWideIntObj((Tcl_WideInt) cPtr->overhead
	    + statePtr->ownLeafWeight));
    PUT(dropsObj, "forking",
	    Tcl_NewWideIntObj((Tcl_WideInt) cPtr->dropsFork));
    PUT(dictObj, "drops", dropsObj);
    truncObj = Tcl_NewDictObj();
    PUT(truncObj, "native",
	    Tcl_NewWideIntObj((Tcl_WideInt) cPtr->nativeTrunc));
    PUT(truncObj, "tcl", Tcl_NewWideIntObj((Tcl_WideInt) cPtr->tclTrunc));
    PUT(truncObj, "no_signal_frame",
	    Tcl_NewWideIntObj((Tcl_WideInt) cPtr->noSigframe));
    PUT(truncObj, "tree_nodes",
	    Tcl_NewWideIntObj((Tcl_WideInt) statePtr->tree.truncatedNodes));
    PUT(dictObj, "truncated", truncObj);
    PUT(dictObj, "foreign_signals",
	    Tcl_NewWideIntObj((Tcl_WideInt) CprofForeignSignals()));
    spliced = statePtr->splicedSamples;
    total = spliced + statePtr->unsplicedSamples;
    PUT(dictObj, "splice_rate", Tcl_NewDoubleObj(total
	    ? ((Tcl_WideInt) (10000.0 * spliced / total)) / 10000.0 : 1.0));
    PUT(dictObj, "unmatched_frames",
	    Tcl_NewWideIntObj(statePtr->unmatchedFrames));
    PUT(dictObj, "short_native_stacks",
	    Tcl_NewWideIntObj(statePtr->shortSamples));
    PUT(dictObj, "drains_put_off", Tcl_NewWideIntObj(statePtr->drainsPutOff));
    handlerObj = Tcl_NewDictObj();
    PUT(handlerObj, "mean_ns", Tcl_NewWideIntObj(cPtr->signals
	    ? (Tcl_WideInt) (cPtr->handlerNs / cPtr->signals) : 0));
    PUT(handlerObj, "median_ns",
	    Tcl_NewWideIntObj((Tcl_WideInt) HistQuantile(cPtr, 0.5)));
    PUT(handlerObj, "p99_ns",
	    Tcl_NewWideIntObj((Tcl_WideInt) HistQuantile(cPtr, 0.99)));
    PUT(dictObj, "handler", handlerObj);
    PUT(dictObj, "nodes", Tcl_NewIntObj(statePtr->tree.numNodes));
    return dictObj;
}

/*
 * The exact-timing part of status and of a profile's meta.
 */

Tcl_Obj *
CprofExactDict(
    CprofState *statePtr)
{
    CprofExact *exactPtr = &statePtr->exact;
    Tcl_Obj *dictObj = Tcl_NewDictObj(), *subObj;

    PUT(dictObj, "active", Tcl_NewBooleanObj(statePtr->running
	    && !statePtr->paused && (exactPtr->on || exactPtr->coverage)));
    PUT(dictObj, "calls", Tcl_NewWideIntObj((Tcl_WideInt) exactPtr->calls));
    PUT(dictObj, "nodes", Tcl_NewIntObj(exactPtr->numNodes));
    PUT(dictObj, "truncated_nodes",
	    Tcl_NewWideIntObj((Tcl_WideInt) exactPtr->truncatedNodes));
    subObj = Tcl_NewDictObj();
    PUT(subObj, "inside_ns", Tcl_NewWideIntObj(
	    CprofExactTicksToNs(statePtr, exactPtr->inNs)));
    PUT(subObj, "call_ns", Tcl_NewWideIntObj(
	    CprofExactTicksToNs(statePtr, exactPtr->callNs)));
    PUT(dictObj, "compensation", subObj);
    PUT(dictObj, "unfinished",
	    Tcl_NewWideIntObj((Tcl_WideInt) exactPtr->openFrames));
    PUT(dictObj, "suspended_ns", Tcl_NewWideIntObj(CprofExactTicksToNs(
	    statePtr, (int64_t) exactPtr->suspendedNs)));
    PUT(dictObj, "capture_ns", Tcl_NewWideIntObj(CprofExactTicksToNs(
	    statePtr, (int64_t) exactPtr->captureNs)));
    PUT(dictObj, "sites", Tcl_NewIntObj(exactPtr->numSites));
    PUT(dictObj, "site_keys", Tcl_NewIntObj(exactPtr->numHeld));
    PUT(dictObj, "no_location",
	    Tcl_NewWideIntObj((Tcl_WideInt) exactPtr->noLocation));
    subObj = Tcl_NewDictObj();
    PUT(subObj, "recorded", Tcl_NewIntObj(exactPtr->numEvents));
    PUT(subObj, "dropped",
	    Tcl_NewWideIntObj((Tcl_WideInt) exactPtr->eventsDropped));
    PUT(dictObj, "events", subObj);
    PUT(dictObj, "slow_calls",
	    Tcl_NewWideIntObj((Tcl_WideInt) exactPtr->slowCalls));
    return dictObj;
}

/*
 * Seconds of the sampler's clock while armed.
 */

double
CprofSamplerSeconds(
    CprofSampler *sPtr)
{
    uint64_t ns = (sPtr->clock == CPROF_CLOCK_CPU) ? sPtr->cpuNs
	    : sPtr->wallNs;

    if (sPtr->armed) {
	ns += (sPtr->clock == CPROF_CLOCK_CPU)
		? CprofClockNs(CLOCK_THREAD_CPUTIME_ID) - sPtr->startCpuNs
		: CprofClockNs(CLOCK_MONOTONIC) - sPtr->startWallNs;
    }
    return ns / 1e9;
}

/*
 * The value of a key of a dict built here (the key is there).
 */

static Tcl_Obj *
DictValue(
    Tcl_Obj *dictObj,
    const char *key)
{
    Tcl_Obj *valueObj = CprofDictGet(dictObj, key);

    return valueObj ? valueObj : Tcl_NewObj();
}

/*
 * A profile's meta: what the run was and what it measured.
 */

Tcl_Obj *
CprofMetaDict(
    CprofInterp *ciPtr)
{
    CprofState *statePtr = &ciPtr->state;
    CprofExact *exactPtr = &statePtr->exact;
    int mode = statePtr->options.mode;
    Tcl_Obj *metaObj, *samplingObj;
    Tcl_WideInt elapsed;

    elapsed = (statePtr->running ? CprofMonoNs() : statePtr->stopNs)
	    - statePtr->startNs - statePtr->pausedNs;
    if (statePtr->paused) {
	elapsed -= CprofMonoNs() - statePtr->pauseStartNs;
    }
    metaObj = Tcl_NewDictObj();
    PUT(metaObj, "mode", Tcl_NewStringObj(cprofModeNames[mode], -1));
    PUT(metaObj, "clock",
	    Tcl_NewStringObj(cprofClockNames[statePtr->options.clock], -1));
    PUT(metaObj, "elapsed", Tcl_NewDoubleObj(elapsed > 0 ? elapsed / 1e9
	    : 0.0));
    PUT(metaObj, "label", ciPtr->objs[OBJ_LABEL]);
    PUT(metaObj, "running", Tcl_NewBooleanObj(statePtr->running));
    PUT(metaObj, "stopped_by", Tcl_NewStringObj(statePtr->stoppedBy
	    ? statePtr->stoppedBy : "", -1));
    PUT(metaObj, "subcommands", ciPtr->objs[OBJ_SUBCOMMANDS]);
    if (ciPtr->injected) {
	/*
	 * Started in a running process by "record -pid" (injection).
	 */

	PUT(metaObj, "attach", Tcl_NewStringObj("injected", -1));
    }
    if (statePtr->captureNote[0] != '\0') {
	/*
	 * The capture asked for is not the one used (status's capture
	 * note): the report's header says why.
	 */

	PUT(metaObj, "capture_note",
		Tcl_NewStringObj(statePtr->captureNote, -1));
    }
    if (CprofModeSamples(mode)) {
	samplingObj = CprofSamplingDict(statePtr);
	PUT(metaObj, "rate_requested", DictValue(samplingObj,
		"rate_requested"));
	PUT(metaObj, "rate_achieved", DictValue(samplingObj,
		"rate_achieved"));
	PUT(metaObj, "samples",
		Tcl_NewWideIntObj((Tcl_WideInt) statePtr->tree.samples));
	PUT(metaObj, "weight",
		Tcl_NewWideIntObj((Tcl_WideInt) statePtr->tree.weight));
	PUT(metaObj, "native",
		Tcl_NewStringObj(cprofNativeNames[statePtr->options.native], -1));
	PUT(metaObj, "sampling", samplingObj);
	if (mode == CPROF_MODE_SAMPLE) {
	    PUT(metaObj, "lines", Tcl_NewBooleanObj(statePtr->options.lines));
	}
    }
    if (mode != CPROF_MODE_SAMPLE && mode != CPROF_MODE_MEMORY) {
	PUT(metaObj, "calls", Tcl_NewWideIntObj((Tcl_WideInt)
		(mode == CPROF_MODE_COVERAGE ? statePtr->levels.counters.enters
		: (Tcl_WideInt) exactPtr->calls)));
	PUT(metaObj, "lines", Tcl_NewBooleanObj(statePtr->options.lines));
	PUT(metaObj, "include", ciPtr->objs[OBJ_INCLUDE]);
	PUT(metaObj, "exclude", ciPtr->objs[OBJ_EXCLUDE]);
    }
    if (statePtr->options.memory) {
	PUT(metaObj, "memory", CprofMemoryDict(statePtr));
	PUT(metaObj, "native",
		Tcl_NewStringObj(cprofNativeNames[statePtr->options.native], -1));
    }
    if (CprofModeExact(mode)) {
	PUT(metaObj, "compensate",
		Tcl_NewBooleanObj(statePtr->options.compensate));
	PUT(metaObj, "exact", CprofExactDict(statePtr));
    }
    if (ciPtr->sessionPtr != NULL && !ciPtr->member) {
	CprofCmdHooksGet()->scopeMeta(ciPtr, metaObj);
    }
    return metaObj;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofProfileValue --
 *
 *	The profile of this interpreter's run (its thread's, with its
 *	children's frames), as a value; the data of members of a session
 *	are not in it (cmdscope.c puts them together). Memory profiles: the
 *	view (-1: not asked for, alloc) and unit asked for.
 *
 *----------------------------------------------------------------------
 */

static void
PutTimeline(
    Tcl_Obj *dictObj,
    const char *key,
    Tcl_Obj *timelineObj)
{
    if (timelineObj != NULL) {
	PUT(dictObj, key, timelineObj);
    }
}

Tcl_Obj *
CprofProfileValue(
    CprofInterp *ciPtr,
    int view,
    int count)
{
    static const char *const viewNames[] = {"alloc", "live", "peak"};
    CprofState *statePtr = &ciPtr->state;
    CprofExact *exactPtr = &statePtr->exact;
    int mode = statePtr->options.mode;
    Tcl_Obj *resultObj;

    if (statePtr->samplerPtr != NULL || statePtr->memPtr != NULL) {
	CprofDrain(statePtr);
    }
    resultObj = Tcl_NewDictObj();
    if (statePtr->options.memory
	    && (mode == CPROF_MODE_MEMORY || view >= 0 || count)) {
	/*
	 * The memory tree (with time samples too, when a view is asked
	 * for).
	 */

	Tcl_Obj *metaObj = CprofMetaDict(ciPtr);

	PUT(metaObj, "mode", Tcl_NewStringObj("memory", -1));
	PUT(metaObj, "view", Tcl_NewStringObj(viewNames[view < 0 ? 0
		: view], -1));
	PUT(metaObj, "unit", Tcl_NewStringObj(count ? "objects" : "bytes",
		-1));
	PUT(resultObj, "meta", metaObj);
	PUT(resultObj, "tree", CprofMemoryTreeObj(statePtr,
		view < 0 ? 0 : view, count));
	PutTimeline(resultObj, "timeline", CprofMemoryTimelineObj(statePtr));
	return resultObj;
    }
    PUT(resultObj, "meta", CprofMetaDict(ciPtr));
    switch (mode) {
    case CPROF_MODE_SAMPLE:
	PUT(resultObj, "tree", CprofTreeToObj(&statePtr->tree, NULL));
	PutTimeline(resultObj, "timeline",
		CprofTimelineObj(&statePtr->tree.timeline));
	if (statePtr->options.memory) {
	    /*
	     * -mode {sample memory}: the memory tree too, as a file keeps
	     * it (bytes allocated, each node with its figures).
	     */

	    PUT(resultObj, "memory", CprofMemoryTreeObj(statePtr, 0, 0));
	    PutTimeline(resultObj, "memory_timeline",
		    CprofMemoryTimelineObj(statePtr));
	}
	break;
    case CPROF_MODE_BOTH:
	PUT(resultObj, "tree", CprofTreeToObj(&statePtr->tree, exactPtr));
	PutTimeline(resultObj, "timeline",
		CprofTimelineObj(&statePtr->tree.timeline));
	PUT(resultObj, "exact", CprofExactTreeObj(exactPtr,
		ciPtr->sessionPtr != NULL));
	break;
    case CPROF_MODE_EXACT:
	PUT(resultObj, "tree", CprofExactTreeObj(exactPtr,
		ciPtr->sessionPtr != NULL));
	break;
    case CPROF_MODE_COVERAGE: {
	Tcl_Obj *rootObj = Tcl_NewDictObj();

	PUT(rootObj, "name", Tcl_NewObj());
	PUT(rootObj, "kind", Tcl_NewStringObj("root", -1));
	PUT(rootObj, "self", Tcl_NewIntObj(0));
	PUT(rootObj, "total", Tcl_NewIntObj(0));
	PUT(rootObj, "children", Tcl_NewObj());
	PUT(resultObj, "tree", rootObj);
	break;
    }
    }
    if (mode != CPROF_MODE_SAMPLE) {
	if (statePtr->options.lines && mode != CPROF_MODE_COVERAGE) {
	    PUT(resultObj, "lines", CprofExactLinesObj(exactPtr));
	}
	if (statePtr->options.events) {
	    PUT(resultObj, "events", CprofExactEventsObj(exactPtr));
	}
	PUT(resultObj, "coverage", CprofExactCoverageObj(statePtr));
    }
    if (statePtr->handlers.num > 0) {
	PUT(resultObj, "handlers", CprofEventsObj(statePtr));
    }
    return resultObj;
}
