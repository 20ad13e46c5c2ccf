/*
 * drainlines.c --
 *
 *	Sampled lines (-lines 1 in a sampled mode): the source line each
 *	sampled Tcl frame was executing, from the keys the level stack and
 *	the signal handler keep, for the drain (drain.c):
 *
 *	- a frame's call site: the ByteCode its command was invoked from and
 *	  the pc of that call (CprofFrame.siteCode and siteOffset), which is
 *	  the line its caller was executing;
 *	- the pc of the bytecode a sample interrupted: one of the values of
 *	  the registers and first stack words of the bytecode engine's
 *	  innermost frame (CprofSample.cand), which is the line of the frame
 *	  that runs that bytecode.
 *
 *	Neither key holds its ByteCode: it may have been freed (a procedure
 *	redefined) before the drain, its memory reused. A key is used only
 *	once it is known to be a live ByteCode of the interpreter (a key of
 *	Tcl's table of line information, iPtr->lineBCPtr, from which Tcl
 *	removes every ByteCode it frees) with the pc inside its code; the pc
 *	is then resolved as "info frame" does (TclGetSrcInfoForPc, through
 *	CprofResolveSite), once per place: a place's entry is used again only
 *	while the ByteCode at its address is of the same source. A pc
 *	candidate is looked up by address among the interpreter's live
 *	ByteCodes, in a table of their code ranges sorted by address, made
 *	again (at most once a second) when the interpreter's ByteCodes have
 *	changed. A ByteCode freed and another made at the same address
 *	between a sample and its drain can give a wrong line, never a read
 *	of freed memory. Once an interpreter's deletion has begun, its
 *	table no longer tells (CodeTableTrusted): its keys give no line
 *	(the keys of a child interpreter are drained when `interp delete`
 *	is entered, cmdscope.c).
 *
 *	Only code with a file has lines (procedures and scripts of sourced
 *	files), as for exact timing's call sites.
 *
 *	This unit reads Tcl's private structures (Interp, ByteCode).
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "tclcprofInt.h"
#include <tclInt.h>
#include <tclCompile.h>
#include <stdlib.h>
#include <string.h>

/*
 * The pc candidates are stack words and registers taken as they are, some
 * never written: memcheck is told they are meant (when its header is
 * there; a no-op outside valgrind).
 */

#if defined(__has_include)
#   if __has_include(<valgrind/memcheck.h>)
#	include <valgrind/memcheck.h>
#   endif
#endif
#ifndef VALGRIND_MAKE_MEM_DEFINED
#   define VALGRIND_MAKE_MEM_DEFINED(addr, len) ((void) 0)
#endif

/*
 * A place: a ByteCode's address and a pc offset from it, and what it
 * resolved to, with what identifies the ByteCode it was resolved in.
 */

typedef struct PlaceKey {
    const void *codePtr;
    uintptr_t offset;
} PlaceKey;

typedef struct Place {
    const char *source;		/* The ByteCode's source and sizes when */
    int numSrcBytes;		/* resolved: the same code has the same */
    int numCodeBytes;		/* lines. */
    int fileId;
    int line;			/* 0: no line (code without a file). */
} Place;

#define MAX_PLACES	16384	/* Then the cache starts afresh. */

/*
 * The code ranges of an interpreter's live ByteCodes, sorted by start.
 */

typedef struct CodeRange {
    uintptr_t start, end;
    const void *codePtr;
} CodeRange;

typedef struct InterpCode {
    Tcl_Interp *interp;		/* A key only. */
    CodeRange *ranges;
    int numRanges, capRanges;
    int built;			/* The ranges were made, */
    int builtEntries;		/* from that many ByteCodes, */
    Tcl_WideInt builtNs;	/* at that time. */
} InterpCode;

#define REBUILD_NS	1000000000

struct CprofSrcLines {
    Tcl_HashTable places;	/* PlaceKey -> Place *. */
    int numPlaces;
    CprofNameRefs refs;		/* The places' file names. */
    InterpCode *interps;
    int numInterps, capInterps;
};

CprofSrcLines *
CprofSrcLinesNew(void)
{
    CprofSrcLines *slPtr = (CprofSrcLines *) ckalloc(sizeof(CprofSrcLines));

    memset(slPtr, 0, sizeof(CprofSrcLines));
    Tcl_InitHashTable(&slPtr->places, sizeof(PlaceKey) / sizeof(int));
    return slPtr;
}

static void
ClearPlaces(
    CprofSrcLines *slPtr)
{
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    for (hPtr = Tcl_FirstHashEntry(&slPtr->places, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	ckfree(Tcl_GetHashValue(hPtr));
    }
    Tcl_DeleteHashTable(&slPtr->places);
    Tcl_InitHashTable(&slPtr->places, sizeof(PlaceKey) / sizeof(int));
    slPtr->numPlaces = 0;
    CprofNameRelease(&slPtr->refs);
}

void
CprofSrcLinesFree(
    CprofSrcLines *slPtr)
{
    int i;

    if (slPtr == NULL) {
	return;
    }
    ClearPlaces(slPtr);
    Tcl_DeleteHashTable(&slPtr->places);
    for (i = 0; i < slPtr->numInterps; i++) {
	if (slPtr->interps[i].ranges != NULL) {
	    ckfree(slPtr->interps[i].ranges);
	}
    }
    if (slPtr->interps != NULL) {
	ckfree(slPtr->interps);
    }
    ckfree(slPtr);
}

/*
 *----------------------------------------------------------------------
 *
 * CodeTableTrusted --
 *
 *	Whether the interpreter's table of line information still lists
 *	only live ByteCodes. Once the interpreter's deletion has begun
 *	(DeleteInterpProc frees its handle, then its namespaces, procedures
 *	and their ByteCodes, and only later the table), a ByteCode freed
 *	no longer takes its entry out of the table (TclCleanupByteCode
 *	finds no interpreter through the handle): the table then holds the
 *	addresses of freed ByteCodes and is no test of life. A member's
 *	run is stopped, and drained, from its interpreter's AssocData
 *	callback, which runs after the namespaces are gone.
 *
 *----------------------------------------------------------------------
 */

static int
CodeTableTrusted(
    Interp *iPtr)
{
    return iPtr->lineBCPtr != NULL && iPtr->handle != NULL
	    && *iPtr->handle != NULL;
}

/*
 *----------------------------------------------------------------------
 *
 * LiveCode --
 *
 *	The ByteCode at codePtr when it is a live one of the interpreter
 *	and 'pc' is inside its code, else NULL. Nothing is read at codePtr
 *	before the interpreter's table says a ByteCode lives there.
 *
 *----------------------------------------------------------------------
 */

static ByteCode *
LiveCode(
    Tcl_Interp *interp,
    const void *codePtr,
    uintptr_t pc)
{
    Interp *iPtr = (Interp *) interp;
    ByteCode *bcPtr;

    if (codePtr == NULL || !CodeTableTrusted(iPtr)
	    || Tcl_FindHashEntry(iPtr->lineBCPtr, (char *) codePtr) == NULL) {
	return NULL;
    }
    bcPtr = (ByteCode *) codePtr;
    if (pc < (uintptr_t) bcPtr->codeStart
	    || pc >= (uintptr_t) bcPtr->codeStart + bcPtr->numCodeBytes) {
	return NULL;
    }
    return bcPtr;
}

/*
 *----------------------------------------------------------------------
 *
 * PlaceLine --
 *
 *	The file and line of a pc in a live ByteCode, from the cache or
 *	resolved (and cached).
 *
 * Results:
 *	1 and the file's name id and the line, or 0 when the code has no
 *	file.
 *
 *----------------------------------------------------------------------
 */

static int
PlaceLine(
    CprofSrcLines *slPtr,
    Tcl_Interp *interp,
    ByteCode *bcPtr,
    uintptr_t pc,
    int *fileIdPtr,
    int *linePtr)
{
    PlaceKey key;
    Place *placePtr;
    Tcl_HashEntry *hPtr;
    int isNew;

    memset(&key, 0, sizeof(key));
    key.codePtr = bcPtr;
    key.offset = pc - (uintptr_t) bcPtr;
    hPtr = Tcl_FindHashEntry(&slPtr->places, (char *) &key);
    if (hPtr == NULL) {
	if (slPtr->numPlaces >= MAX_PLACES) {
	    ClearPlaces(slPtr);
	}
	hPtr = Tcl_CreateHashEntry(&slPtr->places, (char *) &key, &isNew);
	placePtr = (Place *) ckalloc(sizeof(Place));
	placePtr->source = NULL;
	Tcl_SetHashValue(hPtr, placePtr);
	slPtr->numPlaces++;
    } else {
	placePtr = (Place *) Tcl_GetHashValue(hPtr);
    }
    if (placePtr->source != bcPtr->source
	    || placePtr->numSrcBytes != bcPtr->numSrcBytes
	    || placePtr->numCodeBytes != bcPtr->numCodeBytes) {
	placePtr->source = bcPtr->source;
	placePtr->numSrcBytes = bcPtr->numSrcBytes;
	placePtr->numCodeBytes = bcPtr->numCodeBytes;
	if (!CprofResolveSite(interp, &slPtr->refs, CPROF_SITE_BYTECODE, bcPtr,
		(int) (pc - (uintptr_t) bcPtr->codeStart), &placePtr->fileId,
		&placePtr->line)) {
	    placePtr->line = 0;
	}
    }
    if (placePtr->line <= 0) {
	return 0;
    }
    *fileIdPtr = placePtr->fileId;
    *linePtr = placePtr->line;
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSrcLinesSite --
 *
 *	The line of a call site (a frame's siteCode and siteOffset) in the
 *	interpreter that ran it.
 *
 * Results:
 *	1 and the file's name id and the line; 0 when the key is no live
 *	ByteCode's or the code has no file.
 *
 *----------------------------------------------------------------------
 */

int
CprofSrcLinesSite(
    CprofSrcLines *slPtr,
    Tcl_Interp *interp,
    const void *codePtr,
    unsigned offset,
    int *fileIdPtr,
    int *linePtr)
{
    uintptr_t pc = (uintptr_t) codePtr + offset;
    ByteCode *bcPtr = LiveCode(interp, codePtr, pc);

    if (bcPtr == NULL) {
	return 0;
    }
    return PlaceLine(slPtr, interp, bcPtr, pc, fileIdPtr, linePtr);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSrcLinesPc --
 *
 *	The line of the bytecode a sample interrupted: the first of the
 *	candidates that is a pc in a live ByteCode of the interpreter (with
 *	a file), other than the ByteCodes the caller says belong to other
 *	frames (stale words: a pc of the caller's code left in a register).
 *
 * Results:
 *	1 and the file's name id and the line, or 0.
 *
 *----------------------------------------------------------------------
 */

static int
CompareRanges(
    const void *a,
    const void *b)
{
    uintptr_t x = ((const CodeRange *) a)->start;
    uintptr_t y = ((const CodeRange *) b)->start;

    return (x < y) ? -1 : (x > y);
}

static void
BuildRanges(
    InterpCode *icPtr)
{
    Interp *iPtr = (Interp *) icPtr->interp;
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;
    int n = 0;

    if (icPtr->capRanges < iPtr->lineBCPtr->numEntries) {
	icPtr->capRanges = iPtr->lineBCPtr->numEntries + 256;
	icPtr->ranges = (CodeRange *) ckrealloc(icPtr->ranges,
		icPtr->capRanges * sizeof(CodeRange));
    }
    for (hPtr = Tcl_FirstHashEntry(iPtr->lineBCPtr, &search);
	    hPtr != NULL && n < icPtr->capRanges;
	    hPtr = Tcl_NextHashEntry(&search)) {
	ByteCode *bcPtr = (ByteCode *) Tcl_GetHashKey(iPtr->lineBCPtr, hPtr);

	if (bcPtr->numCodeBytes > 0) {
	    icPtr->ranges[n].start = (uintptr_t) bcPtr->codeStart;
	    icPtr->ranges[n].end = (uintptr_t) bcPtr->codeStart
		    + bcPtr->numCodeBytes;
	    icPtr->ranges[n].codePtr = bcPtr;
	    n++;
	}
    }
    qsort(icPtr->ranges, n, sizeof(CodeRange), CompareRanges);
    icPtr->numRanges = n;
    icPtr->built = 1;
    icPtr->builtEntries = iPtr->lineBCPtr->numEntries;
    icPtr->builtNs = CprofMonoNs();
}

static const CodeRange *
FindRange(
    const InterpCode *icPtr,
    uintptr_t pc)
{
    int lo = 0, hi = icPtr->numRanges - 1;

    while (lo <= hi) {
	int mid = lo + (hi - lo) / 2;
	const CodeRange *rPtr = &icPtr->ranges[mid];

	if (pc < rPtr->start) {
	    hi = mid - 1;
	} else if (pc >= rPtr->end) {
	    lo = mid + 1;
	} else {
	    return rPtr;
	}
    }
    return NULL;
}

static int
IsOneOf(
    const void *codePtr,
    const void *const *codes,
    int numCodes)
{
    int i;

    for (i = 0; i < numCodes; i++) {
	if (codes[i] == codePtr) {
	    return 1;
	}
    }
    return 0;
}

int
CprofSrcLinesPc(
    CprofSrcLines *slPtr,
    Tcl_Interp *interp,
    const uintptr_t *cand,
    int numCand,
    const void *const *notCodes,/* ByteCodes that are not the frame's (the
				 * caller knows they are other frames'). */
    int numNotCodes,
    int *fileIdPtr,
    int *linePtr)
{
    Interp *iPtr = (Interp *) interp;
    InterpCode *icPtr = NULL;
    int i, pass;

    if (!CodeTableTrusted(iPtr) || numCand <= 0) {
	return 0;
    }
    (void) VALGRIND_MAKE_MEM_DEFINED(cand, numCand * sizeof(uintptr_t));
    for (i = 0; i < slPtr->numInterps; i++) {
	if (slPtr->interps[i].interp == interp) {
	    icPtr = &slPtr->interps[i];
	    break;
	}
    }
    if (icPtr == NULL) {
	if (slPtr->numInterps == slPtr->capInterps) {
	    slPtr->capInterps = slPtr->capInterps ? 2 * slPtr->capInterps : 4;
	    slPtr->interps = (InterpCode *) ckrealloc(slPtr->interps,
		    slPtr->capInterps * sizeof(InterpCode));
	}
	icPtr = &slPtr->interps[slPtr->numInterps++];
	memset(icPtr, 0, sizeof(InterpCode));
	icPtr->interp = interp;
    }

    /*
     * The ranges are made again when ByteCodes came or went (as far as
     * their number tells) or one of them proved stale, at most once a
     * second: in between, a pc in code made since is not found.
     */

    if (!icPtr->built || (icPtr->builtEntries != iPtr->lineBCPtr->numEntries
	    && CprofMonoNs() - icPtr->builtNs >= REBUILD_NS)) {
	BuildRanges(icPtr);
    }
    for (pass = 0; pass < 2; pass++) {
	int stale = 0;

	for (i = 0; i < numCand; i++) {
	    const CodeRange *rPtr = FindRange(icPtr, cand[i]);
	    ByteCode *bcPtr;

	    if (rPtr == NULL) {
		continue;
	    }
	    bcPtr = LiveCode(interp, rPtr->codePtr, cand[i]);
	    if (bcPtr == NULL) {
		stale = 1;
	    } else if (!IsOneOf(bcPtr, notCodes, numNotCodes)
		    && PlaceLine(slPtr, interp, bcPtr, cand[i], fileIdPtr,
		    linePtr)) {
		return 1;
	    }
	}
	if (!stale || CprofMonoNs() - icPtr->builtNs < REBUILD_NS) {
	    break;
	}
	BuildRanges(icPtr);
    }
    return 0;
}
