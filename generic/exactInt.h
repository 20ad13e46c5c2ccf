/*
 * exactInt.h --
 *
 *	What the files of exact timing share (exact.c collects and chooses
 *	the clock, exactcompensate.c measures the profiler's cost per call,
 *	exactread.c turns the data into values): the clock read and its
 *	conversion to nanoseconds.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _EXACTINT_H
#define _EXACTINT_H

#include "tclcprofInt.h"
#if defined(__x86_64__) || defined(__i386__)
#   include <x86intrin.h>
#   define HAVE_TSC 1
#endif

/*
 * The run's clock now, in its ticks: the time-stamp counter or
 * nanoseconds (CprofExactPrepare chose).
 */

static inline uint64_t
Now(
    const CprofExact *exactPtr)
{
#ifdef HAVE_TSC
    if (exactPtr->tsc) {
	return __rdtsc();
    }
#endif
    return CprofClockNs(exactPtr->clockId);
}

/*
 * Ticks of the run's clock as nanoseconds.
 */

static inline int64_t
TicksToNs(
    const CprofExact *exactPtr,
    int64_t ticks)
{
    return exactPtr->tsc ? (int64_t) (ticks * exactPtr->nsPerTick) : ticks;
}

/*
 * exact.c: nanoseconds per tick of the time-stamp counter, or 0 when it
 * cannot time elapsed intervals here.
 */

MODULE_SCOPE double	CprofExactTscNsPerTick(void);

#endif /* _EXACTINT_H */
