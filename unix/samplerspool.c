/*
 * samplerspool.c --
 *
 *	The sampler's spool (see sampler.c): where the signal handler puts
 *	the samples of a thread whose ring is full, merged by identical
 *	raw stacks, and where the drain takes them back.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _GNU_SOURCE
#   define _GNU_SOURCE
#endif
#include "samplerInt.h"
#include <sys/mman.h>
#include <string.h>

/*
 *----------------------------------------------------------------------
 *
 * The spool --
 *
 *	The ring is drained by the sampled thread itself whenever it runs
 *	Tcl (the trace callback, the event-loop timer). In a long C call, or
 *	blocked in C under the wall clock, it runs none and the ring (4 s at
 *	250 Hz) fills. The handler then merges each further sample into the
 *	spool: a hash table of distinct raw samples with their summed weight,
 *	in memory reserved when the sampler is made (pages are touched only
 *	as records are added). A C loop gives few distinct raw stacks, so a
 *	call of any length fits; past the spool's limit (or its arena) the
 *	handler drops and counts, as it did when the ring was full.
 *
 *	Only the handler writes the spool, and only the sampled thread reads
 *	it, with 'draining' set, which keeps the handler out: so no lock, as
 *	for the ring. A helper thread that emptied the ring instead was
 *	measured and rejected: any second thread makes glibc's mutexes use
 *	locked instructions, and Tcl takes a mutex (Tcl_Preserve) in every
 *	traced command: +5-7% on call-heavy code.
 *
 *----------------------------------------------------------------------
 */

typedef struct SpoolRec {
    uint32_t next;		/* Arena offset + 1 of the next record in
				 * the bucket; 0 ends it. */
    uint32_t keyLen;
    uint64_t hash;
    uint64_t weight;		/* Summed weight of identical samples. */
    uint64_t count;		/* How many were merged. */
    uint64_t firstNs, lastNs;	/* The times of the first and the last
				 * (the timeline). */
    unsigned char key[];	/* SpoolKey, ip[], cfa[], tcl[]. */
} SpoolRec;

static size_t spoolLimit = SPOOL_ARENA;

void
CprofSpoolSetLimit(
    size_t bytes)
{
    __atomic_store_n(&spoolLimit, bytes, __ATOMIC_RELAXED);
}

CprofSpool *
CprofSpoolNew(void)
{
    CprofSpool *spPtr = (CprofSpool *) ckalloc(sizeof(CprofSpool));

    memset(spPtr, 0, sizeof(CprofSpool));	/* Pre-fault. */

    /*
     * Committed (no MAP_NORESERVE), so that a page the handler touches
     * later cannot fault for want of memory; resident only once used.
     */

    spPtr->arena = mmap(NULL, SPOOL_ARENA, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (spPtr->arena == MAP_FAILED) {
	spPtr->arena = NULL;		/* No spool: drops, as before. */
    }
    return spPtr;
}

void
CprofSpoolDelete(
    CprofSpool *spPtr)
{
    if (spPtr->arena != NULL) {
	munmap(spPtr->arena, SPOOL_ARENA);
    }
    ckfree(spPtr);
}

static void
SpoolClear(
    CprofSpool *spPtr)
{
    if (spPtr->numRecs > 0 || spPtr->used > 0) {
	memset(spPtr->buckets, 0, sizeof(spPtr->buckets));
    }
    spPtr->used = 0;
    spPtr->numRecs = 0;
    spPtr->takeOffset = 0;
}

/*
 * FNV-1a over 8-byte words, with a final mix.
 *
 * Signal safety: pure arithmetic.
 */

static inline uint64_t
SpoolHash(
    const unsigned char *p,
    size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i;

    for (i = 0; i < n; i += 8) {
	uint64_t w;

	memcpy(&w, p + i, 8);
	h = (h ^ w) * 0x100000001b3ull;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSpoolMerge --
 *
 *	Merge the spare sample into the spool.
 *
 * Results:
 *	1 when it was merged; 0 when there is no room (the caller drops it).
 *
 * Signal safety:
 *	Called from the handler: the spool's own preallocated memory (the
 *	arena's pages may fault in, which the kernel handles) and arithmetic.
 *
 *----------------------------------------------------------------------
 */

int
CprofSpoolMerge(
    CprofSpool *spPtr)
{
    const CprofSample *samplePtr = &spPtr->spare;
    unsigned char *p = spPtr->key;
    SpoolKey hdr;
    SpoolRec *recPtr;
    size_t len, size, limit;
    uint64_t hash;
    uint32_t *linkPtr, off;
    int i;

    if (spPtr->arena == NULL) {
	return 0;
    }
    hdr.nNative = samplePtr->nNative;
    hdr.nTcl = samplePtr->nTcl;
    hdr.flags = samplePtr->flags;
    hdr.labels = samplePtr->labels;
    hdr.unused = 0;
    memcpy(p, &hdr, sizeof(hdr));
    len = sizeof(hdr);
    memcpy(p + len, samplePtr->ip, hdr.nNative * sizeof(uintptr_t));
    len += hdr.nNative * sizeof(uintptr_t);
    memcpy(p + len, samplePtr->cfa, hdr.nNative * sizeof(uintptr_t));
    len += hdr.nNative * sizeof(uintptr_t);

    /*
     * Field by field, so that padding is zero and equal samples have
     * equal keys.
     */

    for (i = 0; i < hdr.nTcl; i++) {
	CprofTclRef ref;

	memset(&ref, 0, sizeof(ref));
	ref.nameId = samplePtr->tcl[i].nameId;
	ref.kind = samplePtr->tcl[i].kind;
	ref.flags = samplePtr->tcl[i].flags;
	ref.siteOffset = samplePtr->tcl[i].siteOffset;
	ref.node = samplePtr->tcl[i].node;
	ref.interpId = samplePtr->tcl[i].interpId;
	ref.anchor = samplePtr->tcl[i].anchor;
	ref.siteCode = samplePtr->tcl[i].siteCode;
	ref.ident = samplePtr->tcl[i].ident;
	memcpy(p + len, &ref, sizeof(ref));
	len += sizeof(ref);
    }
    hash = SpoolHash(p, len);		/* len is a multiple of 8. */

    linkPtr = &spPtr->buckets[hash & (SPOOL_BUCKETS - 1)];
    for (off = *linkPtr; off != 0; off = recPtr->next) {
	recPtr = (SpoolRec *) (spPtr->arena + off - 1);
	if (recPtr->hash == hash && recPtr->keyLen == len
		&& memcmp(recPtr->key, p, len) == 0) {
	    recPtr->weight += samplePtr->weight;
	    recPtr->count++;
	    recPtr->lastNs = samplePtr->timeNs;
	    return 1;
	}
    }

    size = SPOOL_ALIGN(sizeof(SpoolRec) + len);
    limit = __atomic_load_n(&spoolLimit, __ATOMIC_RELAXED);
    if (limit > SPOOL_ARENA) {
	limit = SPOOL_ARENA;
    }
    if (spPtr->used + size > limit) {
	return 0;
    }
    recPtr = (SpoolRec *) (spPtr->arena + spPtr->used);
    recPtr->keyLen = (uint32_t) len;
    recPtr->hash = hash;
    recPtr->weight = samplePtr->weight;
    recPtr->count = 1;
    recPtr->firstNs = recPtr->lastNs = samplePtr->timeNs;
    memcpy(recPtr->key, p, len);
    recPtr->next = *linkPtr;
    *linkPtr = (uint32_t) spPtr->used + 1;
    spPtr->used += size;
    spPtr->numRecs++;
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSamplerTakeSpooled --
 *
 *	For the drain (normal context, 'draining' set): the next spooled
 *	sample, expanded into storage of the spool's own (valid until the
 *	next call); NULL, with the spool emptied, when none is left.
 *
 * CprofSamplerDiscard --
 *
 *	Drop every sample waiting in ring and spool and reset the counters
 *	(the caller keeps the handler out with 'draining').
 *
 *----------------------------------------------------------------------
 */

CprofSample *
CprofSamplerTakeSpooled(
    CprofSampler *sPtr)
{
    CprofSpool *spPtr = sPtr->spoolPtr;
    CprofSample *samplePtr = &spPtr->spare;
    SpoolRec *recPtr;
    SpoolKey hdr;
    const unsigned char *p;
    size_t n;

    if (spPtr->takeOffset >= spPtr->used) {
	SpoolClear(spPtr);
	return NULL;
    }
    recPtr = (SpoolRec *) (spPtr->arena + spPtr->takeOffset);
    p = recPtr->key;
    memcpy(&hdr, p, sizeof(hdr));
    p += sizeof(hdr);
    samplePtr->nNative = hdr.nNative;
    samplePtr->nTcl = hdr.nTcl;
    samplePtr->flags = hdr.flags | CPROF_SAMPLE_SPAN;
    samplePtr->labels = hdr.labels;
    samplePtr->timeNs = recPtr->firstNs;
    samplePtr->timeEndNs = recPtr->lastNs;
    samplePtr->tebcFrame = -1;	/* (The bytecode pc is not spooled.) */
    samplePtr->nCand = 0;
    n = hdr.nNative * sizeof(uintptr_t);
    memcpy(samplePtr->ip, p, n);
    memcpy(samplePtr->cfa, p + n, n);
    memcpy(samplePtr->tcl, p + 2 * n, hdr.nTcl * sizeof(CprofTclRef));

    if (recPtr->weight > UINT32_MAX || recPtr->count > UINT32_MAX) {
	/*
	 * More than a sample holds: hand it out in parts, leaving at least
	 * one of the merged samples with the rest (count <= weight).
	 */

	samplePtr->weight = UINT32_MAX;
	samplePtr->count = (uint32_t) (recPtr->count - 1 < UINT32_MAX
		? recPtr->count - 1 : UINT32_MAX);
	recPtr->weight -= samplePtr->weight;
	recPtr->count -= samplePtr->count;
	return samplePtr;
    }
    samplePtr->weight = (uint32_t) recPtr->weight;
    samplePtr->count = (uint32_t) recPtr->count;
    spPtr->takeOffset += SPOOL_ALIGN(sizeof(SpoolRec) + recPtr->keyLen);
    return samplePtr;
}

void
CprofSamplerDiscard(
    CprofSampler *sPtr)
{
    __atomic_store_n(&sPtr->tail, __atomic_load_n(&sPtr->head,
	    __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
    SpoolClear(sPtr->spoolPtr);
    memset(&sPtr->counters, 0, sizeof(sPtr->counters));
}

/*
 * Whether samples wait in the spool (the ring was full).
 */

int
CprofSamplerSpoolEmpty(
    CprofSampler *sPtr)
{
    CprofSpool *spPtr = sPtr->spoolPtr;

    return spPtr == NULL
	    || __atomic_load_n(&spPtr->used, __ATOMIC_ACQUIRE)
		<= spPtr->takeOffset;
}
