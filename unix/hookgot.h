/*
 * hookgot.h --
 *
 *	GOT patching of loaded modules (hookgot.c), for the memory hooks
 *	(hookmem.c, the default set) and the scope's Tcl_CreateInterp hook
 *	(cmdscope.c, a set of its own).
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _GOTPATCH_H
#define _GOTPATCH_H

typedef struct CprofGotTarget {
    const char *name;		/* Symbol whose entries are redirected. */
    void *hook;			/* Where to. */
} CprofGotTarget;

typedef struct CprofGotSet CprofGotSet;

MODULE_SCOPE int	CprofGotPatch(const CprofGotTarget *targets,
			    int numTargets);
MODULE_SCOPE CprofGotSet *CprofGotSetNew(void *skipAddr);
MODULE_SCOPE int	CprofGotSetPatch(CprofGotSet *gPtr,
			    const CprofGotTarget *targets, int numTargets);
MODULE_SCOPE int	CprofGotSetRestore(CprofGotSet *gPtr);
MODULE_SCOPE void	CprofGotForgetClosed(void);
MODULE_SCOPE int	CprofGotRestore(void);
MODULE_SCOPE int	CprofGotPatched(int *modulesPtr);

#endif /* _GOTPATCH_H */
