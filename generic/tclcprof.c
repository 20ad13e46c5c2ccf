/*
 * tclcprof.c --
 *
 *	Package initialisation and the Tcl command layer of tclcprof: the
 *	::tclcprof ensemble, option parsing, per-interpreter state and
 *	errors. The collector itself lives in levelstack.c.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "tclcprofInt.h"
#include <tclOO.h>
#include <string.h>
#include <time.h>

/*
 * Options of start and configure. The index order matches the enum.
 */

static const char *const optionNames[] = {
    "-clock", "-control", "-label", "-mode", "-native", "-rate", NULL
};
enum CprofOption {
    OPT_CLOCK, OPT_CONTROL, OPT_LABEL, OPT_MODE, OPT_NATIVE, OPT_RATE
};

static const char *const modeNames[] = {
    "sample", "stack", NULL
};
static const char *const clockNames[] = {
    "cpu", "wall", NULL
};
static const char *const nativeNames[] = {
    "user", "all", "none", NULL
};

/*
 * Highest sampling rate accepted: beyond this the handler's own cost
 * (about 20 us a sample here) would dominate.
 */

#define MAX_RATE 10000.0

/*
 * Per-interpreter state beyond what the collector needs.
 */

typedef struct CprofInterp {
    CprofState state;		/* Must be first. */
    Tcl_Obj *labelObj;		/* -label of the current (or last) run. */
    CprofOptions defaults;	/* Options set by configure: what a run
				 * started without options uses. */
    Tcl_Obj *defaultLabelObj;	/* -label set by configure. */
} CprofInterp;

static int		ConfigureObjCmd(ClientData clientData,
			    Tcl_Interp *interp, int objc,
			    Tcl_Obj *const objv[]);
static int		DataObjCmd(ClientData clientData,
			    Tcl_Interp *interp, int objc,
			    Tcl_Obj *const objv[]);
static int		ProfileObjCmd(ClientData clientData,
			    Tcl_Interp *interp, int objc,
			    Tcl_Obj *const objv[]);
static int		DebugObjCmd(ClientData clientData, Tcl_Interp *interp,
			    int objc, Tcl_Obj *const objv[]);
static void		DeleteState(ClientData clientData, Tcl_Interp *interp);
static int		PauseObjCmd(ClientData clientData, Tcl_Interp *interp,
			    int objc, Tcl_Obj *const objv[]);
static int		ResetObjCmd(ClientData clientData, Tcl_Interp *interp,
			    int objc, Tcl_Obj *const objv[]);
static int		ResumeObjCmd(ClientData clientData, Tcl_Interp *interp,
			    int objc, Tcl_Obj *const objv[]);
static int		StackObjCmd(ClientData clientData, Tcl_Interp *interp,
			    int objc, Tcl_Obj *const objv[]);
static int		StartObjCmd(ClientData clientData, Tcl_Interp *interp,
			    int objc, Tcl_Obj *const objv[]);
static int		StatusObjCmd(ClientData clientData, Tcl_Interp *interp,
			    int objc, Tcl_Obj *const objv[]);
static int		StopObjCmd(ClientData clientData, Tcl_Interp *interp,
			    int objc, Tcl_Obj *const objv[]);

/*
 * The commands of the ::tclcprof ensemble.
 */

static int		ProfileNRCmd(ClientData clientData,
			    Tcl_Interp *interp, int objc,
			    Tcl_Obj *const objv[]);

static const struct {
    const char *name;
    Tcl_ObjCmdProc *proc;
    Tcl_ObjCmdProc *nreProc;	/* Script-taking commands are NRE-enabled. */
} commandTable[] = {
    {"configure",	ConfigureObjCmd, NULL},
    {"data",		DataObjCmd, NULL},
    {"debug",		DebugObjCmd, NULL},
    {"pause",		PauseObjCmd, NULL},
    {"profile",		ProfileObjCmd, ProfileNRCmd},
    {"reset",		ResetObjCmd, NULL},
    {"resume",		ResumeObjCmd, NULL},
    {"stack",		StackObjCmd, NULL},
    {"start",		StartObjCmd, NULL},
    {"status",		StatusObjCmd, NULL},
    {"stop",		StopObjCmd, NULL},
    {NULL, NULL, NULL}
};

#ifdef __cplusplus
extern "C" {
#endif
DLLEXPORT int		Tclcprof_Init(Tcl_Interp *interp);
DLLEXPORT int		Tclcprof_SafeInit(Tcl_Interp *interp);
DLLEXPORT int		Tclcprof_Unload(Tcl_Interp *interp, int flags);
DLLEXPORT int		Tclcprof_SafeUnload(Tcl_Interp *interp, int flags);
#ifdef __cplusplus
}
#endif

/*
 * Errors: a lowercase message and a TCLCPROF error code.
 */

static int
StateError(
    Tcl_Interp *interp,
    const char *message,
    const char *what)
{
    Tcl_SetObjResult(interp, Tcl_NewStringObj(message, -1));
    Tcl_SetErrorCode(interp, "TCLCPROF", "STATE", what, NULL);
    return TCL_ERROR;
}

/*
 *----------------------------------------------------------------------
 *
 * ParseOptions --
 *
 *	Parse "-option value ..." into *optsPtr and *labelPtrPtr. Options
 *	that cannot change while profiling runs are refused when 'running'.
 *
 * Results:
 *	TCL_OK, or TCL_ERROR with a TCLCPROF error code; *optsPtr is then
 *	unchanged in meaning (the caller passes a copy).
 *
 *----------------------------------------------------------------------
 */

static int
BadValue(
    Tcl_Interp *interp,
    const char *option,
    Tcl_Obj *valueObj,
    const char *what)
{
    Tcl_SetObjResult(interp, Tcl_ObjPrintf("bad value \"%s\" for %s: %s",
	    Tcl_GetString(valueObj), option, what));
    Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", option,
	    Tcl_GetString(valueObj), NULL);
    return TCL_ERROR;
}

static int
GetEnum(
    Tcl_Interp *interp,
    Tcl_Obj *valueObj,
    const char *const *table,
    const char *what,
    const char *option,
    int *valuePtr)
{
    if (Tcl_GetIndexFromObj(interp, valueObj, table, what, 0, valuePtr)
	    != TCL_OK) {
	Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", option,
		Tcl_GetString(valueObj), NULL);
	return TCL_ERROR;
    }
    return TCL_OK;
}

static int
ParseOptions(
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[],
    CprofOptions *optsPtr,
    Tcl_Obj **labelPtrPtr,
    int running)
{
    int i, index, value;
    double rate;
    CprofOptions before = *optsPtr;

    for (i = 0; i < objc; i += 2) {
	if (Tcl_GetIndexFromObj(interp, objv[i], optionNames, "option", 0,
		&index) != TCL_OK) {
	    Tcl_SetErrorCode(interp, "TCLCPROF", "OPTION",
		    Tcl_GetString(objv[i]), NULL);
	    return TCL_ERROR;
	}
	if (i + 1 >= objc) {
	    Tcl_SetObjResult(interp, Tcl_ObjPrintf(
		    "missing value for option \"%s\"", optionNames[index]));
	    Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", optionNames[index],
		    NULL);
	    return TCL_ERROR;
	}
	switch ((enum CprofOption) index) {
	case OPT_CLOCK:
	    if (GetEnum(interp, objv[i+1], clockNames, "clock", "-clock",
		    &optsPtr->clock) != TCL_OK) {
		return TCL_ERROR;
	    }
	    break;
	case OPT_CONTROL:
	    if (Tcl_GetBooleanFromObj(NULL, objv[i+1], &value) != TCL_OK) {
		return BadValue(interp, "-control", objv[i+1],
			"expected a boolean");
	    }
	    optsPtr->control = value;
	    break;
	case OPT_LABEL:
	    *labelPtrPtr = objv[i+1];
	    break;
	case OPT_MODE:
	    if (GetEnum(interp, objv[i+1], modeNames, "mode", "-mode",
		    &optsPtr->mode) != TCL_OK) {
		return TCL_ERROR;
	    }
	    break;
	case OPT_NATIVE:
	    if (GetEnum(interp, objv[i+1], nativeNames, "native", "-native",
		    &optsPtr->native) != TCL_OK) {
		return TCL_ERROR;
	    }
	    break;
	case OPT_RATE:
	    if (Tcl_GetDoubleFromObj(NULL, objv[i+1], &rate) != TCL_OK
		    || !(rate >= 1.0 && rate <= MAX_RATE)) {
		return BadValue(interp, "-rate", objv[i+1],
			"expected a number of samples per second from 1 to "
			"10000");
	    }
	    optsPtr->rate = rate;
	    break;
	}
    }

    /*
     * What the sampler was built with cannot change under it.
     */

    if (running) {
	const char *which = NULL;

	if (optsPtr->mode != before.mode) {
	    which = "-mode";
	} else if (optsPtr->clock != before.clock) {
	    which = "-clock";
	} else if (optsPtr->rate != before.rate) {
	    which = "-rate";
	}
	if (which != NULL) {
	    Tcl_SetObjResult(interp, Tcl_ObjPrintf(
		    "cannot change %s while profiling is running", which));
	    Tcl_SetErrorCode(interp, "TCLCPROF", "STATE", "RUNNING", NULL);
	    return TCL_ERROR;
	}
    }
    return TCL_OK;
}

/*
 * The options configure reports: those of the running profile while one
 * runs, else the configured ones that the next run will start from.
 */

static Tcl_Obj *
OptionValue(
    CprofInterp *ciPtr,
    int index)
{
    int running = ciPtr->state.running;
    CprofOptions *optsPtr = running ? &ciPtr->state.options
	    : &ciPtr->defaults;

    switch ((enum CprofOption) index) {
    case OPT_CLOCK:
	return Tcl_NewStringObj(clockNames[optsPtr->clock], -1);
    case OPT_CONTROL:
	return Tcl_NewBooleanObj(optsPtr->control);
    case OPT_LABEL:
	return running ? ciPtr->labelObj : ciPtr->defaultLabelObj;
    case OPT_MODE:
	return Tcl_NewStringObj(modeNames[optsPtr->mode], -1);
    case OPT_NATIVE:
	return Tcl_NewStringObj(nativeNames[optsPtr->native], -1);
    case OPT_RATE:
	return Tcl_NewDoubleObj(optsPtr->rate > 0 ? optsPtr->rate
		: CprofDefaultRate(optsPtr->clock));
    }
    return Tcl_NewObj();
}

static Tcl_Obj *
OptionsDict(
    CprofInterp *ciPtr)
{
    Tcl_Obj *dictObj = Tcl_NewDictObj();
    int i;

    for (i = 0; optionNames[i] != NULL; i++) {
	Tcl_DictObjPut(NULL, dictObj, Tcl_NewStringObj(optionNames[i], -1),
		OptionValue(ciPtr, i));
    }
    return dictObj;
}

static void
SetObj(
    Tcl_Obj **objPtrPtr,
    Tcl_Obj *newObj)
{
    Tcl_IncrRefCount(newObj);
    Tcl_DecrRefCount(*objPtrPtr);
    *objPtrPtr = newObj;
}

#define SetLabel(ciPtr, labelObj) SetObj(&(ciPtr)->labelObj, (labelObj))

/*
 *----------------------------------------------------------------------
 *
 * Sampling life cycle --
 *
 *	StartSampling creates and arms the thread's sampler; PauseSampling
 *	disarms it and drains what it caught; StopSampling also keeps its
 *	counters for status and frees it. DrainTimerProc drains the ring
 *	from the event loop, for programs that sit in vwait.
 *
 *----------------------------------------------------------------------
 */

#define DRAIN_MS 200

static void
DrainTimerProc(
    ClientData clientData)
{
    CprofState *statePtr = (CprofState *) clientData;

    statePtr->drainTimer = NULL;
    if (statePtr->samplerPtr != NULL) {
	CprofDrain(statePtr);
	statePtr->drainTimer = Tcl_CreateTimerHandler(DRAIN_MS,
		DrainTimerProc, statePtr);
    }
}

/*
 * Seconds of the sampler's clock while armed.
 */

static double
SamplerSeconds(
    CprofSampler *sPtr)
{
    uint64_t ns = (sPtr->clock == CPROF_CLOCK_CPU) ? sPtr->cpuNs
	    : sPtr->wallNs;

    if (sPtr->armed) {
	ns += (sPtr->clock == CPROF_CLOCK_CPU)
		? CprofClockNs(CLOCK_THREAD_CPUTIME_ID) - sPtr->startCpuNs
		: CprofClockNs(CLOCK_MONOTONIC) - sPtr->startWallNs;
    }
    return ns / 1e9;
}

static void
KeepSamplerFigures(
    CprofState *statePtr)
{
    CprofSampler *sPtr = statePtr->samplerPtr;
    double secs = SamplerSeconds(sPtr);

    statePtr->lastCounters = sPtr->counters;
    statePtr->lastRate = sPtr->rate;
    statePtr->lastClock = sPtr->clock;
    statePtr->lastAchieved = secs > 0 ? sPtr->counters.signals / secs : 0;
}

static int
StartSampling(
    CprofState *statePtr)
{
    CprofSampler *sPtr;
    Tcl_Interp *interp = statePtr->interp;

    if (CprofSamplerCreate(interp, &statePtr->stack,
	    CprofNumLevelsPtr(interp), statePtr->options.clock,
	    statePtr->options.rate, &sPtr) != TCL_OK) {
	return TCL_ERROR;
    }
    if (statePtr->symPtr == NULL) {
	statePtr->symPtr = CprofSymNew();
    }
    statePtr->samplerPtr = sPtr;
    if (CprofSamplerArm(interp, sPtr) != TCL_OK) {
	statePtr->samplerPtr = NULL;
	CprofSamplerDestroy(sPtr);
	return TCL_ERROR;
    }
    statePtr->drainTimer = Tcl_CreateTimerHandler(DRAIN_MS, DrainTimerProc,
	    statePtr);
    return TCL_OK;
}

static void
PauseSampling(
    CprofState *statePtr)
{
    if (statePtr->samplerPtr != NULL) {
	CprofSamplerDisarm(statePtr->samplerPtr);
	CprofDrain(statePtr);
    }
}

static void
StopSampling(
    CprofState *statePtr)
{
    CprofSampler *sPtr = statePtr->samplerPtr;

    if (sPtr == NULL) {
	return;
    }
    PauseSampling(statePtr);
    KeepSamplerFigures(statePtr);
    statePtr->samplerPtr = NULL;
    CprofSamplerDestroy(sPtr);
    if (statePtr->drainTimer != NULL) {
	Tcl_DeleteTimerHandler(statePtr->drainTimer);
	statePtr->drainTimer = NULL;
    }
}

static void
ClearData(
    CprofState *statePtr)
{
    CprofTreeFree(&statePtr->tree);
    CprofTreeInit(&statePtr->tree);
    statePtr->splicedSamples = 0;
    statePtr->unsplicedSamples = 0;
    statePtr->unmatchedFrames = 0;
    statePtr->hasData = 0;
    memset(&statePtr->lastCounters, 0, sizeof(statePtr->lastCounters));
    statePtr->lastAchieved = 0;
    if (statePtr->samplerPtr != NULL) {
	CprofSampler *sPtr = statePtr->samplerPtr;

	/*
	 * Samples waiting in the ring belong to the data being dropped.
	 * While 'draining' is set the handler writes no sample (it counts
	 * the signal as profiler overhead), so counters and ring are reset
	 * together, consistently.
	 */

	sPtr->draining = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&sPtr->tail, __atomic_load_n(&sPtr->head,
		__ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
	memset(&sPtr->counters, 0, sizeof(sPtr->counters));
	sPtr->cpuNs = sPtr->wallNs = 0;
	sPtr->startCpuNs = CprofClockNs(CLOCK_THREAD_CPUTIME_ID);
	sPtr->startWallNs = CprofClockNs(CLOCK_MONOTONIC);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	sPtr->draining = 0;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * StartObjCmd --
 *
 *	tclcprof::start ?-option value ...?
 *
 *	Install the trace, calibrate the native anchor, arm the sampler.
 *	A failed start changes nothing.
 *
 *----------------------------------------------------------------------
 */

static int
DoStart(
    CprofInterp *ciPtr,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofState *statePtr = &ciPtr->state;
    CprofOptions opts = ciPtr->defaults, saved = statePtr->options;
    Tcl_Obj *labelObj = ciPtr->defaultLabelObj;

    /*
     * A run starts from the configured options; those given here apply to
     * this run only.
     */

    if (statePtr->running) {
	return StateError(interp, "profiling is already running", "RUNNING");
    }
    if (ParseOptions(interp, objc, objv, &opts, &labelObj, 0) != TCL_OK) {
	return TCL_ERROR;
    }
    statePtr->options = opts;
    CprofStackInstall(statePtr);
    CprofStackCalibrate(statePtr);
    if (opts.mode == CPROF_MODE_SAMPLE) {
	if (StartSampling(statePtr) != TCL_OK) {
	    CprofStackRemove(statePtr);
	    statePtr->options = saved;
	    return TCL_ERROR;
	}

	/*
	 * Only now that the run can start is the last run's data dropped;
	 * ClearData also drops what the new timer may already have put in
	 * the ring, together with its counters.
	 */

	ClearData(statePtr);
    }
    SetLabel(ciPtr, labelObj);
    memset(&statePtr->counters, 0, sizeof(statePtr->counters));
    statePtr->stack.maxDepth = 0;
    statePtr->running = 1;
    statePtr->paused = 0;
    statePtr->pausedNs = 0;
    statePtr->startNs = CprofMonoNs();
    statePtr->stopNs = 0;
    return TCL_OK;
}

static int
StartObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    if (objc % 2 != 1) {
	Tcl_WrongNumArgs(interp, 1, objv, "?-option value ...?");
	return TCL_ERROR;
    }
    return DoStart((CprofInterp *) clientData, interp, objc - 1, objv + 1);
}

/*
 *----------------------------------------------------------------------
 *
 * StopObjCmd, PauseObjCmd, ResumeObjCmd, ResetObjCmd --
 *
 *	tclcprof::stop
 *	tclcprof::pause
 *	tclcprof::resume
 *	tclcprof::reset
 *
 *	Pause disarms the sampler and removes the trace, so that a paused
 *	profile costs nothing per command; commands entered before resume
 *	and still running after it are not on the stack.
 *
 *----------------------------------------------------------------------
 */

static void
DoStop(
    CprofState *statePtr)
{
    StopSampling(statePtr);
    CprofStackRemove(statePtr);
    statePtr->stopNs = CprofMonoNs();
    if (statePtr->paused) {
	statePtr->pausedNs += statePtr->stopNs - statePtr->pauseStartNs;
    }
    statePtr->running = 0;
    statePtr->paused = 0;
}

static int
StopObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofState *statePtr = &((CprofInterp *) clientData)->state;

    if (objc != 1) {
	Tcl_WrongNumArgs(interp, 1, objv, NULL);
	return TCL_ERROR;
    }
    if (!statePtr->running) {
	return StateError(interp, "profiling is not running", "STOPPED");
    }
    DoStop(statePtr);
    return TCL_OK;
}

static int
PauseObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofState *statePtr = &((CprofInterp *) clientData)->state;

    if (objc != 1) {
	Tcl_WrongNumArgs(interp, 1, objv, NULL);
	return TCL_ERROR;
    }
    if (!statePtr->running) {
	return StateError(interp, "profiling is not running", "STOPPED");
    }
    if (statePtr->paused) {
	return StateError(interp, "profiling is already paused", "PAUSED");
    }
    PauseSampling(statePtr);
    CprofStackRemove(statePtr);
    statePtr->paused = 1;
    statePtr->pauseStartNs = CprofMonoNs();
    return TCL_OK;
}

static int
ResumeObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofState *statePtr = &((CprofInterp *) clientData)->state;

    if (objc != 1) {
	Tcl_WrongNumArgs(interp, 1, objv, NULL);
	return TCL_ERROR;
    }
    if (!statePtr->running) {
	return StateError(interp, "profiling is not running", "STOPPED");
    }
    if (!statePtr->paused) {
	return StateError(interp, "profiling is not paused", "NOTPAUSED");
    }
    if (statePtr->samplerPtr != NULL
	    && CprofSamplerArm(interp, statePtr->samplerPtr) != TCL_OK) {
	return TCL_ERROR;
    }
    statePtr->pausedNs += CprofMonoNs() - statePtr->pauseStartNs;
    statePtr->paused = 0;
    CprofStackInstall(statePtr);
    return TCL_OK;
}

static int
ResetObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofState *statePtr = &((CprofInterp *) clientData)->state;

    if (objc != 1) {
	Tcl_WrongNumArgs(interp, 1, objv, NULL);
	return TCL_ERROR;
    }

    /*
     * Counters and collected data go, samples waiting in the ring with
     * them; the live stack stays, since the commands on it are still
     * running.
     */

    ClearData(statePtr);
    memset(&statePtr->counters, 0, sizeof(statePtr->counters));
    statePtr->stack.maxDepth = statePtr->stack.depth;
    statePtr->pausedNs = 0;
    statePtr->startNs = CprofMonoNs();
    if (statePtr->paused) {
	statePtr->pauseStartNs = statePtr->startNs;
    }
    if (!statePtr->running) {
	statePtr->stopNs = statePtr->startNs;
    }
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * StatusObjCmd --
 *
 *	tclcprof::status
 *
 * Results:
 *	A dict: running, paused, mode, label, options, depth, elapsed,
 *	counters, calibration, sampling.
 *
 *----------------------------------------------------------------------
 */

#define PUT(d, k, v) \
    Tcl_DictObjPut(NULL, (d), Tcl_NewStringObj((k), -1), (v))

/*
 * A quantile of the handler-time histogram, in ns (bucket midpoint).
 */

static double
HistQuantile(
    const CprofSamplerCounters *cPtr,
    double q)
{
    uint64_t n = 0, seen = 0, want;
    int i;

    for (i = 0; i < CPROF_HIST_BUCKETS; i++) {
	n += cPtr->handlerHist[i];
    }
    if (n == 0) {
	return 0;
    }
    want = (uint64_t) (q * (double) n);
    if (want >= n) {
	want = n - 1;
    }
    for (i = 0; i < CPROF_HIST_BUCKETS; i++) {
	seen += cPtr->handlerHist[i];
	if (seen > want) {
	    double lo, hi;

	    CprofHistBounds(i, &lo, &hi);
	    return (lo + hi) / 2;
	}
    }
    return 0;
}

static Tcl_Obj *
SamplingDict(
    CprofState *statePtr)
{
    Tcl_Obj *dictObj = Tcl_NewDictObj(), *dropsObj, *truncObj, *handlerObj;
    CprofSampler *sPtr = statePtr->samplerPtr;
    const CprofSamplerCounters *cPtr;
    double achieved, rate;
    int clock;
    Tcl_WideInt spliced, total;

    if (sPtr != NULL) {
	double secs = SamplerSeconds(sPtr);

	cPtr = &sPtr->counters;
	achieved = secs > 0 ? cPtr->signals / secs : 0;
	rate = sPtr->rate;
	clock = sPtr->clock;
    } else {
	cPtr = &statePtr->lastCounters;
	achieved = statePtr->lastAchieved;
	rate = statePtr->lastRate;
	clock = statePtr->lastClock;
    }
    PUT(dictObj, "active", Tcl_NewBooleanObj(sPtr != NULL && sPtr->armed));
    PUT(dictObj, "clock", Tcl_NewStringObj(clockNames[clock], -1));
    PUT(dictObj, "signal", Tcl_NewStringObj(CprofSignalName(), -1));
    PUT(dictObj, "rate_requested", Tcl_NewDoubleObj(rate));
    PUT(dictObj, "rate_achieved",
	    Tcl_NewDoubleObj(((int) (achieved * 10 + 0.5)) / 10.0));
    PUT(dictObj, "signals", Tcl_NewWideIntObj((Tcl_WideInt) cPtr->signals));
    PUT(dictObj, "samples", Tcl_NewWideIntObj((Tcl_WideInt) cPtr->samples));
    PUT(dictObj, "weight", Tcl_NewWideIntObj((Tcl_WideInt) cPtr->weight));
    PUT(dictObj, "aggregated",
	    Tcl_NewWideIntObj((Tcl_WideInt) statePtr->tree.weight));
    dropsObj = Tcl_NewDictObj();
    PUT(dropsObj, "ring_full",
	    Tcl_NewWideIntObj((Tcl_WideInt) cPtr->dropsFull));
    PUT(dropsObj, "reentered",
	    Tcl_NewWideIntObj((Tcl_WideInt) cPtr->dropsBusy));
    PUT(dropsObj, "profiler",
	    Tcl_NewWideIntObj((Tcl_WideInt) cPtr->overhead));
    PUT(dictObj, "drops", dropsObj);
    truncObj = Tcl_NewDictObj();
    PUT(truncObj, "native",
	    Tcl_NewWideIntObj((Tcl_WideInt) cPtr->nativeTrunc));
    PUT(truncObj, "tcl", Tcl_NewWideIntObj((Tcl_WideInt) cPtr->tclTrunc));
    PUT(truncObj, "no_signal_frame",
	    Tcl_NewWideIntObj((Tcl_WideInt) cPtr->noSigframe));
    PUT(truncObj, "tree_nodes",
	    Tcl_NewWideIntObj((Tcl_WideInt) statePtr->tree.truncatedNodes));
    PUT(dictObj, "truncated", truncObj);
    PUT(dictObj, "foreign_signals",
	    Tcl_NewWideIntObj((Tcl_WideInt) CprofForeignSignals()));
    spliced = statePtr->splicedSamples;
    total = spliced + statePtr->unsplicedSamples;
    PUT(dictObj, "splice_rate", Tcl_NewDoubleObj(total
	    ? ((Tcl_WideInt) (10000.0 * spliced / total)) / 10000.0 : 1.0));
    PUT(dictObj, "unmatched_frames",
	    Tcl_NewWideIntObj(statePtr->unmatchedFrames));
    handlerObj = Tcl_NewDictObj();
    PUT(handlerObj, "mean_ns", Tcl_NewWideIntObj(cPtr->signals
	    ? (Tcl_WideInt) (cPtr->handlerNs / cPtr->signals) : 0));
    PUT(handlerObj, "median_ns",
	    Tcl_NewWideIntObj((Tcl_WideInt) HistQuantile(cPtr, 0.5)));
    PUT(handlerObj, "p99_ns",
	    Tcl_NewWideIntObj((Tcl_WideInt) HistQuantile(cPtr, 0.99)));
    PUT(dictObj, "handler", handlerObj);
    PUT(dictObj, "nodes", Tcl_NewIntObj(statePtr->tree.numNodes));
    return dictObj;
}

static int
StatusObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofInterp *ciPtr = (CprofInterp *) clientData;
    CprofState *statePtr = &ciPtr->state;
    CprofCounters *cPtr = &statePtr->counters;
    CprofCalibration *calPtr = &statePtr->calib;
    Tcl_Obj *resultObj, *countersObj, *calObj;
    Tcl_WideInt now, elapsed;

    if (objc != 1) {
	Tcl_WrongNumArgs(interp, 1, objv, NULL);
	return TCL_ERROR;
    }
    if (statePtr->samplerPtr != NULL) {
	CprofDrain(statePtr);
    }
    now = statePtr->running ? CprofMonoNs() : statePtr->stopNs;
    elapsed = now - statePtr->startNs - statePtr->pausedNs;
    if (statePtr->paused) {
	elapsed -= now - statePtr->pauseStartNs;
    }
    if (statePtr->startNs == 0 || elapsed < 0) {
	elapsed = 0;
    }

    resultObj = Tcl_NewDictObj();
    PUT(resultObj, "running", Tcl_NewBooleanObj(statePtr->running));
    PUT(resultObj, "paused", Tcl_NewBooleanObj(statePtr->paused));
    PUT(resultObj, "mode",
	    Tcl_NewStringObj(modeNames[statePtr->options.mode], -1));
    PUT(resultObj, "label", ciPtr->labelObj);
    PUT(resultObj, "options", OptionsDict(ciPtr));
    PUT(resultObj, "depth", Tcl_NewIntObj(statePtr->running
	    && !statePtr->paused ? CprofStackLiveDepth(statePtr) : 0));
    PUT(resultObj, "elapsed", Tcl_NewDoubleObj(elapsed / 1e9));

    countersObj = Tcl_NewDictObj();
    PUT(countersObj, "enters", Tcl_NewWideIntObj(cPtr->enters));
    PUT(countersObj, "leaves", Tcl_NewWideIntObj(cPtr->leaves));
    PUT(countersObj, "missing_leaves",
	    Tcl_NewWideIntObj(cPtr->missingLeaves));
    PUT(countersObj, "stray_leaves", Tcl_NewWideIntObj(cPtr->strayLeaves));
    PUT(countersObj, "ensembles_folded", Tcl_NewWideIntObj(cPtr->folded));
    PUT(countersObj, "coroutine_saves", Tcl_NewWideIntObj(cPtr->coroSaves));
    PUT(countersObj, "coroutine_restores",
	    Tcl_NewWideIntObj(cPtr->coroRestores));
    PUT(countersObj, "next_frames", Tcl_NewWideIntObj(cPtr->nextFrames));
    PUT(countersObj, "max_depth", Tcl_NewIntObj(statePtr->stack.maxDepth));
    PUT(resultObj, "counters", countersObj);

    calObj = Tcl_NewDictObj();
    PUT(calObj, "state", Tcl_NewStringObj(
	    calPtr->state == CPROF_CALIB_OK ? "ok"
	    : calPtr->state == CPROF_CALIB_FAILED ? "failed" : "none", -1));
    PUT(calObj, "offset", Tcl_NewWideIntObj((Tcl_WideInt) calPtr->offset));
    PUT(calObj, "message", Tcl_NewStringObj(calPtr->message, -1));
    PUT(resultObj, "calibration", calObj);
    PUT(resultObj, "sampling", SamplingDict(statePtr));

    Tcl_SetObjResult(interp, resultObj);
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * DataObjCmd --
 *
 *	tclcprof::data
 *
 * Results:
 *	The profile as a value: {meta {...} tree NODE}, where NODE is
 *	{name kind self total children ...}. See the man page.
 *
 *----------------------------------------------------------------------
 */

static int
DataObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofInterp *ciPtr = (CprofInterp *) clientData;
    CprofState *statePtr = &ciPtr->state;
    Tcl_Obj *metaObj, *resultObj, *samplingObj, *valueObj;
    Tcl_WideInt elapsed;

    if (objc != 1) {
	Tcl_WrongNumArgs(interp, 1, objv, NULL);
	return TCL_ERROR;
    }
    if (statePtr->samplerPtr != NULL) {
	CprofDrain(statePtr);
    }
    if (statePtr->startNs == 0 || (statePtr->options.mode
	    != CPROF_MODE_SAMPLE && !statePtr->hasData)) {
	Tcl_SetObjResult(interp, Tcl_NewStringObj(
		"no profile data: start profiling with tclcprof::start", -1));
	Tcl_SetErrorCode(interp, "TCLCPROF", "NODATA", NULL);
	return TCL_ERROR;
    }
    samplingObj = SamplingDict(statePtr);
    elapsed = (statePtr->running ? CprofMonoNs() : statePtr->stopNs)
	    - statePtr->startNs - statePtr->pausedNs;
    metaObj = Tcl_NewDictObj();
    PUT(metaObj, "mode", Tcl_NewStringObj("sample", -1));
    Tcl_DictObjGet(NULL, samplingObj, Tcl_NewStringObj("clock", -1),
	    &valueObj);
    PUT(metaObj, "clock", valueObj);
    Tcl_DictObjGet(NULL, samplingObj, Tcl_NewStringObj("rate_requested",
	    -1), &valueObj);
    PUT(metaObj, "rate_requested", valueObj);
    Tcl_DictObjGet(NULL, samplingObj, Tcl_NewStringObj("rate_achieved",
	    -1), &valueObj);
    PUT(metaObj, "rate_achieved", valueObj);
    PUT(metaObj, "samples",
	    Tcl_NewWideIntObj((Tcl_WideInt) statePtr->tree.samples));
    PUT(metaObj, "weight",
	    Tcl_NewWideIntObj((Tcl_WideInt) statePtr->tree.weight));
    PUT(metaObj, "elapsed", Tcl_NewDoubleObj(elapsed > 0 ? elapsed / 1e9
	    : 0.0));
    PUT(metaObj, "label", ciPtr->labelObj);
    PUT(metaObj, "native",
	    Tcl_NewStringObj(nativeNames[statePtr->options.native], -1));
    PUT(metaObj, "sampling", samplingObj);
    resultObj = Tcl_NewDictObj();
    PUT(resultObj, "meta", metaObj);
    PUT(resultObj, "tree", CprofTreeToObj(&statePtr->tree));
    Tcl_SetObjResult(interp, resultObj);
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * ProfileObjCmd --
 *
 *	tclcprof::profile ?-option value ...? script
 *
 *	Evaluate script (NRE-enabled) under profiling and return its result;
 *	profiling stops however the script ends.
 *
 *----------------------------------------------------------------------
 */

static int
ProfileDone(
    ClientData data[],
    Tcl_Interp *interp,
    int result)
{
    CprofState *statePtr = (CprofState *) data[0];

    if (statePtr->running) {
	DoStop(statePtr);
    }
    return result;
}

static int
ProfileNRCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofInterp *ciPtr = (CprofInterp *) clientData;

    if (objc < 2 || objc % 2 != 0) {
	Tcl_WrongNumArgs(interp, 1, objv, "?-option value ...? script");
	return TCL_ERROR;
    }
    if (DoStart(ciPtr, interp, objc - 2, objv + 1) != TCL_OK) {
	return TCL_ERROR;
    }
    Tcl_NRAddCallback(interp, ProfileDone, &ciPtr->state, NULL, NULL, NULL);
    return Tcl_NREvalObj(interp, objv[objc - 1], 0);
}

static int
ProfileObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    return Tcl_NRCallObjProc(interp, ProfileNRCmd, clientData, objc, objv);
}

/*
 *----------------------------------------------------------------------
 *
 * ConfigureObjCmd --
 *
 *	tclcprof::configure
 *	tclcprof::configure -option
 *	tclcprof::configure -option value ?-option value ...?
 *
 *----------------------------------------------------------------------
 */

static int
ConfigureObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofInterp *ciPtr = (CprofInterp *) clientData;
    CprofState *statePtr = &ciPtr->state;
    CprofOptions opts = statePtr->options, defaults = ciPtr->defaults;
    Tcl_Obj *labelObj = ciPtr->labelObj;
    Tcl_Obj *defaultLabelObj = ciPtr->defaultLabelObj;
    int index;

    if (objc == 1) {
	Tcl_SetObjResult(interp, OptionsDict(ciPtr));
	return TCL_OK;
    }
    if (objc == 2) {
	if (Tcl_GetIndexFromObj(interp, objv[1], optionNames, "option", 0,
		&index) != TCL_OK) {
	    Tcl_SetErrorCode(interp, "TCLCPROF", "OPTION",
		    Tcl_GetString(objv[1]), NULL);
	    return TCL_ERROR;
	}
	Tcl_SetObjResult(interp, OptionValue(ciPtr, index));
	return TCL_OK;
    }

    /*
     * configure sets the options later runs start from and, while a
     * profile runs, changes it too where that makes sense (-label,
     * -native, -control; not -mode, -clock, -rate).
     */

    if (statePtr->running && ParseOptions(interp, objc - 1, objv + 1,
	    &opts, &labelObj, 1) != TCL_OK) {
	return TCL_ERROR;
    }
    if (ParseOptions(interp, objc - 1, objv + 1, &defaults,
	    &defaultLabelObj, 0) != TCL_OK) {
	return TCL_ERROR;
    }
    ciPtr->defaults = defaults;
    SetObj(&ciPtr->defaultLabelObj, defaultLabelObj);
    if (statePtr->running) {
	statePtr->options = opts;
	SetLabel(ciPtr, labelObj);
    }
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * StackObjCmd --
 *
 *	tclcprof::stack
 *
 * Results:
 *	The tracked Tcl frames, outermost first, each a dict with name,
 *	level, kind and anchor. The frame of this command itself is left
 *	out. Empty when profiling is stopped or paused.
 *
 *----------------------------------------------------------------------
 */

static int
StackObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofState *statePtr = &((CprofInterp *) clientData)->state;
    Tcl_Obj *listObj;
    int i, depth;

    if (objc != 1) {
	Tcl_WrongNumArgs(interp, 1, objv, NULL);
	return TCL_ERROR;
    }
    listObj = Tcl_NewListObj(0, NULL);
    depth = (statePtr->running && !statePtr->paused)
	    ? CprofStackLiveDepth(statePtr) : 0;
    if (depth > 0 && statePtr->stack.frames[depth-1].token
	    == statePtr->stackCmd) {
	depth--;
    }
    for (i = 0; i < depth; i++) {
	CprofFrame *framePtr = &statePtr->stack.frames[i];
	Tcl_Obj *dictObj = Tcl_NewDictObj();
	const char *name = CprofNameString(framePtr->nameId);

	PUT(dictObj, "name", Tcl_NewStringObj(name ? name : "?", -1));
	PUT(dictObj, "level", Tcl_NewIntObj(framePtr->level));
	PUT(dictObj, "kind", Tcl_NewStringObj(CprofKindName(framePtr->kind),
		-1));
	PUT(dictObj, "anchor", Tcl_NewWideIntObj((Tcl_WideInt)
		framePtr->anchor));
	Tcl_ListObjAppendElement(NULL, listObj, dictObj);
    }
    Tcl_SetObjResult(interp, listObj);
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * DebugObjCmd --
 *
 *	tclcprof::debug aggregate stacks
 *	tclcprof::debug cfas
 *	tclcprof::debug names
 *	tclcprof::debug splice native tcl trampoline
 *	tclcprof::debug trampolines
 *
 *	Introspection and test hooks: aggregate synthetic stacks into a
 *	fresh call tree; the frame stack pointers the sampler's unwinder
 *	(libgcc) sees from here; the number of interned names; splice
 *	synthetic native and Tcl frames; the stack pointers of the
 *	trampoline frames on the native stack as libunwind finds them.
 *
 *----------------------------------------------------------------------
 */

static int
DebugSplice(
    Tcl_Interp *interp,
    Tcl_Obj *nativeObj,
    Tcl_Obj *tclObj,
    Tcl_Obj *trampObj)
{
    uintptr_t ip[CPROF_NATIVE_MAX], cfa[CPROF_NATIVE_MAX];
    CprofTclRef tcl[CPROF_TCL_MAX];
    CprofSpliceEntry out[CPROF_NATIVE_MAX + CPROF_TCL_MAX];
    Tcl_Obj **nv, **tv, **ev, *nativeLabels, *tclLabels, *resultObj;
    int nn, nt, ne, i, n, unmatched;
    Tcl_WideInt w[3];

    if (Tcl_ListObjGetElements(interp, nativeObj, &nn, &nv) != TCL_OK
	    || Tcl_ListObjGetElements(interp, tclObj, &nt, &tv) != TCL_OK
	    || Tcl_ListObjGetElements(interp, trampObj, &ne, &ev) != TCL_OK) {
	goto bad;
    }
    if (nn > CPROF_NATIVE_MAX || nt > CPROF_TCL_MAX || ne != 2
	    || Tcl_GetWideIntFromObj(NULL, ev[0], &w[0]) != TCL_OK
	    || Tcl_GetWideIntFromObj(NULL, ev[1], &w[1]) != TCL_OK) {
	goto bad;
    }
    nativeLabels = Tcl_NewListObj(0, NULL);
    tclLabels = Tcl_NewListObj(0, NULL);
    Tcl_IncrRefCount(nativeLabels);
    Tcl_IncrRefCount(tclLabels);
    for (i = 0; i < nn; i++) {
	Tcl_Obj **fv;
	int fc;

	if (Tcl_ListObjGetElements(NULL, nv[i], &fc, &fv) != TCL_OK
		|| fc != 3 || Tcl_GetWideIntFromObj(NULL, fv[1], &w[2])
		!= TCL_OK) {
	    goto badFree;
	}
	ip[i] = (uintptr_t) w[2];
	if (Tcl_GetWideIntFromObj(NULL, fv[2], &w[2]) != TCL_OK) {
	    goto badFree;
	}
	cfa[i] = (uintptr_t) w[2];
	Tcl_ListObjAppendElement(NULL, nativeLabels, fv[0]);
    }
    for (i = 0; i < nt; i++) {
	Tcl_Obj **fv;
	int fc;

	if (Tcl_ListObjGetElements(NULL, tv[i], &fc, &fv) != TCL_OK
		|| fc != 2 || Tcl_GetWideIntFromObj(NULL, fv[1], &w[2])
		!= TCL_OK) {
	    goto badFree;
	}
	memset(&tcl[i], 0, sizeof(CprofTclRef));
	tcl[i].anchor = (uintptr_t) w[2];
	Tcl_ListObjAppendElement(NULL, tclLabels, fv[0]);
    }
    n = CprofSplice(ip, cfa, nn, tcl, nt, (uintptr_t) w[0], (uintptr_t) w[1],
	    out, &unmatched);
    resultObj = Tcl_NewListObj(0, NULL);
    for (i = 0; i < n; i++) {
	Tcl_Obj *labelObj;

	Tcl_ListObjIndex(NULL, out[i].isTcl ? tclLabels : nativeLabels,
		out[i].index, &labelObj);
	Tcl_ListObjAppendElement(NULL, resultObj, labelObj);
    }
    Tcl_DecrRefCount(nativeLabels);
    Tcl_DecrRefCount(tclLabels);
    Tcl_SetObjResult(interp, Tcl_NewListObj(0, NULL));
    Tcl_ListObjAppendElement(NULL, Tcl_GetObjResult(interp), resultObj);
    Tcl_ListObjAppendElement(NULL, Tcl_GetObjResult(interp),
	    Tcl_NewIntObj(unmatched));
    return TCL_OK;

  badFree:
    Tcl_DecrRefCount(nativeLabels);
    Tcl_DecrRefCount(tclLabels);
  bad:
    Tcl_SetObjResult(interp, Tcl_NewStringObj("bad splice input: expected "
	    "native {{label ip cfa} ...} tcl {{label anchor} ...} "
	    "trampoline {start end}", -1));
    Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", "splice", NULL);
    return TCL_ERROR;
}

static int
DebugAggregate(
    Tcl_Interp *interp,
    Tcl_Obj *stacksObj)
{
    CprofTree tree;
    Tcl_Obj **sv;
    int ns, i;

    if (Tcl_ListObjGetElements(interp, stacksObj, &ns, &sv) != TCL_OK) {
	goto bad;
    }
    CprofTreeInit(&tree);
    for (i = 0; i < ns; i++) {
	Tcl_Obj **pv, **fv;
	int pc, fc, j, frames[CPROF_NATIVE_MAX + CPROF_TCL_MAX];
	Tcl_WideInt weight;

	if (Tcl_ListObjGetElements(NULL, sv[i], &pc, &pv) != TCL_OK
		|| pc != 2 || Tcl_GetWideIntFromObj(NULL, pv[0], &weight)
		!= TCL_OK || weight < 0 || Tcl_ListObjGetElements(NULL, pv[1],
		&fc, &fv) != TCL_OK || fc > CPROF_NATIVE_MAX + CPROF_TCL_MAX) {
	    CprofTreeFree(&tree);
	    goto bad;
	}
	for (j = 0; j < fc; j++) {
	    Tcl_Obj **kv;
	    int kc, isC;
	    const char *kind, *name;

	    if (Tcl_ListObjGetElements(NULL, fv[j], &kc, &kv) != TCL_OK
		    || kc != 2) {
		CprofTreeFree(&tree);
		goto bad;
	    }
	    kind = Tcl_GetString(kv[0]);
	    name = Tcl_GetString(kv[1]);
	    if (strcmp(kind, "c") == 0) {
		isC = 1;
	    } else if (strcmp(kind, "tcl") == 0) {
		isC = 0;
	    } else {
		CprofTreeFree(&tree);
		goto bad;
	    }
	    frames[j] = CprofTreeFrame(&tree, isC, CprofNameIntern(name, -1),
		    -1, isC ? -1 : CPROF_KIND_PROC);
	}
	CprofTreeAdd(&tree, frames, fc, (uint64_t) weight);
    }
    Tcl_SetObjResult(interp, CprofTreeToObj(&tree));
    CprofTreeFree(&tree);
    return TCL_OK;

  bad:
    Tcl_SetObjResult(interp, Tcl_NewStringObj("bad stacks: expected "
	    "{{weight {{tcl|c name} ...}} ...}", -1));
    Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", "aggregate", NULL);
    return TCL_ERROR;
}

static int
DebugObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    static const char *const subNames[] = {
	"aggregate", "cfas", "names", "splice", "trampolines", NULL
    };
    enum { SUB_AGGREGATE, SUB_CFAS, SUB_NAMES, SUB_SPLICE, SUB_TRAMPOLINES };
    static const int arity[] = {3, 2, 2, 5, 2};
    static const char *const usage[] = {
	"aggregate stacks", "cfas", "names", "splice native tcl trampoline",
	"trampolines"
    };
    CprofState *statePtr = &((CprofInterp *) clientData)->state;
    int index;

    if (objc < 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "subcommand ?arg ...?");
	return TCL_ERROR;
    }
    if (Tcl_GetIndexFromObj(interp, objv[1], subNames, "subcommand", 0,
	    &index) != TCL_OK) {
	Tcl_SetErrorCode(interp, "TCLCPROF", "SUBCOMMAND",
		Tcl_GetString(objv[1]), NULL);
	return TCL_ERROR;
    }
    if (objc != arity[index]) {
	Tcl_WrongNumArgs(interp, 1, objv, usage[index]);
	return TCL_ERROR;
    }
    switch (index) {
    case SUB_AGGREGATE:
	return DebugAggregate(interp, objv[2]);
    case SUB_SPLICE:
	return DebugSplice(interp, objv[2], objv[3], objv[4]);
    case SUB_NAMES:
	Tcl_SetObjResult(interp, Tcl_NewIntObj(CprofNameCount()));
	break;
    case SUB_CFAS: {
	uintptr_t ip[256], cfa[256];
	int n, i;
	Tcl_Obj *listObj = Tcl_NewListObj(0, NULL);

	n = CprofNativeWalk(ip, cfa, 256);
	for (i = 0; i < n; i++) {
	    Tcl_ListObjAppendElement(NULL, listObj,
		    Tcl_NewWideIntObj((Tcl_WideInt) cfa[i]));
	}
	Tcl_SetObjResult(interp, listObj);
	break;
    }
    case SUB_TRAMPOLINES: {
	uintptr_t sps[256], start, end;
	char msg[160];
	int n, i;
	Tcl_Obj *listObj = Tcl_NewListObj(0, NULL);

	if (statePtr->calib.trampEnd != 0) {
	    start = statePtr->calib.trampStart;
	    end = statePtr->calib.trampEnd;
	} else if (!CprofTrampolineRange(&start, &end, msg, sizeof(msg))) {
	    Tcl_SetObjResult(interp, Tcl_NewStringObj(msg, -1));
	    Tcl_SetErrorCode(interp, "TCLCPROF", "NATIVE", NULL);
	    return TCL_ERROR;
	}
	n = CprofNativeTrampolines(start, end, sps, 256);
	for (i = 0; i < n; i++) {
	    Tcl_ListObjAppendElement(NULL, listObj,
		    Tcl_NewWideIntObj((Tcl_WideInt) sps[i]));
	}
	Tcl_SetObjResult(interp, listObj);
	break;
    }
    }
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * DeleteState --
 *
 *	AssocData delete proc: the interpreter is going away (or the package
 *	is unloaded). Stop profiling and free everything.
 *
 *----------------------------------------------------------------------
 */

static void
DeleteState(
    ClientData clientData,
    Tcl_Interp *interp)
{
    CprofInterp *ciPtr = (CprofInterp *) clientData;
    CprofState *statePtr = &ciPtr->state;

    statePtr->deleting = 1;
    StopSampling(statePtr);
    CprofStackRemove(statePtr);
    statePtr->running = 0;
    CprofStackFreeState(statePtr);
    CprofTreeFree(&statePtr->tree);
    if (statePtr->symPtr != NULL) {
	CprofSymFree(statePtr->symPtr);
    }
    if (statePtr->moduleFlags != NULL) {
	ckfree(statePtr->moduleFlags);
    }
    Tcl_DecrRefCount(ciPtr->labelObj);
    Tcl_DecrRefCount(ciPtr->defaultLabelObj);
    ckfree(ciPtr);
}

/*
 *----------------------------------------------------------------------
 *
 * Tclcprof_Init --
 *
 *	Load the package into an interpreter: stubs first, then the
 *	::tclcprof namespace, its commands and ensemble, and provide last.
 *
 *----------------------------------------------------------------------
 */

int
Tclcprof_Init(
    Tcl_Interp *interp)
{
    Tcl_Namespace *nsPtr;
    CprofInterp *ciPtr;
    CprofState *statePtr;
    Tcl_Command ensemble;
    int i;

    if (Tcl_InitStubs(interp, "8.6", 0) == NULL) {
	return TCL_ERROR;
    }
    if (Tcl_OOInitStubs(interp) == NULL) {
	return TCL_ERROR;
    }
    if (CprofCheckTclVersion(interp) != TCL_OK) {
	return TCL_ERROR;
    }
    if (Tcl_GetAssocData(interp, CPROF_ASSOC, NULL) != NULL) {
	return Tcl_PkgProvideEx(interp, "tclcprof", PACKAGE_VERSION, NULL);
    }

    nsPtr = Tcl_FindNamespace(interp, "::tclcprof", NULL, 0);
    if (nsPtr == NULL) {
	nsPtr = Tcl_CreateNamespace(interp, "::tclcprof", NULL, NULL);
	if (nsPtr == NULL) {
	    return TCL_ERROR;
	}
    }

    ciPtr = (CprofInterp *) ckalloc(sizeof(CprofInterp));
    memset(ciPtr, 0, sizeof(CprofInterp));
    statePtr = &ciPtr->state;
    statePtr->interp = interp;
    statePtr->options.mode = CPROF_MODE_SAMPLE;
    statePtr->options.clock = CPROF_CLOCK_CPU;
    statePtr->options.native = CPROF_NATIVE_USER;
    ciPtr->defaults = statePtr->options;
    ciPtr->defaultLabelObj = Tcl_NewObj();
    Tcl_IncrRefCount(ciPtr->defaultLabelObj);
    CprofTreeInit(&statePtr->tree);
    ciPtr->labelObj = Tcl_NewObj();
    Tcl_IncrRefCount(ciPtr->labelObj);
    CprofStackInitState(statePtr);
    Tcl_SetAssocData(interp, CPROF_ASSOC, DeleteState, ciPtr);

    for (i = 0; commandTable[i].name != NULL; i++) {
	Tcl_DString ds;
	Tcl_Command token;

	Tcl_DStringInit(&ds);
	Tcl_DStringAppend(&ds, "::tclcprof::", -1);
	Tcl_DStringAppend(&ds, commandTable[i].name, -1);
	if (commandTable[i].nreProc != NULL) {
	    token = Tcl_NRCreateCommand(interp, Tcl_DStringValue(&ds),
		    commandTable[i].proc, commandTable[i].nreProc, ciPtr,
		    NULL);
	} else {
	    token = Tcl_CreateObjCommand(interp, Tcl_DStringValue(&ds),
		    commandTable[i].proc, ciPtr, NULL);
	}
	if (commandTable[i].proc == StackObjCmd) {
	    statePtr->stackCmd = token;
	}
	Tcl_DStringFree(&ds);
	if (Tcl_Export(interp, nsPtr, commandTable[i].name, 0) != TCL_OK) {
	    return TCL_ERROR;
	}
    }
    ensemble = Tcl_FindEnsemble(interp, Tcl_NewStringObj("::tclcprof", -1),
	    0);
    if (ensemble == NULL) {
	Tcl_ResetResult(interp);
	ensemble = Tcl_CreateEnsemble(interp, "::tclcprof", nsPtr, 0);
	if (ensemble == NULL) {
	    return TCL_ERROR;
	}
    }
    Tcl_SetVar2Ex(interp, "::tclcprof::version", NULL,
	    Tcl_NewStringObj(PACKAGE_VERSION, -1), 0);
    return Tcl_PkgProvideEx(interp, "tclcprof", PACKAGE_VERSION, NULL);
}

/*
 *----------------------------------------------------------------------
 *
 * Tclcprof_SafeInit --
 *
 *	A safe interpreter may not install traces on its master's behalf or
 *	take signals: refuse.
 *
 *----------------------------------------------------------------------
 */

int
Tclcprof_SafeInit(
    Tcl_Interp *interp)
{
    Tcl_SetObjResult(interp, Tcl_NewStringObj(
	    "tclcprof cannot be loaded into a safe interpreter", -1));
    Tcl_SetErrorCode(interp, "TCLCPROF", "UNSAFE", NULL);
    return TCL_ERROR;
}

/*
 *----------------------------------------------------------------------
 *
 * Tclcprof_Unload --
 *
 *	unload: stop profiling in this interpreter and remove the package's
 *	commands and state. Nothing process-wide is left running (the level
 *	stack owns no timers or signals).
 *
 *----------------------------------------------------------------------
 */

int
Tclcprof_Unload(
    Tcl_Interp *interp,
    int flags)
{
    Tcl_Namespace *nsPtr;

    Tcl_DeleteAssocData(interp, CPROF_ASSOC);
    nsPtr = Tcl_FindNamespace(interp, "::tclcprof", NULL, 0);
    if (nsPtr != NULL) {
	Tcl_DeleteNamespace(nsPtr);
    }
    return TCL_OK;
}

int
Tclcprof_SafeUnload(
    Tcl_Interp *interp,
    int flags)
{
    return Tclcprof_Unload(interp, flags);
}
