/*
 * cmdscope.c --
 *
 *	Profiling beyond one interpreter. A run started with -scope tree
 *	takes in every interpreter below the one that started it, those
 *	created later included; -scope process takes in every interpreter
 *	of every thread created while it runs. The run and the interpreters
 *	it took in make a session; a process has at most one.
 *
 *	Each interpreter taken in (a member) runs a run of its own with the
 *	session's options (cmdrun.c, CprofRunStartMember), in its own thread.
 *	The first profiled interpreter of a thread samples the thread; the
 *	level stacks of the others of that thread (child interpreters) are
 *	sampled by the same signal, their frames spliced into one stack by
 *	their native anchors, so that `kid eval` is the caller of the
 *	child's procs. Nothing here is on the per-command path: members are
 *	found at interpreter creation, and each publishes what it collected,
 *	as a string (Tcl values do not cross threads), when it stops or its
 *	interpreter goes. The owner's profile value (cmdscopedata.c,
 *	CprofScopeProfile) puts them together: one root per thread when
 *	there are several.
 *
 *	How interpreters are found: `interp create` in a profiled
 *	interpreter (the wrapper tells, CprofState.childProc), and
 *	Tcl_CreateInterp and Tcl_CreateSlave called through the stubs table
 *	(the Thread package, extensions), whose entries are pointed here
 *	while a session runs, and Tcl_CreateInterp called by modules linked
 *	to libtcl (an embedding program), whose GOT entries are (hookgot.c;
 *	modules loaded after the start are not). Interpreters that existed
 *	in other threads before the start are not found.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "cmdscopeInt.h"
#include "hookgot.h"
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * How long the owner's stop waits for the members of other threads to
 * stop and publish (they notice at their next 256 commands or event),
 * counted from the last member that did.
 */

#define STOP_WAIT_MS 2000




static void
NoteInterp(
    ThreadRec *tPtr,
    int interpId)
{
    int i;

    for (i = 0; i < tPtr->numInterps; i++) {
	if (tPtr->interps[i] == interpId) {
	    return;
	}
    }
    if (tPtr->numInterps < 64) {
	tPtr->interps[tPtr->numInterps++] = interpId;
    }
}



static CprofSession *current;	/* The session running, or NULL. */

/*
 * The stubs table's entries while a session runs.
 */

typedef Tcl_Interp *(CreateInterpProc)(void);
typedef Tcl_Interp *(CreateSlaveProc)(Tcl_Interp *interp, const char *name,
	int isSafe);
static CreateInterpProc *realCreateInterp;
static CreateSlaveProc *realCreateSlave;
static int hooked;
static CprofGotSet *gotSet;	/* Tcl_CreateInterp called through the GOT
				 * of modules linked to libtcl (a C host). */
static __thread int hiddenThread;
				/* The profiler's own thread (the server of
				 * tclcprof::serve): its interpreters are
				 * never members. */

static void		ChildProc(CprofState *statePtr, Tcl_Interp *interp,
			    int objc, Tcl_Obj *const objv[]);
static void		Attach(Tcl_Interp *interp, CprofSession *sPtr,
			    CprofInterp *parentPtr);
static void		Unref(CprofSession *sPtr);
static Tcl_Obj *	Rotate(CprofInterp *ciPtr);
static void		StopThisThread(CprofSession *sPtr);

static pid_t
GetTid(void)
{
    return (pid_t) syscall(SYS_gettid);
}

/*
 *----------------------------------------------------------------------
 *
 * Fork --
 *
 *	The child of a fork has only the thread that forked: the lock is
 *	held across the fork so that the child's is free, and the members
 *	of other threads are not waited for there (CprofScopeEnd).
 *
 *----------------------------------------------------------------------
 */

static void
AtforkPrepare(void)
{
    Tcl_MutexLock(&cprofScopeMutex);
}

static void
AtforkRelease(void)
{
    Tcl_MutexUnlock(&cprofScopeMutex);
}

static void
AtforkInstall(void)
{
    pthread_atfork(AtforkPrepare, AtforkRelease, AtforkRelease);
}

static void
InitOnce(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;

    pthread_once(&once, AtforkInstall);
}

/*
 *----------------------------------------------------------------------
 *
 * The stubs hooks --
 *
 *	Tcl_CreateInterp and Tcl_CreateSlave through the stubs table: the
 *	interpreter made is taken into the session (process scope: every
 *	one; tree scope: a child of a member).
 *
 *----------------------------------------------------------------------
 */

static CprofSession *
Current(
    int scope)
{
    CprofSession *sPtr;

    Tcl_MutexLock(&cprofScopeMutex);
    sPtr = current;
    if (sPtr != NULL && (sPtr->stopping || sPtr->scope < scope
	    || sPtr->pid != getpid())) {
	sPtr = NULL;
    }
    if (sPtr != NULL) {
	sPtr->refCount++;
    }
    Tcl_MutexUnlock(&cprofScopeMutex);
    return sPtr;
}

/*
 * The profiler of an interpreter that is a running member of the session,
 * or NULL: a child it creates joins the session.
 */

static CprofInterp *
RunningMember(
    Tcl_Interp *interp,
    CprofSession *sPtr)
{
    CprofInterp *ciPtr = (CprofInterp *) Tcl_GetAssocData(interp,
	    CPROF_ASSOC, NULL);

    return (ciPtr != NULL && ciPtr->sessionPtr == sPtr
	    && ciPtr->state.running) ? ciPtr : NULL;
}

/*
 * CprofScopeHideThread --
 *
 *	The calling thread is the profiler's own (cmdserve.c): the
 *	interpreters it creates are not taken in by a session.
 */

void
CprofScopeHideThread(void)
{
    hiddenThread = 1;
}

static Tcl_Interp *
HookCreateInterp(void)
{
    Tcl_Interp *interp = realCreateInterp();
    CprofSession *sPtr;

    if (interp != NULL && !hiddenThread
	    && (sPtr = Current(CPROF_SCOPE_PROCESS)) != NULL) {
	Attach(interp, sPtr, NULL);
	Unref(sPtr);
    }
    return interp;
}

static Tcl_Interp *
HookCreateSlave(
    Tcl_Interp *parent,
    const char *name,
    int isSafe)
{
    Tcl_Interp *child = realCreateSlave(parent, name, isSafe);
    CprofInterp *parentPtr;
    CprofSession *sPtr;

    if (child != NULL && !hiddenThread
	    && (sPtr = Current(CPROF_SCOPE_TREE)) != NULL) {
	parentPtr = RunningMember(parent, sPtr);
	if (parentPtr != NULL) {
	    Attach(child, sPtr, parentPtr);
	}
	Unref(sPtr);
    }
    return child;
}

/*
 * Point the stubs table's two entries at the hooks, or back. The table is
 * read-only data of libtcl (relocated, then protected): its page is made
 * writable for the store.
 */

static int
SetEntry(
    void *entryPtr,
    void *value)
{
    long pageSize = sysconf(_SC_PAGESIZE);
    uintptr_t page = (uintptr_t) entryPtr & ~(uintptr_t) (pageSize - 1);

    if (mprotect((void *) page, (size_t) pageSize, PROT_READ | PROT_WRITE)
	    != 0) {
	return 0;
    }
    __atomic_store_n((void **) entryPtr, value, __ATOMIC_RELEASE);
    mprotect((void *) page, (size_t) pageSize, PROT_READ);
    return 1;
}

static void
Hook(
    int on)
{
    TclStubs *stubsPtr = (TclStubs *) tclStubsPtr;
    static const CprofGotTarget gotTargets[] = {
	{"Tcl_CreateInterp", (void *) HookCreateInterp}
    };

    if (on && !hooked) {
	realCreateInterp = stubsPtr->tcl_CreateInterp;
	realCreateSlave = stubsPtr->tcl_CreateSlave;
	if (SetEntry(&stubsPtr->tcl_CreateInterp, (void *) HookCreateInterp)
		&& SetEntry(&stubsPtr->tcl_CreateSlave,
		(void *) HookCreateSlave)) {
	    hooked = 1;

	    /*
	     * The same function called directly by modules linked to
	     * libtcl (an embedding program's threads): their GOT entries.
	     * Not libtcl's own, whose `interp create` the wrapper sees with
	     * the child's parent.
	     */

	    if (gotSet == NULL) {
		gotSet = CprofGotSetNew((void *) realCreateInterp);
	    }
	    if (gotSet != NULL) {
		CprofGotSetPatch(gotSet, gotTargets, 1);
	    }
	}
    } else if (!on && hooked) {
	SetEntry(&stubsPtr->tcl_CreateInterp, (void *) realCreateInterp);
	SetEntry(&stubsPtr->tcl_CreateSlave, (void *) realCreateSlave);
	if (gotSet != NULL) {
	    CprofGotSetRestore(gotSet);
	}
	hooked = 0;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * Threads (their names: cmdscopedata.c) --
 *
 *----------------------------------------------------------------------
 */

/*
 * The record of the calling thread in a session, made if new. Called with
 * the lock held.
 */

static ThreadRec *
ThisThread(
    CprofSession *sPtr)
{
    Tcl_ThreadId id = Tcl_GetCurrentThread();
    pid_t tid = GetTid();
    ThreadRec *tPtr, **linkPtr;

    /*
     * A thread id is reused by a thread made after one has ended (the
     * same stack address): the record of an ended thread, whose system
     * thread id differs, is not this one's (its part would hide the
     * earlier thread's, and the earlier's calls would be lost).
     */

    for (linkPtr = &sPtr->threads; *linkPtr != NULL;
	    linkPtr = &(*linkPtr)->nextPtr) {
	if ((*linkPtr)->id == id && (*linkPtr)->tid == tid) {
	    return *linkPtr;
	}
    }
    tPtr = (ThreadRec *) ckalloc(sizeof(ThreadRec));
    memset(tPtr, 0, sizeof(ThreadRec));
    tPtr->id = id;
    tPtr->tid = tid;
    snprintf(tPtr->tclId, sizeof(tPtr->tclId), "tid%p", (void *) id);
    tPtr->state = THREAD_RUNNING;
    tPtr->cpuStartNs = CprofScopeThreadCpuNs();
    tPtr->order = sPtr->numThreads++;
    *linkPtr = tPtr;
    return tPtr;
}

static ThreadRec *
FindThread(
    CprofSession *sPtr,
    Tcl_ThreadId id)
{
    ThreadRec *tPtr, *found = NULL;

    /*
     * The newest record of the id (a reused id: the older ones are of
     * threads that ended).
     */

    for (tPtr = sPtr->threads; tPtr != NULL; tPtr = tPtr->nextPtr) {
	if (tPtr->id == id) {
	    found = tPtr;
	}
    }
    return found;
}

static void
Unref(
    CprofSession *sPtr)
{
    int gone;

    Tcl_MutexLock(&cprofScopeMutex);
    gone = (--sPtr->refCount == 0);
    Tcl_MutexUnlock(&cprofScopeMutex);
    if (gone) {
	ThreadRec *tPtr;
	Part *pPtr;

	while ((tPtr = sPtr->threads) != NULL) {
	    sPtr->threads = tPtr->nextPtr;
	    ckfree(tPtr);
	}
	while ((pPtr = sPtr->parts) != NULL) {
	    sPtr->parts = pPtr->nextPtr;
	    if (pPtr->value != NULL) {
		ckfree(pPtr->value);
	    }
	    ckfree(pPtr);
	}
	Tcl_ConditionFinalize(&sPtr->cond);
	if (sPtr->symPtr != NULL) {
	    CprofSymFree(sPtr->symPtr);
	}
	CprofNameRelease(&sPtr->names);
	Tcl_MutexFinalize(&sPtr->symMutex);
	ckfree(sPtr);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * Attach --
 *
 *	Take an interpreter into a session, in its thread: its state (made
 *	without commands: the program sees nothing of the package), its
 *	path, its thread's record, its run.
 *
 *----------------------------------------------------------------------
 */

static int
PathId(
    Tcl_Interp *interp,
    CprofInterp *parentPtr,
    CprofSession *sPtr)
{
    Tcl_Interp *parent;
    Tcl_InterpState saved;
    Tcl_Obj *pathObj;
    int id = -1;

    if (parentPtr == NULL) {
	return -1;
    }
    parent = parentPtr->state.interp;
    saved = Tcl_SaveInterpState(parent, TCL_OK);
    if (Tcl_GetInterpPath(parent, interp) == TCL_OK) {
	Tcl_Obj *relObj = Tcl_GetObjResult(parent);

	pathObj = Tcl_NewListObj(0, NULL);
	if (parentPtr->interpId >= 0) {
	    Tcl_ListObjAppendList(NULL, pathObj, Tcl_NewStringObj(
		    CprofNameString(parentPtr->interpId), -1));
	}
	Tcl_ListObjAppendList(NULL, pathObj, relObj);
	Tcl_IncrRefCount(pathObj);
	Tcl_MutexLock(&cprofScopeMutex);
	id = CprofNameInternIn(&sPtr->names, Tcl_GetString(pathObj), -1);
	Tcl_MutexUnlock(&cprofScopeMutex);
	Tcl_DecrRefCount(pathObj);
    }
    Tcl_RestoreInterpState(parent, saved);
    return id;
}

static void
Attach(
    Tcl_Interp *interp,
    CprofSession *sPtr,
    CprofInterp *parentPtr)
{
    CprofInterp *ciPtr = CprofCmdHooksGet()->interpFor(interp), *hostPtr;
    ThreadRec *tPtr;

    if (ciPtr == NULL || ciPtr->state.running || ciPtr->sessionPtr != NULL
	    || Tcl_InterpDeleted(interp)) {
	return;
    }
    ciPtr->interpId = PathId(interp, parentPtr, sPtr);
    ciPtr->thread = Tcl_GetCurrentThread();
    Tcl_MutexLock(&cprofScopeMutex);
    if (sPtr->stopping) {
	Tcl_MutexUnlock(&cprofScopeMutex);
	return;
    }
    tPtr = ThisThread(sPtr);
    NoteInterp(tPtr, ciPtr->interpId);
    hostPtr = tPtr->primaryPtr;
    if (hostPtr == NULL) {
	tPtr->primaryPtr = ciPtr;
	tPtr->state = THREAD_RUNNING;
    }
    ciPtr->sessionPtr = sPtr;
    ciPtr->member = 1;
    ciPtr->memberEpoch = sPtr->epoch;
    ciPtr->nextMemberPtr = sPtr->members;
    sPtr->members = ciPtr;
    sPtr->refCount++;
    if (hostPtr == NULL && CprofModeSamples(sPtr->options.mode)) {
	/*
	 * The session's symbolizer, not one per thread (each reads the
	 * modules' files and debug data: ~12 MB and ~60 ms a thread).
	 */

	if (sPtr->symPtr == NULL) {
	    sPtr->symPtr = CprofSymNew();
	    CprofSymSetLines(sPtr->symPtr, sPtr->options.lines);
	}
	if (ciPtr->state.symPtr != NULL && ciPtr->state.symLockPtr == NULL) {
	    CprofSymFree(ciPtr->state.symPtr);
	}
	ciPtr->state.symPtr = sPtr->symPtr;
	ciPtr->state.symLockPtr = &sPtr->symMutex;
    }
    Tcl_MutexUnlock(&cprofScopeMutex);

    if (CprofCmdHooksGet()->startMember(ciPtr, &sPtr->options,
	    sPtr->ownerPtr, hostPtr) != TCL_OK) {
	/*
	 * No sampler (no slot, or the timer refused): the interpreter is
	 * left out.
	 */

	CprofScopeMemberGone(ciPtr);
	return;
    }

    /*
     * Its own children, made later, are taken in too.
     */

    ciPtr->state.childProc = ChildProc;
}

/*
 * The interpreters below one (tree scope, at start), parents before their
 * children: listed before any capture is installed (`interp slaves` is
 * evaluated), taken in after.
 */

typedef struct Below {
    Tcl_Interp **interps;
    int *parents;		/* Index of the parent in interps, -1: the
				 * owner. */
    int num, cap;
} Below;

static void
ListBelow(
    Tcl_Interp *interp,
    int index,
    Below *bPtr)
{
    Tcl_InterpState saved = Tcl_SaveInterpState(interp, TCL_OK);
    Tcl_Obj *listObj, **elems;
    int i, first;
    Tcl_Size n;

    if (Tcl_EvalEx(interp, "::interp slaves", -1, TCL_EVAL_GLOBAL) != TCL_OK) {
	Tcl_RestoreInterpState(interp, saved);
	return;
    }
    listObj = Tcl_GetObjResult(interp);
    Tcl_IncrRefCount(listObj);
    Tcl_RestoreInterpState(interp, saved);
    first = bPtr->num;
    if (Tcl_ListObjGetElements(NULL, listObj, &n, &elems) == TCL_OK) {
	for (i = 0; i < n; i++) {
	    Tcl_Interp *child = Tcl_GetSlave(interp, Tcl_GetString(elems[i]));

	    if (child == NULL) {
		continue;
	    }
	    if (bPtr->num == bPtr->cap) {
		bPtr->cap = bPtr->cap ? 2 * bPtr->cap : 8;
		bPtr->interps = (Tcl_Interp **) ckrealloc(bPtr->interps,
			bPtr->cap * sizeof(Tcl_Interp *));
		bPtr->parents = (int *) ckrealloc(bPtr->parents,
			bPtr->cap * sizeof(int));
	    }
	    bPtr->interps[bPtr->num] = child;
	    bPtr->parents[bPtr->num] = index;
	    bPtr->num++;
	}
    }
    Tcl_DecrRefCount(listObj);
    n = bPtr->num;
    for (i = first; i < n; i++) {
	ListBelow(bPtr->interps[i], i, bPtr);
    }
}

/*
 * The wrapper saw `interp create` (or any `interp` subcommand) in a member
 * or the owner: after it returns, the child it made is taken in.
 */

static int
InterpDone(
    ClientData data[],
    Tcl_Interp *interp,
    int result)
{
    CprofSession *sPtr = (CprofSession *) data[0];
    CprofInterp *ciPtr;

    if (result == TCL_OK && !sPtr->stopping
	    && (ciPtr = RunningMember(interp, sPtr)) != NULL) {
	Tcl_Interp *child = Tcl_GetSlave(interp,
		Tcl_GetString(Tcl_GetObjResult(interp)));

	if (child != NULL) {
	    Attach(child, sPtr, ciPtr);
	}
    }
    Unref(sPtr);
    return result;
}

static void
ChildProc(
    CprofState *statePtr,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofInterp *ciPtr = (CprofInterp *) statePtr;
    CprofSession *sPtr = ciPtr->sessionPtr;

    if (sPtr == NULL || objc < 2 || sPtr->stopping) {
	return;
    }
    if (objc > 2 && statePtr->levels.sampleSites
	    && strcmp(Tcl_GetString(objv[1]), "delete") == 0) {
	/*
	 * The samples taken so far, children's frames among them, are
	 * drained while the children's ByteCodes live: once a deletion
	 * has begun, their call sites give no line (drainlines.c).
	 */

	CprofDrain(statePtr->hostPtr != NULL ? statePtr->hostPtr : statePtr);
	return;
    }
    if (strcmp(Tcl_GetString(objv[1]), "create") != 0) {
	return;
    }
    Tcl_MutexLock(&cprofScopeMutex);
    sPtr->refCount++;
    Tcl_MutexUnlock(&cprofScopeMutex);
    Tcl_NRAddCallback(interp, InterpDone, sPtr, NULL, NULL, NULL);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofScopeMemberGone --
 *
 *	A member's run ended (stopped, or its interpreter goes), in its
 *	thread: what it collected is published and it leaves the session.
 *
 *----------------------------------------------------------------------
 */

static char *
Publish(
    Tcl_Obj *valueObj)
{
    Tcl_Size length;
    const char *bytes;
    char *copy;

    if (valueObj == NULL) {
	return NULL;
    }
    Tcl_IncrRefCount(valueObj);
    bytes = Tcl_GetStringFromObj(valueObj, &length);
    copy = (char *) ckalloc((unsigned) length + 1);
    memcpy(copy, bytes, (size_t) length + 1);
    Tcl_DecrRefCount(valueObj);
    return copy;
}

/*
 * The interval a member's part belongs to (-history): the one its data
 * started in, unless that interval's file has been written already (a
 * member that answered late): then the current one (under the lock).
 */

static int
PartEpoch(
    CprofSession *sPtr,
    CprofInterp *ciPtr)
{
    return (ciPtr->memberEpoch > sPtr->joined) ? ciPtr->memberEpoch
	    : sPtr->epoch;
}

/*
 * A member's figures from the meta of its profile value: samples, weight,
 * calls.
 */

static void
MetaFigures(
    Tcl_Obj *valueObj,
    Tcl_WideInt figs[3])
{
    Tcl_Obj *metaObj = CprofDictGet(valueObj, "meta");

    figs[0] = CprofDictGetWide(metaObj, "samples");
    figs[1] = CprofDictGetWide(metaObj, "weight");
    figs[2] = CprofDictGetWide(metaObj, "calls");
}

/*
 * A member's published profile becomes a part of the session. Under
 * cprofScopeMutex.
 */

static Part *
AddPart(
    CprofSession *sPtr,
    CprofInterp *ciPtr,
    ThreadRec *tPtr,
    int primary,
    char *value,
    const Tcl_WideInt figs[3])
{
    Part *partPtr = (Part *) ckalloc(sizeof(Part));

    partPtr->threadPtr = tPtr;
    partPtr->primary = primary;
    partPtr->value = value;
    partPtr->samples = figs[0];
    partPtr->weight = figs[1];
    partPtr->calls = figs[2];
    partPtr->interpId = ciPtr->interpId;
    partPtr->startNs = ciPtr->state.exact.runStartMonoNs;
    partPtr->startTicks = ciPtr->state.exact.runStartNs;
    partPtr->epoch = PartEpoch(sPtr, ciPtr);
    partPtr->nextPtr = sPtr->parts;
    sPtr->parts = partPtr;
    return partPtr;
}

void
CprofScopeMemberGone(
    CprofInterp *ciPtr)
{
    CprofSession *sPtr = ciPtr->sessionPtr;
    CprofInterp **linkPtr;
    ThreadRec *tPtr;
    char *value = NULL;
    Tcl_WideInt figs[3] = {0, 0, 0};
    int primary;

    if (sPtr == NULL || !ciPtr->member) {
	return;
    }
    Tcl_MutexLock(&cprofScopeMutex);
    tPtr = FindThread(sPtr, ciPtr->thread);
    primary = (tPtr != NULL && tPtr->primaryPtr == ciPtr);
    Tcl_MutexUnlock(&cprofScopeMutex);

    /*
     * Each publishes its profile value: the primary of a thread its
     * whole sampled tree (its samples hold the frames of every
     * interpreter of the thread), each its exact tree (with its links,
     * while sessionPtr is set), coverage, call sites and handlers.
     */

    if (ciPtr->state.startNs != 0) {
	Tcl_Obj *valueObj = CprofProfileValue(ciPtr, -1, 0);

	Tcl_IncrRefCount(valueObj);
	MetaFigures(valueObj, figs);
	value = Publish(valueObj);
	Tcl_DecrRefCount(valueObj);
    }

    Tcl_MutexLock(&cprofScopeMutex);
    for (linkPtr = &sPtr->members; *linkPtr != NULL;
	    linkPtr = &(*linkPtr)->nextMemberPtr) {
	if (*linkPtr == ciPtr) {
	    *linkPtr = ciPtr->nextMemberPtr;
	    break;
	}
    }
    if (tPtr != NULL && primary) {
	tPtr->primaryPtr = NULL;

	/*
	 * The CPU time its samples stand for: the sampler's, while armed
	 * (not the publishing above).
	 */

	tPtr->cpuNs = (CprofModeSamples(ciPtr->state.options.mode)
		&& ciPtr->state.options.clock == CPROF_CLOCK_CPU)
		? ciPtr->state.lastSampledNs
		: CprofScopeThreadCpuNs() - tPtr->cpuStartNs;
	tPtr->state = ciPtr->state.deleting ? THREAD_EXITED : THREAD_STOPPED;
    }
    if (value != NULL && tPtr != NULL) {
	AddPart(sPtr, ciPtr, tPtr, primary, value, figs);
	value = NULL;
    }
    ciPtr->sessionPtr = NULL;
    ciPtr->member = 0;
    ciPtr->state.childProc = NULL;
    if (ciPtr->state.symLockPtr != NULL) {
	/*
	 * Its samples are all drained: the session's symbolizer stays the
	 * session's.
	 */

	ciPtr->state.symPtr = NULL;
	ciPtr->state.symLockPtr = NULL;
    }
    Tcl_ConditionNotify(&sPtr->cond);
    Tcl_MutexUnlock(&cprofScopeMutex);
    if (value != NULL) {
	ckfree(value);
    }
    Unref(sPtr);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofScopeCheckStart, CprofScopeBegin --
 *
 *	Whether an interpreter may start a run (not one a session took in;
 *	one session per process), and the start of a session.
 *
 *----------------------------------------------------------------------
 */

int
CprofScopeCheckStart(
    CprofInterp *ciPtr,
    Tcl_Interp *interp,
    int scope)
{
    CprofSession *sPtr;
    int busy;

    if (scope != CPROF_SCOPE_PROCESS) {
	return TCL_OK;
    }
    Tcl_MutexLock(&cprofScopeMutex);
    sPtr = current;
    busy = (sPtr != NULL && sPtr->pid == getpid() && !sPtr->stopping
	    && sPtr->ownerPtr != ciPtr);
    Tcl_MutexUnlock(&cprofScopeMutex);
    if (busy) {
	return CprofStateError(interp, "a run of scope tree or process is"
		" running in another interpreter: one per process", "SESSION");
    }
    return TCL_OK;
}

void *
CprofScopeListBelow(
    Tcl_Interp *interp)
{
    Below *bPtr = (Below *) ckalloc(sizeof(Below));

    memset(bPtr, 0, sizeof(Below));
    ListBelow(interp, -1, bPtr);
    return bPtr;
}

static void
FreeBelow(
    Below *bPtr)
{
    if (bPtr->interps != NULL) {
	ckfree(bPtr->interps);
	ckfree(bPtr->parents);
    }
    ckfree(bPtr);
}

int
CprofScopeBegin(
    CprofInterp *ciPtr,
    Tcl_Interp *interp,
    void *below)
{
    CprofSession *sPtr;
    ThreadRec *tPtr;
    Below *bPtr = (Below *) below;
    CprofInterp **attached;
    int i;

    InitOnce();
    Tcl_MutexLock(&cprofScopeMutex);
    if (current != NULL && current->pid == getpid()) {
	/*
	 * Another session runs: this run keeps to its interpreter.
	 */

	Tcl_MutexUnlock(&cprofScopeMutex);
	ciPtr->state.options.scope = CPROF_SCOPE_INTERP;
	FreeBelow(bPtr);
	return TCL_OK;
    }
    sPtr = (CprofSession *) ckalloc(sizeof(CprofSession));
    memset(sPtr, 0, sizeof(CprofSession));
    sPtr->scope = ciPtr->state.options.scope;
    sPtr->ownerPtr = ciPtr;
    sPtr->ownerThread = Tcl_GetCurrentThread();
    sPtr->pid = getpid();
    sPtr->options = ciPtr->state.options;
    sPtr->refCount = 1;
    tPtr = ThisThread(sPtr);
    tPtr->primaryPtr = ciPtr;
    NoteInterp(tPtr, -1);
    current = sPtr;
    ciPtr->sessionPtr = sPtr;
    ciPtr->interpId = -1;
    ciPtr->thread = sPtr->ownerThread;
    Hook(1);
    Tcl_MutexUnlock(&cprofScopeMutex);
    ciPtr->state.childProc = ChildProc;
    ciPtr->wholeProc = CprofScopeWhole;
    if (ciPtr->nextRotateNs != 0) {
	/*
	 * -history: each file gets the whole of its interval.
	 */

	sPtr->joined = -1;
	__atomic_store_n(&sPtr->intervals, 1, __ATOMIC_RELEASE);
	ciPtr->rotateProc = Rotate;
    }
    attached = (CprofInterp **) ckalloc((bPtr->num + 1)
	    * sizeof(CprofInterp *));
    for (i = 0; i < bPtr->num; i++) {
	CprofInterp *parentPtr = bPtr->parents[i] < 0 ? ciPtr
		: attached[bPtr->parents[i]];

	attached[i] = NULL;
	if (parentPtr != NULL) {
	    Attach(bPtr->interps[i], sPtr, parentPtr);
	    attached[i] = (CprofInterp *) Tcl_GetAssocData(bPtr->interps[i],
		    CPROF_ASSOC, NULL);
	    if (attached[i] != NULL && attached[i]->sessionPtr != sPtr) {
		attached[i] = NULL;
	    }
	}
    }
    ckfree(attached);
    FreeBelow(bPtr);
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofScopeEnd --
 *
 *	The session stops. From its owner: the members of its thread stop
 *	now; those of other threads are told (an event, and the flag their
 *	poll looks at) and waited for until none has stopped for
 *	STOP_WAIT_MS. From a member
 *	(tclcprof::stop in another interpreter): the owner is told, and
 *	the member stops.
 *
 *----------------------------------------------------------------------
 */

typedef struct StopEvent {
    Tcl_Event header;
    CprofSession *sessionPtr;
    int owner;			/* Stop the owner (else: this thread's
				 * members). */
} StopEvent;

static int
StopEventProc(
    Tcl_Event *evPtr,
    int flags)
{
    CprofSession *sPtr = ((StopEvent *) evPtr)->sessionPtr;

    if (((StopEvent *) evPtr)->owner) {
	CprofInterp *ownerPtr;

	Tcl_MutexLock(&cprofScopeMutex);
	ownerPtr = (current == sPtr) ? sPtr->ownerPtr : NULL;
	Tcl_MutexUnlock(&cprofScopeMutex);
	if (ownerPtr != NULL && ownerPtr->state.running) {
	    ownerPtr->state.stoppedBy = "member";
	    ownerPtr->stopProc(&ownerPtr->state);
	    CprofRunDbFinish(ownerPtr, NULL, 0);
	}
    } else {
	StopThisThread(sPtr);
    }
    Unref(sPtr);
    return 1;
}

static void
QueueStop(
    CprofSession *sPtr,
    Tcl_ThreadId thread,
    int owner)
{
    StopEvent *evPtr = (StopEvent *) ckalloc(sizeof(StopEvent));

    evPtr->header.proc = StopEventProc;
    evPtr->sessionPtr = sPtr;
    evPtr->owner = owner;
    sPtr->refCount++;
    Tcl_ThreadQueueEvent(thread, (Tcl_Event *) evPtr, TCL_QUEUE_TAIL);
    Tcl_ThreadAlert(thread);
}

/*
 * The next running member of the calling thread; with 'publish', the next
 * of those that have not published the current interval yet (and can).
 */

static CprofInterp *
NextOfThisThread(
    CprofSession *sPtr,
    int publish)
{
    Tcl_ThreadId self = Tcl_GetCurrentThread();
    CprofInterp *mPtr;

    Tcl_MutexLock(&cprofScopeMutex);
    for (mPtr = sPtr->members; mPtr != NULL; mPtr = mPtr->nextMemberPtr) {
	if (mPtr->thread == self && mPtr->state.running && (!publish
		|| (mPtr->memberEpoch != sPtr->epoch
		&& mPtr->state.pollProc != NULL))) {
	    break;
	}
    }
    Tcl_MutexUnlock(&cprofScopeMutex);
    return mPtr;
}

/*
 * The members of the calling thread stop, one at a time (stopping one
 * stops those it hosts).
 */

static void
StopThisThread(
    CprofSession *sPtr)
{
    CprofInterp *mPtr;

    while ((mPtr = NextOfThisThread(sPtr, 0)) != NULL) {
	CprofCmdHooksGet()->stopMember(mPtr);
    }
}

void
CprofScopeEnd(
    CprofInterp *ciPtr)
{
    CprofSession *sPtr = ciPtr->sessionPtr;
    CprofInterp *mPtr;
    ThreadRec *tPtr;
    Tcl_Time deadline = {0, 0}, now;
    int forked, left;

    if (sPtr == NULL) {
	return;
    }
    if (ciPtr->member) {
	Tcl_MutexLock(&cprofScopeMutex);
	if (!sPtr->stopping && current == sPtr && sPtr->pid == getpid()) {
	    sPtr->stopping = 1;
	    QueueStop(sPtr, sPtr->ownerThread, 1);
	}
	Tcl_MutexUnlock(&cprofScopeMutex);
	StopThisThread(sPtr);
	return;
    }

    /*
     * The owner. Members of this thread first (they are sampled with its
     * sampler), then the others.
     */

    Tcl_MutexLock(&cprofScopeMutex);
    if (current == sPtr) {
	current = NULL;
    }
    sPtr->stopping = 1;
    forked = (sPtr->pid != getpid());
    if (!forked) {
	for (tPtr = sPtr->threads; tPtr != NULL; tPtr = tPtr->nextPtr) {
	    if (tPtr->id != sPtr->ownerThread && tPtr->primaryPtr != NULL) {
		QueueStop(sPtr, tPtr->id, 0);
	    }
	}
    }
    Hook(0);
    Tcl_MutexUnlock(&cprofScopeMutex);
    StopThisThread(sPtr);

    /*
     * The deadline moves while members keep stopping: 64 idle threads
     * each stop and publish in turn, which took more than 2 seconds at
     * load 25 on two cores; only a thread that answers nothing for
     * STOP_WAIT_MS (busy in C) is left late.
     */

    Tcl_MutexLock(&cprofScopeMutex);
    left = -1;
    for (;;) {
	Tcl_Time wait = {0, 50000};
	int n = 0;

	for (mPtr = sPtr->members; mPtr != NULL; mPtr = mPtr->nextMemberPtr) {
	    if (mPtr->thread != sPtr->ownerThread) {
		n++;
	    }
	}
	Tcl_GetTime(&now);
	if (n != left) {
	    left = n;
	    deadline = now;
	    deadline.sec += STOP_WAIT_MS / 1000;
	    deadline.usec += (STOP_WAIT_MS % 1000) * 1000;
	    if (deadline.usec >= 1000000) {
		deadline.sec++;
		deadline.usec -= 1000000;
	    }
	}
	if (n == 0 || forked || now.sec > deadline.sec
		|| (now.sec == deadline.sec && now.usec >= deadline.usec)) {
	    break;
	}
	Tcl_ConditionWait(&sPtr->cond, &cprofScopeMutex, &wait);
    }
    for (tPtr = sPtr->threads; tPtr != NULL; tPtr = tPtr->nextPtr) {
	if (tPtr->id != sPtr->ownerThread && tPtr->primaryPtr != NULL) {
	    tPtr->state = forked ? THREAD_EXITED : THREAD_LATE;
	}
	if (tPtr->id == sPtr->ownerThread) {
	    tPtr->cpuNs = CprofScopeThreadCpuNs() - tPtr->cpuStartNs;
	    tPtr->state = THREAD_STOPPED;
	}
    }
    Tcl_MutexUnlock(&cprofScopeMutex);
    ciPtr->state.childProc = NULL;
}

/*
 * The owner's last run's session goes (a new run, or its state is freed).
 */

void
CprofScopeRelease(
    CprofInterp *ciPtr)
{
    CprofSession *sPtr = ciPtr->sessionPtr;

    if (sPtr == NULL || ciPtr->member) {
	return;
    }
    Tcl_MutexLock(&cprofScopeMutex);
    sPtr->ownerPtr = NULL;
    if (current == sPtr) {
	current = NULL;
	Hook(0);
    }
    Tcl_MutexUnlock(&cprofScopeMutex);
    ciPtr->sessionPtr = NULL;
    ciPtr->state.childProc = NULL;
    ciPtr->wholeProc = NULL;
    ciPtr->rotateProc = NULL;
    Unref(sPtr);
}

int
CprofScopeStopping(
    CprofInterp *ciPtr)
{
    CprofSession *sPtr = ciPtr->sessionPtr;

    return sPtr != NULL && __atomic_load_n(&sPtr->stopping, __ATOMIC_ACQUIRE);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofScopeIntervalAsked, CprofScopePublishInterval, Rotate --
 *
 *	-history in a run that takes in other threads. At the end of an
 *	interval the owner (Rotate, cmdrundb.c's rotation through rotateProc)
 *	starts the next one (epoch) and asks the members for what they
 *	collected: those of its thread at once, those of other threads
 *	with an event and through their poll (every 256 commands), waiting
 *	for them at most ROTATE_WAIT_MS; each publishes a part of the
 *	interval and clears its data (cmdrun.c's Poll). The interval's whole
 *	is the owner's own profile joined with the parts of the interval
 *	(those of threads that ended during it among them). A member that
 *	answers later has its part in the next interval's file; the parts
 *	of an interval written go.
 *
 *----------------------------------------------------------------------
 */

#define ROTATE_WAIT_MS 200

int
CprofScopeIntervalAsked(
    CprofInterp *ciPtr)
{
    CprofSession *sPtr = ciPtr->sessionPtr;

    return sPtr != NULL && ciPtr->member
	    && __atomic_load_n(&sPtr->intervals, __ATOMIC_ACQUIRE)
	    && __atomic_load_n(&sPtr->epoch, __ATOMIC_ACQUIRE)
		!= ciPtr->memberEpoch;
}

void
CprofScopePublishInterval(
    CprofInterp *ciPtr)
{
    CprofSession *sPtr = ciPtr->sessionPtr;
    ThreadRec *tPtr;
    Tcl_Obj *valueObj;
    Part *partPtr;

    if (sPtr == NULL || !ciPtr->member) {
	return;
    }
    valueObj = (ciPtr->state.startNs != 0)
	    ? CprofProfileValue(ciPtr, -1, 0) : NULL;
    if (valueObj != NULL) {
	Tcl_IncrRefCount(valueObj);
    }
    Tcl_MutexLock(&cprofScopeMutex);
    tPtr = FindThread(sPtr, ciPtr->thread);
    if (valueObj != NULL && tPtr != NULL) {
	Tcl_WideInt figs[3];

	MetaFigures(valueObj, figs);
	partPtr = AddPart(sPtr, ciPtr, tPtr, tPtr->primaryPtr == ciPtr,
		Publish(valueObj), figs);
	if (partPtr->primary) {
	    tPtr->cpuNs = CprofScopeThreadCpuNs() - tPtr->cpuStartNs;
	}
    }
    ciPtr->memberEpoch = sPtr->epoch;
    Tcl_ConditionNotify(&sPtr->cond);
    Tcl_MutexUnlock(&cprofScopeMutex);
    if (valueObj != NULL) {
	Tcl_DecrRefCount(valueObj);
    }
}

/*
 * The members of the calling thread asked for their interval publish it
 * (their poll does, and clears their data).
 */

static void
PublishThisThread(
    CprofSession *sPtr)
{
    CprofInterp *mPtr;

    while ((mPtr = NextOfThisThread(sPtr, 1)) != NULL) {
	mPtr->state.pollProc(&mPtr->state);
	if (mPtr->memberEpoch != sPtr->epoch) {
	    /*
	     * (Its poll stopped it instead.)
	     */

	    return;
	}
    }
}

typedef struct IntervalEvent {
    Tcl_Event header;
    CprofSession *sessionPtr;
} IntervalEvent;

static int
IntervalEventProc(
    Tcl_Event *evPtr,
    int flags)
{
    CprofSession *sPtr = ((IntervalEvent *) evPtr)->sessionPtr;

    if (!__atomic_load_n(&sPtr->stopping, __ATOMIC_ACQUIRE)) {
	PublishThisThread(sPtr);
    }
    Unref(sPtr);
    return 1;
}

static Tcl_Obj *
Rotate(
    CprofInterp *ciPtr)
{
    CprofSession *sPtr = ciPtr->sessionPtr;
    CprofInterp *mPtr;
    ThreadRec *tPtr;
    Part *pPtr, **linkPtr;
    Tcl_Obj *wholeObj = NULL;
    Tcl_Time deadline, now;
    int ending, counted = 0;

    if (sPtr == NULL || ciPtr->member || !sPtr->intervals) {
	return NULL;
    }
    Tcl_MutexLock(&cprofScopeMutex);
    if (sPtr->stopping || sPtr->pid != getpid()) {
	Tcl_MutexUnlock(&cprofScopeMutex);
	return NULL;
    }
    ending = sPtr->epoch;
    __atomic_store_n(&sPtr->epoch, ending + 1, __ATOMIC_RELEASE);
    for (tPtr = sPtr->threads; tPtr != NULL; tPtr = tPtr->nextPtr) {
	if (tPtr->id != sPtr->ownerThread && tPtr->primaryPtr != NULL) {
	    IntervalEvent *evPtr = (IntervalEvent *)
		    ckalloc(sizeof(IntervalEvent));

	    evPtr->header.proc = IntervalEventProc;
	    evPtr->sessionPtr = sPtr;
	    sPtr->refCount++;
	    Tcl_ThreadQueueEvent(tPtr->id, (Tcl_Event *) evPtr,
		    TCL_QUEUE_TAIL);
	    Tcl_ThreadAlert(tPtr->id);
	}
    }
    Tcl_MutexUnlock(&cprofScopeMutex);

    /*
     * This thread's members (child interpreters) now; the others' as they
     * answer, for at most ROTATE_WAIT_MS.
     */

    PublishThisThread(sPtr);
    Tcl_GetTime(&deadline);
    deadline.usec += ROTATE_WAIT_MS * 1000;
    while (deadline.usec >= 1000000) {
	deadline.sec++;
	deadline.usec -= 1000000;
    }
    Tcl_MutexLock(&cprofScopeMutex);
    for (;;) {
	Tcl_Time wait = {0, 20000};
	int n = 0;

	for (mPtr = sPtr->members; mPtr != NULL; mPtr = mPtr->nextMemberPtr) {
	    if (mPtr->thread != sPtr->ownerThread
		    && mPtr->memberEpoch == ending) {
		n++;
	    }
	}
	Tcl_GetTime(&now);
	if (n == 0 || now.sec > deadline.sec
		|| (now.sec == deadline.sec && now.usec >= deadline.usec)) {
	    break;
	}
	Tcl_ConditionWait(&sPtr->cond, &cprofScopeMutex, &wait);
    }
    sPtr->joinEpoch = ending;
    for (pPtr = sPtr->parts; pPtr != NULL; pPtr = pPtr->nextPtr) {
	if (pPtr->epoch == ending) {
	    counted++;
	}
    }
    Tcl_MutexUnlock(&cprofScopeMutex);

    if (counted > 0) {
	/*
	 * (As CprofScopeWhole.)
	 */

	wholeObj = CprofScopeProfile(ciPtr, CprofProfileValue(ciPtr, -1, 0));
    }

    /*
     * The interval is written: its parts go, later ones stay.
     */

    Tcl_MutexLock(&cprofScopeMutex);
    sPtr->joined = ending;
    sPtr->joinEpoch = ending + 1;
    for (linkPtr = &sPtr->parts; (pPtr = *linkPtr) != NULL; ) {
	if (pPtr->epoch <= ending) {
	    *linkPtr = pPtr->nextPtr;
	    if (pPtr->value != NULL) {
		ckfree(pPtr->value);
	    }
	    ckfree(pPtr);
	} else {
	    linkPtr = &pPtr->nextPtr;
	}
    }
    Tcl_MutexUnlock(&cprofScopeMutex);
    return wholeObj;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofThreadnameObjCmd --
 *
 *	tclcprof::threadname ?name? -- the name this thread's root is shown
 *	with in profiles of several threads.
 *
 *----------------------------------------------------------------------
 */

int
CprofThreadnameObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Tcl_ThreadId self = Tcl_GetCurrentThread();
    const char *name;
    Tcl_Size length;

    if (objc > 2) {
	CprofWrongArgs(interp, 1, objv, "?name?");
	return TCL_ERROR;
    }
    Tcl_MutexLock(&cprofScopeMutex);
    if (objc == 2) {
	name = Tcl_GetStringFromObj(objv[1], &length);
	if (length == 0 || length >= 64 || strlen(name) != (size_t) length) {
	    Tcl_MutexUnlock(&cprofScopeMutex);
	    Tcl_SetObjResult(interp, Tcl_ObjPrintf("bad thread name \"%s\":"
		    " 1 to 63 bytes", name));
	    Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", "threadname", NULL);
	    return TCL_ERROR;
	}
	CprofScopeThreadNameSet(self, name);
    }
    name = CprofScopeThreadName(self);
    if (name == NULL) {
	char buf[40];

	if (GetTid() == getpid()) {
	    name = "main";
	} else {
	    snprintf(buf, sizeof(buf), "tid%p", (void *) self);
	    Tcl_MutexUnlock(&cprofScopeMutex);
	    Tcl_SetObjResult(interp, Tcl_NewStringObj(buf, -1));
	    return TCL_OK;
	}
    }
    Tcl_SetObjResult(interp, Tcl_NewStringObj(name, -1));
    Tcl_MutexUnlock(&cprofScopeMutex);
    return TCL_OK;
}

/*
 * The process exits (or, were it not pinned, the library is unmapped:
 * hookgot.c) while a session hooks: the stubs table's and the GOT
 * entries go back. No Tcl call: Tcl may be finalized already.
 */

static void __attribute__((destructor))
ScopeAtExit(void)
{
    if (hooked) {
	TclStubs *stubsPtr = (TclStubs *) tclStubsPtr;

	SetEntry(&stubsPtr->tcl_CreateInterp, (void *) realCreateInterp);
	SetEntry(&stubsPtr->tcl_CreateSlave, (void *) realCreateSlave);
	if (gotSet != NULL) {
	    CprofGotSetRestore(gotSet);
	}
	hooked = 0;
    }
}

/*
 * The library is unloaded: the stubs table's entries go back.
 */

void
CprofScopeUnload(void)
{
    Tcl_MutexLock(&cprofScopeMutex);
    Hook(0);
    Tcl_MutexUnlock(&cprofScopeMutex);
}
