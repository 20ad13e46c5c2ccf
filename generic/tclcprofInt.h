/*
 * tclcprofInt.h --
 *
 *	Declarations shared by the parts of tclcprof: the per-interpreter
 *	profiling state, the level stack of executing Tcl commands, naming,
 *	the capture, the sampler and what consumes them.
 *
 *	Everything declared here is expressed in public Tcl types. The
 *	units that read Tcl's private structures (tclInt.h, tclOOInt.h) are
 *	the ones that must: naming.c, capturelevels.c, the capture (capture.c,
 *	capturewrap.c, capturetrace.c, captureoomethods.c, captureevents.c,
 *	captureeventrecs.c);
 *	CprofCheckTclVersion refuses any Tcl but 8.6 at load.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _TCLCPROFINT_H
#define _TCLCPROFINT_H

#include <tcl.h>
#include <tclOO.h>
#include <stddef.h>
#include <limits.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/*
 * One source for Tcl 8.6 and Tcl 9.0.  Counts the Tcl API passes by
 * pointer are Tcl_Size (ptrdiff_t) in Tcl 9, int in 8.6, whose tcl.h has
 * no Tcl_Size.  Two names Tcl 9 changed keep their 8.6 spelling in our
 * sources (the macros expand where they are used, after tclInt.h).
 */

#ifndef TCL_SIZE_MAX
typedef int Tcl_Size;
#   define TCL_SIZE_MAX INT_MAX
#   define TCL_SIZE_MODIFIER ""
#endif
#if TCL_MAJOR_VERSION >= 9
#   define CMD_IS_DELETED CMD_DYING	/* Command.flags bit. */
#   define tcl_CreateSlave tcl_CreateChild	/* TclStubs member (97). */
#endif

#ifndef MODULE_SCOPE
#   define MODULE_SCOPE extern __attribute__((__visibility__("hidden")))
#endif

#ifndef INT2PTR
#   define INT2PTR(p) ((void *)(intptr_t)(p))
#   define PTR2INT(p) ((int)(intptr_t)(p))
#endif

typedef struct CprofSymbolizer CprofSymbolizer;

#ifndef PACKAGE_VERSION
#   define PACKAGE_VERSION "0.1"
#endif

/*
 * Kinds of tracked Tcl frames. The kind is fixed when the command's name is
 * interned and tells reports how to show and group the frame.
 */

enum CprofFrameKind {
    CPROF_KIND_PROC = 0,	/* A proc (or lambda run by apply's body). */
    CPROF_KIND_CMD,		/* A command implemented in C. */
    CPROF_KIND_ENSEMBLE,	/* An ensemble or one of its subcommands. */
    CPROF_KIND_METHOD,		/* A TclOO method call on an object. */
    CPROF_KIND_CONTROL,		/* A control command that adds nothing when
				 * traced (if, foreach, catch, ...). */
    CPROF_KIND_EVENT,		/* An event handler run by the event loop
				 * (captureevents.c): "after ::h::work". */
    CPROF_KIND_IDLE,		/* Time the event loop waited in the
				 * notifier: "[idle]". */
    CPROF_KIND_COUNT
};

/*
 * Frame flags.
 */

#define CPROF_FRAME_FOLD	0x1	/* An ensemble frame whose implementation
				 * command has not been entered yet: that
				 * enter is folded into this frame. */
#define CPROF_FRAME_RESTORED	0x2	/* Restored from a suspended coroutine. */
#define CPROF_FRAME_METHOD	0x4	/* A TclOO method's frame, pushed when its
				 * body starts (captureoomethods.c), at the level
				 * of the command that runs it. */
#define CPROF_FRAME_HIDDEN	0x8	/* Excluded (-include/-exclude) or a
				 * control command with -control 0: not a
				 * node of its own; its time goes to its
				 * caller. */
#define CPROF_FRAME_OWN		0x10	/* One of tclcprof's own commands:
				 * always hidden. */
#define CPROF_FRAME_OBJCMD	0x20	/* An object's command whose method has
				 * not started yet: the method's frame is
				 * this one (the method capture claims
				 * it). */
#define CPROF_FRAME_RESUME	0x40	/* A coroutine's command resuming it,
				 * pushed by the capture when the
				 * coroutine starts running. */
#define CPROF_FRAME_LAZY	0x80	/* Popped only when a later frame is
				 * pushed at its level or below (its call
				 * may have completed already; readers
				 * leave out frames above Tcl's current
				 * level). */
#define CPROF_FRAME_LOOP	0x100	/* A command that runs the event loop
				 * (vwait, update, tkwait...): the frames
				 * pushed right above it may be handlers
				 * (captureevents.c). */
#define CPROF_FRAME_EVENT	0x200	/* An event handler's frame (kind
				 * event), pushed by captureevents.c at the level
				 * of the handler's commands, which are
				 * pushed above it (not in its place);
				 * ended by the next handler, the loop's
				 * next wait, or the loop's end. */
#define CPROF_FRAME_IDLE	0x400	/* The loop's wait in the notifier (kind
				 * idle), at the loop's level: exact timing
				 * only. */
#define CPROF_FRAME_SCRIPT	0x800	/* The top level of the main script,
				 * running when profiling started (level
				 * 0, below its commands): not a
				 * command. */
#define CPROF_FRAME_ABOVE	(CPROF_FRAME_EVENT | CPROF_FRAME_IDLE)
				/* Frames that do not pop those at their
				 * level below them (a loop's), nor are
				 * popped by those pushed at their level
				 * (a handler's commands). */
#define CPROF_FRAME_SYNTH	(CPROF_FRAME_METHOD | CPROF_FRAME_ABOVE \
				| CPROF_FRAME_SCRIPT)
				/* Frames that are not commands: only the
				 * wrapper's stack has them (-capture
				 * check compares without them). */

/*
 * One tracked Tcl frame. Readers outside normal context (the sampler's
 * signal handler) may copy nameId, level and anchor; nothing else.
 */

typedef struct CprofFrame {
    int nameId;			/* Interned display name (CprofNameString). */
    int level;			/* Tcl's command nesting level at enter. */
    uintptr_t anchor;		/* Stack pointer of the native trampoline
				 * frame that runs this command, or 0 when
				 * calibration failed. */
    void *envPtr;		/* Execution environment (Tcl's ExecEnv) the
				 * command was entered in; identifies the
				 * coroutine it belongs to. Never
				 * dereferenced after the enter. */
    void *corPtr;		/* The coroutine owning envPtr, or NULL. Used
				 * only as a key. */
    Tcl_Command token;		/* The command; a key only, never
				 * dereferenced after the enter. */
    void *objKey;		/* OBJCMD and METHOD frames: the TclOO
				 * object; RESUME frames: the coroutine. A
				 * key only, unset in other frames. */
    const void *methodKey;	/* OBJCMD frames: the Method the call
				 * reaches first, or NULL (a key only). */
    const void *siteCode;	/* Sampled lines (lvPtr->sampleSites): the
				 * ByteCode the command was invoked from
				 * (its caller's command frame at the
				 * push), or NULL. A key only: the drain
				 * checks it is a live ByteCode first. */
    int siteOffset;		/* ... and that call's pc, as an offset
				 * from siteCode. */
    uint64_t serial;		/* Unique per push (CprofLevelsLeave). */
    unsigned short kind;	/* enum CprofFrameKind. */
    unsigned short flags;	/* CPROF_FRAME_* bits. */

    /*
     * Exact timing (exact.c), while it is on. A frame is timed in
     * segments: one from its enter to its leave, or, for the frames of a
     * coroutine, one per run between a resume and a yield.
     */

    int node;			/* Exact call-tree node; for a hidden frame,
				 * the node of its nearest shown caller. */
    int lineRec;		/* Call-site record (-lines), or -1. */
    uint64_t enterNs;		/* Start of the current segment. */
    uint64_t enterSeq;		/* Among the frames of the thread's peers
				 * (exact.c, PeerParent): the order in which
				 * the current segment started (0: no
				 * peers), on no clock. */
    int64_t childNs;		/* Compensated time of completed callees
				 * in the current segment. */
    int64_t callNs;		/* Compensated time of earlier segments. */
    uint64_t desc;		/* Calls completed below this frame in the
				 * current segment (for compensation). */
    int eventIndex;		/* Its enter event (-events), or -1. */
} CprofFrame;

/*
 * The level stack: a vector of frames, innermost last. The frame array is
 * replaced, never realloc'd in place, when it grows: the old array is kept
 * on a retired list until profiling stops, so that a concurrent reader that
 * loaded the old pointer never reads freed memory.
 */

typedef struct CprofRetired {
    struct CprofRetired *nextPtr;
} CprofRetired;

typedef struct CprofStack {
    CprofFrame *frames;		/* Current array. */
    volatile int depth;		/* Number of valid frames. */
    int capacity;		/* Allocated frames in 'frames'. */
    CprofRetired *retired;	/* Replaced arrays awaiting release. */
    int maxDepth;		/* Deepest the stack has been. */
} CprofStack;

/*
 * Counters of a level stack, reported by status.
 */

typedef struct CprofCounters {
    Tcl_WideInt enters;		/* Frames pushed. */
    Tcl_WideInt leaves;		/* Frames popped at their leave. */
    Tcl_WideInt strayLeaves;	/* Leaves with no matching frame. */
    Tcl_WideInt missingLeaves;	/* Frames popped without their leave. */
    Tcl_WideInt folded;		/* Ensemble implementation enters folded. */
    Tcl_WideInt coroSaves;	/* Coroutine frame sets saved at a yield. */
    Tcl_WideInt coroRestores;	/* ... and restored at a resume. */
    Tcl_WideInt methodFrames;	/* Method frames pushed by the method
				 * capture (not claimed from an object
				 * command's frame). */
} CprofCounters;

/*
 * Naming (naming.c): what users see frames called.
 *
 * Names are interned in a process-wide table and used by id. An id lives
 * while a holder holds it (or forever, if pinned: CprofNameIntern). A
 * holder is a set of ids, one per structure that keeps ids: the naming
 * caches of an interpreter, a call tree, exact timing's records, event
 * handlers' records and statistics. Each takes the ids it stores
 * (CprofNameHold, CprofNameInternIn) and lets go of all of them when its
 * contents go (CprofNameRelease). Only the structure's own thread uses a
 * holder.
 */

typedef struct CprofNameRefs {
    uint64_t *bits;		/* Bit per id held, or NULL. */
    int numWords;
    int count;			/* Ids held. */
} CprofNameRefs;

MODULE_SCOPE void	CprofNameHoldSlow(CprofNameRefs *refsPtr, int id);

/*
 * Set while an injection (unix/remoteinject.c, Tclcprof_Inject) evaluates
 * its request: a run started then is marked "attach injected".
 */

MODULE_SCOPE int	cprofInjecting;

/*
 * Take an id (a no-op for an id held already, or -1).
 */

static inline void
CprofNameHold(
    CprofNameRefs *refsPtr,
    int id)
{
    if (id >= 0 && ((id >> 6) >= refsPtr->numWords
	    || !(refsPtr->bits[id >> 6] & ((uint64_t) 1 << (id & 63))))) {
	CprofNameHoldSlow(refsPtr, id);
    }
}

#define CPROF_FRONT_SIZE 256

/*
 * Addresses Tcl does not export that the capture recognises commands and
 * methods by, learned once per process (CprofProbeInternals).
 */

typedef struct CprofTclInternals {
    Tcl_ObjCmdProc *ooPublicObjProc;	/* TclOO object commands. */
    Tcl_ObjCmdProc *ooPrivateObjProc;	/* Their "my". */
    Tcl_ObjCmdProc *coroNreProc;	/* Coroutine commands. */
    Tcl_ObjCmdProc *unloadObjProc;	/* [unload]. */
    Tcl_ObjCmdProc *coroCreateNreProc;	/* [coroutine]. */
    Tcl_ObjCmdProc *ooNextNreProc;	/* TclOO's [next] and [nextto] (NRE
					 * only): the */
    Tcl_ObjCmdProc *ooNextToNreProc;	/* method they go on to has a frame;
					 * they have none, compiled or not. */
    const void *procMethodType;		/* Procedure-bodied methods'
					 * Tcl_MethodType. */
    Tcl_ObjCmdProc *cmd2ObjProc;	/* Tcl 9: the objProc every command
					 * made with Tcl_CreateObjCommand2
					 * shares (CmdWrapperProc). */
} CprofTclInternals;

/*
 * A command's name as the capture needs it.
 */

#define CPROF_NAME_ENSEMBLE	0x1	/* An ensemble: folded with the
					 * implementation it dispatches to. */
#define CPROF_NAME_OBJECT	0x2	/* A TclOO object's command (or "my"):
					 * named by the method called. */
#define CPROF_NAME_COROUTINE	0x4	/* A coroutine's command. */
#define CPROF_NAME_OWN		0x8	/* tclcprof's own (::tclcprof
					 * ensemble or ::tclcprof::*). */
#define CPROF_NAME_IMPORTED	0x10	/* Imported: what runs is the original,
					 * whose name this is. */
#define CPROF_NAME_SUBCMD	0x20	/* A C command named with its first
					 * argument, "db eval" (-subcommands). */
#define CPROF_NAME_SCRIPT	0x40	/* source: named for the script it
					 * runs, "<script app.tcl>". */
#define CPROF_NAME_LOOP		0x80	/* Runs the event loop: vwait,
					 * update, tkwait, event (generate),
					 * thread::wait, thread::send. */
#define CPROF_NAME_ROLE_MASK	0x700	/* Schedules handlers (captureevents.c): */
#define CPROF_NAME_ROLE_SHIFT	8
#define CPROF_ROLE_AFTER	1	/* after */
#define CPROF_ROLE_FILEEVENT	2	/* fileevent, chan event */
#define CPROF_ROLE_CLOSE	3	/* close, chan close */
#define CPROF_ROLE_BIND		4	/* Tk's bind */
#define CPROF_ROLE_INTERP	5	/* interp (cmdscope.c: children) */
#define CprofNameRole(flags) \
    (((flags) & CPROF_NAME_ROLE_MASK) >> CPROF_NAME_ROLE_SHIFT)

typedef struct CprofCmdName {
    int nameId;
    unsigned short kind;	/* enum CprofFrameKind. */
    unsigned short flags;	/* CPROF_NAME_* bits. */
} CprofCmdName;

/*
 * The naming caches of an interpreter.
 */

struct CprofMethodFront {
    const void *objPtr;		/* The object, for per-object methods;
				 * else NULL. */
    const void *clsPtr;		/* Its class. */
    const void *nameObj;	/* The method name's Tcl_Obj (a key only;
				 * the name is compared too). */
    const void *method;		/* The Method the call reaches first, or
				 * NULL (a key only). */
    uint64_t epoch;		/* The object's creation epoch (its
				 * address may be another object's later)
				 * and epoch, or 0. */
    int nameId;			/* -1: empty slot. */
    int len;
    char name[36];		/* The method's name. */
};

struct CprofContextFront {
    const void *mPtr;		/* A running method's record (a key). */
    const void *namePtr;	/* Its name object and declarer when */
    const void *declPtr;	/* named (with the creation epoch of an */
    int creation;		/* object that declares it), and */
    int flags;			/* constructor or destructor. */
    int nameId;			/* -1: empty slot. */
};

typedef struct CprofNaming {
    Tcl_Interp *interp;
    const CprofTclInternals *internals;
    CprofNameRefs refs;		/* The names given out since the caches
				 * were last cleared: frames on the level
				 * stack, in the sampler's ring, in the
				 * capture's records use them. */
    Tcl_HashTable cmdCache;	/* Command* -> cached name. */
    void *cmdFront[CPROF_FRONT_SIZE];
				/* Direct-mapped front of cmdCache. */
    Tcl_HashTable pairCache;	/* (ensemble, implementation) -> name id. */
    Tcl_HashTable methodCache;	/* "class method" key -> name id. */
    struct CprofMethodFront methodFront[CPROF_FRONT_SIZE];
				/* Direct-mapped front of methodCache, for
				 * names of up to 35 bytes. */
    Tcl_HashTable contextCache;	/* Method* -> name of the running method. */
    struct CprofContextFront contextFront[CPROF_FRONT_SIZE];
				/* Direct-mapped front of contextCache. */
    int methodEpoch;		/* TclOO epoch the method caches belong
				 * to. */
    Tcl_Obj *subcmdPatterns;	/* -subcommands of the run, or NULL. */
    int instances;		/* -instances of the run: names keep the
				 * instance part of per-instance commands. */
    Tcl_HashTable instCache;	/* Instance-free name -> the objProc that
				 * first had it (CprofNameInstanceFree). */
    struct CprofSubFront {
	int baseId;		/* The command's name id; -1: empty. */
	const void *argObj;	/* The subcommand's Tcl_Obj (a key only;
				 * the string is compared too). */
	int len;
	char arg[28];
	int nameId;		/* "cmd sub". */
    } subFront[CPROF_FRONT_SIZE];
				/* Direct-mapped cache of those names. */
    Tcl_HashTable coroCache;	/* Body name id -> "<coroutine body>". */
    struct CprofCoroFront {
	int bodyId;		/* -1: empty. */
	int nameId;
    } coroFront[64];		/* Direct-mapped front of coroCache. */
} CprofNaming;

MODULE_SCOPE int	CprofCheckTclVersion(Tcl_Interp *interp);

/*
 * Labels (cmdlabels.c; a thread's table and its lookup: capturelabels.c).
 */

typedef struct CprofLabelThread CprofLabelThread;
MODULE_SCOPE CprofLabelThread *CprofLabelsThread(void);
MODULE_SCOPE int	CprofLabelsNow(const CprofLabelThread *ltPtr);
MODULE_SCOPE const char *CprofLabelsString(int id);
MODULE_SCOPE Tcl_Obj *	CprofLabelsDict(int id);
MODULE_SCOPE const void *CprofLabelsApi(void);
MODULE_SCOPE Tcl_Obj *	CprofLabelsStatus(void);
MODULE_SCOPE Tcl_ObjCmdProc CprofLabelObjCmd;
MODULE_SCOPE Tcl_ObjCmdProc CprofLabelNRCmd;
MODULE_SCOPE void	CprofWrongArgs(Tcl_Interp *interp, int objc,
			    Tcl_Obj *const objv[], const char *message);
MODULE_SCOPE const CprofTclInternals *CprofProbeInternals(
			    Tcl_Interp *interp);
MODULE_SCOPE int	CprofNameIntern(const char *name, int length);
MODULE_SCOPE int	CprofNameIsControl(const char *fullName);
MODULE_SCOPE int	CprofNameInternIn(CprofNameRefs *refsPtr,
			    const char *name, int length);
MODULE_SCOPE void	CprofNameRelease(CprofNameRefs *refsPtr);
MODULE_SCOPE const char *CprofNameString(int id);
MODULE_SCOPE int	CprofNameWithOrigin(CprofNameRefs *refsPtr,
			    int nameId, int originId);
MODULE_SCOPE int	CprofNameOrigin(int id);
MODULE_SCOPE int	CprofNameCount(void);
MODULE_SCOPE unsigned	CprofNameGeneration(void);
MODULE_SCOPE Tcl_Obj *	CprofNameList(const char *pattern);
MODULE_SCOPE const char *CprofKindName(int kind);
MODULE_SCOPE const char *CprofHandlerKindName(int kind);
MODULE_SCOPE void	CprofNamingInit(CprofNaming *nPtr, Tcl_Interp *interp);
MODULE_SCOPE void	CprofNamingClear(CprofNaming *nPtr);
MODULE_SCOPE void	CprofNamingFree(CprofNaming *nPtr);
MODULE_SCOPE void	CprofNameCommandUncached(CprofNaming *nPtr,
			    Tcl_Command token, CprofCmdName *namePtr);
MODULE_SCOPE const CprofCmdName *CprofNameCommand(CprofNaming *nPtr,
			    Tcl_Command token);
MODULE_SCOPE int	CprofNameMethodCall(CprofNaming *nPtr,
			    Tcl_Command token, int objc,
			    Tcl_Obj *const objv[], int *freshPtr,
			    const void **methodPtrPtr);
MODULE_SCOPE int	CprofNameMethod(CprofNaming *nPtr,
			    Tcl_ObjectContext context);
MODULE_SCOPE void	CprofNamingSetSubcommands(CprofNaming *nPtr,
			    Tcl_Obj *patternsObj);
MODULE_SCOPE void	CprofNamingSetInstances(CprofNaming *nPtr,
			    int instances);
MODULE_SCOPE int	CprofInstanceStart(const char *name, int length,
			    int channel);
MODULE_SCOPE const char *CprofChannelShown(CprofNaming *nPtr,
			    const char *chanName, Tcl_DString *dsPtr);
MODULE_SCOPE int	CprofNameArgument(CprofNaming *nPtr,
			    const CprofCmdName *namePtr, int objc,
			    Tcl_Obj *const objv[]);
MODULE_SCOPE int	CprofNameMethodRecord(CprofNaming *nPtr,
			    void *methodPtr, int flags);
MODULE_SCOPE int	CprofNameFold(CprofNaming *nPtr, int ensNameId,
			    Tcl_Command ensToken, Tcl_Command implToken);
MODULE_SCOPE int	CprofNameCoroutine(CprofNaming *nPtr, int bodyId);
MODULE_SCOPE int	CprofNameScript(CprofNaming *nPtr, const char *path);
MODULE_SCOPE Tcl_Obj *	CprofDefinedProcs(Tcl_Interp *interp);

/*
 * Call sites (naming.c, from Tcl's command frames): where the command
 * being entered was invoked, as a key (a ByteCode and a pc offset, or a
 * source path object and a line), resolved to a file and line when first
 * seen. The key's object is held (so that its address is not reused)
 * until CprofReleaseSiteKey.
 */

#define CPROF_SITE_NONE		0
#define CPROF_SITE_BYTECODE	1
#define CPROF_SITE_SOURCE	2

MODULE_SCOPE int	CprofSiteKey(Tcl_Interp *interp, void **ptrPtr,
			    int *offsetPtr);
MODULE_SCOPE int	CprofResolveSite(Tcl_Interp *interp,
			    CprofNameRefs *refsPtr, int siteKind,
			    void *sitePtr, int siteOffset, int *fileIdPtr,
			    int *linePtr);
MODULE_SCOPE void	CprofHoldSiteKey(int siteKind, void *sitePtr);
MODULE_SCOPE void	CprofReleaseSiteKey(int siteKind, void *sitePtr);

/*
 * The level stack (capturelevels.c). Its consumers hear of its changes
 * through hooks registered by the layer above; 'data' is theirs.
 */

typedef struct CprofLevelHooks {
    void (*enter)(void *data, CprofFrame *framePtr, CprofFrame *parentPtr,
	    int siteKind, void *sitePtr, int siteOffset);
				/* A frame was pushed (timing on). */
    void (*rename)(void *data, CprofFrame *framePtr, CprofFrame *parentPtr,
	    int oldNameId);	/* A frame was named anew (timing on). */
    uint64_t (*leave)(void *data, int index);
				/* The frame at 'index' is about to be
				 * popped (timing on). Returns its time if
				 * it was a slow call, else 0. */
    void (*slow)(void *data, int index, uint64_t ns);
				/* After the pop of a slow call: may run Tcl
				 * code. */
    void (*suspend)(void *data, int first, int count);
    void (*resume)(void *data, int first, int count, uint64_t suspendedNs);
    void (*dropSuspended)(void *data, const CprofFrame *frames, int count,
	    uint64_t suspendedNs);
				/* A coroutine's frames: saved, restored,
				 * dropped while saved (timing on). */
    uint64_t (*now)(void *data);/* The timing clock. */
    int (*hidden)(void *data, int nameId, int kind);
				/* Whether frames of this name are hidden
				 * (-include/-exclude; filtering on). */
    void (*drain)(void *data);	/* The sampler's ring wants draining. */
} CprofLevelHooks;

/*
 * A capture that can run code when a coroutine is resumed (the wrapper)
 * keeps the frames of a suspended coroutine in a suspension record it is
 * told about: it resumes or drops the record from a callback of its own.
 */

typedef struct CprofSuspension CprofSuspension;

typedef struct CprofCoroCallbacks {
    void (*suspended)(void *data, CprofSuspension *recPtr, void *corKey);
				/* A coroutine's frames were saved. */
    void (*gone)(void *data, CprofSuspension *recPtr);
				/* The stack is cleared: the record goes
				 * with the rest. */
    CprofSuspension *(*find)(void *data, void *corKey);
				/* The record of a suspended coroutine, or
				 * NULL. */
} CprofCoroCallbacks;

typedef struct CprofLevels {
    CprofStack stack;
    CprofCounters counters;
    Tcl_HashTable coroSaved;	/* Without coroutine callbacks:
				 * CoroutineData* -> saved frames. */
    CprofSuspension *suspensions;
				/* With them: the records of suspended
				 * coroutines. */
    uint64_t serial;		/* Serial of the last frame pushed. */
    Tcl_Interp *interp;
    CprofNaming *namingPtr;
    int deleting;		/* The interpreter is being deleted. */
    int quiet;			/* Push nothing (the profiler runs Tcl code
				 * of its own: a slow-call report). */

    /* Consumers (NULL hooks for a stack nobody consumes). */
    const CprofLevelHooks *hooks;
    void *hookData;
    int timing;			/* Call enter/leave/suspend/resume... */
    int filtering;		/* Call hidden. */
    volatile int *needDrainPtr;	/* The sampler's flag, or NULL. */
    int sites;			/* Timing wants call sites (-lines). */
    int sampleSites;		/* Sampling wants each frame's call site
				 * (CprofFrame.siteCode: -lines 1 in a
				 * sampled mode). */
    int plain;			/* None of filtering, quiet, sites: the
				 * inline fast paths apply (kept by
				 * CprofLevelsRecheck). */
    int rootEvents;		/* A command pushed on an empty stack may
				 * start an event handler (captureevents.c knows
				 * handlers that may run): the fast path
				 * leaves it to the capture's slow path. */
    void *rootNoEvent;		/* The command frame of the script last
				 * found to be no handler there, until the
				 * event loop waits or handlers change (a
				 * key only), or NULL. */

    /* The capture's coroutine callbacks, or NULL. */
    const CprofCoroCallbacks *coroCbPtr;
    void *coroData;
} CprofLevels;

/*
 * What a capture tells the level stack about a frame to push.
 */

typedef struct CprofEntry {
    int nameId;
    unsigned short kind;	/* enum CprofFrameKind. */
    unsigned short flags;	/* CPROF_FRAME_OWN, _FOLD, _OBJCMD, _METHOD,
				 * _RESUME. */
    int level;			/* Tcl's nesting level. */
    uintptr_t anchor;		/* Its trampoline's stack pointer, or 0. */
    Tcl_Command token;
    void *objKey;
    const void *methodKey;
    void *envPtr;		/* Its execution environment, or NULL for
				 * the current one. */
    int siteKind;		/* Where it was invoked (exact -lines). */
    void *sitePtr;
    int siteOffset;
} CprofEntry;

MODULE_SCOPE void	CprofLevelsInit(CprofLevels *lvPtr,
			    Tcl_Interp *interp, CprofNaming *namingPtr);
MODULE_SCOPE void	CprofLevelsClear(CprofLevels *lvPtr);
MODULE_SCOPE void	CprofLevelsRecheck(CprofLevels *lvPtr);
MODULE_SCOPE void	CprofLevelsFree(CprofLevels *lvPtr);
MODULE_SCOPE CprofFrame *CprofLevelsEnter(CprofLevels *lvPtr,
			    const CprofEntry *entryPtr);
MODULE_SCOPE void	CprofLevelsRename(CprofLevels *lvPtr, int index,
			    int oldNameId);
MODULE_SCOPE int	CprofLevelsLeave(CprofLevels *lvPtr, uint64_t serial);
MODULE_SCOPE void	CprofLevelsLeaveLevel(CprofLevels *lvPtr, int level);
MODULE_SCOPE void	CprofLevelsSettle(CprofLevels *lvPtr);
MODULE_SCOPE void	CprofLevelsPopLazy(CprofLevels *lvPtr, int keep);
MODULE_SCOPE void	CprofLevelsEndEvents(CprofLevels *lvPtr, int level,
			    void *envPtr, void (*endedProc)(void *data,
			    CprofFrame *framePtr), void *data);
MODULE_SCOPE int	CprofLevelsBelow(CprofLevels *lvPtr, int level,
			    void *envPtr);
MODULE_SCOPE int	CprofLevelsResume(CprofLevels *lvPtr, void *corKey,
			    int baseLevel, uintptr_t anchor);
MODULE_SCOPE void	CprofLevelsResumeSuspension(CprofLevels *lvPtr,
			    CprofSuspension *recPtr, int baseLevel,
			    uintptr_t anchor);
MODULE_SCOPE void	CprofLevelsDropSuspension(CprofLevels *lvPtr,
			    CprofSuspension *recPtr);
MODULE_SCOPE int	CprofLevelsSeedSuspension(CprofLevels *lvPtr,
			    void *corKey, void *envPtr,
			    const CprofEntry *entries, int n,
			    uint64_t *serials);
MODULE_SCOPE int	CprofLevelsSeedSaved(CprofLevels *lvPtr,
			    void *corKey, void *envPtr,
			    const CprofEntry *entries, int n,
			    uint64_t *serials);
MODULE_SCOPE void **	CprofSuspensionData(CprofSuspension *recPtr);
MODULE_SCOPE int	CprofLevelsCoroutineBody(CprofLevels *lvPtr,
			    void *corKey, CprofSuspension *recPtr);
MODULE_SCOPE void	CprofLevelsPushScript(CprofLevels *lvPtr,
			    int nameId, uintptr_t anchor);
MODULE_SCOPE void	CprofLevelsEndScript(CprofLevels *lvPtr);
MODULE_SCOPE int	CprofLevelsLiveDepth(CprofLevels *lvPtr);
MODULE_SCOPE void	CprofLevelsForgetSaved(CprofLevels *lvPtr,
			    uint64_t now);
MODULE_SCOPE void	CprofLevelsDropSaved(CprofLevels *lvPtr,
			    uint64_t now);
MODULE_SCOPE void	CprofLevelsCoroutines(CprofLevels *lvPtr,
			    void (*proc)(void *corKey, int saved, void *data),
			    void *data);
MODULE_SCOPE const Tcl_Size *CprofNumLevelsPtr(Tcl_Interp *interp);

/*
 * Profiling modes.
 */

enum CprofMode {
    CPROF_MODE_SAMPLE = 0,	/* Timer-signal sampling (the default). */
    CPROF_MODE_STACK,		/* Track the level stack only. */
    CPROF_MODE_EXACT,		/* Time every traced command. */
    CPROF_MODE_BOTH,		/* Sampling and exact timing together. */
    CPROF_MODE_COVERAGE,	/* Which commands and lines ran. */
    CPROF_MODE_MEMORY		/* Allocations sampled by bytes (drainmemory.c);
				 * with time samples: mode sample and the
				 * options' 'memory'. */
};

#define CprofModeSamples(m) \
    ((m) == CPROF_MODE_SAMPLE || (m) == CPROF_MODE_BOTH)
#define CprofUsesFrames(optsPtr) \
    ((optsPtr)->capture == CPROF_CAPTURE_FRAMES \
	&& ((optsPtr)->mode == CPROF_MODE_SAMPLE \
	|| (optsPtr)->mode == CPROF_MODE_MEMORY))
#define CprofChecksFrames(optsPtr) \
    ((optsPtr)->capture == CPROF_CAPTURE_CHECK \
	&& (optsPtr)->mode == CPROF_MODE_SAMPLE)
#define CprofModeExact(m) \
    ((m) == CPROF_MODE_EXACT || (m) == CPROF_MODE_BOTH)

enum CprofClock {
    CPROF_CLOCK_CPU = 0,	/* The thread's CPU time. */
    CPROF_CLOCK_WALL,		/* Elapsed time, blocked time included. */
    CPROF_CLOCK_AUTO		/* cpu for sampling, wall for exact timing
				 * (options only; never a run's clock). */
};

enum CprofNative {
    CPROF_NATIVE_USER = 0,	/* C frames outside libtcl. */
    CPROF_NATIVE_ALL,		/* Every C frame. */
    CPROF_NATIVE_NONE		/* Tcl frames only. */
};

/*
 * Options of start/configure.
 */

enum CprofCaptureKind {
    CPROF_CAPTURE_WRAP = 0,	/* Wrapping commands (capturewrap.c). */
    CPROF_CAPTURE_TRACE,	/* Tcl's object trace (capturetrace.c). */
    CPROF_CAPTURE_CHECK,	/* Both, compared (capture.c). */
    CPROF_CAPTURE_FRAMES	/* Tcl's own frames read at each sample
				 * (captureframes.c): no hook per command. */
};

enum CprofScope {
    CPROF_SCOPE_INTERP = 0,	/* The interpreter that starts. */
    CPROF_SCOPE_TREE,		/* ... and every interpreter below it. */
    CPROF_SCOPE_PROCESS		/* Every interpreter of every thread. */
};

typedef struct CprofOptions {
    int mode;			/* enum CprofMode. */
    int scope;			/* enum CprofScope. */
    int capture;		/* enum CprofCaptureKind: frames by default
				 * (used by modes sample and memory). */
    int captureAsked;		/* -capture was given: a run that cannot
				 * use it says why (else frames, the
				 * default, silently gives way to wrap in
				 * the modes that time calls). */
    int clock;			/* enum CprofClock. */
    int native;			/* enum CprofNative. */
    int control;		/* Keep control commands (if, foreach...). */
    int instances;		/* Name per-instance commands and channels
				 * with their instance (naming.c). */
    double rate;		/* Requested samples per second; 0: default
				 * of the clock. */
    int lines;			/* Per call-site records (exact, coverage). */
    int seed;			/* -seed: the frames running at start go on
				 * the stack (captureseed.c). */
    int compensate;		/* Subtract the profiler's own cost. */
    int events;			/* Record enter/leave events (exact). */
    int eventLimit;		/* Most events kept. */
    double duration;		/* Seconds after which the run stops; 0:
				 * none. */
    double slowMs;		/* Slow-call threshold in ms; 0: none. */
    int commit;			/* -db: 0 staged, 1 direct. */
    int flushMs;		/* -db: ms between flushes; 0: default of
				 * the commit mode. */
    double everySec;		/* -history: seconds a file covers; 0:
				 * default. */
    int keep;			/* -history: files kept at most; 0: all. */
    double keepHours;		/* -history: hours a file is kept at most;
				 * 0: no limit. */
    int memory;			/* Memory samples (mode memory, or mode
				 * sample with -mode {sample memory}). */
    Tcl_WideInt memRate;	/* -memrate: mean bytes between memory
				 * samples. */
} CprofOptions;

/*
 * One Tcl frame as copied by the signal handler.
 */

#define CPROF_SITE_OFFSET_MAX	0xffffff
#define CPROF_REF_CURRENT	0x1	/* The frame is at its interpreter's
					 * current level: the bytecode running
					 * there is its (or runs in it without
					 * a frame of its own). */

typedef struct CprofTclRef {
    int nameId;
    unsigned kind : 4;		/* enum CprofFrameKind. */
    unsigned flags : 4;		/* CPROF_FRAME_HIDDEN, from the frame, and
				 * CPROF_REF_CURRENT. */
    unsigned siteOffset : 24;	/* Sampled lines: the frame's siteOffset,
				 * or 0 (none, or beyond
				 * CPROF_SITE_OFFSET_MAX). */
    int node;			/* Exact call-tree node (mode both), or
				 * -1. */
    int interpId;		/* Its interpreter (CprofFrameDef). */
    uintptr_t anchor;
    const void *siteCode;	/* Sampled lines: the frame's siteCode (a
				 * key, never dereferenced before the drain
				 * finds it live), or NULL. */
    const void *ident;		/* -capture frames, a raw reference
				 * (captureframes.h): a field of the object read
				 * at the sample, checked at the drain. */
} CprofTclRef;

typedef char CprofTclRefBits[(CPROF_KIND_COUNT <= 16
	&& CPROF_FRAME_HIDDEN < 16 && CPROF_FRAME_HIDDEN != CPROF_REF_CURRENT)
	? 1 : -1];

/*
 * A raw sample, written by the signal handler into a preallocated ring
 * slot. Native frames are innermost first, as unwound; Tcl frames
 * outermost first, as on the level stack.
 */

#define CPROF_NATIVE_MAX	128
#define CPROF_TCL_MAX		128
#if defined(__aarch64__)
#   define CPROF_PC_CANDIDATES	40	/* x0-x28 and 8 stack words (arch.h). */
#else
#   define CPROF_PC_CANDIDATES	24
#endif

#define CPROF_SAMPLE_NATIVE_TRUNC	0x1
#define CPROF_SAMPLE_TCL_TRUNC		0x2
#define CPROF_SAMPLE_NO_SIGFRAME	0x4	/* Interrupted frame not found:
						 * frames kept from the handler
						 * on. */
#define CPROF_SAMPLE_CHECKED		0x8	/* -capture check: 'check'
						 * holds the two stacks'
						 * hashes. */
#define CPROF_SAMPLE_RAW		0x10	/* -capture frames: tcl[]
						 * holds raw references,
						 * named at the drain
						 * (captureframes.c). */
#define CPROF_SAMPLE_SPAN		0x40	/* A spooled sample: the samples
						 * merged in it were taken from
						 * timeNs to timeEndNs. */
#define CPROF_SAMPLE_FRAMES_CHECK	0x20	/* -capture check: the raw
						 * references follow the
						 * level stack's frames, to
						 * be compared with them. */

typedef struct CprofSample {
    uint32_t weight;		/* 1 + timer overruns. */
    uint32_t count;		/* Signals it stands for: 1, or more for
				 * samples merged in the spool. */
    uint16_t nNative;
    uint16_t nTcl;
    uint32_t flags;
    int32_t labels;		/* The labels in effect (cmdlabels.c), 0:
				 * none. */
    uint32_t unused;
    uint64_t timeNs;		/* CLOCK_MONOTONIC at the signal. */
    uint64_t timeEndNs;		/* CPROF_SAMPLE_SPAN: the last merged
				 * sample's time (not written by the
				 * handler otherwise). */
    uintptr_t ip[CPROF_NATIVE_MAX];	/* ip[0] is the interrupted PC;
					 * the others return addresses. */
    uintptr_t cfa[CPROF_NATIVE_MAX];	/* Stack pointer of each frame (the
					 * value the splice compares with
					 * anchors). */
    CprofTclRef tcl[CPROF_TCL_MAX];
    uint64_t check[4];		/* -capture check: hash of the level stack's
				 * frames (command and level, method frames
				 * and frames above Tcl's level left out),
				 * the same without the last, and the two of
				 * the check's shadow stack. */
    int16_t tebcFrame;		/* Sampled lines: the innermost native frame
				 * (index in ip[]) running Tcl's bytecode
				 * engine, or -1. */
    uint16_t nCand;		/* Its pc candidates: */
    uintptr_t cand[CPROF_PC_CANDIDATES];
				/* the values of its registers and of the
				 * first words of its stack frame, one of
				 * which is most likely the bytecode pc it
				 * runs at (drain.c tells which). */
} CprofSample;

/*
 * The splice (drainsplice.c): merge a sample's native and Tcl frames into one
 * stack, outermost first. Each output entry names a native frame (its
 * index in ip[]) or a Tcl frame (its index in tcl[]).
 */

typedef struct CprofSpliceEntry {
    int isTcl;
    int index;
} CprofSpliceEntry;

MODULE_SCOPE int	CprofSplice(const uintptr_t *ip, const uintptr_t *cfa,
			    int nNative, const CprofTclRef *tcl, int nTcl,
			    uintptr_t trampStart, uintptr_t trampEnd,
			    CprofSpliceEntry *out, int *unmatchedPtr,
			    int *beyondPtr);

/*
 * The aggregated call tree (drain.c).
 */

#define CPROF_FD_TCL	0
#define CPROF_FD_C	1
#define CPROF_FD_THREAD	2	/* A thread's root in a profile of several
				 * threads. */
#define CPROF_FD_LABELS	3	/* A set of labels (cmdlabels.c): nameId is
				 * the set's canonical string. */

typedef struct CprofFrameDef {
    int isC;			/* CPROF_FD_TCL, CPROF_FD_C or
				 * CPROF_FD_THREAD. */
    int nameId;			/* Thread: its display name. */
    int moduleId;		/* C: module name id or -1; thread: the
				 * name id of its Tcl id (tid0x...); Tcl:
				 * -1. */
    int tclKind;		/* Tcl: enum CprofFrameKind; others: -1. */
    int interpId;		/* Tcl: name id of the interpreter's path
				 * from its thread's top interpreter, -1
				 * for that one; others: -1. */
} CprofFrameDef;

typedef struct CprofNode {
    int frame;			/* Index into frames, -1 for the root. */
    int parent;
    int firstChild;
    int nextSibling;
    int exact;			/* Tcl frames in mode both: the exact
				 * call-tree node of the same Tcl path, or
				 * -1. */
    uint64_t self;		/* Weight of samples ending here ("In"). */
    uint64_t total;		/* Weight of samples through here ("Under"). */
} CprofNode;

/*
 * The C source line of a C frame in the samples through a node: its own
 * line in the samples that end there (child -1), or the line it called
 * the next frame shown from (child: that frame's node). weight adds up
 * the samples' weights.
 */

typedef struct CprofNodeLine {
    int node;
    int child;
    int fileId;			/* CprofNameIntern id of the file. */
    int line;
    uint64_t weight;
} CprofNodeLine;

/*
 * The timeline of a tree (draintimeline.c): weights per bucket of time since
 * the run started, per node per bucket, and a memory tree's live bytes.
 */

#define CPROF_TIME_BUCKETS	256	/* Buckets at most. */
#define CPROF_TIME_WIDTH0	10000000u	/* First width: 10 ms. */
#define CPROF_TIME_CELLS	(1 << 20)	/* (node, bucket) cells at
						 * most. */

typedef struct CprofTimeCell {
    int node;
    int bucket;
    uint64_t weight;
} CprofTimeCell;

typedef struct CprofTimeMem {
    double live;		/* Live bytes last seen in the bucket. */
    double peak;		/* The most seen in it. */
    int seen;
} CprofTimeMem;

typedef struct CprofTimeline {
    uint64_t origin;		/* CLOCK_MONOTONIC ns of bucket 0's start,
				 * 0: nothing added yet. */
    uint64_t width;		/* Ns per bucket. */
    int numBuckets;		/* The last bucket used + 1. */
    int manual;			/* 1: the drain adds nothing (drainmemory.c adds
				 * bytes itself). */
    uint64_t weights[CPROF_TIME_BUCKETS];
    CprofTimeMem *mem;		/* Memory trees: CPROF_TIME_BUCKETS, or
				 * NULL. */
    CprofTimeCell *cells;
    int numCells, capCells;
    Tcl_HashTable cellIndex;	/* (node, bucket) -> index in cells. */
    uint64_t changes;		/* Adds so far (the store's flushes). */
    uint64_t lastTimed;		/* The latest time added. */
    int coarsened;		/* Times the width doubled. */
    uint64_t lostCells;		/* Weight kept in no cell (one bucket,
				 * CPROF_TIME_CELLS stacks in it). */
} CprofTimeline;

MODULE_SCOPE void	CprofTimelineInit(CprofTimeline *tlPtr);
MODULE_SCOPE void	CprofTimelineFree(CprofTimeline *tlPtr);
MODULE_SCOPE void	CprofTimelineAdd(CprofTimeline *tlPtr, int node,
			    uint64_t timeNs, uint64_t start,
			    uint64_t weight);
MODULE_SCOPE void	CprofTimelineSpread(CprofTimeline *tlPtr, int node,
			    uint64_t fromNs, uint64_t timeNs, uint64_t start,
			    uint64_t weight);
MODULE_SCOPE void	CprofTimelineMemory(CprofTimeline *tlPtr,
			    uint64_t timeNs, uint64_t start, double live,
			    double high);
MODULE_SCOPE Tcl_Obj *	CprofTimelineObj(const CprofTimeline *tlPtr);
MODULE_SCOPE Tcl_Obj **	CprofTimelineNodeLists(const CprofTimeline *tlPtr,
			    int numNodes);

typedef struct CprofTree {
    CprofFrameDef *frames;
    int numFrames, capFrames;
    Tcl_HashTable frameIndex;	/* CprofFrameDef key -> frame index. */
    CprofNode *nodes;		/* nodes[0] is the root. */
    int numNodes, capNodes;
    Tcl_HashTable childIndex;	/* (parent, frame) -> node index. */
    uint64_t samples;		/* Samples added. */
    uint64_t weight;		/* Their total weight. */
    uint64_t truncatedNodes;	/* Weight folded for want of node space. */
    CprofNodeLine *lines;	/* C source lines, in order of creation. */
    int numLines, capLines;
    Tcl_HashTable lineIndex;	/* (node, child, file, line) -> index. */
    int lastLeaf;		/* The node the last sample added ended at. */
    CprofTimeline timeline;	/* Its samples over time (draintimeline.c). */
    int noTimes;		/* 1: its dicts leave the nodes' times out
				 * (a memory view other than alloc). */
    CprofNameRefs refs;		/* The names of its frames and files. */
} CprofTree;

#define CPROF_TREE_MAX_NODES	(1 << 22)

MODULE_SCOPE void	CprofTreeInit(CprofTree *treePtr);
MODULE_SCOPE void	CprofTreeFree(CprofTree *treePtr);
MODULE_SCOPE void	CprofTreeReset(CprofTree *treePtr);
#define CPROF_KEEP_BYTES (4u << 20)	/* Most of an array kept by a reset
					 * (CprofTreeReset, memory figures). */
MODULE_SCOPE int	CprofTreeAddTail(CprofTree *treePtr, uint64_t weight);
MODULE_SCOPE int	CprofTreeFrame(CprofTree *treePtr, int isC,
			    int nameId, int moduleId, int tclKind,
			    int interpId);
MODULE_SCOPE int	CprofTreeAdd(CprofTree *treePtr, const int *frames,
			    const int *exact, int numFrames, uint64_t count,
			    uint64_t weight);
MODULE_SCOPE int	CprofTreeAddLines(CprofTree *treePtr,
			    const int *frames, const int *exact,
			    const int *fileIds, const int *lines,
			    int numFrames, uint64_t count, uint64_t weight);
MODULE_SCOPE Tcl_ObjCmdProc CprofNodeLinesObjCmd;

/*
 * Sampled lines (drainlines.c): Tcl frames' call sites and the pcs of
 * interrupted bytecode to files and lines, for the drain.
 */

typedef struct CprofSrcLines CprofSrcLines;

MODULE_SCOPE CprofSrcLines *CprofSrcLinesNew(void);
MODULE_SCOPE void	CprofSrcLinesFree(CprofSrcLines *slPtr);
MODULE_SCOPE int	CprofSrcLinesSite(CprofSrcLines *slPtr,
			    Tcl_Interp *interp, const void *codePtr,
			    unsigned offset, int *fileIdPtr, int *linePtr);
MODULE_SCOPE int	CprofSrcLinesPc(CprofSrcLines *slPtr,
			    Tcl_Interp *interp, const uintptr_t *cand,
			    int numCand, const void *const *notCodes,
			    int numNotCodes, int *fileIdPtr, int *linePtr);
struct CprofExact;
MODULE_SCOPE Tcl_Obj *	CprofTreeToObj(CprofTree *treePtr,
			    struct CprofExact *exactPtr);
MODULE_SCOPE Tcl_Obj *	CprofTreeToObjEx(CprofTree *treePtr,
			    struct CprofExact *exactPtr,
			    void (*nodeProc)(void *data, int node,
			    Tcl_Obj *dictObj), void *data);

/*
 * Exact timing (exact.c). An open-addressing map from a pair of integers
 * (or a pointer and an integer) to a non-negative int keeps the lookups of
 * the enter path free of Tcl's hash functions.
 */

typedef struct CprofPairSlot {
    uint64_t a, b;		/* The key. */
    int value;			/* -1 marks an empty slot. */
} CprofPairSlot;

typedef struct CprofPairMap {
    CprofPairSlot *slots;
    uint32_t mask;		/* Slots - 1 (a power of two), or 0 when
				 * nothing is allocated. */
    uint32_t count;
} CprofPairMap;

/*
 * One node of the exact call tree: a Tcl call path. Self time is not kept:
 * it is the node's total less its children's totals, computed when the
 * tree is read, so that self plus children is total exactly.
 */

typedef struct CprofExactNode {
    int parent;			/* -1 for the root. */
    int nameId;
    int firstChild;
    int nextSibling;
    int kind;			/* enum CprofFrameKind. */
    int lastChild;		/* The child found last (a one-entry cache
				 * in front of the map). */
    uint64_t calls;		/* Completed calls. */
    int64_t totalNs;		/* Compensated inclusive time, summed. */
    uint64_t minNs, maxNs;	/* Per completed call. */
    uint64_t suspendedNs;	/* Coroutines: time suspended (on the node of
				 * the outermost frame of the coroutine). */
    int labels;			/* The set of labels in effect (cmdlabels.c),
				 * 0: none. */
} CprofExactNode;

/*
 * The kind of an exact node that stands for a set of labels: its name is
 * the set's, its callees were called under it.
 */

#define CPROF_EXACT_LABELS	0x100

/*
 * A call site (-lines): a source file and line, and one record per command
 * invoked there.
 */

typedef struct CprofSite {
    int fileId;			/* Interned path. */
    int line;
} CprofSite;

typedef struct CprofLineRec {
    int site;
    int nameId;
    int kind;
    int callerId;		/* Name of the calling frame (the nearest
				 * shown one) when the record was made; -1
				 * at the top level. */
    int active;			/* Calls of it running now (recursion: only
				 * the outermost one's time counts). */
    uint64_t calls;
    int64_t totalNs;
    int64_t selfNs;
    uint64_t minNs, maxNs;
} CprofLineRec;

/*
 * An enter or leave event (-events). Coroutine runs give a leave at the
 * yield and an enter at the resume, so events always nest.
 */

typedef struct CprofEvent {
    uint64_t ns;		/* Since the run started. */
    int nameId;
    short type;			/* 'E' or 'L'; 0 for an event taken back. */
    short kind;			/* enum CprofFrameKind. */
} CprofEvent;

#define CPROF_EXACT_MAX_NODES	(1 << 22)
#define CPROF_NO_SITE		0x7fffffff
#define CPROF_MAX_SITE_KEYS	16384	/* Call-site keys cached (each holds
					 * its bytecode) before the cache
					 * starts afresh. */

typedef struct CprofNameCalls CprofNameCalls;

/*
 * Times in CprofExact, CprofExactNode, CprofLineRec, CprofEvent and the
 * timing fields of CprofFrame are in ticks of the run's clock: ns, or
 * time-stamp counter ticks (see 'tsc'); they are converted when read.
 */

typedef struct CprofExact {
    int on;			/* Timing every traced command. */
    struct CprofLabelThread *labelsPtr;
				/* The thread's labels, found at the first
				 * enter. */
    int interpId;		/* The interpreter timed (CprofFrameDef's
				 * interpId): its nodes' 'interp'. */
    int coverage;		/* Coverage mode: counting only. */
    int lines;			/* Call-site records. */
    clockid_t clockId;		/* CLOCK_MONOTONIC or the thread CPU clock. */
    int tsc;			/* Elapsed time read from the processor's
				 * time-stamp counter: times below are in
				 * its ticks, not ns. */
    double nsPerTick;		/* 1, or the counter's ns per tick. */
    int64_t inNs;		/* Compensation: the profiler's cost inside a
				 * call's own measured time... */
    int64_t callNs;		/* ... and its whole cost per call, which
				 * lands in the caller's time. */
    uint64_t runStartNs;	/* Clock at start (event times are relative
				 * to it). */
    Tcl_WideInt runStartMonoNs;	/* The same instant, CLOCK_MONOTONIC (to
				 * put several runs' events in one time). */

    CprofExactNode *nodes;	/* nodes[0] is the root. */
    int numNodes, capNodes;
    CprofPairMap childMap;	/* (parent, nameId) -> node. */
    uint64_t truncatedNodes;	/* Calls charged to a caller for want of
				 * node space. */

    struct CprofNameCalls {
	uint64_t calls;
	int kind;
    } *nameCalls;		/* Calls entered, by name id (coverage). */
    int numNameCalls;
    unsigned char *nameClass;	/* By name id: 0 unknown, 1 shown, 2 hidden
				 * by -include/-exclude. */
    int numNameClass;
    unsigned nameClassGeneration;
				/* CprofNameGeneration when classed. */
    CprofNameRefs refs;		/* The names of nodes, sites, call-site
				 * records, events and counts. */
    Tcl_Obj *includeObj;	/* Glob lists; NULL or empty: everything. */
    Tcl_Obj *excludeObj;

    CprofSite *sites;		/* Call sites. */
    uint64_t *siteHits;		/* Calls made at each site. */
    int numSites, capSites;
    CprofPairMap siteKeyMap;	/* (code or path, pc or line) -> site, or
				 * CPROF_NO_SITE for a place with no
				 * file. */
    CprofPairMap siteMap;	/* (fileId, line) -> site. */
    void **held;		/* References taken by siteKeyMap's keys
				 * (capturelevels.c: CprofReleaseSiteKey). */
    int *heldKinds;
    int numHeld, capHeld;
    CprofLineRec *lineRecs;
    int numLineRecs, capLineRecs;
    CprofPairMap lineMap;	/* (site, nameId) -> record. */
    uint64_t noLocation;	/* Calls made where no file is known. */

    CprofEvent *events;		/* -events: a preallocated buffer. */
    int numEvents, maxEvents;
    uint64_t eventsDropped;

    uint64_t slowNs;		/* -slow, in ns; 0: off. */
    Tcl_Obj *onSlowObj;		/* -onslow command prefix, or NULL. */
    uint64_t slowCalls;		/* Calls reported as slow. */
    int inSlow;			/* Running the slow-call callback. */

    uint64_t rebaseNs;		/* Clock at the last reset while running... */
    unsigned rebases;		/* ... and how many there were. */

    uint64_t openFrames;	/* Frames still running at stop or pause. */
    uint64_t suspendedNs;	/* Coroutines' suspended time. */
    uint64_t captureNs;		/* The capture's own work while frames ran
				 * (wrapping new commands, naming a
				 * command at its first call, releasing
				 * deleted ones' entry points), taken out of
				 * the frames' time (capturewrap.c, CprofWrapOwn). */
    uint64_t calls;		/* Completed calls, all nodes. */
    int hasData;

    /*
     * Interpreters of one thread profiled together (a session, cmdscope.c):
     * a call whose caller is a frame of another of them is put under a
     * link node (a child of the root standing for that frame), so that
     * the trees can be joined into one (CprofScopeProfile).
     */

    struct CprofExactPeers *peers;
				/* The thread's profiled interpreters, while
				 * this one is among them, or NULL. */
    int serial;			/* Names this state in links; unique in the
				 * process, 0 until it first joins. */
    struct CprofExactLink {
	int node;		/* The link node. */
	int peerSerial;		/* The frame's state ... */
	int peerNode;		/* ... and its node there. */
    } *links;
    int numLinks, capLinks;
    CprofPairMap targetMap;	/* (node, 0): nodes of this tree that
				 * another's links stand for. */
} CprofExact;


/*
 * Result of the native anchor calibration (DESIGN: the splice).
 */

typedef struct CprofCalibration {
    int state;			/* CPROF_CALIB_* */
    intptr_t offset;		/* D: trampoline SP minus the callback's
				 * marker address. */
    uintptr_t trampStart;	/* [start, end) of TclNRRunCallbacks. */
    uintptr_t trampEnd;
    char message[160];		/* Why calibration failed, if it did. */
} CprofCalibration;

#define CPROF_CALIB_NONE	0	/* Not attempted yet. */
#define CPROF_CALIB_OK		1
#define CPROF_CALIB_FAILED	2

/*
 * The sampler of one thread (unix/sampler.c). The fields up to 'ring' are
 * read and written by the signal handler; the handler reaches the
 * structure through an initial-exec thread-local pointer.
 */

#define CPROF_HIST_BUCKETS 160

typedef struct CprofSamplerCounters {
    uint64_t signals;		/* Signals handled for this thread. */
    uint64_t weight;		/* Their weight (1 + overruns). */
    uint64_t samples;		/* Samples written to the ring or merged
				 * into the spool. */
    uint64_t dropsFull;		/* Weight dropped: ring full. */
    uint64_t dropsBusy;		/* Weight dropped: handler re-entered. */
    uint64_t dropsFork;		/* Weight dropped: the process was forking. */
    uint64_t overhead;		/* Weight that landed in the profiler's
				 * own normal-context work (draining). */
    uint64_t nativeTrunc;	/* Samples with truncated native stacks. */
    uint64_t tclTrunc;		/* Samples with truncated Tcl stacks. */
    uint64_t noSigframe;	/* Samples whose interrupted frame was not
				 * found in the unwind. */
    uint64_t spooled;		/* Samples merged into the spool because the
				 * ring was full. */
    uint64_t handlerNs;		/* Time spent in the handler. */
    uint64_t handlerHist[CPROF_HIST_BUCKETS];
				/* Handler time histogram, four buckets per
				 * power of two of ns (CprofHistBounds). */
} CprofSamplerCounters;

MODULE_SCOPE void	CprofHistBounds(int bucket, double *loPtr,
			    double *hiPtr);

/*
 * A level stack sampled with the thread's own (CprofSampler.extra). A slot
 * is live while stackPtr is not NULL; it is set and cleared by the thread
 * itself, so that the signal fence orders it against the handler.
 */

#define CPROF_EXTRA_STACKS 32

typedef struct CprofExtraStack {
    CprofStack *volatile stackPtr;
    const Tcl_Size *numLevelsPtr;	/* &iPtr->numLevels of its interpreter. */
    int interpId;		/* Its frames' CprofTclRef.interpId. */
} CprofExtraStack;

typedef struct CprofSampler {
    volatile int enabled;	/* Handler records samples. */
    volatile int busy;		/* Handler running (re-entry guard). */
    volatile int draining;	/* Normal context is draining the ring:
				 * samples are counted as overhead. */
    volatile int needDrain;	/* Set by the handler when the ring is half
				 * full (and after fork); polled by the
				 * trace callback. */
    volatile int forked;	/* Set in a child process by the atfork
				 * handler: the timer must be made again. */
    volatile uintptr_t forkPc;	/* While the atfork parent handler lets
				 * the signal blocked across fork through:
				 * its return address, where the handler's
				 * walk starts (sampler.c). */
    int weighClock;		/* The timer's clock (a clockid_t), and */
    uint64_t weighFirstNs;	/* its reading at the first expiration, */
    uint64_t weighIntervalNs;	/* the interval, and how many expirations
				 * the samples taken since the arm stand */
    uint64_t weighed;		/* for (TimerWeight, sampler.c). */
    uint32_t tailWeight;	/* At disarm: the weight of the timer's
				 * signal still queued (its expirations
				 * since the last one handled), for the
				 * caller to charge (CprofTreeAddTail). */
    CprofStack *stackPtr;	/* The profiled interpreter's level stack. */
    struct CprofLabelThread *labelsPtr;
				/* The thread's labels (cmdlabels.c). */
    CprofExtraStack extra[CPROF_EXTRA_STACKS];
				/* The level stacks of other interpreters
				 * profiled in this thread (child
				 * interpreters): their frames are copied
				 * too, tagged with their interpId. */
    volatile int numExtra;	/* Slots of extra in use or once used. */
    CprofStack *volatile shadowPtr;
				/* -capture check: the trace's stack, or
				 * NULL. */
    struct CprofFrames *volatile framesPtr;
				/* -capture frames: Tcl's frames are read
				 * (captureframes.c) instead of the level stacks;
				 * or NULL. */
    int framesCheck;		/* -capture check: they are read besides
				 * the level stack, in the second half of
				 * tcl[], for the drain to compare. */
    const Tcl_Size *numLevelsPtr;	/* &iPtr->numLevels of that interpreter. */
    int lines;			/* Sampled lines: copy each frame's call
				 * site. */
    uintptr_t tebcStart;	/* Sampled lines: [start, end) of Tcl's */
    uintptr_t tebcEnd;		/* bytecode engine, whose innermost frame's
				 * pc candidates a sample keeps; 0: none. */
    CprofSample *slots;		/* Ring of preallocated samples. */
    uint32_t mask;		/* Number of slots - 1 (power of two). */
    volatile uint32_t head;	/* Next slot to write (handler). */
    volatile uint32_t tail;	/* Next slot to read (normal context). */
    CprofSamplerCounters counters;
    struct CprofSpool *spoolPtr;	/* Overflow of a full ring: identical
					 * samples merged (sampler.c). */
    uintptr_t stackLo;		/* The thread's stack (found at arm): the */
    uintptr_t stackHi;		/* handler's cached walk reads it only. */
    CprofSample *checkPtr;	/* Test hook: libgcc's walk of a sample, to
				 * compare with the cached one. */

    /* Normal context only. */
    int clock;			/* enum CprofClock. */
    double rate;		/* Requested samples per second. */
    int signo;			/* Signal used. */
    pid_t pid;			/* Process that armed the timer. */
    pid_t tid;			/* Thread the timer targets. */
    void *timer;		/* timer_t, as a pointer-sized value. */
    int armed;
    uint64_t startCpuNs;	/* Thread CPU time at start. */
    uint64_t startWallNs;
    uint64_t cpuNs;		/* Accumulated, while armed. */
    uint64_t wallNs;
} CprofSampler;

/*
 * CprofSamplerOwn, CprofSamplerOwnEnd --
 *
 *	Around the profiler's own normal-context work while the timer is
 *	armed (a drain, a flush, the rest of a start after the arm, a stop
 *	before the disarm, a resume): the handler records no sample and
 *	counts the signal as the profiler's ('draining'; status: drops
 *	profiler), so that this work is never the program's time.
 *	CprofSamplerOwn returns the flag's previous value, for
 *	CprofSamplerOwnEnd to restore (the two nest). A NULL sampler is
 *	allowed.
 */

static inline int
CprofSamplerOwn(
    CprofSampler *sPtr)
{
    int held;

    if (sPtr == NULL) {
	return 0;
    }
    held = sPtr->draining;
    sPtr->draining = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return held;
}

static inline void
CprofSamplerOwnEnd(
    CprofSampler *sPtr,
    int held)
{
    if (sPtr != NULL) {
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	sPtr->draining = held;
    }
}

MODULE_SCOPE int	CprofSamplerCreate(Tcl_Interp *interp,
			    CprofStack *stackPtr, const Tcl_Size *numLevelsPtr,
			    int clock, double rate, int slots,
			    CprofSampler **samplerPtrPtr);
MODULE_SCOPE int	CprofSamplerArm(Tcl_Interp *interp,
			    CprofSampler *samplerPtr);
MODULE_SCOPE void	CprofSamplerDisarm(CprofSampler *samplerPtr);
MODULE_SCOPE int	CprofSamplerAddStack(CprofSampler *samplerPtr,
			    CprofStack *stackPtr, const Tcl_Size *numLevelsPtr,
			    int interpId);
MODULE_SCOPE void	CprofSamplerRemoveStack(CprofSampler *samplerPtr,
			    CprofStack *stackPtr);
MODULE_SCOPE void	CprofSamplerAfterFork(Tcl_Interp *interp,
			    CprofSampler *samplerPtr);
MODULE_SCOPE void	CprofSamplerDestroy(CprofSampler *samplerPtr);
MODULE_SCOPE CprofSample *CprofSamplerPeek(CprofSampler *samplerPtr);
MODULE_SCOPE CprofSample *CprofSamplerPeekAt(CprofSampler *samplerPtr,
			    uint32_t n);
MODULE_SCOPE int	CprofSamplerSpoolEmpty(CprofSampler *samplerPtr);
MODULE_SCOPE void	CprofSamplerRelease(CprofSampler *samplerPtr);
MODULE_SCOPE CprofSample *CprofSamplerTakeSpooled(CprofSampler *samplerPtr);
MODULE_SCOPE void	CprofSamplerDiscard(CprofSampler *samplerPtr);
MODULE_SCOPE void	CprofSpoolSetLimit(size_t bytes);
MODULE_SCOPE double	CprofDefaultRate(int clock);
MODULE_SCOPE const char *CprofSignalName(void);
MODULE_SCOPE uint64_t	CprofForeignSignals(void);
MODULE_SCOPE int	CprofUnwindReady(char *msg, size_t msgLen);
						/* unwindgcc.c */
MODULE_SCOPE int	CprofCfiWalkAt(uintptr_t pc, uintptr_t *ip,
			    uintptr_t *cfa, int max);
MODULE_SCOPE int	CprofNativeWalk(uintptr_t *ip, uintptr_t *cfa,
			    int max);		/* unwindgcc.c */
MODULE_SCOPE int	CprofCopyTclFrames(CprofSampler *samplerPtr,
			    CprofTclRef *out, int max, uint32_t *flagsPtr,
			    uint64_t *check);
MODULE_SCOPE int	CprofSamplerCreateIdle(Tcl_Interp *interp,
			    CprofStack *stackPtr, const Tcl_Size *numLevelsPtr,
			    CprofSampler **samplerPtrPtr);
MODULE_SCOPE void	CprofSamplerAttach(CprofSampler *samplerPtr);
MODULE_SCOPE void	CprofSamplerDetach(CprofSampler *samplerPtr);
MODULE_SCOPE CprofSampler *CprofSamplerCurrent(void);

/*
 * Event handlers (captureevents.c): per origin and kind, what ran. Read by the
 * profile value (captureevents.c) and the store (store.c).
 */

enum CprofHandlerKind {
    CPROF_HANDLER_AFTER = 0,	/* after ms script */
    CPROF_HANDLER_IDLE,		/* after idle script */
    CPROF_HANDLER_READABLE,	/* fileevent (chan event) readable */
    CPROF_HANDLER_WRITABLE,	/* ... writable */
    CPROF_HANDLER_BIND,		/* A Tk binding. */
    CPROF_HANDLER_BGERROR,	/* The background error handler. */
    CPROF_HANDLER_KINDS
};

typedef struct CprofHandlerStat {
    int originId;		/* Name id of the origin. */
    int kind;			/* enum CprofHandlerKind. */
    uint64_t count;		/* Handlers run. */
    uint64_t timed;		/* Of them, those whose time is known. */
    uint64_t totalNs, maxNs;	/* Their elapsed time. */
    uint64_t latencyCount;	/* Timers: runs whose due time is known, */
    uint64_t latencyNs;		/* their delays from due time to run, */
    uint64_t latencyMaxNs;	/* and the longest. */
} CprofHandlerStat;

typedef struct CprofHandlers {
    CprofHandlerStat *stats;
    int num, cap;
    Tcl_HashTable index;	/* (origin, kind) -> index + 1. */
    int initialized;
    CprofNameRefs refs;		/* The origins' names. */
} CprofHandlers;

/*
 * Per-interpreter state, kept as AssocData under CPROF_ASSOC.
 */

#define CPROF_ASSOC "tclcprof"

struct CprofCapture;

typedef struct CprofState {
    Tcl_Interp *interp;
    int running;		/* start'ed and not stopped. */
    int paused;			/* Capture removed by pause. */
    CprofOptions options;
    CprofNaming naming;		/* Names of commands and methods. */
    CprofLevels levels;		/* The level stack profiles are made of. */
    Tcl_WideInt startNs;	/* Monotonic time of start. */
    Tcl_WideInt stopNs;
    Tcl_WideInt pausedNs;	/* Accumulated paused time. */
    Tcl_WideInt pauseStartNs;
    Tcl_Command stackCmd;	/* ::tclcprof::stack, not shown by itself. */
    int deleting;		/* The interpreter is being deleted. */

    /* The capture (capture.c). */
    struct CprofCapture *capturePtr;
				/* While installed. */
    unsigned captureGeneration;	/* Changes at each install and removal. */
    char captureNote[160];	/* Why the capture in use is not the one
				 * asked for. */
    CprofCalibration calib;	/* Anchors of the capture in use. */
    int calibKind;		/* calib is the trace's (1) or the
				 * wrapper's (0). */
    intptr_t callbackOffset;	/* The wrapper's: an NRE callback's CFA to
				 * its trampoline's stack pointer. */
    struct CprofFrames *framesPtr;
				/* -capture frames while sampling: Tcl's
				 * frames read by the handler, named at the
				 * drain (captureframes.c); or NULL. */
    int framesUsed;		/* The last run read Tcl's frames. */
    uint64_t framesCounts[12];	/* (CprofFramesCounters, captureframes.h) */	/* Its CprofFramesCounters, kept after
				 * stop. */
    int lastCapture;		/* The capture of the last run, and its
				 * check figures, kept after stop. */
    uint64_t lastChecks[3];
    uint64_t lastDisagreements[3];
    Tcl_Obj *lastFirstDisagreement;
    uint64_t allChecks;		/* -capture check, over every run of the
				 * interpreter (tclcprof::debug checks). */
    uint64_t allDisagreements;
    Tcl_Obj *firstDisagreement;
    uint64_t allFramesChecks;	/* The same for Tcl's frames read against
				 * the wrapper's at samples, and the first
				 * disagreement's two stacks. */
    uint64_t allFramesDisagreements;
    char allFramesFirst[200];

    /* Sampling. */
    CprofSampler *samplerPtr;	/* While sampling (mode sample). */
    CprofTree tree;		/* Aggregated samples. */
    CprofSymbolizer *symPtr;	/* Native names. */
    Tcl_Mutex *symLockPtr;	/* When symPtr is shared by the threads of
				 * a session (and not this state's to
				 * free): the lock its users take. */
    Tcl_TimerToken drainTimer;	/* Periodic drain from the event loop. */
    Tcl_WideInt splicedSamples;	/* Samples whose Tcl frames all matched. */
    Tcl_WideInt unsplicedSamples;/* Samples with unmatched Tcl frames. */
    Tcl_WideInt drainsPutOff;	/* Drains in the middle of a run left for
				 * later: symbol tables were being read
				 * (CprofDrainSoon). */
    uint64_t putOffSinceNs;	/* Monotonic time of the first of the
				 * drains put off in a row, or 0. */
    Tcl_WideInt unmatchedFrames;/* Tcl frames that matched no anchor. */
    Tcl_WideInt shortSamples;	/* Samples whose outer Tcl frames lay
				 * beyond the native stack: the unwind
				 * stopped early. */
    Tcl_WideInt ownLeafWeight;	/* Time samples in the profiler's own code
				 * (CprofDrainOwnLeaf), their weight and */
    Tcl_WideInt ownLeafCount;	/* count: left out, the weight counted with
				 * drops profiler, not among samples. */
    struct CprofUnsplicedLog *unsplicedLog;
				/* The last unspliced samples, raw, for
				 * tclcprof::debug unspliced (drainsplice.c);
				 * NULL until the first. */
    int hasData;		/* Something was collected since reset. */
    uint64_t sampleChecks;	/* -capture check: samples compared, and */
    uint64_t sampleDisagreements;
    uint64_t framesChecks;	/* -capture check: samples whose frames read
				 * from Tcl were compared with the level
				 * stack's (this run), and */
    uint64_t framesDisagreements;
    char framesFirst[200];	/* -capture check: the first sample whose
				 * procs read from Tcl's frames differed
				 * from the wrapper's, or "". */
				/* those whose two stacks differed. */
    CprofSamplerCounters lastCounters;
				/* Counters of the last sampler, kept after
				 * stop. */
    double lastRate, lastAchieved, lastSeconds;
    uint64_t lastSampledNs;	/* Time of the sampler's clock while it
				 * was armed, in the last run. */
    int lastClock;
    unsigned char *moduleFlags;	/* Per module name id: its class
				 * (drain.c, MOD_*). */
    int numModuleFlags;
    CprofSrcLines *srcLinesPtr;	/* Sampled lines: places resolved, or
				 * NULL. */

    /* Event handlers (captureevents.c). */
    int eventsOn;		/* The run attributes handlers: set by the
				 * command layer for the capture a run
				 * installs (not for calibration). */
    struct CprofEvents *eventsPtr;
				/* captureevents.c's records, or NULL. */
    CprofHandlers handlers;	/* What ran, since start or reset. */

    /* Exact timing, coverage and the stop deadline. */
    CprofExact exact;
    uint64_t deadlineNs;	/* -duration: monotonic time to stop at, or
				 * 0. */
    const char *stoppedBy;	/* Why the last run ended by itself, or
				 * NULL. */
    struct CprofState *hostPtr;	/* The profiled interpreter of the same
				 * thread whose sampler samples this one's
				 * frames too (scope tree), or NULL. */
    struct CprofMemory *memPtr;	/* Memory samples (drainmemory.c): while a run
				 * of mode memory goes on and until the next
				 * run or reset. */
    int polling;		/* The command layer has timed duties
				 * (-duration, flushes to -db, noticing a
				 * fork): the capture calls pollProc every
				 * 256 commands. */
    void (*childProc)(struct CprofState *statePtr, Tcl_Interp *interp,
	    int objc, Tcl_Obj *const objv[]);
				/* Scope tree and process: `interp` is
				 * called (CPROF_ROLE_INTERP), before it
				 * runs; may queue an NRE callback. */
    void (*pollProc)(struct CprofState *statePtr);
				/* May stop the run: called where nothing
				 * of the capture is in use any more. */
} CprofState;

/* The last unspliced samples (drainsplice.c, tclcprof::debug unspliced). */
MODULE_SCOPE Tcl_Obj *	CprofUnsplicedLogObj(CprofState *statePtr);
MODULE_SCOPE void	CprofUnsplicedLogFree(CprofState *statePtr);

/*
 * Memory profiling. The hooks (unix/hookmem.c, through unix/hookgot.c)
 * record a sampled block as a CprofMemRec and queue what happens to it;
 * drainmemory.c drains the queue into the memory tree.
 */

typedef struct CprofMemRec {
    uintptr_t addr;		/* The block. */
    size_t size;		/* Bytes asked for. */
    int node;			/* Memory tree node, once drained; -1
				 * before. */
    int tracked;		/* In the table of live blocks (else the
				 * table was full: its free is not seen). */
    int shared;			/* Its stack is one of hookmem.c's shared
				 * stacks (else stored after the record). */
    double bytes, objects;	/* Its weight (drainmemory.c). */
    unsigned epoch;		/* CprofMemEpoch when it was made. */
    uint16_t nNative, nTcl;
    uint32_t flags;		/* CPROF_SAMPLE_* */
    int32_t labels;		/* The set of labels in effect (cmdlabels.c). */
    uintptr_t *ip;		/* nNative return addresses, innermost */
    uintptr_t *cfa;		/* first, with their frames' CFAs... */
    CprofTclRef *tcl;		/* ...and the Tcl frames, outermost first
				 * (all stored after the record). */
} CprofMemRec;

typedef struct CprofMemEvent {
    CprofMemRec *recPtr;
    int isFree;			/* 0: sampled allocation; 1: its free. */
    uint64_t timeNs;		/* CLOCK_MONOTONIC when queued (the
				 * timeline). */
} CprofMemEvent;

typedef struct CprofMemTotals {
    uint64_t allocs, allocBytes;/* Every allocation counted. */
    uint64_t frees;		/* Every free counted (realloc's too). */
    uint64_t samples;		/* Allocations sampled. */
    uint64_t sampledFrees;	/* Frees of sampled blocks seen. */
    uint64_t untracked;		/* Sampled with the table full. */
    uint64_t lostEvents;	/* Dropped for want of memory. */
    uint64_t recordBytes;	/* Memory held by records now. */
    uint64_t liveRecords;	/* Sampled blocks live now. */
    uint64_t tableBytes;	/* Table slots in use and the filter. */
    uint64_t patched;		/* GOT entries patched at start... */
    uint64_t patchedLater;	/* ...and in modules loaded since. */
    uint64_t loads;		/* dlopen calls seen. */
} CprofMemTotals;

MODULE_SCOPE int	CprofMemStart(int64_t rate, volatile int *drainPtr,
			    char *msg, size_t msgLen);
MODULE_SCOPE void	CprofMemStop(void);
MODULE_SCOPE void	CprofMemClear(void);
MODULE_SCOPE int	CprofMemTake(CprofMemEvent **eventsPtr);
MODULE_SCOPE void	CprofMemDone(CprofMemEvent *events, int n);
MODULE_SCOPE void	CprofMemGetTotals(CprofMemTotals *totalsPtr);
MODULE_SCOPE void	CprofMemGuard(int on);
MODULE_SCOPE void	CprofSymReaderStop(void);
MODULE_SCOPE unsigned	CprofMemEpoch(void);
MODULE_SCOPE void	CprofMemWalkStats(int check, uint64_t counts[5]);
MODULE_SCOPE void	CprofSampleWalkStats(int check, uint64_t counts[5]);
MODULE_SCOPE void	CprofSamplerModules(void);
MODULE_SCOPE void	CprofMemStackStats(int max, uint32_t counts[2]);

struct CprofMemory;
MODULE_SCOPE int	CprofMemoryStart(CprofState *statePtr);
MODULE_SCOPE void	CprofMemoryStop(CprofState *statePtr);
MODULE_SCOPE void	CprofMemoryDrain(CprofState *statePtr);
MODULE_SCOPE void	CprofMemoryClear(CprofState *statePtr);
MODULE_SCOPE void	CprofMemoryFree(CprofState *statePtr);
MODULE_SCOPE volatile int *CprofMemoryDrainFlag(CprofState *statePtr);
MODULE_SCOPE int	CprofMemoryRunning(CprofState *statePtr);
MODULE_SCOPE void	CprofMemoryPause(CprofState *statePtr, int paused);
MODULE_SCOPE void	CprofMemPause(int paused);
MODULE_SCOPE int	CprofMemoryView(Tcl_Interp *interp, Tcl_Obj *viewObj,
			    int *viewPtr);
MODULE_SCOPE Tcl_Obj *	CprofMemoryTreeObj(CprofState *statePtr, int view,
			    int count);
MODULE_SCOPE Tcl_Obj *	CprofMemoryDict(CprofState *statePtr);
MODULE_SCOPE Tcl_Obj *	CprofMemoryTimelineObj(CprofState *statePtr);
MODULE_SCOPE CprofTree *CprofMemoryPrepare(CprofState *statePtr, int view,
			    int count);
MODULE_SCOPE void	CprofMemoryFigures(CprofState *statePtr, int node,
			    int64_t fig[6]);

/*
 * The store (store.c): runs in an SQLite file.
 */

typedef struct CprofStore CprofStore;

MODULE_SCOPE int	CprofStoreOpen(Tcl_Interp *interp, Tcl_Obj *pathObj,
			    int direct, CprofStore **storePtrPtr);
MODULE_SCOPE void	CprofStoreClose(CprofStore *storePtr);
MODULE_SCOPE void	CprofStoreOpDone(CprofStore *storePtr);
MODULE_SCOPE int	CprofStoreBeginRun(Tcl_Interp *interp,
			    CprofStore *storePtr, Tcl_Obj *infoObj);
MODULE_SCOPE void	CprofStoreDiscardRun(CprofStore *storePtr);
MODULE_SCOPE void	CprofStorePruneRuns(CprofStore *storePtr, int keep,
			    double keepHours);
MODULE_SCOPE int	CprofStoreFlush(Tcl_Interp *interp,
			    CprofStore *storePtr, CprofState *statePtr,
			    Tcl_Obj *metaObj, int final);
MODULE_SCOPE int	CprofStoreSave(Tcl_Interp *interp, CprofStore *storePtr,
			    CprofState *statePtr, Tcl_Obj *infoObj,
			    Tcl_Obj *metaObj);
MODULE_SCOPE int	CprofStoreLastError(Tcl_Interp *interp,
			    CprofStore *storePtr);
MODULE_SCOPE void	CprofStoreClear(CprofStore *storePtr);
MODULE_SCOPE int	CprofStoreForked(CprofStore *storePtr);
MODULE_SCOPE int	CprofStoreFailing(CprofStore *storePtr);
MODULE_SCOPE Tcl_WideInt CprofStoreRunId(CprofStore *storePtr);
MODULE_SCOPE Tcl_Obj *	CprofStoreStatus(CprofStore *storePtr);
MODULE_SCOPE Tcl_Obj *	CprofStoreLoad(Tcl_Interp *interp, Tcl_Obj *pathObj,
			    Tcl_WideInt runId);
MODULE_SCOPE Tcl_Obj *	CprofStoreRuns(Tcl_Interp *interp,
			    Tcl_Obj *pathObj);
MODULE_SCOPE int	CprofStoreCheckRuns(Tcl_Interp *interp,
			    Tcl_Obj *runObj, Tcl_WideInt *singlePtr);
MODULE_SCOPE Tcl_Obj *	CprofStoreRead(Tcl_Interp *interp, Tcl_Obj *dbObj,
			    Tcl_Obj *runObj);
MODULE_SCOPE int	CprofStoreSaveData(Tcl_Interp *interp,
			    Tcl_Obj *pathObj, Tcl_Obj *profileObj,
			    Tcl_Obj *labelObj);
MODULE_SCOPE int	CprofStoreReplaceRun(Tcl_Interp *interp,
			    CprofStore *storePtr, Tcl_Obj *profileObj);
MODULE_SCOPE void	CprofStoreSetPageLimit(int pages);
MODULE_SCOPE void	CprofStoreSetBusyTimeout(int ms);

/*
 * Sample processing (drain.c).
 */

MODULE_SCOPE void	CprofDrain(CprofState *statePtr);
MODULE_SCOPE void	CprofDrainSoon(CprofState *statePtr);
typedef void (CprofDrainProc)(CprofState *statePtr);
MODULE_SCOPE void	CprofDrainSetMemory(CprofDrainProc *proc);
MODULE_SCOPE void	CprofAddSample(CprofState *statePtr,
			    const CprofSample *samplePtr);
MODULE_SCOPE int	CprofAddSampleTo(CprofState *statePtr,
			    CprofTree *treePtr, const CprofSample *samplePtr);

/*
 * Exact timing (exact.c). Enter, leave, suspend and resume are called by
 * the level stack with the frame concerned already on (or still on) the
 * stack; 'parentPtr' is the frame below it, or NULL.
 */

MODULE_SCOPE void	CprofExactInit(CprofExact *exactPtr);
MODULE_SCOPE void	CprofExactFree(CprofState *statePtr);
MODULE_SCOPE void	CprofExactClear(CprofState *statePtr);
MODULE_SCOPE void	CprofExactPrepare(CprofState *statePtr,
			    const CprofOptions *optsPtr, CprofEvent *events,
			    int64_t inNs, int64_t callNs);
MODULE_SCOPE int	CprofExactNeedEvents(CprofState *statePtr,
			    const CprofOptions *optsPtr);
MODULE_SCOPE void	CprofExactEnter(CprofState *statePtr,
			    CprofFrame *framePtr, CprofFrame *parentPtr,
			    int siteKind, void *sitePtr, int siteOffset);
MODULE_SCOPE void	CprofExactRename(CprofState *statePtr,
			    CprofFrame *framePtr, CprofFrame *parentPtr,
			    int oldNameId);
MODULE_SCOPE uint64_t	CprofExactLeave(CprofState *statePtr, int index);
MODULE_SCOPE void	CprofExactReportSlow(CprofState *statePtr, int index,
			    uint64_t callNs);
MODULE_SCOPE void	CprofExactDropSuspended(CprofState *statePtr,
			    const CprofFrame *frames, int count,
			    uint64_t suspendedNs);
MODULE_SCOPE int	CprofFrameHidden(CprofState *statePtr, int nameId,
			    int kind);
MODULE_SCOPE void	CprofExactSuspend(CprofState *statePtr, int first,
			    int count);
MODULE_SCOPE void	CprofExactResume(CprofState *statePtr, int first,
			    int count, uint64_t suspendedNs);
MODULE_SCOPE void	CprofExactCloseAll(CprofState *statePtr);
MODULE_SCOPE void	CprofExactReleaseSites(CprofState *statePtr);
MODULE_SCOPE void	CprofExactRebase(CprofState *statePtr);
MODULE_SCOPE void	CprofExactShift(CprofState *statePtr, uint64_t ns);
MODULE_SCOPE uint64_t	CprofExactNow(CprofState *statePtr);
MODULE_SCOPE int64_t	CprofExactTicksToNs(CprofState *statePtr,
			    int64_t ticks);
MODULE_SCOPE void	CprofExactSetSlow(CprofState *statePtr, double ms);
MODULE_SCOPE void	CprofExactCoverage(CprofState *statePtr,
			    int nameId, int kind, int siteKind,
			    void *sitePtr, int siteOffset);
MODULE_SCOPE int	CprofExactCalibrate(CprofState *statePtr, int clock,
			    int capture,
			    int (*installProc)(CprofState *statePtr),
			    void (*removeProc)(CprofState *statePtr),
			    int64_t *inNsPtr, int64_t *callNsPtr);
MODULE_SCOPE void	CprofExactSetFilters(CprofState *statePtr,
			    Tcl_Obj *includeObj, Tcl_Obj *excludeObj);
MODULE_SCOPE Tcl_Obj *	CprofExactTreeObj(CprofExact *exactPtr, int links);
MODULE_SCOPE void	CprofExactJoinPeers(CprofState *statePtr);
MODULE_SCOPE int	CprofPairMapHas(const CprofPairMap *mapPtr, uint64_t a,
			    uint64_t b);
MODULE_SCOPE void	CprofExactLeavePeers(CprofState *statePtr);
MODULE_SCOPE Tcl_Obj *	CprofExactLinesObj(CprofExact *exactPtr);
MODULE_SCOPE Tcl_Obj *	CprofExactEventsObj(CprofExact *exactPtr);
MODULE_SCOPE Tcl_Obj *	CprofExactCoverageObj(CprofState *statePtr);
MODULE_SCOPE void	CprofExactNodeFigures(CprofExact *exactPtr,
			    int node, Tcl_Obj *dictObj);

/*
 * What a profile shows of exact data, as numbers (ns): shared by the
 * profile value (exact.c) and the store (store.c), so that a profile read
 * back from a file is the one that was written.
 */

typedef struct CprofFigures {
    uint64_t calls;
    int64_t totalNs, selfNs, minNs, maxNs, suspendedNs;
} CprofFigures;

typedef struct CprofLineValues {
    int fileId, line, nameId, kind;
    int callerId;		/* Name of the calling frame, or -1. */
    uint64_t calls;
    int64_t totalNs, selfNs, minNs, maxNs;
} CprofLineValues;

MODULE_SCOPE void	CprofExactAdjust(CprofExact *exactPtr, int64_t *adj,
			    int64_t *self, unsigned char *shown);
MODULE_SCOPE void	CprofExactFiguresOf(CprofExact *exactPtr, int node,
			    int64_t total, int64_t self, CprofFigures *figPtr);
MODULE_SCOPE int	CprofExactNodeValues(CprofExact *exactPtr, int node,
			    CprofFigures *figPtr);
MODULE_SCOPE void	CprofFiguresPut(Tcl_Obj *dictObj,
			    const CprofFigures *figPtr);
MODULE_SCOPE int	CprofExactLineValues(CprofExact *exactPtr, int rec,
			    CprofLineValues *valPtr);


/*
 * Event handlers (captureevents.c, part of the capture).
 */

MODULE_SCOPE void	CprofEventsForget(CprofState *statePtr);
MODULE_SCOPE void	CprofEventsClear(CprofState *statePtr);
MODULE_SCOPE void	CprofEventsFree(CprofState *statePtr);
MODULE_SCOPE Tcl_Obj *	CprofEventsObj(CprofState *statePtr);

/*
 * The capture (capture.c and the units it chooses between).
 */

MODULE_SCOPE int	CprofCaptureInstall(CprofState *statePtr);
MODULE_SCOPE int	CprofFramesUsable(CprofState *statePtr, char *note,
			    size_t noteLen);
MODULE_SCOPE void	CprofCaptureRemove(CprofState *statePtr);
MODULE_SCOPE int	CprofCaptureUnload(Tcl_Interp *interp);
MODULE_SCOPE void	CprofCaptureForgetState(CprofState *statePtr);
MODULE_SCOPE Tcl_Obj *	CprofCaptureStatus(CprofState *statePtr);
MODULE_SCOPE const char *CprofCaptureName(int kind);
MODULE_SCOPE const char *const *CprofCaptureNames(void);
MODULE_SCOPE void	CprofSeedPrepare(Tcl_Interp *interp);
MODULE_SCOPE int	CprofSeedFrames(CprofState *statePtr);
MODULE_SCOPE int	CprofSeedCoroutines(CprofState *statePtr);
MODULE_SCOPE const char *CprofSeedNote(void);

/*
 * Thunks (unix/hookthunk.c): per-command entry points into the wrapper.
 */

MODULE_SCOPE int	CprofThunksReady(char *msg, size_t msgLen);
MODULE_SCOPE void *	CprofThunkNew(void *target, void *record);
MODULE_SCOPE void	CprofThunkFree(void *entry);
MODULE_SCOPE void *	CprofThunkIdentity(void);
MODULE_SCOPE int	CprofThunkContains(uintptr_t pc);
MODULE_SCOPE void	CprofThunkCounts(size_t *inUsePtr, size_t *totalPtr);

/*
 * Native side (unix/unwindcalibrate.c): libunwind in normal context only.
 */

MODULE_SCOPE int	CprofTrampolineRange(uintptr_t *startPtr,
			    uintptr_t *endPtr, char *msg, size_t msgLen);
MODULE_SCOPE int	CprofNativeTrampolines(uintptr_t start, uintptr_t end,
			    uintptr_t *sps, int max);
MODULE_SCOPE int	CprofBytecodeRange(Tcl_Interp *interp,
			    uintptr_t *startPtr, uintptr_t *endPtr);

/*
 * Symbolizer (unix/symbolize.c, unix/symfile.c): native addresses to
 * function names and C source lines, in normal context only, through
 * elfutils (symbol tables, separate debug files, DWARF line tables), so
 * that static functions of unstripped libraries have names, falling back
 * to stable "module!fn_0x<offset>" names for addresses in stripped code,
 * and "[unknown]" for addresses in no loaded module.
 * Results are cached per address; the module list is re-read by
 * CprofSymRefresh (call it before resolving a batch of addresses captured
 * since the last refresh, so that a library loaded meanwhile is known; an
 * address whose module was unloaded since it was captured may resolve to
 * "[unknown]", never to a wrong name).
 */

typedef struct CprofSymInfo {
    int nameId;			/* CprofNameIntern id of the function name
				 * ("fn", "module!fn_0x1a2b" or "[unknown]"). */
    int moduleId;		/* CprofNameIntern id of the module's base
				 * name ("libtcl8.6.so", "tclsh8.6"), or -1. */
    uintptr_t funcStart;	/* Function start address, or 0 if unknown. */
    int inTcl;			/* Address lies in the Tcl library itself. */
    int exact;			/* 1 if named from a symbol table, 0 if the
				 * name is synthesized. */
    int fileId;			/* CprofNameIntern id of the C source file
				 * of the address (DWARF), or -1. */
    int line;			/* Its line, or 0 if unknown. */
} CprofSymInfo;

MODULE_SCOPE CprofSymbolizer *CprofSymNew(void);
MODULE_SCOPE void	CprofSymFree(CprofSymbolizer *symPtr);
MODULE_SCOPE void	CprofSymSetLines(CprofSymbolizer *symPtr, int lines);
MODULE_SCOPE int	CprofSymFileDwarfOpened(void);
MODULE_SCOPE void	CprofSymRefresh(CprofSymbolizer *symPtr);
MODULE_SCOPE int	CprofSymWarm(CprofSymbolizer *symPtr,
			    const uintptr_t *addrs, int n);
MODULE_SCOPE void	CprofSymResolve(CprofSymbolizer *symPtr,
			    uintptr_t addr, CprofSymInfo *infoPtr);
MODULE_SCOPE int	CprofSymDebug(Tcl_Interp *interp, Tcl_Obj *addrsObj);

/*
 * Time: a clock in nanoseconds. clock_gettime goes through the vDSO for
 * the monotonic clock and is a plain system call for the CPU clocks.
 *
 * Signal safety:
 *	Async-signal-safe.
 */

static inline uint64_t
CprofClockNs(
    clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

#define CprofMonoNs() ((Tcl_WideInt) CprofClockNs(CLOCK_MONOTONIC))

/*
 * Unix time in seconds (runs' start and end times).
 */

static inline double
CprofWallSeconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif /* _TCLCPROFINT_H */
