/*
 * cfiwalk.h --
 *
 *	The unwinder of sampled allocations (cfiwalk.c), for memhook.c.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _CFIWALK_H
#define _CFIWALK_H

MODULE_SCOPE void	CprofCfiInit(void);
MODULE_SCOPE void	CprofCfiForget(void);
MODULE_SCOPE void	CprofCfiRenew(void);
MODULE_SCOPE int	CprofCfiWalk(uintptr_t *ip, uintptr_t *cfa, int max,
			    uintptr_t ownLo, uintptr_t ownHi);
MODULE_SCOPE size_t	CprofCfiBytes(void);
MODULE_SCOPE void	CprofCfiLock(void);
MODULE_SCOPE void	CprofCfiUnlock(void);

#endif /* _CFIWALK_H */
