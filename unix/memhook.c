/*
 * memhook.c --
 *
 *	The memory hooks: malloc, calloc, realloc, free, posix_memalign,
 *	aligned_alloc, memalign and valloc of every loaded module are
 *	redirected here (gotpatch.c), as are dlopen, so that modules loaded
 *	later are patched too, and dlclose, so that the patches of a module
 *	unloaded are forgotten.
 *
 *	Every allocation is counted. A subset is sampled, chosen by bytes
 *	with a Poisson process of mean 'rate' bytes: each thread counts down
 *	the bytes to its next sampling point, drawn from an exponential
 *	distribution, so that an allocation of s bytes is sampled with
 *	probability 1 - exp(-s/rate) and the aggregation (memory.c) weighs
 *	it by the inverse to get unbiased totals. A sampled allocation
 *	records its native stack (libgcc's unwinder, as the sampler's) and
 *	the calling thread's Tcl frames (CprofCopyTclFrames), and is kept in
 *	a table of live sampled blocks, keyed by address, until it is freed.
 *	What happens to sampled blocks (allocated, freed) is queued in order
 *	for the drain in normal context of the profiled thread.
 *
 *	The unsampled path takes no lock and calls nothing that can
 *	allocate: per-thread state in initial-exec TLS (the countdown, a
 *	reentrancy guard, counts flushed to the totals at each sample), and
 *	for a free, one load from a filter of 64 Ki counters (how many live
 *	sampled blocks hash to each) that tells almost every free of an
 *	unsampled block apart without touching the table. The sampled path
 *	and frees that pass the filter take one mutex.
 *
 *	The guard: while it is set in a thread, that thread's allocations
 *	are not counted; the sampled path sets it (the unwinder, a record's
 *	memory), and so does the profiler's own work (CprofMemGuard), so
 *	that the profiler's own allocations never are.
 *
 *	Fork: the mutexes are taken around fork (pthread_atfork), so that a
 *	child never finds them held by a thread it does not have.
 *
 *	Memory: a record per live sampled block (its stack, about 40 bytes
 *	plus 16 per native and 32 per Tcl frame), the table (16 bytes a
 *	slot, 2^18 slots reserved, touched as used) and the filter (128
 *	KiB). Blocks sampled when the table is full are counted
 *	('untracked') and add to allocations only.
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
#include "gotpatch.h"
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
 * it).
 */

typedef struct MemThread {
    int64_t countdown;		/* Bytes to the next sampling point. */
    uint64_t rng;		/* xorshift64* state; 0: not seeded. */
    uint64_t allocs;		/* Counts not yet added to the totals. */
    uint64_t allocBytes;
    uint64_t frees;
    unsigned gen;		/* The run the countdown belongs to. */
    int guard;			/* Not counted: the profiler's own. */
} MemThread;

static __thread MemThread tlsMem __attribute__((tls_model("initial-exec")));

/*
 * Process-wide state. 'active' and 'gen' are read by the hooks without a
 * lock; the rest is under memMutex.
 */

#define TABLE_BITS	18
#define TABLE_SIZE	(1u << TABLE_BITS)
#define FILTER_BITS	16
#define FILTER_SIZE	(1u << FILTER_BITS)

typedef struct TableSlot {
    uintptr_t addr;		/* 0: empty. */
    CprofMemRec *recPtr;
} TableSlot;

static volatile int active;	/* 0 off, 1 on, 2 paused (frees only). */
static volatile unsigned gen;
static int64_t rateBytes = 512 * 1024;
static volatile int *needDrainPtr;

static pthread_mutex_t memMutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t patchMutex = PTHREAD_MUTEX_INITIALIZER;

static TableSlot *table;	/* TABLE_SIZE slots, mmap'd once. */
static uint32_t tableCount;
static uint16_t filter[FILTER_SIZE];

static CprofMemEvent *events;	/* Queued for the drain, in order. */
static int numEvents, capEvents;

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

static inline uint32_t
AddrHash(
    uintptr_t addr,
    int bits)
{
    return (uint32_t) (((uint64_t) addr * 0x9e3779b97f4a7c15ull)
	    >> (64 - bits));
}

static int
TableInsert(
    uintptr_t addr,
    CprofMemRec *recPtr)
{
    uint32_t i;

    if (table == NULL || tableCount >= TABLE_SIZE - TABLE_SIZE / 4) {
	return 0;
    }
    for (i = AddrHash(addr, TABLE_BITS); table[i].addr != 0;
	    i = (i + 1) & (TABLE_SIZE - 1)) {
	/* Linear probing. */
    }
    table[i].addr = addr;
    table[i].recPtr = recPtr;
    tableCount++;
    __atomic_add_fetch(&filter[AddrHash(addr, FILTER_BITS)], 1,
	    __ATOMIC_RELEASE);
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
    uint32_t i, j, k;
    CprofMemRec *recPtr;

    if (table == NULL || tableCount == 0) {
	return NULL;
    }
    for (i = AddrHash(addr, TABLE_BITS); table[i].addr != addr;
	    i = (i + 1) & (TABLE_SIZE - 1)) {
	if (table[i].addr == 0) {
	    return NULL;
	}
    }
    recPtr = table[i].recPtr;
    for (j = (i + 1) & (TABLE_SIZE - 1); table[j].addr != 0;
	    j = (j + 1) & (TABLE_SIZE - 1)) {
	k = AddrHash(table[j].addr, TABLE_BITS);

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
    __atomic_sub_fetch(&filter[AddrHash(addr, FILTER_BITS)], 1,
	    __ATOMIC_RELEASE);
    return recPtr;
}

static void
PushEvent(
    CprofMemRec *recPtr,
    int isFree)
{
    if (numEvents == capEvents) {
	int cap = capEvents ? 2 * capEvents : 1024;
	CprofMemEvent *newPtr = (CprofMemEvent *) real.realloc(events,
		cap * sizeof(CprofMemEvent));

	if (newPtr == NULL) {
	    /*
	     * No memory for the queue: the block is treated as never
	     * sampled (its record goes).
	     */

	    totals.lostEvents++;
	    if (!isFree && recPtr->tracked) {
		TableRemove(recPtr->addr);
	    }
	    real.free(recPtr);
	    return;
	}
	events = newPtr;
	capEvents = cap;
    }
    events[numEvents].recPtr = recPtr;
    events[numEvents].isFree = isFree;
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

static void
FlushCounts(
    MemThread *tPtr)
{
    __atomic_add_fetch(&totals.allocs, tPtr->allocs, __ATOMIC_RELAXED);
    __atomic_add_fetch(&totals.allocBytes, tPtr->allocBytes,
	    __ATOMIC_RELAXED);
    __atomic_add_fetch(&totals.frees, tPtr->frees, __ATOMIC_RELAXED);
    tPtr->allocs = tPtr->allocBytes = tPtr->frees = 0;
}

/*
 * The countdown went below zero (or belongs to another run): decide
 * whether this allocation is sampled.
 */

static void __attribute__((noinline))
Crossed(
    MemThread *tPtr,
    void *ptr,
    size_t size)
{
    unsigned g = __atomic_load_n(&gen, __ATOMIC_ACQUIRE);

    tPtr->guard = 1;
    FlushCounts(tPtr);
    if (tPtr->gen != g) {
	/*
	 * A new run (or a thread's first allocation): a fresh countdown,
	 * from which this allocation is taken.
	 */

	if (tPtr->rng == 0) {
	    tPtr->rng = ((uint64_t) syscall(SYS_gettid) << 32)
		    ^ CprofClockNs(CLOCK_MONOTONIC) ^ (uintptr_t) tPtr;
	    if (tPtr->rng == 0) {
		tPtr->rng = 1;
	    }
	}
	tPtr->gen = g;
	tPtr->countdown = Draw(tPtr) - (int64_t) size;
	if (tPtr->countdown >= 0) {
	    tPtr->guard = 0;
	    return;
	}
    }

    /*
     * One sample however many sampling points the allocation spans: its
     * weight (memory.c) accounts for that.
     */

    do {
	tPtr->countdown += Draw(tPtr);
    } while (tPtr->countdown < 0);
    RecordAlloc(tPtr, ptr, size);
    tPtr->guard = 0;
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
    int n, skip = 0, nTcl = 0;
    size_t bytes;

    (void) tPtr;
    n = CprofNativeWalk(ip, cfa, CPROF_NATIVE_MAX + 8);
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
    }
    bytes = sizeof(CprofMemRec) + 2 * n * sizeof(uintptr_t)
	    + nTcl * sizeof(CprofTclRef);
    recPtr = (CprofMemRec *) real.malloc(bytes);
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
    recPtr->ip = (uintptr_t *) (recPtr + 1);
    recPtr->cfa = recPtr->ip + n;
    recPtr->tcl = (CprofTclRef *) (recPtr->cfa + n);
    memcpy(recPtr->ip, ip + skip, n * sizeof(uintptr_t));
    memcpy(recPtr->cfa, cfa + skip, n * sizeof(uintptr_t));
    memcpy(recPtr->tcl, tcl, nTcl * sizeof(CprofTclRef));

    pthread_mutex_lock(&memMutex);
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

    if (LIKELY(__atomic_load_n(&filter[AddrHash((uintptr_t) ptr,
	    FILTER_BITS)], __ATOMIC_ACQUIRE) == 0)) {
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
 *	The fast path: not active or guarded, pass through; else count and
 *	count down.
 *
 *----------------------------------------------------------------------
 */

static inline void
Allocated(
    void *ptr,
    size_t size)
{
    MemThread *tPtr = &tlsMem;

    if (ptr == NULL || tPtr->guard || active != 1) {
	return;
    }
    tPtr->allocs++;
    tPtr->allocBytes += size;
    tPtr->countdown -= (int64_t) size;
    if (UNLIKELY(tPtr->countdown < 0 || tPtr->gen != gen)) {
	Crossed(tPtr, ptr, size);
    }
}

static void *
HookMalloc(
    size_t size)
{
    void *ptr = real.malloc(size);

    Allocated(ptr, size);
    return ptr;
}

static void *
HookCalloc(
    size_t count,
    size_t size)
{
    void *ptr = real.calloc(count, size);

    Allocated(ptr, count * size);
    return ptr;
}

static void
HookFree(
    void *ptr)
{
    MemThread *tPtr = &tlsMem;

    if (ptr != NULL && !tPtr->guard && active) {
	CprofMemRec *recPtr;

	tPtr->frees++;
	recPtr = TakeSampled(ptr);
	if (recPtr != NULL) {
	    QueueFree(recPtr);
	}
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

    if (tPtr->guard || active == 0) {
	return real.realloc(ptr, size);
    }

    /*
     * A realloc is a free of the old block and an allocation of the new
     * one. The old block's record leaves the table first (its address is
     * free for reuse once realloc moves it); a failed realloc puts it
     * back, untouched.
     */

    if (ptr != NULL) {
	recPtr = TakeSampled(ptr);
    }
    newPtr = real.realloc(ptr, size);
    if (newPtr == NULL && size != 0 && ptr != NULL) {
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
    if (size != 0) {
	Allocated(newPtr, size);
    }
    return newPtr;
}

static int
HookPosixMemalign(
    void **ptrPtr,
    size_t align,
    size_t size)
{
    int code = real.posixMemalign(ptrPtr, align, size);

    if (code == 0) {
	Allocated(*ptrPtr, size);
    }
    return code;
}

static void *
HookAlignedAlloc(
    size_t align,
    size_t size)
{
    void *ptr = real.alignedAlloc(align, size);

    Allocated(ptr, size);
    return ptr;
}

static void *
HookMemalign(
    size_t align,
    size_t size)
{
    void *ptr = real.memalign(align, size);

    Allocated(ptr, size);
    return ptr;
}

static void *
HookValloc(
    size_t size)
{
    void *ptr = real.valloc(size);

    Allocated(ptr, size);
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
	int saved = tlsMem.guard;

	pthread_mutex_lock(&patchMutex);
	tlsMem.guard = 1;
	if (active) {
	    int n = CprofGotPatch(hookTargets,
		    (int) (sizeof(hookTargets) / sizeof(hookTargets[0])));

	    pthread_mutex_lock(&memMutex);
	    totals.patchedLater += n;
	    totals.loads++;
	    pthread_mutex_unlock(&memMutex);
	}
	tlsMem.guard = saved;
	pthread_mutex_unlock(&patchMutex);
    }
    return handle;
}

static int
HookDlclose(
    void *handle)
{
    int code, saved = tlsMem.guard;

    pthread_mutex_lock(&patchMutex);
    code = real.dlclose(handle);
    if (active) {
	tlsMem.guard = 1;
	CprofGotForgetClosed();
	tlsMem.guard = saved;
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
}

static void
AtforkRelease(void)
{
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
    if (table == NULL) {
	void *mem = mmap(NULL, TABLE_SIZE * sizeof(TableSlot),
		PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mem == MAP_FAILED) {
	    pthread_mutex_unlock(&patchMutex);
	    snprintf(msg, msgLen, "cannot map the table of sampled blocks");
	    return 0;
	}
	table = (TableSlot *) mem;
    }
    CprofMemClear();
    pthread_mutex_lock(&memMutex);
    memset(&totals, 0, sizeof(totals));
    rateBytes = rate;
    needDrainPtr = drainPtr;
    pthread_mutex_unlock(&memMutex);
    __atomic_add_fetch(&gen, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&active, 1, __ATOMIC_RELEASE);

    for (i = 0; i < (int) (sizeof(targets) / sizeof(targets[0])); i++) {
	hookTargets[i] = targets[i];
    }
    hookTargets[8].hook = (void *) HookDlopen;
    hookTargets[9].hook = (void *) HookDlclose;
    tlsMem.guard++;
    n = CprofGotPatch(hookTargets,
	    (int) (sizeof(hookTargets) / sizeof(hookTargets[0])));
    tlsMem.guard--;
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
    tlsMem.guard++;
    FlushCounts(&tlsMem);
    __atomic_store_n(&active, 0, __ATOMIC_RELEASE);
    CprofGotRestore();
    tlsMem.guard--;
    pthread_mutex_lock(&memMutex);
    needDrainPtr = NULL;
    pthread_mutex_unlock(&memMutex);
    pthread_mutex_unlock(&patchMutex);
}

/*
 * Drop every record: live blocks' and queued events'. Blocks allocated
 * before are from then on unknown, and their frees ignored.
 */

void
CprofMemClear(void)
{
    uint32_t i;
    int j;

    tlsMem.guard++;
    pthread_mutex_lock(&memMutex);
    for (j = 0; j < numEvents; j++) {
	CprofMemRec *recPtr = events[j].recPtr;

	if (events[j].isFree || !recPtr->tracked) {
	    real.free(recPtr);
	}
    }
    numEvents = 0;
    if (table != NULL && tableCount > 0) {
	for (i = 0; i < TABLE_SIZE; i++) {
	    if (table[i].addr != 0) {
		real.free(table[i].recPtr);
		table[i].addr = 0;
		table[i].recPtr = NULL;
	    }
	}
	tableCount = 0;
	memset(filter, 0, sizeof(filter));
    }
    totals.recordBytes = 0;
    __atomic_add_fetch(&epoch, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&memMutex);
    tlsMem.guard--;
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
	    freed += sizeof(CprofMemRec) + 2 * recPtr->nNative
		    * sizeof(uintptr_t) + recPtr->nTcl * sizeof(CprofTclRef);
	    real.free(recPtr);
	}
    }
    real.free(ev);
    pthread_mutex_lock(&memMutex);
    totals.recordBytes -= freed;
    pthread_mutex_unlock(&memMutex);
}

void
CprofMemGetTotals(
    CprofMemTotals *totalsPtr)
{
    pthread_mutex_lock(&memMutex);
    *totalsPtr = totals;
    totalsPtr->liveRecords = tableCount;
    totalsPtr->tableBytes = (uint64_t) tableCount * sizeof(TableSlot)
	    + sizeof(filter);
    pthread_mutex_unlock(&memMutex);
}

/*
 * The profiler's own work: while the guard is up, the calling thread's
 * allocations are not counted.
 */

void
CprofMemGuard(
    int on)
{
    tlsMem.guard += on ? 1 : -1;
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
