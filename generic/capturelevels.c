/*
 * capturelevels.c --
 *
 *	The level stack: a vector of the Tcl commands (and TclOO methods)
 *	executing in one interpreter, innermost last. A capture unit (capturewrap.c
 *	or capturetrace.c) tells it what enters and what leaves; the sampler's
 *	signal handler copies it; exact timing, coverage filters and the
 *	sampler's drain hear of its changes through a hook table registered
 *	by the layer above (CprofLevelHooks), which this file does not name.
 *	The rules that keep the vector true live here:
 *
 *	- Every frame has a serial number, unique for the life of the
 *	  interpreter's state. A capture that pops frames with an NRE
 *	  callback (capturewrap.c) pops by serial, so that a frame moved by a
 *	  coroutine's suspension and resumption is still found, and a pop
 *	  scheduled before the stack was cleared finds nothing.
 *	- Tcl's nesting level (iPtr->numLevels) is recorded with each frame.
 *	  Levels may skip numbers, so the stack is a vector, not an array
 *	  indexed by level. A frame of the current execution environment at
 *	  a level >= that of a command being entered lost its leave (a
 *	  capture that sees no leave for a command deleted while it runs):
 *	  it is popped as a missing leave. A method frame is entered at the
 *	  level of the command that runs it.
 *	- Coroutines: a yield leaves the coroutine's frames on top of the
 *	  stack in another execution environment than the resumer's. When
 *	  the next enter or leave in the resumer's environment finds them
 *	  (or the capture says the coroutine yielded), they are saved under
 *	  the coroutine, with levels relative to the resumer, and restored,
 *	  re-levelled and re-anchored, when the coroutine runs again (eagerly
 *	  through CprofLevelsResume, or lazily at the first enter inside).
 *	  Frames of a coroutine that no longer exists are dropped.
 *	- Ensembles: the ensemble command and the implementation command it
 *	  dispatches to are folded into one frame named "ensemble
 *	  subcommand".
 *	- Names are interned before a frame is pushed (naming.c); nothing that
 *	  reads the stack later touches Tcl objects.
 *
 *	Readers outside normal context (the signal handler) see the depth
 *	and the frame array through acquire loads; frames are written before
 *	the depth that covers them is published, and the array is replaced,
 *	never resized in place (the old one is kept until the stack is
 *	cleared).
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "tclcprofInt.h"
#include <tclInt.h>
#include <string.h>
#include "capturelevelsInline.h"

/*
 * Frames of a suspended coroutine, outermost first, levels relative to
 * the resumer. Coroutines are followed one of two ways:
 *
 * - Registry (a capture that cannot hook resumes: Tcl's trace): an entry
 *   per coroutine in lvPtr->coroSaved, keyed by its CoroutineData, from
 *   the first time the coroutine is seen until its command is deleted (a
 *   command delete trace removes it), so "has an entry" means "alive"
 *   without dereferencing anything. Frames are restored when the
 *   coroutine's command is entered, or at the first enter inside it.
 * - Suspensions (a capture with resume callbacks, lvPtr->coroCbPtr set:
 *   the wrapper): a record exists only while the coroutine is suspended.
 *   It is made when its frames are saved; the capture, told of it,
 *   queues a callback on the coroutine's own NRE stack that restores
 *   the frames (CprofLevelsResumeSuspension) or, if the coroutine is
 *   being deleted, drops them (CprofLevelsDropSuspension). Frames of a
 *   coroutine are popped by the capture's callbacks before the coroutine
 *   is gone, so a frame on the stack names a live coroutine.
 */

struct CprofSuspension {
    CprofLevels *lvPtr;
    Tcl_HashEntry *hPtr;	/* Registry: its entry. */
    Tcl_Command token;		/* Registry: the coroutine's command. */
    void *corKey;		/* The CoroutineData (a key). */
    CprofFrame *frames;		/* Saved frames. */
    int count;
    int capacity;
    uint64_t suspendNs;		/* Exact clock when they were saved. */
    CprofSuspension *nextPtr;	/* Suspensions: the list of them. */
    CprofSuspension *prevPtr;
    void *captureData;		/* Suspensions: the capture's. */
};
typedef CprofSuspension CprofCoroSaved;

static void		CoroDeleteTrace(ClientData clientData,
			    Tcl_Interp *interp, const char *oldName,
			    const char *newName, int flags);
static void		FreeCoroSaved(CprofCoroSaved *savedPtr, int untrace);
static void		FreeSuspension(CprofSuspension *recPtr, int drop);

/*
 *----------------------------------------------------------------------
 *
 * CprofLevelsInit, CprofLevelsClear, CprofLevelsFree --
 *
 *	Set up, empty and tear down a level stack. Clearing forgets the
 *	frames and every coroutine's saved frames (their delete traces are
 *	removed, unless the interpreter is being deleted, when Tcl has
 *	removed them); serial numbers go on, so that pops scheduled before
 *	find nothing.
 *
 *----------------------------------------------------------------------
 */

void
CprofLevelsInit(
    CprofLevels *lvPtr,
    Tcl_Interp *interp,
    CprofNaming *namingPtr)
{
    memset(lvPtr, 0, sizeof(CprofLevels));
    lvPtr->interp = interp;
    lvPtr->namingPtr = namingPtr;
    Tcl_InitHashTable(&lvPtr->coroSaved, TCL_ONE_WORD_KEYS);
}

/*
 * timing, sites, filtering or quiet changed: whether the inline fast
 * paths apply.
 */

void
CprofLevelsRecheck(
    CprofLevels *lvPtr)
{
    lvPtr->plain = !lvPtr->filtering && !lvPtr->quiet
	    && !(lvPtr->timing && lvPtr->sites);
}

void
CprofLevelsClear(
    CprofLevels *lvPtr)
{
    CprofStack *stackPtr = &lvPtr->stack;
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    __atomic_store_n(&stackPtr->depth, 0, __ATOMIC_RELEASE);
    while (stackPtr->retired) {
	CprofRetired *r = stackPtr->retired;

	stackPtr->retired = r->nextPtr;
	ckfree(r);
    }
    while ((hPtr = Tcl_FirstHashEntry(&lvPtr->coroSaved, &search))) {
	FreeCoroSaved(Tcl_GetHashValue(hPtr), !lvPtr->deleting);
    }
    while (lvPtr->suspensions != NULL) {
	CprofSuspension *recPtr = lvPtr->suspensions;

	if (lvPtr->coroCbPtr != NULL) {
	    lvPtr->coroCbPtr->gone(lvPtr->coroData, recPtr);
	}
	FreeSuspension(recPtr, 1);
    }
}

void
CprofLevelsFree(
    CprofLevels *lvPtr)
{
    CprofLevelsClear(lvPtr);
    if (lvPtr->stack.frames) {
	ckfree(lvPtr->stack.frames);
	lvPtr->stack.frames = NULL;
	lvPtr->stack.capacity = 0;
    }
    Tcl_DeleteHashTable(&lvPtr->coroSaved);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofLevelsLiveDepth --
 *
 *	Number of frames that are still live: frames above Tcl's current
 *	nesting level belong to a coroutine that has just yielded or lost
 *	their leave, and are not counted. The sampler applies the same
 *	filter.
 *
 *----------------------------------------------------------------------
 */

int
CprofLevelsLiveDepth(
    CprofLevels *lvPtr)
{
    Interp *iPtr = (Interp *) lvPtr->interp;
    CprofStack *stackPtr = &lvPtr->stack;
    int depth = stackPtr->depth;

    while (depth > 0 && stackPtr->frames[depth-1].level > iPtr->numLevels) {
	depth--;
    }
    return depth;
}

const Tcl_Size *
CprofNumLevelsPtr(
    Tcl_Interp *interp)
{
    return &((Interp *) interp)->numLevels;
}

/*
 *----------------------------------------------------------------------
 *
 * Suspended coroutines and the exact clock --
 *
 *	CprofLevelsForgetSaved: the exact data was cleared (reset) at 'now':
 *	saved frames no longer have nodes or site records (they get nodes
 *	again when resumed), the time they ran before is forgotten, and
 *	their time suspended counts from now. CprofLevelsDropSaved:
 *	profiling stops: their frames will not run again under this
 *	profile; closed at 'now'. CprofLevelsCoroutines: visit every
 *	coroutine seen, with whether it has frames saved.
 *
 *----------------------------------------------------------------------
 */

/*
 * Every suspended coroutine's record, either way they are kept: visit with
 * NextSaved(lvPtr, &search, prev) from prev = NULL.
 */

static CprofSuspension *
NextSaved(
    CprofLevels *lvPtr,
    Tcl_HashSearch *searchPtr,
    CprofSuspension *prevPtr)
{
    Tcl_HashEntry *hPtr;

    if (prevPtr == NULL) {
	hPtr = Tcl_FirstHashEntry(&lvPtr->coroSaved, searchPtr);
	if (hPtr != NULL) {
	    return Tcl_GetHashValue(hPtr);
	}
	return lvPtr->suspensions;
    }
    if (prevPtr->hPtr != NULL) {
	hPtr = Tcl_NextHashEntry(searchPtr);
	if (hPtr != NULL) {
	    return Tcl_GetHashValue(hPtr);
	}
	return lvPtr->suspensions;
    }
    return prevPtr->nextPtr;
}

void
CprofLevelsForgetSaved(
    CprofLevels *lvPtr,
    uint64_t now)
{
    Tcl_HashSearch search;
    CprofSuspension *savedPtr;
    int i;

    for (savedPtr = NextSaved(lvPtr, &search, NULL); savedPtr != NULL;
	    savedPtr = NextSaved(lvPtr, &search, savedPtr)) {
	for (i = 0; i < savedPtr->count; i++) {
	    CprofFrame *framePtr = &savedPtr->frames[i];

	    framePtr->node = 0;
	    framePtr->lineRec = -1;
	    framePtr->eventIndex = -1;
	    framePtr->callNs = 0;
	    framePtr->childNs = 0;
	    framePtr->desc = 0;
	}
	savedPtr->suspendNs = now;
    }
}

void
CprofLevelsDropSaved(
    CprofLevels *lvPtr,
    uint64_t now)
{
    Tcl_HashSearch search;
    CprofSuspension *savedPtr;

    for (savedPtr = NextSaved(lvPtr, &search, NULL); savedPtr != NULL;
	    savedPtr = NextSaved(lvPtr, &search, savedPtr)) {
	if (savedPtr->count > 0) {
	    if (lvPtr->timing) {
		lvPtr->hooks->dropSuspended(lvPtr->hookData, savedPtr->frames,
			savedPtr->count, now - savedPtr->suspendNs);
	    }
	    savedPtr->count = 0;
	}
    }
}

void
CprofLevelsCoroutines(
    CprofLevels *lvPtr,
    void (*proc)(void *corPtr, int saved, void *data),
    void *data)
{
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    for (hPtr = Tcl_FirstHashEntry(&lvPtr->coroSaved, &search);
	    hPtr != NULL; hPtr = Tcl_NextHashEntry(&search)) {
	CprofCoroSaved *savedPtr = Tcl_GetHashValue(hPtr);

	proc(Tcl_GetHashKey(&lvPtr->coroSaved, hPtr), savedPtr->count > 0,
		data);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * Pushing and popping --
 *
 *	PushFrame returns the next free slot (the array is replaced, never
 *	resized in place, when it grows); CommitPush publishes it. PopTop
 *	removes the top frame, whose call completed (tell the hooks first)
 *	or whose leave will never come.
 *
 *----------------------------------------------------------------------
 */

static CprofFrame *
PushFrame(
    CprofStack *stackPtr)
{
    if (stackPtr->depth == stackPtr->capacity) {
	int newCap = stackPtr->capacity ? 2 * stackPtr->capacity : 64;
	CprofFrame *newFrames = (CprofFrame *)
		ckalloc(newCap * sizeof(CprofFrame));
	CprofFrame *oldFrames = stackPtr->frames;

	if (oldFrames) {
	    CprofRetired *r;

	    memcpy(newFrames, oldFrames,
		    stackPtr->depth * sizeof(CprofFrame));

	    /*
	     * Keep the old array until the stack is cleared: the sampler may
	     * still be reading it. The retired record reuses its memory.
	     */

	    r = (CprofRetired *) oldFrames;
	    r->nextPtr = stackPtr->retired;
	    stackPtr->retired = r;
	}
	__atomic_store_n(&stackPtr->frames, newFrames, __ATOMIC_RELEASE);
	stackPtr->capacity = newCap;
    }
    return &stackPtr->frames[stackPtr->depth];
}

static inline void
CommitPush(
    CprofStack *stackPtr)
{
    int depth = stackPtr->depth + 1;

    __atomic_store_n(&stackPtr->depth, depth, __ATOMIC_RELEASE);
    if (depth > stackPtr->maxDepth) {
	stackPtr->maxDepth = depth;
    }
}

/*
 * Pop the top frame: its call completed (POP_LEAVE), ended without a leave
 * of its own (POP_ENDED: the command that resumed a coroutine, whose end
 * is seen when the coroutine yields or returns), or lost its leave
 * (POP_MISSING; lazy frames, resuming commands' frames, and the frames of
 * event handlers and waits, which have no leave of their own, count as
 * leaves). A slow call is reported for POP_LEAVE only: pops of the others
 * happen where no Tcl code may run.
 */

enum { POP_LEAVE, POP_ENDED, POP_MISSING };

static void
PopTop(
    CprofLevels *lvPtr,
    int how)
{
    CprofStack *stackPtr = &lvPtr->stack;
    uint64_t slowNs = 0;


    if (how == POP_MISSING
	    && !(stackPtr->frames[stackPtr->depth - 1].flags
	    & (CPROF_FRAME_RESUME | CPROF_FRAME_LAZY | CPROF_FRAME_ABOVE))) {
	lvPtr->counters.missingLeaves++;
    } else {
	lvPtr->counters.leaves++;
    }
    if (lvPtr->timing) {
	slowNs = lvPtr->hooks->leave(lvPtr->hookData, stackPtr->depth - 1);
    }
    __atomic_store_n(&stackPtr->depth, stackPtr->depth - 1, __ATOMIC_RELEASE);
    if (slowNs > 0 && how == POP_LEAVE) {
	/*
	 * Last: the report may run Tcl code, which may even stop profiling.
	 */

	lvPtr->hooks->slow(lvPtr->hookData, stackPtr->depth, slowNs);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * Coroutine frames --
 *
 *	RegisterCoroutine creates the (empty) saved-frames entry of a
 *	coroutine and a delete trace on its command that frees the entry.
 *	SaveCoroutine moves the run of the coroutine's frames from the top
 *	of the stack into its entry, levels made relative to the resumer;
 *	RestoreCoroutine pushes them back re-levelled and re-anchored.
 *
 *----------------------------------------------------------------------
 */

static CprofCoroSaved *
RegisterCoroutine(
    CprofLevels *lvPtr,
    CoroutineData *corPtr)
{
    Tcl_HashEntry *hPtr;
    CprofCoroSaved *savedPtr;
    int isNew;
    Tcl_Obj *nameObj;

    hPtr = Tcl_CreateHashEntry(&lvPtr->coroSaved, (char *) corPtr, &isNew);
    if (!isNew) {
	return Tcl_GetHashValue(hPtr);
    }
    savedPtr = (CprofCoroSaved *) ckalloc(sizeof(CprofCoroSaved));
    memset(savedPtr, 0, sizeof(CprofCoroSaved));
    savedPtr->lvPtr = lvPtr;
    savedPtr->hPtr = hPtr;
    savedPtr->corKey = corPtr;
    savedPtr->token = (Tcl_Command) corPtr->cmdPtr;
    Tcl_SetHashValue(hPtr, savedPtr);

    nameObj = Tcl_NewObj();
    Tcl_IncrRefCount(nameObj);
    Tcl_GetCommandFullName(lvPtr->interp, savedPtr->token, nameObj);
    if ((corPtr->cmdPtr->flags & CMD_IS_DELETED)
	    || Tcl_TraceCommand(lvPtr->interp, Tcl_GetString(nameObj),
	    TCL_TRACE_DELETE, CoroDeleteTrace, savedPtr) != TCL_OK) {
	/*
	 * Without a delete trace the entry could outlive the coroutine and
	 * "registered" would no longer mean "alive": keep nothing. Its
	 * frames are then dropped, not saved, when it yields.
	 */

	Tcl_ResetResult(lvPtr->interp);
	savedPtr->token = NULL;
	FreeCoroSaved(savedPtr, 0);
	savedPtr = NULL;
    }
    Tcl_DecrRefCount(nameObj);
    return savedPtr;
}

/*
 * The delete trace comes off by the command itself, not by its name: a
 * coroutine hidden since (interp hide) has no name Tcl_UntraceCommand
 * could find, and a trace left behind would call into freed memory, or
 * into the library once unloaded, when the coroutine goes. This does
 * what Tcl_UntraceCommand does for a delete trace (tclTrace.c).
 */

static void
UntraceCoroutine(
    Tcl_Interp *interp,
    Command *cmdPtr,
    CprofCoroSaved *savedPtr)
{
    Interp *iPtr = (Interp *) interp;
    CommandTrace *tracePtr, *prevPtr = NULL;
    ActiveCommandTrace *activePtr;

    for (tracePtr = cmdPtr->tracePtr; tracePtr != NULL;
	    prevPtr = tracePtr, tracePtr = tracePtr->nextPtr) {
	if (tracePtr->traceProc == CoroDeleteTrace
		&& tracePtr->clientData == (ClientData) savedPtr
		&& (tracePtr->flags & (TCL_TRACE_RENAME | TCL_TRACE_DELETE
		| TCL_TRACE_ENTER_EXEC | TCL_TRACE_LEAVE_EXEC)) == TCL_TRACE_DELETE) {
	    break;
	}
    }
    if (tracePtr == NULL) {
	return;
    }
    for (activePtr = iPtr->activeCmdTracePtr; activePtr != NULL;
	    activePtr = activePtr->nextPtr) {
	if (activePtr->nextTracePtr == tracePtr) {
	    activePtr->nextTracePtr = activePtr->reverseScan ? prevPtr
		    : tracePtr->nextPtr;
	}
    }
    if (prevPtr == NULL) {
	cmdPtr->tracePtr = tracePtr->nextPtr;
    } else {
	prevPtr->nextPtr = tracePtr->nextPtr;
    }
    tracePtr->flags = 0;
    if (tracePtr->refCount-- <= 1) {
	ckfree(tracePtr);
    }
}

static void
FreeCoroSaved(
    CprofCoroSaved *savedPtr,
    int untrace)
{
    CprofLevels *lvPtr = savedPtr->lvPtr;

    if (untrace && savedPtr->token != NULL) {
	UntraceCoroutine(lvPtr->interp, (Command *) savedPtr->token,
		savedPtr);
    }
    if (savedPtr->count > 0 && lvPtr->timing) {
	lvPtr->hooks->dropSuspended(lvPtr->hookData, savedPtr->frames,
		savedPtr->count, lvPtr->hooks->now(lvPtr->hookData)
		- savedPtr->suspendNs);
    }
    Tcl_DeleteHashEntry(savedPtr->hPtr);
    if (savedPtr->frames) {
	ckfree(savedPtr->frames);
    }
    ckfree(savedPtr);
}

static void
CoroDeleteTrace(
    ClientData clientData,
    Tcl_Interp *interp,
    const char *oldName,
    const char *newName,
    int flags)
{
    CprofCoroSaved *savedPtr = (CprofCoroSaved *) clientData;

    /*
     * The command is going away and Tcl removes the trace itself.
     */

    savedPtr->token = NULL;
    FreeCoroSaved(savedPtr, 0);
}

/*
 * A suspension record goes: its coroutine resumed (the frames were
 * restored) or is gone ('drop': the frames will not run again under this
 * profile).
 */

static void
FreeSuspension(
    CprofSuspension *recPtr,
    int drop)
{
    CprofLevels *lvPtr = recPtr->lvPtr;

    if (drop && recPtr->count > 0 && lvPtr->timing) {
	lvPtr->hooks->dropSuspended(lvPtr->hookData, recPtr->frames,
		recPtr->count, lvPtr->hooks->now(lvPtr->hookData)
		- recPtr->suspendNs);
    }
    if (recPtr->prevPtr != NULL) {
	recPtr->prevPtr->nextPtr = recPtr->nextPtr;
    } else {
	lvPtr->suspensions = recPtr->nextPtr;
    }
    if (recPtr->nextPtr != NULL) {
	recPtr->nextPtr->prevPtr = recPtr->prevPtr;
    }
    if (recPtr->frames) {
	ckfree(recPtr->frames);
    }
    ckfree(recPtr);
}

static void
SaveCoroutine(
    CprofLevels *lvPtr,
    CprofCoroSaved *savedPtr,
    int first,
    int baseLevel)
{
    CprofStack *stackPtr = &lvPtr->stack;
    int n = stackPtr->depth - first, i;

    if (lvPtr->timing) {
	lvPtr->hooks->suspend(lvPtr->hookData, first, n);
	savedPtr->suspendNs = lvPtr->hooks->now(lvPtr->hookData);
    }
    if (savedPtr->capacity < n) {
	savedPtr->frames = (CprofFrame *) ckrealloc(savedPtr->frames,
		n * sizeof(CprofFrame));
	savedPtr->capacity = n;
    }
    for (i = 0; i < n; i++) {
	savedPtr->frames[i] = stackPtr->frames[first + i];
	savedPtr->frames[i].level -= baseLevel;
    }
    savedPtr->count = n;
    __atomic_store_n(&stackPtr->depth, first, __ATOMIC_RELEASE);
    lvPtr->counters.coroSaves++;
}

static void
RestoreCoroutine(
    CprofLevels *lvPtr,
    CprofCoroSaved *savedPtr,
    int baseLevel,
    uintptr_t anchor)
{
    CprofStack *stackPtr = &lvPtr->stack;
    int i, first = stackPtr->depth;

    for (i = 0; i < savedPtr->count; i++) {
	CprofFrame *framePtr = PushFrame(stackPtr);

	*framePtr = savedPtr->frames[i];
	framePtr->level += baseLevel;
	framePtr->anchor = anchor;
	framePtr->flags |= CPROF_FRAME_RESTORED;
	if (i == 0) {
	    /*
	     * Its call site is where the coroutine was made, not where it
	     * is resumed from.
	     */

	    framePtr->siteCode = NULL;
	}
	CommitPush(stackPtr);
    }
    if (lvPtr->timing) {
	lvPtr->hooks->resume(lvPtr->hookData, first, savedPtr->count,
		lvPtr->hooks->now(lvPtr->hookData) - savedPtr->suspendNs);
    }
    savedPtr->count = 0;
    lvPtr->counters.coroRestores++;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofLevelsSettle --
 *
 *	Deal with frames on top of the stack that belong to another
 *	execution environment than the current one. Frames of a live,
 *	suspended coroutine are saved under it (it yielded); frames of a
 *	coroutine that no longer exists are dead and dropped; frames of a
 *	live coroutine that is still running (the event comes from a nested
 *	environment, e.g. a coroutine it deletes being rewound) stay.
 *
 *----------------------------------------------------------------------
 */

void
CprofLevelsSettle(
    CprofLevels *lvPtr)
{
    CprofStack *stackPtr = &lvPtr->stack;
    void *curEnvPtr = ((Interp *) lvPtr->interp)->execEnvPtr;

    while (stackPtr->depth > 0) {
	CprofFrame *topPtr = &stackPtr->frames[stackPtr->depth - 1];
	CoroutineData *corPtr = (CoroutineData *) topPtr->corPtr;
	CprofSuspension *savedPtr;
	int first, base;

	if (topPtr->envPtr == curEnvPtr || corPtr == NULL) {
	    return;
	}
	if (lvPtr->coroCbPtr == NULL) {
	    Tcl_HashEntry *hPtr = Tcl_FindHashEntry(&lvPtr->coroSaved,
		    (char *) corPtr);

	    if (hPtr == NULL) {
		PopTop(lvPtr, POP_MISSING);
		continue;
	    }
	    savedPtr = Tcl_GetHashValue(hPtr);
	} else {
	    savedPtr = NULL;
	}
	if (!COR_IS_SUSPENDED(corPtr)) {
	    return;
	}

	/*
	 * The resumer is the frame just below the coroutine's run.
	 */

	first = stackPtr->depth - 1;
	while (first > 0 && stackPtr->frames[first - 1].corPtr == corPtr) {
	    first--;
	}
	base = first > 0 ? stackPtr->frames[first - 1].level
		: stackPtr->frames[first].level;
	if (savedPtr == NULL) {
	    savedPtr = (CprofSuspension *) ckalloc(sizeof(CprofSuspension));
	    memset(savedPtr, 0, sizeof(CprofSuspension));
	    savedPtr->lvPtr = lvPtr;
	    savedPtr->corKey = corPtr;
	    savedPtr->nextPtr = lvPtr->suspensions;
	    if (lvPtr->suspensions != NULL) {
		lvPtr->suspensions->prevPtr = savedPtr;
	    }
	    lvPtr->suspensions = savedPtr;
	}
	SaveCoroutine(lvPtr, savedPtr, first, base);

	/*
	 * The frame of the command that resumed it ends with its run.
	 */

	if (stackPtr->depth > 0) {
	    topPtr = &stackPtr->frames[stackPtr->depth - 1];
	    if ((topPtr->flags & CPROF_FRAME_RESUME)
		    && topPtr->objKey == (void *) corPtr) {
		PopTop(lvPtr, POP_ENDED);
	    }
	}
	if (lvPtr->coroCbPtr != NULL) {
	    lvPtr->coroCbPtr->suspended(lvPtr->coroData, savedPtr, corPtr);
	}
    }
}

/*
 * Pop the lazy frames above index 'keep' (their calls completed: a method
 * reached by [next] finds the frames of what the method calling it ran
 * before). Stops at the first frame that is not lazy.
 */

void
CprofLevelsPopLazy(
    CprofLevels *lvPtr,
    int keep)
{
    CprofStack *stackPtr = &lvPtr->stack;

    while (stackPtr->depth > keep + 1
	    && (stackPtr->frames[stackPtr->depth - 1].flags
	    & CPROF_FRAME_LAZY)) {
	PopTop(lvPtr, POP_ENDED);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CprofLevelsEndEvents --
 *
 *	The loop running at 'level' in environment 'envPtr' (NULL: the
 *	current one) is about to wait, to run another handler, or is done:
 *	the frames of its handlers and waits on top of the stack are over,
 *	and so are the frames above them (their calls completed; those of a
 *	coroutine that yielded are settled first). 'endedProc', if not NULL,
 *	hears of each handler's frame before it is popped.
 *
 *----------------------------------------------------------------------
 */

void
CprofLevelsEndEvents(
    CprofLevels *lvPtr,
    int level,
    void *envPtr,
    void (*endedProc)(void *data, CprofFrame *framePtr),
    void *data)
{
    CprofStack *stackPtr = &lvPtr->stack;

    if (envPtr == NULL) {
	envPtr = ((Interp *) lvPtr->interp)->execEnvPtr;
    }
    if (stackPtr->depth > 0 && stackPtr->frames[stackPtr->depth - 1].envPtr
	    != ((Interp *) lvPtr->interp)->execEnvPtr) {
	CprofLevelsSettle(lvPtr);
    }
    while (stackPtr->depth > 0) {
	CprofFrame *topPtr = &stackPtr->frames[stackPtr->depth - 1];

	if (topPtr->envPtr != envPtr || topPtr->level < level) {
	    break;
	}
	if (!(topPtr->flags & CPROF_FRAME_ABOVE) && topPtr->level == level) {
	    break;
	}
	if ((topPtr->flags & CPROF_FRAME_EVENT) && endedProc != NULL) {
	    endedProc(data, topPtr);
	}
	PopTop(lvPtr, POP_ENDED);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CprofLevelsBelow --
 *
 *	The frame a command about to be entered at 'level' in environment
 *	'envPtr' (NULL: the current one) will be pushed above: frames at its level or above it
 *	on top of the stack are done (CprofLevelsEnter pops them), but an
 *	event handler's at its level.
 *
 * Results:
 *	Its index, or -1 when the command will be the outermost frame.
 *
 *----------------------------------------------------------------------
 */

int
CprofLevelsBelow(
    CprofLevels *lvPtr,
    int level,
    void *envPtr)
{
    CprofStack *stackPtr = &lvPtr->stack;
    int i = stackPtr->depth - 1;

    if (envPtr == NULL) {
	envPtr = ((Interp *) lvPtr->interp)->execEnvPtr;
    }

    while (i >= 0 && stackPtr->frames[i].level >= level
	    && stackPtr->frames[i].envPtr == envPtr
	    && !(stackPtr->frames[i].level == level
	    && (stackPtr->frames[i].flags & CPROF_FRAME_EVENT))) {
	i--;
    }
    return i;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofLevelsEnter --
 *
 *	A command (or method) is about to run at entryPtr->level in the
 *	current execution environment (or in entryPtr->envPtr, for the
 *	command that resumed the coroutine now running): push its frame.
 *
 * Results:
 *	The new frame, or NULL when the enter was folded into the ensemble
 *	frame below it or the stack is quiet.
 *
 * Side effects:
 *	May pop frames that lost their leave, save the frames of a
 *	coroutine that yielded, restore those of one entered from outside,
 *	and call the hooks.
 *
 *----------------------------------------------------------------------
 */

CprofFrame *
CprofLevelsEnter(
    CprofLevels *lvPtr,
    const CprofEntry *entryPtr)
{
    CprofStack *stackPtr = &lvPtr->stack;
    Interp *iPtr = (Interp *) lvPtr->interp;
    ExecEnv *envPtr = entryPtr->envPtr ? (ExecEnv *) entryPtr->envPtr
	    : iPtr->execEnvPtr;
    CoroutineData *corPtr = envPtr->corPtr;
    CprofFrame *framePtr, *topPtr;
    int level = entryPtr->level;
    int isMethod = (entryPtr->flags & CPROF_FRAME_METHOD) != 0;
    int isAbove = (entryPtr->flags & CPROF_FRAME_ABOVE) != 0;

    if (lvPtr->quiet) {
	return NULL;
    }
    lvPtr->counters.enters++;
    if (lvPtr->needDrainPtr != NULL && *lvPtr->needDrainPtr) {
	lvPtr->hooks->drain(lvPtr->hookData);
    }

    /*
     * Frames left behind by a coroutine that yielded or by missing
     * leaves. A method frame is entered at the level of the command
     * running it; a wait's at the level of the loop running it, above
     * the loop's frame; an event handler's at the level of its commands,
     * which are entered above it.
     */

    if (stackPtr->depth > 0
	    && stackPtr->frames[stackPtr->depth - 1].envPtr != envPtr) {
	CprofLevelsSettle(lvPtr);
    }
    while (stackPtr->depth > 0) {
	topPtr = &stackPtr->frames[stackPtr->depth - 1];
	if (topPtr->level < level || (isMethod && topPtr->level == level)
		|| (isAbove && topPtr->level == level
		&& !(topPtr->flags & CPROF_FRAME_ABOVE))
		|| (!isAbove && topPtr->level == level
		&& (topPtr->flags & CPROF_FRAME_EVENT))) {
	    break;
	}
	if (topPtr->envPtr != envPtr) {
	    /*
	     * A coroutine body starts at the level of the command that
	     * created or resumed it; a frame of a still running coroutine
	     * (an event in a nested environment) stays.
	     */

	    break;
	}
	PopTop(lvPtr, POP_MISSING);
    }
    topPtr = stackPtr->depth ? &stackPtr->frames[stackPtr->depth - 1] : NULL;

    /*
     * The implementation of an ensemble subcommand: fold into the ensemble
     * frame.
     */

    if (topPtr != NULL && (topPtr->flags & CPROF_FRAME_FOLD)
	    && topPtr->level == level - 1 && topPtr->envPtr == envPtr
	    && !isMethod) {
	int oldNameId = topPtr->nameId;

	topPtr->nameId = CprofNameFold(lvPtr->namingPtr, topPtr->nameId,
		topPtr->token, entryPtr->token);
	topPtr->flags &= ~CPROF_FRAME_FOLD;
	if ((topPtr->flags & CPROF_FRAME_OWN)
		&& !(entryPtr->flags & CPROF_FRAME_OWN)
		&& (stackPtr->depth < 2
		|| !(stackPtr->frames[stackPtr->depth - 2].flags
		& CPROF_FRAME_OWN)
		|| stackPtr->frames[stackPtr->depth - 2].envPtr != envPtr)) {
	    /*
	     * tclcprof's ensemble running a subcommand that is the
	     * program's (tclcprof label), called by the program (not by
	     * tclcprof's own code): the frame is the subcommand's.
	     */

	    topPtr->flags &= ~(CPROF_FRAME_OWN | CPROF_FRAME_HIDDEN);
	    topPtr->kind = entryPtr->kind;
	}
	lvPtr->counters.folded++;
	CprofLevelsRename(lvPtr, stackPtr->depth - 1, oldNameId);
	return NULL;
    }

    /*
     * Entering a coroutine's environment from outside it: restore the
     * frames saved when it was suspended (if the resume was not seen), or
     * start watching it.
     */

    if (corPtr != NULL && lvPtr->coroCbPtr == NULL
	    && (topPtr == NULL || topPtr->envPtr != envPtr)) {
	CprofCoroSaved *savedPtr = RegisterCoroutine(lvPtr, corPtr);

	if (savedPtr != NULL && savedPtr->count > 0) {
	    int base = topPtr ? topPtr->level
		    : level - 1 - savedPtr->frames[savedPtr->count-1].level;

	    RestoreCoroutine(lvPtr, savedPtr, base,
		    topPtr ? topPtr->anchor : entryPtr->anchor);
	    topPtr = &stackPtr->frames[stackPtr->depth - 1];
	}
    }

    framePtr = PushFrame(stackPtr);
    framePtr->nameId = entryPtr->nameId;
    framePtr->level = level;
    framePtr->anchor = entryPtr->anchor;
    framePtr->envPtr = envPtr;
    framePtr->corPtr = corPtr;
    framePtr->token = entryPtr->token;
    framePtr->objKey = entryPtr->objKey;
    framePtr->methodKey = entryPtr->methodKey;
    framePtr->kind = entryPtr->kind;
    framePtr->flags = entryPtr->flags;
    framePtr->serial = ++lvPtr->serial;
    framePtr->node = -1;
    if (lvPtr->sampleSites) {
	CprofLevelsNoteSite(lvPtr, framePtr);
    }

    /*
     * tclcprof's own commands, and whatever runs inside them (a report's
     * Tcl code), are the profiler's: hidden.
     */

    if (topPtr != NULL && (topPtr->flags & CPROF_FRAME_OWN)
	    && topPtr->envPtr == envPtr) {
	framePtr->flags |= CPROF_FRAME_OWN;
    }
    if (framePtr->flags & CPROF_FRAME_OWN) {
	framePtr->flags |= CPROF_FRAME_HIDDEN;
    }
    CommitPush(stackPtr);
    if (lvPtr->timing) {
	lvPtr->hooks->enter(lvPtr->hookData, framePtr, stackPtr->depth > 1
		? framePtr - 1 : NULL, entryPtr->siteKind, entryPtr->sitePtr,
		entryPtr->siteOffset);
    } else if (lvPtr->filtering && !(framePtr->flags & CPROF_FRAME_HIDDEN)
	    && lvPtr->hooks->hidden(lvPtr->hookData, framePtr->nameId,
	    framePtr->kind)) {
	framePtr->flags |= CPROF_FRAME_HIDDEN;
    }
    return framePtr;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofLevelsRename --
 *
 *	The frame at 'index' got its final name after it was pushed (an
 *	ensemble learning its subcommand, an object command learning the
 *	method that runs): tell the hooks, which file it anew.
 *
 *----------------------------------------------------------------------
 */

void
CprofLevelsRename(
    CprofLevels *lvPtr,
    int index,
    int oldNameId)
{
    CprofFrame *framePtr = &lvPtr->stack.frames[index];

    if (lvPtr->timing) {
	lvPtr->hooks->rename(lvPtr->hookData, framePtr, index > 0
		? framePtr - 1 : NULL, oldNameId);
    } else if (lvPtr->filtering && !(framePtr->flags & CPROF_FRAME_OWN)) {
	framePtr->flags &= ~CPROF_FRAME_HIDDEN;
	if (lvPtr->hooks->hidden(lvPtr->hookData, framePtr->nameId,
		framePtr->kind)) {
	    framePtr->flags |= CPROF_FRAME_HIDDEN;
	}
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CprofLevelsLeave --
 *
 *	The call whose frame has 'serial' has completed: pop it, and any
 *	frame of the current environment left above it (their leaves never
 *	came). Frames of other environments on top are settled first.
 *
 * Results:
 *	1 if the frame was found and popped, 0 if not (a stray leave: the
 *	stack was cleared since it was pushed).
 *
 *----------------------------------------------------------------------
 */

int
CprofLevelsLeave(
    CprofLevels *lvPtr,
    uint64_t serial)
{
    CprofStack *stackPtr = &lvPtr->stack;
    void *envPtr = ((Interp *) lvPtr->interp)->execEnvPtr;
    int i;

    if (stackPtr->depth > 0) {
	CprofFrame *topPtr = &stackPtr->frames[stackPtr->depth - 1];

	if (topPtr->serial == serial) {
	    PopTop(lvPtr, POP_LEAVE);
	    return 1;
	}
	if (topPtr->envPtr != envPtr) {
	    CprofLevelsSettle(lvPtr);
	}
    }
    for (i = stackPtr->depth - 1; i >= 0; i--) {
	CprofFrame *framePtr = &stackPtr->frames[i];

	if (framePtr->serial == serial) {
	    while (stackPtr->depth > i + 1) {
		PopTop(lvPtr, POP_MISSING);
	    }
	    PopTop(lvPtr, POP_LEAVE);
	    return 1;
	}
	if (framePtr->envPtr != envPtr) {
	    break;
	}
    }
    lvPtr->counters.strayLeaves++;
    return 0;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofLevelsLeaveLevel --
 *
 *	The command entered at 'level' in the current environment has
 *	finished (a capture that sees leaves by level, not by frame: Tcl's
 *	trace).
 *
 *----------------------------------------------------------------------
 */

void
CprofLevelsLeaveLevel(
    CprofLevels *lvPtr,
    int level)
{
    CprofStack *stackPtr = &lvPtr->stack;
    void *envPtr = ((Interp *) lvPtr->interp)->execEnvPtr;

    while (stackPtr->depth > 0) {
	CprofFrame *topPtr = &stackPtr->frames[stackPtr->depth - 1];

	if (topPtr->envPtr != envPtr) {
	    int before = stackPtr->depth;

	    CprofLevelsSettle(lvPtr);
	    if (stackPtr->depth != before) {
		continue;
	    }
	}
	if (topPtr->level > level && !(topPtr->flags & CPROF_FRAME_METHOD)) {
	    PopTop(lvPtr, POP_MISSING);
	    continue;
	}
	if ((topPtr->flags & CPROF_FRAME_IDLE) && topPtr->level == level) {
	    /*
	     * A wait of the loop that leaves: over.
	     */

	    PopTop(lvPtr, POP_ENDED);
	    continue;
	}
	if (topPtr->level == level && topPtr->envPtr == envPtr
		&& !(topPtr->flags & CPROF_FRAME_METHOD)) {
	    PopTop(lvPtr, POP_LEAVE);
	    return;
	}
	break;
    }
    lvPtr->counters.strayLeaves++;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofLevelsResume, CprofLevelsResumeSuspension,
 * CprofLevelsDropSuspension --
 *
 *	A coroutine is being resumed by the command whose frame is on top:
 *	put the frames saved at its last suspension back above it, at
 *	levels relative to 'baseLevel', all anchored at 'anchor' (the
 *	trampoline that runs the resume). By key (registry) or by its
 *	suspension record, which goes; or drop a suspension record whose
 *	coroutine is being deleted.
 *
 * Results:
 *	CprofLevelsResume: the number of frames restored.
 *
 *----------------------------------------------------------------------
 */

int
CprofLevelsResume(
    CprofLevels *lvPtr,
    void *corKey,
    int baseLevel,
    uintptr_t anchor)
{
    Tcl_HashEntry *hPtr = Tcl_FindHashEntry(&lvPtr->coroSaved,
	    (char *) corKey);
    CprofCoroSaved *savedPtr;
    int n;

    if (hPtr == NULL) {
	return 0;
    }
    savedPtr = Tcl_GetHashValue(hPtr);
    n = savedPtr->count;
    if (n > 0) {
	RestoreCoroutine(lvPtr, savedPtr, baseLevel, anchor);
    }
    return n;
}

void
CprofLevelsResumeSuspension(
    CprofLevels *lvPtr,
    CprofSuspension *recPtr,
    int baseLevel,
    uintptr_t anchor)
{
    if (recPtr->count > 0) {
	RestoreCoroutine(lvPtr, recPtr, baseLevel, anchor);
    }
    FreeSuspension(recPtr, 0);
}

void
CprofLevelsDropSuspension(
    CprofLevels *lvPtr,
    CprofSuspension *recPtr)
{
    FreeSuspension(recPtr, 1);
}

/*
 * A suspended coroutine's frames from the seed's entries (outermost
 * first): never entered under this run (no node, no line, no event), each
 * with a serial of this stack (serials[] gets them, for their pops).
 */

static void
SeedFrames(
    CprofLevels *lvPtr,
    CprofFrame *frames,
    void *corKey,
    void *envPtr,
    const CprofEntry *entries,
    int n,
    uint64_t *serials)
{
    int i;

    for (i = 0; i < n; i++) {
	CprofFrame *framePtr = &frames[i];

	framePtr->nameId = entries[i].nameId;
	framePtr->level = entries[i].level;
	framePtr->envPtr = envPtr;
	framePtr->corPtr = corKey;
	framePtr->token = entries[i].token;
	framePtr->objKey = entries[i].objKey;
	framePtr->methodKey = entries[i].methodKey;
	framePtr->kind = entries[i].kind;
	framePtr->flags = entries[i].flags;
	framePtr->serial = ++lvPtr->serial;
	framePtr->node = -1;
	framePtr->lineRec = -1;
	framePtr->eventIndex = -1;
	if (lvPtr->filtering && lvPtr->hooks->hidden(lvPtr->hookData,
		framePtr->nameId, framePtr->kind)) {
	    framePtr->flags |= CPROF_FRAME_HIDDEN;
	}
	serials[i] = framePtr->serial;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CprofLevelsSeedSuspension --
 *
 *	A coroutine suspended since before the run started (captureseed.c): its
 *	frames, 'entries' outermost first with levels relative to its
 *	resumer, become its suspension record, as if saved at a yield, and
 *	the capture is told of it (it then restores them when the coroutine
 *	is resumed). Only with a capture that hooks resumes. With exact
 *	timing the frames have no node until their resume (they were never
 *	entered): they are timed from there, nothing of them before the
 *	start is charged, and their time suspended since the start is
 *	reported as a yield's is. serials[] gets each frame's serial (for
 *	its pop).
 *
 * Results:
 *	The number of frames, 0 if none were recorded.
 *
 *----------------------------------------------------------------------
 */

int
CprofLevelsSeedSuspension(
    CprofLevels *lvPtr,
    void *corKey,
    void *envPtr,
    const CprofEntry *entries,
    int n,
    uint64_t *serials)
{
    CprofSuspension *recPtr;

    if (n <= 0 || lvPtr->coroCbPtr == NULL || lvPtr->quiet) {
	return 0;
    }
    recPtr = (CprofSuspension *) ckalloc(sizeof(CprofSuspension));
    memset(recPtr, 0, sizeof(CprofSuspension));
    recPtr->lvPtr = lvPtr;
    recPtr->corKey = corKey;
    recPtr->frames = (CprofFrame *) ckalloc(n * sizeof(CprofFrame));
    recPtr->capacity = n;
    memset(recPtr->frames, 0, n * sizeof(CprofFrame));
    SeedFrames(lvPtr, recPtr->frames, corKey, envPtr, entries, n, serials);
    recPtr->count = n;
    if (lvPtr->timing) {
	/*
	 * Timed from their resume (node -1: none yet); their time suspended
	 * counts from now, the start.
	 */

	recPtr->suspendNs = lvPtr->hooks->now(lvPtr->hookData);
    }
    recPtr->nextPtr = lvPtr->suspensions;
    if (lvPtr->suspensions != NULL) {
	lvPtr->suspensions->prevPtr = recPtr;
    }
    lvPtr->suspensions = recPtr;
    lvPtr->coroCbPtr->suspended(lvPtr->coroData, recPtr, corKey);
    return n;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofLevelsSeedSaved --
 *
 *	The same for a level stack that follows coroutines by their
 *	environments (the trace's: no resume hook): the frames become the
 *	coroutine's saved frames, restored when the trace first sees a
 *	command entered inside it after a resume (CprofLevelsEnter).
 *
 * Results:
 *	The number of frames, 0 if none were recorded.
 *
 *----------------------------------------------------------------------
 */

int
CprofLevelsSeedSaved(
    CprofLevels *lvPtr,
    void *corKey,
    void *envPtr,
    const CprofEntry *entries,
    int n,
    uint64_t *serials)
{
    CprofCoroSaved *savedPtr;

    if (n <= 0 || lvPtr->coroCbPtr != NULL || lvPtr->quiet) {
	return 0;
    }
    savedPtr = RegisterCoroutine(lvPtr, (CoroutineData *) corKey);
    if (savedPtr == NULL || savedPtr->count > 0) {
	return 0;
    }
    if (savedPtr->capacity < n) {
	savedPtr->frames = (CprofFrame *) ckrealloc(savedPtr->frames,
		n * sizeof(CprofFrame));
	savedPtr->capacity = n;
    }
    memset(savedPtr->frames, 0, n * sizeof(CprofFrame));
    SeedFrames(lvPtr, savedPtr->frames, corKey, envPtr, entries, n,
	    serials);
    savedPtr->count = n;
    if (lvPtr->timing) {
	savedPtr->suspendNs = lvPtr->hooks->now(lvPtr->hookData);
    }
    return n;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofLevelsCoroutineBody --
 *
 *	The name of the outermost frame of a coroutine (the code it was
 *	made to run, the name of the frame of a command resuming it is made
 *	of): from its suspension record 'recPtr' when the caller has it, its
 *	saved frames, or its frames on the stack while it runs.
 *
 * Results:
 *	A name id, or -1 when none is known.
 *
 *----------------------------------------------------------------------
 */

int
CprofLevelsCoroutineBody(
    CprofLevels *lvPtr,
    void *corKey,
    CprofSuspension *recPtr)
{
    CprofStack *stackPtr = &lvPtr->stack;
    int i, found = -1;

    if (recPtr == NULL && lvPtr->coroCbPtr == NULL) {
	Tcl_HashEntry *hPtr = Tcl_FindHashEntry(&lvPtr->coroSaved,
		(char *) corKey);

	recPtr = hPtr ? Tcl_GetHashValue(hPtr) : NULL;
    } else if (recPtr == NULL && lvPtr->coroCbPtr->find != NULL) {
	recPtr = lvPtr->coroCbPtr->find(lvPtr->coroData, corKey);
    }
    if (recPtr != NULL && recPtr->count > 0) {
	return recPtr->frames[0].nameId;
    }
    for (i = stackPtr->depth - 1; i >= 0; i--) {
	if (stackPtr->frames[i].corPtr == corKey) {
	    found = i;
	} else if (found >= 0) {
	    break;
	}
    }
    return found >= 0 ? stackPtr->frames[found].nameId : -1;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofLevelsPushScript, CprofLevelsEndScript --
 *
 *	The top level of a script already running below every command of
 *	the stack (the program's main script, when profiling starts from
 *	inside it) gets a frame at level 0, under the commands it runs
 *	(level 1 and above), which never pop it; nothing is pushed unless
 *	the stack is empty and the current environment is no coroutine's.
 *	It ends when the stack is cleared, or with CprofLevelsEndScript.
 *
 *----------------------------------------------------------------------
 */

void
CprofLevelsPushScript(
    CprofLevels *lvPtr,
    int nameId,
    uintptr_t anchor)
{
    CprofEntry entry;

    if (lvPtr->stack.depth > 0
	    || ((Interp *) lvPtr->interp)->execEnvPtr->corPtr != NULL) {
	return;
    }
    memset(&entry, 0, sizeof(entry));
    entry.nameId = nameId;
    entry.kind = CPROF_KIND_CMD;
    entry.flags = CPROF_FRAME_SCRIPT;
    entry.level = 0;
    entry.anchor = anchor;
    entry.siteKind = CPROF_SITE_NONE;
    CprofLevelsEnter(lvPtr, &entry);
}

void
CprofLevelsEndScript(
    CprofLevels *lvPtr)
{
    CprofStack *stackPtr = &lvPtr->stack;

    if (stackPtr->depth > 0
	    && (stackPtr->frames[0].flags & CPROF_FRAME_SCRIPT)) {
	CprofLevelsLeave(lvPtr, stackPtr->frames[0].serial);
    }
}

/*
 * The capture's word in a suspension record.
 */

void **
CprofSuspensionData(
    CprofSuspension *recPtr)
{
    return &recPtr->captureData;
}
