/*
 * events.c --
 *
 *	Event-loop attribution, part of the capture (it reads Tcl's private
 *	records):
 *
 *	- Every handler the event loop runs (an [after] script, timer or
 *	  idle; a [fileevent] script; a Tk binding; the background error
 *	  handler) gets a frame of kind event above its commands, named for
 *	  its kind and script head ("after ::h::work", "fileevent sock5
 *	  readable", "bind .c <Button-1>", "bgerror ::tcl::Bgerror"), whose
 *	  name id is an alias carrying its origin: the procedure (or
 *	  method) and file:line that scheduled it (CprofNameWithOrigin), or
 *	  "unknown" for a handler scheduled before start or out of sight.
 *	- Exact timing on the wall clock: the time the loop waits in the
 *	  notifier is a frame [idle] (kind idle) under the loop. Sampling
 *	  finds waiting samples by their native stacks instead
 *	  (aggregate.c), at no cost in the hot path.
 *	- Per origin and kind (statePtr->handlers): count, time, and for
 *	  timers the latency from due time to run.
 *
 *	How handlers are recognised. The program's scripts are never
 *	rewritten ([after info], [fileevent] and [bind] queries, errors and
 *	results stay what they are): what the capture sees is enough.
 *
 *	- Scheduling: [after], [fileevent], [chan event], [bind] and [close]
 *	  are wrapped like every command; CprofEventsSchedule runs before
 *	  one, takes its origin from the level stack (the nearest procedure
 *	  or method frame below) and Tcl's command frame (the file and line,
 *	  as -lines does), and queues an NRE callback that records, once the
 *	  command has done its work, the record Tcl made: the AfterInfo at
 *	  the head of the interpreter's "tclAfter" list (its script object
 *	  is the very one [after info] returns and AfterProc evaluates), the
 *	  channel's EventScriptRecord of the interpreter and mask, the
 *	  binding's script. The scripts are held (a reference each) while
 *	  recorded, so that comparing pointers is safe.
 *	- Running: a handler's first command is entered right above the
 *	  frame of the command running the event loop (CPROF_FRAME_LOOP:
 *	  vwait, update, tkwait...; or on an empty stack, as under Tk's main
 *	  loop or Tcl_DoOneEvent called from C) or of the handler before it.
 *	  The level stack's fast path leaves such enters to the capture's
 *	  slow path (the flags it tests already, and lvPtr->rootEvents while
 *	  handlers may run), which calls CprofEventsBefore. The script
 *	  running is Tcl's current command frame: a bytecode (the script
 *	  object's internal representation), or the list object of a list
 *	  evaluated directly. AfterProc unlinks an AfterInfo from the list
 *	  just before evaluating its script, so the after handler starting
 *	  is the recorded one that left the list and whose script runs: two
 *	  timers sharing a script object are told apart. A [fileevent]
 *	  handler is the record whose script runs; the background error
 *	  handler is recognised by its last two arguments, the very message
 *	  and options objects of the interpreter's first pending BgError; a
 *	  Tk binding by its first command, matched against the scripts
 *	  bound (their % substitutions as wildcards).
 *	- Ending: a handler's frame sits at the loop's level, above the
 *	  loop's frame, so that samples taken between its commands still
 *	  show it. It ends when the next handler starts, when the loop waits
 *	  again (an event source of ours is asked to set up just before the
 *	  notifier waits), when the loop's own frame goes (its pop is
 *	  queued, as for timing), or when a command runs at the level of
 *	  the frame from a script that is not the handler's.
 *
 *	Not seen: a handler that enters no command at all (a script of
 *	inline-compiled commands, "set ::done 1") has no frame; an [after]
 *	one is counted all the same when its record is found gone from
 *	Tcl's list, without a time. Handlers in C (Tk's redisplay) run
 *	under the loop's frame.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include <tclInt.h>
#include <tclIO.h>
#include "captureInt.h"
#include "levelsInline.h"
#include <string.h>
#include <stdio.h>
#include <stdlib.h>

/*
 * Tcl 8.6's records of [after] (tclTimer.c) and of background errors
 * (tclEvent.c), which it does not export. CprofCheckTclVersion refuses
 * any other Tcl at load.
 */

typedef struct AfterInfo {
    struct AfterAssocData *assocPtr;
    Tcl_Obj *commandPtr;
    int id;
    Tcl_TimerToken token;	/* NULL for an idle handler. */
    struct AfterInfo *nextPtr;
} AfterInfo;

typedef struct AfterAssocData {
    Tcl_Interp *interp;
    AfterInfo *firstAfterPtr;
} AfterAssocData;

typedef struct BgError {
    Tcl_Obj *errorMsg;
    Tcl_Obj *returnOpts;
    struct BgError *nextPtr;
} BgError;

typedef struct ErrAssocData {
    Tcl_Interp *interp;
    Tcl_Obj *cmdPrefix;
    BgError *firstBgPtr;
    BgError *lastBgPtr;
} ErrAssocData;

/*
 * A pending [after] handler.
 */

typedef struct AfterRec {
    AfterInfo *afterPtr;	/* Tcl's record: a key, read only while it is
				 * in the interpreter's list. */
    int id;			/* Its id ("after#id"). */
    int kind;			/* CPROF_HANDLER_AFTER or _IDLE. */
    Tcl_Obj *scriptObj;		/* Its script, held. */
    int nameId;			/* The frame's name (an alias: origin). */
    int originId;
    uint64_t dueNs;		/* Monotonic due time; 0: unknown. */
    int present;		/* Seen in Tcl's list by the last look. */
} AfterRec;

/*
 * A [fileevent] handler, keyed "r chan" or "w chan".
 */

typedef struct FileRec {
    Tcl_Obj *scriptObj;		/* Held. */
    char *chanName;
    int kind;			/* CPROF_HANDLER_READABLE or _WRITABLE. */
    int nameId, originId;
} FileRec;

/*
 * A Tk binding, keyed "tag\nsequence": the first command of its script,
 * where the event's % substitutions go.
 */

typedef struct BindRec {
    char *first;
    int firstLen;
    int nameId, originId;
} BindRec;

/*
 * A handler running: its frame's objKey.
 */

typedef struct OpenEvent {
    int kind;
    int originId;
    uint64_t startNs;
    int idType;			/* The script it runs (ID_*), */
    const void *idPtr;		/* as RunningScript tells it. */
    struct OpenEvent *nextPtr, *prevPtr;
} OpenEvent;

enum { ID_NONE, ID_CODE, ID_OBJ, ID_FRAME };

/*
 * What a scheduling command's NRE callback records.
 */

typedef struct Pending {
    CprofState *statePtr;
    unsigned generation;	/* The capture's, when queued. */
    int role;			/* CPROF_ROLE_*. */
    int kind;			/* Handler kind (after: -1 for a cancel). */
    int originId;
    uint64_t dueNs;
    Tcl_Obj *argObjs[3];	/* Held: channel and mask, or tag, sequence
				 * and script. */
} Pending;

#define MAX_ORIGINS 4096	/* Origins cached by call site before the
				 * cache starts afresh. */

typedef struct CprofEvents CprofEvents;

struct CprofEvents {
    CprofState *statePtr;
    int installed;		/* The event source is there. */
    AfterAssocData *afterAssoc;	/* The interpreter's "tclAfter" data, once
				 * it exists. */
    ErrAssocData *errAssoc;	/* Its "tclBgError" data, once it exists. */
    Tcl_HashTable afters;	/* AfterInfo* -> AfterRec*. */
    Tcl_HashTable files;	/* "r chan" -> FileRec*. */
    Tcl_HashTable binds;	/* "tag\nseq" -> BindRec*. */
    Tcl_HashTable bgOrigins;	/* BgError* -> origin id + 1. */
    Tcl_HashTable origins;	/* (site, offset, caller) -> origin id. */
    void **heldSites;		/* Site keys the cache holds: kind, key. */
    int numHeld, capHeld;
    OpenEvent *open;		/* Handlers running (their frames). */
    uint64_t idleSerial;	/* The [idle] frame pushed, or 0. */
    int rootType;		/* A script run on an empty stack that is */
    const void *rootPtr;	/* no handler, until the next wait. */
    int unknownId, topId, idleNameId;
};

static const Tcl_ObjType *bytecodeType = NULL;

static void		CloseEvent(CprofEvents *evPtr, OpenEvent *oePtr);
static void		EndHandlers(CprofEvents *evPtr, int level);
static void		SetupProc(ClientData clientData, int flags);
static void		CheckProc(ClientData clientData, int flags);
static int		ScheduledCallback(ClientData data[],
			    Tcl_Interp *interp, int result);

static inline uint64_t
Now(void)
{
    return CprofClockNs(CLOCK_MONOTONIC);
}

/*
 *----------------------------------------------------------------------
 *
 * Statistics --
 *
 *	StatFor: the record of an origin and kind, made if new.
 *
 *----------------------------------------------------------------------
 */

static CprofHandlerStat *
StatFor(
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

    if (hsPtr->initialized) {
	Tcl_DeleteHashTable(&hsPtr->index);
	hsPtr->initialized = 0;
    }
    if (hsPtr->stats != NULL) {
	ckfree(hsPtr->stats);
    }
    hsPtr->stats = NULL;
    hsPtr->num = hsPtr->cap = 0;
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
 *	a list), at most 40 bytes. OriginOf: the origin of a command about
 *	to be entered at 'level', "caller file:line" (file by its tail),
 *	"caller" where no file is known, "(top) ..." outside procedures;
 *	cached by call site. HandlerName: a frame's name with its origin.
 *
 *----------------------------------------------------------------------
 */

#define HEAD_MAX 40

static void
ScriptHead(
    Tcl_Obj *scriptObj,
    Tcl_DString *dsPtr)
{
    static const Tcl_ObjType *listType = NULL;
    const char *script, *word;
    int length, wordLen = 0;
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
	if (Tcl_ParseCommand(NULL, script, length, 0, &parse) == TCL_OK) {
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
	    while (wordLen < length && !strchr(" \t\n;", script[wordLen])) {
		wordLen++;
	    }
	}
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

static int
HandlerName(
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
    id = CprofNameIntern(Tcl_DStringValue(&ds), Tcl_DStringLength(&ds));
    Tcl_DStringFree(&ds);
    return CprofNameWithOrigin(id, originId);
}

static int
ScriptHandlerName(
    const char *prefix,
    Tcl_Obj *scriptObj,
    int originId)
{
    Tcl_DString ds;
    int id;

    Tcl_DStringInit(&ds);
    ScriptHead(scriptObj, &ds);
    id = HandlerName(prefix, Tcl_DStringValue(&ds), Tcl_DStringLength(&ds),
	    "", originId);
    Tcl_DStringFree(&ds);
    return id;
}

static void
ForgetOrigins(
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

static int
OriginOf(
    CprofEvents *evPtr,
    int level)
{
    CprofState *statePtr = evPtr->statePtr;
    CprofStack *stackPtr = &statePtr->levels.stack;
    int i = CprofLevelsBelow(&statePtr->levels, level);
    int callerId = evPtr->topId, siteKind, siteOffset = 0, fileId, line;
    int isNew, originId;
    void *sitePtr = NULL, *key[3];
    Tcl_HashEntry *hPtr;
    Tcl_DString ds;

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
	    siteKind, sitePtr, siteOffset, &fileId, &line)) {
	const char *path = CprofNameString(fileId);
	const char *tail = strrchr(path, '/');
	char buf[32];

	Tcl_DStringAppend(&ds, " ", 1);
	Tcl_DStringAppend(&ds, tail ? tail + 1 : path, -1);
	snprintf(buf, sizeof(buf), ":%d", line);
	Tcl_DStringAppend(&ds, buf, -1);
    }
    originId = CprofNameIntern(Tcl_DStringValue(&ds),
	    Tcl_DStringLength(&ds));
    Tcl_DStringFree(&ds);

    /*
     * The cache holds its keys, so that their addresses are not reused.
     */

    if (evPtr->origins.numEntries >= MAX_ORIGINS) {
	ForgetOrigins(evPtr);
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
 * RunningScript, ScriptIs --
 *
 *	What script the interpreter is running, from its current command
 *	frame: a bytecode (ID_CODE), a list evaluated directly (ID_OBJ),
 *	another frame (ID_FRAME: a script evaluated from a string, a
 *	file), or none (ID_NONE: Tcl_EvalObjv from C). Whether a script
 *	object is the one running.
 *
 *----------------------------------------------------------------------
 */

static void
RunningScript(
    Interp *iPtr,
    int *typePtr,
    const void **ptrPtr)
{
    CmdFrame *cfPtr = iPtr->cmdFramePtr;

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
 *	LookAfters walks the interpreter's list of AfterInfos: records of
 *	those in it are marked present (one whose address now holds another
 *	id is stale, replaced), those not recorded are recorded with an
 *	unknown origin. DropGone then drops the records not present,
 *	counting them as handlers that ran without a command of their own
 *	('ran') or not (cancelled). RunningAfter: the record of the handler
 *	whose script is starting.
 *
 *----------------------------------------------------------------------
 */

static AfterAssocData *
AfterAssoc(
    CprofEvents *evPtr)
{
    if (evPtr->afterAssoc == NULL && !evPtr->statePtr->deleting) {
	evPtr->afterAssoc = (AfterAssocData *) Tcl_GetAssocData(
		evPtr->statePtr->interp, "tclAfter", NULL);
    }
    return evPtr->afterAssoc;
}

static void
FreeAfterRec(
    AfterRec *recPtr)
{
    Tcl_DecrRefCount(recPtr->scriptObj);
    ckfree(recPtr);
}

static AfterRec *
NewAfterRec(
    CprofEvents *evPtr,
    AfterInfo *afterPtr,
    int originId,
    uint64_t dueNs)
{
    AfterRec *recPtr = (AfterRec *) ckalloc(sizeof(AfterRec));

    recPtr->afterPtr = afterPtr;
    recPtr->id = afterPtr->id;
    recPtr->kind = afterPtr->token == NULL ? CPROF_HANDLER_IDLE
	    : CPROF_HANDLER_AFTER;
    recPtr->scriptObj = afterPtr->commandPtr;
    Tcl_IncrRefCount(recPtr->scriptObj);
    recPtr->originId = originId;
    recPtr->nameId = ScriptHandlerName(recPtr->kind == CPROF_HANDLER_IDLE
	    ? "after idle " : "after ", recPtr->scriptObj, originId);
    recPtr->dueNs = dueNs;
    recPtr->present = 1;
    return recPtr;
}

/*
 * A handler that ran without entering a command: counted, no time.
 */

static void
CountRan(
    CprofEvents *evPtr,
    AfterRec *recPtr)
{
    StatFor(&evPtr->statePtr->handlers, recPtr->originId,
	    recPtr->kind)->count++;
}

static void
LookAfters(
    CprofEvents *evPtr)
{
    AfterAssocData *assocPtr = AfterAssoc(evPtr);
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
	int isNew;
	AfterRec *recPtr;

	hPtr = Tcl_CreateHashEntry(&evPtr->afters, (char *) afterPtr, &isNew);
	if (!isNew) {
	    recPtr = Tcl_GetHashValue(hPtr);
	    if (recPtr->id == afterPtr->id) {
		recPtr->present = 1;
		continue;
	    }

	    /*
	     * The address was freed and reused: the handler recorded there
	     * ran (it is gone from the list).
	     */

	    CountRan(evPtr, recPtr);
	    FreeAfterRec(recPtr);
	}
	Tcl_SetHashValue(hPtr, NewAfterRec(evPtr, afterPtr, evPtr->unknownId,
		0));
    }
}

static void
DropGone(
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
	    if (ran) {
		CountRan(evPtr, recPtr);
	    }
	    Tcl_DeleteHashEntry(hPtr);
	    FreeAfterRec(recPtr);
	}
    }
}

static AfterRec *
RunningAfter(
    CprofEvents *evPtr,
    int idType,
    const void *idPtr)
{
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr, *foundHPtr = NULL;
    AfterRec *foundPtr = NULL;

    if ((idType != ID_CODE && idType != ID_OBJ)
	    || evPtr->afters.numEntries == 0) {
	return NULL;
    }

    /*
     * Only a script of a recorded handler can be one: look at the list
     * only then.
     */

    for (hPtr = Tcl_FirstHashEntry(&evPtr->afters, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	if (ScriptIs(((AfterRec *) Tcl_GetHashValue(hPtr))->scriptObj,
		idType, idPtr)) {
	    break;
	}
    }
    if (hPtr == NULL) {
	return NULL;
    }
    LookAfters(evPtr);
    for (hPtr = Tcl_FirstHashEntry(&evPtr->afters, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	AfterRec *recPtr = Tcl_GetHashValue(hPtr);

	/*
	 * Two gone with the script running: one ran without a command of
	 * its own; the timer due last is the one running now.
	 */

	if (!recPtr->present && ScriptIs(recPtr->scriptObj, idType, idPtr)
		&& (foundPtr == NULL || recPtr->dueNs > foundPtr->dueNs
		|| (recPtr->dueNs == foundPtr->dueNs
		&& recPtr->id > foundPtr->id))) {
	    foundPtr = recPtr;
	    foundHPtr = hPtr;
	}
    }
    DropGone(evPtr, 1, foundPtr);
    if (foundPtr != NULL) {
	Tcl_DeleteHashEntry(foundHPtr);
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

static void
FreeFileRec(
    FileRec *recPtr)
{
    Tcl_DecrRefCount(recPtr->scriptObj);
    ckfree(recPtr->chanName);
    ckfree(recPtr);
}

static void
DropFile(
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
	FreeFileRec(Tcl_GetHashValue(hPtr));
	Tcl_DeleteHashEntry(hPtr);
    }
}

/*
 * Record the script the channel holds for this interpreter and kind.
 */

static void
RecordFile(
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
	DropFile(evPtr, kind, chanName);
	return;
    }
    FileKey(&ds, kind, chanName);
    hPtr = Tcl_CreateHashEntry(&evPtr->files, Tcl_DStringValue(&ds), &isNew);
    Tcl_DStringFree(&ds);
    if (!isNew) {
	FreeFileRec(Tcl_GetHashValue(hPtr));
    }
    recPtr = (FileRec *) ckalloc(sizeof(FileRec));
    recPtr->scriptObj = esPtr->scriptPtr;
    Tcl_IncrRefCount(recPtr->scriptObj);
    recPtr->chanName = (char *) ckalloc(strlen(chanName) + 1);
    strcpy(recPtr->chanName, chanName);
    recPtr->kind = kind;
    recPtr->originId = originId;
    recPtr->nameId = HandlerName("fileevent ", chanName, -1,
	    kind == CPROF_HANDLER_READABLE ? " readable" : " writable",
	    originId);
    Tcl_SetHashValue(hPtr, recPtr);
}

/*
 * The handlers registered before start (or while paused): every channel of
 * the interpreter, from its channel table.
 */

static void
LookFiles(
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
		RecordFile(evPtr, chanPtr, name, kind, evPtr->unknownId);
	    }
	    Tcl_DStringFree(&ds);
	}
    }
}

static FileRec *
RunningFile(
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

static void
RecordBind(
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
    int length, firstLen, isNew;

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
    recPtr->nameId = HandlerName("bind ", Tcl_DStringValue(&ds),
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

static BindRec *
RunningBind(
    CprofEvents *evPtr,
    Interp *iPtr)
{
    CmdFrame *cfPtr = iPtr->cmdFramePtr;
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

static void
LookBinds(
    CprofEvents *evPtr)
{
    Tcl_Interp *interp = evPtr->statePtr->interp;
    Tcl_InterpState saved;
    Tcl_Obj **objv;
    int objc, i;

    if (Tcl_FindCommand(interp, "::bind", NULL, TCL_GLOBAL_ONLY) == NULL
	    || Tcl_FindCommand(interp, "::bindtags", NULL, TCL_GLOBAL_ONLY)
	    == NULL) {
	return;
    }
    saved = Tcl_SaveInterpState(interp, TCL_OK);
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
		RecordBind(evPtr, objv[i], objv[i + 1], objv[i + 2],
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
 *	of the handler that was running when it appeared (MapBgErrors, at
 *	a handler's start with 'originId' -1: those there already are not
 *	its; at its end: the new ones are), and the handler of the error is
 *	attributed to that origin. Only the BgErrors in the list are kept
 *	in the map, so no address in it is stale.
 *
 *----------------------------------------------------------------------
 */

static ErrAssocData *
ErrAssoc(
    CprofEvents *evPtr)
{
    if (evPtr->errAssoc == NULL && !evPtr->statePtr->deleting) {
	evPtr->errAssoc = (ErrAssocData *) Tcl_GetAssocData(
		evPtr->statePtr->interp, "tclBgError", NULL);
    }
    return evPtr->errAssoc;
}

static void
MapBgErrors(
    CprofEvents *evPtr,
    int originId)
{
    ErrAssocData *assocPtr = ErrAssoc(evPtr);
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

static BgError *
RunningBgError(
    CprofEvents *evPtr,
    int objc,
    Tcl_Obj *const objv[])
{
    ErrAssocData *assocPtr;

    if (objc < 2) {
	return NULL;
    }
    assocPtr = ErrAssoc(evPtr);
    if (assocPtr == NULL || assocPtr->firstBgPtr == NULL
	    || objv[objc - 2] != assocPtr->firstBgPtr->errorMsg
	    || objv[objc - 1] != assocPtr->firstBgPtr->returnOpts) {
	return NULL;
    }
    return assocPtr->firstBgPtr;
}

/*
 *----------------------------------------------------------------------
 *
 * StartEvent, CloseEvent --
 *
 *	A handler starts: count it and push its frame at 'level', its
 *	commands' (which do not pop it), anchored where its first command
 *	is: readers show it while a command of the handler runs, not while
 *	the loop waits or between handlers. A handler is over: charge its
 *	time.
 *
 *----------------------------------------------------------------------
 */

static void
StartEvent(
    CprofEvents *evPtr,
    int kind,
    int nameId,
    int originId,
    int idType,
    const void *idPtr,
    int level,
    uintptr_t anchor,
    uint64_t dueNs)
{
    CprofState *statePtr = evPtr->statePtr;
    CprofHandlerStat *statPtr;
    OpenEvent *oePtr;
    CprofFrame *framePtr;
    CprofEntry entry;
    uint64_t now = Now();

    statPtr = StatFor(&statePtr->handlers, originId, kind);
    statPtr->count++;
    if (dueNs != 0) {
	uint64_t late = now > dueNs ? now - dueNs : 0;

	statPtr->latencyCount++;
	statPtr->latencyNs += late;
	if (late > statPtr->latencyMaxNs) {
	    statPtr->latencyMaxNs = late;
	}
    }
    MapBgErrors(evPtr, -1);
    oePtr = (OpenEvent *) ckalloc(sizeof(OpenEvent));
    oePtr->kind = kind;
    oePtr->originId = originId;
    oePtr->idType = idType;
    oePtr->idPtr = idPtr;
    oePtr->prevPtr = NULL;
    oePtr->nextPtr = evPtr->open;
    if (evPtr->open != NULL) {
	evPtr->open->prevPtr = oePtr;
    }
    evPtr->open = oePtr;

    entry.nameId = nameId;
    entry.kind = CPROF_KIND_EVENT;
    entry.flags = CPROF_FRAME_EVENT;
    entry.level = level;
    entry.anchor = anchor;
    entry.token = NULL;
    entry.objKey = oePtr;
    entry.methodKey = NULL;
    entry.envPtr = NULL;
    entry.siteKind = CPROF_SITE_NONE;
    EndHandlers(evPtr, level - 1);
    oePtr->startNs = now;
    framePtr = CprofLevelsEnter(&statePtr->levels, &entry);
    if (framePtr == NULL) {
	CloseEvent(evPtr, oePtr);
    }
}

static void
CloseEvent(
    CprofEvents *evPtr,
    OpenEvent *oePtr)
{
    CprofHandlerStat *statPtr;
    uint64_t ns = Now() - oePtr->startNs;

    statPtr = StatFor(&evPtr->statePtr->handlers, oePtr->originId,
	    oePtr->kind);
    statPtr->timed++;
    statPtr->totalNs += ns;
    if (ns > statPtr->maxNs) {
	statPtr->maxNs = ns;
    }
    MapBgErrors(evPtr, oePtr->originId);
    if (oePtr->prevPtr != NULL) {
	oePtr->prevPtr->nextPtr = oePtr->nextPtr;
    } else {
	evPtr->open = oePtr->nextPtr;
    }
    if (oePtr->nextPtr != NULL) {
	oePtr->nextPtr->prevPtr = oePtr->prevPtr;
    }
    ckfree(oePtr);
}

/*
 * A handler's frame is about to be popped (CprofLevelsEndEvents).
 */

static void
HandlerEnded(
    void *data,
    CprofFrame *framePtr)
{
    CprofEvents *evPtr = (CprofEvents *) data;
    OpenEvent *oePtr;

    for (oePtr = evPtr->open; oePtr != NULL; oePtr = oePtr->nextPtr) {
	if (oePtr == framePtr->objKey) {
	    framePtr->objKey = NULL;
	    CloseEvent(evPtr, oePtr);
	    return;
	}
    }
}

/*
 * The loop at 'level' is done with its handlers (it waits, runs another,
 * or returns): their frames go.
 */

static void
EndHandlers(
    CprofEvents *evPtr,
    int level)
{
    CprofLevelsEndEvents(&evPtr->statePtr->levels, level, HandlerEnded,
	    evPtr);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofEventsBefore --
 *
 *	A command is about to be entered at 'level' right above a loop's
 *	frame, a handler's, or on an empty stack: is it the first of a
 *	handler? If so, push the handler's frame (ending the one before).
 *
 *----------------------------------------------------------------------
 */

void
CprofEventsBefore(
    CprofState *statePtr,
    int level,
    uintptr_t anchor,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofEvents *evPtr = statePtr->eventsPtr;
    CprofLevels *lvPtr = &statePtr->levels;
    Interp *iPtr = (Interp *) statePtr->interp;
    CprofFrame *candPtr;
    OpenEvent *oePtr = NULL;
    int below, idType;
    const void *idPtr;
    BgError *errPtr;
    AfterRec *afterPtr;
    FileRec *filePtr;
    BindRec *bindPtr;

    if (evPtr == NULL || !evPtr->installed || lvPtr->quiet) {
	return;
    }
    below = CprofLevelsBelow(lvPtr, level);
    candPtr = below >= 0 ? &lvPtr->stack.frames[below] : NULL;
    if (candPtr != NULL && (candPtr->flags & CPROF_FRAME_EVENT)) {
	oePtr = (OpenEvent *) candPtr->objKey;
    }
    RunningScript(iPtr, &idType, &idPtr);
    if (candPtr == NULL && idType == evPtr->rootType
	    && idPtr == evPtr->rootPtr) {
	/*
	 * The script seen last on an empty stack, which was no handler.
	 */

	return;
    }
    errPtr = RunningBgError(evPtr, objc, objv);
    if (errPtr != NULL) {
	Tcl_HashEntry *hPtr = Tcl_FindHashEntry(&evPtr->bgOrigins,
		(char *) errPtr);
	int originId = hPtr ? PTR2INT(Tcl_GetHashValue(hPtr)) - 1
		: evPtr->unknownId;
	int nameId = HandlerName("bgerror ", Tcl_GetString(objv[0]), -1, "",
		originId);

	StartEvent(evPtr, CPROF_HANDLER_BGERROR, nameId, originId, ID_NONE,
		NULL, level, anchor, 0);
	return;
    }

    afterPtr = RunningAfter(evPtr, idType, idPtr);
    if (afterPtr != NULL) {
	StartEvent(evPtr, afterPtr->kind, afterPtr->nameId,
		afterPtr->originId, idType, idPtr, level, anchor,
		afterPtr->kind == CPROF_HANDLER_AFTER ? afterPtr->dueNs : 0);
	FreeAfterRec(afterPtr);
	return;
    }
    if (oePtr != NULL && oePtr->kind != CPROF_HANDLER_BGERROR
	    && oePtr->idType == idType && oePtr->idPtr == idPtr
	    && (idType != ID_FRAME || RunningBind(evPtr, iPtr) == NULL)) {
	/*
	 * The next command of the handler running.
	 */

	return;
    }
    filePtr = RunningFile(evPtr, idType, idPtr);
    if (filePtr != NULL) {
	StartEvent(evPtr, filePtr->kind, filePtr->nameId, filePtr->originId,
		idType, idPtr, level, anchor, 0);
	return;
    }
    bindPtr = (idType == ID_FRAME) ? RunningBind(evPtr, iPtr) : NULL;
    if (bindPtr != NULL) {
	StartEvent(evPtr, CPROF_HANDLER_BIND, bindPtr->nameId,
		bindPtr->originId, idType, idPtr, level, anchor, 0);
	return;
    }

    /*
     * No handler we know: the one before (if any) is over.
     */

    if (oePtr != NULL) {
	EndHandlers(evPtr, level - 1);
    }
    if (candPtr == NULL && idType != ID_NONE) {
	/*
	 * (Not for C code evaluating commands at the top: the background
	 * error handler is one, told by its arguments.)
	 */

	evPtr->rootType = idType;
	evPtr->rootPtr = idPtr;
	lvPtr->rootNoEvent = iPtr->cmdFramePtr;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CprofEventsLoopEnd, CprofEventsSchedulePop --
 *
 *	A loop's command (CPROF_FRAME_LOOP) at 'level' returns: the frames
 *	of its handlers go first. The wrapper queues its pop through
 *	CprofEventsSchedulePop, the trace calls CprofEventsLoopEnd at its
 *	leave.
 *
 *----------------------------------------------------------------------
 */

void
CprofEventsLoopEnd(
    CprofState *statePtr,
    int level)
{
    CprofEvents *evPtr = statePtr->eventsPtr;

    if (evPtr != NULL && evPtr->installed) {
	EndHandlers(evPtr, level);
    }
}

static int
LoopPopCallback(
    ClientData data[],
    Tcl_Interp *interp,
    int result)
{
    CprofState *statePtr = (CprofState *) data[0];
    CprofLevels *lvPtr = (CprofLevels *) data[1];
    uint64_t serial = (uint64_t) (uintptr_t) data[2];

    if (statePtr->capturePtr == NULL) {
	return result;
    }
    if (lvPtr == &statePtr->levels) {
	CprofEventsLoopEnd(statePtr, PTR2INT(data[3]));
    }
    CprofLevelsLeaveTop(lvPtr, serial);
    return result;
}

void
CprofEventsSchedulePop(
    CprofState *statePtr,
    CprofLevels *lvPtr,
    CprofFrame *framePtr)
{
    Tcl_NRAddCallback(statePtr->interp, LoopPopCallback, statePtr, lvPtr,
	    (ClientData) (uintptr_t) framePtr->serial,
	    INT2PTR(framePtr->level));
}

/*
 *----------------------------------------------------------------------
 *
 * CprofEventsSchedule, ScheduledCallback --
 *
 *	Before a command that schedules (or forgets) handlers: its origin,
 *	and a callback that records what it did once it is done.
 *
 *----------------------------------------------------------------------
 */

/*
 * An [after] delay in ms, read without changing the object: -1 if it is
 * not one.
 */

static Tcl_WideInt
AfterDelay(
    Tcl_Obj *objPtr)
{
    static const Tcl_ObjType *intType = NULL;
    Tcl_WideInt ms = 0;
    const char *p;

    if (intType == NULL) {
	intType = Tcl_GetObjType("int");
    }
    if (objPtr->typePtr == intType) {
	if (Tcl_GetWideIntFromObj(NULL, objPtr, &ms) != TCL_OK) {
	    return -1;
	}
	return ms < 0 ? 0 : ms;
    }
    p = Tcl_GetString(objPtr);
    if (*p == '+') {
	p++;
    }
    if (*p == '\0') {
	return -1;
    }
    for (; *p != '\0'; p++) {
	if (*p < '0' || *p > '9' || ms > ((Tcl_WideInt) 1 << 50)) {
	    return -1;
	}
	ms = 10 * ms + (*p - '0');
    }
    return ms;
}

static void
Schedule(
    CprofState *statePtr,
    int role,
    int kind,
    int originId,
    uint64_t dueNs,
    int nargs,
    Tcl_Obj *const args[])
{
    Pending *pPtr = (Pending *) ckalloc(sizeof(Pending));
    int i;

    pPtr->statePtr = statePtr;
    pPtr->generation = statePtr->captureGeneration;
    pPtr->role = role;
    pPtr->kind = kind;
    pPtr->originId = originId;
    pPtr->dueNs = dueNs;
    for (i = 0; i < 3; i++) {
	pPtr->argObjs[i] = i < nargs ? args[i] : NULL;
	if (pPtr->argObjs[i] != NULL) {
	    Tcl_IncrRefCount(pPtr->argObjs[i]);
	}
    }
    Tcl_NRAddCallback(statePtr->interp, ScheduledCallback, pPtr, NULL, NULL,
	    NULL);
}

/*
 * The kind a [fileevent] event name gives (the abbreviations Tcl takes),
 * or -1.
 */

static int
FileKind(
    Tcl_Obj *objPtr)
{
    int len;
    const char *s = Tcl_GetStringFromObj(objPtr, &len);

    if (len > 0 && strncmp(s, "readable", len) == 0) {
	return CPROF_HANDLER_READABLE;
    }
    if (len > 0 && strncmp(s, "writable", len) == 0) {
	return CPROF_HANDLER_WRITABLE;
    }
    return -1;
}

void
CprofEventsSchedule(
    CprofState *statePtr,
    const CprofCmdName *namePtr,
    int level,
    int objc,
    Tcl_Obj *const objv[])
{
    CprofEvents *evPtr = statePtr->eventsPtr;
    int role = CprofNameRole(namePtr->flags), kind;
    Tcl_WideInt ms;

    if (evPtr == NULL || !evPtr->installed || statePtr->levels.quiet) {
	return;
    }
    switch (role) {
    case CPROF_ROLE_AFTER:
	if (objc < 2) {
	    return;
	}
	ms = AfterDelay(objv[1]);
	if (ms >= 0 && objc >= 3) {
	    Schedule(statePtr, role, CPROF_HANDLER_AFTER, OriginOf(evPtr,
		    level), Now() + (uint64_t) ms * 1000000, 0, NULL);
	} else if (ms < 0 && objc >= 3
		&& strcmp(Tcl_GetString(objv[1]), "idle") == 0) {
	    Schedule(statePtr, role, CPROF_HANDLER_IDLE,
		    OriginOf(evPtr, level), 0, 0, NULL);
	} else if (ms < 0 && objc >= 3
		&& strcmp(Tcl_GetString(objv[1]), "cancel") == 0) {
	    /*
	     * What is gone before the cancel ran; what is gone after it
	     * was cancelled.
	     */

	    LookAfters(evPtr);
	    DropGone(evPtr, 1, NULL);
	    Schedule(statePtr, role, -1, -1, 0, 0, NULL);
	}
	break;
    case CPROF_ROLE_FILEEVENT:
	if (objc == 4 && (kind = FileKind(objv[2])) >= 0) {
	    Schedule(statePtr, role, kind, OriginOf(evPtr, level), 0, 1,
		    objv + 1);
	}
	break;
    case CPROF_ROLE_CLOSE:
	if (objc == 2) {
	    DropFile(evPtr, CPROF_HANDLER_READABLE, Tcl_GetString(objv[1]));
	    DropFile(evPtr, CPROF_HANDLER_WRITABLE, Tcl_GetString(objv[1]));
	}
	break;
    case CPROF_ROLE_BIND:
	if (objc == 4) {
	    Schedule(statePtr, role, CPROF_HANDLER_BIND,
		    OriginOf(evPtr, level), 0, 3, objv + 1);
	}
	break;
    }
}

static int
ScheduledCallback(
    ClientData data[],
    Tcl_Interp *interp,
    int result)
{
    Pending *pPtr = (Pending *) data[0];
    CprofState *statePtr = pPtr->statePtr;
    CprofEvents *evPtr;
    int i;

    if (pPtr->generation != statePtr->captureGeneration
	    || (evPtr = statePtr->eventsPtr) == NULL || !evPtr->installed
	    || result != TCL_OK) {
	goto done;
    }
    switch (pPtr->role) {
    case CPROF_ROLE_AFTER: {
	AfterAssocData *assocPtr;
	AfterInfo *headPtr;
	const char *res;

	if (pPtr->kind < 0) {
	    LookAfters(evPtr);
	    DropGone(evPtr, 0, NULL);
	    break;
	}
	assocPtr = AfterAssoc(evPtr);
	res = Tcl_GetString(Tcl_GetObjResult(interp));
	if (assocPtr == NULL || (headPtr = assocPtr->firstAfterPtr) == NULL
		|| strncmp(res, "after#", 6) != 0
		|| atoi(res + 6) != headPtr->id) {
	    break;
	} else {
	    Tcl_HashEntry *hPtr;
	    int isNew;

	    hPtr = Tcl_CreateHashEntry(&evPtr->afters, (char *) headPtr,
		    &isNew);
	    if (!isNew) {
		AfterRec *oldPtr = Tcl_GetHashValue(hPtr);

		if (oldPtr->id != headPtr->id) {
		    CountRan(evPtr, oldPtr);
		}
		FreeAfterRec(oldPtr);
	    }
	    Tcl_SetHashValue(hPtr, NewAfterRec(evPtr, headPtr,
		    pPtr->originId, pPtr->kind == CPROF_HANDLER_AFTER
		    ? pPtr->dueNs : 0));
	    statePtr->levels.rootEvents = 1;
	}
	break;
    }
    case CPROF_ROLE_FILEEVENT: {
	const char *name = Tcl_GetString(pPtr->argObjs[0]);
	Tcl_Channel chan = Tcl_GetChannel(interp, name, NULL);

	if (chan != NULL) {
	    RecordFile(evPtr, (Channel *) chan, name, pPtr->kind,
		    pPtr->originId);
	    statePtr->levels.rootEvents = 1;
	} else {
	    Tcl_ResetResult(interp);
	}
	break;
    }
    case CPROF_ROLE_BIND:
	RecordBind(evPtr, pPtr->argObjs[0], pPtr->argObjs[1],
		pPtr->argObjs[2], pPtr->originId);
	statePtr->levels.rootEvents = 1;
	break;
    }
    evPtr->rootType = -1;
    evPtr->statePtr->levels.rootNoEvent = NULL;

  done:
    for (i = 0; i < 3; i++) {
	if (pPtr->argObjs[i] != NULL) {
	    Tcl_DecrRefCount(pPtr->argObjs[i]);
	}
    }
    ckfree(pPtr);
    return result;
}

/*
 *----------------------------------------------------------------------
 *
 * SetupProc, CheckProc --
 *
 *	Our event source: Tcl_DoOneEvent asks every source to set up just
 *	before the notifier waits, and to check just after. The loop
 *	running here is done with its handlers: their frames go; with exact
 *	timing on the wall clock the wait is a frame [idle] above the
 *	interpreter's innermost frame (where Tk's main loop or C code runs
 *	the loop on an empty stack, at the root, if handlers may run). An
 *	interpreter whose innermost frame is not the loop's (another
 *	interpreter of the thread runs it) gets one too: it is waiting.
 *
 *----------------------------------------------------------------------
 */

static void
SetupProc(
    ClientData clientData,
    int flags)
{
    CprofState *statePtr = (CprofState *) clientData;
    CprofEvents *evPtr = statePtr->eventsPtr;
    CprofLevels *lvPtr = &statePtr->levels;
    Interp *iPtr = (Interp *) statePtr->interp;

    (void) flags;
    if (evPtr == NULL || !evPtr->installed || lvPtr->quiet
	    || statePtr->deleting) {
	return;
    }
    EndHandlers(evPtr, iPtr->numLevels);
    if (evPtr->afters.numEntries > 0) {
	LookAfters(evPtr);
	DropGone(evPtr, 1, NULL);
    }
    evPtr->rootType = -1;
    evPtr->statePtr->levels.rootNoEvent = NULL;
    if (lvPtr->timing && statePtr->options.clock == CPROF_CLOCK_WALL
	    && (iPtr->numLevels > 0 || lvPtr->rootEvents)) {
	int below = CprofLevelsBelow(lvPtr, iPtr->numLevels + 1);
	CprofFrame *framePtr;
	CprofEntry entry;

	entry.nameId = evPtr->idleNameId;
	entry.kind = CPROF_KIND_IDLE;
	entry.flags = CPROF_FRAME_IDLE;
	entry.level = iPtr->numLevels;
	entry.anchor = below >= 0 ? lvPtr->stack.frames[below].anchor : 0;
	entry.token = NULL;
	entry.objKey = NULL;
	entry.methodKey = NULL;
	entry.envPtr = NULL;
	entry.siteKind = CPROF_SITE_NONE;
	framePtr = CprofLevelsEnter(lvPtr, &entry);
	evPtr->idleSerial = framePtr != NULL ? framePtr->serial : 0;
    }
}

static void
CheckProc(
    ClientData clientData,
    int flags)
{
    CprofState *statePtr = (CprofState *) clientData;
    CprofEvents *evPtr = statePtr->eventsPtr;
    CprofStack *stackPtr = &statePtr->levels.stack;

    (void) flags;
    if (evPtr == NULL || evPtr->idleSerial == 0) {
	return;
    }
    if (stackPtr->depth > 0
	    && stackPtr->frames[stackPtr->depth - 1].serial
	    == evPtr->idleSerial) {
	CprofLevelsLeave(&statePtr->levels, evPtr->idleSerial);
    }
    evPtr->idleSerial = 0;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofEventsInstall, CprofEventsRemove, CprofEventsForget,
 * CprofEventsFree --
 *
 *	With the capture of a run: the event source, and the handlers
 *	pending already (origin unknown, unless recorded before a pause).
 *	Without it: open handlers are charged until now (their frames go
 *	with the stack). Forget the records (a run stops), free everything
 *	(the state goes).
 *
 *----------------------------------------------------------------------
 */

static CprofEvents *
EventsOf(
    CprofState *statePtr)
{
    CprofEvents *evPtr = statePtr->eventsPtr;

    if (evPtr == NULL) {
	evPtr = (CprofEvents *) ckalloc(sizeof(CprofEvents));
	memset(evPtr, 0, sizeof(CprofEvents));
	evPtr->statePtr = statePtr;
	Tcl_InitHashTable(&evPtr->afters, TCL_ONE_WORD_KEYS);
	Tcl_InitHashTable(&evPtr->files, TCL_STRING_KEYS);
	Tcl_InitHashTable(&evPtr->binds, TCL_STRING_KEYS);
	Tcl_InitHashTable(&evPtr->bgOrigins, TCL_ONE_WORD_KEYS);
	Tcl_InitHashTable(&evPtr->origins,
		3 * sizeof(void *) / sizeof(int));
	evPtr->unknownId = CprofNameIntern("unknown", -1);
	evPtr->topId = CprofNameIntern("(top)", -1);
	evPtr->idleNameId = CprofNameIntern("[idle]", -1);
	evPtr->rootType = -1;
	statePtr->levels.rootNoEvent = NULL;
	statePtr->eventsPtr = evPtr;
    }
    return evPtr;
}

void
CprofEventsInstall(
    CprofCapture *capPtr)
{
    CprofState *statePtr = capPtr->statePtr;
    CprofEvents *evPtr;

    if (!statePtr->eventsOn || capPtr->coverage) {
	return;
    }
    if (bytecodeType == NULL) {
	bytecodeType = Tcl_GetObjType("bytecode");
    }
    evPtr = EventsOf(statePtr);
    if (evPtr->installed) {
	return;
    }
    LookAfters(evPtr);
    DropGone(evPtr, 0, NULL);
    LookFiles(evPtr);
    LookBinds(evPtr);
    evPtr->rootType = -1;
    evPtr->statePtr->levels.rootNoEvent = NULL;
    statePtr->levels.rootEvents = (evPtr->afters.numEntries > 0
	    || evPtr->files.numEntries > 0 || evPtr->binds.numEntries > 0
	    || Tcl_FindCommand(statePtr->interp, "::bind", NULL,
		    TCL_GLOBAL_ONLY) != NULL);
    Tcl_CreateEventSource(SetupProc, CheckProc, statePtr);
    evPtr->installed = 1;
}

void
CprofEventsRemove(
    CprofCapture *capPtr)
{
    CprofState *statePtr = capPtr->statePtr;
    CprofEvents *evPtr = statePtr->eventsPtr;

    if (evPtr == NULL || !evPtr->installed) {
	return;
    }
    Tcl_DeleteEventSource(SetupProc, CheckProc, statePtr);
    if (!statePtr->deleting && evPtr->afters.numEntries > 0) {
	/*
	 * Handlers that ran since the last look without a command.
	 */

	LookAfters(evPtr);
	DropGone(evPtr, 1, NULL);
    }
    evPtr->installed = 0;
    evPtr->idleSerial = 0;
    statePtr->levels.rootEvents = 0;
    while (evPtr->open != NULL) {
	CloseEvent(evPtr, evPtr->open);
    }
}

void
CprofEventsForget(
    CprofState *statePtr)
{
    CprofEvents *evPtr = statePtr->eventsPtr;
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    if (evPtr == NULL) {
	return;
    }
    for (hPtr = Tcl_FirstHashEntry(&evPtr->afters, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	FreeAfterRec(Tcl_GetHashValue(hPtr));
    }
    Tcl_DeleteHashTable(&evPtr->afters);
    Tcl_InitHashTable(&evPtr->afters, TCL_ONE_WORD_KEYS);
    for (hPtr = Tcl_FirstHashEntry(&evPtr->files, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	FreeFileRec(Tcl_GetHashValue(hPtr));
    }
    Tcl_DeleteHashTable(&evPtr->files);
    Tcl_InitHashTable(&evPtr->files, TCL_STRING_KEYS);
    for (hPtr = Tcl_FirstHashEntry(&evPtr->binds, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	BindRec *recPtr = Tcl_GetHashValue(hPtr);

	ckfree(recPtr->first);
	ckfree(recPtr);
    }
    Tcl_DeleteHashTable(&evPtr->binds);
    Tcl_InitHashTable(&evPtr->binds, TCL_STRING_KEYS);
    Tcl_DeleteHashTable(&evPtr->bgOrigins);
    Tcl_InitHashTable(&evPtr->bgOrigins, TCL_ONE_WORD_KEYS);
    ForgetOrigins(evPtr);
    evPtr->afterAssoc = NULL;
    evPtr->errAssoc = NULL;
}

void
CprofEventsFree(
    CprofState *statePtr)
{
    CprofEvents *evPtr = statePtr->eventsPtr;

    CprofEventsClear(statePtr);
    if (evPtr == NULL) {
	return;
    }
    while (evPtr->open != NULL) {
	CloseEvent(evPtr, evPtr->open);
    }
    CprofEventsForget(statePtr);
    Tcl_DeleteHashTable(&evPtr->afters);
    Tcl_DeleteHashTable(&evPtr->files);
    Tcl_DeleteHashTable(&evPtr->binds);
    Tcl_DeleteHashTable(&evPtr->bgOrigins);
    Tcl_DeleteHashTable(&evPtr->origins);
    if (evPtr->heldSites != NULL) {
	ckfree(evPtr->heldSites);
    }
    ckfree(evPtr);
    statePtr->eventsPtr = NULL;
}

/*
 * Whether an NRE callback is one of this file's (unload looks for them).
 */

int
CprofEventsIsOurs(
    Tcl_NRPostProc *procPtr)
{
    return procPtr == ScheduledCallback || procPtr == LoopPopCallback;
}
