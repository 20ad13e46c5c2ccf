/*
 * levelwrap.c --
 *
 *	Benchmark prototype, not part of tclcprof: a level stack kept
 *	without Tcl's interpreter trace. Instead of Tcl_CreateObjTrace,
 *	whose machinery costs about 240 ns per command whatever the callback
 *	does (DESIGN.md section 3), the NRE entry point (nreProc) of each
 *	wrapped command is swapped for a wrapper that pushes a frame and
 *	schedules the pop with Tcl_NRAddCallback; the command then runs
 *	as before. Built by "make bench-proto" (and "make bench") into the
 *	build directory as libbenchproto.so; bench/run.tcl measures it
 *	against an unprofiled run and an empty object trace.
 *
 *	benchproto::install ?-exact 0|1?
 *		Wrap every procedure of the interpreter (all namespaces) and
 *		the proc command, so that procedures defined later are
 *		wrapped too. With -exact 1 each call is also timed (TSC) and
 *		counted per call path, like tclcprof's exact mode.
 *	benchproto::wrap name ?name ...?
 *		Wrap more commands: procedures, or C commands with a plain
 *		objProc (no NRE implementation of their own, not ensembles).
 *	benchproto::uninstall
 *		Restore every wrapped command.
 *	benchproto::stack
 *		The frames now on the stack: {name level} each, outermost
 *		first.
 *	benchproto::stats
 *		A dict: pushes, pops, max_depth, paths (exact call-path
 *		nodes), wrapped.
 *	benchproto::paths
 *		Exact figures per call path: {path calls total_ticks} each.
 *
 *	A frame holds the Command pointer, Tcl's nesting level and an anchor
 *	(the address of a local of the wrapper: a constant distance from the
 *	trampoline frame that runs the command, as for tclcprof's trace
 *	callback). Names are not looked up per call: a sampler would copy
 *	the Command pointers and name them in normal context from the table
 *	of wrapped commands, which holds a reference on each Command so that
 *	its memory is never reused while wrapped.
 *
 *	What this prototype does not handle (a real implementation must):
 *	commands already running at install (their frames are missing; the
 *	pops scheduled after install only ever pop their own frames);
 *	coroutines (a yield leaves the coroutine's frames on the flat stack,
 *	and their pops run when it is resumed; tclcprof keys frames by
 *	execution environment for this); commands created other than by
 *	proc (TclOO methods, which are not commands, object commands,
 *	interp alias, namespace ensemble, extensions' commands created after
 *	install); commands whose objProc is called directly by C code
 *	(Tcl_GetCommandInfo + objProc) are timed but not through the NRE
 *	path; tailcall replaces the caller's frame only because the pop runs
 *	before the tailcalled command (correct, but untested here); ensemble
 *	subcommands and inline-compiled commands are never seen (as with the
 *	trace's inline flag); other interpreters; thread safety (one
 *	interpreter per process).
 *
 * Copyright (c) 2026 The tclcprof authors.
 * See the file "LICENSE" for terms of use.
 */

#include <tclInt.h>
#include <stdint.h>
#include <string.h>

/*
 * One frame of the level stack.
 */

typedef struct Frame {
    Command *cmdPtr;		/* Key only; named from the wrapped table. */
    int level;			/* Tcl's numLevels at entry. */
    int node;			/* Exact: call-path node, else -1. */
    uintptr_t anchor;		/* Address of a local of the wrapper. */
    uint64_t t0;		/* Exact: TSC at entry. */
} Frame;

/*
 * A wrapped command and what was swapped out of it.
 */

typedef struct Wrapped {
    Command *cmdPtr;
    int isProc;			/* Only nreProc was swapped. */
    Tcl_ObjCmdProc *origObjProc;
    Tcl_ObjCmdProc *origNreProc;
    ClientData origClientData;
    struct Wrapped *nextPtr;
} Wrapped;

/*
 * Exact call-path nodes: (parent node, command) -> node, open addressing.
 */

typedef struct Node {
    Command *cmdPtr;
    int parent;
    uint64_t calls;
    uint64_t ticks;
} Node;

typedef struct Slot {
    uintptr_t key;		/* parent * 2^48 ^ cmdPtr, 0 when empty. */
    int parent;
    Command *cmdPtr;
    int node;
} Slot;

static struct {
    Tcl_Interp *interp;
    int active;
    int exact;
    Frame *frames;
    int depth, capacity, maxDepth;
    uint64_t pushes, pops;
    Wrapped *wrapped;
    int numWrapped;
    Tcl_HashTable byCmd;	/* Command * -> Wrapped *. */
    int tableInit;
    Tcl_ObjCmdProc *procNre;	/* TclNRInterpProc, read from a proc. */
    Node *nodes;
    int numNodes, capNodes;
    Slot *slots;
    int capSlots;		/* A power of two. */
} S;

static inline uint64_t
Ticks(void)
{
#if defined(__x86_64__)
    uint32_t lo, hi;

    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t) hi << 32) | lo;
#else
    return 0;
#endif
}

/*
 * The exact node of (parent, cmdPtr), created if needed.
 */

static int
ChildNode(
    int parent,
    Command *cmdPtr)
{
    uintptr_t key = ((uintptr_t) (parent + 1) << 48) ^ (uintptr_t) cmdPtr;
    uintptr_t h = (key * 0x9E3779B97F4A7C15ull) >> 20;
    int i;

    if (2 * (S.numNodes + 1) > S.capSlots) {
	Slot *old = S.slots;
	int oldCap = S.capSlots, j;

	S.capSlots = oldCap ? 2 * oldCap : 1024;
	S.slots = (Slot *) ckalloc(S.capSlots * sizeof(Slot));
	memset(S.slots, 0, S.capSlots * sizeof(Slot));
	for (j = 0; j < oldCap; j++) {
	    if (old[j].key) {
		uintptr_t hh = (old[j].key * 0x9E3779B97F4A7C15ull) >> 20;
		int k = (int) (hh & (S.capSlots - 1));

		while (S.slots[k].key) {
		    k = (k + 1) & (S.capSlots - 1);
		}
		S.slots[k] = old[j];
	    }
	}
	if (old) {
	    ckfree(old);
	}
    }
    for (i = (int) (h & (S.capSlots - 1)); S.slots[i].key;
	    i = (i + 1) & (S.capSlots - 1)) {
	if (S.slots[i].key == key && S.slots[i].parent == parent
		&& S.slots[i].cmdPtr == cmdPtr) {
	    return S.slots[i].node;
	}
    }
    if (S.numNodes == S.capNodes) {
	S.capNodes = S.capNodes ? 2 * S.capNodes : 1024;
	S.nodes = (Node *) ckrealloc(S.nodes, S.capNodes * sizeof(Node));
    }
    S.nodes[S.numNodes].cmdPtr = cmdPtr;
    S.nodes[S.numNodes].parent = parent;
    S.nodes[S.numNodes].calls = 0;
    S.nodes[S.numNodes].ticks = 0;
    S.slots[i].key = key;
    S.slots[i].parent = parent;
    S.slots[i].cmdPtr = cmdPtr;
    S.slots[i].node = S.numNodes;
    return S.numNodes++;
}

/*
 * Push a frame; returns the new depth. The depth is published with a
 * release store after the frame is written, so that a signal handler
 * reading depth then frames sees complete frames (the array is never
 * freed while installed: it only grows, and the old one is leaked in
 * this prototype).
 */

static inline int
Push(
    Command *cmdPtr,
    Tcl_Interp *interp,
    uintptr_t anchor)
{
    Frame *f;
    int depth = S.depth;

    if (depth == S.capacity) {
	int cap = S.capacity ? 2 * S.capacity : 256;
	Frame *nf = (Frame *) ckalloc(cap * sizeof(Frame));

	if (S.frames) {
	    memcpy(nf, S.frames, depth * sizeof(Frame));
	}
	__atomic_store_n(&S.frames, nf, __ATOMIC_RELEASE);
	S.capacity = cap;
    }
    f = &S.frames[depth];
    f->cmdPtr = cmdPtr;
    f->level = ((Interp *) interp)->numLevels;
    f->anchor = anchor;
    if (S.exact) {
	f->node = ChildNode(depth ? S.frames[depth - 1].node : -1, cmdPtr);
	f->t0 = Ticks();
    } else {
	f->node = -1;
    }
    __atomic_store_n(&S.depth, depth + 1, __ATOMIC_RELEASE);
    if (depth + 1 > S.maxDepth) {
	S.maxDepth = depth + 1;
    }
    S.pushes++;
    return depth + 1;
}

/*
 * Pop the frame pushed at 'depth' (and anything left above it), if it is
 * still there.
 */

static inline void
Pop(
    int depth,
    Command *cmdPtr)
{
    if (depth > S.depth || S.frames[depth - 1].cmdPtr != cmdPtr) {
	return;
    }
    if (S.exact) {
	Frame *f = &S.frames[depth - 1];
	Node *n = &S.nodes[f->node];

	n->calls++;
	n->ticks += Ticks() - f->t0;
    }
    __atomic_store_n(&S.depth, depth - 1, __ATOMIC_RELEASE);
    S.pops++;
}

static int
PopCallback(
    ClientData data[],
    Tcl_Interp *interp,
    int result)
{
    Pop(PTR2INT(data[0]), (Command *) data[1]);
    return result;
}

/*
 * The wrapper of procedures: their clientData is the Proc, whose cmdPtr
 * is the command (renames keep it).
 */

static int
ProcNre(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    volatile char marker = 0;
    Command *cmdPtr = ((Proc *) clientData)->cmdPtr;

    if (S.active) {
	int depth = Push(cmdPtr, interp, (uintptr_t) &marker);

	Tcl_NRAddCallback(interp, PopCallback, INT2PTR(depth), cmdPtr,
		NULL, NULL);
    }
    return S.procNre(clientData, interp, objc, objv);
}

/*
 * The wrappers of C commands: their clientData is the Wrapped record.
 * Through the NRE path (every call from scripts) and through direct calls
 * of the objProc.
 */

static int
CmdNre(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    volatile char marker = 0;
    Wrapped *wPtr = (Wrapped *) clientData;
    int depth, code;

    if (!S.active) {
	return wPtr->origNreProc
		? wPtr->origNreProc(wPtr->origClientData, interp, objc, objv)
		: wPtr->origObjProc(wPtr->origClientData, interp, objc, objv);
    }
    depth = Push(wPtr->cmdPtr, interp, (uintptr_t) &marker);
    if (wPtr->origNreProc) {
	Tcl_NRAddCallback(interp, PopCallback, INT2PTR(depth), wPtr->cmdPtr,
		NULL, NULL);
	return wPtr->origNreProc(wPtr->origClientData, interp, objc, objv);
    }
    code = wPtr->origObjProc(wPtr->origClientData, interp, objc, objv);
    Pop(depth, wPtr->cmdPtr);
    return code;
}

static int
CmdObj(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Wrapped *wPtr = (Wrapped *) clientData;

    if (wPtr->origNreProc) {
	return Tcl_NRCallObjProc(interp, CmdNre, clientData, objc, objv);
    }
    return CmdNre(clientData, interp, objc, objv);
}

/*
 * Wrap one command. Returns 1 if wrapped (or already), 0 if it cannot be.
 */

static int
WrapCommand(
    Tcl_Command token)
{
    Command *cmdPtr = (Command *) token;
    Tcl_HashEntry *hPtr;
    Wrapped *wPtr;
    int isNew, isProc;

    if (cmdPtr == NULL || (cmdPtr->flags & CMD_DEAD)) {
	return 0;
    }
    isProc = (cmdPtr->objProc == TclObjInterpProc);
    if (isProc) {
	if (S.procNre == NULL) {
	    S.procNre = cmdPtr->nreProc;
	}
	if (cmdPtr->nreProc != S.procNre) {
	    return cmdPtr->nreProc == ProcNre;
	}
    } else if (cmdPtr->objProc == CmdObj) {
	return 1;
    } else if (cmdPtr->nreProc != NULL || cmdPtr->objProc == NULL
	    || Tcl_IsEnsemble(token)
	    || TclGetOriginalCommand(token) != NULL) {
	return 0;
    }
    hPtr = Tcl_CreateHashEntry(&S.byCmd, (char *) cmdPtr, &isNew);
    if (!isNew) {
	return 1;
    }
    wPtr = (Wrapped *) ckalloc(sizeof(Wrapped));
    wPtr->cmdPtr = cmdPtr;
    wPtr->isProc = isProc;
    wPtr->origObjProc = cmdPtr->objProc;
    wPtr->origNreProc = cmdPtr->nreProc;
    wPtr->origClientData = cmdPtr->objClientData;
    wPtr->nextPtr = S.wrapped;
    S.wrapped = wPtr;
    S.numWrapped++;
    Tcl_SetHashValue(hPtr, wPtr);
    cmdPtr->refCount++;
    if (isProc) {
	cmdPtr->nreProc = ProcNre;
    } else {
	cmdPtr->objClientData = wPtr;
	cmdPtr->nreProc = CmdNre;
	cmdPtr->objProc = CmdObj;
    }
    return 1;
}

static void
UnwrapAll(void)
{
    while (S.wrapped) {
	Wrapped *wPtr = S.wrapped;
	Command *cmdPtr = wPtr->cmdPtr;

	S.wrapped = wPtr->nextPtr;
	if (!(cmdPtr->flags & CMD_DEAD)) {
	    cmdPtr->nreProc = wPtr->origNreProc;
	    cmdPtr->objProc = wPtr->origObjProc;
	    cmdPtr->objClientData = wPtr->origClientData;
	}
	TclCleanupCommand(cmdPtr);
	ckfree(wPtr);
    }
    S.numWrapped = 0;
    if (S.tableInit) {
	Tcl_DeleteHashTable(&S.byCmd);
	Tcl_InitHashTable(&S.byCmd, TCL_ONE_WORD_KEYS);
    }
}

/*
 * Wrap all procedures of a namespace and its children.
 */

static void
WrapNamespace(
    Namespace *nsPtr)
{
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    for (hPtr = Tcl_FirstHashEntry(&nsPtr->cmdTable, &search); hPtr;
	    hPtr = Tcl_NextHashEntry(&search)) {
	Command *cmdPtr = (Command *) Tcl_GetHashValue(hPtr);

	if (cmdPtr->objProc == TclObjInterpProc) {
	    WrapCommand((Tcl_Command) cmdPtr);
	}
    }
#ifndef BREAK_NAMESPACE_COMPAT
    for (hPtr = Tcl_FirstHashEntry(&nsPtr->childTable, &search); hPtr;
	    hPtr = Tcl_NextHashEntry(&search)) {
	WrapNamespace((Namespace *) Tcl_GetHashValue(hPtr));
    }
#else
    if (nsPtr->childTablePtr) {
	for (hPtr = Tcl_FirstHashEntry(nsPtr->childTablePtr, &search); hPtr;
		hPtr = Tcl_NextHashEntry(&search)) {
	    WrapNamespace((Namespace *) Tcl_GetHashValue(hPtr));
	}
    }
#endif
}

/*
 * The proc command, wrapped: after a definition, wrap the new procedure.
 */

static Tcl_ObjCmdProc *origProcCmd;

static int
ProcDefine(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    int code = origProcCmd(clientData, interp, objc, objv);

    if (code == TCL_OK && S.active && objc == 4) {
	WrapCommand(Tcl_FindCommand(interp, Tcl_GetString(objv[1]), NULL, 0));
    }
    return code;
}

static Command *procCmdPtr;

static int
InstallCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    int exact = 0;

    if (objc != 1 && (objc != 3 || strcmp(Tcl_GetString(objv[1]), "-exact")
	    || Tcl_GetBooleanFromObj(interp, objv[2], &exact) != TCL_OK)) {
	Tcl_WrongNumArgs(interp, 1, objv, "?-exact boolean?");
	return TCL_ERROR;
    }
    S.exact = exact;
    S.depth = 0;
    S.maxDepth = 0;
    S.pushes = S.pops = 0;
    S.numNodes = 0;
    if (S.slots) {
	memset(S.slots, 0, S.capSlots * sizeof(Slot));
    }
    S.active = 1;
    WrapNamespace((Namespace *) Tcl_GetGlobalNamespace(interp));
    procCmdPtr = (Command *) Tcl_FindCommand(interp, "::proc", NULL, 0);
    if (procCmdPtr && procCmdPtr->objProc != ProcDefine) {
	origProcCmd = procCmdPtr->objProc;
	procCmdPtr->objProc = ProcDefine;
    }
    return TCL_OK;
}

static int
UninstallCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    S.active = 0;
    UnwrapAll();
    if (procCmdPtr && procCmdPtr->objProc == ProcDefine) {
	procCmdPtr->objProc = origProcCmd;
    }
    return TCL_OK;
}

static int
WrapCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    int i, n = 0;

    for (i = 1; i < objc; i++) {
	n += WrapCommand(Tcl_FindCommand(interp, Tcl_GetString(objv[i]),
		NULL, 0));
    }
    Tcl_SetObjResult(interp, Tcl_NewIntObj(n));
    return TCL_OK;
}

static Tcl_Obj *
CmdName(
    Tcl_Interp *interp,
    Command *cmdPtr)
{
    Tcl_Obj *nameObj = Tcl_NewObj();

    if (!(cmdPtr->flags & CMD_DEAD)) {
	Tcl_GetCommandFullName(interp, (Tcl_Command) cmdPtr, nameObj);
    } else {
	Tcl_AppendToObj(nameObj, "(deleted)", -1);
    }
    return nameObj;
}

static int
StackCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Tcl_Obj *listObj = Tcl_NewListObj(0, NULL);
    int i;

    for (i = 0; i < S.depth; i++) {
	Tcl_Obj *pair[2];

	pair[0] = CmdName(interp, S.frames[i].cmdPtr);
	pair[1] = Tcl_NewIntObj(S.frames[i].level);
	Tcl_ListObjAppendElement(NULL, listObj, Tcl_NewListObj(2, pair));
    }
    Tcl_SetObjResult(interp, listObj);
    return TCL_OK;
}

static int
StatsCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Tcl_Obj *d = Tcl_NewDictObj();

    Tcl_DictObjPut(NULL, d, Tcl_NewStringObj("pushes", -1),
	    Tcl_NewWideIntObj((Tcl_WideInt) S.pushes));
    Tcl_DictObjPut(NULL, d, Tcl_NewStringObj("pops", -1),
	    Tcl_NewWideIntObj((Tcl_WideInt) S.pops));
    Tcl_DictObjPut(NULL, d, Tcl_NewStringObj("max_depth", -1),
	    Tcl_NewIntObj(S.maxDepth));
    Tcl_DictObjPut(NULL, d, Tcl_NewStringObj("paths", -1),
	    Tcl_NewIntObj(S.numNodes));
    Tcl_DictObjPut(NULL, d, Tcl_NewStringObj("wrapped", -1),
	    Tcl_NewIntObj(S.numWrapped));
    Tcl_SetObjResult(interp, d);
    return TCL_OK;
}

static int
PathsCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Tcl_Obj *listObj = Tcl_NewListObj(0, NULL);
    int i;

    for (i = 0; i < S.numNodes; i++) {
	Tcl_Obj *pathObj = Tcl_NewListObj(0, NULL), *row[3];
	int n;

	for (n = i; n >= 0; n = S.nodes[n].parent) {
	    Tcl_ListObjReplace(NULL, pathObj, 0, 0, 1,
		    (Tcl_Obj *[]) {CmdName(interp, S.nodes[n].cmdPtr)});
	}
	row[0] = pathObj;
	row[1] = Tcl_NewWideIntObj((Tcl_WideInt) S.nodes[i].calls);
	row[2] = Tcl_NewWideIntObj((Tcl_WideInt) S.nodes[i].ticks);
	Tcl_ListObjAppendElement(NULL, listObj, Tcl_NewListObj(3, row));
    }
    Tcl_SetObjResult(interp, listObj);
    return TCL_OK;
}

DLLEXPORT int
Benchproto_Init(
    Tcl_Interp *interp)
{
    if (Tcl_InitStubs(interp, "8.6", 0) == NULL) {
	return TCL_ERROR;
    }
    if (S.interp != NULL && S.interp != interp) {
	Tcl_SetObjResult(interp, Tcl_NewStringObj(
		"benchproto: one interpreter per process", -1));
	return TCL_ERROR;
    }
    S.interp = interp;
    if (!S.tableInit) {
	Tcl_InitHashTable(&S.byCmd, TCL_ONE_WORD_KEYS);
	S.tableInit = 1;
    }
    Tcl_CreateObjCommand(interp, "benchproto::install", InstallCmd, NULL,
	    NULL);
    Tcl_CreateObjCommand(interp, "benchproto::uninstall", UninstallCmd,
	    NULL, NULL);
    Tcl_CreateObjCommand(interp, "benchproto::wrap", WrapCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "benchproto::stack", StackCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "benchproto::stats", StatsCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "benchproto::paths", PathsCmd, NULL, NULL);
    return Tcl_PkgProvideEx(interp, "benchproto", "0.1", NULL);
}
