/*
 * unwindcfi.h --
 *
 *	The cached unwinder (unwindcfi.c): sampled allocations' (hookmem.c)
 *	and the signal handler's (sampler.c).
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _CFIWALK_H
#define _CFIWALK_H

/*
 * Where the signal handler's walk starts, and what it tells back.
 */

#define CPROF_CFI_SAVED	6	/* %rbx %rbp %r12-%r15. */

typedef struct CprofCfiStart {
    uintptr_t pc;		/* The interrupted registers. */
    uintptr_t sp;
    uintptr_t regs[CPROF_CFI_SAVED];
    uintptr_t stackLo;		/* The thread's stack: the walk reads */
    uintptr_t stackHi;		/* words in [sp, stackHi) only. */
    uintptr_t markLo;		/* The first frame whose pc is in [markLo, */
    uintptr_t markHi;		/* markHi) is marked (0: none). */
    int mark;			/* Out: the marked frame, or -1, */
    uintptr_t markRegs[CPROF_CFI_SAVED];
				/* and its callee-saved registers. */
    int truncated;		/* Out: more frames than max. */
    int rulesMade;		/* Out (added to): rules worked out. */
} CprofCfiStart;

MODULE_SCOPE void	CprofCfiInit(void);
MODULE_SCOPE int	CprofCfiWalkFrom(CprofCfiStart *startPtr,
			    uintptr_t *ip, uintptr_t *cfa, int max);
MODULE_SCOPE void	CprofCfiModules(void);
MODULE_SCOPE void	CprofCfiForget(void);
MODULE_SCOPE void	CprofCfiRenew(void);
MODULE_SCOPE int	CprofCfiWalk(uintptr_t *ip, uintptr_t *cfa, int max,
			    uintptr_t ownLo, uintptr_t ownHi);
MODULE_SCOPE size_t	CprofCfiBytes(void);
MODULE_SCOPE void	CprofCfiLock(void);
MODULE_SCOPE void	CprofCfiUnlock(void);

#endif /* _CFIWALK_H */
