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

#if defined(__x86_64__)

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
    TFrame *fPtr)
{
    ByteCode bc;
    uintptr_t cd, cl, sd, sl;
    int i, codeOffset = 0, srcOffset = 0, delta, codeLen, srcLen;
    int bestDist = INT_MAX, bestSrc = -1, pcOffset;
    Tcl_HashTable table;
    Tcl_HashEntry *hPtr, entry;
    ExtCmdLoc ecl;

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
	}
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
    Command cmd;
    Namespace ns;
    Tcl_Obj *nameObj = NULL, *nsObj;
    Tcl_Obj *objv0;

    if (cfPtr->procPtr && READ(tPtr, cfPtr->procPtr, proc) && proc.cmdPtr
	    && (cfPtr->isProcCallFrame & FRAME_IS_PROC)
	    && READ(tPtr, proc.cmdPtr, cmd) && cmd.hPtr && cmd.nsPtr
	    && READ(tPtr, cmd.nsPtr, ns)) {
	Tcl_Obj *keyObj = CprofRmReadString(tPtr, (uintptr_t) cmd.hPtr
		+ offsetof(Tcl_HashEntry, key), 512);

	nsObj = CprofRmReadString(tPtr, (uintptr_t) ns.fullName, 512);
	if (keyObj && nsObj) {
	    nameObj = nsObj;
	    if (strcmp(Tcl_GetString(nsObj), "::") != 0) {
		Tcl_AppendToObj(nameObj, "::", 2);
	    }
	    Tcl_AppendObjToObj(nameObj, keyObj);
	    Tcl_DecrRefCount(keyObj);
	    return nameObj;
	}
	if (keyObj) {
	    Tcl_DecrRefCount(keyObj);
	}
	if (nsObj) {
	    Tcl_DecrRefCount(nsObj);
	}
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
 * CprofRmReadInterpFrames --
 *
 *	Append the Tcl frames of interp inAddr to the thread's stack,
 *	placed after their trampolines.
 */

#define MAX_TD 1024

void
CprofRmReadInterpFrames(
    Target *tPtr,
    uintptr_t inAddr,
    ThreadStack *sPtr)
{
    Interp in;
    ExecEnv ee;
    CoroutineData cor;
    uintptr_t eeAddr, cbAddr, cfAddr, fpAddr;
    TdOwner owners[MAX_TD];
    int numOwners = 0;
    int tramps[MAX_NATIVE], numTramps = 0, pos, i, j, steps;
    uintptr_t cmdFrames[MAX_TCL];
    int numCmdFrames = 0;
    TFrame frames[MAX_TCL];
    uintptr_t frameAddr[MAX_TCL];
    int numFrames = 0, first;

    if (!READ(tPtr, inAddr, in)) {
	return;
    }

    /*
     * Trampolines of this interp, outer to inner (native is innermost
     * first).
     */

    for (i = sPtr->numNative - 1; i >= 0; i--) {
	if (sPtr->native[i].isTramp && sPtr->native[i].r13 == inAddr) {
	    tramps[numTramps++] = i;
	}
    }

    /*
     * Pending callbacks, innermost first across the coroutines' execution
     * environments, cut at each trampoline's root callback.
     */

    pos = numTramps - 1;
    eeAddr = (uintptr_t) in.execEnvPtr;
    steps = 0;
    while (eeAddr && READ(tPtr, eeAddr, ee)) {
	NRE_callback cb;

	for (cbAddr = (uintptr_t) ee.callbackPtr; cbAddr && steps < MAX_CB;
		cbAddr = (uintptr_t) cb.nextPtr, steps++) {
	    while (pos >= 0 && cbAddr == sPtr->native[tramps[pos]].r12) {
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

	if (READ(tPtr, sPtr->native[tramps[i]].rbx, cb)) {
	    owners[numOwners].td = (uintptr_t) cb.data[0];
	    owners[numOwners].nat = tramps[i];
	    numOwners++;
	}
    }

    /*
     * CmdFrames: the interp's chain and those of the callers of running
     * coroutines.
     */

    cfAddr = (uintptr_t) in.cmdFramePtr;
    eeAddr = (uintptr_t) in.execEnvPtr;
    for (;;) {
	CmdFrame cf;

	while (cfAddr && numCmdFrames < MAX_TCL && READ(tPtr, cfAddr, cf)) {
	    for (j = 0; j < numCmdFrames && cmdFrames[j] != cfAddr; j++) {
	    }
	    if (j < numCmdFrames) {
		break;
	    }
	    cmdFrames[numCmdFrames++] = cfAddr;
	    cfAddr = (uintptr_t) cf.nextPtr;
	}
	if (!eeAddr || !READ(tPtr, eeAddr, ee) || ee.corPtr == NULL
		|| !READ(tPtr, ee.corPtr, cor)) {
	    break;
	}
	cfAddr = (uintptr_t) cor.caller.cmdFramePtr;
	eeAddr = (uintptr_t) cor.callerEEPtr;
    }

    /*
     * CallFrames, innermost first, through coroutines' callers.
     */

    fpAddr = (uintptr_t) in.framePtr;
    eeAddr = (uintptr_t) in.execEnvPtr;
    steps = 0;
    while (numFrames < MAX_TCL && steps++ < 10000) {
	CallFrame cf;

	if (fpAddr == 0 || fpAddr == (uintptr_t) in.rootFramePtr) {
	    if (!eeAddr || !READ(tPtr, eeAddr, ee) || ee.corPtr == NULL
		    || !READ(tPtr, ee.corPtr, cor)) {
		break;
	    }
	    fpAddr = (uintptr_t) cor.caller.framePtr;
	    eeAddr = (uintptr_t) cor.callerEEPtr;
	    continue;
	}
	if (!READ(tPtr, fpAddr, cf)) {
	    break;
	}
	if (cf.isProcCallFrame & (FRAME_IS_PROC | FRAME_IS_LAMBDA
		| FRAME_IS_METHOD)) {
	    TFrame *fPtr = &frames[numFrames];

	    fPtr->name = FrameName(tPtr, &cf);
	    Tcl_IncrRefCount(fPtr->name);
	    fPtr->file = NULL;
	    fPtr->line = 0;
	    fPtr->after = -1;
	    frameAddr[numFrames++] = fpAddr;
	}
	fpAddr = (uintptr_t) cf.callerPtr;
    }

    /*
     * Line (innermost CmdFrame of the frame's level) and place (the
     * outermost trampoline of a bytecode level of the frame) of each.
     */

    for (i = 0; i < numFrames; i++) {
	TFrame *fPtr = &frames[i];

	for (j = 0; j < numCmdFrames; j++) {
	    CmdFrame cf;
	    int k;

	    if (!READ(tPtr, cmdFrames[j], cf)
		    || (uintptr_t) cf.framePtr != frameAddr[i]) {
		continue;
	    }
	    /*
	     * The outermost one: the proc body's level; inner ones in the
	     * same frame are scripts it evaluates (a C command's callback).
	     */

	    if (cf.type == TCL_LOCATION_BC || cf.type == TCL_LOCATION_PREBC) {
		if (fPtr->file) {
		    Tcl_DecrRefCount(fPtr->file);
		    fPtr->file = NULL;
		}
		fPtr->line = 0;
		BcLine(tPtr, &in, (uintptr_t) cf.data.tebc.codePtr,
			(uintptr_t) cf.data.tebc.pc, fPtr);
	    }
	    for (k = 0; k < numOwners; k++) {
		if (owners[k].td == cmdFrames[j]
			- offsetof(RemoteTEBCdata, cmdFrame)) {
		    if (fPtr->after < 0 || owners[k].nat > fPtr->after) {
			/* Outermost: the highest index innermost first. */
			fPtr->after = owners[k].nat;
		    }
		}
	    }
	}
	if (fPtr->after < 0) {
	    /* The running level: the TEBCdata a trampoline runs. */
	    for (j = 0; j < numOwners; j++) {
		RemoteTEBCdata td;

		if (READ(tPtr, owners[j].td, td)
			&& (uintptr_t) td.cmdFrame.framePtr == frameAddr[i]) {
		    for (first = 0; first < numTramps; first++) {
			if (tramps[first] == owners[j].nat) {
			    break;
			}
		    }
		    if (first < numTramps && (fPtr->after < 0
			    || owners[j].nat > fPtr->after)) {
			fPtr->after = owners[j].nat;
		    }
		}
	    }
	}
    }

    /*
     * Outer first into the thread's list: "after" is converted to an
     * outer->inner native index; unplaced frames go with the frame
     * outside them, and nothing moves outward.
     */

    for (i = numFrames - 1; i >= 0; i--) {
	TFrame *fPtr = &frames[i];
	int prev = sPtr->numTcl ? sPtr->tcl[sPtr->numTcl - 1].after : -1;

	if (fPtr->after >= 0) {
	    fPtr->after = sPtr->numNative - 1 - fPtr->after;
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
	    sPtr->tcl[sPtr->numTcl++] = *fPtr;
	} else {
	    Tcl_DecrRefCount(fPtr->name);
	    if (fPtr->file) {
		Tcl_DecrRefCount(fPtr->file);
	    }
	}
    }
}

#endif /* __x86_64__ */
