/*
 * drainInt.h --
 *
 *	What the stages of the drain share: the stack of one sample as the
 *	resolution (drainresolve.c) leaves it for the tree (draintree.c).
 *	drain.c runs the stages, one sample at a time: its Tcl frames
 *	named and put in order (drain.c), spliced into its native frames
 *	(drainsplice.c), every frame resolved (drainresolve.c), the stack
 *	added to the tree (draintree.c).
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _DRAININT_H
#define _DRAININT_H

#include "tclcprofInt.h"

#define CPROF_STACK_MAX	(CPROF_NATIVE_MAX + CPROF_TCL_MAX + 1)

/*
 * A resolved stack, outermost frame first: what each frame is, as the
 * tree's table of frames keeps it, with its exact node and source line.
 */

typedef struct CprofDrainStack {
    int n;
    CprofFrameDef def[CPROF_STACK_MAX];
				/* What each frame is, as the tree keeps it
				 * (isC: CPROF_FD_TCL, CPROF_FD_C or
				 * CPROF_FD_LABELS). */
    int exact[CPROF_STACK_MAX];	/* A Tcl frame's exact node (mode both),
				 * or -1. */
    int fileId[CPROF_STACK_MAX];	/* Its source file's name id, or -1, */
    int line[CPROF_STACK_MAX];	/* and line (0: none). */
} CprofDrainStack;

MODULE_SCOPE int	CprofDrainSplice(CprofState *statePtr,
			    const CprofSample *samplePtr,
			    const CprofTclRef *tcl, int nTcl,
			    CprofSpliceEntry *merged);
MODULE_SCOPE int	CprofDrainOwnLeaf(CprofState *statePtr,
			    const CprofSample *samplePtr);
MODULE_SCOPE void	CprofDrainResolve(CprofState *statePtr,
			    const CprofSample *samplePtr,
			    const CprofTclRef *tcl,
			    const CprofSpliceEntry *merged,
			    int n, int mainTree, int idleNode,
			    CprofDrainStack *stackPtr);
MODULE_SCOPE int	CprofDrainAddStack(CprofState *statePtr,
			    CprofTree *treePtr, const CprofSample *samplePtr,
			    const CprofDrainStack *stackPtr);

#endif /* _DRAININT_H */
