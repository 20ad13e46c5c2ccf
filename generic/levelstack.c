/*
 * levelstack.c --
 *
 *	The level stack: a vector of the Tcl commands executing in one
 *	interpreter, maintained by a single Tcl_CreateObjTrace enter/leave
 *	trace. Every later stage (the sampler's splice, the exact timers)
 *	reads this vector, so the rules that keep it true live here:
 *
 *	- A command is pushed at its enter and popped at its leave. Tcl gives
 *	  enter and leave the same level (iPtr->numLevels), but levels may
 *	  skip numbers, so the stack is a vector, not an array indexed by
 *	  level.
 *	- Missing leaves: a command deleted while it runs never gets its
 *	  leave. Such frames are popped at the next enter at a level <= theirs
 *	  and at the next leave of an outer command.
 *	- Coroutines: a compiled yield emits no event. When the resumer's
 *	  leave (or an enter in the resumer's environment) finds frames of a
 *	  live coroutine on top, they are saved under that coroutine, with
 *	  levels relative to the resumer, and restored re-levelled and
 *	  re-anchored when the coroutine is resumed again (eagerly at the
 *	  enter of its command, or lazily at the first enter inside it).
 *	- Ensembles: the ensemble command and the implementation command it
 *	  dispatches to are folded into one frame named "ensemble subcommand".
 *	- Names are interned at enter time; nothing that reads the stack
 *	  later touches Tcl objects.
 *
 *	This is the one file that includes Tcl's private headers (tclInt.h
 *	and tclOOInt.h). CprofCheckTclVersion refuses any Tcl but 8.6.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "tclcprofInt.h"
#include <tclInt.h>
#include <tclOOInt.h>
#include <tclCompile.h>
#include <string.h>
#include <stdio.h>

/*
 * What the name cache knows about a command.
 */

#define CMD_INFO_ENSEMBLE	0x1	/* Tcl_IsEnsemble. */
#define CMD_INFO_OBJECT		0x2	/* A TclOO object (or its "my"). */
#define CMD_INFO_COROUTINE	0x4	/* A coroutine's command. */
#define CMD_INFO_OWN		0x8	/* tclcprof's own (::tclcprof ensemble
				 * or ::tclcprof::*): hidden. */

typedef struct CmdInfo {
    Command *cmdPtr;		/* Held with refCount++ so that its memory is
				 * never reused while cached. */
    int epoch;			/* cmdPtr->cmdEpoch when named. */
    int nameId;
    unsigned short kind;
    unsigned short flags;	/* CMD_INFO_* */
} CmdInfo;

/*
 * Frames of a suspended coroutine, keyed by its CoroutineData. An entry
 * exists from the first time the coroutine is seen until its command is
 * deleted (a command delete trace removes it), so "has an entry" means
 * "alive" without dereferencing anything.
 */

typedef struct CprofCoroSaved {
    CprofState *statePtr;
    Tcl_HashEntry *hPtr;
    Tcl_Command token;		/* The coroutine's command. */
    CprofFrame *frames;		/* Saved frames, outermost first; their
				 * levels are relative to the resumer. */
    int count;
    int capacity;
    uint64_t suspendNs;		/* Exact clock when they were saved. */
} CprofCoroSaved;

/*
 * Addresses learned once per process by probing: how to recognise TclOO
 * object commands and coroutine commands from their Command struct.
 */

static Tcl_ObjCmdProc *ooPublicObjProc = NULL;
static Tcl_ObjCmdProc *ooPrivateObjProc = NULL;
static Tcl_ObjCmdProc *coroNreProc = NULL;
static int probed = 0;
TCL_DECLARE_MUTEX(probeMutex)

/*
 * The process-wide name table.
 */

typedef struct NameTable {
    Tcl_HashTable byName;	/* name -> id */
    char **names;		/* id -> name */
    int count;
    int capacity;
    int initialized;
} NameTable;

static NameTable nameTable;
TCL_DECLARE_MUTEX(nameMutex)

/*
 * Control commands that add nothing of their own when traced.
 */

static const char *const controlNames[] = {
    "::if", "::for", "::foreach", "::lmap", "::while", "::catch", "::try",
    "::time", "::timerate", "::eval", "::uplevel", "::switch", NULL
};

static const char *const kindNames[CPROF_KIND_COUNT] = {
    "proc", "cmd", "ensemble", "method", "control"
};

/*
 * Forward declarations.
 */

static int		TraceProc(ClientData clientData, Tcl_Interp *interp,
			    int level, const char *command, Tcl_Command token,
			    int objc, Tcl_Obj *const objv[]);
static void		TraceEnter(CprofState *statePtr, Interp *iPtr,
			    int level, Command *cmdPtr, int objc,
			    Tcl_Obj *const objv[], uintptr_t marker);
static void		TraceLeave(CprofState *statePtr, Interp *iPtr,
			    int level, Command *cmdPtr);
static CmdInfo *	LookupCmd(CprofState *statePtr, Command *cmdPtr);
static int		MethodNameId(CprofState *statePtr, Interp *iPtr,
			    Command *cmdPtr, int objc, Tcl_Obj *const objv[]);
static int		FoldNameId(CprofState *statePtr, CprofFrame *ensPtr,
			    Command *implPtr);
static CprofFrame *	PushFrame(CprofStack *stackPtr);
static void		PopSuspended(CprofState *statePtr, void *curEnvPtr);
static void		SaveCoroutine(CprofState *statePtr,
			    CprofCoroSaved *savedPtr, int baseLevel);
static void		RestoreCoroutine(CprofState *statePtr,
			    CprofCoroSaved *savedPtr, int baseLevel,
			    uintptr_t anchor);
static CprofCoroSaved *	RegisterCoroutine(CprofState *statePtr,
			    CoroutineData *corPtr);
static void		CoroDeleteTrace(ClientData clientData,
			    Tcl_Interp *interp, const char *oldName,
			    const char *newName, int flags);
static void		FreeCoroSaved(CprofCoroSaved *savedPtr, int untrace);
static void		ProbeInternals(Tcl_Interp *interp);
static void		CoverageEnter(CprofState *statePtr, Interp *iPtr,
			    Command *cmdPtr, int objc, Tcl_Obj *const objv[]);

/*
 *----------------------------------------------------------------------
 *
 * CprofCheckTclVersion --
 *
 *	The level stack reads private interpreter fields whose layout is
 *	fixed within Tcl 8.6. Refuse any other runtime.
 *
 * Results:
 *	TCL_OK, or TCL_ERROR with a message and {TCLCPROF VERSION ...}.
 *
 *----------------------------------------------------------------------
 */

int
CprofCheckTclVersion(
    Tcl_Interp *interp)
{
    int major, minor, patch, type;

    Tcl_GetVersion(&major, &minor, &patch, &type);
    if (major != 8 || minor != 6) {
	Tcl_SetObjResult(interp, Tcl_ObjPrintf(
		"tclcprof needs Tcl 8.6, this is Tcl %d.%d", major, minor));
	Tcl_SetErrorCode(interp, "TCLCPROF", "VERSION", NULL);
	return TCL_ERROR;
    }
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofNameIntern, CprofNameString, CprofNameCount --
 *
 *	The process-wide table of display names. An id, once given, names
 *	the same string for the life of the process.
 *
 * Results:
 *	The id of the name; the string of an id (NULL for a bad id); the
 *	number of names.
 *
 * Side effects:
 *	May grow the table.
 *
 *----------------------------------------------------------------------
 */

int
CprofNameIntern(
    const char *name,
    int length)
{
    Tcl_HashEntry *hPtr;
    Tcl_DString ds;
    int isNew, id;

    if (length < 0) {
	length = (int) strlen(name);
    }
    Tcl_DStringInit(&ds);
    Tcl_DStringAppend(&ds, name, length);

    Tcl_MutexLock(&nameMutex);
    if (!nameTable.initialized) {
	Tcl_InitHashTable(&nameTable.byName, TCL_STRING_KEYS);
	nameTable.initialized = 1;
    }
    hPtr = Tcl_CreateHashEntry(&nameTable.byName, Tcl_DStringValue(&ds),
	    &isNew);
    if (isNew) {
	if (nameTable.count == nameTable.capacity) {
	    nameTable.capacity = nameTable.capacity ? 2*nameTable.capacity
		    : 256;
	    nameTable.names = (char **) ckrealloc(nameTable.names,
		    nameTable.capacity * sizeof(char *));
	}
	id = nameTable.count++;
	nameTable.names[id] = (char *)
		Tcl_GetHashKey(&nameTable.byName, hPtr);
	Tcl_SetHashValue(hPtr, INT2PTR(id));
    } else {
	id = PTR2INT(Tcl_GetHashValue(hPtr));
    }
    Tcl_MutexUnlock(&nameMutex);
    Tcl_DStringFree(&ds);
    return id;
}

const char *
CprofNameString(
    int id)
{
    const char *name = NULL;

    Tcl_MutexLock(&nameMutex);
    if (id >= 0 && id < nameTable.count) {
	name = nameTable.names[id];
    }
    Tcl_MutexUnlock(&nameMutex);
    return name;
}

int
CprofNameCount(void)
{
    int count;

    Tcl_MutexLock(&nameMutex);
    count = nameTable.count;
    Tcl_MutexUnlock(&nameMutex);
    return count;
}

const char *
CprofKindName(
    int kind)
{
    return (kind >= 0 && kind < CPROF_KIND_COUNT) ? kindNames[kind] : "?";
}

/*
 *----------------------------------------------------------------------
 *
 * ProbeInternals --
 *
 *	Learn, once per process, the objProc of TclOO object commands (public
 *	and "my") and the nreProc of coroutine commands, by creating one of
 *	each in a scratch namespace and reading their Command structs. These
 *	functions are not exported by Tcl.
 *
 * Side effects:
 *	Creates and deletes ::tclcprof::Probe*.
 *
 *----------------------------------------------------------------------
 */

static void
ProbeInternals(
    Tcl_Interp *interp)
{
    Tcl_InterpState saved;
    Command *cmdPtr;

    Tcl_MutexLock(&probeMutex);
    if (probed) {
	Tcl_MutexUnlock(&probeMutex);
	return;
    }
    saved = Tcl_SaveInterpState(interp, TCL_OK);
    if (Tcl_EvalEx(interp,
	    "::oo::object create ::tclcprof::ProbeObject\n"
	    "::coroutine ::tclcprof::ProbeCoro ::apply {{} {::yield}}\n"
	    "list [info object namespace ::tclcprof::ProbeObject]::my",
	    -1, TCL_EVAL_GLOBAL) == TCL_OK) {
	const char *myName = Tcl_GetString(Tcl_GetObjResult(interp));

	cmdPtr = (Command *) Tcl_FindCommand(interp, myName, NULL, 0);
	if (cmdPtr) {
	    ooPrivateObjProc = cmdPtr->objProc;
	}
	cmdPtr = (Command *) Tcl_FindCommand(interp,
		"::tclcprof::ProbeObject", NULL, 0);
	if (cmdPtr) {
	    ooPublicObjProc = cmdPtr->objProc;
	}
	cmdPtr = (Command *) Tcl_FindCommand(interp, "::tclcprof::ProbeCoro",
		NULL, 0);
	if (cmdPtr) {
	    coroNreProc = cmdPtr->nreProc;
	}
    }
    Tcl_EvalEx(interp, "catch {::tclcprof::ProbeObject destroy}\n"
	    "catch {::rename ::tclcprof::ProbeCoro {}}", -1, TCL_EVAL_GLOBAL);
    Tcl_RestoreInterpState(interp, saved);
    probed = 1;
    Tcl_MutexUnlock(&probeMutex);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofStackInitState, CprofStackFreeState --
 *
 *	Set up and tear down the level-stack part of a CprofState.
 *
 *----------------------------------------------------------------------
 */

static void
ClearMethodFront(
    CprofState *statePtr)
{
    int i;

    for (i = 0; i < CPROF_FRONT_SIZE; i++) {
	statePtr->methodFront[i].nameId = -1;
    }
}

void
CprofStackInitState(
    CprofState *statePtr)
{
    ProbeInternals(statePtr->interp);
    Tcl_InitHashTable(&statePtr->cmdCache, TCL_ONE_WORD_KEYS);
    Tcl_InitHashTable(&statePtr->pairCache,
	    (int) (2 * sizeof(void *) / sizeof(int)));
    Tcl_InitHashTable(&statePtr->methodCache, TCL_STRING_KEYS);
    Tcl_InitHashTable(&statePtr->coroSaved, TCL_ONE_WORD_KEYS);
    ClearMethodFront(statePtr);
    statePtr->methodEpoch = -1;
}

/*
 * Drop every cached command name and release the Command references.
 */

static void
ClearCaches(
    CprofState *statePtr)
{
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    for (hPtr = Tcl_FirstHashEntry(&statePtr->cmdCache, &search);
	    hPtr != NULL; hPtr = Tcl_NextHashEntry(&search)) {
	CmdInfo *infoPtr = Tcl_GetHashValue(hPtr);
	Command *cmdPtr = infoPtr->cmdPtr;

	TclCleanupCommandMacro(cmdPtr);
	ckfree(infoPtr);
    }
    memset(statePtr->cmdFront, 0, sizeof(statePtr->cmdFront));
    Tcl_DeleteHashTable(&statePtr->cmdCache);
    Tcl_InitHashTable(&statePtr->cmdCache, TCL_ONE_WORD_KEYS);
    Tcl_DeleteHashTable(&statePtr->pairCache);
    Tcl_InitHashTable(&statePtr->pairCache,
	    (int) (2 * sizeof(void *) / sizeof(int)));
    Tcl_DeleteHashTable(&statePtr->methodCache);
    Tcl_InitHashTable(&statePtr->methodCache, TCL_STRING_KEYS);
    ClearMethodFront(statePtr);
    statePtr->methodEpoch = -1;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofStackClear --
 *
 *	Forget the tracked frames, saved coroutine frames and name caches.
 *	Called when the trace is removed, since frames can no longer be
 *	kept true without it.
 *
 *----------------------------------------------------------------------
 */

void
CprofStackClear(
    CprofState *statePtr)
{
    CprofStack *stackPtr = &statePtr->stack;
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    stackPtr->depth = 0;
    while (stackPtr->retired) {
	CprofRetired *r = stackPtr->retired;

	stackPtr->retired = r->nextPtr;
	ckfree(r);
    }
    while ((hPtr = Tcl_FirstHashEntry(&statePtr->coroSaved, &search))) {
	FreeCoroSaved(Tcl_GetHashValue(hPtr), !statePtr->deleting);
    }
    ClearCaches(statePtr);
}

void
CprofStackFreeState(
    CprofState *statePtr)
{
    CprofStackClear(statePtr);
    if (statePtr->stack.frames) {
	ckfree(statePtr->stack.frames);
	statePtr->stack.frames = NULL;
	statePtr->stack.capacity = 0;
    }
    Tcl_DeleteHashTable(&statePtr->cmdCache);
    Tcl_DeleteHashTable(&statePtr->pairCache);
    Tcl_DeleteHashTable(&statePtr->methodCache);
    Tcl_DeleteHashTable(&statePtr->coroSaved);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofStackInstall, CprofStackRemove --
 *
 *	Install and remove the object trace. While no trace is installed the
 *	package costs nothing per command.
 *
 *----------------------------------------------------------------------
 */

int
CprofStackInstall(
    CprofState *statePtr)
{
    if (statePtr->trace == NULL) {
	statePtr->stack.depth = 0;

	/*
	 * Coverage needs no leaves: without them Tcl still runs its leave
	 * machinery, but not our callback.
	 */

	statePtr->trace = Tcl_CreateObjTrace(statePtr->interp, 0,
		TCL_TRACE_ENTER_EXEC | (statePtr->exact.coverage ? 0
		: TCL_TRACE_LEAVE_EXEC) | TCL_ALLOW_INLINE_COMPILATION,
		TraceProc, statePtr, NULL);
    }
    return TCL_OK;
}

void
CprofStackRemove(
    CprofState *statePtr)
{
    if (statePtr->trace != NULL) {
	Tcl_DeleteTrace(statePtr->interp, statePtr->trace);
	statePtr->trace = NULL;
    }
    CprofStackClear(statePtr);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofStackLiveDepth --
 *
 *	Number of tracked frames that are still live: frames above Tcl's
 *	current nesting level lost their leave (their command was deleted
 *	while running) and are not counted. The sampler applies the same
 *	filter.
 *
 *----------------------------------------------------------------------
 */

int
CprofStackLiveDepth(
    CprofState *statePtr)
{
    Interp *iPtr = (Interp *) statePtr->interp;
    CprofStack *stackPtr = &statePtr->stack;
    int depth = stackPtr->depth;

    while (depth > 0 && stackPtr->frames[depth-1].level > iPtr->numLevels) {
	depth--;
    }
    return depth;
}

/*
 * The exact data was cleared (reset) at 'now': saved coroutine frames no
 * longer have nodes or site records (they get nodes again when resumed),
 * the time they ran before the reset is forgotten, and their time
 * suspended counts from the reset.
 */

void
CprofStackForgetSaved(
    CprofState *statePtr,
    uint64_t now)
{
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;
    int i;

    for (hPtr = Tcl_FirstHashEntry(&statePtr->coroSaved, &search);
	    hPtr != NULL; hPtr = Tcl_NextHashEntry(&search)) {
	CprofCoroSaved *savedPtr = Tcl_GetHashValue(hPtr);

	for (i = 0; i < savedPtr->count; i++) {
	    CprofFrame *framePtr = &savedPtr->frames[i];

	    framePtr->node = 0;
	    framePtr->lineRec = -1;
	    framePtr->eventIndex = -1;
	    framePtr->callNs = 0;
	    framePtr->childNs = 0;
	    framePtr->desc = 0;
	}
	savedPtr->suspendNs = now;
    }
}

/*
 * Profiling stops: the frames of suspended coroutines will not run again
 * under this profile. Closed at 'now' on the exact clock.
 */

void
CprofStackDropSaved(
    CprofState *statePtr,
    uint64_t now)
{
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    for (hPtr = Tcl_FirstHashEntry(&statePtr->coroSaved, &search);
	    hPtr != NULL; hPtr = Tcl_NextHashEntry(&search)) {
	CprofCoroSaved *savedPtr = Tcl_GetHashValue(hPtr);

	if (savedPtr->count > 0) {
	    CprofExactDropSuspended(statePtr, savedPtr->frames,
		    savedPtr->count, now - savedPtr->suspendNs);
	    savedPtr->count = 0;
	}
    }
}

const int *
CprofNumLevelsPtr(
    Tcl_Interp *interp)
{
    return &((Interp *) interp)->numLevels;
}

/*
 *----------------------------------------------------------------------
 *
 * TraceProc --
 *
 *	The object trace. Tcl calls it before (enter) and after (leave)
 *	every traced command with identical arguments; the private
 *	reverseScan flag of the active trace record tells which: enter
 *	traces are scanned in reverse order.
 *
 *	'marker' is a local whose address is the anchor base: the native
 *	trampoline frame running the command sits a fixed distance D above
 *	it (calibrated by CprofStackCalibrate).
 *
 * Results:
 *	TCL_OK always.
 *
 * Side effects:
 *	Pushes or pops frames.
 *
 *----------------------------------------------------------------------
 */

static int
TraceProc(
    ClientData clientData,
    Tcl_Interp *interp,
    int level,
    const char *command,
    Tcl_Command token,
    int objc,
    Tcl_Obj *const objv[])
{
    volatile char marker = 0;
    CprofState *statePtr = (CprofState *) clientData;
    Interp *iPtr = (Interp *) interp;

    if (statePtr->exact.coverage) {
	CoverageEnter(statePtr, iPtr, (Command *) token, objc, objv);
    } else if (iPtr->activeInterpTracePtr->reverseScan) {
	TraceEnter(statePtr, iPtr, level, (Command *) token, objc, objv,
		(uintptr_t) &marker);
    } else {
	TraceLeave(statePtr, iPtr, level, (Command *) token);
	return TCL_OK;
    }

    /*
     * The command layer's timed duties (-duration, flushes to -db, a fork
     * to notice), every 256 commands. They may stop the run: that is done
     * here, on the way out of the callback, where nothing of the stack is
     * in use any more (Tcl allows a trace to be deleted from its own
     * callback).
     */

    if (statePtr->polling && (statePtr->counters.enters & 255) == 0) {
	statePtr->pollProc(statePtr);
    }
    return TCL_OK;
}

/*
 * Where the command being entered was invoked: the bytecode and pc, or the
 * sourced file's path and line, of Tcl's current command frame.
 */

static inline int
SiteKey(
    Interp *iPtr,
    void **ptrPtr,
    int *offsetPtr)
{
    CmdFrame *cfPtr = iPtr->cmdFramePtr;

    if (cfPtr == NULL) {
	return CPROF_SITE_NONE;
    }
    if (cfPtr->type == TCL_LOCATION_BC) {
	const ByteCode *codePtr = (const ByteCode *) cfPtr->data.tebc.codePtr;

	if (codePtr == NULL || cfPtr->data.tebc.pc == NULL) {
	    return CPROF_SITE_NONE;
	}
	*ptrPtr = (void *) codePtr;
	*offsetPtr = (int) ((const unsigned char *) cfPtr->data.tebc.pc
		- codePtr->codeStart);
	return CPROF_SITE_BYTECODE;
    }
    if (cfPtr->type == TCL_LOCATION_SOURCE && cfPtr->line != NULL
	    && cfPtr->nline > 0 && cfPtr->data.eval.path != NULL) {
	*ptrPtr = cfPtr->data.eval.path;
	*offsetPtr = cfPtr->line[0];
	return CPROF_SITE_SOURCE;
    }
    return CPROF_SITE_NONE;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofResolveSite, CprofHoldSiteKey, CprofReleaseSiteKey --
 *
 *	A site key to a file and line (once per key, in normal context);
 *	holding and releasing the object a key names, so that its address
 *	is not reused while the key is cached.
 *
 * Results:
 *	CprofResolveSite: 1 and *fileIdPtr, *linePtr set for a place in a
 *	sourced file; 0 for code with no file (interactive, eval'ed
 *	strings).
 *
 *----------------------------------------------------------------------
 */

int
CprofResolveSite(
    Tcl_Interp *interp,
    int siteKind,
    void *sitePtr,
    int siteOffset,
    int *fileIdPtr,
    int *linePtr)
{
    if (siteKind == CPROF_SITE_SOURCE) {
	Tcl_Obj *pathObj = (Tcl_Obj *) sitePtr;
	int length;
	const char *path = Tcl_GetStringFromObj(pathObj, &length);

	if (length == 0 || siteOffset <= 0) {
	    return 0;
	}
	*fileIdPtr = CprofNameIntern(path, length);
	*linePtr = siteOffset;
	return 1;
    }
    if (siteKind == CPROF_SITE_BYTECODE) {
	ByteCode *codePtr = (ByteCode *) sitePtr;
	CmdFrame cf;
	int found = 0;

	memset(&cf, 0, sizeof(cf));
	cf.type = TCL_LOCATION_BC;
	cf.data.tebc.codePtr = codePtr;
	cf.data.tebc.pc = (const char *) codePtr->codeStart + siteOffset;
	TclGetSrcInfoForPc(&cf);
	if (cf.type == TCL_LOCATION_SOURCE) {
	    if (cf.line != NULL && cf.nline > 0 && cf.line[0] > 0
		    && cf.data.eval.path != NULL) {
		int length;
		const char *path = Tcl_GetStringFromObj(cf.data.eval.path,
			&length);

		if (length > 0) {
		    *fileIdPtr = CprofNameIntern(path, length);
		    *linePtr = cf.line[0];
		    found = 1;
		}
	    }
	    if (cf.data.eval.path != NULL) {
		Tcl_DecrRefCount(cf.data.eval.path);
	    }
	}
	(void) interp;
	return found;
    }
    return 0;
}

void
CprofHoldSiteKey(
    int siteKind,
    void *sitePtr)
{
    if (siteKind == CPROF_SITE_BYTECODE) {
	((ByteCode *) sitePtr)->refCount++;
    } else if (siteKind == CPROF_SITE_SOURCE) {
	Tcl_IncrRefCount((Tcl_Obj *) sitePtr);
    }
}

void
CprofReleaseSiteKey(
    int siteKind,
    void *sitePtr)
{
    if (siteKind == CPROF_SITE_BYTECODE) {
	ByteCode *codePtr = (ByteCode *) sitePtr;
	static const Tcl_ObjType *byteCodeTypePtr = NULL;

	if (codePtr->refCount > 1) {
	    codePtr->refCount--;
	    return;
	}

	/*
	 * The last reference: Tcl's cleanup of ByteCode is not exported,
	 * but the bytecode object type's free procedure drops a reference
	 * and cleans up, so let a scratch object own the ByteCode.
	 */

	if (byteCodeTypePtr == NULL) {
	    byteCodeTypePtr = Tcl_GetObjType("bytecode");
	}
	if (byteCodeTypePtr != NULL) {
	    Tcl_Obj scratch;

	    memset(&scratch, 0, sizeof(scratch));
	    scratch.refCount = 1;
	    scratch.typePtr = byteCodeTypePtr;
	    scratch.internalRep.twoPtrValue.ptr1 = codePtr;
	    byteCodeTypePtr->freeIntRepProc(&scratch);
	}
    } else if (siteKind == CPROF_SITE_SOURCE) {
	Tcl_DecrRefCount((Tcl_Obj *) sitePtr);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CprofDefinedProcs --
 *
 *	The fully qualified names of the procedures defined in every
 *	namespace of the interpreter, tclcprof's own left out.
 *
 *----------------------------------------------------------------------
 */

static void
AddProcs(
    Tcl_Interp *interp,
    Namespace *nsPtr,
    Tcl_Obj *listObj)
{
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    if (strcmp(nsPtr->fullName, "::tclcprof") == 0) {
	return;
    }
    for (hPtr = Tcl_FirstHashEntry(&nsPtr->cmdTable, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	Command *cmdPtr = Tcl_GetHashValue(hPtr);

	if (TclIsProc(cmdPtr)) {
	    Tcl_Obj *nameObj = Tcl_NewObj();

	    Tcl_GetCommandFullName(interp, (Tcl_Command) cmdPtr, nameObj);
	    Tcl_ListObjAppendElement(NULL, listObj, nameObj);
	}
    }
#ifndef BREAK_NAMESPACE_COMPAT
    for (hPtr = Tcl_FirstHashEntry(&nsPtr->childTable, &search);
	    hPtr != NULL; hPtr = Tcl_NextHashEntry(&search)) {
	AddProcs(interp, Tcl_GetHashValue(hPtr), listObj);
    }
#else
    if (nsPtr->childTablePtr != NULL) {
	for (hPtr = Tcl_FirstHashEntry(nsPtr->childTablePtr, &search);
		hPtr != NULL; hPtr = Tcl_NextHashEntry(&search)) {
	    AddProcs(interp, Tcl_GetHashValue(hPtr), listObj);
	}
    }
#endif
}

Tcl_Obj *
CprofDefinedProcs(
    Tcl_Interp *interp)
{
    Tcl_Obj *listObj = Tcl_NewListObj(0, NULL);

    AddProcs(interp, (Namespace *) Tcl_GetGlobalNamespace(interp), listObj);
    return listObj;
}

/*
 * Coverage mode: name the command and count it; no stack is kept.
 */

static void
CoverageEnter(
    CprofState *statePtr,
    Interp *iPtr,
    Command *cmdPtr,
    int objc,
    Tcl_Obj *const objv[])
{
    CmdInfo *infoPtr;
    int nameId, siteKind = CPROF_SITE_NONE, siteOffset = 0;
    void *sitePtr = NULL;

    if (cmdPtr == (Command *) statePtr->calibCmd) {
	return;
    }
    statePtr->counters.enters++;
    infoPtr = LookupCmd(statePtr, cmdPtr);
    if (infoPtr->flags & CMD_INFO_OWN) {
	return;
    }
    nameId = (infoPtr->flags & CMD_INFO_OBJECT)
	    ? MethodNameId(statePtr, iPtr, cmdPtr, objc, objv)
	    : infoPtr->nameId;
    if (statePtr->exact.lines) {
	siteKind = SiteKey(iPtr, &sitePtr, &siteOffset);
    }
    CprofExactCoverage(statePtr, nameId, infoPtr->kind, siteKind, sitePtr,
	    siteOffset);
}

/*
 * Push one frame slot. The array is replaced, never resized in place; see
 * CprofStack.
 */

static CprofFrame *
PushFrame(
    CprofStack *stackPtr)
{
    if (stackPtr->depth == stackPtr->capacity) {
	int newCap = stackPtr->capacity ? 2 * stackPtr->capacity : 64;
	CprofFrame *newFrames = (CprofFrame *)
		ckalloc(newCap * sizeof(CprofFrame));
	CprofFrame *oldFrames = stackPtr->frames;

	if (oldFrames) {
	    CprofRetired *r;

	    memcpy(newFrames, oldFrames,
		    stackPtr->depth * sizeof(CprofFrame));

	    /*
	     * Keep the old array until the stack is cleared: the sampler may
	     * still be reading it. The retired record reuses its memory.
	     */

	    r = (CprofRetired *) oldFrames;
	    r->nextPtr = stackPtr->retired;
	    stackPtr->retired = r;
	}
	__atomic_store_n(&stackPtr->frames, newFrames, __ATOMIC_RELEASE);
	stackPtr->capacity = newCap;
    }
    return &stackPtr->frames[stackPtr->depth];
}

static inline void
CommitPush(
    CprofStack *stackPtr)
{
    int depth = stackPtr->depth + 1;

    __atomic_store_n(&stackPtr->depth, depth, __ATOMIC_RELEASE);
    if (depth > stackPtr->maxDepth) {
	stackPtr->maxDepth = depth;
    }
}

/*
 * Pop the top frame, whose leave will never come.
 */

static inline void
PopMissing(
    CprofState *statePtr)
{
    CprofStack *stackPtr = &statePtr->stack;

    if (!(stackPtr->frames[stackPtr->depth - 1].flags & CPROF_FRAME_NEXT)) {
	statePtr->counters.missingLeaves++;
    }
    if (statePtr->exact.on) {
	CprofExactLeave(statePtr, stackPtr->depth - 1);
    }
    __atomic_store_n(&stackPtr->depth, stackPtr->depth - 1, __ATOMIC_RELEASE);
}

/*
 *----------------------------------------------------------------------
 *
 * LookupCmd --
 *
 *	The cached naming of a command: display name, kind and the flags
 *	that the enter path needs. Computed once per command and kept valid
 *	through Tcl's command epoch, which changes on rename and deletion.
 *	The cache holds a reference on each Command so that its memory is
 *	never reused for another command while cached.
 *
 *----------------------------------------------------------------------
 */

static CmdInfo *
LookupCmd(
    CprofState *statePtr,
    Command *cmdPtr)
{
    Tcl_HashEntry *hPtr;
    CmdInfo *infoPtr;
    int isNew;
    Tcl_Obj *nameObj;
    const char *name;
    int length;
    Command *origPtr;

    /*
     * A direct-mapped front cache keeps the hash function off the hot path
     * for the commands a loop calls over and over.
     */

    CmdInfo **slotPtr = &statePtr->cmdFront[((uintptr_t) cmdPtr >> 4)
	    & (CPROF_FRONT_SIZE - 1)];

    infoPtr = *slotPtr;
    if (infoPtr != NULL && infoPtr->cmdPtr == cmdPtr
	    && infoPtr->epoch == cmdPtr->cmdEpoch) {
	return infoPtr;
    }

    hPtr = Tcl_CreateHashEntry(&statePtr->cmdCache, (char *) cmdPtr, &isNew);
    if (!isNew) {
	infoPtr = Tcl_GetHashValue(hPtr);
	if (infoPtr->epoch == cmdPtr->cmdEpoch) {
	    *slotPtr = infoPtr;
	    return infoPtr;
	}
    } else {
	/*
	 * A table of deleted commands would grow without bound in a program
	 * that creates and deletes commands in a loop: sweep them whenever
	 * the table has doubled.
	 */

	infoPtr = (CmdInfo *) ckalloc(sizeof(CmdInfo));
	infoPtr->cmdPtr = cmdPtr;
	cmdPtr->refCount++;
	Tcl_SetHashValue(hPtr, infoPtr);
    }

    nameObj = Tcl_NewObj();
    Tcl_IncrRefCount(nameObj);
    origPtr = (Command *) TclGetOriginalCommand((Tcl_Command) cmdPtr);
    if (origPtr == NULL) {
	origPtr = cmdPtr;
    }
    Tcl_GetCommandFullName(statePtr->interp, (Tcl_Command) origPtr, nameObj);
    name = Tcl_GetStringFromObj(nameObj, &length);

    infoPtr->epoch = cmdPtr->cmdEpoch;
    infoPtr->flags = 0;
    if (strcmp(name, "::tclcprof") == 0
	    || strncmp(name, "::tclcprof::", 12) == 0) {
	infoPtr->flags |= CMD_INFO_OWN;
    }
    if (TclIsProc(origPtr)) {
	infoPtr->kind = CPROF_KIND_PROC;
	infoPtr->nameId = CprofNameIntern(name, length);
    } else {
	const char *const *cnPtr;
	const char *shown = name;
	int shownLen = length;

	if (shown[0] == ':' && shown[1] == ':') {
	    shown += 2;
	    shownLen -= 2;
	}
	infoPtr->kind = CPROF_KIND_CMD;
	infoPtr->nameId = -1;
	if (Tcl_IsEnsemble((Tcl_Command) cmdPtr)) {
	    infoPtr->kind = CPROF_KIND_ENSEMBLE;
	    infoPtr->flags |= CMD_INFO_ENSEMBLE;
	} else if (cmdPtr->objProc != NULL && (cmdPtr->objProc
		== ooPublicObjProc || cmdPtr->objProc == ooPrivateObjProc)) {
	    infoPtr->kind = CPROF_KIND_METHOD;
	    infoPtr->flags |= CMD_INFO_OBJECT;
	} else if (coroNreProc != NULL && cmdPtr->nreProc == coroNreProc) {
	    infoPtr->flags |= CMD_INFO_COROUTINE;
	} else if (strncmp(name, "::tcl::", 7) == 0) {
	    /*
	     * The implementation of a core ensemble's subcommand, such as
	     * ::tcl::string::repeat, which compiled code invokes directly:
	     * show it as "string repeat" when ::string is that ensemble.
	     */

	    const char *ens = name + 7, *sep = strstr(ens, "::");

	    if (sep != NULL && strstr(sep + 2, "::") == NULL) {
		Tcl_DString ds;
		Tcl_Command ensCmd;

		Tcl_DStringInit(&ds);
		Tcl_DStringAppend(&ds, "::", 2);
		Tcl_DStringAppend(&ds, ens, (int) (sep - ens));
		ensCmd = Tcl_FindCommand(statePtr->interp,
			Tcl_DStringValue(&ds), NULL, TCL_GLOBAL_ONLY);
		if (ensCmd != NULL && Tcl_IsEnsemble(ensCmd)) {
		    Tcl_DStringSetLength(&ds, 0);
		    Tcl_DStringAppend(&ds, ens, (int) (sep - ens));
		    Tcl_DStringAppend(&ds, " ", 1);
		    Tcl_DStringAppend(&ds, sep + 2, -1);
		    infoPtr->kind = CPROF_KIND_ENSEMBLE;
		    infoPtr->nameId = CprofNameIntern(Tcl_DStringValue(&ds),
			    Tcl_DStringLength(&ds));
		}
		Tcl_DStringFree(&ds);
	    }
	}
	for (cnPtr = controlNames; *cnPtr != NULL; cnPtr++) {
	    if (strcmp(name, *cnPtr) == 0) {
		infoPtr->kind = CPROF_KIND_CONTROL;
		break;
	    }
	}
	if (infoPtr->nameId < 0) {
	    infoPtr->nameId = CprofNameIntern(shown, shownLen);
	}
    }
    Tcl_DecrRefCount(nameObj);
    *slotPtr = infoPtr;

    /*
     * Sweep entries of deleted commands when the cache grows large.
     */

    if (isNew && statePtr->cmdCache.numEntries >= 4096
	    && (statePtr->cmdCache.numEntries & (statePtr->cmdCache.numEntries
	    - 1)) == 0) {
	Tcl_HashSearch search;
	Tcl_HashEntry *ePtr;

	for (ePtr = Tcl_FirstHashEntry(&statePtr->cmdCache, &search);
		ePtr != NULL; ePtr = Tcl_NextHashEntry(&search)) {
	    CmdInfo *iPtr2 = Tcl_GetHashValue(ePtr);

	    if (iPtr2 != infoPtr && (iPtr2->cmdPtr->flags & CMD_IS_DELETED)) {
		Command *deadPtr = iPtr2->cmdPtr;

		Tcl_DeleteHashEntry(ePtr);
		TclCleanupCommandMacro(deadPtr);
		ckfree(iPtr2);
		memset(statePtr->cmdFront, 0, sizeof(statePtr->cmdFront));
		statePtr->cmdFront[((uintptr_t) cmdPtr >> 4)
			& (CPROF_FRONT_SIZE - 1)] = infoPtr;
	    }
	}
    }
    return infoPtr;
}

/*
 *----------------------------------------------------------------------
 *
 * MethodNameId --
 *
 *	Name a TclOO method call "Class method": the class (or object, for a
 *	per-object method) that declares the method, searched the way
 *	TclOO's call chain finds it (object methods, object mixins, then the
 *	class and its mixins and superclasses depth first). Cached per
 *	(class, method) and invalidated by TclOO's global epoch.
 *
 *----------------------------------------------------------------------
 */

static Class *
FindInClass(
    Class *clsPtr,
    Tcl_Obj *methodObj,
    int depth)
{
    int i;
    Class *found;

    if (clsPtr == NULL || depth > 64) {
	return NULL;
    }
    for (i = 0; i < clsPtr->mixins.num; i++) {
	if ((found = FindInClass(clsPtr->mixins.list[i], methodObj,
		depth + 1)) != NULL) {
	    return found;
	}
    }
    if (Tcl_FindHashEntry(&clsPtr->classMethods, (char *) methodObj)) {
	return clsPtr;
    }
    for (i = 0; i < clsPtr->superclasses.num; i++) {
	if ((found = FindInClass(clsPtr->superclasses.list[i], methodObj,
		depth + 1)) != NULL) {
	    return found;
	}
    }
    return NULL;
}

static int
MethodNameId(
    CprofState *statePtr,
    Interp *iPtr,
    Command *cmdPtr,
    int objc,
    Tcl_Obj *const objv[])
{
    Object *oPtr = (Object *) cmdPtr->objClientData;
    Foundation *fPtr = (Foundation *) iPtr->objectFoundation;
    Tcl_Obj *methodObj;
    char keyBuf[64];
    Tcl_DString key;
    Tcl_HashEntry *hPtr;
    int isNew, id, perObject, i, mlen;
    Class *declPtr = NULL;
    Tcl_Obj *declName = NULL;
    struct CprofMethodFront *frontPtr = NULL;
    const char *mname;

    if (objc < 2 || oPtr == NULL || oPtr->selfCls == NULL) {
	return LookupCmd(statePtr, cmdPtr)->nameId;
    }
    methodObj = objv[1];
    if (fPtr != NULL && fPtr->epoch != statePtr->methodEpoch) {
	Tcl_DeleteHashTable(&statePtr->methodCache);
	Tcl_InitHashTable(&statePtr->methodCache, TCL_STRING_KEYS);
	ClearMethodFront(statePtr);
	statePtr->methodEpoch = fPtr->epoch;
    }

    perObject = (oPtr->methodsPtr != NULL || oPtr->mixins.num > 0);

    /*
     * The front: a method called again on the same class (or object)
     * costs a few compares, where the keyed lookup below costs ~1000
     * instructions (measured with callgrind on bench's TclOO workload).
     */

    mname = Tcl_GetStringFromObj(methodObj, &mlen);
    if (mlen < (int) sizeof(statePtr->methodFront[0].name)) {
	const void *keyObj = perObject ? (void *) oPtr : NULL;
	int keyEpoch = perObject ? oPtr->epoch : 0;
	uintptr_t h = ((uintptr_t) oPtr->selfCls >> 4)
		^ ((uintptr_t) keyObj >> 4) ^ (uintptr_t) mlen * 0x9e37u;

	for (i = 0; i < mlen; i++) {
	    h = h * 31 + (unsigned char) mname[i];
	}
	frontPtr = &statePtr->methodFront[(h ^ (h >> 8))
		& (CPROF_FRONT_SIZE - 1)];
	if (frontPtr->nameId >= 0 && frontPtr->clsPtr == oPtr->selfCls
		&& frontPtr->objPtr == keyObj && frontPtr->epoch == keyEpoch
		&& frontPtr->len == mlen
		&& memcmp(frontPtr->name, mname, (size_t) mlen) == 0) {
	    return frontPtr->nameId;
	}
	frontPtr->nameId = -1;
	frontPtr->objPtr = keyObj;
	frontPtr->clsPtr = oPtr->selfCls;
	frontPtr->epoch = keyEpoch;
	frontPtr->len = mlen;
	memcpy(frontPtr->name, mname, (size_t) mlen);
    }

    if (perObject) {
	snprintf(keyBuf, sizeof(keyBuf), "%p.%d.%p ", (void *) oPtr,
		oPtr->epoch, (void *) oPtr->selfCls);
    } else {
	snprintf(keyBuf, sizeof(keyBuf), "%p ", (void *) oPtr->selfCls);
    }
    Tcl_DStringInit(&key);
    Tcl_DStringAppend(&key, keyBuf, -1);
    Tcl_DStringAppend(&key, Tcl_GetString(methodObj), -1);
    hPtr = Tcl_CreateHashEntry(&statePtr->methodCache, Tcl_DStringValue(&key),
	    &isNew);
    Tcl_DStringFree(&key);
    if (!isNew) {
	id = PTR2INT(Tcl_GetHashValue(hPtr));
	if (frontPtr != NULL) {
	    frontPtr->nameId = id;
	}
	return id;
    }

    if (oPtr->methodsPtr != NULL
	    && Tcl_FindHashEntry(oPtr->methodsPtr, (char *) methodObj)) {
	declName = Tcl_GetObjectName((Tcl_Interp *) iPtr, (Tcl_Object) oPtr);
    } else {
	for (i = 0; i < oPtr->mixins.num && declPtr == NULL; i++) {
	    declPtr = FindInClass(oPtr->mixins.list[i], methodObj, 0);
	}
	if (declPtr == NULL) {
	    declPtr = FindInClass(oPtr->selfCls, methodObj, 0);
	}
	if (declPtr == NULL) {
	    declPtr = oPtr->selfCls;
	}
	declName = Tcl_GetObjectName((Tcl_Interp *) iPtr, (Tcl_Object) declPtr->thisPtr);
    }
    {
	Tcl_DString ds;
	const char *n = Tcl_GetString(declName);

	if (n[0] == ':' && n[1] == ':') {
	    n += 2;
	}
	Tcl_DStringInit(&ds);
	Tcl_DStringAppend(&ds, n, -1);
	Tcl_DStringAppend(&ds, " ", 1);
	Tcl_DStringAppend(&ds, Tcl_GetString(methodObj), -1);
	id = CprofNameIntern(Tcl_DStringValue(&ds), Tcl_DStringLength(&ds));
	Tcl_DStringFree(&ds);
    }
    Tcl_SetHashValue(hPtr, INT2PTR(id));
    if (frontPtr != NULL) {
	frontPtr->nameId = id;
    }
    return id;
}

/*
 * Name of the method whose body is running in the current variable frame,
 * "Class method", or -1 when the frame is not a method body. Used for
 * methods reached through [next], which is compiled and emits no event.
 */

static int
RunningMethodNameId(
    CprofState *statePtr,
    Interp *iPtr)
{
    CallFrame *framePtr = iPtr->varFramePtr;
    CallContext *ctxPtr;
    Method *mPtr;
    Foundation *fPtr = (Foundation *) iPtr->objectFoundation;
    Tcl_HashEntry *hPtr;
    char keyBuf[40];
    int isNew, id;
    Tcl_Obj *declName;
    Tcl_DString ds;
    const char *n;

    if (framePtr == NULL || !(framePtr->isProcCallFrame & FRAME_IS_METHOD)
	    || framePtr->clientData == NULL) {
	return -1;
    }
    ctxPtr = (CallContext *) framePtr->clientData;
    if (ctxPtr->callPtr == NULL || ctxPtr->index < 0
	    || ctxPtr->index >= ctxPtr->callPtr->numChain) {
	return -1;
    }
    mPtr = ctxPtr->callPtr->chain[ctxPtr->index].mPtr;
    if (mPtr == NULL || mPtr->namePtr == NULL) {
	return -1;
    }
    if (fPtr != NULL && fPtr->epoch != statePtr->methodEpoch) {
	Tcl_DeleteHashTable(&statePtr->methodCache);
	Tcl_InitHashTable(&statePtr->methodCache, TCL_STRING_KEYS);
	ClearMethodFront(statePtr);
	statePtr->methodEpoch = fPtr->epoch;
    }
    snprintf(keyBuf, sizeof(keyBuf), "m%p", (void *) mPtr);
    hPtr = Tcl_CreateHashEntry(&statePtr->methodCache, keyBuf, &isNew);
    if (!isNew) {
	return PTR2INT(Tcl_GetHashValue(hPtr));
    }
    if (mPtr->declaringClassPtr != NULL) {
	declName = Tcl_GetObjectName((Tcl_Interp *) iPtr,
		(Tcl_Object) mPtr->declaringClassPtr->thisPtr);
    } else if (mPtr->declaringObjectPtr != NULL) {
	declName = Tcl_GetObjectName((Tcl_Interp *) iPtr,
		(Tcl_Object) mPtr->declaringObjectPtr);
    } else {
	Tcl_DeleteHashEntry(hPtr);
	return -1;
    }
    n = Tcl_GetString(declName);
    if (n[0] == ':' && n[1] == ':') {
	n += 2;
    }
    Tcl_DStringInit(&ds);
    Tcl_DStringAppend(&ds, n, -1);
    Tcl_DStringAppend(&ds, " ", 1);
    Tcl_DStringAppend(&ds, Tcl_GetString(mPtr->namePtr), -1);
    id = CprofNameIntern(Tcl_DStringValue(&ds), Tcl_DStringLength(&ds));
    Tcl_DStringFree(&ds);
    Tcl_SetHashValue(hPtr, INT2PTR(id));
    return id;
}

/*
 * Name of an ensemble frame once its implementation command is known:
 * "ensemble subcommand", the subcommand being the implementation's tail.
 */

static int
FoldNameId(
    CprofState *statePtr,
    CprofFrame *ensPtr,
    Command *implPtr)
{
    void *key[2];
    Tcl_HashEntry *hPtr;
    int isNew, id;

    key[0] = ensPtr->token;
    key[1] = implPtr;
    hPtr = Tcl_CreateHashEntry(&statePtr->pairCache, (char *) key, &isNew);
    if (isNew) {
	const char *ens = CprofNameString(ensPtr->nameId);
	const char *tail = Tcl_GetCommandName(statePtr->interp,
		(Tcl_Command) implPtr);
	Tcl_DString ds;

	Tcl_DStringInit(&ds);
	Tcl_DStringAppend(&ds, ens, -1);
	Tcl_DStringAppend(&ds, " ", 1);
	Tcl_DStringAppend(&ds, tail, -1);
	id = CprofNameIntern(Tcl_DStringValue(&ds), Tcl_DStringLength(&ds));
	Tcl_DStringFree(&ds);
	Tcl_SetHashValue(hPtr, INT2PTR(id));

	/*
	 * Keys hold Command pointers without references: the pair cache is
	 * dropped with the command cache, and a stale pair can only name a
	 * reused address pair, which the cmdCache references prevent.
	 */
    } else {
	id = PTR2INT(Tcl_GetHashValue(hPtr));
    }
    return id;
}

/*
 *----------------------------------------------------------------------
 *
 * Coroutine frames --
 *
 *	RegisterCoroutine creates the (empty) saved-frames entry of a
 *	coroutine and a delete trace on its command that frees the entry.
 *	SaveCoroutine moves the run of the coroutine's frames from the top
 *	of the stack into its entry, levels made relative to the resumer;
 *	RestoreCoroutine pushes them back re-levelled and re-anchored.
 *
 *----------------------------------------------------------------------
 */

static CprofCoroSaved *
RegisterCoroutine(
    CprofState *statePtr,
    CoroutineData *corPtr)
{
    Tcl_HashEntry *hPtr;
    CprofCoroSaved *savedPtr;
    int isNew;
    Tcl_Obj *nameObj;

    hPtr = Tcl_CreateHashEntry(&statePtr->coroSaved, (char *) corPtr, &isNew);
    if (!isNew) {
	return Tcl_GetHashValue(hPtr);
    }
    savedPtr = (CprofCoroSaved *) ckalloc(sizeof(CprofCoroSaved));
    memset(savedPtr, 0, sizeof(CprofCoroSaved));
    savedPtr->statePtr = statePtr;
    savedPtr->hPtr = hPtr;
    savedPtr->token = (Tcl_Command) corPtr->cmdPtr;
    Tcl_SetHashValue(hPtr, savedPtr);

    nameObj = Tcl_NewObj();
    Tcl_IncrRefCount(nameObj);
    Tcl_GetCommandFullName(statePtr->interp, savedPtr->token, nameObj);
    if (Tcl_TraceCommand(statePtr->interp, Tcl_GetString(nameObj),
	    TCL_TRACE_DELETE, CoroDeleteTrace, savedPtr) != TCL_OK) {
	/*
	 * Without a delete trace the entry could outlive the coroutine and
	 * "registered" would no longer mean "alive": keep nothing. Its
	 * frames are then dropped, not saved, when it yields.
	 */

	Tcl_ResetResult(statePtr->interp);
	savedPtr->token = NULL;
	FreeCoroSaved(savedPtr, 0);
	savedPtr = NULL;
    }
    Tcl_DecrRefCount(nameObj);
    return savedPtr;
}

static void
FreeCoroSaved(
    CprofCoroSaved *savedPtr,
    int untrace)
{
    if (untrace && savedPtr->token != NULL) {
	Tcl_Obj *nameObj = Tcl_NewObj();

	Tcl_IncrRefCount(nameObj);
	Tcl_GetCommandFullName(savedPtr->statePtr->interp, savedPtr->token,
		nameObj);
	Tcl_UntraceCommand(savedPtr->statePtr->interp, Tcl_GetString(nameObj),
		TCL_TRACE_DELETE, CoroDeleteTrace, savedPtr);
	Tcl_DecrRefCount(nameObj);
    }
    if (savedPtr->count > 0 && savedPtr->statePtr->exact.on) {
	CprofExactDropSuspended(savedPtr->statePtr, savedPtr->frames,
		savedPtr->count, CprofExactNow(savedPtr->statePtr)
		- savedPtr->suspendNs);
    }
    Tcl_DeleteHashEntry(savedPtr->hPtr);
    if (savedPtr->frames) {
	ckfree(savedPtr->frames);
    }
    ckfree(savedPtr);
}

static void
CoroDeleteTrace(
    ClientData clientData,
    Tcl_Interp *interp,
    const char *oldName,
    const char *newName,
    int flags)
{
    CprofCoroSaved *savedPtr = (CprofCoroSaved *) clientData;

    /*
     * The command is going away and Tcl removes the trace itself.
     */

    savedPtr->token = NULL;
    FreeCoroSaved(savedPtr, 0);
}

static void
SaveCoroutine(
    CprofState *statePtr,
    CprofCoroSaved *savedPtr,
    int baseLevel)
{
    CprofStack *stackPtr = &statePtr->stack;
    void *corPtr = stackPtr->frames[stackPtr->depth - 1].corPtr;
    int first = stackPtr->depth - 1, n, i;

    while (first > 0 && stackPtr->frames[first - 1].corPtr == corPtr) {
	first--;
    }
    n = stackPtr->depth - first;
    if (statePtr->exact.on) {
	CprofExactSuspend(statePtr, first, n);
	savedPtr->suspendNs = CprofExactNow(statePtr);
    }
    if (savedPtr->capacity < n) {
	savedPtr->frames = (CprofFrame *) ckrealloc(savedPtr->frames,
		n * sizeof(CprofFrame));
	savedPtr->capacity = n;
    }
    for (i = 0; i < n; i++) {
	savedPtr->frames[i] = stackPtr->frames[first + i];
	savedPtr->frames[i].level -= baseLevel;
    }
    savedPtr->count = n;
    __atomic_store_n(&stackPtr->depth, first, __ATOMIC_RELEASE);
    statePtr->counters.coroSaves++;
}

static void
RestoreCoroutine(
    CprofState *statePtr,
    CprofCoroSaved *savedPtr,
    int baseLevel,
    uintptr_t anchor)
{
    CprofStack *stackPtr = &statePtr->stack;
    int i, first = stackPtr->depth;

    for (i = 0; i < savedPtr->count; i++) {
	CprofFrame *framePtr = PushFrame(stackPtr);

	*framePtr = savedPtr->frames[i];
	framePtr->level += baseLevel;
	framePtr->anchor = anchor;
	framePtr->flags |= CPROF_FRAME_RESTORED;
	CommitPush(stackPtr);
    }
    if (statePtr->exact.on) {
	CprofExactResume(statePtr, first, savedPtr->count,
		CprofExactNow(statePtr) - savedPtr->suspendNs);
    }
    savedPtr->count = 0;
    statePtr->counters.coroRestores++;
}

/*
 * Deal with frames on top of the stack that belong to another execution
 * environment than the current one. Frames of a live, suspended coroutine
 * are saved under it (it yielded: compiled yield emits no event); frames of
 * a coroutine that no longer exists are dead and dropped; frames of a live
 * coroutine that is still running (the event comes from a nested
 * environment, e.g. a coroutine it deletes being rewound) stay.
 */

static void
PopSuspended(
    CprofState *statePtr,
    void *curEnvPtr)
{
    CprofStack *stackPtr = &statePtr->stack;

    while (stackPtr->depth > 0) {
	CprofFrame *topPtr = &stackPtr->frames[stackPtr->depth - 1];
	CoroutineData *corPtr = (CoroutineData *) topPtr->corPtr;
	Tcl_HashEntry *hPtr;
	int first, base;

	if (topPtr->envPtr == curEnvPtr || corPtr == NULL) {
	    return;
	}
	hPtr = Tcl_FindHashEntry(&statePtr->coroSaved, (char *) corPtr);
	if (hPtr == NULL) {
	    PopMissing(statePtr);
	    continue;
	}
	if (!COR_IS_SUSPENDED(corPtr)) {
	    return;
	}

	/*
	 * The resumer is the frame just below the coroutine's run.
	 */

	first = stackPtr->depth - 1;
	while (first > 0 && stackPtr->frames[first - 1].corPtr == corPtr) {
	    first--;
	}
	base = first > 0 ? stackPtr->frames[first - 1].level
		: stackPtr->frames[first].level;
	SaveCoroutine(statePtr, Tcl_GetHashValue(hPtr), base);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * TraceEnter --
 *
 *	A command is about to run at 'level'.
 *
 *----------------------------------------------------------------------
 */

static void
TraceEnter(
    CprofState *statePtr,
    Interp *iPtr,
    int level,
    Command *cmdPtr,
    int objc,
    Tcl_Obj *const objv[],
    uintptr_t marker)
{
    CprofStack *stackPtr = &statePtr->stack;
    ExecEnv *envPtr = iPtr->execEnvPtr;
    CoroutineData *corPtr = envPtr->corPtr;
    CprofFrame *framePtr, *topPtr;
    CmdInfo *infoPtr;
    uintptr_t anchor;

    if (cmdPtr == (Command *) statePtr->calibCmd) {
	if (statePtr->calibrating) {
	    uintptr_t sps[1];

	    statePtr->calibMarker = marker;
	    statePtr->calibTramp = 0;
	    if (CprofNativeTrampolines(statePtr->calib.trampStart,
		    statePtr->calib.trampEnd, sps, 1) == 1) {
		statePtr->calibTramp = sps[0];
	    }
	}
	return;
    }
    statePtr->counters.enters++;
    if (statePtr->samplerPtr != NULL && statePtr->samplerPtr->needDrain) {
	CprofDrain(statePtr);
    }
    anchor = (statePtr->calib.state == CPROF_CALIB_OK)
	    ? marker + statePtr->calib.offset : 0;

    /*
     * Frames left behind by a coroutine that yielded (compiled yield emits
     * no event) or by missing leaves.
     */

    if (stackPtr->depth > 0
	    && stackPtr->frames[stackPtr->depth - 1].envPtr != envPtr) {
	PopSuspended(statePtr, envPtr);
    }
    while (stackPtr->depth > 0) {
	topPtr = &stackPtr->frames[stackPtr->depth - 1];
	if (topPtr->level < level) {
	    break;
	}
	if (topPtr->envPtr != envPtr && corPtr != NULL
		&& topPtr->envPtr == corPtr->callerEEPtr) {
	    /*
	     * A coroutine body starting at the level of the command that
	     * created or resumed it.
	     */

	    break;
	}
	PopMissing(statePtr);
    }
    topPtr = stackPtr->depth ? &stackPtr->frames[stackPtr->depth - 1] : NULL;

    /*
     * The implementation of an ensemble subcommand: fold into the ensemble
     * frame.
     */

    if (topPtr != NULL && (topPtr->flags & CPROF_FRAME_FOLD)
	    && topPtr->level == level - 1 && topPtr->envPtr == envPtr) {
	int oldNameId = topPtr->nameId;

	topPtr->nameId = FoldNameId(statePtr, topPtr, cmdPtr);
	topPtr->flags &= ~CPROF_FRAME_FOLD;
	statePtr->counters.folded++;
	if (statePtr->exact.on) {
	    CprofExactRename(statePtr, topPtr, stackPtr->depth > 1
		    ? topPtr - 1 : NULL, oldNameId);
	} else if (!(topPtr->flags & CPROF_FRAME_OWN)
		&& (statePtr->exact.includeObj || statePtr->exact.excludeObj)) {
	    topPtr->flags &= ~CPROF_FRAME_HIDDEN;
	    if (CprofFrameHidden(statePtr, topPtr->nameId, CPROF_KIND_CMD)) {
		topPtr->flags |= CPROF_FRAME_HIDDEN;
	    }
	}
	return;
    }

    /*
     * Entering a coroutine's environment from outside it: restore the
     * frames saved when it was suspended (if the resume was not seen), or
     * start watching it.
     */

    if (corPtr != NULL && (topPtr == NULL || topPtr->envPtr != envPtr)) {
	CprofCoroSaved *savedPtr = RegisterCoroutine(statePtr, corPtr);

	if (savedPtr != NULL && savedPtr->count > 0) {
	    int base = topPtr ? topPtr->level
		    : level - 1 - savedPtr->frames[savedPtr->count-1].level;

	    RestoreCoroutine(statePtr, savedPtr, base,
		    topPtr ? topPtr->anchor : anchor);
	}
    }

    /*
     * A level gap above a method frame: the method went on with [next] (or
     * nextto), which is compiled and emits no event. Show the method now
     * running as a frame of its own, at the level [next] took.
     */

    if (topPtr != NULL && topPtr->kind == CPROF_KIND_METHOD
	    && level > topPtr->level + 1 && topPtr->envPtr == envPtr) {
	int nextId = RunningMethodNameId(statePtr, iPtr);

	if (nextId >= 0 && nextId != topPtr->nameId) {
	    CprofFrame *nextPtr = PushFrame(stackPtr);

	    *nextPtr = *topPtr;
	    nextPtr->nameId = nextId;
	    nextPtr->level = level - 1;
	    nextPtr->anchor = anchor;
	    nextPtr->token = NULL;
	    nextPtr->flags = CPROF_FRAME_NEXT;
	    nextPtr->node = -1;
	    CommitPush(stackPtr);
	    statePtr->counters.nextFrames++;
	    if (statePtr->exact.on) {
		CprofExactEnter(statePtr, nextPtr, nextPtr - 1,
			CPROF_SITE_NONE, NULL, 0);
	    }
	}
    }

    infoPtr = LookupCmd(statePtr, cmdPtr);
    framePtr = PushFrame(stackPtr);
    framePtr->level = level;
    framePtr->anchor = anchor;
    framePtr->envPtr = envPtr;
    framePtr->corPtr = corPtr;
    framePtr->token = (Tcl_Command) cmdPtr;
    framePtr->kind = infoPtr->kind;
    framePtr->flags = 0;
    if (infoPtr->flags & CMD_INFO_OBJECT) {
	framePtr->nameId = MethodNameId(statePtr, iPtr, cmdPtr, objc, objv);
    } else {
	framePtr->nameId = infoPtr->nameId;
	if ((infoPtr->flags & CMD_INFO_ENSEMBLE) && objc > 1) {
	    framePtr->flags = CPROF_FRAME_FOLD;
	}
    }
    framePtr->node = -1;

    /*
     * tclcprof's own commands, and whatever runs inside them (a report's
     * Tcl code), are the profiler's: hidden.
     */

    if ((infoPtr->flags & CMD_INFO_OWN) || (topPtr != NULL
	    && (topPtr->flags & CPROF_FRAME_OWN) && topPtr->envPtr == envPtr)) {
	framePtr->flags |= CPROF_FRAME_OWN | CPROF_FRAME_HIDDEN;
    }
    CommitPush(stackPtr);
    if (statePtr->exact.on) {
	int siteKind = CPROF_SITE_NONE, siteOffset = 0;
	void *sitePtr = NULL;

	if (statePtr->exact.lines) {
	    siteKind = SiteKey(iPtr, &sitePtr, &siteOffset);
	}
	CprofExactEnter(statePtr, framePtr, stackPtr->depth > 1
		? framePtr - 1 : NULL, siteKind, sitePtr, siteOffset);
    } else if ((statePtr->exact.includeObj || statePtr->exact.excludeObj)
	    && CprofFrameHidden(statePtr, framePtr->nameId, framePtr->kind)) {
	framePtr->flags |= CPROF_FRAME_HIDDEN;
    }

    /*
     * Resuming a coroutine by its command: put its saved frames back above
     * the resumer now, so that they are visible even if the body runs no
     * traced command before it yields again.
     */

    if (infoPtr->flags & CMD_INFO_COROUTINE) {
	Tcl_HashEntry *hPtr = Tcl_FindHashEntry(&statePtr->coroSaved,
		(char *) cmdPtr->objClientData);

	if (hPtr != NULL) {
	    CprofCoroSaved *savedPtr = Tcl_GetHashValue(hPtr);

	    if (savedPtr->count > 0) {
		RestoreCoroutine(statePtr, savedPtr, level, anchor);
	    }
	}
    }
}

/*
 *----------------------------------------------------------------------
 *
 * TraceLeave --
 *
 *	The command entered at 'level' has finished.
 *
 *----------------------------------------------------------------------
 */

static void
TraceLeave(
    CprofState *statePtr,
    Interp *iPtr,
    int level,
    Command *cmdPtr)
{
    CprofStack *stackPtr = &statePtr->stack;
    void *envPtr = iPtr->execEnvPtr;

    if (cmdPtr == (Command *) statePtr->calibCmd) {
	return;
    }
    while (stackPtr->depth > 0) {
	CprofFrame *topPtr = &stackPtr->frames[stackPtr->depth - 1];

	if (topPtr->envPtr != envPtr) {
	    int before = stackPtr->depth;

	    PopSuspended(statePtr, envPtr);
	    if (stackPtr->depth != before) {
		continue;
	    }
	}
	if (topPtr->level > level) {
	    PopMissing(statePtr);
	    continue;
	}
	if (topPtr->level == level && topPtr->envPtr == envPtr) {
	    uint64_t slowNs = 0;

	    if (statePtr->exact.on) {
		slowNs = CprofExactLeave(statePtr, stackPtr->depth - 1);
	    }
	    __atomic_store_n(&stackPtr->depth, stackPtr->depth - 1,
		    __ATOMIC_RELEASE);
	    statePtr->counters.leaves++;
	    if (slowNs > 0) {
		/*
		 * Last: the report may run Tcl code, which may even stop
		 * profiling.
		 */

		CprofExactReportSlow(statePtr, stackPtr->depth, slowNs);
	    }
	    return;
	}
	break;
    }
    statePtr->counters.strayLeaves++;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofStackCalibrate --
 *
 *	Find D, the distance from the trace callback's marker to the stack
 *	pointer of the trampoline frame (TclNRRunCallbacks) that runs the
 *	entered command. A private command is run once: its enter callback
 *	records the marker and the first trampoline frame of a native
 *	backtrace; the command itself takes another backtrace, whose first
 *	trampoline frame must be the same one.
 *
 * Results:
 *	TCL_OK. statePtr->calib says whether calibration succeeded; when it
 *	failed, anchors are 0 and the sampler reports stacks unspliced.
 *
 *----------------------------------------------------------------------
 */

static int
CalibrateObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofState *statePtr = (CprofState *) clientData;
    uintptr_t sps[1];
    CprofCalibration *calPtr = &statePtr->calib;

    if (!statePtr->calibrating) {
	return TCL_OK;
    }
    if (statePtr->calibTramp == 0) {
	snprintf(calPtr->message, sizeof(calPtr->message),
		"no trampoline frame seen from the trace callback");
	return TCL_OK;
    }
    if (CprofNativeTrampolines(calPtr->trampStart, calPtr->trampEnd, sps, 1)
	    != 1) {
	snprintf(calPtr->message, sizeof(calPtr->message),
		"no trampoline frame seen from the command");
	return TCL_OK;
    }
    if (sps[0] != statePtr->calibTramp) {
	snprintf(calPtr->message, sizeof(calPtr->message),
		"trampoline frames disagree (callback 0x%lx, command 0x%lx)",
		(unsigned long) statePtr->calibTramp, (unsigned long) sps[0]);
	return TCL_OK;
    }
    calPtr->offset = (intptr_t) (statePtr->calibTramp
	    - statePtr->calibMarker);
    calPtr->state = CPROF_CALIB_OK;
    calPtr->message[0] = '\0';
    return TCL_OK;
}

int
CprofStackCalibrate(
    CprofState *statePtr)
{
    CprofCalibration *calPtr = &statePtr->calib;
    Tcl_Interp *interp = statePtr->interp;
    Tcl_InterpState saved;
    Tcl_Obj *cmdObj;

    if (calPtr->state == CPROF_CALIB_OK) {
	return TCL_OK;
    }
    calPtr->state = CPROF_CALIB_FAILED;
    if (!CprofTrampolineRange(&calPtr->trampStart, &calPtr->trampEnd,
	    calPtr->message, sizeof(calPtr->message))) {
	return TCL_OK;
    }
    if (statePtr->calibCmd == NULL) {
	statePtr->calibCmd = Tcl_CreateObjCommand(interp,
		"::tclcprof::Calibrate", CalibrateObjCmd, statePtr, NULL);
    }
    saved = Tcl_SaveInterpState(interp, TCL_OK);
    cmdObj = Tcl_NewStringObj("::tclcprof::Calibrate", -1);
    Tcl_IncrRefCount(cmdObj);
    statePtr->calibrating = 1;
    Tcl_EvalObjv(interp, 1, &cmdObj, TCL_EVAL_GLOBAL);
    statePtr->calibrating = 0;
    Tcl_DecrRefCount(cmdObj);
    Tcl_RestoreInterpState(interp, saved);
    return TCL_OK;
}
