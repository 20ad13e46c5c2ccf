/*
 * captureseed.c --
 *
 *	Capture layer: procs the wrapper does not see entered. (1) Procs
 *	called by C code through their objProc (HookNRCallObjProc, below).
 *	(2) The frames already running when a run starts. A run
 *	started inside ::outer > ::middle > ::inner (tclcprof::start called
 *	from inner, TCLCPROF started from an event handler) puts those
 *	frames on the level stack at start, below what it captures after,
 *	in every capture (wrap, trace, check) and mode; in exact timing they
 *	are timed from the start.
 *
 *	What runs is read from Tcl's own structures, in normal context,
 *	once, at start:
 *	  - the CallFrame chain (iPtr->framePtr -> callerPtr): one frame per
 *	    proc, lambda and TclOO method (FRAME_IS_PROC), innermost first;
 *	    framePtr, not varFramePtr, since uplevel moves only the latter;
 *	  - the NRE callback chain of the current execution environment
 *	    (TOP_CB, nextPtr): each such frame has one InterpProcNR2
 *	    callback (tclProc.c, queued when its body starts), in the same
 *	    order as the CallFrames, and each command level one NRCommand
 *	    callback (tclBasic.c, TclNREvalObjv: it runs when the command's
 *	    NRE work has completed, and decrements iPtr->numLevels). The
 *	    first NRCommand below a frame's InterpProcNR2 is its command's:
 *	    the level is counted from it, and the frame's pop (capturebase.c,
 *	    the callback every wrapped command gets) is linked in right
 *	    above it, so that it runs when the frame returns, as if the
 *	    frame had been entered with the capture installed.
 *	Both callbacks are static functions of libtcl (its symbols are
 *	stripped): their addresses are learned once per process from a
 *	probe, a private proc calling a private command, whose chain is
 *	known; if it is not as expected, nothing is seeded and status says
 *	why (CprofSeedNote). No library reads these: Tcl has no public
 *	interface to the commands running, and the chain is Tcl's own
 *	private structure (tclInt.h), read with its own types.
 *
 *	Seeded frames are anchored at the trampoline running start (the
 *	innermost): frames running in an outer trampoline (below a C
 *	command that evaluates a script, such as vwait running a handler)
 *	are placed there too, above that C command's native frames.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include <tclInt.h>
#include <tclOOInt.h>
#include "captureInt.h"
#include "../unix/hookgot.h"
#include <pthread.h>
#include <string.h>
#include <stdio.h>

/*
 * What the probe learned, once per process (libtcl's addresses are the
 * same for every interpreter and thread).
 */

static pthread_mutex_t probeMutex = PTHREAD_MUTEX_INITIALIZER;
static int probed = 0;		/* 1 once probed (either way). */
static Tcl_NRPostProc *nrCommandProc = NULL;
static Tcl_NRPostProc *procDoneProc = NULL;	/* InterpProcNR2 */
static Tcl_ObjCmdProc *procObjProc = NULL;	/* TclObjInterpProc */
static Tcl_ObjCmdProc *procNreProc = NULL;	/* TclNRInterpProc */
static char probeNote[160] = "";
static CprofGotSet *gotSet = NULL;

/*
 * Tcl_NRCallObjProc as libtcl's own GOT entry had it, before it was
 * redirected to HookNRCallObjProc (once per process, never undone: the
 * library is pinned by the GOT patcher).
 */

typedef int (NRCallObjProcProc)(Tcl_Interp *interp, Tcl_ObjCmdProc *objProc,
	ClientData clientData, Tcl_Size objc, Tcl_Obj *const objv[]);
static NRCallObjProcProc *realNRCallObjProc = NULL;
static int		HookNRCallObjProc(Tcl_Interp *interp,
			    Tcl_ObjCmdProc *objProc, ClientData clientData,
			    Tcl_Size objc, Tcl_Obj *const objv[]);

/*
 * The most frames seeded.
 */

#define SEED_MAX	512

#define PROBE_CMD	"::tclcprof::SeedProbeCmd"
#define PROBE_PROC	"::tclcprof::SeedProbeProc"

/*
 *----------------------------------------------------------------------
 *
 * ProbeCmd, Probe --
 *
 *	The probe: PROBE_PROC's body calls PROBE_CMD, whose chain is, from
 *	the top: its own NRCommand (all data NULL), the proc body's
 *	TEBCresume, the proc's InterpProcNR2 (its name as data[0]), the
 *	proc's NRCommand (the same function as the first).
 *
 *----------------------------------------------------------------------
 */

static int
ProbeCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    NRE_callback *cb[4];
    int i;
    const char *name;

    (void) clientData;
    (void) objc;
    (void) objv;
    cb[0] = TOP_CB(interp);
    for (i = 1; i < 4; i++) {
	cb[i] = cb[i - 1] ? cb[i - 1]->nextPtr : NULL;
    }
    if (cb[3] == NULL) {
	snprintf(probeNote, sizeof(probeNote),
		"the probe's NRE chain is shorter than expected");
	return TCL_OK;
    }
    name = cb[2]->data[0] ? Tcl_GetString((Tcl_Obj *) cb[2]->data[0]) : "";
    if (cb[0]->procPtr != cb[3]->procPtr
	    || cb[0]->data[0] != NULL || cb[0]->data[1] != NULL
	    || cb[2]->procPtr == cb[0]->procPtr
	    || cb[1]->procPtr == cb[0]->procPtr
	    || strstr(name, "SeedProbeProc") == NULL) {
	snprintf(probeNote, sizeof(probeNote),
		"the probe's NRE chain is not as expected");
	return TCL_OK;
    }
    nrCommandProc = cb[0]->procPtr;
    procDoneProc = cb[2]->procPtr;
    return TCL_OK;
}

static void
Probe(
    Tcl_Interp *interp)
{
    Tcl_InterpState saved = Tcl_SaveInterpState(interp, TCL_OK);
    Tcl_Command cmd;

    cmd = Tcl_CreateObjCommand(interp, PROBE_CMD, ProbeCmd, NULL, NULL);
    if (Tcl_EvalEx(interp, "::proc " PROBE_PROC " {} {" PROBE_CMD "}",
	    -1, TCL_EVAL_GLOBAL) != TCL_OK
	    || Tcl_EvalEx(interp, PROBE_PROC, -1, TCL_EVAL_GLOBAL) != TCL_OK) {
	snprintf(probeNote, sizeof(probeNote), "the probe failed: %s",
		Tcl_GetString(Tcl_GetObjResult(interp)));
    } else if (nrCommandProc == NULL && probeNote[0] == '\0') {
	snprintf(probeNote, sizeof(probeNote), "the probe did not run");
    }
    Tcl_DeleteCommandFromToken(interp, cmd);
    cmd = Tcl_FindCommand(interp, PROBE_PROC, NULL, TCL_GLOBAL_ONLY);
    if (cmd != NULL) {
	/*
	 * A proc's entry points, as Tcl_CreateObjCommand's caller in
	 * tclProc.c set them (no capture is installed yet).
	 */

	procObjProc = ((Command *) cmd)->objProc;
	procNreProc = ((Command *) cmd)->nreProc;
	Tcl_DeleteCommandFromToken(interp, cmd);
    }
    Tcl_RestoreInterpState(interp, saved);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSeedPrepare --
 *
 *	Learn the callbacks' addresses (once per process), in normal
 *	context, before the capture is installed (the probe's commands must
 *	not be captured).
 *
 *----------------------------------------------------------------------
 */

void
CprofSeedPrepare(
    Tcl_Interp *interp)
{
    /*
     * The probe evaluates scripts with probeMutex held. Only a start gets
     * here, and a start that an asynchronous handler or a trace would
     * begin during this one is refused before (cmdrun.c's DoStart), so
     * this thread never waits here for the mutex it holds.
     */

    pthread_mutex_lock(&probeMutex);
    if (!probed) {
	static const CprofGotTarget targets[] = {
	    {"Tcl_NRCallObjProc", (void *) HookNRCallObjProc}
	};

	Probe(interp);
	probed = 1;
	if (procObjProc != NULL && procNreProc != NULL) {
	    realNRCallObjProc = (NRCallObjProcProc *)
		    ((TclStubs *) tclStubsPtr)->tcl_NRCallObjProc;
	    gotSet = CprofGotSetNew(NULL);
	    if (gotSet != NULL) {
		CprofGotSetPatch(gotSet, targets, 1);
	    }
	}
    }
    pthread_mutex_unlock(&probeMutex);
}

/*
 *----------------------------------------------------------------------
 *
 * HookNRCallObjProc --
 *
 *	Procs called through their objProc. C code that fetched a proc's
 *	objProc with Tcl_GetCommandInfo and calls it (tdom's SAX parser
 *	calls its handlers so) runs TclObjInterpProc, which runs the body
 *	through Tcl_NRCallObjProc(interp, TclNRInterpProc, procPtr, ...):
 *	not the command's nreProc, so the wrapper would not see the call.
 *	libtcl makes that call through its GOT (a PLT jump in Debian's
 *	build), which is redirected here: when it is a proc's, and the
 *	proc's command has an nreProc of someone's own (the wrapper's thunk
 *	while wrapped), that runs instead, exactly as Tcl's own Dispatch
 *	would run it. Tcl_GetCommandInfo still returns the proc's own
 *	objProc and clientData; everything else passes through unchanged.
 *	No library does this: GOT entries are written by hookgot.c.
 *
 *----------------------------------------------------------------------
 */

static int
HookNRCallObjProc(
    Tcl_Interp *interp,
    Tcl_ObjCmdProc *objProc,
    ClientData clientData,
    Tcl_Size objc,
    Tcl_Obj *const objv[])
{
    if (objProc == procNreProc && clientData != NULL) {
	Proc *procPtr = (Proc *) clientData;
	Command *cmdPtr = procPtr->cmdPtr;

	if (cmdPtr != NULL && procPtr->iPtr == (Interp *) interp
		&& cmdPtr->objClientData == clientData
		&& cmdPtr->objProc == procObjProc
		&& cmdPtr->nreProc != NULL && cmdPtr->nreProc != procNreProc
		&& !(cmdPtr->flags & CMD_IS_DELETED)) {
	    CprofState *statePtr = CprofStateOfInterp(interp);
	    Interp *iPtr = (Interp *) interp;
	    int code;

	    if (statePtr == NULL || statePtr->capturePtr == NULL
		    || statePtr->capturePtr->kind != CPROF_CAPTURE_WRAP) {
		/*
		 * Not wrapped (or under -capture check, whose trace does
		 * not see such calls either).
		 */

		return realNRCallObjProc(interp, objProc, clientData, objc,
			objv);
	    }

	    /*
	     * One nesting level more, as Tcl_EvalObjv would count it: the
	     * proc's frame is then above its C caller's, not in its place.
	     */

	    iPtr->numLevels++;
	    code = realNRCallObjProc(interp, cmdPtr->nreProc, clientData,
		    objc, objv);
	    iPtr->numLevels--;
	    return code;
	}
    }
    return realNRCallObjProc(interp, objProc, clientData, objc, objv);
}

/*
 * Why nothing is seeded, or NULL.
 */

const char *
CprofSeedNote(void)
{
    return (probed && nrCommandProc == NULL) ? probeNote : NULL;
}

/*
 *----------------------------------------------------------------------
 *
 * SeedName --
 *
 *	The name of a running proc-like frame, as the capture names its
 *	call: a proc by its command, a lambda as apply's call, a method by
 *	its call context. Sets *tokenPtr and *kindPtr. Returns -1 when the
 *	frame cannot be named (a proc frame whose Proc is not yet set).
 *
 *----------------------------------------------------------------------
 */

static int
SeedName(
    CprofState *statePtr,
    CallFrame *framePtr,
    Tcl_Command *tokenPtr,
    int *kindPtr)
{
    CprofNaming *nPtr = &statePtr->naming;
    Proc *procPtr = framePtr->procPtr;

    *tokenPtr = NULL;
    *kindPtr = CPROF_KIND_PROC;
    if (framePtr->isProcCallFrame & FRAME_IS_METHOD) {
	*kindPtr = CPROF_KIND_METHOD;
	return CprofNameMethod(nPtr, (Tcl_ObjectContext) framePtr->clientData);
    }
    if (framePtr->isProcCallFrame & FRAME_IS_LAMBDA) {
	Tcl_Command applyCmd = Tcl_FindCommand(statePtr->interp, "::apply",
		NULL, TCL_GLOBAL_ONLY);
	const CprofCmdName *namePtr;

	if (applyCmd == NULL || framePtr->objc < 2) {
	    return -1;
	}
	namePtr = CprofNameCommand(nPtr, applyCmd);
	*tokenPtr = applyCmd;
	*kindPtr = namePtr->kind;
	return CprofNameArgument(nPtr, namePtr, framePtr->objc,
		framePtr->objv);
    }
    if (procPtr == NULL || procPtr->cmdPtr == NULL) {
	return -1;
    }
    *tokenPtr = (Tcl_Command) procPtr->cmdPtr;
    *kindPtr = CprofNameCommand(nPtr, *tokenPtr)->kind;
    return CprofNameCommand(nPtr, *tokenPtr)->nameId;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSeedFrames --
 *
 *	Put the proc-like frames running now on the run's level stack
 *	(and, with -capture check, on the trace's), outermost first, each
 *	with its pop linked in above its command's NRCommand callback.
 *	Called at start, from start's own command, after the capture is
 *	installed. Nothing is seeded inside a coroutine (its frames end at
 *	its creation; its resumer's chain is elsewhere), nor in coverage.
 *	(Coroutines suspended at start: CprofSeedCoroutines, every capture.)
 *
 * Results:
 *	The number of frames seeded.
 *
 *----------------------------------------------------------------------
 */

/*
 * Link the pop of the frame 'serial' in above the NRCommand callback
 * 'below' of the current environment's chain: queued on top (Tcl's own
 * allocation, freed by the trampoline that runs it), then moved down.
 * Returns 0 when 'below' is not in the chain (the pop then stays on top).
 */

static int
LinkPop(
    CprofState *statePtr,
    CprofLevels *lvPtr,
    uint64_t serial,
    NRE_callback *below)
{
    Interp *iPtr = (Interp *) statePtr->interp;
    NRE_callback *popPtr, *p;

    CprofSchedulePop(statePtr, lvPtr, serial);
    popPtr = TOP_CB(iPtr);
    TOP_CB(iPtr) = popPtr->nextPtr;
    for (p = TOP_CB(iPtr); p != NULL && p->nextPtr != below;
	    p = p->nextPtr) {
	/* Find the callback above the NRCommand. */
    }
    if (p == NULL) {
	popPtr->nextPtr = TOP_CB(iPtr);
	TOP_CB(iPtr) = popPtr;
	return 0;
    }
    popPtr->nextPtr = below;
    p->nextPtr = popPtr;
    return 1;
}

/*
 * The proc-like frames of a chain of CallFrames from framePtr to the end
 * (the root frame), innermost first, with the NRCommand callback of each
 * one's command in the environment's chain from topPtr and its level
 * (numLevels the level at the top). Returns how many were matched.
 */

static int
RunningFrames(
    Interp *iPtr,
    CallFrame *framePtr,
    NRE_callback *topPtr,
    int numLevels,
    CallFrame **frames,
    NRE_callback **below,
    int *levels)
{
    CallFrame *cfPtr;
    NRE_callback *cbPtr;
    int n = 0, k = 0, nr = 0;

    for (cfPtr = framePtr; cfPtr != NULL && cfPtr != iPtr->rootFramePtr
	    && n < SEED_MAX; cfPtr = cfPtr->callerPtr) {
	if (cfPtr->isProcCallFrame & (FRAME_IS_PROC | FRAME_IS_LAMBDA
		| FRAME_IS_METHOD)) {
	    frames[n++] = cfPtr;
	}
    }

    /*
     * Their InterpProcNR2 callbacks, in the same order; for each, the
     * first NRCommand below it, and its level (each NRCommand above it
     * is one level more).
     */

    for (cbPtr = topPtr; cbPtr != NULL && k < n; cbPtr = cbPtr->nextPtr) {
	if (cbPtr->procPtr == nrCommandProc) {
	    nr++;
	} else if (cbPtr->procPtr == procDoneProc) {
	    NRE_callback *p;

	    for (p = cbPtr->nextPtr; p != NULL && p->procPtr != nrCommandProc;
		    p = p->nextPtr) {
		/* Find the proc's command's NRCommand. */
	    }
	    if (p == NULL) {
		break;
	    }
	    below[k] = p;
	    levels[k] = numLevels - nr;
	    k++;
	}
    }

    /*
     * Not one callback per frame: a structure not seen before; only the
     * frames matched (the innermost), none when the chain is not
     * understood at all.
     */

    return k;
}

/*
 * The suspended coroutines of the interpreter (made before the run
 * started), in every capture, with exact timing or without: each one's
 * frames become its suspension record (the wrapper's, which its resume
 * hook restores) or its saved frames (the trace's, restored at the first
 * command it sees inside the coroutine), above the command that resumes
 * it, as if the capture had seen them entered (timed from that resume).
 */

static void SeedCoroutinesIn(CprofState *statePtr, Tcl_HashTable *tablePtr,
			    Namespace *nsPtr, int *countPtr);

static void
SeedCoroutine(
    CprofState *statePtr,
    Command *cmdPtr,
    int *countPtr)
{
    Interp *iPtr = (Interp *) statePtr->interp;
    CoroutineData *corPtr = (CoroutineData *) cmdPtr->objClientData;
    CprofLevels *lvPtr = &statePtr->levels;
    CallFrame *frames[SEED_MAX];
    NRE_callback *below[SEED_MAX];
    int levels[SEED_MAX];
    CprofEntry entries[SEED_MAX];
    uint64_t serials[SEED_MAX];
    NRE_callback *pops[SEED_MAX];
    int n, k, m = 0, s;
    ExecEnv *savedEnvPtr;
    CprofCapture *capPtr = statePtr->capturePtr;
    CprofLevels *stacks[2];

    if (corPtr == NULL || corPtr->eePtr == NULL || corPtr->eePtr->rewind
	    || !COR_IS_SUSPENDED(corPtr) || (cmdPtr->flags & CMD_IS_DELETED)
	    || (lvPtr->coroCbPtr != NULL && lvPtr->coroCbPtr->find != NULL
	    && lvPtr->coroCbPtr->find(lvPtr->coroData, corPtr) != NULL)) {
	return;
    }
    n = RunningFrames(iPtr, corPtr->running.framePtr,
	    corPtr->eePtr->callbackPtr, (int) corPtr->auxNumLevels, frames,
	    below, levels);

    /*
     * Outermost first, levels relative to the resumer's.
     */

    for (k = n - 1; k >= 0 && m < SEED_MAX; k--) {
	Tcl_Command token;
	int kind, nameId = SeedName(statePtr, frames[k], &token, &kind);

	if (nameId < 0 || levels[k] < 0 || (token != NULL
		&& (CprofNameCommand(&statePtr->naming, token)->flags
		& CPROF_NAME_OWN))) {
	    /*
	     * (The coroutine's first command runs at its resumer's level:
	     * relative level 0.)
	     */

	    continue;
	}
	memset(&entries[m], 0, sizeof(CprofEntry));
	entries[m].nameId = nameId;
	entries[m].kind = kind;
	entries[m].level = levels[k];
	entries[m].token = token;
	entries[m].siteKind = CPROF_SITE_NONE;
	pops[m] = below[k];
	m++;
    }
    stacks[0] = lvPtr;
    stacks[1] = (capPtr->tracedPtr != NULL && capPtr->tracedPtr != lvPtr)
	    ? capPtr->tracedPtr : NULL;
    for (s = 0; s < 2; s++) {
	if (stacks[s] == NULL) {
	    continue;
	}

	/*
	 * The wrapper's stack keeps them as a suspension record its resume
	 * hook restores, the trace's as the coroutine's saved frames.
	 */

	if ((stacks[s]->coroCbPtr != NULL
		? CprofLevelsSeedSuspension(stacks[s], corPtr, corPtr->eePtr,
		entries, m, serials)
		: CprofLevelsSeedSaved(stacks[s], corPtr, corPtr->eePtr,
		entries, m, serials)) == 0) {
	    continue;
	}

	/*
	 * Each frame's pop above its command's NRCommand in the
	 * coroutine's own chain (below the resume callback just queued on
	 * its top).
	 */

	savedEnvPtr = iPtr->execEnvPtr;
	iPtr->execEnvPtr = corPtr->eePtr;
	for (k = 0; k < m; k++) {
	    (void) LinkPop(statePtr, stacks[s], serials[k], pops[k]);
	}
	iPtr->execEnvPtr = savedEnvPtr;
	if (s == 0) {
	    (*countPtr) += m;
	}
    }
}

static void
SeedCoroutinesIn(
    CprofState *statePtr,
    Tcl_HashTable *tablePtr,
    Namespace *nsPtr,
    int *countPtr)
{
    Tcl_ObjCmdProc *coroNreProc = statePtr->naming.internals->coroNreProc;
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    if (tablePtr == NULL) {
	tablePtr = &nsPtr->cmdTable;
    }
    for (hPtr = Tcl_FirstHashEntry(tablePtr, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	Command *cmdPtr = (Command *) Tcl_GetHashValue(hPtr);

	if (cmdPtr->nreProc == coroNreProc) {
	    SeedCoroutine(statePtr, cmdPtr, countPtr);
	}
    }
    if (nsPtr == NULL) {
	return;
    }
#ifndef BREAK_NAMESPACE_COMPAT
    for (hPtr = Tcl_FirstHashEntry(&nsPtr->childTable, &search);
	    hPtr != NULL; hPtr = Tcl_NextHashEntry(&search)) {
	SeedCoroutinesIn(statePtr, NULL, Tcl_GetHashValue(hPtr), countPtr);
    }
#else
    if (nsPtr->childTablePtr != NULL) {
	for (hPtr = Tcl_FirstHashEntry(nsPtr->childTablePtr, &search);
		hPtr != NULL; hPtr = Tcl_NextHashEntry(&search)) {
	    SeedCoroutinesIn(statePtr, NULL, Tcl_GetHashValue(hPtr),
		    countPtr);
	}
    }
#endif
}

int
CprofSeedCoroutines(
    CprofState *statePtr)
{
    CprofCapture *capPtr = statePtr->capturePtr;
    Interp *iPtr = (Interp *) statePtr->interp;
    int count = 0;

    if (capPtr == NULL || capPtr->coverage || nrCommandProc == NULL
	    || statePtr->naming.internals == NULL
	    || statePtr->naming.internals->coroNreProc == NULL) {
	return 0;
    }
    SeedCoroutinesIn(statePtr, NULL,
	    (Namespace *) Tcl_GetGlobalNamespace(statePtr->interp), &count);
    if (iPtr->hiddenCmdTablePtr != NULL) {
	SeedCoroutinesIn(statePtr, iPtr->hiddenCmdTablePtr, NULL, &count);
    }
    return count;
}

int
CprofSeedFrames(
    CprofState *statePtr)
{
    CprofCapture *capPtr = statePtr->capturePtr;
    Interp *iPtr = (Interp *) statePtr->interp;
    CallFrame *frames[SEED_MAX];
    NRE_callback *below[SEED_MAX];
    int levels[SEED_MAX];
    int n, k, seeded = 0;
    uintptr_t anchor = 0;

    if (capPtr == NULL || capPtr->coverage || nrCommandProc == NULL
	    || iPtr->execEnvPtr->corPtr != NULL) {
	return 0;
    }
    n = RunningFrames(iPtr, iPtr->framePtr, TOP_CB(iPtr), iPtr->numLevels,
	    frames, below, levels);
    if (n == 0) {
	return 0;
    }
    if (statePtr->calib.state == CPROF_CALIB_OK) {
	uintptr_t sps[64];
	int numTramps = CprofNativeTrampolines(statePtr->calib.trampStart,
		statePtr->calib.trampEnd, sps, 64);

	/*
	 * A start by injection (unix/remoteinject.c) runs in a script that
	 * Tcl_AsyncInvoke's handler evaluates, in a trampoline of its own
	 * inside the one that runs the program's frames: theirs is the
	 * next one out.
	 */

	if (numTramps > 0) {
	    anchor = sps[(cprofInjecting && numTramps > 1) ? 1 : 0];
	}
    }

    /*
     * Outermost first: push, and link each one's pop above its
     * NRCommand.
     */

    for (k = n - 1; k >= 0; k--) {
	CprofLevels *stacks[2];
	int s, nameId, kind;
	Tcl_Command token;
	CprofEntry entry;

	nameId = SeedName(statePtr, frames[k], &token, &kind);
	if (nameId < 0 || levels[k] <= 0 || (token != NULL
		&& (CprofNameCommand(&statePtr->naming, token)->flags
		& CPROF_NAME_OWN))) {
	    /*
	     * tclcprof's own procs (the start from TCLCPROF, a profile
	     * script's) are not the program's.
	     */

	    continue;
	}
	memset(&entry, 0, sizeof(entry));
	entry.nameId = nameId;
	entry.kind = kind;
	entry.level = levels[k];
	entry.anchor = anchor;
	entry.token = token;
	entry.siteKind = CPROF_SITE_NONE;
	stacks[0] = &statePtr->levels;
	stacks[1] = (capPtr->tracedPtr != NULL
		&& capPtr->tracedPtr != &statePtr->levels)
		? capPtr->tracedPtr : NULL;
	for (s = 0; s < 2; s++) {
	    CprofFrame *framePtr;

	    if (stacks[s] == NULL) {
		continue;
	    }
	    framePtr = CprofLevelsEnter(stacks[s], &entry);
	    if (framePtr == NULL) {
		continue;
	    }
	    framePtr->flags &= ~CPROF_FRAME_LAZY;

	    /*
	     * (Not linked cannot happen, the NRCommand was found in this
	     * chain: it then pops at start's return.)
	     */

	    if (LinkPop(statePtr, stacks[s], framePtr->serial, below[k])
		    && s == 0) {
		seeded++;
	    }
	}
    }
    return seeded;
}
