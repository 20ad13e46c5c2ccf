/*
 * tclcprofInt.h --
 *
 *	Declarations shared by the parts of tclcprof: the per-interpreter
 *	profiling state, the level stack of executing Tcl commands, the name
 *	table and the native-anchor calibration.
 *
 *	Only generic/levelstack.c includes Tcl's private headers; everything
 *	declared here is expressed in public Tcl types, so that the rest of the
 *	package stays independent of Tcl's internal layout.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _TCLCPROFINT_H
#define _TCLCPROFINT_H

#include <tcl.h>
#include <stddef.h>
#include <stdint.h>

#ifndef MODULE_SCOPE
#   define MODULE_SCOPE extern __attribute__((__visibility__("hidden")))
#endif

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
    CPROF_KIND_COUNT
};

/*
 * Frame flags.
 */

#define CPROF_FRAME_FOLD	0x1	/* An ensemble frame whose implementation
				 * command has not been entered yet: that
				 * enter is folded into this frame. */
#define CPROF_FRAME_RESTORED	0x2	/* Restored from a suspended coroutine. */
#define CPROF_FRAME_NEXT	0x4	/* A method reached by [next]: no enter or
				 * leave of its own; popped by level. */

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
    unsigned short kind;	/* enum CprofFrameKind. */
    unsigned short flags;	/* CPROF_FRAME_* bits. */
    uint64_t enterNs;		/* Enter timestamp, when exact timing is on. */
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
 * Profiling modes. Only the level stack exists in this version; the
 * sampler and the exact timers build on it.
 */

enum CprofMode {
    CPROF_MODE_STACK = 0	/* Track the level stack only. */
};

/*
 * Options of start/configure.
 */

typedef struct CprofOptions {
    int mode;			/* enum CprofMode. */
    int control;		/* Show control commands (if, foreach...). */
} CprofOptions;

/*
 * Counters reported by status.
 */

typedef struct CprofCounters {
    Tcl_WideInt enters;		/* Enter events seen. */
    Tcl_WideInt leaves;		/* Leave events that popped a frame. */
    Tcl_WideInt strayLeaves;	/* Leave events with no matching frame. */
    Tcl_WideInt missingLeaves;	/* Frames popped without their leave. */
    Tcl_WideInt folded;		/* Ensemble implementation enters folded. */
    Tcl_WideInt coroSaves;	/* Coroutine frame sets saved at a yield. */
    Tcl_WideInt coroRestores;	/* ... and restored at a resume. */
    Tcl_WideInt nextFrames;	/* Frames made for methods run by [next]. */
} CprofCounters;

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
 * Per-interpreter state, kept as AssocData under CPROF_ASSOC.
 */

#define CPROF_ASSOC "tclcprof"
#define CPROF_FRONT_SIZE 256

typedef struct CprofState {
    Tcl_Interp *interp;
    int running;		/* start'ed and not stopped. */
    int paused;			/* Trace removed by pause. */
    Tcl_Trace trace;		/* Our object trace while installed. */
    CprofOptions options;
    CprofStack stack;
    CprofCounters counters;
    Tcl_WideInt startNs;	/* Monotonic time of start. */
    Tcl_WideInt stopNs;
    Tcl_WideInt pausedNs;	/* Accumulated paused time. */
    Tcl_WideInt pauseStartNs;
    Tcl_HashTable cmdCache;	/* Command* -> CmdInfo (levelstack.c). */
    struct CmdInfo *cmdFront[CPROF_FRONT_SIZE];
				/* Direct-mapped front of cmdCache. */
    Tcl_HashTable pairCache;	/* (ensemble, implementation) -> name id. */
    Tcl_HashTable methodCache;	/* "class method" key -> name id. */
    int methodEpoch;		/* TclOO epoch methodCache was built in. */
    Tcl_HashTable coroSaved;	/* corPtr -> CprofCoroSaved. */
    Tcl_Command stackCmd;	/* ::tclcprof::stack, not shown by itself. */
    Tcl_Command calibCmd;	/* Private command run to calibrate. */
    int calibrating;		/* Set while calibCmd runs. */
    uintptr_t calibMarker;	/* Marker address seen in calibCmd's enter. */
    uintptr_t calibTramp;	/* Trampoline SP found from the callback. */
    CprofCalibration calib;
    int deleting;		/* The interpreter is being deleted. */
} CprofState;

/*
 * Name table (levelstack.c): process-wide interned display names. Ids are
 * stable for the life of the process.
 */

MODULE_SCOPE int	CprofNameIntern(const char *name, int length);
MODULE_SCOPE const char *CprofNameString(int id);
MODULE_SCOPE int	CprofNameCount(void);

/*
 * Level stack (levelstack.c).
 */

MODULE_SCOPE int	CprofCheckTclVersion(Tcl_Interp *interp);
MODULE_SCOPE void	CprofStackInitState(CprofState *statePtr);
MODULE_SCOPE void	CprofStackFreeState(CprofState *statePtr);
MODULE_SCOPE int	CprofStackInstall(CprofState *statePtr);
MODULE_SCOPE void	CprofStackRemove(CprofState *statePtr);
MODULE_SCOPE void	CprofStackClear(CprofState *statePtr);
MODULE_SCOPE int	CprofStackCalibrate(CprofState *statePtr);
MODULE_SCOPE const char *CprofKindName(int kind);
MODULE_SCOPE int	CprofStackLiveDepth(CprofState *statePtr);

/*
 * Native side (unix/calibrate.c): libunwind in normal context only.
 */

MODULE_SCOPE int	CprofTrampolineRange(uintptr_t *startPtr,
			    uintptr_t *endPtr, char *msg, size_t msgLen);
MODULE_SCOPE int	CprofNativeTrampolines(uintptr_t start, uintptr_t end,
			    uintptr_t *sps, int max);

/*
 * Time (tclcprof.c).
 */

MODULE_SCOPE Tcl_WideInt CprofMonoNs(void);

#endif /* _TCLCPROFINT_H */
