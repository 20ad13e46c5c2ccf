/*
 * unwindgcc.h --
 *
 *	libgcc's unwinder (unwindgcc.c): the handler's walk where the cached
 *	one (unwindcfi.c) cannot go, and the normal-context walk of tests
 *	and the memory hooks.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _UNWINDGCC_H
#define _UNWINDGCC_H

#include <ucontext.h>

/*
 * One walk of the signal handler's (sampler.c's LibgccStack): where it
 * starts, where its frames go, what it tells back.
 */

typedef struct CprofGccWalk {
    uintptr_t *ip;
    uintptr_t *cfa;
    int n;
    int max;
    int truncated;
    int started;		/* Interrupted frame reached. */
    int skipped;
    int skipFirst;		/* Leave out the frame of pc too: a fork's
				 * sample starts at fork itself. */
    uintptr_t pc;		/* Interrupted PC, from the ucontext. */
    uintptr_t tebcStart;	/* Sampled lines: the bytecode engine's */
    uintptr_t tebcEnd;		/* range (0: none), the sample whose */
    CprofSample *samplePtr;	/* candidates are taken, and the */
    const ucontext_t *ucPtr;	/* interrupted registers. */
} CprofGccWalk;

MODULE_SCOPE void	CprofGccBacktrace(CprofGccWalk *walkPtr);
MODULE_SCOPE void	CprofPcCandidates(CprofSample *samplePtr, int n,
			    const ucontext_t *ucPtr, const uintptr_t *regs,
			    uintptr_t frameSp);

#endif /* _UNWINDGCC_H */
