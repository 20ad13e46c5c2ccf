/*
 * captureframesInt.h --
 *
 *	What the two halves of the frames capture share: captureframes.c (the
 *	signal handler's reading of Tcl's frames, and the capture's life)
 *	and captureframesresolve.c (the drain's naming of what was read). Private
 *	to them.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _CPROF_FRAMESINT_H
#define _CPROF_FRAMESINT_H

#include <tclInt.h>
#include <tclCompile.h>
#include <tclOOInt.h>
#include "tclcprofInt.h"
#include "captureframes.h"

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
    int nextIds[4];		/* TclOO's [next] and [nextto], by their
				 * commands' names and their words': not
				 * frames (the wrapper does not wrap them). */
    int myId;			/* "my" (a method body's [my], whose
				 * namespace is not resolved). */
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
 * Shared by the two halves: captureframesresolve.c's letting go of the
 * objects it held for naming (when its tables grow past MAX_HELD), which
 * captureframes.c calls when the reader is freed. (In this direction only: the object
 * files call each other in no circle, tools/objcycles.)
 */

MODULE_SCOPE void	CprofFramesReleaseHeld(CprofFrames *fPtr);
MODULE_SCOPE int	CprofFramesCopyVm(const void *addr, void *buf,
			    size_t size);

/*
 * A CPROF_RAW_OBJV reference's second word: a digest of its first bytes
 * (as copied at the sample), in 24 bits.
 */

static inline unsigned
CprofFramesWordDigest(
    uintptr_t head)
{
    uint64_t h = (uint64_t) head;

    h ^= h >> 24;
    h ^= h >> 48;
    return (unsigned) (h & 0xffffff);
}


#endif /* _CPROF_FRAMESINT_H */
