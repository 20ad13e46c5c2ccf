/*
 * remotenative.c --
 *
 *	Attach layer (see remote.c): the native frames of the stopped
 *	threads (or a core's), unwound by elfutils' libdwfl with the
 *	trampolines' registers; the names of C functions; the stacks of
 *	all threads with their Tcl frames spliced in, as Tcl lists.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "remoteInt.h"

#ifdef CPROF_RM_SUPPORTED

/*
 *----------------------------------------------------------------------
 *
 * UnwindThread --
 *
 *	Native frames of one thread, with the trampolines' registers.
 *
 *----------------------------------------------------------------------
 */

static int
FrameCb(
    Dwfl_Frame *frame,
    void *arg)
{
    StackBox *boxPtr = arg;
    ThreadStack *sPtr = &boxPtr->s;
    Target *tPtr = boxPtr->tPtr;
    NFrame *fPtr;
    Dwarf_Addr pc;
    bool act;
    Dwarf_Word v;

    if (sPtr->numNative >= MAX_NATIVE || !dwfl_frame_pc(frame, &pc, &act)) {
	return DWARF_CB_ABORT;
    }
    fPtr = &sPtr->native[sPtr->numNative++];
    memset(fPtr, 0, sizeof(*fPtr));
    fPtr->pc = pc;
    fPtr->activation = act;
    if (dwfl_frame_reg(frame, DW_SP, &v) == 0) {
	fPtr->sp = v;
    }
    if (!act) {
	pc--;
    }
    if (pc >= tPtr->trampStart && pc < tPtr->trampEnd) {
	fPtr->isTramp = 1;
	if (dwfl_frame_reg(frame, DW_TRAMP_RUNNING, &v) == 0) {
	    fPtr->tRunning = v;
	}
	if (dwfl_frame_reg(frame, DW_TRAMP_ROOT, &v) == 0) {
	    fPtr->tRoot = v;
	}
	if (dwfl_frame_reg(frame, DW_TRAMP_INTERP, &v) == 0) {
	    fPtr->tInterp = v;
	}
    }
    return DWARF_CB_OK;
}



/*
 *----------------------------------------------------------------------
 *
 * NativeName --
 *
 *	The name of a native frame's function ("symbol", else
 *	"module+0xoffset") and its module's file name.
 *
 *----------------------------------------------------------------------
 */

/*
 * The names of a session's addresses (pc -> {name module}), so that each
 * sample names only the addresses it has not seen. NULL outside one.
 */

MODULE_SCOPE Tcl_HashTable *cprofRmNameCache;
Tcl_HashTable *cprofRmNameCache = NULL;

static void NativeNameUncached(Dwfl *dwfl, NFrame *nPtr, Tcl_Obj **namePtr,
			    Tcl_Obj **modPtr);

static void
NativeName(
    Dwfl *dwfl,
    NFrame *nPtr,
    Tcl_Obj **namePtr,
    Tcl_Obj **modPtr)
{
    Tcl_HashEntry *hPtr;
    Tcl_Obj **pair;
    int isNew;

    if (cprofRmNameCache == NULL) {
	NativeNameUncached(dwfl, nPtr, namePtr, modPtr);
	return;
    }
    hPtr = Tcl_CreateHashEntry(cprofRmNameCache, (char *) (nPtr->pc
	    - (nPtr->activation ? 0 : 1)), &isNew);
    if (isNew) {
	pair = (Tcl_Obj **) ckalloc(2 * sizeof(Tcl_Obj *));
	NativeNameUncached(dwfl, nPtr, &pair[0], &pair[1]);
	Tcl_IncrRefCount(pair[0]);
	Tcl_IncrRefCount(pair[1]);
	Tcl_SetHashValue(hPtr, pair);
    }
    pair = (Tcl_Obj **) Tcl_GetHashValue(hPtr);
    *namePtr = pair[0];
    *modPtr = pair[1];
}

void
CprofRmClearNameCache(void)
{
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    if (cprofRmNameCache == NULL) {
	return;
    }
    for (hPtr = Tcl_FirstHashEntry(cprofRmNameCache, &search); hPtr;
	    hPtr = Tcl_NextHashEntry(&search)) {
	Tcl_Obj **pair = (Tcl_Obj **) Tcl_GetHashValue(hPtr);

	Tcl_DecrRefCount(pair[0]);
	Tcl_DecrRefCount(pair[1]);
	ckfree(pair);
    }
    Tcl_DeleteHashTable(cprofRmNameCache);
    ckfree(cprofRmNameCache);
    cprofRmNameCache = NULL;
}

static void
NativeNameUncached(
    Dwfl *dwfl,
    NFrame *nPtr,
    Tcl_Obj **namePtr,
    Tcl_Obj **modPtr)
{
    Dwarf_Addr pc = nPtr->pc - (nPtr->activation ? 0 : 1);
    Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
    const char *modName = NULL, *sym = NULL, *slash;
    Dwarf_Addr start = 0;
    GElf_Off off = 0;
    GElf_Sym s;

    if (mod) {
	modName = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL,
		NULL);
	sym = dwfl_module_addrinfo(mod, pc, &off, &s, NULL, NULL, NULL);
	if (sym && s.st_size && off >= s.st_size) {
	    sym = NULL;		/* A stripped static function. */
	}
    }
    slash = modName ? strrchr(modName, '/') : NULL;
    if (slash) {
	modName = slash + 1;
    }
    *modPtr = Tcl_NewStringObj(modName ? modName : "[unknown]", -1);
    if (sym) {
	*namePtr = Tcl_NewStringObj(sym, -1);
	return;
    }
    if (mod) {
	/*
	 * A stripped function: named after its start from the unwind
	 * tables, "module!fn_0x<start>", as symbolize.c names it in
	 * profiles made in the process.
	 */

	Dwarf_Addr bias;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &bias);
	Dwarf_Frame *frame = NULL;
	Dwarf_Addr fstart, fend;

	if (cfi && dwarf_cfi_addrframe(cfi, pc - bias, &frame) == 0
		&& dwarf_frame_info(frame, &fstart, &fend, NULL) >= 0) {
	    *namePtr = Tcl_ObjPrintf("%s!fn_0x%llx", modName,
		    (unsigned long long) fstart);
	    free(frame);
	    return;
	}
	free(frame);
    }
    if (modName) {
	*namePtr = Tcl_ObjPrintf("%s+0x%lx", modName,
		(unsigned long) (pc - start));
    } else {
	*namePtr = Tcl_ObjPrintf("0x%lx", (unsigned long) pc);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * StackObj --
 *
 *	A thread's mixed stack as a Tcl list, outermost frame first: each
 *	frame a dict {kind c name N module M} or {kind tcl name N ?file F
 *	line L?}.
 *
 *----------------------------------------------------------------------
 */

static Tcl_Obj *
StackObj(
    Dwfl *dwfl,
    ThreadStack *sPtr)
{
    Tcl_Obj *listObj = Tcl_NewObj();
    int i, k, t;

    for (k = 0; k < sPtr->numNative; k++) {
	NFrame *nPtr = &sPtr->native[sPtr->numNative - 1 - k];
	Tcl_Obj *f = Tcl_NewObj(), *name, *mod;

	NativeName(dwfl, nPtr, &name, &mod);
	Tcl_ListObjAppendElement(NULL, f, Tcl_NewStringObj("kind", -1));
	Tcl_ListObjAppendElement(NULL, f, Tcl_NewStringObj("c", -1));
	Tcl_ListObjAppendElement(NULL, f, Tcl_NewStringObj("name", -1));
	Tcl_ListObjAppendElement(NULL, f, name);
	Tcl_ListObjAppendElement(NULL, f, Tcl_NewStringObj("module", -1));
	Tcl_ListObjAppendElement(NULL, f, mod);
	Tcl_ListObjAppendElement(NULL, listObj, f);

	/*
	 * The Tcl frames placed after this one, in order of their place
	 * (interps of one thread were read one after the other).
	 */

	for (t = 0; t < sPtr->numTcl; t++) {
	    TFrame *tf = &sPtr->tcl[t];

	    if (tf->after != k) {
		continue;
	    }
	    f = Tcl_NewObj();
	    Tcl_ListObjAppendElement(NULL, f, Tcl_NewStringObj("kind", -1));
	    Tcl_ListObjAppendElement(NULL, f, Tcl_NewStringObj("tcl", -1));
	    Tcl_ListObjAppendElement(NULL, f, Tcl_NewStringObj("name", -1));
	    Tcl_ListObjAppendElement(NULL, f, tf->name);
	    Tcl_ListObjAppendElement(NULL, f, Tcl_NewStringObj("tclkind", -1));
	    Tcl_ListObjAppendElement(NULL, f, Tcl_NewStringObj(
		    tf->tclkind ? tf->tclkind : "proc", -1));
	    if (tf->interp) {
		Tcl_Size len = 0;

		Tcl_ListObjLength(NULL, tf->interp, &len);
		if (len > 0) {
		    Tcl_ListObjAppendElement(NULL, f,
			    Tcl_NewStringObj("interp", -1));
		    Tcl_ListObjAppendElement(NULL, f, tf->interp);
		}
	    }
	    if (tf->file) {
		Tcl_ListObjAppendElement(NULL, f,
			Tcl_NewStringObj("file", -1));
		Tcl_ListObjAppendElement(NULL, f, tf->file);
	    }
	    if (tf->line > 0) {
		Tcl_ListObjAppendElement(NULL, f,
			Tcl_NewStringObj("line", -1));
		Tcl_ListObjAppendElement(NULL, f, Tcl_NewIntObj(tf->line));
	    }
	    Tcl_ListObjAppendElement(NULL, listObj, f);
	}
    }
    for (i = 0; i < sPtr->numTcl; i++) {
	Tcl_DecrRefCount(sPtr->tcl[i].name);
	if (sPtr->tcl[i].file) {
	    Tcl_DecrRefCount(sPtr->tcl[i].file);
	}
	if (sPtr->tcl[i].interp) {
	    Tcl_DecrRefCount(sPtr->tcl[i].interp);
	}
    }
    sPtr->numTcl = 0;
    return listObj;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofRmReadThreads --
 *
 *	With the target stopped (or a core): the native and Tcl frames of
 *	every thread, into stacks (numTids of them).
 *
 *----------------------------------------------------------------------
 */

static int
ThreadCb(
    Dwfl_Thread *thread,
    void *arg)
{
    StackBox **boxesPtr = arg;
    Target *tPtr = boxesPtr[0]->tPtr;
    pid_t tid = dwfl_thread_tid(thread);
    int i;

    for (i = 0; i < tPtr->numTids; i++) {
	if (tPtr->tids[i] == tid) {
	    boxesPtr[i]->s.tid = tid;
	    boxesPtr[i]->s.numNative = 0;
	    dwfl_thread_getframes(thread, FrameCb, boxesPtr[i]);
	    break;
	}
    }
    return DWARF_CB_OK;
}

void
CprofRmReadThreads(
    Target *tPtr,
    StackBox **boxes)
{
    int i, j;

    dwfl_getthreads(tPtr->dwfl, ThreadCb, boxes);
    CprofRmThreadOwners(tPtr);
    for (i = 0; i < tPtr->numTids; i++) {
	ThreadStack *sPtr = &boxes[i]->s;

	sPtr->tid = tPtr->tids[i];
	for (j = 0; j < tPtr->numInterps; j++) {
	    Tcl_ThreadId owner;

	    if (READ(tPtr, tPtr->interps[j] + offsetof(Interp, threadId),
		    owner) && (uintptr_t) owner == tPtr->fsBase[i]
		    && tPtr->fsBase[i] != 0) {
		Tcl_Obj *pathObj = CprofRmInterpPath(tPtr, tPtr->interps[j]);

		Tcl_IncrRefCount(pathObj);
		if (sPtr->interps == NULL) {
		    sPtr->interps = Tcl_NewObj();
		    Tcl_IncrRefCount(sPtr->interps);
		}
		Tcl_ListObjAppendElement(NULL, sPtr->interps, pathObj);
		CprofRmReadInterpFrames(tPtr, tPtr->interps[j], sPtr, pathObj);
		Tcl_DecrRefCount(pathObj);
	    }
	}
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CprofRmResultObj --
 *
 *	{pause us interps N threads {{tid T unplaced U thread tid0x...
 *	interps {path ...} frames {...}} ...}}
 *
 *----------------------------------------------------------------------
 */

Tcl_Obj *
CprofRmResultObj(
    Target *tPtr,
    StackBox **boxes,
    double pauseUs)
{
    Tcl_Obj *res = Tcl_NewObj(), *threads = Tcl_NewObj();
    int i;

    for (i = 0; i < tPtr->numTids; i++) {
	ThreadStack *sPtr = &boxes[i]->s;
	Tcl_Obj *t = Tcl_NewObj();

	Tcl_ListObjAppendElement(NULL, t, Tcl_NewStringObj("tid", -1));
	Tcl_ListObjAppendElement(NULL, t, Tcl_NewIntObj(sPtr->tid));
	Tcl_ListObjAppendElement(NULL, t, Tcl_NewStringObj("unplaced", -1));
	Tcl_ListObjAppendElement(NULL, t, Tcl_NewIntObj(sPtr->unplaced));
	Tcl_ListObjAppendElement(NULL, t, Tcl_NewStringObj("thread", -1));
	Tcl_ListObjAppendElement(NULL, t, tPtr->fsBase[i]
		? Tcl_ObjPrintf("tid0x%lx", (unsigned long) tPtr->fsBase[i])
		: Tcl_NewObj());
	Tcl_ListObjAppendElement(NULL, t, Tcl_NewStringObj("interps", -1));
	Tcl_ListObjAppendElement(NULL, t, sPtr->interps ? sPtr->interps
		: Tcl_NewObj());
	Tcl_ListObjAppendElement(NULL, t, Tcl_NewStringObj("frames", -1));
	Tcl_ListObjAppendElement(NULL, t, StackObj(tPtr->dwfl, sPtr));
	Tcl_ListObjAppendElement(NULL, threads, t);
    }
    Tcl_ListObjAppendElement(NULL, res, Tcl_NewStringObj("pause", -1));
    Tcl_ListObjAppendElement(NULL, res, Tcl_NewDoubleObj(pauseUs));
    Tcl_ListObjAppendElement(NULL, res, Tcl_NewStringObj("interps", -1));
    Tcl_ListObjAppendElement(NULL, res, Tcl_NewIntObj(tPtr->numInterps));
    Tcl_ListObjAppendElement(NULL, res, Tcl_NewStringObj("threads", -1));
    Tcl_ListObjAppendElement(NULL, res, threads);
    return res;
}

StackBox **
CprofRmNewBoxes(
    Target *tPtr)
{
    StackBox **boxes = (StackBox **) ckalloc(MAX_THREADS * sizeof(StackBox *));
    int i;

    for (i = 0; i < MAX_THREADS; i++) {
	boxes[i] = (StackBox *) ckalloc(sizeof(StackBox));
	boxes[i]->tPtr = tPtr;
	boxes[i]->s.numNative = 0;
	boxes[i]->s.numTcl = 0;
	boxes[i]->s.unplaced = 0;
	boxes[i]->s.tid = 0;
	boxes[i]->s.interps = NULL;
    }
    return boxes;
}

void
CprofRmFreeBoxes(
    StackBox **boxes)
{
    int i;

    for (i = 0; i < MAX_THREADS; i++) {
	if (boxes[i]->s.interps) {
	    Tcl_DecrRefCount(boxes[i]->s.interps);
	}
	ckfree(boxes[i]);
    }
    ckfree(boxes);
}

#endif /* CPROF_RM_SUPPORTED */
