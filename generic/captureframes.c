/*
 * captureframes.c --
 *
 *	The frames capture (-capture frames): no hook on any command. The
 *	signal handler reads Tcl's own frames, and the drain names them.
 *	It sits beside the captures of capture.c and below drain.c: the
 *	sampler (unix/sampler.c, CprofCopyTclFrames) calls CprofFramesRead
 *	in the handler, the drain (drain.c) calls CprofFramesResolve.
 *	This file holds the handler's half and the capture's life; the
 *	drain's half (naming, the fault-safe copy, placing among native
 *	frames) is captureframesresolve.c; what they share, captureframesInt.h.
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
 *	Only raw references are written (captureframes.h): a Proc*, a Method*, a
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
 *	Command, no name; those are read at the drain. The exceptions: the
 *	first bytes of the command an eval CmdFrame runs (TclEvalEx's: a
 *	script evaluated from its string), copied with process_vm_readv, a
 *	system call that fails instead of faulting; and the NRE callback
 *	chain of each context, with the words of the commands C code runs
 *	through Tcl_EvalObjv or an alias runs as its target (the elements of
 *	the list it evaluates) and the contexts of forwards' calls (see
 *	CollectCalls and ListWords for why those reads are safe).
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
#include "captureframesInt.h"
#include <string.h>
#include <unistd.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/uio.h>

/*
 * The NRE callback a coroutine's resume queues on its resumer's stack
 * (NRCoroutineCallerCallback, tclBasic.c:8837, static in libtcl): learnt
 * once per process by ProbeCoroutineCaller. With it the handler knows a
 * resume half done (the coroutine's context restored, the environment not
 * yet switched, tclBasic.c:8849-8852) and finds its resumer.
 */

static Tcl_NRPostProc *volatile coroCallerCb = NULL;
static int coroProbed = 0;

/*
 * Three more callbacks of libtcl's (static in it), learnt once per
 * process by the probe (CbProbeCmd), mark what the callback chain of an execution
 * environment (ExecEnv.callbackPtr -> nextPtr) holds while a command runs:
 * TEBCresume, queued by a bytecode level that invokes a command (data[0]
 * its TEBCdata, whose CmdFrame is the one linked: tclExecute.c:3086-3096);
 * TEOEx_ListCallback, queued by a list evaluated directly (data[1] its
 * CmdFrame: tclBasic.c:6160); and TEOV_Error, queued for a command that C
 * code runs through Tcl_EvalObjv without TCL_EVAL_INVOKE (data[0] objc,
 * data[1] objv: tclBasic.c:4579), which has no CmdFrame of its own.
 */

static Tcl_NRPostProc *volatile tebcResumeCb = NULL;
static Tcl_NRPostProc *volatile listCb = NULL;
static Tcl_NRPostProc *volatile teovErrorCb = NULL;

/*
 * NRCommand (tclBasic.c:4510), queued for every command invoked (its data
 * all NULL): counted between a command run through Tcl_EvalObjv and the
 * level below it, it tells how many commands of scripts evaluated from
 * their strings run between the two (CollectCalls).
 */

static Tcl_NRPostProc *volatile nrCommandCb = NULL;

/*
 * And for TclOO's forwards, which push no CallFrame: FinalizeObjectCall,
 * queued by an object's command for the call (data[0] its CallContext,
 * alive until that record has run: tclOO.c:2643), and the method type of
 * forwards (fwdMethodType, tclOOMethod.c:112).
 */

static Tcl_NRPostProc *volatile objectCallCb = NULL;
static const Tcl_MethodType *volatile forwardType = NULL;

/*
 * A forward reached through [next] or [nextto] (from a filter too), which
 * no object's command calls: the record the step along the chain queues
 * names it (its context and the index it goes on from): FinalizeNext
 * (tclOO.c:2796, the command; data[0] the context, data[1] the index),
 * FinalizeOONext and FinalizeOONextFilter (tclExecute.c:5020-5026,
 * compiled; data[1] the context, data[2] the index). And any forward's
 * call queues FinalizeForwardCall (tclOOMethod.c:1463, data[0] the words
 * of the command it runs, which stay while it runs): its target's words.
 */

static Tcl_NRPostProc *volatile nextCb = NULL;
static Tcl_NRPostProc *volatile ooNextCb = NULL;
static Tcl_NRPostProc *volatile ooNextFilterCb = NULL;
static Tcl_NRPostProc *volatile forwardCallCb = NULL;

/*
 * The list type (Tcl_GetObjType("list")): the words of a command that an
 * alias runs (AliasNRCmd: Tcl_NREvalObj of its target's words with
 * TCL_EVAL_INVOKE, which queues no TEOV_Error record) are the elements of
 * the list its TEOEx_ListCallback record holds (ListWords).
 */

static const Tcl_ObjType *volatile listType = NULL;
TCL_DECLARE_MUTEX(probeMutex)


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

/*
 * Whether the instruction a bytecode level's CmdFrame is linked for
 * invokes no command, so that it is no frame (the wrapper sees none): a
 * compiled [next] or [nextto] that reached a method with no frame (a
 * forward; the wrapper does not wrap them), a script or an expression
 * that is not literal evaluated by a compiled command ([catch $script],
 * [catch [list ...]], [try], [expr $e]: INST_EVAL_STK, INST_EXPR_STK,
 * tclExecute.c:2998-3027), whose commands are frames of their own level.
 */

static inline int
NotInvoking(
    const CmdFrame *cfPtr)
{
    unsigned char inst = *(const unsigned char *) cfPtr->data.tebc.pc;

    return inst == INST_TCLOO_NEXT || inst == INST_TCLOO_NEXT_CLASS
	    || inst == INST_EVAL_STK || inst == INST_EXPR_STK;
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
 * The words of the command a list evaluated with no CmdFrame of its own
 * runs (TEOEx_ListCallback's record with data[1] NULL: Tcl_NREvalObj, as
 * an alias's AliasNRCmd evaluates its target, tclInterp.c:1834, Tcl 9's
 * 1836): the elements of the record's list (data[0], the copy
 * TclNREvalObjEx made and holds, whose element array is the objv it
 * passed on, tclBasic.c:6163-6164). The list and its internal rep are
 * complete before the record is linked (TclListObjCopy, then the push)
 * and held by it; only that list's rep is read (checked by its type).
 * NULL when it is not a list.
 */

static inline Tcl_Obj *const *
ListWords(
    const Tcl_Obj *listPtr,
    int *objcPtr)
{
    const Tcl_ObjType *lType = listType;

    if (listPtr == NULL || lType == NULL || listPtr->typePtr != lType
	    || listPtr->internalRep.twoPtrValue.ptr1 == NULL) {
	return NULL;
    }
#if TCL_MAJOR_VERSION >= 9
    {
	const ListStore *storePtr = (const ListStore *)
		listPtr->internalRep.twoPtrValue.ptr1;
	const ListSpan *spanPtr = (const ListSpan *)
		listPtr->internalRep.twoPtrValue.ptr2;
	Tcl_Size start = spanPtr ? spanPtr->spanStart : storePtr->firstUsed;
	Tcl_Size len = spanPtr ? spanPtr->spanLength : storePtr->numUsed;

	if (start < 0 || len <= 0 || start + len > storePtr->numAllocated) {
	    return NULL;
	}
	*objcPtr = (int) len;
	return &storePtr->slots[start];
    }
#else
    {
	const List *listRepPtr = (const List *)
		listPtr->internalRep.twoPtrValue.ptr1;

	if (listRepPtr->elemCount <= 0
		|| listRepPtr->elemCount > listRepPtr->maxElemCount) {
	    return NULL;
	}
	*objcPtr = listRepPtr->elemCount;
	return &listRepPtr->elements;
    }
#endif
}

/*
 * Commands run through Tcl_EvalObjv (TEOV_Error's records; an alias's
 * target, by the list record its alias queues: ListWords) in a context's
 * callback chain, innermost first, each with the CmdFrame of the level it
 * runs under: the nearest record below it that names one (a bytecode level
 * invoking a command, a list evaluated directly), or NULL (none: the
 * context's outermost). The walk writes each just before that CmdFrame,
 * then moves it inside the frames of the commands of scripts evaluated
 * from their strings that run it (PlaceCall, by the count of NRCommand
 * records between it and that level).
 *
 * Why reading the chain is safe: a record is linked (TOP_CB(interp) = it,
 * tclInt.h:4953) only after its fields are written, and unlinked before
 * it runs and is freed (TclNRRunCallbacks, tclBasic.c:4496-4502); libtcl
 * is compiled so (an objdump scan of Debian's 8.6.13 libtcl and of the
 * Tcl 9.0.4 build: every push, about 100 in each, stores procPtr and
 * nextPtr before the head), and the thread that links them is the one
 * interrupted. Records are Tcl_Obj cells (TclSmallAllocEx), never given
 * back to the system. A record's objv is its command's words, which its
 * caller keeps while it runs (their Tcl_Obj's string pointer and length
 * are read; the texts are copied with process_vm_readv, TextHead, which
 * fails instead of faulting); a FinalizeObjectCall record's CallContext
 * lives until that record has run, and holds its call chain and methods
 * (so does the context of a step of [next]'s record, whose call it is
 * part of; a forward's ForwardMethod and its prefix list are the method's,
 * held by the chain while it runs); a FinalizeForwardCall record's words
 * are the array its forward passes to the command it runs, freed by that
 * record. The walk is bounded (MAX_CALLBACKS).
 */

#define MAX_CALLBACKS	16384	/* Records visited in one sample. */
#define MAX_CALLS	16	/* Commands kept per context. */

typedef struct PendingCall {
    Tcl_Obj *const *objv;	/* NULL: a forward's call. */
    int objc;
    int done;			/* Written, or left out. */
    const CmdFrame *outerPtr;	/* The CmdFrame it runs under, or NULL. */
    Method *mPtr;		/* A forward called through an object's
				 * command (the first of its call chain). */
    int chainFlags;
    int nrAt;			/* Commands counted when it was met. */
    int evalsOut;		/* Commands of scripts evaluated from their
				 * strings that run it (their CmdFrames are
				 * outside it): the commands (NRCommand
				 * records, its own left out) between it and
				 * its level, but that level's own. */
} PendingCall;

/*
 * The forward at 'index' of the context's chain, or NULL: the first (its
 * call, a frame) or one reached by [next] (no frame: its target only).
 */

static inline Method *
ForwardOf(
    const CallContext *ctxPtr,
    int index,
    int *flagsPtr)
{
    const CallChain *chainPtr;
    Method *mPtr;
    const Tcl_MethodType *fwdType = forwardType;

    if (ctxPtr == NULL || fwdType == NULL || index < 0
	    || (chainPtr = ctxPtr->callPtr) == NULL
	    || chainPtr->numChain <= index || chainPtr->chain == NULL
	    || (mPtr = chainPtr->chain[index].mPtr) == NULL
	    || mPtr->typePtr != fwdType) {
	return NULL;
    }
    *flagsPtr = chainPtr->flags & (CONSTRUCTOR | DESTRUCTOR);
    return mPtr;
}

/*
 * The number of words a forward's target is named from (CPROF_RAW_OBJV
 * keeps two): its prefix's, which its call's words follow (those are not
 * counted: how many there are is not recorded). 0: not known.
 */

static inline int
ForwardWords(
    const Method *mPtr)
{
    const ForwardMethod *fmPtr = (const ForwardMethod *) mPtr->clientData;
    int objc = 0;

    if (fmPtr == NULL || ListWords(fmPtr->prefixObj, &objc) == NULL) {
	return 0;
    }
    return (objc > 1) ? 2 : 1;
}

static inline void
AddCall(
    PendingCall *calls,
    int *numCallsPtr,
    int *openPtr,
    Tcl_Obj *const *objv,
    int objc,
    Method *mPtr,
    int chainFlags,
    int nrAt)
{
    PendingCall *callPtr;

    if (*numCallsPtr >= MAX_CALLS) {
	return;
    }
    callPtr = &calls[(*numCallsPtr)++];
    callPtr->objv = objv;
    callPtr->objc = objc;
    callPtr->done = 0;
    callPtr->outerPtr = NULL;
    callPtr->mPtr = mPtr;
    callPtr->chainFlags = chainFlags;
    callPtr->nrAt = nrAt;
    callPtr->evalsOut = 0;
    (*openPtr)++;
}

/*
 * The forwards reached through [next] in a context, by their context and
 * index: the frames of that context are below them.
 */

#define MAX_NEXT_FORWARDS 8

typedef struct NextForwards {
    int n;
    const CallContext *ctxPtr[MAX_NEXT_FORWARDS];
    int index[MAX_NEXT_FORWARDS];
} NextForwards;

/*
 * The callbacks CollectCalls tells apart, as a filter of 64 bits: bit
 * (address >> 4) & 63 of each (CbMaskBuild, once the probes have learnt
 * them). A record whose bit is clear (most of them: InterpProcNR2, the
 * engine's own) is none of them, at the cost of a shift and a test; one
 * whose bit is set is compared with each.
 */

static uint64_t cbMask = 0;

static inline unsigned
CbBit(
    Tcl_NRPostProc *procPtr)
{
    return (unsigned) (((uintptr_t) procPtr >> 4) & 63);
}

static void
CbMaskBuild(void)
{
    Tcl_NRPostProc *cbs[9];
    uint64_t mask = 0;
    int i;

    cbs[0] = nrCommandCb;
    cbs[1] = teovErrorCb;
    cbs[2] = tebcResumeCb;
    cbs[3] = listCb;
    cbs[4] = forwardCallCb;
    cbs[5] = objectCallCb;
    cbs[6] = nextCb;
    cbs[7] = ooNextCb;
    cbs[8] = ooNextFilterCb;
    for (i = 0; i < 9; i++) {
	if (cbs[i] != NULL) {
	    mask |= (uint64_t) 1 << CbBit(cbs[i]);
	}
    }
    cbMask = mask;
}

static int
CollectCalls(
    const ExecEnv *eePtr,
    PendingCall *calls,
    NextForwards *nextPtr,
    int *budgetPtr)
{
    Tcl_NRPostProc *errorCb = teovErrorCb, *resumeCb = tebcResumeCb;
    Tcl_NRPostProc *lCb = listCb, *objCb = objectCallCb;
    Tcl_NRPostProc *nrCb = nrCommandCb, *fwdCb = forwardCallCb;
    Tcl_NRPostProc *nCb = nextCb, *onCb = ooNextCb, *onfCb = ooNextFilterCb;
    const uint64_t mask = cbMask;
    const NRE_callback *cbPtr;
    int numCalls = 0, open = 0, flags, nrSeen = 0, own = 0, i;
    int budget = *budgetPtr;
    Method *mPtr;
    Tcl_Obj *const *fwdWords = NULL;	/* The words of the forward's
					 * target met last (FinalizeForwardCall),
					 * for the record of its call. */

    if (errorCb == NULL || resumeCb == NULL || eePtr == NULL) {
	return 0;
    }
    for (cbPtr = eePtr->callbackPtr; cbPtr != NULL;
	    cbPtr = cbPtr->nextPtr) {
	Tcl_NRPostProc *procPtr = cbPtr->procPtr;
	const CmdFrame *framePtr = NULL;

	if (--budget < 0) {
	    break;
	}
	if (procPtr == nrCb) {
	    /*
	     * (The one just below TEOV_Error's record is its command's.
	     * One marked by TclSkipTailcall, tclBasic.c:8355-8362, is that
	     * of the command an ensemble, an alias, an imported command or
	     * the unknown handler redirects to: the same command, not
	     * counted twice.)
	     */

	    if (cbPtr->data[1] != INT2PTR(1)) {
		nrSeen += !own;
	    }
	    own = 0;
	    fwdWords = NULL;
	    continue;
	}
	own = 0;
	if (!((mask >> CbBit(procPtr)) & 1)) {
	    continue;
	}
	if (procPtr == resumeCb) {
	    if (open == 0 && numCalls >= MAX_CALLS) {
		break;
	    }
	    if (open == 0 || cbPtr->data[0] == NULL) {
		continue;
	    }
	    framePtr = (const CmdFrame *) ((const char *) cbPtr->data[0]
		    + offsetof(TEBCdata, cmdFrame));
	} else if (procPtr == errorCb) {
	    if (cbPtr->data[1] != NULL && PTR2INT(cbPtr->data[0]) > 0) {
		AddCall(calls, &numCalls, &open,
			(Tcl_Obj *const *) cbPtr->data[1],
			PTR2INT(cbPtr->data[0]), NULL, 0, nrSeen);
	    }
	    own = 1;
	    continue;
	} else if (procPtr == lCb && lCb != NULL) {
	    if (cbPtr->data[1] == NULL) {
		/*
		 * A list evaluated with no CmdFrame (an alias's target): a
		 * command of its own, unless its words are a TEOV_Error
		 * record's already (evaluated without TCL_EVAL_INVOKE). The
		 * NRCommand record just outside it is that command's
		 * (TclMarkTailcall's, deferred to it: tclBasic.c:8342-8352).
		 */

		int objc = 0;
		Tcl_Obj *const *objv = ListWords(
			(const Tcl_Obj *) cbPtr->data[0], &objc);

		for (i = 0; objv != NULL && i < numCalls; i++) {
		    if (calls[i].objv == objv) {
			objv = NULL;
		    }
		}
		if (objv != NULL) {
		    AddCall(calls, &numCalls, &open, objv, objc, NULL, 0,
			    nrSeen);
		}
		own = 1;
		continue;
	    }
	    if (open == 0) {
		continue;
	    }
	    framePtr = (const CmdFrame *) cbPtr->data[1];
	} else if (procPtr == fwdCb && fwdCb != NULL) {
	    fwdWords = (Tcl_Obj *const *) cbPtr->data[0];
	    continue;
	} else if (procPtr == objCb && objCb != NULL) {
	    if ((mPtr = ForwardOf((const CallContext *) cbPtr->data[0], 0,
		    &flags)) != NULL) {
		/*
		 * A forward called through its object's command: its target
		 * (a command of its own, unless a procedure's or method's
		 * frame shows it), then the forward.
		 */

		if (fwdWords != NULL && (i = ForwardWords(mPtr)) > 0) {
		    AddCall(calls, &numCalls, &open, fwdWords, i, NULL, 0,
			    nrSeen);
		}
		AddCall(calls, &numCalls, &open, NULL, 0, mPtr, flags, nrSeen);
	    }
	    fwdWords = NULL;
	    continue;
	} else if (procPtr != NULL && (procPtr == nCb || procPtr == onCb
		|| procPtr == onfCb)) {
	    /*
	     * A step along a call chain ([next], [nextto], from a filter
	     * too): a forward reached so is not a frame (the wrapper, which
	     * sees only the bodies of methods, shows none), its target is;
	     * the frames of the context are below the forward's index.
	     */

	    const CallContext *ctxPtr = (const CallContext *)
		    cbPtr->data[procPtr == nCb ? 0 : 1];
	    int index = PTR2INT(cbPtr->data[procPtr == nCb ? 1 : 2]) + 1;

	    if ((mPtr = ForwardOf(ctxPtr, index, &flags)) != NULL) {
		if (fwdWords != NULL && (i = ForwardWords(mPtr)) > 0) {
		    AddCall(calls, &numCalls, &open, fwdWords, i, NULL, 0,
			    nrSeen);
		}
		if (nextPtr->n < MAX_NEXT_FORWARDS) {
		    nextPtr->ctxPtr[nextPtr->n] = ctxPtr;
		    nextPtr->index[nextPtr->n++] = index;
		}
	    }
	    fwdWords = NULL;
	    continue;
	} else {
	    continue;
	}

	/*
	 * A bytecode level or a list evaluated directly, with calls met
	 * since the last: they run under it.
	 */

	if (framePtr != NULL) {
	    for (i = numCalls - open; i < numCalls; i++) {
		calls[i].outerPtr = framePtr;
		calls[i].evalsOut = nrSeen - calls[i].nrAt - 1;
	    }
	    open = 0;
	}
    }
    *budgetPtr = budget;
    for (i = numCalls - open; i < numCalls; i++) {
	calls[i].evalsOut = nrSeen - calls[i].nrAt;
    }
    if (nrCb == NULL) {
	for (i = 0; i < numCalls; i++) {
	    calls[i].evalsOut = 0;
	}
    }
    return numCalls;
}

/*
 * A command run through Tcl_EvalObjv: its first two words' texts, as the
 * drain checks and names them (CPROF_RAW_OBJV). Left out when a word has
 * no string (not named by the wrapper's rules from its text either) or is
 * longer than CPROF_RAW_WORD_MAX.
 */

static inline int
WordText(
    Tcl_Obj *objPtr,
    const char **textPtr,
    int *lenPtr)
{
    const char *text;
    Tcl_Size len;

    if (objPtr == NULL) {
	return 0;
    }
    text = objPtr->bytes;
    len = objPtr->length;
    if (text == NULL || len <= 0 || len > CPROF_RAW_WORD_MAX) {
	return 0;
    }
    *textPtr = text;
    *lenPtr = (int) len;
    return 1;
}

/*
 * A procedure's or method's frame made by the words of such a command:
 * the frame shows it.
 */

static inline void
DropCalls(
    PendingCall *calls,
    int numCalls,
    Tcl_Obj *const *objv)
{
    int i;

    for (i = 0; i < numCalls; i++) {
	if (calls[i].objv == objv && objv != NULL) {
	    calls[i].done = 1;
	}
    }
}

/*
 * A call written last (at 'at', innermost first) goes inside the frames
 * of the commands of scripts evaluated from their strings that run it:
 * the eval frames written just before it, up to 'evalsOut' of them.
 */

static inline void
PlaceCall(
    CprofTclRef *out,
    int at,
    int evalsOut)
{
    while (evalsOut-- > 0 && at > 0 && out[at - 1].kind == CPROF_RAW_EVAL
	    && out[at - 1].nameId == CPROF_FRAMES_RAW) {
	CprofTclRef tmp = out[at - 1];

	out[at - 1] = out[at];
	out[at] = tmp;
	at--;
    }
}

static int
WriteCall(
    CprofFrames *fPtr,
    const PendingCall *callPtr,
    CprofTclRef *out,
    int *nPtr,
    int room,
    int interpId,
    int *resumedPtr)
{
    const char *text0, *text1 = NULL;
    int len0, len1 = 0;
    uintptr_t head0, head1 = 0;
    CprofTclRef *refPtr;

    if (callPtr->mPtr != NULL) {
	refPtr = NewRef(out, nPtr, room, interpId, CPROF_RAW_METHOD,
		callPtr->mPtr, callPtr->mPtr->namePtr,
		callPtr->chainFlags | CPROF_RAW_METHOD_FORWARD);
	if (refPtr == NULL) {
	    return 0;
	}
	*resumedPtr = 0;
	PlaceCall(out, *nPtr - 1, callPtr->evalsOut);
	return 1;
    }
    if (!WordText(callPtr->objv[0], &text0, &len0)
	    || (head0 = TextHead(fPtr, text0, len0)) == 0) {
	return 1;
    }
    if (callPtr->objc > 1 && WordText(callPtr->objv[1], &text1, &len1)
	    && (head1 = TextHead(fPtr, text1, len1)) == 0) {
	text1 = NULL;
	len1 = 0;
    }
    if (text1 == NULL) {
	len1 = 0;
    }
    refPtr = NewRef(out, nPtr, room, interpId, CPROF_RAW_OBJV, text0,
	    (const void *) head0, len0 | (len1 << 8)
	    | (*resumedPtr ? CPROF_RAW_EVAL_RESUME : 0));
    if (refPtr == NULL) {
	return 0;
    }
    *resumedPtr = 0;
    refPtr->siteCode = text1;
    refPtr->siteOffset = (unsigned) CprofFramesWordDigest(head1);
    fPtr->counters.calls++;
    PlaceCall(out, *nPtr - 1, callPtr->evalsOut);
    return 1;
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
    PendingCall calls[MAX_CALLS];
    NextForwards nextFwds;
    int numCalls = 0, budget = MAX_CALLBACKS, i, last;
    const ExecEnv *callsEePtr = NULL;	/* Whose chain calls[] is of. */

    while (1) {
	CallFrame *contextFramePtr = framePtr;
	CmdFrame *contextCfPtr = cfPtr;
	CoroutineData *corPtr;

	/*
	 * The commands C code runs through Tcl_EvalObjv in this context,
	 * which no CmdFrame shows.
	 */

	numCalls = 0;
	nextFwds.n = 0;
	if (eePtr != callsEePtr) {
	    callsEePtr = eePtr;
	    numCalls = CollectCalls(eePtr, calls, &nextFwds, &budget);
	}

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

		/*
		 * Commands run through Tcl_EvalObjv inside this one's (and
		 * any inside them) go first.
		 */

		for (last = numCalls - 1; last >= 0; last--) {
		    if (!calls[last].done && calls[last].outerPtr == cfPtr) {
			break;
		    }
		}
		for (i = 0; i <= last; i++) {
		    if (!calls[i].done) {
			calls[i].done = 1;
			if (!WriteCall(fPtr, &calls[i], out, &n, room,
				interpId, &resumed)) {
			    goto full;
			}
			callPtr = NULL;
		    }
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
		    if (own && NotInvoking(cfPtr)) {
			own = 0;
		    }
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

		if (ctxPtr != lastCtxPtr) {
		    /*
		     * A forward reached through [next] has no frame: the
		     * context's innermost is the one before it.
		     */

		    for (i = 0; i < nextFwds.n; i++) {
			if (nextFwds.ctxPtr[i] == ctxPtr
				&& nextFwds.index[i] == index) {
			    index--;
			}
		    }
		}

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
		    DropCalls(calls, numCalls, callObjv);
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
		    DropCalls(calls, numCalls, callObjv);
		}
	    }
	    framePtr = framePtr->callerPtr;
	}

	/*
	 * Commands run through Tcl_EvalObjv under no bytecode level of the
	 * context: its outermost. (One whose level was not met is left
	 * out.)
	 */

	for (i = 0; i < numCalls; i++) {
	    if (!calls[i].done && calls[i].outerPtr == NULL) {
		calls[i].done = 1;
		if (!WriteCall(fPtr, &calls[i], out, &n, room, interpId,
			&resumed)) {
		    goto full;
		}
	    }
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

/*
 * The callbacks of CollectCalls: the probe is invoked from a lambda's
 * bytecode (TEBCresume's record is then the first whose TEBCdata holds
 * the CmdFrame linked), and from there as a list evaluated directly
 * (TEOV_Error's record holds its words, TEOEx_ListCallback's the list's
 * CmdFrame, the one linked). Only the first 8 records are looked at.
 */

static int
CbProbeCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Interp *iPtr = (Interp *) interp;
    const NRE_callback *cbPtr = iPtr->execEnvPtr->callbackPtr;
    const char *cfAddr = (const char *) iPtr->cmdFramePtr;
    Tcl_NRPostProc *errorCb = NULL;
    int i;

    if (objc == 2 && strchr("456", Tcl_GetString(objv[1])[0]) != NULL
	    && Tcl_GetString(objv[1])[1] == '\0') {
	/*
	 * Called by a forward reached through [next] from the method whose
	 * frame is on top (a forward pushes none): compiled (4), from a
	 * filter (6), or the command (5). The record of the step holds the
	 * method's context (and, compiled, its frame) and the index it
	 * went on from (the context's index less one).
	 */

	const CallFrame *framePtr = iPtr->framePtr;
	const CallContext *ctxPtr;
	char which = Tcl_GetString(objv[1])[0];

	if (framePtr == NULL || !(framePtr->isProcCallFrame & FRAME_IS_METHOD)
		|| (ctxPtr = (const CallContext *) framePtr->clientData)
		== NULL || ctxPtr->index < 1) {
	    return TCL_OK;
	}
	for (i = 0; cbPtr != NULL && i < 12; cbPtr = cbPtr->nextPtr, i++) {
	    if (which == '5' && cbPtr->data[0] == (void *) ctxPtr
		    && cbPtr->data[1] == INT2PTR(ctxPtr->index - 1)
		    && cbPtr->data[2] != NULL && cbPtr->data[3] == NULL) {
		nextCb = cbPtr->procPtr;
		break;
	    }
	    if (which != '5' && cbPtr->data[0] == (void *) framePtr
		    && cbPtr->data[1] == (void *) ctxPtr
		    && cbPtr->data[2] == INT2PTR(ctxPtr->index - 1)) {
		if (which == '4') {
		    ooNextCb = cbPtr->procPtr;
		} else if (cbPtr->procPtr != ooNextCb) {
		    ooNextFilterCb = cbPtr->procPtr;
		}
		break;
	    }
	}
	return TCL_OK;
    }
    if (objc == 2 && strcmp(Tcl_GetString(objv[1]), "3") == 0) {
	/*
	 * Called by a forward of clientData's object: the deepest of the
	 * records that hold one value in data[0] and nothing else is
	 * FinalizeObjectCall's (TclOOInvokeContext's follow it), the value
	 * its context (checked on a copy).
	 */

	const NRE_callback *foundPtr = NULL;
	const void *ctxAddr = NULL;
	CallContext ctx;
	CallChain chain;
	struct MInvoke entry;
	Method method;
	Tcl_Object object = Tcl_GetObjectFromObj(interp,
		(Tcl_Obj *) clientData);

	const NRE_callback *recs[12];
	int numRecs, j, same;

	for (numRecs = 0; cbPtr != NULL && numRecs < 12;
		cbPtr = cbPtr->nextPtr) {
	    recs[numRecs++] = cbPtr;
	}
	for (i = 0; i < numRecs; i++) {
	    if (recs[i]->data[0] == (void *) objv && recs[i]->data[1] == NULL
		    && recs[i]->data[2] == NULL && recs[i]->data[3] == NULL) {
		/*
		 * FinalizeForwardCall's: the words the forward built.
		 */

		forwardCallCb = recs[i]->procPtr;
		break;
	    }
	}
	for (i = 0; i < numRecs && foundPtr == NULL; i++) {
	    const void *v = recs[i]->data[0];

	    if (v == NULL || recs[i]->data[1] != NULL
		    || recs[i]->data[2] != NULL || recs[i]->data[3] != NULL) {
		continue;
	    }
	    for (j = i + 1, same = 0; j < numRecs; j++) {
		if (recs[j]->data[0] == v && recs[j]->data[1] == NULL
			&& recs[j]->data[2] == NULL
			&& recs[j]->data[3] == NULL) {
		    same++;
		    foundPtr = recs[j];
		}
	    }
	    if (same > 0) {
		ctxAddr = v;
	    } else {
		foundPtr = NULL;
	    }
	}
	if (foundPtr != NULL && object != NULL
		&& CprofFramesCopyVm(ctxAddr, &ctx, sizeof(ctx))
		&& ctx.oPtr == (Object *) object && ctx.index == 0
		&& ctx.callPtr != NULL
		&& CprofFramesCopyVm(ctx.callPtr, &chain, sizeof(chain))
		&& chain.numChain >= 1 && chain.chain != NULL
		&& CprofFramesCopyVm(chain.chain, &entry, sizeof(entry))
		&& entry.mPtr != NULL
		&& CprofFramesCopyVm(entry.mPtr, &method, sizeof(method))
		&& method.typePtr != NULL
		&& strcmp(method.typePtr->name, "forward") == 0) {
	    forwardType = method.typePtr;
	    objectCallCb = foundPtr->procPtr;
	}
	Tcl_ResetResult(interp);
	return TCL_OK;
    }
    if (objc == 2) {
	Tcl_Obj *listObj;

	const NRE_callback *abovePtr = NULL;

	for (i = 0; cbPtr != NULL && i < 8; cbPtr = cbPtr->nextPtr, i++) {
	    if (cbPtr->data[0] != NULL && cfAddr != NULL
		    && (const char *) cbPtr->data[0]
		    + offsetof(TEBCdata, cmdFrame) == cfAddr) {
		/*
		 * The record just above it is this command's NRCommand.
		 */

		tebcResumeCb = cbPtr->procPtr;
		if (abovePtr != NULL && abovePtr->data[0] == NULL
			&& abovePtr->data[1] == NULL
			&& abovePtr->data[2] == NULL
			&& abovePtr->data[3] == NULL) {
		    nrCommandCb = abovePtr->procPtr;
		}
		break;
	    }
	    abovePtr = cbPtr;
	}
	listObj = Tcl_NewListObj(1, objv);
	Tcl_IncrRefCount(listObj);
	(void) Tcl_EvalObjEx(interp, listObj, 0);
	Tcl_DecrRefCount(listObj);
	return TCL_OK;
    }
    for (i = 0; cbPtr != NULL && i < 8; cbPtr = cbPtr->nextPtr, i++) {
	if (errorCb == NULL && cbPtr->data[0] == INT2PTR(objc)
		&& cbPtr->data[1] == (void *) objv) {
	    errorCb = cbPtr->procPtr;
	} else if (errorCb != NULL && cfAddr != NULL
		&& cbPtr->data[1] == (void *) cfAddr) {
	    listCb = cbPtr->procPtr;
	    teovErrorCb = errorCb;
	    break;
	}
    }
    return TCL_OK;
}

static void
ProbeCoroutineCaller(
    Tcl_Interp *interp)
{
    /*
     * The probe evaluates scripts with probeMutex held, and Tcl may run
     * an asynchronous handler or a trace at their commands: one that
     * gets here again in this thread (a tclcprof::debug frames) finds the
     * probe under way and goes on without it (starts are refused earlier,
     * cmdrun.c's DoStart), rather than wait for the mutex for ever.
     */

    static __thread int probingHere;
    Tcl_InterpState saved;

    if (probingHere) {
	return;
    }
    Tcl_MutexLock(&probeMutex);
    if (coroProbed) {
	Tcl_MutexUnlock(&probeMutex);
	return;
    }
    coroProbed = 1;
    probingHere = 1;
    listType = Tcl_GetObjType("list");
    saved = Tcl_SaveInterpState(interp, TCL_OK);
    Tcl_CreateObjCommand(interp, "::tclcprof::FramesProbe", ProbeCmd, NULL,
	    NULL);
    Tcl_CreateObjCommand(interp, "::tclcprof::FramesCbProbe", CbProbeCmd,
	    NULL, NULL);
    (void) Tcl_EvalEx(interp, "::coroutine ::tclcprof::FramesProbeCoro"
	    " ::apply {{} {::yield; ::tclcprof::FramesProbe}}\n"
	    "::tclcprof::FramesProbeCoro\n"
	    "::apply {{} {::tclcprof::FramesCbProbe 1}}", -1, TCL_EVAL_GLOBAL);
    Tcl_DeleteCommand(interp, "::tclcprof::FramesProbe");
    Tcl_DeleteCommand(interp, "::tclcprof::FramesProbeCoro");
    Tcl_DeleteCommand(interp, "::tclcprof::FramesCbProbe");
    if (Tcl_EvalEx(interp, "::oo::object create ::tclcprof::FramesCbObj",
	    -1, TCL_EVAL_GLOBAL) == TCL_OK) {
	Tcl_Obj *nameObj = Tcl_NewStringObj("::tclcprof::FramesCbObj", -1);

	Tcl_IncrRefCount(nameObj);
	Tcl_CreateObjCommand(interp, "::tclcprof::FramesCbProbe", CbProbeCmd,
		nameObj, NULL);
	(void) Tcl_EvalEx(interp, "::oo::objdefine ::tclcprof::FramesCbObj"
		" forward fw ::tclcprof::FramesCbProbe 3\n"
		"::apply {{} {::tclcprof::FramesCbObj fw}}\n"
		"::tclcprof::FramesCbObj destroy", -1, TCL_EVAL_GLOBAL);

	/*
	 * Forwards reached through [next]: compiled, the command, from a
	 * filter.
	 */

	(void) Tcl_EvalEx(interp, "::oo::class create ::tclcprof::FramesCbB {\n"
		" forward f4 ::tclcprof::FramesCbProbe 4\n"
		" forward f5 ::tclcprof::FramesCbProbe 5\n"
		" forward f6 ::tclcprof::FramesCbProbe 6\n"
		" method flt {} { next }\n"
		"}\n"
		"::oo::class create ::tclcprof::FramesCbS {\n"
		" superclass ::tclcprof::FramesCbB\n"
		" method f4 {} { next }\n"
		" method f5 {} { set n next; $n }\n"
		"}\n"
		"::apply {{} {\n"
		" set o [::tclcprof::FramesCbS new]\n"
		" $o f4; $o f5\n"
		" ::oo::objdefine $o filter flt\n"
		" $o f6\n"
		"}}", -1, TCL_EVAL_GLOBAL);
	(void) Tcl_EvalEx(interp, "::tclcprof::FramesCbB destroy", -1,
		TCL_EVAL_GLOBAL);
	Tcl_DeleteCommand(interp, "::tclcprof::FramesCbProbe");
	Tcl_DecrRefCount(nameObj);
    }
    Tcl_RestoreInterpState(interp, saved);
    CbMaskBuild();
    probingHere = 0;
    Tcl_MutexUnlock(&probeMutex);
}

CprofFrames *
CprofFramesNew(
    Tcl_Interp *interp,
    CprofNaming *namingPtr)
{
    CprofFrames *fPtr = (CprofFrames *) ckalloc(sizeof(CprofFrames));
    int kind;

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
    fPtr->nextIds[0] = NameOfCommand(fPtr, "::oo::Helpers::next", &kind);
    fPtr->nextIds[1] = NameOfCommand(fPtr, "::oo::Helpers::nextto", &kind);
    fPtr->nextIds[2] = CprofNameInternIn(&fPtr->refs, "next", -1);
    fPtr->nextIds[3] = CprofNameInternIn(&fPtr->refs, "nextto", -1);
    fPtr->myId = CprofNameInternIn(&fPtr->refs, "my", -1);
    fPtr->interps[0].iPtr = (Interp *) interp;
    fPtr->interps[0].interpId = -1;
    fPtr->numInterps = 1;
    return fPtr;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofFramesStack --
 *
 *	Normal context: the interpreters' frames read and named as a
 *	sample's are (without anchors), all of them (a sample keeps the
 *	innermost CPROF_TCL_MAX): read again with more room while the read
 *	was cut, then named (CprofFramesResolveAll) into *outPtr,
 *	ckalloc'ed (the caller frees it).
 *
 * Results:
 *	The number of frames.
 *
 *----------------------------------------------------------------------
 */

int
CprofFramesStack(
    CprofFrames *fPtr,
    CprofTclRef **outPtr)
{
    int room = CPROF_TCL_MAX, n;
    CprofTclRef *raw;

    while (1) {
	uint32_t flags = 0;

	raw = (CprofTclRef *) ckalloc(room * sizeof(CprofTclRef));
	n = CprofFramesRead(fPtr, raw, room, &flags);
	if (!(flags & CPROF_SAMPLE_TCL_TRUNC) || room >= 16 * MAX_STEPS) {
	    break;
	}
	ckfree(raw);
	room *= 4;
    }
    n = CprofFramesResolveAll(fPtr, raw, n, room, outPtr);
    ckfree(raw);
    return n;
}

void
CprofFramesFree(
    CprofFrames *fPtr)
{
    CprofFramesReleaseHeld(fPtr);
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
