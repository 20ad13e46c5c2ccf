/*
 * scope.c --
 *
 *	Profiling beyond one interpreter. A run started with -scope tree
 *	takes in every interpreter below the one that started it, those
 *	created later included; -scope process takes in every interpreter
 *	of every thread created while it runs. The run and the interpreters
 *	it took in make a session; a process has at most one.
 *
 *	Each interpreter taken in (a member) runs a run of its own with the
 *	session's options (run.c, CprofRunStartMember), in its own thread.
 *	The first profiled interpreter of a thread samples the thread; the
 *	level stacks of the others of that thread (child interpreters) are
 *	sampled by the same signal, their frames spliced into one stack by
 *	their native anchors, so that `kid eval` is the caller of the
 *	child's procs. Nothing here is on the per-command path: members are
 *	found at interpreter creation, and each publishes what it collected,
 *	as a string (Tcl values do not cross threads), when it stops or its
 *	interpreter goes. The owner's profile value (CprofScopeProfile) puts
 *	them together: one root per thread when there are several.
 *
 *	How interpreters are found: `interp create` in a profiled
 *	interpreter (the wrapper tells, CprofState.childProc), and
 *	Tcl_CreateInterp and Tcl_CreateSlave called through the stubs table
 *	(the Thread package, extensions), whose entries are pointed here
 *	while a session runs, and Tcl_CreateInterp called by modules linked
 *	to libtcl (an embedding program), whose GOT entries are (gotpatch.c;
 *	modules loaded after the start are not). Interpreters that existed
 *	in other threads before the start are not found.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "cmdInt.h"
#include "gotpatch.h"
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * How long the owner's stop waits for the members of other threads to
 * stop and publish (they notice at their next 256 commands or event).
 */

#define STOP_WAIT_MS 2000

enum ThreadState {
    THREAD_RUNNING, THREAD_STOPPED, THREAD_EXITED, THREAD_LATE
};
static const char *const threadStateNames[] = {
    "running", "stopped", "exited", "late"
};

/*
 * A thread that took part.
 */

typedef struct ThreadRec {
    Tcl_ThreadId id;
    pid_t tid;
    char tclId[40];		/* tid0x..., as the Thread package says. */
    CprofInterp *primaryPtr;	/* The member sampling it, while it runs. */
    int state;			/* enum ThreadState. */
    uint64_t cpuStartNs;	/* Its CPU time when it joined. */
    uint64_t cpuNs;		/* ... spent while it took part. */
    int order;			/* Order of joining. */
    int interps[64];		/* Interpreters profiled in it (interpId,
				 * -1 the top one), the first 64. */
    int numInterps;
    struct ThreadRec *nextPtr;
} ThreadRec;

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

/*
 * What a member published: its profile value (for the primary of a
 * thread, whose samples hold the frames of all its interpreters, the
 * thread's sampled tree; for the others, their exact tree, coverage and
 * call sites).
 */

typedef struct Part {
    ThreadRec *threadPtr;
    int primary;
    char *value;		/* Its profile value, as a string, or
				 * NULL. */
    Tcl_WideInt samples, weight, calls;
				/* Its meta's figures. */
    int interpId;		/* Its interpreter (CprofFrameDef's). */
    Tcl_WideInt startNs;	/* Its run's start (monotonic) ... */
    uint64_t startTicks;	/* ... and in its exact clock's ticks: its
				 * events' time 0. */
    struct Part *nextPtr;
} Part;

struct CprofSession {
    int scope;			/* enum CprofScope. */
    CprofInterp *ownerPtr;	/* NULL once the owner's state is gone. */
    Tcl_ThreadId ownerThread;
    pid_t pid;			/* The process it was started in. */
    CprofOptions options;	/* The run's, for members. */
    int stopping;
    int refCount;
    CprofInterp *members;	/* Live members (nextMemberPtr). */
    ThreadRec *threads;		/* In order of joining, the owner's first. */
    int numThreads;
    Part *parts;		/* Newest first. */
    Tcl_Condition cond;		/* A member of another thread stopped. */
    CprofSymbolizer *symPtr;	/* Native names, for the members' drains
				 * (one set of module files read for all
				 * threads), and its lock. */
    Tcl_Mutex symMutex;
    CprofNameRefs names;	/* The members' paths (interpId), held
				 * while the session lasts (under
				 * scopeMutex). */
};

TCL_DECLARE_MUTEX(scopeMutex)
static CprofSession *current;	/* The session running, or NULL. */

/*
 * Names given with tclcprof::threadname, per thread, for the life of the
 * process.
 */

typedef struct ThreadName {
    Tcl_ThreadId id;
    char name[64];
    struct ThreadName *nextPtr;
} ThreadName;

static ThreadName *threadNames;

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

static void		ChildProc(CprofState *statePtr, Tcl_Interp *interp,
			    int objc, Tcl_Obj *const objv[]);
static void		Attach(Tcl_Interp *interp, CprofSession *sPtr,
			    CprofInterp *parentPtr);
static void		Unref(CprofSession *sPtr);
static void		StopThisThread(CprofSession *sPtr);
static Tcl_Obj *	Get(Tcl_Obj *dictObj, const char *key);
static Tcl_WideInt	GetWide(Tcl_Obj *dictObj, const char *key);
static Tcl_Obj *	WholeProfile(CprofInterp *ciPtr);

static pid_t
GetTid(void)
{
    return (pid_t) syscall(SYS_gettid);
}

static uint64_t
ThreadCpuNs(void)
{
    return (uint64_t) CprofClockNs(CLOCK_THREAD_CPUTIME_ID);
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
    Tcl_MutexLock(&scopeMutex);
}

static void
AtforkRelease(void)
{
    Tcl_MutexUnlock(&scopeMutex);
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

    Tcl_MutexLock(&scopeMutex);
    sPtr = current;
    if (sPtr != NULL && (sPtr->stopping || sPtr->scope < scope
	    || sPtr->pid != getpid())) {
	sPtr = NULL;
    }
    if (sPtr != NULL) {
	sPtr->refCount++;
    }
    Tcl_MutexUnlock(&scopeMutex);
    return sPtr;
}

static Tcl_Interp *
HookCreateInterp(void)
{
    Tcl_Interp *interp = realCreateInterp();
    CprofSession *sPtr;

    if (interp != NULL && (sPtr = Current(CPROF_SCOPE_PROCESS)) != NULL) {
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

    if (child != NULL && (sPtr = Current(CPROF_SCOPE_TREE)) != NULL) {
	parentPtr = (CprofInterp *) Tcl_GetAssocData(parent, CPROF_ASSOC,
		NULL);
	if (parentPtr != NULL && parentPtr->sessionPtr == sPtr
		&& parentPtr->state.running) {
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
 * Threads and their names --
 *
 *----------------------------------------------------------------------
 */

static const char *
NameOf(
    Tcl_ThreadId id)
{
    ThreadName *nPtr;

    for (nPtr = threadNames; nPtr != NULL; nPtr = nPtr->nextPtr) {
	if (nPtr->id == id) {
	    return nPtr->name;
	}
    }
    return NULL;
}

/*
 * The record of the calling thread in a session, made if new. Called with
 * the lock held.
 */

static ThreadRec *
ThisThread(
    CprofSession *sPtr)
{
    Tcl_ThreadId id = Tcl_GetCurrentThread();
    ThreadRec *tPtr, **linkPtr;

    for (linkPtr = &sPtr->threads; *linkPtr != NULL;
	    linkPtr = &(*linkPtr)->nextPtr) {
	if ((*linkPtr)->id == id) {
	    return *linkPtr;
	}
    }
    tPtr = (ThreadRec *) ckalloc(sizeof(ThreadRec));
    memset(tPtr, 0, sizeof(ThreadRec));
    tPtr->id = id;
    tPtr->tid = GetTid();
    snprintf(tPtr->tclId, sizeof(tPtr->tclId), "tid%p", (void *) id);
    tPtr->state = THREAD_RUNNING;
    tPtr->cpuStartNs = ThreadCpuNs();
    tPtr->order = sPtr->numThreads++;
    *linkPtr = tPtr;
    return tPtr;
}

static ThreadRec *
FindThread(
    CprofSession *sPtr,
    Tcl_ThreadId id)
{
    ThreadRec *tPtr;

    for (tPtr = sPtr->threads; tPtr != NULL; tPtr = tPtr->nextPtr) {
	if (tPtr->id == id) {
	    return tPtr;
	}
    }
    return NULL;
}

/*
 * The name a thread's root is shown with.
 */

static Tcl_Obj *
ThreadNameObj(
    const ThreadRec *tPtr)
{
    const char *name = NameOf(tPtr->id);

    if (name != NULL) {
	return Tcl_NewStringObj(name, -1);
    }
    if (tPtr->tid == getpid()) {
	return Tcl_NewStringObj("main", -1);
    }
    return Tcl_NewStringObj(tPtr->tclId, -1);
}

static void
Unref(
    CprofSession *sPtr)
{
    int gone;

    Tcl_MutexLock(&scopeMutex);
    gone = (--sPtr->refCount == 0);
    Tcl_MutexUnlock(&scopeMutex);
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
	Tcl_MutexLock(&scopeMutex);
	id = CprofNameInternIn(&sPtr->names, Tcl_GetString(pathObj), -1);
	Tcl_MutexUnlock(&scopeMutex);
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
    CprofInterp *ciPtr = CprofInterpFor(interp), *hostPtr;
    ThreadRec *tPtr;

    if (ciPtr == NULL || ciPtr->state.running || ciPtr->sessionPtr != NULL
	    || Tcl_InterpDeleted(interp)) {
	return;
    }
    ciPtr->interpId = PathId(interp, parentPtr, sPtr);
    ciPtr->thread = Tcl_GetCurrentThread();
    Tcl_MutexLock(&scopeMutex);
    if (sPtr->stopping) {
	Tcl_MutexUnlock(&scopeMutex);
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
	}
	if (ciPtr->state.symPtr != NULL && ciPtr->state.symLockPtr == NULL) {
	    CprofSymFree(ciPtr->state.symPtr);
	}
	ciPtr->state.symPtr = sPtr->symPtr;
	ciPtr->state.symLockPtr = &sPtr->symMutex;
    }
    Tcl_MutexUnlock(&scopeMutex);

    if (CprofRunStartMember(ciPtr, &sPtr->options, sPtr->ownerPtr, hostPtr)
	    != TCL_OK) {
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
    int n, i, first;

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
	    && (ciPtr = (CprofInterp *) Tcl_GetAssocData(interp, CPROF_ASSOC,
	    NULL)) != NULL && ciPtr->sessionPtr == sPtr
	    && ciPtr->state.running) {
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

    if (sPtr == NULL || objc < 2 || sPtr->stopping
	    || strcmp(Tcl_GetString(objv[1]), "create") != 0) {
	return;
    }
    Tcl_MutexLock(&scopeMutex);
    sPtr->refCount++;
    Tcl_MutexUnlock(&scopeMutex);
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
    int length;
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

void
CprofScopeMemberGone(
    CprofInterp *ciPtr)
{
    CprofSession *sPtr = ciPtr->sessionPtr;
    CprofInterp **linkPtr;
    ThreadRec *tPtr;
    Part *partPtr;
    char *value = NULL;
    Tcl_WideInt figs[3] = {0, 0, 0};
    int primary;

    if (sPtr == NULL || !ciPtr->member) {
	return;
    }
    Tcl_MutexLock(&scopeMutex);
    tPtr = FindThread(sPtr, ciPtr->thread);
    primary = (tPtr != NULL && tPtr->primaryPtr == ciPtr);
    Tcl_MutexUnlock(&scopeMutex);

    /*
     * Each publishes its profile value: the primary of a thread its
     * whole sampled tree (its samples hold the frames of every
     * interpreter of the thread), each its exact tree (with its links,
     * while sessionPtr is set), coverage, call sites and handlers.
     */

    if (ciPtr->state.startNs != 0) {
	Tcl_Obj *valueObj = CprofProfileValue(ciPtr, -1, 0), *metaObj;

	Tcl_IncrRefCount(valueObj);
	metaObj = Get(valueObj, "meta");
	figs[0] = GetWide(metaObj, "samples");
	figs[1] = GetWide(metaObj, "weight");
	figs[2] = GetWide(metaObj, "calls");
	value = Publish(valueObj);
	Tcl_DecrRefCount(valueObj);
    }

    Tcl_MutexLock(&scopeMutex);
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
		: ThreadCpuNs() - tPtr->cpuStartNs;
	tPtr->state = ciPtr->state.deleting ? THREAD_EXITED : THREAD_STOPPED;
    }
    if (value != NULL && tPtr != NULL) {
	partPtr = (Part *) ckalloc(sizeof(Part));
	partPtr->threadPtr = tPtr;
	partPtr->primary = primary;
	partPtr->value = value;
	partPtr->samples = figs[0];
	partPtr->weight = figs[1];
	partPtr->calls = figs[2];
	partPtr->interpId = ciPtr->interpId;
	partPtr->startNs = ciPtr->state.exact.runStartMonoNs;
	partPtr->startTicks = ciPtr->state.exact.runStartNs;
	partPtr->nextPtr = sPtr->parts;
	sPtr->parts = partPtr;
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
    Tcl_MutexUnlock(&scopeMutex);
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
    Tcl_MutexLock(&scopeMutex);
    sPtr = current;
    busy = (sPtr != NULL && sPtr->pid == getpid() && !sPtr->stopping
	    && sPtr->ownerPtr != ciPtr);
    Tcl_MutexUnlock(&scopeMutex);
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
    Tcl_MutexLock(&scopeMutex);
    if (current != NULL && current->pid == getpid()) {
	/*
	 * Another session runs: this run keeps to its interpreter.
	 */

	Tcl_MutexUnlock(&scopeMutex);
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
    Tcl_MutexUnlock(&scopeMutex);
    ciPtr->state.childProc = ChildProc;
    ciPtr->wholeProc = WholeProfile;
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
 *	poll looks at) and waited for, STOP_WAIT_MS at most. From a member
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

	Tcl_MutexLock(&scopeMutex);
	ownerPtr = (current == sPtr) ? sPtr->ownerPtr : NULL;
	Tcl_MutexUnlock(&scopeMutex);
	if (ownerPtr != NULL && ownerPtr->state.running) {
	    ownerPtr->state.stoppedBy = "member";
	    CprofRunStop(&ownerPtr->state);
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
 * The members of the calling thread stop, one at a time (stopping one
 * stops those it hosts).
 */

static void
StopThisThread(
    CprofSession *sPtr)
{
    Tcl_ThreadId self = Tcl_GetCurrentThread();

    for (;;) {
	CprofInterp *mPtr;

	Tcl_MutexLock(&scopeMutex);
	for (mPtr = sPtr->members; mPtr != NULL; mPtr = mPtr->nextMemberPtr) {
	    if (mPtr->thread == self && mPtr->state.running) {
		break;
	    }
	}
	Tcl_MutexUnlock(&scopeMutex);
	if (mPtr == NULL) {
	    return;
	}
	CprofRunStopMember(mPtr);
    }
}

void
CprofScopeEnd(
    CprofInterp *ciPtr)
{
    CprofSession *sPtr = ciPtr->sessionPtr;
    CprofInterp *mPtr;
    ThreadRec *tPtr;
    Tcl_Time deadline, now;
    int forked;

    if (sPtr == NULL) {
	return;
    }
    if (ciPtr->member) {
	Tcl_MutexLock(&scopeMutex);
	if (!sPtr->stopping && current == sPtr && sPtr->pid == getpid()) {
	    sPtr->stopping = 1;
	    QueueStop(sPtr, sPtr->ownerThread, 1);
	}
	Tcl_MutexUnlock(&scopeMutex);
	StopThisThread(sPtr);
	return;
    }

    /*
     * The owner. Members of this thread first (they are sampled with its
     * sampler), then the others.
     */

    Tcl_MutexLock(&scopeMutex);
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
    Tcl_MutexUnlock(&scopeMutex);
    StopThisThread(sPtr);

    Tcl_MutexLock(&scopeMutex);
    Tcl_GetTime(&deadline);
    deadline.sec += STOP_WAIT_MS / 1000;
    deadline.usec += (STOP_WAIT_MS % 1000) * 1000;
    for (;;) {
	Tcl_Time wait = {0, 50000};

	for (mPtr = sPtr->members; mPtr != NULL; mPtr = mPtr->nextMemberPtr) {
	    if (mPtr->thread != sPtr->ownerThread) {
		break;
	    }
	}
	Tcl_GetTime(&now);
	if (mPtr == NULL || forked || now.sec > deadline.sec
		|| (now.sec == deadline.sec && now.usec >= deadline.usec)) {
	    break;
	}
	Tcl_ConditionWait(&sPtr->cond, &scopeMutex, &wait);
    }
    for (tPtr = sPtr->threads; tPtr != NULL; tPtr = tPtr->nextPtr) {
	if (tPtr->id != sPtr->ownerThread && tPtr->primaryPtr != NULL) {
	    tPtr->state = forked ? THREAD_EXITED : THREAD_LATE;
	}
	if (tPtr->id == sPtr->ownerThread) {
	    tPtr->cpuNs = ThreadCpuNs() - tPtr->cpuStartNs;
	    tPtr->state = THREAD_STOPPED;
	}
    }
    Tcl_MutexUnlock(&scopeMutex);
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
    Tcl_MutexLock(&scopeMutex);
    sPtr->ownerPtr = NULL;
    if (current == sPtr) {
	current = NULL;
	Hook(0);
    }
    Tcl_MutexUnlock(&scopeMutex);
    ciPtr->sessionPtr = NULL;
    ciPtr->state.childProc = NULL;
    ciPtr->wholeProc = NULL;
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
 * CprofScopeProfile --
 *
 *	The owner's profile value with what the members published: the
 *	exact trees of child interpreters beside its own, and, with more
 *	than one thread, one root per thread (kind thread). 'ownObj' is the
 *	owner's own value (unshared); returns the whole.
 *
 *----------------------------------------------------------------------
 */

static Tcl_Obj *
Get(
    Tcl_Obj *dictObj,
    const char *key)
{
    Tcl_Obj *keyObj = Tcl_NewStringObj(key, -1), *valueObj = NULL;

    Tcl_IncrRefCount(keyObj);
    Tcl_DictObjGet(NULL, dictObj, keyObj, &valueObj);
    Tcl_DecrRefCount(keyObj);
    return valueObj;
}

static Tcl_WideInt
GetWide(
    Tcl_Obj *dictObj,
    const char *key)
{
    Tcl_Obj *valueObj = (dictObj != NULL) ? Get(dictObj, key) : NULL;
    Tcl_WideInt w = 0;

    if (valueObj != NULL) {
	Tcl_GetWideIntFromObj(NULL, valueObj, &w);
    }
    return w;
}

/*
 * Joining the exact trees of a thread's interpreters (exact.c, Peers and
 * links): each tree's link nodes stand for a frame of another tree (its
 * serial and node id); their children are moved under that node, whose
 * self time loses their totals. Subtrees with nothing to change are
 * kept as they are. Children of other trees' roots, and links whose
 * frame is not in any tree (its interpreter's part is not there yet),
 * go to the root: beside the thread's tree, as a tree of its own.
 */

typedef struct Joiner {
    Tcl_HashTable grafts;	/* "serial id" -> list of {serial node}. */
    Tcl_Obj *loose;		/* List of {serial node} for the root. */
} Joiner;

#define JOIN_MAX_DEPTH 100000
#define LIVE_MAX 64		/* Running members of the owner's thread
				 * read by its data, at most. */

static const char *
KindOf(
    Tcl_Obj *nodeObj)
{
    Tcl_Obj *kindObj = Get(nodeObj, "kind");

    return kindObj ? Tcl_GetString(kindObj) : "";
}

static void
AddGraft(
    Tcl_Obj *listObj,
    int serial,
    Tcl_Obj *nodeObj)
{
    Tcl_Obj *pair[2];

    pair[0] = Tcl_NewIntObj(serial);
    pair[1] = nodeObj;
    Tcl_ListObjAppendElement(NULL, listObj, Tcl_NewListObj(2, pair));
}

static void
CollectLinks(
    Joiner *jPtr,
    Tcl_Obj *nodeObj,
    int serial,
    int depth)
{
    Tcl_Obj *kidsObj = Get(nodeObj, "children"), **kids, **gs;
    int n = 0, i, g, ng, target[2];

    if (kidsObj == NULL || depth > JOIN_MAX_DEPTH
	    || Tcl_ListObjGetElements(NULL, kidsObj, &n, &kids) != TCL_OK) {
	return;
    }
    for (i = 0; i < n; i++) {
	Tcl_Obj *linkObj, **pair, *listObj, *gkidsObj;
	Tcl_HashEntry *hPtr;
	char key[48];
	int np, isNew;

	if (strcmp(KindOf(kids[i]), "link") != 0) {
	    CollectLinks(jPtr, kids[i], serial, depth + 1);
	    continue;
	}
	linkObj = Get(kids[i], "link");
	gkidsObj = Get(kids[i], "children");
	if (linkObj == NULL || gkidsObj == NULL
		|| Tcl_ListObjGetElements(NULL, linkObj, &np, &pair) != TCL_OK
		|| np != 2
		|| Tcl_GetIntFromObj(NULL, pair[0], &target[0]) != TCL_OK
		|| Tcl_GetIntFromObj(NULL, pair[1], &target[1]) != TCL_OK
		|| Tcl_ListObjGetElements(NULL, gkidsObj, &ng, &gs) != TCL_OK) {
	    continue;
	}
	snprintf(key, sizeof(key), "%d %d", target[0], target[1]);
	hPtr = Tcl_CreateHashEntry(&jPtr->grafts, key, &isNew);
	if (isNew) {
	    listObj = Tcl_NewListObj(0, NULL);
	    Tcl_IncrRefCount(listObj);
	    Tcl_SetHashValue(hPtr, listObj);
	}
	listObj = (Tcl_Obj *) Tcl_GetHashValue(hPtr);
	for (g = 0; g < ng; g++) {
	    AddGraft(listObj, serial, gs[g]);
	    CollectLinks(jPtr, gs[g], serial, depth + 1);
	}
    }
}

static Tcl_Obj *
Emit(
    Joiner *jPtr,
    Tcl_Obj *nodeObj,
    int serial,
    int depth)
{
    Tcl_Obj *kidsObj = Get(nodeObj, "children"), **kids, *newKids;
    Tcl_Obj *idObj = Get(nodeObj, "id"), *copyObj;
    Tcl_WideInt moved = 0;
    int n = 0, i, changed = (idObj != NULL);

    if (kidsObj == NULL || depth > JOIN_MAX_DEPTH
	    || Tcl_ListObjGetElements(NULL, kidsObj, &n, &kids) != TCL_OK) {
	n = 0;
    }
    newKids = Tcl_NewListObj(0, NULL);
    Tcl_IncrRefCount(newKids);
    for (i = 0; i < n; i++) {
	Tcl_Obj *e;

	if (strcmp(KindOf(kids[i]), "link") == 0) {
	    changed = 1;
	    continue;
	}
	e = Emit(jPtr, kids[i], serial, depth + 1);
	changed |= (e != kids[i]);
	Tcl_ListObjAppendElement(NULL, newKids, e);
    }
    if (idObj != NULL) {
	Tcl_HashEntry *hPtr;
	char key[48];

	snprintf(key, sizeof(key), "%d %s", serial, Tcl_GetString(idObj));
	hPtr = Tcl_FindHashEntry(&jPtr->grafts, key);
	if (hPtr != NULL) {
	    Tcl_Obj *listObj = (Tcl_Obj *) Tcl_GetHashValue(hPtr), **gs;
	    int ng, g;

	    Tcl_DeleteHashEntry(hPtr);
	    Tcl_ListObjGetElements(NULL, listObj, &ng, &gs);
	    for (g = 0; g < ng; g++) {
		Tcl_Obj *pairObj, *subObj;
		int s2;

		Tcl_ListObjIndex(NULL, gs[g], 0, &pairObj);
		Tcl_GetIntFromObj(NULL, pairObj, &s2);
		Tcl_ListObjIndex(NULL, gs[g], 1, &subObj);
		moved += GetWide(subObj, "total");
		Tcl_ListObjAppendElement(NULL, newKids,
			Emit(jPtr, subObj, s2, depth + 1));
	    }
	    Tcl_DecrRefCount(listObj);
	}
    }
    if (!changed) {
	Tcl_DecrRefCount(newKids);
	return nodeObj;
    }
    copyObj = Tcl_DuplicateObj(nodeObj);
    if (idObj != NULL) {
	Tcl_Obj *keyObj = Tcl_NewStringObj("id", -1);

	Tcl_IncrRefCount(keyObj);
	Tcl_DictObjRemove(NULL, copyObj, keyObj);
	Tcl_DecrRefCount(keyObj);
    }
    PUT(copyObj, "children", newKids);
    Tcl_DecrRefCount(newKids);
    if (moved > 0) {
	static const char *const selfKeys[] = {"self", "self_ns"};
	int k;

	for (k = 0; k < 2; k++) {
	    if (Get(copyObj, selfKeys[k]) != NULL) {
		Tcl_WideInt self = GetWide(copyObj, selfKeys[k]) - moved;

		PUT(copyObj, selfKeys[k], Tcl_NewWideIntObj(self > 0 ? self
			: 0));
	    }
	}
    }
    return copyObj;
}

/*
 * The exact trees of one thread's interpreters as one: mainObj, the
 * primary's (or owner's), and others[], the other interpreters', oldest
 * first.
 */

static Tcl_Obj *
JoinExact(
    Tcl_Obj *mainObj,
    Tcl_Obj *const *others,
    int numOthers)
{
    Joiner join;
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;
    Tcl_Obj *rootObj, *kidsObj, **items, *keyObj;
    Tcl_WideInt total = 0;
    int mainSerial = (int) GetWide(mainObj, "serial"), i, n, k;

    Tcl_InitHashTable(&join.grafts, TCL_STRING_KEYS);
    join.loose = Tcl_NewListObj(0, NULL);
    Tcl_IncrRefCount(join.loose);
    CollectLinks(&join, mainObj, mainSerial, 0);
    for (i = 0; i < numOthers; i++) {
	int serial = (int) GetWide(others[i], "serial");
	Tcl_Obj *kids2 = Get(others[i], "children"), **ks;
	int nk;

	CollectLinks(&join, others[i], serial, 0);
	if (kids2 != NULL
		&& Tcl_ListObjGetElements(NULL, kids2, &nk, &ks) == TCL_OK) {
	    for (k = 0; k < nk; k++) {
		if (strcmp(KindOf(ks[k]), "link") != 0) {
		    AddGraft(join.loose, serial, ks[k]);
		}
	    }
	}
    }

    rootObj = Emit(&join, mainObj, mainSerial, 0);
    Tcl_IncrRefCount(rootObj);
    if (Tcl_IsShared(rootObj)) {
	Tcl_Obj *copyObj = Tcl_DuplicateObj(rootObj);

	Tcl_DecrRefCount(rootObj);
	rootObj = copyObj;
	Tcl_IncrRefCount(rootObj);
    }
    kidsObj = Get(rootObj, "children");
    kidsObj = kidsObj ? Tcl_DuplicateObj(kidsObj) : Tcl_NewListObj(0, NULL);

    /*
     * The other trees' top-level calls, then what is left: links to
     * frames no tree has (a running member's part is not published
     * yet), whose subtrees go to the root too.
     */

    for (;;) {
	Tcl_ListObjGetElements(NULL, join.loose, &n, &items);
	for (i = 0; i < n; i++) {
	    Tcl_Obj *pairObj, *subObj;
	    int s2;

	    Tcl_ListObjIndex(NULL, items[i], 0, &pairObj);
	    Tcl_GetIntFromObj(NULL, pairObj, &s2);
	    Tcl_ListObjIndex(NULL, items[i], 1, &subObj);
	    Tcl_ListObjAppendElement(NULL, kidsObj,
		    Emit(&join, subObj, s2, 1));
	}
	Tcl_DecrRefCount(join.loose);
	hPtr = Tcl_FirstHashEntry(&join.grafts, &search);
	if (hPtr == NULL) {
	    break;
	}
	join.loose = (Tcl_Obj *) Tcl_GetHashValue(hPtr);
	Tcl_DeleteHashEntry(hPtr);
    }
    Tcl_DeleteHashTable(&join.grafts);
    Tcl_ListObjGetElements(NULL, kidsObj, &n, &items);
    for (i = 0; i < n; i++) {
	total += GetWide(items[i], "total");
    }
    PUT(rootObj, "children", kidsObj);
    PUT(rootObj, "total", Tcl_NewWideIntObj(total));
    keyObj = Tcl_NewStringObj("serial", -1);
    Tcl_IncrRefCount(keyObj);
    Tcl_DictObjRemove(NULL, rootObj, keyObj);
    Tcl_DecrRefCount(keyObj);
    rootObj->refCount--;	/* Handed over without being freed. */
    return rootObj;
}

/*
 * What a part adds to the owner's call sites, coverage, handlers and
 * events: {profile VALUE thread ORDER interp PATH offset NS}, NS its
 * run's start less the owner's (its events' times are from its start).
 */

static Tcl_Obj *
SideOf(
    Tcl_Obj *valueObj,
    int order,
    const Part *pPtr,
    CprofInterp *ownerPtr)
{
    Tcl_Obj *sideObj = Tcl_NewDictObj();
    const char *path = pPtr->interpId >= 0 ? CprofNameString(pPtr->interpId)
	    : NULL;
    Tcl_WideInt offset;

    /*
     * In the clock's own ticks, converted as the events are, where the
     * two clocks are one (the same thread, or the wall clock): event
     * times then line up to the tick. Else (CPU clocks of two threads)
     * by the monotonic clock.
     */

    if (order == 0 || ownerPtr->state.options.clock != CPROF_CLOCK_CPU) {
	offset = CprofExactTicksToNs(&ownerPtr->state,
		(int64_t) (pPtr->startTicks
		- ownerPtr->state.exact.runStartNs));
    } else {
	offset = pPtr->startNs - ownerPtr->state.exact.runStartMonoNs;
    }

    PUT(sideObj, "profile", valueObj);
    PUT(sideObj, "thread", Tcl_NewIntObj(order));
    PUT(sideObj, "interp", Tcl_NewStringObj(path ? path : "", -1));
    PUT(sideObj, "offset", Tcl_NewWideIntObj(offset));
    return sideObj;
}

/*
 * The call sites, coverage, event handlers and events of the parts,
 * merged with the owner's (library/merge.tcl, ::tclcprof::mergelib::Sides).
 * When that fails, the owner's own are kept.
 */

static Tcl_Obj *
MergeSides(
    CprofInterp *ciPtr,
    Tcl_Obj *ownObj,
    Tcl_Obj *sidesObj)
{
    Tcl_Interp *interp = ciPtr->state.interp;
    Tcl_InterpState saved;
    Tcl_Obj *objv[3], *resultObj = ownObj;
    int n = 0, i;

    if (interp == NULL || Tcl_InterpDeleted(interp)
	    || Tcl_ListObjLength(NULL, sidesObj, &n) != TCL_OK || n == 0) {
	return ownObj;
    }
    saved = Tcl_SaveInterpState(interp, TCL_OK);
    objv[0] = Tcl_NewStringObj("::tclcprof::mergelib::Sides", -1);
    objv[1] = ownObj;
    objv[2] = sidesObj;
    for (i = 0; i < 3; i++) {
	Tcl_IncrRefCount(objv[i]);
    }
    if (Tcl_EvalObjv(interp, 3, objv, TCL_EVAL_GLOBAL) == TCL_OK) {
	resultObj = Tcl_GetObjResult(interp);
    }
    Tcl_IncrRefCount(resultObj);
    Tcl_RestoreInterpState(interp, saved);
    for (i = 0; i < 3; i++) {
	Tcl_DecrRefCount(objv[i]);
    }
    resultObj->refCount--;	/* Handed over without being freed. */
    return resultObj;
}

/*
 * A thread's root: its tree's top-level nodes under a node of kind
 * thread.
 */

static Tcl_Obj *
ThreadNode(
    const ThreadRec *tPtr,
    Tcl_Obj *treeObj)
{
    Tcl_Obj *nodeObj = Tcl_NewDictObj(), *kidsObj;

    PUT(nodeObj, "name", ThreadNameObj(tPtr));
    PUT(nodeObj, "kind", Tcl_NewStringObj("thread", -1));
    PUT(nodeObj, "thread", Tcl_NewStringObj(tPtr->tclId, -1));
    PUT(nodeObj, "self", Tcl_NewWideIntObj(0));
    PUT(nodeObj, "total", Tcl_NewWideIntObj(GetWide(treeObj, "total")));
    kidsObj = Get(treeObj, "children");
    PUT(nodeObj, "children", kidsObj ? kidsObj : Tcl_NewListObj(0, NULL));
    return nodeObj;
}

Tcl_Obj *
CprofScopeProfile(
    CprofInterp *ciPtr,
    Tcl_Obj *ownObj)
{
    CprofSession *sPtr = ciPtr->sessionPtr;
    int mode = ciPtr->state.options.mode, n, i, numThreads = 0;
    const char *exactKey = (mode == CPROF_MODE_EXACT) ? "tree"
	    : (mode == CPROF_MODE_BOTH) ? "exact" : NULL;
    Tcl_Obj **trees, **exacts, **values, *metaObj, *sidesObj;
    Tcl_WideInt *partCalls;
    ThreadRec **recs, *tPtr;
    Part *pPtr, live[LIVE_MAX];
    Tcl_Obj *liveValues[LIVE_MAX];
    int numLive = 0;

    if (sPtr == NULL) {
	return ownObj;
    }
    if (ciPtr->member) {
	/*
	 * A member asked for its own profile (the package is loaded in
	 * it): its exact tree without the links.
	 */

	if (exactKey != NULL && Get(ownObj, exactKey) != NULL) {
	    if (Tcl_IsShared(ownObj)) {
		ownObj = Tcl_DuplicateObj(ownObj);
	    }
	    PUT(ownObj, exactKey, JoinExact(Get(ownObj, exactKey), NULL, 0));
	}
	return ownObj;
    }

    /*
     * The members of this thread still running (child interpreters):
     * what they have so far, read here, in their thread.
     */

    {
	CprofInterp *mPtr, *list[LIVE_MAX];
	Tcl_ThreadId self = Tcl_GetCurrentThread();
	int m = 0, k;

	Tcl_MutexLock(&scopeMutex);
	for (mPtr = sPtr->members; mPtr != NULL && m < LIVE_MAX;
		mPtr = mPtr->nextMemberPtr) {
	    if (mPtr->thread == self && mPtr->state.running
		    && mPtr->state.startNs != 0) {
		list[m++] = mPtr;
	    }
	}
	Tcl_MutexUnlock(&scopeMutex);
	for (k = 0; k < m; k++) {
	    Tcl_Obj *valueObj = CprofProfileValue(list[k], -1, 0);

	    Tcl_IncrRefCount(valueObj);
	    memset(&live[k], 0, sizeof(Part));
	    live[k].calls = GetWide(Get(valueObj, "meta"), "calls");
	    live[k].interpId = list[k]->interpId;
	    live[k].startNs = list[k]->state.exact.runStartMonoNs;
	    live[k].startTicks = list[k]->state.exact.runStartNs;
	    liveValues[k] = valueObj;
	}
	numLive = m;
    }

    Tcl_MutexLock(&scopeMutex);
    n = sPtr->numThreads;
    recs = (ThreadRec **) ckalloc(n * sizeof(ThreadRec *));
    trees = (Tcl_Obj **) ckalloc(n * sizeof(Tcl_Obj *));
    exacts = (Tcl_Obj **) ckalloc(n * sizeof(Tcl_Obj *));
    values = (Tcl_Obj **) ckalloc(n * sizeof(Tcl_Obj *));
    memset(trees, 0, n * sizeof(Tcl_Obj *));
    memset(exacts, 0, n * sizeof(Tcl_Obj *));
    memset(values, 0, n * sizeof(Tcl_Obj *));
    for (tPtr = sPtr->threads; tPtr != NULL; tPtr = tPtr->nextPtr) {
	recs[tPtr->order] = tPtr;
    }

    /*
     * Each thread's value: the owner's own, the others' as published.
     */

    values[0] = ownObj;
    for (pPtr = sPtr->parts; pPtr != NULL; pPtr = pPtr->nextPtr) {
	if (pPtr->primary && pPtr->threadPtr->order > 0) {
	    values[pPtr->threadPtr->order] = Tcl_NewStringObj(pPtr->value, -1);
	}
    }
    for (i = 0; i < n; i++) {
	if (values[i] != NULL) {
	    if (i > 0) {
		Tcl_IncrRefCount(values[i]);
	    }
	    trees[i] = Get(values[i], "tree");
	    exacts[i] = exactKey ? Get(values[i], exactKey) : NULL;
	    if (trees[i] != NULL) {
		Tcl_IncrRefCount(trees[i]);
	    }
	    if (exacts[i] != NULL) {
		Tcl_IncrRefCount(exacts[i]);
	    }
	}
    }

    /*
     * The exact trees of each thread's interpreters joined at their
     * links, the other interpreters' (oldest first) beside where they
     * have none. Every part's value goes to the merge of call sites,
     * coverage and handlers below, and its calls to its thread's.
     */

    partCalls = (Tcl_WideInt *) ckalloc(n * sizeof(Tcl_WideInt));
    memset(partCalls, 0, n * sizeof(Tcl_WideInt));
    sidesObj = Tcl_NewListObj(0, NULL);
    Tcl_IncrRefCount(sidesObj);
    for (i = 0; i < n; i++) {
	Part *list[256];
	Tcl_Obj *others[256];
	int m = 0, k, numOthers = 0;

	for (pPtr = sPtr->parts; pPtr != NULL && m < 256;
		pPtr = pPtr->nextPtr) {
	    if (pPtr->threadPtr->order == i) {
		partCalls[i] += pPtr->calls;
		if (!pPtr->primary) {
		    list[m++] = pPtr;
		}
	    }
	}
	if (values[i] != NULL && i > 0) {
	    for (pPtr = sPtr->parts; pPtr != NULL; pPtr = pPtr->nextPtr) {
		if (pPtr->primary && pPtr->threadPtr->order == i) {
		    Tcl_ListObjAppendElement(NULL, sidesObj,
			    SideOf(values[i], i, pPtr, ciPtr));
		    break;
		}
	    }
	}
	for (k = m - 1; k >= 0; k--) {
	    Tcl_Obj *valueObj = Tcl_NewStringObj(list[k]->value, -1);
	    Tcl_Obj *exactObj = exactKey ? Get(valueObj, exactKey) : NULL;

	    Tcl_ListObjAppendElement(NULL, sidesObj,
		    SideOf(valueObj, i, list[k], ciPtr));
	    if (exactObj != NULL) {
		others[numOthers++] = exactObj;
	    }
	}
	for (k = 0; i == 0 && k < numLive && numOthers < 256; k++) {
	    Tcl_Obj *exactObj = exactKey ? Get(liveValues[k], exactKey)
		    : NULL;

	    partCalls[0] += live[k].calls;
	    Tcl_ListObjAppendElement(NULL, sidesObj,
		    SideOf(liveValues[k], 0, &live[k], ciPtr));
	    if (exactObj != NULL) {
		others[numOthers++] = exactObj;
	    }
	}
	if (exacts[i] == NULL) {
	    continue;
	}
	{
	    Tcl_Obj *joinedObj = JoinExact(exacts[i], others, numOthers);

	    Tcl_IncrRefCount(joinedObj);
	    Tcl_DecrRefCount(exacts[i]);
	    exacts[i] = joinedObj;
	}
	if (mode == CPROF_MODE_EXACT) {
	    if (trees[i] != NULL) {
		Tcl_DecrRefCount(trees[i]);
	    }
	    trees[i] = exacts[i];
	    Tcl_IncrRefCount(trees[i]);
	}
    }

    for (i = 0; i < n; i++) {
	if (trees[i] != NULL) {
	    numThreads++;
	}
    }
    Tcl_MutexUnlock(&scopeMutex);

    if (Tcl_IsShared(ownObj)) {
	ownObj = Tcl_DuplicateObj(ownObj);
    }
    metaObj = Get(ownObj, "meta");
    metaObj = metaObj ? Tcl_DuplicateObj(metaObj) : Tcl_NewDictObj();
    if (numThreads > 1) {
	Tcl_WideInt samples = 0, weight = 0, calls = 0;
	Tcl_Obj *rootObj, *kidsObj, *exactRootObj = NULL, *exactKidsObj = NULL;
	Tcl_WideInt total = 0, exactTotal = 0;

	rootObj = Tcl_NewDictObj();
	kidsObj = Tcl_NewListObj(0, NULL);
	if (mode == CPROF_MODE_BOTH) {
	    exactRootObj = Tcl_NewDictObj();
	    exactKidsObj = Tcl_NewListObj(0, NULL);
	}
	for (i = 0; i < n; i++) {
	    Tcl_Obj *metaI = values[i] ? Get(values[i], "meta") : NULL;

	    if (trees[i] == NULL) {
		continue;
	    }
	    Tcl_ListObjAppendElement(NULL, kidsObj,
		    ThreadNode(recs[i], trees[i]));
	    total += GetWide(trees[i], "total");
	    if (exactKidsObj != NULL && exacts[i] != NULL) {
		Tcl_ListObjAppendElement(NULL, exactKidsObj,
			ThreadNode(recs[i], exacts[i]));
		exactTotal += GetWide(exacts[i], "total");
	    }
	    samples += GetWide(metaI, "samples");
	    weight += GetWide(metaI, "weight");
	    calls += partCalls[i] + (i == 0 ? GetWide(metaI, "calls") : 0);
	}
	PUT(rootObj, "name", Tcl_NewObj());
	PUT(rootObj, "kind", Tcl_NewStringObj("root", -1));
	PUT(rootObj, "self", Tcl_NewWideIntObj(0));
	PUT(rootObj, "total", Tcl_NewWideIntObj(total));
	PUT(rootObj, "children", kidsObj);
	PUT(ownObj, "tree", rootObj);
	if (exactRootObj != NULL) {
	    PUT(exactRootObj, "name", Tcl_NewObj());
	    PUT(exactRootObj, "kind", Tcl_NewStringObj("root", -1));
	    PUT(exactRootObj, "self", Tcl_NewWideIntObj(0));
	    PUT(exactRootObj, "total", Tcl_NewWideIntObj(exactTotal));
	    PUT(exactRootObj, "children", exactKidsObj);
	    PUT(ownObj, "exact", exactRootObj);
	}
	if (CprofModeSamples(mode)) {
	    PUT(metaObj, "samples", Tcl_NewWideIntObj(samples));
	    PUT(metaObj, "weight", Tcl_NewWideIntObj(weight));
	}
	if (CprofModeExact(mode)) {
	    PUT(metaObj, "calls", Tcl_NewWideIntObj(calls));
	}
    } else if (trees[0] != NULL) {
	PUT(ownObj, "tree", trees[0]);
	if (mode == CPROF_MODE_BOTH && exacts[0] != NULL) {
	    PUT(ownObj, "exact", exacts[0]);
	}
	if (CprofModeExact(mode) && partCalls[0] > 0) {
	    PUT(metaObj, "calls", Tcl_NewWideIntObj(
		    GetWide(metaObj, "calls") + partCalls[0]));
	}
    }
    PUT(ownObj, "meta", metaObj);
    ownObj = MergeSides(ciPtr, ownObj, sidesObj);
    Tcl_DecrRefCount(sidesObj);
    ckfree(partCalls);
    for (i = 0; i < numLive; i++) {
	Tcl_DecrRefCount(liveValues[i]);
    }
    for (i = 0; i < n; i++) {
	if (trees[i] != NULL) {
	    Tcl_DecrRefCount(trees[i]);
	}
	if (exacts[i] != NULL) {
	    Tcl_DecrRefCount(exacts[i]);
	}
	if (values[i] != NULL && i > 0) {
	    Tcl_DecrRefCount(values[i]);
	}
    }
    ckfree(recs);
    ckfree(trees);
    ckfree(exacts);
    ckfree(values);
    return ownObj;
}

/*
 * rundb.c's last write of the owner's run: the whole profile when members
 * published parts of their own (other threads, or children's exact
 * trees), else NULL (the run as flushed is the whole).
 */

static Tcl_Obj *
WholeProfile(
    CprofInterp *ciPtr)
{
    CprofSession *sPtr = ciPtr->sessionPtr;
    int parts;

    if (sPtr == NULL || ciPtr->member) {
	return NULL;
    }
    Tcl_MutexLock(&scopeMutex);
    parts = (sPtr->parts != NULL);
    Tcl_MutexUnlock(&scopeMutex);
    if (!parts) {
	return NULL;
    }
    return CprofScopeProfile(ciPtr, CprofProfileValue(ciPtr, -1, 0));
}

/*
 *----------------------------------------------------------------------
 *
 * CprofScopeMeta --
 *
 *	The owner's meta gets the session's scope and its threads: one
 *	dict each, with what its samples stand for (its own figures for the
 *	owner's thread, what was published for the others).
 *
 *----------------------------------------------------------------------
 */

void
CprofScopeMeta(
    CprofInterp *ciPtr,
    Tcl_Obj *metaObj)
{
    CprofSession *sPtr = ciPtr->sessionPtr;
    Tcl_Obj *threadsObj = Tcl_NewListObj(0, NULL);
    ThreadRec **recs, *tPtr;
    Part **parts, *pPtr;
    Tcl_WideInt *otherCalls;
    int n, i;

    Tcl_MutexLock(&scopeMutex);
    n = sPtr->numThreads;
    recs = (ThreadRec **) ckalloc(n * sizeof(ThreadRec *));
    parts = (Part **) ckalloc(n * sizeof(Part *));
    memset(parts, 0, n * sizeof(Part *));
    otherCalls = (Tcl_WideInt *) ckalloc(n * sizeof(Tcl_WideInt));
    memset(otherCalls, 0, n * sizeof(Tcl_WideInt));
    for (tPtr = sPtr->threads; tPtr != NULL; tPtr = tPtr->nextPtr) {
	recs[tPtr->order] = tPtr;
    }
    for (pPtr = sPtr->parts; pPtr != NULL; pPtr = pPtr->nextPtr) {
	if (pPtr->primary && parts[pPtr->threadPtr->order] == NULL) {
	    parts[pPtr->threadPtr->order] = pPtr;
	} else if (!pPtr->primary) {
	    /*
	     * The calls of its other interpreters count as the thread's.
	     */

	    otherCalls[pPtr->threadPtr->order] += pPtr->calls;
	}
    }
    for (i = 0; i < n; i++) {
	Tcl_Obj *d = Tcl_NewDictObj(), *listObj;
	Tcl_WideInt samples = 0, weight = 0, calls = 0;
	uint64_t cpuNs;
	int k;

	tPtr = recs[i];
	if (i == 0) {
	    samples = GetWide(metaObj, "samples");
	    weight = GetWide(metaObj, "weight");
	    calls = GetWide(metaObj, "calls");
	} else if (parts[i] != NULL) {
	    samples = parts[i]->samples;
	    weight = parts[i]->weight;
	    calls = parts[i]->calls;
	}
	cpuNs = (tPtr->state == THREAD_RUNNING && i == 0)
		? ThreadCpuNs() - tPtr->cpuStartNs : tPtr->cpuNs;
	PUT(d, "name", ThreadNameObj(tPtr));
	PUT(d, "thread", Tcl_NewStringObj(tPtr->tclId, -1));
	PUT(d, "tid", Tcl_NewIntObj((int) tPtr->tid));
	PUT(d, "state", Tcl_NewStringObj(
		threadStateNames[tPtr->state == THREAD_RUNNING && i > 0
		&& sPtr->stopping ? THREAD_LATE : tPtr->state], -1));
	PUT(d, "cpu_ns", Tcl_NewWideIntObj((Tcl_WideInt) cpuNs));
	PUT(d, "samples", Tcl_NewWideIntObj(samples));
	PUT(d, "weight", Tcl_NewWideIntObj(weight));
	PUT(d, "calls", Tcl_NewWideIntObj(calls + otherCalls[i]));
	listObj = Tcl_NewListObj(0, NULL);
	for (k = 0; k < tPtr->numInterps; k++) {
	    const char *path = tPtr->interps[k] >= 0
		    ? CprofNameString(tPtr->interps[k]) : NULL;

	    Tcl_ListObjAppendElement(NULL, listObj,
		    Tcl_NewStringObj(path ? path : "", -1));
	}
	PUT(d, "interps", listObj);
	Tcl_ListObjAppendElement(NULL, threadsObj, d);
    }
    Tcl_MutexUnlock(&scopeMutex);
    ckfree(recs);
    ckfree(parts);
    ckfree(otherCalls);
    PUT(metaObj, "scope", Tcl_NewStringObj(cprofScopeNames[sPtr->scope], -1));
    PUT(metaObj, "threads", threadsObj);
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
    ThreadName *nPtr;
    const char *name;
    int length;

    if (objc > 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "?name?");
	return TCL_ERROR;
    }
    Tcl_MutexLock(&scopeMutex);
    if (objc == 2) {
	name = Tcl_GetStringFromObj(objv[1], &length);
	if (length == 0 || length >= 64 || strlen(name) != (size_t) length) {
	    Tcl_MutexUnlock(&scopeMutex);
	    Tcl_SetObjResult(interp, Tcl_ObjPrintf("bad thread name \"%s\":"
		    " 1 to 63 bytes", name));
	    Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", "threadname", NULL);
	    return TCL_ERROR;
	}
	for (nPtr = threadNames; nPtr != NULL; nPtr = nPtr->nextPtr) {
	    if (nPtr->id == self) {
		break;
	    }
	}
	if (nPtr == NULL) {
	    nPtr = (ThreadName *) ckalloc(sizeof(ThreadName));
	    nPtr->id = self;
	    nPtr->nextPtr = threadNames;
	    threadNames = nPtr;
	}
	memcpy(nPtr->name, name, (size_t) length + 1);
    }
    name = NameOf(self);
    if (name == NULL) {
	char buf[40];

	if (GetTid() == getpid()) {
	    name = "main";
	} else {
	    snprintf(buf, sizeof(buf), "tid%p", (void *) self);
	    Tcl_MutexUnlock(&scopeMutex);
	    Tcl_SetObjResult(interp, Tcl_NewStringObj(buf, -1));
	    return TCL_OK;
	}
    }
    Tcl_SetObjResult(interp, Tcl_NewStringObj(name, -1));
    Tcl_MutexUnlock(&scopeMutex);
    return TCL_OK;
}

/*
 * The library is unloaded: the stubs table's entries go back.
 */

void
CprofScopeUnload(void)
{
    Tcl_MutexLock(&scopeMutex);
    Hook(0);
    Tcl_MutexUnlock(&scopeMutex);
}
