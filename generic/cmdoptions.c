/*
 * cmdoptions.c --
 *
 *	The options of start and configure: the table, parsing and checking
 *	(which options apply to which modes, which may change while a run
 *	goes on) and the values configure reports; the configure command
 *	(what a run started without options uses) is cmdconfigure.c's. The
 *	names of the options and of their values, and the errors, are
 *	cmdutil.c's.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "cmdInt.h"
#include <string.h>

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

/*
 * The clock a run uses: -clock auto is the CPU clock for sampling and
 * elapsed time for exact timing (and for mode both).
 */

int
CprofRunClock(
    const CprofOptions *optsPtr)
{
    if (optsPtr->clock != CPROF_CLOCK_AUTO) {
	return optsPtr->clock;
    }
    return (optsPtr->mode == CPROF_MODE_SAMPLE
	    || optsPtr->mode == CPROF_MODE_STACK)
	    ? CPROF_CLOCK_CPU : CPROF_CLOCK_WALL;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofParseOptions --
 *
 *	Parse "-option value ..." into *optsPtr and *labelPtrPtr. Options
 *	that cannot change while profiling runs are refused when 'running'.
 *
 *	When 'running', *optsPtr holds the running profile's options, whose
 *	clock is resolved (never auto): a -clock that resolves to another
 *	clock is refused, and the run's clock is kept.
 *
 * Results:
 *	TCL_OK, or TCL_ERROR with a TCLCPROF error code; *optsPtr is then
 *	unchanged in meaning (the caller passes a copy).
 *
 *----------------------------------------------------------------------
 */

int
CprofParseOptions(
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[],
    CprofOptions *optsPtr,
    Tcl_Obj **objs,
    int running,
    int *givenPtr)
{
    int i, index, value;
    Tcl_Size n;
    double number;
    CprofOptions before = *optsPtr;

    for (i = 0; i < objc; i += 2) {
	if (CprofOptionIndex(interp, objv[i], cprofOptionNames, &index)
		!= TCL_OK) {
	    return TCL_ERROR;
	}
	if (i + 1 >= objc) {
	    Tcl_SetObjResult(interp, Tcl_ObjPrintf(
		    "missing value for option \"%s\"", cprofOptionNames[index]));
	    Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", cprofOptionNames[index],
		    NULL);
	    return TCL_ERROR;
	}
	if (givenPtr != NULL) {
	    *givenPtr |= 1 << index;
	}
	switch ((enum CprofOption) index) {
	case OPT_CAPTURE:
	    if (GetEnum(interp, objv[i+1], CprofCaptureNames(), "capture",
		    "-capture", &optsPtr->capture) != TCL_OK) {
		return TCL_ERROR;
	    }
	    optsPtr->captureAsked = 1;
	    break;
	case OPT_SCOPE:
	    if (GetEnum(interp, objv[i+1], cprofScopeNames, "scope", "-scope",
		    &optsPtr->scope) != TCL_OK) {
		return TCL_ERROR;
	    }
	    break;
	case OPT_CLOCK:
	    if (GetEnum(interp, objv[i+1], cprofClockNames, "clock", "-clock",
		    &optsPtr->clock) != TCL_OK) {
		return TCL_ERROR;
	    }
	    break;
	case OPT_COMMIT:
	    if (GetEnum(interp, objv[i+1], cprofCommitNames, "commit mode",
		    "-commit", &optsPtr->commit) != TCL_OK) {
		return TCL_ERROR;
	    }
	    break;
	case OPT_DB:
	    objs[OBJ_DB] = objv[i+1];
	    break;
	case OPT_FLUSH:
	    if (Tcl_GetIntFromObj(NULL, objv[i+1], &value) != TCL_OK
		    || value < 10 || value > MAX_FLUSH_MS) {
		return CprofBadValue(interp, "-flush", objv[i+1],
			"expected a number of milliseconds from 10 to "
			"86400000");
	    }
	    optsPtr->flushMs = value;
	    break;
	case OPT_HISTORY:
	    objs[OBJ_HISTORY] = objv[i+1];
	    break;
	case OPT_EVERY:
	case OPT_KEEP_HOURS:
	    if (Tcl_GetDoubleFromObj(NULL, objv[i+1], &number) != TCL_OK
		    || !(number >= (index == OPT_EVERY ? 0.05 : 0.0)
		    && number <= 1e6)) {
		return CprofBadValue(interp, cprofOptionNames[index], objv[i+1],
			index == OPT_EVERY ? "expected a number of seconds from"
			" 0.05 to 1000000" : "expected a number of hours from 0"
			" (no limit) to 1000000");
	    }
	    if (index == OPT_EVERY) {
		optsPtr->everySec = number;
	    } else {
		optsPtr->keepHours = number;
	    }
	    break;
	case OPT_KEEP:
	    if (Tcl_GetIntFromObj(NULL, objv[i+1], &value) != TCL_OK
		    || value < 0) {
		return CprofBadValue(interp, "-keep", objv[i+1],
			"expected a number of files (0 for no limit)");
	    }
	    optsPtr->keep = value;
	    break;
	case OPT_TEST:
	    if (Tcl_ListObjLength(NULL, objv[i+1], &n) != TCL_OK
		    || (n != 0 && n != 2)) {
		return CprofBadValue(interp, "-test", objv[i+1],
			"expected a list {file name}, or empty");
	    }
	    objs[OBJ_TEST] = objv[i+1];
	    break;
	case OPT_COMPENSATE:
	case OPT_CONTROL:
	case OPT_EVENTS:
	case OPT_INSTANCES:
	case OPT_LINES:
	case OPT_SEED:
	    if (Tcl_GetBooleanFromObj(NULL, objv[i+1], &value) != TCL_OK) {
		return CprofBadValue(interp, cprofOptionNames[index], objv[i+1],
			"expected a boolean");
	    }
	    if (index == OPT_COMPENSATE) {
		optsPtr->compensate = value;
	    } else if (index == OPT_CONTROL) {
		optsPtr->control = value;
	    } else if (index == OPT_EVENTS) {
		optsPtr->events = value;
	    } else if (index == OPT_INSTANCES) {
		optsPtr->instances = value;
	    } else if (index == OPT_SEED) {
		optsPtr->seed = value;
	    } else {
		optsPtr->lines = value;
	    }
	    break;
	case OPT_DURATION:
	case OPT_SLOW:
	    if (Tcl_GetDoubleFromObj(NULL, objv[i+1], &number) != TCL_OK
		    || !(number >= 0 && number < 1e9)) {
		return CprofBadValue(interp, cprofOptionNames[index], objv[i+1],
			index == OPT_DURATION ? "expected a number of seconds"
			" (0 for no limit)" : "expected a number of "
			"milliseconds (0 for no slow-call watch)");
	    }
	    if (index == OPT_DURATION) {
		optsPtr->duration = number;
	    } else {
		optsPtr->slowMs = number;
	    }
	    break;
	case OPT_EVENTLIMIT:
	    if (Tcl_GetIntFromObj(NULL, objv[i+1], &value) != TCL_OK
		    || value < 1 || value > MAX_EVENT_LIMIT) {
		return CprofBadValue(interp, "-eventlimit", objv[i+1],
			"expected a number of events from 1 to 50000000");
	    }
	    optsPtr->eventLimit = value;
	    break;
	case OPT_EXCLUDE:
	case OPT_INCLUDE:
	    if (Tcl_ListObjLength(NULL, objv[i+1], &n) != TCL_OK) {
		return CprofBadValue(interp, cprofOptionNames[index], objv[i+1],
			"expected a list of glob patterns");
	    }
	    objs[index == OPT_EXCLUDE ? OBJ_EXCLUDE : OBJ_INCLUDE] = objv[i+1];
	    break;
	case OPT_SUBCOMMANDS:
	    if (Tcl_ListObjLength(NULL, objv[i+1], &n) != TCL_OK) {
		return CprofBadValue(interp, "-subcommands", objv[i+1],
			"expected a list of glob patterns");
	    }
	    objs[OBJ_SUBCOMMANDS] = objv[i+1];
	    break;
	case OPT_LABEL:
	    objs[OBJ_LABEL] = objv[i+1];
	    break;
	case OPT_MODE: {
	    Tcl_Obj **words;

	    /*
	     * A mode, or "sample memory" (either order): time samples and
	     * memory samples in the same run.
	     */

	    if (Tcl_ListObjGetElements(NULL, objv[i+1], &n, &words) == TCL_OK
		    && n == 2) {
		int a, b;

		if (GetEnum(interp, words[0], cprofModeNames, "mode", "-mode",
			&a) != TCL_OK || GetEnum(interp, words[1],
			cprofModeNames, "mode", "-mode", &b) != TCL_OK) {
		    Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", "-mode",
			    Tcl_GetString(objv[i+1]), NULL);
		    return TCL_ERROR;
		}
		if (!((a == CPROF_MODE_SAMPLE && b == CPROF_MODE_MEMORY)
			|| (a == CPROF_MODE_MEMORY && b == CPROF_MODE_SAMPLE))) {
		    return CprofBadValue(interp, "-mode", objv[i+1],
			    "only sample and memory combine");
		}
		optsPtr->mode = CPROF_MODE_SAMPLE;
		optsPtr->memory = 1;
		break;
	    }
	    if (GetEnum(interp, objv[i+1], cprofModeNames, "mode", "-mode",
		    &optsPtr->mode) != TCL_OK) {
		return TCL_ERROR;
	    }
	    optsPtr->memory = (optsPtr->mode == CPROF_MODE_MEMORY);
	    break;
	}
	case OPT_MEMRATE: {
	    Tcl_WideInt bytes;

	    if (Tcl_GetWideIntFromObj(NULL, objv[i+1], &bytes) != TCL_OK
		    || bytes < 1 || bytes > MAX_MEMRATE) {
		return CprofBadValue(interp, "-memrate", objv[i+1],
			"expected a number of bytes from 1 to 1099511627776");
	    }
	    optsPtr->memRate = bytes;
	    break;
	}
	case OPT_NATIVE:
	    if (GetEnum(interp, objv[i+1], cprofNativeNames, "native", "-native",
		    &optsPtr->native) != TCL_OK) {
		return TCL_ERROR;
	    }
	    break;
	case OPT_ONSLOW:
	    if (Tcl_ListObjLength(NULL, objv[i+1], &n) != TCL_OK) {
		return CprofBadValue(interp, "-onslow", objv[i+1],
			"expected a command prefix (a list)");
	    }
	    objs[OBJ_ONSLOW] = objv[i+1];
	    break;
	case OPT_RATE:
	    if (Tcl_GetDoubleFromObj(NULL, objv[i+1], &number) != TCL_OK
		    || !(number >= 1.0 && number <= MAX_RATE)) {
		return CprofBadValue(interp, "-rate", objv[i+1],
			"expected a number of samples per second from 1 to "
			"10000");
	    }
	    optsPtr->rate = number;
	    break;
	}
    }

    /*
     * What the collector was built with cannot change under it.
     */

    if (running) {
	const char *which = NULL;

	if (optsPtr->mode != before.mode
		|| optsPtr->memory != before.memory) {
	    which = "-mode";
	} else if (optsPtr->memRate != before.memRate) {
	    which = "-memrate";
	} else if (optsPtr->capture != before.capture) {
	    which = "-capture";
	} else if (optsPtr->scope != before.scope) {
	    which = "-scope";
	} else if (CprofRunClock(optsPtr) != before.clock) {
	    which = "-clock";
	} else if (optsPtr->rate != before.rate) {
	    which = "-rate";
	} else if (optsPtr->lines != before.lines) {
	    which = "-lines";
	} else if (optsPtr->instances != before.instances) {
	    which = "-instances";
	} else if (optsPtr->seed != before.seed) {
	    which = "-seed";
	} else if (optsPtr->events != before.events) {
	    which = "-events";
	} else if (optsPtr->eventLimit != before.eventLimit) {
	    which = "-eventlimit";
	} else if (optsPtr->compensate != before.compensate) {
	    which = "-compensate";
	} else if (optsPtr->commit != before.commit) {
	    which = "-commit";
	} else if (optsPtr->flushMs != before.flushMs) {
	    which = "-flush";
	} else if (optsPtr->everySec != before.everySec) {
	    which = "-every";
	} else if (optsPtr->keep != before.keep) {
	    which = "-keep";
	} else if (optsPtr->keepHours != before.keepHours) {
	    which = "-keep-hours";
	}
	if (which != NULL) {
	    Tcl_SetObjResult(interp, Tcl_ObjPrintf(
		    "cannot change %s while profiling is running", which));
	    Tcl_SetErrorCode(interp, "TCLCPROF", "STATE", "RUNNING", NULL);
	    return TCL_ERROR;
	}
	optsPtr->clock = before.clock;
    }
    return TCL_OK;
}

/*
 * Options that apply to some modes only: given explicitly to a run of
 * another mode, they are an error (configured ones are just not used).
 */

int
CprofCheckModeOptions(
    Tcl_Interp *interp,
    const CprofOptions *optsPtr,
    int given)
{
    static const struct {
	int option;
	int modes;		/* Bit mask of the modes it applies to. */
	const char *which;
    } rules[] = {
	{OPT_LINES, (1 << CPROF_MODE_SAMPLE) | (1 << CPROF_MODE_EXACT)
		| (1 << CPROF_MODE_BOTH) | (1 << CPROF_MODE_COVERAGE)
		| (1 << CPROF_MODE_MEMORY),
		"sample, exact, both, coverage or memory"},
	{OPT_EVENTS, (1 << CPROF_MODE_EXACT) | (1 << CPROF_MODE_BOTH),
		"exact or both"},
	{OPT_SLOW, (1 << CPROF_MODE_EXACT) | (1 << CPROF_MODE_BOTH),
		"exact or both"},
	{OPT_ONSLOW, (1 << CPROF_MODE_EXACT) | (1 << CPROF_MODE_BOTH),
		"exact or both"},
	{OPT_COMPENSATE, (1 << CPROF_MODE_EXACT) | (1 << CPROF_MODE_BOTH),
		"exact or both"},
	{OPT_DB, ~(1 << CPROF_MODE_STACK),
		"sample, exact, both, coverage or memory"},
	{OPT_COMMIT, ~(1 << CPROF_MODE_STACK),
		"sample, exact, both, coverage or memory"},
	{OPT_FLUSH, ~(1 << CPROF_MODE_STACK),
		"sample, exact, both, coverage or memory"},
	{OPT_HISTORY, ~(1 << CPROF_MODE_STACK),
		"sample, exact, both, coverage or memory"},
	{-1, 0, NULL}
    };
    int i;

    if ((given & (1 << OPT_KEEP)) && (given & (1 << OPT_KEEP_HOURS))
	    && optsPtr->keep > 0 && optsPtr->keepHours > 0) {
	Tcl_SetObjResult(interp, Tcl_NewStringObj(
		"-keep and -keep-hours cannot be used together", -1));
	Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", "-keep-hours", NULL);
	return TCL_ERROR;
    }
    if ((given & (1 << OPT_MEMRATE)) && !optsPtr->memory) {
	Tcl_SetObjResult(interp, Tcl_ObjPrintf(
		"-memrate applies to -mode memory, not to -mode %s",
		cprofModeNames[optsPtr->mode]));
	Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", "-memrate", NULL);
	return TCL_ERROR;
    }
    for (i = 0; rules[i].option >= 0; i++) {
	if ((given & (1 << rules[i].option))
		&& !(rules[i].modes & (1 << optsPtr->mode))) {
	    Tcl_SetObjResult(interp, Tcl_ObjPrintf(
		    "%s applies to -mode %s, not to -mode %s",
		    cprofOptionNames[rules[i].option], rules[i].which,
		    cprofModeNames[optsPtr->mode]));
	    Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE",
		    cprofOptionNames[rules[i].option], NULL);
	    return TCL_ERROR;
	}
    }
    return TCL_OK;
}

/*
 * The options configure reports: those of the running profile while one
 * runs, else the configured ones that the next run will start from.
 */

Tcl_Obj *
CprofOptionValue(
    CprofInterp *ciPtr,
    int index)
{
    int running = ciPtr->state.running;
    CprofOptions *optsPtr = running ? &ciPtr->state.options
	    : &ciPtr->defaults;
    Tcl_Obj **objs = running ? ciPtr->objs : ciPtr->defaultObjs;

    switch ((enum CprofOption) index) {
    case OPT_CAPTURE:
	return Tcl_NewStringObj(CprofCaptureName(optsPtr->capture), -1);
    case OPT_CLOCK:
	return Tcl_NewStringObj(cprofClockNames[optsPtr->clock], -1);
    case OPT_COMMIT:
	return Tcl_NewStringObj(cprofCommitNames[optsPtr->commit], -1);
    case OPT_DB:
	return objs[OBJ_DB];
    case OPT_FLUSH:
	return Tcl_NewIntObj(optsPtr->flushMs > 0 ? optsPtr->flushMs
		: optsPtr->commit ? DEFAULT_FLUSH_DIRECT : DEFAULT_FLUSH_STAGED);
    case OPT_TEST:
	return objs[OBJ_TEST];
    case OPT_HISTORY:
	return objs[OBJ_HISTORY];
    case OPT_EVERY:
	return Tcl_NewDoubleObj(optsPtr->everySec > 0 ? optsPtr->everySec
		: DEFAULT_HISTORY_EVERY);
    case OPT_KEEP:
	return Tcl_NewIntObj(optsPtr->keep);
    case OPT_KEEP_HOURS:
	return Tcl_NewDoubleObj(optsPtr->keepHours);
    case OPT_COMPENSATE:
	return Tcl_NewBooleanObj(optsPtr->compensate);
    case OPT_CONTROL:
	return Tcl_NewBooleanObj(optsPtr->control);
    case OPT_DURATION:
	return Tcl_NewDoubleObj(optsPtr->duration);
    case OPT_EVENTLIMIT:
	return Tcl_NewIntObj(optsPtr->eventLimit);
    case OPT_EVENTS:
	return Tcl_NewBooleanObj(optsPtr->events);
    case OPT_EXCLUDE:
	return objs[OBJ_EXCLUDE];
    case OPT_INCLUDE:
	return objs[OBJ_INCLUDE];
    case OPT_INSTANCES:
	return Tcl_NewBooleanObj(optsPtr->instances);
    case OPT_SUBCOMMANDS:
	return objs[OBJ_SUBCOMMANDS];
    case OPT_LABEL:
	return objs[OBJ_LABEL];
    case OPT_LINES:
	return Tcl_NewBooleanObj(optsPtr->lines);
    case OPT_MODE:
	if (optsPtr->memory && optsPtr->mode != CPROF_MODE_MEMORY) {
	    return Tcl_ObjPrintf("%s memory", cprofModeNames[optsPtr->mode]);
	}
	return Tcl_NewStringObj(cprofModeNames[optsPtr->mode], -1);
    case OPT_MEMRATE:
	return Tcl_NewWideIntObj(optsPtr->memRate);
    case OPT_NATIVE:
	return Tcl_NewStringObj(cprofNativeNames[optsPtr->native], -1);
    case OPT_ONSLOW:
	return objs[OBJ_ONSLOW];
    case OPT_RATE:
	return Tcl_NewDoubleObj(optsPtr->rate > 0 ? optsPtr->rate
		: CprofDefaultRate(optsPtr->clock == CPROF_CLOCK_WALL
		? CPROF_CLOCK_WALL : CPROF_CLOCK_CPU));
    case OPT_SLOW:
	return Tcl_NewDoubleObj(optsPtr->slowMs);
    case OPT_SCOPE:
	return Tcl_NewStringObj(cprofScopeNames[optsPtr->scope], -1);
    case OPT_SEED:
	return Tcl_NewBooleanObj(optsPtr->seed);
    }
    return Tcl_NewObj();
}

Tcl_Obj *
CprofOptionsDict(
    CprofInterp *ciPtr)
{
    Tcl_Obj *dictObj = Tcl_NewDictObj();
    int i;

    for (i = 0; cprofOptionNames[i] != NULL; i++) {
	Tcl_DictObjPut(NULL, dictObj, Tcl_NewStringObj(cprofOptionNames[i], -1),
		CprofOptionValue(ciPtr, i));
    }
    return dictObj;
}

/*
 * Replace the object options in 'dest' by those in 'src', with the
 * reference counts that go with it.
 */

void
CprofSetObjs(
    Tcl_Obj **dest,
    Tcl_Obj *const *src)
{
    int i;

    for (i = 0; i < OBJ_COUNT; i++) {
	Tcl_IncrRefCount(src[i]);
	Tcl_DecrRefCount(dest[i]);
	dest[i] = src[i];
    }
}
