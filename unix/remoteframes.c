/*
 * remoteframes.c --
 *
 *	Attach layer (see remote.c): the Tcl frames of an interpreter of
 *	another process, read from its CallFrame and CmdFrame chains (and
 *	those of the callers of running coroutines), each with its file
 *	and line, and placed after the trampoline (TclNRRunCallbacks frame)
 *	that runs it.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "remoteInt.h"
#include <tclOOInt.h>

#ifdef CPROF_RM_SUPPORTED

/*
 *----------------------------------------------------------------------
 *
 * Tcl frame reading.
 *
 *----------------------------------------------------------------------
 */

typedef struct TdOwner {	/* TEBCdata address -> trampoline (native
				 * index). */
    uintptr_t td;
    int nat;
} TdOwner;

/*
 * BcLine --
 *
 *	File and line of the command at pc of a bytecode, as
 *	TclGetSrcInfoForPc finds them.
 */

static int
GetDelta(
    Target *tPtr,
    uintptr_t *pPtr,
    int *valPtr)
{
    unsigned char b;

    if (!READ(tPtr, *pPtr, b)) {
	return 0;
    }
    if (b == 0xFF) {
	unsigned char w[4];

	if (!CprofRmReadMem(tPtr, *pPtr + 1, w, 4)) {
	    return 0;
	}
	*valPtr = (int) ((w[0] << 24) | (w[1] << 16) | (w[2] << 8) | w[3]);
	*pPtr += 5;
    } else {
	*valPtr = (signed char) b;
	*pPtr += 1;
    }
    return 1;
}

static void
BcLine(
    Target *tPtr,
    Interp *inPtr,
    uintptr_t codeAddr,
    uintptr_t pc,
    TFrame *fPtr,
    int *srcPtr,		/* The command's source: offset, or -1, */
    int *srcLenPtr,		/* and length, */
    int *eclTypePtr)		/* and how the code was compiled
				 * (TCL_LOCATION_SOURCE from line 1: a
				 * file's script), or NULL. */
{
    ByteCode bc;
    uintptr_t cd, cl, sd, sl;
    int i, codeOffset = 0, srcOffset = 0, delta, codeLen, srcLen;
    int bestDist = INT_MAX, bestSrc = -1, bestLen = 0, pcOffset;
    Tcl_HashTable table;
    Tcl_HashEntry *hPtr, entry;
    ExtCmdLoc ecl;

    if (srcPtr) {
	*srcPtr = -1;
	*srcLenPtr = 0;
    }
    if (eclTypePtr) {
	*eclTypePtr = -1;
    }
    if (!READ(tPtr, codeAddr, bc) || pc < (uintptr_t) bc.codeStart) {
	return;
    }
    pcOffset = (int) (pc - (uintptr_t) bc.codeStart);
    if (pcOffset >= bc.numCodeBytes || bc.numCommands > 100000) {
	return;
    }
    cd = (uintptr_t) bc.codeDeltaStart;
    cl = (uintptr_t) bc.codeLengthStart;
    sd = (uintptr_t) bc.srcDeltaStart;
    sl = (uintptr_t) bc.srcLengthStart;
    for (i = 0; i < bc.numCommands; i++) {
	if (!GetDelta(tPtr, &cd, &delta)) {
	    return;
	}
	codeOffset += delta;
	if (!GetDelta(tPtr, &cl, &codeLen) || !GetDelta(tPtr, &sd, &delta)
		|| !GetDelta(tPtr, &sl, &srcLen)) {
	    return;
	}
	srcOffset += delta;
	if (codeOffset > pcOffset) {
	    break;
	}
	if (pcOffset <= codeOffset + codeLen - 1
		&& pcOffset - codeOffset <= bestDist) {
	    bestDist = pcOffset - codeOffset;
	    bestSrc = srcOffset;
	    bestLen = srcLen;
	}
    }
    if (srcPtr) {
	*srcPtr = bestSrc;
	*srcLenPtr = bestLen;
    }
    if (bestSrc < 0 || inPtr->lineBCPtr == NULL
	    || !READ(tPtr, inPtr->lineBCPtr, table)
	    || (Tcl_WideInt) table.mask < 0
	    || table.buckets == NULL) {
	return;
    }
    i = (int) ((((unsigned long) codeAddr) * 1103515245UL >> table.downShift)
	    & table.mask);
    if (!READ(tPtr, (uintptr_t) table.buckets + i * sizeof(void *), hPtr)) {
	return;
    }
    for (; hPtr != NULL; hPtr = entry.nextPtr) {
	if (!READ(tPtr, hPtr, entry)) {
	    return;
	}
	if ((uintptr_t) entry.key.oneWordValue == codeAddr) {
	    break;
	}
    }
    if (hPtr == NULL || !READ(tPtr, entry.clientData, ecl)
	    || ecl.nuloc > 100000) {
	return;
    }
    if (eclTypePtr) {
	/* A file's own script starts at its line 1 (a literal in it, a
	 * loop's body or an eval'd word, at the line of the word). */
	*eclTypePtr = ecl.start == 1 ? ecl.type : -1;
    }
    for (i = 0; i < ecl.nuloc; i++) {
	ECL loc;
	int line;

	if (!READ(tPtr, (uintptr_t) ecl.loc + i * sizeof(ECL), loc)) {
	    return;
	}
	if (loc.srcOffset == bestSrc) {
	    if (loc.nline > 0 && READ(tPtr, loc.line, line) && line > 0) {
		fPtr->line = line;
		if (ecl.path) {
		    fPtr->file = CprofRmReadObjString(tPtr, (uintptr_t) ecl.path);
		    if (fPtr->file) {
			Tcl_IncrRefCount(fPtr->file);
		    }
		}
	    }
	    return;
	}
    }
}

/*
 * CommandFullName --
 *
 *	A command's qualified name, read from its hash entry and namespace;
 *	NULL when anything read is not what it should be.
 */

static Tcl_Obj *
CommandFullName(
    Target *tPtr,
    uintptr_t cmdAddr)
{
    Command cmd;
    Namespace ns;
    Tcl_Obj *keyObj, *nameObj;

    if (!cmdAddr || !READ(tPtr, cmdAddr, cmd) || !cmd.hPtr || !cmd.nsPtr
	    || !READ(tPtr, cmd.nsPtr, ns)) {
	return NULL;
    }
    keyObj = CprofRmReadString(tPtr, (uintptr_t) cmd.hPtr
	    + offsetof(Tcl_HashEntry, key), 512);
    nameObj = CprofRmReadString(tPtr, (uintptr_t) ns.fullName, 512);
    if (keyObj == NULL || nameObj == NULL) {
	if (keyObj) {
	    Tcl_DecrRefCount(keyObj);
	}
	if (nameObj) {
	    Tcl_DecrRefCount(nameObj);
	}
	return NULL;
    }
    if (strcmp(Tcl_GetString(nameObj), "::") != 0) {
	Tcl_AppendToObj(nameObj, "::", 2);
    }
    Tcl_AppendObjToObj(nameObj, keyObj);
    Tcl_DecrRefCount(keyObj);
    return nameObj;
}

/*
 * FrameName --
 *
 *	The name of a proc (or lambda, method) frame: the command's
 *	qualified name, else the first word it was called with.
 */

static Tcl_Obj *
FrameName(
    Target *tPtr,
    CallFrame *cfPtr)
{
    Proc proc;
    Tcl_Obj *nameObj = NULL;
    Tcl_Obj *objv0;

    if (cfPtr->procPtr && READ(tPtr, cfPtr->procPtr, proc) && proc.cmdPtr
	    && (cfPtr->isProcCallFrame & FRAME_IS_PROC)
	    && (nameObj = CommandFullName(tPtr,
		(uintptr_t) proc.cmdPtr)) != NULL) {
	return nameObj;
    }
    if (cfPtr->objc > 0 && cfPtr->objv
	    && READ(tPtr, cfPtr->objv, objv0)) {
	nameObj = CprofRmReadObjString(tPtr, (uintptr_t) objv0);
	if (nameObj && (cfPtr->isProcCallFrame & FRAME_IS_LAMBDA)) {
	    Tcl_Obj *o = Tcl_NewStringObj("apply ", -1);

	    Tcl_AppendObjToObj(o, nameObj);
	    Tcl_DecrRefCount(nameObj);
	    nameObj = o;
	}
    }
    return nameObj ? nameObj : Tcl_NewStringObj("(unknown frame)", -1);
}

/*
 * ObjectName, MethodName --
 *
 *	A method frame's name as the in-process captures give it (naming.c):
 *	"Declarer method", the declarer being the object or class that
 *	declared the method, by its command's name without the leading
 *	"::", or "<object Class>" for an object TclOO named (::oo::Obj12);
 *	"constructor" and "destructor" for those. The method running is
 *	entry "index" of its call context's chain; frames of one context
 *	(next) follow each other down the chain, so a frame with the same
 *	context as the one read before it runs the entry before that one's.
 *	NULL when anything read is not what it should be.
 */

static Tcl_Obj *
ObjectName(
    Target *tPtr,
    uintptr_t objAddr,
    int depth)
{
    Object obj;
    Tcl_Obj *nameObj, *outObj;
    const char *name;

    if (!objAddr || !READ(tPtr, objAddr, obj)
	    || (nameObj = CommandFullName(tPtr,
		(uintptr_t) obj.command)) == NULL) {
	return NULL;
    }
    name = Tcl_GetString(nameObj);
    if (depth == 0 && strncmp(name, "::oo::Obj", 9) == 0 && name[9]
	    && strspn(name + 9, "0123456789") == strlen(name + 9)
	    && obj.selfCls != NULL) {
	Class cls;
	Tcl_Obj *clsObj = NULL;

	if (READ(tPtr, obj.selfCls, cls)) {
	    clsObj = ObjectName(tPtr, (uintptr_t) cls.thisPtr, 1);
	}
	if (clsObj) {
	    outObj = Tcl_ObjPrintf("<object %s>", Tcl_GetString(clsObj));
	    Tcl_DecrRefCount(clsObj);
	    Tcl_DecrRefCount(nameObj);
	    return outObj;
	}
    }
    outObj = Tcl_NewStringObj(name + (name[0] == ':' && name[1] == ':'
	    ? 2 : 0), -1);
    Tcl_DecrRefCount(nameObj);
    return outObj;
}

static Tcl_Obj *
MethodName(
    Target *tPtr,
    CallFrame *cfPtr,
    uintptr_t *lastCtxPtr,	/* The context of the method frame read */
    int *lastIndexPtr)		/* before, and its entry. */
{
    CallContext ctx;
    CallChain chain;
    struct MInvoke inv;
    Method m;
    uintptr_t ctxAddr = (uintptr_t) cfPtr->clientData, declObj;
    int index;
    Tcl_Obj *declObjName, *nameObj;

    if (!ctxAddr || !READ(tPtr, ctxAddr, ctx) || ctx.callPtr == NULL
	    || !READ(tPtr, ctx.callPtr, chain)) {
	return NULL;
    }
    index = (ctxAddr == *lastCtxPtr) ? *lastIndexPtr - 1 : (int) ctx.index;
    if (index < 0 || index >= (int) chain.numChain || chain.chain == NULL
	    || !READ(tPtr, (uintptr_t) (chain.chain + index), inv)
	    || inv.mPtr == NULL || !READ(tPtr, inv.mPtr, m)) {
	return NULL;
    }
    *lastCtxPtr = ctxAddr;
    *lastIndexPtr = index;
    declObj = (uintptr_t) m.declaringObjectPtr;
    if (!declObj) {
	Class cls;

	if (m.declaringClassPtr == NULL
		|| !READ(tPtr, m.declaringClassPtr, cls)) {
	    return NULL;
	}
	declObj = (uintptr_t) cls.thisPtr;
    }
    declObjName = ObjectName(tPtr, declObj, 0);
    if (declObjName == NULL) {
	return NULL;
    }
    if (chain.flags & (CONSTRUCTOR | DESTRUCTOR)) {
	nameObj = Tcl_NewStringObj((chain.flags & CONSTRUCTOR)
		? "constructor" : "destructor", -1);
    } else if (m.namePtr == NULL
	    || (nameObj = CprofRmReadObjString(tPtr,
		(uintptr_t) m.namePtr)) == NULL) {
	Tcl_DecrRefCount(declObjName);
	return NULL;
    }
    Tcl_AppendToObj(declObjName, " ", 1);
    Tcl_AppendObjToObj(declObjName, nameObj);
    Tcl_DecrRefCount(nameObj);
    return declObjName;
}

/*
 * CprofRmInterpPath --
 *
 *	The path of interp inAddr from its thread's top interpreter (the
 *	one without a parent in its thread), as "interp eval" takes it: a
 *	list of the children's names, empty for the top one. A child's
 *	parent and its entry in the parent's table of children are in
 *	Tcl's InterpInfo (tclInterp.c, private: its head as Tcl 8.6 and
 *	9.0 declare it; 9.0 added idIssuer to the parent's part).
 */

typedef struct RemoteInterpInfo {
    Tcl_HashTable childTable;	/* Parent: its children, */
    void *targetsPtr;		/* and aliases' targets. */
#if TCL_MAJOR_VERSION >= 9
    Tcl_Size idIssuer;		/* (Names of "interp create".) */
#endif
    Tcl_Interp *parentInterp;	/* Child: its parent, */
    Tcl_HashEntry *childEntryPtr;	/* its entry in the parent's table. */
} RemoteInterpInfo;

Tcl_Obj *
CprofRmInterpPath(
    Target *tPtr,
    uintptr_t inAddr)
{
    Tcl_Obj *names[32];
    Tcl_Obj *pathObj;
    int n = 0;
    Tcl_ThreadId thread;

    if (!READ(tPtr, inAddr + offsetof(Interp, threadId), thread)) {
	return Tcl_NewObj();
    }
    while (n < 32) {
	uintptr_t infoAddr;
	RemoteInterpInfo info;
	Tcl_ThreadId parentThread;
	Tcl_Obj *nameObj;

	if (!READ(tPtr, inAddr + offsetof(Interp, interpInfo), infoAddr)
		|| !READ(tPtr, infoAddr, info) || info.parentInterp == NULL
		|| info.childEntryPtr == NULL
		|| !READ(tPtr, (uintptr_t) info.parentInterp
		    + offsetof(Interp, threadId), parentThread)
		|| parentThread != thread) {
	    break;
	}
	nameObj = CprofRmReadString(tPtr, (uintptr_t) info.childEntryPtr
		+ offsetof(Tcl_HashEntry, key), 256);
	if (nameObj == NULL) {
	    break;
	}
	names[n++] = nameObj;
	inAddr = (uintptr_t) info.parentInterp;
    }
    pathObj = Tcl_NewObj();
    while (n-- > 0) {
	Tcl_ListObjAppendElement(NULL, pathObj, names[n]);
    }
    return pathObj;
}

/*
 * CmdName --
 *
 *	The name of a C command (or other command that is a frame of its
 *	own) from its source: its first word as written, without a leading
 *	"::" (as profiles made in the process name commands).
 */

/*
 * FirstWords --
 *
 *	The first two words of a command's text, when literal: the first
 *	(without a leading "::", at most 200 bytes) in *w1Ptr, the second,
 *	if any, in *w2Ptr (NULL otherwise). 0 if the text does not parse.
 */

static int
FirstWords(
    const char *text,
    int len,
    Tcl_Obj **w1Ptr,
    Tcl_Obj **w2Ptr)
{
    Tcl_Parse parse;
    int i, ok = 0;

    *w1Ptr = *w2Ptr = NULL;
    if (len <= 0 || Tcl_ParseCommand(NULL, text, len, 0, &parse) != TCL_OK) {
	return 0;
    }
    if (parse.numWords > 0) {
	Tcl_Token *tokPtr = parse.tokenPtr;

	for (i = 0; i < 2 && i < parse.numWords; i++) {
	    const char *w = tokPtr->start;
	    int n = tokPtr->size;

	    if (tokPtr->type == TCL_TOKEN_SIMPLE_WORD) {
		w = tokPtr[1].start;
		n = tokPtr[1].size;
	    }
	    if (i == 0 && n > 2 && w[0] == ':' && w[1] == ':') {
		w += 2;
		n -= 2;
	    }
	    if (i == 0) {
		*w1Ptr = Tcl_NewStringObj(w, n > 200 ? 200 : n);
	    } else if (tokPtr->type == TCL_TOKEN_SIMPLE_WORD) {
		*w2Ptr = Tcl_NewStringObj(w, n > 200 ? 200 : n);
	    }
	    tokPtr += tokPtr->numComponents + 1;
	}
	ok = 1;
    }
    Tcl_FreeParse(&parse);
    return ok;
}

/*
 * CmdText --
 *
 *	Read the text of a command (srcLen bytes at src of the source of
 *	the ByteCode at codeAddr, or len bytes at textAddr when codeAddr is
 *	0: an eval frame's) into buf (size bytes, the text cut there).
 *	Returns the bytes read, 0 if they could not be.
 */

static int
CmdText(
    Target *tPtr,
    uintptr_t codeAddr,
    uintptr_t textAddr,
    int src,
    int srcLen,
    char *buf,
    int size)
{
    int n = srcLen < size ? srcLen : size;

    if (n <= 0) {
	return 0;
    }
    if (codeAddr != 0) {
	ByteCode bc;

	if (src < 0 || !READ(tPtr, codeAddr, bc) || bc.source == NULL
		|| src + n > bc.numSrcBytes) {
	    return 0;
	}
	textAddr = (uintptr_t) bc.source + src;
    }
    return CprofRmReadMem(tPtr, textAddr, buf, n) ? n : 0;
}

/*
 * CmdName --
 *
 *	A command frame's name, from the first word of its text (a
 *	NUL-free text of n bytes, n 0 when it could not be read).
 */

static Tcl_Obj *
CmdName(
    const char *text,
    int n)
{
    Tcl_Obj *w1, *w2;

    if (n > 0 && FirstWords(text, n, &w1, &w2) && w1 != NULL) {
	if (w2) {
	    Tcl_DecrRefCount(w2);
	}
	return w1;
    }
    return Tcl_NewStringObj("(unknown command)", -1);
}

/*
 * EvalInvoked --
 *
 *	Whether the command an eval CmdFrame (at cfAddr) runs invoked the
 *	call whose words are objv (objc of them): TclEvalEx passes its words
 *	to Tcl_EvalObjv in an array on Tcl's stack just after the CmdFrame
 *	(or a ckalloc'ed one beyond 20 words), as generic/captureframes.c tells.
 */

static int
EvalInvoked(
    uintptr_t cfAddr,
    const CmdFrame *cfPtr,
    int objc,
    uintptr_t objv)
{
    uintptr_t after = cfAddr + sizeof(CmdFrame);

    if (objc != (int) cfPtr->nline) {
	return 0;
    }
    return objc > 20 || (objv >= after && objv <= after + 4 * sizeof(void *));
}

/*
 * InvokeObjc --
 *
 *	The number of words the invoke instruction at a bytecode level's pc
 *	passes, or -1.
 */

static int
InvokeObjc(
    Target *tPtr,
    const CmdFrame *cfPtr)
{
    unsigned char pc[5];

    if (!CprofRmReadMem(tPtr, (uintptr_t) cfPtr->data.tebc.pc, pc, 5)) {
	return -1;
    }
    if (pc[0] == INST_INVOKE_STK1) {
	return pc[1];
    }
    if (pc[0] == INST_INVOKE_STK4) {
	return (int) (((unsigned) pc[1] << 24) | ((unsigned) pc[2] << 16)
		| ((unsigned) pc[3] << 8) | pc[4]);
    }
    return -1;
}

/*
 * InvokedFrom --
 *
 *	Whether the bytecode level whose CmdFrame is at cfAddr invoked the
 *	call whose words are objv (objc of them): objv lies in that level's
 *	operand stack and its invoke instruction passes objc words (as
 *	generic/captureframes.c tells a proc's call site from a command of its own).
 */

static int
InvokedFrom(
    Target *tPtr,
    uintptr_t cfAddr,
    const CmdFrame *cfPtr,
    int objc,
    uintptr_t objv)
{
    ByteCode bc;
    int n;
    uintptr_t td = cfAddr - offsetof(RemoteTEBCdata, cmdFrame);
    uintptr_t start = td + offsetof(RemoteTEBCdata, stack), end;

    if (!READ(tPtr, cfPtr->data.tebc.codePtr, bc)) {
	return 0;
    }
    end = start + (uintptr_t) (bc.maxExceptDepth + bc.maxStackDepth + 1)
	    * sizeof(void *);
    if (objv < start || objv >= end) {
	return 0;
    }
    n = InvokeObjc(tPtr, cfPtr);
    return n < 0 || objc == n;
}

/*
 * ScriptName --
 *
 *	"<script app.tcl>" for the top level of a script file (the tail of
 *	its path), as profiles made in the process name it.
 */

static Tcl_Obj *
ScriptName(
    Tcl_Obj *fileObj)
{
    const char *path = fileObj ? Tcl_GetString(fileObj) : NULL;
    const char *tail = path ? strrchr(path, '/') : NULL;

    tail = tail ? tail + 1 : path;
    return tail ? Tcl_ObjPrintf("<script %s>", tail)
	    : Tcl_NewStringObj("<script>", -1);
}

/*
 * CprofRmReadInterpFrames --
 *
 *	Append the Tcl frames of interp inAddr to the thread's stack,
 *	placed after their trampolines. Two chains are merged, innermost
 *	first, as generic/captureframes.c merges them in the process: the
 *	CallFrames (procs, lambdas, methods) and the CmdFrames of the
 *	commands their code invokes; a CmdFrame that is not the call site
 *	of the frame just inside it is a command of its own (a C command
 *	that evaluates Tcl, an alias, a child interpreter's command, a
 *	coroutine's resume), and the eval frame of a script file's top
 *	level (tclsh's main script), or a command of a sourced file's
 *	top-level code, is that script's frame, "<script app.tcl>".
 */

#define MAX_TD 1024

#define RF_PROC		0
#define RF_CMD		1
#define RF_SCRIPT	2
#define RF_EVAL		3	/* A command of a script evaluated from its
				 * text. */

typedef struct RFrame {		/* A frame being read, innermost first. */
    TFrame t;
    int kind;			/* RF_*. */
    uintptr_t frameAddr;	/* RF_PROC: its CallFrame. */
    uintptr_t cfAddr;		/* RF_CMD, or RF_SCRIPT of a bytecode: the
				 * CmdFrame (in its level's TEBCdata). */
    uintptr_t bodyCf;		/* RF_PROC: the outermost CmdFrame of its
				 * level, or 0. */
} RFrame;

/*
 * EnsembleFold --
 *
 *	A command frame "ns sub ..." invoked the procedure frame just inside
 *	it, ::ns::subcommand, through the ensemble ns: the ensemble rewrote
 *	the words (the procedure has one fewer, cmdObjc - 1) and "sub" is a
 *	prefix of the procedure's name in ns. The procedure frame is then
 *	named "ns subcommand", an ensemble's frame, and the command frame is
 *	not one of its own, as profiles made in the process show them. 1 if
 *	it was folded.
 */

static int
EnsembleFold(
    RFrame *procPtr,
    const char *text,
    int n,
    int cmdObjc,
    int procObjc)
{
    Tcl_Obj *w1, *w2;
    const char *full, *sep;
    int folded = 0;

    if (cmdObjc < 2 || procObjc != cmdObjc - 1
	    || !FirstWords(text, n, &w1, &w2) || w1 == NULL) {
	return 0;
    }
    full = Tcl_GetString(procPtr->t.name);
    if (full[0] == ':' && full[1] == ':') {
	full += 2;
    }
    sep = strstr(full, "::");
    while (sep != NULL && strstr(sep + 2, "::") != NULL) {
	sep = strstr(sep + 2, "::");
    }
    if (w2 != NULL && sep != NULL) {
	const char *ns = Tcl_GetString(w1), *sub = sep + 2;
	int nsLen = (int) (sep - full), w1Len = (int) strlen(ns);
	const char *nsTail = full;
	const char *q;

	/*
	 * The ensemble as called: its full name, or its name's tail
	 * (called from inside its parent namespace).
	 */

	for (q = full; q < sep; q++) {
	    if (q[0] == ':' && q[1] == ':') {
		nsTail = q + 2;
	    }
	}
	if (((w1Len == nsLen && strncmp(ns, full, nsLen) == 0)
		|| (w1Len == (int) (sep - nsTail)
		&& strncmp(ns, nsTail, w1Len) == 0))
		&& strncmp(sub, Tcl_GetString(w2),
		strlen(Tcl_GetString(w2))) == 0 && *Tcl_GetString(w2)) {
	    Tcl_Obj *name = Tcl_ObjPrintf("%s %s", ns, sub);

	    Tcl_IncrRefCount(name);
	    Tcl_DecrRefCount(procPtr->t.name);
	    procPtr->t.name = name;
	    procPtr->t.tclkind = "ensemble";
	    folded = 1;
	}
    }
    Tcl_DecrRefCount(w1);
    if (w2) {
	Tcl_DecrRefCount(w2);
    }
    return folded;
}

/*
 * EnsembleCName --
 *
 *	A command frame "ens sub ..." of a bytecode level whose ensemble
 *	runs a subcommand implemented in C (no procedure frame inside for
 *	EnsembleFold): the running callback of the level's trampoline (nat)
 *	is then the subcommand's Dispatch (tclBasic.c:4426: data[2] objc,
 *	data[3] objv), with the ensemble's rewritten words, one fewer than
 *	the invocation's (the implementation's name in place of "ens sub").
 *	Its name is then "ens" and the implementation's tail, as profiles
 *	made in the process name it (CprofNameFold). NULL otherwise.
 */

static Tcl_Obj *
EnsembleCName(
    Target *tPtr,
    const ThreadStack *sPtr,
    int nat,
    const CmdFrame *cfPtr,
    const char *text,
    int n)
{
    int objc = InvokeObjc(tPtr, cfPtr);
    NRE_callback cb;
    uintptr_t objv0 = 0;
    Tcl_Obj *w1, *w2, *impl, *name = NULL;

    if (nat < 0 || objc < 2 || sPtr->native[nat].tRunning == 0
	    || !READ(tPtr, sPtr->native[nat].tRunning, cb)
	    || PTR2INT(cb.data[2]) != objc - 1 || cb.data[3] == NULL
	    || !READ(tPtr, cb.data[3], objv0) || objv0 == 0
	    || !FirstWords(text, n, &w1, &w2)) {
	return NULL;
    }
    if (w1 != NULL && w2 != NULL
	    && (impl = CprofRmReadObjString(tPtr, objv0)) != NULL) {
	const char *full = Tcl_GetString(impl), *tail = full, *q;

	for (q = full; *q != '\0'; q++) {
	    if (q[0] == ':' && q[1] == ':') {
		tail = q + 2;
	    }
	}
	if (*tail != '\0' && strcmp(tail, Tcl_GetString(w1)) != 0
		&& strcmp(full, Tcl_GetString(w1)) != 0) {
	    name = Tcl_ObjPrintf("%s %s", Tcl_GetString(w1), tail);
	}
	Tcl_DecrRefCount(impl);
    }
    if (w1 != NULL) {
	Tcl_DecrRefCount(w1);
    }
    if (w2 != NULL) {
	Tcl_DecrRefCount(w2);
    }
    return name;
}

static RFrame *
AddFrame(
    RFrame *frames,
    int *nPtr,
    int kind,
    Tcl_Obj *name)
{
    RFrame *fPtr;

    if (*nPtr >= MAX_TCL) {
	Tcl_DecrRefCount(name);
	return NULL;
    }
    fPtr = &frames[(*nPtr)++];
    memset(fPtr, 0, sizeof(*fPtr));
    fPtr->kind = kind;
    fPtr->t.name = name;
    Tcl_IncrRefCount(name);
    fPtr->t.after = -1;
    fPtr->t.tclkind = kind == RF_PROC ? "proc" : "cmd";
    return fPtr;
}

static void
SetFile(
    TFrame *tPtr,
    Tcl_Obj *fileObj,
    int line)
{
    if (tPtr->file) {
	Tcl_DecrRefCount(tPtr->file);
    }
    tPtr->file = fileObj;
    if (fileObj) {
	Tcl_IncrRefCount(fileObj);
    }
    tPtr->line = line;
}

/*
 * AddEvalFrame --
 *
 *	The frame of the command an eval CmdFrame (at cfAddr) runs, named
 *	from its text, unless it is a control command (it adds no frame, as
 *	in the process) or its text cannot be read. A coroutine's resume is
 *	named after the coroutine's outermost frame (lastProc); an
 *	ensemble's subcommand is the procedure frame just inside (callIdx,
 *	called with callObjc words), renamed (EnsembleFold).
 */

static void
AddEvalFrame(
    Target *tPtr,
    RFrame *frames,
    int *numFramesPtr,
    uintptr_t cfAddr,
    const CmdFrame *cfPtr,
    int resumed,
    int lastProc,
    int callIdx,
    int callObjc,
    Tcl_Obj *fileObj,
    int line)
{
    char text[256];
    int n = CmdText(tPtr, 0, (uintptr_t) cfPtr->cmd, 0, (int) cfPtr->len,
	    text, (int) sizeof(text));
    Tcl_Obj *name;
    RFrame *rPtr;

    if (n <= 0) {
	return;
    }
    if (resumed && lastProc >= 0) {
	name = Tcl_ObjPrintf("<coroutine %s>",
		Tcl_GetString(frames[lastProc].t.name));
    } else if (!resumed && callIdx >= 0 && callIdx == *numFramesPtr - 1
	    && frames[callIdx].kind == RF_PROC
	    && EnsembleFold(&frames[callIdx], text, n, (int) cfPtr->nline,
	    callObjc)) {
	return;
    } else {
	Tcl_Obj *full;

	name = CmdName(text, n);
	full = Tcl_ObjPrintf("::%s", Tcl_GetString(name));
	if (CprofNameIsControl(Tcl_GetString(full))) {
	    Tcl_DecrRefCount(full);
	    Tcl_DecrRefCount(name);
	    return;
	}
	Tcl_DecrRefCount(full);
    }
    rPtr = AddFrame(frames, numFramesPtr, RF_EVAL, name);
    if (rPtr) {
	rPtr->cfAddr = cfAddr;
	if (fileObj != NULL) {
	    /*
	     * (A copy: the script's frame owns fileObj, or frees it.)
	     */

	    SetFile(&rPtr->t, Tcl_DuplicateObj(fileObj), line);
	}
    }
}

static int
OwnerOf(
    const TdOwner *owners,
    int numOwners,
    uintptr_t cfAddr)
{
    int k, nat = -1;

    for (k = 0; k < numOwners; k++) {
	if (owners[k].td == cfAddr - offsetof(RemoteTEBCdata, cmdFrame)
		&& owners[k].nat > nat) {
	    nat = owners[k].nat;	/* Outermost: highest, innermost
					 * first. */
	}
    }
    return nat;
}

void
CprofRmReadInterpFrames(
    Target *tPtr,
    uintptr_t inAddr,
    ThreadStack *sPtr,
    Tcl_Obj *pathObj)		/* The interp's path (CprofRmInterpPath). */
{
    Interp in;
    ExecEnv ee;
    CoroutineData cor;
    uintptr_t eeAddr, cbAddr, cfAddr, fpAddr, ctxFp, ctxCf;
    TdOwner owners[MAX_TD];
    int numOwners = 0;
    int tramps[MAX_NATIVE], numTramps = 0, pos, i, j, steps, hops;
    RFrame *frames = (RFrame *) ckalloc(MAX_TCL * sizeof(RFrame));
    int numFrames = 0, callIdx = -1, callObjc = 0, resumed = 0;
    int lastProc = -1;		/* The outermost proc frame read so far. */
    uintptr_t lastCtx = 0;	/* MethodName's context and entry. */
    int lastIndex = 0;
    uintptr_t callObjv = 0;
    int prevTramp;

    if (!READ(tPtr, inAddr, in)) {
	ckfree(frames);
	return;
    }

    /*
     * Trampolines of this interp, outer to inner (native is innermost
     * first).
     */

    for (i = sPtr->numNative - 1; i >= 0; i--) {
	if (sPtr->native[i].isTramp && sPtr->native[i].tInterp == inAddr) {
	    tramps[numTramps++] = i;
	}
    }

    /*
     * Pending callbacks, innermost first across the coroutines' execution
     * environments, cut at each trampoline's root callback: which
     * trampoline each suspended bytecode level (its TEBCdata) is in.
     */

    pos = numTramps - 1;
    eeAddr = (uintptr_t) in.execEnvPtr;
    steps = 0;
    while (eeAddr && READ(tPtr, eeAddr, ee)) {
	NRE_callback cb;

	for (cbAddr = (uintptr_t) ee.callbackPtr; cbAddr && steps < MAX_CB;
		cbAddr = (uintptr_t) cb.nextPtr, steps++) {
	    while (pos >= 0 && cbAddr == sPtr->native[tramps[pos]].tRoot) {
		pos--;
	    }
	    if (!READ(tPtr, cbAddr, cb)) {
		break;
	    }
	    if (pos >= 0 && numOwners < MAX_TD) {
		owners[numOwners].td = (uintptr_t) cb.data[0];
		owners[numOwners].nat = tramps[pos];
		numOwners++;
	    }
	}
	if (ee.corPtr == NULL || !READ(tPtr, ee.corPtr, cor)) {
	    break;
	}
	eeAddr = (uintptr_t) cor.callerEEPtr;
    }
    for (i = 0; i < numTramps && numOwners < MAX_TD; i++) {
	NRE_callback cb;

	if (READ(tPtr, sPtr->native[tramps[i]].tRunning, cb)) {
	    owners[numOwners].td = (uintptr_t) cb.data[0];
	    owners[numOwners].nat = tramps[i];
	    numOwners++;
	}
    }

    /*
     * The merged walk, innermost first, through the callers of running
     * coroutines.
     */

    fpAddr = (uintptr_t) in.framePtr;
    cfAddr = (uintptr_t) in.cmdFramePtr;
    eeAddr = (uintptr_t) in.execEnvPtr;
    steps = 0;
    hops = 0;
    for (;;) {
	ctxFp = fpAddr;
	ctxCf = cfAddr;
	while (fpAddr != 0 && steps++ < 10000) {
	    CallFrame f;
	    CmdFrame c;
	    uintptr_t bodyCf = 0;

	    if (!READ(tPtr, fpAddr, f)) {
		goto done;
	    }

	    /*
	     * The commands invoked from this frame's code, innermost first.
	     */

	    while (cfAddr != 0 && steps++ < 10000 && READ(tPtr, cfAddr, c)
		    && (uintptr_t) c.framePtr == fpAddr) {
		if (c.type == TCL_LOCATION_SOURCE && c.data.eval.path) {
		    /*
		     * A command at the top level of a script file evaluated
		     * from its text (tclsh's main script).
		     */

		    Tcl_Obj *fileObj = CprofRmReadObjString(tPtr,
			    (uintptr_t) c.data.eval.path);
		    int line = 0;
		    RFrame *rPtr;

		    if (c.line && c.nline > 0) {
			READ(tPtr, c.line, line);
		    }
		    if (c.cmd != NULL && c.len > 0 && c.nline > 0
			    && !(callIdx >= 0 && EvalInvoked(cfAddr, &c,
			    callObjc, callObjv))
			    && !(numFrames > 0
			    && frames[numFrames - 1].kind == RF_SCRIPT)) {
			/*
			 * The command itself, when it is not the call of
			 * the frame just inside nor runs the script's
			 * compiled body (a top-level loop).
			 */

			AddEvalFrame(tPtr, frames, &numFrames, cfAddr, &c,
				resumed, lastProc, callIdx, callObjc, fileObj,
				line);
		    }
		    if (numFrames > 0 && frames[numFrames - 1].kind == RF_SCRIPT
			    && frames[numFrames - 1].cfAddr != 0 && fileObj
			    && frames[numFrames - 1].t.file
			    && strcmp(Tcl_GetString(fileObj), Tcl_GetString(
				frames[numFrames - 1].t.file)) == 0) {
			/*
			 * The same script's compiled body (a top-level loop's)
			 * was read just before: one frame, where it runs.
			 */

			rPtr = &frames[numFrames - 1];
			rPtr->cfAddr = 0;
			if (fileObj) {
			    Tcl_DecrRefCount(fileObj);
			}
		    } else if ((rPtr = AddFrame(frames, &numFrames, RF_SCRIPT,
			    ScriptName(fileObj))) != NULL) {
			SetFile(&rPtr->t, fileObj, line);
		    } else if (fileObj) {
			Tcl_DecrRefCount(fileObj);
		    }
		    callIdx = -1;
		    resumed = 0;
		} else if ((c.type == TCL_LOCATION_BC
			|| c.type == TCL_LOCATION_PREBC)
			&& c.data.tebc.codePtr && c.data.tebc.pc) {
		    TFrame where;
		    int src, srcLen, eclType;

		    memset(&where, 0, sizeof(where));
		    BcLine(tPtr, &in, (uintptr_t) c.data.tebc.codePtr,
			    (uintptr_t) c.data.tebc.pc, &where, &src, &srcLen,
			    &eclType);
		    bodyCf = cfAddr;
		    if (callIdx >= 0 && InvokedFrom(tPtr, cfAddr, &c, callObjc,
			    callObjv)) {
			/* The call site of the frame just inside. */
		    } else {
			Tcl_Obj *name = NULL;
			RFrame *rPtr;
			int ensC = 0;
			char text[256];
			int n = resumed ? 0 : CmdText(tPtr,
				(uintptr_t) c.data.tebc.codePtr, 0, src, srcLen,
				text, (int) sizeof(text));

			if (resumed) {
			    name = lastProc >= 0 ? Tcl_ObjPrintf(
				    "<coroutine %s>", Tcl_GetString(
				    frames[lastProc].t.name))
				    : Tcl_NewStringObj("<coroutine>", -1);
			} else if (callIdx >= 0 && callIdx == numFrames - 1
				&& frames[callIdx].kind == RF_PROC
				&& EnsembleFold(&frames[callIdx], text, n,
				InvokeObjc(tPtr, &c), callObjc)) {
			    /* An ensemble's subcommand: one frame. */
			} else if ((name = EnsembleCName(tPtr, sPtr,
				OwnerOf(owners, numOwners, cfAddr), &c, text,
				n)) != NULL) {
			    /* An ensemble's subcommand in C: one frame. */
			    ensC = 1;
			} else {
			    name = CmdName(text, n);
			}
			if (name != NULL) {
			    rPtr = AddFrame(frames, &numFrames, RF_CMD, name);
			    if (rPtr) {
				if (ensC) {
				    rPtr->t.tclkind = "ensemble";
				}
				rPtr->cfAddr = cfAddr;
				SetFile(&rPtr->t, where.file, where.line);
			    }
			}
		    }
		    callIdx = -1;
		    resumed = 0;

		    /*
		     * A command of a sourced file's top level (in the global
		     * frame, of code compiled from a file): the script's
		     * frame, outside it.
		     */

		    if (fpAddr == (uintptr_t) in.rootFramePtr && where.file
			    && eclType == TCL_LOCATION_SOURCE) {
			RFrame *rPtr = AddFrame(frames, &numFrames, RF_SCRIPT,
				ScriptName(where.file));

			if (rPtr) {
			    rPtr->cfAddr = cfAddr;
			    SetFile(&rPtr->t, where.file, where.line);
			}
		    }
		    if (where.file) {
			Tcl_DecrRefCount(where.file);
		    }
		} else {
		    /*
		     * A command of a script evaluated from a string (Tcl_Eval
		     * from C, a child interpreter's eval): named from its
		     * text, unless it invoked the frame just inside.
		     */

		    if ((c.type == TCL_LOCATION_EVAL
			    || c.type == TCL_LOCATION_SOURCE)
			    && c.nline > 0 && c.cmd != NULL && c.len > 0
			    && !(callIdx >= 0 && EvalInvoked(cfAddr, &c,
			    callObjc, callObjv))) {
			AddEvalFrame(tPtr, frames, &numFrames, cfAddr, &c,
				resumed, lastProc, callIdx, callObjc, NULL, 0);
		    }
		    callIdx = -1;
		    resumed = 0;
		}
		cfAddr = (uintptr_t) c.nextPtr;
	    }
	    callIdx = -1;
	    if (f.isProcCallFrame & (FRAME_IS_PROC | FRAME_IS_LAMBDA
		    | FRAME_IS_METHOD)) {
		Tcl_Obj *mName = (f.isProcCallFrame & FRAME_IS_METHOD)
			? MethodName(tPtr, &f, &lastCtx, &lastIndex) : NULL;
		RFrame *rPtr = AddFrame(frames, &numFrames, RF_PROC,
			mName ? mName : FrameName(tPtr, &f));

		if (rPtr) {
		    rPtr->frameAddr = fpAddr;
		    rPtr->bodyCf = bodyCf;
		    if (f.isProcCallFrame & FRAME_IS_METHOD) {
			rPtr->t.tclkind = "method";
		    }
		    callIdx = numFrames - 1;
		    lastProc = callIdx;
		    callObjc = f.objc;
		    callObjv = (uintptr_t) f.objv;
		}
	    }
	    fpAddr = (uintptr_t) f.callerPtr;
	}

	/*
	 * The end of a context: a running coroutine's goes on in its
	 * resumer's.
	 */

	if (!eeAddr || !READ(tPtr, eeAddr, ee) || ee.corPtr == NULL
		|| !READ(tPtr, ee.corPtr, cor)
		|| (uintptr_t) cor.eePtr != eeAddr
		|| ((uintptr_t) cor.caller.framePtr == ctxFp
		    && (uintptr_t) cor.caller.cmdFramePtr == ctxCf)
		|| ++hops > 64) {
	    break;
	}
	callIdx = -1;
	resumed = 1;
	fpAddr = (uintptr_t) cor.caller.framePtr;
	cfAddr = (uintptr_t) cor.caller.cmdFramePtr;
	eeAddr = (uintptr_t) cor.callerEEPtr;
    }
  done:

    /*
     * Line and place of each: a proc frame at the line of the outermost
     * command its level invokes, after the trampoline of that level (or
     * of the level a trampoline runs); a command after its level's
     * trampoline.
     */

    for (i = 0; i < numFrames; i++) {
	RFrame *rPtr = &frames[i];

	if (rPtr->kind == RF_PROC) {
	    if (rPtr->bodyCf) {
		CmdFrame c;

		if (READ(tPtr, rPtr->bodyCf, c)) {
		    TFrame where;

		    memset(&where, 0, sizeof(where));
		    BcLine(tPtr, &in, (uintptr_t) c.data.tebc.codePtr,
			    (uintptr_t) c.data.tebc.pc, &where, NULL, NULL, NULL);
		    SetFile(&rPtr->t, where.file, where.line);
		    if (where.file) {
			Tcl_DecrRefCount(where.file);
		    }
		}
		rPtr->t.after = OwnerOf(owners, numOwners, rPtr->bodyCf);
	    }
	    if (rPtr->t.after < 0) {
		/* The running level: the TEBCdata a trampoline runs. */
		for (j = 0; j < numOwners; j++) {
		    RemoteTEBCdata td;

		    if (READ(tPtr, owners[j].td, td)
			    && (uintptr_t) td.cmdFrame.framePtr
				== rPtr->frameAddr
			    && owners[j].nat > rPtr->t.after) {
			int k;

			for (k = 0; k < numTramps && tramps[k] != owners[j].nat;
				k++) {
			}
			if (k < numTramps) {
			    rPtr->t.after = owners[j].nat;
			}
		    }
		}
	    }
	} else if (rPtr->cfAddr && rPtr->kind != RF_EVAL) {
	    rPtr->t.after = OwnerOf(owners, numOwners, rPtr->cfAddr);
	}
    }

    /*
     * Outer first into the thread's list: "after" is converted to an
     * outer->inner native index; a script's eval frame goes just before
     * the next trampoline of the interp (the one that runs the command
     * it is at); unplaced frames go with the frame outside them, and
     * nothing moves outward.
     */

    prevTramp = -1;		/* Outer->inner index of the trampoline
				 * the last frame is in. */
    for (i = numFrames - 1; i >= 0; i--) {
	TFrame *fPtr = &frames[i].t;
	int prev = sPtr->numTcl ? sPtr->tcl[sPtr->numTcl - 1].after : -1;

	if (fPtr->after >= 0) {
	    fPtr->after = sPtr->numNative - 1 - fPtr->after;
	    prevTramp = fPtr->after;
	} else if (frames[i].kind == RF_SCRIPT || frames[i].kind == RF_EVAL) {
	    /*
	     * A script's frame goes before the trampoline that runs its
	     * command; the command's (RF_EVAL) in it.
	     */

	    /*
	     * (The command of a script's frame just outside runs in the
	     * trampoline that frame was placed before.)
	     */

	    int same = frames[i].kind == RF_EVAL && i + 1 < numFrames
		    && frames[i + 1].kind == RF_SCRIPT;

	    for (j = 0; j < numTramps; j++) {
		int k = sPtr->numNative - 1 - tramps[j];

		if (k > prevTramp || (same && k == prevTramp)) {
		    fPtr->after = (frames[i].kind == RF_SCRIPT) ? k - 1 : k;
		    prevTramp = k;
		    break;
		}
	    }
	}
	if (fPtr->after < 0 && prev < 0) {
	    /* Innermost trampoline of the interp, else the innermost. */
	    fPtr->after = numTramps ? sPtr->numNative - 1 - tramps[numTramps - 1]
		    : sPtr->numNative - 1;
	    sPtr->unplaced++;
	} else if (fPtr->after < prev) {
	    fPtr->after = prev;
	    sPtr->unplaced++;
	}
	if (sPtr->numTcl < MAX_TCL) {
	    fPtr->interp = pathObj;
	    Tcl_IncrRefCount(pathObj);
	    sPtr->tcl[sPtr->numTcl++] = *fPtr;
	} else {
	    Tcl_DecrRefCount(fPtr->name);
	    if (fPtr->file) {
		Tcl_DecrRefCount(fPtr->file);
	    }
	}
    }
    ckfree(frames);
}

#endif /* CPROF_RM_SUPPORTED */
