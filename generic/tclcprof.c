/*
 * tclcprof.c --
 *
 *	Package initialisation and unload, the ::tclcprof ensemble and the
 *	per-interpreter state's life: made at the first load, freed with the
 *	interpreter; the commands made again after namespace delete. The
 *	commands themselves are in the other files of the command layer
 *	(cmdInt.h lists them).
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _GNU_SOURCE
#   define _GNU_SOURCE		/* dladdr */
#endif
#include "cmdInt.h"
#include <tclOO.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void		CommandDeleted(ClientData clientData);
static int		CreateCommands(Tcl_Interp *interp, CprofInterp *ciPtr);
static void		DeleteState(ClientData clientData, Tcl_Interp *interp);

/*
 * The commands of the ::tclcprof ensemble.
 */

static const struct {
    const char *name;
    Tcl_ObjCmdProc *proc;
    Tcl_ObjCmdProc *nreProc;	/* Script-taking commands are NRE-enabled. */
} commandTable[] = {
    {"configure",	CprofConfigureObjCmd, NULL},
    {"data",		CprofDataObjCmd, NULL},
    {"debug",		CprofDebugObjCmd, NULL},
    {"label",		CprofLabelObjCmd, CprofLabelNRCmd},
    {"pause",		CprofPauseObjCmd, NULL},
    {"profile",		CprofProfileObjCmd, CprofProfileNRCmd},
    {"reset",		CprofResetObjCmd, NULL},
    {"resume",		CprofResumeObjCmd, NULL},
    {"runs",		CprofRunsObjCmd, NULL},
    {"save",		CprofSaveObjCmd, NULL},
    {"stack",		CprofStackObjCmd, NULL},
    {"start",		CprofStartObjCmd, NULL},
    {"status",		CprofStatusObjCmd, NULL},
    {"stop",		CprofStopObjCmd, NULL},
    {"threadname",	CprofThreadnameObjCmd, NULL},
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
    int i;

    statePtr->deleting = Tcl_InterpDeleted(interp);
    statePtr->levels.deleting = statePtr->deleting;
    if (ciPtr->reloadCmd != NULL) {
	/*
	 * Unload: the library may go. (A deleted interpreter has deleted
	 * its hidden commands already.)
	 */

	Tcl_DeleteCommandFromToken(interp, ciPtr->reloadCmd);
    }
    if (ciPtr->storePtr != NULL) {
	/*
	 * A run with -db is stopped and written (its error, if any, on
	 * stderr: nobody is left to hear it).
	 */

	if (statePtr->running) {
	    statePtr->stoppedBy = "deleted";
	    CprofRunStop(statePtr);
	}
	CprofRunDbFinish(ciPtr, NULL, 1);
    }
    if (ciPtr->durationTimer != NULL) {
	Tcl_DeleteTimerHandler(ciPtr->durationTimer);
	ciPtr->durationTimer = NULL;
    }
    CprofRunDeadlineFree(ciPtr);
    if (statePtr->running && (ciPtr->member || ciPtr->sessionPtr != NULL)) {
	/*
	 * A member publishes what it collected; an owner stops its
	 * session.
	 */

	statePtr->stoppedBy = "deleted";
	CprofRunStop(statePtr);
    }
    CprofScopeRelease(ciPtr);
    CprofRunStopSampling(statePtr);
    CprofCaptureRemove(statePtr);
    statePtr->running = 0;
    CprofLevelsFree(&statePtr->levels);
    CprofNamingFree(&statePtr->naming);
    CprofCaptureForgetState(statePtr);
    if (statePtr->lastFirstDisagreement != NULL) {
	Tcl_DecrRefCount(statePtr->lastFirstDisagreement);
    }
    if (statePtr->firstDisagreement != NULL) {
	Tcl_DecrRefCount(statePtr->firstDisagreement);
    }
    CprofExactFree(statePtr);
    CprofEventsFree(statePtr);
    CprofMemoryFree(statePtr);
    CprofTreeFree(&statePtr->tree);
    CprofSrcLinesFree(statePtr->srcLinesPtr);
    CprofUnsplicedLogFree(statePtr);
    if (statePtr->symPtr != NULL) {
	CprofSymFree(statePtr->symPtr);
    }
    if (statePtr->moduleFlags != NULL) {
	ckfree(statePtr->moduleFlags);
    }
    for (i = 0; i < OBJ_COUNT; i++) {
	Tcl_DecrRefCount(ciPtr->objs[i]);
	Tcl_DecrRefCount(ciPtr->defaultObjs[i]);
    }
    if (ciPtr->topScriptObj != NULL) {
	Tcl_DecrRefCount(ciPtr->topScriptObj);
    }
    CprofServeAsideDrop(ciPtr);
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

static int		SourceLibrary(Tcl_Interp *interp);

/*
 * The command layer's calls up (cmdInt.h), which the files below this one
 * make without naming the file called.
 */

static const CprofCmdHooks cmdHooks = {
    CprofInterpFor,
    CprofRunStartMember,
    CprofRunStopMember,
    CprofRunClearInterval,
    CprofRunArmDeadline,
    CprofScopeMeta
};

int
Tclcprof_Init(
    Tcl_Interp *interp)
{
    CprofInterp *ciPtr;

    if (Tcl_InitStubs(interp, "8.6-", 0) == NULL) {
	return TCL_ERROR;
    }
    CprofCmdSetHooks(&cmdHooks);
    if (Tcl_OOInitStubs(interp) == NULL) {
	return TCL_ERROR;
    }
    if (CprofCheckTclVersion(interp) != TCL_OK) {
	return TCL_ERROR;
    }
    ciPtr = (CprofInterp *) Tcl_GetAssocData(interp, CPROF_ASSOC, NULL);
    if (ciPtr != NULL) {
	/*
	 * Loaded already; after namespace delete ::tclcprof (see
	 * CommandDeleted), the commands are made again.
	 */

	if (ciPtr->liveCommands == 0 && (CreateCommands(interp, ciPtr)
		!= TCL_OK || SourceLibrary(interp) != TCL_OK)) {
	    return TCL_ERROR;
	}
	return Tcl_PkgProvideEx(interp, "tclcprof", PACKAGE_VERSION,
	    (void *) CprofLabelsApi());
    }

    ciPtr = CprofInterpFor(interp);
    if (CreateCommands(interp, ciPtr) != TCL_OK
	    || SourceLibrary(interp) != TCL_OK) {
	return TCL_ERROR;
    }
    return Tcl_PkgProvideEx(interp, "tclcprof", PACKAGE_VERSION,
	    (void *) CprofLabelsApi());
}

/*
 *----------------------------------------------------------------------
 *
 * CprofInterpFor --
 *
 *	The state of an interpreter, made if new (without commands: a run
 *	of scope tree or process profiles interpreters that never loaded
 *	the package).
 *
 *----------------------------------------------------------------------
 */

CprofInterp *
CprofInterpFor(
    Tcl_Interp *interp)
{
    CprofInterp *ciPtr;
    CprofState *statePtr;
    int i;

    ciPtr = (CprofInterp *) Tcl_GetAssocData(interp, CPROF_ASSOC, NULL);
    if (ciPtr != NULL) {
	return ciPtr;
    }
    ciPtr = (CprofInterp *) ckalloc(sizeof(CprofInterp));
    memset(ciPtr, 0, sizeof(CprofInterp));
    ciPtr->interpId = -1;
    ciPtr->thread = Tcl_GetCurrentThread();
    statePtr = &ciPtr->state;
    statePtr->interp = interp;
    ciPtr->stopProc = CprofRunStop;
    statePtr->options.mode = CPROF_MODE_SAMPLE;
    statePtr->options.clock = CPROF_CLOCK_CPU;
    statePtr->options.native = CPROF_NATIVE_USER;
    statePtr->options.clock = CPROF_CLOCK_AUTO;
    statePtr->options.compensate = 1;
    statePtr->options.eventLimit = DEFAULT_EVENT_LIMIT;
    statePtr->options.scope = CPROF_SCOPE_TREE;
    statePtr->options.memRate = DEFAULT_MEMRATE;
    statePtr->options.seed = 1;
    statePtr->options.capture = CPROF_CAPTURE_FRAMES;
    ciPtr->defaults = statePtr->options;
    statePtr->options.clock = CPROF_CLOCK_CPU;
    for (i = 0; i < OBJ_COUNT; i++) {
	/*
	 * -subcommands: Tk's widgets by default.
	 */

	ciPtr->objs[i] = (i == OBJ_SUBCOMMANDS)
		? Tcl_NewStringObj(".*", -1) : Tcl_NewObj();
	Tcl_IncrRefCount(ciPtr->objs[i]);
	ciPtr->defaultObjs[i] = ciPtr->objs[i];
	Tcl_IncrRefCount(ciPtr->defaultObjs[i]);
    }
    CprofTreeInit(&statePtr->tree);
    CprofExactInit(&statePtr->exact);
    CprofNamingInit(&statePtr->naming, interp);
    CprofLevelsInit(&statePtr->levels, interp, &statePtr->naming);
    Tcl_SetAssocData(interp, CPROF_ASSOC, DeleteState, ciPtr);
    return ciPtr;
}

/*
 *----------------------------------------------------------------------
 *
 * CreateCommands --
 *
 *	The ::tclcprof namespace, its commands and ensemble. Each command of
 *	commandTable tells CommandDeleted when it is deleted.
 *
 *----------------------------------------------------------------------
 */

static int
CreateCommands(
    Tcl_Interp *interp,
    CprofInterp *ciPtr)
{
    Tcl_Namespace *nsPtr;
    Tcl_Command ensemble;
    int i;

    nsPtr = Tcl_FindNamespace(interp, "::tclcprof", NULL, 0);
    if (nsPtr == NULL) {
	nsPtr = Tcl_CreateNamespace(interp, "::tclcprof", NULL, NULL);
	if (nsPtr == NULL) {
	    return TCL_ERROR;
	}
    }
    for (i = 0; commandTable[i].name != NULL; i++) {
	Tcl_DString ds;
	Tcl_Command token;
	Tcl_CmdInfo info;

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

	/*
	 * The command's clientData is the state; its deleteData the
	 * interpreter, whose state may be gone by then (unload).
	 */

	Tcl_GetCommandInfoFromToken(token, &info);
	info.deleteProc = CommandDeleted;
	info.deleteData = interp;
	Tcl_SetCommandInfoFromToken(token, &info);
	ciPtr->liveCommands++;
	if (commandTable[i].proc == CprofStackObjCmd) {
	    ciPtr->state.stackCmd = token;
	}
	Tcl_DStringFree(&ds);
	if (Tcl_Export(interp, nsPtr, commandTable[i].name, 0) != TCL_OK) {
	    return TCL_ERROR;
	}
    }
    Tcl_CreateObjCommand(interp, "::tclcprof::reportlib::Layout",
	    CprofLayoutObjCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "::tclcprof::reportlib::FlatSums",
	    CprofFlatSumsObjCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "::tclcprof::reportlib::NodeLines",
	    CprofNodeLinesObjCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "::tclcprof::servelib::Spawn",
	    CprofServeSpawnObjCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "::tclcprof::servelib::Aside",
	    CprofServeAsideObjCmd, ciPtr, NULL);
    Tcl_CreateObjCommand(interp, "::tclcprof::TopScript",
	    CprofTopScriptObjCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "::tclcprof::attach::Stacks",
	    CprofRemoteStacksObjCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "::tclcprof::attach::Interrupt",
	    CprofRemoteInterruptObjCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "::tclcprof::attach::Inject",
	    CprofRemoteInjectObjCmd, NULL, NULL);
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
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * CommandDeleted, ReloadObjCmd, ReloadDeleted --
 *
 *	All the package's commands are deleted (namespace delete
 *	::tclcprof) while the interpreter lives on. Profiling stops (a run
 *	with -db is written, stopped_by deleted; a failure to write it is a
 *	background error), so that nothing runs that no command could stop,
 *	and the package is forgotten (package forget). [load] does nothing
 *	for a library already loaded into an interpreter: the hidden
 *	command tclcprof_reload, which pkgIndex.tcl invokes when the
 *	package is required again, makes the commands again.
 *
 *----------------------------------------------------------------------
 */

static int
ReloadObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofInterp *ciPtr = (CprofInterp *) clientData;
    Tcl_Command token = ciPtr->reloadCmd;
    int code;

    if (objc != 1) {
	CprofWrongArgs(interp, 1, objv, NULL);
	return TCL_ERROR;
    }
    code = Tclcprof_Init(interp);
    if (code == TCL_OK && token != NULL) {
	Tcl_DeleteCommandFromToken(interp, token);
    }
    return code;
}

static void
ReloadDeleted(
    ClientData clientData)
{
    ((CprofInterp *) clientData)->reloadCmd = NULL;
}

static void
CommandDeleted(
    ClientData clientData)
{
    Tcl_Interp *interp = (Tcl_Interp *) clientData;
    CprofInterp *ciPtr = (CprofInterp *)
	    Tcl_GetAssocData(interp, CPROF_ASSOC, NULL);
    CprofState *statePtr;
    Tcl_InterpState saved;

    /*
     * Without state: unload, which removed it first. A deleted
     * interpreter frees it itself (DeleteState).
     */

    if (ciPtr == NULL || --ciPtr->liveCommands > 0
	    || Tcl_InterpDeleted(interp)) {
	return;
    }
    statePtr = &ciPtr->state;
    if (statePtr->running) {
	statePtr->stoppedBy = "deleted";
	CprofRunStop(statePtr);
    }
    CprofRunDbFinish(ciPtr, NULL, 0);

    saved = Tcl_SaveInterpState(interp, TCL_OK);
    Tcl_EvalEx(interp, "::apply {{v} {\n"
	    "    set script [::package ifneeded tclcprof $v]\n"
	    "    ::package forget tclcprof\n"
	    "    if {$script ne {}} {::package ifneeded tclcprof $v $script}\n"
	    "}} " PACKAGE_VERSION, -1, TCL_EVAL_GLOBAL);
    if (ciPtr->reloadCmd == NULL && Tcl_FindCommand(interp,
	    "::tclcprof_reload", NULL, TCL_GLOBAL_ONLY) == NULL) {
	ciPtr->reloadCmd = Tcl_CreateObjCommand(interp, "::tclcprof_reload",
		ReloadObjCmd, ciPtr, ReloadDeleted);
	if (Tcl_HideCommand(interp, "tclcprof_reload", "tclcprof_reload")
		!= TCL_OK) {
	    /*
	     * Someone else's hidden command of that name.
	     */

	    Tcl_DeleteCommandFromToken(interp, ciPtr->reloadCmd);
	}
    }
    Tcl_RestoreInterpState(interp, saved);
}

/*
 *----------------------------------------------------------------------
 *
 * SourceLibrary --
 *
 *	The Tcl half of the package (report, export, diff, run, the
 *	tcltest hooks) is tclcprof.tcl, which sits next to the shared
 *	library in the build directory and where the package is installed.
 *	Init sources it itself, so that a plain "load" of the library gives
 *	the whole package, as "package require" does. TCLCPROF_LIBRARY, a
 *	directory, overrides where it is looked for.
 *
 *----------------------------------------------------------------------
 */

static int
SourceLibrary(
    Tcl_Interp *interp)
{
    Tcl_Obj *dirObj = NULL, *fileObj, *cmdObj;
    const char *env = getenv("TCLCPROF_LIBRARY");
    Dl_info info;
    int code;

    if (env != NULL && env[0] != '\0') {
	dirObj = Tcl_NewStringObj(env, -1);
    } else if (dladdr((void *) Tclcprof_Init, &info) && info.dli_fname) {
	const char *slash = strrchr(info.dli_fname, '/');

	dirObj = (slash == NULL) ? Tcl_NewStringObj(".", 1)
		: (slash == info.dli_fname) ? Tcl_NewStringObj("/", 1)
		: Tcl_NewStringObj(info.dli_fname, slash - info.dli_fname);
    }
    if (dirObj == NULL) {
	Tcl_SetObjResult(interp, Tcl_NewStringObj(
		"cannot tell where the tclcprof library was loaded from;"
		" set TCLCPROF_LIBRARY to the directory of tclcprof.tcl", -1));
	Tcl_SetErrorCode(interp, "TCLCPROF", "LIBRARY", NULL);
	return TCL_ERROR;
    }
    Tcl_IncrRefCount(dirObj);
    fileObj = Tcl_FSJoinToPath(dirObj, 1, (Tcl_Obj *[]) {
	    Tcl_NewStringObj("tclcprof.tcl", -1)});
    Tcl_IncrRefCount(fileObj);
    if (Tcl_FSAccess(fileObj, R_OK) != 0) {
	Tcl_SetObjResult(interp, Tcl_ObjPrintf(
		"tclcprof's Tcl library \"%s\" is missing: the package is"
		" incomplete (set TCLCPROF_LIBRARY to the directory that"
		" holds tclcprof.tcl)", Tcl_GetString(fileObj)));
	Tcl_SetErrorCode(interp, "TCLCPROF", "LIBRARY",
		Tcl_GetString(fileObj), NULL);
	code = TCL_ERROR;
    } else {
	cmdObj = Tcl_NewListObj(0, NULL);
	Tcl_IncrRefCount(cmdObj);
	Tcl_ListObjAppendElement(NULL, cmdObj, Tcl_NewStringObj("source", -1));
	Tcl_ListObjAppendElement(NULL, cmdObj,
		Tcl_NewStringObj("-encoding", -1));
	Tcl_ListObjAppendElement(NULL, cmdObj, Tcl_NewStringObj("utf-8", -1));
	Tcl_ListObjAppendElement(NULL, cmdObj, fileObj);
	code = Tcl_EvalObjEx(interp, cmdObj, TCL_EVAL_GLOBAL);
	Tcl_DecrRefCount(cmdObj);
    }
    Tcl_DecrRefCount(fileObj);
    Tcl_DecrRefCount(dirObj);
    return code;
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

    /*
     * Callbacks of the library still queued (pops of frames entered
     * before, in procs that called [unload]) are made no-ops first, or
     * the unload is refused.
     */

    if (CprofCaptureUnload(interp) != TCL_OK) {
	return TCL_ERROR;
    }
    if (flags == TCL_UNLOAD_DETACH_FROM_PROCESS) {
	CprofScopeUnload();
    }
    Tcl_DeleteAssocData(interp, CPROF_ASSOC);
    nsPtr = Tcl_FindNamespace(interp, "::tclcprof", NULL, 0);
    if (nsPtr != NULL) {
	Tcl_DeleteNamespace(nsPtr);
    }
    if (flags == TCL_UNLOAD_DETACH_FROM_PROCESS) {
	/*
	 * Last: freeing the state gave its symbol tables back, a call on
	 * the reading thread.
	 */

	CprofSymReaderStop();
	CprofRunDeadlineStop();
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

