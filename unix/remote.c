/*
 * remote.c --
 *
 *	Stacks of another process (attach layer, outside the profiled
 *	process): the mixed Tcl and C stack of every thread of a running
 *	process that never loaded tclcprof, or of a core file. It backs
 *	"tclcprof dump", "record -pid" and "top -pid" (library/attach.tcl).
 *	This file has the Tcl commands and the sessions of a recording;
 *	the work is in remoteptrace.c (stopping, memory), remoteinterp.c
 *	(libtcl, interps), remoteframes.c (Tcl frames), remotenative.c
 *	(native frames, names, stacks) and remotecore.c (core files), with
 *	remoteInt.h.
 *
 *	- Stopping: every thread is stopped with PTRACE_SEIZE and
 *	  PTRACE_INTERRUPT, never PTRACE_ATTACH: a seized thread is stopped
 *	  without a SIGSTOP, so a tracer that dies (killed in the middle of
 *	  a read) leaves the target running when the kernel detaches it.
 *	  Everything that does not need the threads stopped (the maps, the
 *	  search for the interpreters, the modules, libdwfl's attachment,
 *	  the names of C functions) is done before the stop or after the
 *	  threads are resumed; during the stop this thread runs at a
 *	  higher priority when it may, so that it is not the one the
 *	  target waits for on a busy machine.
 *	- Native frames: elfutils' libdwfl unwinds the stopped threads (or
 *	  the core's) with the CFI of each module, as eu-stack does; no
 *	  hand-written unwinder. libdwfl also gives the callee-saved
 *	  registers of each frame, which is what the splice uses.
 *	- Memory: process_vm_readv (a core's PT_LOAD segments for a core).
 *	- Interpreters: libtcl exports no list of interpreters, so the
 *	  writable anonymous memory of the target is searched for the
 *	  address of libtcl's stubs table, which every Interp holds in
 *	  stubTable; a candidate is kept when its global namespace points
 *	  back at it. The target's libtcl must be the very file this
 *	  process runs (same device and inode, or same build-id for a core):
 *	  the layouts of Tcl's structures are those of the private headers
 *	  tclcprof is built with, and offsets inside libtcl (the stubs table,
 *	  TclNRRunCallbacks) are this process's.
 *	- Threads: an interpreter belongs to the thread whose pthread_t is
 *	  its threadId: the thread pointer on x86-64 (fs_base); on aarch64
 *	  the thread pointer (NT_ARM_TLS) less the offset this process
 *	  measures between its own, or, when the registers do not say (a
 *	  core file), the thread whose id the pthread_t holds
 *	  (CprofRmThreadOwners). Its path from the thread's top interpreter
 *	  is read from Tcl's InterpInfo.
 *	- Tcl frames: the CallFrame chain of each interpreter from
 *	  iPtr->framePtr (procs, lambdas, methods) merged with its CmdFrame
 *	  chain, as generic/captureframes.c merges them in the process, continued
 *	  through the caller context of running coroutines: a CmdFrame that
 *	  is not a proc's call site is a command of its own (a C command,
 *	  an alias, a coroutine's resume), an eval frame of a script file
 *	  (tclsh's main script) or a sourced file's top-level bytecode is
 *	  "<script app.tcl>". Lines come from the CmdFrames (the pc of a
 *	  bytecode frame mapped to its command as TclGetSrcInfoForPc does,
 *	  then the command's line from iPtr->lineBCPtr).
 *	- Splice: a Tcl level runs in one TclNRRunCallbacks frame (a
 *	  trampoline). In Debian's libtcl the trampoline keeps the interp
 *	  in r13, its root callback in r12 and the running callback in rbx
 *	  (x21, x22 and x19 on aarch64: remoteInt.h); the pending NRE
 *	  callbacks of the interp, cut at each trampoline's root, say which
 *	  trampoline each suspended bytecode level (TEBCresume's TEBCdata)
 *	  belongs to, and the running callback which level each trampoline
 *	  is running. A Tcl frame goes
 *	  right after its trampoline's native frame. A frame not placed so
 *	  goes with the frame outside it (counted in "unplaced").
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "remoteInt.h"

#ifdef CPROF_RM_SUPPORTED

static double
NowUs(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/*
 * Boost, Unboost --
 *
 *	This thread's priority while it holds the target stopped: the real-
 *	time class (SCHED_FIFO, the lowest priority), else a nice value of
 *	-10, when it may (root, CAP_SYS_NICE), so that the tasks of a busy
 *	machine (the target's threads woken by the resume among them) do
 *	not keep it waiting for a CPU while the target waits for it. Put
 *	back after. Nothing of the target changes.
 */

typedef struct BoostState {
    int how;			/* 0: none, 1: real-time, 2: nice. */
    int policy;
    struct sched_param param;
    int nice;
} BoostState;

static void
Boost(
    BoostState *bPtr)
{
    pid_t self = (pid_t) syscall(SYS_gettid);
    struct sched_param rt;

    bPtr->how = 0;
    bPtr->policy = sched_getscheduler(self);
    if (bPtr->policy == SCHED_OTHER
	    && sched_getparam(self, &bPtr->param) == 0) {
	memset(&rt, 0, sizeof(rt));
	rt.sched_priority = sched_get_priority_min(SCHED_FIFO);
	if (sched_setscheduler(self, SCHED_FIFO, &rt) == 0) {
	    bPtr->how = 1;
	    return;
	}
    }
    errno = 0;
    bPtr->nice = getpriority(PRIO_PROCESS, (id_t) self);
    if (errno == 0 && setpriority(PRIO_PROCESS, (id_t) self, -10) == 0) {
	bPtr->how = 2;
    }
}

static void
Unboost(
    BoostState *bPtr)
{
    pid_t self = (pid_t) syscall(SYS_gettid);

    if (bPtr->how == 1) {
	sched_setscheduler(self, bPtr->policy, &bPtr->param);
    } else if (bPtr->how == 2) {
	setpriority(PRIO_PROCESS, (id_t) self, bPtr->nice);
    }
    bPtr->how = 0;
}

static char *debuginfoPath = NULL;

/*
 * PreloadModule --
 *
 *	Read a module's file and unwind tables now, while the target runs,
 *	not during the stop.
 */

static int
PreloadModule(
    Dwfl_Module *mod,
    void **userdata,
    const char *name,
    Dwarf_Addr start,
    void *arg)
{
    Dwarf_Addr bias;

    if (dwfl_module_getelf(mod, &bias) != NULL) {
	dwfl_module_eh_cfi(mod, &bias);
	dwfl_module_dwarf_cfi(mod, &bias);
    }
    return DWARF_CB_OK;
}

static const Dwfl_Callbacks procCallbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .debuginfo_path = &debuginfoPath,
};

/*
 * A session: the target of the last "Stacks pid -session 1", kept between
 * samples of a recording (its modules, unwind tables and interps), made
 * again when the process's maps change, its interps searched again every
 * second.
 */

typedef struct Session {
    Target target;
    Tcl_Obj *maps;
    double scanned;		/* When the interps were searched (us). */
    int attached;		/* dwfl_linux_proc_attach done. */
    int valid;
} Session;

static Session *sessionPtr = NULL;
static Tcl_Mutex sessionMutex;

static void
EndSession(void)
{
    CprofRmClearNameCache();
    if (sessionPtr && sessionPtr->valid) {
	CprofRmEndDwfl(&sessionPtr->target);
	Tcl_DecrRefCount(sessionPtr->maps);
	sessionPtr->valid = 0;
    }
}

/*
 * The end of a read of stacks, under sessionMutex, which it lets go: the
 * boxes go, a one-off target's libdwfl handle too, and a session whose
 * read failed.
 */

static void
EndStacks(
    Target *tPtr,
    StackBox **boxes,
    int session,
    int failed)
{
    CprofRmFreeBoxes(boxes);
    if (!session) {
	CprofRmEndDwfl(tPtr);
    } else if (failed) {
	EndSession();
    }
    Tcl_MutexUnlock(&sessionMutex);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofRmPrepareProc --
 *
 *	Fill a target for process pid while it runs: libtcl, interps,
 *	modules.
 *
 *----------------------------------------------------------------------
 */

int
CprofRmPrepareProc(
    Tcl_Interp *interp,
    Target *tPtr,
    int pid)
{
    const char *ownPath;
    uintptr_t stubsOff, trampOff, trampSize;

    memset(tPtr, 0, sizeof(*tPtr));
    tPtr->pid = pid;
    tPtr->coreFd = -1;
    if (kill(pid, 0) != 0 && errno == ESRCH) {
	return CprofRmError(interp, "NOPID", "no such process: %d", pid);
    }
    if (CprofRmProcessGone(pid)) {
	return CprofRmError(interp, "NOPID", "process %d has exited", pid);
    }
    if (!CprofRmOwnLibtcl(interp, &ownPath, &stubsOff, &trampOff, &trampSize)) {
	return CprofRmError(interp, "LAYOUT", "cannot locate this process's "
		"libtcl");
    }
    if (CprofRmFindProcLibtcl(interp, tPtr, ownPath) != TCL_OK) {
	return TCL_ERROR;
    }
    tPtr->stubs = tPtr->tclBase + stubsOff;
    tPtr->trampStart = tPtr->tclBase + trampOff;
    tPtr->trampEnd = tPtr->trampStart + trampSize;
    CprofRmScanProcInterps(tPtr);
    tPtr->callbacks = &procCallbacks;
    tPtr->dwfl = dwfl_begin(&procCallbacks);
    if (tPtr->dwfl == NULL) {
	return CprofRmError(interp, "DWFL", "libdwfl: %s", dwfl_errmsg(-1));
    }
    if (dwfl_linux_proc_report(tPtr->dwfl, pid) != 0) {
	CprofRmEndDwfl(tPtr);
	return CprofRmError(interp, "NOPID", "cannot read the modules of "
		"process %d", pid);
    }
    dwfl_report_end(tPtr->dwfl, NULL, NULL);
    dwfl_getmodules(tPtr->dwfl, PreloadModule, NULL, 0);
    return TCL_OK;
}

#endif /* CPROF_RM_SUPPORTED */

/*
 *----------------------------------------------------------------------
 *
 * CprofRemoteStacksObjCmd --
 *
 *	::tclcprof::attach::Stacks pid ?holdMs? ?session?
 *	::tclcprof::attach::Stacks core ?executable?
 *
 *	The stacks of every thread of process pid (see CprofRmResultObj), with
 *	each thread's "cpu" (utime+stime in clock ticks). holdMs (tests
 *	only) keeps the target stopped that long before reading. session
 *	1 keeps what was prepared for the next call on the same pid
 *	(recordings), 0 (the default) prepares afresh and keeps nothing.
 *
 *----------------------------------------------------------------------
 */

int
CprofRemoteStacksObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Target target, *tPtr = &target;
    int pid, holdMs = 0, session = 0, code, i;
#ifdef CPROF_RM_SUPPORTED
    BoostState boost;
#endif
    Tcl_Obj *resObj, *threads;
    double t0, t1, tStopped, tRead;
    StackBox **boxes;

    (void) clientData;
    if (objc < 2 || objc > 4) {
	Tcl_WrongNumArgs(interp, 1, objv,
		"pid|core ?holdMs|executable? ?session?");
	return TCL_ERROR;
    }
#ifndef CPROF_RM_SUPPORTED
    /*
     * Trampoline registers and thread pointers are read the way x86-64
     * and aarch64 keep them (remoteInt.h): elsewhere a clear error.
     */

    (void) tPtr;
    return CprofRmError(interp, "PLATFORM", "reading another process is "
	    "supported on x86-64 and aarch64 Linux only");
#else
    if (Tcl_GetIntFromObj(NULL, objv[1], &pid) != TCL_OK) {
	const char *s = Tcl_GetString(objv[1]);

	if (*s && strspn(s, "-0123456789") != strlen(s)
		&& access(s, F_OK) == 0) {
	    return CprofRmCoreStacks(interp, s, objc >= 3
		    ? Tcl_GetString(objv[2]) : NULL);
	}
	return CprofRmError(interp, "NOPID", "bad pid \"%s\": must be a "
		"process id or a core file", s);
    }
    if (pid <= 0) {
	return CprofRmError(interp, "NOPID", "bad pid \"%s\": must be a "
		"process id", Tcl_GetString(objv[1]));
    }
    if (objc >= 3 && Tcl_GetIntFromObj(interp, objv[2], &holdMs) != TCL_OK) {
	return TCL_ERROR;
    }
    if (objc == 4 && Tcl_GetBooleanFromObj(interp, objv[3], &session)
	    != TCL_OK) {
	return TCL_ERROR;
    }
    if (pid == getpid()) {
	return CprofRmError(interp, "SELF", "cannot attach to this process "
		"itself: use tclcprof::stack");
    }

    /*
     * One session at a time, in any thread of this process.
     */

    Tcl_MutexLock(&sessionMutex);
    if (session) {
	Tcl_Obj *maps = CprofRmReadMaps(pid);

	if (sessionPtr == NULL) {
	    sessionPtr = (Session *) ckalloc(sizeof(Session));
	    sessionPtr->valid = 0;
	}
	if (maps == NULL) {
	    EndSession();
	    Tcl_MutexUnlock(&sessionMutex);
	    return CprofRmError(interp, "NOPID", "no such process: %d", pid);
	}
	if (!sessionPtr->valid || sessionPtr->target.pid != pid
		|| strcmp(Tcl_GetString(maps),
		    Tcl_GetString(sessionPtr->maps)) != 0) {
	    EndSession();
	    if (CprofRmPrepareProc(interp, &sessionPtr->target, pid) != TCL_OK) {
		Tcl_DecrRefCount(maps);
		Tcl_MutexUnlock(&sessionMutex);
		return TCL_ERROR;
	    }
	    sessionPtr->maps = maps;
	    Tcl_IncrRefCount(maps);
	    sessionPtr->scanned = NowUs();
	    sessionPtr->attached = 0;
	    sessionPtr->valid = 1;
	} else {
	    Tcl_DecrRefCount(maps);
	    if (NowUs() - sessionPtr->scanned > 1e6) {
		sessionPtr->target.numInterps = 0;
		CprofRmScanProcInterps(&sessionPtr->target);
		sessionPtr->scanned = NowUs();
	    }
	}
	tPtr = &sessionPtr->target;
    } else if (CprofRmPrepareProc(interp, tPtr, pid) != TCL_OK) {
	Tcl_MutexUnlock(&sessionMutex);
	return TCL_ERROR;
    }

    /*
     * Everything that can be done with the target running is done before
     * the stop: the stacks' memory, and libdwfl's attachment (with
     * assume_ptrace_stopped it only opens the process's task directory
     * and learns its architecture; the threads are stopped by StopAll).
     */

    boxes = CprofRmNewBoxes(tPtr);
    code = 0;
    if (!session || !sessionPtr->attached) {
	code = dwfl_linux_proc_attach(tPtr->dwfl, pid, true);
	if (session && code == 0) {
	    sessionPtr->attached = 1;
	}
    }
    if (code != 0) {
	EndStacks(tPtr, boxes, session, 1);
	return CprofRmError(interp, "DWFL", "libdwfl cannot read process "
		"%d: %s", pid, dwfl_errmsg(-1));
    }
    /*
     * The stop waits for this thread to be scheduled again after each of
     * the target's threads has stopped: on a busy machine a tracer that
     * just did the preparation's work waits behind the other runnable
     * tasks while the target is held. For the stop only, this thread
     * asks for a higher priority (a lower nice value), when it may
     * (root, CAP_SYS_NICE); it is given back after.
     */

    Boost(&boost);
    t0 = NowUs();
    if (CprofRmStopAll(interp, tPtr) != TCL_OK) {
	Unboost(&boost);
	EndStacks(tPtr, boxes, session, 1);
	return TCL_ERROR;
    }
    if (holdMs > 0) {
	usleep(holdMs * 1000);
    }
    tStopped = NowUs();
    CprofRmReadThreads(tPtr, boxes);
    tRead = NowUs();
    CprofRmResumeAll(tPtr);
    t1 = NowUs();
    Unboost(&boost);
    if (session && cprofRmNameCache == NULL) {
	cprofRmNameCache = (Tcl_HashTable *) ckalloc(sizeof(Tcl_HashTable));
	Tcl_InitHashTable(cprofRmNameCache, TCL_ONE_WORD_KEYS);
    }
    if (session) {
	resObj = CprofRmResultObj(tPtr, boxes, t1 - t0);
    } else {
	Tcl_HashTable *saved = cprofRmNameCache;	/* Another process's. */

	cprofRmNameCache = NULL;
	resObj = CprofRmResultObj(tPtr, boxes, t1 - t0);
	cprofRmNameCache = saved;
    }
    EndStacks(tPtr, boxes, session, 0);

    /*
     * Each thread's CPU time (after the resume: /proc reads are slow).
     */

    Tcl_ListObjIndex(NULL, resObj, 5, &threads);
    if (threads && !Tcl_IsShared(threads)) {
	Tcl_Size n;
	Tcl_Obj **tv;

	Tcl_ListObjGetElements(NULL, threads, &n, &tv);
	for (i = 0; i < n; i++) {
	    Tcl_Obj *tidObj;
	    int tid;

	    if (Tcl_ListObjIndex(NULL, tv[i], 1, &tidObj) == TCL_OK && tidObj
		    && Tcl_GetIntFromObj(NULL, tidObj, &tid) == TCL_OK
		    && !Tcl_IsShared(tv[i])) {
		Tcl_ListObjAppendElement(NULL, tv[i],
			Tcl_NewStringObj("cpu", -1));
		Tcl_ListObjAppendElement(NULL, tv[i],
			Tcl_NewWideIntObj(CprofRmThreadCpu(pid, tid)));
	    }
	}
    }
    Tcl_ListObjAppendElement(NULL, resObj, Tcl_NewStringObj("stopping", -1));
    Tcl_ListObjAppendElement(NULL, resObj, Tcl_NewDoubleObj(tStopped - t0));
    Tcl_ListObjAppendElement(NULL, resObj, Tcl_NewStringObj("reading", -1));
    Tcl_ListObjAppendElement(NULL, resObj, Tcl_NewDoubleObj(tRead - tStopped));
    Tcl_ListObjAppendElement(NULL, resObj, Tcl_NewStringObj("resuming", -1));
    Tcl_ListObjAppendElement(NULL, resObj, Tcl_NewDoubleObj(t1 - tRead));
    Tcl_ListObjAppendElement(NULL, resObj, Tcl_NewStringObj("hz", -1));
    Tcl_ListObjAppendElement(NULL, resObj,
	    Tcl_NewLongObj(sysconf(_SC_CLK_TCK)));
    Tcl_SetObjResult(interp, resObj);
    return TCL_OK;
#endif
}

/*
 *----------------------------------------------------------------------
 *
 * CprofRemoteInterruptObjCmd --
 *
 *	::tclcprof::attach::Interrupt arm|check|disarm
 *
 *	A recording without -duration ends at Ctrl-C (SIGINT) or SIGTERM:
 *	"arm" installs handlers that only set a flag, "check" returns it,
 *	"disarm" puts the previous handlers back.
 *
 *----------------------------------------------------------------------
 */

static volatile sig_atomic_t interrupted = 0;
static struct sigaction oldInt, oldTerm;
static int armed = 0;

static void
OnInterrupt(
    int sig)
{
    (void) sig;
    interrupted = 1;
}

int
CprofRemoteInterruptObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    static const char *const subs[] = {"arm", "check", "disarm", NULL};
    int idx;

    (void) clientData;
    if (objc != 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "arm|check|disarm");
	return TCL_ERROR;
    }
    if (Tcl_GetIndexFromObj(interp, objv[1], subs, "subcommand", 0, &idx)
	    != TCL_OK) {
	return TCL_ERROR;
    }
    switch (idx) {
    case 0:
	if (!armed) {
	    struct sigaction sa;

	    memset(&sa, 0, sizeof(sa));
	    sa.sa_handler = OnInterrupt;
	    sigemptyset(&sa.sa_mask);
	    sigaction(SIGINT, &sa, &oldInt);
	    sigaction(SIGTERM, &sa, &oldTerm);
	    armed = 1;
	}
	interrupted = 0;
	break;
    case 1:
	Tcl_SetObjResult(interp, Tcl_NewBooleanObj(interrupted));
	break;
    case 2:
	if (armed) {
	    sigaction(SIGINT, &oldInt, NULL);
	    sigaction(SIGTERM, &oldTerm, NULL);
	    armed = 0;
	}
	break;
    }
    return TCL_OK;
}
