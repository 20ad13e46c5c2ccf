/*
 * exactcompensate.c --
 *
 *	The profiler's cost per call: CprofExactCalibrate, which
 *	measures how much of each call's measured time is the profiler's
 *	(once per process, clock and capture) so that exact.c can take it
 *	out.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "exactInt.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Compensation figures, measured once per process for each clock.
 */

static struct {
    int valid;
    int64_t inNs, callNs;
    int64_t refNs;		/* The reference loop's time then. */
} calibCache[3][3];		/* Monotonic, thread CPU, TSC; by
				 * capture (enum CprofCaptureKind: wrap,
				 * trace, check; frames times as wrap). */

#define CALIB_CAPTURE(c) \
    (((c) >= CPROF_CAPTURE_WRAP && (c) <= CPROF_CAPTURE_CHECK) ? (c) \
    : CPROF_CAPTURE_WRAP)
TCL_DECLARE_MUTEX(calibMutex)

/*
 *----------------------------------------------------------------------
 *
 * CprofExactCalibrate --
 *
 *	Measure the profiler's cost per traced call, once per process and
 *	clock: time a loop of calls of an empty proc without the trace and
 *	with it (timing into the state's own structures, compensation off),
 *	and read how much of each call's measured time is the profiler's.
 *	Later starts only time the reference loop (under a millisecond) and
 *	scale the figures by the machine's speed then against its speed at
 *	the calibration. Called by start before the capture is installed;
 *	installs it (installProc, with timing on) and removes it
 *	(removeProc) itself, and times into a scratch state. The figures
 *	are kept per clock and per capture, whose costs differ.
 *
 * Results:
 *	TCL_OK; *inNsPtr and *callNsPtr are set, in ticks of the run's
 *	clock (0 if the measurement failed).
 *
 *----------------------------------------------------------------------
 */

static int64_t
TimeScript(
    CprofState *statePtr,
    const char *script)
{
    uint64_t t0 = Now(&statePtr->exact);

    if (Tcl_EvalEx(statePtr->interp, script, -1, TCL_EVAL_GLOBAL) != TCL_OK) {
	return -1;
    }
    return (int64_t) (Now(&statePtr->exact) - t0);
}

/*
 * The calls of a round: CALIB_LOOP calls of an empty proc from a loop, and
 * a recursive Fibonacci of CALIB_FIB (calls of a proc with an argument,
 * from an expression, whose results are used): the cost of Tcl's trace
 * machinery differs a little between such call sites (by about 10% here).
 * The mix, one third loop and two thirds recursion, stands for procs
 * calling procs, the common case.
 */

#define CALIB_LOOP	5000
#define CALIB_FIB	18
#define CALIB_FIB_CALLS	8361	/* 2 * fib(CALIB_FIB + 1) - 1 */
#define CALIB_ROUNDS	7	/* Rounds; the fastest of each counts. */

/*
 * The reference loop: an empty loop of CALIB_REF iterations (about 0.2 ms)
 * timed at the calibration and again at every later start, the fastest of
 * CALIB_REF_RUNS. This machine's speed can change by a factor of two from
 * one second to the next (a shared virtual machine); the cost per call
 * measured once is scaled by the ratio of the two times.
 */

#define CALIB_REF	8000
#define CALIB_REF_RUNS	3
#define CALIB_SCRIPT \
	"namespace eval ::tclcprof_calibration {\n" \
	"    proc Nop {} {}\n" \
	"    proc Loop {n} {for {set i 0} {$i < $n} {incr i} {Nop}}\n" \
	"    proc Empty {n} {for {set i 0} {$i < $n} {incr i} {}}\n" \
	"    proc Fib {n} {\n" \
	"        if {$n < 2} {return $n}\n" \
	"        expr {[Fib [expr {$n - 1}]] + [Fib [expr {$n - 2}]]}\n" \
	"    }\n" \
	"}"

/*
 * The fastest of 'runs' timings of the reference loop, in ticks of the
 * exact clock of 'statePtr'; -1 if it failed. The calibration procs must
 * be defined.
 */

static int64_t
TimeReference(
    CprofState *statePtr,
    int runs)
{
    char ref[64];
    int64_t best = INT64_MAX, t;
    int i;

    snprintf(ref, sizeof(ref), "::tclcprof_calibration::Empty %d",
	    CALIB_REF);
    for (i = 0; i < runs; i++) {
	t = TimeScript(statePtr, ref);
	if (t < 0) {
	    return -1;
	}
	if (t < best) {
	    best = t;
	}
    }
    return best;
}

/*
 * The cached figures of clock 'which', scaled to the machine's speed now.
 * The state's exact clock must be that clock.
 */

static void
RescaledFigures(
    CprofState *statePtr,
    int which,
    int capture,
    int64_t *inNsPtr,
    int64_t *callNsPtr)
{
    Tcl_Interp *interp = statePtr->interp;
    Tcl_InterpState saved = Tcl_SaveInterpState(interp, TCL_OK);
    int64_t now = -1;
    double ratio;

    if (Tcl_EvalEx(interp, CALIB_SCRIPT, -1, TCL_EVAL_GLOBAL) == TCL_OK) {
	TimeScript(statePtr, "::tclcprof_calibration::Empty 10");
	now = TimeReference(statePtr, CALIB_REF_RUNS);
    }
    Tcl_EvalEx(interp, "namespace delete ::tclcprof_calibration", -1,
	    TCL_EVAL_GLOBAL);
    Tcl_RestoreInterpState(interp, saved);
    ratio = (now > 0 && calibCache[which][capture].refNs > 0)
	    ? (double) now / (double) calibCache[which][capture].refNs : 1.0;
    if (ratio < 0.25) {
	ratio = 0.25;
    } else if (ratio > 4) {
	ratio = 4;
    }
    *inNsPtr = (int64_t) (calibCache[which][capture].inNs * ratio);
    *callNsPtr = (int64_t) (calibCache[which][capture].callNs * ratio);
}

int
CprofExactCalibrate(
    CprofState *statePtr,
    int clock,
    int capture,
    int (*installProc)(CprofState *statePtr),
    void (*removeProc)(CprofState *statePtr),
    int64_t *inNsPtr,
    int64_t *callNsPtr)
{
    CprofExact *exactPtr = &statePtr->exact, keep;
    Tcl_Interp *interp = statePtr->interp;
    int which = (clock == CPROF_CLOCK_CPU) ? 1 : CprofExactTscNsPerTick() > 0.0 ? 2 : 0;
    Tcl_InterpState saved;
    int64_t best[5], t, rawNop = INT64_MAX, refNs;
    int round, i, ok = 1;
    char loop[64], empty[64], fib[64];
    const char *scripts[3];

    capture = CALIB_CAPTURE(capture);
    *inNsPtr = *callNsPtr = 0;

    /*
     * Time into a scratch state: the last run's data stays as it is.
     */

    keep = *exactPtr;
    CprofExactInit(exactPtr);
    exactPtr->on = 1;
    exactPtr->clockId = (which == 1) ? CLOCK_THREAD_CPUTIME_ID
	    : CLOCK_MONOTONIC;
    exactPtr->tsc = (which == 2);
    exactPtr->nsPerTick = exactPtr->tsc ? CprofExactTscNsPerTick() : 1.0;

    Tcl_MutexLock(&calibMutex);
    if (calibCache[which][capture].valid) {
	Tcl_MutexUnlock(&calibMutex);
	RescaledFigures(statePtr, which, capture, inNsPtr, callNsPtr);
	CprofExactFree(statePtr);
	*exactPtr = keep;
	return TCL_OK;
    }
    Tcl_MutexUnlock(&calibMutex);

    saved = Tcl_SaveInterpState(interp, TCL_OK);
    if (Tcl_EvalEx(interp, CALIB_SCRIPT, -1, TCL_EVAL_GLOBAL) != TCL_OK) {
	Tcl_RestoreInterpState(interp, saved);
	CprofExactFree(statePtr);
	*exactPtr = keep;
	return TCL_OK;
    }
    snprintf(loop, sizeof(loop), "::tclcprof_calibration::Loop %d",
	    CALIB_LOOP);
    snprintf(empty, sizeof(empty), "::tclcprof_calibration::Empty %d",
	    CALIB_LOOP);
    snprintf(fib, sizeof(fib), "::tclcprof_calibration::Fib %d", CALIB_FIB);
    scripts[0] = loop;
    scripts[1] = empty;
    scripts[2] = fib;

    /*
     * best[]: the loop, the empty loop and the recursion without the
     * trace; the loop and the recursion with it.
     */

    for (i = 0; i < 5; i++) {
	best[i] = INT64_MAX;
    }
    for (i = 0; i < 3; i++) {
	TimeScript(statePtr, scripts[i]);	/* Compile, warm up. */
    }
    for (round = 0; round < CALIB_ROUNDS && ok; round++) {
	for (i = 0; i < 3 && ok; i++) {
	    t = TimeScript(statePtr, scripts[i]);
	    ok = (t >= 0);
	    if (t < best[i]) {
		best[i] = t;
	    }
	}
    }
    refNs = ok ? TimeReference(statePtr, CALIB_ROUNDS) : -1;

    /*
     * With the trace: the real enter and leave paths, timing into the
     * scratch state. The empty proc's measured time, less what the call
     * costs without the trace, is the profiler's share inside a call.
     */

    ok = ok && installProc(statePtr) == TCL_OK;
    for (round = 0; round < CALIB_ROUNDS && ok; round++) {
	int node;

	CprofExactClear(statePtr);
	t = TimeScript(statePtr, loop);
	ok = (t >= 0);
	if (t < best[3]) {
	    best[3] = t;
	}
	for (node = 1; node < exactPtr->numNodes; node++) {
	    const char *n = CprofNameString(exactPtr->nodes[node].nameId);

	    if (n != NULL && strcmp(n, "::tclcprof_calibration::Nop") == 0
		    && exactPtr->nodes[node].calls > 0) {
		int64_t mean = exactPtr->nodes[node].totalNs
			/ (int64_t) exactPtr->nodes[node].calls;

		if (mean < rawNop) {
		    rawNop = mean;
		}
		break;
	    }
	}
	t = TimeScript(statePtr, fib);
	ok = ok && (t >= 0);
	if (t < best[4]) {
	    best[4] = t;
	}
    }
    removeProc(statePtr);
    CprofExactFree(statePtr);
    *exactPtr = keep;
    Tcl_EvalEx(interp, "namespace delete ::tclcprof_calibration", -1,
	    TCL_EVAL_GLOBAL);
    Tcl_RestoreInterpState(interp, saved);
    if (!ok || rawNop == INT64_MAX) {
	return TCL_OK;
    }

    {
	int64_t trueNop = (best[0] - best[1]) / CALIB_LOOP;
	int64_t callNs = ((best[3] - best[0]) + (best[4] - best[2]))
		/ (CALIB_LOOP + CALIB_FIB_CALLS);
	int64_t inNs = rawNop - (trueNop > 0 ? trueNop : 0);

	if (callNs < 0) {
	    callNs = 0;
	}
	if (inNs < 0) {
	    inNs = 0;
	}
	if (inNs > callNs) {
	    inNs = callNs;
	}
	*inNsPtr = inNs;
	*callNsPtr = callNs;
	if (callNs == 0) {
	    /*
	     * The cost was lost in the machine's noise (a loaded machine,
	     * the wrapper's few nanoseconds): this run is not compensated,
	     * which its header says, and the next start measures again.
	     */

	    return TCL_OK;
	}
	Tcl_MutexLock(&calibMutex);
	calibCache[which][capture].valid = 1;
	calibCache[which][capture].inNs = inNs;
	calibCache[which][capture].callNs = callNs;
	calibCache[which][capture].refNs = refNs;
	Tcl_MutexUnlock(&calibMutex);
    }
    return TCL_OK;
}

