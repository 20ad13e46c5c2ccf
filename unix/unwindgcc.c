/*
 * unwindgcc.c --
 *
 *	Native stacks by libgcc's unwinder (_Unwind_Backtrace), found with
 *	dlopen: the signal handler's walk where the cached one of
 *	unwindcfi.c cannot go (signal frames, unusual rules, a fork's
 *	sample: sampler.c), the cached walk's own fallback and the memory
 *	hooks' sampled path (CprofNativeWalk), and the pcs kept for sampled
 *	lines in the bytecode engine's frame (CprofPcCandidates, for both
 *	walks).
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _GNU_SOURCE
#   define _GNU_SOURCE
#endif
#include "tclcprofInt.h"
#include "arch.h"
#include "unwindgcc.h"
#include <dlfcn.h>
#include <stdio.h>
#include <unwind.h>

/*
 * libgcc's unwinder, reached through dlopen so that libunwind's
 * same-named exports (linked for normal-context work) cannot shadow it.
 */

typedef _Unwind_Reason_Code (*BacktraceProc)(_Unwind_Trace_Fn, void *);
typedef _Unwind_Ptr (*GetIPInfoProc)(struct _Unwind_Context *, int *);
typedef _Unwind_Word (*GetCFAProc)(struct _Unwind_Context *);
typedef _Unwind_Word (*GetGRProc)(struct _Unwind_Context *, int);

static BacktraceProc pBacktrace;
static GetIPInfoProc pGetIPInfo;
static GetCFAProc pGetCFA;
static GetGRProc pGetGR;		/* Optional: sampled lines' pcs. */
static int unwindState;		/* 0 unknown, 1 ready, -1 unavailable. */
static char unwindMsg[160];
TCL_DECLARE_MUTEX(gccMutex)	/* CprofUnwindReady's. */

static _Unwind_Reason_Code WalkFrame(struct _Unwind_Context *ctx,
			    void *arg);

/*
 *----------------------------------------------------------------------
 *
 * CprofUnwindReady --
 *
 *	Find libgcc's unwinder and warm it up in normal context (its first
 *	use may allocate).
 *
 * Results:
 *	1 when usable; 0 with a reason in msg.
 *
 *----------------------------------------------------------------------
 */

static _Unwind_Reason_Code
CountFrame(
    struct _Unwind_Context *ctx,
    void *arg)
{
    (*(int *) arg)++;
    return _URC_NO_REASON;
}

int
CprofUnwindReady(
    char *msg,
    size_t msgLen)
{
    Tcl_MutexLock(&gccMutex);
    if (unwindState == 0) {
	void *handle = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);

	if (handle == NULL) {
	    snprintf(unwindMsg, sizeof(unwindMsg),
		    "cannot load libgcc_s.so.1: %s", dlerror());
	    unwindState = -1;
	} else {
	    pBacktrace = (BacktraceProc) dlsym(handle, "_Unwind_Backtrace");
	    pGetIPInfo = (GetIPInfoProc) dlsym(handle, "_Unwind_GetIPInfo");
	    pGetCFA = (GetCFAProc) dlsym(handle, "_Unwind_GetCFA");
	    pGetGR = (GetGRProc) dlsym(handle, "_Unwind_GetGR");
	    if (!pBacktrace || !pGetIPInfo || !pGetCFA) {
		snprintf(unwindMsg, sizeof(unwindMsg),
			"libgcc_s.so.1 lacks _Unwind_Backtrace/GetIPInfo/GetCFA");
		unwindState = -1;
	    } else {
		int n = 0;

		pBacktrace(CountFrame, &n);
		__atomic_store_n(&unwindState, 1, __ATOMIC_RELEASE);
	    }
	}
    }
    if (unwindState < 0 && msg != NULL) {
	snprintf(msg, msgLen, "%s", unwindMsg);
    }
    Tcl_MutexUnlock(&gccMutex);
    return unwindState > 0;
}

/*
 *----------------------------------------------------------------------
 *
 * WalkFrame --
 *
 *	_Unwind_Backtrace callback: record each frame's IP and CFA, starting
 *	at the interrupted frame (frames of the handler itself and of the
 *	signal trampoline are skipped).
 *
 * Signal safety:
 *	Writes only to the ring slot being filled.
 *
 *----------------------------------------------------------------------
 */

/*
 * Sampled lines: the innermost frame of Tcl's bytecode engine keeps the pc
 * of the bytecode it runs in a register or in the first words of its
 * stack frame (which of them depends on the build and the place in the
 * engine): keep them all, the drain finds which one points into live
 * bytecode. The interrupted frame has every register (from the ucontext),
 * an outer one the callee-saved ones (from the unwinder); which registers
 * those are, arch.h says.
 *
 * Signal safety:
 *	Reads registers and the thread's own stack (above the frame's stack
 *	pointer, all mapped); writes only to the sample.
 */

#define PC_STACK_WORDS	8
#define PC_STACK_REACH	(1u << 20)	/* Bytes above the interrupted stack
					 * pointer an engine frame's words are
					 * read at. */

void
CprofPcCandidates(
    CprofSample *samplePtr,
    int n,			/* The frame's index. */
    const ucontext_t *ucPtr,	/* The interrupted registers. */
    const uintptr_t *regs,	/* Frame n > 0: its callee-saved registers
				 * (arch.h's CPROF_DWARF_CALLEE_SAVED), or
				 * NULL. */
    uintptr_t frameSp)		/* Frame n > 0: its stack pointer. */
{
#if defined(CPROF_DWARF_CALLEE_SAVED)
    const uintptr_t *sp;
    int k = 0, i;

    if (n == 0) {
	if (ucPtr == NULL) {
	    return;
	}
	for (i = 0; i < CPROF_UC_NCAND; i++) {
	    samplePtr->cand[k++] = CPROF_UC_CAND(ucPtr, i);
	}
	sp = (const uintptr_t *) CPROF_UC_SP(ucPtr);
    } else {
	if (regs == NULL) {
	    return;
	}
	for (i = 0; i < CPROF_NSAVED; i++) {
	    samplePtr->cand[k++] = regs[i];
	}

	/*
	 * A frame's stack pointer (libgcc's CFA of the frame it called):
	 * read only when it is plausibly one, a little above the
	 * interrupted stack pointer.
	 */

	sp = (const uintptr_t *) frameSp;
	if (ucPtr == NULL || ((uintptr_t) sp & 7) != 0
		|| (uintptr_t) sp < CPROF_UC_SP(ucPtr)
		|| (uintptr_t) sp - CPROF_UC_SP(ucPtr) > PC_STACK_REACH) {
	    sp = NULL;
	}
    }
    for (i = 0; sp != NULL && i < PC_STACK_WORDS
	    && k < CPROF_PC_CANDIDATES; i++) {
	samplePtr->cand[k++] = sp[i];
    }
    samplePtr->nCand = (uint16_t) k;
    samplePtr->tebcFrame = (int16_t) n;
#else
    (void) samplePtr;
    (void) n;
    (void) ucPtr;
    (void) regs;
    (void) frameSp;
#endif
}

static _Unwind_Reason_Code
WalkFrame(
    struct _Unwind_Context *ctx,
    void *arg)
{
    CprofGccWalk *wPtr = (CprofGccWalk *) arg;
    int before = 0;
    uintptr_t ip = (uintptr_t) pGetIPInfo(ctx, &before);

    if (!wPtr->started) {
	if (ip != wPtr->pc) {
	    if (++wPtr->skipped < 16) {
		return _URC_NO_REASON;
	    }
	    return _URC_END_OF_STACK;
	}
	wPtr->started = 1;
	if (wPtr->skipFirst) {
	    return _URC_NO_REASON;
	}
    }
    if (ip == 0) {
	return _URC_END_OF_STACK;
    }
    if (wPtr->n >= wPtr->max) {
	wPtr->truncated = 1;
	return _URC_END_OF_STACK;
    }
    wPtr->ip[wPtr->n] = ip;
    wPtr->cfa[wPtr->n] = (uintptr_t) pGetCFA(ctx);
    if (wPtr->tebcEnd != 0 && wPtr->samplePtr->tebcFrame < 0) {
	uintptr_t at = (wPtr->n == 0) ? ip : ip - 1;

	if (at >= wPtr->tebcStart && at < wPtr->tebcEnd) {
	    static const int calleeSaved[] = CPROF_DWARF_CALLEE_SAVED;
	    uintptr_t regs[CPROF_NSAVED];
	    int i;

	    for (i = 0; pGetGR != NULL && i < CPROF_NSAVED; i++) {
		regs[i] = (uintptr_t) pGetGR(ctx, calleeSaved[i]);
	    }
	    CprofPcCandidates(wPtr->samplePtr, wPtr->n, wPtr->ucPtr,
		    pGetGR != NULL ? regs : NULL, wPtr->cfa[wPtr->n]);
	}
    }
    wPtr->n++;
    return _URC_NO_REASON;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofGccBacktrace --
 *
 *	The signal handler's walk by libgcc (sampler.c's LibgccStack), the
 *	walk's start and room set by the caller.
 *
 * Signal safety:
 *	_Unwind_Backtrace, readied in normal context by CprofUnwindReady
 *	(glibc >= 2.35 finds the unwind tables without a lock); writes only
 *	to the walk's sample.
 *
 *----------------------------------------------------------------------
 */

void
CprofGccBacktrace(
    CprofGccWalk *walkPtr)
{
    pBacktrace(WalkFrame, walkPtr);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofNativeWalk --
 *
 *	The same unwind as the handler's, from normal context: the caller's
 *	frame and outward. For tests that check the splice's premises, and
 *	for the memory hooks' sampled path (hookmem.c): once the unwinder is
 *	ready it takes no lock and allocates nothing.
 *
 *----------------------------------------------------------------------
 */

int
CprofNativeWalk(
    uintptr_t *ip,
    uintptr_t *cfa,
    int max)
{
    CprofGccWalk walk;

    if (__atomic_load_n(&unwindState, __ATOMIC_ACQUIRE) <= 0
	    && !CprofUnwindReady(NULL, 0)) {
	return 0;
    }
    walk.ip = ip;
    walk.cfa = cfa;
    walk.n = 0;
    walk.max = max;
    walk.truncated = 0;
    walk.started = 1;
    walk.skipped = 0;
    walk.skipFirst = 0;
    walk.pc = 0;
    walk.tebcEnd = 0;
    pBacktrace(WalkFrame, &walk);
    return walk.n;
}
