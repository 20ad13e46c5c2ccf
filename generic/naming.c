/*
 * naming.c --
 *
 *	What users see a frame called, and the table that keeps those names:
 *
 *	- The name table (names.c) keeps them: every stage stores ids.
 *	- Names by code, not by instance, so that a program that makes and
 *	  destroys objects and coroutines all the time has a bounded profile
 *	  and name table: a coroutine's resumes are "<coroutine ::body>"
 *	  after what it runs, an object's per-object methods are named after
 *	  the object only when the program named it ("<object C> m" for [C
 *	  new]'s objects).
 *	- Commands: procs by fully qualified name, C commands by their name
 *	  without the leading "::", core ensemble implementations such as
 *	  ::tcl::string::repeat as "string repeat", imported commands by the
 *	  name of their original, control commands (if, foreach...) marked
 *	  as such. Cached per Command and validated by Tcl's command epoch,
 *	  which changes on rename and deletion.
 *	- Per-instance commands and channels (tdom's domNode0x55a9..., one
 *	  per node; sock55e2... in [fileevent] handlers' names): by the
 *	  instance-free part of the name, "domNode<*>", one name per
 *	  objProc, unless -instances asks for the instance
 *	  (CprofInstanceStart).
 *	- Ensembles: "ensemble subcommand" once the implementation is known.
 *	- TclOO: a call "obj m" as "Class m", Class being the class (or the
 *	  object, for a per-object method) that declares m, found the way
 *	  TclOO builds its call chain; a running method, from its call
 *	  context, as "Class m", "Class constructor" or "Class destructor".
 *	- Places: where a command was invoked (a bytecode and pc, or a
 *	  sourced file and line), resolved to a file and line.
 *
 *	This unit reads Tcl's private structures (Command, Namespace, TclOO's
 *	Object, Class, Method and CallContext, CmdFrame); the capture units
 *	and the level stack call it, it calls nothing of theirs.
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
#include <ctype.h>
#include <string.h>
#include <stdio.h>

/*
 * What the command cache keeps about a command.
 */

typedef struct CmdInfo {
    Command *cmdPtr;		/* Held with refCount++ so that its memory is
				 * never reused while cached. */
    int epoch;			/* cmdPtr->cmdEpoch when named. */
    CprofCmdName name;
} CmdInfo;

/*
 * Addresses learned once per process by probing (ProbeInternals).
 */

static CprofTclInternals internals;
static int probed = 0;
TCL_DECLARE_MUTEX(probeMutex)

/*
 * Entries the method caches keep at most: objects with methods or mixins
 * of their own have entries of their own, and a program may make millions
 * of them; the caches start afresh when full.
 */

#define CACHE_MAX 16384


/*
 * Control commands that add nothing of their own when captured.
 */

static int		MatchesSubcommands(CprofNaming *nPtr,
			    const char *shown);
static void		ClearSubFront(CprofNaming *nPtr);
static int		ScriptNameId(CprofNaming *nPtr, int baseId,
			    Tcl_Obj *fileObj);
static int		SubcommandNameId(CprofNaming *nPtr, int baseId,
			    Tcl_Obj *argObj);

static const char *const controlNames[] = {
    "::if", "::for", "::foreach", "::lmap", "::while", "::catch", "::try",
    "::time", "::timerate", "::eval", "::uplevel", "::switch", NULL
};

/*
 * Whether a command's full name (with its leading "::") is one of the
 * control commands, which add no frame of their own (without -control 1).
 */

int
CprofNameIsControl(
    const char *fullName)
{
    const char *const *cnPtr;

    for (cnPtr = controlNames; *cnPtr != NULL; cnPtr++) {
	if (strcmp(fullName, *cnPtr) == 0) {
	    return 1;
	}
    }
    return 0;
}

static const char *const kindNames[CPROF_KIND_COUNT] = {
    "proc", "cmd", "ensemble", "method", "control", "event", "idle"
};

/*
 * Commands that run the event loop (CPROF_NAME_LOOP), and those that
 * schedule handlers (their role, CPROF_ROLE_*), by their full names.
 */

static const char *const loopNames[] = {
    "::vwait", "::update", "::tkwait", "::event", "::thread::wait",
    "::thread::send", NULL
};
static const struct {
    const char *name;
    int role;
} roleNames[] = {
    {"::after", CPROF_ROLE_AFTER}, {"::fileevent", CPROF_ROLE_FILEEVENT},
    {"::tcl::chan::event", CPROF_ROLE_FILEEVENT},
    {"::close", CPROF_ROLE_CLOSE}, {"::tcl::chan::close", CPROF_ROLE_CLOSE},
    {"::bind", CPROF_ROLE_BIND}, {"::interp", CPROF_ROLE_INTERP},
    {NULL, 0}
};

/*
 *----------------------------------------------------------------------
 *
 * CprofCheckTclVersion --
 *
 *	The capture reads private interpreter fields whose layout is fixed
 *	within one Tcl minor version: that of the headers this library was
 *	built with (8.6 or 9.0). Refuse any other runtime.
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
    if (major != TCL_MAJOR_VERSION || minor != TCL_MINOR_VERSION) {
	Tcl_SetObjResult(interp, Tcl_ObjPrintf(
		"tclcprof needs Tcl %d.%d, this is Tcl %d.%d",
		TCL_MAJOR_VERSION, TCL_MINOR_VERSION, major, minor));
	Tcl_SetErrorCode(interp, "TCLCPROF", "VERSION", NULL);
	return TCL_ERROR;
    }
    return TCL_OK;
}

const char *
CprofKindName(
    int kind)
{
    return (kind >= 0 && kind < CPROF_KIND_COUNT) ? kindNames[kind] : "?";
}

const char *
CprofHandlerKindName(
    int kind)
{
    static const char *const names[CPROF_HANDLER_KINDS] = {
	"after", "after idle", "fileevent readable", "fileevent writable",
	"bind", "bgerror"
    };

    return (kind >= 0 && kind < CPROF_HANDLER_KINDS) ? names[kind] : "?";
}

/*
 * Intern "prefix rest" (the prefix without a leading "::").
 */

static int
InternPair(
    CprofNaming *nPtr,
    const char *prefix,
    const char *rest)
{
    Tcl_DString ds;
    int id;

    if (prefix[0] == ':' && prefix[1] == ':') {
	prefix += 2;
    }
    Tcl_DStringInit(&ds);
    Tcl_DStringAppend(&ds, prefix, -1);
    Tcl_DStringAppend(&ds, " ", 1);
    Tcl_DStringAppend(&ds, rest, -1);
    id = CprofNameInternIn(&nPtr->refs, Tcl_DStringValue(&ds),
	    Tcl_DStringLength(&ds));
    Tcl_DStringFree(&ds);
    return id;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofProbeInternals --
 *
 *	Learn, once per process, what Tcl does not export but the capture
 *	must recognise by identity: the objProc of TclOO object commands
 *	(public and "my"), the nreProc of coroutine commands, the method
 *	type of procedure-bodied TclOO methods, the objProc of [unload], the
 *	nreProc of TclOO's [next] and [nextto] and of [coroutine]; by
 *	creating one of each in a scratch namespace and reading their
 *	records.
 *
 * Results:
 *	The addresses (fields left NULL when the probe failed).
 *
 * Side effects:
 *	Creates and deletes ::tclcprof::Probe*.
 *
 *----------------------------------------------------------------------
 */

#if TCL_MAJOR_VERSION >= 9
static int
ProbeCmd2(
    void *clientData,
    Tcl_Interp *interp,
    Tcl_Size objc,
    Tcl_Obj *const objv[])
{
    (void) clientData; (void) interp; (void) objc; (void) objv;
    return TCL_OK;
}
#endif

const CprofTclInternals *
CprofProbeInternals(
    Tcl_Interp *interp)
{
    Tcl_InterpState saved;
    Command *cmdPtr;

    Tcl_MutexLock(&probeMutex);
    if (probed) {
	Tcl_MutexUnlock(&probeMutex);
	return &internals;
    }
    saved = Tcl_SaveInterpState(interp, TCL_OK);
    if (Tcl_EvalEx(interp,
	    "::oo::class create ::tclcprof::ProbeClass {method m {} {}}\n"
	    "::tclcprof::ProbeClass create ::tclcprof::ProbeObject\n"
	    "::coroutine ::tclcprof::ProbeCoro ::apply {{} {::yield}}\n"
	    "list [info object namespace ::tclcprof::ProbeObject]::my",
	    -1, TCL_EVAL_GLOBAL) == TCL_OK) {
	const char *myName = Tcl_GetString(Tcl_GetObjResult(interp));
	Tcl_Obj *mObj = Tcl_NewStringObj("m", 1);

	cmdPtr = (Command *) Tcl_FindCommand(interp, myName, NULL, 0);
	if (cmdPtr) {
	    internals.ooPrivateObjProc = cmdPtr->objProc;
	}
	cmdPtr = (Command *) Tcl_FindCommand(interp,
		"::tclcprof::ProbeObject", NULL, 0);
	if (cmdPtr) {
	    internals.ooPublicObjProc = cmdPtr->objProc;
	}
	cmdPtr = (Command *) Tcl_FindCommand(interp, "::tclcprof::ProbeCoro",
		NULL, 0);
	if (cmdPtr) {
	    internals.coroNreProc = cmdPtr->nreProc;
	}
	cmdPtr = (Command *) Tcl_FindCommand(interp, "::tclcprof::ProbeClass",
		NULL, 0);
	Tcl_IncrRefCount(mObj);
	if (cmdPtr && cmdPtr->objClientData) {
	    Object *oPtr = (Object *) cmdPtr->objClientData;
	    Tcl_HashEntry *hPtr = oPtr->classPtr ? Tcl_FindHashEntry(
		    &oPtr->classPtr->classMethods, (char *) mObj) : NULL;

	    if (hPtr != NULL) {
		Method *mPtr = Tcl_GetHashValue(hPtr);

		internals.procMethodType = mPtr->typePtr;
	    }
	}
	Tcl_DecrRefCount(mObj);
    }
    Tcl_EvalEx(interp, "catch {::tclcprof::ProbeClass destroy}\n"
	    "catch {::rename ::tclcprof::ProbeCoro {}}", -1, TCL_EVAL_GLOBAL);
    cmdPtr = (Command *) Tcl_FindCommand(interp, "::unload", NULL,
	    TCL_GLOBAL_ONLY);
    if (cmdPtr) {
	internals.unloadObjProc = cmdPtr->objProc;
    }
#if TCL_MAJOR_VERSION >= 9
    cmdPtr = (Command *) Tcl_CreateObjCommand2(interp,
	    "::tclcprof::ProbeCmd2", ProbeCmd2, NULL, NULL);
    if (cmdPtr) {
	internals.cmd2ObjProc = cmdPtr->objProc;
	Tcl_DeleteCommandFromToken(interp, (Tcl_Command) cmdPtr);
    }
#endif
    cmdPtr = (Command *) Tcl_FindCommand(interp, "::coroutine", NULL,
	    TCL_GLOBAL_ONLY);
    if (cmdPtr) {
	internals.coroCreateNreProc = cmdPtr->nreProc;
    }
    cmdPtr = (Command *) Tcl_FindCommand(interp, "::oo::Helpers::next", NULL,
	    TCL_GLOBAL_ONLY);
    if (cmdPtr) {
	internals.ooNextNreProc = cmdPtr->nreProc;
    }
    cmdPtr = (Command *) Tcl_FindCommand(interp, "::oo::Helpers::nextto",
	    NULL, TCL_GLOBAL_ONLY);
    if (cmdPtr) {
	internals.ooNextToNreProc = cmdPtr->nreProc;
    }
    Tcl_RestoreInterpState(interp, saved);
    probed = 1;
    Tcl_MutexUnlock(&probeMutex);
    return &internals;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofNamingInit, CprofNamingClear, CprofNamingFree --
 *
 *	Set up, empty and tear down an interpreter's naming caches.
 *	Clearing releases the references the command cache holds, and the
 *	names given out since the last clear (what still shows them holds
 *	them: a call tree, exact timing's records): it is done when nothing
 *	of the capture uses them any more (the run stopped).
 *
 *----------------------------------------------------------------------
 */

static void
ClearMethodFront(
    CprofNaming *nPtr)
{
    int i;

    for (i = 0; i < CPROF_FRONT_SIZE; i++) {
	nPtr->methodFront[i].nameId = -1;
	nPtr->contextFront[i].nameId = -1;
    }
}

/*
 * Empty the method-name caches (their entries are stale once TclOO's
 * epoch has moved on).
 */

static void
ClearMethodCaches(
    CprofNaming *nPtr)
{
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    for (hPtr = Tcl_FirstHashEntry(&nPtr->contextCache, &search);
	    hPtr != NULL; hPtr = Tcl_NextHashEntry(&search)) {
	ckfree(Tcl_GetHashValue(hPtr));
    }
    Tcl_DeleteHashTable(&nPtr->contextCache);
    Tcl_InitHashTable(&nPtr->contextCache, TCL_ONE_WORD_KEYS);
    Tcl_DeleteHashTable(&nPtr->methodCache);
    Tcl_InitHashTable(&nPtr->methodCache, TCL_STRING_KEYS);
    ClearMethodFront(nPtr);
}

static void
ClearSubFront(
    CprofNaming *nPtr)
{
    int i;

    for (i = 0; i < CPROF_FRONT_SIZE; i++) {
	nPtr->subFront[i].baseId = -1;
    }
}

static void
ClearCoroFront(
    CprofNaming *nPtr)
{
    int i;

    for (i = 0; i < 64; i++) {
	nPtr->coroFront[i].bodyId = -1;
    }
}

void
CprofNamingInit(
    CprofNaming *nPtr,
    Tcl_Interp *interp)
{
    memset(nPtr, 0, sizeof(CprofNaming));
    nPtr->interp = interp;
    nPtr->internals = CprofProbeInternals(interp);
    Tcl_InitHashTable(&nPtr->cmdCache, TCL_ONE_WORD_KEYS);
    Tcl_InitHashTable(&nPtr->pairCache,
	    (int) (2 * sizeof(void *) / sizeof(int)));
    Tcl_InitHashTable(&nPtr->methodCache, TCL_STRING_KEYS);
    Tcl_InitHashTable(&nPtr->contextCache, TCL_ONE_WORD_KEYS);
    Tcl_InitHashTable(&nPtr->coroCache, TCL_ONE_WORD_KEYS);
    Tcl_InitHashTable(&nPtr->instCache, TCL_STRING_KEYS);
    ClearMethodFront(nPtr);
    nPtr->methodEpoch = -1;
    ClearSubFront(nPtr);
    ClearCoroFront(nPtr);
}

void
CprofNamingClear(
    CprofNaming *nPtr)
{
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    for (hPtr = Tcl_FirstHashEntry(&nPtr->cmdCache, &search);
	    hPtr != NULL; hPtr = Tcl_NextHashEntry(&search)) {
	CmdInfo *infoPtr = Tcl_GetHashValue(hPtr);

	TclCleanupCommandMacro(infoPtr->cmdPtr);
	ckfree(infoPtr);
    }
    memset(nPtr->cmdFront, 0, sizeof(nPtr->cmdFront));
    Tcl_DeleteHashTable(&nPtr->cmdCache);
    Tcl_InitHashTable(&nPtr->cmdCache, TCL_ONE_WORD_KEYS);
    Tcl_DeleteHashTable(&nPtr->pairCache);
    Tcl_InitHashTable(&nPtr->pairCache,
	    (int) (2 * sizeof(void *) / sizeof(int)));
    ClearMethodCaches(nPtr);
    nPtr->methodEpoch = -1;
    ClearSubFront(nPtr);
    Tcl_DeleteHashTable(&nPtr->coroCache);
    Tcl_InitHashTable(&nPtr->coroCache, TCL_ONE_WORD_KEYS);
    ClearCoroFront(nPtr);
    Tcl_DeleteHashTable(&nPtr->instCache);
    Tcl_InitHashTable(&nPtr->instCache, TCL_STRING_KEYS);
    CprofNameRelease(&nPtr->refs);
}

void
CprofNamingFree(
    CprofNaming *nPtr)
{
    CprofNamingClear(nPtr);
    if (nPtr->subcmdPatterns != NULL) {
	Tcl_DecrRefCount(nPtr->subcmdPatterns);
	nPtr->subcmdPatterns = NULL;
    }
    Tcl_DeleteHashTable(&nPtr->cmdCache);
    Tcl_DeleteHashTable(&nPtr->pairCache);
    Tcl_DeleteHashTable(&nPtr->methodCache);
    Tcl_DeleteHashTable(&nPtr->contextCache);
    Tcl_DeleteHashTable(&nPtr->coroCache);
    Tcl_DeleteHashTable(&nPtr->instCache);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofInstanceStart --
 *
 *	Where the instance part of a per-instance name starts: a command an
 *	extension makes per object (tdom's domNode0x55a9c3b0e2a0, one per
 *	node) or a channel (sock55e2c0a1b2c0, file3). The part ends the
 *	name's last word (after its last "::"), and something comes before
 *	it:
 *
 *	- "0x" and at least 4 hex digits (a pointer printed with %p);
 *	- else the hex digits that end the name, from the first decimal
 *	  digit among them: at least 8 characters for a command (a pointer
 *	  printed with %lx; "md5", "log10" or "sha256" keep their names),
 *	  at least one for a channel ("file3", "sock55e2c0a1b2c0").
 *
 * Results:
 *	The offset of the part in name, or -1 when there is none.
 *
 *----------------------------------------------------------------------
 */

int
CprofInstanceStart(
    const char *name,
    int length,
    int channel)
{
    int word = 0, run, digit, i;

    for (i = 0; i + 1 < length; i++) {
	if (name[i] == ':' && name[i + 1] == ':') {
	    word = i + 2;
	}
    }
    for (run = length; run > word && isxdigit(UCHAR(name[run - 1])); run--) {
	/* The hex digits that end the name. */
    }
    if (length - run >= 4 && run - 2 > word && name[run - 1] == 'x'
	    && name[run - 2] == '0') {
	return run - 2;
    }
    for (digit = run; digit < length && !isdigit(UCHAR(name[digit]));
	    digit++) {
	/* The first decimal digit among them. */
    }
    if (digit == length || digit == word
	    || length - digit < (channel ? 1 : 8)) {
	return -1;
    }
    return digit;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofNamingSetInstances, CprofChannelShown --
 *
 *	-instances: names keep the instance part of per-instance commands
 *	and channels. Names already learnt are forgotten when it changes
 *	(at a start, when nothing runs). CprofChannelShown gives the name a
 *	channel has in frames' names: instance-free ("sock<*>") unless
 *	-instances; the result is chanName or the string in *dsPtr, which
 *	the caller frees.
 *
 *----------------------------------------------------------------------
 */

void
CprofNamingSetInstances(
    CprofNaming *nPtr,
    int instances)
{
    if (nPtr->instances != instances) {
	nPtr->instances = instances;
	CprofNamingClear(nPtr);
    }
}

const char *
CprofChannelShown(
    CprofNaming *nPtr,
    const char *chanName,
    Tcl_DString *dsPtr)
{
    int start;

    Tcl_DStringInit(dsPtr);
    if (nPtr->instances) {
	return chanName;
    }
    start = CprofInstanceStart(chanName, (int) strlen(chanName), 1);
    if (start < 0) {
	return chanName;
    }
    Tcl_DStringAppend(dsPtr, chanName, start);
    Tcl_DStringAppend(dsPtr, "<*>", 3);
    return Tcl_DStringValue(dsPtr);
}

/*
 *----------------------------------------------------------------------
 *
 * CmdCode --
 *
 *	The C function that implements a command, for telling commands of
 *	one name stem apart by their code. Tcl 9 gives every command made
 *	with Tcl_CreateObjCommand2 one objProc, CmdWrapperProc, whose
 *	clientData is a CmdWrapperInfo (tclBasic.c) that starts with the
 *	command's own Tcl_ObjCmdProc2: that one, then.
 *
 *----------------------------------------------------------------------
 */

static void *
CmdCode(
    const CprofTclInternals *inPtr,
    Command *cmdPtr)
{
    if (inPtr->cmd2ObjProc != NULL && cmdPtr->objProc == inPtr->cmd2ObjProc
	    && cmdPtr->objClientData != NULL) {
	return *(void **) cmdPtr->objClientData;
    }
    return (void *) cmdPtr->objProc;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofNameCommandUncached --
 *
 *	Name a command: its display name, kind and the CPROF_NAME_* flags
 *	that tell the capture how to treat it. Imported commands are named
 *	after their original and flagged CPROF_NAME_IMPORTED: what runs is
 *	the original, which has a frame of its own.
 *
 *----------------------------------------------------------------------
 */

void
CprofNameCommandUncached(
    CprofNaming *nPtr,
    Tcl_Command token,
    CprofCmdName *namePtr)
{
    Command *cmdPtr = (Command *) token, *origPtr;
    const CprofTclInternals *inPtr = nPtr->internals;
    Tcl_Obj *nameObj;
    const char *name;
    Tcl_Size length;

    nameObj = Tcl_NewObj();
    Tcl_IncrRefCount(nameObj);
    origPtr = (Command *) TclGetOriginalCommand(token);
    namePtr->flags = 0;
    if (origPtr == NULL) {
	origPtr = cmdPtr;
    } else {
	namePtr->flags |= CPROF_NAME_IMPORTED;
    }
    Tcl_GetCommandFullName(nPtr->interp, (Tcl_Command) origPtr, nameObj);
    name = Tcl_GetStringFromObj(nameObj, &length);

    if (strcmp(name, "::tclcprof::label") == 0) {
	/*
	 * Labels (cmdlabels.c) are the program's: what runs inside them is
	 * its (a control command, below).
	 */
    } else if (strcmp(name, "::tclcprof") == 0
	    || strncmp(name, "::tclcprof::", 12) == 0) {
	namePtr->flags |= CPROF_NAME_OWN;
    } else if (!TclIsProc(origPtr)) {
	int i;

	for (i = 0; loopNames[i] != NULL; i++) {
	    if (strcmp(name, loopNames[i]) == 0) {
		namePtr->flags |= CPROF_NAME_LOOP;
	    }
	}
	for (i = 0; roleNames[i].name != NULL; i++) {
	    if (strcmp(name, roleNames[i].name) == 0) {
		namePtr->flags |= roleNames[i].role << CPROF_NAME_ROLE_SHIFT;
	    }
	}
    }
    if (TclIsProc(origPtr)) {
	namePtr->kind = CPROF_KIND_PROC;
	namePtr->nameId = CprofNameInternIn(&nPtr->refs, name, length);
    } else {
	const char *shown = name;
	int shownLen = length;
	Tcl_DString inst;

	if (shown[0] == ':' && shown[1] == ':') {
	    shown += 2;
	    shownLen -= 2;
	}
	namePtr->kind = CPROF_KIND_CMD;
	namePtr->nameId = -1;
	if (Tcl_IsEnsemble((Tcl_Command) origPtr)) {
	    namePtr->kind = CPROF_KIND_ENSEMBLE;
	    namePtr->flags |= CPROF_NAME_ENSEMBLE;
	} else if (origPtr->objProc != NULL && (origPtr->objProc
		== inPtr->ooPublicObjProc
		|| origPtr->objProc == inPtr->ooPrivateObjProc)) {
	    /*
	     * An object: its calls are named by the method they call
	     * (CprofNameMethodCall), never by the object: a program that
	     * makes and destroys millions of objects would otherwise make a
	     * name per object, which no frame shows.
	     */

	    namePtr->kind = CPROF_KIND_METHOD;
	    namePtr->flags |= CPROF_NAME_OBJECT;
	    namePtr->nameId = CprofNameIntern("(object)", -1);
	} else if (inPtr->coroNreProc != NULL
		&& origPtr->nreProc == inPtr->coroNreProc) {
	    /*
	     * A coroutine: the frame of a command resuming it is named for
	     * the code it runs (CprofNameCoroutine), never by the coroutine,
	     * of which a program may make millions.
	     */

	    namePtr->flags |= CPROF_NAME_COROUTINE;
	    namePtr->nameId = CprofNameIntern("<coroutine>", -1);
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
		ensCmd = Tcl_FindCommand(nPtr->interp, Tcl_DStringValue(&ds),
			NULL, TCL_GLOBAL_ONLY);
		if (ensCmd != NULL && Tcl_IsEnsemble(ensCmd)) {
		    Tcl_DStringSetLength(&ds, 0);
		    Tcl_DStringAppend(&ds, ens, (int) (sep - ens));
		    Tcl_DStringAppend(&ds, " ", 1);
		    Tcl_DStringAppend(&ds, sep + 2, -1);
		    namePtr->kind = CPROF_KIND_ENSEMBLE;
		    namePtr->nameId = CprofNameInternIn(&nPtr->refs,
			    Tcl_DStringValue(&ds), Tcl_DStringLength(&ds));
		}
		Tcl_DStringFree(&ds);
	    }
	}
	if ((length <= 10 && CprofNameIsControl(name))
		|| strcmp(name, "::tclcprof::label") == 0) {
	    namePtr->kind = CPROF_KIND_CONTROL;
	}
	Tcl_DStringInit(&inst);
	if (namePtr->nameId < 0 && namePtr->kind == CPROF_KIND_CMD
		&& !nPtr->instances && !(namePtr->flags & CPROF_NAME_OWN)) {
	    /*
	     * A command made per instance: named by its code, the
	     * instance-free part of its name for the objProc that first
	     * had it (another objProc's command of that name keeps its
	     * own).
	     */

	    int start = CprofInstanceStart(shown, shownLen, 0);

	    if (start >= 0) {
		Tcl_HashEntry *hPtr;
		int isNew;

		Tcl_DStringAppend(&inst, shown, start);
		Tcl_DStringAppend(&inst, "<*>", 3);
		hPtr = Tcl_CreateHashEntry(&nPtr->instCache,
			Tcl_DStringValue(&inst), &isNew);
		if (isNew) {
		    Tcl_SetHashValue(hPtr, CmdCode(inPtr, origPtr));
		}
		if (Tcl_GetHashValue(hPtr) == CmdCode(inPtr, origPtr)) {
		    shown = Tcl_DStringValue(&inst);
		    shownLen = Tcl_DStringLength(&inst);
		}
	    }
	}
	if (namePtr->nameId < 0) {
	    namePtr->nameId = CprofNameInternIn(&nPtr->refs, shown,
		    shownLen);
	}
	if (namePtr->kind == CPROF_KIND_CMD && !(namePtr->flags
		& (CPROF_NAME_COROUTINE | CPROF_NAME_OWN | CPROF_NAME_IMPORTED))
		&& MatchesSubcommands(nPtr, shown)) {
	    namePtr->flags |= CPROF_NAME_SUBCMD;
	}
	if (namePtr->kind == CPROF_KIND_CMD && strcmp(name, "::source") == 0
		&& !(namePtr->flags & CPROF_NAME_IMPORTED)) {
	    namePtr->flags |= CPROF_NAME_SCRIPT;
	}
	Tcl_DStringFree(&inst);
    }
    Tcl_DecrRefCount(nameObj);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofNamingSetSubcommands, MatchesSubcommands, CprofNameArgument --
 *
 *	-subcommands: C commands whose name matches one of these glob
 *	patterns take a subcommand word, as object commands do (Tk's
 *	widgets, ".*" by default; an SQLite handle, "db"): a call is named
 *	with its first argument, "db eval", ".c create", as ensembles are.
 *	Names already learnt are forgotten when the patterns change (at a
 *	start, when nothing runs). The pair's name comes from a direct-
 *	mapped front keyed by the command and the argument's Tcl_Obj (a
 *	literal of the caller's bytecode, most often), the string compared
 *	too; past it, the process-wide name table.
 *
 *----------------------------------------------------------------------
 */

void
CprofNamingSetSubcommands(
    CprofNaming *nPtr,
    Tcl_Obj *patternsObj)
{
    const char *before = nPtr->subcmdPatterns
	    ? Tcl_GetString(nPtr->subcmdPatterns) : "";

    if (patternsObj != NULL && strcmp(before, Tcl_GetString(patternsObj))
	    == 0) {
	return;
    }
    if (patternsObj != NULL) {
	Tcl_IncrRefCount(patternsObj);
    }
    if (nPtr->subcmdPatterns != NULL) {
	Tcl_DecrRefCount(nPtr->subcmdPatterns);
    }
    nPtr->subcmdPatterns = patternsObj;
    CprofNamingClear(nPtr);
}

static int
MatchesSubcommands(
    CprofNaming *nPtr,
    const char *shown)
{
    Tcl_Obj **patterns;
    int i;
    Tcl_Size n;

    if (nPtr->subcmdPatterns == NULL || Tcl_ListObjGetElements(NULL,
	    nPtr->subcmdPatterns, &n, &patterns) != TCL_OK) {
	return 0;
    }
    for (i = 0; i < n; i++) {
	if (Tcl_StringMatch(shown, Tcl_GetString(patterns[i]))) {
	    return 1;
	}
    }
    return 0;
}

/*
 * The name of a call of a command flagged CPROF_NAME_SUBCMD ("db eval")
 * or CPROF_NAME_SCRIPT ("<script app.tcl>": source, by the tail of the
 * file it runs, its last argument); the command's own name otherwise.
 */

int
CprofNameArgument(
    CprofNaming *nPtr,
    const CprofCmdName *namePtr,
    int objc,
    Tcl_Obj *const objv[])
{
    if (objc < 2) {
	return namePtr->nameId;
    }
    if (namePtr->flags & CPROF_NAME_SCRIPT) {
	return ScriptNameId(nPtr, namePtr->nameId, objv[objc - 1]);
    }
    if (namePtr->flags & CPROF_NAME_SUBCMD) {
	return SubcommandNameId(nPtr, namePtr->nameId, objv[1]);
    }
    return namePtr->nameId;
}

/*
 * The front of the names of CprofNameArgument: the slot of a (command,
 * argument) pair, keyed by the argument's Tcl_Obj (a literal of the
 * caller's bytecode, most often) with its string compared too; filled
 * only for arguments that fit.
 */

static struct CprofSubFront *
SubFrontSlot(
    CprofNaming *nPtr,
    int baseId,
    Tcl_Obj *argObj)
{
    return &nPtr->subFront[(((uintptr_t) argObj >> 4)
	    ^ (uintptr_t) baseId * 31) & (CPROF_FRONT_SIZE - 1)];
}

static int
SubFrontHit(
    const struct CprofSubFront *frontPtr,
    int baseId,
    Tcl_Obj *argObj,
    const char *arg,
    int len)
{
    return frontPtr->baseId == baseId && frontPtr->argObj == argObj
	    && frontPtr->len == len && memcmp(frontPtr->arg, arg, len) == 0;
}

static int
SubFrontFill(
    struct CprofSubFront *frontPtr,
    int baseId,
    Tcl_Obj *argObj,
    const char *arg,
    int len,
    int nameId)
{
    if (len < (int) sizeof(frontPtr->arg)) {
	frontPtr->baseId = baseId;
	frontPtr->argObj = argObj;
	frontPtr->len = len;
	memcpy(frontPtr->arg, arg, len);
	frontPtr->nameId = nameId;
    }
    return nameId;
}

/*
 * "<script tail>" for source's file argument.
 */

static int
ScriptNameId(
    CprofNaming *nPtr,
    int baseId,
    Tcl_Obj *fileObj)
{
    struct CprofSubFront *frontPtr = SubFrontSlot(nPtr, baseId, fileObj);
    const char *file, *tail;
    int id;
    Tcl_Size len;

    file = Tcl_GetStringFromObj(fileObj, &len);
    if (SubFrontHit(frontPtr, baseId, fileObj, file, len)) {
	return frontPtr->nameId;
    }
    tail = strrchr(file, '/');
    tail = (tail == NULL) ? file : tail + 1;
    if (*tail == '\0' || strlen(tail) > 200) {
	return baseId;
    }
    id = CprofNameScript(nPtr, tail);
    return SubFrontFill(frontPtr, baseId, fileObj, file, len, id);
}

static int
SubcommandNameId(
    CprofNaming *nPtr,
    int baseId,
    Tcl_Obj *argObj)
{
    struct CprofSubFront *frontPtr = SubFrontSlot(nPtr, baseId, argObj);
    const char *arg;
    Tcl_Size len;

    arg = Tcl_GetStringFromObj(argObj, &len);
    if (len == 0 || len > 40 || strchr(arg, ' ') != NULL) {
	/*
	 * Not a subcommand's name: data. Never intern what the program
	 * passes as data, which could be anything.
	 */

	return baseId;
    }
    if (SubFrontHit(frontPtr, baseId, argObj, arg, len)) {
	return frontPtr->nameId;
    }
    return SubFrontFill(frontPtr, baseId, argObj, arg, len,
	    InternPair(nPtr, CprofNameString(baseId), arg));
}

/*
 *----------------------------------------------------------------------
 *
 * CprofNameCommand --
 *
 *	The cached naming of a command. A direct-mapped front keeps Tcl's
 *	hash function off the path of the commands a loop calls over and
 *	over; entries are valid while the command's epoch is unchanged.
 *	The cache holds a reference on each Command so that its memory is
 *	never reused for another command while cached; entries of deleted
 *	commands are swept whenever the cache has doubled.
 *
 *----------------------------------------------------------------------
 */

const CprofCmdName *
CprofNameCommand(
    CprofNaming *nPtr,
    Tcl_Command token)
{
    Command *cmdPtr = (Command *) token;
    Tcl_HashEntry *hPtr;
    CmdInfo *infoPtr;
    int isNew;
    CmdInfo **slotPtr = (CmdInfo **) &nPtr->cmdFront[((uintptr_t) cmdPtr
	    >> 4) & (CPROF_FRONT_SIZE - 1)];

    infoPtr = *slotPtr;
    if (infoPtr != NULL && infoPtr->cmdPtr == cmdPtr
	    && infoPtr->epoch == cmdPtr->cmdEpoch) {
	return &infoPtr->name;
    }

    hPtr = Tcl_CreateHashEntry(&nPtr->cmdCache, (char *) cmdPtr, &isNew);
    if (!isNew) {
	infoPtr = Tcl_GetHashValue(hPtr);
	if (infoPtr->epoch == cmdPtr->cmdEpoch) {
	    *slotPtr = infoPtr;
	    return &infoPtr->name;
	}
    } else {
	infoPtr = (CmdInfo *) ckalloc(sizeof(CmdInfo));
	infoPtr->cmdPtr = cmdPtr;
	cmdPtr->refCount++;
	Tcl_SetHashValue(hPtr, infoPtr);
    }
    infoPtr->epoch = cmdPtr->cmdEpoch;
    CprofNameCommandUncached(nPtr, token, &infoPtr->name);
    *slotPtr = infoPtr;

    if (isNew && nPtr->cmdCache.numEntries >= 4096
	    && (nPtr->cmdCache.numEntries & (nPtr->cmdCache.numEntries - 1))
	    == 0) {
	Tcl_HashSearch search;
	Tcl_HashEntry *ePtr;

	memset(nPtr->cmdFront, 0, sizeof(nPtr->cmdFront));
	for (ePtr = Tcl_FirstHashEntry(&nPtr->cmdCache, &search);
		ePtr != NULL; ePtr = Tcl_NextHashEntry(&search)) {
	    CmdInfo *deadPtr = Tcl_GetHashValue(ePtr);

	    if (deadPtr != infoPtr
		    && (deadPtr->cmdPtr->flags & CMD_IS_DELETED)) {
		Tcl_DeleteHashEntry(ePtr);
		TclCleanupCommandMacro(deadPtr->cmdPtr);
		ckfree(deadPtr);
	    }
	}
	*slotPtr = infoPtr;
    }
    return &infoPtr->name;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofNameMethodCall --
 *
 *	Name a call "obj m ..." through an object's command (or "my") as
 *	"Class m": the class (or object, for a per-object method) that
 *	declares m, searched the way TclOO's call chain finds it (object
 *	methods, object mixins, then the class and its mixins and
 *	superclasses depth first). Cached per (class, method) and
 *	invalidated by TclOO's global epoch; per-object methods per
 *	(object, object epoch, method).
 *
 * Results:
 *	The name id; *objPtrPtr is set to the object.
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

/*
 * TclOO's epoch moved on: every cached method name may be stale.
 */

static inline void
CheckMethodEpoch(
    CprofNaming *nPtr,
    Foundation *fPtr)
{
    if (fPtr != NULL && fPtr->epoch != nPtr->methodEpoch) {
	ClearMethodCaches(nPtr);
	nPtr->methodEpoch = fPtr->epoch;
    }
}

/*
 * Whether two short byte strings are equal (a method name; memcmp's call
 * costs more than the compare).
 */

static inline int
SameBytes(
    const char *a,
    const char *b,
    int n)
{
    int i;

    for (i = 0; i < n; i++) {
	if (a[i] != b[i]) {
	    return 0;
	}
    }
    return 1;
}

/*
 * The method a call of 'methodObj' on an object reaches first (barring
 * filters and unknown handlers), or NULL.
 */

static Method *
MethodFound(
    Object *oPtr,
    Tcl_Obj *methodObj)
{
    Tcl_HashEntry *hPtr = NULL;
    Class *declPtr = NULL;
    int i;

    if (oPtr->methodsPtr != NULL) {
	hPtr = Tcl_FindHashEntry(oPtr->methodsPtr, (char *) methodObj);
    }
    if (hPtr == NULL) {
	for (i = 0; i < oPtr->mixins.num && declPtr == NULL; i++) {
	    declPtr = FindInClass(oPtr->mixins.list[i], methodObj, 0);
	}
	if (declPtr == NULL) {
	    declPtr = FindInClass(oPtr->selfCls, methodObj, 0);
	}
	if (declPtr != NULL) {
	    hPtr = Tcl_FindHashEntry(&declPtr->classMethods,
		    (char *) methodObj);
	}
    }
    return hPtr ? (Method *) Tcl_GetHashValue(hPtr) : NULL;
}

/*
 * Whether an object's name is one TclOO made up ([C new]: ::oo::Obj12).
 */

static int
MadeUpName(
    const char *name)
{
    if (strncmp(name, "::oo::Obj", 9) != 0 || name[9] == '\0') {
	return 0;
    }
    for (name += 9; *name != '\0'; name++) {
	if (*name < '0' || *name > '9') {
	    return 0;
	}
    }
    return 1;
}

/*
 * Append the name an object is shown by, as the declarer of methods (or
 * called without one): its name without the leading "::", or, for an
 * object named by TclOO, "<object C>" after its class. Such names are
 * made afresh for every object, and a profile groups by code: the
 * per-object methods of [C new]'s objects are one frame for all of them.
 */

static void
AppendObjectName(
    CprofNaming *nPtr,
    Object *oPtr,
    Tcl_DString *dsPtr)
{
    const char *name = Tcl_GetString(Tcl_GetObjectName(nPtr->interp,
	    (Tcl_Object) oPtr));

    if (MadeUpName(name) && oPtr->selfCls != NULL
	    && oPtr->selfCls->thisPtr != NULL) {
	const char *cls = Tcl_GetString(Tcl_GetObjectName(nPtr->interp,
		(Tcl_Object) oPtr->selfCls->thisPtr));

	Tcl_DStringAppend(dsPtr, "<object ", -1);
	Tcl_DStringAppend(dsPtr, cls + (cls[0] == ':' && cls[1] == ':'
		? 2 : 0), -1);
	Tcl_DStringAppend(dsPtr, ">", 1);
    } else {
	Tcl_DStringAppend(dsPtr, name + (name[0] == ':' && name[1] == ':'
		? 2 : 0), -1);
    }
}

/*
 * The name of a method declared by an object or a class: "Declarer m".
 */

static int
MethodNameId(
    CprofNaming *nPtr,
    Object *declPtr,
    const char *method)
{
    Tcl_DString ds;
    int id;

    Tcl_DStringInit(&ds);
    AppendObjectName(nPtr, declPtr, &ds);
    id = InternPair(nPtr, Tcl_DStringValue(&ds), method);
    Tcl_DStringFree(&ds);
    return id;
}

/*
 * The name of an object's command: a call of the object without a method
 * to name it by (an error), or while it is being destroyed.
 */

static int
ObjectNameId(
    CprofNaming *nPtr,
    Tcl_Command token)
{
    Object *oPtr = (Object *) ((Command *) token)->objClientData;
    Tcl_Obj *nameObj = Tcl_NewObj();
    Tcl_DString ds;
    const char *name;
    int id;
    Tcl_Size length;

    Tcl_IncrRefCount(nameObj);
    Tcl_DStringInit(&ds);
    if (oPtr != NULL && oPtr->command != NULL && oPtr->selfCls != NULL
	    && !(oPtr->flags & OBJECT_DESTRUCTING) && MadeUpName(Tcl_GetString(
	    Tcl_GetObjectName(nPtr->interp, (Tcl_Object) oPtr)))) {
	/*
	 * Its command, or its "my".
	 */

	AppendObjectName(nPtr, oPtr, &ds);
    } else {
	Tcl_GetCommandFullName(nPtr->interp, token, nameObj);
	name = Tcl_GetStringFromObj(nameObj, &length);
	Tcl_DStringAppend(&ds, name + (name[0] == ':' && name[1] == ':'
		? 2 : 0), -1);
    }
    id = CprofNameInternIn(&nPtr->refs, Tcl_DStringValue(&ds),
	    Tcl_DStringLength(&ds));
    Tcl_DStringFree(&ds);
    Tcl_DecrRefCount(nameObj);
    return id;
}

int
CprofNameMethodCall(
    CprofNaming *nPtr,
    Tcl_Command token,
    int objc,
    Tcl_Obj *const objv[],
    int *freshPtr,
    const void **methodPtrPtr)
{
    Command *cmdPtr = (Command *) token;
    Object *oPtr = (Object *) cmdPtr->objClientData;
    Tcl_Obj *methodObj;
    char keyBuf[64];
    Tcl_DString key;
    Tcl_HashEntry *hPtr;
    int isNew, id, perObject, i;
    Tcl_Size mlen;
    Class *declPtr = NULL;
    struct CprofMethodFront *frontPtr = NULL;
    const char *mname;

    *freshPtr = 0;
    *methodPtrPtr = NULL;
    if (objc < 2 || oPtr == NULL || oPtr->selfCls == NULL) {
	return ObjectNameId(nPtr, token);
    }
    methodObj = objv[1];
    CheckMethodEpoch(nPtr, oPtr->fPtr);
    perObject = (oPtr->methodsPtr != NULL || oPtr->mixins.num > 0);

    /*
     * The front: a method called again on the same class (or object), from
     * the same call site (the name's Tcl_Obj, a literal of its bytecode),
     * costs a few compares, where the keyed lookup below costs ~1000
     * instructions (measured with callgrind on bench's TclOO workload).
     * The name is compared too: the Tcl_Obj may be another by now.
     */

    mname = Tcl_GetStringFromObj(methodObj, &mlen);
    if (mlen < (int) sizeof(nPtr->methodFront[0].name)) {
	const void *keyObj = perObject ? (void *) oPtr : NULL;
	uint64_t keyEpoch = perObject ? ((uint64_t) (unsigned)
		oPtr->creationEpoch << 32) | (unsigned) oPtr->epoch : 0;
	uintptr_t h = ((uintptr_t) oPtr->selfCls >> 4)
		^ ((uintptr_t) keyObj >> 4) ^ ((uintptr_t) methodObj >> 4)
		^ (uintptr_t) mlen * 0x9e37u;

	frontPtr = &nPtr->methodFront[(h ^ (h >> 8) ^ (h >> 16))
		& (CPROF_FRONT_SIZE-1)];
	if (frontPtr->nameId >= 0 && frontPtr->nameObj == methodObj
		&& frontPtr->clsPtr == oPtr->selfCls
		&& frontPtr->objPtr == keyObj && frontPtr->epoch == keyEpoch
		&& frontPtr->len == mlen && SameBytes(frontPtr->name, mname,
		mlen)) {
	    *methodPtrPtr = frontPtr->method;
	    return frontPtr->nameId;
	}
	frontPtr->nameId = -1;
	frontPtr->objPtr = keyObj;
	frontPtr->clsPtr = oPtr->selfCls;
	frontPtr->nameObj = methodObj;
	frontPtr->epoch = keyEpoch;
	frontPtr->len = mlen;
	memcpy(frontPtr->name, mname, (size_t) mlen);
    }

    /*
     * The front missed: the caller may want to look at the object's
     * classes again (the method capture hooks their methods).
     */

    *freshPtr = 1;
    *methodPtrPtr = MethodFound(oPtr, methodObj);
    if (frontPtr != NULL) {
	frontPtr->method = *methodPtrPtr;
    }
    if (perObject) {
	/*
	 * An object's address may be another's once it is gone: its
	 * creation epoch tells them apart.
	 */

	snprintf(keyBuf, sizeof(keyBuf), "%p.%" TCL_SIZE_MODIFIER "d.%"
		TCL_SIZE_MODIFIER "d.%p ", (void *) oPtr, oPtr->epoch, oPtr->creationEpoch, (void *) oPtr->selfCls);
    } else {
	snprintf(keyBuf, sizeof(keyBuf), "%p ", (void *) oPtr->selfCls);
    }
    if (nPtr->methodCache.numEntries >= CACHE_MAX
	    || nPtr->contextCache.numEntries >= CACHE_MAX) {
	ClearMethodCaches(nPtr);
    }
    Tcl_DStringInit(&key);
    Tcl_DStringAppend(&key, keyBuf, -1);
    Tcl_DStringAppend(&key, mname, mlen);
    hPtr = Tcl_CreateHashEntry(&nPtr->methodCache, Tcl_DStringValue(&key),
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
	id = MethodNameId(nPtr, oPtr, mname);
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
	id = MethodNameId(nPtr, declPtr->thisPtr, mname);
    }
    Tcl_SetHashValue(hPtr, INT2PTR(id));
    if (frontPtr != NULL) {
	frontPtr->nameId = id;
    }
    return id;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofNameMethod --
 *
 *	Name the method a call context is running: "Class m" (the class or
 *	object that declares it), "Class constructor", "Class destructor".
 *	Cached per Method record until TclOO's epoch changes (a method is
 *	replaced only by a definition, which changes the epoch; a record
 *	freed and another made at its address without one is caught by
 *	comparing the name and declarer kept with the entry).
 *
 * Results:
 *	The name id, or -1 when the context runs nothing nameable.
 *
 *----------------------------------------------------------------------
 */

typedef struct ContextName {
    Tcl_Obj *namePtr;		/* The method's name object (a key only). */
    void *declPtr;		/* Its declaring class or object, */
    int creation;		/* and an object's creation epoch. */
    int flags;			/* CONSTRUCTOR or DESTRUCTOR, or 0. */
    int nameId;
} ContextName;

int
CprofNameMethod(
    CprofNaming *nPtr,
    Tcl_ObjectContext context)
{
    CallContext *ctxPtr = (CallContext *) context;
    Method *mPtr;

    if (ctxPtr == NULL || ctxPtr->callPtr == NULL || ctxPtr->index < 0
	    || ctxPtr->index >= ctxPtr->callPtr->numChain) {
	return -1;
    }
    mPtr = ctxPtr->callPtr->chain[ctxPtr->index].mPtr;
    if (mPtr == NULL) {
	return -1;
    }
    CheckMethodEpoch(nPtr, ctxPtr->oPtr ? ctxPtr->oPtr->fPtr : NULL);
    return CprofNameMethodRecord(nPtr, mPtr,
	    ctxPtr->callPtr->flags & (CONSTRUCTOR | DESTRUCTOR));
}

/*
 *----------------------------------------------------------------------
 *
 * CprofNameMethodRecord --
 *
 *	Name of a running method from its record and its call chain's
 *	CONSTRUCTOR|DESTRUCTOR flags (the frames capture names a method
 *	frame at the drain this way, its context gone by then).
 *
 *----------------------------------------------------------------------
 */

int
CprofNameMethodRecord(
    CprofNaming *nPtr,
    void *methodPtr,
    int flags)
{
    Method *mPtr = (Method *) methodPtr;
    ContextName *cnPtr;
    struct CprofContextFront *frontPtr;
    Tcl_HashEntry *hPtr;
    Object *declObjPtr;
    void *declPtr;
    int isNew, creation;

    declPtr = mPtr->declaringClassPtr ? (void *) mPtr->declaringClassPtr
	    : (void *) mPtr->declaringObjectPtr;
    declObjPtr = mPtr->declaringObjectPtr;

    /*
     * A per-object method's record and object go with the object: another
     * object's may be made at their addresses.
     */

    creation = declObjPtr ? declObjPtr->creationEpoch : 0;
    frontPtr = &nPtr->contextFront[(((uintptr_t) mPtr >> 4)
	    ^ ((uintptr_t) mPtr >> 12)) & (CPROF_FRONT_SIZE - 1)];
    if (frontPtr->nameId >= 0 && frontPtr->mPtr == mPtr
	    && frontPtr->namePtr == mPtr->namePtr
	    && frontPtr->declPtr == declPtr && frontPtr->creation == creation
	    && frontPtr->flags == flags) {
	return frontPtr->nameId;
    }
    if (declPtr == NULL || (flags == 0 && mPtr->namePtr == NULL)) {
	return -1;
    }
    if (declObjPtr == NULL) {
	declObjPtr = mPtr->declaringClassPtr->thisPtr;
    }
    frontPtr->mPtr = mPtr;
    frontPtr->namePtr = mPtr->namePtr;
    frontPtr->declPtr = declPtr;
    frontPtr->creation = creation;
    frontPtr->flags = flags;
    frontPtr->nameId = -1;
    if (nPtr->methodCache.numEntries >= CACHE_MAX
	    || nPtr->contextCache.numEntries >= CACHE_MAX) {
	ClearMethodCaches(nPtr);
    }
    hPtr = Tcl_CreateHashEntry(&nPtr->contextCache, (char *) mPtr, &isNew);
    if (!isNew) {
	cnPtr = Tcl_GetHashValue(hPtr);
	if (cnPtr->namePtr == mPtr->namePtr && cnPtr->declPtr == declPtr
		&& cnPtr->creation == creation && cnPtr->flags == flags) {
	    frontPtr->nameId = cnPtr->nameId;
	    return cnPtr->nameId;
	}
    } else {
	cnPtr = (ContextName *) ckalloc(sizeof(ContextName));
	Tcl_SetHashValue(hPtr, cnPtr);
    }
    cnPtr->namePtr = mPtr->namePtr;
    cnPtr->declPtr = declPtr;
    cnPtr->creation = creation;
    cnPtr->flags = flags;
    cnPtr->nameId = MethodNameId(nPtr, declObjPtr,
	    (flags & CONSTRUCTOR) ? "constructor"
	    : (flags & DESTRUCTOR) ? "destructor"
	    : Tcl_GetString(mPtr->namePtr));
    frontPtr->nameId = cnPtr->nameId;
    return cnPtr->nameId;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofNameFold --
 *
 *	Name of an ensemble frame once its implementation command is known:
 *	"ensemble subcommand", the subcommand being the implementation's
 *	tail. Cached per (ensemble, implementation) pair.
 *
 *----------------------------------------------------------------------
 */

int
CprofNameFold(
    CprofNaming *nPtr,
    int ensNameId,
    Tcl_Command ensToken,
    Tcl_Command implToken)
{
    void *key[2];
    Tcl_HashEntry *hPtr;
    int isNew, id;

    key[0] = ensToken;
    key[1] = implToken;
    hPtr = Tcl_CreateHashEntry(&nPtr->pairCache, (char *) key, &isNew);
    if (isNew) {
	const char *ens = CprofNameString(ensNameId);

	id = InternPair(nPtr, ens ? ens : "?",
		Tcl_GetCommandName(nPtr->interp, implToken));
	Tcl_SetHashValue(hPtr, INT2PTR(id));

	/*
	 * Keys hold Command pointers without references: the pair cache is
	 * dropped with the command cache, and the implementation's name is
	 * read when the pair is first seen (a command renamed later keeps
	 * its old subcommand name until the caches are cleared).
	 */
    } else {
	id = PTR2INT(Tcl_GetHashValue(hPtr));
    }
    return id;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofNameCoroutine, CprofNameScript --
 *
 *	CprofNameCoroutine: the name of the frame of a command that resumes
 *	a coroutine, after the code the coroutine runs (the name of its
 *	outermost frame, bodyId; -1 if unknown): "<coroutine ::gen>", or
 *	"<coroutine>". A coroutine's own name is not used: a program may
 *	make millions of them (one per connection, per request), where a
 *	profile groups by code. Cached per body name.
 *
 *	CprofNameScript: "<script app.tcl>" for the top level of a script
 *	(the tail of its path), as source's frame is named.
 *
 *----------------------------------------------------------------------
 */

int
CprofNameCoroutine(
    CprofNaming *nPtr,
    int bodyId)
{
    struct CprofCoroFront *frontPtr;
    Tcl_HashEntry *hPtr;
    int isNew, id;

    if (bodyId < 0) {
	static int anyId = -1;

	if (anyId < 0) {
	    anyId = CprofNameIntern("<coroutine>", -1);
	}
	return anyId;
    }
    frontPtr = &nPtr->coroFront[(bodyId ^ (bodyId >> 6)) & 63];
    if (frontPtr->bodyId == bodyId) {
	return frontPtr->nameId;
    }
    hPtr = Tcl_CreateHashEntry(&nPtr->coroCache, INT2PTR(bodyId), &isNew);
    if (isNew) {
	const char *body = CprofNameString(bodyId);
	Tcl_DString ds;

	Tcl_DStringInit(&ds);
	Tcl_DStringAppend(&ds, "<coroutine ", -1);
	Tcl_DStringAppend(&ds, body ? body : "?", -1);
	Tcl_DStringAppend(&ds, ">", 1);
	id = CprofNameInternIn(&nPtr->refs, Tcl_DStringValue(&ds),
		Tcl_DStringLength(&ds));
	Tcl_DStringFree(&ds);
	Tcl_SetHashValue(hPtr, INT2PTR(id));
    } else {
	id = PTR2INT(Tcl_GetHashValue(hPtr));
    }
    frontPtr->bodyId = bodyId;
    frontPtr->nameId = id;
    return id;
}

int
CprofNameScript(
    CprofNaming *nPtr,
    const char *path)
{
    const char *tail = strrchr(path, '/');
    Tcl_DString ds;
    int id;

    tail = (tail == NULL) ? path : tail + 1;
    Tcl_DStringInit(&ds);
    Tcl_DStringAppend(&ds, "<script ", -1);
    Tcl_DStringAppend(&ds, tail, -1);
    Tcl_DStringAppend(&ds, ">", 1);
    id = CprofNameInternIn(&nPtr->refs, Tcl_DStringValue(&ds),
	    Tcl_DStringLength(&ds));
    Tcl_DStringFree(&ds);
    return id;
}

/*
 *----------------------------------------------------------------------
 *
 * Places --
 *
 *	CprofSiteKey: where the command being invoked was invoked from, as
 *	a key (a ByteCode and a pc offset, or a source path object and a
 *	line), read from Tcl's current command frame. CprofResolveSite: a
 *	key to a file and line (once per key, in normal context), the
 *	file's name id held by the holder given.
 *	CprofHoldSiteKey / CprofReleaseSiteKey: hold and release the
 *	object a key names, so that its address is not reused while the key
 *	is cached.
 *
 *----------------------------------------------------------------------
 */

int
CprofSiteKey(
    Tcl_Interp *interp,
    void **ptrPtr,
    int *offsetPtr)
{
    CmdFrame *cfPtr = ((Interp *) interp)->cmdFramePtr;

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

int
CprofResolveSite(
    Tcl_Interp *interp,
    CprofNameRefs *refsPtr,
    int siteKind,
    void *sitePtr,
    int siteOffset,
    int *fileIdPtr,
    int *linePtr)
{
    if (siteKind == CPROF_SITE_SOURCE) {
	Tcl_Obj *pathObj = (Tcl_Obj *) sitePtr;
	Tcl_Size length;
	const char *path = Tcl_GetStringFromObj(pathObj, &length);

	if (length == 0 || siteOffset <= 0) {
	    return 0;
	}
	*fileIdPtr = CprofNameInternIn(refsPtr, path, length);
	*linePtr = siteOffset;
	return 1;
    }
    if (siteKind == CPROF_SITE_BYTECODE) {
	ByteCode *codePtr = (ByteCode *) sitePtr;
	Interp *codeIPtr = (Interp *) *codePtr->interpHandle;
	CmdFrame cf;
	int found = 0;

	/*
	 * A held ByteCode can outlive its interpreter, or be looked up
	 * while the interpreter is being deleted (its handle freed, its
	 * table of line information freed later): Tcl's lookup reads both.
	 */

	if (codeIPtr == NULL || codeIPtr->lineBCPtr == NULL) {
	    return 0;
	}
	memset(&cf, 0, sizeof(cf));
	cf.type = TCL_LOCATION_BC;
	cf.data.tebc.codePtr = codePtr;
	cf.data.tebc.pc = (const char *) codePtr->codeStart + siteOffset;
	TclGetSrcInfoForPc(&cf);
	if (cf.type == TCL_LOCATION_SOURCE) {
	    if (cf.line != NULL && cf.nline > 0 && cf.line[0] > 0
		    && cf.data.eval.path != NULL) {
		Tcl_Size length;
		const char *path = Tcl_GetStringFromObj(cf.data.eval.path,
			&length);

		if (length > 0) {
		    *fileIdPtr = CprofNameInternIn(refsPtr, path, length);
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
