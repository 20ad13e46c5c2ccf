/*
 * hookmem.c --
 *
 *	The memory hooks: malloc, calloc, realloc, free, posix_memalign,
 *	aligned_alloc, memalign and valloc of every loaded module are
 *	redirected here (hookgot.c), as are dlopen, so that modules loaded
 *	later are patched too, and dlclose, so that the patches of a module
 *	unloaded are forgotten.
 *
 *	Every allocation is counted. A subset is sampled, chosen by bytes
 *	with a Poisson process of mean 'rate' bytes: each thread counts down
 *	the bytes to its next sampling point, drawn from an exponential
 *	distribution, so that an allocation of s bytes is sampled with
 *	probability 1 - exp(-s/rate) and the aggregation (drainmemory.c) weighs
 *	it by the inverse to get unbiased totals. A sampled allocation
 *	records its native stack (a cached walk of the call frame
 *	information, unwindcfi.c; libgcc's unwinder, as the sampler's, where
 *	that cannot go) and the calling thread's Tcl frames
 *	(CprofCopyTclFrames), and is kept in a table of live sampled blocks,
 *	keyed by address, until it is freed. What happens to sampled blocks
 *	(allocated, freed) is queued in order for the drain in normal
 *	context of the profiled thread.
 *
 *	The fast paths (unsampled allocations, frees of unsampled blocks)
 *	take no lock, call nothing but the allocator (a tail call) and write
 *	only the calling thread's state: for an allocation, a compare of the
 *	thread's 'armed' word with the run's generation, the countdown and
 *	a count (11 instructions on x86-64); for a free, a count and one
 *	bit of a filter of 16 Ki bits (2 KiB: set where a live sampled
 *	block's address falls; a finer filter of 128 Ki bits is read when
 *	it is set) that tells almost every free of an unsampled block apart
 *	without touching the table (16). Per-thread state is in
 *	initial-exec TLS. The sampled path and frees that pass the filter
 *	take mutexes.
 *
 *	The guard: while it is set in a thread, that thread's allocations
 *	are not counted; the sampled path sets it (the unwinder, a record's
 *	memory), and so does the profiler's own work (CprofMemGuard), so
 *	that the profiler's own allocations never are.
 *
 *	Fork: the mutexes are taken around fork (pthread_atfork), so that a
 *	child never finds them held by a thread it does not have.
 *
 *	Memory, none of it from the program's heap: a record per live (or
 *	queued) sampled block (its stack, about 90 bytes plus 16 per native
 *	and 32 per Tcl frame, from a pool of size classes), the table (16
 *	bytes a slot, 4 Ki slots at first, doubled when three quarters full,
 *	at most 2^18), the filters (18 KiB of bits, 288 KiB of counts
 *	touched only by sampled blocks), the unwinder's rules (64 KiB)
 *	and the queue of events. Blocks sampled when the table holds
 *	196,608 are counted ('untracked') and add to allocations only.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _GNU_SOURCE
#   define _GNU_SOURCE
#endif
#include "tclcprofInt.h"
#include "hookgot.h"
#include "unwindcfi.h"
#include <dlfcn.h>
#include <link.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LIKELY(x)	__builtin_expect(!!(x), 1)
#define UNLIKELY(x)	__builtin_expect(!!(x), 0)

/*
 * The real functions, found once (dlsym of the default scope: an
 * allocator preloaded by the program is the one called).
 */

typedef void *(*MallocProc)(size_t);
typedef void (*FreeProc)(void *);
typedef void *(*CallocProc)(size_t, size_t);
typedef void *(*ReallocProc)(void *, size_t);
typedef int (*PosixMemalignProc)(void **, size_t, size_t);
typedef void *(*AlignedProc)(size_t, size_t);
typedef void *(*DlopenProc)(const char *, int);
typedef int (*DlcloseProc)(void *);

static struct {
    MallocProc malloc;
    FreeProc free;
    CallocProc calloc;
    ReallocProc realloc;
    PosixMemalignProc posixMemalign;
    AlignedProc alignedAlloc;
    AlignedProc memalign;
    MallocProc valloc;
    DlopenProc dlopen;
    DlcloseProc dlclose;
} real;

/*
 * Per-thread state (initial-exec TLS: no allocation, no lock to reach
 * it). The fast path of an allocation reads 'armed' and 'countdown' and
 * writes 'allocs' and 'countdown'; that of a free writes 'frees'.
 *
 * 'armed' equals the global allocGen exactly when this thread counts
 * allocations on the fast path: its countdown belongs to the current run
 * and its guard is down. Anything else (no run, paused, a new run the
 * thread has not seen yet, the guard up, a fresh thread) sends the
 * allocation to the slow path, which sorts it out.
 *
 * Bytes allocated are not added up on the fast path: they are what the
 * countdown went down by since the last flush ('base' - 'countdown').
 *
 * Frees are counted whatever the state (one increment, no test); the
 * guard puts the count back as it was (savedFrees) when it goes down, so
 * that the profiler's own frees are not counted, and a thread's counts
 * are reset when it first allocates in a new run.
 */

typedef struct MemThread {
    unsigned armed;		/* allocGen when counting; see above. */
    unsigned gen;		/* The run the countdown belongs to. */
    int64_t countdown;		/* Bytes to the next sampling point, >= 0
				 * while armed. */
    uint64_t allocs;		/* Allocations not yet added to the totals. */
    uint64_t frees;		/* Frees not yet added to the totals. */
    int64_t base;		/* The countdown at the last flush. */
    uint64_t savedFrees;	/* 'frees' when the guard went up. */
    uint64_t rng;		/* xorshift64* state; 0: not seeded. */
    int guard;			/* Not counted: the profiler's own. */
} MemThread;

static __thread MemThread tlsMem __attribute__((tls_model("initial-exec")));

/*
 * Process-wide state. 'active', 'allocGen' and 'gen' are read by the
 * hooks without a lock; the rest is under memMutex.
 *
 * allocGen is NOT_COUNTING while allocations are not counted (no run, or
 * paused), else the run's generation (even, from 2 on, a new one at each
 * start), so that no 'armed' of a thread (0 fresh, GUARDED, or an older
 * generation) matches it but that of a thread set up for this run.
 */

#define NOT_COUNTING	1u
#define GUARDED		3u

#define TABLE_MIN_BITS	12	/* The table's first size... */
#define TABLE_MAX_BITS	18	/* ...and its largest. */
#define TABLE_MAX	((1u << TABLE_MAX_BITS) - (1u << TABLE_MAX_BITS) / 4)
				/* Live sampled blocks tracked at most. */
#define FILTER_BITS	17
#define COARSE_SHIFT	3	/* Fine bits a coarse bit covers: 8. */
#define COARSE_SIZE	(FILTER_SIZE >> COARSE_SHIFT)
#define FILTER_SIZE	(1u << FILTER_BITS)
#define FILTER_SATURATED 0xffff	/* A count that stays (its bit set). */

typedef struct TableSlot {
    uintptr_t addr;		/* 0: empty. */
    CprofMemRec *recPtr;
} TableSlot;

static volatile int active;	/* 0 off, 1 on, 2 paused (frees only). */
static volatile unsigned allocGen = NOT_COUNTING;
static volatile unsigned gen;	/* The current (or last) run's. */
static int64_t rateBytes = 512 * 1024;
static volatile int *needDrainPtr;

static pthread_mutex_t memMutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t patchMutex = PTHREAD_MUTEX_INITIALIZER;

static TableSlot *table;	/* 1 << tableBits slots, mmap'd; grows.
				 * Both set under memMutex, atomically once
				 * hooks run: PrefetchSampled reads them
				 * without it. */
static int tableBits;
static uint32_t tableCount;
static uint64_t coarse[COARSE_SIZE / 64];
static uint64_t filter[FILTER_SIZE / 64];
				/* The filter, two bitmaps: a bit is set
				 * while a live sampled block's index falls
				 * on it (FilterIndex; a coarse bit covers
				 * eight fine ones). A free reads the coarse
				 * one, 2 KiB, and the fine one, 16 KiB,
				 * only when the coarse bit is set: what
				 * every free reads has to stay in the cache
				 * of a program busy with its own data (the
				 * 128 KiB of counters every free read
				 * before made HookFree seven times as slow
				 * as HookMalloc on bench/memory.tcl's event
				 * queue). */
static uint16_t coarseCounts[COARSE_SIZE];
static uint16_t filterCounts[FILTER_SIZE];
				/* How many fall on each bit; under
				 * memMutex, never read by a free. */

static CprofMemEvent *events;	/* Queued for the drain, in order (mmap'd,
				 * see EventsAlloc). */
static int numEvents, capEvents;
static CprofMemEvent *spareEvents;
				/* A queue given back by the drain. */

static CprofMemTotals totals;	/* Under memMutex. */
static uintptr_t ownLo, ownHi;	/* tclcprof's own text. */
static int atforkDone;
static volatile unsigned epoch;	/* Changes at each clear. */

static void		RecordAlloc(MemThread *tPtr, void *ptr, size_t size);

/*
 *----------------------------------------------------------------------
 *
 * Hashing, the table, the filter --
 *
 *----------------------------------------------------------------------
 */

/*
 * A block's bit: its address in 16-byte units, folded (the bits above
 * FILTER_BITS xor'ed in), not hashed: neighbouring blocks, which a program
 * tends to free together, share a word of the filter and its cache line.
 */

static inline uint32_t
FilterIndex(
    uintptr_t addr)
{
    return (uint32_t) (((addr >> 4) ^ (addr >> (4 + FILTER_BITS)))
	    & (FILTER_SIZE - 1));
}

/*
 * The filter: bits set and cleared under memMutex (atomically, as frees
 * read them without it), before the block's address is given to the
 * program and after it is back. A count that reaches FILTER_SATURATED
 * stays there, its bit set: frees of blocks falling on it take the slow
 * path, nothing is missed.
 */

static inline void
BitAdd(
    uint64_t *bits,
    uint16_t *counts,
    uint32_t h)
{
    if (counts[h] == FILTER_SATURATED) {
	return;
    }
    if (counts[h]++ == 0) {
	__atomic_or_fetch(&bits[h >> 6], (uint64_t) 1 << (h & 63),
		__ATOMIC_RELEASE);
    }
}

static inline void
BitRemove(
    uint64_t *bits,
    uint16_t *counts,
    uint32_t h)
{
    if (counts[h] == FILTER_SATURATED) {
	return;
    }
    if (--counts[h] == 0) {
	__atomic_and_fetch(&bits[h >> 6], ~((uint64_t) 1 << (h & 63)),
		__ATOMIC_RELEASE);
    }
}

static inline int
BitHas(
    const uint64_t *bits,
    uint32_t h)
{
    return (int) ((__atomic_load_n(&bits[h >> 6], __ATOMIC_ACQUIRE)
	    >> (h & 63)) & 1);
}

static inline void
FilterAdd(
    uintptr_t addr)
{
    uint32_t h = FilterIndex(addr);

    BitAdd(coarse, coarseCounts, h >> COARSE_SHIFT);
    BitAdd(filter, filterCounts, h);
}

static inline void
FilterRemove(
    uintptr_t addr)
{
    uint32_t h = FilterIndex(addr);

    BitRemove(filter, filterCounts, h);
    BitRemove(coarse, coarseCounts, h >> COARSE_SHIFT);
}

static inline int
FilterHas(
    uintptr_t addr)
{
    /*
     * FilterIndex(addr) >> COARSE_SHIFT, worked out so that the free's
     * fast path does not mask what the word index and bt drop anyway.
     */

    uintptr_t c = (addr >> (4 + COARSE_SHIFT))
	    ^ (addr >> (4 + FILTER_BITS + COARSE_SHIFT));

    if (LIKELY(((__atomic_load_n(&coarse[(c >> 6) & (COARSE_SIZE / 64 - 1)],
	    __ATOMIC_ACQUIRE) >> (c & 63)) & 1) == 0)) {
	return 0;
    }
    return BitHas(filter, FilterIndex(addr));
}

static inline uint32_t
AddrHash(
    uintptr_t addr,
    int bits)
{
    return (uint32_t) (((uint64_t) addr * 0x9e3779b97f4a7c15ull)
	    >> (64 - bits));
}

/*
 *----------------------------------------------------------------------
 *
 * The profiler's own memory --
 *
 *	Nothing the hooks keep comes from the program's heap: a record
 *	allocated there between the program's blocks would change how the
 *	program's allocations are served (what the heap merges, splits and
 *	searches: measured at up to 7% more instructions in glibc's malloc
 *	on a churning workload) and would be counted as the program's
 *	memory by its own tools. Records come from a pool of size classes
 *	(128 bytes to 8 KiB, free lists, carved from 256 KiB mappings kept
 *	for reuse; at a clear with no record left, 4 MiB of them are kept,
 *	the rest given back), the queue of events and the table from
 *	mappings of their own. Under memMutex,
 *	but the pool, which has poolMutex.
 *
 *----------------------------------------------------------------------
 */

#define POOL_CLASSES	7
#define POOL_CHUNK	(256 * 1024)
#define POOL_KEEP	16	/* Chunks kept from one run to the next. */

static struct {
    void *freeList[POOL_CLASSES];
    char *next, *end;		/* The chunk being carved. */
    void *chunks;		/* Every chunk in use, linked through its
				 * first word (128 bytes reserved for it). */
    void *spare;		/* Chunks kept for reuse, not carved yet. */
    uint64_t mapped;		/* Bytes mapped for records. */
    uint64_t live;		/* Records allocated and not freed. */
} pool;
static pthread_mutex_t poolMutex = PTHREAD_MUTEX_INITIALIZER;

static size_t
RecBytes(
    const CprofMemRec *recPtr)
{
    return recPtr->shared ? sizeof(CprofMemRec) : sizeof(CprofMemRec)
	    + 2 * recPtr->nNative * sizeof(uintptr_t)
	    + recPtr->nTcl * sizeof(CprofTclRef);
}

static int
PoolClass(
    size_t bytes)
{
    int k = 0;

    while (k < POOL_CLASSES && ((size_t) 128 << k) < bytes) {
	k++;
    }
    return k;
}

static void *
PoolAlloc(
    size_t bytes,
    int live)
{
    int k = PoolClass(bytes);
    size_t size = (size_t) 128 << k;
    void *ptr;

    if (k == POOL_CLASSES) {
	return NULL;
    }
    pthread_mutex_lock(&poolMutex);
    ptr = pool.freeList[k];
    if (ptr != NULL) {
	pool.freeList[k] = *(void **) ptr;
    } else {
	if (pool.next == NULL || (size_t) (pool.end - pool.next) < size) {
	    void *mem = pool.spare;

	    if (mem != NULL) {
		pool.spare = *(void **) mem;
	    } else {
		mem = mmap(NULL, POOL_CHUNK, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED) {
		    pthread_mutex_unlock(&poolMutex);
		    return NULL;
		}
		pool.mapped += POOL_CHUNK;
	    }
	    *(void **) mem = pool.chunks;
	    pool.chunks = mem;
	    pool.next = (char *) mem + 128;
	    pool.end = (char *) mem + POOL_CHUNK;
	}
	ptr = pool.next;
	pool.next += size;
    }
    pool.live += live;
    pthread_mutex_unlock(&poolMutex);
    return ptr;
}

/*
 * A record: freed one by one (RecFree), counted live, so that the pool
 * is given back only when none is left.
 */

static inline void *
RecAlloc(
    size_t bytes)
{
    return PoolAlloc(bytes, 1);
}

static void
RecFree(
    CprofMemRec *recPtr)
{
    int k = PoolClass(RecBytes(recPtr));

    pthread_mutex_lock(&poolMutex);
    *(void **) recPtr = pool.freeList[k];
    pool.freeList[k] = recPtr;
    pool.live--;
    pthread_mutex_unlock(&poolMutex);
}

/*
 *----------------------------------------------------------------------
 *
 * Shared stacks --
 *
 *	The stacks of sampled allocations, each kept once: a program
 *	allocates from a few places, and a record that copied its stack
 *	(some 600 bytes for a Tcl program: return addresses, CFAs, Tcl
 *	frames) wrote ten cache lines at each sample, to be read again by
 *	the drain, pushing as many of the program's out of the cache, and
 *	held them while its block lived. A record now points into the
 *	stack it shares with every sample of the same return addresses,
 *	CFAs, Tcl frames and flags (one line of its own, 128 bytes of the
 *	pool). Stacks are found by hash in STACK_BUCKETS chains, under
 *	memMutex; they come from the pool but are not counted live: they go
 *	when the pool is given back (a clear with no record left), and the
 *	chains are emptied at each clear, so that a run never finds a stack
 *	of the last one (records of an older epoch are never read). Past
 *	STACK_MAX stacks, in a run whose samples are all different (deep
 *	recursion, say, where CFAs differ), a record keeps its own copy as
 *	it used to.
 *
 *----------------------------------------------------------------------
 */

#define STACK_BUCKETS	16384
#define STACK_MAX	65536

typedef struct MemStack {
    struct MemStack *next;	/* In its bucket. */
    uint64_t hash;
    uint16_t nNative, nTcl;
    uint32_t flags;
    int32_t labels;		/* The set of labels in effect (cmdlabels.c). */
    uint32_t unused;
    /* uintptr_t ip[nNative], cfa[nNative]; CprofTclRef tcl[nTcl]. */
} MemStack;

static MemStack *stackBuckets[STACK_BUCKETS];
static uint32_t numStacks;	/* Both under memMutex. */
static uint32_t stackMax = STACK_MAX;
				/* debug memstacks (tests). */

#define STACK_IP(sPtr)	((uintptr_t *) ((sPtr) + 1))
#define STACK_CFA(sPtr)	(STACK_IP(sPtr) + (sPtr)->nNative)
#define STACK_TCL(sPtr)	((CprofTclRef *) (STACK_CFA(sPtr) + (sPtr)->nNative))

static inline uint64_t
Mix(
    uint64_t h,
    uint64_t w)
{
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 32);
}

static uint64_t
StackHash(
    const uintptr_t *ip,
    const uintptr_t *cfa,
    int n,
    const CprofTclRef *tcl,
    int nTcl,
    uint32_t flags,
    int32_t labels)
{
    const unsigned char *bytes = (const unsigned char *) tcl;
    uint64_t h = Mix(Mix(((uint64_t) n << 48) | ((uint64_t) nTcl << 32),
	    flags), (uint64_t) (uint32_t) labels);
    size_t i;

    for (i = 0; i < (size_t) n; i++) {
	h = Mix(Mix(h, ip[i]), cfa[i]);
    }
    for (i = 0; i + 8 <= nTcl * sizeof(CprofTclRef); i += 8) {
	uint64_t w;

	memcpy(&w, bytes + i, 8);
	h = Mix(h, w);
    }
    return h;
}

/*
 * The shared stack of these frames, made if there is none (NULL when the
 * pool is out of memory). Under memMutex.
 */

static MemStack *
StackGet(
    uint64_t hash,
    const uintptr_t *ip,
    const uintptr_t *cfa,
    int n,
    const CprofTclRef *tcl,
    int nTcl,
    uint32_t flags,
    int32_t labels)
{
    MemStack **headPtr = &stackBuckets[hash & (STACK_BUCKETS - 1)];
    MemStack *sPtr;
    size_t bytes;

    for (sPtr = *headPtr; sPtr != NULL; sPtr = sPtr->next) {
	if (sPtr->hash == hash && sPtr->nNative == n && sPtr->nTcl == nTcl
		&& sPtr->flags == flags && sPtr->labels == labels
		&& memcmp(STACK_IP(sPtr), ip, n * sizeof(uintptr_t)) == 0
		&& memcmp(STACK_CFA(sPtr), cfa, n * sizeof(uintptr_t)) == 0
		&& memcmp(STACK_TCL(sPtr), tcl,
			nTcl * sizeof(CprofTclRef)) == 0) {
	    return sPtr;
	}
    }
    bytes = sizeof(MemStack) + 2 * n * sizeof(uintptr_t)
	    + nTcl * sizeof(CprofTclRef);
    sPtr = (MemStack *) PoolAlloc(bytes, 0);
    if (sPtr == NULL) {
	return NULL;
    }
    sPtr->hash = hash;
    sPtr->nNative = (uint16_t) n;
    sPtr->nTcl = (uint16_t) nTcl;
    sPtr->flags = flags;
    sPtr->labels = labels;
    memcpy(STACK_IP(sPtr), ip, n * sizeof(uintptr_t));
    memcpy(STACK_CFA(sPtr), cfa, n * sizeof(uintptr_t));
    memcpy(STACK_TCL(sPtr), tcl, nTcl * sizeof(CprofTclRef));
    sPtr->next = *headPtr;
    *headPtr = sPtr;
    __atomic_store_n(&numStacks, numStacks + 1, __ATOMIC_RELAXED);
    return sPtr;
}

/*
 * Test hook: the shared stacks now and their most; a max >= 0 changes it.
 */

void
CprofMemStackStats(
    int max,
    uint32_t counts[2])
{
    pthread_mutex_lock(&memMutex);
    if (max >= 0) {
	__atomic_store_n(&stackMax, (uint32_t) max, __ATOMIC_RELAXED);
    }
    counts[0] = numStacks;
    counts[1] = stackMax;
    pthread_mutex_unlock(&memMutex);
}

/*
 * With no record left (at a clear), the pool starts afresh: POOL_KEEP
 * chunks are kept for the next run (1, 4 MiB: a run started for each
 * test of a suite finds its records' pages in memory), the others given
 * back.
 */

static void
PoolRelease(void)
{
    pthread_mutex_lock(&poolMutex);
    if (pool.live == 0) {
	void *chunk = pool.chunks, *keep = pool.spare;
	uint64_t kept = 0;

	for (chunk = keep; chunk != NULL; chunk = *(void **) chunk) {
	    kept++;
	}
	chunk = pool.chunks;
	while (chunk != NULL) {
	    void *next = *(void **) chunk;

	    if (kept < POOL_KEEP) {
		*(void **) chunk = keep;
		keep = chunk;
		kept++;
	    } else {
		munmap(chunk, POOL_CHUNK);
	    }
	    chunk = next;
	}
	memset(&pool, 0, sizeof(pool));
	pool.spare = keep;
	pool.mapped = kept * POOL_CHUNK;
    }
    pthread_mutex_unlock(&poolMutex);
}

/*
 * A queue of events: mapped, its capacity in the slot before it.
 */

static CprofMemEvent *
EventsAlloc(
    int cap)
{
    void *mem = mmap(NULL, (cap + 1) * sizeof(CprofMemEvent),
	    PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CprofMemEvent *ev;

    if (mem == MAP_FAILED) {
	return NULL;
    }
    ev = (CprofMemEvent *) mem;
    ev[0].isFree = cap;
    return ev + 1;
}

static int
EventsCap(
    CprofMemEvent *ev)
{
    return ev[-1].isFree;
}

static void
EventsRelease(
    CprofMemEvent *ev)
{
    if (ev != NULL) {
	munmap(ev - 1, (EventsCap(ev) + 1) * sizeof(CprofMemEvent));
    }
}

/*
 * A mapping for a table of 1 << bits slots (zeroed), its pages there
 * from the start: a slot is where its address hashes to, so the first
 * samples of a run each met a page not in memory yet, a fault taken in
 * the program's allocation (some 600 cycles a sample on a 30 ms run,
 * rdtsc; the table of the first size, 16 pages, is kept from one run to
 * the next for the same reason).
 */

static TableSlot *
TableMap(
    int bits)
{
    void *mem = mmap(NULL, ((size_t) 1 << bits) * sizeof(TableSlot),
	    PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
	    -1, 0);

    return mem == MAP_FAILED ? NULL : (TableSlot *) mem;
}

static void
TablePut(
    TableSlot *slots,
    int bits,
    uintptr_t addr,
    CprofMemRec *recPtr)
{
    uint32_t mask = (1u << bits) - 1, i;

    for (i = AddrHash(addr, bits); slots[i].addr != 0; i = (i + 1) & mask) {
	/* Linear probing. */
    }
    slots[i].addr = addr;
    slots[i].recPtr = recPtr;
}

static int
TableInsert(
    uintptr_t addr,
    CprofMemRec *recPtr)
{
    if (table == NULL || tableCount >= TABLE_MAX) {
	return 0;
    }
    if (tableCount >= (3u << tableBits) / 4) {
	/*
	 * Three quarters full: twice the size (the old slots moved over,
	 * the old mapping given back).
	 */

	TableSlot *newPtr = TableMap(tableBits + 1);
	uint32_t i;

	if (newPtr == NULL) {
	    return 0;
	}
	for (i = 0; i < (1u << tableBits); i++) {
	    if (table[i].addr != 0) {
		TablePut(newPtr, tableBits + 1, table[i].addr,
			table[i].recPtr);
	    }
	}
	munmap(table, ((size_t) 1 << tableBits) * sizeof(TableSlot));
	__atomic_store_n(&table, newPtr, __ATOMIC_RELAXED);
	__atomic_store_n(&tableBits, tableBits + 1, __ATOMIC_RELAXED);
    }
    TablePut(table, tableBits, addr, recPtr);
    tableCount++;
    FilterAdd(addr);
    return 1;
}

/*
 * Remove and return the record of a block, or NULL. Backward-shift
 * deletion keeps probe chains whole without tombstones.
 */

static CprofMemRec *
TableRemove(
    uintptr_t addr)
{
    uint32_t i, j, k, mask = (1u << tableBits) - 1;
    CprofMemRec *recPtr;

    if (table == NULL || tableCount == 0) {
	return NULL;
    }
    for (i = AddrHash(addr, tableBits); table[i].addr != addr;
	    i = (i + 1) & mask) {
	if (table[i].addr == 0) {
	    return NULL;
	}
    }
    recPtr = table[i].recPtr;
    for (j = (i + 1) & mask; table[j].addr != 0; j = (j + 1) & mask) {
	k = AddrHash(table[j].addr, tableBits);

	/*
	 * Move j into the hole at i unless its home k lies cyclically in
	 * (i, j].
	 */

	if ((i <= j) ? (i < k && k <= j) : (i < k || k <= j)) {
	    continue;
	}
	table[i] = table[j];
	i = j;
    }
    table[i].addr = 0;
    table[i].recPtr = NULL;
    tableCount--;
    FilterRemove(addr);
    return recPtr;
}

static void
PushEvent(
    CprofMemRec *recPtr,
    int isFree)
{
    if (numEvents == capEvents) {
	int cap = capEvents ? 2 * capEvents : 4095;
	CprofMemEvent *newPtr;

	if (capEvents == 0 && spareEvents != NULL) {
	    newPtr = spareEvents;
	    spareEvents = NULL;
	    cap = EventsCap(newPtr);
	} else {
	    newPtr = EventsAlloc(cap);
	}
	if (newPtr == NULL) {
	    /*
	     * No memory for the queue: the block is treated as never
	     * sampled (its record goes).
	     */

	    totals.lostEvents++;
	    if (!isFree && recPtr->tracked) {
		TableRemove(recPtr->addr);
	    }
	    totals.recordBytes -= RecBytes(recPtr);
	    RecFree(recPtr);
	    return;
	}
	if (events != NULL) {
	    memcpy(newPtr, events, numEvents * sizeof(CprofMemEvent));
	    EventsRelease(events);
	}
	events = newPtr;
	capEvents = cap;
    }
    events[numEvents].recPtr = recPtr;
    events[numEvents].isFree = isFree;
    events[numEvents].timeNs = CprofClockNs(CLOCK_MONOTONIC);
    numEvents++;
    if (numEvents >= 256 && needDrainPtr != NULL) {
	*needDrainPtr = 1;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * The sampled path --
 *
 *----------------------------------------------------------------------
 */

static inline uint64_t
NextRandom(
    MemThread *tPtr)
{
    uint64_t x = tPtr->rng;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    tPtr->rng = x;
    return x * 0x2545f4914f6cdd1dull;
}

/*
 * Bytes to the next sampling point: exponential, mean rateBytes.
 */

static int64_t
Draw(
    MemThread *tPtr)
{
    double u = ((NextRandom(tPtr) >> 11) + 1) * (1.0 / 9007199254740993.0);
    double d = -log(u) * (double) rateBytes;

    return d < 1 ? 1 : (d > 4e18 ? (int64_t) 4e18 : (int64_t) d);
}

/*
 * The guard, up and down (it nests). While it is up the thread's
 * allocations take the slow path, which passes them through uncounted,
 * and its frees are put back at the end.
 */

static inline void
GuardUp(
    MemThread *tPtr)
{
    if (tPtr->guard++ == 0) {
	tPtr->savedFrees = tPtr->frees;
	tPtr->armed = GUARDED;
    }
}

static inline void
GuardDown(
    MemThread *tPtr)
{
    if (--tPtr->guard == 0) {
	tPtr->frees = tPtr->savedFrees;
	tPtr->armed = tPtr->gen;
    }
}

/*
 * Add a thread's counts to the totals (with its guard up).
 */

static void
FlushCounts(
    MemThread *tPtr)
{
    __atomic_add_fetch(&totals.allocs, tPtr->allocs, __ATOMIC_RELAXED);
    __atomic_add_fetch(&totals.allocBytes,
	    (uint64_t) (tPtr->base - tPtr->countdown), __ATOMIC_RELAXED);
    __atomic_add_fetch(&totals.frees, tPtr->savedFrees, __ATOMIC_RELAXED);
    tPtr->allocs = tPtr->savedFrees = 0;
    tPtr->base = tPtr->countdown;
}

/*
 * A thread's first allocation in a run (or its first ever): counts from
 * before are dropped, a fresh countdown drawn.
 */

static void
InitThread(
    MemThread *tPtr,
    unsigned g)
{
    if (tPtr->rng == 0) {
	tPtr->rng = ((uint64_t) syscall(SYS_gettid) << 32)
		^ CprofClockNs(CLOCK_MONOTONIC) ^ (uintptr_t) tPtr;
	if (tPtr->rng == 0) {
	    tPtr->rng = 1;
	}
    }
    tPtr->gen = g;
    tPtr->allocs = tPtr->frees = tPtr->savedFrees = 0;
    tPtr->countdown = tPtr->base = Draw(tPtr);
    if (tPtr->guard == 0) {
	tPtr->armed = g;
    }
}

/*
 * The slow path's decision for an allocation of 'size' bytes, made
 * before the allocator is called: 0 not counted (no run, paused, the
 * guard up), 1 counted on the way (the countdown did not run out), 2 to
 * be sampled: Sampled counts it once it has succeeded.
 */

enum { NOT_COUNTED, COUNTED, SAMPLE };

static int __attribute__((noinline))
Decide(
    MemThread *tPtr,
    size_t size)
{
    unsigned g = __atomic_load_n(&allocGen, __ATOMIC_ACQUIRE);

    if (tPtr->guard != 0 || g == NOT_COUNTING) {
	return NOT_COUNTED;
    }
    if (tPtr->gen != g) {
	InitThread(tPtr, g);
    }
    if (size <= (uint64_t) tPtr->countdown) {
	tPtr->allocs++;
	tPtr->countdown -= (int64_t) size;
	return COUNTED;
    }
    return SAMPLE;
}

/*
 * An allocation that crossed a sampling point succeeded: count it, draw
 * the next point (the process is memoryless: the distance from the end
 * of the block to the next point is a fresh draw, however many points
 * the block spans, and its weight, drainmemory.c, accounts for those), record
 * it.
 */

static void __attribute__((noinline))
Sampled(
    MemThread *tPtr,
    void *ptr,
    size_t size)
{
    GuardUp(tPtr);
    tPtr->allocs++;
    tPtr->base += (size > (uint64_t) INT64_MAX / 2)
	    ? INT64_MAX / 2 : (int64_t) size;
    FlushCounts(tPtr);
    tPtr->countdown = tPtr->base = Draw(tPtr);
    RecordAlloc(tPtr, ptr, size);
    GuardDown(tPtr);
}

/*
 * The unwinder of sampled allocations: unwindcfi.c.
 */

/*
 * What a sampled block's record will touch, asked for before the walk so
 * that it comes in while the walk goes: the block's table slot, its
 * filter counts and bitmap word, the records' free lists. The lines are cold by the time
 * of the next sample in a program busy with its own data; met one after
 * the other, their misses made the record and the table insertion take
 * as long as the walk (perf, bench/memory.tcl's pass). Read without the
 * lock: a prefetch of a stale address does no harm.
 */

static int lastClass;		/* The last record's class and size: what */
static size_t lastBytes;	/* PrefetchSampled asks for (racy hints). */

static inline void
PrefetchSampled(
    uintptr_t addr)
{
    TableSlot *slots = __atomic_load_n(&table, __ATOMIC_RELAXED);
    int bits = __atomic_load_n(&tableBits, __ATOMIC_RELAXED), k;
    int hintClass = __atomic_load_n(&lastClass, __ATOMIC_RELAXED);
    size_t hintBytes = __atomic_load_n(&lastBytes, __ATOMIC_RELAXED);

    if (slots != NULL) {
	__builtin_prefetch(&slots[AddrHash(addr, bits)], 1);
    }
    __builtin_prefetch(&filterCounts[FilterIndex(addr)], 1);
    __builtin_prefetch(&filter[FilterIndex(addr) >> 6], 1);
    __builtin_prefetch(&coarseCounts[FilterIndex(addr) >> COARSE_SHIFT], 1);
    for (k = 0; k < POOL_CLASSES; k++) {
	char *head = __atomic_load_n(&pool.freeList[k], __ATOMIC_RELAXED);

	if (head != NULL) {
	    __builtin_prefetch(head, 1);
	    if (k == hintClass) {
		size_t off;

		/*
		 * The record is most likely of the last one's size class:
		 * all the lines its stack will be copied to.
		 */

		for (off = 64; off < hintBytes; off += 64) {
		    __builtin_prefetch(head + off, 1);
		}
	    }
	}
    }
}

static void
RecordAlloc(
    MemThread *tPtr,
    void *ptr,
    size_t size)
{
    uintptr_t ip[CPROF_NATIVE_MAX + 8], cfa[CPROF_NATIVE_MAX + 8];
    CprofTclRef tcl[CPROF_TCL_MAX];
    CprofSampler *sPtr = CprofSamplerCurrent();
    CprofMemRec *recPtr;
    uint32_t flags = 0;
    int32_t labels = 0;
    int n, skip = 0, nTcl = 0, share;
    size_t bytes;
    uint64_t hash = 0;

    (void) tPtr;
    PrefetchSampled((uintptr_t) ptr);
    n = CprofCfiWalk(ip, cfa, CPROF_NATIVE_MAX + 8, ownLo, ownHi);
    while (skip < n && ip[skip] >= ownLo && ip[skip] < ownHi) {
	skip++;			/* The hooks' own frames. */
    }
    n -= skip;
    if (n > CPROF_NATIVE_MAX) {
	n = CPROF_NATIVE_MAX;
	flags |= CPROF_SAMPLE_NATIVE_TRUNC;
    }
    if (sPtr != NULL) {
	nTcl = CprofCopyTclFrames(sPtr, tcl, CPROF_TCL_MAX, &flags, NULL);
	labels = CprofLabelsNow(sPtr->labelsPtr);
    }
    share = __atomic_load_n(&numStacks, __ATOMIC_RELAXED)
	    < __atomic_load_n(&stackMax, __ATOMIC_RELAXED);
    if (share) {
	hash = StackHash(ip + skip, cfa + skip, n, tcl, nTcl, flags, labels);
	__builtin_prefetch(&stackBuckets[hash & (STACK_BUCKETS - 1)]);
    }
    bytes = share ? sizeof(CprofMemRec) : sizeof(CprofMemRec)
	    + 2 * n * sizeof(uintptr_t) + nTcl * sizeof(CprofTclRef);
    __atomic_store_n(&lastClass, PoolClass(bytes), __ATOMIC_RELAXED);
    __atomic_store_n(&lastBytes, bytes, __ATOMIC_RELAXED);
    recPtr = (CprofMemRec *) RecAlloc(bytes);
    if (recPtr == NULL) {
	__atomic_add_fetch(&totals.lostEvents, 1, __ATOMIC_RELAXED);
	return;
    }
    memset(recPtr, 0, sizeof(CprofMemRec));
    recPtr->addr = (uintptr_t) ptr;
    recPtr->size = size;
    recPtr->node = -1;
    recPtr->epoch = __atomic_load_n(&epoch, __ATOMIC_ACQUIRE);
    recPtr->nNative = (uint16_t) n;
    recPtr->nTcl = (uint16_t) nTcl;
    recPtr->flags = flags;
    recPtr->labels = labels;
    if (!share) {
	recPtr->ip = (uintptr_t *) (recPtr + 1);
	recPtr->cfa = recPtr->ip + n;
	recPtr->tcl = (CprofTclRef *) (recPtr->cfa + n);
	memcpy(recPtr->ip, ip + skip, n * sizeof(uintptr_t));
	memcpy(recPtr->cfa, cfa + skip, n * sizeof(uintptr_t));
	memcpy(recPtr->tcl, tcl, nTcl * sizeof(CprofTclRef));
    }

    pthread_mutex_lock(&memMutex);
    if (share) {
	MemStack *stackPtr = StackGet(hash, ip + skip, cfa + skip, n, tcl,
		nTcl, flags, labels);

	if (stackPtr == NULL) {
	    pthread_mutex_unlock(&memMutex);
	    RecFree(recPtr);
	    __atomic_add_fetch(&totals.lostEvents, 1, __ATOMIC_RELAXED);
	    return;
	}
	recPtr->shared = 1;
	recPtr->ip = STACK_IP(stackPtr);
	recPtr->cfa = STACK_CFA(stackPtr);
	recPtr->tcl = STACK_TCL(stackPtr);
    }
    totals.samples++;
    totals.recordBytes += bytes;
    if (TableInsert(recPtr->addr, recPtr)) {
	recPtr->tracked = 1;
    } else {
	totals.untracked++;
    }
    PushEvent(recPtr, 0);
    pthread_mutex_unlock(&memMutex);
}

/*
 * A block that may be sampled is freed (or moved by realloc): its record
 * leaves the table (before the block's address can be reused).
 */

static inline CprofMemRec *
TakeSampled(
    void *ptr)
{
    CprofMemRec *recPtr;

    if (LIKELY(!FilterHas((uintptr_t) ptr))) {
	return NULL;
    }
    pthread_mutex_lock(&memMutex);
    recPtr = TableRemove((uintptr_t) ptr);
    pthread_mutex_unlock(&memMutex);
    return recPtr;
}

static void
QueueFree(
    CprofMemRec *recPtr)
{
    pthread_mutex_lock(&memMutex);
    totals.sampledFrees++;
    PushEvent(recPtr, 1);
    pthread_mutex_unlock(&memMutex);
}

/*
 *----------------------------------------------------------------------
 *
 * The hooks --
 *
 *	The fast path of an allocation: the thread is armed and the
 *	countdown covers the size: count, then tail-call the allocator.
 *	Anything else goes through Decide. The fast path of a free: count,
 *	and unless the filter says the block may be sampled, tail-call
 *	free. Neither takes a lock, calls anything but the allocator, or
 *	writes anything but the thread's own state.
 *
 *----------------------------------------------------------------------
 */

#define FAST_COUNT(tPtr, size) \
    (LIKELY((tPtr)->armed == allocGen \
	    && (size) <= (uint64_t) (tPtr)->countdown) \
	    ? ((tPtr)->allocs++, (tPtr)->countdown -= (int64_t) (size), 1) : 0)

static void * __attribute__((noinline))
MallocSlow(
    size_t size)
{
    MemThread *tPtr = &tlsMem;
    void *ptr;

    if (Decide(tPtr, size) != SAMPLE) {
	return real.malloc(size);
    }
    ptr = real.malloc(size);
    if (ptr != NULL) {
	Sampled(tPtr, ptr, size);
    }
    return ptr;
}

static void *
HookMalloc(
    size_t size)
{
    MemThread *tPtr = &tlsMem;

    if (FAST_COUNT(tPtr, size)) {
	return real.malloc(size);
    }
    return MallocSlow(size);
}

static void * __attribute__((noinline))
CallocSlow(
    size_t count,
    size_t size,
    size_t bytes)
{
    MemThread *tPtr = &tlsMem;
    void *ptr;

    if (Decide(tPtr, bytes) != SAMPLE) {
	return real.calloc(count, size);
    }
    ptr = real.calloc(count, size);
    if (ptr != NULL) {
	Sampled(tPtr, ptr, bytes);
    }
    return ptr;
}

static void *
HookCalloc(
    size_t count,
    size_t size)
{
    MemThread *tPtr = &tlsMem;
    size_t bytes;

    if (__builtin_mul_overflow(count, size, &bytes)) {
	return real.calloc(count, size);	/* Fails. */
    }
    if (FAST_COUNT(tPtr, bytes)) {
	return real.calloc(count, size);
    }
    return CallocSlow(count, size, bytes);
}

/*
 * A free that passed the filter: the block may be sampled; its record
 * leaves the table before the address can be reused.
 */

static void __attribute__((noinline))
FreeSlow(
    void *ptr)
{
    if (__atomic_load_n(&active, __ATOMIC_ACQUIRE) != 0) {
	CprofMemRec *recPtr;

	pthread_mutex_lock(&memMutex);
	recPtr = TableRemove((uintptr_t) ptr);
	if (recPtr != NULL) {
	    totals.sampledFrees++;
	    PushEvent(recPtr, 1);
	}
	pthread_mutex_unlock(&memMutex);
    }
    real.free(ptr);
}

static inline int
MaybeSampled(
    void *ptr)
{
    return FilterHas((uintptr_t) ptr);
}

static void
HookFree(
    void *ptr)
{
    if (ptr == NULL) {
	return;				/* free(NULL) does nothing. */
    }
    tlsMem.frees++;
    if (UNLIKELY(MaybeSampled(ptr))) {
	FreeSlow(ptr);
	return;
    }
    real.free(ptr);
}

static void *
HookRealloc(
    void *ptr,
    size_t size)
{
    MemThread *tPtr = &tlsMem;
    CprofMemRec *recPtr = NULL;
    void *newPtr;
    int how = NOT_COUNTED;

    if (__atomic_load_n(&active, __ATOMIC_ACQUIRE) == 0) {
	return real.realloc(ptr, size);
    }

    /*
     * A realloc is a free of the old block and an allocation of the new
     * one. The old block's record leaves the table first (its address is
     * free for reuse once realloc moves it); a failed realloc puts it
     * back, untouched, and takes back the count of the new block.
     */

    if (ptr != NULL && MaybeSampled(ptr)) {
	recPtr = TakeSampled(ptr);
    }
    if (size != 0) {
	how = FAST_COUNT(tPtr, size) ? COUNTED : Decide(tPtr, size);
    }
    newPtr = real.realloc(ptr, size);
    if (newPtr == NULL && size != 0) {
	if (how == COUNTED) {
	    tPtr->allocs--;
	    tPtr->countdown += (int64_t) size;
	}
	if (recPtr != NULL) {
	    pthread_mutex_lock(&memMutex);
	    if (!TableInsert(recPtr->addr, recPtr)) {
		recPtr->tracked = 0;
		totals.sampledFrees++;
		PushEvent(recPtr, 1);
	    }
	    pthread_mutex_unlock(&memMutex);
	}
	return NULL;
    }
    if (ptr != NULL) {
	tPtr->frees++;
	if (recPtr != NULL) {
	    QueueFree(recPtr);
	}
    }
    if (how == SAMPLE) {
	Sampled(tPtr, newPtr, size);
    }
    return newPtr;
}

/*
 * The aligned ones: not hot, one shape for all.
 */

static inline void
AfterAligned(
    MemThread *tPtr,
    int how,
    void *ptr,
    size_t size)
{
    if (ptr == NULL) {
	if (how == COUNTED) {
	    tPtr->allocs--;
	    tPtr->countdown += (int64_t) size;
	}
    } else if (how == SAMPLE) {
	Sampled(tPtr, ptr, size);
    }
}

static int
HookPosixMemalign(
    void **ptrPtr,
    size_t align,
    size_t size)
{
    MemThread *tPtr = &tlsMem;
    int how = FAST_COUNT(tPtr, size) ? COUNTED : Decide(tPtr, size);
    int code = real.posixMemalign(ptrPtr, align, size);

    AfterAligned(tPtr, how, code == 0 ? *ptrPtr : NULL, size);
    return code;
}

static void *
HookAlignedAlloc(
    size_t align,
    size_t size)
{
    MemThread *tPtr = &tlsMem;
    int how = FAST_COUNT(tPtr, size) ? COUNTED : Decide(tPtr, size);
    void *ptr = real.alignedAlloc(align, size);

    AfterAligned(tPtr, how, ptr, size);
    return ptr;
}

static void *
HookMemalign(
    size_t align,
    size_t size)
{
    MemThread *tPtr = &tlsMem;
    int how = FAST_COUNT(tPtr, size) ? COUNTED : Decide(tPtr, size);
    void *ptr = real.memalign(align, size);

    AfterAligned(tPtr, how, ptr, size);
    return ptr;
}

static void *
HookValloc(
    size_t size)
{
    MemThread *tPtr = &tlsMem;
    int how = FAST_COUNT(tPtr, size) ? COUNTED : Decide(tPtr, size);
    void *ptr = real.valloc(size);

    AfterAligned(tPtr, how, ptr, size);
    return ptr;
}

static const CprofGotTarget targets[] = {
    {"malloc", (void *) HookMalloc},
    {"calloc", (void *) HookCalloc},
    {"realloc", (void *) HookRealloc},
    {"free", (void *) HookFree},
    {"posix_memalign", (void *) HookPosixMemalign},
    {"aligned_alloc", (void *) HookAlignedAlloc},
    {"memalign", (void *) HookMemalign},
    {"valloc", (void *) HookValloc},
    {"dlopen", NULL},		/* Filled in below (defined after). */
    {"dlclose", NULL},
};

static CprofGotTarget hookTargets[sizeof(targets) / sizeof(targets[0])];

/*
 * Modules loaded while the hooks are in: patched as they come. Unloaded:
 * their records go (patchMutex keeps start, stop and other threads'
 * loads out meanwhile).
 */

static void *
HookDlopen(
    const char *file,
    int flags)
{
    void *handle = real.dlopen(file, flags);

    if (handle != NULL && active) {
	pthread_mutex_lock(&patchMutex);
	GuardUp(&tlsMem);
	if (active) {
	    int n = CprofGotPatch(hookTargets,
		    (int) (sizeof(hookTargets) / sizeof(hookTargets[0])));

	    pthread_mutex_lock(&memMutex);
	    totals.patchedLater += n;
	    totals.loads++;
	    pthread_mutex_unlock(&memMutex);
	}
	GuardDown(&tlsMem);
	pthread_mutex_unlock(&patchMutex);
    }
    return handle;
}

static int
HookDlclose(
    void *handle)
{
    int code;

    pthread_mutex_lock(&patchMutex);
    code = real.dlclose(handle);
    if (active) {
	GuardUp(&tlsMem);
	CprofGotForgetClosed();
	CprofCfiForget();
	GuardDown(&tlsMem);
    }
    pthread_mutex_unlock(&patchMutex);
    return code;
}

/*
 *----------------------------------------------------------------------
 *
 * Fork --
 *
 *----------------------------------------------------------------------
 */

static void
AtforkPrepare(void)
{
    pthread_mutex_lock(&patchMutex);
    pthread_mutex_lock(&memMutex);
    pthread_mutex_lock(&poolMutex);
    CprofCfiLock();
}

static void
AtforkRelease(void)
{
    CprofCfiUnlock();
    pthread_mutex_unlock(&poolMutex);
    pthread_mutex_unlock(&memMutex);
    pthread_mutex_unlock(&patchMutex);
}

/*
 *----------------------------------------------------------------------
 *
 * Setup --
 *
 *----------------------------------------------------------------------
 */

static int
FindOwnText(
    struct dl_phdr_info *info,
    size_t size,
    void *data)
{
    uintptr_t addr = (uintptr_t) data;
    int i;

    (void) size;
    for (i = 0; i < info->dlpi_phnum; i++) {
	const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
	uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

	if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)
		&& addr >= lo && addr < lo + ph->p_memsz) {
	    ownLo = lo;
	    ownHi = lo + ph->p_memsz;
	    return 1;
	}
    }
    return 0;
}

static int
FindReal(
    char *msg,
    size_t msgLen)
{
    if (real.malloc != NULL) {
	return 1;
    }
#define FIND(field, type, name) \
    if ((real.field = (type) dlsym(RTLD_DEFAULT, name)) == NULL) { \
	snprintf(msg, msgLen, "cannot find %s", name); \
	return 0; \
    }
    FIND(free, FreeProc, "free");
    FIND(calloc, CallocProc, "calloc");
    FIND(realloc, ReallocProc, "realloc");
    FIND(posixMemalign, PosixMemalignProc, "posix_memalign");
    FIND(alignedAlloc, AlignedProc, "aligned_alloc");
    FIND(memalign, AlignedProc, "memalign");
    FIND(valloc, MallocProc, "valloc");
    FIND(dlopen, DlopenProc, "dlopen");
    FIND(dlclose, DlcloseProc, "dlclose");
    FIND(malloc, MallocProc, "malloc");
#undef FIND
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofMemStart --
 *
 *	Start counting and sampling: 'rate' bytes between samples on
 *	average; '*drainPtr' is set when events wait for the drain. Patches
 *	every loaded module.
 *
 * Results:
 *	1, or 0 with a reason in msg.
 *
 *----------------------------------------------------------------------
 */

int
CprofMemStart(
    int64_t rate,
    volatile int *drainPtr,
    char *msg,
    size_t msgLen)
{
    int i, n;
    unsigned g;

    if (!CprofUnwindReady(msg, msgLen) || !FindReal(msg, msgLen)) {
	return 0;
    }
    pthread_mutex_lock(&patchMutex);
    if (!atforkDone) {
	pthread_atfork(AtforkPrepare, AtforkRelease, AtforkRelease);
	atforkDone = 1;
    }
    if (ownLo == 0) {
	dl_iterate_phdr(FindOwnText, (void *) (uintptr_t) CprofMemStart);
    }
    CprofCfiInit();
    CprofCfiRenew();
    CprofMemClear();
    if (table == NULL) {
	table = TableMap(TABLE_MIN_BITS);
	if (table == NULL) {
	    pthread_mutex_unlock(&patchMutex);
	    snprintf(msg, msgLen, "cannot map the table of sampled blocks");
	    return 0;
	}
	tableBits = TABLE_MIN_BITS;
    }
    pthread_mutex_lock(&memMutex);
    memset(&totals, 0, sizeof(totals));
    rateBytes = rate;
    needDrainPtr = drainPtr;
    pthread_mutex_unlock(&memMutex);

    /*
     * A new generation (even, never 0: a fresh thread's 'armed'), the
     * calling thread set up for it; the others are at their next
     * allocation (Decide).
     */

    g = __atomic_add_fetch(&gen, 2, __ATOMIC_RELEASE);
    if (g == 0) {
	g = __atomic_add_fetch(&gen, 2, __ATOMIC_RELEASE);
    }
    GuardUp(&tlsMem);
    InitThread(&tlsMem, g);
    __atomic_store_n(&active, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&allocGen, g, __ATOMIC_RELEASE);

    for (i = 0; i < (int) (sizeof(targets) / sizeof(targets[0])); i++) {
	hookTargets[i] = targets[i];
    }
    hookTargets[8].hook = (void *) HookDlopen;
    hookTargets[9].hook = (void *) HookDlclose;
    n = CprofGotPatch(hookTargets,
	    (int) (sizeof(hookTargets) / sizeof(hookTargets[0])));
    GuardDown(&tlsMem);
    pthread_mutex_lock(&memMutex);
    totals.patched = n;
    pthread_mutex_unlock(&memMutex);
    pthread_mutex_unlock(&patchMutex);
    return 1;
}

/*
 * Pause: active 2, frees only.
 */

void
CprofMemPause(
    int paused)
{
    if (__atomic_load_n(&active, __ATOMIC_ACQUIRE) != 0) {
	__atomic_store_n(&active, paused ? 2 : 1, __ATOMIC_RELEASE);
	__atomic_store_n(&allocGen, paused ? NOT_COUNTING
		: __atomic_load_n(&gen, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
    }
}

/*
 * Stop: the entries back, the hooks inert (a call already inside one
 * finishes as a plain call). Counts of the calling thread are added to
 * the totals; other threads' last counts (less than one sampling
 * interval each) are not.
 */

void
CprofMemStop(void)
{
    pthread_mutex_lock(&patchMutex);
    GuardUp(&tlsMem);
    if (tlsMem.gen == __atomic_load_n(&gen, __ATOMIC_ACQUIRE)) {
	FlushCounts(&tlsMem);
    }
    __atomic_store_n(&allocGen, NOT_COUNTING, __ATOMIC_RELEASE);
    __atomic_store_n(&active, 0, __ATOMIC_RELEASE);
    CprofGotRestore();
    GuardDown(&tlsMem);
    pthread_mutex_lock(&memMutex);
    needDrainPtr = NULL;
    pthread_mutex_unlock(&memMutex);
    pthread_mutex_unlock(&patchMutex);
}

/*
 * The process exits while a run hooks (the library is never unmapped
 * before: hookgot.c pins it): the entries go back, for the code that
 * runs after this library's destructors. Not when another thread is in
 * the middle of patching.
 */

static void __attribute__((destructor))
MemAtExit(void)
{
    if (__atomic_load_n(&active, __ATOMIC_ACQUIRE) != 0
	    && pthread_mutex_trylock(&patchMutex) == 0) {
	__atomic_store_n(&allocGen, NOT_COUNTING, __ATOMIC_RELEASE);
	__atomic_store_n(&active, 0, __ATOMIC_RELEASE);
	CprofGotRestore();
	pthread_mutex_unlock(&patchMutex);
    }
}

/*
 * Drop every record: live blocks' and queued events'. Blocks allocated
 * before are from then on unknown, and their frees ignored.
 */

void
CprofMemClear(void)
{
    int j;

    GuardUp(&tlsMem);
    pthread_mutex_lock(&memMutex);
    for (j = 0; j < numEvents; j++) {
	CprofMemRec *recPtr = events[j].recPtr;

	if (events[j].isFree || !recPtr->tracked) {
	    RecFree(recPtr);
	}
    }
    numEvents = 0;
    if (spareEvents == NULL && events != NULL && capEvents <= 16383) {
	spareEvents = events;		/* Kept for the next run. */
    } else {
	EventsRelease(events);
    }
    if (spareEvents != NULL && EventsCap(spareEvents) > 16383) {
	EventsRelease(spareEvents);
	spareEvents = NULL;
    }
    events = NULL;
    capEvents = 0;
    if (table != NULL) {
	uint32_t i;

	for (i = 0; tableCount > 0 && i < (1u << tableBits); i++) {
	    if (table[i].addr != 0) {
		RecFree(table[i].recPtr);
		tableCount--;
	    }
	}

	/*
	 * Back to the first size (a new run starts small); a table of that
	 * size is emptied in place.
	 */

	if (tableBits == TABLE_MIN_BITS) {
	    memset(table, 0, ((size_t) 1 << tableBits) * sizeof(TableSlot));
	} else {
	    munmap(table, ((size_t) 1 << tableBits) * sizeof(TableSlot));
	    __atomic_store_n(&table, TableMap(TABLE_MIN_BITS),
		    __ATOMIC_RELAXED);
	    __atomic_store_n(&tableBits, TABLE_MIN_BITS, __ATOMIC_RELAXED);
	}
	tableCount = 0;
	memset(coarse, 0, sizeof(coarse));
	memset(filter, 0, sizeof(filter));
	memset(coarseCounts, 0, sizeof(coarseCounts));
	memset(filterCounts, 0, sizeof(filterCounts));
    }
    memset(stackBuckets, 0, sizeof(stackBuckets));
    __atomic_store_n(&numStacks, 0, __ATOMIC_RELAXED);
    totals.recordBytes = 0;
    PoolRelease();
    __atomic_add_fetch(&epoch, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&memMutex);
    GuardDown(&tlsMem);
}

/*
 * Records made before the last clear belong to data gone (a free of one
 * taken from the table just before the clear may still be queued).
 */

unsigned
CprofMemEpoch(void)
{
    return __atomic_load_n(&epoch, __ATOMIC_ACQUIRE);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofMemTake --
 *
 *	For the drain: the queued events, in order (the caller owns the
 *	array and gives it back to CprofMemDone, which frees the records of
 *	freed blocks; records of live blocks stay with the table).
 *
 *----------------------------------------------------------------------
 */

int
CprofMemTake(
    CprofMemEvent **eventsPtr)
{
    int n;

    pthread_mutex_lock(&memMutex);
    *eventsPtr = events;
    n = numEvents;
    events = NULL;
    numEvents = capEvents = 0;
    pthread_mutex_unlock(&memMutex);
    return n;
}

void
CprofMemDone(
    CprofMemEvent *ev,
    int n)
{
    int i;
    size_t freed = 0;

    for (i = 0; i < n; i++) {
	CprofMemRec *recPtr = ev[i].recPtr;

	if (ev[i].isFree || !recPtr->tracked) {
	    freed += RecBytes(recPtr);
	    RecFree(recPtr);
	}
    }
    pthread_mutex_lock(&memMutex);
    totals.recordBytes -= freed;
    if (ev != NULL) {
	if (spareEvents == NULL) {
	    spareEvents = ev;		/* For the next queue. */
	} else {
	    EventsRelease(ev);
	}
    }
    pthread_mutex_unlock(&memMutex);
}

/*
 * The hooks' counts; the profiler's memory for the samples: the records'
 * pool, the table's pages in memory, the filter, the unwinder's rules,
 * the queues.
 */

void
CprofMemGetTotals(
    CprofMemTotals *totalsPtr)
{
    uint64_t bytes = sizeof(coarse) + sizeof(filter) + sizeof(coarseCounts)
	    + sizeof(filterCounts) + sizeof(stackBuckets);

    pthread_mutex_lock(&memMutex);
    *totalsPtr = totals;
    totalsPtr->liveRecords = tableCount;
    if (table != NULL) {
	size_t size = ((size_t) 1 << tableBits) * sizeof(TableSlot);
	size_t page = (size_t) sysconf(_SC_PAGESIZE), k;
	unsigned char vec[((size_t) 1 << TABLE_MAX_BITS) * sizeof(TableSlot)
		/ 4096];

	if (size / page <= sizeof(vec) && mincore(table, size, vec) == 0) {
	    for (k = 0; k < size / page; k++) {
		bytes += (vec[k] & 1) ? page : 0;
	    }
	} else {
	    bytes += size;
	}
    }
    if (events != NULL) {
	bytes += (EventsCap(events) + 1) * sizeof(CprofMemEvent);
    }
    if (spareEvents != NULL) {
	bytes += (EventsCap(spareEvents) + 1) * sizeof(CprofMemEvent);
    }
    bytes += CprofCfiBytes();
    pthread_mutex_unlock(&memMutex);
    pthread_mutex_lock(&poolMutex);
    totalsPtr->recordBytes = pool.mapped;
    pthread_mutex_unlock(&poolMutex);
    totalsPtr->tableBytes = bytes;
}

/*
 * The profiler's own work: while the guard is up, the calling thread's
 * allocations are not counted.
 */

void
CprofMemGuard(
    int on)
{
    if (on) {
	GuardUp(&tlsMem);
    } else {
	GuardDown(&tlsMem);
    }
}

/*
 * The real allocator, for tests that must not be seen (debug).
 */

void *
CprofMemRealMalloc(
    size_t size)
{
    return real.malloc ? real.malloc(size) : malloc(size);
}
