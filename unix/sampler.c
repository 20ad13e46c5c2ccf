/*
 * sampler.c --
 *
 *	The timer-signal sampler. Each profiled thread gets a POSIX timer of
 *	its own (timer_create with SIGEV_THREAD_ID on the thread's CPU clock
 *	or on CLOCK_MONOTONIC), delivering a signal to that thread only. The
 *	handler walks the native stack with the cached call frame rules of
 *	unwindcfi.c (libgcc's _Unwind_Backtrace, unwindgcc.c, where they
 *	cannot go: async-signal-safe on glibc >= 2.35, which finds unwind
 *	tables with _dl_find_object), takes the labels in effect
 *	(capturelabels.c) and copies the Tcl frames of the level stack (or
 *	Tcl's own, captureframes.c) into a preallocated ring slot (when the ring is full, into the spool of
 *	samplerspool.c). Everything else (splicing, symbolizing,
 *	aggregating) happens later in normal context.
 *
 *	Why not libunwind in the handler: libunwind 1.6 deadlocked when
 *	sampling code that does malloc/free and dlopen/dlclose; and it is far
 *	slower. Why not setitimer: it is process-directed, has no overrun
 *	count and survives execve.
 *
 *	Signal safety: every function marked so below touches only
 *	preallocated memory, thread-local data, atomics and raw syscalls
 *	(clock_gettime through the vDSO).
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _GNU_SOURCE
#   define _GNU_SOURCE
#endif
#include "samplerInt.h"
#include "arch.h"
#include "captureframes.h"
#include "unwindcfi.h"
#include "unwindgcc.h"

#if defined(__x86_64__)
/* The cached walk's registers are arch.h's callee-saved ones. */
typedef char SavedRegsAgree[CPROF_NSAVED == CPROF_CFI_SAVED ? 1 : -1];
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/syscall.h>

/*
 * Ring size when the caller gives none: 1024 slots of 6.4 KB, a second at
 * 1000 Hz between drains (cmdrun.c gives fewer at lower rates).
 */

#define RING_SLOTS 1024

/*
 * The handler's way to its thread's sampler.
 */

static __thread CprofSampler *tlsSampler
	__attribute__((tls_model("initial-exec")));

/*
 * Process-wide signal state, under signalMutex.
 */

static struct {
    int signo;			/* Signal in use, 0 if none claimed. */
    int lastSigno;		/* The last one used, for status after
				 * stop. */
    int users;			/* Armed samplers. */
    struct sigaction oldAction;	/* To restore when the last one stops. */
    int atforkDone;
} sig;
TCL_DECLARE_MUTEX(signalMutex)

static volatile uint64_t foreignSignals;
static volatile int forking;	/* Set by the atfork prepare handler. */

static void		SignalHandler(int signo, siginfo_t *infoPtr,
			    void *context);

/*
 *----------------------------------------------------------------------
 *
 * Atfork handlers --
 *
 *	Around fork, the signal is blocked in the forking thread, and the
 *	handlers of other threads stand aside. The child inherits no POSIX
 *	timers: the forking thread's sampler is marked, and made again in
 *	normal context by CprofSamplerAfterFork; CprofSamplerDisarm sees the
 *	pid changed and leaves the parent's timer alone.
 *
 *	In the parent, the fork's own time (the kernel copies the page
 *	tables in the parent: milliseconds for a process of a few hundred
 *	MB) is the thread's CPU time, and the timer's expirations during it
 *	wait as one blocked signal with overruns. AtforkParent lets that
 *	signal in with 'forking' cleared, and the handler's walk starts at
 *	fork, outside AtforkParent's caller: the time is charged to the
 *	command that forked (exec, open |), under fork, and no frame of the
 *	profiler's own handler is recorded. It used to be dropped (counted
 *	as 'forking'): a program that forked a large process often lost most
 *	of its time that way.
 *
 *----------------------------------------------------------------------
 */

static inline uint32_t	TimerWeight(CprofSampler *sPtr, int take);

static void
AtforkPrepare(void)
{
    sigset_t set;

    if (sig.signo > 0) {
	sigemptyset(&set);
	sigaddset(&set, sig.signo);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
    }
    forking = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static void
AtforkParent(void)
{
    sigset_t set;
    CprofSampler *sPtr = tlsSampler;

    if (sPtr != NULL) {
	sPtr->forkPc = (uintptr_t) __builtin_return_address(0);
    }
    forking = 0;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (sig.signo > 0) {
	sigemptyset(&set);
	sigaddset(&set, sig.signo);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    }
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (sPtr != NULL) {
	sPtr->forkPc = 0;
    }
}

static void
AtforkChild(void)
{
    sigset_t set;

    if (tlsSampler != NULL) {
	/*
	 * The forking thread samples: its next traced command (or the
	 * drain timer) makes the timer again (CprofSamplerAfterFork).
	 */

	tlsSampler->enabled = 0;
	tlsSampler->forked = 1;
	tlsSampler->needDrain = 1;
    }
    if (sig.signo > 0) {
	sigemptyset(&set);
	sigaddset(&set, sig.signo);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    }
    forking = 0;
}

/*
 *----------------------------------------------------------------------
 *
 * ClaimSignal, ReleaseSignal --
 *
 *	Install the handler on SIGPROF when nobody else handles it, else on
 *	a free real-time signal; restore the previous action when the last
 *	sampler stops. Called with signalMutex held.
 *
 *----------------------------------------------------------------------
 */

static int
ClaimSignal(
    Tcl_Interp *interp)
{
    struct sigaction sa, old;
    int signo;

    if (sig.users++ > 0) {
	return TCL_OK;
    }
    if (!sig.atforkDone) {
	pthread_atfork(AtforkPrepare, AtforkParent, AtforkChild);
	sig.atforkDone = 1;
    }
    signo = 0;
    if (sigaction(SIGPROF, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO)
	    && (old.sa_handler == SIG_DFL || old.sa_handler == SIG_IGN)) {
	signo = SIGPROF;
    } else {
	int s;

	for (s = SIGRTMIN + 4; s <= SIGRTMAX - 4; s++) {
	    if (sigaction(s, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO)
		    && old.sa_handler == SIG_DFL) {
		signo = s;
		break;
	    }
	}
    }
    if (signo == 0) {
	sig.users--;
	Tcl_SetObjResult(interp, Tcl_NewStringObj(
		"no free signal for the sampler: SIGPROF and the real-time "
		"signals are all handled by the program", -1));
	Tcl_SetErrorCode(interp, "TCLCPROF", "SIGNAL", NULL);
	return TCL_ERROR;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = SignalHandler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(signo, &sa, &sig.oldAction) != 0) {
	sig.users--;
	Tcl_SetObjResult(interp, Tcl_ObjPrintf(
		"cannot install the signal handler: %s", Tcl_ErrnoMsg(errno)));
	Tcl_SetErrorCode(interp, "TCLCPROF", "SIGNAL", NULL);
	return TCL_ERROR;
    }
    sig.signo = signo;
    sig.lastSigno = signo;
    return TCL_OK;
}

static void
ReleaseSignal(void)
{
    if (--sig.users > 0 || sig.signo == 0) {
	return;
    }
    sigaction(sig.signo, &sig.oldAction, NULL);
    sig.signo = 0;
}

/*
 * The library is unmapped while samplers are armed (Tcl's full
 * finalization, TCL_FINALIZE_ON_EXIT, unloads it without stopping them),
 * or the process exits: a timer signal must not reach a handler that is
 * gone. The program's own action comes back, or, where that was the
 * default (which would end the process), the signal is ignored.
 */

static void __attribute__((destructor))
SamplerAtUnload(void)
{
    struct sigaction sa;

    if (sig.signo > 0 && sig.users > 0) {
	sa = sig.oldAction;
	if (!(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_DFL) {
	    sa.sa_handler = SIG_IGN;
	}
	sigaction(sig.signo, &sa, NULL);
    }
}

/*
 * CprofSignalName --
 *
 *	The name of the sampler's signal: the one in use, else the last one
 *	used (status describes the last run after stop); "" before any.
 */

const char *
CprofSignalName(void)
{
    static char buf[32];
    int signo = (sig.signo != 0) ? sig.signo : sig.lastSigno;

    if (signo == 0) {
	return "";
    }
    if (signo == SIGPROF) {
	return "SIGPROF";
    }
    snprintf(buf, sizeof(buf), "SIGRTMIN+%d", signo - SIGRTMIN);
    return buf;
}

uint64_t
CprofForeignSignals(void)
{
    return __atomic_load_n(&foreignSignals, __ATOMIC_RELAXED);
}

double
CprofDefaultRate(
    int clock)
{
    /*
     * CPU-time timers are driven by the scheduler tick (HZ=250 on Debian
     * kernels): more than that is delivered as overruns. Wall-clock timers
     * are precise, but every signal interrupts a blocked thread.
     */

    return clock == CPROF_CLOCK_CPU ? 250.0 : 250.0;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSamplerCreate --
 *
 *	Allocate and pre-fault a sampler for the calling thread.
 *
 * Results:
 *	TCL_OK and *samplerPtrPtr, or TCL_ERROR with a TCLCPROF error.
 *
 *----------------------------------------------------------------------
 */

int
CprofSamplerCreate(
    Tcl_Interp *interp,
    CprofStack *stackPtr,
    const Tcl_Size *numLevelsPtr,
    int clock,
    double rate,
    int slots,			/* Ring slots, a power of two; 0: the
				 * default (RING_SLOTS). */
    CprofSampler **samplerPtrPtr)
{
    CprofSampler *sPtr;
    char msg[160];
    size_t bytes;

    if (slots <= 0 || (slots & (slots - 1)) != 0) {
	slots = RING_SLOTS;
    }
    bytes = (size_t) slots * sizeof(CprofSample);

    if (tlsSampler != NULL) {
	Tcl_SetObjResult(interp, Tcl_NewStringObj(
		"another interpreter of this thread is already sampling", -1));
	Tcl_SetErrorCode(interp, "TCLCPROF", "STATE", "BUSY", NULL);
	return TCL_ERROR;
    }
    if (!CprofUnwindReady(msg, sizeof(msg))) {
	Tcl_SetObjResult(interp, Tcl_ObjPrintf("cannot sample: %s", msg));
	Tcl_SetErrorCode(interp, "TCLCPROF", "NATIVE", NULL);
	return TCL_ERROR;
    }
    sPtr = (CprofSampler *) ckalloc(sizeof(CprofSampler));
    memset(sPtr, 0, sizeof(CprofSampler));
    sPtr->slots = (CprofSample *) ckalloc(bytes);
    memset(sPtr->slots, 0, bytes);	/* Pre-fault every page. */
    sPtr->mask = (uint32_t) slots - 1;
    sPtr->stackPtr = stackPtr;
    sPtr->labelsPtr = CprofLabelsThread();
    sPtr->numLevelsPtr = numLevelsPtr;
    sPtr->clock = clock;
    sPtr->rate = rate > 0 ? rate : CprofDefaultRate(clock);
    sPtr->spoolPtr = CprofSpoolNew();
    sPtr->checkPtr = (CprofSample *) ckalloc(sizeof(CprofSample));
    memset(sPtr->checkPtr, 0, sizeof(CprofSample));
    *samplerPtrPtr = sPtr;
    return TCL_OK;
}

/*
 * The bounds of the calling thread's stack, which the handler's cached
 * walk reads within (CprofCfiWalkFrom); none (the walk is libgcc's) when
 * they cannot be known.
 */

static void
ThreadStack(
    CprofSampler *sPtr)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;

    sPtr->stackLo = sPtr->stackHi = 0;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) {
	return;
    }
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
	sPtr->stackLo = (uintptr_t) addr;
	sPtr->stackHi = (uintptr_t) addr + size;
    }
    pthread_attr_destroy(&attr);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSamplerArm --
 *
 *	Claim the signal, create the thread's timer and start it with a
 *	random first expiry.
 *
 *----------------------------------------------------------------------
 */

int
CprofSamplerArm(
    Tcl_Interp *interp,
    CprofSampler *sPtr)
{
    struct sigevent sev;
    struct itimerspec its;
    timer_t timer;
    clockid_t clockId;
    uint64_t interval, first;

    if (sPtr->armed) {
	return TCL_OK;
    }
    Tcl_MutexLock(&signalMutex);
    if (ClaimSignal(interp) != TCL_OK) {
	Tcl_MutexUnlock(&signalMutex);
	return TCL_ERROR;
    }
    sPtr->signo = sig.signo;
    Tcl_MutexUnlock(&signalMutex);

    sPtr->pid = getpid();
    sPtr->tid = (pid_t) syscall(SYS_gettid);
    ThreadStack(sPtr);
    CprofCfiInit();
    CprofCfiRenew();
    clockId = sPtr->clock == CPROF_CLOCK_CPU ? CLOCK_THREAD_CPUTIME_ID
	    : CLOCK_MONOTONIC;
    memset(&sev, 0, sizeof(sev));
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = sPtr->signo;
    sev._sigev_un._tid = sPtr->tid;
    if (timer_create(clockId, &sev, &timer) != 0) {
	int err = errno;

	Tcl_MutexLock(&signalMutex);
	ReleaseSignal();
	Tcl_MutexUnlock(&signalMutex);
	Tcl_SetObjResult(interp, Tcl_ObjPrintf(
		"cannot create the sampling timer: %s", Tcl_ErrnoMsg(err)));
	Tcl_SetErrorCode(interp, "TCLCPROF", "TIMER", Tcl_ErrnoId(), NULL);
	return TCL_ERROR;
    }
    sPtr->timer = (void *) timer;

    tlsSampler = sPtr;
    __atomic_store_n(&sPtr->enabled, 1, __ATOMIC_RELEASE);

    interval = (uint64_t) (1e9 / sPtr->rate);
    if (interval < 10000) {
	interval = 10000;
    }
    first = 1 + (uint64_t) (CprofClockNs(CLOCK_MONOTONIC) % interval);
    its.it_interval.tv_sec = interval / 1000000000u;
    its.it_interval.tv_nsec = interval % 1000000000u;
    its.it_value.tv_sec = first / 1000000000u;
    its.it_value.tv_nsec = first % 1000000000u;
    sPtr->startCpuNs = CprofClockNs(CLOCK_THREAD_CPUTIME_ID);
    sPtr->startWallNs = CprofClockNs(CLOCK_MONOTONIC);
    sPtr->weighClock = (int) clockId;
    sPtr->weighFirstNs = (clockId == CLOCK_THREAD_CPUTIME_ID
	    ? sPtr->startCpuNs : sPtr->startWallNs) + first;
    sPtr->weighIntervalNs = interval;
    sPtr->weighed = 0;
    if (timer_settime(timer, 0, &its, NULL) != 0) {
	int err = errno;

	CprofSamplerDisarm(sPtr);
	Tcl_SetObjResult(interp, Tcl_ObjPrintf(
		"cannot start the sampling timer: %s", Tcl_ErrnoMsg(err)));
	Tcl_SetErrorCode(interp, "TCLCPROF", "TIMER", Tcl_ErrnoId(), NULL);
	return TCL_ERROR;
    }
    sPtr->armed = 1;
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSamplerDisarm --
 *
 *	Stop the timer and the handler for this sampler. Must run in the
 *	sampled thread. A signal already queued for the thread is consumed
 *	here, so that restoring the previous action cannot let a stray
 *	SIGPROF kill the process.
 *
 *----------------------------------------------------------------------
 */

void
CprofSamplerDisarm(
    CprofSampler *sPtr)
{
    sigset_t set, old;
    struct timespec zero = {0, 0};
    siginfo_t info;

    if (sPtr->timer == NULL && !sPtr->armed) {
	return;
    }
    if (sPtr->pid == getpid() && sPtr->signo > 0) {
	/*
	 * The timer's last signal, if one is on its way, is taken here
	 * rather than by the handler: its weight (on a busy machine the
	 * kernel may send one signal for tens of expirations) is kept for
	 * the caller to charge.
	 */

	sigemptyset(&set);
	sigaddset(&set, sPtr->signo);
	pthread_sigmask(SIG_BLOCK, &set, &old);
    }
    __atomic_store_n(&sPtr->enabled, 0, __ATOMIC_RELEASE);
    if (sPtr->pid == getpid()) {
	timer_delete((timer_t) sPtr->timer);
	sPtr->cpuNs += CprofClockNs(CLOCK_THREAD_CPUTIME_ID) - sPtr->startCpuNs;
	sPtr->wallNs += CprofClockNs(CLOCK_MONOTONIC) - sPtr->startWallNs;
	if (sPtr->signo > 0) {
	    /*
	     * The expirations due that no sample stood for (a signal still
	     * queued, or ones the kernel had not noticed yet), then the
	     * queued signal itself, which stands for nothing more.
	     */

	    if (sPtr->armed) {
		sPtr->tailWeight += TimerWeight(sPtr, 0);
	    }
	    while (sigtimedwait(&set, &info, &zero) > 0) {
		/* Its expirations are counted above. */
	    }
	    pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
    }
    sPtr->timer = NULL;
    if (tlsSampler == sPtr) {
	tlsSampler = NULL;
    }
    if (sPtr->armed) {
	sPtr->armed = 0;
	Tcl_MutexLock(&signalMutex);
	if (sPtr->pid == getpid()) {
	    ReleaseSignal();
	}
	Tcl_MutexUnlock(&signalMutex);
    }
}

/*
 * In a child process, at the first drain after fork: a sampler that was
 * armed in the parent gets a timer of the child's own. Errors (no timer
 * can be made) leave it disarmed; they are reported as background errors.
 */

void
CprofSamplerAfterFork(
    Tcl_Interp *interp,
    CprofSampler *sPtr)
{
    sPtr->forked = 0;
    if (sPtr->armed && sPtr->pid != getpid()) {
	Tcl_InterpState saved = Tcl_SaveInterpState(interp, TCL_OK);

	CprofSamplerDisarm(sPtr);
	if (CprofSamplerArm(interp, sPtr) != TCL_OK) {
	    Tcl_AddErrorInfo(interp,
		    "\n    (tclcprof sampling again after fork)");
	    Tcl_BackgroundException(interp, TCL_ERROR);
	}
	Tcl_RestoreInterpState(interp, saved);
    }
}

void
CprofSamplerDestroy(
    CprofSampler *sPtr)
{
    CprofSamplerDisarm(sPtr);
    CprofSamplerDetach(sPtr);
    if (sPtr->spoolPtr != NULL) {
	CprofSpoolDelete(sPtr->spoolPtr);
    }
    if (sPtr->slots != NULL) {
	ckfree(sPtr->slots);
    }
    if (sPtr->checkPtr != NULL) {
	ckfree(sPtr->checkPtr);
    }
    ckfree(sPtr);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSamplerCreateIdle, CprofSamplerAttach, CprofSamplerDetach,
 * CprofSamplerCurrent --
 *
 *	A sampler that never takes timer samples (no ring, no spool, no
 *	timer): the record through which the memory hooks (hookmem.c) find
 *	the calling thread's level stack when no timer samples it (mode
 *	memory alone). Attach makes it the thread's sampler (what
 *	CprofSamplerCurrent returns in that thread; CprofSamplerArm does
 *	the same for a sampler with a timer); Detach undoes it.
 *
 *----------------------------------------------------------------------
 */

int
CprofSamplerCreateIdle(
    Tcl_Interp *interp,
    CprofStack *stackPtr,
    const Tcl_Size *numLevelsPtr,
    CprofSampler **samplerPtrPtr)
{
    CprofSampler *sPtr;

    if (tlsSampler != NULL) {
	Tcl_SetObjResult(interp, Tcl_NewStringObj(
		"another interpreter of this thread is already sampling", -1));
	Tcl_SetErrorCode(interp, "TCLCPROF", "STATE", "BUSY", NULL);
	return TCL_ERROR;
    }
    sPtr = (CprofSampler *) ckalloc(sizeof(CprofSampler));
    memset(sPtr, 0, sizeof(CprofSampler));
    sPtr->stackPtr = stackPtr;
    sPtr->labelsPtr = CprofLabelsThread();
    sPtr->numLevelsPtr = numLevelsPtr;
    sPtr->rate = CprofDefaultRate(CPROF_CLOCK_CPU);
    *samplerPtrPtr = sPtr;
    return TCL_OK;
}

void
CprofSamplerAttach(
    CprofSampler *sPtr)
{
    if (tlsSampler == NULL) {
	tlsSampler = sPtr;
    }
}

void
CprofSamplerDetach(
    CprofSampler *sPtr)
{
    if (tlsSampler == sPtr) {
	tlsSampler = NULL;
    }
}

CprofSampler *
CprofSamplerCurrent(void)
{
    return tlsSampler;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSamplerPeek, CprofSamplerRelease --
 *
 *	The consumer side of the ring (normal context, the sampled
 *	thread): the oldest unread sample, or NULL; then release it.
 *
 *----------------------------------------------------------------------
 */

CprofSample *
CprofSamplerPeek(
    CprofSampler *sPtr)
{
    uint32_t head = __atomic_load_n(&sPtr->head, __ATOMIC_ACQUIRE);

    if (head == sPtr->tail) {
	return NULL;
    }
    return &sPtr->slots[sPtr->tail & sPtr->mask];
}

/*
 * The n-th sample after the oldest still in the ring (0: the one Peek
 * gives), or NULL. Normal context, in the sampled thread.
 */

CprofSample *
CprofSamplerPeekAt(
    CprofSampler *sPtr,
    uint32_t n)
{
    uint32_t head = __atomic_load_n(&sPtr->head, __ATOMIC_ACQUIRE);

    if (head - sPtr->tail <= n) {
	return NULL;
    }
    return &sPtr->slots[(sPtr->tail + n) & sPtr->mask];
}

void
CprofSamplerRelease(
    CprofSampler *sPtr)
{
    __atomic_store_n(&sPtr->tail, sPtr->tail + 1, __ATOMIC_RELEASE);
}

/*
 *----------------------------------------------------------------------
 *
 * HistBucket, CprofHistBounds --
 *
 *	Handler-time histogram: four buckets per power of two, so that a
 *	quantile is known within about 19%.
 *
 * Signal safety:
 *	HistBucket is pure arithmetic.
 *
 *----------------------------------------------------------------------
 */

static inline int
HistBucket(
    uint64_t d)
{
    int b, bucket;

    if (d < 4) {
	return (int) d;
    }
    b = 63 - __builtin_clzll(d);
    bucket = 4 * b + (int) ((d >> (b - 2)) & 3);
    return bucket < CPROF_HIST_BUCKETS ? bucket : CPROF_HIST_BUCKETS - 1;
}

void
CprofHistBounds(
    int bucket,
    double *loPtr,
    double *hiPtr)
{
    int b = bucket / 4, q = bucket % 4;

    if (bucket < 4) {
	*loPtr = bucket;
	*hiPtr = bucket + 1;
	return;
    }
    *loPtr = (double) (1ull << b) * (1.0 + q / 4.0);
    *hiPtr = (double) (1ull << b) * (1.0 + (q + 1) / 4.0);
}

/*
 *----------------------------------------------------------------------
 *
 * SignalHandler --
 *
 *	Take one sample of the current thread.
 *
 * Signal safety:
 *	Preallocated ring memory, the thread's own level stack (read with
 *	acquire loads: the trace callback commits frames with release
 *	stores and never frees an array the handler may hold), atomics,
 *	clock_gettime (vDSO), and libgcc's unwinder.
 *
 *----------------------------------------------------------------------
 */

/*
 * -capture check: a hash of a level stack's frames as the check compares
 * them (command and level; method, event and wait frames, which only the
 * wrapper has, and frames above Tcl's current level left out), the hash
 * without the last frame counted, and the coroutine of that last frame (a
 * key, never dereferenced).
 *
 * Signal safety:
 *	Reads the frames only.
 */

static void
StackHash(
    const CprofFrame *frames,
    int depth,
    int numLevels,
    uint64_t *out,
    void **corPtrPtr)
{
    uint64_t h = 1469598103934665603ull, prev = h;
    int i;

    *corPtrPtr = NULL;

    for (i = 0; i < depth; i++) {
	if (frames[i].level > numLevels
		|| (frames[i].flags & CPROF_FRAME_SYNTH)) {
	    continue;
	}
	prev = h;
	*corPtrPtr = frames[i].corPtr;
	h = (h ^ (uint64_t) (uintptr_t) frames[i].token) * 1099511628211ull;
	h = (h ^ (uint64_t) (unsigned) frames[i].level) * 1099511628211ull;
    }
    out[0] = h;
    out[1] = prev;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofCopyTclFrames --
 *
 *	Copy the Tcl frames of the thread's level stacks: those at or below
 *	their interpreter's current nesting level (frames above it lost
 *	their leave), the sampler's interpreter's first, then those of the
 *	other interpreters of the thread (CprofSamplerAddStack), each stack
 *	outermost first. When they hold more than 'max', each keeps its
 *	innermost ones (CPROF_SAMPLE_TCL_TRUNC is then set in *flagsPtr). With -capture check, 'check' (four words, or NULL)
 *	gets the hashes of the two stacks and CPROF_SAMPLE_CHECKED is set
 *	when they are comparable.
 *
 *	Used by the signal handler and by the memory hooks' sampled path
 *	(hookmem.c), in the thread that owns the level stack.
 *
 * Results:
 *	The number of frames copied.
 *
 * Signal safety:
 *	Reads the thread's own level stack with acquire loads (the capture
 *	commits frames with release stores and never frees an array a
 *	reader may hold) and writes only to 'out' and 'check'.
 *
 *----------------------------------------------------------------------
 */

static inline int
CopyStack(
    CprofStack *stackPtr,
    const Tcl_Size *numLevelsPtr,
    int interpId,
    int sites,
    CprofTclRef *out,
    int room,
    int *truncPtr)
{
    const CprofFrame *frames = __atomic_load_n(&stackPtr->frames,
	    __ATOMIC_ACQUIRE);
    int live = __atomic_load_n(&stackPtr->depth, __ATOMIC_ACQUIRE);
    int numLevels = *numLevelsPtr, first = 0, i;

    while (live > 0 && frames[live - 1].level > numLevels) {
	live--;
    }
    if (live > room) {
	first = live - room;
	*truncPtr = 1;
    }
    for (i = first; i < live; i++) {
	CprofTclRef *refPtr = &out[i - first];

	refPtr->nameId = frames[i].nameId;
	refPtr->kind = frames[i].kind;
	refPtr->flags = (frames[i].flags & CPROF_FRAME_HIDDEN)
		| (frames[i].level == numLevels ? CPROF_REF_CURRENT : 0);
	refPtr->node = (interpId < 0) ? frames[i].node : -1;
	refPtr->interpId = interpId;
	refPtr->anchor = frames[i].anchor;
	refPtr->siteCode = NULL;
	refPtr->ident = NULL;
	refPtr->siteOffset = 0;
	if (sites && frames[i].siteCode != NULL
		&& frames[i].siteOffset > 0
		&& frames[i].siteOffset <= CPROF_SITE_OFFSET_MAX) {
	    refPtr->siteCode = frames[i].siteCode;
	    refPtr->siteOffset = (unsigned) frames[i].siteOffset;
	}
    }
    return live - first;
}

/*
 * The frames of the other interpreters of the thread (child interpreters
 * of a -scope), after n already in out[].
 */

static inline int
CopyExtraStacks(
    CprofSampler *sPtr,
    CprofTclRef *out,
    int n,
    int max,
    int *truncPtr)
{
    int i, numExtra = __atomic_load_n(&sPtr->numExtra, __ATOMIC_ACQUIRE);

    for (i = 0; i < numExtra && n < max; i++) {
	CprofStack *stackPtr = __atomic_load_n(&sPtr->extra[i].stackPtr,
		__ATOMIC_ACQUIRE);

	if (stackPtr != NULL && stackPtr->depth > 0) {
	    n += CopyStack(stackPtr, sPtr->extra[i].numLevelsPtr,
		    sPtr->extra[i].interpId, sPtr->lines, out + n, max - n,
		    truncPtr);
	}
    }
    return n;
}

static int
CopyLevelStacks(
    CprofSampler *sPtr,
    CprofTclRef *out,
    int max,
    uint32_t *flagsPtr,
    uint64_t *check)
{
    int n, numExtra, truncated = 0;

    numExtra = __atomic_load_n(&sPtr->numExtra, __ATOMIC_ACQUIRE);

    /*
     * The sampler's own interpreter's frames keep at least half the room
     * when others have frames too.
     */

    n = CopyStack(sPtr->stackPtr, sPtr->numLevelsPtr, -1, sPtr->lines, out,
	    numExtra > 0 ? max / 2 : max, &truncated);
    n = CopyExtraStacks(sPtr, out, n, max, &truncated);
    if (truncated) {
	*flagsPtr |= CPROF_SAMPLE_TCL_TRUNC;
    }
    if (check != NULL && sPtr->shadowPtr != NULL) {
	CprofStack *shadowPtr = sPtr->shadowPtr;
	const CprofFrame *frames = __atomic_load_n(&sPtr->stackPtr->frames,
		__ATOMIC_ACQUIRE);
	int depth = __atomic_load_n(&sPtr->stackPtr->depth, __ATOMIC_ACQUIRE);
	int numLevels = *sPtr->numLevelsPtr;
	void *corPtr, *shadowCorPtr;

	/*
	 * Between a coroutine's yield or resume and the trace's next event
	 * the trace still shows the coroutine it left: such a sample is not
	 * compared (the checks at every enter and leave cover that window).
	 */

	StackHash(frames, depth, numLevels, &check[0], &corPtr);
	StackHash(__atomic_load_n(&shadowPtr->frames, __ATOMIC_ACQUIRE),
		__atomic_load_n(&shadowPtr->depth, __ATOMIC_ACQUIRE),
		numLevels, &check[2], &shadowCorPtr);
	if (corPtr == shadowCorPtr) {
	    *flagsPtr |= CPROF_SAMPLE_CHECKED;
	}
    }
    return n;
}

int
CprofCopyTclFrames(
    CprofSampler *sPtr,
    CprofTclRef *out,
    int max,
    uint32_t *flagsPtr,
    uint64_t *check)
{
    struct CprofFrames *framesPtr = __atomic_load_n(&sPtr->framesPtr,
	    __ATOMIC_ACQUIRE);
    int n;

    if (framesPtr == NULL) {
	return CopyLevelStacks(sPtr, out, max, flagsPtr, check);
    }

    /*
     * -capture frames: Tcl's own frames, read raw (captureframes.c); with
     * -capture check, after the level stack's, in the second half.
     */

    if (!sPtr->framesCheck) {
	int truncated = 0;

	/*
	 * Child interpreters of the thread keep a level stack (the capture
	 * wraps their commands): after Tcl's frames of the sampler's own,
	 * placed among them by their anchors at the drain.
	 */

	if (__atomic_load_n(&sPtr->numExtra, __ATOMIC_ACQUIRE) == 0) {
	    return CprofFramesRead(framesPtr, out, max, flagsPtr);
	}
	n = CprofFramesRead(framesPtr, out, max / 2, flagsPtr);
	n = CopyExtraStacks(sPtr, out, n, max, &truncated);
	if (truncated) {
	    *flagsPtr |= CPROF_SAMPLE_TCL_TRUNC;
	}
	return n;
    }
    n = CopyLevelStacks(sPtr, out, max / 2, flagsPtr, check);
    *flagsPtr |= CPROF_SAMPLE_FRAMES_CHECK;
    return n + CprofFramesRead(framesPtr, out + n, max - n, flagsPtr);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSamplerAddStack, CprofSamplerRemoveStack --
 *
 *	Sample another interpreter's level stack with this thread's: called
 *	by the thread that owns the sampler. Add returns 0 when every slot
 *	is taken.
 *
 *----------------------------------------------------------------------
 */

int
CprofSamplerAddStack(
    CprofSampler *sPtr,
    CprofStack *stackPtr,
    const Tcl_Size *numLevelsPtr,
    int interpId)
{
    int i;

    for (i = 0; i < CPROF_EXTRA_STACKS; i++) {
	if (sPtr->extra[i].stackPtr == NULL) {
	    sPtr->extra[i].numLevelsPtr = numLevelsPtr;
	    sPtr->extra[i].interpId = interpId;
	    __atomic_signal_fence(__ATOMIC_SEQ_CST);
	    __atomic_store_n(&sPtr->extra[i].stackPtr, stackPtr,
		    __ATOMIC_RELEASE);
	    if (i >= sPtr->numExtra) {
		__atomic_store_n(&sPtr->numExtra, i + 1, __ATOMIC_RELEASE);
	    }
	    return 1;
	}
    }
    return 0;
}

void
CprofSamplerRemoveStack(
    CprofSampler *sPtr,
    CprofStack *stackPtr)
{
    int i;

    for (i = 0; i < sPtr->numExtra; i++) {
	if (sPtr->extra[i].stackPtr == stackPtr) {
	    __atomic_store_n(&sPtr->extra[i].stackPtr, NULL,
		    __ATOMIC_RELEASE);
	    __atomic_signal_fence(__ATOMIC_SEQ_CST);
	}
    }
}

/*
 *----------------------------------------------------------------------
 *
 * LibgccStack, CachedStack, NativeStack --
 *
 *	A sample's native frames, from the interrupted one outward, with
 *	the bytecode engine's frame and its pc candidates (sampled lines).
 *	CachedStack walks from the interrupted registers with the cached
 *	unwind rules (unwindcfi.c CprofCfiWalkFrom: a table lookup and a few
 *	loads a frame); LibgccStack with libgcc's _Unwind_Backtrace (some
 *	1,600 instructions a frame), which takes what the cached walk
 *	cannot: signal frames and unusual rules, and a fork's sample, which
 *	starts at the fork's return address rather than at the interrupted
 *	frame.
 *
 * Results:
 *	NativeStack: the walker used, 1 cached or 0 libgcc's.
 *
 * Signal safety:
 *	Both walks take no lock and allocate nothing; they write only to
 *	the sample and to the sampler's pending rules and counters.
 *
 *----------------------------------------------------------------------
 */

static uint64_t walksCached, walksLibgcc, walkRulesMade, walksChecked,
	walksDiffer;		/* Process-wide (relaxed atomics), for the
				 * test hook CprofSampleWalkStats. */
static volatile int walkCheckOn;

static void
LibgccStack(
    CprofSampler *sPtr,
    CprofSample *slotPtr,
    const ucontext_t *ucPtr)
{
    CprofGccWalk walk;
    uintptr_t pltPc;

    walk.ip = slotPtr->ip;
    walk.cfa = slotPtr->cfa;
    walk.n = 0;
    walk.max = CPROF_NATIVE_MAX;
    walk.truncated = 0;
    walk.started = 0;
    walk.skipped = 0;
    walk.pc = ucPtr ? CPROF_UC_PC(ucPtr) : 0;
    walk.skipFirst = 0;
    if (sPtr->forkPc != 0) {
	/*
	 * The fork's time, let in by AtforkParent: from fork outward (the
	 * C library's function that runs the atfork handlers left out).
	 */

	walk.pc = sPtr->forkPc;
	walk.skipFirst = 1;
    }
    walk.tebcStart = sPtr->tebcStart;
    walk.tebcEnd = sPtr->tebcEnd;
    walk.samplePtr = slotPtr;
    walk.ucPtr = ucPtr;
    slotPtr->tebcFrame = -1;
    slotPtr->nCand = 0;
    pltPc = (ucPtr != NULL && !walk.skipFirst)
	    ? CprofPltLeafEnter((ucontext_t *) ucPtr, &walk.ip[0], &walk.cfa[0])
	    : 0;
    if (pltPc != 0) {
	walk.n = 1;			/* A PLT stub (arch.h): its caller */
	walk.pc = CPROF_UC_PC(ucPtr);	/* is next. */
    }
    CprofGccBacktrace(&walk);
    CprofPltLeafLeave((ucontext_t *) ucPtr, pltPc);
    if (!walk.started) {
	slotPtr->flags |= CPROF_SAMPLE_NO_SIGFRAME;
    }
    if (walk.truncated) {
	slotPtr->flags |= CPROF_SAMPLE_NATIVE_TRUNC;
    }
    slotPtr->nNative = (uint16_t) walk.n;
}

static int
CachedStack(
    CprofSampler *sPtr,
    CprofSample *slotPtr,
    const ucontext_t *ucPtr)
{
#if defined(__x86_64__)
    CprofCfiStart start;
    int n;

    if (ucPtr == NULL || sPtr->forkPc != 0) {
	return 0;
    }
    start.pc = (uintptr_t) ucPtr->uc_mcontext.gregs[REG_RIP];
    start.sp = (uintptr_t) ucPtr->uc_mcontext.gregs[REG_RSP];
    start.regs[0] = (uintptr_t) ucPtr->uc_mcontext.gregs[REG_RBX];
    start.regs[1] = (uintptr_t) ucPtr->uc_mcontext.gregs[REG_RBP];
    start.regs[2] = (uintptr_t) ucPtr->uc_mcontext.gregs[REG_R12];
    start.regs[3] = (uintptr_t) ucPtr->uc_mcontext.gregs[REG_R13];
    start.regs[4] = (uintptr_t) ucPtr->uc_mcontext.gregs[REG_R14];
    start.regs[5] = (uintptr_t) ucPtr->uc_mcontext.gregs[REG_R15];
    start.stackLo = sPtr->stackLo;
    start.stackHi = sPtr->stackHi;
    start.markLo = sPtr->tebcStart;
    start.markHi = sPtr->tebcEnd;
    start.rulesMade = 0;
    n = CprofCfiWalkFrom(&start, slotPtr->ip, slotPtr->cfa,
	    CPROF_NATIVE_MAX);
    if (start.rulesMade) {
	__atomic_add_fetch(&walkRulesMade, start.rulesMade,
		__ATOMIC_RELAXED);
    }
    if (n < 0) {
	return 0;
    }
    slotPtr->nNative = (uint16_t) n;
    slotPtr->tebcFrame = -1;
    slotPtr->nCand = 0;
    if (start.truncated) {
	slotPtr->flags |= CPROF_SAMPLE_NATIVE_TRUNC;
    }
    if (start.mark >= 0) {
	CprofPcCandidates(slotPtr, start.mark, ucPtr, start.markRegs,
		slotPtr->cfa[start.mark]);
    }
    return 1;
#else
    (void) sPtr;
    (void) slotPtr;
    (void) ucPtr;
    return 0;
#endif
}

static int
NativeStack(
    CprofSampler *sPtr,
    CprofSample *slotPtr,
    const ucontext_t *ucPtr)
{
    int cached = (walkCheckOn != 2) && CachedStack(sPtr, slotPtr, ucPtr);

    if (cached) {
	__atomic_add_fetch(&walksCached, 1, __ATOMIC_RELAXED);
    } else {
	LibgccStack(sPtr, slotPtr, ucPtr);
	__atomic_add_fetch(&walksLibgcc, 1, __ATOMIC_RELAXED);
    }
    if (slotPtr->flags & CPROF_SAMPLE_NO_SIGFRAME) {
	sPtr->counters.noSigframe++;
    }
    if (slotPtr->flags & CPROF_SAMPLE_NATIVE_TRUNC) {
	sPtr->counters.nativeTrunc++;
    }
    return cached;
}

/*
 * Test hook (CprofSampleWalkStats): walk the sample again with libgcc and
 * compare every frame, the engine's frame and its pc candidates.
 */

static void
CheckWalk(
    CprofSampler *sPtr,
    CprofSample *slotPtr,
    const ucontext_t *ucPtr)
{
    CprofSample *cPtr = sPtr->checkPtr;
    int differ;

    cPtr->flags = 0;
    LibgccStack(sPtr, cPtr, ucPtr);
    if (cPtr->nNative > 0 && cPtr->nNative < slotPtr->nNative
	    && CprofThunkContains(cPtr->ip[cPtr->nNative - 1])
	    && !memcmp(cPtr->ip, slotPtr->ip, cPtr->nNative * sizeof(uintptr_t))
	    && !memcmp(cPtr->cfa, slotPtr->cfa,
		    cPtr->nNative * sizeof(uintptr_t))) {
	/*
	 * libgcc's walk ends in a command's thunk (no call frame
	 * information); the cached one goes on to its caller
	 * (unwindcfi.c). Not a comparison.
	 */

	return;
    }
    differ = (cPtr->nNative != slotPtr->nNative
	    || memcmp(cPtr->ip, slotPtr->ip, cPtr->nNative * sizeof(uintptr_t))
	    || memcmp(cPtr->cfa, slotPtr->cfa,
		    cPtr->nNative * sizeof(uintptr_t))
	    || cPtr->tebcFrame != slotPtr->tebcFrame
	    || cPtr->nCand != slotPtr->nCand
	    || memcmp(cPtr->cand, slotPtr->cand,
		    cPtr->nCand * sizeof(uintptr_t))
	    || (cPtr->flags & (CPROF_SAMPLE_NATIVE_TRUNC
		    | CPROF_SAMPLE_NO_SIGFRAME))
	    != (slotPtr->flags & (CPROF_SAMPLE_NATIVE_TRUNC
		    | CPROF_SAMPLE_NO_SIGFRAME)));
    __atomic_add_fetch(&walksChecked, 1, __ATOMIC_RELAXED);
    if (differ) {
	__atomic_add_fetch(&walksDiffer, 1, __ATOMIC_RELAXED);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSampleWalkStats --
 *
 *	Test hook: the handler's walks so far (cached, libgcc's; rules
 *	worked out in the handler; checked and differing since the last
 *	change of 'check'). With 'check' 1 each sample is walked both ways
 *	and compared from now on; 2 walks with libgcc's only (to measure
 *	the two); 0 goes back to the cached walk; -1 changes nothing.
 *
 *----------------------------------------------------------------------
 */

void
CprofSampleWalkStats(
    int check,
    uint64_t counts[5])
{
    counts[0] = __atomic_load_n(&walksCached, __ATOMIC_RELAXED);
    counts[1] = __atomic_load_n(&walksLibgcc, __ATOMIC_RELAXED);
    counts[2] = __atomic_load_n(&walksChecked, __ATOMIC_RELAXED);
    counts[3] = __atomic_load_n(&walksDiffer, __ATOMIC_RELAXED);
    counts[4] = __atomic_load_n(&walkRulesMade, __ATOMIC_RELAXED);
    if (check >= 0) {
	walkCheckOn = check;
	__atomic_store_n(&walksChecked, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&walksDiffer, 0, __ATOMIC_RELAXED);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSamplerModules --
 *
 *	At a drain (normal context): the handler's unwind rules are
 *	forgotten if a module was unloaded since they were worked out.
 *
 *----------------------------------------------------------------------
 */

void
CprofSamplerModules(void)
{
    CprofCfiModules();
}

/*
 *----------------------------------------------------------------------
 *
 * TimerWeight --
 *
 *	How many of the timer's expirations a signal stands for: those due
 *	by the timer's clock now that no sample taken since the arm stood
 *	for yet, at least 1. Not the signal's si_overrun: beside busy
 *	processes the kernel notices a thread's CPU-clock expirations at the
 *	ticks it runs in and, for a signal not yet taken, counts the ones
 *	missed meanwhile only in the next signal's overrun, or not at all;
 *	a thread that burned 300 ms of CPU at 250 Hz got signals worth 36 of
 *	its 75 expirations (a bare C program, beside four busy loops), and
 *	a test thread once 3. Reading the clock (a system call for a
 *	thread's CPU clock, about 0.2 us) gives every expiration to some
 *	sample. Async-signal-safe; the thread's own sampler only. With
 *	'take' 0 the count is only looked at (the disarm's tail).
 *
 *----------------------------------------------------------------------
 */

static inline uint32_t
TimerWeight(
    CprofSampler *sPtr,
    int take)
{
    uint64_t now = CprofClockNs((clockid_t) sPtr->weighClock), due, w;

    due = (now < sPtr->weighFirstNs || sPtr->weighIntervalNs == 0) ? 0
	    : (now - sPtr->weighFirstNs) / sPtr->weighIntervalNs + 1;
    w = due > sPtr->weighed ? due - sPtr->weighed : 0;
    if (take) {
	if (w == 0) {
	    w = 1;
	}
	if (w > UINT32_MAX / 2) {
	    w = UINT32_MAX / 2;
	}
	sPtr->weighed += w;
    }
    return (uint32_t) w;
}

static void
SignalHandler(
    int signo,
    siginfo_t *infoPtr,
    void *context)
{
    int savedErrno = errno;
    CprofSampler *sPtr = tlsSampler;
    CprofSample *slotPtr;
    uint32_t head, weight;
    uint64_t t0, t1;
    int full;
    ucontext_t *ucPtr = (ucontext_t *) context;

    if (sPtr != NULL && forking && infoPtr != NULL
	    && infoPtr->si_code == SI_TIMER
	    && __atomic_load_n(&sPtr->enabled, __ATOMIC_ACQUIRE)) {
	/*
	 * This thread's timer while another thread forks: not recorded
	 * (the forking thread has the signal blocked: AtforkParent).
	 */

	weight = TimerWeight(sPtr, 1);
	sPtr->counters.signals++;
	sPtr->counters.weight += weight;
	sPtr->counters.dropsFork += weight;
	errno = savedErrno;
	return;
    }
    if (sPtr == NULL || forking || infoPtr == NULL
	    || infoPtr->si_code != SI_TIMER
	    || !__atomic_load_n(&sPtr->enabled, __ATOMIC_ACQUIRE)) {
	/*
	 * Not our timer: another thread, a kill(), or after disarm.
	 */

	__atomic_add_fetch(&foreignSignals, 1, __ATOMIC_RELAXED);
	errno = savedErrno;
	return;
    }
    weight = TimerWeight(sPtr, 1);
    sPtr->counters.signals++;
    sPtr->counters.weight += weight;
    if (sPtr->busy) {
	sPtr->counters.dropsBusy += weight;
	errno = savedErrno;
	return;
    }
    if (sPtr->draining) {
	sPtr->counters.overhead += weight;
	errno = savedErrno;
	return;
    }
    sPtr->busy = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t0 = CprofClockNs(CLOCK_MONOTONIC);

    /*
     * A full ring (the thread ran no Tcl for a long time): the sample is
     * taken into the spare slot and merged into the spool.
     */

    head = sPtr->head;
    full = (head - __atomic_load_n(&sPtr->tail, __ATOMIC_ACQUIRE)
	    > sPtr->mask);
    if (full) {
	sPtr->needDrain = 1;
	slotPtr = &sPtr->spoolPtr->spare;
    } else {
	slotPtr = &sPtr->slots[head & sPtr->mask];
    }
    slotPtr->weight = weight;
    slotPtr->count = 1;
    slotPtr->flags = 0;
    slotPtr->labels = CprofLabelsNow(sPtr->labelsPtr);
    slotPtr->timeNs = t0;

    /*
     * Native frames, from the interrupted one outward.
     */

    NativeStack(sPtr, slotPtr, ucPtr);
    if (walkCheckOn == 1 && ucPtr != NULL && sPtr->forkPc == 0
	    && sPtr->checkPtr != NULL) {
	CheckWalk(sPtr, slotPtr, ucPtr);
    }

    slotPtr->nTcl = (uint16_t) CprofCopyTclFrames(sPtr, slotPtr->tcl,
	    CPROF_TCL_MAX, &slotPtr->flags, slotPtr->check);
    if (slotPtr->flags & CPROF_SAMPLE_TCL_TRUNC) {
	sPtr->counters.tclTrunc++;
    }

    if (full) {
	if (CprofSpoolMerge(sPtr->spoolPtr)) {
	    sPtr->counters.samples++;
	    sPtr->counters.spooled++;
	} else {
	    sPtr->counters.dropsFull += weight;
	}
	goto done;
    }
    __atomic_store_n(&sPtr->head, head + 1, __ATOMIC_RELEASE);
    sPtr->counters.samples++;
    if (head + 1 - sPtr->tail > (sPtr->mask + 1) / 2) {
	sPtr->needDrain = 1;
    }

  done:
    t1 = CprofClockNs(CLOCK_MONOTONIC);
    sPtr->counters.handlerNs += t1 - t0;
    sPtr->counters.handlerHist[HistBucket(t1 - t0)]++;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    sPtr->busy = 0;
    errno = savedErrno;
}
