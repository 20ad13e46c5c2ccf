/*
 * cmddebug.c --
 *
 *	tclcprof::debug: introspection and test hooks (splice and aggregate
 *	synthetic stacks, the stack pointers the unwinder sees, interned
 *	names, limits of the store and the spool).
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "cmdInt.h"
#include "captureframes.h"
#include <string.h>

/*
 *----------------------------------------------------------------------
 *
 * CprofDebugObjCmd --
 *
 *	tclcprof::debug aggregate stacks
 *	tclcprof::debug cfas
 *	tclcprof::debug dbbusy ms
 *	tclcprof::debug dblimit pages
 *	tclcprof::debug frames
 *	tclcprof::debug memstacks max
 *	tclcprof::debug memwalk check
 *	tclcprof::debug names ?pattern?
 *	tclcprof::debug splice native tcl trampoline
 *	tclcprof::debug spoollimit bytes
 *	tclcprof::debug trampolines
 *
 *	Introspection and test hooks: aggregate synthetic stacks into a
 *	fresh call tree; the frame stack pointers the sampler's unwinder
 *	(libgcc) sees from here; the number of names in the name table
 *	(with a pattern, those that match it, aliases left out); splice
 *	synthetic native and Tcl frames; the stack pointers of the
 *	trampoline frames on the native stack as libunwind finds them.
 *
 *----------------------------------------------------------------------
 */

static int
DebugSplice(
    Tcl_Interp *interp,
    Tcl_Obj *nativeObj,
    Tcl_Obj *tclObj,
    Tcl_Obj *trampObj)
{
    uintptr_t ip[CPROF_NATIVE_MAX], cfa[CPROF_NATIVE_MAX];
    CprofTclRef tcl[CPROF_TCL_MAX];
    CprofSpliceEntry out[CPROF_NATIVE_MAX + CPROF_TCL_MAX];
    Tcl_Obj **nv, **tv, **ev, *nativeLabels, *tclLabels, *resultObj;
    int i, n, unmatched;
    Tcl_Size nn, nt, ne;
    Tcl_WideInt w[3];

    if (Tcl_ListObjGetElements(interp, nativeObj, &nn, &nv) != TCL_OK
	    || Tcl_ListObjGetElements(interp, tclObj, &nt, &tv) != TCL_OK
	    || Tcl_ListObjGetElements(interp, trampObj, &ne, &ev) != TCL_OK) {
	goto bad;
    }
    if (nn > CPROF_NATIVE_MAX || nt > CPROF_TCL_MAX || ne != 2
	    || Tcl_GetWideIntFromObj(NULL, ev[0], &w[0]) != TCL_OK
	    || Tcl_GetWideIntFromObj(NULL, ev[1], &w[1]) != TCL_OK) {
	goto bad;
    }
    nativeLabels = Tcl_NewListObj(0, NULL);
    tclLabels = Tcl_NewListObj(0, NULL);
    Tcl_IncrRefCount(nativeLabels);
    Tcl_IncrRefCount(tclLabels);
    for (i = 0; i < nn; i++) {
	Tcl_Obj **fv;
	Tcl_Size fc;

	if (Tcl_ListObjGetElements(NULL, nv[i], &fc, &fv) != TCL_OK
		|| fc != 3 || Tcl_GetWideIntFromObj(NULL, fv[1], &w[2])
		!= TCL_OK) {
	    goto badFree;
	}
	ip[i] = (uintptr_t) w[2];
	if (Tcl_GetWideIntFromObj(NULL, fv[2], &w[2]) != TCL_OK) {
	    goto badFree;
	}
	cfa[i] = (uintptr_t) w[2];
	Tcl_ListObjAppendElement(NULL, nativeLabels, fv[0]);
    }
    for (i = 0; i < nt; i++) {
	Tcl_Obj **fv;
	Tcl_Size fc;

	if (Tcl_ListObjGetElements(NULL, tv[i], &fc, &fv) != TCL_OK
		|| fc != 2 || Tcl_GetWideIntFromObj(NULL, fv[1], &w[2])
		!= TCL_OK) {
	    goto badFree;
	}
	memset(&tcl[i], 0, sizeof(CprofTclRef));
	tcl[i].anchor = (uintptr_t) w[2];
	Tcl_ListObjAppendElement(NULL, tclLabels, fv[0]);
    }
    n = CprofSplice(ip, cfa, nn, tcl, nt, (uintptr_t) w[0], (uintptr_t) w[1],
	    out, &unmatched, NULL);
    resultObj = Tcl_NewListObj(0, NULL);
    for (i = 0; i < n; i++) {
	Tcl_Obj *labelObj;

	Tcl_ListObjIndex(NULL, out[i].isTcl ? tclLabels : nativeLabels,
		out[i].index, &labelObj);
	Tcl_ListObjAppendElement(NULL, resultObj, labelObj);
    }
    Tcl_DecrRefCount(nativeLabels);
    Tcl_DecrRefCount(tclLabels);
    Tcl_SetObjResult(interp, Tcl_NewListObj(0, NULL));
    Tcl_ListObjAppendElement(NULL, Tcl_GetObjResult(interp), resultObj);
    Tcl_ListObjAppendElement(NULL, Tcl_GetObjResult(interp),
	    Tcl_NewIntObj(unmatched));
    return TCL_OK;

  badFree:
    Tcl_DecrRefCount(nativeLabels);
    Tcl_DecrRefCount(tclLabels);
  bad:
    Tcl_SetObjResult(interp, Tcl_NewStringObj("bad splice input: expected "
	    "native {{label ip cfa} ...} tcl {{label anchor} ...} "
	    "trampoline {start end}", -1));
    Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", "splice", NULL);
    return TCL_ERROR;
}

static int
DebugAggregate(
    Tcl_Interp *interp,
    Tcl_Obj *stacksObj)
{
    CprofTree tree;
    Tcl_Obj **sv;
    int i;
    Tcl_Size ns;
    Tcl_WideInt sum = 0;	/* The root's total: no node has more. */

    if (Tcl_ListObjGetElements(interp, stacksObj, &ns, &sv) != TCL_OK) {
	goto bad;
    }
    CprofTreeInit(&tree);
    for (i = 0; i < ns; i++) {
	Tcl_Obj **pv, **fv;
	int j, frames[CPROF_NATIVE_MAX + CPROF_TCL_MAX];
	Tcl_Size pc, fc;
	Tcl_WideInt weight;

	if (Tcl_ListObjGetElements(NULL, sv[i], &pc, &pv) != TCL_OK
		|| pc != 2 || Tcl_GetWideIntFromObj(NULL, pv[0], &weight)
		!= TCL_OK || weight < 0 || Tcl_ListObjGetElements(NULL, pv[1],
		&fc, &fv) != TCL_OK || fc > CPROF_NATIVE_MAX + CPROF_TCL_MAX) {
	    CprofTreeFree(&tree);
	    goto bad;
	}
	if (weight > INT64_MAX - sum) {
	    /*
	     * Weights are shown as signed 64-bit integers.
	     */

	    CprofTreeFree(&tree);
	    Tcl_SetObjResult(interp, Tcl_NewStringObj("bad stacks: the "
		    "weights add up to more than 9223372036854775807", -1));
	    Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", "aggregate", NULL);
	    return TCL_ERROR;
	}
	sum += weight;
	for (j = 0; j < fc; j++) {
	    Tcl_Obj **kv;
	    int isC;
	    Tcl_Size kc;
	    const char *kind, *name;

	    if (Tcl_ListObjGetElements(NULL, fv[j], &kc, &kv) != TCL_OK
		    || kc != 2) {
		CprofTreeFree(&tree);
		goto bad;
	    }
	    kind = Tcl_GetString(kv[0]);
	    name = Tcl_GetString(kv[1]);
	    if (strcmp(kind, "c") == 0) {
		isC = 1;
	    } else if (strcmp(kind, "tcl") == 0) {
		isC = 0;
	    } else {
		CprofTreeFree(&tree);
		goto bad;
	    }
	    frames[j] = CprofTreeFrame(&tree, isC, CprofNameIntern(name, -1),
		    -1, isC ? -1 : CPROF_KIND_PROC, -1);
	}
	CprofTreeAdd(&tree, frames, NULL, fc, 1, (uint64_t) weight);
    }
    Tcl_SetObjResult(interp, CprofTreeToObj(&tree, NULL));
    CprofTreeFree(&tree);
    return TCL_OK;

  bad:
    Tcl_SetObjResult(interp, Tcl_NewStringObj("bad stacks: expected "
	    "{{weight {{tcl|c name} ...}} ...}", -1));
    Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", "aggregate", NULL);
    return TCL_ERROR;
}

/*
 * tclcprof::debug frames: Tcl's frames read here as the signal handler of
 * -capture frames reads them (captureframes.c), named as the drain names them,
 * outermost first ("name/kind"), all of them (a sample keeps the innermost
 * CPROF_TCL_MAX: CprofFramesStack reads again with more room), without
 * this command's own frame; and what the read and the naming counted.
 */

static int
DebugFrames(
    Tcl_Interp *interp,
    CprofState *statePtr)
{
    CprofFrames *fPtr = statePtr->framesPtr;
    CprofTclRef *named;
    CprofFramesCounters before, after;
    Tcl_Obj *listObj = Tcl_NewObj(), *resultObj = Tcl_NewDictObj();
    int n, i, own = (fPtr == NULL);

    if (own) {
	fPtr = CprofFramesNew(interp, &statePtr->naming);
    }
    CprofFramesCounts(fPtr, &before);
    n = CprofFramesStack(fPtr, &named);
    CprofFramesCounts(fPtr, &after);
    if (n > 0) {
	const char *last = CprofNameString(named[n - 1].nameId);

	if (last != NULL && (strcmp(last, "tclcprof::debug") == 0
		|| strcmp(last, "::tclcprof::debug") == 0)) {
	    n--;
	}
    }
    for (i = 0; i < n; i++) {
	const char *name = CprofNameString(named[i].nameId);

	Tcl_ListObjAppendElement(NULL, listObj, Tcl_ObjPrintf("%s/%s",
		name ? name : "?", CprofKindName(named[i].kind)));
    }
#define FRAMES_PUT(k, v) Tcl_DictObjPut(NULL, resultObj, \
	Tcl_NewStringObj((k), -1), (v))
    FRAMES_PUT("stack", listObj);
    FRAMES_PUT("torn_proc", Tcl_NewWideIntObj(
	    (Tcl_WideInt) (after.tornProc - before.tornProc)));
    FRAMES_PUT("torn_coroutine", Tcl_NewWideIntObj(
	    (Tcl_WideInt) (after.tornCoro - before.tornCoro)));
    FRAMES_PUT("stale", Tcl_NewWideIntObj(
	    (Tcl_WideInt) (after.stale - before.stale)));
    FRAMES_PUT("unnamed", Tcl_NewWideIntObj(
	    (Tcl_WideInt) (after.unnamed - before.unnamed)));
#undef FRAMES_PUT
    ckfree(named);
    if (own) {
	CprofFramesFree(fPtr);
    }
    Tcl_SetObjResult(interp, resultObj);
    return TCL_OK;
}

int
CprofDebugObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    static const char *const subNames[] = {
	"aggregate", "cfas", "checks", "dbbusy", "dblimit", "dwarf", "frames",
	"memstacks", "memwalk", "names", "safecopy", "samplewalk", "splice",
	"spoollimit", "symbol",
	"symbols", "trampolines", "unspliced", "walkat", NULL
    };
    enum {
	SUB_AGGREGATE, SUB_CFAS, SUB_CHECKS, SUB_DBBUSY, SUB_DBLIMIT,
	SUB_DWARF, SUB_FRAMES, SUB_MEMSTACKS, SUB_MEMWALK, SUB_NAMES, SUB_SAFECOPY,
	SUB_SAMPLEWALK,
	SUB_SPLICE, SUB_SPOOLLIMIT, SUB_SYMBOL, SUB_SYMBOLS, SUB_TRAMPOLINES,
	SUB_UNSPLICED, SUB_WALKAT
    };
    static const int arity[] = {3, 2, 2, 3, 3, 2, 2, 3, 3, 2, 2, 3, 5, 3, 3,
	3, 2, 2, 3};
    static const char *const usage[] = {
	"aggregate stacks", "cfas", "checks", "dbbusy ms", "dblimit pages",
	"dwarf", "frames", "memstacks max", "memwalk check", "names ?pattern?",
	"safecopy ?none|process_vm_readv|pipe|probe?",
	"samplewalk check", "splice native tcl trampoline",
	"spoollimit bytes",
	"symbol address", "symbols addresses", "trampolines", "unspliced",
	"walkat address"
    };
    CprofState *statePtr = &((CprofInterp *) clientData)->state;
    int index;

    if (objc < 2) {
	CprofWrongArgs(interp, 1, objv, "subcommand ?arg ...?");
	return TCL_ERROR;
    }
    if (Tcl_GetIndexFromObj(interp, objv[1], subNames, "subcommand", 0,
	    &index) != TCL_OK) {
	Tcl_SetErrorCode(interp, "TCLCPROF", "SUBCOMMAND",
		Tcl_GetString(objv[1]), NULL);
	return TCL_ERROR;
    }
    if (objc != arity[index] && !((index == SUB_NAMES
	    || index == SUB_SAFECOPY) && objc == 3)) {
	CprofWrongArgs(interp, 1, objv, usage[index]);
	return TCL_ERROR;
    }
    switch (index) {
    case SUB_AGGREGATE:
	return DebugAggregate(interp, objv[2]);
    case SUB_DWARF:
	/*
	 * How many modules' DWARF this process has opened (for C lines:
	 * runs with -lines 1 only).
	 */

	Tcl_SetObjResult(interp, Tcl_NewIntObj(CprofSymFileDwarfOpened()));
	return TCL_OK;
    case SUB_SYMBOL: {
	/*
	 * The name a sample's native frame at this address gets.
	 */

	Tcl_WideInt addr;
	CprofSymbolizer *symPtr = statePtr->symPtr;
	CprofSymInfo info;
	const char *name;

	if (Tcl_GetWideIntFromObj(NULL, objv[2], &addr) != TCL_OK
		|| addr <= 0) {
	    Tcl_SetObjResult(interp, Tcl_ObjPrintf(
		    "bad address \"%s\": expected a positive integer",
		    Tcl_GetString(objv[2])));
	    Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", "symbol",
		    Tcl_GetString(objv[2]), NULL);
	    return TCL_ERROR;
	}
	if (symPtr == NULL) {
	    symPtr = CprofSymNew();
	}
	CprofSymRefresh(symPtr);
	CprofSymResolve(symPtr, (uintptr_t) addr, &info);
	name = CprofNameString(info.nameId);
	Tcl_SetObjResult(interp, Tcl_NewStringObj(name ? name : "", -1));
	if (symPtr != statePtr->symPtr) {
	    CprofSymFree(symPtr);
	}
	return TCL_OK;
    }
    case SUB_SYMBOLS:
	return CprofSymDebug(interp, objv[2]);
    case SUB_WALKAT: {
	/*
	 * The signal handler's walk as if interrupted at the entry of the
	 * code at 'address' called from here (x86-64, during a run): the
	 * names of its frames, innermost first; an error if the walk gives
	 * up. For code without call frame information: commands' thunks.
	 */

	Tcl_WideInt addr;
	uintptr_t ip[64], cfa[64];
	int n, i;
	Tcl_Obj *listObj;
	CprofSymbolizer *symPtr;

	if (Tcl_GetWideIntFromObj(NULL, objv[2], &addr) != TCL_OK
		|| addr <= 0) {
	    return CprofBadValue(interp, subNames[index], objv[2],
		    "expected a positive integer");
	}
	n = CprofCfiWalkAt((uintptr_t) addr, ip, cfa, 64);
	if (n < 0) {
	    Tcl_SetObjResult(interp, Tcl_NewStringObj(
		    "the walk gave up (no run, not x86-64, or no rule)", -1));
	    Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", "walkat", NULL);
	    return TCL_ERROR;
	}
	listObj = Tcl_NewObj();
	symPtr = statePtr->symPtr != NULL ? statePtr->symPtr : CprofSymNew();
	CprofSymRefresh(symPtr);
	for (i = 0; i < n; i++) {
	    CprofSymInfo info;
	    const char *name;

	    CprofSymResolve(symPtr, i == 0 ? ip[0] : ip[i] - 1, &info);
	    name = CprofNameString(info.nameId);
	    Tcl_ListObjAppendElement(NULL, listObj,
		    Tcl_NewStringObj(name ? name : "", -1));
	}
	if (symPtr != statePtr->symPtr) {
	    CprofSymFree(symPtr);
	}
	Tcl_SetObjResult(interp, listObj);
	return TCL_OK;
    }
    case SUB_UNSPLICED:
	/*
	 * The last samples (at most 4) whose Tcl frames the splice could
	 * not place among their native frames, since the last reset.
	 */

	Tcl_SetObjResult(interp, CprofUnsplicedLogObj(statePtr));
	return TCL_OK;
    case SUB_FRAMES:
	return DebugFrames(interp, statePtr);
    case SUB_SPLICE:
	return DebugSplice(interp, objv[2], objv[3], objv[4]);
    case SUB_NAMES:
	Tcl_SetObjResult(interp, objc == 3
		? CprofNameList(Tcl_GetString(objv[2]))
		: Tcl_NewIntObj(CprofNameCount()));
	break;
    case SUB_MEMWALK:
    case SUB_SAMPLEWALK: {
	/*
	 * The walks of sampled allocations (memwalk: hookmem.c) or of the
	 * signal handler (samplewalk: sampler.c): how many were fast
	 * (cached rules), how many libgcc's; check 1 compares each fast one
	 * with libgcc's from then on (0 stops, -1 only reads; samplewalk 2
	 * walks with libgcc's only). Rules: kept in the table (memwalk),
	 * worked out in the handler (samplewalk).
	 */

	int check;
	uint64_t counts[5];
	Tcl_Obj *dictObj = Tcl_NewDictObj();

	if (Tcl_GetIntFromObj(NULL, objv[2], &check) != TCL_OK
		|| check < -1 || check > (index == SUB_MEMWALK ? 1 : 2)) {
	    return CprofBadValue(interp, subNames[index], objv[2],
		    index == SUB_MEMWALK ? "expected -1, 0 or 1"
		    : "expected -1, 0, 1 or 2");
	}
	if (index == SUB_MEMWALK) {
	    CprofMemWalkStats(check, counts);
	} else {
	    CprofSampleWalkStats(check, counts);
	}
	PUT(dictObj, "fast", Tcl_NewWideIntObj((Tcl_WideInt) counts[0]));
	PUT(dictObj, "libgcc", Tcl_NewWideIntObj((Tcl_WideInt) counts[1]));
	PUT(dictObj, "checked", Tcl_NewWideIntObj((Tcl_WideInt) counts[2]));
	PUT(dictObj, "differ", Tcl_NewWideIntObj((Tcl_WideInt) counts[3]));
	PUT(dictObj, "rules", Tcl_NewWideIntObj((Tcl_WideInt) counts[4]));
	Tcl_SetObjResult(interp, dictObj);
	break;
    }
    case SUB_SAFECOPY: {
	/*
	 * How the frames capture's drain copies memory it has not checked
	 * (captureframes.c): the way probed, or one forced (for tests; "probe"
	 * probes again). Not while profiling runs.
	 */

	const char *force = NULL;

	if (objc == 3) {
	    static const char *const ways[] = {
		"none", "process_vm_readv", "pipe", "probe", NULL
	    };
	    int way;

	    if (Tcl_GetIndexFromObj(interp, objv[2], ways, "way", 0,
		    &way) != TCL_OK) {
		Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", "safecopy",
			Tcl_GetString(objv[2]), NULL);
		return TCL_ERROR;
	    }
	    if (statePtr->running) {
		Tcl_SetObjResult(interp, Tcl_NewStringObj(
			"cannot change the way of copying while profiling"
			" runs", -1));
		Tcl_SetErrorCode(interp, "TCLCPROF", "STATE", "RUNNING", NULL);
		return TCL_ERROR;
	    }
	    force = (way == 3) ? "unprobed" : ways[way];
	}
	Tcl_SetObjResult(interp, Tcl_NewStringObj(CprofFramesCopyName(
		CprofFramesCopyMethod(force)), -1));
	return TCL_OK;
    }
    case SUB_CHECKS: {
	/*
	 * -capture check over every run of this interpreter (the running
	 * one counts when it ends).
	 */

	Tcl_Obj *dictObj = Tcl_NewDictObj();

	PUT(dictObj, "checks",
		Tcl_NewWideIntObj((Tcl_WideInt) statePtr->allChecks));
	PUT(dictObj, "disagreements",
		Tcl_NewWideIntObj((Tcl_WideInt) statePtr->allDisagreements));
	PUT(dictObj, "first", statePtr->firstDisagreement
		? statePtr->firstDisagreement : Tcl_NewObj());
	PUT(dictObj, "frames_checks",
		Tcl_NewWideIntObj((Tcl_WideInt) statePtr->allFramesChecks));
	PUT(dictObj, "frames_disagreements", Tcl_NewWideIntObj(
		(Tcl_WideInt) statePtr->allFramesDisagreements));
	PUT(dictObj, "frames_first",
		Tcl_NewStringObj(statePtr->allFramesFirst, -1));
	Tcl_SetObjResult(interp, dictObj);
	break;
    }
    case SUB_DBBUSY:
    case SUB_DBLIMIT: {
	int n;

	if (Tcl_GetIntFromObj(NULL, objv[2], &n) != TCL_OK || n < 0) {
	    return CprofBadValue(interp, subNames[index], objv[2],
		    index == SUB_DBBUSY ? "expected a number of milliseconds"
		    : "expected a number of pages (0 for no limit)");
	}
	if (index == SUB_DBBUSY) {
	    CprofStoreSetBusyTimeout(n);
	} else {
	    CprofStoreSetPageLimit(n);
	}
	break;
    }
    case SUB_MEMSTACKS: {
	/*
	 * The shared stacks of sampled allocations (hookmem.c): how many
	 * the run has, and the most it makes before records keep their own
	 * copies (max -1 only reads).
	 */

	Tcl_WideInt max;
	uint32_t counts[2];
	Tcl_Obj *dictObj = Tcl_NewDictObj();

	if (Tcl_GetWideIntFromObj(NULL, objv[2], &max) != TCL_OK
		|| max < -1 || max > 65536) {
	    return CprofBadValue(interp, subNames[index], objv[2],
		    "expected -1 or a number of stacks up to 65536");
	}
	CprofMemStackStats((int) max, counts);
	PUT(dictObj, "stacks", Tcl_NewWideIntObj((Tcl_WideInt) counts[0]));
	PUT(dictObj, "max", Tcl_NewWideIntObj((Tcl_WideInt) counts[1]));
	Tcl_SetObjResult(interp, dictObj);
	break;
    }
    case SUB_SPOOLLIMIT: {
	Tcl_WideInt n;

	if (Tcl_GetWideIntFromObj(NULL, objv[2], &n) != TCL_OK || n < 0) {
	    return CprofBadValue(interp, subNames[index], objv[2],
		    "expected a number of bytes");
	}
	CprofSpoolSetLimit((size_t) n);
	break;
    }
    case SUB_CFAS: {
	uintptr_t ip[256], cfa[256];
	int n, i;
	Tcl_Obj *listObj = Tcl_NewListObj(0, NULL);

	n = CprofNativeWalk(ip, cfa, 256);
	for (i = 0; i < n; i++) {
	    Tcl_ListObjAppendElement(NULL, listObj,
		    Tcl_NewWideIntObj((Tcl_WideInt) cfa[i]));
	}
	Tcl_SetObjResult(interp, listObj);
	break;
    }
    case SUB_TRAMPOLINES: {
	uintptr_t sps[256], start, end;
	char msg[160];
	int n, i;
	Tcl_Obj *listObj = Tcl_NewListObj(0, NULL);

	if (statePtr->calib.trampEnd != 0) {
	    start = statePtr->calib.trampStart;
	    end = statePtr->calib.trampEnd;
	} else if (!CprofTrampolineRange(&start, &end, msg, sizeof(msg))) {
	    Tcl_SetObjResult(interp, Tcl_NewStringObj(msg, -1));
	    Tcl_SetErrorCode(interp, "TCLCPROF", "NATIVE", NULL);
	    return TCL_ERROR;
	}
	n = CprofNativeTrampolines(start, end, sps, 256);
	for (i = 0; i < n; i++) {
	    Tcl_ListObjAppendElement(NULL, listObj,
		    Tcl_NewWideIntObj((Tcl_WideInt) sps[i]));
	}
	Tcl_SetObjResult(interp, listObj);
	break;
    }
    }
    return TCL_OK;
}

