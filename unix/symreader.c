/*
 * symreader.c --
 *
 *	The symbol tables of symfile.c are read and used on a thread of
 *	their own, the reading thread: the entry points symbolize.c calls
 *	(CprofSymTableAcquire, Release, Lookup) hand their call to it and
 *	wait.
 *
 *	What libelf, libdw and zlib allocate, and the files read whole
 *	(some 25 MB for a Tcl program, its C extension and its C library,
 *	10 of them in small blocks), then come from that thread's malloc
 *	arena instead of the program's heap. Allocated there in the middle
 *	of a run, between blocks the program frees and allocates again,
 *	they slowed a heap-bound program by 8% to 26% from then on,
 *	profiled or not (bench/memory.tcl's pass, unprofiled, after a
 *	first profiled run: glibc found its free chunks elsewhere). The
 *	thread has every signal blocked (a signal sent to the process is
 *	never handled there), its allocations are never counted by memory
 *	profiles (its guard is up for good), it is made again in a child
 *	after fork, and joined when the library is unloaded from the
 *	process. A call is handed over by spinning for some microseconds
 *	before sleeping, on both sides, so that calls that come one after
 *	the other (the lookups of a drain) do not each pay two wake-ups.
 *	The first profile of a process makes a few dozen calls (a Tcl
 *	program, its C extension and its C library: 4 tables read, 20
 *	lookups), most of their time reading; on fresh pages of the
 *	thread's arena that takes some 6 ms more than in the program's
 *	heap (50 ms instead of 44). Where no thread can be made, calls run
 *	on the caller's thread as they used to.
 *
 *	Reading ahead (CprofSymTableWarm): a drain in the middle of a run
 *	(from the event loop's timer, or asked for by the handler) does not
 *	wait for a table to be read: it asks for the tables its samples need
 *	and leaves the samples for a later drain while the thread reads them
 *	(a queue of PREFETCH_MAX, served when no call waits). Reading
 *	libc's separate debug file alone took the program's thread 1.2-1.9 s
 *	at load 12, long enough for an "after 100" to fire before an
 *	"after idle" queued before it (Tcl's msgcat-14.2 failed profiled).
 *
 *	Sleeping and waking: each side stores its own "asleep" flag, then
 *	loads the other side's state (the call handed over, or done), and
 *	the other side does the same in the opposite order, so that the
 *	mutex is taken only to wake one that sleeps. That needs the store
 *	ordered before the load: a full fence between the two (FENCE).
 *	Sequentially consistent atomics give it on real hardware, but not
 *	under qemu-user on an x86-64 host, whose translation of aarch64's
 *	stlr and ldar lets the store wait in the host's store buffer past
 *	the load: both sides slept for good, in 3 of 61 runs of the
 *	aarch64 smoke set's demo (found in CI; the caller asleep on
 *	doneCond, the thread on callCond, the call taken and done). Besides the fence,
 *	a caller never sleeps more than WAIT_SLICE_NS at a time: it looks
 *	again and wakes the thread again, so that a lost wake-up, whatever
 *	its cause, costs a slice and never a hang.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _GNU_SOURCE
#   define _GNU_SOURCE
#endif
#include "symfile.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>

enum { CALL_ACQUIRE, CALL_RELEASE, CALL_LOOKUP };

typedef struct SymCall {
    int op;			/* CALL_*. */
    const char *key;		/* The arguments of the entry point. */
    const char *path;
    const CprofFileId *idPtr;
    const unsigned char *image;
    size_t imageSize;
    CprofSymTable *tablePtr;
    uint64_t rel;
    int wantLine;		/* CALL_LOOKUP: find the source line too. */
    CprofSymFound *foundPtr;
    CprofSymTable *result;	/* CALL_ACQUIRE's. */
    int done;			/* Set by the thread when it has run. */
} SymCall;

#define SPIN_CALLER_NS	20000	/* The caller waits so long awake, */
#define SPIN_READER_NS	50000	/* the thread for the next call. */
#define WAIT_SLICE_NS	10000000 /* A caller's longest sleep at a time. */

#define FENCE()		__atomic_thread_fence(__ATOMIC_SEQ_CST)

enum { READER_NONE, READER_RUNNING, READER_FAILED };

/*
 * Tables to read ahead, in the order asked for; under reader.mutex (count
 * also read without it, atomically, by the thread's wait).
 */

#define PREFETCH_MAX	16
#define PREFETCH_KEY	160

typedef struct Prefetch {
    char key[PREFETCH_KEY];
    char *path;			/* ckalloc'd copy. */
    CprofFileId id;
} Prefetch;

static struct {
    Prefetch queue[PREFETCH_MAX];
    int first;			/* Index of the oldest. */
    int count;			/* Queued. */
    char busyKey[PREFETCH_KEY];	/* The one being read ("" if none). */
} prefetch;

static struct {
    pthread_mutex_t submit;	/* Held by the caller for a whole call. */
    pthread_mutex_t mutex;	/* For sleeping and waking. */
    pthread_cond_t callCond;	/* A call was handed over (or quit). */
    pthread_cond_t doneCond;	/* The call was run. */
    SymCall *callPtr;		/* The call handed over, not taken yet. */
    int state;			/* READER_*. */
    int quit;			/* Asks the thread to end. */
    int readerAsleep;		/* Who waits, or is about to, on its */
    int callerAsleep;		/* condition: set before the other's
				 * flag is read (sequentially consistent
				 * on both sides), so that a call or its
				 * end takes the mutex only to wake one. */
    int forkHandlers;		/* pthread_atfork done. */
    pthread_t thread;
} reader = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
    NULL, READER_NONE, 0, 0, 0, 0, 0
};
static __thread int onReader;

static inline void
Relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    __asm__ __volatile__("" : : : "memory");
#endif
}

static void
RunCall(
    SymCall *callPtr)
{
    switch (callPtr->op) {
    case CALL_ACQUIRE:
	callPtr->result = CprofSymFileAcquire(callPtr->key, callPtr->path,
		callPtr->idPtr, callPtr->image, callPtr->imageSize);
	break;
    case CALL_RELEASE:
	CprofSymFileRelease(callPtr->tablePtr);
	break;
    default:
	CprofSymFileLookup(callPtr->tablePtr, callPtr->rel,
		callPtr->wantLine, callPtr->foundPtr);
	break;
    }
}

/*
 * The thread's next call, or NULL when it is to end.
 */

static SymCall *
NextCall(void)
{
    uint64_t until = CprofClockNs(CLOCK_MONOTONIC) + SPIN_READER_NS;
    SymCall *callPtr;
    int spins = 0;

    while (__atomic_load_n(&reader.callPtr, __ATOMIC_ACQUIRE) == NULL
	    && !__atomic_load_n(&reader.quit, __ATOMIC_ACQUIRE)
	    && __atomic_load_n(&prefetch.count, __ATOMIC_ACQUIRE) == 0) {
	if ((++spins & 63) == 0
		&& CprofClockNs(CLOCK_MONOTONIC) > until) {
	    pthread_mutex_lock(&reader.mutex);
	    __atomic_store_n(&reader.readerAsleep, 1, __ATOMIC_SEQ_CST);
	    FENCE();
	    while (__atomic_load_n(&reader.callPtr, __ATOMIC_SEQ_CST) == NULL
		    && !__atomic_load_n(&reader.quit, __ATOMIC_SEQ_CST)
		    && prefetch.count == 0) {
		pthread_cond_wait(&reader.callCond, &reader.mutex);
	    }
	    __atomic_store_n(&reader.readerAsleep, 0, __ATOMIC_RELAXED);
	    pthread_mutex_unlock(&reader.mutex);
	    break;
	}
	Relax();
    }
    if (__atomic_load_n(&reader.quit, __ATOMIC_ACQUIRE)) {
	return NULL;
    }
    callPtr = __atomic_exchange_n(&reader.callPtr, NULL, __ATOMIC_ACQUIRE);
    return callPtr;
}

/*
 * On the thread, when no call waits: read the oldest table asked for
 * ahead, and keep it (released at once, it stays among the spare tables
 * of symfile.c until a drain acquires it).
 */

static void
ReadAhead(void)
{
    Prefetch item;

    pthread_mutex_lock(&reader.mutex);
    if (prefetch.count == 0) {
	pthread_mutex_unlock(&reader.mutex);
	return;
    }
    item = prefetch.queue[prefetch.first];
    prefetch.first = (prefetch.first + 1) % PREFETCH_MAX;
    memcpy(prefetch.busyKey, item.key, PREFETCH_KEY);
    __atomic_store_n(&prefetch.count, prefetch.count - 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&reader.mutex);

    CprofSymFileRelease(CprofSymFileAcquire(item.key, item.path, &item.id,
	    NULL, 0));
    ckfree(item.path);

    pthread_mutex_lock(&reader.mutex);
    prefetch.busyKey[0] = '\0';
    pthread_mutex_unlock(&reader.mutex);
}

static void
ForgetReadAhead(void)
{
    while (prefetch.count > 0) {
	ckfree(prefetch.queue[prefetch.first].path);
	prefetch.first = (prefetch.first + 1) % PREFETCH_MAX;
	prefetch.count--;
    }
    prefetch.busyKey[0] = '\0';
}

static void *
ReaderMain(
    void *arg)
{
    SymCall *callPtr;

    (void) arg;
    onReader = 1;
    CprofMemGuard(1);
    while (1) {
	callPtr = NextCall();
	if (callPtr == NULL) {
	    if (__atomic_load_n(&reader.quit, __ATOMIC_ACQUIRE)) {
		break;
	    }
	    ReadAhead();
	    continue;
	}
	RunCall(callPtr);

	/*
	 * The caller may go as soon as it sees 'done' (the call is on its
	 * stack): nothing of the call is touched after.
	 */

	__atomic_store_n(&callPtr->done, 1, __ATOMIC_SEQ_CST);
	FENCE();
	if (__atomic_load_n(&reader.callerAsleep, __ATOMIC_SEQ_CST)) {
	    pthread_mutex_lock(&reader.mutex);
	    pthread_cond_signal(&reader.doneCond);
	    pthread_mutex_unlock(&reader.mutex);
	}
    }
    CprofMemGuard(0);
    return NULL;
}

/*
 * Fork: the child has no reading thread, and makes one at its first
 * call. The submit mutex is taken if it is free, not waited for: the
 * call under way could be waiting for a lock that another fork handler
 * (the memory hooks') holds already.
 */

static __thread int forkLocked;	/* The forking thread's: two threads
				 * forking at once must not undo each
				 * other's (an unlock lost left the mutex
				 * held for ever: Tcl's thread-8.1). */

static void
ForkPrepare(void)
{
    forkLocked = (pthread_mutex_trylock(&reader.submit) == 0);
}

static void
ForkParent(void)
{
    if (forkLocked) {
	pthread_mutex_unlock(&reader.submit);
    }
}

static void
ForkChild(void)
{
    pthread_mutex_init(&reader.submit, NULL);
    pthread_mutex_init(&reader.mutex, NULL);
    pthread_cond_init(&reader.callCond, NULL);
    pthread_cond_init(&reader.doneCond, NULL);
    reader.callPtr = NULL;
    reader.quit = reader.readerAsleep = reader.callerAsleep = 0;

    /*
     * The reads asked for ahead are the parent's: forgotten, their paths
     * not freed (no allocator call in the child before it runs again).
     */

    prefetch.first = prefetch.count = 0;
    prefetch.busyKey[0] = '\0';
    if (reader.state == READER_RUNNING) {
	reader.state = READER_NONE;
    }
}

/*
 * Under the submit mutex: the thread, made if there is none (every signal
 * blocked in it from its start).
 */

static int
ReaderUp(void)
{
    sigset_t all, old;

    if (reader.state != READER_NONE) {
	return reader.state == READER_RUNNING;
    }
    if (!reader.forkHandlers) {
	if (pthread_atfork(ForkPrepare, ForkParent, ForkChild) != 0) {
	    reader.state = READER_FAILED;
	    return 0;
	}
	reader.forkHandlers = 1;
    }
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    reader.quit = 0;
    reader.state = (pthread_create(&reader.thread, NULL, ReaderMain,
	    NULL) == 0) ? READER_RUNNING : READER_FAILED;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (reader.state == READER_RUNNING) {
	pthread_setname_np(reader.thread, "tclcprof-syms");
    }
    return reader.state == READER_RUNNING;
}

static void
Submit(
    SymCall *callPtr)
{
    uint64_t until;
    int spins = 0;

    if (onReader) {
	RunCall(callPtr);		/* A call made on the thread itself would
					 * wait for itself under 'submit'. */
	return;
    }
    pthread_mutex_lock(&reader.submit);
    if (!ReaderUp()) {
	pthread_mutex_unlock(&reader.submit);
	RunCall(callPtr);
	return;
    }
    callPtr->done = 0;
    __atomic_store_n(&reader.callPtr, callPtr, __ATOMIC_SEQ_CST);
    FENCE();
    if (__atomic_load_n(&reader.readerAsleep, __ATOMIC_SEQ_CST)) {
	pthread_mutex_lock(&reader.mutex);
	pthread_cond_signal(&reader.callCond);
	pthread_mutex_unlock(&reader.mutex);
    }

    until = CprofClockNs(CLOCK_MONOTONIC) + SPIN_CALLER_NS;
    while (!__atomic_load_n(&callPtr->done, __ATOMIC_ACQUIRE)) {
	if ((++spins & 63) == 0 && CprofClockNs(CLOCK_MONOTONIC) > until) {
	    pthread_mutex_lock(&reader.mutex);
	    __atomic_store_n(&reader.callerAsleep, 1, __ATOMIC_SEQ_CST);
	    FENCE();
	    while (!__atomic_load_n(&callPtr->done, __ATOMIC_SEQ_CST)) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += WAIT_SLICE_NS;
		if (ts.tv_nsec >= 1000000000L) {
		    ts.tv_sec++;
		    ts.tv_nsec -= 1000000000L;
		}
		if (pthread_cond_clockwait(&reader.doneCond, &reader.mutex,
			CLOCK_MONOTONIC, &ts) == ETIMEDOUT
			&& __atomic_load_n(&reader.callPtr, __ATOMIC_SEQ_CST)
			== callPtr) {
		    pthread_cond_signal(&reader.callCond);	/* Not taken. */
		}
	    }
	    __atomic_store_n(&reader.callerAsleep, 0, __ATOMIC_RELAXED);
	    pthread_mutex_unlock(&reader.mutex);
	    break;
	}
	Relax();
    }
    pthread_mutex_unlock(&reader.submit);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSymTableAcquire, CprofSymTableRelease, CprofSymTableLookup --
 *
 *	CprofSymFileAcquire, CprofSymFileRelease and CprofSymFileLookup
 *	(symfile.c), run on the reading thread.
 *
 *----------------------------------------------------------------------
 */

CprofSymTable *
CprofSymTableAcquire(
    const char *key,
    const char *path,
    const CprofFileId *idPtr,
    const unsigned char *image,
    size_t imageSize)
{
    SymCall call = {
	.op = CALL_ACQUIRE, .key = key, .path = path, .idPtr = idPtr,
	.image = image, .imageSize = imageSize
    };

    Submit(&call);
    return call.result;
}

void
CprofSymTableRelease(
    CprofSymTable *tablePtr)
{
    SymCall call = {.op = CALL_RELEASE, .tablePtr = tablePtr};

    Submit(&call);
}

void
CprofSymTableLookup(
    CprofSymTable *tablePtr,
    uint64_t rel,
    int wantLine,
    CprofSymFound *foundPtr)
{
    SymCall call = {
	.op = CALL_LOOKUP, .tablePtr = tablePtr, .rel = rel,
	.wantLine = wantLine, .foundPtr = foundPtr
    };

    Submit(&call);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSymTableWarm --
 *
 *	Whether the table of a file is read already (so that acquiring it
 *	does not wait for the file). If not, it is asked for ahead (once:
 *	a key queued or being read is not queued again) and the caller can
 *	come back later.
 *
 * Results:
 *	1 when the table is there, or when the caller had better read it
 *	itself (no reading thread can be made); 0 while it is being read.
 *
 * Side effects:
 *	May make the reading thread, and queue a read.
 *
 *----------------------------------------------------------------------
 */

int
CprofSymTableWarm(
    const char *key,
    const char *path,
    const CprofFileId *idPtr)
{
    int i, queued = 0, up;

    if (onReader || CprofSymFileCached(key)) {
	return 1;
    }
    if (strlen(key) >= PREFETCH_KEY || path == NULL) {
	return 1;
    }

    /*
     * The submit mutex is held through every call of another thread
     * (a drain of another thread of the session): not waited for.
     */

    if (pthread_mutex_trylock(&reader.submit) != 0) {
	return 0;
    }
    up = ReaderUp();
    if (up) {
	pthread_mutex_lock(&reader.mutex);
	if (strcmp(prefetch.busyKey, key) == 0) {
	    queued = 1;
	}
	for (i = 0; i < prefetch.count && !queued; i++) {
	    if (strcmp(prefetch.queue[(prefetch.first + i) % PREFETCH_MAX].key,
		    key) == 0) {
		queued = 1;
	    }
	}
	if (!queued && prefetch.count < PREFETCH_MAX) {
	    Prefetch *itemPtr = &prefetch.queue[(prefetch.first
		    + prefetch.count) % PREFETCH_MAX];
	    size_t len = strlen(path);

	    memcpy(itemPtr->key, key, strlen(key) + 1);
	    itemPtr->path = ckalloc(len + 1);
	    memcpy(itemPtr->path, path, len + 1);
	    itemPtr->id = *idPtr;
	    __atomic_store_n(&prefetch.count, prefetch.count + 1,
		    __ATOMIC_RELEASE);
	    if (__atomic_load_n(&reader.readerAsleep, __ATOMIC_SEQ_CST)) {
		pthread_cond_signal(&reader.callCond);
	    }
	}
	pthread_mutex_unlock(&reader.mutex);
    }
    pthread_mutex_unlock(&reader.submit);
    return !up;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSymReaderStop --
 *
 *	The library leaves the process (unload): the reading thread ends
 *	and is joined. The tables stay (the next call makes a thread).
 *
 *----------------------------------------------------------------------
 */

void
CprofSymReaderStop(void)
{
    pthread_mutex_lock(&reader.submit);
    if (reader.state == READER_RUNNING) {
	pthread_mutex_lock(&reader.mutex);
	__atomic_store_n(&reader.quit, 1, __ATOMIC_SEQ_CST);
	pthread_cond_signal(&reader.callCond);
	pthread_mutex_unlock(&reader.mutex);
	pthread_join(reader.thread, NULL);
	reader.quit = 0;
	reader.state = READER_NONE;
    }
    ForgetReadAhead();
    pthread_mutex_unlock(&reader.submit);
}
