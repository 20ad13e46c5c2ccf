/*
 * remoteinject.c --
 *
 *	Injection (attach layer): loading tclcprof into a running process
 *	that never loaded it and starting (or stopping) a run in it, for
 *	"record -pid PID -mode memory|exact|both", which need hooks in the
 *	process (the allocator's calls, every command's entry and exit) that
 *	no reading from outside can replace. Both halves are here: the
 *	tracer's (::tclcprof::attach::Inject, in the command-line tool) and
 *	the one entry point the target calls, Tclcprof_Inject.
 *
 *	How, and why so:
 *
 *	- Safe point: Tcl's own point for asynchronous work. Every Interp
 *	  holds asyncReadyPtr, the address of its thread's "async ready"
 *	  flag (tclAsync.c, 8.6 and 9.0); the bytecode engine looks at it
 *	  every 64 instructions (tclExecute.c, at cleanup0), the evaluator
 *	  after every command (tclBasic.c, NRCommand, the callback that
 *	  ends each command), the event loop at the top of each
 *	  Tcl_DoOneEvent and "after ms", and each calls the exported
 *	  Tcl_AsyncInvoke when it is set: the very point where an async
 *	  handler may evaluate a script in the interp (with interp NULL in
 *	  the event loop, where event handlers run). The tracer sets the
 *	  flag of the chosen interp's thread to 1 and puts a breakpoint
 *	  (int3) on Tcl_AsyncInvoke's first byte. There the thread is in
 *	  no allocator, no signal handler and holds no lock of libtcl (it
 *	  takes asyncMutex itself, later). The flag is left set: the
 *	  Tcl_AsyncInvoke that runs after the call finds no handler ready
 *	  and clears it, as for a mark that raced with another. A program
 *	  that only runs bytecode (while 1 {incr i}) gets there within 64
 *	  instructions; one idle in the event loop (vwait, nothing due)
 *	  does not look before its next event: after the timeout the
 *	  breakpoint is removed and the error is TCLCPROF ATTACH TIMEOUT.
 *	  A breakpoint on an evaluator entry (TclNREvalObjv, as an
 *	  earlier trial with gdb did) never fires in such a loop.
 *	- Threads: all are seized (PTRACE_SEIZE with PTRACE_O_TRACECLONE,
 *	  so that threads made meanwhile are traced too and a stray int3
 *	  never kills the process) but only stopped for the breakpoint's
 *	  insertion; they run during the wait and the call, so that the
 *	  call cannot wait on a lock (the dynamic linker's, malloc's arena)
 *	  that a stopped thread holds. Their signals are passed on; a hit
 *	  by another thread (its own flag set) is stepped over (the byte
 *	  put back, one single step, the int3 again) and the flag set once
 *	  more. A hit in the interp's thread while another of its interps
 *	  runs (a child's bytecode: the flag is the thread's) is taken: the
 *	  chosen interp is then inside a command (the one that runs the
 *	  child), where an alias's target could be evaluated as well.
 *	- The call: the breakpoint is removed first (left in place, the
 *	  target died in an earlier trial); the thread's general and
 *	  floating-point registers are saved; below its stack pointer,
 *	  past the 128-byte red zone, go the strings and a return address
 *	  of 0, so that the function's return faults at address 0 (a
 *	  SIGSEGV the tracer takes and never delivers); rdi and rsi hold
 *	  the arguments. First libc's dlopen (exported by libc.so.6 since
 *	  glibc 2.34, found in its symbol table through libdwfl) of this
 *	  build's libtclcprof, then Tclcprof_Inject(interp, request) at the
 *	  same offset in the target as in this process. Then the registers
 *	  (general and floating-point) are put back and every thread is
 *	  detached.
 *	- Tclcprof_Inject only makes a Tcl async handler for the request
 *	  and marks it: once the registers are back and the threads let go,
 *	  the Tcl_AsyncInvoke the thread was stopped at runs it at once, as
 *	  it runs any async handler, on the thread's own stack. The work is
 *	  done there, not in the tracer's call: the start unwinds the stack
 *	  to seed the frames already running (a call frame that returns to
 *	  0 cut it: 86% of samples spliced instead of all), and a tracer
 *	  killed then can no longer hurt the process. The handler saves
 *	  the interp's state, loads the package with Tcl's own [load] of
 *	  its file (which initialises stubs and the package as package
 *	  require does) and evaluates ::tclcprof::attach::Injected
 *	  (library/attachinject.tcl), which starts a run as the TCLCPROF
 *	  environment variable does (-scope process, -db, the running
 *	  frames seeded: captureseed.c anchors them to the trampoline
 *	  outside the handler's own) or stops it; the run is written when
 *	  it stops, by -duration, by the stop request, or by the exit flush
 *	  when the program exits meanwhile. The answer goes into an
 *	  exported buffer and a sequence number, which the tracer polls.
 *	- Refused, the target untouched: a process that has another
 *	  tclcprof loaded (its own use of it), or this one not loaded by an
 *	  injection; a run already active (the Tcl side's answer).
 *	- If the tracer is killed (SIGKILL) while the breakpoint is in
 *	  place or during the two calls, the kernel detaches it and the
 *	  target dies of the SIGTRAP or of the return to 0: SIGINT and
 *	  SIGTERM are held back for that time (the wait for the safe point,
 *	  at most -timeout, and the calls, about 10 ms).
 *	- Tcl 9 waits for events in its own thread (epoll_wait), which the
 *	  stop for the insertion interrupts: its event loop goes round and
 *	  reaches the safe point even when idle. Tcl 8.6's waits for its
 *	  notifier thread (a futex the stop restarts): an idle 8.6 program
 *	  times out.
 *	- x86-64 only: ptrace cannot be exercised under qemu-user, where
 *	  the aarch64 build is tested; there the answer is TCLCPROF ATTACH
 *	  PLATFORM.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "remoteInt.h"
#include <limits.h>
#include <sys/sysmacros.h>

/*
 * Set in the target by its first injection: the tracer reads it to tell
 * an injected tclcprof from the program's own use of it.
 */

DLLEXPORT volatile int tclcprofInjected = 0;

#ifdef __cplusplus
extern "C" {
#endif
DLLEXPORT const char *	Tclcprof_Inject(Tcl_Interp *interp,
			    const char *request);
#ifdef __cplusplus
}
#endif

/*
 * The answer of the target's last request, and its sequence number,
 * incremented once the answer is written: the tracer reads both.
 */

DLLEXPORT char tclcprofInjectAnswer[8192];
DLLEXPORT volatile int tclcprofInjectSeq = 0;

typedef struct InjectRequest {
    Tcl_Interp *interp;
    Tcl_AsyncHandler token;
    char request[1];		/* (As long as needed.) */
} InjectRequest;

static InjectRequest *pendingPtr = NULL;

static void
Answer(
    const char *status,
    const char *errorCode,
    const char *result)
{
    snprintf(tclcprofInjectAnswer, sizeof(tclcprofInjectAnswer),
	    "%s\n%s\n%s", status, errorCode, result);
    __atomic_add_fetch(&tclcprofInjectSeq, 1, __ATOMIC_RELEASE);
}

/*
 *----------------------------------------------------------------------
 *
 * InjectAsync --
 *
 *	The async handler Tclcprof_Inject made, run by the Tcl_AsyncInvoke
 *	the thread was stopped at (in the bytecode engine or the evaluator
 *	after a command, with interp; at the top of the event loop, with
 *	NULL), on the thread's own stack: load the package into the interp
 *	(once) and evaluate "::tclcprof::attach::Injected request" there,
 *	the interp's state (result, error information, return options)
 *	saved and restored; the answer into tclcprofInjectAnswer.
 *
 *----------------------------------------------------------------------
 */

static int
InjectAsync(
    ClientData clientData,
    Tcl_Interp *interpArg,
    int code)
{
    InjectRequest *rPtr = (InjectRequest *) clientData;
    Tcl_Interp *interp = rPtr->interp;
    Tcl_InterpState saved;
    Tcl_Obj *cmdObj;
    Tcl_CmdInfo cmdInfo;
    Dl_info info;
    int rc = TCL_OK;

    (void) interpArg;
    pendingPtr = NULL;
    Tcl_AsyncDelete(rPtr->token);
    saved = Tcl_SaveInterpState(interp, TCL_OK);
    if (!Tcl_GetCommandInfo(interp, "::tclcprof::attach::Injected",
	    &cmdInfo)) {
	if (!dladdr((void *) Tclcprof_Inject, &info)
		|| info.dli_fname == NULL) {
	    Tcl_SetObjResult(interp, Tcl_NewStringObj("cannot tell where "
		    "libtclcprof was loaded from", -1));
	    rc = TCL_ERROR;
	} else {
	    /*
	     * A TCLCPROF variable in the process's environment (one that
	     * never loaded the package) is not acted on: the request says
	     * what to start.
	     */

	    Tcl_EvalEx(interp, "namespace eval ::tclcprof {variable noEnv 1}",
		    -1, TCL_EVAL_GLOBAL);
	    cmdObj = Tcl_NewListObj(0, NULL);
	    Tcl_IncrRefCount(cmdObj);
	    Tcl_ListObjAppendElement(NULL, cmdObj,
		    Tcl_NewStringObj("::load", -1));
	    Tcl_ListObjAppendElement(NULL, cmdObj,
		    Tcl_NewStringObj(info.dli_fname, -1));
	    Tcl_ListObjAppendElement(NULL, cmdObj,
		    Tcl_NewStringObj("Tclcprof", -1));
	    rc = Tcl_EvalObjEx(interp, cmdObj, TCL_EVAL_GLOBAL);
	    Tcl_DecrRefCount(cmdObj);
	}
    }
    if (rc == TCL_OK) {
	cmdObj = Tcl_NewListObj(0, NULL);
	Tcl_IncrRefCount(cmdObj);
	Tcl_ListObjAppendElement(NULL, cmdObj,
		Tcl_NewStringObj("::tclcprof::attach::Injected", -1));
	Tcl_ListObjAppendElement(NULL, cmdObj,
		Tcl_NewStringObj(rPtr->request, -1));
	cprofInjecting = 1;
	rc = Tcl_EvalObjEx(interp, cmdObj, TCL_EVAL_GLOBAL);
	cprofInjecting = 0;
	Tcl_DecrRefCount(cmdObj);
    }
    if (rc == TCL_OK) {
	Answer("ok", "", Tcl_GetStringResult(interp));
    } else {
	Tcl_Obj *optsObj = Tcl_GetReturnOptions(interp, rc), *ecObj = NULL;

	Tcl_IncrRefCount(optsObj);
	Tcl_DictObjGet(NULL, optsObj, Tcl_NewStringObj("-errorcode", -1),
		&ecObj);
	Answer("error", ecObj ? Tcl_GetString(ecObj) : "NONE",
		Tcl_GetStringResult(interp));
	Tcl_DecrRefCount(optsObj);
    }
    Tcl_RestoreInterpState(interp, saved);
    ckfree(rPtr);
    return code;
}

/*
 *----------------------------------------------------------------------
 *
 * Tclcprof_Inject --
 *
 *	The target's side, called by the tracer in the thread of interp at
 *	the entry of Tcl_AsyncInvoke (the safe point): make an async
 *	handler for the request and mark it, so that the Tcl_AsyncInvoke
 *	about to run calls InjectAsync at once, on the thread's own stack
 *	(the profiler's start unwinds that stack to seed the running
 *	frames: the tracer's call frame, which returns to address 0, would
 *	cut it) and after the tracer has let the process go.
 *
 * Results:
 *	NULL, or a static message when nothing was queued.
 *
 *----------------------------------------------------------------------
 */

const char *
Tclcprof_Inject(
    Tcl_Interp *interp,
    const char *request)
{
    InjectRequest *rPtr;

    /*
     * Stubs: those of interp, as Tcl_InitStubs would set them (only the
     * public ones are used before [load] initialises the package).
     */

    if (tclStubsPtr == NULL) {
	const TclStubs *stubs = (const TclStubs *)
		((Interp *) interp)->stubTable;

	if (stubs == NULL || stubs->magic != TCL_STUB_MAGIC) {
	    return "not an interpreter of this Tcl";
	}
	tclStubsPtr = stubs;
    }
    if (pendingPtr != NULL) {
	return "a request is pending already";
    }
    tclcprofInjected = 1;
    rPtr = (InjectRequest *) ckalloc(sizeof(InjectRequest)
	    + strlen(request));
    strcpy(rPtr->request, request);
    rPtr->interp = interp;
    rPtr->token = Tcl_AsyncCreate(InjectAsync, rPtr);
    pendingPtr = rPtr;
    Tcl_AsyncMark(rPtr->token);
    return NULL;
}

#if defined(__x86_64__)

/*
 * The tracer's state of one injection.
 */

#define T_RUNNING	0
#define T_STOPPED	1	/* In a ptrace-stop we hold. */
#define T_GONE		2

typedef struct Inj {
    Target *tPtr;
    pid_t pid;
    int n;
    pid_t tids[MAX_THREADS];
    int state[MAX_THREADS];
    int pendSig[MAX_THREADS];	/* Signal to give back at detach. */
    int wantStop[MAX_THREADS];	/* Interrupted by us. */
    uintptr_t bp;		/* Tcl_AsyncInvoke in the target. */
    long origWord;		/* The word at bp before the int3. */
    int bpIn;			/* The int3 is in place. */
    int bpEver;			/* It was (traps of it may be pending). */
    uintptr_t flagAddr;		/* The interp's thread's async flag. */
    int gone;			/* The process has exited. */
    int stepped;		/* Hits of other threads stepped over. */
} Inj;

static double
NowUs(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int
FindTid(
    Inj *jPtr,
    pid_t tid)
{
    int i;

    for (i = 0; i < jPtr->n; i++) {
	if (jPtr->tids[i] == tid) {
	    return i;
	}
    }
    return -1;
}

static void
AddTid(
    Inj *jPtr,
    pid_t tid,
    int state)
{
    if (FindTid(jPtr, tid) < 0 && jPtr->n < MAX_THREADS) {
	jPtr->tids[jPtr->n] = tid;
	jPtr->state[jPtr->n] = state;
	jPtr->pendSig[jPtr->n] = 0;
	jPtr->wantStop[jPtr->n] = 0;
	jPtr->n++;
    }
}

/*
 * SeizeAll --
 *
 *	Trace every thread (again while new ones appear), without stopping
 *	them. Returns TCL_OK or a TCLCPROF ATTACH error.
 */

static int
SeizeAll(
    Tcl_Interp *interp,
    Inj *jPtr)
{
    char path[64];
    int round;

    snprintf(path, sizeof(path), "/proc/%d/task", (int) jPtr->pid);
    for (round = 0; round < 10; round++) {
	DIR *d = opendir(path);
	struct dirent *e;
	int added = 0;

	if (d == NULL) {
	    return CprofRmError(interp, "NOPID", "no such process: %d",
		    (int) jPtr->pid);
	}
	while ((e = readdir(d)) != NULL) {
	    pid_t tid;

	    if (e->d_name[0] < '0' || e->d_name[0] > '9') {
		continue;
	    }
	    tid = atoi(e->d_name);
	    if (FindTid(jPtr, tid) >= 0 || jPtr->n >= MAX_THREADS) {
		continue;
	    }
	    if (ptrace(PTRACE_SEIZE, tid, NULL,
		    (void *) (long) PTRACE_O_TRACECLONE) != 0) {
		int err = errno;

		if (err == ESRCH) {
		    continue;
		}
		closedir(d);
		return CprofRmAttachError(interp, jPtr->pid, err);
	    }
	    AddTid(jPtr, tid, T_RUNNING);
	    added = 1;
	}
	closedir(d);
	if (!added) {
	    break;
	}
    }
    return TCL_OK;
}

/*
 * NextEvent --
 *
 *	The next ptrace event of a running thread, polled until deadline
 *	(monotonic us). The main thread's exit is only looked at, never
 *	reaped (the tracer may be the process's parent, whose wait must
 *	still see it). Returns 1 (an event, index and status set), 0 (the
 *	deadline passed) or -1 (the process has exited).
 */

static int
NextEvent(
    Inj *jPtr,
    double deadline,
    int *idxPtr,
    int *statusPtr)
{
    for (;;) {
	int i;

	for (i = 0; i < jPtr->n; i++) {
	    int status;
	    pid_t r;

	    if (jPtr->state[i] != T_RUNNING) {
		continue;
	    }
	    if (jPtr->tids[i] == jPtr->pid) {
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, jPtr->pid, &si, WEXITED | WSTOPPED
			| WNOHANG | WNOWAIT | __WALL) != 0) {
		    if (errno == ECHILD && CprofRmProcessGone(jPtr->pid)) {
			jPtr->gone = 1;
			return -1;
		    }
		    continue;
		}
		if (si.si_pid == 0) {
		    continue;
		}
		if (si.si_code == CLD_EXITED || si.si_code == CLD_KILLED
			|| si.si_code == CLD_DUMPED) {
		    jPtr->state[i] = T_GONE;
		    jPtr->gone = 1;
		    return -1;
		}
	    }
	    r = waitpid(jPtr->tids[i], &status, __WALL | WNOHANG);
	    if (r == 0) {
		continue;
	    }
	    if (r < 0 || WIFEXITED(status) || WIFSIGNALED(status)) {
		jPtr->state[i] = T_GONE;
		if (jPtr->tids[i] == jPtr->pid
			|| CprofRmProcessGone(jPtr->pid)) {
		    jPtr->gone = 1;
		    return -1;
		}
		continue;
	    }
	    jPtr->state[i] = T_STOPPED;
	    *idxPtr = i;
	    *statusPtr = status;
	    return 1;
	}
	if (CprofRmProcessGone(jPtr->pid)) {
	    jPtr->gone = 1;
	    return -1;
	}
	if (NowUs() >= deadline) {
	    return 0;
	}
	usleep(100);
    }
}

static int
PokeByte(
    Inj *jPtr,
    pid_t tid,
    uintptr_t addr,
    int byte,
    long *origPtr)
{
    long word;

    errno = 0;
    word = ptrace(PTRACE_PEEKTEXT, tid, (void *) addr, NULL);
    if (errno != 0) {
	return 0;
    }
    if (origPtr != NULL) {
	*origPtr = word;
    }
    word = (word & ~0xffL) | (byte & 0xff);
    return ptrace(PTRACE_POKETEXT, tid, (void *) addr, (void *) word) == 0;
}

static int
WriteMem(
    pid_t pid,
    uintptr_t addr,
    const void *buf,
    size_t len)
{
    struct iovec local = {(void *) buf, len}, remote = {(void *) addr, len};

    return process_vm_writev(pid, &local, 1, &remote, 1, 0)
	    == (ssize_t) len;
}

/*
 * Continue --
 *
 *	Let a stopped thread run on, with the signal it is to get.
 */

static void
Continue(
    Inj *jPtr,
    int i,
    int sig)
{
    if (ptrace(PTRACE_CONT, jPtr->tids[i], NULL, (void *) (long) sig) == 0) {
	jPtr->state[i] = T_RUNNING;
    } else if (errno == ESRCH) {
	jPtr->state[i] = T_GONE;
    }
}

/*
 * Pass --
 *
 *	An event nobody waits for: a new thread is added (it is traced
 *	already), a group-stop kept (PTRACE_LISTEN), a signal given on, a
 *	trap of the breakpoint taken away meanwhile replayed; the thread
 *	runs on. With hold, the thread is kept stopped instead (its signal
 *	kept for the detach).
 */

static void
Pass(
    Inj *jPtr,
    int i,
    int status,
    int hold)
{
    pid_t tid = jPtr->tids[i];
    int sig = WSTOPSIG(status), ev = status >> 16;

    if (ev == PTRACE_EVENT_CLONE) {
	unsigned long newTid = 0;

	if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &newTid) == 0) {
	    AddTid(jPtr, (pid_t) newTid, T_RUNNING);
	}
	if (!hold) {
	    Continue(jPtr, i, 0);
	}
	return;
    }
    if (ev == PTRACE_EVENT_STOP) {
	if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN
		|| sig == SIGTTOU) {
	    /*
	     * A group-stop of the program's: it stays stopped.
	     */

	    if (!hold && ptrace(PTRACE_LISTEN, tid, NULL, NULL) == 0) {
		jPtr->state[i] = T_RUNNING;
	    }
	    return;
	}
	if (!hold) {
	    Continue(jPtr, i, 0);
	}
	return;
    }
    if (sig == SIGTRAP && jPtr->bpEver) {
	struct user_regs_struct regs;

	if (ptrace(PTRACE_GETREGS, tid, NULL, &regs) == 0
		&& regs.rip == jPtr->bp + 1 && !jPtr->bpIn) {
	    /*
	     * It hit the int3 before it was taken away: run the
	     * instruction that is there again.
	     */

	    regs.rip = jPtr->bp;
	    ptrace(PTRACE_SETREGS, tid, NULL, &regs);
	    sig = 0;
	}
    }
    if (hold) {
	jPtr->pendSig[i] = sig;
	return;
    }
    Continue(jPtr, i, sig);
}

/*
 * StopAll --
 *
 *	Interrupt every running thread and wait until each is stopped (or
 *	gone). Returns 0 when the process exited.
 */

static int
StopAll(
    Inj *jPtr)
{
    int i, idx, status, running;
    double deadline = NowUs() + 10e6;

    for (;;) {
	running = 0;
	for (i = 0; i < jPtr->n; i++) {
	    if (jPtr->state[i] == T_RUNNING) {
		if (!jPtr->wantStop[i]) {
		    ptrace(PTRACE_INTERRUPT, jPtr->tids[i], NULL, NULL);
		    jPtr->wantStop[i] = 1;
		}
		running++;
	    }
	}
	if (running == 0) {
	    return 1;
	}
	switch (NextEvent(jPtr, deadline, &idx, &status)) {
	case -1:
	    return 0;
	case 0:
	    return 1;		/* (Cannot happen: give up waiting.) */
	}
	Pass(jPtr, idx, status, 1);
	if ((status >> 16) == PTRACE_EVENT_STOP) {
	    jPtr->wantStop[idx] = 0;
	}
    }
}

/*
 * DetachAll --
 *
 *	Stop the threads that run, take the int3 away if it is still there,
 *	and detach them all with the signals they are owed.
 */

static void
DetachAll(
    Inj *jPtr)
{
    int i;

    if (jPtr->gone) {
	return;			/* The kernel detached them. */
    }
    StopAll(jPtr);
    if (jPtr->bpIn) {
	for (i = 0; i < jPtr->n; i++) {
	    if (jPtr->state[i] == T_STOPPED && ptrace(PTRACE_POKETEXT,
		    jPtr->tids[i], (void *) jPtr->bp,
		    (void *) jPtr->origWord) == 0) {
		jPtr->bpIn = 0;
		break;
	    }
	}
	/*
	 * Traps of it that a stop took first (Pass kept their SIGTRAP).
	 */

	for (i = 0; i < jPtr->n; i++) {
	    struct user_regs_struct regs;

	    if (jPtr->state[i] == T_STOPPED && jPtr->pendSig[i] == SIGTRAP
		    && ptrace(PTRACE_GETREGS, jPtr->tids[i], NULL, &regs) == 0
		    && regs.rip == jPtr->bp + 1) {
		regs.rip = jPtr->bp;
		ptrace(PTRACE_SETREGS, jPtr->tids[i], NULL, &regs);
		jPtr->pendSig[i] = 0;
	    }
	}
    }
    for (i = 0; i < jPtr->n; i++) {
	if (jPtr->state[i] == T_STOPPED) {
	    ptrace(PTRACE_DETACH, jPtr->tids[i], NULL,
		    (void *) (long) jPtr->pendSig[i]);
	}
	jPtr->state[i] = T_GONE;
    }
}

/*
 * SymbolIn --
 *
 *	The address of function "name" in the target's module whose file
 *	name starts with prefix (its symbol table, or its dynamic one), or 0.
 */

typedef struct SymQuery {
    const char *prefix;
    const char *name;
    uintptr_t addr;
} SymQuery;

static int
SymbolCb(
    Dwfl_Module *mod,
    void **userdata,
    const char *modName,
    Dwarf_Addr start,
    void *arg)
{
    SymQuery *qPtr = (SymQuery *) arg;
    const char *base = modName ? strrchr(modName, '/') : NULL;
    size_t len = strlen(qPtr->name);
    int i, n;

    (void) userdata;
    (void) start;
    base = base ? base + 1 : modName;
    if (base == NULL || strncmp(base, qPtr->prefix, strlen(qPtr->prefix))) {
	return DWARF_CB_OK;
    }
    n = dwfl_module_getsymtab(mod);
    for (i = 1; i < n; i++) {
	GElf_Sym sym;
	GElf_Addr addr;
	const char *s = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL,
		NULL, NULL);

	/*
	 * A full symbol table names versions ("dlopen@@GLIBC_2.34").
	 */

	if (s != NULL && GELF_ST_TYPE(sym.st_info) == STT_FUNC
		&& sym.st_shndx != SHN_UNDEF
		&& strncmp(s, qPtr->name, len) == 0
		&& (s[len] == 0 || s[len] == '@')) {
	    qPtr->addr = addr;
	    return DWARF_CB_ABORT;
	}
    }
    return DWARF_CB_OK;
}

static uintptr_t
SymbolIn(
    Target *tPtr,
    const char *prefix,
    const char *name)
{
    SymQuery q;

    q.prefix = prefix;
    q.name = name;
    q.addr = 0;
    dwfl_getmodules(tPtr->dwfl, SymbolCb, &q, 0);
    return q.addr;
}

/*
 * Call --
 *
 *	Call fn(a1, a2) in thread i (stopped at the breakpoint, its
 *	registers in *savedPtr), the data (strings) copied below its stack
 *	first: a1/a2 that are ~0 - k stand for the address of data + k.
 *	Returns 1 with the result in *resPtr, 0 when the process exited or
 *	the call did not return as it should (the message in errBuf).
 */

#define DATA_ARG(off)	(~(uintptr_t) 0 - (uintptr_t) (off))
#define IS_DATA_ARG(a)	((a) > ~(uintptr_t) 0 - 65536)

static int
Call(
    Inj *jPtr,
    int i,
    const struct user_regs_struct *savedPtr,
    uintptr_t fn,
    uintptr_t a1,
    uintptr_t a2,
    const char *data,
    size_t dataLen,
    uintptr_t *resPtr,
    char *errBuf,
    size_t errLen)
{
    struct user_regs_struct regs = *savedPtr;
    pid_t tid = jPtr->tids[i];
    uintptr_t dataAddr, sp, zero = 0;
    int idx, status;
    double deadline = NowUs() + 120e6;

    dataAddr = (savedPtr->rsp - 128 - dataLen - 64) & ~(uintptr_t) 15;
    sp = dataAddr - 8;		/* At entry, rsp + 8 is 16-aligned. */
    if ((dataLen && !WriteMem(jPtr->pid, dataAddr, data, dataLen))
	    || !WriteMem(jPtr->pid, sp, &zero, sizeof(zero))) {
	snprintf(errBuf, errLen, "cannot write the call's stack: %s",
		strerror(errno));
	return 0;
    }
    if (IS_DATA_ARG(a1)) {
	a1 = dataAddr + (~(uintptr_t) 0 - a1);
    }
    if (IS_DATA_ARG(a2)) {
	a2 = dataAddr + (~(uintptr_t) 0 - a2);
    }
    regs.rsp = sp;
    regs.rip = fn;
    regs.rdi = a1;
    regs.rsi = a2;
    regs.rax = 0;
    regs.orig_rax = -1;		/* No system call to restart. */
    if (ptrace(PTRACE_SETREGS, tid, NULL, &regs) != 0) {
	snprintf(errBuf, errLen, "cannot set registers: %s",
		strerror(errno));
	return 0;
    }
    Continue(jPtr, i, 0);
    for (;;) {
	switch (NextEvent(jPtr, deadline, &idx, &status)) {
	case -1:
	    snprintf(errBuf, errLen, "process %d exited during the call",
		    (int) jPtr->pid);
	    return 0;
	case 0:
	    snprintf(errBuf, errLen, "the call did not return in 120 s");
	    return 0;
	}
	if (idx == i && (status >> 16) == 0 && WSTOPSIG(status) == SIGSEGV
		&& ptrace(PTRACE_GETREGS, tid, NULL, &regs) == 0) {
	    if (regs.rip == 0) {
		*resPtr = regs.rax;
		return 1;	/* Our return to 0: never delivered. */
	    }
	    snprintf(errBuf, errLen, "the call faulted at 0x%lx",
		    (unsigned long) regs.rip);
	    return 0;
	}
	Pass(jPtr, idx, status, 0);
    }
}

/*
 * ReadStr --
 *
 *	A string of the target (at most max-1 bytes) into buf.
 */

static void
ReadStr(
    Target *tPtr,
    uintptr_t addr,
    char *buf,
    size_t max)
{
    size_t got = 0;

    buf[0] = 0;
    while (got + 1 < max) {
	size_t chunk = 256;

	if (chunk > max - 1 - got) {
	    chunk = max - 1 - got;
	}
	/*
	 * A chunk that crosses into an unmapped page: byte by byte.
	 */

	if (!CprofRmReadMem(tPtr, addr + got, buf + got, chunk)) {
	    if (!CprofRmReadMem(tPtr, addr + got, buf + got, 1)) {
		break;
	    }
	    chunk = 1;
	}
	if (memchr(buf + got, 0, chunk) != NULL) {
	    return;
	}
	got += chunk;
    }
    buf[got] = 0;
}

/*
 * TclcprofMapped --
 *
 *	Whether the target maps a tclcprof library: 0 none, 1 this very file
 *	(device and inode of own), 2 another; *baseOut gets the load
 *	address of this one.
 */

static int
TclcprofMapped(
    pid_t pid,
    const struct stat *own,
    uintptr_t *baseOut)
{
    char path[64], line[1200];
    FILE *f;
    int result = 0;

    snprintf(path, sizeof(path), "/proc/%d/maps", (int) pid);
    f = fopen(path, "re");
    if (f == NULL) {
	return 0;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
	unsigned long lo, hi, off, inode;
	unsigned int major, minor;
	char perms[8], file[1024];
	const char *base;

	file[0] = 0;
	if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu %1023s", &lo, &hi, perms,
		&off, &major, &minor, &inode, file) < 7 || file[0] != '/') {
	    continue;
	}
	base = strrchr(file, '/') + 1;
	if (strstr(base, "tclcprof") == NULL || strstr(base, ".so") == NULL
		|| strstr(base, "preload") != NULL) {
	    continue;
	}
	if (inode == (unsigned long) own->st_ino
		&& makedev(major, minor) == own->st_dev) {
	    if (off == 0 && result == 0) {
		*baseOut = lo;
	    }
	    if (result == 0) {
		result = 1;
	    }
	} else {
	    result = 2;
	}
    }
    fclose(f);
    return result;
}

#endif /* __x86_64__ */

/*
 *----------------------------------------------------------------------
 *
 * CprofRemoteInjectObjCmd --
 *
 *	::tclcprof::attach::Inject pid request ?timeoutMs?
 *
 *	Have process pid evaluate "::tclcprof::attach::Injected request"
 *	(library/attachinject.tcl) at a safe point of its interpreter,
 *	tclcprof loaded into it first. timeoutMs (5000) bounds the wait for
 *	the safe point.
 *
 * Results:
 *	A dict: status ok|error, errorcode, result (the target's answer),
 *	interp (the path of the interp, its thread's top one), tid (its
 *	thread), insert_ms (the threads stopped to insert the breakpoint),
 *	wait_ms (from then to the safe point), held_ms (the thread held by
 *	the tracer there: the two calls), call_ms, stall_ms (from the safe
 *	point to the answer: the time the thread did none of the program's
 *	work, the handler's included), stepped (hits of other threads
 *	stepped over). Errors
 *	TCLCPROF ATTACH NOPID, PERM, PTRACE, LAYOUT, NOTCL, NOINTERP, LOADED
 *	(another tclcprof in the process), TIMEOUT, EXITED, INJECT,
 *	PLATFORM.
 *
 *----------------------------------------------------------------------
 */

int
CprofRemoteInjectObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
#if !defined(__x86_64__)
    (void) clientData;
    (void) objc;
    (void) objv;
    return CprofRmError(interp, "PLATFORM", "loading tclcprof into a "
	    "running process (-mode memory, exact or both) is supported on "
	    "x86-64 Linux only");
#else
    static Tcl_Mutex injMutex;
    Target target, *tPtr = &target;
    Inj inj, *jPtr = &inj;
    int pid, timeoutMs = 5000, i, idx, status, code = TCL_ERROR, hitIdx = -1;
    int mapped, stepSig;
    uintptr_t tclAsyncOff, dlopenAddr, dlerrorAddr, handle, res, ownBias;
    uintptr_t targetBase = 0, injectAddr, chosen = 0, flagAddr = 0;
    uintptr_t seqAddr, answerAddr;
    int seq0 = 0, unblocked = 0;
    void *fn;
    Dl_info info, ownInfo;
    struct link_map *ownMap = NULL;
    struct stat ownStat;
    char libPath[PATH_MAX], errBuf[512], *answer;
    const char *request;
    struct user_regs_struct saved;
    struct user_fpregs_struct savedFp;
    double t0, tInserted = 0, tHit = 0, tCalled = 0, tReleased, tEnd;
    sigset_t block, oldMask;
    Tcl_Obj *resObj, *pathObj = NULL;
    pid_t hitTid = 0;

    (void) clientData;
    if (objc < 3 || objc > 4) {
	Tcl_WrongNumArgs(interp, 1, objv, "pid request ?timeoutMs?");
	return TCL_ERROR;
    }
    if (Tcl_GetIntFromObj(NULL, objv[1], &pid) != TCL_OK || pid <= 0) {
	return CprofRmError(interp, "NOPID", "bad pid \"%s\": must be a "
		"process id", Tcl_GetString(objv[1]));
    }
    request = Tcl_GetString(objv[2]);
    if (objc == 4 && Tcl_GetIntFromObj(interp, objv[3], &timeoutMs)
	    != TCL_OK) {
	return TCL_ERROR;
    }
    if (pid == getpid()) {
	return CprofRmError(interp, "SELF", "cannot attach to this process "
		"itself: use tclcprof::start");
    }

    /*
     * This build's library: its file, and where Tclcprof_Inject lies in
     * it.
     */

    if (!dladdr1((void *) Tclcprof_Inject, &ownInfo, (void **) &ownMap,
	    RTLD_DL_LINKMAP) || ownInfo.dli_fname == NULL || ownMap == NULL
	    || realpath(ownInfo.dli_fname, libPath) == NULL
	    || stat(libPath, &ownStat) != 0) {
	return CprofRmError(interp, "INJECT", "cannot tell where libtclcprof "
		"was loaded from");
    }
    ownBias = ownMap->l_addr;

    /*
     * Tcl_AsyncInvoke in this process's libtcl, the target's (checked
     * by CprofRmPrepareProc).
     */

    fn = (void *) ((const TclStubs *) ((Interp *) interp)->stubTable)
	    ->tcl_AsyncInvoke;
    if (!dladdr(fn, &info) || info.dli_fbase == NULL) {
	return CprofRmError(interp, "LAYOUT", "cannot locate this process's "
		"Tcl_AsyncInvoke");
    }
    tclAsyncOff = (uintptr_t) fn - (uintptr_t) info.dli_fbase;

    Tcl_MutexLock(&injMutex);
    if (CprofRmPrepareProc(interp, tPtr, pid) != TCL_OK) {
	Tcl_MutexUnlock(&injMutex);
	return TCL_ERROR;
    }
    mapped = TclcprofMapped(pid, &ownStat, &targetBase);
    if (mapped == 2) {
	code = CprofRmError(interp, "LOADED", "process %d has tclcprof "
		"loaded already (it profiles itself): use its own "
		"tclcprof", pid);
	goto done;
    }
    if (mapped == 1) {
	int flag = 0;

	if (!READ(tPtr, targetBase + ((uintptr_t) &tclcprofInjected
		- ownBias), flag) || !flag) {
	    code = CprofRmError(interp, "LOADED", "process %d has tclcprof "
		    "loaded already (it profiles itself): use its own "
		    "tclcprof", pid);
	    goto done;
	}
    }
    dlopenAddr = SymbolIn(tPtr, "libc.so", "dlopen");
    dlerrorAddr = SymbolIn(tPtr, "libc.so", "dlerror");
    if (dlopenAddr == 0) {
	code = CprofRmError(interp, "INJECT", "no dlopen in the libc of "
		"process %d", pid);
	goto done;
    }

    memset(jPtr, 0, sizeof(*jPtr));
    jPtr->tPtr = tPtr;
    jPtr->pid = pid;
    jPtr->bp = tPtr->tclBase + tclAsyncOff;

    /*
     * SIGINT and SIGTERM wait until the process is let go (a tracer
     * killed while the int3 is in place would kill it).
     */

    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &block, &oldMask);

    t0 = NowUs();
    if (SeizeAll(interp, jPtr) != TCL_OK) {
	DetachAll(jPtr);
	goto unblock;
    }
    if (!StopAll(jPtr)) {
	code = CprofRmError(interp, "EXITED", "process %d has exited", pid);
	goto unblock;
    }

    /*
     * The interp: its thread's top one, in the main thread if one is
     * there (else the first found), preferring one that is evaluating.
     */

    {
	uintptr_t mainFs = 0;
	int best = -1;

	for (i = 0; i < jPtr->n; i++) {
	    struct user_regs_struct regs;

	    if (jPtr->tids[i] == pid && jPtr->state[i] == T_STOPPED
		    && ptrace(PTRACE_GETREGS, pid, NULL, &regs) == 0) {
		mainFs = regs.fs_base;
	    }
	}
	for (i = 0; i < tPtr->numInterps; i++) {
	    Tcl_ThreadId owner;
	    int levels = 0, score;
	    Tcl_Obj *p = CprofRmInterpPath(tPtr, tPtr->interps[i]);
	    Tcl_Size len = 0;

	    Tcl_IncrRefCount(p);
	    Tcl_ListObjLength(NULL, p, &len);
	    Tcl_DecrRefCount(p);
	    if (len != 0 || !READ(tPtr, tPtr->interps[i]
		    + offsetof(Interp, threadId), owner)) {
		continue;
	    }
	    READ(tPtr, tPtr->interps[i] + offsetof(Interp, numLevels),
		    levels);
	    score = ((uintptr_t) owner == mainFs ? 2 : 0) + (levels > 0);
	    if (score > best) {
		best = score;
		chosen = tPtr->interps[i];
	    }
	}
    }
    if (chosen == 0 || !READ(tPtr, chosen + offsetof(Interp, asyncReadyPtr),
	    flagAddr) || flagAddr == 0) {
	DetachAll(jPtr);
	code = CprofRmError(interp, "NOINTERP", "no Tcl interpreter found "
		"in process %d", pid);
	goto unblock;
    }
    jPtr->flagAddr = flagAddr;

    /*
     * The int3 and the flag, through a stopped thread; then every
     * thread runs on.
     */

    for (i = 0; i < jPtr->n; i++) {
	if (jPtr->state[i] == T_STOPPED && PokeByte(jPtr, jPtr->tids[i],
		jPtr->bp, 0xcc, &jPtr->origWord)) {
	    jPtr->bpIn = jPtr->bpEver = 1;
	    break;
	}
    }
    {
	int one = 1;

	if (!jPtr->bpIn || !WriteMem(pid, flagAddr, &one, sizeof(one))) {
	    DetachAll(jPtr);
	    code = CprofRmError(interp, "INJECT", "cannot write into "
		    "process %d: %s", pid, strerror(errno));
	    goto unblock;
	}
    }
    for (i = 0; i < jPtr->n; i++) {
	if (jPtr->state[i] == T_STOPPED) {
	    jPtr->wantStop[i] = 0;
	    Continue(jPtr, i, jPtr->pendSig[i]);
	    jPtr->pendSig[i] = 0;
	}
    }
    tInserted = NowUs();

    /*
     * The wait for the safe point: a trap at the int3 in the interp's
     * thread. Another thread's is stepped over.
     */

    for (;;) {
	int r = NextEvent(jPtr, tInserted + timeoutMs * 1000.0, &idx,
		&status);
	struct user_regs_struct regs;
	Tcl_ThreadId owner = NULL;

	if (r < 0) {
	    code = CprofRmError(interp, "EXITED", "process %d exited before "
		    "it reached a safe point", pid);
	    goto unblock;
	}
	if (r == 0) {
	    DetachAll(jPtr);
	    code = CprofRmError(interp, "TIMEOUT", "process %d did not reach "
		    "a safe point (a command boundary of its Tcl interpreter) "
		    "within %d ms: it may be idle in the event loop; the "
		    "process was left as it was", pid, timeoutMs);
	    goto unblock;
	}
	if ((status >> 16) != 0 || WSTOPSIG(status) != SIGTRAP
		|| ptrace(PTRACE_GETREGS, jPtr->tids[idx], NULL, &regs) != 0
		|| regs.rip != jPtr->bp + 1) {
	    Pass(jPtr, idx, status, 0);
	    continue;
	}
	READ(tPtr, chosen + offsetof(Interp, threadId), owner);
	if ((uintptr_t) owner == regs.fs_base) {
	    hitIdx = idx;
	    saved = regs;
	    break;
	}

	/*
	 * Another thread: the byte back, one step, the int3 again.
	 */

	regs.rip = jPtr->bp;
	ptrace(PTRACE_SETREGS, jPtr->tids[idx], NULL, &regs);
	ptrace(PTRACE_POKETEXT, jPtr->tids[idx], (void *) jPtr->bp,
		(void *) jPtr->origWord);
	jPtr->bpIn = 0;
	stepSig = 0;
	jPtr->stepped++;
	if (ptrace(PTRACE_SINGLESTEP, jPtr->tids[idx], NULL, NULL) == 0) {
	    jPtr->state[idx] = T_RUNNING;
	    while (waitpid(jPtr->tids[idx], &status, __WALL) < 0
		    && errno == EINTR) {
	    }
	    jPtr->state[idx] = T_STOPPED;

	    /*
	     * A signal that came instead of the step's trap is the
	     * program's: given on.
	     */

	    if (WIFSTOPPED(status) && (status >> 16) == 0
		    && WSTOPSIG(status) != SIGTRAP) {
		stepSig = WSTOPSIG(status);
	    }
	}
	if (PokeByte(jPtr, jPtr->tids[idx], jPtr->bp, 0xcc, NULL)) {
	    jPtr->bpIn = 1;
	}
	{
	    int one = 1;

	    WriteMem(pid, flagAddr, &one, sizeof(one));
	}
	Continue(jPtr, idx, stepSig);
    }
    tHit = NowUs();
    hitTid = jPtr->tids[hitIdx];

    /*
     * At the safe point: the int3 away first, the registers kept; the
     * thread is held at the function's entry.
     */

    ptrace(PTRACE_POKETEXT, hitTid, (void *) jPtr->bp,
	    (void *) jPtr->origWord);
    jPtr->bpIn = 0;
    saved.rip = jPtr->bp;
    if (ptrace(PTRACE_GETFPREGS, hitTid, NULL, &savedFp) != 0) {
	ptrace(PTRACE_SETREGS, hitTid, NULL, &saved);
	DetachAll(jPtr);
	code = CprofRmError(interp, "INJECT", "cannot read the registers of "
		"thread %d", (int) hitTid);
	goto unblock;
    }
    pathObj = CprofRmInterpPath(tPtr, chosen);
    Tcl_IncrRefCount(pathObj);

    /*
     * dlopen(libPath, RTLD_NOW), then Tclcprof_Inject(interp, request).
     */

    if (!Call(jPtr, hitIdx, &saved, dlopenAddr, DATA_ARG(0), RTLD_NOW,
	    libPath, strlen(libPath) + 1, &handle, errBuf, sizeof(errBuf))) {
	goto callFailed;
    }
    if (handle == 0) {
	uintptr_t msg = 0;
	char text[400];

	text[0] = 0;
	if (dlerrorAddr && Call(jPtr, hitIdx, &saved, dlerrorAddr, 0, 0,
		NULL, 0, &msg, errBuf, sizeof(errBuf)) && msg) {
	    ReadStr(tPtr, msg, text, sizeof(text));
	}
	snprintf(errBuf, sizeof(errBuf), "dlopen of %s failed in process "
		"%d: %s", libPath, pid, text);
	goto callFailed;
    }
    if (!READ(tPtr, handle + offsetof(struct link_map, l_addr),
	    targetBase)) {
	snprintf(errBuf, sizeof(errBuf), "cannot read dlopen's answer");
	goto callFailed;
    }
    injectAddr = targetBase + ((uintptr_t) Tclcprof_Inject - ownBias);
    seqAddr = targetBase + ((uintptr_t) &tclcprofInjectSeq - ownBias);
    answerAddr = targetBase + ((uintptr_t) tclcprofInjectAnswer - ownBias);
    if (!READ(tPtr, seqAddr, seq0)) {
	snprintf(errBuf, sizeof(errBuf), "cannot read the library in the "
		"process");
	goto callFailed;
    }
    if (!Call(jPtr, hitIdx, &saved, injectAddr, chosen, DATA_ARG(0),
	    request, strlen(request) + 1, &res, errBuf, sizeof(errBuf))) {
	goto callFailed;
    }
    if (res != 0) {
	char text[400];

	ReadStr(tPtr, res, text, sizeof(text));
	snprintf(errBuf, sizeof(errBuf), "%s", text);
	goto callFailed;
    }
    tCalled = NowUs();

    /*
     * Back as it was: registers, then the thread let go first. Its
     * Tcl_AsyncInvoke runs the request (InjectAsync) at once.
     */

    ptrace(PTRACE_SETFPREGS, hitTid, NULL, &savedFp);
    ptrace(PTRACE_SETREGS, hitTid, NULL, &saved);
    ptrace(PTRACE_DETACH, hitTid, NULL, NULL);
    jPtr->state[hitIdx] = T_GONE;
    tReleased = NowUs();
    DetachAll(jPtr);
    pthread_sigmask(SIG_SETMASK, &oldMask, NULL);
    unblocked = 1;

    /*
     * The answer: polled (the process runs; 60 s at most).
     */

    for (;;) {
	int seq = seq0;

	if (READ(tPtr, seqAddr, seq) && seq != seq0) {
	    break;
	}
	if (CprofRmProcessGone(pid)) {
	    code = CprofRmError(interp, "EXITED", "process %d exited before "
		    "it answered", pid);
	    goto unblock;
	}
	if (NowUs() - tReleased > 60e6) {
	    code = CprofRmError(interp, "INJECT", "process %d did not "
		    "answer within 60 s", pid);
	    goto unblock;
	}
	usleep(200);
    }
    tEnd = NowUs();
    answer = ckalloc(8192);
    ReadStr(tPtr, answerAddr, answer, 8192);
    {
	char *nl1 = strchr(answer, '\n'), *nl2 = nl1 ? strchr(nl1 + 1, '\n')
		: NULL;

	resObj = Tcl_NewDictObj();
	if (nl1) {
	    *nl1 = 0;
	}
	if (nl2) {
	    *nl2 = 0;
	}
	Tcl_DictObjPut(NULL, resObj, Tcl_NewStringObj("status", -1),
		Tcl_NewStringObj(answer, -1));
	Tcl_DictObjPut(NULL, resObj, Tcl_NewStringObj("errorcode", -1),
		Tcl_NewStringObj(nl1 ? nl1 + 1 : "", -1));
	Tcl_DictObjPut(NULL, resObj, Tcl_NewStringObj("result", -1),
		Tcl_NewStringObj(nl2 ? nl2 + 1 : "", -1));
	Tcl_DictObjPut(NULL, resObj, Tcl_NewStringObj("interp", -1), pathObj);
	Tcl_DictObjPut(NULL, resObj, Tcl_NewStringObj("tid", -1),
		Tcl_NewIntObj((int) hitTid));
	Tcl_DictObjPut(NULL, resObj, Tcl_NewStringObj("insert_ms", -1),
		Tcl_NewDoubleObj((tInserted - t0) / 1e3));
	Tcl_DictObjPut(NULL, resObj, Tcl_NewStringObj("wait_ms", -1),
		Tcl_NewDoubleObj((tHit - tInserted) / 1e3));
	Tcl_DictObjPut(NULL, resObj, Tcl_NewStringObj("held_ms", -1),
		Tcl_NewDoubleObj((tReleased - tHit) / 1e3));
	Tcl_DictObjPut(NULL, resObj, Tcl_NewStringObj("call_ms", -1),
		Tcl_NewDoubleObj((tCalled - tHit) / 1e3));
	Tcl_DictObjPut(NULL, resObj, Tcl_NewStringObj("stall_ms", -1),
		Tcl_NewDoubleObj((tEnd - tHit) / 1e3));
	Tcl_DictObjPut(NULL, resObj, Tcl_NewStringObj("stepped", -1),
		Tcl_NewIntObj(jPtr->stepped));
	Tcl_SetObjResult(interp, resObj);
	ckfree(answer);
    }
    code = TCL_OK;
    goto unblock;

  callFailed:
    if (!jPtr->gone) {
	ptrace(PTRACE_SETFPREGS, hitTid, NULL, &savedFp);
	ptrace(PTRACE_SETREGS, hitTid, NULL, &saved);
	DetachAll(jPtr);
	code = CprofRmError(interp, "INJECT", "%s", errBuf);
    } else {
	code = CprofRmError(interp, "EXITED", "%s", errBuf);
    }

  unblock:
    if (pathObj != NULL) {
	Tcl_DecrRefCount(pathObj);
    }
    if (!unblocked) {
	pthread_sigmask(SIG_SETMASK, &oldMask, NULL);
    }
  done:
    CprofRmEndDwfl(tPtr);
    Tcl_MutexUnlock(&injMutex);
    return code;
#endif
}
