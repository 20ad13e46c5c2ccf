/*
 * cmdserve.c --
 *
 *	The thread of tclcprof::serve (command layer). The HTTP server of
 *	library/serve.tcl runs in a thread of its own, in an interpreter of
 *	its own there with the package loaded, so that it answers while
 *	the program's thread is busy, in a loop without an event loop, or
 *	waiting for anything. What must happen in the program's thread
 *	(starting and stopping a run of its interpreter, exporting its
 *	profile) is handed to it as a script and rung in with an
 *	asynchronous handler (Tcl_AsyncMark, which may be called from any
 *	thread): Tcl runs it at its next asynchronous-event check, which
 *	the bytecode engine makes every few instructions and the event loop
 *	at each turn. The script's result goes back to the server's thread
 *	as an event that calls ::tclcprof::servelib::Reply there.
 *
 *	    ::tclcprof::servelib::Spawn script	(program's interpreter)
 *		starts the thread, which evaluates script (opening the
 *		listening socket) and runs its event loop; the result or
 *		error of script is Spawn's. Spawn makes the command
 *		::tclcprof::servelib::Server, whose deletion (server stop,
 *		namespace delete ::tclcprof, the interpreter's deletion)
 *		stops the thread and waits for it.
 *	    ::tclcprof::servelib::Ring id script	(server's interpreter)
 *		queues script for the program's interpreter; its result
 *		comes back as [::tclcprof::servelib::Reply id code result].
 *
 *	Nothing here is on a hot path: a ring costs the program one
 *	asynchronous-handler call and the script's evaluation, its
 *	interpreter state (result, error information) saved and put back
 *	around it. Tcl has the threads, events and asynchronous handlers
 *	this needs; nothing is hand-written below Tcl's API.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "cmdInt.h"
#include <string.h>

/*
 * A script queued for the program's interpreter.
 */

typedef struct Ring {
    struct Ring *nextPtr;
    Tcl_WideInt id;
    char *script;		/* ckalloc'd, UTF-8. */
} Ring;

/*
 * One server: its thread, the program's interpreter and thread, the
 * queue between them. Shared by both threads; mutex guards the fields
 * marked so. Freed by the program's thread once the server's thread has
 * ended (it is joined).
 */

typedef struct Server {
    Tcl_Mutex mutex;
    Tcl_Condition cond;
    Tcl_Interp *ownerInterp;	/* The program's interpreter (its thread
				 * only). */
    Tcl_ThreadId ownerThread;
    Tcl_AsyncHandler async;	/* The doorbell, in the program's thread. */
    Tcl_ThreadId serverThread;
    Tcl_Interp *serverInterp;	/* (Its thread only.) */
    char *startScript;		/* What the thread evaluates first. */
    char *autoPath;		/* The program's auto_path, for package
				 * require there. */
    Ring *queueHead, *queueTail;/* (mutex) Scripts for the program. */
    int started;		/* (mutex) The start script has run. */
    int startCode;		/* Its code, result and error code. */
    char *startResult;
    char *startErrorCode;
    int quit;			/* (mutex) The thread is to end. */
    int replying;		/* (program's thread) In Doorbell. */
} Server;

/*
 * The event that takes a result to the server's thread, and the one that
 * wakes it to end.
 */

typedef struct ReplyEvent {
    Tcl_Event header;
    Server *serverPtr;
    Tcl_WideInt id;
    int code;
    char *result;		/* ckalloc'd, UTF-8. */
} ReplyEvent;

/*
 * A script the program's thread has the server's evaluate (Server eval),
 * waiting for its result: the event is freed by Tcl once processed, this
 * record by the waiting thread.
 */

typedef struct EvalWait {
    char *script;
    int done;			/* (Server's mutex.) */
    int code;
    char *result;
} EvalWait;

typedef struct EvalEvent {
    Tcl_Event header;
    Server *serverPtr;
    EvalWait *waitPtr;
} EvalEvent;

static Tcl_ThreadCreateProc ServerThread;
static int		Doorbell(ClientData clientData, Tcl_Interp *interp,
			    int code);
static int		ReplyEventProc(Tcl_Event *evPtr, int flags);
static int		WakeEventProc(Tcl_Event *evPtr, int flags);
static int		EvalEventProc(Tcl_Event *evPtr, int flags);
static void		ServerCmdDeleted(ClientData clientData);
static Tcl_ObjCmdProc	ServerObjCmd;
static Tcl_ObjCmdProc	RingObjCmd;

static char *
CopyString(
    const char *s)
{
    size_t n = strlen(s) + 1;
    char *copy = (char *) ckalloc(n);

    memcpy(copy, s, n);
    return copy;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofServeSpawnObjCmd --
 *
 *	::tclcprof::servelib::Spawn script: start the server's thread,
 *	which evaluates script first; wait for that.
 *
 * Results:
 *	The result of script, or its error (with its error code): then the
 *	thread has ended. TCLCPROF STATE SERVING when a server runs already
 *	for this interpreter; TCLCPROF SERVE THREAD when no thread could be
 *	made.
 *
 * Side effects:
 *	Makes ::tclcprof::servelib::Server, the server's handle.
 *
 *----------------------------------------------------------------------
 */

int
CprofServeSpawnObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Server *sPtr;
    Tcl_Obj *pathObj;
    Tcl_ThreadId tid;

    if (objc != 2) {
	CprofWrongArgs(interp, 1, objv, "script");
	return TCL_ERROR;
    }
    if (Tcl_FindCommand(interp, "::tclcprof::servelib::Server", NULL,
	    TCL_GLOBAL_ONLY) != NULL) {
	Tcl_SetObjResult(interp, Tcl_NewStringObj("already serving:"
		" tclcprof::serve -stop first", -1));
	Tcl_SetErrorCode(interp, "TCLCPROF", "STATE", "SERVING", NULL);
	return TCL_ERROR;
    }
    sPtr = (Server *) ckalloc(sizeof(Server));
    memset(sPtr, 0, sizeof(Server));
    sPtr->ownerInterp = interp;
    sPtr->ownerThread = Tcl_GetCurrentThread();
    sPtr->startScript = CopyString(Tcl_GetString(objv[1]));
    pathObj = Tcl_GetVar2Ex(interp, "::auto_path", NULL, TCL_GLOBAL_ONLY);
    sPtr->autoPath = CopyString(pathObj != NULL ? Tcl_GetString(pathObj) : "");
    sPtr->async = Tcl_AsyncCreate(Doorbell, sPtr);

    if (Tcl_CreateThread(&tid, ServerThread, sPtr, TCL_THREAD_STACK_DEFAULT,
	    TCL_THREAD_JOINABLE) != TCL_OK) {
	Tcl_AsyncDelete(sPtr->async);
	ckfree(sPtr->startScript);
	ckfree(sPtr->autoPath);
	ckfree(sPtr);
	Tcl_SetObjResult(interp, Tcl_NewStringObj("cannot start the server's"
		" thread", -1));
	Tcl_SetErrorCode(interp, "TCLCPROF", "SERVE", "THREAD", NULL);
	return TCL_ERROR;
    }
    Tcl_MutexLock(&sPtr->mutex);
    while (!sPtr->started) {
	Tcl_ConditionWait(&sPtr->cond, &sPtr->mutex, NULL);
    }
    sPtr->serverThread = tid;
    Tcl_MutexUnlock(&sPtr->mutex);

    Tcl_SetObjResult(interp, Tcl_NewStringObj(sPtr->startResult, -1));
    if (sPtr->startCode != TCL_OK) {
	int code;

	if (sPtr->startErrorCode != NULL) {
	    Tcl_SetObjErrorCode(interp,
		    Tcl_NewStringObj(sPtr->startErrorCode, -1));
	}
	Tcl_JoinThread(tid, &code);
	Tcl_AsyncDelete(sPtr->async);
	ckfree(sPtr->startScript);
	ckfree(sPtr->autoPath);
	ckfree(sPtr->startResult);
	if (sPtr->startErrorCode != NULL) {
	    ckfree(sPtr->startErrorCode);
	}
	Tcl_ConditionFinalize(&sPtr->cond);
	Tcl_MutexFinalize(&sPtr->mutex);
	ckfree(sPtr);
	return TCL_ERROR;
    }
    Tcl_CreateObjCommand(interp, "::tclcprof::servelib::Server", ServerObjCmd,
	    sPtr, ServerCmdDeleted);
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * ServerObjCmd, ServerCmdDeleted --
 *
 *	::tclcprof::servelib::Server stop: delete the handle, which ends
 *	the server's thread (its script ::tclcprof::servelib::Stop closes
 *	the sockets), waits for it and frees the server.
 *	::tclcprof::servelib::Server eval script: the result of script in
 *	the server's interpreter, which is never busy for long (the tests
 *	look at its connections).
 *
 *----------------------------------------------------------------------
 */

static int
ServerObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Server *sPtr = (Server *) clientData;
    EvalWait wait;
    EvalEvent *evPtr;

    if (objc == 2 && strcmp(Tcl_GetString(objv[1]), "stop") == 0) {
	Tcl_DeleteCommand(interp, "::tclcprof::servelib::Server");
	return TCL_OK;
    }
    if (objc != 3 || strcmp(Tcl_GetString(objv[1]), "eval") != 0) {
	CprofWrongArgs(interp, 1, objv, "stop | eval script");
	return TCL_ERROR;
    }
    memset(&wait, 0, sizeof(wait));
    wait.script = Tcl_GetString(objv[2]);
    evPtr = (EvalEvent *) ckalloc(sizeof(EvalEvent));
    evPtr->header.proc = EvalEventProc;
    evPtr->serverPtr = sPtr;
    evPtr->waitPtr = &wait;
    Tcl_MutexLock(&sPtr->mutex);
    Tcl_ThreadQueueEvent(sPtr->serverThread, &evPtr->header, TCL_QUEUE_TAIL);
    Tcl_ThreadAlert(sPtr->serverThread);
    while (!wait.done) {
	Tcl_ConditionWait(&sPtr->cond, &sPtr->mutex, NULL);
    }
    Tcl_MutexUnlock(&sPtr->mutex);
    Tcl_SetObjResult(interp, Tcl_NewStringObj(wait.result, -1));
    ckfree(wait.result);
    return wait.code;
}

static void
ServerCmdDeleted(
    ClientData clientData)
{
    Server *sPtr = (Server *) clientData;
    ReplyEvent *evPtr;
    Ring *rPtr;
    int code;

    Tcl_MutexLock(&sPtr->mutex);
    sPtr->quit = 1;
    evPtr = (ReplyEvent *) ckalloc(sizeof(ReplyEvent));
    memset(evPtr, 0, sizeof(ReplyEvent));
    evPtr->header.proc = WakeEventProc;
    evPtr->serverPtr = sPtr;
    Tcl_ThreadQueueEvent(sPtr->serverThread, &evPtr->header, TCL_QUEUE_TAIL);
    Tcl_ThreadAlert(sPtr->serverThread);
    Tcl_MutexUnlock(&sPtr->mutex);
    Tcl_JoinThread(sPtr->serverThread, &code);

    /*
     * The thread has gone: what it queued and never got is dropped. (A
     * Doorbell call running now, which deleted the handle through a
     * script, frees nothing that it holds: the queue it took is its own.)
     */

    Tcl_AsyncDelete(sPtr->async);
    while ((rPtr = sPtr->queueHead) != NULL) {
	sPtr->queueHead = rPtr->nextPtr;
	ckfree(rPtr->script);
	ckfree(rPtr);
    }
    ckfree(sPtr->startScript);
    ckfree(sPtr->autoPath);
    if (sPtr->startResult != NULL) {
	ckfree(sPtr->startResult);
    }
    if (sPtr->startErrorCode != NULL) {
	ckfree(sPtr->startErrorCode);
    }
    Tcl_ConditionFinalize(&sPtr->cond);
    Tcl_MutexFinalize(&sPtr->mutex);
    if (sPtr->replying) {
	/*
	 * Doorbell is on the stack: it frees the server when it returns.
	 */

	sPtr->quit = 2;
	return;
    }
    ckfree(sPtr);
}

/*
 *----------------------------------------------------------------------
 *
 * ServerThread --
 *
 *	The server's thread: an interpreter with the package, the start
 *	script, then the event loop until the program's thread ends it.
 *
 *----------------------------------------------------------------------
 */

static Tcl_ThreadCreateType
ServerThread(
    ClientData clientData)
{
    Server *sPtr = (Server *) clientData;
    Tcl_Interp *interp;
    int code;
    const char *ec;

    /*
     * A run of scope process takes in no interpreter of this thread.
     */

    CprofScopeHideThread();
    interp = Tcl_CreateInterp();
    sPtr->serverInterp = interp;
    code = Tcl_Init(interp);
    if (code == TCL_OK) {
	Tcl_SetVar2(interp, "::auto_path", NULL, sPtr->autoPath,
		TCL_GLOBAL_ONLY);

	/*
	 * The TCLCPROF environment variable is the program's: the package
	 * loaded here starts nothing (no run, no second server).
	 */

	code = Tcl_EvalEx(interp, "namespace eval ::tclcprof {variable noEnv 1};"
		" package require tclcprof " PACKAGE_VERSION, -1,
		TCL_EVAL_GLOBAL);
    }
    if (code == TCL_OK) {
	Tcl_CreateObjCommand(interp, "::tclcprof::servelib::Ring", RingObjCmd,
		sPtr, NULL);
	code = Tcl_EvalEx(interp, sPtr->startScript, -1, TCL_EVAL_GLOBAL);
    }
    Tcl_MutexLock(&sPtr->mutex);
    sPtr->startCode = code;
    sPtr->startResult = CopyString(Tcl_GetStringResult(interp));
    if (code != TCL_OK) {
	ec = Tcl_GetVar2(interp, "::errorCode", NULL, TCL_GLOBAL_ONLY);
	sPtr->startErrorCode = (ec != NULL) ? CopyString(ec) : NULL;
    }
    sPtr->started = 1;
    Tcl_ConditionNotify(&sPtr->cond);
    Tcl_MutexUnlock(&sPtr->mutex);

    if (code == TCL_OK) {
	while (1) {
	    int quit;

	    Tcl_MutexLock(&sPtr->mutex);
	    quit = sPtr->quit;
	    Tcl_MutexUnlock(&sPtr->mutex);
	    if (quit) {
		break;
	    }
	    Tcl_DoOneEvent(TCL_ALL_EVENTS);
	}
	Tcl_EvalEx(interp, "catch {::tclcprof::servelib::Stop}", -1,
		TCL_EVAL_GLOBAL);
    }
    Tcl_DeleteInterp(interp);
    Tcl_ExitThread(0);
    TCL_THREAD_CREATE_RETURN;
}

/*
 *----------------------------------------------------------------------
 *
 * RingObjCmd --
 *
 *	::tclcprof::servelib::Ring id script (in the server's thread):
 *	queue script for the program's interpreter and ring its doorbell.
 *
 *----------------------------------------------------------------------
 */

static int
RingObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Server *sPtr = (Server *) clientData;
    Tcl_WideInt id;
    Ring *rPtr;

    if (objc != 3) {
	CprofWrongArgs(interp, 1, objv, "id script");
	return TCL_ERROR;
    }
    if (Tcl_GetWideIntFromObj(interp, objv[1], &id) != TCL_OK) {
	return TCL_ERROR;
    }
    rPtr = (Ring *) ckalloc(sizeof(Ring));
    rPtr->nextPtr = NULL;
    rPtr->id = id;
    rPtr->script = CopyString(Tcl_GetString(objv[2]));
    Tcl_MutexLock(&sPtr->mutex);
    if (sPtr->quit) {
	Tcl_MutexUnlock(&sPtr->mutex);
	ckfree(rPtr->script);
	ckfree(rPtr);
	return TCL_OK;
    }
    if (sPtr->queueTail != NULL) {
	sPtr->queueTail->nextPtr = rPtr;
    } else {
	sPtr->queueHead = rPtr;
    }
    sPtr->queueTail = rPtr;
    Tcl_AsyncMark(sPtr->async);
    Tcl_MutexUnlock(&sPtr->mutex);
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * Doorbell --
 *
 *	The asynchronous handler, in the program's thread: evaluate the
 *	queued scripts in the program's interpreter, at global level, its
 *	state (result, return options, error information) saved and put
 *	back, and send each result to the server's thread.
 *
 * Results:
 *	code, unchanged: the interrupted evaluation goes on as it was.
 *
 *----------------------------------------------------------------------
 */

static int
Doorbell(
    ClientData clientData,
    Tcl_Interp *interp,
    int code)
{
    Server *sPtr = (Server *) clientData;
    Tcl_Interp *owner = sPtr->ownerInterp;
    Ring *rPtr, *queue;

    Tcl_MutexLock(&sPtr->mutex);
    queue = sPtr->queueHead;
    sPtr->queueHead = sPtr->queueTail = NULL;
    Tcl_MutexUnlock(&sPtr->mutex);
    if (queue == NULL) {
	return code;
    }
    sPtr->replying = 1;
    Tcl_Preserve(owner);
    while ((rPtr = queue) != NULL) {
	queue = rPtr->nextPtr;
	if (sPtr->quit == 0 && !Tcl_InterpDeleted(owner)) {
	    Tcl_InterpState saved = Tcl_SaveInterpState(owner, TCL_OK);
	    int rc = Tcl_EvalEx(owner, rPtr->script, -1, TCL_EVAL_GLOBAL);
	    ReplyEvent *evPtr = (ReplyEvent *) ckalloc(sizeof(ReplyEvent));

	    evPtr->header.proc = ReplyEventProc;
	    evPtr->serverPtr = sPtr;
	    evPtr->id = rPtr->id;
	    evPtr->code = rc;
	    evPtr->result = CopyString(Tcl_GetStringResult(owner));
	    Tcl_RestoreInterpState(owner, saved);
	    Tcl_MutexLock(&sPtr->mutex);
	    if (sPtr->quit) {
		ckfree(evPtr->result);
		ckfree(evPtr);
	    } else {
		Tcl_ThreadQueueEvent(sPtr->serverThread, &evPtr->header,
			TCL_QUEUE_TAIL);
		Tcl_ThreadAlert(sPtr->serverThread);
	    }
	    Tcl_MutexUnlock(&sPtr->mutex);
	}
	ckfree(rPtr->script);
	ckfree(rPtr);
    }
    Tcl_Release(owner);
    sPtr->replying = 0;
    if (sPtr->quit == 2) {
	ckfree(sPtr);
    }
    return code;
}

/*
 *----------------------------------------------------------------------
 *
 * ReplyEventProc, WakeEventProc --
 *
 *	In the server's thread: [::tclcprof::servelib::Reply id code
 *	result]; an event that only wakes the event loop (to end).
 *
 *----------------------------------------------------------------------
 */

static int
ReplyEventProc(
    Tcl_Event *evPtr,
    int flags)
{
    ReplyEvent *rPtr = (ReplyEvent *) evPtr;
    Tcl_Interp *interp = rPtr->serverPtr->serverInterp;
    Tcl_Obj *objv[4];
    int i;

    objv[0] = Tcl_NewStringObj("::tclcprof::servelib::Reply", -1);
    objv[1] = Tcl_NewWideIntObj(rPtr->id);
    objv[2] = Tcl_NewIntObj(rPtr->code);
    objv[3] = Tcl_NewStringObj(rPtr->result, -1);
    ckfree(rPtr->result);
    for (i = 0; i < 4; i++) {
	Tcl_IncrRefCount(objv[i]);
    }
    if (Tcl_EvalObjv(interp, 4, objv, TCL_EVAL_GLOBAL) != TCL_OK) {
	Tcl_BackgroundException(interp, TCL_ERROR);
    }
    for (i = 0; i < 4; i++) {
	Tcl_DecrRefCount(objv[i]);
    }
    return 1;
}

static int
EvalEventProc(
    Tcl_Event *evPtr,
    int flags)
{
    EvalEvent *ePtr = (EvalEvent *) evPtr;
    Server *sPtr = ePtr->serverPtr;
    EvalWait *waitPtr = ePtr->waitPtr;
    int code = Tcl_EvalEx(sPtr->serverInterp, waitPtr->script, -1,
	    TCL_EVAL_GLOBAL);

    Tcl_MutexLock(&sPtr->mutex);
    waitPtr->code = code;
    waitPtr->result = CopyString(Tcl_GetStringResult(sPtr->serverInterp));
    waitPtr->done = 1;
    Tcl_ConditionNotify(&sPtr->cond);
    Tcl_MutexUnlock(&sPtr->mutex);
    return 1;
}

static int
WakeEventProc(
    Tcl_Event *evPtr,
    int flags)
{
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofServeAsideObjCmd --
 *
 *	::tclcprof::servelib::Aside (the program's interpreter): the
 *	program's latest profile kept aside while the collector serves a
 *	request, so that a request never replaces it (library/serve.tcl).
 *
 *	    Aside active		whether one is kept
 *	    Aside keep value		keep value ({status S ?data D? ?views
 *					{"view count" D ...}?}): status, data
 *					and save give it from now on
 *	    Aside bypass script	script's result, with status, data and
 *					save reading the collector (the
 *					request's run)
 *	    Aside drop			forget it (tests)
 *
 *	The program's next start or reset drops it (CprofServeAsideDrop):
 *	its new run, or its discarding, replaces its latest profile.
 *
 *----------------------------------------------------------------------
 */

int
CprofServeAsideObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    static const char *const subs[] = {
	"active", "bypass", "drop", "keep", NULL
    };
    enum { SUB_ACTIVE, SUB_BYPASS, SUB_DROP, SUB_KEEP };
    CprofInterp *ciPtr = (CprofInterp *) clientData;
    int index, code, saved;

    if (objc < 2 || Tcl_GetIndexFromObj(interp, objv[1], subs, "subcommand",
	    0, &index) != TCL_OK) {
	if (objc < 2) {
	    CprofWrongArgs(interp, 1, objv, "active|bypass|drop|keep ?arg?");
	}
	return TCL_ERROR;
    }
    if (objc != ((index == SUB_BYPASS || index == SUB_KEEP) ? 3 : 2)) {
	CprofWrongArgs(interp, 2, objv,
		(index == SUB_BYPASS) ? "script"
		: (index == SUB_KEEP) ? "value" : NULL);
	return TCL_ERROR;
    }
    switch (index) {
    case SUB_ACTIVE:
	Tcl_SetObjResult(interp, Tcl_NewBooleanObj(ciPtr->asideObj != NULL));
	return TCL_OK;
    case SUB_DROP:
	CprofServeAsideDrop(ciPtr);
	return TCL_OK;
    case SUB_KEEP:
	Tcl_IncrRefCount(objv[2]);
	CprofServeAsideDrop(ciPtr);
	ciPtr->asideObj = objv[2];
	return TCL_OK;
    }
    saved = ciPtr->asideBypass;
    ciPtr->asideBypass = 1;
    code = Tcl_EvalObjEx(interp, objv[2], TCL_EVAL_GLOBAL);
    ciPtr->asideBypass = saved;
    return code;
}

void
CprofServeAsideDrop(
    CprofInterp *ciPtr)
{
    if (ciPtr->asideObj != NULL) {
	Tcl_DecrRefCount(ciPtr->asideObj);
	ciPtr->asideObj = NULL;
    }
}

/*
 * A key of the aside value, or NULL.
 */

Tcl_Obj *
CprofServeAsideGet(
    CprofInterp *ciPtr,
    const char *key)
{
    Tcl_Obj *keyObj, *valueObj = NULL;

    if (ciPtr->asideObj == NULL) {
	return NULL;
    }
    keyObj = Tcl_NewStringObj(key, -1);
    Tcl_IncrRefCount(keyObj);
    if (Tcl_DictObjGet(NULL, ciPtr->asideObj, keyObj, &valueObj) != TCL_OK) {
	valueObj = NULL;
    }
    Tcl_DecrRefCount(keyObj);
    return valueObj;
}
