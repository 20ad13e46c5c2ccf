/*
 * capturewrap.c --
 *
 *	Capture by wrapping commands, the default (-capture wrap): the level
 *	stack is kept without Tcl's interpreter trace, whose machinery costs
 *	160-240 ns per command and, in sample mode, is charged to the Tcl
 *	code that pays it.
 *
 *	- Each command's nreProc, and nothing else of it, is replaced by a
 *	  thunk (unix/hookthunk.c) that jumps to WrapEntry with the command's
 *	  record. Tcl calls the nreProc (or, when there is none, the objProc)
 *	  from Dispatch, so every invocation through Tcl's evaluator passes
 *	  the wrapper; objProc, objClientData, deleteProc and deleteData stay
 *	  as they were, so Tcl_GetCommandInfo, TclIsProc, [info body],
 *	  ensembles (recognised by objProc), aliases (objProc) and TclOO
 *	  (objProc) see what they saw. WrapEntry pushes a frame, queues an
 *	  NRE callback that pops it (capture.c) and jumps on to the
 *	  command's own nreProc, or its objProc, with the original arguments:
 *	  nothing of the wrapper stays on the C stack while the command
 *	  runs. The pop runs when the command's NRE work completes, however
 *	  it completes: return, error, break, tailcall, yield and resume.
 *	- Not wrapped: coroutine commands (Tcl recognises them by nreProc;
 *	  their runs are followed as below), imported commands (what runs is
 *	  the original, which is wrapped: one frame, the original's name),
 *	  TclOO's [next] and [nextto] (the method they go on to has its
 *	  frame, as when they are compiled) and [unload] (the wrapper's pop
 *	  would outlive the library).
 *	- Commands created after start: every namespace's command table and
 *	  child-namespace table get a creation hook (the table's createProc).
 *	  A new entry is only an empty slot when the hook runs, so its name
 *	  is noted and the command is wrapped at the next push or pop, or,
 *	  when a command is dispatched before either (C code creating and at
 *	  once evaluating a command), by a one-shot interpreter trace that
 *	  runs before that dispatch reads the nreProc.
 *	- Coroutines: when a coroutine's frames are saved at a yield
 *	  (capturelevels.c), a callback is put on top of the coroutine's NRE
 *	  stack, as [::tcl::unsupported::inject] does; it runs first when
 *	  the coroutine is resumed, pushes a frame for the resuming command
 *	  with the saved frames above it, and puts a callback on the
 *	  resumer's stack that sees the next yield (or return) at once.
 *	- Stop restores every nreProc that is still the thunk (a command
 *	  renamed, or whose objProc Tcl_SetCommandInfo replaced, is handled;
 *	  a deleted one is left to its deletion) and every table's
 *	  createProc.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include <tclInt.h>
#include "captureInt.h"
#include "capturelevelsInline.h"
#include <string.h>
#include <stddef.h>
#include <stdio.h>

/*
 * A wrapped (or deliberately unwrapped) command.
 */

#define REC_SKIP	0x1	/* Not wrapped; kept so as not to look at it
				 * again. */
#define REC_CALIB	0x2	/* The calibration command. */
#define REC_PLAIN	0x4	/* Named, and needs nothing but its name (no
				 * ensemble, object or tclcprof command). */
#define REC_EAGER	0x8	/* Its frame is never lazy: [coroutine], whose
				 * pop tells the first yield. */

typedef struct WrapRec {
    Command *cmdPtr;		/* Held (refCount++): its memory stays while
				 * recorded. */
    CprofCapture *capPtr;
    Tcl_ObjCmdProc *origNreProc;/* The command's own nreProc, or NULL: it
				 * has none, call its (current) objProc. */
    void *thunk;		/* Its nreProc while wrapped, or NULL. */
    int epoch;			/* cmdPtr->cmdEpoch when named; -1 for not
				 * named yet. */
    unsigned flags;		/* REC_* bits. */
    CprofCmdName name;
} WrapRec;

/*
 * Why a command was not wrapped (status).
 */

enum {
    SKIP_COROUTINE, SKIP_IMPORTED, SKIP_UNLOAD, SKIP_NEXT, SKIP_NOTHUNK,
    SKIP_KINDS
};
static const char *const skipNames[SKIP_KINDS] = {
    "coroutine", "imported", "unload", "next", "no_memory"
};

struct CprofWrap {
    CprofCapture *capPtr;
    Tcl_Interp *interp;
    Tcl_HashTable recs;		/* Command* -> WrapRec*. */
    int sweepAt;		/* Sweep deleted commands' records when
				 * there are this many. */

    /* Commands and namespaces created since the last look: "ns\0tail"
     * each, and the one-shot trace that looks before a dispatch. */
    int pending;
    Namespace *expectNsPtr;	/* A coroutine's command about to be made
				 * (never wrapped: no need to look at it):
				 * its namespace and name. */
    char *expectName;
    char **pendingNames;
    unsigned char *pendingIsNs;
    int numPending, capPending;
    Tcl_Trace lookTrace;

    /* Calibration. */
    uintptr_t calibCfa, calibTramp, calibCbCfa, calibCbTramp;
    int calibrating;

    /* Counters. */
    Tcl_WideInt wrapped;	/* Wrapped now. */
    Tcl_WideInt late;		/* Wrapped after install. */
    Tcl_WideInt skipped[SKIP_KINDS];
    Tcl_WideInt lookTraces;	/* One-shot traces that found a command
				 * dispatched before its wrap. */
    Tcl_WideInt lost;		/* Wraps undone by someone else (the
				 * nreProc was not the thunk at stop). */
    Tcl_WideInt namespaces;	/* Namespaces hooked. */
    Tcl_WideInt foreignTables;	/* Tables with a createProc not Tcl's. */
    Tcl_WideInt resumes;	/* Coroutine resumes seen by callback. */
};

/*
 * Tcl's createProc of string-keyed hash tables, learned from the global
 * namespace's command table (the same static function for every such
 * table of the process).
 */

typedef Tcl_HashEntry *(CreateProc)(Tcl_HashTable *tablePtr,
	const char *key, int *newPtr);
static CreateProc *tclCreateProc = NULL;

static int		WrapEntry(ClientData clientData, Tcl_Interp *interp,
			    int objc, Tcl_Obj *const objv[], WrapRec *recPtr);
static void		LookNow(CprofWrap *wrapPtr);
static int		ResumeCallback(ClientData data[], Tcl_Interp *interp,
			    int result);
static int		YieldWatchCallback(ClientData data[],
			    Tcl_Interp *interp, int result);
static int		LookTrace(ClientData clientData, Tcl_Interp *interp,
			    int level, const char *command, Tcl_Command token,
			    int objc, Tcl_Obj *const objv[]);

/*
 *----------------------------------------------------------------------
 *
 * WrapCommand --
 *
 *	Wrap one command (or note that it is not to be wrapped).
 *
 * Results:
 *	1 if it is wrapped now (by this call or before), 0 if not.
 *
 *----------------------------------------------------------------------
 */

static int
WrapCommand(
    CprofWrap *wrapPtr,
    Command *cmdPtr)
{
    const CprofTclInternals *inPtr = wrapPtr->capPtr->statePtr
	    ->naming.internals;
    Tcl_HashEntry *hPtr;
    WrapRec *recPtr;
    int isNew, skip = -1;

    if (cmdPtr == NULL || (cmdPtr->flags & CMD_IS_DELETED)) {
	return 0;
    }
    hPtr = Tcl_CreateHashEntry(&wrapPtr->recs, (char *) cmdPtr, &isNew);
    if (!isNew) {
	recPtr = Tcl_GetHashValue(hPtr);
	if (recPtr->flags & REC_SKIP) {
	    return 0;
	}
	if (cmdPtr->nreProc == (Tcl_ObjCmdProc *) recPtr->thunk) {
	    return 1;
	}

	/*
	 * Someone replaced the nreProc (Tcl_SetCommandInfo with another
	 * objProc resets it): wrap what is there now.
	 */

	wrapPtr->lost++;
	recPtr->origNreProc = cmdPtr->nreProc;
	cmdPtr->nreProc = (Tcl_ObjCmdProc *) recPtr->thunk;
	return 1;
    }
    recPtr = (WrapRec *) ckalloc(sizeof(WrapRec));
    memset(recPtr, 0, sizeof(WrapRec));
    recPtr->cmdPtr = cmdPtr;
    recPtr->capPtr = wrapPtr->capPtr;
    recPtr->epoch = -1;
    cmdPtr->refCount++;
    Tcl_SetHashValue(hPtr, recPtr);

    if (inPtr->coroNreProc != NULL && cmdPtr->nreProc == inPtr->coroNreProc) {
	skip = SKIP_COROUTINE;
    } else if (TclGetOriginalCommand((Tcl_Command) cmdPtr) != NULL) {
	skip = SKIP_IMPORTED;
    } else if (inPtr->unloadObjProc != NULL
	    && cmdPtr->objProc == inPtr->unloadObjProc) {
	skip = SKIP_UNLOAD;
    } else if (cmdPtr->nreProc != NULL
	    && (cmdPtr->nreProc == inPtr->ooNextNreProc
	    || cmdPtr->nreProc == inPtr->ooNextToNreProc)) {
	skip = SKIP_NEXT;
    } else if (cmdPtr->objProc == NULL && cmdPtr->nreProc == NULL) {
	skip = SKIP_NOTHUNK;
    } else {
	recPtr->thunk = CprofThunkNew((void *) WrapEntry, recPtr);
	if (recPtr->thunk == NULL) {
	    skip = SKIP_NOTHUNK;
	}
    }
    if (skip >= 0) {
	recPtr->flags |= REC_SKIP;
	wrapPtr->skipped[skip]++;
	return 0;
    }
    recPtr->origNreProc = cmdPtr->nreProc;
    if (inPtr->coroCreateNreProc != NULL
	    && cmdPtr->nreProc == inPtr->coroCreateNreProc) {
	recPtr->flags |= REC_EAGER;
    }
    cmdPtr->nreProc = (Tcl_ObjCmdProc *) recPtr->thunk;
    wrapPtr->wrapped++;
    return 1;
}

/*
 * Undo a record: restore the nreProc if it is still ours, release the
 * command and the thunk.
 */

static void
UnwrapRec(
    CprofWrap *wrapPtr,
    WrapRec *recPtr)
{
    Command *cmdPtr = recPtr->cmdPtr;

    if (recPtr->thunk != NULL) {
	if (cmdPtr->nreProc == (Tcl_ObjCmdProc *) recPtr->thunk) {
	    cmdPtr->nreProc = recPtr->origNreProc;
	} else if (!(cmdPtr->flags & CMD_IS_DELETED)) {
	    wrapPtr->lost++;
	}
	CprofThunkFree(recPtr->thunk);
	wrapPtr->wrapped--;
    }
    TclCleanupCommandMacro(cmdPtr);
    ckfree(recPtr);
}

/*
 * Records of deleted commands go when the table has doubled since the
 * last sweep: a program that makes and deletes commands in a loop (TclOO
 * objects) does not grow it without bound.
 */

static void
SweepDeleted(
    CprofWrap *wrapPtr)
{
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    for (hPtr = Tcl_FirstHashEntry(&wrapPtr->recs, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	WrapRec *recPtr = Tcl_GetHashValue(hPtr);

	if (recPtr->cmdPtr->flags & CMD_IS_DELETED) {
	    Tcl_DeleteHashEntry(hPtr);
	    UnwrapRec(wrapPtr, recPtr);
	}
    }
    wrapPtr->sweepAt = 2 * wrapPtr->recs.numEntries;
    if (wrapPtr->sweepAt < 4096) {
	wrapPtr->sweepAt = 4096;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * Namespaces --
 *
 *	HookNamespace puts the creation hooks on a namespace's command and
 *	child tables and wraps its commands, then does the same for its
 *	children. UnhookNamespaces takes the hooks off every namespace of
 *	the interpreter (a namespace deleted meanwhile took its tables with
 *	it).
 *
 *----------------------------------------------------------------------
 */

static Tcl_HashEntry *CmdTableCreate(Tcl_HashTable *tablePtr,
			    const char *key, int *newPtr);
static Tcl_HashEntry *ChildTableCreate(Tcl_HashTable *tablePtr,
			    const char *key, int *newPtr);

#ifndef BREAK_NAMESPACE_COMPAT
#   define CHILD_TABLE(nsPtr)	(&(nsPtr)->childTable)
#else
#   define CHILD_TABLE(nsPtr)	((nsPtr)->childTablePtr)
#endif

static void
HookNamespace(
    CprofWrap *wrapPtr,
    Namespace *nsPtr)
{
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;
    Tcl_HashTable *childPtr = CHILD_TABLE(nsPtr);

    if (nsPtr->flags & (NS_DYING | NS_DEAD)) {
	return;
    }
    if (nsPtr->cmdTable.createProc == tclCreateProc) {
	nsPtr->cmdTable.createProc = CmdTableCreate;
	wrapPtr->namespaces++;
    } else if (nsPtr->cmdTable.createProc != CmdTableCreate) {
	wrapPtr->foreignTables++;
    }
    for (hPtr = Tcl_FirstHashEntry(&nsPtr->cmdTable, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	WrapCommand(wrapPtr, Tcl_GetHashValue(hPtr));
    }
    if (childPtr == NULL) {
	return;
    }
    if (childPtr->createProc == tclCreateProc) {
	childPtr->createProc = ChildTableCreate;
    } else if (childPtr->createProc != ChildTableCreate) {
	wrapPtr->foreignTables++;
    }
    for (hPtr = Tcl_FirstHashEntry(childPtr, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	HookNamespace(wrapPtr, Tcl_GetHashValue(hPtr));
    }
}

static void
UnhookNamespace(
    Namespace *nsPtr)
{
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;
    Tcl_HashTable *childPtr = CHILD_TABLE(nsPtr);

    if (nsPtr->cmdTable.createProc == CmdTableCreate) {
	nsPtr->cmdTable.createProc = tclCreateProc;
    }
    if (childPtr == NULL) {
	return;
    }
    if (childPtr->createProc == ChildTableCreate) {
	childPtr->createProc = tclCreateProc;
    }
    for (hPtr = Tcl_FirstHashEntry(childPtr, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	UnhookNamespace(Tcl_GetHashValue(hPtr));
    }
}

/*
 * The wrap state of the interpreter a namespace belongs to, if its
 * capture wraps.
 */

static CprofWrap *
WrapOfNamespace(
    Namespace *nsPtr)
{
    CprofState *statePtr = CprofStateOfInterp(nsPtr->interp);

    if (statePtr == NULL || statePtr->capturePtr == NULL) {
	return NULL;
    }
    return statePtr->capturePtr->wrapPtr;
}

/*
 * Note a name created in a namespace: a command (isNs 0) or a child
 * namespace (isNs 1). Looked at by LookNow.
 */

static void
NotePending(
    CprofWrap *wrapPtr,
    Namespace *nsPtr,
    const char *key,
    int isNs)
{
    size_t nsLen = strlen(nsPtr->fullName), keyLen = strlen(key);
    char *entry;

    if (wrapPtr->expectName != NULL) {
	int expected = (!isNs && nsPtr == wrapPtr->expectNsPtr
		&& strcmp(key, wrapPtr->expectName) == 0);

	ckfree(wrapPtr->expectName);
	wrapPtr->expectName = NULL;
	if (expected) {
	    return;
	}
    }

    if (wrapPtr->numPending == wrapPtr->capPending) {
	wrapPtr->capPending = wrapPtr->capPending ? 2 * wrapPtr->capPending
		: 16;
	wrapPtr->pendingNames = (char **) ckrealloc(wrapPtr->pendingNames,
		wrapPtr->capPending * sizeof(char *));
	wrapPtr->pendingIsNs = (unsigned char *) ckrealloc(
		wrapPtr->pendingIsNs, wrapPtr->capPending);
    }
    entry = (char *) ckalloc(nsLen + keyLen + 2);
    memcpy(entry, nsPtr->fullName, nsLen + 1);
    memcpy(entry + nsLen + 1, key, keyLen + 1);
    wrapPtr->pendingNames[wrapPtr->numPending] = entry;
    wrapPtr->pendingIsNs[wrapPtr->numPending] = (unsigned char) isNs;
    wrapPtr->numPending++;
    wrapPtr->pending = 1;
    if (wrapPtr->lookTrace == NULL) {
	wrapPtr->lookTrace = Tcl_CreateObjTrace(wrapPtr->interp, 0,
		TCL_TRACE_ENTER_EXEC | TCL_ALLOW_INLINE_COMPILATION,
		LookTrace, wrapPtr, NULL);
    }
}

static Tcl_HashEntry *
CmdTableCreate(
    Tcl_HashTable *tablePtr,
    const char *key,
    int *newPtr)
{
    Tcl_HashEntry *hPtr = tclCreateProc(tablePtr, key, newPtr);

    if (*newPtr) {
	Namespace *nsPtr = (Namespace *) ((char *) tablePtr
		- offsetof(Namespace, cmdTable));
	CprofWrap *wrapPtr = WrapOfNamespace(nsPtr);

	if (wrapPtr != NULL) {
	    NotePending(wrapPtr, nsPtr, key, 0);
	}
    }
    return hPtr;
}

static Tcl_HashEntry *
ChildTableCreate(
    Tcl_HashTable *tablePtr,
    const char *key,
    int *newPtr)
{
    Tcl_HashEntry *hPtr = tclCreateProc(tablePtr, key, newPtr);

    if (*newPtr) {
#ifndef BREAK_NAMESPACE_COMPAT
	Namespace *nsPtr = (Namespace *) ((char *) tablePtr
		- offsetof(Namespace, childTable));
	CprofWrap *wrapPtr = WrapOfNamespace(nsPtr);

	if (wrapPtr != NULL) {
	    NotePending(wrapPtr, nsPtr, key, 1);
	}
#endif
    }
    return hPtr;
}

/*
 * [coroutine NAME ...] is about to make NAME: a coroutine's command, which
 * is never wrapped. Its creation is not noted (nor looked at by a one-shot
 * trace before the coroutine's first command), unless something else is
 * made first.
 */

static void
ExpectCoroutine(
    CprofWrap *wrapPtr,
    Tcl_Obj *nameObj)
{
    Namespace *nsPtr, *altNsPtr, *cxtNsPtr;
    const char *simpleName;

    if (wrapPtr->expectName != NULL) {
	ckfree(wrapPtr->expectName);
	wrapPtr->expectName = NULL;
    }
    TclGetNamespaceForQualName(wrapPtr->interp, Tcl_GetString(nameObj),
	    (Namespace *) TclGetCurrentNamespace(wrapPtr->interp), 0,
	    &nsPtr, &altNsPtr, &cxtNsPtr, &simpleName);
    if (nsPtr != NULL && simpleName != NULL) {
	wrapPtr->expectNsPtr = nsPtr;
	wrapPtr->expectName = (char *) ckalloc(strlen(simpleName) + 1);
	strcpy(wrapPtr->expectName, simpleName);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * OwnBegin, OwnEnd --
 *
 *	Around the capture's own work done on the way into a command
 *	(wrapping the commands made since the last look, which releases the
 *	entry points of deleted ones, and naming a command at its first
 *	call): it runs before the command's frame is pushed, so it would be
 *	the time of the frame on top, which may be a call that has already
 *	returned (a lazy frame, popped by this push), or the caller. A sample
 *	landing in it is the profiler's (status: drops profiler); in exact
 *	timing its time is taken out of the running frames' and counted as
 *	the run's capture_ns.
 *
 *----------------------------------------------------------------------
 */

static inline uint64_t
OwnBegin(
    CprofState *statePtr,
    int *heldPtr)
{
    *heldPtr = CprofSamplerOwn(statePtr->samplerPtr);
    return statePtr->exact.on ? CprofExactNow(statePtr) : 0;
}

static inline void
OwnEnd(
    CprofState *statePtr,
    uint64_t t0,
    int held)
{
    if (statePtr->exact.on) {
	uint64_t dt = CprofExactNow(statePtr) - t0;

	CprofExactShift(statePtr, dt);
	statePtr->exact.captureNs += dt;
    }
    CprofSamplerOwnEnd(statePtr->samplerPtr, held);
}

/*
 * Wrap what was created since the last look; drop the one-shot trace.
 */

static void LookNowWork(CprofWrap *wrapPtr);

static void __attribute__((noinline))
LookNow(
    CprofWrap *wrapPtr)
{
    CprofState *statePtr = wrapPtr->capPtr->statePtr;
    int held;
    uint64_t t0 = OwnBegin(statePtr, &held);

    LookNowWork(wrapPtr);
    OwnEnd(statePtr, t0, held);
}

static void
LookNowWork(
    CprofWrap *wrapPtr)
{
    Tcl_Interp *interp = wrapPtr->interp;
    int i;

    /*
     * Wrapping may create nothing, but take the list first all the same.
     */

    char **names = wrapPtr->pendingNames;
    unsigned char *isNs = wrapPtr->pendingIsNs;
    int n = wrapPtr->numPending;

    wrapPtr->pendingNames = NULL;
    wrapPtr->pendingIsNs = NULL;
    wrapPtr->numPending = wrapPtr->capPending = 0;
    wrapPtr->pending = 0;
    if (wrapPtr->lookTrace != NULL) {
	Tcl_DeleteTrace(interp, wrapPtr->lookTrace);
	wrapPtr->lookTrace = NULL;
    }
    for (i = 0; i < n; i++) {
	const char *key = names[i] + strlen(names[i]) + 1;
	Namespace *nsPtr = (Namespace *) Tcl_FindNamespace(interp, names[i],
		NULL, TCL_GLOBAL_ONLY);
	Tcl_HashEntry *hPtr;

	if (nsPtr != NULL && !(nsPtr->flags & (NS_DYING | NS_DEAD))) {
	    if (isNs[i]) {
		Tcl_HashTable *childPtr = CHILD_TABLE(nsPtr);

		hPtr = childPtr ? Tcl_FindHashEntry(childPtr, key) : NULL;
		if (hPtr != NULL) {
		    HookNamespace(wrapPtr, Tcl_GetHashValue(hPtr));
		}
	    } else {
		hPtr = Tcl_FindHashEntry(&nsPtr->cmdTable, key);
		if (hPtr != NULL && WrapCommand(wrapPtr,
			Tcl_GetHashValue(hPtr))) {
		    wrapPtr->late++;
		}
	    }
	}
	ckfree(names[i]);
    }
    if (names != NULL) {
	ckfree(names);
	ckfree(isNs);
    }
    if (wrapPtr->recs.numEntries >= wrapPtr->sweepAt) {
	SweepDeleted(wrapPtr);
    }
}

/*
 * Another capture unit runs before a dispatch could (a method's body
 * starting): look now, so that the one-shot trace need not fire. The
 * method capture calls it through capPtr->lookPending.
 */

static void
LookPending(
    CprofCapture *capPtr)
{
    if (capPtr->wrapPtr->pending) {
	LookNow(capPtr->wrapPtr);
    }
}

/*
 * The one-shot trace: a command is about to be dispatched before anything
 * looked at what was created. Tcl reads the nreProc it calls after the
 * enter traces, so the command is wrapped in time.
 */

static int
LookTrace(
    ClientData clientData,
    Tcl_Interp *interp,
    int level,
    const char *command,
    Tcl_Command token,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofWrap *wrapPtr = (CprofWrap *) clientData;

    wrapPtr->lookTraces++;
    LookNow(wrapPtr);
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * WrapEntry --
 *
 *	Every call of a wrapped command comes here, from its thunk, with
 *	the arguments Tcl's Dispatch passed and the command's record: push
 *	its frame, queue its pop, and jump on to the command (a sibling
 *	call: this frame is gone while the command runs).
 *
 *	The anchor is the wrapper's canonical frame address (CFA): the
 *	trampoline frame that runs the command is a fixed distance above it
 *	(CprofWrapCalibrate).
 *
 * Results:
 *	The command's.
 *
 *----------------------------------------------------------------------
 */

static void
NameRec(
    WrapRec *recPtr)
{
    CprofState *statePtr = recPtr->capPtr->statePtr;

    CprofNameCommandUncached(&statePtr->naming, (Tcl_Command)
	    recPtr->cmdPtr, &recPtr->name);
    recPtr->epoch = recPtr->cmdPtr->cmdEpoch;
    recPtr->flags &= ~REC_PLAIN;
    if (!(recPtr->name.flags & (CPROF_NAME_ENSEMBLE | CPROF_NAME_OBJECT
	    | CPROF_NAME_OWN | CPROF_NAME_SUBCMD | CPROF_NAME_SCRIPT
	    | CPROF_NAME_LOOP | CPROF_NAME_ROLE_MASK))
	    && !(recPtr->flags & (REC_CALIB | REC_EAGER))) {
	recPtr->flags |= REC_PLAIN;
    }
}

/*
 * A command's name learned at its call: the capture's own work.
 */

static void __attribute__((noinline))
NameRecOwn(
    WrapRec *recPtr)
{
    CprofState *statePtr = recPtr->capPtr->statePtr;
    int held;
    uint64_t t0 = OwnBegin(statePtr, &held);

    NameRec(recPtr);
    OwnEnd(statePtr, t0, held);
}

static void __attribute__((noinline))
WrapPush(
    WrapRec *recPtr,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[],
    ClientData clientData,
    uintptr_t cfa)
{
    CprofCapture *capPtr = recPtr->capPtr;
    CprofState *statePtr = capPtr->statePtr;
    CprofLevels *lvPtr = &statePtr->levels;
    CprofFrame *framePtr;
    CprofEntry entry;

    if (recPtr->flags & REC_CALIB) {
	if (capPtr->wrapPtr->calibrating) {
	    capPtr->wrapPtr->calibCfa = cfa;
	}
	return;
    }
    if (recPtr->epoch != recPtr->cmdPtr->cmdEpoch) {
	NameRecOwn(recPtr);
    }
    if (capPtr->coverage) {
	CprofCoverageOf(statePtr, (Tcl_Command) recPtr->cmdPtr,
		&recPtr->name, objc, objv);
	goto poll;
    }
    entry.kind = recPtr->name.kind;
    entry.flags = 0;
    entry.objKey = NULL;
    entry.methodKey = NULL;
    if (recPtr->name.flags & CPROF_NAME_OBJECT) {
	int fresh;

	entry.nameId = CprofNameMethodCall(&statePtr->naming,
		(Tcl_Command) recPtr->cmdPtr, objc, objv, &fresh,
		&entry.methodKey);
	entry.flags = CPROF_FRAME_OBJCMD;
	entry.objKey = clientData;
	if (fresh && capPtr->methodsPtr != NULL) {
	    CprofMethodsSeeObject(capPtr, (Tcl_Command) recPtr->cmdPtr);
	}
    } else {
	entry.nameId = recPtr->name.nameId;
	if ((recPtr->name.flags & CPROF_NAME_ENSEMBLE) && objc > 1) {
	    entry.flags = CPROF_FRAME_FOLD;
	} else if (recPtr->name.flags & (CPROF_NAME_SUBCMD
		| CPROF_NAME_SCRIPT)) {
	    entry.nameId = CprofNameArgument(&statePtr->naming,
		    &recPtr->name, objc, objv);
	}
    }
    if (recPtr->name.flags & CPROF_NAME_OWN) {
	entry.flags |= CPROF_FRAME_OWN;
    }
    if (recPtr->name.flags & CPROF_NAME_LOOP) {
	entry.flags |= CPROF_FRAME_LOOP;
    }
    entry.level = ((Interp *) interp)->numLevels;
    entry.anchor = capPtr->anchored ? cfa + capPtr->wrapOffset : 0;
    entry.token = (Tcl_Command) recPtr->cmdPtr;
    entry.envPtr = NULL;
    CprofEntrySite(statePtr, lvPtr, interp, &entry);
    framePtr = CprofLevelsEnter(lvPtr, &entry);
    if (framePtr != NULL && (framePtr->flags & CPROF_FRAME_LOOP)) {
	CprofEventsSchedulePop(statePtr, lvPtr, framePtr);
    } else if (framePtr != NULL) {
	CprofSchedulePop(statePtr, lvPtr, framePtr->serial);
    }
    if (capPtr->tracedPtr != NULL && capPtr->tracedPtr != lvPtr
	    && !lvPtr->quiet) {
	CprofCheckStacks(capPtr, CPROF_CHECK_PUSH);
    }

    /*
     * The command layer's timed duties (-duration, flushes to -db, a fork
     * to notice), every 256 commands. They may stop the run, which frees
     * the record: nothing here is used after.
     */

  poll:
    if (statePtr->polling && (lvPtr->counters.enters & 255) == 0) {
	statePtr->pollProc(statePtr);
    }
}

/*
 * Everything but the common case: a pending look at new commands, a name
 * to learn, an object, ensemble or tclcprof command, a frame that needs
 * the full level stack or a queued pop, coverage, check, the poll.
 */

static void __attribute__((noinline))
WrapSlow(
    WrapRec *recPtr,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[],
    ClientData clientData,
    uintptr_t cfa)
{
    CprofCapture *capPtr = recPtr->capPtr;
    CprofState *statePtr = capPtr->statePtr;
    CprofLevels *lvPtr = &statePtr->levels;
    int noEvent = 0;

    if (capPtr->wrapPtr->pending) {
	LookNow(capPtr->wrapPtr);
    }
    if (recPtr->epoch != recPtr->cmdPtr->cmdEpoch) {
	NameRecOwn(recPtr);
    }
    if ((recPtr->flags & REC_EAGER) && objc >= 3) {
	ExpectCoroutine(capPtr->wrapPtr, objv[1]);
    }

    /*
     * Event handlers: the first command of one (captureevents.c), and commands
     * that schedule them.
     */

    if (statePtr->eventsOn && !(recPtr->flags & REC_CALIB)
	    && !capPtr->coverage) {
	int level = ((Interp *) interp)->numLevels;

	if (CprofEventsMayStart(statePtr, level)) {
	    CprofEventsBefore(statePtr, level,
		    capPtr->anchored ? cfa + capPtr->wrapOffset : 0, objc,
		    objv);
	    noEvent = CPROF_PUSH_NO_EVENT;
	}
	if (recPtr->name.flags & CPROF_NAME_ROLE_MASK) {
	    CprofEventsSchedule(statePtr, &recPtr->name, level, objc, objv);
	}
    }

    if (statePtr->childProc != NULL && !(recPtr->flags & REC_CALIB)
	    && CprofNameRole(recPtr->name.flags) == CPROF_ROLE_INTERP) {
	statePtr->childProc(statePtr, interp, objc, objv);
    }

    /*
     * Objects and ensembles take the inline push too, with their flag.
     */

    if (capPtr->plain && !(recPtr->flags & REC_CALIB)
	    && !(recPtr->name.flags & CPROF_NAME_OWN)) {
	ExecEnv *envPtr = ((Interp *) interp)->execEnvPtr;
	void *corPtr = envPtr->corPtr, *objKey = NULL;
	int loop = (recPtr->name.flags & CPROF_NAME_LOOP) != 0;
	int lazy = (corPtr == NULL && !lvPtr->timing
		&& !(recPtr->flags & REC_EAGER) && !loop);
	int nameId = recPtr->name.nameId, flags = noEvent, fresh;
	const void *method = NULL;
	CprofFrame *framePtr;

	if (recPtr->name.flags & CPROF_NAME_OBJECT) {
	    nameId = CprofNameMethodCall(&statePtr->naming,
		    (Tcl_Command) recPtr->cmdPtr, objc, objv, &fresh, &method);
	    flags = CPROF_FRAME_OBJCMD;
	    objKey = clientData;
	    if (fresh && capPtr->methodsPtr != NULL) {
		CprofMethodsSeeObject(capPtr, (Tcl_Command) recPtr->cmdPtr);
	    }
	} else if ((recPtr->name.flags & CPROF_NAME_ENSEMBLE) && objc > 1) {
	    flags = CPROF_FRAME_FOLD;
	} else if (recPtr->name.flags & (CPROF_NAME_SUBCMD
		| CPROF_NAME_SCRIPT)) {
	    nameId = CprofNameArgument(&statePtr->naming, &recPtr->name,
		    objc, objv);
	}
	if (loop) {
	    /*
	     * A loop's frame is popped when it returns: the frames of its
	     * handlers go with it.
	     */

	    flags |= CPROF_FRAME_LOOP;
	}
	framePtr = CprofLevelsPushPlain(lvPtr, nameId, recPtr->name.kind,
		((Interp *) interp)->numLevels,
		capPtr->anchored ? cfa + capPtr->wrapOffset : 0,
		(Tcl_Command) recPtr->cmdPtr, envPtr, corPtr, lazy, flags,
		objKey);
	if (framePtr != NULL) {
	    framePtr->methodKey = method;
	    if (loop) {
		CprofEventsSchedulePop(statePtr, lvPtr, framePtr);
	    } else if (!lazy) {
		CprofSchedulePop(statePtr, lvPtr, framePtr->serial);
	    }
	    if (statePtr->polling && (lvPtr->counters.enters & 255) == 0) {
		statePtr->pollProc(statePtr);
	    }
	    return;
	}
    }
    WrapPush(recPtr, interp, objc, objv, clientData, cfa);
}

static int
WrapEntry(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[],
    WrapRec *recPtr)
{
    uintptr_t cfa = (uintptr_t) __builtin_dwarf_cfa();
    CprofCapture *capPtr = recPtr->capPtr;
    CprofState *statePtr = capPtr->statePtr;
    Interp *iPtr = (Interp *) interp;
    ExecEnv *envPtr = iPtr->execEnvPtr;
    CprofFrame *framePtr = NULL;

    /*
     * The common case, inline: a named command with nothing of its own to
     * do (not an ensemble, object or tclcprof command), outside
     * coroutines. Without timing the frame is lazy (see
     * CprofLevelsPushPlain): no pop is queued. Everything else, and the
     * poll every 256 pushes, goes the slow way.
     */

    if (__builtin_expect((recPtr->flags & REC_PLAIN) && capPtr->plain
	    && !capPtr->wrapPtr->pending && envPtr->corPtr == NULL
	    && recPtr->epoch == recPtr->cmdPtr->cmdEpoch
	    && (!statePtr->polling
		|| ((statePtr->levels.counters.enters + 1) & 255) != 0), 1)) {
	int lazy = !statePtr->levels.timing;

	framePtr = CprofLevelsPushPlain(&statePtr->levels,
		recPtr->name.nameId, recPtr->name.kind, iPtr->numLevels,
		capPtr->anchored ? cfa + capPtr->wrapOffset : 0,
		(Tcl_Command) recPtr->cmdPtr, envPtr, NULL, lazy, 0, NULL);
	if (framePtr != NULL && !lazy) {
	    CprofSchedulePop(statePtr, &statePtr->levels, framePtr->serial);
	}
    }
    if (__builtin_expect(framePtr == NULL, 0)) {
	WrapSlow(recPtr, interp, objc, objv, clientData, cfa);
    }
    return (recPtr->origNreProc ? recPtr->origNreProc
	    : recPtr->cmdPtr->objProc)(clientData, interp, objc, objv);
}

/*
 *----------------------------------------------------------------------
 *
 * Coroutines --
 *
 *	WrapSuspended (the level stack saved a coroutine's frames): queue
 *	ResumeCallback on the coroutine's own NRE stack. ResumeCallback
 *	(the coroutine runs again): push the resuming command's frame in
 *	the resumer's environment, the saved frames above it, and queue
 *	YieldWatchCallback on the resumer's stack. YieldWatchCallback (the
 *	coroutine yielded or returned): settle its frames and pop the
 *	resuming command's.
 *
 *----------------------------------------------------------------------
 */

static void
WrapSuspended(
    void *data,
    CprofSuspension *recPtr,
    void *corKey)
{
    CprofState *statePtr = (CprofState *) data;
    CoroutineData *corPtr = (CoroutineData *) corKey;
    Interp *iPtr = (Interp *) statePtr->interp;
    ExecEnv *savedEnvPtr;

    if (corPtr->eePtr == NULL) {
	return;
    }
    savedEnvPtr = iPtr->execEnvPtr;
    iPtr->execEnvPtr = corPtr->eePtr;
    Tcl_NRAddCallback(statePtr->interp, ResumeCallback, statePtr, recPtr,
	    corPtr, NULL);
    *CprofSuspensionData(recPtr) = TOP_CB(iPtr);
    iPtr->execEnvPtr = savedEnvPtr;
}

/*
 * The stack is cleared while the coroutine is suspended: its resume
 * callback is made a no-op (pointed at a callback outside the library
 * that returns its result, when there is one) and forgets the record.
 */

static void
WrapSuspensionGone(
    void *data,
    CprofSuspension *recPtr)
{
    NRE_callback *cbPtr = *CprofSuspensionData(recPtr);
    void *identity = CprofThunkIdentity();

    if (cbPtr != NULL && cbPtr->procPtr == ResumeCallback) {
	cbPtr->data[1] = NULL;
	if (identity != NULL) {
	    cbPtr->procPtr = (Tcl_NRPostProc *) identity;
	}
    }
}

/*
 * The suspension record of a suspended coroutine: the resume callback on
 * top of its NRE stack has it.
 */

static CprofSuspension *
WrapFindSuspension(
    void *data,
    void *corKey)
{
    CoroutineData *corPtr = (CoroutineData *) corKey;
    NRE_callback *cbPtr;

    (void) data;
    if (corPtr == NULL || corPtr->eePtr == NULL) {
	return NULL;
    }
    cbPtr = corPtr->eePtr->callbackPtr;
    if (cbPtr != NULL && cbPtr->procPtr == ResumeCallback
	    && cbPtr->data[2] == (ClientData) corPtr) {
	return (CprofSuspension *) cbPtr->data[1];
    }
    return NULL;
}

static const CprofCoroCallbacks coroCallbacks = {
    WrapSuspended, WrapSuspensionGone, WrapFindSuspension
};

static int
ResumeCallback(
    ClientData data[],
    Tcl_Interp *interp,
    int result)
{
    uintptr_t cfa = (uintptr_t) __builtin_dwarf_cfa();
    CprofState *statePtr = (CprofState *) data[0];
    CprofSuspension *recPtr = (CprofSuspension *) data[1];
    CoroutineData *corPtr = (CoroutineData *) data[2];
    CprofCapture *capPtr = statePtr->capturePtr;
    Interp *iPtr = (Interp *) interp;
    CprofLevels *lvPtr = &statePtr->levels;
    CprofFrame *framePtr;
    CprofEntry entry;
    ExecEnv *savedEnvPtr;

    if (capPtr == NULL || capPtr->wrapPtr == NULL || recPtr == NULL) {
	return result;
    }
    if (corPtr->eePtr->rewind) {
	/*
	 * Deleted while suspended: its frames will not run again.
	 */

	CprofLevelsDropSuspension(lvPtr, recPtr);
	return result;
    }
    capPtr->wrapPtr->resumes++;
    entry.nameId = CprofNameCoroutine(&statePtr->naming,
	    CprofLevelsCoroutineBody(lvPtr, corPtr, recPtr));
    entry.kind = CPROF_KIND_CMD;
    entry.flags = CPROF_FRAME_RESUME;
    entry.level = corPtr->auxNumLevels;
    entry.anchor = capPtr->anchored ? cfa + capPtr->callbackOffset : 0;
    entry.token = (Tcl_Command) corPtr->cmdPtr;
    entry.objKey = corPtr;
    entry.methodKey = NULL;
    entry.envPtr = corPtr->callerEEPtr;
    entry.siteKind = CPROF_SITE_NONE;
    if (statePtr->eventsOn && CprofEventsMayStart(statePtr, entry.level)) {
	/*
	 * A handler may be the resume of a coroutine (the resumer's
	 * command frame is the coroutine's record of its caller).
	 */

	CprofEventsBeforeResume(statePtr, entry.level, entry.anchor,
		corPtr->callerEEPtr, corPtr->caller.cmdFramePtr);
    }
    framePtr = CprofLevelsEnter(lvPtr, &entry);
    if (framePtr == NULL) {
	CprofLevelsDropSuspension(lvPtr, recPtr);
	return result;
    }
    if (lvPtr->sampleSites) {
	/*
	 * Tcl's command frame is the coroutine's here: the resume was
	 * invoked where the coroutine keeps its caller's.
	 */

	CprofFrameSite(framePtr, corPtr->caller.cmdFramePtr);
    }
    CprofLevelsResumeSuspension(lvPtr, recPtr, entry.level, entry.anchor);

    /*
     * Timing needs the yield (or return) as it happens: a callback on the
     * resumer's stack, whose top it is then (so does -capture check,
     * whose trace sees the resuming command's leave at once). Otherwise
     * the level stack sees it at the resumer's next push or pop: samples
     * taken before leave out the frames above Tcl's current level anyway,
     * and a loop that only resumes the coroutine again and again finds
     * its frames still in place.
     */

    if (lvPtr->timing || capPtr->kind == CPROF_CAPTURE_CHECK) {
	savedEnvPtr = iPtr->execEnvPtr;
	iPtr->execEnvPtr = corPtr->callerEEPtr;
	Tcl_NRAddCallback(interp, YieldWatchCallback, statePtr,
		(ClientData) (uintptr_t) framePtr->serial, NULL, NULL);
	iPtr->execEnvPtr = savedEnvPtr;
    }
    return result;
}

static int
YieldWatchCallback(
    ClientData data[],
    Tcl_Interp *interp,
    int result)
{
    CprofState *statePtr = (CprofState *) data[0];
    uint64_t serial = (uint64_t) (uintptr_t) data[1];
    CprofStack *stackPtr = &statePtr->levels.stack;

    if (statePtr->capturePtr == NULL) {
	return result;
    }

    /*
     * A yield saves the coroutine's frames and ends the resuming
     * command's frame; a return left only that frame.
     */

    CprofLevelsSettle(&statePtr->levels);
    if (stackPtr->depth > 0
	    && stackPtr->frames[stackPtr->depth - 1].serial == serial) {
	CprofLevelsLeave(&statePtr->levels, serial);
    }
    return result;
}

/*
 * Whether an NRE callback is one of this file's (unload looks for them).
 */

int
CprofWrapIsOurs(
    Tcl_NRPostProc *procPtr)
{
    return procPtr == ResumeCallback || procPtr == YieldWatchCallback;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofWrapInstall, CprofWrapRemove --
 *
 *	Wrap every command of the interpreter (all namespaces and the
 *	hidden commands) and hook every namespace; undo all of it.
 *
 * Results:
 *	CprofWrapInstall: TCL_OK, or TCL_ERROR with a message (nothing
 *	changed) when wrapping cannot work here.
 *
 *----------------------------------------------------------------------
 */

int
CprofWrapInstall(
    CprofCapture *capPtr)
{
    CprofState *statePtr = capPtr->statePtr;
    Tcl_Interp *interp = statePtr->interp;
    Interp *iPtr = (Interp *) interp;
    Namespace *globalPtr = (Namespace *) Tcl_GetGlobalNamespace(interp);
    CprofWrap *wrapPtr;
    char msg[160];

    if (!CprofThunksReady(msg, sizeof(msg))) {
	Tcl_SetObjResult(interp, Tcl_NewStringObj(msg, -1));
	return TCL_ERROR;
    }
    if (tclCreateProc == NULL) {
	tclCreateProc = globalPtr->cmdTable.createProc;
	if (tclCreateProc == CmdTableCreate) {
	    tclCreateProc = NULL;
	}
    }
    if (tclCreateProc == NULL) {
	Tcl_SetObjResult(interp, Tcl_NewStringObj(
		"cannot learn how Tcl creates commands", -1));
	return TCL_ERROR;
    }
    wrapPtr = (CprofWrap *) ckalloc(sizeof(CprofWrap));
    memset(wrapPtr, 0, sizeof(CprofWrap));
    wrapPtr->capPtr = capPtr;
    wrapPtr->interp = interp;
    wrapPtr->sweepAt = 4096;
    Tcl_InitHashTable(&wrapPtr->recs, TCL_ONE_WORD_KEYS);
    capPtr->wrapPtr = wrapPtr;
    capPtr->lookPending = LookPending;

    HookNamespace(wrapPtr, globalPtr);
    if (iPtr->hiddenCmdTablePtr != NULL) {
	Tcl_HashSearch search;
	Tcl_HashEntry *hPtr;

	for (hPtr = Tcl_FirstHashEntry(iPtr->hiddenCmdTablePtr, &search);
		hPtr != NULL; hPtr = Tcl_NextHashEntry(&search)) {
	    WrapCommand(wrapPtr, Tcl_GetHashValue(hPtr));
	}
    }
    statePtr->levels.coroCbPtr = &coroCallbacks;
    statePtr->levels.coroData = statePtr;
    return TCL_OK;
}

void
CprofWrapRemove(
    CprofCapture *capPtr)
{
    CprofWrap *wrapPtr = capPtr->wrapPtr;
    CprofState *statePtr = capPtr->statePtr;
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;
    int i;

    if (wrapPtr == NULL) {
	return;
    }
    UnhookNamespace((Namespace *) Tcl_GetGlobalNamespace(wrapPtr->interp));
    for (hPtr = Tcl_FirstHashEntry(&wrapPtr->recs, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	UnwrapRec(wrapPtr, Tcl_GetHashValue(hPtr));
    }
    Tcl_DeleteHashTable(&wrapPtr->recs);
    if (wrapPtr->lookTrace != NULL) {
	Tcl_DeleteTrace(wrapPtr->interp, wrapPtr->lookTrace);
    }
    for (i = 0; i < wrapPtr->numPending; i++) {
	ckfree(wrapPtr->pendingNames[i]);
    }
    if (wrapPtr->expectName != NULL) {
	ckfree(wrapPtr->expectName);
    }
    if (wrapPtr->pendingNames != NULL) {
	ckfree(wrapPtr->pendingNames);
	ckfree(wrapPtr->pendingIsNs);
    }
    if (statePtr->levels.coroCbPtr == &coroCallbacks) {
	statePtr->levels.coroCbPtr = NULL;
	statePtr->levels.coroData = NULL;
    }
    capPtr->wrapPtr = NULL;
    capPtr->lookPending = NULL;
    ckfree(wrapPtr);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofWrapCalibrate --
 *
 *	Find the distances from the wrapper's CFA, and from an NRE
 *	callback's, to the stack pointer of the trampoline frame
 *	(TclNRRunCallbacks) that runs the command or the callback. A
 *	private NRE command is wrapped and run once: the wrapper records
 *	its CFA, the command takes a native backtrace and queues a callback
 *	that does the same; the first trampoline frame seen by both must be
 *	the same one.
 *
 * Results:
 *	TCL_OK; statePtr->calib says whether it worked.
 *
 *----------------------------------------------------------------------
 */

static int
CalibCallback(
    ClientData data[],
    Tcl_Interp *interp,
    int result)
{
    CprofWrap *wrapPtr = (CprofWrap *) data[0];
    CprofCalibration *calPtr = &wrapPtr->capPtr->statePtr->calib;
    uintptr_t sps[1];

    wrapPtr->calibCbCfa = (uintptr_t) __builtin_dwarf_cfa();
    if (CprofNativeTrampolines(calPtr->trampStart, calPtr->trampEnd, sps, 1)
	    == 1) {
	wrapPtr->calibCbTramp = sps[0];
    }
    return result;
}

static int
CalibNre(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofWrap *wrapPtr = (CprofWrap *) clientData;
    CprofCalibration *calPtr = &wrapPtr->capPtr->statePtr->calib;
    uintptr_t sps[1];

    if (CprofNativeTrampolines(calPtr->trampStart, calPtr->trampEnd, sps, 1)
	    == 1) {
	wrapPtr->calibTramp = sps[0];
    }
    Tcl_NRAddCallback(interp, CalibCallback, wrapPtr, NULL, NULL, NULL);
    return TCL_OK;
}

static int
CalibObj(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    return Tcl_NRCallObjProc(interp, CalibNre, clientData, objc, objv);
}

int
CprofWrapCalibrate(
    CprofCapture *capPtr)
{
    CprofWrap *wrapPtr = capPtr->wrapPtr;
    CprofState *statePtr = capPtr->statePtr;
    CprofCalibration *calPtr = &statePtr->calib;
    Tcl_Interp *interp = statePtr->interp;
    Tcl_InterpState saved;
    Tcl_Command token;
    Tcl_Obj *cmdObj;
    Tcl_HashEntry *hPtr;
    Tcl_Namespace *nsPtr;
    int madeNs;

    calPtr->state = CPROF_CALIB_FAILED;
    if (!CprofTrampolineRange(&calPtr->trampStart, &calPtr->trampEnd,
	    calPtr->message, sizeof(calPtr->message))) {
	return TCL_OK;
    }
    /*
     * A child interpreter calibrating (its parent samples Tcl's frames,
     * -capture frames, and calibrated nothing) has no ::tclcprof: the one
     * the command makes goes with it.
     */

    madeNs = (Tcl_FindNamespace(interp, "::tclcprof", NULL, 0) == NULL);
    token = Tcl_NRCreateCommand(interp, "::tclcprof::CalibrateWrap",
	    CalibObj, CalibNre, wrapPtr, NULL);
    LookNow(wrapPtr);
    WrapCommand(wrapPtr, (Command *) token);
    hPtr = Tcl_FindHashEntry(&wrapPtr->recs, (char *) token);
    if (hPtr == NULL || (((WrapRec *) Tcl_GetHashValue(hPtr))->flags
	    & REC_SKIP)) {
	snprintf(calPtr->message, sizeof(calPtr->message),
		"cannot wrap the calibration command");
	Tcl_DeleteCommandFromToken(interp, token);
	if (madeNs && (nsPtr = Tcl_FindNamespace(interp, "::tclcprof", NULL,
		0)) != NULL) {
	    Tcl_DeleteNamespace(nsPtr);
	}
	return TCL_OK;
    }
    ((WrapRec *) Tcl_GetHashValue(hPtr))->flags |= REC_CALIB;
    wrapPtr->calibCfa = wrapPtr->calibTramp = 0;
    wrapPtr->calibCbCfa = wrapPtr->calibCbTramp = 0;
    saved = Tcl_SaveInterpState(interp, TCL_OK);
    cmdObj = Tcl_NewStringObj("::tclcprof::CalibrateWrap", -1);
    Tcl_IncrRefCount(cmdObj);
    wrapPtr->calibrating = 1;
    Tcl_EvalObjv(interp, 1, &cmdObj, TCL_EVAL_GLOBAL);
    wrapPtr->calibrating = 0;
    Tcl_DecrRefCount(cmdObj);
    Tcl_RestoreInterpState(interp, saved);
    Tcl_DeleteCommandFromToken(interp, token);
    if (madeNs && (nsPtr = Tcl_FindNamespace(interp, "::tclcprof", NULL, 0))
	    != NULL) {
	Tcl_DeleteNamespace(nsPtr);
    }

    if (wrapPtr->calibCfa == 0 || wrapPtr->calibTramp == 0
	    || wrapPtr->calibCbCfa == 0 || wrapPtr->calibCbTramp == 0) {
	snprintf(calPtr->message, sizeof(calPtr->message),
		"no trampoline frame seen from the wrapper");
	return TCL_OK;
    }
    if (wrapPtr->calibTramp != wrapPtr->calibCbTramp) {
	snprintf(calPtr->message, sizeof(calPtr->message),
		"trampoline frames disagree (command 0x%lx, callback 0x%lx)",
		(unsigned long) wrapPtr->calibTramp,
		(unsigned long) wrapPtr->calibCbTramp);
	return TCL_OK;
    }
    calPtr->offset = (intptr_t) (wrapPtr->calibTramp - wrapPtr->calibCfa);
    capPtr->callbackOffset = (intptr_t) (wrapPtr->calibCbTramp
	    - wrapPtr->calibCbCfa);
    calPtr->state = CPROF_CALIB_OK;
    calPtr->message[0] = '\0';
    return TCL_OK;
}

/*
 * Status: what is wrapped and what is not.
 */

void
CprofWrapStatus(
    CprofCapture *capPtr,
    Tcl_Obj *dictObj)
{
    CprofWrap *wrapPtr = capPtr->wrapPtr;
    Tcl_Obj *skipObj;
    int i;

    if (wrapPtr == NULL) {
	return;
    }
#define PUT(k, v) Tcl_DictObjPut(NULL, dictObj, Tcl_NewStringObj((k), -1), (v))
    PUT("wrapped", Tcl_NewWideIntObj(wrapPtr->wrapped));
    PUT("wrapped_late", Tcl_NewWideIntObj(wrapPtr->late));
    skipObj = Tcl_NewDictObj();
    for (i = 0; i < SKIP_KINDS; i++) {
	Tcl_DictObjPut(NULL, skipObj, Tcl_NewStringObj(skipNames[i], -1),
		Tcl_NewWideIntObj(wrapPtr->skipped[i]));
    }
    PUT("not_wrapped", skipObj);
    PUT("look_traces", Tcl_NewWideIntObj(wrapPtr->lookTraces));
    PUT("unwrapped_by_others", Tcl_NewWideIntObj(wrapPtr->lost));
    PUT("namespaces", Tcl_NewWideIntObj(wrapPtr->namespaces));
    PUT("foreign_tables", Tcl_NewWideIntObj(wrapPtr->foreignTables));
    PUT("coroutine_resumes", Tcl_NewWideIntObj(wrapPtr->resumes));
#undef PUT
}
