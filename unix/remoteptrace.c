/*
 * remoteptrace.c --
 *
 *	Attach layer (see remote.c): stopping and resuming the threads of
 *	another process (PTRACE_SEIZE, PTRACE_INTERRUPT, PTRACE_DETACH),
 *	reading its memory (process_vm_readv, or a core's PT_LOAD
 *	segments), its threads, maps and CPU times from /proc; the
 *	TCLCPROF ATTACH errors.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "remoteInt.h"

/*
 *----------------------------------------------------------------------
 *
 * CprofRmError --
 *
 *	Leave a "TCLCPROF ATTACH code" error in the interpreter.
 *
 * Results:
 *	TCL_ERROR.
 *
 *----------------------------------------------------------------------
 */

int
CprofRmError(
    Tcl_Interp *interp,
    const char *code,
    const char *fmt,
    ...)
{
    char buf[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    Tcl_SetObjResult(interp, Tcl_NewStringObj(buf, -1));
    Tcl_SetErrorCode(interp, "TCLCPROF", "ATTACH", code, NULL);
    return TCL_ERROR;
}

#ifdef CPROF_RM_SUPPORTED

/*
 *----------------------------------------------------------------------
 *
 * TidOffset, ThreadPointerOffset --
 *
 *	Where glibc keeps a thread's id in its struct pthread (a
 *	pthread_t), and (aarch64) how far the thread pointer lies from
 *	the pthread_t: measured once on this process's own threads, whose
 *	glibc is the target's on the same machine. TidOffset scans the
 *	struct pthread of a thread started for it (its id differs from the
 *	process id) for that id; -1 when not found.
 *
 *----------------------------------------------------------------------
 */

static pthread_once_t tidOnce = PTHREAD_ONCE_INIT;
static long tidOffset = -1;

static void *
TidProbe(
    void *arg)
{
    pid_t self = (pid_t) syscall(SYS_gettid);
    const unsigned char *p = (const unsigned char *) pthread_self();
    long off;

    (void) arg;
    for (off = 0; off < 2048; off += (long) sizeof(pid_t)) {
	pid_t v;

	memcpy(&v, p + off, sizeof(v));
	if (v == self) {
	    tidOffset = off;
	    break;
	}
    }
    return NULL;
}

static void
TidInit(void)
{
    pthread_t t;

    if (pthread_create(&t, NULL, TidProbe, NULL) == 0) {
	pthread_join(t, NULL);
    }
}

static long
TidOffset(void)
{
    pthread_once(&tidOnce, TidInit);
    return tidOffset;
}

#if defined(__aarch64__)
static uintptr_t
ThreadPointerOffset(void)
{
    return (uintptr_t) __builtin_thread_pointer()
	    - (uintptr_t) pthread_self();
}
#endif

/*
 *----------------------------------------------------------------------
 *
 * CprofRmReadMem --
 *
 *	Read len bytes at addr of the target.
 *
 * Results:
 *	1 when all were read, else 0.
 *
 *----------------------------------------------------------------------
 */

int
CprofRmReadMem(
    Target *tPtr,
    uintptr_t addr,
    void *buf,
    size_t len)
{
    if (addr == 0) {
	return 0;
    }
    if (tPtr->pid) {
	struct iovec local = {buf, len}, remote = {(void *) addr, len};

	return process_vm_readv(tPtr->pid, &local, 1, &remote, 1, 0)
		== (ssize_t) len;
    } else {
	int i;

	for (i = 0; i < tPtr->numSegs; i++) {
	    Segment *sPtr = &tPtr->segs[i];

	    if (addr >= sPtr->vaddr && addr + len <= sPtr->vaddr + sPtr->memsz) {
		uintptr_t off = addr - sPtr->vaddr;

		if (off + len > sPtr->filesz) {
		    return 0;
		}
		return pread(tPtr->coreFd, buf, len, sPtr->offset + off)
			== (ssize_t) len;
	    }
	}
	return 0;
    }
}


/*
 *----------------------------------------------------------------------
 *
 * CprofRmReadString --
 *
 *	A NUL-terminated string of the target, at most max bytes.
 *
 * Results:
 *	A new Tcl_Obj, or NULL.
 *
 *----------------------------------------------------------------------
 */

Tcl_Obj *
CprofRmReadString(
    Target *tPtr,
    uintptr_t addr,
    int max)
{
    char buf[1024];
    int n, got = 0;

    if (max > (int) sizeof(buf) - 1) {
	max = sizeof(buf) - 1;
    }
    /* Read in small pieces: a string can end just before unmapped memory. */
    while (got < max) {
	n = 64 - (int) ((addr + got) % 64);
	if (got + n > max) {
	    n = max - got;
	}
	if (!CprofRmReadMem(tPtr, addr + got, buf + got, n)) {
	    break;
	}
	if (memchr(buf + got, 0, n)) {
	    return Tcl_NewStringObj(buf, -1);
	}
	got += n;
    }
    if (got == 0) {
	return NULL;
    }
    buf[got] = 0;
    return Tcl_NewStringObj(buf, -1);
}

Tcl_Obj *
CprofRmReadObjString(
    Target *tPtr,
    uintptr_t objAddr)
{
    Tcl_Obj obj;

    if (!READ(tPtr, objAddr, obj) || obj.bytes == NULL || obj.length < 0) {
	return NULL;
    }
    return CprofRmReadString(tPtr, (uintptr_t) obj.bytes,
	    obj.length < 1000 ? obj.length + 1 : 1000);
}


/*
 *----------------------------------------------------------------------
 *
 * ListTids --
 *
 *	The threads of the process, from /proc/PID/task.
 *
 *----------------------------------------------------------------------
 */

static int
ListTids(
    Target *tPtr,
    pid_t *tids,
    int max)
{
    char path[64];
    DIR *d;
    struct dirent *e;
    int n = 0;

    snprintf(path, sizeof(path), "/proc/%d/task", (int) tPtr->pid);
    d = opendir(path);
    if (d == NULL) {
	return -1;
    }
    while ((e = readdir(d)) != NULL && n < max) {
	if (e->d_name[0] >= '0' && e->d_name[0] <= '9') {
	    tids[n++] = atoi(e->d_name);
	}
    }
    closedir(d);
    return n;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofRmStopAll / CprofRmResumeAll --
 *
 *	Seize and interrupt every thread (again while new ones appear),
 *	then wait for each to stop; detach them all.
 *
 *----------------------------------------------------------------------
 */

void
CprofRmResumeAll(
    Target *tPtr)
{
    int i;

    for (i = 0; i < tPtr->numTids; i++) {
	if (tPtr->seized[i]) {
	    ptrace(PTRACE_DETACH, tPtr->tids[i], NULL,
		    (void *) (intptr_t) tPtr->stopSig[i]);
	    tPtr->seized[i] = 0;
	}
    }
}

/*
 * CprofRmProcessGone --
 *
 *	Whether the process has exited (a zombie, or no more), which makes
 *	PTRACE_SEIZE fail with EPERM too.
 */

int
CprofRmProcessGone(
    pid_t pid)
{
    char path[64], buf[512], *p;
    int fd;
    ssize_t n;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
	return 1;
    }
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0) {
	return 1;
    }
    buf[n] = 0;
    p = strrchr(buf, ')');
    return p == NULL || p[1] == 0 || p[2] == 'Z' || p[2] == 'X';
}

/*
 * CprofRmAttachError --
 *
 *	The error of a failed PTRACE_ATTACH/SEIZE of a thread of pid
 *	(errno err): the process gone, not permitted, or another failure.
 */

int
CprofRmAttachError(
    Tcl_Interp *interp,
    pid_t pid,
    int err)
{
    if (err == EPERM && CprofRmProcessGone(pid)) {
	return CprofRmError(interp, "NOPID", "process %d has exited",
		(int) pid);
    }
    if (err == EPERM || err == EACCES) {
	return CprofRmError(interp, "PERM", "cannot trace process %d: %s "
		"(already traced, or not permitted: ptrace_scope, "
		"capabilities)", (int) pid, strerror(err));
    }
    return CprofRmError(interp, "PTRACE", "cannot trace process %d: %s",
	    (int) pid, strerror(err));
}

int
CprofRmStopAll(
    Tcl_Interp *interp,
    Target *tPtr)
{
    int round, i, j, n, added, noThreadPointer;
    pid_t now[MAX_THREADS];

    tPtr->numTids = 0;
    for (round = 0; round < 10; round++) {
	n = ListTids(tPtr, now, MAX_THREADS);
	if (n < 0) {
	    CprofRmResumeAll(tPtr);
	    return CprofRmError(interp, "NOPID", "no such process: %d",
		    (int) tPtr->pid);
	}
	added = 0;
	for (i = 0; i < n; i++) {
	    int known = 0;

	    for (j = 0; j < tPtr->numTids; j++) {
		known |= tPtr->tids[j] == now[i];
	    }
	    if (known || tPtr->numTids >= MAX_THREADS) {
		continue;
	    }
	    if (ptrace(PTRACE_SEIZE, now[i], NULL, NULL) != 0) {
		int err = errno;

		if (err == ESRCH) {
		    continue;		/* The thread ended. */
		}
		CprofRmResumeAll(tPtr);
		return CprofRmAttachError(interp, tPtr->pid, err);
	    }
	    tPtr->tids[tPtr->numTids] = now[i];
	    tPtr->seized[tPtr->numTids] = 1;
	    tPtr->stopSig[tPtr->numTids] = 0;
	    tPtr->numTids++;
	    ptrace(PTRACE_INTERRUPT, now[i], NULL, NULL);
	    added = 1;
	}
	if (!added) {
	    break;
	}
    }
    if (tPtr->numTids == 0) {
	return CprofRmError(interp, "NOPID", "no such process: %d",
		(int) tPtr->pid);
    }
    /*
     * Tests: the thread pointers left unread, as an aarch64 core file
     * leaves them, so that CprofRmThreadOwners is exercised here too.
     */

    noThreadPointer = getenv("TCLCPROF_TEST_NO_THREAD_POINTER") != NULL;
    for (i = 0; i < tPtr->numTids; i++) {
	int status;
#if defined(__x86_64__)
	struct user_regs_struct regs;
#else
	uint64_t tp = 0;
	struct iovec iov;
#endif

	/*
	 * Wait for the interrupt's stop. A signal that arrived first stops
	 * the thread too (a signal-delivery-stop, no event in the status):
	 * it is the program's, and is given back at detach, not dropped.
	 */

	tPtr->stopSig[i] = 0;
	if (waitpid(tPtr->tids[i], &status, __WALL) < 0
		|| !WIFSTOPPED(status)) {
	    tPtr->seized[i] = 0;	/* Exited. */
	    continue;
	}
	if ((status >> 16) == 0) {
	    tPtr->stopSig[i] = WSTOPSIG(status);
	}
#if defined(__x86_64__)
	if (ptrace(PTRACE_GETREGS, tPtr->tids[i], NULL, &regs) == 0) {
	    tPtr->fsBase[i] = regs.fs_base;
	}
#else
	/*
	 * aarch64: the thread pointer, TPIDR_EL0, is a register set of its
	 * own; the pthread_t lies at the offset from it this process
	 * measures on its own thread (the same glibc's layout). Else 0:
	 * CprofRmThreadOwners then matches the thread by its id.
	 */

	iov.iov_base = &tp;
	iov.iov_len = sizeof(tp);
	if (ptrace(PTRACE_GETREGSET, tPtr->tids[i], (void *) NT_ARM_TLS,
		&iov) == 0 && iov.iov_len == sizeof(tp) && tp != 0) {
	    tPtr->fsBase[i] = (uintptr_t) tp - ThreadPointerOffset();
	}
#endif
	if (noThreadPointer) {
	    tPtr->fsBase[i] = 0;
	}
    }
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofRmThreadOwners --
 *
 *	The pthread_t of each thread whose registers did not give it (an
 *	aarch64 core file, whose notes hold no NT_ARM_TLS when qemu-user
 *	wrote it): that of the interp whose threadId, a glibc struct
 *	pthread, holds the thread's id at the offset where this process's
 *	own hold theirs (TidOffset). Threads without an interp keep 0.
 *
 *----------------------------------------------------------------------
 */

void
CprofRmThreadOwners(
    Target *tPtr)
{
    long tidOff;
    int i, j, missing = 0;

    for (i = 0; i < tPtr->numTids; i++) {
	missing += (tPtr->fsBase[i] == 0);
    }
    if (missing == 0 || tPtr->numInterps == 0 || (tidOff = TidOffset()) < 0) {
	return;
    }
    for (i = 0; i < tPtr->numTids; i++) {
	if (tPtr->fsBase[i] != 0) {
	    continue;
	}
	for (j = 0; j < tPtr->numInterps; j++) {
	    Tcl_ThreadId owner;
	    pid_t tid;

	    if (READ(tPtr, tPtr->interps[j] + offsetof(Interp, threadId),
		    owner) && owner != NULL
		    && READ(tPtr, (uintptr_t) owner + tidOff, tid)
		    && tid == tPtr->tids[i]) {
		tPtr->fsBase[i] = (uintptr_t) owner;
		break;
	    }
	}
    }
}


/*
 *----------------------------------------------------------------------
 *
 * CprofRmReadMaps --
 *
 *	The text of /proc/PID/maps (a new Tcl_Obj), or NULL.
 *
 *----------------------------------------------------------------------
 */

Tcl_Obj *
CprofRmReadMaps(
    pid_t pid)
{
    char path[64], buf[8192];
    int fd;
    ssize_t n;
    Tcl_Obj *obj;

    snprintf(path, sizeof(path), "/proc/%d/maps", (int) pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
	return NULL;
    }
    obj = Tcl_NewObj();
    while ((n = read(fd, buf, sizeof(buf))) > 0) {
	Tcl_AppendToObj(obj, buf, n);
    }
    close(fd);
    return obj;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofRmThreadCpu --
 *
 *	utime + stime of a thread, in clock ticks, or -1.
 *
 *----------------------------------------------------------------------
 */

long
CprofRmThreadCpu(
    pid_t pid,
    pid_t tid)
{
    char path[96], buf[1024], *p;
    int fd, field;
    ssize_t n;
    unsigned long ut = 0, st = 0;

    snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int) pid,
	    (int) tid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
	return -1;
    }
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0) {
	return -1;
    }
    buf[n] = 0;
    p = strrchr(buf, ')');
    if (p == NULL) {
	return -1;
    }
    /* Fields after the name start at 3 (state); utime is 14, stime 15. */
    for (field = 3, p += 2; *p && field < 14; p++) {
	if (*p == ' ') {
	    field++;
	}
    }
    if (sscanf(p, "%lu %lu", &ut, &st) != 2) {
	return -1;
    }
    return (long) (ut + st);
}

#endif /* CPROF_RM_SUPPORTED */
