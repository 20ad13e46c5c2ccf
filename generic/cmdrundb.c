/*
 * cmdrundb.c --
 *
 *	A run with -db: its file opened and the run added at start, flushes
 *	while it runs, its last state written when it ends however it ends,
 *	the exit flush, and fork.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "cmdInt.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>

static void		AfterFork(CprofInterp *ciPtr);
static int		OpenAt(CprofInterp *ciPtr, Tcl_Interp *interp,
			    const CprofOptions *optsPtr, Tcl_Obj *const *objs,
			    Tcl_Obj *pathObj, double startWall);
static void		Rotate(CprofInterp *ciPtr, int fromTimer);

/*
 *----------------------------------------------------------------------
 *
 * The store of a run with -db --
 *
 *	CprofRunDbOpen opens the file and adds the run; flushes come from the
 *	trace callback's poll every 256 commands (Poll) and from an
 *	event-loop timer when the program waits (CprofRunDbFlushTimerProc), each
 *	one transaction; CprofRunDbFinish writes the run's last state and closes
 *	the file when the run ends, however it ends: stop, -duration, the
 *	interpreter deleted, or exit (ExitFlush, a thread exit handler,
 *	which Tcl's exit runs). After fork the child notices the pid
 *	changed (AfterFork): it leaves the parent's connection alone, opens
 *	its own and writes its profile as a run of its own, whose
 *	parent_run is the parent's.
 *
 *----------------------------------------------------------------------
 */

int
CprofRunDbFlushMs(
    const CprofOptions *optsPtr)
{
    return optsPtr->flushMs > 0 ? optsPtr->flushMs
	    : optsPtr->commit ? DEFAULT_FLUSH_DIRECT : DEFAULT_FLUSH_STAGED;
}

/*
 * The columns of the run fixed at its start.
 */

Tcl_Obj *
CprofRunDbInfo(
    CprofInterp *ciPtr,
    const CprofOptions *optsPtr,
    Tcl_Obj *const *objs,
    Tcl_WideInt parentRun,
    double startWall)
{
    Tcl_Interp *interp = ciPtr->state.interp;
    Tcl_Obj *infoObj = Tcl_NewDictObj(), *valueObj, *cwdObj;

    PUT(infoObj, "label", objs[OBJ_LABEL]);
    PUT(infoObj, "mode", Tcl_NewStringObj(cprofModeNames[optsPtr->mode], -1));
    PUT(infoObj, "clock", Tcl_NewStringObj(cprofClockNames[optsPtr->clock], -1));
    PUT(infoObj, "host", Tcl_NewStringObj(Tcl_GetHostName(), -1));
    valueObj = Tcl_GetVar2Ex(interp, "argv0", NULL, TCL_GLOBAL_ONLY);
    if (valueObj != NULL) {
	PUT(infoObj, "argv0", valueObj);
    }
    valueObj = Tcl_GetVar2Ex(interp, "argv", NULL, TCL_GLOBAL_ONLY);
    if (valueObj != NULL) {
	PUT(infoObj, "argv", valueObj);
    }
    cwdObj = Tcl_FSGetCwd(interp);
    if (cwdObj != NULL) {
	PUT(infoObj, "cwd", cwdObj);
	Tcl_DecrRefCount(cwdObj);
    } else {
	Tcl_ResetResult(interp);
    }
    valueObj = Tcl_GetVar2Ex(interp, "tcl_patchLevel", NULL,
	    TCL_GLOBAL_ONLY);
    if (valueObj != NULL) {
	PUT(infoObj, "tcl_version", valueObj);
    }
    PUT(infoObj, "tclcprof_version", Tcl_NewStringObj(PACKAGE_VERSION, -1));
    if (CprofModeSamples(optsPtr->mode)) {
	PUT(infoObj, "rate_requested", Tcl_NewDoubleObj(optsPtr->rate > 0
		? optsPtr->rate : CprofDefaultRate(optsPtr->clock)));
    }
    {
	Tcl_Obj **tv;
	Tcl_Size tc;

	if (Tcl_ListObjGetElements(NULL, objs[OBJ_TEST], &tc, &tv)
		== TCL_OK && tc == 2) {
	    PUT(infoObj, "test_file", tv[0]);
	    PUT(infoObj, "test_name", tv[1]);
	}
    }
    PUT(infoObj, "has_lines", Tcl_NewIntObj(optsPtr->lines
	    && CprofModeExact(optsPtr->mode)));
    PUT(infoObj, "has_events", Tcl_NewIntObj(optsPtr->events));
    if (parentRun > 0) {
	PUT(infoObj, "parent_run", Tcl_NewWideIntObj(parentRun));
    }
    PUT(infoObj, "start_time", Tcl_NewDoubleObj(startWall));
    return infoObj;
}

void
CprofRunDbUpdatePolling(
    CprofInterp *ciPtr)
{
    CprofState *statePtr = &ciPtr->state;

    statePtr->polling = statePtr->running && (statePtr->deadlineNs != 0
	    || ciPtr->storePtr != NULL || ciPtr->member);
}

/*
 * Report a failure of work done on the program's behalf, outside any
 * command of tclcprof (a flush from the trace callback or a timer), as a
 * background error; or on stderr when the process is exiting.
 */

static void
BackgroundError(
    CprofInterp *ciPtr,
    int exiting)
{
    Tcl_Interp *interp = ciPtr->state.interp;
    Tcl_InterpState saved;

    if (ciPtr->storePtr == NULL) {
	return;
    }
    if (exiting || Tcl_InterpDeleted(interp)) {
	Tcl_Obj *msgObj;

	saved = Tcl_SaveInterpState(interp, TCL_OK);
	CprofStoreLastError(interp, ciPtr->storePtr);
	msgObj = Tcl_GetObjResult(interp);
	fprintf(stderr, "tclcprof: %s\n", Tcl_GetString(msgObj));
	Tcl_RestoreInterpState(interp, saved);
	return;
    }
    saved = Tcl_SaveInterpState(interp, TCL_OK);
    CprofStoreLastError(interp, ciPtr->storePtr);
    Tcl_AddErrorInfo(interp, "\n    (tclcprof writing a profile to -db)");
    Tcl_BackgroundException(interp, TCL_ERROR);
    Tcl_RestoreInterpState(interp, saved);
}

/*
 * Write the run's current state (with 'final', its last). Time spent here
 * is taken out of the running calls (exact timing) and samples landing
 * here are the profiler's (sampling). Errors go to 'interp', or, without
 * one, are background errors (the first of a series only; the final
 * flush's are CprofRunDbFinish's to report).
 */

static int
FlushNow(
    CprofInterp *ciPtr,
    Tcl_Interp *interp,
    int final)
{
    CprofState *statePtr = &ciPtr->state;
    CprofSampler *sPtr = statePtr->samplerPtr;
    uint64_t t0 = statePtr->exact.on ? CprofExactNow(statePtr) : 0;
    Tcl_Obj *metaObj;
    int code, quiet, held = 0;

    if (sPtr != NULL) {
	CprofDrain(statePtr);
	held = CprofSamplerOwn(sPtr);
    }
    quiet = CprofStoreFailing(ciPtr->storePtr);
    metaObj = CprofMetaDict(ciPtr);
    Tcl_IncrRefCount(metaObj);
    code = CprofStoreFlush(interp, ciPtr->storePtr, statePtr, metaObj,
	    final);
    Tcl_DecrRefCount(metaObj);
    CprofSamplerOwnEnd(sPtr, held);
    if (code != TCL_OK && interp == NULL && !quiet && !final) {
	BackgroundError(ciPtr, 0);
    }
    if (statePtr->exact.on && statePtr->running && !final) {
	CprofExactShift(statePtr, CprofExactNow(statePtr) - t0);
    }
    ciPtr->nextFlushNs = (uint64_t) CprofMonoNs()
	    + (uint64_t) CprofRunDbFlushMs(&statePtr->options) * 1000000;
    return code;
}

void
CprofRunDbFlushTimerProc(
    ClientData clientData)
{
    CprofInterp *ciPtr = (CprofInterp *) clientData;
    uint64_t now = (uint64_t) CprofMonoNs(), wait;

    ciPtr->flushTimer = NULL;
    if (ciPtr->storePtr == NULL || !ciPtr->state.running) {
	return;
    }
    if (ciPtr->state.paused) {
	/*
	 * Nothing to write while paused: look again later, not at once.
	 */

	wait = (uint64_t) CprofRunDbFlushMs(&ciPtr->state.options);
    } else {
	uint64_t next;

	if (CprofStoreForked(ciPtr->storePtr)) {
	    AfterFork(ciPtr);
	} else if (ciPtr->nextRotateNs != 0 && now >= ciPtr->nextRotateNs) {
	    Rotate(ciPtr, 1);
	} else if (now >= ciPtr->nextFlushNs) {
	    FlushNow(ciPtr, NULL, 0);
	}
	if (ciPtr->storePtr == NULL || !ciPtr->state.running) {
	    return;
	}
	now = (uint64_t) CprofMonoNs();
	next = ciPtr->nextFlushNs;
	if (ciPtr->nextRotateNs != 0 && ciPtr->nextRotateNs < next) {
	    next = ciPtr->nextRotateNs;
	}
	wait = next > now ? (next - now) / 1000000 + 1 : 1;
    }
    ciPtr->flushTimer = Tcl_CreateTimerHandler((int) wait, CprofRunDbFlushTimerProc,
	    ciPtr);
}

static void ExitFlush(ClientData clientData);

/*
 * Open the -db of a run that is starting and add the run. The caller
 * discards the run if the start fails later.
 */

int
CprofRunDbOpen(
    CprofInterp *ciPtr,
    Tcl_Interp *interp,
    const CprofOptions *optsPtr,
    Tcl_Obj *const *objs,
    double startWall)
{
    ciPtr->nextRotateNs = 0;
    return OpenAt(ciPtr, interp, optsPtr, objs, objs[OBJ_DB], startWall);
}

static int
OpenAt(
    CprofInterp *ciPtr,
    Tcl_Interp *interp,
    const CprofOptions *optsPtr,
    Tcl_Obj *const *objs,
    Tcl_Obj *pathObj,
    double startWall)
{
    CprofStore *storePtr;
    Tcl_Obj *infoObj;
    int code;

    if (CprofStoreOpen(interp, pathObj, optsPtr->commit, &storePtr)
	    != TCL_OK) {
	return TCL_ERROR;
    }
    infoObj = CprofRunDbInfo(ciPtr, optsPtr, objs, 0, startWall);
    Tcl_IncrRefCount(infoObj);
    code = CprofStoreBeginRun(interp, storePtr, infoObj);
    Tcl_DecrRefCount(infoObj);
    if (code != TCL_OK) {
	/*
	 * A file made by this start goes again.
	 */

	CprofStoreDiscardRun(storePtr);
	CprofStoreClose(storePtr);
	return TCL_ERROR;
    }

    /*
     * The start is done: each flush from now on waits for locks on its
     * own.
     */

    CprofStoreOpDone(storePtr);
    ciPtr->storePtr = storePtr;
    Tcl_CreateThreadExitHandler(ExitFlush, ciPtr);
    return TCL_OK;
}

/*
 * The run ended: its last state goes to the file, which is closed.
 */

static void
CloseStore(
    CprofInterp *ciPtr)
{
    if (ciPtr->storePtr == NULL) {
	return;
    }
    if (ciPtr->flushTimer != NULL) {
	Tcl_DeleteTimerHandler(ciPtr->flushTimer);
	ciPtr->flushTimer = NULL;
    }
    Tcl_DeleteThreadExitHandler(ExitFlush, ciPtr);
    CprofStoreClose(ciPtr->storePtr);
    ciPtr->storePtr = NULL;
    CprofRunDbUpdatePolling(ciPtr);
}

/*
 * A run that could not start after all: no trace of it in the file.
 */

void
CprofRunDbDiscard(
    CprofInterp *ciPtr)
{
    if (ciPtr->storePtr != NULL) {
	CprofStoreDiscardRun(ciPtr->storePtr);
	CloseStore(ciPtr);
    }
}

int
CprofRunDbFinish(
    CprofInterp *ciPtr,
    Tcl_Interp *interp,
    int exiting)
{
    int code = TCL_OK;

    if (ciPtr->storePtr == NULL) {
	return TCL_OK;
    }
    if (CprofStoreForked(ciPtr->storePtr)) {
	AfterFork(ciPtr);
	if (ciPtr->storePtr == NULL) {
	    return TCL_OK;
	}
    }
    code = FlushNow(ciPtr, interp, 1);
    if (code == TCL_OK && ciPtr->wholeProc != NULL) {
	/*
	 * A run that took in other threads: the file gets the whole, as
	 * the run's one run (with -history, the whole of the last
	 * interval: cmdscope.c joins the parts of the interval only).
	 */

	Tcl_Obj *wholeObj = ciPtr->wholeProc(ciPtr);

	if (wholeObj != NULL) {
	    Tcl_Interp *ip = (interp != NULL) ? interp : ciPtr->state.interp;
	    Tcl_InterpState saved = Tcl_SaveInterpState(ip, TCL_OK);

	    Tcl_IncrRefCount(wholeObj);
	    code = CprofStoreReplaceRun(ip, ciPtr->storePtr, wholeObj);
	    Tcl_DecrRefCount(wholeObj);
	    if (code != TCL_OK && interp != NULL) {
		Tcl_DiscardInterpState(saved);
	    } else {
		Tcl_RestoreInterpState(ip, saved);
	    }
	}
    }
    if (code != TCL_OK && interp == NULL) {
	BackgroundError(ciPtr, exiting);
    }
    if (code == TCL_OK) {
	/*
	 * The run's last state is in its file.
	 */

	ciPtr->unsaved = 0;
    }
    CloseStore(ciPtr);
    return code;
}

/*
 * In a child process (fork), noticed at the first poll, flush or stop
 * after the fork: the child's profile, with everything collected before
 * the fork, goes on as a run of its own, whose parent_run is the parent's
 * (no connection is held between writes, so there is none to inherit).
 * Sampling starts again with a timer of the child's at the first drain
 * (CprofSamplerAfterFork). The flush timer, inherited, goes on.
 */

static void
AfterFork(
    CprofInterp *ciPtr)
{
    CprofState *statePtr = &ciPtr->state;
    Tcl_Interp *interp = statePtr->interp;
    Tcl_WideInt parentRun = CprofStoreRunId(ciPtr->storePtr);
    Tcl_InterpState saved = Tcl_SaveInterpState(interp, TCL_OK);
    Tcl_Obj *infoObj;
    int code;

    infoObj = CprofRunDbInfo(ciPtr, &statePtr->options, ciPtr->objs, parentRun,
	    ciPtr->startWall);
    Tcl_IncrRefCount(infoObj);
    code = CprofStoreBeginRun(interp, ciPtr->storePtr, infoObj);
    Tcl_DecrRefCount(infoObj);
    if (code != TCL_OK) {
	/*
	 * The child's profile stays in memory only.
	 */

	Tcl_AddErrorInfo(interp,
		"\n    (tclcprof writing -db in a child process)");
	Tcl_BackgroundException(interp, TCL_ERROR);
	CloseStore(ciPtr);
    } else if (statePtr->running) {
	FlushNow(ciPtr, NULL, 0);
    }
    Tcl_RestoreInterpState(interp, saved);
}

/*
 * The thread (or the process, through Tcl's exit) is exiting while a run
 * with -db goes on: stop it and write it.
 */

static void
ExitFlush(
    ClientData clientData)
{
    CprofInterp *ciPtr = (CprofInterp *) clientData;
    Tcl_Interp *interp = ciPtr->state.interp;
    Tcl_Obj *noteObj, *statusObj = NULL, *keyObj;
    Tcl_Obj *fileObj = NULL, *runObj = NULL;
    int note = 0;

    if (ciPtr->storePtr == NULL) {
	return;
    }
    if (ciPtr->state.running) {
	ciPtr->state.stoppedBy = "exit";
	ciPtr->stopProc(&ciPtr->state);
    }

    /*
     * A script run by "tclcprof run" that calls exit: the line that names
     * the run written, as when the script ends (cli.tcl's Run sets
     * exitNote).
     */

    if (interp != NULL && !Tcl_InterpDeleted(interp)) {
	noteObj = Tcl_GetVar2Ex(interp, "::tclcprof::cli::exitNote", NULL,
		TCL_GLOBAL_ONLY);
	if (noteObj == NULL || Tcl_GetBooleanFromObj(NULL, noteObj, &note)
		!= TCL_OK) {
	    note = 0;
	}
    }
    if (note) {
	statusObj = CprofStoreStatus(ciPtr->storePtr);
	Tcl_IncrRefCount(statusObj);
	keyObj = Tcl_NewStringObj("file", -1);
	Tcl_IncrRefCount(keyObj);
	Tcl_DictObjGet(NULL, statusObj, keyObj, &fileObj);
	Tcl_SetStringObj(keyObj, "run", -1);
	Tcl_DictObjGet(NULL, statusObj, keyObj, &runObj);
	Tcl_DecrRefCount(keyObj);
    }
    if (CprofRunDbFinish(ciPtr, NULL, 1) == TCL_OK && note && fileObj
	    && runObj) {
	Tcl_Obj *listObj = Tcl_NewListObj(1, &fileObj);

	Tcl_IncrRefCount(listObj);
	fprintf(stderr, "tclcprof: run %s written to %s (tclcprof report %s"
		" -run %s)\n", Tcl_GetString(runObj), Tcl_GetString(fileObj),
		Tcl_GetString(listObj), Tcl_GetString(runObj));
	fflush(stderr);
	Tcl_DecrRefCount(listObj);
    }
    if (statusObj != NULL) {
	Tcl_DecrRefCount(statusObj);
    }
}


/*
 *----------------------------------------------------------------------
 *
 * Rolling history (-history DIR ?-every S? ?-keep N|-keep-hours H?) --
 *
 *	The run writes one profile database per interval into DIR, each an
 *	ordinary -db file holding one run, that interval's: it is the
 *	run's -db while the interval lasts (flushed as -db is), then, when
 *	the interval ends (noticed by the poll every 256 commands, so that
 *	a program without an event loop rotates too, or by the flush
 *	timer while it waits), its last state is written, the file closed,
 *	the data in memory cleared as reset would, and the next file
 *	opened. Files beyond -keep, or older than -keep-hours, go, oldest
 *	first (only names of the pattern tclcprof-*.db). A file's name
 *	says when its interval started (UTC, to the millisecond), the
 *	process and the sequence number in the run, so that names sort by
 *	time.
 *
 *----------------------------------------------------------------------
 */

static Tcl_Obj *
HistoryPath(
    CprofInterp *ciPtr,
    Tcl_Obj *dirObj,
    double wall)
{
    time_t secs = (time_t) wall;
    struct tm tm;
    char name[96];
    Tcl_Obj *elemObj, *pathObj;

    gmtime_r(&secs, &tm);
    snprintf(name, sizeof(name),
	    "tclcprof-%04d%02d%02dT%02d%02d%02d.%03dZ-%ld-%d.db",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min, tm.tm_sec, (int) ((wall - (double) secs) * 1000),
	    (long) getpid(), ++ciPtr->historySeq);
    elemObj = Tcl_NewStringObj(name, -1);
    Tcl_IncrRefCount(elemObj);
    pathObj = Tcl_FSJoinToPath(dirObj, 1, &elemObj);
    Tcl_DecrRefCount(elemObj);
    return pathObj;
}

static int
HistoryName(
    const char *name)
{
    size_t n = strlen(name);

    return strncmp(name, "tclcprof-", 9) == 0 && n > 12
	    && strcmp(name + n - 3, ".db") == 0;
}

static int
CompareNames(
    const void *a,
    const void *b)
{
    return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/*
 * Drop the files of DIR beyond -keep, or older than -keep-hours (with
 * their SQLite side files), but never 'currentName', the file in use.
 * Failures are ignored: the next rotation tries again.
 */

static void
Prune(
    const char *dir,
    const char *currentName,
    int keep,
    double keepHours)
{
    DIR *dp;
    struct dirent *ep;
    char **names = NULL;
    int count = 0, room = 0, i, drop;
    time_t limit = time(NULL) - (time_t) (keepHours * 3600);

    if (keep <= 0 && keepHours <= 0) {
	return;
    }
    dp = opendir(dir);
    if (dp == NULL) {
	return;
    }
    while ((ep = readdir(dp)) != NULL) {
	if (!HistoryName(ep->d_name) || strcmp(ep->d_name, currentName) == 0) {
	    continue;
	}
	if (count == room) {
	    room = room ? 2 * room : 64;
	    names = (char **) ckrealloc(names, room * sizeof(char *));
	}
	names[count++] = strcpy((char *) ckalloc(strlen(ep->d_name) + 1),
		ep->d_name);
    }
    closedir(dp);
    if (count > 0) {
	qsort(names, (size_t) count, sizeof(char *), CompareNames);
    }

    /*
     * The file in use counts as one of the -keep newest.
     */

    drop = (keep > 0 && count > keep - 1) ? count - (keep - 1) : 0;
    for (i = 0; i < count; i++) {
	Tcl_DString path;
	size_t base;
	struct stat st;
	int gone = i < drop;

	Tcl_DStringInit(&path);
	Tcl_DStringAppend(&path, dir, -1);
	Tcl_DStringAppend(&path, "/", 1);
	Tcl_DStringAppend(&path, names[i], -1);
	if (!gone && keepHours > 0
		&& stat(Tcl_DStringValue(&path), &st) == 0
		&& st.st_mtime < limit) {
	    gone = 1;
	}
	if (gone) {
	    static const char *const sides[] = {"-wal", "-shm", "-journal"};
	    int j;

	    unlink(Tcl_DStringValue(&path));
	    base = (size_t) Tcl_DStringLength(&path);
	    for (j = 0; j < 3; j++) {
		Tcl_DStringAppend(&path, sides[j], -1);
		unlink(Tcl_DStringValue(&path));
		Tcl_DStringSetLength(&path, (int) base);
	    }
	}
	Tcl_DStringFree(&path);
	ckfree(names[i]);
    }
    if (names != NULL) {
	ckfree(names);
    }
}

/*
 * Start of a run with -history: DIR made if need be, the first file
 * opened.
 */

int
CprofRunHistoryOpen(
    CprofInterp *ciPtr,
    Tcl_Interp *interp,
    const CprofOptions *optsPtr,
    Tcl_Obj *const *objs,
    double startWall)
{
    Tcl_Obj *dirObj = objs[OBJ_HISTORY], *pathObj;
    double every = optsPtr->everySec > 0 ? optsPtr->everySec
	    : DEFAULT_HISTORY_EVERY;
    Tcl_StatBuf *sbPtr = Tcl_AllocStatBuf();
    const char *name = Tcl_GetString(dirObj);
    size_t len = strlen(name);
    int code, exists = (Tcl_FSStat(dirObj, sbPtr) == 0);

    ciPtr->historySeq = 0;
    ciPtr->historyDb = 0;
    if ((!exists || !S_ISDIR(Tcl_GetModeFromStat(sbPtr)))
	    && len > 3 && strcmp(name + len - 3, ".db") == 0) {
	/*
	 * One database file (a name ending in .db that is not a
	 * directory): a run per interval in it.
	 */

	ckfree(sbPtr);
	ciPtr->historyDb = 1;
	code = OpenAt(ciPtr, interp, optsPtr, objs, dirObj, startWall);
	if (code == TCL_OK) {
	    ciPtr->nextRotateNs = (uint64_t) CprofMonoNs()
		    + (uint64_t) (every * 1e9);
	    CprofStorePruneRuns(ciPtr->storePtr, optsPtr->keep,
		    optsPtr->keepHours);
	}
	return code;
    }
    if (!exists) {
	if (Tcl_FSCreateDirectory(dirObj) != TCL_OK && errno != EEXIST) {
	    ckfree(sbPtr);
	    Tcl_SetObjResult(interp, Tcl_ObjPrintf(
		    "cannot make history directory \"%s\": %s",
		    Tcl_GetString(dirObj), Tcl_PosixError(interp)));
	    Tcl_SetErrorCode(interp, "TCLCPROF", "DB", "OPEN",
		    Tcl_GetString(dirObj), NULL);
	    return TCL_ERROR;
	}
    } else if (!S_ISDIR(Tcl_GetModeFromStat(sbPtr))) {
	ckfree(sbPtr);
	Tcl_SetObjResult(interp, Tcl_ObjPrintf(
		"bad value \"%s\" for -history: not a directory, nor a"
		" database file whose name ends in .db",
		Tcl_GetString(dirObj)));
	Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", "-history", NULL);
	return TCL_ERROR;
    }
    ckfree(sbPtr);
    pathObj = HistoryPath(ciPtr, dirObj, startWall);
    Tcl_IncrRefCount(pathObj);
    code = OpenAt(ciPtr, interp, optsPtr, objs, pathObj, startWall);
    if (code == TCL_OK) {
	const char *tail = strrchr(Tcl_GetString(pathObj), '/');

	ciPtr->nextRotateNs = (uint64_t) CprofMonoNs()
		+ (uint64_t) (every * 1e9);
	Prune(Tcl_GetString(dirObj), tail ? tail + 1 : "", optsPtr->keep,
		optsPtr->keepHours);
    }
    Tcl_DecrRefCount(pathObj);
    return code;
}

/*
 * The first wait of the flush timer: the flush or the end of the first
 * interval of the history, whichever comes first.
 */

int
CprofRunDbFirstWaitMs(
    CprofInterp *ciPtr)
{
    int ms = CprofRunDbFlushMs(&ciPtr->state.options);

    if (ciPtr->nextRotateNs != 0) {
	uint64_t now = (uint64_t) CprofMonoNs();
	int toRotate = ciPtr->nextRotateNs > now
		? (int) ((ciPtr->nextRotateNs - now) / 1000000) + 1 : 1;

	if (toRotate < ms) {
	    ms = toRotate;
	}
    }
    return ms;
}

/*
 * The interval is over: its file gets its last state and is closed, the
 * data goes, the next file is opened, old files are dropped. A failure
 * to open the next file is a background error; the run goes on in
 * memory (no history any more).
 */

static void
Rotate(
    CprofInterp *ciPtr,
    int fromTimer)		/* The flush timer rotates, and makes its
				 * next timer itself. */
{
    CprofState *statePtr = &ciPtr->state;
    CprofOptions *optsPtr = &statePtr->options;
    Tcl_Interp *interp = statePtr->interp;
    Tcl_Obj *dirObj = ciPtr->objs[OBJ_HISTORY], *pathObj;
    double every = optsPtr->everySec > 0 ? optsPtr->everySec
	    : DEFAULT_HISTORY_EVERY;
    double wall;
    uint64_t now;
    Tcl_InterpState saved;
    const char *tail;
    int code, held;

    if (ciPtr->rotating) {
	return;
    }
    ciPtr->rotating = 1;
    statePtr->stoppedBy = "history";
    FlushNow(ciPtr, NULL, 1);

    /*
     * Closing, opening and pruning are the profiler's time too.
     */

    held = CprofSamplerOwn(statePtr->samplerPtr);
    if (ciPtr->rotateProc != NULL && ciPtr->storePtr != NULL) {
	/*
	 * A run that takes in other threads: the members publish the
	 * interval's data (cmdscope.c), and the file gets the whole of it.
	 */

	Tcl_Obj *wholeObj = ciPtr->rotateProc(ciPtr);

	if (wholeObj != NULL) {
	    saved = Tcl_SaveInterpState(interp, TCL_OK);
	    Tcl_IncrRefCount(wholeObj);
	    if (CprofStoreReplaceRun(interp, ciPtr->storePtr, wholeObj)
		    != TCL_OK) {
		Tcl_AddErrorInfo(interp,
			"\n    (tclcprof writing a -history file)");
		Tcl_BackgroundException(interp, TCL_ERROR);
	    }
	    Tcl_DecrRefCount(wholeObj);
	    Tcl_RestoreInterpState(interp, saved);
	}
    }
    CloseStore(ciPtr);
    CprofCmdHooksGet()->clearInterval(statePtr);
    now = (uint64_t) CprofMonoNs();
    wall = CprofWallSeconds();
    ciPtr->startWall = wall;
    pathObj = ciPtr->historyDb ? dirObj : HistoryPath(ciPtr, dirObj, wall);
    Tcl_IncrRefCount(pathObj);
    saved = Tcl_SaveInterpState(interp, TCL_OK);
    code = OpenAt(ciPtr, interp, optsPtr, ciPtr->objs, pathObj, wall);
    if (code != TCL_OK) {
	Tcl_AddErrorInfo(interp, "\n    (tclcprof opening a -history file)");
	Tcl_BackgroundException(interp, TCL_ERROR);
	ciPtr->nextRotateNs = 0;
    } else {
	/*
	 * Intervals follow each other: a late rotation does not shift the
	 * later ones. One that fell behind by more than half an interval
	 * (a loaded machine, a slow disk, a very short -every) starts
	 * again from now, so that the program always runs at least half
	 * an interval between two rotations.
	 */

	ciPtr->nextRotateNs += (uint64_t) (every * 1e9);
	if (ciPtr->nextRotateNs < now + (uint64_t) (every * 0.5e9)) {
	    ciPtr->nextRotateNs = now + (uint64_t) (every * 1e9);
	}
	ciPtr->nextFlushNs = now
		+ (uint64_t) CprofRunDbFlushMs(optsPtr) * 1000000;
	if (ciPtr->historyDb) {
	    CprofStorePruneRuns(ciPtr->storePtr, optsPtr->keep,
		    optsPtr->keepHours);
	} else {
	    tail = strrchr(Tcl_GetString(pathObj), '/');
	    Prune(Tcl_GetString(dirObj), tail ? tail + 1 : "", optsPtr->keep,
		    optsPtr->keepHours);
	}
	if (!fromTimer && ciPtr->flushTimer == NULL) {
	    ciPtr->flushTimer = Tcl_CreateTimerHandler(
		    CprofRunDbFirstWaitMs(ciPtr), CprofRunDbFlushTimerProc,
		    ciPtr);
	}
    }
    Tcl_RestoreInterpState(interp, saved);
    Tcl_DecrRefCount(pathObj);
    CprofRunDbUpdatePolling(ciPtr);
    CprofCmdHooksGet()->armDeadline(ciPtr);
    CprofSamplerOwnEnd(statePtr->samplerPtr, held);
    ciPtr->rotating = 0;
}

/*
 * The poll's part (cmdrun.c): a fork noticed, an interval of -history over,
 * or a flush due.
 */

void
CprofRunDbPoll(
    CprofInterp *ciPtr,
    uint64_t now)
{
    if (ciPtr->storePtr != NULL) {
	if (CprofStoreForked(ciPtr->storePtr)) {
	    AfterFork(ciPtr);
	} else if (ciPtr->nextRotateNs != 0 && now >= ciPtr->nextRotateNs
		&& !ciPtr->state.paused) {
	    Rotate(ciPtr, 0);
	} else if (now >= ciPtr->nextFlushNs) {
	    FlushNow(ciPtr, NULL, 0);
	}
    }
}
