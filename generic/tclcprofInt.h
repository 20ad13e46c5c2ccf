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
#include <sys/types.h>
#include <time.h>

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
 * Profiling modes.
 */

enum CprofMode {
    CPROF_MODE_SAMPLE = 0,	/* Timer-signal sampling (the default). */
    CPROF_MODE_STACK		/* Track the level stack only. */
};

enum CprofClock {
    CPROF_CLOCK_CPU = 0,	/* The thread's CPU time. */
    CPROF_CLOCK_WALL		/* Elapsed time, blocked time included. */
};

enum CprofNative {
    CPROF_NATIVE_USER = 0,	/* C frames outside libtcl. */
    CPROF_NATIVE_ALL,		/* Every C frame. */
    CPROF_NATIVE_NONE		/* Tcl frames only. */
};

/*
 * Options of start/configure.
 */

typedef struct CprofOptions {
    int mode;			/* enum CprofMode. */
    int clock;			/* enum CprofClock. */
    int native;			/* enum CprofNative. */
    int control;		/* Keep control commands (if, foreach...). */
    double rate;		/* Requested samples per second; 0: default
				 * of the clock. */
} CprofOptions;

/*
 * One Tcl frame as copied by the signal handler.
 */

typedef struct CprofTclRef {
    int nameId;
    int level;
    int kind;
    uintptr_t anchor;
} CprofTclRef;

/*
 * A raw sample, written by the signal handler into a preallocated ring
 * slot. Native frames are innermost first, as unwound; Tcl frames
 * outermost first, as on the level stack.
 */

#define CPROF_NATIVE_MAX	128
#define CPROF_TCL_MAX		128

#define CPROF_SAMPLE_NATIVE_TRUNC	0x1
#define CPROF_SAMPLE_TCL_TRUNC		0x2
#define CPROF_SAMPLE_NO_SIGFRAME	0x4	/* Interrupted frame not found:
						 * frames kept from the handler
						 * on. */

typedef struct CprofSample {
    uint32_t weight;		/* 1 + timer overruns. */
    uint16_t nNative;
    uint16_t nTcl;
    uint32_t flags;
    uint64_t timeNs;		/* CLOCK_MONOTONIC at the signal. */
    uintptr_t ip[CPROF_NATIVE_MAX];	/* ip[0] is the interrupted PC;
					 * the others return addresses. */
    uintptr_t cfa[CPROF_NATIVE_MAX];	/* Stack pointer of each frame (the
					 * value the splice compares with
					 * anchors). */
    CprofTclRef tcl[CPROF_TCL_MAX];
} CprofSample;

/*
 * The splice (splice.c): merge a sample's native and Tcl frames into one
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
			    CprofSpliceEntry *out, int *unmatchedPtr);

/*
 * The aggregated call tree (aggregate.c).
 */

typedef struct CprofFrameDef {
    int isC;			/* 0: Tcl frame, 1: native C function. */
    int nameId;
    int moduleId;		/* C: module name id or -1; Tcl: -1. */
    int tclKind;		/* Tcl: enum CprofFrameKind; C: -1. */
} CprofFrameDef;

typedef struct CprofNode {
    int frame;			/* Index into frames, -1 for the root. */
    int parent;
    int firstChild;
    int nextSibling;
    uint64_t self;		/* Weight of samples ending here ("In"). */
    uint64_t total;		/* Weight of samples through here ("Under"). */
} CprofNode;

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
} CprofTree;

#define CPROF_TREE_MAX_NODES	(1 << 22)

MODULE_SCOPE void	CprofTreeInit(CprofTree *treePtr);
MODULE_SCOPE void	CprofTreeFree(CprofTree *treePtr);
MODULE_SCOPE int	CprofTreeFrame(CprofTree *treePtr, int isC,
			    int nameId, int moduleId, int tclKind);
MODULE_SCOPE void	CprofTreeAdd(CprofTree *treePtr, const int *frames,
			    int numFrames, uint64_t weight);
MODULE_SCOPE Tcl_Obj *	CprofTreeToObj(CprofTree *treePtr);

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
 * The sampler of one thread (unix/sampler.c). The fields up to 'ring' are
 * read and written by the signal handler; the handler reaches the
 * structure through an initial-exec thread-local pointer.
 */

#define CPROF_HIST_BUCKETS 160

typedef struct CprofSamplerCounters {
    uint64_t signals;		/* Signals handled for this thread. */
    uint64_t weight;		/* Their weight (1 + overruns). */
    uint64_t samples;		/* Samples written to the ring. */
    uint64_t dropsFull;		/* Weight dropped: ring full. */
    uint64_t dropsBusy;		/* Weight dropped: handler re-entered. */
    uint64_t overhead;		/* Weight that landed in the profiler's
				 * own normal-context work (draining). */
    uint64_t nativeTrunc;	/* Samples with truncated native stacks. */
    uint64_t tclTrunc;		/* Samples with truncated Tcl stacks. */
    uint64_t noSigframe;	/* Samples whose interrupted frame was not
				 * found in the unwind. */
    uint64_t handlerNs;		/* Time spent in the handler. */
    uint64_t handlerHist[CPROF_HIST_BUCKETS];
				/* Handler time histogram, four buckets per
				 * power of two of ns (CprofHistBounds). */
} CprofSamplerCounters;

MODULE_SCOPE void	CprofHistBounds(int bucket, double *loPtr,
			    double *hiPtr);

typedef struct CprofSampler {
    volatile int enabled;	/* Handler records samples. */
    volatile int busy;		/* Handler running (re-entry guard). */
    volatile int draining;	/* Normal context is draining the ring:
				 * samples are counted as overhead. */
    volatile int needDrain;	/* Set by the handler when the ring is half
				 * full; polled by the trace callback. */
    CprofStack *stackPtr;	/* The profiled interpreter's level stack. */
    const int *numLevelsPtr;	/* &iPtr->numLevels of that interpreter. */
    CprofSample *slots;		/* Ring of preallocated samples. */
    uint32_t mask;		/* Number of slots - 1 (power of two). */
    volatile uint32_t head;	/* Next slot to write (handler). */
    volatile uint32_t tail;	/* Next slot to read (normal context). */
    CprofSamplerCounters counters;

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

MODULE_SCOPE int	CprofSamplerCreate(Tcl_Interp *interp,
			    CprofStack *stackPtr, const int *numLevelsPtr,
			    int clock, double rate, CprofSampler **samplerPtrPtr);
MODULE_SCOPE int	CprofSamplerArm(Tcl_Interp *interp,
			    CprofSampler *samplerPtr);
MODULE_SCOPE void	CprofSamplerDisarm(CprofSampler *samplerPtr);
MODULE_SCOPE void	CprofSamplerDestroy(CprofSampler *samplerPtr);
MODULE_SCOPE CprofSample *CprofSamplerPeek(CprofSampler *samplerPtr);
MODULE_SCOPE void	CprofSamplerRelease(CprofSampler *samplerPtr);
MODULE_SCOPE double	CprofDefaultRate(int clock);
MODULE_SCOPE const char *CprofSignalName(void);
MODULE_SCOPE uint64_t	CprofForeignSignals(void);
MODULE_SCOPE int	CprofUnwindReady(char *msg, size_t msgLen);
MODULE_SCOPE int	CprofNativeWalk(uintptr_t *ip, uintptr_t *cfa,
			    int max);

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

    /* Sampling. */
    CprofSampler *samplerPtr;	/* While sampling (mode sample). */
    CprofTree tree;		/* Aggregated samples. */
    CprofSymbolizer *symPtr;	/* Native names. */
    Tcl_TimerToken drainTimer;	/* Periodic drain from the event loop. */
    Tcl_WideInt splicedSamples;	/* Samples whose Tcl frames all matched. */
    Tcl_WideInt unsplicedSamples;/* Samples with unmatched Tcl frames. */
    Tcl_WideInt unmatchedFrames;/* Tcl frames that matched no anchor. */
    int hasData;		/* Something was collected since reset. */
    CprofSamplerCounters lastCounters;
				/* Counters of the last sampler, kept after
				 * stop. */
    double lastRate, lastAchieved;
    int lastClock;
    unsigned char *moduleFlags;	/* Per module name id: its class
				 * (aggregate.c, MOD_*). */
    int numModuleFlags;
} CprofState;

/*
 * Sample processing (aggregate.c).
 */

MODULE_SCOPE void	CprofDrain(CprofState *statePtr);
MODULE_SCOPE void	CprofAddSample(CprofState *statePtr,
			    const CprofSample *samplePtr);

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
MODULE_SCOPE const int *CprofNumLevelsPtr(Tcl_Interp *interp);

/*
 * Native side (unix/calibrate.c): libunwind in normal context only.
 */

MODULE_SCOPE int	CprofTrampolineRange(uintptr_t *startPtr,
			    uintptr_t *endPtr, char *msg, size_t msgLen);
MODULE_SCOPE int	CprofNativeTrampolines(uintptr_t start, uintptr_t end,
			    uintptr_t *sps, int max);

/*
 * Symbolizer (unix/symbolize.c): native addresses to function names, in
 * normal context only. An own ELF reader over .symtab/.dynsym of every
 * loaded module (so static functions of unstripped libraries have names),
 * falling back to stable "module!fn_0x<offset>" names for addresses in
 * stripped code, and "[unknown]" for addresses in no loaded module.
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
} CprofSymInfo;

MODULE_SCOPE CprofSymbolizer *CprofSymNew(void);
MODULE_SCOPE void	CprofSymFree(CprofSymbolizer *symPtr);
MODULE_SCOPE void	CprofSymRefresh(CprofSymbolizer *symPtr);
MODULE_SCOPE void	CprofSymResolve(CprofSymbolizer *symPtr,
			    uintptr_t addr, CprofSymInfo *infoPtr);

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

#endif /* _TCLCPROFINT_H */
