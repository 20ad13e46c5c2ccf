/*
 * captureeventsInt.h --
 *
 *	Shared by the two units of event-loop attribution, part of the
 *	capture: captureevents.c (handlers' frames, the loop's waits, scheduling
 *	commands, the event source) and captureeventrecs.c below it (the records
 *	of the handlers that may run, their names and origins, the
 *	statistics). They read Tcl's private structures: include tclInt.h
 *	and tclIO.h first.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _EVENTSINT_H
#define _EVENTSINT_H

#include "captureInt.h"

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
    const void *scriptKey;	/* Its key in evPtr->afterScripts: the
				 * script's string (a compiled script's
				 * bytecode has it as its source), or the
				 * object of a list without one. */
    struct AfterRec *nextSame;	/* The others of the same key. */
    struct AfterRec *prevSame;
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
    const void *idPtr;		/* as CprofEvRunningScript tells it. */
    struct OpenEvent *nextPtr, *prevPtr;
} OpenEvent;

enum { ID_NONE, ID_CODE, ID_OBJ, ID_FRAME };

#define MAX_ORIGINS 4096	/* Origins cached by call site before the
				 * cache starts afresh. */

typedef struct CprofEvents CprofEvents;

#define EV_RAN_MAX	256	/* -capture frames: [after] records of the
				 * handlers that ran, kept for the drain. */
#define EV_ROLE_CMDS	6	/* -capture frames: scheduling commands
				 * and [interp] seen (captureevents.c,
				 * roleCmds). */

struct CprofEvents {
    CprofState *statePtr;
    int installed;		/* The event source is there. */
    AfterAssocData *afterAssoc;	/* The interpreter's "tclAfter" data, once
				 * it exists. */
    ErrAssocData *errAssoc;	/* Its "tclBgError" data, once it exists. */
    Tcl_HashTable afters;	/* AfterInfo* -> AfterRec*. */
    Tcl_HashTable afterScripts;	/* Script key -> AfterRec* (a list). */
    uint64_t lastLookNs;	/* When the loop last looked at all of
				 * Tcl's list. */
    Tcl_HashTable files;	/* "r chan" -> FileRec*. */
    Tcl_HashTable binds;	/* "tag\nseq" -> BindRec*. */
    Tcl_HashTable bgOrigins;	/* BgError* -> origin id + 1. */
    Tcl_HashTable origins;	/* (site, offset, caller) -> origin id. */
    Tcl_HashTable names;	/* "origin prefix head" -> frame name id. */
    Tcl_Obj *lastNameObj;	/* The script last named (held), */
    int lastOriginId;		/* its origin, */
    const char *lastPrefix;	/* its prefix (a literal), */
    int lastNameId;		/* its name. */
    void **heldSites;		/* Site keys the cache holds: kind, key. */
    int numHeld, capHeld;
    OpenEvent *open;		/* Handlers running (their frames). */
    uint64_t idleSerial;	/* The [idle] frame pushed, or 0. */
    int rootType;		/* A script run on an empty stack that is */
    const void *rootPtr;	/* no handler, until the next wait. */
    int unknownId, topId, idleNameId;
    int framesCapture;		/* -capture frames: no frame is pushed; the
				 * drain asks which handler a sampled
				 * script is (CprofEvHandlerOf). */
    AfterRec *ran[EV_RAN_MAX];	/* The records of [after] handlers that
				 * ran, latest last (a ring), */
    int ranNext;		/* its next slot, */
    Tcl_HashTable ranScripts;	/* and by script key (the latest). */
    Command *roleCmds[EV_ROLE_CMDS];
				/* Commands whose nreProc is ours, held. */
    CprofNameRefs refs;		/* The names of handlers and origins made
				 * since the records were last forgotten
				 * (records, caches, handlers' frames use
				 * them). */
};

/*
 * The handlers' clock: elapsed time, whatever the run's clock.
 */

static inline uint64_t
CprofEvNow(void)
{
    return CprofClockNs(CLOCK_MONOTONIC);
}

/*
 * captureeventrecs.c
 */

MODULE_SCOPE CprofHandlerStat * CprofEvStat(CprofHandlers *hsPtr,
			    int originId, int kind);
MODULE_SCOPE int	CprofEvName(CprofEvents *evPtr, const char *prefix,
			    const char *middle, int middleLen,
			    const char *suffix, int originId);
MODULE_SCOPE int	CprofEvScriptName(CprofEvents *evPtr,
			    const char *prefix, Tcl_Obj *scriptObj,
			    int originId);
MODULE_SCOPE void	CprofEvForgetOrigins(CprofEvents *evPtr);
MODULE_SCOPE int	CprofEvOrigin(CprofEvents *evPtr, int level);
MODULE_SCOPE void	CprofEvRunningScript(CmdFrame *cfPtr, int *typePtr,
			    const void **ptrPtr);
MODULE_SCOPE AfterAssocData *CprofEvAfterAssoc(CprofEvents *evPtr);
MODULE_SCOPE void	CprofEvFreeAfterRec(AfterRec *recPtr);
MODULE_SCOPE void	CprofEvAddAfter(CprofEvents *evPtr,
			    AfterInfo *afterPtr, int originId,
			    uint64_t dueNs);
MODULE_SCOPE void	CprofEvForgetAfters(CprofEvents *evPtr);
MODULE_SCOPE void	CprofEvCountRan(CprofEvents *evPtr, AfterRec *recPtr);
MODULE_SCOPE void	CprofEvRetireAfter(CprofEvents *evPtr,
			    AfterRec *recPtr);
MODULE_SCOPE void	CprofEvForgetRan(CprofEvents *evPtr);
MODULE_SCOPE int	CprofEvHandlerOf(CprofEvents *evPtr, int isCode,
			    const void *ptr);
MODULE_SCOPE void	CprofEvLookAfters(CprofEvents *evPtr);
MODULE_SCOPE void	CprofEvDropGone(CprofEvents *evPtr, int ran,
			    AfterRec *keepPtr);
MODULE_SCOPE AfterRec *	CprofEvRunningAfter(CprofEvents *evPtr, int idType,
			    const void *idPtr);
MODULE_SCOPE void	CprofEvFreeFileRec(FileRec *recPtr);
MODULE_SCOPE void	CprofEvDropFile(CprofEvents *evPtr, int kind,
			    const char *chanName);
MODULE_SCOPE void	CprofEvRecordFile(CprofEvents *evPtr,
			    Channel *chanPtr, const char *chanName, int kind,
			    int originId);
MODULE_SCOPE void	CprofEvLookFiles(CprofEvents *evPtr);
MODULE_SCOPE FileRec *	CprofEvRunningFile(CprofEvents *evPtr, int idType,
			    const void *idPtr);
MODULE_SCOPE void	CprofEvRecordBind(CprofEvents *evPtr, Tcl_Obj *tagObj,
			    Tcl_Obj *seqObj, Tcl_Obj *scriptObj,
			    int originId);
MODULE_SCOPE BindRec *	CprofEvRunningBind(CprofEvents *evPtr,
			    CmdFrame *cfPtr);
MODULE_SCOPE void	CprofEvLookBinds(CprofEvents *evPtr);
MODULE_SCOPE void	CprofEvMapBgErrors(CprofEvents *evPtr, int originId);
MODULE_SCOPE BgError *	CprofEvRunningBgError(CprofEvents *evPtr, int objc,
			    Tcl_Obj *const objv[]);

#endif /* _EVENTSINT_H */
