/*
 * samplerInt.h --
 *
 *	What the sampler's files (sampler.c: the handler, rings, timers;
 *	samplerspool.c: the spool of a full ring) share: the spool, whose
 *	spare sample the handler fills when the ring is full and merges.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef CPROF_SAMPLERINT_H
#define CPROF_SAMPLERINT_H

#include "tclcprofInt.h"

#define SPOOL_ARENA	(32u << 20)	/* Bytes reserved per sampler. */
#define SPOOL_BUCKETS	65536u		/* Hash buckets (power of two). */

typedef struct SpoolKey {
    uint16_t nNative;
    uint16_t nTcl;
    uint32_t flags;
    int32_t labels;
    uint32_t unused;
} SpoolKey;

#define SPOOL_KEY_MAX	(sizeof(SpoolKey) \
	+ 2 * CPROF_NATIVE_MAX * sizeof(uintptr_t) \
	+ CPROF_TCL_MAX * sizeof(CprofTclRef))
#define SPOOL_ALIGN(n)	(((n) + 7) & ~(size_t) 7)

/*
 * SpoolHash reads keys in 8-byte words.
 */

typedef char SpoolKeyWords[(sizeof(SpoolKey) % 8 == 0
	&& sizeof(CprofTclRef) % 8 == 0) ? 1 : -1];

typedef struct CprofSpool {
    unsigned char *arena;	/* SPOOL_ARENA bytes, mmap'd. */
    size_t used;		/* Bytes of records in the arena. */
    uint32_t numRecs;
    uint32_t takeOffset;	/* Where CprofSamplerTakeSpooled goes on. */
    uint32_t buckets[SPOOL_BUCKETS];	/* Arena offset + 1, or 0. */
    unsigned char key[SPOOL_KEY_MAX];	/* The handler's key under
					 * construction. */
    CprofSample spare;		/* The handler's sample when the ring is
				 * full; a record expanded for the drain. */
} CprofSpool;

MODULE_SCOPE CprofSpool *CprofSpoolNew(void);
MODULE_SCOPE void	CprofSpoolDelete(CprofSpool *spPtr);
MODULE_SCOPE int	CprofSpoolMerge(CprofSpool *spPtr);

#endif /* CPROF_SAMPLERINT_H */
