/*
 * frames.c --
 *
 *	The frames capture (-capture frames): no hook on any command. The
 *	signal handler reads Tcl's own frames, and the drain names them.
 *	It sits beside the captures of capture.c and below aggregate.c: the
 *	sampler (unix/sampler.c, CprofCopyTclFrames) calls CprofFramesRead
 *	in the handler, the drain (aggregate.c) calls CprofFramesResolve.
 *
 *	In the handler (CprofFramesRead), for each interpreter recorded at
 *	start, two chains are merged into one stack, innermost first:
 *
 *	- the CallFrame chain, iPtr->framePtr -> callerPtr: one frame per
 *	  proc, lambda (apply), TclOO method, namespace eval. framePtr, not
 *	  varFramePtr: uplevel moves only the latter, so this chain is the
 *	  call order;
 *	- the CmdFrame chain, iPtr->cmdFramePtr -> nextPtr: each bytecode
 *	  level that is invoking a command has its CmdFrame linked, with
 *	  the ByteCode and the pc of the invocation, and the CallFrame the
 *	  level runs in (framePtr). A CmdFrame whose command pushed the
 *	  CallFrame just below it (a proc's invocation) is that frame's call
 *	  site; any other is a command of its own (C commands, ensembles,
 *	  namespace eval, coroutine resumes).
 *
 *	A coroutine's chains end at the root frame; its resumer's context
 *	is saved in corPtr->caller and the walk goes on there, so that the
 *	coroutine's frames are under its resume point.
 *
 *	Only raw references are written (frames.h): a Proc*, a Method*, a
 *	ByteCode and pc offset, with a field of the object read then. The
 *	drain names them after checking, in normal context, that the object
 *	is still the one sampled, and holds it so that its address cannot
 *	be another's for the rest of the run.
 *
 *	Why the handler never faults. It interrupts the thread that owns the
 *	interpreters it reads (each is recorded by that thread at start and
 *	removed by it before the interpreter goes), so the chains it walks
 *	are the ones the interrupted code has linked: every CallFrame and
 *	CmdFrame linked from iPtr->framePtr / cmdFramePtr (or from a running
 *	coroutine's saved caller context) lives on Tcl's execution stack or
 *	the C stack until it is unlinked, and Tcl unlinks before it frees
 *	(Tcl_PopCallFrame, tclNamesp.c:391; TEBC relinks cmdFramePtr before
 *	its TEBCdata goes). A linked proc frame's Proc, a method frame's
 *	CallContext and call chain, and the ByteCode of a level that is
 *	invoking are reference-counted while they run. Tcl_PushCallFrame
 *	fills a frame before publishing it (tclNamesp.c:339-353), but the
 *	proc's and the method's fields are set just after the push
 *	(tclProc.c:1608-1614, tclOOMethod.c:878-884): a proc or method frame
 *	whose procPtr or clientData is NULL is such a torn frame, left out
 *	and counted, never named. A half-done coroutine switch (the caller's
 *	context restored, the environment not yet switched back) shows the
 *	caller's frames with the coroutine's environment: recognised by the
 *	saved context being the one walked, counted, not walked twice. The
 *	walk is bounded (frames, coroutine hops, steps), so a chain that
 *	loops cannot hold the handler. Nothing else is dereferenced: no
 *	Command, no Tcl_Obj, no name; those are read at the drain. The one
 *	exception, the first bytes of the command an eval CmdFrame runs
 *	(TclEvalEx's: a script evaluated from its string), is copied with
 *	process_vm_readv, a system call that fails instead of faulting.
 *
 *	Why the drain never reads freed memory. A raw reference seen for the
 *	first time is copied with process_vm_readv on the process itself
 *	(which fails with EFAULT on an unmapped page instead of faulting;
 *	where it is refused, through a pipe, which fails the same way: see
 *	SafeCopy; where neither works the capture is not used), and the copy
 *	checked: a Proc still counted, with the body sampled,
 *	whose command's record still names it; a Method still counted, with
 *	the name sampled; a ByteCode of this interpreter, still counted, the
 *	pc in its code. Only then is the object read in place, named, and
 *	held (its reference count raised) until the run stops, so that later
 *	samples find it in the table and cannot meet another object at its
 *	address. A reference that fails the check is counted as stale.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _GNU_SOURCE
#   define _GNU_SOURCE		/* process_vm_readv */
#endif
#include <tclInt.h>
#include <tclCompile.h>
#include <tclOOInt.h>
#include "tclcprofInt.h"
#include "frames.h"
#include <string.h>
#include <unistd.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/uio.h>

/*
 * Bounds of one interpreter's walk.
 */

#define MAX_HOPS	64	/* Coroutine resumers followed. */
#define MAX_STEPS	4096	/* CallFrames and CmdFrames visited. */

/*
 * Held objects (normal context): when a table grows past this, it is let
 * go and starts afresh (later samples check their objects again).
 */

#define MAX_HELD	16384

/*
 * The NRE callback a coroutine's resume queues on its resumer's stack
 * (NRCoroutineCallerCallback, tclBasic.c:8837, static in libtcl): learnt
 * once per process by ProbeCoroutineCaller. With it the handler knows a
 * resume half done (the coroutine's context restored, the environment not
 * yet switched, tclBasic.c:8849-8852) and finds its resumer.
 */

static Tcl_NRPostProc *volatile coroCallerCb = NULL;
static int coroProbed = 0;
TCL_DECLARE_MUTEX(probeMutex)

typedef struct FramesInterp {
    Interp *volatile iPtr;	/* NULL: free slot. */
    int interpId;		/* Its frames' CprofTclRef.interpId. */
} FramesInterp;

/*
 * Without -seed, the frames running at start are left out, as the wrapper
 * never saw them: the CallFrames and CmdFrames linked then, by level (a
 * CmdFrame with the pc or command it ran then: its level runs others
 * later). The walk stops at the first it meets again.
 */

#define FLOOR_SLOTS	512	/* Open addressing by the frame's address. */
#define FLOOR_PROBES	8

typedef struct FloorEntry {
    const void *ptr;
    const void *key[2];
} FloorEntry;

struct CprofFrames {
    /* Read by the handler. */
    FramesInterp interps[CPROF_FRAMES_INTERPS];
    int floor;			/* Frames running at start left out. */
    int floorLevel;		/* The innermost CmdFrame's level then: a
				 * deeper one is not looked up, nor a
				 * CallFrame just below one. */
    FloorEntry floorTable[FLOOR_SLOTS];
    volatile int numInterps;	/* Slots in use or once used. */
    CprofFramesHandlerProc *volatile handlerProc;
				/* Event handlers looked for (lists evaluated
				 * directly are then read). */
    void *handlerData;
    CprofFramesCounters counters;
    pid_t pid;			/* The process (process_vm_readv). */
    struct {
	const char *text;
	int len;
	uintptr_t head;
    } heads[64];		/* The first bytes of eval frames' texts
				 * copied lately, by address (the handler's
				 * own: no copy for the main script's
				 * top-level command at every sample). */

    /* Normal context. */
    Tcl_Interp *interp;		/* The sampler's interpreter. */
    CprofNaming *namingPtr;
    Tcl_HashTable procs;	/* Proc* -> HeldProc. */
    Tcl_HashTable methods;	/* Method* -> HeldMethod. */
    Tcl_HashTable codes;	/* ByteCode* -> (nothing): held ones. */
    Tcl_HashTable sites;	/* pc address (in a held ByteCode) -> name
				 * id + 1, or 0 (no name). */
    CprofNameRefs refs;		/* The names given out, held. */
    int applyId, applyKind;	/* The name of apply's lambda frames. */
    int staleId;		/* "[stale]". */
    void *libtclBase;		/* Where libtcl is loaded (MethodNests). */
};

typedef struct HeldProc {
    Proc *procPtr;
    const void *bodyPtr;
    Command *cmdPtr;		/* Its command, held: renamed (its epoch
				 * moves), it is named again. */
    int epoch;
    int nameId;
    int kind;
} HeldProc;

typedef struct HeldMethod {
    Method *mPtr;
    const void *namePtr;
    int nameId[4];		/* By CONSTRUCTOR|DESTRUCTOR flags (bits 0
				 * and 1 once shifted), -2: not named yet. */
} HeldMethod;

/*
 *----------------------------------------------------------------------
 *
 * CprofFramesRead --
 *
 *	Signal handler side: the raw frames of every interpreter recorded,
 *	the sampler's own first, each outermost first; when they hold more
 *	than 'max', the innermost are kept (CPROF_SAMPLE_TCL_TRUNC). Sets
 *	CPROF_SAMPLE_RAW in *flagsPtr.
 *
 * Results:
 *	The number of references written to out[].
 *
 * Signal safety:
 *	Reads only the chains linked from the recorded interpreters (see the
 *	file's comment), writes only out[] and the counters.
 *
 *----------------------------------------------------------------------
 */

static inline int
IsBytecodeFrame(
    const CmdFrame *cfPtr)
{
    return (cfPtr->type == TCL_LOCATION_BC
	    || cfPtr->type == TCL_LOCATION_PREBC)
	    && cfPtr->data.tebc.codePtr != NULL
	    && cfPtr->data.tebc.pc != NULL;
}

/*
 * A command of a script evaluated from its string: TclEvalEx's CmdFrame
 * (tclBasic.c:5087-5148, type EVAL or SOURCE) is linked for the whole
 * script (unlinked while a word is substituted, 5235/5299); it runs a
 * command while nline > 0, set with cmd and len just before the command
 * is evaluated and back to 0 after it (5360-5377). A list evaluated
 * directly has cmdObj and no cmd (nline 0, tclBasic.c:6140-6152).
 */

static inline int
IsEvalFrame(
    const CmdFrame *cfPtr)
{
    return (cfPtr->type == TCL_LOCATION_EVAL
	    || cfPtr->type == TCL_LOCATION_SOURCE)
	    && cfPtr->nline > 0 && cfPtr->line != NULL
	    && cfPtr->cmd != NULL && cfPtr->len > 0;
}

/*
 * Whether the frame whose words are objv was invoked by the command that
 * an eval CmdFrame runs: TclEvalEx passes Tcl_EvalObjv its words in an
 * array allocated on Tcl's stack right after the CmdFrame (a marker word
 * and an alignment word between them: tclExecute.c:1114-1128), or in a
 * ckalloc'ed one beyond 20 words.
 */

#define EVAL_STATIC_WORDS	20

static inline int
EvalInvoked(
    const CmdFrame *cfPtr,
    int objc,
    Tcl_Obj *const *objv)
{
    const char *after = (const char *) (cfPtr + 1);

    if (objc != (int) cfPtr->nline) {
	return 0;
    }
    return objc > EVAL_STATIC_WORDS || ((const char *) objv >= after
	    && (const char *) objv <= after + 4 * sizeof(void *));
}

/*
 * The first bytes of an eval frame's command text (up to 8), copied with
 * process_vm_readv, which fails instead of faulting: the text is the
 * script TclEvalEx holds while its frame runs a command, but cmd is set
 * in a store the compiler may put after nline's. 0 if it could not be
 * read (a command's text never starts with a NUL byte). The drain finds
 * the same bytes at that address again, or leaves the frame out.
 */

static inline uintptr_t
TextHead(
    CprofFrames *fPtr,
    const char *text,
    int len)
{
    uintptr_t head = 0;
    struct iovec local, remote;
    int slot = (int) (((uintptr_t) text >> 3) & 63);

    /*
     * The same text and length as a copy made before: its bytes then
     * (the drain checks them against the text's bytes at its time all
     * the same). The slot is cleared while it is rewritten.
     */

    if (fPtr->heads[slot].text == text && fPtr->heads[slot].len == len
	    && fPtr->heads[slot].head != 0) {
	return fPtr->heads[slot].head;
    }

    local.iov_base = &head;
    local.iov_len = (len < (int) sizeof(head)) ? (size_t) len : sizeof(head);
    remote.iov_base = (void *) text;
    remote.iov_len = local.iov_len;
    if (process_vm_readv(fPtr->pid, &local, 1, &remote, 1, 0)
	    != (ssize_t) local.iov_len) {
	return 0;
    }
    fPtr->heads[slot].head = 0;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    fPtr->heads[slot].text = text;
    fPtr->heads[slot].len = len;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    fPtr->heads[slot].head = head;
    return head;
}

/*
 * The bytecode engine's record of a level (tclExecute.c:169-179, private
 * to it; the same in every 8.6 release): a CmdFrame for the command being
 * invoked sits in it, followed by the level's catch and operand stacks,
 * where the words of a command it invokes are.
 */

typedef struct TEBCdata {
    ByteCode *codePtr;
    ptrdiff_t *catchTop;
    Tcl_Obj *auxObjList;
    CmdFrame cmdFrame;
    void *stack[1];
} TEBCdata;

/*
 * Whether objv, the words of a frame's call, lies in the operand stack of
 * the level whose CmdFrame this is, and objc is the number of words its
 * invoke instruction passes (INST_INVOKE_STK1/4 at the pc; any other
 * instruction, {*} for one, is not checked): then that level invoked it,
 * and this CmdFrame is its call site; otherwise the level invoked a
 * command of its own (a C command that called the frame's code through
 * Tcl_EvalObjv, even with its own words).
 */

static inline int
InvokedFrom(
    const CmdFrame *cfPtr,
    int objc,
    Tcl_Obj *const *objv)
{
    const TEBCdata *tdPtr = (const TEBCdata *) ((const char *) cfPtr
	    - offsetof(TEBCdata, cmdFrame));
    const ByteCode *codePtr = (const ByteCode *) cfPtr->data.tebc.codePtr;
    const unsigned char *pc = (const unsigned char *) cfPtr->data.tebc.pc;
    const void *start = &tdPtr->stack[0];
    const void *end = &tdPtr->stack[codePtr->maxExceptDepth
	    + codePtr->maxStackDepth + 1];

    if ((const void *) objv < start || (const void *) objv >= end) {
	return 0;
    }
    if (pc[0] == INST_INVOKE_STK1) {
	return objc == pc[1];
    }
    if (pc[0] == INST_INVOKE_STK4) {
	return objc == (int) (((unsigned) pc[1] << 24)
		| ((unsigned) pc[2] << 16) | ((unsigned) pc[3] << 8) | pc[4]);
    }
    return 1;
}

static inline void
SetSite(
    CprofTclRef *refPtr,
    const CmdFrame *cfPtr)
{
    ptrdiff_t offset = cfPtr->data.tebc.pc
	    - (const char *) cfPtr->data.tebc.codePtr;

    if (offset > 0 && offset <= CPROF_SITE_OFFSET_MAX) {
	refPtr->siteCode = cfPtr->data.tebc.codePtr;
	refPtr->siteOffset = (unsigned) offset;
    }
}

static inline CprofTclRef *
NewRef(
    CprofTclRef *out,
    int *nPtr,
    int room,
    int interpId,
    int kind,
    const void *object,
    const void *ident,
    int detail)
{
    CprofTclRef *refPtr;

    if (*nPtr >= room) {
	return NULL;
    }
    refPtr = &out[(*nPtr)++];
    refPtr->nameId = CPROF_FRAMES_RAW;
    refPtr->kind = kind;
    refPtr->flags = 0;
    refPtr->siteOffset = 0;
    refPtr->node = detail;
    refPtr->interpId = interpId;
    refPtr->anchor = (uintptr_t) object;
    refPtr->siteCode = NULL;
    refPtr->ident = ident;
    return refPtr;
}

static inline const void *
CmdFrameKey(
    const CmdFrame *cfPtr)
{
    if (cfPtr->type == TCL_LOCATION_BC || cfPtr->type == TCL_LOCATION_PREBC) {
	return cfPtr->data.tebc.pc;
    }
    return (cfPtr->cmd != NULL) ? (const void *) cfPtr->cmd
	    : (const void *) cfPtr->cmdObj;
}

static inline unsigned
FloorSlot(
    const void *ptr)
{
    uintptr_t h = (uintptr_t) ptr;

    h ^= h >> 9;
    h ^= h >> 17;
    return (unsigned) (h & (FLOOR_SLOTS - 1));
}

static inline int
InFloor(
    const CprofFrames *fPtr,
    const void *ptr,
    const void *key0,
    const void *key1)
{
    unsigned slot = FloorSlot(ptr), i;

    for (i = 0; i < FLOOR_PROBES; i++) {
	const FloorEntry *ePtr = &fPtr->floorTable[(slot + i)
		& (FLOOR_SLOTS - 1)];

	if (ePtr->ptr == NULL) {
	    return 0;
	}
	if (ePtr->ptr == ptr) {
	    return ePtr->key[0] == key0 && ePtr->key[1] == key1;
	}
    }
    return 0;
}

static inline int
BelowFloorCmd(
    const CprofFrames *fPtr,
    const CmdFrame *cfPtr)
{
    return InFloor(fPtr, cfPtr, CmdFrameKey(cfPtr), NULL);
}

static inline int
BelowFloorCall(
    const CprofFrames *fPtr,
    const CallFrame *framePtr)
{
    return InFloor(fPtr, framePtr, framePtr->procPtr, framePtr->objv);
}

/*
 * One interpreter, innermost first into out[0..room). Returns the number
 * written; *truncPtr is set when frames were left.
 */

static int
ReadInterp(
    CprofFrames *fPtr,
    Interp *iPtr,
    int interpId,
    CprofTclRef *out,
    int room,
    int *truncPtr)
{
    CallFrame *framePtr = iPtr->framePtr;
    CmdFrame *cfPtr = iPtr->cmdFramePtr;
    ExecEnv *eePtr = iPtr->execEnvPtr;
    CprofTclRef *callPtr = NULL;	/* The frame just emitted whose call
					 * site is still to be found, */
    Tcl_Obj *const *callObjv = NULL;	/* and the words of its call. */
    int callObjc = 0;
    const CallContext *lastCtxPtr = NULL;
    int lastIndex = 0;		/* A method frame's context and index in
				 * its chain: the frames of [next] share
				 * the context, each one index up. */
    int n = 0, hops = 0, steps = 0, resumed = 0;
    int lastCmdLevel = 0;	/* The last CmdFrame's level. */
    int callFirstCtor = 0;	/* callPtr is a class's first constructor
				 * (not one reached by [next]). */
    ExecEnv *firstEePtr = eePtr;
    Tcl_NRPostProc *callerCb = coroCallerCb;

    while (1) {
	CallFrame *contextFramePtr = framePtr;
	CmdFrame *contextCfPtr = cfPtr;
	CoroutineData *corPtr;

	while (framePtr != NULL) {
	    int flags;

	    /*
	     * The commands invoked from this frame's code, innermost first.
	     */

	    while (cfPtr != NULL && cfPtr->framePtr == framePtr) {
		if (++steps > MAX_STEPS) {
		    goto cut;
		}
		lastCmdLevel = cfPtr->level;
		if (fPtr->floor && interpId < 0
			&& lastCmdLevel <= fPtr->floorLevel
			&& BelowFloorCmd(fPtr, cfPtr)) {
		    return n;
		}
		if (IsEvalFrame(cfPtr)) {
		    /*
		     * A command of a script evaluated from its string: the
		     * call of the frame below, or a frame of its own.
		     */

		    if (callPtr == NULL
			    || !EvalInvoked(cfPtr, callObjc, callObjv)) {
			uintptr_t head = TextHead(fPtr, cfPtr->cmd,
				(int) cfPtr->len);

			if (head != 0) {
			    if (NewRef(out, &n, room, interpId, CPROF_RAW_EVAL,
				    cfPtr->cmd, (const void *) head,
				    (int) (cfPtr->len & CPROF_RAW_EVAL_LEN)
				    | (resumed ? CPROF_RAW_EVAL_RESUME : 0))
				    == NULL) {
				goto full;
			    }
			    resumed = 0;
			}
		    }
		    callPtr = NULL;
		} else if (!IsBytecodeFrame(cfPtr)) {
		    /*
		     * A list evaluated directly invoked the frame below (or a
		     * command): no call site to keep. With event handlers
		     * looked for, the list is kept as a key (an [after] or
		     * [fileevent] script, maybe).
		     */

		    if (fPtr->handlerProc != NULL
			    && cfPtr->type == TCL_LOCATION_EVAL
			    && cfPtr->cmd == NULL && cfPtr->cmdObj != NULL) {
			if (NewRef(out, &n, room, interpId, CPROF_RAW_LIST,
				cfPtr->cmdObj,
				resumed ? CPROF_RAW_RESUME : NULL, 0) == NULL) {
			    goto full;
			}
			resumed = 0;
		    }
		    callPtr = NULL;
		} else {
		    int own = 1, own2 = 1;

		    if (callPtr != NULL && InvokedFrom(cfPtr, callObjc, callObjv)) {
			/*
			 * The call site of the frame below; a constructor's
			 * is a frame of its own too (create, new), as the
			 * wrapper shows it.
			 */

			SetSite(callPtr, cfPtr);
			own = callFirstCtor;
			own2 = 0;
		    }
		    callPtr = NULL;
		    if (own) {
			CprofTclRef *refPtr;

			refPtr = NewRef(out, &n, room, interpId,
				CPROF_RAW_CMD, cfPtr->data.tebc.codePtr,
				resumed ? CPROF_RAW_RESUME
				: (callFirstCtor && !own2) ? CPROF_RAW_CTOR : NULL,
				(int) (cfPtr->data.tebc.pc
				- (const char *) cfPtr->data.tebc.codePtr));
			if (refPtr == NULL) {
			    goto full;
			}
			SetSite(refPtr, cfPtr);
			resumed = 0;
		    }
		}
		cfPtr = cfPtr->nextPtr;
	    }
	    callPtr = NULL;
	    if (++steps > MAX_STEPS) {
		goto cut;
	    }
	    if (fPtr->floor && interpId < 0
		    && lastCmdLevel <= fPtr->floorLevel
		    && BelowFloorCall(fPtr, framePtr)) {
		return n;
	    }

	    flags = framePtr->isProcCallFrame;
	    if (flags & FRAME_IS_METHOD) {
		CallContext *ctxPtr = (CallContext *) framePtr->clientData;
		CallChain *chainPtr;
		int index = (ctxPtr != NULL && ctxPtr == lastCtxPtr)
			? lastIndex - 1 : (ctxPtr ? ctxPtr->index : -1);

		if (ctxPtr == NULL || framePtr->procPtr == NULL
			|| (chainPtr = ctxPtr->callPtr) == NULL
			|| index < 0 || index >= chainPtr->numChain
			|| chainPtr->chain == NULL
			|| chainPtr->chain[index].mPtr == NULL) {
		    fPtr->counters.tornProc++;
		} else {
		    Method *mPtr = chainPtr->chain[index].mPtr;

		    lastCtxPtr = ctxPtr;
		    lastIndex = index;
		    callFirstCtor = (chainPtr->flags & CONSTRUCTOR) && index == 0;
		    callPtr = NewRef(out, &n, room, interpId,
			    CPROF_RAW_METHOD, mPtr, mPtr->namePtr,
			    chainPtr->flags & (CONSTRUCTOR | DESTRUCTOR));
		    if (callPtr == NULL) {
			goto full;
		    }
		    callObjv = framePtr->objv;
		    callObjc = framePtr->objc;
		}
	    } else if (flags & FRAME_IS_PROC) {
		Proc *procPtr = framePtr->procPtr;

		if (procPtr == NULL) {
		    fPtr->counters.tornProc++;
		} else {
		    int lambda = (flags & FRAME_IS_LAMBDA) != 0;

		    callPtr = NewRef(out, &n, room, interpId,
			    lambda ? CPROF_RAW_LAMBDA : CPROF_RAW_PROC,
			    procPtr, lambda ? NULL : procPtr->bodyPtr, 0);
		    if (callPtr == NULL) {
			goto full;
		    }
		    callObjv = framePtr->objv;
		    callObjc = framePtr->objc;
		}
	    }
	    framePtr = framePtr->callerPtr;
	}

	/*
	 * The end of a context: a running coroutine's goes on in its
	 * resumer's.
	 */

	if (hops == 0 && callerCb != NULL && firstEePtr != NULL
		&& firstEePtr->callbackPtr != NULL
		&& firstEePtr->callbackPtr->procPtr == callerCb) {
	    CoroutineData *resPtr = (CoroutineData *)
		    firstEePtr->callbackPtr->data[0];

	    if (resPtr != NULL && resPtr->eePtr != firstEePtr
		    && resPtr->running.framePtr == contextFramePtr
		    && resPtr->running.cmdFramePtr == contextCfPtr) {
		/*
		 * Half resumed: what was walked is the coroutine's; its
		 * resumer's context is saved already.
		 */

		fPtr->counters.tornCoro++;
		hops++;
		callPtr = NULL;
		resumed = 1;
		framePtr = resPtr->caller.framePtr;
		cfPtr = resPtr->caller.cmdFramePtr;
		continue;
	    }
	}
	corPtr = (eePtr != NULL) ? eePtr->corPtr : NULL;
	if (corPtr == NULL || corPtr->eePtr != eePtr) {
	    break;
	}
	if (corPtr->caller.framePtr == contextFramePtr
		&& corPtr->caller.cmdFramePtr == contextCfPtr) {
	    /*
	     * Half switched: the resumer's context is back, the coroutine's
	     * environment not yet gone. What was walked is the resumer's.
	     */

	    fPtr->counters.tornCoro++;
	    break;
	}
	if (++hops > MAX_HOPS) {
	    goto cut;
	}
	callPtr = NULL;
	resumed = 1;
	framePtr = corPtr->caller.framePtr;
	cfPtr = corPtr->caller.cmdFramePtr;
	eePtr = corPtr->callerEEPtr;
    }
    return n;

  cut:
    fPtr->counters.cut++;
    return n;

  full:
    *truncPtr = 1;
    return n;
}

int
CprofFramesRead(
    CprofFrames *fPtr,
    CprofTclRef *out,
    int max,
    uint32_t *flagsPtr)
{
    int numInterps = __atomic_load_n(&fPtr->numInterps, __ATOMIC_ACQUIRE);
    int i, n = 0, truncated = 0;

    for (i = 0; i < numInterps && n < max; i++) {
	Interp *iPtr = __atomic_load_n(&fPtr->interps[i].iPtr,
		__ATOMIC_ACQUIRE);
	int got, a, b, room;

	if (iPtr == NULL) {
	    continue;
	}

	/*
	 * The sampler's own interpreter keeps at least half the room when
	 * there are others.
	 */

	room = (i == 0 && numInterps > 1) ? max / 2 : max - n;
	got = ReadInterp(fPtr, iPtr, fPtr->interps[i].interpId, out + n,
		room, &truncated);

	/*
	 * Innermost first as read; outermost first as stored. The innermost
	 * is at its interpreter's current level.
	 */

	if (got > 0) {
	    out[n].flags |= CPROF_REF_CURRENT;
	}
	for (a = n, b = n + got - 1; a < b; a++, b--) {
	    CprofTclRef tmp = out[a];

	    out[a] = out[b];
	    out[b] = tmp;
	}
	n += got;
    }
    fPtr->counters.samples++;
    fPtr->counters.frames += n;
    *flagsPtr |= CPROF_SAMPLE_RAW | (truncated ? CPROF_SAMPLE_TCL_TRUNC : 0);
    return n;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofFramesNew, CprofFramesFree, CprofFramesAddInterp,
 * CprofFramesRemoveInterp --
 *
 *	The reader of a sampler's thread: made at start with the sampler's
 *	interpreter, other interpreters of the thread added and removed by
 *	the thread itself (the signal fence orders the slot against the
 *	handler). Free lets go of every object held.
 *
 *----------------------------------------------------------------------
 */

static int
NameOfCommand(
    CprofFrames *fPtr,
    const char *name,
    int *kindPtr)
{
    Tcl_Command token = Tcl_FindCommand(fPtr->interp, name, NULL,
	    TCL_GLOBAL_ONLY);

    if (token != NULL) {
	const CprofCmdName *namePtr = CprofNameCommand(fPtr->namingPtr,
		token);

	if (namePtr != NULL && namePtr->nameId >= 0) {
	    *kindPtr = namePtr->kind;
	    CprofNameHold(&fPtr->refs, namePtr->nameId);
	    return namePtr->nameId;
	}
    }
    *kindPtr = CPROF_KIND_CMD;
    return CprofNameInternIn(&fPtr->refs, name, -1);
}

static int
ProbeCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Interp *iPtr = (Interp *) interp;
    CoroutineData *corPtr = iPtr->execEnvPtr->corPtr;

    if (corPtr != NULL && corPtr->callerEEPtr != NULL
	    && corPtr->callerEEPtr->callbackPtr != NULL) {
	coroCallerCb = corPtr->callerEEPtr->callbackPtr->procPtr;
    }
    return TCL_OK;
}

static void
ProbeCoroutineCaller(
    Tcl_Interp *interp)
{
    Tcl_InterpState saved;

    Tcl_MutexLock(&probeMutex);
    if (coroProbed) {
	Tcl_MutexUnlock(&probeMutex);
	return;
    }
    coroProbed = 1;
    saved = Tcl_SaveInterpState(interp, TCL_OK);
    Tcl_CreateObjCommand(interp, "::tclcprof::FramesProbe", ProbeCmd, NULL,
	    NULL);
    (void) Tcl_EvalEx(interp, "::coroutine ::tclcprof::FramesProbeCoro"
	    " ::apply {{} {::yield; ::tclcprof::FramesProbe}}\n"
	    "::tclcprof::FramesProbeCoro", -1, TCL_EVAL_GLOBAL);
    Tcl_DeleteCommand(interp, "::tclcprof::FramesProbe");
    Tcl_DeleteCommand(interp, "::tclcprof::FramesProbeCoro");
    Tcl_RestoreInterpState(interp, saved);
    Tcl_MutexUnlock(&probeMutex);
}

CprofFrames *
CprofFramesNew(
    Tcl_Interp *interp,
    CprofNaming *namingPtr)
{
    CprofFrames *fPtr = (CprofFrames *) ckalloc(sizeof(CprofFrames));

    ProbeCoroutineCaller(interp);
    (void) CprofFramesCopyMethod(NULL);
    memset(fPtr, 0, sizeof(CprofFrames));
    fPtr->interp = interp;
    fPtr->namingPtr = namingPtr;
    fPtr->pid = getpid();
    Tcl_InitHashTable(&fPtr->procs, TCL_ONE_WORD_KEYS);
    Tcl_InitHashTable(&fPtr->methods, TCL_ONE_WORD_KEYS);
    Tcl_InitHashTable(&fPtr->codes, TCL_ONE_WORD_KEYS);
    Tcl_InitHashTable(&fPtr->sites, TCL_ONE_WORD_KEYS);
    fPtr->applyId = NameOfCommand(fPtr, "::apply", &fPtr->applyKind);
    fPtr->staleId = CprofNameIntern("[stale]", -1);
    fPtr->interps[0].iPtr = (Interp *) interp;
    fPtr->interps[0].interpId = -1;
    fPtr->numInterps = 1;
    return fPtr;
}

/*
 * A method's reference let go of: what TclOODelMethodRef does
 * (tclOOMethod.c:270-283), which libtcl does not export.
 */

static void
LetGoOfMethod(
    Method *mPtr)
{
    if (mPtr->refCount-- <= 1) {
	if (mPtr->typePtr != NULL && mPtr->typePtr->deleteProc != NULL) {
	    mPtr->typePtr->deleteProc(mPtr->clientData);
	}
	if (mPtr->namePtr != NULL) {
	    Tcl_DecrRefCount(mPtr->namePtr);
	}
	ckfree(mPtr);
    }
}

static void
ReleaseHeld(
    CprofFrames *fPtr)
{
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    for (hPtr = Tcl_FirstHashEntry(&fPtr->procs, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	HeldProc *hpPtr = Tcl_GetHashValue(hPtr);

	if (hpPtr != NULL) {
	    if (--hpPtr->procPtr->refCount <= 0) {
		TclProcCleanupProc(hpPtr->procPtr);
	    }
	    TclCleanupCommandMacro(hpPtr->cmdPtr);
	    ckfree(hpPtr);
	}
    }
    for (hPtr = Tcl_FirstHashEntry(&fPtr->methods, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	HeldMethod *hmPtr = Tcl_GetHashValue(hPtr);

	if (hmPtr != NULL) {
	    LetGoOfMethod(hmPtr->mPtr);
	    ckfree(hmPtr);
	}
    }
    for (hPtr = Tcl_FirstHashEntry(&fPtr->codes, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	CprofReleaseSiteKey(CPROF_SITE_BYTECODE,
		(void *) Tcl_GetHashKey(&fPtr->codes, hPtr));
    }
    Tcl_DeleteHashTable(&fPtr->procs);
    Tcl_DeleteHashTable(&fPtr->methods);
    Tcl_DeleteHashTable(&fPtr->codes);
    Tcl_DeleteHashTable(&fPtr->sites);
    Tcl_InitHashTable(&fPtr->procs, TCL_ONE_WORD_KEYS);
    Tcl_InitHashTable(&fPtr->methods, TCL_ONE_WORD_KEYS);
    Tcl_InitHashTable(&fPtr->codes, TCL_ONE_WORD_KEYS);
    Tcl_InitHashTable(&fPtr->sites, TCL_ONE_WORD_KEYS);
}

void
CprofFramesFree(
    CprofFrames *fPtr)
{
    ReleaseHeld(fPtr);
    CprofNameRelease(&fPtr->refs);
    Tcl_DeleteHashTable(&fPtr->procs);
    Tcl_DeleteHashTable(&fPtr->methods);
    Tcl_DeleteHashTable(&fPtr->codes);
    Tcl_DeleteHashTable(&fPtr->sites);
    ckfree(fPtr);
}

int
CprofFramesAddInterp(
    CprofFrames *fPtr,
    Tcl_Interp *interp,
    int interpId)
{
    int i;

    for (i = 1; i < CPROF_FRAMES_INTERPS; i++) {
	if (fPtr->interps[i].iPtr == NULL) {
	    fPtr->interps[i].interpId = interpId;
	    __atomic_signal_fence(__ATOMIC_SEQ_CST);
	    __atomic_store_n(&fPtr->interps[i].iPtr, (Interp *) interp,
		    __ATOMIC_RELEASE);
	    if (i >= fPtr->numInterps) {
		__atomic_store_n(&fPtr->numInterps, i + 1, __ATOMIC_RELEASE);
	    }
	    return 1;
	}
    }
    return 0;
}

/*
 * Without -seed: record the frames running now (the sampler's
 * interpreter's), which the reader leaves out from then on.
 */

static void
FloorAdd(
    CprofFrames *fPtr,
    const void *ptr,
    const void *key0,
    const void *key1)
{
    unsigned slot = FloorSlot(ptr), i;

    for (i = 0; i < FLOOR_PROBES; i++) {
	FloorEntry *ePtr = &fPtr->floorTable[(slot + i) & (FLOOR_SLOTS - 1)];

	if (ePtr->ptr == NULL || ePtr->ptr == ptr) {
	    ePtr->ptr = ptr;
	    ePtr->key[0] = key0;
	    ePtr->key[1] = key1;
	    return;
	}
    }
}

void
CprofFramesFloor(
    CprofFrames *fPtr)
{
    Interp *iPtr = (Interp *) fPtr->interp;
    const CallFrame *framePtr;
    const CmdFrame *cfPtr;

    memset(fPtr->floorTable, 0, sizeof(fPtr->floorTable));
    for (framePtr = iPtr->framePtr; framePtr != NULL;
	    framePtr = framePtr->callerPtr) {
	if (framePtr->isProcCallFrame
		& (FRAME_IS_PROC | FRAME_IS_METHOD | FRAME_IS_LAMBDA)) {
	    FloorAdd(fPtr, framePtr, framePtr->procPtr, framePtr->objv);
	}
    }
    fPtr->floorLevel = (iPtr->cmdFramePtr != NULL)
	    ? iPtr->cmdFramePtr->level : 0;
    for (cfPtr = iPtr->cmdFramePtr; cfPtr != NULL; cfPtr = cfPtr->nextPtr) {
	FloorAdd(fPtr, cfPtr, CmdFrameKey(cfPtr), NULL);
	if (cfPtr->level > fPtr->floorLevel) {
	    fPtr->floorLevel = cfPtr->level;
	}
    }
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    fPtr->floor = 1;
}

void
CprofFramesRemoveInterp(
    CprofFrames *fPtr,
    Tcl_Interp *interp)
{
    int i;

    for (i = 1; i < fPtr->numInterps; i++) {
	if (fPtr->interps[i].iPtr == (Interp *) interp) {
	    __atomic_store_n(&fPtr->interps[i].iPtr, NULL, __ATOMIC_RELEASE);
	    __atomic_signal_fence(__ATOMIC_SEQ_CST);
	}
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CprofFramesResolve --
 *
 *	Drain side: name a sample's raw references (in[], outermost first)
 *	into out[], leaving out the commands whose code could not be found.
 *	References the reader did not write (another capture's) are copied
 *	as they are.
 *
 * Results:
 *	The number of references written to out[].
 *
 *----------------------------------------------------------------------
 */

/*
 * Copy 'size' bytes at 'addr' without ever faulting: 1 if all could be
 * read. Two ways, chosen once per process by a probe (CprofFramesCopyMethod):
 * process_vm_readv on the process itself, which fails with EFAULT on an
 * unmapped page; where that system call is refused (a seccomp filter;
 * qemu-user, which does not emulate it) a write of the bytes into a pipe
 * of our own, which the kernel (or qemu, checking the guest's pages) fails
 * the same way, and a read of them back. Where neither works, the frames
 * capture is not used (CprofCaptureInstall falls back to wrap).
 */

static const char *const copyMethodNames[] = {
    "none", "process_vm_readv", "pipe", NULL
};
static int copyMethod = CPROF_COPY_UNPROBED;
static int copyPipe[2] = {-1, -1};
static pid_t copyPipePid = 0;
TCL_DECLARE_MUTEX(copyMutex)

static int
CopyVm(
    const void *addr,
    void *buf,
    size_t size)
{
    struct iovec local, remote;

    local.iov_base = buf;
    local.iov_len = size;
    remote.iov_base = (void *) addr;
    remote.iov_len = size;
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0)
	    == (ssize_t) size;
}

/*
 * Called with copyMutex held. The pipe is the process's own (made again
 * in a forked child, whose parent keeps using its copy), non-blocking
 * and closed on exec; it is empty between calls.
 */

static int
CopyPipe(
    const void *addr,
    void *buf,
    size_t size)
{
    ssize_t n, got = 0;

    if (size > 4096) {
	return 0;
    }
    if (copyPipePid != getpid()) {
	if (copyPipe[0] >= 0 && copyPipePid != 0) {
	    close(copyPipe[0]);
	    close(copyPipe[1]);
	}
	copyPipe[0] = copyPipe[1] = -1;
	if (pipe2(copyPipe, O_CLOEXEC | O_NONBLOCK) != 0) {
	    copyPipe[0] = copyPipe[1] = -1;
	    return 0;
	}
	copyPipePid = getpid();
    }
    do {
	n = write(copyPipe[1], addr, size);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) {
	return 0;
    }
    while (got < n) {
	ssize_t r = read(copyPipe[0], (char *) buf + got, (size_t) (n - got));

	if (r < 0 && errno == EINTR) {
	    continue;
	}
	if (r <= 0) {
	    break;
	}
	got += r;
    }
    return n == (ssize_t) size && got == n;
}

/*
 * Whether a way copies a known buffer right and refuses an address that
 * is never mapped (the first page).
 */

static int
CopyWorks(
    int method)
{
    static const char known[48] = "tclcprof: a fault-safe copy of this";
    char buf[sizeof(known)];
    int ok;

    memset(buf, 0, sizeof(buf));
    ok = (method == CPROF_COPY_VM)
	    ? CopyVm(known, buf, sizeof(known))
	    : CopyPipe(known, buf, sizeof(known));
    if (!ok || memcmp(buf, known, sizeof(known)) != 0) {
	return 0;
    }
    return !((method == CPROF_COPY_VM)
	    ? CopyVm((const void *) (uintptr_t) 64, buf, 16)
	    : CopyPipe((const void *) (uintptr_t) 64, buf, 16));
}

int
CprofFramesCopyMethod(
    const char *force)
{
    int method;

    Tcl_MutexLock(&copyMutex);
    if (force != NULL) {
	int i;

	copyMethod = CPROF_COPY_UNPROBED;
	for (i = 0; copyMethodNames[i] != NULL; i++) {
	    if (strcmp(force, copyMethodNames[i]) == 0) {
		copyMethod = i;
	    }
	}
    }
    if (copyMethod == CPROF_COPY_UNPROBED) {
	copyMethod = CopyWorks(CPROF_COPY_VM) ? CPROF_COPY_VM
		: CopyWorks(CPROF_COPY_PIPE) ? CPROF_COPY_PIPE
		: CPROF_COPY_NONE;
    }
    method = copyMethod;
    Tcl_MutexUnlock(&copyMutex);
    return method;
}

const char *
CprofFramesCopyName(
    int method)
{
    return (method >= 0 && method <= CPROF_COPY_PIPE)
	    ? copyMethodNames[method] : "unprobed";
}

static int
SafeCopy(
    const void *addr,
    void *buf,
    size_t size)
{
    int ok;

    if (addr == NULL) {
	return 0;
    }
    if (copyMethod == CPROF_COPY_VM) {
	return CopyVm(addr, buf, size);
    }
    Tcl_MutexLock(&copyMutex);
    ok = (copyMethod == CPROF_COPY_PIPE) && CopyPipe(addr, buf, size);
    Tcl_MutexUnlock(&copyMutex);
    return ok;
}

static void
LetGoIfFull(
    CprofFrames *fPtr)
{
    if (fPtr->procs.numEntries + fPtr->methods.numEntries
	    + fPtr->codes.numEntries >= MAX_HELD) {
	ReleaseHeld(fPtr);
    }
}

static int
ProcName(
    CprofFrames *fPtr,
    const CprofTclRef *refPtr,
    int *kindPtr)
{
    Proc *procPtr = (Proc *) refPtr->anchor;
    Tcl_HashEntry *hPtr = Tcl_FindHashEntry(&fPtr->procs, (char *) procPtr);
    HeldProc *hpPtr;
    Proc procCopy;
    Command cmdCopy;
    const CprofCmdName *namePtr;
    int isNew;

    if (hPtr != NULL) {
	hpPtr = Tcl_GetHashValue(hPtr);

	/*
	 * Held, so this is the Proc sampled; its body may have been
	 * replaced since (a recompile in another namespace).
	 */

	if (hpPtr->bodyPtr == refPtr->ident
		|| procPtr->bodyPtr == refPtr->ident) {
	    Command *cmdPtr = hpPtr->cmdPtr;

	    if (!(cmdPtr->flags & CMD_IS_DELETED)
		    && (int) cmdPtr->cmdEpoch != hpPtr->epoch) {
		/*
		 * Renamed since: named by its new name, as the wrapper
		 * names it.
		 */

		const CprofCmdName *namePtr = CprofNameCommand(
			fPtr->namingPtr, (Tcl_Command) cmdPtr);

		hpPtr->epoch = (int) cmdPtr->cmdEpoch;
		if (namePtr != NULL && namePtr->nameId >= 0) {
		    CprofNameHold(&fPtr->refs, namePtr->nameId);
		    hpPtr->nameId = namePtr->nameId;
		    hpPtr->kind = namePtr->kind;
		}
	    }
	    *kindPtr = hpPtr->kind;
	    return hpPtr->nameId;
	}
	return -1;
    }

    /*
     * First seen: still a counted Proc with that body, whose command (not
     * deleted) still has it as its Proc.
     */

    if (!SafeCopy(procPtr, &procCopy, sizeof(Proc))
	    || procCopy.refCount <= 0 || procCopy.bodyPtr != refPtr->ident
	    || procCopy.cmdPtr == NULL
	    || !SafeCopy(procCopy.cmdPtr, &cmdCopy, sizeof(Command))
	    || (cmdCopy.flags & CMD_IS_DELETED) || cmdCopy.hPtr == NULL
	    || TclIsProc(&cmdCopy) != procPtr) {
	return -1;
    }
    namePtr = CprofNameCommand(fPtr->namingPtr,
	    (Tcl_Command) procCopy.cmdPtr);
    if (namePtr == NULL || namePtr->nameId < 0) {
	return -1;
    }
    CprofNameHold(&fPtr->refs, namePtr->nameId);
    LetGoIfFull(fPtr);
    procPtr->refCount++;
    hpPtr = (HeldProc *) ckalloc(sizeof(HeldProc));
    hpPtr->procPtr = procPtr;
    hpPtr->bodyPtr = refPtr->ident;
    hpPtr->cmdPtr = procCopy.cmdPtr;
    hpPtr->cmdPtr->refCount++;
    hpPtr->epoch = (int) hpPtr->cmdPtr->cmdEpoch;
    hpPtr->nameId = namePtr->nameId;
    hpPtr->kind = namePtr->kind;
    hPtr = Tcl_CreateHashEntry(&fPtr->procs, (char *) procPtr, &isNew);
    Tcl_SetHashValue(hPtr, hpPtr);
    *kindPtr = hpPtr->kind;
    return hpPtr->nameId;
}

static int
MethodName(
    CprofFrames *fPtr,
    const CprofTclRef *refPtr)
{
    Method *mPtr = (Method *) refPtr->anchor;
    Tcl_HashEntry *hPtr = Tcl_FindHashEntry(&fPtr->methods, (char *) mPtr);
    HeldMethod *hmPtr;
    int slot = ((refPtr->node & CONSTRUCTOR) ? 1 : 0)
	    | ((refPtr->node & DESTRUCTOR) ? 2 : 0), isNew;

    if (hPtr == NULL) {
	Method methodCopy;
	Class classCopy;
	Object objectCopy;
	Object *declObjPtr;

	/*
	 * First seen: still a counted Method with that name, whose
	 * declaring object (or class, whose object is still its) is
	 * counted and can still be named.
	 */

	if (!SafeCopy(mPtr, &methodCopy, sizeof(Method))
		|| methodCopy.refCount <= 0
		|| methodCopy.namePtr != refPtr->ident) {
	    return -1;
	}
	declObjPtr = methodCopy.declaringObjectPtr;
	if (declObjPtr == NULL) {
	    if (methodCopy.declaringClassPtr == NULL
		    || !SafeCopy(methodCopy.declaringClassPtr, &classCopy,
			    sizeof(Class))) {
		return -1;
	    }
	    declObjPtr = classCopy.thisPtr;
	}
	if (!SafeCopy(declObjPtr, &objectCopy, sizeof(Object))
		|| objectCopy.refCount <= 0
		|| (methodCopy.declaringObjectPtr == NULL
			&& objectCopy.classPtr
			!= methodCopy.declaringClassPtr)
		|| (objectCopy.command == NULL
			&& objectCopy.cachedNameObj == NULL)) {
	    return -1;
	}
	LetGoIfFull(fPtr);
	mPtr->refCount++;
	hmPtr = (HeldMethod *) ckalloc(sizeof(HeldMethod));
	hmPtr->mPtr = mPtr;
	hmPtr->namePtr = refPtr->ident;
	hmPtr->nameId[0] = hmPtr->nameId[1] = hmPtr->nameId[2]
		= hmPtr->nameId[3] = -2;
	hPtr = Tcl_CreateHashEntry(&fPtr->methods, (char *) mPtr, &isNew);
	Tcl_SetHashValue(hPtr, hmPtr);
    } else {
	hmPtr = Tcl_GetHashValue(hPtr);
	if (hmPtr->namePtr != refPtr->ident) {
	    return -1;
	}
    }
    if (hmPtr->nameId[slot] == -2) {
	hmPtr->nameId[slot] = CprofNameMethodRecord(fPtr->namingPtr, mPtr,
		refPtr->node & (CONSTRUCTOR | DESTRUCTOR));
	CprofNameHold(&fPtr->refs, hmPtr->nameId[slot]);
    }
    return hmPtr->nameId[slot];
}

/*
 * Whether a method called through an object's command runs Tcl code in a
 * trampoline of its own, as a command with no NRE entry does (Anchor). A
 * procedure-bodied method, a forward and TclOO's own C methods (destroy,
 * eval, create, new: all in libtcl) go on in the trampoline that invoked
 * them; a method type of another library (an extension's Tcl_NewMethod, or
 * Tcl 9's Tcl_NewMethod2, with a C callProc that evaluates Tcl through
 * Tcl_Eval*) starts one. The one exception known is Tcl 9's [configure] of
 * oo::configurable, in libtcl, which runs the property getters and setters
 * through a trampoline of its own: its frames go one trampoline out.
 */

static int
MethodNests(
    CprofFrames *fPtr,
    const Method *mPtr)
{
    Dl_info info;

    if (mPtr == NULL || mPtr->typePtr == NULL
	    || mPtr->typePtr->callProc == NULL
	    || (const void *) mPtr->typePtr
		    == fPtr->namingPtr->internals->procMethodType) {
	return 0;
    }
    if (fPtr->libtclBase == NULL) {
	if (!dladdr((void *) tclStubsPtr->tcl_GetVersion, &info)) {
	    return 0;
	}
	fPtr->libtclBase = info.dli_fbase;
    }
    return !dladdr((void *) mPtr->typePtr->callProc, &info)
	    || info.dli_fbase != fPtr->libtclBase;
}

/*
 * The name of a call from its literal words, as the wrapper names it: an
 * object's method call by its method, an ensemble's by its subcommand
 * (through the ensemble's map), a command named with its first argument
 * (db eval) or its script (source) with it; else the command's name, or
 * the first word when it names no command.
 */

/*
 * The command of an ensemble without a map that a subcommand names: the
 * command of that name in the ensemble's namespace, or the only one whose
 * name it starts (the ensemble takes unique prefixes).
 */

static Tcl_Command
EnsembleImpl(
    CprofFrames *fPtr,
    Tcl_Namespace *nsPtr,
    const char *sub)
{
    Tcl_Command token = Tcl_FindCommand(fPtr->interp, sub, nsPtr,
	    TCL_NAMESPACE_ONLY);
    Tcl_HashTable *tablePtr = &((Namespace *) nsPtr)->cmdTable;
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr, *foundPtr = NULL;
    size_t len = strlen(sub);

    if (token != NULL || len == 0) {
	return token;
    }
    for (hPtr = Tcl_FirstHashEntry(tablePtr, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	if (strncmp((const char *) Tcl_GetHashKey(tablePtr, hPtr), sub,
		len) == 0) {
	    if (foundPtr != NULL) {
		return NULL;
	    }
	    foundPtr = hPtr;
	}
    }
    return (foundPtr != NULL) ? (Tcl_Command) Tcl_GetHashValue(foundPtr)
	    : NULL;
}

static int
NameOfCall(
    CprofFrames *fPtr,
    Tcl_Namespace *nsPtr,
    int objc,
    Tcl_Obj *const objv[],
    int *kindPtr,
    int *nestsPtr)
{
    Tcl_Command token = Tcl_FindCommand(fPtr->interp,
	    Tcl_GetString(objv[0]), nsPtr, nsPtr ? 0 : TCL_GLOBAL_ONLY);
    const CprofCmdName *namePtr;
    int nameId = -1;

    *nestsPtr = 0;

    if (token == NULL) {
	*kindPtr = CPROF_KIND_CMD;
	return CprofNameInternIn(&fPtr->refs, Tcl_GetString(objv[0]), -1);
    }
    namePtr = CprofNameCommand(fPtr->namingPtr, token);
    if (namePtr == NULL || namePtr->nameId < 0) {
	*kindPtr = CPROF_KIND_CMD;
	return CprofNameInternIn(&fPtr->refs, Tcl_GetString(objv[0]), -1);
    }
    *kindPtr = namePtr->kind;
    *nestsPtr = (((Command *) token)->nreProc == NULL);
    if (namePtr->flags & CPROF_NAME_COROUTINE) {
	/*
	 * Named after its body once the frames are known (Resolve).
	 */

	return CprofNameCoroutine(fPtr->namingPtr, -1);
    }
    if ((namePtr->flags & CPROF_NAME_OBJECT) && objc > 1) {
	const void *method;
	int fresh;

	nameId = CprofNameMethodCall(fPtr->namingPtr, token, objc, objv,
		&fresh, &method);
	if (nameId >= 0) {
	    *kindPtr = CPROF_KIND_METHOD;
	}
	*nestsPtr = MethodNests(fPtr, (const Method *) method);
    } else if ((namePtr->flags & CPROF_NAME_ENSEMBLE) && objc > 1) {
	Tcl_Obj *mapObj = NULL, *targetObj = NULL, *cmdObj;

	if (Tcl_GetEnsembleMappingDict(NULL, token, &mapObj) == TCL_OK
		&& mapObj != NULL
		&& Tcl_DictObjGet(NULL, mapObj, objv[1], &targetObj) == TCL_OK
		&& targetObj != NULL
		&& Tcl_ListObjIndex(NULL, targetObj, 0, &cmdObj) == TCL_OK
		&& cmdObj != NULL) {
	    Tcl_Command implToken = Tcl_FindCommand(fPtr->interp,
		    Tcl_GetString(cmdObj), NULL, TCL_GLOBAL_ONLY);

	    if (implToken != NULL) {
		nameId = CprofNameFold(fPtr->namingPtr, namePtr->nameId,
			token, implToken);
		*nestsPtr = (((Command *) implToken)->nreProc == NULL);
	    }
	} else {
	    Tcl_Namespace *ensNsPtr = NULL;
	    Tcl_Command implToken;

	    /*
	     * No map: the subcommand is the command of that name exported
	     * from the ensemble's namespace.
	     */

	    if (Tcl_GetEnsembleNamespace(NULL, token, &ensNsPtr) == TCL_OK
		    && ensNsPtr != NULL
		    && (implToken = EnsembleImpl(fPtr, ensNsPtr,
			    Tcl_GetString(objv[1]))) != NULL) {
		nameId = CprofNameFold(fPtr->namingPtr, namePtr->nameId,
			token, implToken);
		*nestsPtr = (((Command *) implToken)->nreProc == NULL);
	    }
	}
    } else if (namePtr->flags & (CPROF_NAME_SUBCMD | CPROF_NAME_SCRIPT)) {
	nameId = CprofNameArgument(fPtr->namingPtr, namePtr, objc, objv);
    }
    if (nameId < 0) {
	nameId = namePtr->nameId;
    }
    CprofNameHold(&fPtr->refs, nameId);
    return nameId;
}

/*
 * The name of a command from its text: its literal words (up to four:
 * enough for a method's, a subcommand's or a script's name), the first
 * resolved in nsPtr (NULL: the global namespace). 0: no name (the first
 * word is not literal), else the name id + 1. Text that does not parse
 * (a command longer than what was copied) is read up to its first word
 * that is not a bare one.
 */

static int
NameOfText(
    CprofFrames *fPtr,
    Tcl_Namespace *nsPtr,
    const char *text,
    int len,
    int *kindPtr,
    int *nestsPtr)
{
    Tcl_Obj *words[4];
    Tcl_Parse parse;
    int objc = 0, nameId = 0, w;

    if (Tcl_ParseCommand(NULL, text, len, 0, &parse) == TCL_OK) {
	Tcl_Token *tokPtr = parse.tokenPtr;

	for (w = 0; w < parse.numWords && objc < 4; w++) {
	    if (tokPtr->type != TCL_TOKEN_SIMPLE_WORD) {
		break;
	    }
	    words[objc] = Tcl_NewStringObj(tokPtr[1].start, tokPtr[1].size);
	    Tcl_IncrRefCount(words[objc]);
	    objc++;
	    tokPtr += tokPtr->numComponents + 1;
	}
	Tcl_FreeParse(&parse);
    } else {
	const char *p = text, *end = text + len;

	while (objc < 4) {
	    const char *start;

	    while (p < end && (*p == ' ' || *p == '\t')) {
		p++;
	    }
	    start = p;
	    while (p < end && strchr(" \t\n;{}[]$\"\\", *p) == NULL) {
		p++;
	    }
	    if (p == start || (p < end && *p != ' ' && *p != '\t')) {
		break;
	    }
	    words[objc] = Tcl_NewStringObj(start, p - start);
	    Tcl_IncrRefCount(words[objc]);
	    objc++;
	}
    }
    if (objc > 0) {
	nameId = NameOfCall(fPtr, nsPtr, objc, words, kindPtr, nestsPtr) + 1;
    }
    while (objc-- > 0) {
	Tcl_DecrRefCount(words[objc]);
    }
    return nameId;
}

/*
 * The namespace a bytecode's commands are resolved in, when it is safely
 * known: a procedure body's (its command, still its, not deleted), the
 * global namespace's; else NULL (resolved from the global namespace).
 */

static Tcl_Namespace *
CodeNamespace(
    CprofFrames *fPtr,
    const ByteCode *copyPtr)
{
    Interp *iPtr = (Interp *) fPtr->interp;
    Proc procCopy;
    Command cmdCopy;

    if (copyPtr->procPtr == NULL) {
	return NULL;
    }
    if (!SafeCopy(copyPtr->procPtr, &procCopy, sizeof(Proc))
	    || procCopy.refCount <= 0 || procCopy.cmdPtr == NULL
	    || !SafeCopy(procCopy.cmdPtr, &cmdCopy, sizeof(Command))
	    || (cmdCopy.flags & CMD_IS_DELETED) || cmdCopy.hPtr == NULL
	    || TclIsProc(&cmdCopy) != copyPtr->procPtr
	    || cmdCopy.nsPtr == NULL || cmdCopy.nsPtr == iPtr->globalNsPtr) {
	return NULL;
    }
    return (Tcl_Namespace *) cmdCopy.nsPtr;
}

/*
 * A command of a script evaluated from its string: its text read again
 * (it must start with the bytes the handler copied and be one command of
 * the length it had), named from its literal words. -1: the text is gone.
 */

#define EVAL_TEXT_MAX	4096

static int
EvalName(
    CprofFrames *fPtr,
    const CprofTclRef *refPtr,
    int *kindPtr,
    int *nestsPtr)
{
    int len = refPtr->node & CPROF_RAW_EVAL_LEN;
    int copied = (len < EVAL_TEXT_MAX) ? len : EVAL_TEXT_MAX;
    char text[EVAL_TEXT_MAX];
    uintptr_t head = 0;
    Tcl_Parse parse;
    int nameId;

    *kindPtr = CPROF_KIND_CMD;
    *nestsPtr = 0;
    if (copied <= 0 || !SafeCopy((const void *) refPtr->anchor, text,
	    (size_t) copied)) {
	return -1;
    }
    memcpy(&head, text, copied < (int) sizeof(head) ? (size_t) copied
	    : sizeof(head));
    if (head != (uintptr_t) refPtr->ident) {
	return -1;
    }
    if (len <= EVAL_TEXT_MAX) {
	if (Tcl_ParseCommand(NULL, text, len, 0, &parse) != TCL_OK) {
	    return -1;
	}
	nameId = (parse.commandStart == text && parse.commandSize == len)
		? 0 : -1;
	Tcl_FreeParse(&parse);
	if (nameId < 0) {
	    return -1;
	}
    }
    nameId = NameOfText(fPtr, NULL, text, copied, kindPtr, nestsPtr);
    return nameId - 1;
}

/*
 * Whether codePtr is a live ByteCode of this interpreter with pc in its
 * code: checked on a copy the first time, then held (in fPtr->codes) for
 * the rest of the run, so that its address stays its own.
 */

static int
HoldCode(
    CprofFrames *fPtr,
    ByteCode *codePtr,
    const char *pc)
{
    ByteCode copy;
    int isNew;

    if (Tcl_FindHashEntry(&fPtr->codes, (char *) codePtr) != NULL) {
	return 1;
    }
    if (!SafeCopy(codePtr, &copy, sizeof(ByteCode))
	    || copy.refCount <= 0
	    || copy.interpHandle != ((Interp *) fPtr->interp)->handle
	    || copy.numCodeBytes <= 0
	    || pc < (const char *) copy.codeStart
	    || pc >= (const char *) copy.codeStart + copy.numCodeBytes
	    || (const char *) copy.codeStart <= (const char *) codePtr
	    || (const char *) copy.codeStart
		    > (const char *) codePtr + sizeof(ByteCode) + 64) {
	return 0;
    }
    LetGoIfFull(fPtr);
    CprofHoldSiteKey(CPROF_SITE_BYTECODE, codePtr);
    Tcl_CreateHashEntry(&fPtr->codes, (char *) codePtr, &isNew);
    return 1;
}

/*
 * A command invoked from bytecode: the first word of its source, as the
 * command it names now (its name as the wrapper gives it), or the word.
 * 0: no name (not a plain word), -1: the code is not this interpreter's
 * live bytecode.
 */

static int
CommandName(
    CprofFrames *fPtr,
    const CprofTclRef *refPtr,
    int *kindPtr,
    int *nestsPtr)
{
    ByteCode *codePtr = (ByteCode *) refPtr->anchor;
    const char *pc = (const char *) codePtr + refPtr->node;
    Tcl_HashEntry *hPtr;
    CmdFrame cf;
    int isNew, nameId = 0, kind = CPROF_KIND_CMD, nests = 0;

    *nestsPtr = 0;
    if (!HoldCode(fPtr, codePtr, pc)) {
	return -1;
    }
    hPtr = Tcl_CreateHashEntry(&fPtr->sites, pc, &isNew);
    if (!isNew) {
	int v = PTR2INT(Tcl_GetHashValue(hPtr));

	*kindPtr = (v >> 24) & 0xf;
	*nestsPtr = (v >> 28) & 1;
	return (v & 0xffffff) - 1;
    }
    memset(&cf, 0, sizeof(cf));
    cf.type = TCL_LOCATION_BC;
    cf.data.tebc.codePtr = codePtr;
    cf.data.tebc.pc = pc;
    TclGetSrcInfoForPc(&cf);
    if (cf.type == TCL_LOCATION_SOURCE && cf.data.eval.path != NULL) {
	Tcl_DecrRefCount(cf.data.eval.path);
    }
    if (cf.cmd != NULL && cf.len > 0) {
	nameId = NameOfText(fPtr, CodeNamespace(fPtr, codePtr), cf.cmd,
		cf.len, &kind, &nests);
    }
    if (nameId > 0xffffff || kind > 0xf) {
	nameId = 0;
    }
    Tcl_SetHashValue(hPtr, INT2PTR((nests << 28) | (kind << 24) | nameId));
    *kindPtr = kind;
    *nestsPtr = nests;
    return nameId - 1;
}

/*
 * A command frame whose first word is not literal ([self] create, $obj
 * destroy): named from what runs above it and its literal second word
 * when that tells the method for sure: a class's first constructor
 * called from these very words runs from oo::class's create, new or
 * createWithNamespace; a destructor under "destroy", from oo::object's
 * destroy. -1 otherwise.
 */

static int
OoFallbackName(
    CprofFrames *fPtr,
    const CprofTclRef *refPtr,
    const CprofTclRef *nextPtr)
{
    ByteCode *codePtr = (ByteCode *) refPtr->anchor;
    CmdFrame cf;
    Tcl_Parse parse;
    Tcl_Token *tokPtr;
    char name[64];
    int nameId = -1, ctor = (refPtr->ident == CPROF_RAW_CTOR);
    int dtor = nextPtr != NULL && nextPtr->nameId == CPROF_FRAMES_RAW
	    && nextPtr->kind == CPROF_RAW_METHOD
	    && (nextPtr->node & DESTRUCTOR);

    if ((!ctor && !dtor)
	    || Tcl_FindHashEntry(&fPtr->codes, (char *) codePtr) == NULL) {
	return -1;
    }
    memset(&cf, 0, sizeof(cf));
    cf.type = TCL_LOCATION_BC;
    cf.data.tebc.codePtr = codePtr;
    cf.data.tebc.pc = (const char *) codePtr + refPtr->node;
    TclGetSrcInfoForPc(&cf);
    if (cf.type == TCL_LOCATION_SOURCE && cf.data.eval.path != NULL) {
	Tcl_DecrRefCount(cf.data.eval.path);
    }
    if (cf.cmd == NULL || cf.len <= 0 || Tcl_ParseCommand(NULL, cf.cmd,
	    cf.len, 0, &parse) != TCL_OK) {
	return -1;
    }
    tokPtr = parse.tokenPtr;
    if (parse.numWords >= 2 && tokPtr->type != TCL_TOKEN_SIMPLE_WORD) {
	Tcl_Token *t2 = tokPtr + tokPtr->numComponents + 1;

	if (t2->type == TCL_TOKEN_SIMPLE_WORD && t2[1].size < 32) {
	    char word[32];

	    memcpy(word, t2[1].start, t2[1].size);
	    word[t2[1].size] = '\0';
	    if (ctor && (strcmp(word, "create") == 0
		    || strcmp(word, "new") == 0
		    || strcmp(word, "createWithNamespace") == 0)) {
		snprintf(name, sizeof(name), "oo::class %s", word);
		nameId = CprofNameInternIn(&fPtr->refs, name, -1);
	    } else if (dtor && strcmp(word, "destroy") == 0) {
		nameId = CprofNameInternIn(&fPtr->refs, "oo::object destroy",
			-1);
	    }
	}
    }
    Tcl_FreeParse(&parse);
    return nameId;
}

/*
 * Anchors for the splice (splice.c), from the nesting of trampolines: a
 * command with no NRE entry (a plain objProc, Command.nreProc NULL) can
 * run Tcl code only through Tcl_Eval*, which starts a trampoline of its
 * own (TclNRRunCallbacks); NRE commands (procs, methods, eval, uplevel,
 * catch, ensembles...) run theirs in the trampoline that invoked them.
 * So the frames of the sampler's interpreter go, outermost first, in the
 * outermost trampoline of the native stack, one trampoline further in
 * after each such command. When the native stack has fewer trampolines
 * than that needs (Tcl code run from C with no Tcl frame of its own to
 * show it), the frames keep no anchor: the splice puts them after the
 * innermost trampoline, and counts them unmatched.
 */

#define NEST_CMD		1	/* A command frame that nests. */
#define NEST_IS_CMD		2	/* A command frame. */
#define NEST_CALLED_FROM_C	4	/* A procedure frame with no call
					 * site. */

static void
Anchor(
    CprofFrames *fPtr,
    CprofTclRef *out,
    int n,
    const unsigned char *nest,
    const CprofNativeStack *nativePtr)
{
    int tramps[CPROF_NATIVE_MAX], k = 0, need = 1, i, j, t = 0;
    int children = 0, spare;

    for (j = nativePtr->n - 1; j >= 0; j--) {
	uintptr_t pc = (j == 0) ? nativePtr->ip[0] : nativePtr->ip[j] - 1;

	if (pc >= nativePtr->trampStart && pc < nativePtr->trampEnd) {
	    /*
	     * Not a trampoline of a child interpreter: frames of its level
	     * stack (the wrapper's, anchored exactly) name it.
	     */

	    for (i = 0; i < n; i++) {
		if (out[i].interpId >= 0 && out[i].anchor == nativePtr->cfa[j]) {
		    break;
		}
	    }
	    if (i == n) {
		tramps[k++] = j;
	    }
	}
    }
    for (i = 0; i + 1 < n; i++) {
	if (out[i].interpId < 0 && (nest[i] & NEST_CMD)) {
	    need++;
	}
	if (out[i].interpId >= 0) {
	    children = 1;
	}
    }
    if (k == 0 || need > k) {
	fPtr->counters.unanchored++;
	return;
    }

    /*
     * Trampolines left over with a child interpreter's frames in the
     * sample: a command ran the child's code (its trampolines are left
     * out above), which called back into this interpreter (an alias):
     * the procedure called from C with no call site of its own after a
     * command frame starts a trampoline further in.
     */

    spare = children ? k - need : 0;
    for (i = 0; i < n; i++) {
	if (out[i].interpId >= 0) {
	    continue;
	}
	if (spare > 0 && (nest[i] & NEST_CALLED_FROM_C) && i > 0
		&& (nest[i - 1] & NEST_IS_CMD) && t + 1 < k) {
	    t++;
	    spare--;
	}
	out[i].anchor = nativePtr->cfa[tramps[t]];
	if ((nest[i] & NEST_CMD) && t + 1 < k) {
	    t++;
	}
    }
}

/*
 * Whether a command frame's name is the coroutine command's or a
 * coroutine's ("<coroutine ...>").
 */

static int
IsCoroutineName(
    CprofFrames *fPtr,
    int nameId)
{
    const char *name = CprofNameString(nameId);

    return nameId == CprofNameCoroutine(fPtr->namingPtr, -1)
	    || (name != NULL && (strcmp(name, "coroutine") == 0
	    || strcmp(name, "::coroutine") == 0
	    || strncmp(name, "<coroutine", 10) == 0));
}

/*
 * Whether an ensemble frame's name ("ensemble subcommand", the
 * implementation's tail) names the procedure procId as its subcommand.
 */

static int
FoldsInto(
    int ensId,
    int procId)
{
    const char *ens = CprofNameString(ensId);
    const char *proc = CprofNameString(procId);
    const char *sub, *tail;

    if (ens == NULL || proc == NULL || (sub = strrchr(ens, ' ')) == NULL) {
	return 0;
    }
    sub++;
    tail = strrchr(proc, ':');
    tail = (tail != NULL) ? tail + 1 : proc;
    return *sub != '\0' && strcmp(sub, tail) == 0;
}

/*
 * An event handler's frame (or a coroutine's) put before the frame the
 * reference gives, in its place among the native frames.
 */

static inline void
AddBefore(
    CprofTclRef *out,
    int *nPtr,
    unsigned char *nest,
    const CprofTclRef *refPtr,
    int nameId,
    int kind)
{
    CprofTclRef *o;

    if (*nPtr >= CPROF_TCL_MAX) {
	return;
    }
    o = &out[*nPtr];
    *o = *refPtr;
    o->nameId = nameId;
    o->kind = kind;
    o->flags &= ~CPROF_REF_CURRENT;
    o->node = -1;
    o->anchor = 0;
    o->ident = NULL;
    o->siteCode = NULL;
    o->siteOffset = 0;
    nest[(*nPtr)++] = 0;
}

/*
 * The event handler whose script runs the frame of a reference named
 * already (its code held): a command's code, or a call site's (checked
 * and held here), unless it is the code of the command just before (a
 * constructor's call site, a frame of its own too). -1: none.
 */

static int
HandlerOfRef(
    CprofFrames *fPtr,
    const CprofTclRef *refPtr,
    const void *lastCode)
{
    ByteCode *codePtr = NULL;

    if (fPtr->handlerProc == NULL) {
	return -1;
    }
    if (refPtr->kind == CPROF_RAW_CMD) {
	codePtr = (ByteCode *) refPtr->anchor;
    } else if (refPtr->siteCode != NULL && refPtr->siteCode != lastCode) {
	codePtr = (ByteCode *) refPtr->siteCode;
	if (!HoldCode(fPtr, codePtr, (const char *) codePtr
		+ refPtr->siteOffset)) {
	    return -1;
	}
    }
    if (codePtr == NULL
	    || Tcl_FindHashEntry(&fPtr->codes, (char *) codePtr) == NULL) {
	return -1;
    }
    return fPtr->handlerProc(fPtr->handlerData, 1, codePtr);
}

void
CprofFramesSetHandlers(
    CprofFrames *fPtr,
    CprofFramesHandlerProc *proc,
    void *data)
{
    fPtr->handlerData = data;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    fPtr->handlerProc = proc;
}

int
CprofFramesResolve(
    CprofFrames *fPtr,
    const CprofTclRef *in,
    int nIn,
    const CprofNativeStack *nativePtr,
    CprofTclRef *out)
{
    int i, n = 0, nests = 0, lastRaw = -1, resume, addCoro = 0;
    int lastResume = 0, eventId;
    const void *lastCode = NULL;
    unsigned char nest[CPROF_TCL_MAX];

    for (i = 0; i < nIn; i++) {
	const CprofTclRef *refPtr = &in[i];
	int nameId, kind = CPROF_KIND_PROC;

	if (refPtr->nameId != CPROF_FRAMES_RAW) {
	    out[n++] = *refPtr;
	    lastRaw = -1;
	    continue;
	}
	resume = (refPtr->kind == CPROF_RAW_CMD
		&& refPtr->ident == CPROF_RAW_RESUME)
		|| (refPtr->kind == CPROF_RAW_EVAL
		&& (refPtr->node & CPROF_RAW_EVAL_RESUME));
	if (resume) {
	    /*
	     * The command that resumed the coroutine above it: the
	     * coroutine's command (named after its body below), the
	     * coroutine command that made it, or a command that resumed it
	     * from C (then a coroutine frame of its own follows).
	     */

	    int coroId = CprofNameCoroutine(fPtr->namingPtr, -1);
	    const char *name;

	    nameId = (refPtr->kind == CPROF_RAW_CMD)
		    ? CommandName(fPtr, refPtr, &kind, &nests)
		    : EvalName(fPtr, refPtr, &kind, &nests);
	    name = (nameId >= 0) ? CprofNameString(nameId) : NULL;
	    if (nameId >= 0 && nameId != coroId && name != NULL
		    && (strcmp(name, "coroutine") == 0
		    || strcmp(name, "::coroutine") == 0)) {
		/* Made by the coroutine command: that frame alone. */
	    } else if (nameId >= 0 && nameId != coroId && nests) {
		/* Resumed from C by a command with no NRE entry. */
		addCoro = 1;
	    } else {
		/*
		 * The coroutine's command (gone by now, or called by a word
		 * that is not literal).
		 */

		nameId = coroId;
		kind = CPROF_KIND_CMD;
		nests = 0;
	    }
	    fPtr->counters.named++;
	    goto named;
	}
	switch (refPtr->kind) {
	case CPROF_RAW_PROC:
	    nameId = ProcName(fPtr, refPtr, &kind);
	    break;
	case CPROF_RAW_LAMBDA:
	    nameId = fPtr->applyId;
	    kind = fPtr->applyKind;
	    break;
	case CPROF_RAW_METHOD:
	    nameId = MethodName(fPtr, refPtr);
	    kind = CPROF_KIND_METHOD;
	    break;
	case CPROF_RAW_LIST:
	    /*
	     * A list evaluated directly: an event handler's frame if it is
	     * a handler's script, a coroutine's if it resumed one.
	     */

	    eventId = (fPtr->handlerProc != NULL) ? fPtr->handlerProc(
		    fPtr->handlerData, 0, (const void *) refPtr->anchor) : -1;
	    if (eventId >= 0) {
		AddBefore(out, &n, nest, refPtr, eventId, CPROF_KIND_EVENT);
	    }
	    if (refPtr->ident == CPROF_RAW_RESUME) {
		AddBefore(out, &n, nest, refPtr,
			CprofNameCoroutine(fPtr->namingPtr, -1),
			CPROF_KIND_CMD);
	    }
	    lastRaw = -1;
	    continue;
	case CPROF_RAW_EVAL:
	    nameId = EvalName(fPtr, refPtr, &kind, &nests);
	    if (nameId < 0) {
		fPtr->counters.unnamed++;
		continue;
	    }
	    break;
	case CPROF_RAW_CMD:
	    nameId = CommandName(fPtr, refPtr, &kind, &nests);
	    if (nameId == -1 && (nameId = OoFallbackName(fPtr, refPtr,
		    i + 1 < nIn ? &in[i + 1] : NULL)) >= 0) {
		kind = CPROF_KIND_METHOD;
		nests = 0;
	    }
	    if (nameId == -1 && refPtr->anchor != 0) {
		/*
		 * Code that could not be found (no longer live): the frame
		 * is left out rather than named "[stale]", as the wrapper
		 * leaves out what it does not wrap.
		 */

		fPtr->counters.unnamed++;
		continue;
	    }
	    break;
	default:
	    nameId = -1;
	}
	if (nameId < 0) {
	    if (refPtr->kind == CPROF_RAW_CMD
		    || refPtr->kind == CPROF_RAW_EVAL) {
		fPtr->counters.unnamed++;
		continue;
	    }
	    fPtr->counters.stale++;
	    nameId = fPtr->staleId;
	    kind = CPROF_KIND_PROC;
	} else {
	    fPtr->counters.named++;
	}
      named:
	if ((refPtr->kind == CPROF_RAW_PROC || refPtr->kind == CPROF_RAW_METHOD)
		&& n > 0 && lastRaw == CPROF_RAW_CMD
		&& out[n - 1].interpId == refPtr->interpId
		&& (out[n - 1].kind == CPROF_KIND_PROC
		|| (!lastResume && IsCoroutineName(fPtr, out[n - 1].nameId)))) {
	    /*
	     * The call site names a procedure but another one runs above
	     * it: the first did a tailcall (which the wrapper shows as the
	     * frame replaced), or its call's words were rewritten (the
	     * same procedure twice otherwise). Or it made or resumed a
	     * coroutine that did a yieldto: the command yielded to runs in
	     * its place.
	     */

	    n--;
	    lastRaw = -1;
	}
	if (refPtr->kind == CPROF_RAW_PROC && n > 0
		&& out[n - 1].kind == CPROF_KIND_ENSEMBLE
		&& out[n - 1].interpId == refPtr->interpId
		&& FoldsInto(out[n - 1].nameId, nameId)) {
	    /*
	     * The procedure implementing the ensemble's subcommand just
	     * below: the wrapper folds the two into one frame.
	     */

	    continue;
	}
	if ((eventId = HandlerOfRef(fPtr, refPtr, lastCode)) >= 0) {
	    AddBefore(out, &n, nest, refPtr, eventId, CPROF_KIND_EVENT);
	}
	lastCode = (refPtr->kind == CPROF_RAW_CMD)
		? (const void *) refPtr->anchor : NULL;
	if (n >= CPROF_TCL_MAX) {
	    break;
	}
	out[n] = *refPtr;
	out[n].nameId = nameId;
	out[n].kind = kind;
	out[n].node = -1;
	out[n].anchor = 0;
	out[n].ident = NULL;
	nest[n] = ((refPtr->kind == CPROF_RAW_CMD
		|| refPtr->kind == CPROF_RAW_EVAL) && nests ? NEST_CMD : 0)
		| ((refPtr->kind == CPROF_RAW_CMD
		|| refPtr->kind == CPROF_RAW_EVAL) ? NEST_IS_CMD : 0)
		| (refPtr->kind == CPROF_RAW_PROC && refPtr->siteCode == NULL
		? NEST_CALLED_FROM_C : 0);
	n++;
	nests = 0;
	lastRaw = refPtr->kind;
	lastResume = resume;
	if (addCoro && n < CPROF_TCL_MAX) {
	    out[n] = out[n - 1];
	    out[n].nameId = CprofNameCoroutine(fPtr->namingPtr, -1);
	    out[n].kind = CPROF_KIND_CMD;
	    out[n].flags &= ~CPROF_REF_CURRENT;
	    out[n].siteCode = NULL;
	    out[n].siteOffset = 0;
	    nest[n] = 0;
	    n++;
	    lastRaw = -1;
	}
	addCoro = 0;
    }
    if (n > 0 && n < nIn && (in[nIn - 1].flags & CPROF_REF_CURRENT)) {
	out[n - 1].flags |= CPROF_REF_CURRENT;
    }

    /*
     * A command resuming a coroutine is named after the code the
     * coroutine runs (its outermost frame, next), as the wrapper names it.
     */

    for (i = 0; i + 1 < n; i++) {
	if (out[i].nameId == CprofNameCoroutine(fPtr->namingPtr, -1)
		&& out[i + 1].interpId == out[i].interpId) {
	    out[i].nameId = CprofNameCoroutine(fPtr->namingPtr,
		    out[i + 1].nameId);
	    CprofNameHold(&fPtr->refs, out[i].nameId);
	}
    }
    if (nativePtr != NULL) {
	Anchor(fPtr, out, n, nest, nativePtr);
    }
    return n;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofFramesCounts, CprofFramesStatus --
 *
 *	The reader's counters, and status's "frames" dict of them.
 *
 *----------------------------------------------------------------------
 */

void
CprofFramesCounts(
    CprofFrames *fPtr,
    CprofFramesCounters *countersPtr)
{
    *countersPtr = fPtr->counters;
}

Tcl_Obj *
CprofFramesStatus(
    const CprofFramesCounters *cPtr)
{
    Tcl_Obj *dictObj = Tcl_NewDictObj();

#define PUT(k, v) Tcl_DictObjPut(NULL, dictObj, Tcl_NewStringObj((k), -1), \
	Tcl_NewWideIntObj((Tcl_WideInt) (v)))
    PUT("samples", cPtr->samples);
    PUT("frames", cPtr->frames);
    PUT("torn_proc", cPtr->tornProc);
    PUT("torn_coroutine", cPtr->tornCoro);
    PUT("torn", cPtr->tornProc + cPtr->tornCoro);
    PUT("cut", cPtr->cut);
    PUT("named", cPtr->named);
    PUT("stale", cPtr->stale);
    PUT("unnamed", cPtr->unnamed);
    PUT("unanchored", cPtr->unanchored);
#undef PUT
    return dictObj;
}
