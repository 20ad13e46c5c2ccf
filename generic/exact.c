/*
 * exact.c --
 *
 *	Exact timing: counts and times of every traced command, kept as a
 *	call tree of Tcl call paths, per call site (-lines), as a bounded
 *	list of enter/leave events (-events), and as coverage counts.
 *
 *	The level stack (levelstack.c) calls in at each event, through the
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
 *	  clock by CprofExactCalibrate.
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

#include "tclcprofInt.h"
#include <string.h>
#include <stdio.h>
#if defined(__x86_64__) || defined(__i386__)
#   include <x86intrin.h>
#   define HAVE_TSC 1
#endif

/*
 * Compensation figures, measured once per process for each clock.
 */

static struct {
    int valid;
    int64_t inNs, callNs;
    int64_t refNs;		/* The reference loop's time then. */
} calibCache[3][3];		/* Monotonic, thread CPU, TSC; by
				 * capture (enum CprofCaptureKind). */
TCL_DECLARE_MUTEX(calibMutex)

/*
 * The time-stamp counter: 1 usable, -1 not, 0 not known yet; and its
 * nanoseconds per tick, measured once per process.
 */

static int tscState = 0;
static double tscNsPerTick = 1.0;




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

static inline uint64_t
Now(
    const CprofExact *exactPtr)
{
#ifdef HAVE_TSC
    if (exactPtr->tsc) {
	return __rdtsc();
    }
#endif
    return CprofClockNs(exactPtr->clockId);
}

uint64_t
CprofExactNow(
    CprofState *statePtr)
{
    return Now(&statePtr->exact);
}

static inline int64_t
TicksToNs(
    const CprofExact *exactPtr,
    int64_t ticks)
{
    return exactPtr->tsc ? (int64_t) (ticks * exactPtr->nsPerTick) : ticks;
}

int64_t
CprofExactTicksToNs(
    CprofState *statePtr,
    int64_t ticks)
{
    return TicksToNs(&statePtr->exact, ticks);
}

/*
 * Whether the time-stamp counter can time elapsed intervals here: an x86
 * processor that says its counter runs at a constant rate through power
 * states. Its rate is measured against CLOCK_MONOTONIC over 2 ms, once.
 */

static int
TscUsable(void)
{
#ifdef HAVE_TSC
    Tcl_MutexLock(&calibMutex);
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
    Tcl_MutexUnlock(&calibMutex);
    return tscState == 1;
#else
    return 0;
#endif
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
    exactPtr->calls = 0;
    exactPtr->hasData = 0;
    exactPtr->runStartNs = Now(exactPtr);
}

void
CprofExactFree(
    CprofState *statePtr)
{
    CprofExact *exactPtr = &statePtr->exact;

    ReleaseSites(exactPtr);
    MapFree(&exactPtr->childMap);
    MapFree(&exactPtr->siteMap);
    MapFree(&exactPtr->lineMap);
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
    memset(exactPtr, 0, sizeof(CprofExact));
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
    exactPtr->tsc = (optsPtr->clock != CPROF_CLOCK_CPU) && TscUsable();
    exactPtr->nsPerTick = exactPtr->tsc ? tscNsPerTick : 1.0;
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
    int n;

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
    int pc, i;

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

static int
ChildNode(
    CprofExact *exactPtr,
    int parent,
    int nameId,
    int kind)
{
    CprofExactNode *pPtr = &exactPtr->nodes[parent], *nPtr;
    int node = pPtr->lastChild;

    if (node >= 0 && exactPtr->nodes[node].nameId == nameId) {
	return node;
    }
    node = MapGet(&exactPtr->childMap, (uint64_t) parent, (uint64_t) nameId);
    if (node < 0) {
	if (exactPtr->numNodes >= CPROF_EXACT_MAX_NODES) {
	    exactPtr->truncatedNodes++;
	    return parent;
	}
	node = exactPtr->numNodes++;
	Grow((void **) &exactPtr->nodes, &exactPtr->capNodes, node + 1,
		sizeof(CprofExactNode));
	pPtr = &exactPtr->nodes[parent];
	nPtr = &exactPtr->nodes[node];
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
	pPtr->firstChild = node;
	MapPut(&exactPtr->childMap, (uint64_t) parent, (uint64_t) nameId,
		node);
    }
    pPtr->lastChild = node;
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

    if (!CprofResolveSite(statePtr->interp, siteKind, sitePtr, siteOffset,
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

    framePtr->childNs = 0;
    framePtr->callNs = 0;
    framePtr->desc = 0;
    framePtr->lineRec = -1;
    framePtr->eventIndex = -1;
    if (!(framePtr->flags & CPROF_FRAME_OWN)) {
	CountName(exactPtr, framePtr->nameId, framePtr->kind, 1);
    }
    if ((framePtr->flags & CPROF_FRAME_OWN)
	    || CprofFrameHidden(statePtr, framePtr->nameId, framePtr->kind)) {
	framePtr->flags |= CPROF_FRAME_HIDDEN;
	framePtr->node = parentNode;
    } else {
	framePtr->node = ChildNode(exactPtr, parentNode, framePtr->nameId,
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
    framePtr->node = ChildNode(exactPtr, parentNode, framePtr->nameId,
	    framePtr->kind);
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
    if (exactPtr->slowNs > 0 && c >= exactPtr->slowNs && !exactPtr->inSlow) {
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
 *	slow call) while frames ran: take it out of their time.
 *
 *----------------------------------------------------------------------
 */

void
CprofExactShift(
    CprofState *statePtr,
    uint64_t ns)
{
    int i;

    for (i = 0; i < statePtr->levels.stack.depth; i++) {
	statePtr->levels.stack.frames[i].enterNs += ns;
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
	    int sc;

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

/*
 *----------------------------------------------------------------------
 *
 * CprofExactCalibrate --
 *
 *	Measure the profiler's cost per traced call, once per process and
 *	clock: time a loop of calls of an empty proc without the trace and
 *	with it (timing into the state's own structures, compensation off),
 *	and read how much of each call's measured time is the profiler's.
 *	Later starts only time the reference loop (under a millisecond) and
 *	scale the figures by the machine's speed then against its speed at
 *	the calibration. Called by start before the capture is installed;
 *	installs it (installProc, with timing on) and removes it
 *	(removeProc) itself, and times into a scratch state. The figures
 *	are kept per clock and per capture, whose costs differ.
 *
 * Results:
 *	TCL_OK; *inNsPtr and *callNsPtr are set, in ticks of the run's
 *	clock (0 if the measurement failed).
 *
 *----------------------------------------------------------------------
 */

static int64_t
TimeScript(
    CprofState *statePtr,
    const char *script)
{
    uint64_t t0 = Now(&statePtr->exact);

    if (Tcl_EvalEx(statePtr->interp, script, -1, TCL_EVAL_GLOBAL) != TCL_OK) {
	return -1;
    }
    return (int64_t) (Now(&statePtr->exact) - t0);
}

/*
 * The calls of a round: CALIB_LOOP calls of an empty proc from a loop, and
 * a recursive Fibonacci of CALIB_FIB (calls of a proc with an argument,
 * from an expression, whose results are used): the cost of Tcl's trace
 * machinery differs a little between such call sites (by about 10% here).
 * The mix, one third loop and two thirds recursion, stands for procs
 * calling procs, the common case.
 */

#define CALIB_LOOP	5000
#define CALIB_FIB	18
#define CALIB_FIB_CALLS	8361	/* 2 * fib(CALIB_FIB + 1) - 1 */
#define CALIB_ROUNDS	7	/* Rounds; the fastest of each counts. */

/*
 * The reference loop: an empty loop of CALIB_REF iterations (about 0.2 ms)
 * timed at the calibration and again at every later start, the fastest of
 * CALIB_REF_RUNS. This machine's speed can change by a factor of two from
 * one second to the next (a shared virtual machine); the cost per call
 * measured once is scaled by the ratio of the two times.
 */

#define CALIB_REF	8000
#define CALIB_REF_RUNS	3
#define CALIB_SCRIPT \
	"namespace eval ::tclcprof_calibration {\n" \
	"    proc Nop {} {}\n" \
	"    proc Loop {n} {for {set i 0} {$i < $n} {incr i} {Nop}}\n" \
	"    proc Empty {n} {for {set i 0} {$i < $n} {incr i} {}}\n" \
	"    proc Fib {n} {\n" \
	"        if {$n < 2} {return $n}\n" \
	"        expr {[Fib [expr {$n - 1}]] + [Fib [expr {$n - 2}]]}\n" \
	"    }\n" \
	"}"

/*
 * The fastest of 'runs' timings of the reference loop, in ticks of the
 * exact clock of 'statePtr'; -1 if it failed. The calibration procs must
 * be defined.
 */

static int64_t
TimeReference(
    CprofState *statePtr,
    int runs)
{
    char ref[64];
    int64_t best = INT64_MAX, t;
    int i;

    snprintf(ref, sizeof(ref), "::tclcprof_calibration::Empty %d",
	    CALIB_REF);
    for (i = 0; i < runs; i++) {
	t = TimeScript(statePtr, ref);
	if (t < 0) {
	    return -1;
	}
	if (t < best) {
	    best = t;
	}
    }
    return best;
}

/*
 * The cached figures of clock 'which', scaled to the machine's speed now.
 * The state's exact clock must be that clock.
 */

static void
RescaledFigures(
    CprofState *statePtr,
    int which,
    int capture,
    int64_t *inNsPtr,
    int64_t *callNsPtr)
{
    Tcl_Interp *interp = statePtr->interp;
    Tcl_InterpState saved = Tcl_SaveInterpState(interp, TCL_OK);
    int64_t now = -1;
    double ratio;

    if (Tcl_EvalEx(interp, CALIB_SCRIPT, -1, TCL_EVAL_GLOBAL) == TCL_OK) {
	TimeScript(statePtr, "::tclcprof_calibration::Empty 10");
	now = TimeReference(statePtr, CALIB_REF_RUNS);
    }
    Tcl_EvalEx(interp, "namespace delete ::tclcprof_calibration", -1,
	    TCL_EVAL_GLOBAL);
    Tcl_RestoreInterpState(interp, saved);
    ratio = (now > 0 && calibCache[which][capture].refNs > 0)
	    ? (double) now / (double) calibCache[which][capture].refNs : 1.0;
    if (ratio < 0.25) {
	ratio = 0.25;
    } else if (ratio > 4) {
	ratio = 4;
    }
    *inNsPtr = (int64_t) (calibCache[which][capture].inNs * ratio);
    *callNsPtr = (int64_t) (calibCache[which][capture].callNs * ratio);
}

int
CprofExactCalibrate(
    CprofState *statePtr,
    int clock,
    int capture,
    int (*installProc)(CprofState *statePtr),
    void (*removeProc)(CprofState *statePtr),
    int64_t *inNsPtr,
    int64_t *callNsPtr)
{
    CprofExact *exactPtr = &statePtr->exact, keep;
    Tcl_Interp *interp = statePtr->interp;
    int which = (clock == CPROF_CLOCK_CPU) ? 1 : TscUsable() ? 2 : 0;
    Tcl_InterpState saved;
    int64_t best[5], t, rawNop = INT64_MAX, refNs;
    int round, i, ok = 1;
    char loop[64], empty[64], fib[64];
    const char *scripts[3];

    *inNsPtr = *callNsPtr = 0;

    /*
     * Time into a scratch state: the last run's data stays as it is.
     */

    keep = *exactPtr;
    CprofExactInit(exactPtr);
    exactPtr->on = 1;
    exactPtr->clockId = (which == 1) ? CLOCK_THREAD_CPUTIME_ID
	    : CLOCK_MONOTONIC;
    exactPtr->tsc = (which == 2);
    exactPtr->nsPerTick = exactPtr->tsc ? tscNsPerTick : 1.0;

    Tcl_MutexLock(&calibMutex);
    if (calibCache[which][capture].valid) {
	Tcl_MutexUnlock(&calibMutex);
	RescaledFigures(statePtr, which, capture, inNsPtr, callNsPtr);
	CprofExactFree(statePtr);
	*exactPtr = keep;
	return TCL_OK;
    }
    Tcl_MutexUnlock(&calibMutex);

    saved = Tcl_SaveInterpState(interp, TCL_OK);
    if (Tcl_EvalEx(interp, CALIB_SCRIPT, -1, TCL_EVAL_GLOBAL) != TCL_OK) {
	Tcl_RestoreInterpState(interp, saved);
	CprofExactFree(statePtr);
	*exactPtr = keep;
	return TCL_OK;
    }
    snprintf(loop, sizeof(loop), "::tclcprof_calibration::Loop %d",
	    CALIB_LOOP);
    snprintf(empty, sizeof(empty), "::tclcprof_calibration::Empty %d",
	    CALIB_LOOP);
    snprintf(fib, sizeof(fib), "::tclcprof_calibration::Fib %d", CALIB_FIB);
    scripts[0] = loop;
    scripts[1] = empty;
    scripts[2] = fib;

    /*
     * best[]: the loop, the empty loop and the recursion without the
     * trace; the loop and the recursion with it.
     */

    for (i = 0; i < 5; i++) {
	best[i] = INT64_MAX;
    }
    for (i = 0; i < 3; i++) {
	TimeScript(statePtr, scripts[i]);	/* Compile, warm up. */
    }
    for (round = 0; round < CALIB_ROUNDS && ok; round++) {
	for (i = 0; i < 3 && ok; i++) {
	    t = TimeScript(statePtr, scripts[i]);
	    ok = (t >= 0);
	    if (t < best[i]) {
		best[i] = t;
	    }
	}
    }
    refNs = ok ? TimeReference(statePtr, CALIB_ROUNDS) : -1;

    /*
     * With the trace: the real enter and leave paths, timing into the
     * scratch state. The empty proc's measured time, less what the call
     * costs without the trace, is the profiler's share inside a call.
     */

    ok = ok && installProc(statePtr) == TCL_OK;
    for (round = 0; round < CALIB_ROUNDS && ok; round++) {
	int node;

	CprofExactClear(statePtr);
	t = TimeScript(statePtr, loop);
	ok = (t >= 0);
	if (t < best[3]) {
	    best[3] = t;
	}
	for (node = 1; node < exactPtr->numNodes; node++) {
	    const char *n = CprofNameString(exactPtr->nodes[node].nameId);

	    if (n != NULL && strcmp(n, "::tclcprof_calibration::Nop") == 0
		    && exactPtr->nodes[node].calls > 0) {
		int64_t mean = exactPtr->nodes[node].totalNs
			/ (int64_t) exactPtr->nodes[node].calls;

		if (mean < rawNop) {
		    rawNop = mean;
		}
		break;
	    }
	}
	t = TimeScript(statePtr, fib);
	ok = ok && (t >= 0);
	if (t < best[4]) {
	    best[4] = t;
	}
    }
    removeProc(statePtr);
    CprofExactFree(statePtr);
    *exactPtr = keep;
    Tcl_EvalEx(interp, "namespace delete ::tclcprof_calibration", -1,
	    TCL_EVAL_GLOBAL);
    Tcl_RestoreInterpState(interp, saved);
    if (!ok || rawNop == INT64_MAX) {
	return TCL_OK;
    }

    {
	int64_t trueNop = (best[0] - best[1]) / CALIB_LOOP;
	int64_t callNs = ((best[3] - best[0]) + (best[4] - best[2]))
		/ (CALIB_LOOP + CALIB_FIB_CALLS);
	int64_t inNs = rawNop - (trueNop > 0 ? trueNop : 0);

	if (callNs < 0) {
	    callNs = 0;
	}
	if (inNs < 0) {
	    inNs = 0;
	}
	if (inNs > callNs) {
	    inNs = callNs;
	}
	*inNsPtr = inNs;
	*callNsPtr = callNs;
	if (callNs == 0) {
	    /*
	     * The cost was lost in the machine's noise (a loaded machine,
	     * the wrapper's few nanoseconds): this run is not compensated,
	     * which its header says, and the next start measures again.
	     */

	    return TCL_OK;
	}
	Tcl_MutexLock(&calibMutex);
	calibCache[which][capture].valid = 1;
	calibCache[which][capture].inNs = inNs;
	calibCache[which][capture].callNs = callNs;
	calibCache[which][capture].refNs = refNs;
	Tcl_MutexUnlock(&calibMutex);
    }
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * Reading the data --
 *
 *	CprofExactTreeObj: the exact call tree as nested node dicts (built
 *	bottom up, without recursion). CprofExactNodeFigures: one node's
 *	figures added to a dict (mode both annotates the sampled tree with
 *	them). CprofExactLinesObj, CprofExactEventsObj,
 *	CprofExactCoverageObj: the other parts of a profile.
 *
 *----------------------------------------------------------------------
 */

#define PUT(d, k, v) \
    Tcl_DictObjPut(NULL, (d), Tcl_NewStringObj((k), -1), (v))

/*
 *----------------------------------------------------------------------
 *
 * CprofExactAdjust --
 *
 *	Totals adjusted bottom up so that no node's total is below its
 *	children's sum (compensation can take a node below when its own
 *	share was overestimated), the self times that follow, and which
 *	nodes a profile shows: not those nothing was charged to (an
 *	ensemble's frame before it was named with its subcommand), unless a
 *	node below them is shown. The arrays have numNodes elements; times
 *	in ns.
 *
 *----------------------------------------------------------------------
 */

void
CprofExactAdjust(
    CprofExact *exactPtr,
    int64_t *adj,
    int64_t *self,
    unsigned char *shown)
{
    int64_t *childSum = (int64_t *) ckalloc(exactPtr->numNodes
	    * sizeof(int64_t));
    int i;

    memset(childSum, 0, exactPtr->numNodes * sizeof(int64_t));
    memset(shown, 0, exactPtr->numNodes);
    for (i = exactPtr->numNodes - 1; i >= 0; i--) {
	CprofExactNode *nPtr = &exactPtr->nodes[i];
	int64_t t = (i == 0) ? 0 : TicksToNs(exactPtr, nPtr->totalNs);

	if (t < 0) {
	    t = 0;
	}
	if (t < childSum[i]) {
	    t = childSum[i];
	}
	adj[i] = t;
	self[i] = t - childSum[i];
	if (i == 0 || shown[i] || nPtr->calls != 0 || nPtr->totalNs != 0
		|| nPtr->suspendedNs != 0) {
	    shown[i] = 1;
	    if (nPtr->parent >= 0) {
		shown[nPtr->parent] = 1;
	    }
	}
	if (nPtr->parent >= 0) {
	    childSum[nPtr->parent] += t;
	}
    }
    ckfree(childSum);
}

/*
 * The figures of a node whose (adjusted) total and self times are known.
 */

void
CprofExactFiguresOf(
    CprofExact *exactPtr,
    int node,
    int64_t total,
    int64_t self,
    CprofFigures *figPtr)
{
    CprofExactNode *nPtr = &exactPtr->nodes[node];

    figPtr->calls = nPtr->calls;
    figPtr->totalNs = total;
    figPtr->selfNs = self;
    figPtr->minNs = nPtr->calls ? TicksToNs(exactPtr, (int64_t) nPtr->minNs)
	    : 0;
    figPtr->maxNs = TicksToNs(exactPtr, (int64_t) nPtr->maxNs);
    figPtr->suspendedNs = TicksToNs(exactPtr, (int64_t) nPtr->suspendedNs);
}

/*
 * Put a node's figures into its dict: calls total_ns self_ns min_ns max_ns
 * and, when not zero, suspended_ns.
 */

void
CprofFiguresPut(
    Tcl_Obj *dictObj,
    const CprofFigures *figPtr)
{
    PUT(dictObj, "calls", Tcl_NewWideIntObj((Tcl_WideInt) figPtr->calls));
    PUT(dictObj, "total_ns", Tcl_NewWideIntObj(figPtr->totalNs));
    PUT(dictObj, "self_ns", Tcl_NewWideIntObj(figPtr->selfNs));
    PUT(dictObj, "min_ns", Tcl_NewWideIntObj(figPtr->minNs));
    PUT(dictObj, "max_ns", Tcl_NewWideIntObj(figPtr->maxNs));
    if (figPtr->suspendedNs > 0) {
	PUT(dictObj, "suspended_ns", Tcl_NewWideIntObj(figPtr->suspendedNs));
    }
}

Tcl_Obj *
CprofExactTreeObj(
    CprofExact *exactPtr)
{
    int n = exactPtr->numNodes, i;
    int64_t *adj = (int64_t *) ckalloc(n * sizeof(int64_t));
    int64_t *self = (int64_t *) ckalloc(n * sizeof(int64_t));
    unsigned char *shown = (unsigned char *) ckalloc(n);
    Tcl_Obj **objs = (Tcl_Obj **) ckalloc(n * sizeof(Tcl_Obj *));
    Tcl_Obj *kindObjs[CPROF_KIND_COUNT], *tclObj, *resultObj;

    CprofExactAdjust(exactPtr, adj, self, shown);
    for (i = 0; i < CPROF_KIND_COUNT; i++) {
	kindObjs[i] = Tcl_NewStringObj(CprofKindName(i), -1);
	Tcl_IncrRefCount(kindObjs[i]);
    }
    tclObj = Tcl_NewStringObj("tcl", -1);
    Tcl_IncrRefCount(tclObj);

    /*
     * Children have higher indices than their parents: build from the
     * last node back, each node after its children.
     */

    for (i = n - 1; i >= 0; i--) {
	CprofExactNode *nPtr = &exactPtr->nodes[i];
	Tcl_Obj *dictObj, *childrenObj;
	CprofFigures fig;
	int c;

	if (!shown[i]) {
	    objs[i] = NULL;
	    continue;
	}
	dictObj = Tcl_NewDictObj();
	childrenObj = Tcl_NewListObj(0, NULL);
	if (i == 0) {
	    PUT(dictObj, "name", Tcl_NewObj());
	    PUT(dictObj, "kind", Tcl_NewStringObj("root", -1));
	} else {
	    const char *name = CprofNameString(nPtr->nameId);

	    PUT(dictObj, "name", Tcl_NewStringObj(name ? name : "?", -1));
	    PUT(dictObj, "kind", tclObj);
	    PUT(dictObj, "tclkind", kindObjs[nPtr->kind]);
	}
	PUT(dictObj, "self", Tcl_NewWideIntObj(self[i]));
	PUT(dictObj, "total", Tcl_NewWideIntObj(adj[i]));
	CprofExactFiguresOf(exactPtr, i, adj[i], self[i], &fig);
	CprofFiguresPut(dictObj, &fig);
	for (c = nPtr->firstChild; c >= 0; c = exactPtr->nodes[c].nextSibling) {
	    if (objs[c] != NULL) {
		Tcl_ListObjAppendElement(NULL, childrenObj, objs[c]);
		Tcl_DecrRefCount(objs[c]);
	    }
	}
	PUT(dictObj, "children", childrenObj);
	Tcl_IncrRefCount(dictObj);
	objs[i] = dictObj;
    }
    resultObj = objs[0];
    Tcl_DecrRefCount(tclObj);
    for (i = 0; i < CPROF_KIND_COUNT; i++) {
	Tcl_DecrRefCount(kindObjs[i]);
    }
    ckfree(objs);
    ckfree(shown);
    ckfree(adj);
    ckfree(self);
    resultObj->refCount--;	/* Handed over without being freed. */
    return resultObj;
}

/*
 * The figures a node of the sampled tree carries in mode both: those of
 * its exact node, adjusted one level deep (enough for a single node's
 * figures to be self-consistent). 0 when there are none.
 */

int
CprofExactNodeValues(
    CprofExact *exactPtr,
    int node,
    CprofFigures *figPtr)
{
    CprofExactNode *nPtr;
    int64_t total, childSum = 0;
    int c;

    if (node <= 0 || node >= exactPtr->numNodes) {
	return 0;
    }
    nPtr = &exactPtr->nodes[node];
    for (c = nPtr->firstChild; c >= 0; c = exactPtr->nodes[c].nextSibling) {
	int64_t t = TicksToNs(exactPtr, exactPtr->nodes[c].totalNs);

	childSum += t > 0 ? t : 0;
    }
    total = TicksToNs(exactPtr, nPtr->totalNs);
    if (total < 0) {
	total = 0;
    }
    if (total < childSum) {
	total = childSum;
    }
    CprofExactFiguresOf(exactPtr, node, total, total - childSum, figPtr);
    return 1;
}

void
CprofExactNodeFigures(
    CprofExact *exactPtr,
    int node,
    Tcl_Obj *dictObj)
{
    CprofFigures fig;

    if (CprofExactNodeValues(exactPtr, node, &fig)) {
	CprofFiguresPut(dictObj, &fig);
    }
}

/*
 * The figures of call-site record 'rec' as a profile shows them. Returns
 * 0 for a record a profile leaves out (no call completed nor running).
 */

int
CprofExactLineValues(
    CprofExact *exactPtr,
    int rec,
    CprofLineValues *valPtr)
{
    CprofLineRec *recPtr = &exactPtr->lineRecs[rec];
    CprofSite *sitePtr = &exactPtr->sites[recPtr->site];

    valPtr->fileId = sitePtr->fileId;
    valPtr->line = sitePtr->line;
    valPtr->nameId = recPtr->nameId;
    valPtr->kind = recPtr->kind;
    valPtr->callerId = recPtr->callerId;
    valPtr->calls = recPtr->calls;
    valPtr->totalNs = recPtr->totalNs > 0
	    ? TicksToNs(exactPtr, recPtr->totalNs) : 0;
    valPtr->selfNs = recPtr->selfNs > 0
	    ? TicksToNs(exactPtr, recPtr->selfNs) : 0;
    valPtr->minNs = recPtr->calls
	    ? TicksToNs(exactPtr, (int64_t) recPtr->minNs) : 0;
    valPtr->maxNs = TicksToNs(exactPtr, (int64_t) recPtr->maxNs);
    return recPtr->calls != 0 || recPtr->active != 0;
}

Tcl_Obj *
CprofExactLinesObj(
    CprofExact *exactPtr)
{
    Tcl_Obj *listObj = Tcl_NewListObj(0, NULL);
    CprofLineValues v;
    int i;

    for (i = 0; i < exactPtr->numLineRecs; i++) {
	Tcl_Obj *dictObj;
	const char *file, *name, *caller;

	if (!CprofExactLineValues(exactPtr, i, &v)) {
	    continue;
	}
	file = CprofNameString(v.fileId);
	name = CprofNameString(v.nameId);
	dictObj = Tcl_NewDictObj();
	PUT(dictObj, "file", Tcl_NewStringObj(file ? file : "", -1));
	PUT(dictObj, "line", Tcl_NewIntObj(v.line));
	PUT(dictObj, "name", Tcl_NewStringObj(name ? name : "?", -1));
	PUT(dictObj, "tclkind", Tcl_NewStringObj(CprofKindName(v.kind), -1));
	caller = v.callerId >= 0 ? CprofNameString(v.callerId) : NULL;
	PUT(dictObj, "caller", Tcl_NewStringObj(caller ? caller : "", -1));
	PUT(dictObj, "calls", Tcl_NewWideIntObj((Tcl_WideInt) v.calls));
	PUT(dictObj, "total_ns", Tcl_NewWideIntObj(v.totalNs));
	PUT(dictObj, "self_ns", Tcl_NewWideIntObj(v.selfNs));
	PUT(dictObj, "min_ns", Tcl_NewWideIntObj(v.minNs));
	PUT(dictObj, "max_ns", Tcl_NewWideIntObj(v.maxNs));
	Tcl_ListObjAppendElement(NULL, listObj, dictObj);
    }
    return listObj;
}

Tcl_Obj *
CprofExactEventsObj(
    CprofExact *exactPtr)
{
    Tcl_Obj *listObj = Tcl_NewListObj(0, NULL);
    Tcl_Obj *enterObj = Tcl_NewStringObj("E", 1);
    Tcl_Obj *leaveObj = Tcl_NewStringObj("L", 1);
    Tcl_HashTable names;
    int i;

    /*
     * One shared name object per name id.
     */

    Tcl_InitHashTable(&names, TCL_ONE_WORD_KEYS);
    for (i = 0; i < exactPtr->numEvents; i++) {
	CprofEvent *evPtr = &exactPtr->events[i];
	Tcl_HashEntry *hPtr;
	int isNew;

	if (evPtr->type == 0) {
	    continue;
	}
	hPtr = Tcl_CreateHashEntry(&names, INT2PTR(evPtr->nameId), &isNew);
	if (isNew) {
	    const char *name = CprofNameString(evPtr->nameId);

	    Tcl_SetHashValue(hPtr, Tcl_NewStringObj(name ? name : "?", -1));
	}
	Tcl_ListObjAppendElement(NULL, listObj, Tcl_NewWideIntObj(
		TicksToNs(exactPtr, (int64_t) evPtr->ns)));
	Tcl_ListObjAppendElement(NULL, listObj,
		evPtr->type == 'E' ? enterObj : leaveObj);
	Tcl_ListObjAppendElement(NULL, listObj, Tcl_GetHashValue(hPtr));
    }
    Tcl_DeleteHashTable(&names);
    if (enterObj->refCount == 0) {
	Tcl_DecrRefCount(enterObj);
    }
    if (leaveObj->refCount == 0) {
	Tcl_DecrRefCount(leaveObj);
    }
    return listObj;
}

/*
 * Coverage: {commands {{name N tclkind K calls C} ...} procs {defined
 * procs} lines {{file F line L calls C} ...}}: the commands entered (by
 * name, hidden ones too), the procedures defined now, the call sites.
 */

Tcl_Obj *
CprofExactCoverageObj(
    CprofState *statePtr)
{
    CprofExact *exactPtr = &statePtr->exact;
    Tcl_Obj *resultObj = Tcl_NewDictObj(), *cmdsObj = Tcl_NewListObj(0, NULL);
    Tcl_Obj *linesObj = Tcl_NewListObj(0, NULL);
    int i;

    for (i = 0; i < exactPtr->numNameCalls; i++) {
	if (exactPtr->nameCalls[i].calls > 0) {
	    Tcl_Obj *d = Tcl_NewDictObj();
	    const char *name = CprofNameString(i);

	    PUT(d, "name", Tcl_NewStringObj(name ? name : "?", -1));
	    PUT(d, "tclkind", Tcl_NewStringObj(CprofKindName(
		    exactPtr->nameCalls[i].kind), -1));
	    PUT(d, "calls", Tcl_NewWideIntObj((Tcl_WideInt)
		    exactPtr->nameCalls[i].calls));
	    Tcl_ListObjAppendElement(NULL, cmdsObj, d);
	}
    }
    for (i = 0; i < exactPtr->numSites; i++) {
	if (exactPtr->siteHits[i] > 0) {
	    Tcl_Obj *d = Tcl_NewDictObj();
	    const char *file = CprofNameString(exactPtr->sites[i].fileId);

	    PUT(d, "file", Tcl_NewStringObj(file ? file : "", -1));
	    PUT(d, "line", Tcl_NewIntObj(exactPtr->sites[i].line));
	    PUT(d, "calls", Tcl_NewWideIntObj((Tcl_WideInt)
		    exactPtr->siteHits[i]));
	    Tcl_ListObjAppendElement(NULL, linesObj, d);
	}
    }
    PUT(resultObj, "commands", cmdsObj);
    PUT(resultObj, "procs", CprofDefinedProcs(statePtr->interp));
    PUT(resultObj, "lines", linesObj);
    return resultObj;
}
