/*
 * exact.c --
 *
 *	Exact timing: counts and times of every traced command, kept as a
 *	call tree of Tcl call paths, per call site (-lines), as a bounded
 *	list of enter/leave events (-events), and as coverage counts.
 *
 *	The level stack (capturelevels.c) calls in at each event, through the
 *	hooks the command layer registers, with the frame concerned on the
 *	stack:
 *
 *	- CprofExactEnter: the frame's node is the child, named like the
 *	  frame, of its caller's node; the clock is read last.
 *	- CprofExactLeave: the clock is read first; the call's time goes to
 *	  its node (calls, total, min, max) and to its caller's frame.
 *	- CprofExactSuspend / CprofExactResume: a coroutine's frames are
 *	  timed in segments, one per run between a resume and a yield. A
 *	  segment's time goes to the node the frame has during the run, and
 *	  that node is a child of the node of whoever resumed the coroutine,
 *	  the path a sample taken then would show. Time suspended is charged
 *	  to nobody; it is reported separately.
 *
 *	Invariants:
 *
 *	- A node's self time is not accumulated: it is its total less the
 *	  totals of its children, computed when the tree is read (bottom up,
 *	  a node's total raised to its children's sum where compensation
 *	  took it below), so that self plus children is total exactly.
 *	- Hidden frames (-include/-exclude, control commands with -control
 *	  0) are not nodes: they take the node of their caller, and at their
 *	  leave pass their callees' time and call counts on to it, so that
 *	  their own time is their caller's self time.
 *	- Compensation: each traced call costs the profiler 'callNs', of
 *	  which 'inNs' falls between the call's own enter and leave
 *	  timestamps and the rest in its caller's time. A call's reported
 *	  time is its measured time less inNs, less callNs for every call
 *	  completed below it. Both figures are measured once per process and
 *	  clock by CprofExactCalibrate (exactcompensate.c).
 *	- Times are kept in ticks of the run's clock: nanoseconds, or, for
 *	  elapsed time on an x86 processor whose time-stamp counter runs at
 *	  a constant rate (constant_tsc and nonstop_tsc), counter ticks,
 *	  which cost a third of a vDSO clock_gettime to read. They become
 *	  nanoseconds when the data is read (TicksToNs).
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "exactInt.h"
#include <string.h>
#include <stdio.h>
#include <stdlib.h>

/*
 * The time-stamp counter: 1 usable, -1 not, 0 not known yet; and its
 * nanoseconds per tick, measured once per process.
 */

static int tscState = 0;
static double tscNsPerTick = 1.0;
TCL_DECLARE_MUTEX(tscMutex)

/*
 * Whether the time-stamp counter can time elapsed intervals here: an x86
 * processor that says its counter runs at a constant rate through power
 * states. Its rate is measured against CLOCK_MONOTONIC over 2 ms, once.
 */

static int
TscUsable(void)
{
#ifdef HAVE_TSC
    Tcl_MutexLock(&tscMutex);
    if (tscState == 0) {
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];
	int constant = 0, nonstop = 0;

	tscState = -1;
	if (f != NULL) {
	    while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "flags", 5) == 0) {
		    constant = strstr(line, " constant_tsc") != NULL;
		    nonstop = strstr(line, " nonstop_tsc") != NULL;
		    break;
		}
	    }
	    fclose(f);
	}
	if (constant && nonstop && getenv("TCLCPROF_NO_TSC") == NULL) {
	    uint64_t m0 = CprofClockNs(CLOCK_MONOTONIC), t0 = __rdtsc();
	    uint64_t m1, t1;

	    do {
		m1 = CprofClockNs(CLOCK_MONOTONIC);
		t1 = __rdtsc();
	    } while (m1 - m0 < 2000000);
	    if (t1 > t0) {
		tscNsPerTick = (double) (m1 - m0) / (double) (t1 - t0);
		tscState = 1;
	    }
	}
    }
    Tcl_MutexUnlock(&tscMutex);
    return tscState == 1;
#else
    return 0;
#endif
}

double
CprofExactTscNsPerTick(void)
{
    return TscUsable() ? tscNsPerTick : 0.0;
}

/*
 *----------------------------------------------------------------------
 *
 * Pair maps --
 *
 *	Open addressing with linear probing over (a, b) keys, at most three
 *	quarters full. Values are non-negative; Get returns -1 for a key
 *	that is not there.
 *
 *----------------------------------------------------------------------
 */

static inline uint32_t
PairHash(
    uint64_t a,
    uint64_t b)
{
    uint64_t x = a * UINT64_C(0x9E3779B97F4A7C15) + b;

    x ^= x >> 29;
    x *= UINT64_C(0xBF58476D1CE4E5B9);
    x ^= x >> 32;
    return (uint32_t) x;
}

static inline int
MapGet(
    const CprofPairMap *mapPtr,
    uint64_t a,
    uint64_t b)
{
    uint32_t i;

    if (mapPtr->mask == 0) {
	return -1;
    }
    for (i = PairHash(a, b) & mapPtr->mask; ; i = (i + 1) & mapPtr->mask) {
	const CprofPairSlot *slotPtr = &mapPtr->slots[i];

	if (slotPtr->value < 0) {
	    return -1;
	}
	if (slotPtr->a == a && slotPtr->b == b) {
	    return slotPtr->value;
	}
    }
}

int
CprofPairMapHas(
    const CprofPairMap *mapPtr,
    uint64_t a,
    uint64_t b)
{
    return MapGet(mapPtr, a, b) >= 0;
}

static void
MapInsert(
    CprofPairSlot *slots,
    uint32_t mask,
    uint64_t a,
    uint64_t b,
    int value)
{
    uint32_t i;

    for (i = PairHash(a, b) & mask; ; i = (i + 1) & mask) {
	if (slots[i].value < 0 || (slots[i].a == a && slots[i].b == b)) {
	    slots[i].a = a;
	    slots[i].b = b;
	    slots[i].value = value;
	    return;
	}
    }
}

static void
MapPut(
    CprofPairMap *mapPtr,
    uint64_t a,
    uint64_t b,
    int value)
{
    if (mapPtr->mask == 0 || 4 * (mapPtr->count + 1) > 3 * (mapPtr->mask + 1)) {
	uint32_t size = mapPtr->mask ? 2 * (mapPtr->mask + 1) : 256, i;
	CprofPairSlot *slots = (CprofPairSlot *)
		ckalloc(size * sizeof(CprofPairSlot));

	for (i = 0; i < size; i++) {
	    slots[i].value = -1;
	}
	if (mapPtr->mask) {
	    for (i = 0; i <= mapPtr->mask; i++) {
		if (mapPtr->slots[i].value >= 0) {
		    MapInsert(slots, size - 1, mapPtr->slots[i].a,
			    mapPtr->slots[i].b, mapPtr->slots[i].value);
		}
	    }
	    ckfree(mapPtr->slots);
	}
	mapPtr->slots = slots;
	mapPtr->mask = size - 1;
    }
    if (MapGet(mapPtr, a, b) < 0) {
	mapPtr->count++;
    }
    MapInsert(mapPtr->slots, mapPtr->mask, a, b, value);
}

static void
MapFree(
    CprofPairMap *mapPtr)
{
    if (mapPtr->slots) {
	ckfree(mapPtr->slots);
    }
    memset(mapPtr, 0, sizeof(CprofPairMap));
}

/*
 * Grow an array of 'size'-byte elements to hold at least 'need'.
 */

static void
Grow(
    void **arrayPtr,
    int *capPtr,
    int need,
    size_t size)
{
    if (need > *capPtr) {
	int cap = *capPtr ? *capPtr : 64;

	while (cap < need) {
	    cap *= 2;
	}
	*arrayPtr = ckrealloc(*arrayPtr, cap * size);
	memset((char *) *arrayPtr + *capPtr * size, 0,
		(cap - *capPtr) * size);
	*capPtr = cap;
    }
}

uint64_t
CprofExactNow(
    CprofState *statePtr)
{
    return Now(&statePtr->exact);
}

int64_t
CprofExactTicksToNs(
    CprofState *statePtr,
    int64_t ticks)
{
    return TicksToNs(&statePtr->exact, ticks);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofExactInit, CprofExactClear, CprofExactFree --
 *
 *	Set up the exact-timing part of a state; drop the collected data
 *	(keeping options); free everything.
 *
 *----------------------------------------------------------------------
 */

static void
InitRoot(
    CprofExact *exactPtr)
{
    CprofExactNode *rootPtr;

    Grow((void **) &exactPtr->nodes, &exactPtr->capNodes, 1,
	    sizeof(CprofExactNode));
    rootPtr = &exactPtr->nodes[0];
    memset(rootPtr, 0, sizeof(CprofExactNode));
    rootPtr->parent = -1;
    rootPtr->nameId = -1;
    rootPtr->firstChild = -1;
    rootPtr->nextSibling = -1;
    rootPtr->lastChild = -1;
    exactPtr->numNodes = 1;
}

void
CprofExactInit(
    CprofExact *exactPtr)
{
    memset(exactPtr, 0, sizeof(CprofExact));
    exactPtr->clockId = CLOCK_MONOTONIC;
    exactPtr->interpId = -1;
    InitRoot(exactPtr);
}

static void
ReleaseSites(
    CprofExact *exactPtr)
{
    int i;

    for (i = 0; i < exactPtr->numHeld; i++) {
	CprofReleaseSiteKey(exactPtr->heldKinds[i], exactPtr->held[i]);
    }
    exactPtr->numHeld = 0;
    MapFree(&exactPtr->siteKeyMap);
}

/*
 * Profiling stopped or paused: the site keys' bytecode need not be held
 * any longer.
 */

void
CprofExactReleaseSites(
    CprofState *statePtr)
{
    ReleaseSites(&statePtr->exact);
}

void
CprofExactClear(
    CprofState *statePtr)
{
    CprofExact *exactPtr = &statePtr->exact;

    InitRoot(exactPtr);
    MapFree(&exactPtr->childMap);
    ReleaseSites(exactPtr);
    MapFree(&exactPtr->siteMap);
    MapFree(&exactPtr->lineMap);
    exactPtr->numSites = 0;
    exactPtr->numLineRecs = 0;
    if (exactPtr->nameCalls) {
	memset(exactPtr->nameCalls, 0,
		exactPtr->numNameCalls * sizeof(CprofNameCalls));
    }
    exactPtr->truncatedNodes = 0;
    exactPtr->noLocation = 0;
    exactPtr->numEvents = 0;
    exactPtr->eventsDropped = 0;
    exactPtr->slowCalls = 0;
    exactPtr->openFrames = 0;
    exactPtr->suspendedNs = 0;
    exactPtr->captureNs = 0;
    exactPtr->calls = 0;
    exactPtr->hasData = 0;
    exactPtr->numLinks = 0;
    MapFree(&exactPtr->targetMap);
    exactPtr->runStartNs = Now(exactPtr);
    exactPtr->runStartMonoNs = CprofMonoNs();
    CprofNameRelease(&exactPtr->refs);
}

void
CprofExactFree(
    CprofState *statePtr)
{
    CprofExact *exactPtr = &statePtr->exact;

    CprofExactLeavePeers(statePtr);
    ReleaseSites(exactPtr);
    MapFree(&exactPtr->childMap);
    MapFree(&exactPtr->siteMap);
    MapFree(&exactPtr->lineMap);
    MapFree(&exactPtr->targetMap);
    if (exactPtr->links) {
	ckfree(exactPtr->links);
    }
    if (exactPtr->nodes) {
	ckfree(exactPtr->nodes);
    }
    if (exactPtr->sites) {
	ckfree(exactPtr->sites);
    }
    if (exactPtr->siteHits) {
	ckfree(exactPtr->siteHits);
    }
    if (exactPtr->held) {
	ckfree(exactPtr->held);
    }
    if (exactPtr->heldKinds) {
	ckfree(exactPtr->heldKinds);
    }
    if (exactPtr->lineRecs) {
	ckfree(exactPtr->lineRecs);
    }
    if (exactPtr->nameCalls) {
	ckfree(exactPtr->nameCalls);
    }
    if (exactPtr->nameClass) {
	ckfree(exactPtr->nameClass);
    }
    if (exactPtr->events) {
	ckfree(exactPtr->events);
    }
    if (exactPtr->includeObj) {
	Tcl_DecrRefCount(exactPtr->includeObj);
    }
    if (exactPtr->excludeObj) {
	Tcl_DecrRefCount(exactPtr->excludeObj);
    }
    if (exactPtr->onSlowObj) {
	Tcl_DecrRefCount(exactPtr->onSlowObj);
    }
    CprofNameRelease(&exactPtr->refs);
    memset(exactPtr, 0, sizeof(CprofExact));
    exactPtr->interpId = -1;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofExactPrepare --
 *
 *	Configure exact timing for a run that is about to start with the
 *	options *optsPtr (mode and clock resolved). 'events' is the event
 *	buffer the run needs (allocated by the caller, which can still
 *	fail), or NULL to keep the current one if it fits, or to drop it.
 *	The last run's data is not touched: the caller clears it once the
 *	run is sure to start.
 *
 *----------------------------------------------------------------------
 */

void
CprofExactPrepare(
    CprofState *statePtr,
    const CprofOptions *optsPtr,
    CprofEvent *events,
    int64_t inNs,
    int64_t callNs)
{
    CprofExact *exactPtr = &statePtr->exact;

    if (events != NULL) {
	if (exactPtr->events) {
	    ckfree(exactPtr->events);
	}
	exactPtr->events = events;
	exactPtr->maxEvents = optsPtr->eventLimit;
    } else if (!optsPtr->events && exactPtr->events) {
	ckfree(exactPtr->events);
	exactPtr->events = NULL;
	exactPtr->maxEvents = 0;
    }
    exactPtr->on = CprofModeExact(optsPtr->mode);
    exactPtr->coverage = (optsPtr->mode == CPROF_MODE_COVERAGE);
    exactPtr->lines = optsPtr->lines && (exactPtr->on || exactPtr->coverage);
    exactPtr->clockId = (optsPtr->clock == CPROF_CLOCK_CPU)
	    ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;
    exactPtr->nsPerTick = (optsPtr->clock != CPROF_CLOCK_CPU)
	    ? CprofExactTscNsPerTick() : 0.0;
    exactPtr->tsc = exactPtr->nsPerTick > 0.0;
    if (!exactPtr->tsc) {
	exactPtr->nsPerTick = 1.0;
    }
    CprofExactSetSlow(statePtr, optsPtr->slowMs);
    exactPtr->inNs = inNs;
    exactPtr->callNs = callNs;
}

/*
 * The -slow threshold, in ticks of the run's clock (0: off).
 */

void
CprofExactSetSlow(
    CprofState *statePtr,
    double ms)
{
    CprofExact *exactPtr = &statePtr->exact;

    exactPtr->slowNs = (uint64_t) (ms * 1e6 / exactPtr->nsPerTick);
}

/*
 * Whether a run with these options needs a new event buffer.
 */

int
CprofExactNeedEvents(
    CprofState *statePtr,
    const CprofOptions *optsPtr)
{
    return optsPtr->events && (statePtr->exact.events == NULL
	    || statePtr->exact.maxEvents != optsPtr->eventLimit);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofExactSetFilters --
 *
 *	Set the -include and -exclude glob lists (NULL or empty: no
 *	filter). Frames entered from now on are shown or hidden by them.
 *
 *----------------------------------------------------------------------
 */

void
CprofExactSetFilters(
    CprofState *statePtr,
    Tcl_Obj *includeObj,
    Tcl_Obj *excludeObj)
{
    CprofExact *exactPtr = &statePtr->exact;
    Tcl_Size n;

    if (includeObj != NULL && (Tcl_ListObjLength(NULL, includeObj, &n)
	    != TCL_OK || n == 0)) {
	includeObj = NULL;
    }
    if (excludeObj != NULL && (Tcl_ListObjLength(NULL, excludeObj, &n)
	    != TCL_OK || n == 0)) {
	excludeObj = NULL;
    }
    if (includeObj) {
	Tcl_IncrRefCount(includeObj);
    }
    if (excludeObj) {
	Tcl_IncrRefCount(excludeObj);
    }
    if (exactPtr->includeObj) {
	Tcl_DecrRefCount(exactPtr->includeObj);
    }
    if (exactPtr->excludeObj) {
	Tcl_DecrRefCount(exactPtr->excludeObj);
    }
    exactPtr->includeObj = includeObj;
    exactPtr->excludeObj = excludeObj;
    if (exactPtr->nameClass) {
	memset(exactPtr->nameClass, 0, exactPtr->numNameClass);
    }
}

/*
 * Whether a list of glob patterns matches a name.
 */

static int
MatchesAny(
    Tcl_Obj *listObj,
    const char *name)
{
    Tcl_Obj **pv;
    int i;
    Tcl_Size pc;

    if (Tcl_ListObjGetElements(NULL, listObj, &pc, &pv) != TCL_OK) {
	return 0;
    }
    for (i = 0; i < pc; i++) {
	if (Tcl_StringMatch(name, Tcl_GetString(pv[i]))) {
	    return 1;
	}
    }
    return 0;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofFrameHidden --
 *
 *	Whether a frame is hidden: a control command with -control 0 (in
 *	exact timing; samples apply -control when they are aggregated), or
 *	a name that -include does not match or -exclude does. The verdict
 *	per name is cached until the lists change.
 *
 *----------------------------------------------------------------------
 */

int
CprofFrameHidden(
    CprofState *statePtr,
    int nameId,
    int kind)
{
    CprofExact *exactPtr = &statePtr->exact;
    unsigned char *classPtr;

    if (kind == CPROF_KIND_CONTROL && !statePtr->options.control
	    && exactPtr->on) {
	return 1;
    }
    if (exactPtr->includeObj == NULL && exactPtr->excludeObj == NULL) {
	return 0;
    }
    if (exactPtr->nameClassGeneration != CprofNameGeneration()) {
	/*
	 * Names were freed since: an id may name another by now.
	 */

	if (exactPtr->nameClass) {
	    memset(exactPtr->nameClass, 0, exactPtr->numNameClass);
	}
	exactPtr->nameClassGeneration = CprofNameGeneration();
    }
    if (nameId >= exactPtr->numNameClass) {
	Grow((void **) &exactPtr->nameClass, &exactPtr->numNameClass,
		nameId + 1, 1);
    }
    classPtr = &exactPtr->nameClass[nameId];
    if (*classPtr == 0) {
	const char *name = CprofNameString(nameId);
	int hidden = 0;

	if (name == NULL) {
	    name = "";
	}
	if (exactPtr->includeObj && !MatchesAny(exactPtr->includeObj, name)) {
	    hidden = 1;
	} else if (exactPtr->excludeObj
		&& MatchesAny(exactPtr->excludeObj, name)) {
	    hidden = 1;
	}
	*classPtr = hidden ? 2 : 1;
    }
    return *classPtr == 2;
}

/*
 * The child of 'parent' named nameId, created if new. When the tree is
 * full, the parent itself (the call's time then counts as the parent's).
 */

static int	NewNode(CprofExact *exactPtr, int parent, int nameId,
		    int kind);

static int
ChildNode(
    CprofExact *exactPtr,
    int parent,
    int nameId,
    int kind)
{
    CprofExactNode *pPtr = &exactPtr->nodes[parent];
    int node = pPtr->lastChild;

    if (node >= 0 && exactPtr->nodes[node].nameId == nameId
	    && exactPtr->nodes[node].kind != CPROF_EXACT_LABELS) {
	return node;
    }
    node = MapGet(&exactPtr->childMap, (uint64_t) parent, (uint64_t) nameId);
    if (node < 0) {
	node = NewNode(exactPtr, parent, nameId, kind);
	if (node == parent) {
	    return parent;
	}
	MapPut(&exactPtr->childMap, (uint64_t) parent, (uint64_t) nameId,
		node);
	pPtr = &exactPtr->nodes[parent];
    }
    pPtr->lastChild = node;
    return node;
}

/*
 * A new child of 'parent' (not yet in any map), or, when the tree is
 * full, the parent itself.
 */

static int
NewNode(
    CprofExact *exactPtr,
    int parent,
    int nameId,
    int kind)
{
    CprofExactNode *pPtr, *nPtr;
    int node;

    if (exactPtr->numNodes >= CPROF_EXACT_MAX_NODES) {
	exactPtr->truncatedNodes++;
	return parent;
    }
    node = exactPtr->numNodes++;
    Grow((void **) &exactPtr->nodes, &exactPtr->capNodes, node + 1,
	    sizeof(CprofExactNode));
    pPtr = &exactPtr->nodes[parent];
    nPtr = &exactPtr->nodes[node];
    CprofNameHold(&exactPtr->refs, nameId);
    nPtr->parent = parent;
    nPtr->nameId = nameId;
    nPtr->kind = kind;
    nPtr->firstChild = -1;
    nPtr->lastChild = -1;
    nPtr->nextSibling = pPtr->firstChild;
    nPtr->calls = 0;
    nPtr->totalNs = 0;
    nPtr->minNs = UINT64_MAX;
    nPtr->maxNs = 0;
    nPtr->suspendedNs = 0;
    nPtr->labels = pPtr->labels;
    pPtr->firstChild = node;
    return node;
}

/*
 * The node a call made now under 'parent' goes under: 'parent', or, when
 * the labels in effect (cmdlabels.c) are not the parent's, the child of the
 * parent that stands for them (made if new; its name the set's, "" for
 * none). Keyed in the child map apart from frames' names.
 */

#define LABEL_KEY	((uint64_t) 1 << 40)

static int
LabelParent(
    CprofExact *exactPtr,
    int parent)
{
    int labels, node, nameId;

    if (exactPtr->labelsPtr == NULL) {
	exactPtr->labelsPtr = CprofLabelsThread();
    }
    labels = CprofLabelsNow(exactPtr->labelsPtr);
    if (labels == exactPtr->nodes[parent].labels) {
	return parent;
    }
    node = MapGet(&exactPtr->childMap, (uint64_t) parent,
	    LABEL_KEY | (uint64_t) labels);
    if (node < 0) {
	nameId = labels > 0 ? labels - 1 : CprofNameIntern("", 0);
	node = NewNode(exactPtr, parent, nameId, CPROF_EXACT_LABELS);
	if (node == parent) {
	    return parent;
	}
	exactPtr->nodes[node].labels = labels;
	MapPut(&exactPtr->childMap, (uint64_t) parent,
		LABEL_KEY | (uint64_t) labels, node);
    }
    return node;
}

/*
 *----------------------------------------------------------------------
 *
 * Peers and links --
 *
 *	The profiled interpreters of one thread in one session (a parent
 *	and the children it evaluates in, or a thread's interpreter and
 *	those it created) take part in one chain of calls: `kid eval` in
 *	the parent runs the child's procs, whose alias back runs the
 *	parent's. Each keeps its own tree; a call whose caller is the
 *	other interpreter's frame gets, for its parent, a link node: a
 *	child of the root standing for that frame (its state's serial and
 *	node). CprofScopeProfile joins the trees at the links.
 *
 *	The caller of a call is the innermost frame running on the thread:
 *	the frame entered last among the caller in the call's own stack and
 *	the top frames of the peers' stacks. Which one that is comes from a
 *	count the peers share (a frame's enterSeq, taken when its current
 *	segment starts: its enter, or a coroutine's resume), not from the
 *	clock: the profiler's own time is taken out of the running frames'
 *	(CprofExactShift), which moves their enterNs later, and a reset
 *	restarts one state's clocks, so clock readings do not tell which of
 *	two frames was entered first. Peers join and leave in their own
 *	thread, so the list needs no lock; only runs that time calls in a
 *	session look at it.
 *
 *----------------------------------------------------------------------
 */

#define CPROF_EXACT_PEERS 64

typedef struct CprofExactPeers {
    int num;
    uint64_t seq;		/* The last enterSeq given. */
    CprofState *states[CPROF_EXACT_PEERS];
} CprofExactPeers;

static Tcl_ThreadDataKey peersKey;
static int lastSerial;

void
CprofExactJoinPeers(
    CprofState *statePtr)
{
    CprofExact *exactPtr = &statePtr->exact;
    CprofExactPeers *pPtr;

    if (!exactPtr->on || exactPtr->peers != NULL) {
	return;
    }
    if (exactPtr->serial == 0) {
	exactPtr->serial = __atomic_add_fetch(&lastSerial, 1,
		__ATOMIC_RELAXED);
    }
    pPtr = (CprofExactPeers *) Tcl_GetThreadData(&peersKey,
	    sizeof(CprofExactPeers));
    if (pPtr->num < CPROF_EXACT_PEERS) {
	int i;

	pPtr->states[pPtr->num++] = statePtr;
	exactPtr->peers = pPtr;

	/*
	 * Frames already running (seeded at the start, or entered before
	 * the join) come before any the peers enter from now on.
	 */

	for (i = 0; i < statePtr->levels.stack.depth; i++) {
	    statePtr->levels.stack.frames[i].enterSeq = ++pPtr->seq;
	}
    }
}

void
CprofExactLeavePeers(
    CprofState *statePtr)
{
    CprofExactPeers *pPtr = statePtr->exact.peers;
    int i;

    if (pPtr == NULL) {
	return;
    }
    for (i = 0; i < pPtr->num; i++) {
	if (pPtr->states[i] == statePtr) {
	    pPtr->states[i] = pPtr->states[--pPtr->num];
	    break;
	}
    }
    statePtr->exact.peers = NULL;
}

/*
 * The node a call entered at 'parentNode' (under the frame parentPtr of
 * its own stack, or NULL) goes under: that node, or the link node of
 * a peer's frame entered later.
 */

static int
PeerParent(
    CprofState *statePtr,
    const CprofFrame *parentPtr,
    int parentNode)
{
    CprofExact *exactPtr = &statePtr->exact;
    CprofExactPeers *pPtr = exactPtr->peers;
    CprofState *bestPtr = NULL;
    const CprofFrame *topPtr = NULL;
    uint64_t latest = parentPtr ? parentPtr->enterSeq : 0, a;
    int i, node;

    for (i = 0; i < pPtr->num; i++) {
	CprofState *oPtr = pPtr->states[i];
	int depth = oPtr->levels.stack.depth;

	if (oPtr != statePtr && depth > 0 && oPtr->exact.on
		&& oPtr->levels.stack.frames[depth - 1].enterSeq > latest) {
	    bestPtr = oPtr;
	    topPtr = &oPtr->levels.stack.frames[depth - 1];
	    latest = topPtr->enterSeq;
	}
    }
    if (bestPtr == NULL) {
	return parentNode;
    }
    a = UINT64_C(1) << 63 | (uint32_t) bestPtr->exact.serial;
    node = MapGet(&exactPtr->childMap, a, (uint64_t) topPtr->node);
    if (node < 0) {
	/*
	 * Named after the frame it stands for: the caller shown for call
	 * sites, and the name a tree not joined shows.
	 */

	node = NewNode(exactPtr, 0, topPtr->nameId, topPtr->kind);
	if (node == 0) {
	    return parentNode;
	}
	MapPut(&exactPtr->childMap, a, (uint64_t) topPtr->node, node);
	Grow((void **) &exactPtr->links, &exactPtr->capLinks,
		exactPtr->numLinks + 1, sizeof(struct CprofExactLink));
	exactPtr->links[exactPtr->numLinks].node = node;
	exactPtr->links[exactPtr->numLinks].peerSerial = bestPtr->exact.serial;
	exactPtr->links[exactPtr->numLinks].peerNode = topPtr->node;
	exactPtr->numLinks++;
	MapPut(&bestPtr->exact.targetMap, (uint64_t) topPtr->node, 0, 1);
    }
    return node;
}

/*
 *----------------------------------------------------------------------
 *
 * Call sites --
 *
 *	SiteFor maps the place a command is invoked from (a key the level
 *	stack reads from Tcl's command frame) to a site, resolving the key
 *	to a file and line the first time it is seen. LineRecFor gives the
 *	record of one command at one site.
 *
 *----------------------------------------------------------------------
 */

static int
SiteFor(
    CprofState *statePtr,
    int siteKind,
    void *sitePtr,
    int siteOffset)
{
    CprofExact *exactPtr = &statePtr->exact;
    int site, fileId, line, i;

    if (siteKind == CPROF_SITE_NONE) {
	return -1;
    }
    site = MapGet(&exactPtr->siteKeyMap, (uint64_t) (uintptr_t) sitePtr,
	    (uint64_t) siteOffset);
    if (site >= 0) {
	return site == CPROF_NO_SITE ? -1 : site;
    }
    if (exactPtr->numHeld >= CPROF_MAX_SITE_KEYS) {
	/*
	 * Each key holds its bytecode: code compiled on the fly (eval'ed
	 * strings, redefined procs) would otherwise be kept forever. Start
	 * the cache afresh; sites themselves stay.
	 */

	ReleaseSites(exactPtr);
    }
    i = exactPtr->numHeld;
    if (i >= exactPtr->capHeld) {
	int cap = exactPtr->capHeld ? 2 * exactPtr->capHeld : 64;

	exactPtr->held = (void **) ckrealloc(exactPtr->held,
		cap * sizeof(void *));
	exactPtr->heldKinds = (int *) ckrealloc(exactPtr->heldKinds,
		cap * sizeof(int));
	exactPtr->capHeld = cap;
    }
    CprofHoldSiteKey(siteKind, sitePtr);
    exactPtr->held[i] = sitePtr;
    exactPtr->heldKinds[i] = siteKind;
    exactPtr->numHeld = i + 1;

    if (!CprofResolveSite(statePtr->interp, &exactPtr->refs, siteKind,
	    sitePtr, siteOffset,
	    &fileId, &line)) {
	MapPut(&exactPtr->siteKeyMap, (uint64_t) (uintptr_t) sitePtr,
		(uint64_t) siteOffset, CPROF_NO_SITE);
	return -1;
    }
    site = MapGet(&exactPtr->siteMap, (uint64_t) fileId, (uint64_t) line);
    if (site < 0) {
	site = exactPtr->numSites++;
	if (site >= exactPtr->capSites) {
	    int cap = exactPtr->capSites;

	    Grow((void **) &exactPtr->sites, &exactPtr->capSites, site + 1,
		    sizeof(CprofSite));
	    Grow((void **) &exactPtr->siteHits, &cap, site + 1,
		    sizeof(uint64_t));
	}
	exactPtr->sites[site].fileId = fileId;
	exactPtr->sites[site].line = line;
	exactPtr->siteHits[site] = 0;
	MapPut(&exactPtr->siteMap, (uint64_t) fileId, (uint64_t) line, site);
    }
    MapPut(&exactPtr->siteKeyMap, (uint64_t) (uintptr_t) sitePtr,
	    (uint64_t) siteOffset, site);
    return site;
}

static int
LineRecFor(
    CprofExact *exactPtr,
    int site,
    int nameId,
    int kind,
    int parentNode)		/* Exact node of the calling frame: its name
				 * is the record's caller. */
{
    int rec = MapGet(&exactPtr->lineMap, (uint64_t) site, (uint64_t) nameId);

    if (rec < 0) {
	CprofLineRec *recPtr;

	rec = exactPtr->numLineRecs++;
	Grow((void **) &exactPtr->lineRecs, &exactPtr->capLineRecs, rec + 1,
		sizeof(CprofLineRec));
	recPtr = &exactPtr->lineRecs[rec];
	memset(recPtr, 0, sizeof(CprofLineRec));
	recPtr->site = site;
	recPtr->nameId = nameId;
	recPtr->kind = kind;
	recPtr->callerId = parentNode > 0
		? exactPtr->nodes[parentNode].nameId : -1;
	recPtr->minNs = UINT64_MAX;
	CprofNameHold(&exactPtr->refs, nameId);
	CprofNameHold(&exactPtr->refs, recPtr->callerId);
	MapPut(&exactPtr->lineMap, (uint64_t) site, (uint64_t) nameId, rec);
    }
    return rec;
}

/*
 * Append an event; returns its index or -1 when the buffer is full.
 */

static inline int
AddEvent(
    CprofExact *exactPtr,
    int type,
    const CprofFrame *framePtr,
    uint64_t now)
{
    CprofEvent *evPtr;

    if (exactPtr->events == NULL) {
	return -1;
    }
    if (exactPtr->numEvents >= exactPtr->maxEvents) {
	exactPtr->eventsDropped++;
	return -1;
    }
    evPtr = &exactPtr->events[exactPtr->numEvents];
    evPtr->ns = now - exactPtr->runStartNs;
    evPtr->nameId = framePtr->nameId;
    evPtr->type = (short) type;
    evPtr->kind = (short) framePtr->kind;
    return exactPtr->numEvents++;
}

/*
 * Count a call by name (coverage, in coverage and exact modes).
 */

static inline void
CountName(
    CprofExact *exactPtr,
    int nameId,
    int kind,
    int delta)
{
    if (nameId >= exactPtr->numNameCalls) {
	Grow((void **) &exactPtr->nameCalls, &exactPtr->numNameCalls,
		nameId + 1, sizeof(CprofNameCalls));
    }
    if (exactPtr->nameCalls[nameId].calls == 0) {
	/*
	 * A name counted: the counts hold it (and the nodes, sites and
	 * events of its frames, which have counted it first).
	 */

	CprofNameHold(&exactPtr->refs, nameId);
    }
    exactPtr->nameCalls[nameId].calls += delta;
    exactPtr->nameCalls[nameId].kind = kind;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofExactEnter --
 *
 *	A frame was pushed: give it its node, site record and enter event,
 *	and start its clock (last, so that as little of the profiler's own
 *	work as possible falls inside the call's time).
 *
 *----------------------------------------------------------------------
 */

void
CprofExactEnter(
    CprofState *statePtr,
    CprofFrame *framePtr,
    CprofFrame *parentPtr,
    int siteKind,
    void *sitePtr,
    int siteOffset)
{
    CprofExact *exactPtr = &statePtr->exact;
    int parentNode = parentPtr ? parentPtr->node : 0;
    uint64_t now;

    if (exactPtr->peers != NULL && exactPtr->peers->num > 1) {
	parentNode = PeerParent(statePtr, parentPtr, parentNode);
    }
    framePtr->childNs = 0;
    framePtr->callNs = 0;
    framePtr->desc = 0;
    framePtr->lineRec = -1;
    framePtr->eventIndex = -1;
    if (!(framePtr->flags & (CPROF_FRAME_OWN | CPROF_FRAME_ABOVE))) {
	CountName(exactPtr, framePtr->nameId, framePtr->kind, 1);
    }
    if ((framePtr->flags & CPROF_FRAME_OWN)
	    || CprofFrameHidden(statePtr, framePtr->nameId, framePtr->kind)) {
	framePtr->flags |= CPROF_FRAME_HIDDEN;
	framePtr->node = parentNode;
    } else {
	framePtr->node = ChildNode(exactPtr,
		LabelParent(exactPtr, parentNode), framePtr->nameId,
		framePtr->kind);
    }
    if (exactPtr->lines) {
	int site = SiteFor(statePtr, siteKind, sitePtr, siteOffset);

	if (site >= 0) {
	    exactPtr->siteHits[site]++;
	    if (!(framePtr->flags & CPROF_FRAME_HIDDEN)) {
		framePtr->lineRec = LineRecFor(exactPtr, site,
			framePtr->nameId, framePtr->kind, parentNode);
		exactPtr->lineRecs[framePtr->lineRec].active++;
	    }
	} else {
	    exactPtr->noLocation++;
	}
    }
    exactPtr->hasData = 1;
    framePtr->enterSeq = exactPtr->peers ? ++exactPtr->peers->seq : 0;
    now = Now(exactPtr);
    if (exactPtr->events && !(framePtr->flags & CPROF_FRAME_HIDDEN)) {
	framePtr->eventIndex = AddEvent(exactPtr, 'E', framePtr, now);
    }
    framePtr->enterNs = now;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofExactRename --
 *
 *	A frame's name changed after its enter (an ensemble frame learning
 *	its subcommand): move it to the node, site record and event of its
 *	new name. It has no callees yet.
 *
 *----------------------------------------------------------------------
 */

void
CprofExactRename(
    CprofState *statePtr,
    CprofFrame *framePtr,
    CprofFrame *parentPtr,
    int oldNameId)
{
    CprofExact *exactPtr = &statePtr->exact;
    int parentNode = parentPtr ? parentPtr->node : 0;
    int wasHidden = (framePtr->flags & CPROF_FRAME_HIDDEN) != 0;
    int site = -1;

    if (exactPtr->peers != NULL && exactPtr->peers->num > 1) {
	parentNode = PeerParent(statePtr, parentPtr, parentNode);
    }
    if (!(framePtr->flags & CPROF_FRAME_OWN)) {
	CountName(exactPtr, oldNameId, framePtr->kind, -1);
	CountName(exactPtr, framePtr->nameId, framePtr->kind, 1);
    }

    if (framePtr->lineRec >= 0) {
	site = exactPtr->lineRecs[framePtr->lineRec].site;
	exactPtr->lineRecs[framePtr->lineRec].active--;
	framePtr->lineRec = -1;
    }
    framePtr->flags &= ~CPROF_FRAME_HIDDEN;
    if ((framePtr->flags & CPROF_FRAME_OWN)
	    || CprofFrameHidden(statePtr, framePtr->nameId, framePtr->kind)) {
	framePtr->flags |= CPROF_FRAME_HIDDEN;
	framePtr->node = parentNode;
	if (framePtr->eventIndex >= 0) {
	    exactPtr->events[framePtr->eventIndex].type = 0;
	    framePtr->eventIndex = -1;
	}
	return;
    }
    framePtr->node = ChildNode(exactPtr, LabelParent(exactPtr, parentNode),
	    framePtr->nameId, framePtr->kind);
    if (site >= 0) {
	framePtr->lineRec = LineRecFor(exactPtr, site, framePtr->nameId,
		framePtr->kind, parentNode);
	exactPtr->lineRecs[framePtr->lineRec].active++;
    }
    if (framePtr->eventIndex >= 0) {
	exactPtr->events[framePtr->eventIndex].nameId = framePtr->nameId;
    } else if (wasHidden && exactPtr->events) {
	framePtr->eventIndex = AddEvent(exactPtr, 'E', framePtr,
		framePtr->enterNs);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CprofExactLeave --
 *
 *	The frame at 'index' returned (or was found gone: a missing leave):
 *	charge its call. The frame is still on the stack; the caller pops
 *	it afterwards.
 *
 * Results:
 *	The call's time if it was slower than -slow (the caller reports it
 *	with CprofExactReportSlow once the frame is popped), else 0.
 *
 *----------------------------------------------------------------------
 */

uint64_t
CprofExactLeave(
    CprofState *statePtr,
    int index)
{
    CprofExact *exactPtr = &statePtr->exact;
    CprofFrame *framePtr = &statePtr->levels.stack.frames[index];
    CprofFrame *parentPtr = index > 0 ? framePtr - 1 : NULL;
    uint64_t now = Now(exactPtr);
    int64_t seg, call;
    uint64_t c;
    CprofExactNode *nPtr;

    if (framePtr->flags & CPROF_FRAME_HIDDEN) {
	if (parentPtr) {
	    parentPtr->childNs += framePtr->childNs;
	    parentPtr->desc += 1 + framePtr->desc;
	}
	return 0;
    }
    seg = (int64_t) (now - framePtr->enterNs) - exactPtr->inNs
	    - (int64_t) framePtr->desc * exactPtr->callNs;
    call = framePtr->callNs + seg;
    c = call > 0 ? (uint64_t) call : 0;
    nPtr = &exactPtr->nodes[framePtr->node];
    nPtr->calls++;
    nPtr->totalNs += seg;
    if (c < nPtr->minNs) {
	nPtr->minNs = c;
    }
    if (c > nPtr->maxNs) {
	nPtr->maxNs = c;
    }
    exactPtr->calls++;
    if (framePtr->lineRec >= 0) {
	CprofLineRec *recPtr = &exactPtr->lineRecs[framePtr->lineRec];

	recPtr->calls++;
	if (--recPtr->active == 0) {
	    recPtr->totalNs += call;
	}
	recPtr->selfNs += call - framePtr->childNs;
	if (c < recPtr->minNs) {
	    recPtr->minNs = c;
	}
	if (c > recPtr->maxNs) {
	    recPtr->maxNs = c;
	}
    }
    if (parentPtr) {
	parentPtr->childNs += seg;
	parentPtr->desc += 1 + framePtr->desc;
    }
    if (exactPtr->events) {
	AddEvent(exactPtr, 'L', framePtr, now);
    }
    if (exactPtr->slowNs > 0 && c >= exactPtr->slowNs && !exactPtr->inSlow
	    && framePtr->kind != CPROF_KIND_IDLE) {
	return c;
    }
    return 0;
}

/*
 * Close the current segment of the frame at 'index' (its run ends
 * without the call ending: a yield, or profiling stopping). The frame
 * keeps its node; the time goes to that node and to the frame's caller.
 */

static void
CloseSegment(
    CprofState *statePtr,
    int index,
    uint64_t now)
{
    CprofExact *exactPtr = &statePtr->exact;
    CprofFrame *framePtr = &statePtr->levels.stack.frames[index];
    CprofFrame *parentPtr = index > 0 ? framePtr - 1 : NULL;
    int64_t seg;

    if (framePtr->flags & CPROF_FRAME_HIDDEN) {
	if (parentPtr) {
	    parentPtr->childNs += framePtr->childNs;
	    parentPtr->desc += framePtr->desc;
	}
	framePtr->childNs = 0;
	framePtr->desc = 0;
	return;
    }
    seg = (int64_t) (now - framePtr->enterNs)
	    - (int64_t) framePtr->desc * exactPtr->callNs;
    exactPtr->nodes[framePtr->node].totalNs += seg;
    framePtr->callNs += seg;
    if (parentPtr) {
	parentPtr->childNs += seg;
	parentPtr->desc += framePtr->desc;
    }
    framePtr->desc = 0;
    if (exactPtr->events) {
	AddEvent(exactPtr, 'L', framePtr, now);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CprofExactSuspend, CprofExactResume --
 *
 *	The 'count' frames from 'first' (a coroutine's run, outermost
 *	first) are about to be saved at a yield / were just restored at a
 *	resume above the resumer. On resume, each frame moves to the node
 *	under its new caller's, and the time suspended is charged to the
 *	node the outermost frame had while suspended.
 *
 *----------------------------------------------------------------------
 */

void
CprofExactSuspend(
    CprofState *statePtr,
    int first,
    int count)
{
    uint64_t now = Now(&statePtr->exact);
    int i;

    for (i = first + count - 1; i >= first; i--) {
	CloseSegment(statePtr, i, now);
    }
}

void
CprofExactResume(
    CprofState *statePtr,
    int first,
    int count,
    uint64_t suspendedNs)
{
    CprofExact *exactPtr = &statePtr->exact;
    uint64_t now = Now(exactPtr);
    int i, charged = 0;

    for (i = first; i < first + count; i++) {
	CprofFrame *framePtr = &statePtr->levels.stack.frames[i];
	int parentNode = i > 0 ? framePtr[-1].node : 0;

	int oldNode = framePtr->node;

	framePtr->node = (framePtr->flags & CPROF_FRAME_HIDDEN) ? parentNode
		: ChildNode(exactPtr, parentNode, framePtr->nameId,
		framePtr->kind);
	if (!charged && !(framePtr->flags & CPROF_FRAME_HIDDEN)) {
	    /*
	     * The node it was suspended in; after a reset, which forgot
	     * that one, the node it resumes in.
	     */

	    exactPtr->nodes[oldNode > 0 ? oldNode : framePtr->node]
		    .suspendedNs += suspendedNs;
	    charged = 1;
	}
	framePtr->desc = 0;
	framePtr->enterNs = now;
	framePtr->enterSeq = exactPtr->peers ? ++exactPtr->peers->seq : 0;
	if (exactPtr->events && !(framePtr->flags & CPROF_FRAME_HIDDEN)) {
	    AddEvent(exactPtr, 'E', framePtr, now);
	}
    }
    exactPtr->suspendedNs += suspendedNs;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofExactCloseAll --
 *
 *	Profiling stops or pauses with frames still running: their time so
 *	far is charged, innermost first; the calls, which did not return
 *	while profiled, are not counted. Suspended coroutines are closed at
 *	the same instant (CprofLevelsDropSaved).
 *
 *----------------------------------------------------------------------
 */

void
CprofExactCloseAll(
    CprofState *statePtr)
{
    CprofExact *exactPtr = &statePtr->exact;
    uint64_t now;
    int i;

    if (!exactPtr->on) {
	return;
    }

    now = Now(exactPtr);
    for (i = statePtr->levels.stack.depth - 1; i >= 0; i--) {
	CprofFrame *framePtr = &statePtr->levels.stack.frames[i];

	CloseSegment(statePtr, i, now);
	if (!(framePtr->flags & CPROF_FRAME_HIDDEN)) {
	    exactPtr->openFrames++;
	    if (framePtr->lineRec >= 0) {
		exactPtr->lineRecs[framePtr->lineRec].active--;
	    }
	}
    }
    CprofLevelsDropSaved(&statePtr->levels, now);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofExactShift --
 *
 *	The profiler spent 'ns' of its own (processing samples, reporting a
 *	slow call) while frames ran: take it out of their time. The frames
 *	running are those of every peer of the thread (a child's alias back
 *	into its parent runs inside the child's frames): all of them lose
 *	it, or a child's call would keep time its parent's frames do not
 *	have, and once the trees are joined its parent's frame would have
 *	less time than its callees.
 *
 *----------------------------------------------------------------------
 */

static void
ShiftFrames(
    CprofState *statePtr,
    uint64_t ns)
{
    int i;

    for (i = 0; i < statePtr->levels.stack.depth; i++) {
	statePtr->levels.stack.frames[i].enterNs += ns;
    }
}

void
CprofExactShift(
    CprofState *statePtr,
    uint64_t ns)
{
    CprofExact *exactPtr = &statePtr->exact;
    CprofExactPeers *pPtr = exactPtr->peers;
    int i;

    ShiftFrames(statePtr, ns);
    if (pPtr == NULL) {
	return;
    }
    for (i = 0; i < pPtr->num; i++) {
	CprofState *oPtr = pPtr->states[i];

	/*
	 * The members of a session share the run's options, so their
	 * clocks are the same; one that is not could not take these ticks.
	 */

	if (oPtr != statePtr && oPtr->exact.on
		&& oPtr->exact.tsc == exactPtr->tsc
		&& oPtr->exact.clockId == exactPtr->clockId) {
	    ShiftFrames(oPtr, ns);
	}
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CprofExactRebase --
 *
 *	The data was just cleared (reset) while frames run: give the
 *	running frames new nodes, start their clocks anew and, with
 *	-events, record their enters again; frames of suspended coroutines
 *	get theirs when they are resumed.
 *
 *----------------------------------------------------------------------
 */

void
CprofExactRebase(
    CprofState *statePtr)
{
    CprofExact *exactPtr = &statePtr->exact;
    uint64_t now;
    int i;

    if (!exactPtr->on) {
	return;
    }
    now = Now(exactPtr);
    for (i = 0; i < statePtr->levels.stack.depth; i++) {
	CprofFrame *framePtr = &statePtr->levels.stack.frames[i];
	int parentNode = i > 0 ? framePtr[-1].node : 0;

	framePtr->node = (framePtr->flags & CPROF_FRAME_HIDDEN) ? parentNode
		: ChildNode(exactPtr, parentNode, framePtr->nameId,
		framePtr->kind);
	framePtr->enterNs = now;
	framePtr->childNs = 0;
	framePtr->callNs = 0;
	framePtr->desc = 0;
	framePtr->lineRec = -1;
	framePtr->eventIndex = -1;

	/*
	 * The event buffer was emptied: the running calls enter again, so
	 * that their leaves are not unmatched.
	 */

	if (exactPtr->events && !(framePtr->flags & CPROF_FRAME_HIDDEN)) {
	    framePtr->eventIndex = AddEvent(exactPtr, 'E', framePtr,
		    now);
	}
    }
    CprofLevelsForgetSaved(&statePtr->levels, now);
    exactPtr->rebaseNs = now;
    exactPtr->rebases++;
}

/*
 * A suspended coroutine's frames that will not run again under this
 * profile (the coroutine was deleted, or profiling stops): charge the time
 * suspended so far, and count its frames as unfinished.
 */

void
CprofExactDropSuspended(
    CprofState *statePtr,
    const CprofFrame *frames,
    int count,
    uint64_t suspendedNs)
{
    CprofExact *exactPtr = &statePtr->exact;
    int i, charged = 0;

    for (i = 0; i < count; i++) {
	const CprofFrame *framePtr = &frames[i];

	if (framePtr->flags & CPROF_FRAME_HIDDEN) {
	    continue;
	}
	if (framePtr->node < 0) {
	    /*
	     * A frame of a coroutine suspended since before the start
	     * (captureseed.c) never resumed: never timed, not unfinished.
	     */

	    continue;
	}
	if (!charged && framePtr->node > 0
		&& framePtr->node < exactPtr->numNodes) {
	    exactPtr->nodes[framePtr->node].suspendedNs += suspendedNs;
	    exactPtr->suspendedNs += suspendedNs;
	    charged = 1;
	}
	exactPtr->openFrames++;
	if (framePtr->lineRec >= 0 && framePtr->lineRec
		< exactPtr->numLineRecs) {
	    exactPtr->lineRecs[framePtr->lineRec].active--;
	}
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CprofExactCoverage --
 *
 *	Coverage mode's whole work per command: count the call by name and
 *	the call site.
 *
 *----------------------------------------------------------------------
 */

void
CprofExactCoverage(
    CprofState *statePtr,
    int nameId,
    int kind,
    int siteKind,
    void *sitePtr,
    int siteOffset)
{
    CprofExact *exactPtr = &statePtr->exact;

    CountName(exactPtr, nameId, kind, 1);
    if (exactPtr->lines) {
	int site = SiteFor(statePtr, siteKind, sitePtr, siteOffset);

	if (site >= 0) {
	    exactPtr->siteHits[site]++;
	} else {
	    exactPtr->noLocation++;
	}
    }
    exactPtr->hasData = 1;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofExactReportSlow --
 *
 *	The call of the frame just popped from 'index' took at least -slow: report its name, time and stack to the
 *	-onslow command prefix (with one more argument, a dict with the
 *	keys name, time_ns, time_ms and stack) or, without one, as a line
 *	on stderr. The report's own time is taken out of the frames still
 *	running. Errors of the callback are background errors.
 *
 *----------------------------------------------------------------------
 */

void
CprofExactReportSlow(
    CprofState *statePtr,
    int index,
    uint64_t callNs)
{
    CprofExact *exactPtr = &statePtr->exact;
    Tcl_Interp *interp = statePtr->interp;
    CprofFrame *frames = statePtr->levels.stack.frames;
    Tcl_Obj *stackObj = Tcl_NewListObj(0, NULL), *infoObj;
    uint64_t ticks = callNs;
    const char *name = CprofNameString(frames[index].nameId);
    unsigned generation = statePtr->captureGeneration;
    uint64_t t0 = Now(exactPtr), t1;
    unsigned rebases = exactPtr->rebases;
    int i;

    callNs = (uint64_t) TicksToNs(exactPtr, (int64_t) ticks);
    exactPtr->slowCalls++;
    for (i = 0; i <= index; i++) {
	if (!(frames[i].flags & CPROF_FRAME_HIDDEN)) {
	    const char *n = CprofNameString(frames[i].nameId);

	    Tcl_ListObjAppendElement(NULL, stackObj,
		    Tcl_NewStringObj(n ? n : "?", -1));
	}
    }
    infoObj = Tcl_NewDictObj();
    Tcl_DictObjPut(NULL, infoObj, Tcl_NewStringObj("name", -1),
	    Tcl_NewStringObj(name ? name : "?", -1));
    Tcl_DictObjPut(NULL, infoObj, Tcl_NewStringObj("time_ns", -1),
	    Tcl_NewWideIntObj((Tcl_WideInt) callNs));
    Tcl_DictObjPut(NULL, infoObj, Tcl_NewStringObj("time_ms", -1),
	    Tcl_NewDoubleObj(callNs / 1e6));
    Tcl_DictObjPut(NULL, infoObj, Tcl_NewStringObj("stack", -1), stackObj);
    Tcl_IncrRefCount(infoObj);

    exactPtr->inSlow = 1;
    statePtr->levels.quiet++;
    CprofLevelsRecheck(&statePtr->levels);
    if (exactPtr->onSlowObj != NULL) {
	Tcl_Obj *cmdObj = Tcl_DuplicateObj(exactPtr->onSlowObj);
	Tcl_InterpState saved = Tcl_SaveInterpState(interp, TCL_OK);
	int code;

	Tcl_IncrRefCount(cmdObj);
	Tcl_ListObjAppendElement(NULL, cmdObj, infoObj);
	Tcl_Preserve(interp);
	code = Tcl_EvalObjEx(interp, cmdObj, TCL_EVAL_GLOBAL);
	if (code != TCL_OK) {
	    Tcl_AddErrorInfo(interp, "\n    (tclcprof -onslow callback)");
	    Tcl_BackgroundException(interp, code);
	}
	Tcl_RestoreInterpState(interp, saved);
	Tcl_DecrRefCount(cmdObj);
	Tcl_Release(interp);
    } else {
	Tcl_Channel errChan = Tcl_GetStdChannel(TCL_STDERR);

	if (errChan != NULL) {
	    Tcl_Obj *lineObj = Tcl_ObjPrintf("tclcprof: slow call %s %.3f ms",
		    name ? name : "?", callNs / 1e6);
	    Tcl_Obj **sv;
	    Tcl_Size sc;

	    Tcl_ListObjGetElements(NULL, stackObj, &sc, &sv);
	    Tcl_AppendToObj(lineObj, " (", 2);
	    for (i = 0; i < sc; i++) {
		if (i > 0) {
		    Tcl_AppendToObj(lineObj, " > ", 3);
		}
		Tcl_AppendObjToObj(lineObj, sv[i]);
	    }
	    Tcl_AppendToObj(lineObj, ")\n", 2);
	    Tcl_IncrRefCount(lineObj);
	    Tcl_WriteObj(errChan, lineObj);
	    Tcl_Flush(errChan);
	    Tcl_DecrRefCount(lineObj);
	}
    }
    Tcl_DecrRefCount(infoObj);
    exactPtr->inSlow = 0;
    statePtr->levels.quiet--;
    CprofLevelsRecheck(&statePtr->levels);

    /*
     * The callback may have stopped profiling (or stopped and started it
     * again); only a run still going on has frames to correct.
     */

    if (statePtr->running && statePtr->capturePtr != NULL
	    && statePtr->captureGeneration == generation && exactPtr->on) {
	/*
	 * A reset in the callback restarted the running frames' clocks:
	 * only the time since then is the callback's to take out.
	 */

	t1 = Now(exactPtr);
	CprofExactShift(statePtr, t1 - (exactPtr->rebases != rebases
		? exactPtr->rebaseNs : t0));
    }
}
