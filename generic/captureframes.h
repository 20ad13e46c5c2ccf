/*
 * captureframes.h --
 *
 *	The frames capture (-capture frames, captureframes.c): the signal handler
 *	reads Tcl's own frames (the CallFrame and CmdFrame chains of the
 *	interpreters recorded at start) into raw references, which the drain
 *	names. Shared by captureframes.c, the sampler's call site (unix/sampler.c)
 *	and the drain (drain.c).
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _CPROF_FRAMES_H
#define _CPROF_FRAMES_H

/*
 * A raw reference in a sample's tcl[] (CprofTclRef with nameId
 * CPROF_FRAMES_RAW): 'kind' is one of these, 'anchor' the object, 'ident'
 * a field read from it at the sample (checked at the drain), 'node' a
 * detail (a method's constructor/destructor flags, a command's pc offset).
 */

#define CPROF_FRAMES_RAW	(-2)

enum CprofRawKind {
    CPROF_RAW_PROC = 0,		/* anchor Proc*, ident its bodyPtr. */
    CPROF_RAW_LAMBDA,		/* apply's lambda: anchor Proc* (not read). */
    CPROF_RAW_METHOD,		/* anchor Method*, ident its namePtr, node
				 * the chain's CONSTRUCTOR|DESTRUCTOR. */
    CPROF_RAW_CMD,		/* A command invoked from bytecode: anchor
				 * its ByteCode, node the pc's offset, ident
				 * CPROF_RAW_RESUME when it resumed the
				 * coroutine whose frames are above it. */
    CPROF_RAW_EVAL,		/* A command of a script evaluated from its
				 * string (TclEvalEx: a top-level command of
				 * the main script, Tcl_Eval from C): anchor
				 * its text, ident the text's first bytes
				 * (copied at the sample), node its length,
				 * with CPROF_RAW_EVAL_RESUME when it resumed
				 * a coroutine. */
    CPROF_RAW_LIST,		/* A list evaluated directly (an event
				 * handler's script, maybe): anchor the list
				 * object, a key only (compared with the
				 * handlers' held scripts at the drain);
				 * ident CPROF_RAW_RESUME when it resumed the
				 * coroutine whose frames are above it.
				 * Written only when handlers are looked
				 * for (CprofFramesSetHandlers). */
    CPROF_RAW_OBJV		/* A command that C code runs through
				 * Tcl_EvalObjv (no command frame: found by
				 * the error callback Tcl queues for it):
				 * anchor its first word's text, ident the
				 * text's first bytes, node the word's
				 * length (bits 0-7), the second word's
				 * (bits 8-15, 0: none) and
				 * CPROF_RAW_EVAL_RESUME; siteCode the second
				 * word's text, siteOffset a digest of its
				 * first bytes (both checked at the drain). */
};

#define CPROF_RAW_WORD_MAX	255	/* Longer words: not shown. */
#define CPROF_RAW_METHOD_FORWARD 0x4000	/* In a CPROF_RAW_METHOD's node: a
				 * forward's call (no CallFrame; written
				 * where the object's command runs it). */

#define CPROF_RAW_EVAL_RESUME	0x40000000
#define CPROF_RAW_EVAL_LEN	0x3fffffff

#define CPROF_RAW_RESUME	((const void *) 1)
#define CPROF_RAW_CTOR		((const void *) 2)	/* The call site of a
				 * class's first constructor too. */

/*
 * The interpreters read (the sampler's own first, then its scope's others
 * in the thread). Slots are set and cleared by the owning thread.
 */

#define CPROF_FRAMES_INTERPS	33

typedef struct CprofFramesCounters {
    uint64_t samples;		/* Samples read. */
    uint64_t frames;		/* Raw frames written. */
    uint64_t tornProc;		/* A proc or method frame pushed and not
				 * yet filled (procPtr or context NULL). */
    uint64_t tornCoro;		/* A coroutine switch half done. */
    uint64_t cut;		/* Chains cut at the bound (depth, hops). */
    uint64_t named;		/* Drain: raw frames named. */
    uint64_t stale;		/* Drain: objects no longer live (frame
				 * shown as "[stale]"). */
    uint64_t unnamed;		/* Drain: commands whose bytecode was not
				 * found (frame left out). */
    uint64_t unanchored;	/* Drain: samples whose frames found too
				 * few trampolines to anchor them. */
    uint64_t calls;		/* Commands run through Tcl_EvalObjv
				 * written (CPROF_RAW_OBJV). */
} CprofFramesCounters;

typedef char CprofFramesCountersFit[
	sizeof(CprofFramesCounters) <= 12 * sizeof(uint64_t) ? 1 : -1];

typedef struct CprofFrames CprofFrames;

MODULE_SCOPE CprofFrames *CprofFramesNew(Tcl_Interp *interp,
			    CprofNaming *namingPtr);
MODULE_SCOPE void	CprofFramesFree(CprofFrames *fPtr);
MODULE_SCOPE int	CprofFramesAddInterp(CprofFrames *fPtr,
			    Tcl_Interp *interp, int interpId);
MODULE_SCOPE void	CprofFramesFloor(CprofFrames *fPtr);

/*
 * The event handlers' frames (captureevents.c): at the drain, the handler whose
 * script a frame's code is (isCode: a ByteCode found live and held) or a
 * list evaluated directly is (a key, compared only), as the name id of
 * its event frame, or -1. Normal context only.
 */

typedef int (CprofFramesHandlerProc)(void *data, int isCode,
			    const void *ptr);
MODULE_SCOPE void	CprofFramesSetHandlers(CprofFrames *fPtr,
			    CprofFramesHandlerProc *proc, void *data);
MODULE_SCOPE void	CprofFramesRemoveInterp(CprofFrames *fPtr,
			    Tcl_Interp *interp);
MODULE_SCOPE int	CprofFramesRead(CprofFrames *fPtr, CprofTclRef *out,
			    int max, uint32_t *flagsPtr);
/*
 * A sample's native stack, for the anchors of the frames named.
 */

typedef struct CprofNativeStack {
    const uintptr_t *ip;
    const uintptr_t *cfa;
    int n;
    uintptr_t trampStart, trampEnd;
} CprofNativeStack;

MODULE_SCOPE int	CprofFramesResolve(CprofFrames *fPtr,
			    const CprofTclRef *in, int nIn,
			    const CprofNativeStack *nativePtr, CprofTclRef *out);
MODULE_SCOPE int	CprofFramesStack(CprofFrames *fPtr,
			    CprofTclRef **outPtr);
MODULE_SCOPE int	CprofFramesResolveAll(CprofFrames *fPtr,
			    const CprofTclRef *raw, int n, int room,
			    CprofTclRef **outPtr);
/*
 * How the drain copies an object it has not checked yet without ever
 * faulting (captureframes.c, SafeCopy): probed once per process.
 */

enum {
    CPROF_COPY_UNPROBED = -1,
    CPROF_COPY_NONE = 0,	/* No way: the frames capture is not used. */
    CPROF_COPY_VM,		/* process_vm_readv on the process itself. */
    CPROF_COPY_PIPE		/* Through a pipe of the process's own. */
};

MODULE_SCOPE int	CprofFramesCopyMethod(const char *force);
MODULE_SCOPE const char *CprofFramesCopyName(int method);
MODULE_SCOPE void	CprofFramesCounts(CprofFrames *fPtr,
			    CprofFramesCounters *countersPtr);
MODULE_SCOPE Tcl_Obj *	CprofFramesStatus(const CprofFramesCounters *cPtr);

#endif /* _CPROF_FRAMES_H */
