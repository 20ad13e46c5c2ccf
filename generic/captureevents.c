/*
 * captureevents.c --
 *
 *	Event-loop attribution, part of the capture (it reads Tcl's private
 *	records):
 *
 *	- Every handler the event loop runs (an [after] script, timer or
 *	  idle; a [fileevent] script; a Tk binding; the background error
 *	  handler) gets a frame of kind event above its commands, named for
 *	  its kind and script head ("after ::h::work", "fileevent sock5
 *	  readable", "bind .c <Button-1>", "bgerror ::tcl::Bgerror"), whose
 *	  name id is an alias carrying its origin: the procedure (or
 *	  method) and file:line that scheduled it (CprofNameWithOrigin), or
 *	  "unknown" for a handler scheduled before start or out of sight.
 *	- Exact timing on the wall clock: the time the loop waits in the
 *	  notifier is a frame [idle] (kind idle) under the loop. Sampling
 *	  finds waiting samples by their native stacks instead
 *	  (drain.c), at no cost in the hot path.
 *	- Per origin and kind (statePtr->handlers): count, time, and for
 *	  timers the latency from due time to run.
 *
 *	How handlers are recognised. The program's scripts are never
 *	rewritten ([after info], [fileevent] and [bind] queries, errors and
 *	results stay what they are): what the capture sees is enough.
 *
 *	- Scheduling: [after], [fileevent], [chan event], [bind] and [close]
 *	  are wrapped like every command; CprofEventsSchedule runs before
 *	  one, takes its origin from the level stack (the nearest procedure
 *	  or method frame below) and Tcl's command frame (the file and line,
 *	  as -lines does), and queues an NRE callback that records, once the
 *	  command has done its work, the record Tcl made: the AfterInfo at
 *	  the head of the interpreter's "tclAfter" list (its script object
 *	  is the very one [after info] returns and AfterProc evaluates), the
 *	  channel's EventScriptRecord of the interpreter and mask, the
 *	  binding's script. The scripts are held (a reference each) while
 *	  recorded, so that comparing pointers is safe.
 *	- Running: a handler's first command is entered right above the
 *	  frame of the command running the event loop (CPROF_FRAME_LOOP:
 *	  vwait, update, tkwait...; or on an empty stack, as under Tk's main
 *	  loop or Tcl_DoOneEvent called from C) or of the handler before it.
 *	  The level stack's fast path leaves such enters to the capture's
 *	  slow path (the flags it tests already, and lvPtr->rootEvents while
 *	  handlers may run), which calls CprofEventsBefore. The script
 *	  running is Tcl's current command frame: a bytecode (the script
 *	  object's internal representation), or the list object of a list
 *	  evaluated directly. AfterProc unlinks an AfterInfo from the list
 *	  just before evaluating its script, so the after handler starting
 *	  is the recorded one that left the list and whose script runs: two
 *	  timers sharing a script object are told apart. A [fileevent]
 *	  handler is the record whose script runs; the background error
 *	  handler is recognised by its last two arguments, the very message
 *	  and options objects of the interpreter's first pending BgError; a
 *	  Tk binding by its first command, matched against the scripts
 *	  bound (their % substitutions as wildcards).
 *	  A coroutine resumed by a handler ("after 0 [info coroutine]") is
 *	  not wrapped: the wrapper's resume callback asks the same, from the
 *	  coroutine's record of its caller's command frame.
 *	- Ending: a handler's frame is at the level of its commands, which
 *	  are pushed above it, not in its place: readers (the sampler) show
 *	  it while one of its commands runs, never while the loop waits or
 *	  between two handlers, when the trampoline its anchor names is
 *	  gone. It ends when the next handler starts, when the loop waits
 *	  again (an event source of ours is asked to set up just before the
 *	  notifier waits), when the loop's own frame goes (its pop is
 *	  queued by this file), or when a command runs at its level from a
 *	  script that is not the handler's. This file pops it itself each
 *	  time (CprofLevelsEndEvents), so that the level stack's pops need
 *	  no test of their own for it.
 *	- Waiting: the event source's setup and check bracket the notifier's
 *	  wait; with exact timing on the wall clock they push and pop [idle].
 *	  Samples do not need it: drain.c reads the wait from their
 *	  native stacks (Tcl_WaitForEvent), which costs nothing while the
 *	  program runs and is exactly the wait, not the sources' setup and
 *	  check around it.
 *
 *	The records of the handlers that may run, their names, origins and
 *	statistics are captureeventrecs.c's, below this file.
 *
 *	-capture frames pushes nothing: the scheduling commands are seen
 *	through an nreProc of this file's (SwapRoles), the records of
 *	[after] handlers that ran are kept a while (CprofEvRetireAfter), and
 *	the drain puts a handler's frame above the level of a sample that
 *	runs its script (captureframes.c asks HandlerOf). Runs of [after] handlers
 *	are counted as they leave Tcl's list, without a time; [fileevent]
 *	runs are not counted; Tk bindings and the background error handler
 *	get no frame.
 *
 *	Not seen: a handler that enters no command at all (a script of
 *	inline-compiled commands, "set ::done 1") has no frame; an [after]
 *	one is counted all the same when its record is found gone from
 *	Tcl's list, without a time. Handlers in C (Tk's redisplay) run
 *	under the loop's frame.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include <tclInt.h>
#include <tclIO.h>
#include "captureeventsInt.h"
#include "captureframes.h"
#include <string.h>
#include <stdio.h>
#include <stdlib.h>

#define LOOK_NS 10000000	/* With more than 64 timers pending, the
				 * loop's waits look at all of Tcl's list
				 * at most every 10 ms. */

/*
 * What a scheduling command's NRE callback records.
 */

typedef struct Pending {
    CprofState *statePtr;
    unsigned generation;	/* The capture's, when queued. */
    int role;			/* CPROF_ROLE_*. */
    int kind;			/* Handler kind (after: -1 for a cancel). */
    int originId;
    uint64_t dueNs;
    Tcl_Obj *argObjs[3];	/* Held: the channel's name, or the
				 * binding's tag, sequence and script. */
} Pending;

static void		CloseEvent(CprofEvents *evPtr, OpenEvent *oePtr);
static void		EndHandlers(CprofEvents *evPtr, int level,
			    void *envPtr);
static void		SetupProc(ClientData clientData, int flags);
static void		CheckProc(ClientData clientData, int flags);
static int		ScheduledCallback(ClientData data[],
			    Tcl_Interp *interp, int result);

/*
 *----------------------------------------------------------------------
 *
 * StartEvent, CloseEvent --
 *
 *	A handler starts: count it and push its frame at 'level', its
 *	commands' (which do not pop it), anchored where its first command
 *	is: readers show it while a command of the handler runs, not while
 *	the loop waits or between handlers. A handler is over: charge its
 *	time.
 *
 *----------------------------------------------------------------------
 */

static void
StartEvent(
    CprofEvents *evPtr,
    int kind,
    int nameId,
    int originId,
    int idType,
    const void *idPtr,
    int level,
    uintptr_t anchor,
    void *envPtr,
    uint64_t dueNs)
{
    CprofState *statePtr = evPtr->statePtr;
    CprofHandlerStat *statPtr;
    OpenEvent *oePtr;
    CprofFrame *framePtr;
    CprofEntry entry;
    uint64_t now;

    /*
     * The handler before this one is over first: background errors that
     * appeared since it started are its.
     */

    EndHandlers(evPtr, level - 1, envPtr);
    now = CprofEvNow();
    statPtr = CprofEvStat(&statePtr->handlers, originId, kind);
    statPtr->count++;
    if (dueNs != 0) {
	uint64_t late = now > dueNs ? now - dueNs : 0;

	statPtr->latencyCount++;
	statPtr->latencyNs += late;
	if (late > statPtr->latencyMaxNs) {
	    statPtr->latencyMaxNs = late;
	}
    }
    CprofEvMapBgErrors(evPtr, -1);
    oePtr = (OpenEvent *) ckalloc(sizeof(OpenEvent));
    oePtr->kind = kind;
    oePtr->originId = originId;
    oePtr->idType = idType;
    oePtr->idPtr = idPtr;
    oePtr->prevPtr = NULL;
    oePtr->nextPtr = evPtr->open;
    if (evPtr->open != NULL) {
	evPtr->open->prevPtr = oePtr;
    }
    evPtr->open = oePtr;

    entry.nameId = nameId;
    entry.kind = CPROF_KIND_EVENT;
    entry.flags = CPROF_FRAME_EVENT;
    entry.level = level;
    entry.anchor = anchor;
    entry.token = NULL;
    entry.objKey = oePtr;
    entry.methodKey = NULL;
    entry.envPtr = envPtr;
    entry.siteKind = CPROF_SITE_NONE;
    oePtr->startNs = now;
    framePtr = CprofLevelsEnter(&statePtr->levels, &entry);
    if (framePtr == NULL) {
	CloseEvent(evPtr, oePtr);
    }
}

static void
CloseEvent(
    CprofEvents *evPtr,
    OpenEvent *oePtr)
{
    CprofHandlerStat *statPtr;
    uint64_t ns = CprofEvNow() - oePtr->startNs;

    statPtr = CprofEvStat(&evPtr->statePtr->handlers, oePtr->originId,
	    oePtr->kind);
    statPtr->timed++;
    statPtr->totalNs += ns;
    if (ns > statPtr->maxNs) {
	statPtr->maxNs = ns;
    }
    CprofEvMapBgErrors(evPtr, oePtr->originId);
    if (oePtr->prevPtr != NULL) {
	oePtr->prevPtr->nextPtr = oePtr->nextPtr;
    } else {
	evPtr->open = oePtr->nextPtr;
    }
    if (oePtr->nextPtr != NULL) {
	oePtr->nextPtr->prevPtr = oePtr->prevPtr;
    }
    ckfree(oePtr);
}

/*
 * A handler's frame is about to be popped (CprofLevelsEndEvents).
 */

static void
HandlerEnded(
    void *data,
    CprofFrame *framePtr)
{
    CprofEvents *evPtr = (CprofEvents *) data;
    OpenEvent *oePtr;

    for (oePtr = evPtr->open; oePtr != NULL; oePtr = oePtr->nextPtr) {
	if (oePtr == framePtr->objKey) {
	    framePtr->objKey = NULL;
	    CloseEvent(evPtr, oePtr);
	    return;
	}
    }
}

/*
 * The loop at 'level' is done with its handlers (it waits, runs another,
 * or returns): their frames go.
 */

static void
EndHandlers(
    CprofEvents *evPtr,
    int level,
    void *envPtr)
{
    CprofLevelsEndEvents(&evPtr->statePtr->levels, level, envPtr,
	    HandlerEnded, evPtr);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofEventsBefore --
 *
 *	A command is about to be entered at 'level' right above a loop's
 *	frame, a handler's, or on an empty stack: is it the first of a
 *	handler? If so, push the handler's frame (ending the one before).
 *
 *----------------------------------------------------------------------
 */

static void
Before(
    CprofState *statePtr,
    int level,
    uintptr_t anchor,
    void *envPtr,
    CmdFrame *cfPtr,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofEvents *evPtr = statePtr->eventsPtr;
    CprofLevels *lvPtr = &statePtr->levels;
    CprofFrame *candPtr;
    OpenEvent *oePtr = NULL;
    int below, idType;
    const void *idPtr;
    BgError *errPtr;
    AfterRec *afterPtr;
    FileRec *filePtr;
    BindRec *bindPtr;

    if (evPtr == NULL || !evPtr->installed || lvPtr->quiet) {
	return;
    }
    below = CprofLevelsBelow(lvPtr, level, envPtr);
    candPtr = below >= 0 ? &lvPtr->stack.frames[below] : NULL;
    if (candPtr != NULL && (candPtr->flags & CPROF_FRAME_EVENT)) {
	oePtr = (OpenEvent *) candPtr->objKey;
    }
    CprofEvRunningScript(cfPtr, &idType, &idPtr);
    if (candPtr == NULL && idType == evPtr->rootType
	    && idPtr == evPtr->rootPtr) {
	/*
	 * The script seen last on an empty stack, which was no handler.
	 */

	return;
    }
    errPtr = CprofEvRunningBgError(evPtr, objc, objv);
    if (errPtr != NULL) {
	Tcl_HashEntry *hPtr = Tcl_FindHashEntry(&evPtr->bgOrigins,
		(char *) errPtr);
	int originId = hPtr ? PTR2INT(Tcl_GetHashValue(hPtr)) - 1
		: evPtr->unknownId;
	int nameId = CprofEvName(evPtr, "bgerror ", Tcl_GetString(objv[0]),
		-1, "", originId);

	StartEvent(evPtr, CPROF_HANDLER_BGERROR, nameId, originId, ID_NONE,
		NULL, level, anchor, envPtr, 0);
	return;
    }

    afterPtr = CprofEvRunningAfter(evPtr, idType, idPtr);
    if (afterPtr != NULL) {
	StartEvent(evPtr, afterPtr->kind, afterPtr->nameId,
		afterPtr->originId, idType, idPtr, level, anchor, envPtr,
		afterPtr->kind == CPROF_HANDLER_AFTER ? afterPtr->dueNs : 0);
	CprofEvFreeAfterRec(afterPtr);
	return;
    }
    if (oePtr != NULL && oePtr->kind != CPROF_HANDLER_BGERROR
	    && oePtr->idType == idType && oePtr->idPtr == idPtr
	    && (idType != ID_FRAME
	    || CprofEvRunningBind(evPtr, cfPtr) == NULL)) {
	/*
	 * The next command of the handler running.
	 */

	return;
    }
    filePtr = CprofEvRunningFile(evPtr, idType, idPtr);
    if (filePtr != NULL) {
	StartEvent(evPtr, filePtr->kind, filePtr->nameId, filePtr->originId,
		idType, idPtr, level, anchor, envPtr, 0);
	return;
    }
    bindPtr = (idType == ID_FRAME) ? CprofEvRunningBind(evPtr, cfPtr) : NULL;
    if (bindPtr != NULL) {
	StartEvent(evPtr, CPROF_HANDLER_BIND, bindPtr->nameId,
		bindPtr->originId, idType, idPtr, level, anchor, envPtr, 0);
	return;
    }

    /*
     * No handler we know: the one before (if any) is over.
     */

    if (oePtr != NULL) {
	EndHandlers(evPtr, level - 1, envPtr);
    }
    if (candPtr == NULL && idType != ID_NONE) {
	/*
	 * (Not for C code evaluating commands at the top: the background
	 * error handler is one, told by its arguments.)
	 */

	evPtr->rootType = idType;
	evPtr->rootPtr = idPtr;
	lvPtr->rootNoEvent = cfPtr;
    }
}

void
CprofEventsBefore(
    CprofState *statePtr,
    int level,
    uintptr_t anchor,
    int objc,
    Tcl_Obj *const objv[])
{
    Before(statePtr, level, anchor, NULL,
	    ((Interp *) statePtr->interp)->cmdFramePtr, objc, objv);
}

/*
 * A coroutine is resumed by a command entered at 'level' in environment
 * 'envPtr' from the command frame 'cfPtr' (its resumer's): the first of a
 * handler, maybe ("after 0 [info coroutine]").
 */

void
CprofEventsBeforeResume(
    CprofState *statePtr,
    int level,
    uintptr_t anchor,
    void *envPtr,
    void *cfPtr)
{
    Before(statePtr, level, anchor, envPtr, (CmdFrame *) cfPtr, 0, NULL);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofEventsLoopEnd, CprofEventsSchedulePop --
 *
 *	A loop's command (CPROF_FRAME_LOOP) at 'level' returns: the frames
 *	of its handlers go first. The wrapper queues its pop through
 *	CprofEventsSchedulePop, the trace calls CprofEventsLoopEnd at its
 *	leave.
 *
 *----------------------------------------------------------------------
 */

void
CprofEventsLoopEnd(
    CprofState *statePtr,
    int level)
{
    CprofEvents *evPtr = statePtr->eventsPtr;

    if (evPtr != NULL && evPtr->installed) {
	EndHandlers(evPtr, level, NULL);
    }
}

static int
LoopPopCallback(
    ClientData data[],
    Tcl_Interp *interp,
    int result)
{
    CprofState *statePtr = (CprofState *) data[0];

    if (statePtr->capturePtr != NULL
	    && (CprofLevels *) data[1] == &statePtr->levels) {
	CprofEventsLoopEnd(statePtr, PTR2INT(data[3]));
    }
    return CprofPopCallback(data, interp, result);
}

void
CprofEventsSchedulePop(
    CprofState *statePtr,
    CprofLevels *lvPtr,
    CprofFrame *framePtr)
{
    Tcl_NRAddCallback(statePtr->interp, LoopPopCallback, statePtr, lvPtr,
	    (ClientData) (uintptr_t) framePtr->serial,
	    INT2PTR(framePtr->level));
}

/*
 *----------------------------------------------------------------------
 *
 * CprofEventsSchedule, ScheduledCallback --
 *
 *	Before a command that schedules (or forgets) handlers: its origin,
 *	and a callback that records what it did once it is done.
 *
 *----------------------------------------------------------------------
 */

/*
 * An [after] delay in ms, read without changing the object: -1 if it is
 * not one.
 */

static Tcl_WideInt
AfterDelay(
    Tcl_Obj *objPtr)
{
    static const Tcl_ObjType *intType = NULL;
    Tcl_WideInt ms = 0;
    const char *p;

    if (intType == NULL) {
	intType = Tcl_GetObjType("int");
    }
    if (objPtr->typePtr == intType) {
	if (Tcl_GetWideIntFromObj(NULL, objPtr, &ms) != TCL_OK) {
	    return -1;
	}
	return ms < 0 ? 0 : ms;
    }
    p = Tcl_GetString(objPtr);
    if (*p == '+') {
	p++;
    }
    if (*p == '\0') {
	return -1;
    }
    for (; *p != '\0'; p++) {
	if (*p < '0' || *p > '9' || ms > ((Tcl_WideInt) 1 << 50)) {
	    return -1;
	}
	ms = 10 * ms + (*p - '0');
    }
    return ms;
}

static void
Schedule(
    CprofState *statePtr,
    int role,
    int kind,
    int originId,
    uint64_t dueNs,
    int nargs,
    Tcl_Obj *const args[])
{
    Pending *pPtr = (Pending *) ckalloc(sizeof(Pending));
    int i;

    pPtr->statePtr = statePtr;
    pPtr->generation = statePtr->captureGeneration;
    pPtr->role = role;
    pPtr->kind = kind;
    pPtr->originId = originId;
    pPtr->dueNs = dueNs;
    for (i = 0; i < 3; i++) {
	pPtr->argObjs[i] = i < nargs ? args[i] : NULL;
	if (pPtr->argObjs[i] != NULL) {
	    Tcl_IncrRefCount(pPtr->argObjs[i]);
	}
    }
    Tcl_NRAddCallback(statePtr->interp, ScheduledCallback, pPtr, NULL, NULL,
	    NULL);
}

/*
 * The kind a [fileevent] event name gives (the abbreviations Tcl takes),
 * or -1.
 */

static int
FileKind(
    Tcl_Obj *objPtr)
{
    Tcl_Size len;
    const char *s = Tcl_GetStringFromObj(objPtr, &len);

    if (len > 0 && strncmp(s, "readable", len) == 0) {
	return CPROF_HANDLER_READABLE;
    }
    if (len > 0 && strncmp(s, "writable", len) == 0) {
	return CPROF_HANDLER_WRITABLE;
    }
    return -1;
}

void
CprofEventsSchedule(
    CprofState *statePtr,
    const CprofCmdName *namePtr,
    int level,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofEvents *evPtr = statePtr->eventsPtr;
    int role = CprofNameRole(namePtr->flags), kind;
    Tcl_WideInt ms;

    if (evPtr == NULL || !evPtr->installed || statePtr->levels.quiet) {
	return;
    }
    switch (role) {
    case CPROF_ROLE_AFTER:
	if (objc < 2) {
	    return;
	}
	ms = AfterDelay(objv[1]);
	if (ms >= 0 && objc >= 3) {
	    Schedule(statePtr, role, CPROF_HANDLER_AFTER, CprofEvOrigin(evPtr,
		    level), CprofEvNow() + (uint64_t) ms * 1000000, 0, NULL);
	} else if (ms < 0 && objc >= 3
		&& strcmp(Tcl_GetString(objv[1]), "idle") == 0) {
	    Schedule(statePtr, role, CPROF_HANDLER_IDLE,
		    CprofEvOrigin(evPtr, level), 0, 0, NULL);
	} else if (ms < 0 && objc >= 3
		&& strcmp(Tcl_GetString(objv[1]), "cancel") == 0) {
	    /*
	     * What is gone before the cancel ran; what is gone after it
	     * was cancelled.
	     */

	    CprofEvLookAfters(evPtr);
	    CprofEvDropGone(evPtr, 1, NULL);
	    Schedule(statePtr, role, -1, -1, 0, 0, NULL);
	}
	break;
    case CPROF_ROLE_FILEEVENT:
	if (objc == 4 && (kind = FileKind(objv[2])) >= 0) {
	    Schedule(statePtr, role, kind, CprofEvOrigin(evPtr, level), 0, 1,
		    objv + 1);
	}
	break;
    case CPROF_ROLE_CLOSE:
	if (objc == 2) {
	    const char *name = Tcl_GetString(objv[1]);

	    CprofEvDropFile(evPtr, CPROF_HANDLER_READABLE, name);
	    CprofEvDropFile(evPtr, CPROF_HANDLER_WRITABLE, name);
	}
	break;
    case CPROF_ROLE_BIND:
	if (objc == 4) {
	    Schedule(statePtr, role, CPROF_HANDLER_BIND,
		    CprofEvOrigin(evPtr, level), 0, 3, objv + 1);
	}
	break;
    }
}

static int
ScheduledCallback(
    ClientData data[],
    Tcl_Interp *interp,
    int result)
{
    Pending *pPtr = (Pending *) data[0];
    CprofState *statePtr = pPtr->statePtr;
    CprofEvents *evPtr;
    int i;

    if (pPtr->generation != statePtr->captureGeneration
	    || (evPtr = statePtr->eventsPtr) == NULL || !evPtr->installed
	    || result != TCL_OK) {
	goto done;
    }
    switch (pPtr->role) {
    case CPROF_ROLE_AFTER: {
	AfterAssocData *assocPtr;
	AfterInfo *headPtr;
	const char *res;

	if (pPtr->kind < 0) {
	    CprofEvLookAfters(evPtr);
	    CprofEvDropGone(evPtr, 0, NULL);
	    break;
	}
	assocPtr = CprofEvAfterAssoc(evPtr);
	res = Tcl_GetString(Tcl_GetObjResult(interp));
	if (assocPtr == NULL || (headPtr = assocPtr->firstAfterPtr) == NULL
		|| strncmp(res, "after#", 6) != 0
		|| atoi(res + 6) != headPtr->id) {
	    break;
	}
	CprofEvAddAfter(evPtr, headPtr, pPtr->originId,
		pPtr->kind == CPROF_HANDLER_AFTER ? pPtr->dueNs : 0);
	statePtr->levels.rootEvents = 1;
	break;
    }
    case CPROF_ROLE_FILEEVENT: {
	const char *name = Tcl_GetString(pPtr->argObjs[0]);
	Tcl_Channel chan = Tcl_GetChannel(interp, name, NULL);

	if (chan != NULL) {
	    CprofEvRecordFile(evPtr, (Channel *) chan, name, pPtr->kind,
		    pPtr->originId);
	    statePtr->levels.rootEvents = 1;
	} else {
	    Tcl_ResetResult(interp);
	}
	break;
    }
    case CPROF_ROLE_BIND:
	CprofEvRecordBind(evPtr, pPtr->argObjs[0], pPtr->argObjs[1],
		pPtr->argObjs[2], pPtr->originId);
	statePtr->levels.rootEvents = 1;
	break;
    }
    evPtr->rootType = -1;
    evPtr->statePtr->levels.rootNoEvent = NULL;

  done:
    for (i = 0; i < 3; i++) {
	if (pPtr->argObjs[i] != NULL) {
	    Tcl_DecrRefCount(pPtr->argObjs[i]);
	}
    }
    ckfree(pPtr);
    return result;
}

/*
 *----------------------------------------------------------------------
 *
 * SetupProc, CheckProc --
 *
 *	Our event source: Tcl_DoOneEvent asks every source to set up just
 *	before the notifier waits, and to check just after. The loop
 *	running here is done with its handlers: their frames go; with exact
 *	timing on the wall clock the wait is a frame [idle] above the
 *	interpreter's innermost frame (where Tk's main loop or C code runs
 *	the loop on an empty stack, at the root, if handlers may run). An
 *	interpreter whose innermost frame is not the loop's (another
 *	interpreter of the thread runs it) gets one too: it is waiting.
 *
 *----------------------------------------------------------------------
 */

static void
SetupProc(
    ClientData clientData,
    int flags)
{
    CprofState *statePtr = (CprofState *) clientData;
    CprofEvents *evPtr = statePtr->eventsPtr;
    CprofLevels *lvPtr = &statePtr->levels;
    Interp *iPtr = (Interp *) statePtr->interp;

    (void) flags;
    if (evPtr == NULL || !evPtr->installed || lvPtr->quiet
	    || statePtr->deleting) {
	return;
    }
    if (iPtr->numLevels == 0) {
	/*
	 * A loop outside any command: the main script's top level has
	 * returned (to Tk's main loop), its frame ends.
	 */

	CprofLevelsEndScript(lvPtr);
    }
    EndHandlers(evPtr, iPtr->numLevels, NULL);
    if (evPtr->afters.numEntries > 0) {
	/*
	 * The handlers that ran without a command since the last look
	 * (counted), at most every LOOK_NS when there are many.
	 */

	uint64_t now = CprofEvNow();

	if (evPtr->afters.numEntries <= 64
		|| now - evPtr->lastLookNs >= LOOK_NS) {
	    evPtr->lastLookNs = now;
	    CprofEvLookAfters(evPtr);
	    CprofEvDropGone(evPtr, 1, NULL);
	}
    }
    evPtr->rootType = -1;
    evPtr->statePtr->levels.rootNoEvent = NULL;
    if (lvPtr->timing && statePtr->options.clock == CPROF_CLOCK_WALL
	    && (iPtr->numLevels > 0 || lvPtr->rootEvents)) {
	int below = CprofLevelsBelow(lvPtr, iPtr->numLevels + 1, NULL);
	CprofFrame *framePtr;
	CprofEntry entry;

	entry.nameId = evPtr->idleNameId;
	entry.kind = CPROF_KIND_IDLE;
	entry.flags = CPROF_FRAME_IDLE;
	entry.level = iPtr->numLevels;
	entry.anchor = below >= 0 ? lvPtr->stack.frames[below].anchor : 0;
	entry.token = NULL;
	entry.objKey = NULL;
	entry.methodKey = NULL;
	entry.envPtr = NULL;
	entry.siteKind = CPROF_SITE_NONE;
	framePtr = CprofLevelsEnter(lvPtr, &entry);
	evPtr->idleSerial = framePtr != NULL ? framePtr->serial : 0;
    }
}

static void
CheckProc(
    ClientData clientData,
    int flags)
{
    CprofState *statePtr = (CprofState *) clientData;
    CprofEvents *evPtr = statePtr->eventsPtr;
    CprofStack *stackPtr = &statePtr->levels.stack;

    (void) flags;
    if (evPtr == NULL || evPtr->idleSerial == 0) {
	return;
    }
    if (stackPtr->depth > 0
	    && stackPtr->frames[stackPtr->depth - 1].serial
	    == evPtr->idleSerial) {
	CprofLevelsLeave(&statePtr->levels, evPtr->idleSerial);
    }
    evPtr->idleSerial = 0;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofEventsInstall, CprofEventsRemove, CprofEventsForget,
 * CprofEventsFree --
 *
 *	With the capture of a run: the event source, and the handlers
 *	pending already (origin unknown, unless recorded before a pause).
 *	Without it: open handlers are charged until now (their frames go
 *	with the stack). Forget the records (a run stops), free everything
 *	(the state goes).
 *
 *----------------------------------------------------------------------
 */

/*
 *----------------------------------------------------------------------
 *
 * SwapRoles, RestoreRoles, RoleNre*, HandlerOf --
 *
 *	-capture frames wraps no command, but the records of the handlers
 *	need the commands that schedule them: [after], [fileevent], [chan
 *	event], [close] and [chan close] get an nreProc of ours (they have
 *	none: Tcl calls their objProc), which does what the wrapper does
 *	before and after them (CprofEventsSchedule) and calls their objProc;
 *	[interp]'s (NRInterpCmd) is ours too, so that children made by
 *	[interp create] are taken in (cmdscope.c's childProc), as the wrapper
 *	tells. Nothing else of them changes (objProc, clientData and
 *	deleteProc stay, so Tcl_GetCommandInfo and [info] see what they
 *	saw). Put back when the capture goes, if still ours. Which handler a
 *	sample is in is the drain's to find (HandlerOf, for captureframes.c).
 *
 *----------------------------------------------------------------------
 */

static const struct {
    const char *name;
    int role;
} roleCmds[EV_ROLE_CMDS] = {
    {"::after", CPROF_ROLE_AFTER},
    {"::fileevent", CPROF_ROLE_FILEEVENT},
    {"::tcl::chan::event", CPROF_ROLE_FILEEVENT},
    {"::close", CPROF_ROLE_CLOSE},
    {"::tcl::chan::close", CPROF_ROLE_CLOSE},
    {"::interp", CPROF_ROLE_INTERP}
};

/*
 * Their objProcs and nreProcs (NULL: none), Tcl's builtins: learnt from
 * the first interpreter, the same in every one (a command whose procs are
 * others is not touched).
 */

static Tcl_ObjCmdProc *roleObjProcs[EV_ROLE_CMDS];
static Tcl_ObjCmdProc *roleNreProcs[EV_ROLE_CMDS];
static int roleLearnt[EV_ROLE_CMDS];

static int
RoleNre(
    int i,
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofState *statePtr = (CprofState *) Tcl_GetAssocData(interp,
	    CPROF_ASSOC, NULL);

    if (roleCmds[i].role == CPROF_ROLE_INTERP) {
	/*
	 * Children made by [interp create] are taken in (cmdscope.c), as the
	 * wrapper tells.
	 */

	if (statePtr != NULL && statePtr->childProc != NULL
		&& statePtr->eventsPtr != NULL
		&& statePtr->eventsPtr->installed
		&& statePtr->eventsPtr->framesCapture) {
	    statePtr->childProc(statePtr, interp, objc, objv);
	}
    } else if (statePtr != NULL && statePtr->eventsPtr != NULL
	    && statePtr->eventsPtr->installed
	    && statePtr->eventsPtr->framesCapture) {
	CprofCmdName name;

	name.nameId = -1;
	name.kind = CPROF_KIND_CMD;
	name.flags = (unsigned short) (roleCmds[i].role
		<< CPROF_NAME_ROLE_SHIFT);
	CprofEventsSchedule(statePtr, &name,
		(int) ((Interp *) interp)->numLevels, objc, objv);
    }
    if (roleNreProcs[i] != NULL) {
	return roleNreProcs[i](clientData, interp, objc, objv);
    }
    return roleObjProcs[i](clientData, interp, objc, objv);
}

#define ROLE_NRE(i) \
    static int								\
    RoleNre##i(ClientData cd, Tcl_Interp *interp, int objc,		\
	    Tcl_Obj *const objv[])					\
    {									\
	return RoleNre(i, cd, interp, objc, objv);			\
    }
ROLE_NRE(0)
ROLE_NRE(1)
ROLE_NRE(2)
ROLE_NRE(3)
ROLE_NRE(4)
ROLE_NRE(5)
#undef ROLE_NRE

static Tcl_ObjCmdProc *const roleNres[EV_ROLE_CMDS] = {
    RoleNre0, RoleNre1, RoleNre2, RoleNre3, RoleNre4, RoleNre5
};
TCL_DECLARE_MUTEX(roleMutex)

static void
SwapRoles(
    CprofEvents *evPtr)
{
    int i;

    for (i = 0; i < EV_ROLE_CMDS; i++) {
	Command *cmdPtr = (Command *) Tcl_FindCommand(
		evPtr->statePtr->interp, roleCmds[i].name, NULL,
		TCL_GLOBAL_ONLY);
	int ok;

	if (cmdPtr == NULL || cmdPtr->objProc == NULL
		|| cmdPtr->nreProc == roleNres[i]) {
	    continue;
	}
	Tcl_MutexLock(&roleMutex);
	if (!roleLearnt[i]) {
	    roleObjProcs[i] = cmdPtr->objProc;
	    roleNreProcs[i] = cmdPtr->nreProc;
	    roleLearnt[i] = 1;
	}
	ok = (roleObjProcs[i] == cmdPtr->objProc
		&& roleNreProcs[i] == cmdPtr->nreProc);
	Tcl_MutexUnlock(&roleMutex);
	if (!ok) {
	    continue;
	}
	cmdPtr->refCount++;
	cmdPtr->nreProc = roleNres[i];
	evPtr->roleCmds[i] = cmdPtr;
    }
}

static void
RestoreRoles(
    CprofEvents *evPtr)
{
    int i;

    for (i = 0; i < EV_ROLE_CMDS; i++) {
	Command *cmdPtr = evPtr->roleCmds[i];

	if (cmdPtr == NULL) {
	    continue;
	}
	if (cmdPtr->nreProc == roleNres[i]) {
	    cmdPtr->nreProc = roleNreProcs[i];
	}
	evPtr->roleCmds[i] = NULL;
	if (--cmdPtr->refCount <= 0) {
	    ckfree(cmdPtr);
	}
    }
}

static int
HandlerOf(
    void *data,
    int isCode,
    const void *ptr)
{
    CprofEvents *evPtr = (CprofEvents *) data;

    if (!evPtr->installed) {
	return -1;
    }
    return CprofEvHandlerOf(evPtr, isCode, ptr);
}

static CprofEvents *
EventsOf(
    CprofState *statePtr)
{
    CprofEvents *evPtr = statePtr->eventsPtr;

    if (evPtr == NULL) {
	evPtr = (CprofEvents *) ckalloc(sizeof(CprofEvents));
	memset(evPtr, 0, sizeof(CprofEvents));
	evPtr->statePtr = statePtr;
	Tcl_InitHashTable(&evPtr->afters, TCL_ONE_WORD_KEYS);
	Tcl_InitHashTable(&evPtr->afterScripts, TCL_ONE_WORD_KEYS);
	Tcl_InitHashTable(&evPtr->ranScripts, TCL_ONE_WORD_KEYS);
	Tcl_InitHashTable(&evPtr->names, TCL_STRING_KEYS);
	Tcl_InitHashTable(&evPtr->files, TCL_STRING_KEYS);
	Tcl_InitHashTable(&evPtr->binds, TCL_STRING_KEYS);
	Tcl_InitHashTable(&evPtr->bgOrigins, TCL_ONE_WORD_KEYS);
	Tcl_InitHashTable(&evPtr->origins,
		3 * sizeof(void *) / sizeof(int));
	evPtr->unknownId = CprofNameIntern("unknown", -1);
	evPtr->topId = CprofNameIntern("(top)", -1);
	evPtr->idleNameId = CprofNameIntern("[idle]", -1);
	evPtr->rootType = -1;
	statePtr->levels.rootNoEvent = NULL;
	statePtr->eventsPtr = evPtr;
    }
    return evPtr;
}

void
CprofEventsInstall(
    CprofCapture *capPtr)
{
    CprofState *statePtr = capPtr->statePtr;
    CprofEvents *evPtr;

    if (!statePtr->eventsOn || capPtr->coverage) {
	return;
    }
    evPtr = EventsOf(statePtr);
    if (evPtr->installed) {
	return;
    }
    evPtr->framesCapture = (capPtr->kind == CPROF_CAPTURE_FRAMES);
    if (evPtr->framesCapture) {
	SwapRoles(evPtr);
	if (statePtr->framesPtr != NULL) {
	    CprofFramesSetHandlers(statePtr->framesPtr, HandlerOf, evPtr);
	}
    }
    CprofEvLookAfters(evPtr);
    CprofEvDropGone(evPtr, 0, NULL);
    CprofEvLookFiles(evPtr);
    CprofEvLookBinds(evPtr);
    evPtr->rootType = -1;
    evPtr->statePtr->levels.rootNoEvent = NULL;
    statePtr->levels.rootEvents = (evPtr->afters.numEntries > 0
	    || evPtr->files.numEntries > 0 || evPtr->binds.numEntries > 0
	    || Tcl_FindCommand(statePtr->interp, "::bind", NULL,
		    TCL_GLOBAL_ONLY) != NULL);
    Tcl_CreateEventSource(SetupProc, CheckProc, statePtr);
    evPtr->installed = 1;
}

void
CprofEventsRemove(
    CprofCapture *capPtr)
{
    CprofState *statePtr = capPtr->statePtr;
    CprofEvents *evPtr = statePtr->eventsPtr;

    if (evPtr == NULL || !evPtr->installed) {
	return;
    }
    Tcl_DeleteEventSource(SetupProc, CheckProc, statePtr);
    if (evPtr->framesCapture) {
	RestoreRoles(evPtr);
	if (statePtr->framesPtr != NULL) {
	    CprofFramesSetHandlers(statePtr->framesPtr, NULL, NULL);
	}
    }
    if (!statePtr->deleting && evPtr->afters.numEntries > 0) {
	/*
	 * Handlers that ran since the last look without a command.
	 */

	CprofEvLookAfters(evPtr);
	CprofEvDropGone(evPtr, 1, NULL);
    }
    evPtr->installed = 0;
    evPtr->idleSerial = 0;
    statePtr->levels.rootEvents = 0;
    while (evPtr->open != NULL) {
	CloseEvent(evPtr, evPtr->open);
    }
}

void
CprofEventsForget(
    CprofState *statePtr)
{
    CprofEvents *evPtr = statePtr->eventsPtr;
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    if (evPtr == NULL) {
	return;
    }
    CprofEvForgetAfters(evPtr);
    for (hPtr = Tcl_FirstHashEntry(&evPtr->files, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	CprofEvFreeFileRec(Tcl_GetHashValue(hPtr));
    }
    Tcl_DeleteHashTable(&evPtr->files);
    Tcl_InitHashTable(&evPtr->files, TCL_STRING_KEYS);
    for (hPtr = Tcl_FirstHashEntry(&evPtr->binds, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	BindRec *recPtr = Tcl_GetHashValue(hPtr);

	ckfree(recPtr->first);
	ckfree(recPtr);
    }
    Tcl_DeleteHashTable(&evPtr->binds);
    Tcl_InitHashTable(&evPtr->binds, TCL_STRING_KEYS);
    Tcl_DeleteHashTable(&evPtr->bgOrigins);
    Tcl_InitHashTable(&evPtr->bgOrigins, TCL_ONE_WORD_KEYS);
    CprofEvForgetOrigins(evPtr);
    if (evPtr->lastNameObj != NULL) {
	Tcl_DecrRefCount(evPtr->lastNameObj);
	evPtr->lastNameObj = NULL;
    }
    evPtr->afterAssoc = NULL;
    evPtr->errAssoc = NULL;

    /*
     * With the records go the names they gave out (what shows them holds
     * them: the profile's trees and statistics).
     */

    Tcl_DeleteHashTable(&evPtr->names);
    Tcl_InitHashTable(&evPtr->names, TCL_STRING_KEYS);
    CprofNameRelease(&evPtr->refs);
}

void
CprofEventsFree(
    CprofState *statePtr)
{
    CprofEvents *evPtr = statePtr->eventsPtr;

    CprofEventsClear(statePtr);
    if (evPtr == NULL) {
	return;
    }
    while (evPtr->open != NULL) {
	CloseEvent(evPtr, evPtr->open);
    }
    CprofEventsForget(statePtr);
    Tcl_DeleteHashTable(&evPtr->afters);
    Tcl_DeleteHashTable(&evPtr->afterScripts);
    Tcl_DeleteHashTable(&evPtr->ranScripts);
    Tcl_DeleteHashTable(&evPtr->names);
    Tcl_DeleteHashTable(&evPtr->files);
    Tcl_DeleteHashTable(&evPtr->binds);
    Tcl_DeleteHashTable(&evPtr->bgOrigins);
    Tcl_DeleteHashTable(&evPtr->origins);
    if (evPtr->heldSites != NULL) {
	ckfree(evPtr->heldSites);
    }
    ckfree(evPtr);
    statePtr->eventsPtr = NULL;
}

/*
 * Whether an NRE callback is one of this file's (unload looks for them).
 */

int
CprofEventsIsOurs(
    Tcl_NRPostProc *procPtr)
{
    return procPtr == ScheduledCallback || procPtr == LoopPopCallback;
}
