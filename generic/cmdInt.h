/*
 * cmdInt.h --
 *
 *	What the files of the command layer share: the per-interpreter
 *	state beyond the collector's (CprofInterp), the option tables and
 *	limits, and the functions one file of the layer offers the others.
 *
 *	    tclcprof.c	package init and unload, the ::tclcprof ensemble,
 *			interp and namespace deletion
 *	    cmdstatus.c	status, data, save, runs, stack
 *	    cmdconfigure.c	tclcprof::configure
 *	    cmddebug.c	tclcprof::debug, introspection and test hooks
 *	    cmdlayout.c	report support: the tree layout and flat sums
 *	    cmdrun.c	a run's lifecycle: start, stop, pause, resume,
 *			reset, profile, -duration, the level
 *			stack's hooks, the sampler's arming and drain timer
 *	    cmdserve.c	the thread of tclcprof::serve
 *	    cmdscope.c	-scope tree|process: sessions and their members
 *	    cmdrundb.c	a run's -db: flushes while it runs, the last write,
 *			the exit flush, fork
 *	    cmdscopedata.c	a session's profile put together, its
 *			threads' names and lock
 *	    cmdmeta.c	what a run says about itself: its meta, the
 *			sampling and exact parts of status, the profile
 *			value
 *	    cmdoptions.c	the option table, parsing, the values reported
 *	    cmdlabels.c	tclcprof::label and the C interface of labels
 *	    cmdutil.c	names of options and values, errors, the table
 *			of the calls up (CprofCmdHooks)
 *
 *	Each file calls only those below it in this order, from the top
 *	(tools/objcycles finds no circle). Where a lower one must reach an
 *	upper one it goes through a function pointer the upper one set:
 *	CprofCmdHooks (below, registered by tclcprof.c at load: scope's
 *	members started and stopped, -history's intervals, a session's
 *	meta), CprofInterp's stopProc (tclcprof.c), and the procs a session
 *	gives its owner (wholeProc, rotateProc: cmdscope.c). All of them
 *	sit on top of the collector (tclcprofInt.h): they call it, it never
 *	calls them except through the hooks cmdrun.c registers.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _CMDINT_H
#define _CMDINT_H

#include "tclcprofInt.h"

#define PUT(d, k, v) \
    Tcl_DictObjPut(NULL, (d), Tcl_NewStringObj((k), -1), (v))

/*
 * Options of start and configure, in the order of cprofOptionNames.
 */

enum CprofOption {
    OPT_CAPTURE, OPT_CLOCK, OPT_COMMIT, OPT_COMPENSATE, OPT_CONTROL, OPT_DB,
    OPT_DURATION, OPT_EVENTLIMIT, OPT_EVENTS, OPT_EVERY, OPT_EXCLUDE,
    OPT_FLUSH, OPT_HISTORY, OPT_INCLUDE, OPT_INSTANCES, OPT_KEEP,
    OPT_KEEP_HOURS, OPT_LABEL, OPT_LINES, OPT_MEMRATE, OPT_MODE, OPT_NATIVE,
    OPT_ONSLOW, OPT_RATE, OPT_SCOPE, OPT_SEED, OPT_SLOW, OPT_SUBCOMMANDS,
    OPT_TEST
};

MODULE_SCOPE const char *const cprofOptionNames[];
MODULE_SCOPE const char *const cprofModeNames[];
MODULE_SCOPE const char *const cprofClockNames[];
MODULE_SCOPE const char *const cprofNativeNames[];
MODULE_SCOPE const char *const cprofCommitNames[];
MODULE_SCOPE const char *const cprofScopeNames[];

/*
 * Options whose values are Tcl values, kept as objects.
 */

enum ObjOption {
    OBJ_LABEL, OBJ_INCLUDE, OBJ_EXCLUDE, OBJ_ONSLOW, OBJ_DB, OBJ_TEST,
    OBJ_SUBCOMMANDS, OBJ_HISTORY, OBJ_COUNT
};

/*
 * -flush: how often a run with -db writes to the file, by default, for
 * -commit staged and direct; at most.
 */

#define DEFAULT_FLUSH_STAGED 5000
#define DEFAULT_FLUSH_DIRECT 200
#define MAX_FLUSH_MS 86400000

/*
 * -every: seconds between the files of -history, by default.
 */

#define DEFAULT_HISTORY_EVERY 60.0

/*
 * Most events -events keeps by default, and at most.
 */

#define DEFAULT_EVENT_LIMIT 1000000
#define MAX_EVENT_LIMIT 50000000	/* Three list elements per event: the
				 * events of a profile must fit in one Tcl
				 * list. */

/*
 * Highest sampling rate accepted: beyond this the handler's own cost
 * (about 20 us a sample here) would dominate.
 */

#define MAX_RATE 10000.0

/*
 * -memrate: mean bytes between memory samples, by default (as tcmalloc's
 * and Go's) and at most.
 */

#define DEFAULT_MEMRATE (512 * 1024)
#define MAX_MEMRATE ((Tcl_WideInt) 1 << 40)


typedef struct CprofDeadline CprofDeadline;

/*
 * Per-interpreter state beyond what the collector needs.
 */

typedef struct CprofInterp {
    CprofState state;		/* Must be first. */
    Tcl_Obj *objs[OBJ_COUNT];	/* -label, -include, -exclude, -onslow of
				 * the current (or last) run. */
    CprofOptions defaults;	/* Options set by configure: what a run
				 * started without options uses. */
    Tcl_Obj *defaultObjs[OBJ_COUNT];
				/* The same, set by configure. */
    Tcl_TimerToken durationTimer;
				/* Stops a run with -duration that sits in
				 * the event loop. */
    CprofDeadline *deadlinePtr;
				/* Stops one that runs bytecode only (the
				 * deadline thread), or NULL. */
    CprofStore *storePtr;	/* The file a run with -db writes, or
				 * NULL. */
    uint64_t nextFlushNs;	/* Monotonic time of its next flush. */
    uint64_t nextRotateNs;	/* With -history: monotonic time the current
				 * file of the history ends; 0 without. */
    int historySeq;		/* Files of -history written by this run. */
    int historyDb;		/* -history names one database file (a run
				 * per interval), not a directory. */
    Tcl_TimerToken flushTimer;	/* Flushes a run that sits in the event
				 * loop. */
    double startWall;		/* Unix time the run started. */
    int unsaved;		/* The profile in memory holds data that no
				 * save and no -db run has written (status
				 * "unsaved"). */
    int liveCommands;		/* The commands of commandTable that are
				 * not deleted. */
    Tcl_Command reloadCmd;	/* The hidden command that makes them again
				 * once they are all deleted, or NULL. */
    void (*stopProc)(CprofState *statePtr);
				/* Stops a run (cmdrun.c's CprofRunStop), for
				 * cmdrundb.c's exit flush, which sits below
				 * cmdrun.c. */

    /* Scope tree and process (cmdscope.c). */
    struct CprofSession *sessionPtr;
				/* The session this interpreter takes part
				 * in (as its owner or a member), or NULL. */
    int member;			/* Profiled by a session started in another
				 * interpreter (no command of its own
				 * started it). */
    int interpId;		/* Name id of its path from its thread's top
				 * interpreter, -1 for that one. */
    struct CprofInterp *nextMemberPtr;
				/* The session's members, linked. */
    Tcl_ThreadId thread;	/* The thread it lives in. */
    int rotating;		/* -history: a rotation is under way (the
				 * Tcl code it runs, joining threads'
				 * profiles, polls: nothing is done then). */
    int memberEpoch;		/* A member: the interval of the session
				 * its data belongs to (-history). */
    Tcl_Obj *(*rotateProc)(struct CprofInterp *ciPtr);
				/* -history of a run that takes in other
				 * threads (cmdscope.c): at the end of an
				 * interval, the members publish theirs, and
				 * the whole of the interval is returned
				 * (NULL: the run's own profile is the
				 * whole); or NULL. */
    Tcl_Obj *(*wholeProc)(struct CprofInterp *ciPtr);
				/* The whole profile of a run that took in
				 * other threads (cmdscope.c), for cmdrundb.c's
				 * last write, or NULL. Returns NULL when
				 * the run's own profile is the whole. */
    Tcl_Obj *topScriptObj;	/* The main script running below the next
				 * start (tclcprof::TopScript), or NULL. */

    /* tclcprof::serve (cmdserve.c). */
    Tcl_Obj *asideObj;		/* The program's latest profile, kept aside
				 * while the collector served a request:
				 * {status S ?data D? ?views {V D ...}?}, what
				 * status, data and save give instead of the
				 * collector's; NULL when none is. Dropped by
				 * the program's next start or reset. */
    int asideBypass;		/* The server's own reads (Aside bypass):
				 * the collector's, not the aside. */
    int injected;		/* The run was started by an injection
				 * (unix/remoteinject.c): meta "attach
				 * injected". */
} CprofInterp;

/*
 * The profile kept aside for the program, when status, data and save are
 * to give it (NULL: the collector's).
 */

#define CprofAside(ciPtr) \
    ((ciPtr)->asideBypass ? NULL : (ciPtr)->asideObj)

/*
 * cmdutil.c
 */

/*
 * Calls up within the command layer: what a lower file must ask of an
 * upper one, which it may not name (tools/objcycles would count a
 * circle). tclcprof.c, the layer's top, registers the table at load
 * (CprofCmdSetHooks), as cmdrun.c registers the level stack's hooks; the
 * table lives in cmdutil.c, the layer's bottom.
 */

typedef struct CprofCmdHooks {
    /* Asked by cmdscope.c, as interpreters are taken in and let go: */
    CprofInterp *(*interpFor)(Tcl_Interp *interp);
				/* tclcprof.c's CprofInterpFor: the state
				 * of an interpreter, made if new. */
    int (*startMember)(CprofInterp *ciPtr, const CprofOptions *optsPtr,
	    CprofInterp *ownerPtr, CprofInterp *hostPtr);
				/* cmdrun.c's CprofRunStartMember. */
    void (*stopMember)(CprofInterp *ciPtr);
				/* cmdrun.c's CprofRunStopMember. */
    /* Asked by cmdrundb.c, as -history starts a new interval: */
    void (*clearInterval)(CprofState *statePtr);
				/* cmdrun.c's CprofRunClearInterval. */
    void (*armDeadline)(CprofInterp *ciPtr);
				/* cmdrun.c's CprofRunArmDeadline. */
    /* Asked by cmdmeta.c, for the meta of a session's owner: */
    void (*scopeMeta)(CprofInterp *ciPtr, Tcl_Obj *metaObj);
				/* cmdscopedata.c's CprofScopeMeta. */
} CprofCmdHooks;

MODULE_SCOPE void	CprofCmdSetHooks(const CprofCmdHooks *hooksPtr);
MODULE_SCOPE const CprofCmdHooks *CprofCmdHooksGet(void);
MODULE_SCOPE Tcl_Obj *	CprofDictGet(Tcl_Obj *dictObj, const char *key);
MODULE_SCOPE Tcl_WideInt CprofDictGetWide(Tcl_Obj *dictObj, const char *key);
MODULE_SCOPE int	CprofStateError(Tcl_Interp *interp,
			    const char *message, const char *what);
MODULE_SCOPE int	CprofOptionIndex(Tcl_Interp *interp,
			    Tcl_Obj *nameObj, const char *const *table,
			    int *indexPtr);
MODULE_SCOPE int	CprofNoData(Tcl_Interp *interp);
MODULE_SCOPE int	CprofBadValue(Tcl_Interp *interp, const char *option,
			    Tcl_Obj *valueObj, const char *what);

/*
 * cmdoptions.c
 */

MODULE_SCOPE int	CprofRunClock(const CprofOptions *optsPtr);
MODULE_SCOPE int	CprofParseOptions(Tcl_Interp *interp, int objc,
			    Tcl_Obj *const objv[], CprofOptions *optsPtr,
			    Tcl_Obj **objs, int running, int *givenPtr);
MODULE_SCOPE int	CprofCheckModeOptions(Tcl_Interp *interp,
			    const CprofOptions *optsPtr, int given);
MODULE_SCOPE Tcl_Obj *	CprofOptionsDict(CprofInterp *ciPtr);
MODULE_SCOPE void	CprofSetObjs(Tcl_Obj **dest, Tcl_Obj *const *src);
MODULE_SCOPE Tcl_Obj *	CprofOptionValue(CprofInterp *ciPtr, int index);

/*
 * cmdrun.c
 */

MODULE_SCOPE void	CprofRunStop(CprofState *statePtr);
MODULE_SCOPE void	CprofRunStopByItself(CprofState *statePtr);
MODULE_SCOPE void	CprofRunDeadlineFree(CprofInterp *ciPtr);
MODULE_SCOPE void	CprofRunDeadlineStop(void);
MODULE_SCOPE void	CprofRunSetDeadline(CprofInterp *ciPtr,
			    double duration, uint64_t fromNs);
MODULE_SCOPE void	CprofRunStopSampling(CprofState *statePtr);
MODULE_SCOPE Tcl_ObjCmdProc CprofStartObjCmd;
MODULE_SCOPE Tcl_ObjCmdProc CprofTopScriptObjCmd;
MODULE_SCOPE Tcl_ObjCmdProc CprofRemoteStacksObjCmd;
MODULE_SCOPE Tcl_ObjCmdProc CprofRemoteInterruptObjCmd;
MODULE_SCOPE Tcl_ObjCmdProc CprofRemoteInjectObjCmd;
MODULE_SCOPE Tcl_ObjCmdProc CprofStopObjCmd;
MODULE_SCOPE Tcl_ObjCmdProc CprofPauseObjCmd;
MODULE_SCOPE Tcl_ObjCmdProc CprofResumeObjCmd;
MODULE_SCOPE Tcl_ObjCmdProc CprofResetObjCmd;
MODULE_SCOPE Tcl_ObjCmdProc CprofProfileObjCmd;
MODULE_SCOPE Tcl_ObjCmdProc CprofProfileNRCmd;
MODULE_SCOPE Tcl_ObjCmdProc CprofConfigureObjCmd;	/* cmdconfigure.c */

/*
 * cmdrundb.c
 */

MODULE_SCOPE int	CprofRunDbFlushMs(const CprofOptions *optsPtr);
MODULE_SCOPE Tcl_Obj *	CprofRunDbInfo(CprofInterp *ciPtr,
			    const CprofOptions *optsPtr, Tcl_Obj *const *objs,
			    Tcl_WideInt parentRun, double startWall);
MODULE_SCOPE void	CprofRunDbUpdatePolling(CprofInterp *ciPtr);
MODULE_SCOPE int	CprofRunDbOpen(CprofInterp *ciPtr, Tcl_Interp *interp,
			    const CprofOptions *optsPtr, Tcl_Obj *const *objs,
			    double startWall);
MODULE_SCOPE int	CprofRunHistoryOpen(CprofInterp *ciPtr,
			    Tcl_Interp *interp, const CprofOptions *optsPtr,
			    Tcl_Obj *const *objs, double startWall);
MODULE_SCOPE int	CprofRunDbFirstWaitMs(CprofInterp *ciPtr);
MODULE_SCOPE void	CprofRunClearInterval(CprofState *statePtr);
MODULE_SCOPE void	CprofRunArmDeadline(CprofInterp *ciPtr);
MODULE_SCOPE void	CprofRunDbDiscard(CprofInterp *ciPtr);
MODULE_SCOPE int	CprofRunDbFinish(CprofInterp *ciPtr, Tcl_Interp *interp,
			    int exiting);
MODULE_SCOPE void	CprofRunDbPoll(CprofInterp *ciPtr, uint64_t now);
MODULE_SCOPE void	CprofRunDbFlushTimerProc(ClientData clientData);

MODULE_SCOPE int	CprofRunStartMember(CprofInterp *ciPtr,
			    const CprofOptions *optsPtr, CprofInterp *ownerPtr,
			    CprofInterp *hostPtr);
MODULE_SCOPE void	CprofRunStopMember(CprofInterp *ciPtr);

/*
 * cmdscope.c
 */

typedef struct CprofSession CprofSession;

MODULE_SCOPE void *	CprofScopeListBelow(Tcl_Interp *interp);
MODULE_SCOPE int	CprofScopeBegin(CprofInterp *ciPtr, Tcl_Interp *interp,
			    void *below);
MODULE_SCOPE void	CprofScopeEnd(CprofInterp *ciPtr);
MODULE_SCOPE void	CprofScopeRelease(CprofInterp *ciPtr);
MODULE_SCOPE int	CprofScopeCheckStart(CprofInterp *ciPtr,
			    Tcl_Interp *interp, int scope);
MODULE_SCOPE void	CprofScopeMemberGone(CprofInterp *ciPtr);
MODULE_SCOPE int	CprofScopeStopping(CprofInterp *ciPtr);
MODULE_SCOPE int	CprofScopeIntervalAsked(CprofInterp *ciPtr);
MODULE_SCOPE void	CprofScopePublishInterval(CprofInterp *ciPtr);
MODULE_SCOPE Tcl_Obj *	CprofScopeProfile(CprofInterp *ciPtr,
			    Tcl_Obj *ownObj);
MODULE_SCOPE void	CprofScopeMeta(CprofInterp *ciPtr, Tcl_Obj *metaObj);
MODULE_SCOPE Tcl_ObjCmdProc CprofThreadnameObjCmd;
MODULE_SCOPE void	CprofScopeUnload(void);
MODULE_SCOPE void	CprofScopeHideThread(void);

/*
 * tclcprof.c
 */

MODULE_SCOPE CprofInterp *CprofInterpFor(Tcl_Interp *interp);

/*
 * cmdmeta.c
 */

MODULE_SCOPE Tcl_Obj *	CprofMetaDict(CprofInterp *ciPtr);
MODULE_SCOPE Tcl_Obj *	CprofSamplingDict(CprofState *statePtr);
MODULE_SCOPE Tcl_Obj *	CprofExactDict(CprofState *statePtr);
MODULE_SCOPE double	CprofSamplerSeconds(CprofSampler *sPtr);
MODULE_SCOPE Tcl_Obj *	CprofProfileValue(CprofInterp *ciPtr, int view,
			    int count);

/*
 * cmdstatus.c
 */

MODULE_SCOPE Tcl_ObjCmdProc CprofStatusObjCmd;
MODULE_SCOPE Tcl_ObjCmdProc CprofDataObjCmd;
MODULE_SCOPE Tcl_ObjCmdProc CprofSaveObjCmd;
MODULE_SCOPE Tcl_ObjCmdProc CprofRunsObjCmd;
MODULE_SCOPE Tcl_ObjCmdProc CprofStackObjCmd;

/*
 * cmdlayout.c, cmddebug.c
 */

MODULE_SCOPE Tcl_ObjCmdProc CprofLayoutObjCmd;
MODULE_SCOPE Tcl_ObjCmdProc CprofFlatSumsObjCmd;
MODULE_SCOPE Tcl_ObjCmdProc CprofDebugObjCmd;

/*
 * cmdserve.c
 */

MODULE_SCOPE Tcl_ObjCmdProc CprofServeSpawnObjCmd;
MODULE_SCOPE Tcl_ObjCmdProc CprofServeAsideObjCmd;
MODULE_SCOPE void	CprofServeAsideDrop(CprofInterp *ciPtr);
MODULE_SCOPE Tcl_Obj *	CprofServeAsideGet(CprofInterp *ciPtr,
			    const char *key);

#endif /* _CMDINT_H */
