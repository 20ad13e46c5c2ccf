/*
 * drainresolve.c --
 *
 *	The drain's third stage: every frame of a spliced sample resolved,
 *	in one place. A C frame gets its function's name, module and
 *	source line from the symbolizer (unix/symbolize.c); a Tcl frame,
 *	named already (by the capture, or by captureframesresolve.c for
 *	-capture frames), its line (drainlines.c); the frames the options
 *	hide (-native, -include/-exclude) go, and so do the frames that say
 *	nothing (the C library's start-up, Tcl's internals under -native
 *	user), a wait on the wall clock becoming one frame [idle]. What is
 *	left is a CprofDrainStack (drainInt.h) for the tree (draintree.c).
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _GNU_SOURCE
#   define _GNU_SOURCE
#endif
#include "drainInt.h"
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <string.h>

/*
 * Whether a module is tclcprof's own library: its frames (the trace
 * callback, a drain) are the profiler's work inside Tcl's and are shown
 * with Tcl's internals.
 */

static int
IsOwnModule(
    int moduleId)
{
    static int ownId = -2;

    if (ownId == -2) {
	Dl_info info;

	ownId = -1;
	if (dladdr((void *) CprofDrainResolve, &info) && info.dli_fname) {
	    const char *base = strrchr(info.dli_fname, '/');

	    ownId = CprofNameIntern(base ? base + 1 : info.dli_fname, -1);
	}
    }
    return moduleId >= 0 && moduleId == ownId;
}

/*
 * Module classes, cached per module name id in statePtr->moduleFlags:
 * system libraries (libc, libm, the dynamic loader, libgcc, libpthread,
 * libdl, librt, zlib, the vDSO), and among them those whose frames head
 * every stack (libc's start-up code, the loader).
 */

#define MOD_UNKNOWN	0
#define MOD_USER	1
#define MOD_SYSTEM	2
#define MOD_STARTUP	3	/* A system library that runs start-up code. */

static int
ModuleClass(
    CprofState *statePtr,
    int moduleId)
{
    static const struct {
	const char *prefix;
	int class;
    } classes[] = {
	{"libc.so", MOD_STARTUP}, {"ld-linux", MOD_STARTUP},
	{"libm.so", MOD_SYSTEM}, {"libgcc_s", MOD_SYSTEM},
	{"libpthread", MOD_SYSTEM}, {"libdl.so", MOD_SYSTEM},
	{"librt.so", MOD_SYSTEM}, {"libz.so", MOD_SYSTEM},
	{"linux-vdso", MOD_SYSTEM}, {NULL, 0}
    };
    unsigned char *flagsPtr;

    if (moduleId < 0) {
	return MOD_USER;
    }
    if (moduleId >= statePtr->numModuleFlags) {
	int n = moduleId + 64;

	statePtr->moduleFlags = (unsigned char *) ckrealloc(
		statePtr->moduleFlags, n);
	memset(statePtr->moduleFlags + statePtr->numModuleFlags, MOD_UNKNOWN,
		n - statePtr->numModuleFlags);
	statePtr->numModuleFlags = n;
    }
    flagsPtr = &statePtr->moduleFlags[moduleId];
    if (*flagsPtr == MOD_UNKNOWN) {
	const char *name = CprofNameString(moduleId);
	int i;

	*flagsPtr = MOD_USER;
	for (i = 0; name != NULL && classes[i].prefix != NULL; i++) {
	    if (strncmp(name, classes[i].prefix,
		    strlen(classes[i].prefix)) == 0) {
		*flagsPtr = (unsigned char) classes[i].class;
		break;
	    }
	}
    }
    return *flagsPtr;
}

/*
 * Name ids the per-frame filters compare with, interned once per process
 * (ids are stable and the same in every thread).
 */

static struct {
    int ready;
    int start;			/* "_start" */
    int main;			/* "main" */
    int libcStart[3];		/* the functions of libc that call main */
    int idle;			/* "[idle]" */
    int tclpWait;		/* "TclpWaitForEvent": Tcl 9's
				 * Tcl_WaitForEvent tail-calls it, so the
				 * wait's stack shows it instead. */
} ids;

static void
InitIds(void)
{
    if (!ids.ready) {
	ids.start = CprofNameIntern("_start", -1);
	ids.main = CprofNameIntern("main", -1);
	ids.libcStart[0] = CprofNameIntern("__libc_start_call_main", -1);
	ids.libcStart[1] = CprofNameIntern("__libc_start_main", -1);
	ids.libcStart[2] = CprofNameIntern("__libc_start_main_impl", -1);
	ids.idle = CprofNameIntern("[idle]", -1);
	ids.tclpWait = CprofNameIntern("TclpWaitForEvent", -1);
	ids.ready = 1;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * TclFrameLine --
 *
 *	Sampled lines: the source line a kept Tcl frame of a sample was
 *	executing, the one at merged[i] (see drainlines.c). The frames right
 *	after it that are not shown (control commands, hidden frames) run
 *	its code too; after them comes what it was executing:
 *
 *	- a Tcl frame, of the same interpreter and with no native frame
 *	  in between (so invoked by its bytecode, not by a C function it
 *	  called): the line of that frame's call site;
 *	- the innermost frame of the bytecode engine, when the last of
 *	  them is at its interpreter's current level (the bytecode is its,
 *	  not that of a command without a frame, such as a coroutine made
 *	  before the start): the line of the pc it was interrupted at. The
 *	  candidates for that pc include stale words: pointers into the
 *	  bytecode of the frames outside it (its caller's, left in a
 *	  register), whose lines would put it on its caller's line. A
 *	  ByteCode that a call site of the sample says is run by another
 *	  frame (of another name: not a recursion) is no candidate
 *	  (OtherFramesCode);
 *	- anything else, or when those give no line: the call site of the
 *	  innermost frame not shown, if there is one.
 *
 * Results:
 *	1 and the file's name id and the line, or 0.
 *
 *----------------------------------------------------------------------
 */

static int
TclShown(
    CprofState *statePtr,
    const CprofTclRef *refPtr)
{
    return !((refPtr->kind == CPROF_KIND_CONTROL && !statePtr->options.control)
	    || (refPtr->flags & CPROF_FRAME_HIDDEN));
}

/*
 * The interpreter of a sample's Tcl frame: the sampler's own, or one whose
 * level stack it samples too (a CprofStack heads its CprofLevels).
 */

typedef char LevelsStackFirst[offsetof(CprofLevels, stack) == 0 ? 1 : -1];

static Tcl_Interp *
InterpOfFrame(
    CprofState *statePtr,
    int interpId)
{
    CprofSampler *sPtr = statePtr->samplerPtr;
    int i;

    if (interpId < 0) {
	return statePtr->interp;
    }
    for (i = 0; sPtr != NULL && i < sPtr->numExtra; i++) {
	CprofStack *stackPtr = sPtr->extra[i].stackPtr;

	if (stackPtr != NULL && sPtr->extra[i].interpId == interpId) {
	    return ((CprofLevels *) stackPtr)->interp;
	}
    }
    return NULL;
}

/*
 * The ByteCodes the sample's Tcl frames of one interpreter, up to 'lastPtr',
 * were invoked from (their siteCode), each run by the frame before it, or
 * by code outside every frame for the first: those run by a frame whose
 * name is not lastPtr's, which lastPtr does not run. At most 'max'.
 */

static int
OtherFramesCode(
    const CprofTclRef *tcl,
    const CprofSpliceEntry *merged,
    int n,
    const CprofTclRef *lastPtr,
    const void **codes,
    int max)
{
    const CprofTclRef *prevPtr = NULL;
    int k, num = 0;

    for (k = 0; k < n && num < max; k++) {
	const CprofTclRef *refPtr;

	if (!merged[k].isTcl) {
	    continue;
	}
	refPtr = &tcl[merged[k].index];
	if (refPtr->interpId != lastPtr->interpId) {
	    continue;
	}
	if (refPtr->siteCode != NULL
		&& (prevPtr == NULL || prevPtr->nameId != lastPtr->nameId)) {
	    codes[num++] = refPtr->siteCode;
	}
	if (refPtr == lastPtr) {
	    break;
	}
	prevPtr = refPtr;
    }
    return num;
}

static int
TclFrameLine(
    CprofState *statePtr,
    const CprofSample *samplePtr,
    const CprofTclRef *tcl,
    const CprofSpliceEntry *merged,
    int n,
    int i,
    int *fileIdPtr,
    int *linePtr)
{
    const CprofTclRef *framePtr = &tcl[merged[i].index];
    const CprofTclRef *hiddenPtr = NULL, *lastPtr = framePtr;
    Tcl_Interp *interp = InterpOfFrame(statePtr, framePtr->interpId);
    int j;

    if (interp == NULL) {
	return 0;
    }
    if (statePtr->srcLinesPtr == NULL) {
	statePtr->srcLinesPtr = CprofSrcLinesNew();
    }
    for (j = i + 1; j < n && merged[j].isTcl; j++) {
	const CprofTclRef *refPtr = &tcl[merged[j].index];

	if (refPtr->interpId != framePtr->interpId) {
	    j = n;
	    break;
	}
	if (TclShown(statePtr, refPtr)) {
	    if (refPtr->siteCode != NULL && CprofSrcLinesSite(
		    statePtr->srcLinesPtr, interp, refPtr->siteCode,
		    refPtr->siteOffset, fileIdPtr, linePtr)) {
		return 1;
	    }
	    break;
	}
	hiddenPtr = lastPtr = refPtr;
    }
    if (j < n && !merged[j].isTcl && merged[j].index == samplePtr->tebcFrame
	    && (lastPtr->flags & CPROF_REF_CURRENT)) {
	const void *others[CPROF_TCL_MAX];
	int numOthers = OtherFramesCode(tcl, merged, n, lastPtr, others,
		CPROF_TCL_MAX);

	if (CprofSrcLinesPc(statePtr->srcLinesPtr, interp, samplePtr->cand,
		samplePtr->nCand, others, numOthers, fileIdPtr, linePtr)) {
	    return 1;
	}
    }
    return hiddenPtr != NULL && hiddenPtr->siteCode != NULL
	    && CprofSrcLinesSite(statePtr->srcLinesPtr, interp,
	    hiddenPtr->siteCode, hiddenPtr->siteOffset, fileIdPtr, linePtr);
}

/*
 * Frame i of the stack.
 */

static inline void
Put(
    CprofDrainStack *stackPtr,
    int i,
    int isC,
    int nameId,
    int moduleId,
    int kind,
    int interpId,
    int exact,
    int fileId,
    int line)
{
    CprofFrameDef *defPtr = &stackPtr->def[i];

    defPtr->isC = isC;			/* (As CprofTreeFrame keeps it.) */
    defPtr->nameId = nameId;
    defPtr->moduleId = isC ? moduleId : -1;
    defPtr->tclKind = isC ? -1 : kind;
    defPtr->interpId = isC ? -1 : interpId;
    stackPtr->exact[i] = exact;
    stackPtr->fileId[i] = fileId;
    stackPtr->line[i] = line;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofDrainOwnLeaf --
 *
 *	Whether a time sample interrupted the profiler's own code: its
 *	innermost frame outside the system libraries (libc, the vDSO: the
 *	clock the wrapper reads) is tclcprof's library or a command's thunk.
 *	Such a sample is the profiler's time (the wrapper's fast path, exact
 *	timing's clock reads, the trace callback), not the program's: the
 *	drain leaves it out and counts it with the profiler's drops, as the
 *	handler does for the profiler's work it is told of
 *	(CprofSamplerOwn). Without this, -mode both reported the Tcl half of
 *	a program 7.7 points above its share unprofiled.
 *
 *----------------------------------------------------------------------
 */

/*
 * The executable part of tclcprof's own library, found once: for runs with
 * -native none, whose drain looks up no symbol (CprofDrainOwnLeaf then
 * tests the innermost frame's address against it, without the symbol
 * tables a lookup would read).
 */

static uintptr_t ownTextLo, ownTextHi;
static int ownTextKnown;

static int
OwnTextOf(
    struct dl_phdr_info *info,
    size_t size,
    void *clientData)
{
    uintptr_t base = (uintptr_t) clientData;
    int k;

    if ((uintptr_t) info->dlpi_addr != base) {
	return 0;
    }
    for (k = 0; k < info->dlpi_phnum; k++) {
	const ElfW(Phdr) *ph = &info->dlpi_phdr[k];

	if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
	    uintptr_t lo = base + ph->p_vaddr, hi = lo + ph->p_memsz;

	    if (ownTextLo == 0 || lo < ownTextLo) {
		ownTextLo = lo;
	    }
	    if (hi > ownTextHi) {
		ownTextHi = hi;
	    }
	}
    }
    return 1;
}

static int
InOwnText(
    uintptr_t addr)
{
    if (!ownTextKnown) {
	Dl_info info;

	ownTextKnown = 1;
	if (dladdr((void *) CprofDrainOwnLeaf, &info) && info.dli_fbase) {
	    dl_iterate_phdr(OwnTextOf, info.dli_fbase);
	}
    }
    return addr >= ownTextLo && addr < ownTextHi;
}

int
CprofDrainOwnLeaf(
    CprofState *statePtr,
    const CprofSample *samplePtr)
{
    int i;

    if (statePtr->options.native == CPROF_NATIVE_NONE) {
	/*
	 * No symbol is looked up for these runs: the innermost frame only,
	 * by address (the wrapper's own code; not the clock it reads).
	 */

	return samplePtr->nNative > 0 && (InOwnText(samplePtr->ip[0])
		|| CprofThunkContains(samplePtr->ip[0]));
    }
    for (i = 0; i < samplePtr->nNative; i++) {
	uintptr_t addr = (i == 0) ? samplePtr->ip[0] : samplePtr->ip[i] - 1;
	CprofSymInfo info;
	int class;

	CprofSymResolve(statePtr->symPtr, addr, &info);
	if (IsOwnModule(info.moduleId)
		|| (info.moduleId < 0 && CprofThunkContains(addr))) {
	    return 1;
	}
	class = ModuleClass(statePtr, info.moduleId);
	if (class != MOD_SYSTEM && class != MOD_STARTUP) {
	    return 0;
	}
    }
    return 0;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofDrainResolve --
 *
 *	Resolve the n frames of a spliced sample (merged: drainsplice.c;
 *	tcl: its Tcl frames, named) into stackPtr, outermost first, the
 *	sample's labels heading it. mainTree: the state's own tree (a
 *	memory sample's tree has no lines of Tcl frames and no [idle]);
 *	idleNode: the exact node of an [idle] frame the sample's Tcl frames
 *	had (mode both), or -1.
 *
 *----------------------------------------------------------------------
 */

void
CprofDrainResolve(
    CprofState *statePtr,
    const CprofSample *samplePtr,
    const CprofTclRef *tcl,
    const CprofSpliceEntry *merged,
    int n,
    int mainTree,
    int idleNode,
    CprofDrainStack *stackPtr)
{
    int labelFrames = 0;		/* 1: the stack starts with its
				 * labels. */
    int tclLines = mainTree && statePtr->samplerPtr != NULL
	    && statePtr->samplerPtr->lines;
    int idleOn = (statePtr->options.clock == CPROF_CLOCK_WALL && mainTree);
    int native = statePtr->options.native;
    int i, kept = 0, startup = 1;
    int afterTcl = 0;		/* The last native frame was Tcl's own. */
    int callsMain = 0;		/* The last native frame was libc's start. */
    int moduleClass;

    InitIds();

    /*
     * Labels (cmdlabels.c): the sample's set heads its stack, a node of its
     * own under the root.
     */

    if (samplePtr->labels > 0) {
	Put(stackPtr, kept++, CPROF_FD_LABELS, samplePtr->labels - 1, -1,
		-1, -1, -1, -1, 0);
	labelFrames = 1;
    }

    for (i = 0; i < n; i++) {
	if (merged[i].isTcl) {
	    const CprofTclRef *refPtr = &tcl[merged[i].index];
	    int fileId = -1, line = 0;

	    startup = 0;
	    if (!TclShown(statePtr, refPtr)) {
		continue;
	    }
	    if (tclLines && !TclFrameLine(statePtr, samplePtr, tcl, merged, n,
		    i, &fileId, &line)) {
		line = 0;
	    }
	    Put(stackPtr, kept++, 0, refPtr->nameId, -1, refPtr->kind,
		    refPtr->interpId, refPtr->node, fileId, line);
	} else {
	    int j = merged[i].index;
	    uintptr_t addr = (j == 0) ? samplePtr->ip[0]
		    : samplePtr->ip[j] - 1;
	    CprofSymInfo info;

	    if (native == CPROF_NATIVE_NONE && !idleOn) {
		continue;
	    }
	    CprofSymResolve(statePtr->symPtr, addr, &info);
	    if (idleOn && info.funcStart != 0
		    && (info.funcStart == (uintptr_t) Tcl_WaitForEvent
		    || (info.inTcl && info.nameId == ids.tclpWait))) {
		if (native == CPROF_NATIVE_ALL) {
		    Put(stackPtr, kept++, 1, info.nameId, info.moduleId, -1,
			    -1, -1, -1, 0);
		}
		Put(stackPtr, kept++, 0, ids.idle, -1, CPROF_KIND_IDLE, -1,
			idleNode, -1, 0);
		break;
	    }
	    if (native == CPROF_NATIVE_NONE) {
		continue;
	    }

	    /*
	     * The C library's start-up code calls main: name it so when the
	     * program is stripped.
	     */

	    if (callsMain && !info.exact) {
		info.nameId = ids.main;
	    }
	    callsMain = (info.nameId == ids.libcStart[0]
		    || info.nameId == ids.libcStart[1]
		    || info.nameId == ids.libcStart[2]);
	    if (native == CPROF_NATIVE_USER) {
		if (info.inTcl || IsOwnModule(info.moduleId)) {
		    startup = 0;
		    afterTcl = 1;
		    continue;
		}

		/*
		 * System libraries called by Tcl's internals (malloc,
		 * memcpy, poll...) are part of Tcl's work; called from user
		 * C code they are shown.
		 */

		moduleClass = ModuleClass(statePtr, info.moduleId);
		if (afterTcl && moduleClass >= MOD_SYSTEM) {
		    continue;
		}
		afterTcl = 0;

		/*
		 * The C library's start-up frames (_start,
		 * __libc_start_main, start_thread, clone) head every stack
		 * and say nothing.
		 */

		if (startup && (moduleClass == MOD_STARTUP
			|| info.nameId == ids.start)) {
		    continue;
		}

		/*
		 * A stripped executable's _start has no name: it is the
		 * unnamed function that calls the C library's start-up.
		 */

		if (startup && kept == labelFrames && !info.exact
			&& i + 1 < n && !merged[i + 1].isTcl) {
		    int k = merged[i + 1].index;
		    CprofSymInfo next;

		    CprofSymResolve(statePtr->symPtr, (k == 0)
			    ? samplePtr->ip[0] : samplePtr->ip[k] - 1, &next);
		    if (next.nameId == ids.libcStart[0]
			    || next.nameId == ids.libcStart[1]
			    || next.nameId == ids.libcStart[2]) {
			continue;
		    }
		}
	    }
	    startup = 0;
	    Put(stackPtr, kept++, 1, info.nameId, info.moduleId, -1, -1, -1,
		    info.fileId, info.fileId >= 0 ? info.line : 0);
	}
    }
    stackPtr->n = kept;
}
