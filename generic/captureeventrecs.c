/*
 * captureeventrecs.c --
 *
 *	The records of event-loop attribution (captureevents.c is above it): the
 *	handlers that may run, as the capture saw them scheduled or found
 *	them pending at start ([after] records in the interpreter's
 *	"tclAfter" list, [fileevent] scripts of its channels, Tk bindings),
 *	how to tell which one is starting from the script Tcl runs, the
 *	background errors and the handlers they came from, the names and
 *	origins of handlers' frames, and the statistics per origin and
 *	kind (the profile's "handlers").
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include <tclInt.h>
#include <tclIO.h>
#include <tclCompile.h>
#include "captureeventsInt.h"
#include "captureframes.h"
#include <string.h>
#include <stdio.h>

static const Tcl_ObjType *bytecodeType = NULL;

/*
 *----------------------------------------------------------------------
 *
 * Statistics --
 *
 *	CprofEvStat: the record of an origin and kind, made if new.
 *
 *----------------------------------------------------------------------
 */

CprofHandlerStat *
CprofEvStat(
    CprofHandlers *hsPtr,
    int originId,
    int kind)
{
    Tcl_HashEntry *hPtr;
    int key[2], isNew;
    CprofHandlerStat *statPtr;

    if (!hsPtr->initialized) {
	Tcl_InitHashTable(&hsPtr->index, 2);
	hsPtr->initialized = 1;
    }
    key[0] = originId;
    key[1] = kind;
    hPtr = Tcl_CreateHashEntry(&hsPtr->index, (char *) key, &isNew);
    if (!isNew) {
	return &hsPtr->stats[PTR2INT(Tcl_GetHashValue(hPtr))];
    }
    if (hsPtr->num == hsPtr->cap) {
	hsPtr->cap = hsPtr->cap ? 2 * hsPtr->cap : 16;
	hsPtr->stats = (CprofHandlerStat *) ckrealloc(hsPtr->stats,
		hsPtr->cap * sizeof(CprofHandlerStat));
    }
    statPtr = &hsPtr->stats[hsPtr->num];
    memset(statPtr, 0, sizeof(CprofHandlerStat));
    CprofNameHold(&hsPtr->refs, originId);
    statPtr->originId = originId;
    statPtr->kind = kind;
    Tcl_SetHashValue(hPtr, INT2PTR(hsPtr->num));
    hsPtr->num++;
    return statPtr;
}

void
CprofEventsClear(
    CprofState *statePtr)
{
    CprofHandlers *hsPtr = &statePtr->handlers;
    CprofEvents *evPtr = statePtr->eventsPtr;
    OpenEvent *oePtr;

    if (hsPtr->initialized) {
	Tcl_DeleteHashTable(&hsPtr->index);
	hsPtr->initialized = 0;
    }
    if (hsPtr->stats != NULL) {
	ckfree(hsPtr->stats);
    }
    hsPtr->stats = NULL;
    hsPtr->num = hsPtr->cap = 0;
    CprofNameRelease(&hsPtr->refs);

    /*
     * A reset while handlers run: they count from now.
     */

    for (oePtr = evPtr ? evPtr->open : NULL; oePtr != NULL;
	    oePtr = oePtr->nextPtr) {
	CprofEvStat(hsPtr, oePtr->originId, oePtr->kind)->count++;
	oePtr->startNs = CprofEvNow();
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CprofEventsObj --
 *
 *	The profile's "handlers": a list of dictionaries, one per origin
 *	and kind, with origin, kind, count, total_ns and max_ns (over the
 *	handlers whose time is known), and for timers latency_count,
 *	latency_ns (their sum) and latency_max_ns.
 *
 *----------------------------------------------------------------------
 */

Tcl_Obj *
CprofEventsObj(
    CprofState *statePtr)
{
    CprofHandlers *hsPtr = &statePtr->handlers;
    Tcl_Obj *listObj = Tcl_NewListObj(0, NULL);
    int i;

    for (i = 0; i < hsPtr->num; i++) {
	CprofHandlerStat *sPtr = &hsPtr->stats[i];
	Tcl_Obj *d = Tcl_NewDictObj();
	const char *origin = CprofNameString(sPtr->originId);

#define PUTW(k, v) Tcl_DictObjPut(NULL, d, Tcl_NewStringObj((k), -1), \
	    Tcl_NewWideIntObj((Tcl_WideInt) (v)))
	Tcl_DictObjPut(NULL, d, Tcl_NewStringObj("origin", -1),
		Tcl_NewStringObj(origin ? origin : "unknown", -1));
	Tcl_DictObjPut(NULL, d, Tcl_NewStringObj("kind", -1),
		Tcl_NewStringObj(CprofHandlerKindName(sPtr->kind), -1));
	PUTW("count", sPtr->count);
	PUTW("timed", sPtr->timed);
	PUTW("total_ns", sPtr->totalNs);
	PUTW("max_ns", sPtr->maxNs);
	if (sPtr->kind == CPROF_HANDLER_AFTER) {
	    PUTW("latency_count", sPtr->latencyCount);
	    PUTW("latency_ns", sPtr->latencyNs);
	    PUTW("latency_max_ns", sPtr->latencyMaxNs);
	}
#undef PUTW
	Tcl_ListObjAppendElement(NULL, listObj, d);
    }
    return listObj;
}

/*
 *----------------------------------------------------------------------
 *
 * Names --
 *
 *	ScriptHead: the first word of a script (of its first element, for
 *	a list), at most 40 bytes; for a coroutine's command, what the
 *	frame of a command resuming it is called ("<coroutine ::gen>"): a
 *	program may make millions of coroutines, each with a name of its
 *	own, that schedule themselves ([after 10 [info coroutine]]). CprofEvOrigin: the origin of a command about
 *	to be entered at 'level', "caller file:line" (file by its tail),
 *	"caller" where no file is known, "(top) ..." outside procedures;
 *	cached by call site. CprofEvName: a frame's name with its origin.
 *
 *----------------------------------------------------------------------
 */

#define HEAD_MAX 40

/*
 * -capture frames (no level stack): the caller of a command about to run,
 * from Tcl's frames: "(top)" ('topId') when the command is one of a
 * handler's script (the level invoking it runs a recorded script), else
 * the innermost procedure's frame (lambdas left out, as apply's frame is
 * a command's) or method's, the latter named as a sample's are (its
 * frames read and named: methods are rare enough).
 */

static int
FramesCaller(
    CprofEvents *evPtr,
    int topId)
{
    CprofState *statePtr = evPtr->statePtr;
    Interp *iPtr = (Interp *) statePtr->interp;
    CmdFrame *cfPtr = iPtr->cmdFramePtr;
    CallFrame *framePtr;
    const CprofCmdName *namePtr;
    int steps = 0;

    if (cfPtr != NULL) {
	/*
	 * The code running is live: its fields are read in place.
	 */

	if ((cfPtr->type == TCL_LOCATION_BC
		|| cfPtr->type == TCL_LOCATION_PREBC)
		&& cfPtr->data.tebc.codePtr != NULL) {
	    if (CprofEvHandlerOf(evPtr, 1, cfPtr->data.tebc.codePtr) >= 0) {
		return topId;
	    }
	} else if (cfPtr->type == TCL_LOCATION_EVAL && cfPtr->cmd == NULL
		&& cfPtr->cmdObj != NULL
		&& CprofEvHandlerOf(evPtr, 0, cfPtr->cmdObj) >= 0) {
	    return topId;
	}
    }
    for (framePtr = iPtr->framePtr; framePtr != NULL
	    && framePtr != iPtr->rootFramePtr && ++steps < 100000;
	    framePtr = framePtr->callerPtr) {
	int flags = framePtr->isProcCallFrame;

	if (flags & FRAME_IS_METHOD) {
	    CprofTclRef raw[CPROF_TCL_MAX], named[CPROF_TCL_MAX];
	    uint32_t rawFlags = 0;
	    int n = CprofFramesRead(statePtr->framesPtr, raw, CPROF_TCL_MAX,
		    &rawFlags), i;

	    n = CprofFramesResolve(statePtr->framesPtr, raw, n, NULL, named);
	    for (i = n - 1; i >= 0; i--) {
		if (named[i].kind == CPROF_KIND_EVENT) {
		    break;
		}
		if (named[i].kind == CPROF_KIND_PROC
			|| named[i].kind == CPROF_KIND_METHOD) {
		    return named[i].nameId;
		}
	    }
	    return topId;
	}
	if ((flags & (FRAME_IS_PROC | FRAME_IS_LAMBDA)) == FRAME_IS_PROC
		&& framePtr->procPtr != NULL
		&& framePtr->procPtr->cmdPtr != NULL) {
	    namePtr = CprofNameCommand(&statePtr->naming,
		    (Tcl_Command) framePtr->procPtr->cmdPtr);
	    return (namePtr != NULL && namePtr->nameId >= 0)
		    ? namePtr->nameId : topId;
	}
    }
    return topId;
}

/*
 * -capture frames (no level stack): the procedure a coroutine was made to
 * run, from Tcl's frames, its outermost (running: the interpreter's;
 * suspended: the ones it saved), which the root frame calls. -1 when it is
 * no procedure.
 */

static int
FramesCoroutineBody(
    CprofState *statePtr,
    void *corKey)
{
    Interp *iPtr = (Interp *) statePtr->interp;
    CoroutineData *corPtr = (CoroutineData *) corKey;
    CallFrame *framePtr;
    const CprofCmdName *namePtr;
    int steps = 0;

    if (corPtr == NULL) {
	return -1;
    }
    framePtr = (iPtr->execEnvPtr == corPtr->eePtr) ? iPtr->framePtr
	    : corPtr->running.framePtr;
    while (framePtr != NULL && framePtr->callerPtr != NULL
	    && framePtr->callerPtr != iPtr->rootFramePtr && ++steps < 100000) {
	framePtr = framePtr->callerPtr;
    }
    if (framePtr == NULL || framePtr == iPtr->rootFramePtr
	    || (framePtr->isProcCallFrame & (FRAME_IS_PROC | FRAME_IS_LAMBDA
	    | FRAME_IS_METHOD)) != FRAME_IS_PROC
	    || framePtr->procPtr == NULL || framePtr->procPtr->cmdPtr == NULL
	    || (namePtr = CprofNameCommand(&statePtr->naming,
	    (Tcl_Command) framePtr->procPtr->cmdPtr)) == NULL) {
	return -1;
    }
    return namePtr->nameId;
}

/*
 * Whether a word names a coroutine's command; if so, append the name of
 * its resumes.
 */

static int
CoroutineHead(
    CprofEvents *evPtr,
    const char *word,
    int wordLen,
    Tcl_DString *dsPtr)
{
    CprofState *statePtr = evPtr->statePtr;
    const CprofTclInternals *inPtr = statePtr->naming.internals;
    Tcl_DString name;
    Command *cmdPtr;
    const char *shown;
    int id;

    if (wordLen == 0 || inPtr == NULL || inPtr->coroNreProc == NULL) {
	return 0;
    }
    Tcl_DStringInit(&name);
    Tcl_DStringAppend(&name, word, wordLen);
    cmdPtr = (Command *) Tcl_FindCommand(statePtr->interp,
	    Tcl_DStringValue(&name), NULL, TCL_GLOBAL_ONLY);
    Tcl_DStringFree(&name);
    if (cmdPtr == NULL || cmdPtr->nreProc != inPtr->coroNreProc) {
	return 0;
    }
    id = CprofNameCoroutine(&statePtr->naming, evPtr->framesCapture
	    ? FramesCoroutineBody(statePtr, cmdPtr->objClientData)
	    : CprofLevelsCoroutineBody(&statePtr->levels,
		    cmdPtr->objClientData, NULL));
    shown = CprofNameString(id);
    Tcl_DStringAppend(dsPtr, shown ? shown : "<coroutine>", -1);
    return 1;
}

static void
ScriptHead(
    CprofEvents *evPtr,
    Tcl_Obj *scriptObj,
    Tcl_DString *dsPtr)
{
    static const Tcl_ObjType *listType = NULL;
    const char *script, *word;
    Tcl_Size length, wordLen = 0;
    Tcl_Parse parse;

    if (listType == NULL) {
	listType = Tcl_GetObjType("list");
    }
    if (scriptObj->typePtr == listType) {
	Tcl_Obj *firstObj;

	/*
	 * A list keeps its representation (no string is made of it).
	 */

	if (Tcl_ListObjIndex(NULL, scriptObj, 0, &firstObj) == TCL_OK
		&& firstObj != NULL) {
	    word = Tcl_GetStringFromObj(firstObj, &wordLen);
	} else {
	    word = "";
	}
    } else {
	script = Tcl_GetStringFromObj(scriptObj, &length);
	word = script;
	while (wordLen < length && !strchr(" \t\n;{}[]\"$\\#", script[wordLen])) {
	    wordLen++;
	}
	if (wordLen > 0 && (wordLen == length
		|| strchr(" \t\n;", script[wordLen]))) {
	    /*
	     * A plain first word (most scripts): no need to parse.
	     */
	} else if (Tcl_ParseCommand(NULL, script, length, 0, &parse)
		== TCL_OK) {
	    wordLen = 0;
	    if (parse.numWords > 0) {
		Tcl_Token *tokenPtr = parse.tokenPtr;

		if (tokenPtr->type == TCL_TOKEN_SIMPLE_WORD) {
		    tokenPtr++;
		}
		word = tokenPtr->start;
		wordLen = tokenPtr->size;
	    }
	    Tcl_FreeParse(&parse);
	} else {
	    wordLen = 0;
	    while (wordLen < length && !strchr(" \t\n;", script[wordLen])) {
		wordLen++;
	    }
	}
    }
    if (CoroutineHead(evPtr, word, wordLen, dsPtr)) {
	return;
    }
    if (wordLen > HEAD_MAX) {
	const char *end = word + HEAD_MAX;

	while (end > word && (*end & 0xC0) == 0x80) {
	    end--;
	}
	Tcl_DStringAppend(dsPtr, word, (int) (end - word));
	Tcl_DStringAppend(dsPtr, "\xe2\x80\xa6", 3);
    } else {
	Tcl_DStringAppend(dsPtr, word, wordLen);
    }
}

int
CprofEvName(
    CprofEvents *evPtr,
    const char *prefix,
    const char *middle,
    int middleLen,
    const char *suffix,
    int originId)
{
    Tcl_DString ds;
    int id;

    Tcl_DStringInit(&ds);
    Tcl_DStringAppend(&ds, prefix, -1);
    Tcl_DStringAppend(&ds, middle, middleLen);
    Tcl_DStringAppend(&ds, suffix, -1);
    id = CprofNameInternIn(&evPtr->refs, Tcl_DStringValue(&ds),
	    Tcl_DStringLength(&ds));
    Tcl_DStringFree(&ds);
    return CprofNameWithOrigin(&evPtr->refs, id, originId);
}

int
CprofEvScriptName(
    CprofEvents *evPtr,
    const char *prefix,
    Tcl_Obj *scriptObj,
    int originId)
{
    Tcl_DString ds;
    Tcl_HashEntry *hPtr;
    char buf[16];
    int id, isNew;

    /*
     * The script object, origin and prefix of the last call (a periodic
     * timer scheduling its own literal script again): its name. The
     * object is held, so that its address names it.
     */

    if (scriptObj == evPtr->lastNameObj && originId == evPtr->lastOriginId
	    && prefix == evPtr->lastPrefix) {
	return evPtr->lastNameId;
    }

    /*
     * Names are cached by origin, prefix and head (a handler is scheduled
     * again and again from the same place): one lookup, not two of the
     * process-wide table.
     */

    Tcl_DStringInit(&ds);
    snprintf(buf, sizeof(buf), "%d ", originId);
    Tcl_DStringAppend(&ds, buf, -1);
    Tcl_DStringAppend(&ds, prefix, -1);
    ScriptHead(evPtr, scriptObj, &ds);
    hPtr = Tcl_CreateHashEntry(&evPtr->names, Tcl_DStringValue(&ds), &isNew);
    if (isNew) {
	int skip = (int) strlen(buf);

	id = CprofNameWithOrigin(&evPtr->refs, CprofNameInternIn(&evPtr->refs,
		Tcl_DStringValue(&ds) + skip, Tcl_DStringLength(&ds) - skip),
		originId);
	Tcl_SetHashValue(hPtr, INT2PTR(id));
    } else {
	id = PTR2INT(Tcl_GetHashValue(hPtr));
    }
    Tcl_DStringFree(&ds);
    Tcl_IncrRefCount(scriptObj);
    if (evPtr->lastNameObj != NULL) {
	Tcl_DecrRefCount(evPtr->lastNameObj);
    }
    evPtr->lastNameObj = scriptObj;
    evPtr->lastOriginId = originId;
    evPtr->lastPrefix = prefix;
    evPtr->lastNameId = id;
    return id;
}

void
CprofEvForgetOrigins(
    CprofEvents *evPtr)
{
    int i;

    for (i = 0; i < evPtr->numHeld; i += 2) {
	CprofReleaseSiteKey(PTR2INT(evPtr->heldSites[i]),
		evPtr->heldSites[i + 1]);
    }
    evPtr->numHeld = 0;
    Tcl_DeleteHashTable(&evPtr->origins);
    Tcl_InitHashTable(&evPtr->origins, 3 * sizeof(void *) / sizeof(int));
}

int
CprofEvOrigin(
    CprofEvents *evPtr,
    int level)
{
    CprofState *statePtr = evPtr->statePtr;
    CprofStack *stackPtr = &statePtr->levels.stack;
    int i = CprofLevelsBelow(&statePtr->levels, level, NULL);
    int callerId = evPtr->topId, siteKind, siteOffset = 0, fileId, line;
    int isNew, originId;
    void *sitePtr = NULL, *key[3];
    Tcl_HashEntry *hPtr;
    Tcl_DString ds;

    if (evPtr->framesCapture && statePtr->framesPtr != NULL) {
	callerId = FramesCaller(evPtr, callerId);
	i = -1;
    }
    for (; i >= 0; i--) {
	const CprofFrame *framePtr = &stackPtr->frames[i];

	if (framePtr->flags & CPROF_FRAME_EVENT) {
	    break;
	}
	if ((framePtr->kind == CPROF_KIND_PROC
		|| framePtr->kind == CPROF_KIND_METHOD)
		&& !(framePtr->flags & CPROF_FRAME_OWN)) {
	    callerId = framePtr->nameId;
	    break;
	}
    }
    siteKind = CprofSiteKey(statePtr->interp, &sitePtr, &siteOffset);
    if (siteKind == CPROF_SITE_NONE) {
	sitePtr = NULL;
	siteOffset = 0;
    }
    key[0] = sitePtr;
    key[1] = INT2PTR(siteOffset);
    key[2] = INT2PTR(callerId);
    hPtr = Tcl_FindHashEntry(&evPtr->origins, (char *) key);
    if (hPtr != NULL) {
	return PTR2INT(Tcl_GetHashValue(hPtr));
    }
    Tcl_DStringInit(&ds);
    Tcl_DStringAppend(&ds, CprofNameString(callerId), -1);
    if (siteKind != CPROF_SITE_NONE && CprofResolveSite(statePtr->interp,
	    &evPtr->refs, siteKind, sitePtr, siteOffset, &fileId, &line)) {
	const char *path = CprofNameString(fileId);
	const char *tail = strrchr(path, '/');
	char buf[32];

	Tcl_DStringAppend(&ds, " ", 1);
	Tcl_DStringAppend(&ds, tail ? tail + 1 : path, -1);
	snprintf(buf, sizeof(buf), ":%d", line);
	Tcl_DStringAppend(&ds, buf, -1);
    }
    originId = CprofNameInternIn(&evPtr->refs, Tcl_DStringValue(&ds),
	    Tcl_DStringLength(&ds));
    Tcl_DStringFree(&ds);

    /*
     * The cache holds its keys, so that their addresses are not reused.
     */

    if (evPtr->origins.numEntries >= MAX_ORIGINS) {
	CprofEvForgetOrigins(evPtr);
    }
    if (siteKind != CPROF_SITE_NONE) {
	if (evPtr->numHeld + 2 > evPtr->capHeld) {
	    evPtr->capHeld = evPtr->capHeld ? 2 * evPtr->capHeld : 64;
	    evPtr->heldSites = (void **) ckrealloc(evPtr->heldSites,
		    evPtr->capHeld * sizeof(void *));
	}
	CprofHoldSiteKey(siteKind, sitePtr);
	evPtr->heldSites[evPtr->numHeld++] = INT2PTR(siteKind);
	evPtr->heldSites[evPtr->numHeld++] = sitePtr;
    }
    hPtr = Tcl_CreateHashEntry(&evPtr->origins, (char *) key, &isNew);
    Tcl_SetHashValue(hPtr, INT2PTR(originId));
    return originId;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofEvRunningScript, ScriptIs --
 *
 *	What script the interpreter is running, from its command frame
 *	'cfPtr': a bytecode (ID_CODE), a list evaluated directly (ID_OBJ),
 *	another frame (ID_FRAME: a script evaluated from a string, a
 *	file), or none (ID_NONE: Tcl_EvalObjv from C). Whether a script
 *	object is the one running.
 *
 *----------------------------------------------------------------------
 */

void
CprofEvRunningScript(
    CmdFrame *cfPtr,
    int *typePtr,
    const void **ptrPtr)
{
    if (cfPtr == NULL) {
	*typePtr = ID_NONE;
	*ptrPtr = NULL;
    } else if (cfPtr->type == TCL_LOCATION_BC
	    || cfPtr->type == TCL_LOCATION_PREBC) {
	*typePtr = ID_CODE;
	*ptrPtr = cfPtr->data.tebc.codePtr;
    } else if (cfPtr->type == TCL_LOCATION_EVAL && cfPtr->cmdObj != NULL) {
	*typePtr = ID_OBJ;
	*ptrPtr = cfPtr->cmdObj;
    } else {
	*typePtr = ID_FRAME;
	*ptrPtr = cfPtr;
    }
}

static int
ScriptIs(
    Tcl_Obj *scriptObj,
    int idType,
    const void *idPtr)
{
    if (idType == ID_OBJ) {
	return scriptObj == idPtr;
    }
    if (idType == ID_CODE) {
	if (bytecodeType == NULL) {
	    bytecodeType = Tcl_GetObjType("bytecode");
	}
	return scriptObj->typePtr == bytecodeType
		&& scriptObj->internalRep.twoPtrValue.ptr1 == idPtr;
    }
    return 0;
}

/*
 *----------------------------------------------------------------------
 *
 * [after] records --
 *
 *	CprofEvLookAfters walks the interpreter's list of AfterInfos:
 *	records of those in it are marked present (one whose address now
 *	holds another id is stale, replaced), those not recorded are
 *	recorded with an unknown origin. CprofEvDropGone then drops the
 *	records not present, counting them as handlers that ran without a
 *	command of their own ('ran') or not (cancelled).
 *	CprofEvRunningAfter: the record of the handler whose script is
 *	starting, taken out of the tables (the caller frees it); it costs a
 *	walk of Tcl's list, without lookups, when a recorded script runs.
 *
 *----------------------------------------------------------------------
 */

AfterAssocData *
CprofEvAfterAssoc(
    CprofEvents *evPtr)
{
    if (evPtr->afterAssoc == NULL && !evPtr->statePtr->deleting) {
	evPtr->afterAssoc = (AfterAssocData *) Tcl_GetAssocData(
		evPtr->statePtr->interp, "tclAfter", NULL);
    }
    return evPtr->afterAssoc;
}

void
CprofEvFreeAfterRec(
    AfterRec *recPtr)
{
    Tcl_DecrRefCount(recPtr->scriptObj);
    ckfree(recPtr);
}

/*
 * Records are kept by Tcl's AfterInfo (evPtr->afters) and by their script
 * (evPtr->afterScripts), so that the records a script running can be are
 * found at once.
 */

static void
IndexAfter(
    CprofEvents *evPtr,
    AfterRec *recPtr)
{
    Tcl_HashEntry *hPtr;
    int isNew;

    recPtr->scriptKey = recPtr->scriptObj->bytes != NULL
	    ? (const void *) recPtr->scriptObj->bytes
	    : (const void *) recPtr->scriptObj;
    hPtr = Tcl_CreateHashEntry(&evPtr->afterScripts,
	    (char *) recPtr->scriptKey, &isNew);
    recPtr->prevSame = NULL;
    recPtr->nextSame = isNew ? NULL : (AfterRec *) Tcl_GetHashValue(hPtr);
    if (recPtr->nextSame != NULL) {
	recPtr->nextSame->prevSame = recPtr;
    }
    Tcl_SetHashValue(hPtr, recPtr);
}

/*
 * Take a record out of both tables (hPtr: its entry in evPtr->afters, or
 * NULL); the caller frees it.
 */

static void
UnlinkAfter(
    CprofEvents *evPtr,
    AfterRec *recPtr,
    Tcl_HashEntry *hPtr)
{
    if (hPtr == NULL) {
	hPtr = Tcl_FindHashEntry(&evPtr->afters, (char *) recPtr->afterPtr);
    }
    if (hPtr != NULL && Tcl_GetHashValue(hPtr) == recPtr) {
	Tcl_DeleteHashEntry(hPtr);
    }
    if (recPtr->nextSame != NULL) {
	recPtr->nextSame->prevSame = recPtr->prevSame;
    }
    if (recPtr->prevSame != NULL) {
	recPtr->prevSame->nextSame = recPtr->nextSame;
    } else {
	hPtr = Tcl_FindHashEntry(&evPtr->afterScripts,
		(char *) recPtr->scriptKey);
	if (recPtr->nextSame != NULL) {
	    Tcl_SetHashValue(hPtr, recPtr->nextSame);
	} else {
	    Tcl_DeleteHashEntry(hPtr);
	}
    }
}

/*
 * A handler that ran without entering a command: counted, no time.
 */

void
CprofEvCountRan(
    CprofEvents *evPtr,
    AfterRec *recPtr)
{
    CprofEvStat(&evPtr->statePtr->handlers, recPtr->originId,
	    recPtr->kind)->count++;
}

/*
 * Record an AfterInfo of Tcl's list. A record of another id at its address
 * is one whose handler ran (the address was freed and reused): counted.
 */

void
CprofEvAddAfter(
    CprofEvents *evPtr,
    AfterInfo *afterPtr,
    int originId,
    uint64_t dueNs)
{
    AfterRec *recPtr;
    Tcl_HashEntry *hPtr;
    int isNew;

    hPtr = Tcl_CreateHashEntry(&evPtr->afters, (char *) afterPtr, &isNew);
    if (!isNew) {
	AfterRec *oldPtr = Tcl_GetHashValue(hPtr);

	UnlinkAfter(evPtr, oldPtr, NULL);
	if (oldPtr->id != afterPtr->id) {
	    CprofEvCountRan(evPtr, oldPtr);
	    CprofEvRetireAfter(evPtr, oldPtr);
	} else {
	    CprofEvFreeAfterRec(oldPtr);
	}
	hPtr = Tcl_CreateHashEntry(&evPtr->afters, (char *) afterPtr,
		&isNew);
    }
    recPtr = (AfterRec *) ckalloc(sizeof(AfterRec));
    recPtr->afterPtr = afterPtr;
    recPtr->id = afterPtr->id;
    recPtr->kind = afterPtr->token == NULL ? CPROF_HANDLER_IDLE
	    : CPROF_HANDLER_AFTER;
    recPtr->scriptObj = afterPtr->commandPtr;
    Tcl_IncrRefCount(recPtr->scriptObj);
    recPtr->originId = originId;
    recPtr->nameId = CprofEvScriptName(evPtr,
	    recPtr->kind == CPROF_HANDLER_IDLE
	    ? "after idle " : "after ", recPtr->scriptObj, originId);
    recPtr->dueNs = dueNs;
    recPtr->present = 1;
    Tcl_SetHashValue(hPtr, recPtr);
    IndexAfter(evPtr, recPtr);
}

void
CprofEvLookAfters(
    CprofEvents *evPtr)
{
    AfterAssocData *assocPtr = CprofEvAfterAssoc(evPtr);
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;
    AfterInfo *afterPtr;

    for (hPtr = Tcl_FirstHashEntry(&evPtr->afters, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	((AfterRec *) Tcl_GetHashValue(hPtr))->present = 0;
    }
    if (assocPtr == NULL) {
	return;
    }
    for (afterPtr = assocPtr->firstAfterPtr; afterPtr != NULL;
	    afterPtr = afterPtr->nextPtr) {
	AfterRec *recPtr;

	hPtr = Tcl_FindHashEntry(&evPtr->afters, (char *) afterPtr);
	recPtr = hPtr ? (AfterRec *) Tcl_GetHashValue(hPtr) : NULL;
	if (recPtr != NULL && recPtr->id == afterPtr->id) {
	    recPtr->present = 1;
	} else {
	    CprofEvAddAfter(evPtr, afterPtr, evPtr->unknownId, 0);
	}
    }
}

void
CprofEvDropGone(
    CprofEvents *evPtr,
    int ran,
    AfterRec *keepPtr)
{
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    for (hPtr = Tcl_FirstHashEntry(&evPtr->afters, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	AfterRec *recPtr = Tcl_GetHashValue(hPtr);

	if (!recPtr->present && recPtr != keepPtr) {
	    UnlinkAfter(evPtr, recPtr, hPtr);
	    if (ran) {
		CprofEvCountRan(evPtr, recPtr);
		CprofEvRetireAfter(evPtr, recPtr);
	    } else {
		CprofEvFreeAfterRec(recPtr);
	    }
	}
    }
}

void
CprofEvForgetAfters(
    CprofEvents *evPtr)
{
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    for (hPtr = Tcl_FirstHashEntry(&evPtr->afters, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	CprofEvFreeAfterRec(Tcl_GetHashValue(hPtr));
    }
    Tcl_DeleteHashTable(&evPtr->afters);
    Tcl_InitHashTable(&evPtr->afters, TCL_ONE_WORD_KEYS);
    Tcl_DeleteHashTable(&evPtr->afterScripts);
    Tcl_InitHashTable(&evPtr->afterScripts, TCL_ONE_WORD_KEYS);
    CprofEvForgetRan(evPtr);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofEvRetireAfter, CprofEvForgetRan, CprofEvHandlerOf --
 *
 *	-capture frames. No frame is pushed when a handler starts (nothing
 *	hooks its commands): the drain finds the handler a sample was in
 *	from Tcl's frames (captureframes.c), as the script the handler's level
 *	runs: its bytecode, or the list evaluated directly. By then the
 *	[after] record of a handler that ran is gone from Tcl's list, and
 *	from ours: the last EV_RAN_MAX of them are kept (their scripts
 *	held, so that the pointers compared are theirs), which covers the
 *	handlers that ran since the last drain (a nested loop's, too,
 *	unless more than that many ran inside one handler).
 *
 *	CprofEvHandlerOf: the name id of the frame of the handler whose
 *	script is the ByteCode 'ptr' (isCode: checked live and held by the
 *	caller) or the list object 'ptr' (a key only: compared with the
 *	scripts held, never read), or -1. A recorded [after] (pending or
 *	run), then a [fileevent] script. Two handlers sharing one script
 *	object are told apart by neither: the one found names both.
 *
 *----------------------------------------------------------------------
 */

static void
DropRan(
    CprofEvents *evPtr,
    AfterRec *recPtr)
{
    Tcl_HashEntry *hPtr = Tcl_FindHashEntry(&evPtr->ranScripts,
	    (char *) recPtr->scriptKey);

    if (hPtr != NULL && Tcl_GetHashValue(hPtr) == recPtr) {
	Tcl_DeleteHashEntry(hPtr);
    }
    CprofEvFreeAfterRec(recPtr);
}

void
CprofEvRetireAfter(
    CprofEvents *evPtr,
    AfterRec *recPtr)
{
    Tcl_HashEntry *hPtr;
    int isNew;

    if (!evPtr->framesCapture) {
	CprofEvFreeAfterRec(recPtr);
	return;
    }
    if (evPtr->ran[evPtr->ranNext] != NULL) {
	DropRan(evPtr, evPtr->ran[evPtr->ranNext]);
    }
    evPtr->ran[evPtr->ranNext] = recPtr;
    evPtr->ranNext = (evPtr->ranNext + 1) % EV_RAN_MAX;
    hPtr = Tcl_CreateHashEntry(&evPtr->ranScripts, (char *) recPtr->scriptKey,
	    &isNew);
    Tcl_SetHashValue(hPtr, recPtr);
}

void
CprofEvForgetRan(
    CprofEvents *evPtr)
{
    int i;

    for (i = 0; i < EV_RAN_MAX; i++) {
	if (evPtr->ran[i] != NULL) {
	    DropRan(evPtr, evPtr->ran[i]);
	    evPtr->ran[i] = NULL;
	}
    }
    evPtr->ranNext = 0;
}

int
CprofEvHandlerOf(
    CprofEvents *evPtr,
    int isCode,
    const void *ptr)
{
    int idType = isCode ? ID_CODE : ID_OBJ, i;
    const void *key = isCode ? (const void *) ((const ByteCode *) ptr)->source
	    : ptr;
    Tcl_HashEntry *hPtr;
    AfterRec *recPtr;
    FileRec *filePtr;

    if (key != NULL) {
	hPtr = Tcl_FindHashEntry(&evPtr->afterScripts, (char *) key);
	for (recPtr = hPtr ? Tcl_GetHashValue(hPtr) : NULL; recPtr != NULL;
		recPtr = recPtr->nextSame) {
	    if (ScriptIs(recPtr->scriptObj, idType, ptr)) {
		return recPtr->nameId;
	    }
	}
	hPtr = Tcl_FindHashEntry(&evPtr->ranScripts, (char *) key);
	recPtr = hPtr ? Tcl_GetHashValue(hPtr) : NULL;
	if (recPtr != NULL && ScriptIs(recPtr->scriptObj, idType, ptr)) {
	    return recPtr->nameId;
	}
    }
    if (!isCode) {
	/*
	 * A list recorded with a string (its key): by its object.
	 */

	for (i = 0; i < EV_RAN_MAX; i++) {
	    if (evPtr->ran[i] != NULL && evPtr->ran[i]->scriptObj == ptr) {
		return evPtr->ran[i]->nameId;
	    }
	}
	if (evPtr->afters.numEntries <= 1024) {
	    Tcl_HashSearch search;

	    for (hPtr = Tcl_FirstHashEntry(&evPtr->afters, &search);
		    hPtr != NULL; hPtr = Tcl_NextHashEntry(&search)) {
		recPtr = Tcl_GetHashValue(hPtr);
		if (recPtr->scriptObj == ptr) {
		    return recPtr->nameId;
		}
	    }
	}
    }
    filePtr = CprofEvRunningFile(evPtr, idType, ptr);
    return (filePtr != NULL) ? filePtr->nameId : -1;
}

/*
 * The records of the script running: those under its key (a list's object
 * may have had no string when recorded), whose script it is.
 */

#define MAX_WALKED 8		/* Candidates compared with Tcl's list one
				 * by one; beyond, looked up. */

static int
Candidates(
    CprofEvents *evPtr,
    int idType,
    const void *idPtr,
    AfterRec **cands,
    int max)
{
    const void *keys[2];
    int n = 0, k;

    if (idType == ID_CODE) {
	keys[0] = ((const ByteCode *) idPtr)->source;
	keys[1] = NULL;
    } else {
	keys[0] = idPtr;
	keys[1] = ((const Tcl_Obj *) idPtr)->bytes;
    }
    for (k = 0; k < 2; k++) {
	Tcl_HashEntry *hPtr;
	AfterRec *recPtr;

	if (keys[k] == NULL || (hPtr = Tcl_FindHashEntry(&evPtr->afterScripts,
		(char *) keys[k])) == NULL) {
	    continue;
	}
	for (recPtr = Tcl_GetHashValue(hPtr); recPtr != NULL;
		recPtr = recPtr->nextSame) {
	    if (!ScriptIs(recPtr->scriptObj, idType, idPtr)) {
		continue;
	    }
	    if (n == max) {
		return n + 1;
	    }
	    cands[n++] = recPtr;
	}
    }
    return n;
}

AfterRec *
CprofEvRunningAfter(
    CprofEvents *evPtr,
    int idType,
    const void *idPtr)
{
    AfterRec *cands[MAX_WALKED], *foundPtr = NULL;
    AfterAssocData *assocPtr;
    AfterInfo *afterPtr;
    int n, i;

    if ((idType != ID_CODE && idType != ID_OBJ)
	    || evPtr->afters.numEntries == 0) {
	return NULL;
    }
    n = Candidates(evPtr, idType, idPtr, cands, MAX_WALKED);
    if (n == 0) {
	return NULL;
    }
    if (n > MAX_WALKED) {
	/*
	 * Many timers of one script: look at the whole list.
	 */

	Tcl_HashSearch search;
	Tcl_HashEntry *hPtr;

	CprofEvLookAfters(evPtr);
	for (hPtr = Tcl_FirstHashEntry(&evPtr->afters, &search);
		hPtr != NULL; hPtr = Tcl_NextHashEntry(&search)) {
	    AfterRec *recPtr = Tcl_GetHashValue(hPtr);

	    if (!recPtr->present && ScriptIs(recPtr->scriptObj, idType,
		    idPtr) && (foundPtr == NULL
		    || recPtr->dueNs > foundPtr->dueNs
		    || (recPtr->dueNs == foundPtr->dueNs
		    && recPtr->id > foundPtr->id))) {
		foundPtr = recPtr;
	    }
	}
	CprofEvDropGone(evPtr, 1, foundPtr);
	if (foundPtr != NULL) {
	    UnlinkAfter(evPtr, foundPtr, NULL);
	}
	return foundPtr;
    }

    /*
     * Which of them Tcl took out of its list (AfterProc does, just before
     * it runs the script). Two gone with the script running: one ran
     * without a command of its own; the timer due last is the one
     * running now.
     */

    for (i = 0; i < n; i++) {
	cands[i]->present = 0;
    }
    assocPtr = CprofEvAfterAssoc(evPtr);
    for (afterPtr = assocPtr ? assocPtr->firstAfterPtr : NULL;
	    afterPtr != NULL; afterPtr = afterPtr->nextPtr) {
	for (i = 0; i < n; i++) {
	    if (cands[i]->afterPtr == afterPtr
		    && cands[i]->id == afterPtr->id) {
		cands[i]->present = 1;
	    }
	}
    }
    for (i = 0; i < n; i++) {
	AfterRec *recPtr = cands[i];

	if (recPtr->present) {
	    continue;
	}
	if (foundPtr == NULL || recPtr->dueNs > foundPtr->dueNs
		|| (recPtr->dueNs == foundPtr->dueNs
		&& recPtr->id > foundPtr->id)) {
	    recPtr = foundPtr;
	    foundPtr = cands[i];
	}
	if (recPtr != NULL) {
	    CprofEvCountRan(evPtr, recPtr);
	    UnlinkAfter(evPtr, recPtr, NULL);
	    CprofEvFreeAfterRec(recPtr);
	}
    }
    if (foundPtr != NULL) {
	UnlinkAfter(evPtr, foundPtr, NULL);
    }
    return foundPtr;
}

/*
 *----------------------------------------------------------------------
 *
 * [fileevent] and [bind] records --
 *
 *----------------------------------------------------------------------
 */

static void
FileKey(
    Tcl_DString *dsPtr,
    int kind,
    const char *chanName)
{
    Tcl_DStringInit(dsPtr);
    Tcl_DStringAppend(dsPtr, kind == CPROF_HANDLER_READABLE ? "r " : "w ",
	    2);
    Tcl_DStringAppend(dsPtr, chanName, -1);
}

void
CprofEvFreeFileRec(
    FileRec *recPtr)
{
    Tcl_DecrRefCount(recPtr->scriptObj);
    ckfree(recPtr->chanName);
    ckfree(recPtr);
}

void
CprofEvDropFile(
    CprofEvents *evPtr,
    int kind,
    const char *chanName)
{
    Tcl_DString ds;
    Tcl_HashEntry *hPtr;

    FileKey(&ds, kind, chanName);
    hPtr = Tcl_FindHashEntry(&evPtr->files, Tcl_DStringValue(&ds));
    Tcl_DStringFree(&ds);
    if (hPtr != NULL) {
	CprofEvFreeFileRec(Tcl_GetHashValue(hPtr));
	Tcl_DeleteHashEntry(hPtr);
    }
}

/*
 * Record the script the channel holds for this interpreter and kind.
 */

void
CprofEvRecordFile(
    CprofEvents *evPtr,
    Channel *chanPtr,
    const char *chanName,
    int kind,
    int originId)
{
    Tcl_Interp *interp = evPtr->statePtr->interp;
    int mask = kind == CPROF_HANDLER_READABLE ? TCL_READABLE : TCL_WRITABLE;
    EventScriptRecord *esPtr;
    Tcl_HashEntry *hPtr;
    FileRec *recPtr;
    Tcl_DString ds;
    int isNew;

    for (esPtr = chanPtr->state->scriptRecordPtr; esPtr != NULL;
	    esPtr = esPtr->nextPtr) {
	if (esPtr->interp == interp && esPtr->mask == mask
		&& esPtr->scriptPtr != NULL) {
	    break;
	}
    }
    if (esPtr == NULL) {
	CprofEvDropFile(evPtr, kind, chanName);
	return;
    }
    FileKey(&ds, kind, chanName);
    hPtr = Tcl_CreateHashEntry(&evPtr->files, Tcl_DStringValue(&ds), &isNew);
    Tcl_DStringFree(&ds);
    if (!isNew) {
	CprofEvFreeFileRec(Tcl_GetHashValue(hPtr));
    }
    recPtr = (FileRec *) ckalloc(sizeof(FileRec));
    recPtr->scriptObj = esPtr->scriptPtr;
    Tcl_IncrRefCount(recPtr->scriptObj);
    recPtr->chanName = (char *) ckalloc(strlen(chanName) + 1);
    strcpy(recPtr->chanName, chanName);
    recPtr->kind = kind;
    recPtr->originId = originId;

    /*
     * Named by the channel's kind, not the channel ("fileevent sock<*>
     * readable"), unless -instances: a server's handlers have one name
     * whatever its connections are called.
     */

    recPtr->nameId = CprofEvName(evPtr, "fileevent ", CprofChannelShown(
	    &evPtr->statePtr->naming, chanName, &ds), -1,
	    kind == CPROF_HANDLER_READABLE ? " readable" : " writable",
	    originId);
    Tcl_DStringFree(&ds);
    Tcl_SetHashValue(hPtr, recPtr);
}

/*
 * The handlers registered before start (or while paused): every channel of
 * the interpreter, from its channel table.
 */

void
CprofEvLookFiles(
    CprofEvents *evPtr)
{
    Tcl_HashTable *tablePtr = (Tcl_HashTable *) Tcl_GetAssocData(
	    evPtr->statePtr->interp, "tclIO", NULL);
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    if (tablePtr == NULL) {
	return;
    }
    for (hPtr = Tcl_FirstHashEntry(tablePtr, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	Channel *chanPtr = (Channel *) Tcl_GetHashValue(hPtr);
	const char *name = (const char *) Tcl_GetHashKey(tablePtr, hPtr);
	Tcl_DString ds;
	int kind;

	if (chanPtr->state->scriptRecordPtr == NULL) {
	    continue;
	}
	for (kind = CPROF_HANDLER_READABLE; kind <= CPROF_HANDLER_WRITABLE;
		kind++) {
	    FileKey(&ds, kind, name);
	    if (Tcl_FindHashEntry(&evPtr->files, Tcl_DStringValue(&ds))
		    == NULL) {
		CprofEvRecordFile(evPtr, chanPtr, name, kind, evPtr->unknownId);
	    }
	    Tcl_DStringFree(&ds);
	}
    }
}

FileRec *
CprofEvRunningFile(
    CprofEvents *evPtr,
    int idType,
    const void *idPtr)
{
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    if (idType != ID_CODE && idType != ID_OBJ) {
	return NULL;
    }
    for (hPtr = Tcl_FirstHashEntry(&evPtr->files, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	FileRec *recPtr = Tcl_GetHashValue(hPtr);

	if (ScriptIs(recPtr->scriptObj, idType, idPtr)) {
	    return recPtr;
	}
    }
    return NULL;
}

/*
 * The first command of a script: its text, without leading white space
 * and comments, up to the end of the command.
 */

static const char *
FirstCommand(
    const char *script,
    int length,
    int *lenPtr)
{
    Tcl_Parse parse;
    const char *start = script;

    *lenPtr = 0;
    if (Tcl_ParseCommand(NULL, script, length, 0, &parse) == TCL_OK) {
	start = parse.commandStart;
	*lenPtr = parse.commandSize;
	Tcl_FreeParse(&parse);
    }
    while (*lenPtr > 0 && strchr(" \t\n;", start[*lenPtr - 1])) {
	(*lenPtr)--;
    }
    return start;
}

void
CprofEvRecordBind(
    CprofEvents *evPtr,
    Tcl_Obj *tagObj,
    Tcl_Obj *seqObj,
    Tcl_Obj *scriptObj,
    int originId)
{
    Tcl_DString ds;
    Tcl_HashEntry *hPtr;
    BindRec *recPtr;
    const char *script, *first;
    int firstLen, isNew;
    Tcl_Size length;

    script = Tcl_GetStringFromObj(scriptObj, &length);
    Tcl_DStringInit(&ds);
    Tcl_DStringAppend(&ds, Tcl_GetString(tagObj), -1);
    Tcl_DStringAppend(&ds, "\n", 1);
    Tcl_DStringAppend(&ds, Tcl_GetString(seqObj), -1);
    if (length > 0 && script[0] == '+') {
	/*
	 * Appended to the binding's script: what starts it stays.
	 */

	hPtr = Tcl_FindHashEntry(&evPtr->binds, Tcl_DStringValue(&ds));
	Tcl_DStringFree(&ds);
	if (hPtr != NULL) {
	    return;
	}
	script++;
	length--;
	Tcl_DStringInit(&ds);
	Tcl_DStringAppend(&ds, Tcl_GetString(tagObj), -1);
	Tcl_DStringAppend(&ds, "\n", 1);
	Tcl_DStringAppend(&ds, Tcl_GetString(seqObj), -1);
    }
    first = FirstCommand(script, length, &firstLen);
    hPtr = Tcl_CreateHashEntry(&evPtr->binds, Tcl_DStringValue(&ds), &isNew);
    Tcl_DStringFree(&ds);
    if (!isNew) {
	recPtr = Tcl_GetHashValue(hPtr);
	ckfree(recPtr->first);
	ckfree(recPtr);
    }
    if (firstLen == 0) {
	Tcl_DeleteHashEntry(hPtr);
	return;
    }
    recPtr = (BindRec *) ckalloc(sizeof(BindRec));
    recPtr->first = (char *) ckalloc(firstLen + 1);
    memcpy(recPtr->first, first, firstLen);
    recPtr->first[firstLen] = '\0';
    recPtr->firstLen = firstLen;
    recPtr->originId = originId;
    Tcl_DStringInit(&ds);
    Tcl_DStringAppend(&ds, Tcl_GetString(tagObj), -1);
    Tcl_DStringAppend(&ds, " ", 1);
    Tcl_DStringAppend(&ds, Tcl_GetString(seqObj), -1);
    recPtr->nameId = CprofEvName(evPtr, "bind ", Tcl_DStringValue(&ds),
	    Tcl_DStringLength(&ds), "", originId);
    Tcl_DStringFree(&ds);
    Tcl_SetHashValue(hPtr, recPtr);
}

/*
 * Whether the text of a command matches a bound script's: Tk substitutes
 * each %x (but %%) with the event's value, which may be anything.
 */

static int
MatchBound(
    const char *pat,
    const char *patEnd,
    const char *str,
    const char *strEnd)
{
    while (pat < patEnd) {
	if (pat[0] == '%' && pat + 1 < patEnd && pat[1] != '%') {
	    const char *s;

	    pat += 2;
	    for (s = str; s <= strEnd; s++) {
		if (MatchBound(pat, patEnd, s, strEnd)) {
		    return 1;
		}
	    }
	    return 0;
	}
	if (pat[0] == '%' && pat + 1 < patEnd) {
	    pat++;
	}
	if (str >= strEnd || *str != *pat) {
	    return 0;
	}
	pat++;
	str++;
    }
    return str == strEnd;
}

BindRec *
CprofEvRunningBind(
    CprofEvents *evPtr,
    CmdFrame *cfPtr)
{
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;
    int len;

    if (cfPtr == NULL || cfPtr->type != TCL_LOCATION_EVAL
	    || cfPtr->cmdObj != NULL || cfPtr->cmd == NULL
	    || evPtr->binds.numEntries == 0) {
	return NULL;
    }
    len = cfPtr->len;
    while (len > 0 && strchr(" \t\n;", cfPtr->cmd[len - 1])) {
	len--;
    }
    for (hPtr = Tcl_FirstHashEntry(&evPtr->binds, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	BindRec *recPtr = Tcl_GetHashValue(hPtr);

	if (MatchBound(recPtr->first, recPtr->first + recPtr->firstLen,
		cfPtr->cmd, cfPtr->cmd + len)) {
	    return recPtr;
	}
    }
    return NULL;
}

/*
 * The bindings made before start (or while paused), when Tk is loaded:
 * those of every tag of the existing windows, of "all", and of Tk's
 * classes, asked of Tk with [bind] (before the capture is installed, so
 * that nothing of it is profiled; the interpreter's state is kept).
 */

static const char lookBindsScript[] =
    "::apply {{} {\n"
    "    set tags {all Button Checkbutton Radiobutton Menubutton Label\n"
    "        Entry Spinbox Text Listbox Scrollbar Scale Canvas Menu\n"
    "        Toplevel Frame Labelframe Message Panedwindow TButton\n"
    "        TCheckbutton TRadiobutton TMenubutton TEntry TCombobox\n"
    "        TSpinbox TScrollbar TScale TNotebook TPanedwindow Treeview\n"
    "        TProgressbar}\n"
    "    set todo [list .]\n"
    "    while {[llength $todo]} {\n"
    "        set todo [lassign $todo w]\n"
    "        if {![winfo exists $w]} continue\n"
    "        lappend tags {*}[bindtags $w]\n"
    "        lappend todo {*}[winfo children $w]\n"
    "    }\n"
    "    set out {}\n"
    "    foreach tag [lsort -unique $tags] {\n"
    "        foreach seq [bind $tag] {\n"
    "            lappend out $tag $seq [bind $tag $seq]\n"
    "        }\n"
    "    }\n"
    "    return $out\n"
    "}}";

void
CprofEvLookBinds(
    CprofEvents *evPtr)
{
    Tcl_Interp *interp = evPtr->statePtr->interp;
    Tcl_InterpState saved;
    Tcl_Obj **objv;
    int i;
    Tcl_Size objc;

    if (Tcl_FindCommand(interp, "::bind", NULL, TCL_GLOBAL_ONLY) == NULL
	    || Tcl_FindCommand(interp, "::bindtags", NULL, TCL_GLOBAL_ONLY)
	    == NULL) {
	return;
    }
    saved = Tcl_SaveInterpState(interp, TCL_OK);
    if (Tcl_PkgPresent(interp, "Tk", NULL, 0) == NULL) {
	/*
	 * Not Tk's [bind].
	 */

	Tcl_RestoreInterpState(interp, saved);
	return;
    }
    if (Tcl_EvalEx(interp, lookBindsScript, -1, TCL_EVAL_GLOBAL) == TCL_OK
	    && Tcl_ListObjGetElements(NULL, Tcl_GetObjResult(interp), &objc,
	    &objv) == TCL_OK) {
	Tcl_Obj *resultObj = Tcl_GetObjResult(interp);

	Tcl_IncrRefCount(resultObj);
	for (i = 0; i + 2 < objc; i += 3) {
	    Tcl_DString ds;

	    Tcl_DStringInit(&ds);
	    Tcl_DStringAppend(&ds, Tcl_GetString(objv[i]), -1);
	    Tcl_DStringAppend(&ds, "\n", 1);
	    Tcl_DStringAppend(&ds, Tcl_GetString(objv[i + 1]), -1);
	    if (Tcl_FindHashEntry(&evPtr->binds, Tcl_DStringValue(&ds))
		    == NULL) {
		CprofEvRecordBind(evPtr, objv[i], objv[i + 1], objv[i + 2],
			evPtr->unknownId);
	    }
	    Tcl_DStringFree(&ds);
	}
	Tcl_DecrRefCount(resultObj);
    }
    Tcl_RestoreInterpState(interp, saved);
}

/*
 *----------------------------------------------------------------------
 *
 * Background errors --
 *
 *	An error of a handler becomes a BgError of the interpreter's list
 *	once the handler has returned; the background error handler runs
 *	later, from an idle callback. Each BgError is mapped to the origin
 *	of the handler that was running when it appeared (CprofEvMapBgErrors, at
 *	a handler's start with 'originId' -1: those there already are not
 *	its; at its end: the new ones are), and the handler of the error is
 *	attributed to that origin. Only the BgErrors in the list are kept
 *	in the map, so no address in it is stale.
 *
 *----------------------------------------------------------------------
 */

static ErrAssocData *
ErrAssoc(
    CprofEvents *evPtr,
    int look)
{
    if (!look) {
	return evPtr->errAssoc;
    }
    if (evPtr->errAssoc == NULL && !evPtr->statePtr->deleting) {
	evPtr->errAssoc = (ErrAssocData *) Tcl_GetAssocData(
		evPtr->statePtr->interp, "tclBgError", NULL);
    }
    return evPtr->errAssoc;
}

void
CprofEvMapBgErrors(
    CprofEvents *evPtr,
    int originId)
{
    ErrAssocData *assocPtr = ErrAssoc(evPtr, originId >= 0);
    Tcl_HashTable fresh;
    Tcl_HashEntry *hPtr, *newPtr;
    BgError *errPtr;
    int isNew;

    if (evPtr->statePtr->deleting || (evPtr->bgOrigins.numEntries == 0
	    && (assocPtr == NULL || assocPtr->firstBgPtr == NULL))) {
	return;
    }
    Tcl_InitHashTable(&fresh, TCL_ONE_WORD_KEYS);
    for (errPtr = assocPtr ? assocPtr->firstBgPtr : NULL; errPtr != NULL;
	    errPtr = errPtr->nextPtr) {
	newPtr = Tcl_CreateHashEntry(&fresh, (char *) errPtr, &isNew);
	hPtr = Tcl_FindHashEntry(&evPtr->bgOrigins, (char *) errPtr);
	Tcl_SetHashValue(newPtr, hPtr != NULL ? Tcl_GetHashValue(hPtr)
		: INT2PTR((originId >= 0 ? originId : evPtr->unknownId) + 1));
    }
    Tcl_DeleteHashTable(&evPtr->bgOrigins);
    Tcl_InitHashTable(&evPtr->bgOrigins, TCL_ONE_WORD_KEYS);
    {
	Tcl_HashSearch search;

	for (hPtr = Tcl_FirstHashEntry(&fresh, &search); hPtr != NULL;
		hPtr = Tcl_NextHashEntry(&search)) {
	    newPtr = Tcl_CreateHashEntry(&evPtr->bgOrigins,
		    Tcl_GetHashKey(&fresh, hPtr), &isNew);
	    Tcl_SetHashValue(newPtr, Tcl_GetHashValue(hPtr));
	}
    }
    Tcl_DeleteHashTable(&fresh);
}

/*
 * The background error handler starting: its last two words are the
 * message and options of the first pending BgError. Returns it, or NULL.
 */

BgError *
CprofEvRunningBgError(
    CprofEvents *evPtr,
    int objc,
    Tcl_Obj *const objv[])
{
    ErrAssocData *assocPtr;

    if (objc < 3) {
	return NULL;
    }
    assocPtr = ErrAssoc(evPtr, 1);
    if (assocPtr == NULL || assocPtr->firstBgPtr == NULL
	    || objv[objc - 2] != assocPtr->firstBgPtr->errorMsg
	    || objv[objc - 1] != assocPtr->firstBgPtr->returnOpts) {
	return NULL;
    }
    return assocPtr->firstBgPtr;
}

