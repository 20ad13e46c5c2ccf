/*
 * memtest.c --
 *
 *	Part of the tests' helper extension (libcbtest): commands that
 *	allocate known sizes from known static functions, for the memory
 *	profile tests (tests/memory.test) and the benchmark.
 *
 *	cbtest::memleak size count	LeakBlocks: malloc, kept for good.
 *	cbtest::memhold size count	HoldBlocks: malloc, kept until
 *	cbtest::memrelease		ReleaseBlocks frees them.
 *	cbtest::memchurn size count	ChurnBlocks: malloc and free at once.
 *	cbtest::memsim count		SimulateEvents: an event queue whose
 *					events are allocated, written, read
 *					and freed (the benchmark's workload).
 *	cbtest::memedge			Edge cases of the allocator's API.
 *	cbtest::memthreads start n size | stop
 *					Threads that allocate and free until
 *					stopped; stop returns their cycles.
 *	cbtest::memfork size count	A child that allocates, exits.
 *	cbtest::mainheap		The C library's main heap (the
 *					arena of the process's first thread):
 *					bytes in use and from the system.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _GNU_SOURCE
#   define _GNU_SOURCE
#endif
#include <tcl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#define NOINLINE __attribute__((noinline, noclone))

static void **held;
static int numHeld, capHeld;

static void
Keep(
    void *ptr)
{
    if (numHeld == capHeld) {
	capHeld = capHeld ? 2 * capHeld : 1024;
	held = (void **) realloc(held, capHeld * sizeof(void *));
    }
    held[numHeld++] = ptr;
}

/*
 * Each writes its blocks (so that the compiler cannot drop them).
 */

static NOINLINE void
LeakBlocks(
    size_t size,
    int count)
{
    int i;

    for (i = 0; i < count; i++) {
	char *p = (char *) malloc(size);

	if (p != NULL) {
	    p[0] = (char) i;
	}
	__asm__ volatile("" : : "r"(p) : "memory");
    }
}

static NOINLINE void
HoldBlocks(
    size_t size,
    int count)
{
    int i;

    for (i = 0; i < count; i++) {
	char *p = (char *) malloc(size);

	if (p != NULL) {
	    p[0] = (char) i;
	    Keep(p);
	}
    }
}

static NOINLINE void
ReleaseBlocks(void)
{
    int i;

    for (i = 0; i < numHeld; i++) {
	free(held[i]);
    }
    numHeld = 0;
}

static NOINLINE void
ChurnBlocks(
    size_t size,
    int count)
{
    int i;

    for (i = 0; i < count; i++) {
	char *volatile p = (char *) malloc(size);

	if (p != NULL) {
	    p[0] = (char) i;
	}
	free(p);
    }
}

/*
 * An allocation-heavy program in small: a simulator's event queue. Each
 * step allocates an event and its payload (sizes from 24 bytes to 8 KiB,
 * most of them small), writes the payload, queues the event, and retires
 * the oldest of the 1024 queued: reads its payload (a word of each cache
 * line) and frees both; every 64 steps a log line is appended to a buffer that
 * realloc grows to 64 KiB and then frees. About 40% of its time is in
 * malloc, realloc and free (bench/memory.tcl says how that was measured).
 */

typedef struct SimEvent {
    struct SimEvent *next;
    double time;
    int kind;
    size_t size;
    unsigned char *payload;
} SimEvent;

#define SIM_QUEUE 1024

static const size_t simSizes[16] = {
    24, 40, 48, 64, 64, 96, 128, 128, 200, 256, 384, 512, 1024, 1500,
    4096, 8192
};

static NOINLINE uint64_t
SimulateEvents(
    int count)
{
    SimEvent *queue[SIM_QUEUE];
    char *log = NULL;
    size_t logLen = 0, logCap = 0;
    uint64_t sum = 0;
    int i, head = 0, n = 0;

    for (i = 0; i < count; i++) {
	SimEvent *evPtr = (SimEvent *) malloc(sizeof(SimEvent));

	if (evPtr == NULL) {
	    break;
	}
	evPtr->time = i * 0.5;
	evPtr->kind = i & 15;
	evPtr->size = simSizes[(i * 7) & 15];
	evPtr->payload = (unsigned char *) malloc(evPtr->size);
	if (evPtr->payload != NULL) {
	    memset(evPtr->payload, i & 0xff, evPtr->size);
	}
	if (n == SIM_QUEUE) {
	    SimEvent *oldPtr = queue[head];
	    size_t j;

	    if (oldPtr->payload != NULL) {
		for (j = 0; j + 8 <= oldPtr->size; j += 64) {
		    uint64_t w;

		    memcpy(&w, oldPtr->payload + j, 8);
		    sum += w;
		}
	    }
	    free(oldPtr->payload);
	    free(oldPtr);
	    n--;
	}
	queue[head] = evPtr;
	head = (head + 1) % SIM_QUEUE;
	n++;
	if ((i & 63) == 0) {
	    char line[64];
	    int len = snprintf(line, sizeof(line), "event %d kind %d\n", i,
		    evPtr->kind);

	    if (logLen + len + 1 > logCap) {
		size_t cap = logCap ? 2 * logCap : 256;
		char *grown;

		if (cap > 65536) {
		    free(log);
		    log = NULL;
		    logLen = logCap = 0;
		    cap = 256;
		}
		grown = (char *) realloc(log, cap);
		if (grown == NULL) {
		    break;
		}
		log = grown;
		logCap = cap;
	    }
	    memcpy(log + logLen, line, len + 1);
	    logLen += len;
	}
    }
    for (i = 0; i < n; i++) {
	SimEvent *evPtr = queue[(head - n + i + SIM_QUEUE) % SIM_QUEUE];

	free(evPtr->payload);
	free(evPtr);
    }
    free(log);
    return sum;
}

static int
MemSimCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    int count;

    if (objc != 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "count");
	return TCL_ERROR;
    }
    if (Tcl_GetIntFromObj(interp, objv[1], &count) != TCL_OK) {
	return TCL_ERROR;
    }
    Tcl_SetObjResult(interp,
	    Tcl_NewWideIntObj((Tcl_WideInt) SimulateEvents(count)));
    return TCL_OK;
}

static int
SizeCount(
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[],
    size_t *sizePtr,
    int *countPtr)
{
    Tcl_WideInt size;

    if (objc != 3) {
	Tcl_WrongNumArgs(interp, 1, objv, "size count");
	return TCL_ERROR;
    }
    if (Tcl_GetWideIntFromObj(interp, objv[1], &size) != TCL_OK
	    || Tcl_GetIntFromObj(interp, objv[2], countPtr) != TCL_OK) {
	return TCL_ERROR;
    }
    *sizePtr = (size_t) size;
    return TCL_OK;
}

static int
MemLeakCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    size_t size;
    int count;

    if (SizeCount(interp, objc, objv, &size, &count) != TCL_OK) {
	return TCL_ERROR;
    }
    LeakBlocks(size, count);
    return TCL_OK;
}

static int
MemHoldCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    size_t size;
    int count;

    if (SizeCount(interp, objc, objv, &size, &count) != TCL_OK) {
	return TCL_ERROR;
    }
    HoldBlocks(size, count);
    return TCL_OK;
}

static int
MemReleaseCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Tcl_SetObjResult(interp, Tcl_NewIntObj(numHeld));
    ReleaseBlocks();
    return TCL_OK;
}

static int
MemChurnCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    size_t size;
    int count;

    if (SizeCount(interp, objc, objv, &size, &count) != TCL_OK) {
	return TCL_ERROR;
    }
    ChurnBlocks(size, count);
    return TCL_OK;
}

/*
 * The edges: each result is checked, as a list of what came out.
 */

static NOINLINE int
EdgeCases(
    Tcl_Obj *resultObj)
{
    void *p, *q;
    int ok;

    /* realloc(NULL, n) is malloc; free(NULL) does nothing. */
    p = realloc(NULL, 1000);
    Tcl_ListObjAppendElement(NULL, resultObj, Tcl_NewBooleanObj(p != NULL));
    free(NULL);
    /* realloc growing, shrinking, then to 0 (a free). */
    p = realloc(p, 100000);
    p = realloc(p, 10);
    q = realloc(p, 0);
    if (q != NULL) {
	free(q);
    }
    /* Failed allocations. */
    p = malloc(SIZE_MAX / 2);
    Tcl_ListObjAppendElement(NULL, resultObj, Tcl_NewBooleanObj(p == NULL));
    p = calloc(SIZE_MAX / 4, 8);
    Tcl_ListObjAppendElement(NULL, resultObj, Tcl_NewBooleanObj(p == NULL));
    p = malloc(64);
    q = realloc(p, SIZE_MAX / 2);
    Tcl_ListObjAppendElement(NULL, resultObj, Tcl_NewBooleanObj(q == NULL));
    free(p);
    /* The aligned ones. */
    ok = (posix_memalign(&p, 64, 5000) == 0 && ((uintptr_t) p & 63) == 0);
    Tcl_ListObjAppendElement(NULL, resultObj, Tcl_NewBooleanObj(ok));
    free(p);
    p = aligned_alloc(128, 1280);
    Tcl_ListObjAppendElement(NULL, resultObj,
	    Tcl_NewBooleanObj(p != NULL && ((uintptr_t) p & 127) == 0));
    free(p);
    p = memalign(256, 3000);
    Tcl_ListObjAppendElement(NULL, resultObj,
	    Tcl_NewBooleanObj(p != NULL && ((uintptr_t) p & 255) == 0));
    free(p);
    p = valloc(7000);
    Tcl_ListObjAppendElement(NULL, resultObj, Tcl_NewBooleanObj(p != NULL));
    free(p);
    /* A huge one that succeeds (address space only). */
    p = malloc((size_t) 1 << 32);
    Tcl_ListObjAppendElement(NULL, resultObj, Tcl_NewBooleanObj(p != NULL));
    free(p);
    return 0;
}

static int
MemEdgeCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Tcl_Obj *resultObj = Tcl_NewListObj(0, NULL);

    EdgeCases(resultObj);
    Tcl_SetObjResult(interp, resultObj);
    return TCL_OK;
}

/*
 * Threads allocating while the hooks go in and out.
 */

#define MAX_THREADS 8

static pthread_t threads[MAX_THREADS];
static int numThreads;
static volatile int threadsStop;
static volatile long threadCycles[MAX_THREADS];
static size_t threadSize;

static void *
ThreadLoop(
    void *arg)
{
    int k = (int) (intptr_t) arg;

    while (!threadsStop) {
	void *p[16];
	int i;

	for (i = 0; i < 16; i++) {
	    p[i] = malloc(threadSize + i);
	}
	for (i = 0; i < 16; i++) {
	    p[i] = realloc(p[i], threadSize * 2);
	}
	for (i = 0; i < 16; i++) {
	    free(p[i]);
	}
	threadCycles[k]++;
    }
    return NULL;
}

static int
MemThreadsCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    int i, n;
    long total = 0;

    if (objc == 2 && strcmp(Tcl_GetString(objv[1]), "stop") == 0) {
	threadsStop = 1;
	for (i = 0; i < numThreads; i++) {
	    pthread_join(threads[i], NULL);
	    total += threadCycles[i];
	}
	numThreads = 0;
	Tcl_SetObjResult(interp, Tcl_NewLongObj(total));
	return TCL_OK;
    }
    if (objc != 4 || strcmp(Tcl_GetString(objv[1]), "start") != 0
	    || Tcl_GetIntFromObj(interp, objv[2], &n) != TCL_OK
	    || n < 1 || n > MAX_THREADS || numThreads != 0) {
	Tcl_SetObjResult(interp, Tcl_NewStringObj(
		"usage: memthreads start n size | stop", -1));
	return TCL_ERROR;
    }
    threadSize = (size_t) atol(Tcl_GetString(objv[3]));
    threadsStop = 0;
    for (i = 0; i < n; i++) {
	threadCycles[i] = 0;
	pthread_create(&threads[i], NULL, ThreadLoop, (void *) (intptr_t) i);
    }
    numThreads = n;
    return TCL_OK;
}

/*
 * A child process that allocates under the hooks and exits: its status.
 */

static int
MemForkCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    size_t size;
    int count, status;
    pid_t pid;

    if (SizeCount(interp, objc, objv, &size, &count) != TCL_OK) {
	return TCL_ERROR;
    }
    pid = fork();
    if (pid == 0) {
	ChurnBlocks(size, count);
	LeakBlocks(size, count);
	_exit(7);
    }
    waitpid(pid, &status, 0);
    Tcl_SetObjResult(interp, Tcl_NewIntObj(WIFEXITED(status)
	    ? WEXITSTATUS(status) : -1));
    return TCL_OK;
}

/*
 * The main arena's figures, from malloc_info's XML (its first heap):
 * {inuse N system N}.
 */

static int
MainHeapCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    char *text = NULL;
    size_t len = 0;
    FILE *fp;
    const char *heap, *end, *p;
    unsigned long long system = 0, fast = 0, rest = 0;

    if (objc != 1) {
	Tcl_WrongNumArgs(interp, 1, objv, NULL);
	return TCL_ERROR;
    }
    fp = open_memstream(&text, &len);
    if (fp == NULL || malloc_info(0, fp) != 0) {
	if (fp != NULL) {
	    fclose(fp);
	}
	free(text);
	Tcl_SetObjResult(interp, Tcl_NewStringObj("malloc_info failed", -1));
	return TCL_ERROR;
    }
    fclose(fp);
    heap = strstr(text, "<heap nr=\"0\">");
    end = heap ? strstr(heap, "</heap>") : NULL;
    if (end == NULL) {
	free(text);
	Tcl_SetObjResult(interp, Tcl_NewStringObj("no main heap", -1));
	return TCL_ERROR;
    }
    for (p = heap; p != NULL && p < end; p = strchr(p + 1, '<')) {
	sscanf(p, "<total type=\"fast\" count=\"%*u\" size=\"%llu\"", &fast);
	sscanf(p, "<total type=\"rest\" count=\"%*u\" size=\"%llu\"", &rest);
	sscanf(p, "<system type=\"current\" size=\"%llu\"", &system);
    }
    free(text);
    {
	Tcl_Obj *objs[4];

	objs[0] = Tcl_NewStringObj("inuse", -1);
	objs[1] = Tcl_NewWideIntObj((Tcl_WideInt) (system - fast - rest));
	objs[2] = Tcl_NewStringObj("system", -1);
	objs[3] = Tcl_NewWideIntObj((Tcl_WideInt) system);
	Tcl_SetObjResult(interp, Tcl_NewListObj(4, objs));
    }
    return TCL_OK;
}

void
CbtestMemInit(
    Tcl_Interp *interp)
{
    Tcl_CreateObjCommand(interp, "cbtest::memleak", MemLeakCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "cbtest::memhold", MemHoldCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "cbtest::memrelease", MemReleaseCmd, NULL,
	    NULL);
    Tcl_CreateObjCommand(interp, "cbtest::memchurn", MemChurnCmd, NULL,
	    NULL);
    Tcl_CreateObjCommand(interp, "cbtest::memsim", MemSimCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "cbtest::memedge", MemEdgeCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "cbtest::memthreads", MemThreadsCmd, NULL,
	    NULL);
    Tcl_CreateObjCommand(interp, "cbtest::memfork", MemForkCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "cbtest::mainheap", MainHeapCmd, NULL, NULL);
}
