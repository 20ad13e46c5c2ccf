/*
 * draintimeline.c --
 *
 *	The timeline of a call tree: what its samples weighed per bucket of
 *	time since the run started, and per node per bucket (the weight of
 *	the samples that ended at the node: a range of buckets gives the
 *	flame graph of that range); for a memory tree, the live bytes and
 *	their highest value per bucket too.
 *
 *	The memory is bounded: at most CPROF_TIME_BUCKETS buckets, and at
 *	most CPROF_TIME_CELLS (node, bucket) cells. The buckets start
 *	CPROF_TIME_WIDTH0 wide; when a sample falls beyond the last bucket,
 *	or a new cell would pass the bound of cells, the width doubles and
 *	each pair of buckets becomes one (Coarsen), as often as needed. All
 *	of it runs in normal context (the drain), never in the handler: the
 *	sample's time is the one the handler wrote in its record.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "tclcprofInt.h"
#include <string.h>
#include <stdlib.h>

void
CprofTimelineInit(
    CprofTimeline *tlPtr)
{
    memset(tlPtr, 0, sizeof(CprofTimeline));
    tlPtr->width = CPROF_TIME_WIDTH0;
    Tcl_InitHashTable(&tlPtr->cellIndex, 2);
}

void
CprofTimelineFree(
    CprofTimeline *tlPtr)
{
    Tcl_DeleteHashTable(&tlPtr->cellIndex);
    if (tlPtr->cells != NULL) {
	ckfree(tlPtr->cells);
    }
    if (tlPtr->mem != NULL) {
	ckfree(tlPtr->mem);
    }
    memset(tlPtr, 0, sizeof(CprofTimeline));
}

/*
 * Twice the width: bucket b becomes b / 2, cells of the same node that
 * meet are added up, and the cells' index is made again.
 */

static void
Coarsen(
    CprofTimeline *tlPtr)
{
    int i, n = 0;

    tlPtr->width *= 2;
    for (i = 0; i < CPROF_TIME_BUCKETS; i++) {
	uint64_t w = (i < CPROF_TIME_BUCKETS / 2)
		? tlPtr->weights[2 * i] + tlPtr->weights[2 * i + 1] : 0;

	tlPtr->weights[i] = w;
    }
    if (tlPtr->mem != NULL) {
	for (i = 0; i < CPROF_TIME_BUCKETS; i++) {
	    CprofTimeMem m;

	    memset(&m, 0, sizeof(m));
	    if (i < CPROF_TIME_BUCKETS / 2) {
		CprofTimeMem *aPtr = &tlPtr->mem[2 * i];
		CprofTimeMem *bPtr = &tlPtr->mem[2 * i + 1];

		m = bPtr->seen ? *bPtr : *aPtr;
		if (aPtr->seen && bPtr->seen && aPtr->peak > m.peak) {
		    m.peak = aPtr->peak;
		}
	    }
	    tlPtr->mem[i] = m;
	}
    }
    tlPtr->numBuckets = (tlPtr->numBuckets + 1) / 2;
    Tcl_DeleteHashTable(&tlPtr->cellIndex);
    Tcl_InitHashTable(&tlPtr->cellIndex, 2);
    for (i = 0; i < tlPtr->numCells; i++) {
	CprofTimeCell c = tlPtr->cells[i];
	int key[2], isNew;
	Tcl_HashEntry *hPtr;

	c.bucket /= 2;
	key[0] = c.node;
	key[1] = c.bucket;
	hPtr = Tcl_CreateHashEntry(&tlPtr->cellIndex, (char *) key, &isNew);
	if (isNew) {
	    tlPtr->cells[n] = c;
	    Tcl_SetHashValue(hPtr, INT2PTR(n));
	    n++;
	} else {
	    tlPtr->cells[PTR2INT(Tcl_GetHashValue(hPtr))].weight += c.weight;
	}
    }
    tlPtr->numCells = n;
    tlPtr->coarsened++;
}

/*
 * The bucket of a time, the width doubled until it has one. The origin
 * is set by the first time seen (to 'start', the run's start, when that
 * is not later).
 */

static int
Bucket(
    CprofTimeline *tlPtr,
    uint64_t timeNs,
    uint64_t start)
{
    uint64_t b;

    if (tlPtr->origin == 0) {
	tlPtr->origin = (start != 0 && start <= timeNs) ? start : timeNs;
    }
    if (timeNs < tlPtr->origin) {
	timeNs = tlPtr->origin;
    }
    b = (timeNs - tlPtr->origin) / tlPtr->width;
    while (b >= CPROF_TIME_BUCKETS) {
	Coarsen(tlPtr);
	b = (timeNs - tlPtr->origin) / tlPtr->width;
    }
    if ((int) b >= tlPtr->numBuckets) {
	tlPtr->numBuckets = (int) b + 1;
    }
    return (int) b;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofTimelineAdd --
 *
 *	A sample's weight, at timeNs (CLOCK_MONOTONIC), ending at 'node'.
 *
 *----------------------------------------------------------------------
 */

static void		AddCell(CprofTimeline *tlPtr, int node, int b,
			    uint64_t weight);

void
CprofTimelineAdd(
    CprofTimeline *tlPtr,
    int node,
    uint64_t timeNs,
    uint64_t start,
    uint64_t weight)
{
    if (weight == 0 || timeNs == 0) {
	return;
    }
    if (timeNs > tlPtr->lastTimed) {
	tlPtr->lastTimed = timeNs;
    }
    AddCell(tlPtr, node, Bucket(tlPtr, timeNs, start), weight);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofTimelineSpread --
 *
 *	The weight of samples merged into one (the sampler's spool merges
 *	the samples of a thread that ran no Tcl for a while), taken from
 *	fromNs to timeNs, spread evenly over the buckets of that time
 *	(fromNs 0: from the latest time added before).
 *
 *----------------------------------------------------------------------
 */

void
CprofTimelineSpread(
    CprofTimeline *tlPtr,
    int node,
    uint64_t fromNs,
    uint64_t timeNs,
    uint64_t start,
    uint64_t weight)
{
    uint64_t from = fromNs ? fromNs : tlPtr->lastTimed, per, rem;
    int b0, b1, b;

    if (weight == 0 || timeNs == 0) {
	return;
    }
    if (timeNs > tlPtr->lastTimed) {
	tlPtr->lastTimed = timeNs;
    }
    if (from == 0 || from > timeNs) {
	from = (start != 0 && start <= timeNs) ? start : timeNs;
    }
    (void) Bucket(tlPtr, timeNs, start);	/* (The width for both.) */
    b0 = Bucket(tlPtr, from, start);
    b1 = Bucket(tlPtr, timeNs, start);
    per = weight / (uint64_t) (b1 - b0 + 1);
    rem = weight % (uint64_t) (b1 - b0 + 1);
    for (b = b0; b <= b1; b++) {
	uint64_t w = per + ((uint64_t) (b - b0) < rem ? 1 : 0);

	if (w > 0) {
	    AddCell(tlPtr, node, b, w);
	}
    }
}

/*
 * Weight added to bucket b and to the node's cell of it (made if new:
 * the bound of cells may double the width first).
 */

static void
AddCell(
    CprofTimeline *tlPtr,
    int node,
    int b,
    uint64_t weight)
{
    int key[2], isNew;
    Tcl_HashEntry *hPtr;

    tlPtr->weights[b] += weight;
    key[0] = node;
    key[1] = b;
    hPtr = Tcl_FindHashEntry(&tlPtr->cellIndex, (char *) key);
    if (hPtr == NULL) {
	while (tlPtr->numCells >= CPROF_TIME_CELLS
		&& tlPtr->numBuckets > 1) {
	    Coarsen(tlPtr);
	    b /= 2;
	    key[1] = b;
	    hPtr = Tcl_FindHashEntry(&tlPtr->cellIndex, (char *) key);
	    if (hPtr != NULL) {
		break;
	    }
	}
    }
    if (hPtr == NULL) {
	if (tlPtr->numCells >= CPROF_TIME_CELLS) {
	    /*
	     * One bucket left, with as many stacks as cells: the node's
	     * weight stays in the bucket's weight, without a cell.
	     */

	    tlPtr->lostCells += weight;
	    return;
	}
	if (tlPtr->numCells == tlPtr->capCells) {
	    tlPtr->capCells = tlPtr->capCells ? 2 * tlPtr->capCells : 256;
	    tlPtr->cells = (CprofTimeCell *) ckrealloc(tlPtr->cells,
		    tlPtr->capCells * sizeof(CprofTimeCell));
	}
	hPtr = Tcl_CreateHashEntry(&tlPtr->cellIndex, (char *) key, &isNew);
	tlPtr->cells[tlPtr->numCells].node = node;
	tlPtr->cells[tlPtr->numCells].bucket = b;
	tlPtr->cells[tlPtr->numCells].weight = 0;
	Tcl_SetHashValue(hPtr, INT2PTR(tlPtr->numCells));
	tlPtr->numCells++;
    }
    tlPtr->cells[PTR2INT(Tcl_GetHashValue(hPtr))].weight += weight;
    tlPtr->changes++;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofTimelineMemory --
 *
 *	A memory tree's live bytes at timeNs, and the most they were since
 *	the last call ('high').
 *
 *----------------------------------------------------------------------
 */

void
CprofTimelineMemory(
    CprofTimeline *tlPtr,
    uint64_t timeNs,
    uint64_t start,
    double live,
    double high)
{
    int b;
    CprofTimeMem *mPtr;

    if (timeNs == 0) {
	return;
    }
    if (tlPtr->mem == NULL) {
	tlPtr->mem = (CprofTimeMem *) ckalloc(CPROF_TIME_BUCKETS
		* sizeof(CprofTimeMem));
	memset(tlPtr->mem, 0, CPROF_TIME_BUCKETS * sizeof(CprofTimeMem));
    }
    b = Bucket(tlPtr, timeNs, start);
    mPtr = &tlPtr->mem[b];
    if (!mPtr->seen || high > mPtr->peak) {
	mPtr->peak = high;
    }
    if (live > mPtr->peak) {
	mPtr->peak = live;
    }
    mPtr->live = live;
    mPtr->seen = 1;
    tlPtr->changes++;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofTimelineObj --
 *
 *	The timeline as a dict: width_ns, buckets (how many), weights (one
 *	per bucket) and, for a memory tree, live and peak (bytes, one per
 *	bucket: the live bytes at the bucket's end and the most they were
 *	in it; a bucket nothing was seen in has the last bucket's live
 *	bytes). NULL when nothing was added.
 *
 *----------------------------------------------------------------------
 */

static Tcl_WideInt
RoundBytes(
    double v)
{
    return v > 0 ? (Tcl_WideInt) (v + 0.5) : 0;
}

Tcl_Obj *
CprofTimelineObj(
    const CprofTimeline *tlPtr)
{
    Tcl_Obj *dictObj, *wObj;
    int i;

    if (tlPtr->origin == 0) {
	return NULL;
    }
    dictObj = Tcl_NewDictObj();
    Tcl_DictObjPut(NULL, dictObj, Tcl_NewStringObj("width_ns", -1),
	    Tcl_NewWideIntObj((Tcl_WideInt) tlPtr->width));
    Tcl_DictObjPut(NULL, dictObj, Tcl_NewStringObj("buckets", -1),
	    Tcl_NewIntObj(tlPtr->numBuckets));
    wObj = Tcl_NewListObj(0, NULL);
    for (i = 0; i < tlPtr->numBuckets; i++) {
	Tcl_ListObjAppendElement(NULL, wObj,
		Tcl_NewWideIntObj((Tcl_WideInt) tlPtr->weights[i]));
    }
    Tcl_DictObjPut(NULL, dictObj, Tcl_NewStringObj("weights", -1), wObj);
    if (tlPtr->lostCells > 0) {
	Tcl_DictObjPut(NULL, dictObj, Tcl_NewStringObj("lost", -1),
		Tcl_NewWideIntObj((Tcl_WideInt) tlPtr->lostCells));
    }
    if (tlPtr->mem != NULL) {
	Tcl_Obj *liveObj = Tcl_NewListObj(0, NULL);
	Tcl_Obj *peakObj = Tcl_NewListObj(0, NULL);
	double last = 0;

	for (i = 0; i < tlPtr->numBuckets; i++) {
	    const CprofTimeMem *mPtr = &tlPtr->mem[i];
	    double peak = last;

	    if (mPtr->seen) {
		peak = mPtr->peak > last ? mPtr->peak : last;
		last = mPtr->live;
	    }
	    Tcl_ListObjAppendElement(NULL, liveObj,
		    Tcl_NewWideIntObj(RoundBytes(last)));
	    Tcl_ListObjAppendElement(NULL, peakObj,
		    Tcl_NewWideIntObj(RoundBytes(peak)));
	}
	Tcl_DictObjPut(NULL, dictObj, Tcl_NewStringObj("live", -1), liveObj);
	Tcl_DictObjPut(NULL, dictObj, Tcl_NewStringObj("peak", -1), peakObj);
    }
    return dictObj;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofTimelineNodeLists --
 *
 *	Per node (numNodes of them) the list {bucket weight ...} of its
 *	cells in bucket order, or NULL for a node with none; the caller
 *	frees the array (ckfree) and owns nothing else (the lists are new
 *	objects, to be put in the nodes' dicts). NULL when there is no
 *	cell.
 *
 *----------------------------------------------------------------------
 */

static int
CompareCells(
    const void *a,
    const void *b)
{
    const CprofTimeCell *x = (const CprofTimeCell *) a;
    const CprofTimeCell *y = (const CprofTimeCell *) b;

    if (x->node != y->node) {
	return x->node < y->node ? -1 : 1;
    }
    return x->bucket < y->bucket ? -1 : x->bucket > y->bucket;
}

Tcl_Obj **
CprofTimelineNodeLists(
    const CprofTimeline *tlPtr,
    int numNodes)
{
    Tcl_Obj **lists;
    CprofTimeCell *sorted;
    int i;

    if (tlPtr->numCells == 0) {
	return NULL;
    }
    sorted = (CprofTimeCell *) ckalloc(tlPtr->numCells
	    * sizeof(CprofTimeCell));
    memcpy(sorted, tlPtr->cells, tlPtr->numCells * sizeof(CprofTimeCell));
    qsort(sorted, tlPtr->numCells, sizeof(CprofTimeCell), CompareCells);
    lists = (Tcl_Obj **) ckalloc(numNodes * sizeof(Tcl_Obj *));
    memset(lists, 0, numNodes * sizeof(Tcl_Obj *));
    for (i = 0; i < tlPtr->numCells; i++) {
	const CprofTimeCell *cPtr = &sorted[i];

	if (cPtr->node < 0 || cPtr->node >= numNodes || cPtr->weight == 0) {
	    continue;
	}
	if (lists[cPtr->node] == NULL) {
	    lists[cPtr->node] = Tcl_NewListObj(0, NULL);
	}
	Tcl_ListObjAppendElement(NULL, lists[cPtr->node],
		Tcl_NewIntObj(cPtr->bucket));
	Tcl_ListObjAppendElement(NULL, lists[cPtr->node],
		Tcl_NewWideIntObj((Tcl_WideInt) cPtr->weight));
    }
    ckfree(sorted);
    return lists;
}
