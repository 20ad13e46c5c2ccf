/*
 * drainmemory.c --
 *
 *	Memory profiles: the life cycle of a run's memory hooks
 *	(unix/hookmem.c) and the aggregation of what they record into the
 *	memory tree, in normal context in the profiled thread.
 *
 *	A sampled allocation is spliced and named as a time sample is
 *	(CprofAddSampleTo, into a tree of its own) and weighed so that
 *	totals are unbiased: sampled by bytes with a Poisson process of
 *	mean R, an allocation of s bytes is sampled with probability
 *	p = 1 - exp(-s/R), so it stands for 1/p allocations of s/p bytes.
 *
 *	Each node of the memory tree has figures of its own (those of the
 *	samples that end there): bytes and objects allocated, bytes and
 *	objects live (allocated and not freed yet), and live at the moment
 *	the whole profile's live bytes were highest. The last is kept
 *	without copying the tree at each new high: a node's figure is
 *	saved, stamped with the moment of the high, at its first change
 *	after that moment (Touch).
 *
 *	The profile value has the six figures on each node (alloc_bytes,
 *	alloc_objects, live_bytes, live_objects, peak_bytes, peak_objects),
 *	and self/total for the view asked for (data -view, -count).
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "cmdInt.h"
#include <math.h>
#include <string.h>

typedef struct MemFig {
    double allocBytes, allocObjects;
    double liveBytes, liveObjects;
    double peakBytes, peakObjects;	/* Live at peakStamp. */
    uint64_t changedAt;		/* Event of the last change of live. */
    uint64_t peakStamp;		/* The high the peak figures are of. */
} MemFig;

/*
 * One drain's samples of a shared stack (hookmem.c keeps each stack of
 * sampled allocations once; a record points into it). The first is
 * spliced and named and its node kept; the others take that node, and
 * are added to the tree together at the end of the drain.
 */

typedef struct MemBatch {
    const uintptr_t *stack;	/* The stack's return addresses (its
				 * identity); NULL: a free slot. */
    CprofMemRec *recPtr;	/* Its first record in the drain. */
    int node;
    uint32_t more;		/* Samples of it after the first. */
} MemBatch;

typedef struct CprofMemory {
    CprofTree tree;
    MemFig *figs;		/* Per node of the tree. */
    int capFigs;
    int running;		/* The hooks are in for this state. */
    CprofSampler *idlePtr;	/* The thread's sampler record when no
				 * timer samples it (mode memory alone). */
    volatile int *drainPtr;	/* The flag the hooks raise. */
    int64_t rate;		/* -memrate. */
    uint64_t seq;		/* Events drained. */
    uint64_t peakSeq;		/* The event of the highest live bytes. */
    double liveBytes, liveObjects;	/* Whole profile, estimated. */
    double peakBytes, peakObjects;
    double allocBytes, allocObjects;
    uint64_t samples;		/* Sampled allocations drained. */
    uint64_t frees;		/* Frees of sampled blocks drained. */
    CprofMemTotals totals;	/* The hooks' counts, at stop (while
				 * running they are read anew). */
    CprofSample *scratch;	/* A sample built from a record. */
    MemBatch *batch;		/* Open addressing, 1 << batchBits slots */
    int batchBits, batchUsed;	/* (empty between drains). */
} CprofMemory;

static const char *const viewNames[] = {"alloc", "live", "peak", NULL};

/*
 *----------------------------------------------------------------------
 *
 * Figures --
 *
 *----------------------------------------------------------------------
 */

/*
 * Figures from..to-1 made empty (no peak saved).
 */

static void
FigsEmpty(
    MemFig *figs,
    int from,
    int to)
{
    int i;

    memset(figs + from, 0, (to - from) * sizeof(MemFig));
    for (i = from; i < to; i++) {
	figs[i].peakStamp = UINT64_MAX;
    }
}

static MemFig *
Fig(
    CprofMemory *mPtr,
    int node)
{
    if (node >= mPtr->capFigs) {
	int cap = mPtr->capFigs ? mPtr->capFigs : 256;

	while (cap <= node) {
	    cap *= 2;
	}
	mPtr->figs = (MemFig *) ckrealloc(mPtr->figs, cap * sizeof(MemFig));
	FigsEmpty(mPtr->figs, mPtr->capFigs, cap);
	mPtr->capFigs = cap;
    }
    return &mPtr->figs[node];
}

/*
 * Before a node's live figures change: keep what they were at the last
 * high, if they have not changed since.
 */

static void
Touch(
    CprofMemory *mPtr,
    MemFig *fPtr)
{
    if (fPtr->changedAt <= mPtr->peakSeq
	    && fPtr->peakStamp != mPtr->peakSeq) {
	fPtr->peakBytes = fPtr->liveBytes;
	fPtr->peakObjects = fPtr->liveObjects;
	fPtr->peakStamp = mPtr->peakSeq;
    }
    fPtr->changedAt = mPtr->seq;
}

static void
PeakValues(
    CprofMemory *mPtr,
    const MemFig *fPtr,
    double *bytesPtr,
    double *objectsPtr)
{
    if (fPtr->changedAt <= mPtr->peakSeq) {
	*bytesPtr = fPtr->liveBytes;
	*objectsPtr = fPtr->liveObjects;
    } else if (fPtr->peakStamp == mPtr->peakSeq) {
	*bytesPtr = fPtr->peakBytes;
	*objectsPtr = fPtr->peakObjects;
    } else {
	*bytesPtr = *objectsPtr = 0;
    }
}

static void
ClearFigures(
    CprofMemory *mPtr)
{
    /*
     * The tree's arrays and the figures' are kept for the next run (up to
     * CPROF_KEEP_BYTES each): grown during it, they were allocated between
     * the blocks of the program.
     */

    CprofTreeReset(&mPtr->tree);
    mPtr->tree.timeline.manual = 1;	/* Bytes, added by the drain. */
    if (mPtr->figs != NULL
	    && (size_t) mPtr->capFigs * sizeof(MemFig) > CPROF_KEEP_BYTES) {
	ckfree(mPtr->figs);
	mPtr->figs = NULL;
	mPtr->capFigs = 0;
    }
    if (mPtr->figs != NULL) {
	FigsEmpty(mPtr->figs, 0, mPtr->capFigs);
    }
    mPtr->seq = mPtr->peakSeq = 0;
    mPtr->liveBytes = mPtr->liveObjects = 0;
    mPtr->peakBytes = mPtr->peakObjects = 0;
    mPtr->allocBytes = mPtr->allocObjects = 0;
    mPtr->samples = mPtr->frees = 0;
    memset(&mPtr->totals, 0, sizeof(mPtr->totals));
}

/*
 *----------------------------------------------------------------------
 *
 * CprofMemoryStart, CprofMemoryStop, CprofMemoryClear, CprofMemoryFree --
 *
 *	Start: hooks in, a fresh tree. The thread's sampler record is the
 *	run's armed sampler when time samples are taken too, else one
 *	without a timer (CprofSamplerCreateIdle), attached to the thread so
 *	that the hooks find its level stack. Stop: drain, hooks out; the
 *	tree stays until the next run. Clear: reset (records of blocks
 *	live now are dropped with the figures: their frees are not seen).
 *
 *----------------------------------------------------------------------
 */

int
CprofMemoryStart(
    CprofState *statePtr)
{
    CprofMemory *mPtr = statePtr->memPtr;
    Tcl_Interp *interp = statePtr->interp;
    char msg[160];

    CprofDrainSetMemory(CprofMemoryDrain);
    if (mPtr == NULL) {
	mPtr = (CprofMemory *) ckalloc(sizeof(CprofMemory));
	memset(mPtr, 0, sizeof(CprofMemory));
	CprofTreeInit(&mPtr->tree);
	mPtr->scratch = (CprofSample *) ckalloc(sizeof(CprofSample));
	memset(mPtr->scratch, 0, sizeof(CprofSample));
	statePtr->memPtr = mPtr;
    }
    ClearFigures(mPtr);
    if (statePtr->samplerPtr != NULL) {
	mPtr->drainPtr = &statePtr->samplerPtr->needDrain;
    } else {
	if (CprofSamplerCreateIdle(interp, &statePtr->levels.stack,
		CprofNumLevelsPtr(interp), &mPtr->idlePtr) != TCL_OK) {
	    return TCL_ERROR;
	}
	mPtr->idlePtr->framesPtr = statePtr->framesPtr;
	CprofSamplerAttach(mPtr->idlePtr);
	mPtr->drainPtr = &mPtr->idlePtr->needDrain;
    }
    mPtr->rate = statePtr->options.memRate;
    if (!CprofMemStart(mPtr->rate, mPtr->drainPtr, msg, sizeof(msg))) {
	if (mPtr->idlePtr != NULL) {
	    CprofSamplerDestroy(mPtr->idlePtr);
	    mPtr->idlePtr = NULL;
	}
	Tcl_SetObjResult(interp, Tcl_ObjPrintf(
		"cannot profile memory: %s", msg));
	Tcl_SetErrorCode(interp, "TCLCPROF", "NATIVE", NULL);
	return TCL_ERROR;
    }
    mPtr->running = 1;
    return TCL_OK;
}

volatile int *
CprofMemoryDrainFlag(
    CprofState *statePtr)
{
    CprofMemory *mPtr = statePtr->memPtr;

    return (mPtr != NULL && mPtr->running) ? mPtr->drainPtr : NULL;
}

int
CprofMemoryRunning(
    CprofState *statePtr)
{
    return statePtr->memPtr != NULL && statePtr->memPtr->running;
}

/*
 * Paused: allocations are not counted; frees of sampled blocks still are
 * (so that no stale address stays in the table).
 */

void
CprofMemoryPause(
    CprofState *statePtr,
    int paused)
{
    if (CprofMemoryRunning(statePtr)) {
	CprofMemPause(paused);
	if (paused) {
	    CprofMemoryDrain(statePtr);
	}
    }
}

void
CprofMemoryStop(
    CprofState *statePtr)
{
    CprofMemory *mPtr = statePtr->memPtr;

    if (mPtr == NULL || !mPtr->running) {
	return;
    }
    CprofMemStop();
    CprofMemoryDrain(statePtr);
    CprofMemGetTotals(&mPtr->totals);
    mPtr->running = 0;
    mPtr->drainPtr = NULL;
    if (mPtr->idlePtr != NULL) {
	CprofSamplerDestroy(mPtr->idlePtr);
	mPtr->idlePtr = NULL;
    }
}

void
CprofMemoryClear(
    CprofState *statePtr)
{
    CprofMemory *mPtr = statePtr->memPtr;

    if (mPtr == NULL) {
	return;
    }
    if (mPtr->running) {
	CprofMemClear();
    }
    ClearFigures(mPtr);
}

void
CprofMemoryFree(
    CprofState *statePtr)
{
    CprofMemory *mPtr = statePtr->memPtr;

    if (mPtr == NULL) {
	return;
    }
    if (mPtr->running) {
	CprofMemStop();
	CprofMemClear();
	mPtr->running = 0;
	if (mPtr->idlePtr != NULL) {
	    CprofSamplerDestroy(mPtr->idlePtr);
	}
    }
    CprofTreeFree(&mPtr->tree);
    if (mPtr->figs != NULL) {
	ckfree(mPtr->figs);
    }
    ckfree(mPtr->scratch);
    if (mPtr->batch != NULL) {
	ckfree(mPtr->batch);
    }
    ckfree(mPtr);
    statePtr->memPtr = NULL;
}

static Tcl_WideInt	Round(double v);

/*
 *----------------------------------------------------------------------
 *
 * CprofMemoryDrain --
 *
 *	Add what the hooks queued to the memory tree, in the order it
 *	happened. The profiler's own allocations meanwhile are not counted.
 *
 *----------------------------------------------------------------------
 */

static int
AddRecord(
    CprofState *statePtr,
    CprofMemory *mPtr,
    const CprofMemRec *recPtr,
    uint32_t count)
{
    CprofSample *sPtr = mPtr->scratch;

    sPtr->weight = count;
    sPtr->count = count;
    sPtr->flags = recPtr->flags;
    sPtr->labels = recPtr->labels;
    sPtr->timeNs = 0;
    sPtr->nNative = recPtr->nNative;
    sPtr->nTcl = recPtr->nTcl;
    memcpy(sPtr->ip, recPtr->ip, recPtr->nNative * sizeof(uintptr_t));
    memcpy(sPtr->cfa, recPtr->cfa, recPtr->nNative * sizeof(uintptr_t));
    memcpy(sPtr->tcl, recPtr->tcl, recPtr->nTcl * sizeof(CprofTclRef));
    if (sPtr->nNative > 0) {
	sPtr->ip[0]--;
    }
    return CprofAddSampleTo(statePtr, &mPtr->tree, sPtr);
}

/*
 * The slot of a shared stack in the drain's batch (made empty if there
 * is none: its 'stack' NULL), from the home slot BatchHome gives.
 */

static inline uint32_t
BatchHome(
    const uintptr_t *stack,
    uint32_t mask)
{
    return (uint32_t) (((uintptr_t) stack >> 3) * 0x9e3779b97f4a7c15ull
	    >> 40) & mask;
}

static MemBatch *
BatchSlot(
    CprofMemory *mPtr,
    const uintptr_t *stack)
{
    uint32_t mask, i;

    if (mPtr->batch == NULL || 2 * (mPtr->batchUsed + 1)
	    > (1 << mPtr->batchBits)) {
	MemBatch *old = mPtr->batch;
	int oldSize = old ? 1 << mPtr->batchBits : 0, j;

	mPtr->batchBits = old ? mPtr->batchBits + 1 : 6;
	mPtr->batch = (MemBatch *) ckalloc(
		sizeof(MemBatch) << mPtr->batchBits);
	memset(mPtr->batch, 0, sizeof(MemBatch) << mPtr->batchBits);
	mask = (1u << mPtr->batchBits) - 1;
	for (j = 0; j < oldSize; j++) {
	    if (old[j].stack != NULL) {
		i = BatchHome(old[j].stack, mask);
		while (mPtr->batch[i].stack != NULL) {
		    i = (i + 1) & mask;
		}
		mPtr->batch[i] = old[j];
	    }
	}
	if (old != NULL) {
	    ckfree(old);
	}
    }
    mask = (1u << mPtr->batchBits) - 1;
    for (i = BatchHome(stack, mask); mPtr->batch[i].stack != NULL;
	    i = (i + 1) & mask) {
	if (mPtr->batch[i].stack == stack) {
	    break;
	}
    }
    return &mPtr->batch[i];
}

/*
 * The end of a drain: each batched stack's later samples added to the
 * tree at once (what the splice counts, once per call, counted for each
 * of them), the batch emptied.
 */

static void
BatchFlush(
    CprofState *statePtr,
    CprofMemory *mPtr)
{
    int i, size = 1 << mPtr->batchBits;

    if (mPtr->batchUsed == 0) {
	return;
    }
    for (i = 0; i < size; i++) {
	MemBatch *bPtr = &mPtr->batch[i];

	if (bPtr->stack != NULL && bPtr->more > 0) {
	    Tcl_WideInt spliced = statePtr->splicedSamples;
	    Tcl_WideInt unspliced = statePtr->unsplicedSamples;
	    Tcl_WideInt unmatched = statePtr->unmatchedFrames;
	    Tcl_WideInt shortOnes = statePtr->shortSamples;
	    Tcl_WideInt k = (Tcl_WideInt) bPtr->more - 1;

	    AddRecord(statePtr, mPtr, bPtr->recPtr, bPtr->more);
	    statePtr->splicedSamples += k * (statePtr->splicedSamples
		    - spliced);
	    statePtr->unsplicedSamples += k * (statePtr->unsplicedSamples
		    - unspliced);
	    statePtr->unmatchedFrames += k * (statePtr->unmatchedFrames
		    - unmatched);
	    statePtr->shortSamples += k * (statePtr->shortSamples
		    - shortOnes);
	}
    }
    memset(mPtr->batch, 0, sizeof(MemBatch) * size);
    mPtr->batchUsed = 0;
}

void
CprofMemoryDrain(
    CprofState *statePtr)
{
    CprofMemory *mPtr = statePtr->memPtr;
    CprofMemEvent *events;
    int n, i;
    unsigned epoch;
    uint64_t now, start;

    if (mPtr == NULL) {
	return;
    }
    now = CprofClockNs(CLOCK_MONOTONIC);
    start = (uint64_t) statePtr->startNs;
    if (mPtr->drainPtr != NULL) {
	*mPtr->drainPtr = 0;
    }
    CprofMemGuard(1);
    n = CprofMemTake(&events);
    if (n > 0) {
	CprofSymRefresh(statePtr->symPtr);
    }
    epoch = CprofMemEpoch();
    for (i = 0; i < n; i++) {
	CprofMemRec *recPtr = events[i].recPtr;
	MemFig *fPtr;

	if (recPtr->epoch != epoch) {
	    continue;			/* Made before a reset. */
	}
	mPtr->seq++;
	if (events[i].isFree) {
	    if (recPtr->node < 0) {
		continue;
	    }
	    fPtr = Fig(mPtr, recPtr->node);
	    Touch(mPtr, fPtr);
	    fPtr->liveBytes -= recPtr->bytes;
	    fPtr->liveObjects -= recPtr->objects;
	    mPtr->liveBytes -= recPtr->bytes;
	    mPtr->liveObjects -= recPtr->objects;
	    mPtr->frees++;
	    CprofTimelineMemory(&mPtr->tree.timeline, events[i].timeNs, start,
		    mPtr->liveBytes, mPtr->liveBytes);
	    continue;
	}

	/*
	 * The sample: its innermost address is a return address too (the
	 * hook's caller), looked up as one. A stack already met in this
	 * drain has its node: the sample is added to the tree with the
	 * others of that stack at the end (BatchFlush); splicing and naming
	 * the same frames again for each sample was most of a drain's time
	 * and the cache lines of the symbol tables and the tree it read
	 * were the program's lost.
	 */

	{
	    double s = recPtr->size > 0 ? (double) recPtr->size : 1.0;
	    double p = -expm1(-s / (double) mPtr->rate);

	    if (!(p > 0)) {
		p = 1.0;
	    }
	    recPtr->objects = 1.0 / p;
	    recPtr->bytes = s / p;
	}
	if (recPtr->shared) {
	    MemBatch *bPtr = BatchSlot(mPtr, recPtr->ip);

	    if (bPtr->stack != NULL) {
		bPtr->more++;
		recPtr->node = bPtr->node;
	    } else {
		recPtr->node = AddRecord(statePtr, mPtr, recPtr, 1);
		bPtr->stack = recPtr->ip;
		bPtr->recPtr = recPtr;
		bPtr->node = recPtr->node;
		bPtr->more = 0;
		mPtr->batchUsed++;
	    }
	} else {
	    recPtr->node = AddRecord(statePtr, mPtr, recPtr, 1);
	}
	CprofTimelineAdd(&mPtr->tree.timeline, recPtr->node,
		events[i].timeNs, start, (uint64_t) Round(recPtr->bytes));
	fPtr = Fig(mPtr, recPtr->node);
	fPtr->allocBytes += recPtr->bytes;
	fPtr->allocObjects += recPtr->objects;
	mPtr->allocBytes += recPtr->bytes;
	mPtr->allocObjects += recPtr->objects;
	mPtr->samples++;
	if (recPtr->tracked) {
	    Touch(mPtr, fPtr);
	    fPtr->liveBytes += recPtr->bytes;
	    fPtr->liveObjects += recPtr->objects;
	    mPtr->liveBytes += recPtr->bytes;
	    mPtr->liveObjects += recPtr->objects;
	    if (mPtr->liveBytes > mPtr->peakBytes) {
		mPtr->peakBytes = mPtr->liveBytes;
		mPtr->peakObjects = mPtr->liveObjects;
		mPtr->peakSeq = mPtr->seq;
	    }
	}
	CprofTimelineMemory(&mPtr->tree.timeline, events[i].timeNs, start,
		mPtr->liveBytes, mPtr->liveBytes);
    }
    BatchFlush(statePtr, mPtr);
    if (mPtr->running) {
	/*
	 * The live bytes up to now (not after the run: a drain of a
	 * stopped profile, data's, adds no time to it).
	 */

	CprofTimelineMemory(&mPtr->tree.timeline, now, start,
		mPtr->liveBytes, mPtr->liveBytes);
    }
    if (n > 0 || events != NULL) {
	CprofMemDone(events, n);
    }
    CprofMemGuard(0);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofMemoryView --
 *
 *	Parse a -view value: alloc, live or peak.
 *
 *----------------------------------------------------------------------
 */

int
CprofMemoryView(
    Tcl_Interp *interp,
    Tcl_Obj *viewObj,
    int *viewPtr)
{
    if (Tcl_GetIndexFromObj(interp, viewObj, viewNames, "view", 0,
	    viewPtr) != TCL_OK) {
	Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", "-view",
		Tcl_GetString(viewObj), NULL);
	return TCL_ERROR;
    }
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofMemoryTreeObj --
 *
 *	The memory tree as a profile's tree: self and total are the view's
 *	bytes (objects with 'count'), each node has its six figures.
 *
 *----------------------------------------------------------------------
 */

static Tcl_WideInt
Round(
    double v)
{
    return v > 0 ? (Tcl_WideInt) (v + 0.5) : 0;
}

static void
PutFigures(
    void *data,
    int node,
    Tcl_Obj *dictObj)
{
    CprofMemory *mPtr = (CprofMemory *) data;
    static const char *const keys[] = {
	"alloc_bytes", "alloc_objects", "live_bytes", "live_objects",
	"peak_bytes", "peak_objects"
    };
    double v[6];
    int i;

    if (node >= mPtr->capFigs) {
	memset(v, 0, sizeof(v));
    } else {
	const MemFig *fPtr = &mPtr->figs[node];

	v[0] = fPtr->allocBytes;
	v[1] = fPtr->allocObjects;
	v[2] = fPtr->liveBytes;
	v[3] = fPtr->liveObjects;
	PeakValues(mPtr, fPtr, &v[4], &v[5]);
    }
    for (i = 0; i < 6; i++) {
	Tcl_DictObjPut(NULL, dictObj, Tcl_NewStringObj(keys[i], -1),
		Tcl_NewWideIntObj(Round(v[i])));
    }
}

/*
 * The memory tree with self and total set for a view (NULL when there is
 * none); a node's figures.
 */

CprofTree *
CprofMemoryPrepare(
    CprofState *statePtr,
    int view,
    int count)
{
    CprofMemory *mPtr = statePtr->memPtr;
    CprofTree *treePtr;
    int i;

    if (mPtr == NULL) {
	return NULL;
    }
    treePtr = &mPtr->tree;
    Fig(mPtr, treePtr->numNodes);
    for (i = 0; i < treePtr->numNodes; i++) {
	const MemFig *fPtr = &mPtr->figs[i];
	double b, o;

	switch (view) {
	case 0:
	    b = fPtr->allocBytes;
	    o = fPtr->allocObjects;
	    break;
	case 1:
	    b = fPtr->liveBytes;
	    o = fPtr->liveObjects;
	    break;
	default:
	    PeakValues(mPtr, fPtr, &b, &o);
	    break;
	}
	treePtr->nodes[i].self = (uint64_t) Round(count ? o : b);
	treePtr->nodes[i].total = treePtr->nodes[i].self;
    }

    /*
     * A child comes after its parent in the node array.
     */

    for (i = treePtr->numNodes - 1; i > 0; i--) {
	treePtr->nodes[treePtr->nodes[i].parent].total
		+= treePtr->nodes[i].total;
    }
    return treePtr;
}

void
CprofMemoryFigures(
    CprofState *statePtr,
    int node,
    int64_t fig[6])
{
    CprofMemory *mPtr = statePtr->memPtr;
    const MemFig *fPtr;
    double pb, po;

    if (mPtr == NULL || node >= mPtr->capFigs) {
	memset(fig, 0, 6 * sizeof(int64_t));
	return;
    }
    fPtr = &mPtr->figs[node];
    PeakValues(mPtr, fPtr, &pb, &po);
    fig[0] = Round(fPtr->allocBytes);
    fig[1] = Round(fPtr->allocObjects);
    fig[2] = Round(fPtr->liveBytes);
    fig[3] = Round(fPtr->liveObjects);
    fig[4] = Round(pb);
    fig[5] = Round(po);
}

Tcl_Obj *
CprofMemoryTreeObj(
    CprofState *statePtr,
    int view,
    int count)
{
    CprofTree *treePtr = CprofMemoryPrepare(statePtr, view, count);

    if (treePtr == NULL) {
	CprofTree empty;
	Tcl_Obj *objPtr;

	CprofTreeInit(&empty);
	objPtr = CprofTreeToObj(&empty, NULL);
	CprofTreeFree(&empty);
	return objPtr;
    }
    treePtr->noTimes = (view != 0 || count);
    return CprofTreeToObjEx(treePtr, NULL, PutFigures, statePtr->memPtr);
}

/*
 * The memory tree's timeline (draintimeline.c: bytes allocated, live and peak
 * per bucket), NULL when it has none.
 */

Tcl_Obj *
CprofMemoryTimelineObj(
    CprofState *statePtr)
{
    CprofMemory *mPtr = statePtr->memPtr;

    return (mPtr == NULL) ? NULL : CprofTimelineObj(&mPtr->tree.timeline);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofMemoryDict --
 *
 *	What a memory profile measured (its meta's 'memory', and status):
 *	the hooks' counts of every allocation and free, the estimates made
 *	from the samples, and the profiler's own memory for them.
 *
 *----------------------------------------------------------------------
 */

Tcl_Obj *
CprofMemoryDict(
    CprofState *statePtr)
{
    CprofMemory *mPtr = statePtr->memPtr;
    CprofMemTotals t;
    Tcl_Obj *dictObj = Tcl_NewDictObj();

    if (mPtr == NULL) {
	return dictObj;
    }
    if (mPtr->running) {
	CprofMemGetTotals(&t);
    } else {
	t = mPtr->totals;
    }
    PUT(dictObj, "rate", Tcl_NewWideIntObj(mPtr->rate));
    PUT(dictObj, "allocations", Tcl_NewWideIntObj((Tcl_WideInt) t.allocs));
    PUT(dictObj, "allocated_bytes",
	    Tcl_NewWideIntObj((Tcl_WideInt) t.allocBytes));
    PUT(dictObj, "frees", Tcl_NewWideIntObj((Tcl_WideInt) t.frees));
    PUT(dictObj, "sampled", Tcl_NewWideIntObj((Tcl_WideInt) mPtr->samples));
    PUT(dictObj, "sampled_frees",
	    Tcl_NewWideIntObj((Tcl_WideInt) mPtr->frees));
    PUT(dictObj, "alloc_bytes", Tcl_NewWideIntObj(Round(mPtr->allocBytes)));
    PUT(dictObj, "alloc_objects",
	    Tcl_NewWideIntObj(Round(mPtr->allocObjects)));
    PUT(dictObj, "live_bytes", Tcl_NewWideIntObj(Round(mPtr->liveBytes)));
    PUT(dictObj, "live_objects",
	    Tcl_NewWideIntObj(Round(mPtr->liveObjects)));
    PUT(dictObj, "peak_bytes", Tcl_NewWideIntObj(Round(mPtr->peakBytes)));
    PUT(dictObj, "peak_objects",
	    Tcl_NewWideIntObj(Round(mPtr->peakObjects)));
    PUT(dictObj, "untracked", Tcl_NewWideIntObj((Tcl_WideInt) t.untracked));
    PUT(dictObj, "lost", Tcl_NewWideIntObj((Tcl_WideInt) t.lostEvents));
    PUT(dictObj, "overhead_bytes", Tcl_NewWideIntObj((Tcl_WideInt)
	    (t.recordBytes + t.tableBytes)
	    + (Tcl_WideInt) mPtr->capFigs * (Tcl_WideInt) sizeof(MemFig)));
    PUT(dictObj, "patched", Tcl_NewWideIntObj((Tcl_WideInt) t.patched));
    PUT(dictObj, "patched_later",
	    Tcl_NewWideIntObj((Tcl_WideInt) t.patchedLater));
    return dictObj;
}
