/*
 * remote.c --
 *
 *	Stacks of another process (attach layer, outside the profiled
 *	process): the mixed Tcl and C stack of every thread of a running
 *	process that never loaded tclcprof, or of a core file. It backs
 *	"tclcprof dump" (library/attach.tcl).
 *
 *	- Stopping: every thread is stopped with PTRACE_SEIZE and
 *	  PTRACE_INTERRUPT, never PTRACE_ATTACH: a seized thread is stopped
 *	  without a SIGSTOP, so a tracer that dies (killed in the middle of
 *	  a read) leaves the target running when the kernel detaches it.
 *	  Everything that does not need the threads stopped (the maps, the
 *	  search for the interpreters, the names of C functions) is done
 *	  before the stop or after the threads are resumed.
 *	- Native frames: elfutils' libdwfl unwinds the stopped threads (or
 *	  the core's) with the CFI of each module, as eu-stack does; no
 *	  hand-written unwinder. libdwfl also gives the callee-saved
 *	  registers of each frame, which is what the splice uses.
 *	- Memory: process_vm_readv (a core's PT_LOAD segments for a core).
 *	- Interpreters: libtcl exports no list of interpreters, so the
 *	  writable anonymous memory of the target is searched for the
 *	  address of libtcl's stubs table, which every Interp holds in
 *	  stubTable; a candidate is kept when its global namespace points
 *	  back at it. The target's libtcl must be the very file this
 *	  process runs (same device and inode, or same build-id for a core):
 *	  the layouts of Tcl's structures are those of the private headers
 *	  tclcprof is built with, and offsets inside libtcl (the stubs table,
 *	  TclNRRunCallbacks) are this process's.
 *	- Threads: an interpreter belongs to the thread whose thread pointer
 *	  (fs_base on x86-64) is its threadId.
 *	- Tcl frames: the CallFrame chain of each interpreter from
 *	  iPtr->framePtr (procs, lambdas, methods), continued through the
 *	  caller context of running coroutines; the line of each comes from
 *	  the innermost CmdFrame of its level (the pc of a bytecode frame
 *	  mapped to its command as TclGetSrcInfoForPc does, then the
 *	  command's line from iPtr->lineBCPtr).
 *	- Splice: a Tcl level runs in one TclNRRunCallbacks frame (a
 *	  trampoline). In Debian's libtcl the trampoline keeps the interp
 *	  in r13, its root callback in r12 and the running callback in rbx
 *	  (DESIGN.md section 10); the pending NRE callbacks of the interp,
 *	  cut at each trampoline's root, say which trampoline each
 *	  suspended bytecode level (TEBCresume's TEBCdata) belongs to, and
 *	  rbx which level each trampoline is running. A Tcl frame goes
 *	  right after its trampoline's native frame. A frame not placed so
 *	  goes with the frame outside it (counted in "unplaced").
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#define _GNU_SOURCE
#include "tclcprofInt.h"
#include "tclCompile.h"
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <sys/procfs.h>
#include <elfutils/libdwfl.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>

/*
 * TEBCdata is private to tclExecute.c; its head as Tcl 8.6 declares it.
 */

typedef struct RemoteTEBCdata {
    ByteCode *codePtr;
    ptrdiff_t *catchTop;
    Tcl_Obj *auxObjList;
    CmdFrame cmdFrame;
} RemoteTEBCdata;

#define MAX_THREADS	256
#define MAX_NATIVE	256
#define MAX_TCL		512
#define MAX_INTERPS	64
#define MAX_CB		100000

/* DWARF register numbers, x86-64. */
#define DW_RBX		3
#define DW_RSP		7
#define DW_R12		12
#define DW_R13		13

typedef struct Segment {	/* One PT_LOAD of a core file. */
    uintptr_t vaddr;
    uintptr_t memsz;
    uintptr_t filesz;
    off_t offset;
} Segment;

typedef struct Target {
    pid_t pid;			/* Process, or 0 for a core. */
    int coreFd;			/* Core file, or -1. */
    Elf *coreElf;
    Segment *segs;
    int numSegs;
    Dwfl *dwfl;
    uintptr_t tclBase;		/* Load address of the target's libtcl. */
    uintptr_t stubs;		/* Address of tclStubs in the target. */
    uintptr_t trampStart, trampEnd;	/* TclNRRunCallbacks. */
    uintptr_t interps[MAX_INTERPS];
    int numInterps;
    int numTids;
    pid_t tids[MAX_THREADS];
    int seized[MAX_THREADS];
    int stopSig[MAX_THREADS];	/* Signal of a signal-delivery-stop, given
				 * back at detach. */
    uintptr_t fsBase[MAX_THREADS];	/* Thread pointer of each. */
} Target;

typedef struct NFrame {		/* A native frame. */
    uintptr_t pc;
    uintptr_t sp;
    int activation;
    int isTramp;
    uintptr_t rbx, r12, r13;
} NFrame;

typedef struct TFrame {		/* A Tcl frame. */
    Tcl_Obj *name;
    Tcl_Obj *file;
    int line;
    int after;			/* Native index it follows (outer->inner),
				 * -1 when not placed. */
} TFrame;

typedef struct ThreadStack {
    pid_t tid;
    int numNative;
    NFrame native[MAX_NATIVE];	/* Innermost first, as unwound. */
    int numTcl;
    TFrame tcl[MAX_TCL];	/* Outermost first. */
    int unplaced;
} ThreadStack;

typedef struct StackBox {	/* A thread's stack and its target. */
    Target *tPtr;
    ThreadStack s;
} StackBox;

static int		ReadMem(Target *tPtr, uintptr_t addr, void *buf,
			    size_t len);

/*
 *----------------------------------------------------------------------
 *
 * AttachError --
 *
 *	Leave a "TCLCPROF ATTACH code" error in the interpreter.
 *
 * Results:
 *	TCL_ERROR.
 *
 *----------------------------------------------------------------------
 */

static int
AttachError(
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

#if defined(__x86_64__)

static double
NowUs(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/*
 *----------------------------------------------------------------------
 *
 * ReadMem --
 *
 *	Read len bytes at addr of the target.
 *
 * Results:
 *	1 when all were read, else 0.
 *
 *----------------------------------------------------------------------
 */

static int
ReadMem(
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

#define READ(tPtr, addr, var) ReadMem((tPtr), (uintptr_t) (addr), &(var), sizeof(var))

/*
 *----------------------------------------------------------------------
 *
 * ReadString --
 *
 *	A NUL-terminated string of the target, at most max bytes.
 *
 * Results:
 *	A new Tcl_Obj, or NULL.
 *
 *----------------------------------------------------------------------
 */

static Tcl_Obj *
ReadString(
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
	if (!ReadMem(tPtr, addr + got, buf + got, n)) {
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

static Tcl_Obj *
ReadObjString(
    Target *tPtr,
    uintptr_t objAddr)
{
    Tcl_Obj obj;

    if (!READ(tPtr, objAddr, obj) || obj.bytes == NULL || obj.length < 0) {
	return NULL;
    }
    return ReadString(tPtr, (uintptr_t) obj.bytes,
	    obj.length < 1000 ? obj.length + 1 : 1000);
}

/*
 *----------------------------------------------------------------------
 *
 * OwnLibtcl --
 *
 *	This process's libtcl: its path, identity, load address and the
 *	offsets of tclStubs and TclNRRunCallbacks in it.
 *
 *----------------------------------------------------------------------
 */

static int
OwnLibtcl(
    Tcl_Interp *interp,
    const char **pathPtr,
    uintptr_t *baseOffStubs,
    uintptr_t *trampOff,
    uintptr_t *trampSize)
{
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    void *stubs = (void *) ((Interp *) interp)->stubTable;
    void *tramp;

    if (!dladdr(stubs, &info) || info.dli_fname == NULL) {
	return 0;
    }
    *pathPtr = info.dli_fname;
    *baseOffStubs = (uintptr_t) stubs - (uintptr_t) info.dli_fbase;
    tramp = dlsym(RTLD_DEFAULT, "TclNRRunCallbacks");
    if (tramp == NULL || !dladdr1(tramp, &info, (void **) &sym,
	    RTLD_DL_SYMENT) || sym == NULL) {
	return 0;
    }
    *trampOff = (uintptr_t) tramp - (uintptr_t) info.dli_fbase;
    *trampSize = sym->st_size ? sym->st_size : 0x200;
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * SameBuildId --
 *
 *	Whether two ELF files have the same (non-empty) GNU build-id.
 *
 *----------------------------------------------------------------------
 */

static int
FileBuildId(
    const char *path,
    unsigned char *buf,
    int max)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC), n = -1;
    Elf *elf;
    const void *id;

    if (fd < 0) {
	return -1;
    }
    elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (elf) {
	n = dwelf_elf_gnu_build_id(elf, &id);
	if (n > 0 && n <= max) {
	    memcpy(buf, id, n);
	} else {
	    n = -1;
	}
	elf_end(elf);
    }
    close(fd);
    return n;
}

static int
SameBuildId(
    const char *a,
    const char *b)
{
    unsigned char ida[64], idb[64];
    int na, nb;

    elf_version(EV_CURRENT);
    na = FileBuildId(a, ida, sizeof(ida));
    nb = FileBuildId(b, idb, sizeof(idb));
    return na > 0 && na == nb && memcmp(ida, idb, na) == 0;
}

/*
 *----------------------------------------------------------------------
 *
 * FindProcLibtcl --
 *
 *	The load address of the target's libtcl, from /proc/PID/maps,
 *	checked to be the same file as this process's.
 *
 *----------------------------------------------------------------------
 */

static int
FindProcLibtcl(
    Tcl_Interp *interp,
    Target *tPtr,
    const char *ownPath)
{
    char path[64], line[1024];
    FILE *f;
    struct stat own, their;
    int found = 0, sameFile = 0;

    snprintf(path, sizeof(path), "/proc/%d/maps", (int) tPtr->pid);
    f = fopen(path, "r");
    if (f == NULL) {
	return AttachError(interp, "NOPID", "no such process: %d",
		(int) tPtr->pid);
    }
    if (stat(ownPath, &own) != 0) {
	fclose(f);
	return AttachError(interp, "LAYOUT", "cannot find this process's "
		"libtcl (%s)", ownPath);
    }
    while (fgets(line, sizeof(line), f)) {
	unsigned long lo, hi, off, inode;
	char perms[8], dev[16], file[768];

	file[0] = 0;
	if (sscanf(line, "%lx-%lx %7s %lx %15s %lu %767s", &lo, &hi, perms,
		&off, dev, &inode, file) < 6) {
	    continue;
	}
	if (strstr(file, "/libtcl8") == NULL && strstr(file, "/libtcl9") == NULL) {
	    continue;
	}
	if (off == 0 && !found) {
	    char mf[128];

	    found = 1;
	    tPtr->tclBase = lo;
	    snprintf(mf, sizeof(mf), "/proc/%d/map_files/%lx-%lx",
		    (int) tPtr->pid, lo, hi);
	    if (stat(mf, &their) != 0 && stat(file, &their) != 0) {
		continue;
	    }
	    if (their.st_ino == own.st_ino && their.st_dev == own.st_dev) {
		sameFile = 1;
	    } else {
		/* Another file: the same build (a copy) is the same layout. */
		sameFile = SameBuildId(ownPath, mf) || SameBuildId(ownPath, file);
	    }
	}
    }
    fclose(f);
    if (!found) {
	return AttachError(interp, "NOTCL", "process %d has no libtcl loaded",
		(int) tPtr->pid);
    }
    if (!sameFile) {
	return AttachError(interp, "LAYOUT", "process %d runs another libtcl "
		"than tclcprof's (%s): its layout is unknown", (int) tPtr->pid,
		ownPath);
    }
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * CheckInterp --
 *
 *	Whether addr holds a live Interp: its global namespace points back
 *	at it and it has an execution environment.
 *
 *----------------------------------------------------------------------
 */

static int
CheckInterp(
    Target *tPtr,
    uintptr_t addr)
{
    Interp in;
    Namespace ns;

    if (!READ(tPtr, addr, in) || (uintptr_t) in.stubTable != tPtr->stubs
	    || in.globalNsPtr == NULL || in.execEnvPtr == NULL
	    || (in.flags & DELETED)) {
	return 0;
    }
    if (!READ(tPtr, in.globalNsPtr, ns) || (uintptr_t) ns.interp != addr) {
	return 0;
    }
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * ScanRegion --
 *
 *	Search [lo,hi) of the target for the stubs table's address and
 *	record the interps found.
 *
 *----------------------------------------------------------------------
 */

static void
ScanRegion(
    Target *tPtr,
    uintptr_t lo,
    uintptr_t hi,
    const unsigned char *data)	/* The bytes when already in memory (a
				 * core's segment), else NULL. */
{
    static uintptr_t buf[1 << 17];	/* 1 MB */
    uintptr_t addr, n, i;
    size_t off = offsetof(Interp, stubTable);

    for (addr = lo; addr < hi; addr += n * sizeof(uintptr_t)) {
	n = (hi - addr) / sizeof(uintptr_t);
	if (n > sizeof(buf) / sizeof(uintptr_t)) {
	    n = sizeof(buf) / sizeof(uintptr_t);
	}
	if (n == 0) {
	    break;
	}
	if (data) {
	    memcpy(buf, data + (addr - lo), n * sizeof(uintptr_t));
	} else if (!ReadMem(tPtr, addr, buf, n * sizeof(uintptr_t))) {
	    continue;
	}
	for (i = 0; i < n; i++) {
	    if (buf[i] == tPtr->stubs && tPtr->numInterps < MAX_INTERPS) {
		uintptr_t cand = addr + i * sizeof(uintptr_t) - off;
		int j, dup = 0;

		for (j = 0; j < tPtr->numInterps; j++) {
		    dup |= tPtr->interps[j] == cand;
		}
		if (!dup && CheckInterp(tPtr, cand)) {
		    tPtr->interps[tPtr->numInterps++] = cand;
		}
	    }
	}
    }
}

/*
 *----------------------------------------------------------------------
 *
 * ScanProcInterps --
 *
 *	Find the interpreters of a live process: writable private memory
 *	that is not a file's (the heap, anonymous maps, threads' arenas).
 *
 *----------------------------------------------------------------------
 */

static void
ScanProcInterps(
    Target *tPtr)
{
    char path[64], line[1024];
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/maps", (int) tPtr->pid);
    f = fopen(path, "r");
    if (f == NULL) {
	return;
    }
    while (fgets(line, sizeof(line), f)) {
	unsigned long lo, hi, off, inode;
	char perms[8], dev[16], file[768];

	file[0] = 0;
	if (sscanf(line, "%lx-%lx %7s %lx %15s %lu %767s", &lo, &hi, perms,
		&off, dev, &inode, file) < 6) {
	    continue;
	}
	if (perms[0] != 'r' || perms[1] != 'w' || inode != 0
		|| (file[0] && strcmp(file, "[heap]") != 0)) {
	    continue;
	}
	ScanRegion(tPtr, lo, hi, NULL);
    }
    fclose(f);
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
 * StopAll / ResumeAll --
 *
 *	Seize and interrupt every thread (again while new ones appear),
 *	then wait for each to stop; detach them all.
 *
 *----------------------------------------------------------------------
 */

static void
ResumeAll(
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
 * ProcessGone --
 *
 *	Whether the process has exited (a zombie, or no more), which makes
 *	PTRACE_SEIZE fail with EPERM too.
 */

static int
ProcessGone(
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

static int
StopAll(
    Tcl_Interp *interp,
    Target *tPtr)
{
    int round, i, j, n, added;
    pid_t now[MAX_THREADS];

    tPtr->numTids = 0;
    for (round = 0; round < 10; round++) {
	n = ListTids(tPtr, now, MAX_THREADS);
	if (n < 0) {
	    ResumeAll(tPtr);
	    return AttachError(interp, "NOPID", "no such process: %d",
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
		ResumeAll(tPtr);
		if (err == EPERM && ProcessGone(tPtr->pid)) {
		    return AttachError(interp, "NOPID", "process %d has "
			    "exited", (int) tPtr->pid);
		}
		if (err == EPERM || err == EACCES) {
		    return AttachError(interp, "PERM", "cannot trace process "
			    "%d: %s (already traced, or not permitted: "
			    "ptrace_scope, capabilities)", (int) tPtr->pid,
			    strerror(err));
		}
		return AttachError(interp, "PTRACE", "cannot trace process "
			"%d: %s", (int) tPtr->pid, strerror(err));
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
	return AttachError(interp, "NOPID", "no such process: %d",
		(int) tPtr->pid);
    }
    for (i = 0; i < tPtr->numTids; i++) {
	int status;
	struct user_regs_struct regs;

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
	if (ptrace(PTRACE_GETREGS, tPtr->tids[i], NULL, &regs) == 0) {
	    tPtr->fsBase[i] = regs.fs_base;
	}
    }
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * UnwindThread --
 *
 *	Native frames of one thread, with the trampolines' registers.
 *
 *----------------------------------------------------------------------
 */

static int
FrameCb(
    Dwfl_Frame *frame,
    void *arg)
{
    StackBox *boxPtr = arg;
    ThreadStack *sPtr = &boxPtr->s;
    Target *tPtr = boxPtr->tPtr;
    NFrame *fPtr;
    Dwarf_Addr pc;
    bool act;
    Dwarf_Word v;

    if (sPtr->numNative >= MAX_NATIVE || !dwfl_frame_pc(frame, &pc, &act)) {
	return DWARF_CB_ABORT;
    }
    fPtr = &sPtr->native[sPtr->numNative++];
    memset(fPtr, 0, sizeof(*fPtr));
    fPtr->pc = pc;
    fPtr->activation = act;
    if (dwfl_frame_reg(frame, DW_RSP, &v) == 0) {
	fPtr->sp = v;
    }
    if (!act) {
	pc--;
    }
    if (pc >= tPtr->trampStart && pc < tPtr->trampEnd) {
	fPtr->isTramp = 1;
	if (dwfl_frame_reg(frame, DW_RBX, &v) == 0) {
	    fPtr->rbx = v;
	}
	if (dwfl_frame_reg(frame, DW_R12, &v) == 0) {
	    fPtr->r12 = v;
	}
	if (dwfl_frame_reg(frame, DW_R13, &v) == 0) {
	    fPtr->r13 = v;
	}
    }
    return DWARF_CB_OK;
}


/*
 *----------------------------------------------------------------------
 *
 * Tcl frame reading.
 *
 *----------------------------------------------------------------------
 */

typedef struct TdOwner {	/* TEBCdata address -> trampoline (native
				 * index). */
    uintptr_t td;
    int nat;
} TdOwner;

/*
 * BcLine --
 *
 *	File and line of the command at pc of a bytecode, as
 *	TclGetSrcInfoForPc finds them.
 */

static int
GetDelta(
    Target *tPtr,
    uintptr_t *pPtr,
    int *valPtr)
{
    unsigned char b;

    if (!READ(tPtr, *pPtr, b)) {
	return 0;
    }
    if (b == 0xFF) {
	unsigned char w[4];

	if (!ReadMem(tPtr, *pPtr + 1, w, 4)) {
	    return 0;
	}
	*valPtr = (int) ((w[0] << 24) | (w[1] << 16) | (w[2] << 8) | w[3]);
	*pPtr += 5;
    } else {
	*valPtr = (signed char) b;
	*pPtr += 1;
    }
    return 1;
}

static void
BcLine(
    Target *tPtr,
    Interp *inPtr,
    uintptr_t codeAddr,
    uintptr_t pc,
    TFrame *fPtr)
{
    ByteCode bc;
    uintptr_t cd, cl, sd, sl;
    int i, codeOffset = 0, srcOffset = 0, delta, codeLen, srcLen;
    int bestDist = INT_MAX, bestSrc = -1, pcOffset;
    Tcl_HashTable table;
    Tcl_HashEntry *hPtr, entry;
    ExtCmdLoc ecl;

    if (!READ(tPtr, codeAddr, bc) || pc < (uintptr_t) bc.codeStart) {
	return;
    }
    pcOffset = (int) (pc - (uintptr_t) bc.codeStart);
    if (pcOffset >= bc.numCodeBytes || bc.numCommands > 100000) {
	return;
    }
    cd = (uintptr_t) bc.codeDeltaStart;
    cl = (uintptr_t) bc.codeLengthStart;
    sd = (uintptr_t) bc.srcDeltaStart;
    sl = (uintptr_t) bc.srcLengthStart;
    for (i = 0; i < bc.numCommands; i++) {
	if (!GetDelta(tPtr, &cd, &delta)) {
	    return;
	}
	codeOffset += delta;
	if (!GetDelta(tPtr, &cl, &codeLen) || !GetDelta(tPtr, &sd, &delta)
		|| !GetDelta(tPtr, &sl, &srcLen)) {
	    return;
	}
	srcOffset += delta;
	if (codeOffset > pcOffset) {
	    break;
	}
	if (pcOffset <= codeOffset + codeLen - 1
		&& pcOffset - codeOffset <= bestDist) {
	    bestDist = pcOffset - codeOffset;
	    bestSrc = srcOffset;
	}
    }
    if (bestSrc < 0 || inPtr->lineBCPtr == NULL
	    || !READ(tPtr, inPtr->lineBCPtr, table)
	    || (Tcl_WideInt) table.mask < 0
	    || table.buckets == NULL) {
	return;
    }
    i = (int) ((((unsigned long) codeAddr) * 1103515245UL >> table.downShift)
	    & table.mask);
    if (!READ(tPtr, (uintptr_t) table.buckets + i * sizeof(void *), hPtr)) {
	return;
    }
    for (; hPtr != NULL; hPtr = entry.nextPtr) {
	if (!READ(tPtr, hPtr, entry)) {
	    return;
	}
	if ((uintptr_t) entry.key.oneWordValue == codeAddr) {
	    break;
	}
    }
    if (hPtr == NULL || !READ(tPtr, entry.clientData, ecl)
	    || ecl.nuloc > 100000) {
	return;
    }
    for (i = 0; i < ecl.nuloc; i++) {
	ECL loc;
	int line;

	if (!READ(tPtr, (uintptr_t) ecl.loc + i * sizeof(ECL), loc)) {
	    return;
	}
	if (loc.srcOffset == bestSrc) {
	    if (loc.nline > 0 && READ(tPtr, loc.line, line) && line > 0) {
		fPtr->line = line;
		if (ecl.path) {
		    fPtr->file = ReadObjString(tPtr, (uintptr_t) ecl.path);
		    if (fPtr->file) {
			Tcl_IncrRefCount(fPtr->file);
		    }
		}
	    }
	    return;
	}
    }
}

/*
 * FrameName --
 *
 *	The name of a proc (or lambda, method) frame: the command's
 *	qualified name, else the first word it was called with.
 */

static Tcl_Obj *
FrameName(
    Target *tPtr,
    CallFrame *cfPtr)
{
    Proc proc;
    Command cmd;
    Namespace ns;
    Tcl_Obj *nameObj = NULL, *nsObj;
    Tcl_Obj *objv0;

    if (cfPtr->procPtr && READ(tPtr, cfPtr->procPtr, proc) && proc.cmdPtr
	    && (cfPtr->isProcCallFrame & FRAME_IS_PROC)
	    && READ(tPtr, proc.cmdPtr, cmd) && cmd.hPtr && cmd.nsPtr
	    && READ(tPtr, cmd.nsPtr, ns)) {
	Tcl_Obj *keyObj = ReadString(tPtr, (uintptr_t) cmd.hPtr
		+ offsetof(Tcl_HashEntry, key), 512);

	nsObj = ReadString(tPtr, (uintptr_t) ns.fullName, 512);
	if (keyObj && nsObj) {
	    nameObj = nsObj;
	    if (strcmp(Tcl_GetString(nsObj), "::") != 0) {
		Tcl_AppendToObj(nameObj, "::", 2);
	    }
	    Tcl_AppendObjToObj(nameObj, keyObj);
	    Tcl_DecrRefCount(keyObj);
	    return nameObj;
	}
	if (keyObj) {
	    Tcl_DecrRefCount(keyObj);
	}
	if (nsObj) {
	    Tcl_DecrRefCount(nsObj);
	}
    }
    if (cfPtr->objc > 0 && cfPtr->objv
	    && READ(tPtr, cfPtr->objv, objv0)) {
	nameObj = ReadObjString(tPtr, (uintptr_t) objv0);
	if (nameObj && (cfPtr->isProcCallFrame & FRAME_IS_LAMBDA)) {
	    Tcl_Obj *o = Tcl_NewStringObj("apply ", -1);

	    Tcl_AppendObjToObj(o, nameObj);
	    Tcl_DecrRefCount(nameObj);
	    nameObj = o;
	}
    }
    return nameObj ? nameObj : Tcl_NewStringObj("(unknown frame)", -1);
}

/*
 * ReadInterpFrames --
 *
 *	Append the Tcl frames of interp inAddr to the thread's stack,
 *	placed after their trampolines.
 */

#define MAX_TD 1024

static void
ReadInterpFrames(
    Target *tPtr,
    uintptr_t inAddr,
    ThreadStack *sPtr)
{
    Interp in;
    ExecEnv ee;
    CoroutineData cor;
    uintptr_t eeAddr, cbAddr, cfAddr, fpAddr;
    TdOwner owners[MAX_TD];
    int numOwners = 0;
    int tramps[MAX_NATIVE], numTramps = 0, pos, i, j, steps;
    uintptr_t cmdFrames[MAX_TCL];
    int numCmdFrames = 0;
    TFrame frames[MAX_TCL];
    uintptr_t frameAddr[MAX_TCL];
    int numFrames = 0, first;

    if (!READ(tPtr, inAddr, in)) {
	return;
    }

    /*
     * Trampolines of this interp, outer to inner (native is innermost
     * first).
     */

    for (i = sPtr->numNative - 1; i >= 0; i--) {
	if (sPtr->native[i].isTramp && sPtr->native[i].r13 == inAddr) {
	    tramps[numTramps++] = i;
	}
    }

    /*
     * Pending callbacks, innermost first across the coroutines' execution
     * environments, cut at each trampoline's root callback.
     */

    pos = numTramps - 1;
    eeAddr = (uintptr_t) in.execEnvPtr;
    steps = 0;
    while (eeAddr && READ(tPtr, eeAddr, ee)) {
	NRE_callback cb;

	for (cbAddr = (uintptr_t) ee.callbackPtr; cbAddr && steps < MAX_CB;
		cbAddr = (uintptr_t) cb.nextPtr, steps++) {
	    while (pos >= 0 && cbAddr == sPtr->native[tramps[pos]].r12) {
		pos--;
	    }
	    if (!READ(tPtr, cbAddr, cb)) {
		break;
	    }
	    if (pos >= 0 && numOwners < MAX_TD) {
		owners[numOwners].td = (uintptr_t) cb.data[0];
		owners[numOwners].nat = tramps[pos];
		numOwners++;
	    }
	}
	if (ee.corPtr == NULL || !READ(tPtr, ee.corPtr, cor)) {
	    break;
	}
	eeAddr = (uintptr_t) cor.callerEEPtr;
    }
    for (i = 0; i < numTramps && numOwners < MAX_TD; i++) {
	NRE_callback cb;

	if (READ(tPtr, sPtr->native[tramps[i]].rbx, cb)) {
	    owners[numOwners].td = (uintptr_t) cb.data[0];
	    owners[numOwners].nat = tramps[i];
	    numOwners++;
	}
    }

    /*
     * CmdFrames: the interp's chain and those of the callers of running
     * coroutines.
     */

    cfAddr = (uintptr_t) in.cmdFramePtr;
    eeAddr = (uintptr_t) in.execEnvPtr;
    for (;;) {
	CmdFrame cf;

	while (cfAddr && numCmdFrames < MAX_TCL && READ(tPtr, cfAddr, cf)) {
	    for (j = 0; j < numCmdFrames && cmdFrames[j] != cfAddr; j++) {
	    }
	    if (j < numCmdFrames) {
		break;
	    }
	    cmdFrames[numCmdFrames++] = cfAddr;
	    cfAddr = (uintptr_t) cf.nextPtr;
	}
	if (!eeAddr || !READ(tPtr, eeAddr, ee) || ee.corPtr == NULL
		|| !READ(tPtr, ee.corPtr, cor)) {
	    break;
	}
	cfAddr = (uintptr_t) cor.caller.cmdFramePtr;
	eeAddr = (uintptr_t) cor.callerEEPtr;
    }

    /*
     * CallFrames, innermost first, through coroutines' callers.
     */

    fpAddr = (uintptr_t) in.framePtr;
    eeAddr = (uintptr_t) in.execEnvPtr;
    steps = 0;
    while (numFrames < MAX_TCL && steps++ < 10000) {
	CallFrame cf;

	if (fpAddr == 0 || fpAddr == (uintptr_t) in.rootFramePtr) {
	    if (!eeAddr || !READ(tPtr, eeAddr, ee) || ee.corPtr == NULL
		    || !READ(tPtr, ee.corPtr, cor)) {
		break;
	    }
	    fpAddr = (uintptr_t) cor.caller.framePtr;
	    eeAddr = (uintptr_t) cor.callerEEPtr;
	    continue;
	}
	if (!READ(tPtr, fpAddr, cf)) {
	    break;
	}
	if (cf.isProcCallFrame & (FRAME_IS_PROC | FRAME_IS_LAMBDA
		| FRAME_IS_METHOD)) {
	    TFrame *fPtr = &frames[numFrames];

	    fPtr->name = FrameName(tPtr, &cf);
	    Tcl_IncrRefCount(fPtr->name);
	    fPtr->file = NULL;
	    fPtr->line = 0;
	    fPtr->after = -1;
	    frameAddr[numFrames++] = fpAddr;
	}
	fpAddr = (uintptr_t) cf.callerPtr;
    }

    /*
     * Line (innermost CmdFrame of the frame's level) and place (the
     * outermost trampoline of a bytecode level of the frame) of each.
     */

    for (i = 0; i < numFrames; i++) {
	TFrame *fPtr = &frames[i];

	for (j = 0; j < numCmdFrames; j++) {
	    CmdFrame cf;
	    int k;

	    if (!READ(tPtr, cmdFrames[j], cf)
		    || (uintptr_t) cf.framePtr != frameAddr[i]) {
		continue;
	    }
	    /*
	     * The outermost one: the proc body's level; inner ones in the
	     * same frame are scripts it evaluates (a C command's callback).
	     */

	    if (cf.type == TCL_LOCATION_BC || cf.type == TCL_LOCATION_PREBC) {
		if (fPtr->file) {
		    Tcl_DecrRefCount(fPtr->file);
		    fPtr->file = NULL;
		}
		fPtr->line = 0;
		BcLine(tPtr, &in, (uintptr_t) cf.data.tebc.codePtr,
			(uintptr_t) cf.data.tebc.pc, fPtr);
	    }
	    for (k = 0; k < numOwners; k++) {
		if (owners[k].td == cmdFrames[j]
			- offsetof(RemoteTEBCdata, cmdFrame)) {
		    if (fPtr->after < 0 || owners[k].nat > fPtr->after) {
			/* Outermost: the highest index innermost first. */
			fPtr->after = owners[k].nat;
		    }
		}
	    }
	}
	if (fPtr->after < 0) {
	    /* The running level: the TEBCdata a trampoline runs. */
	    for (j = 0; j < numOwners; j++) {
		RemoteTEBCdata td;

		if (READ(tPtr, owners[j].td, td)
			&& (uintptr_t) td.cmdFrame.framePtr == frameAddr[i]) {
		    for (first = 0; first < numTramps; first++) {
			if (tramps[first] == owners[j].nat) {
			    break;
			}
		    }
		    if (first < numTramps && (fPtr->after < 0
			    || owners[j].nat > fPtr->after)) {
			fPtr->after = owners[j].nat;
		    }
		}
	    }
	}
    }

    /*
     * Outer first into the thread's list: "after" is converted to an
     * outer->inner native index; unplaced frames go with the frame
     * outside them, and nothing moves outward.
     */

    for (i = numFrames - 1; i >= 0; i--) {
	TFrame *fPtr = &frames[i];
	int prev = sPtr->numTcl ? sPtr->tcl[sPtr->numTcl - 1].after : -1;

	if (fPtr->after >= 0) {
	    fPtr->after = sPtr->numNative - 1 - fPtr->after;
	}
	if (fPtr->after < 0 && prev < 0) {
	    /* Innermost trampoline of the interp, else the innermost. */
	    fPtr->after = numTramps ? sPtr->numNative - 1 - tramps[numTramps - 1]
		    : sPtr->numNative - 1;
	    sPtr->unplaced++;
	} else if (fPtr->after < prev) {
	    fPtr->after = prev;
	    sPtr->unplaced++;
	}
	if (sPtr->numTcl < MAX_TCL) {
	    sPtr->tcl[sPtr->numTcl++] = *fPtr;
	} else {
	    Tcl_DecrRefCount(fPtr->name);
	    if (fPtr->file) {
		Tcl_DecrRefCount(fPtr->file);
	    }
	}
    }
}

/*
 *----------------------------------------------------------------------
 *
 * NativeName --
 *
 *	The name of a native frame's function ("symbol", else
 *	"module+0xoffset") and its module's file name.
 *
 *----------------------------------------------------------------------
 */

/*
 * The names of a session's addresses (pc -> {name module}), so that each
 * sample names only the addresses it has not seen. NULL outside one.
 */

static Tcl_HashTable *nameCachePtr = NULL;

static void NativeNameUncached(Dwfl *dwfl, NFrame *nPtr, Tcl_Obj **namePtr,
			    Tcl_Obj **modPtr);

static void
NativeName(
    Dwfl *dwfl,
    NFrame *nPtr,
    Tcl_Obj **namePtr,
    Tcl_Obj **modPtr)
{
    Tcl_HashEntry *hPtr;
    Tcl_Obj **pair;
    int isNew;

    if (nameCachePtr == NULL) {
	NativeNameUncached(dwfl, nPtr, namePtr, modPtr);
	return;
    }
    hPtr = Tcl_CreateHashEntry(nameCachePtr, (char *) (nPtr->pc
	    - (nPtr->activation ? 0 : 1)), &isNew);
    if (isNew) {
	pair = (Tcl_Obj **) ckalloc(2 * sizeof(Tcl_Obj *));
	NativeNameUncached(dwfl, nPtr, &pair[0], &pair[1]);
	Tcl_IncrRefCount(pair[0]);
	Tcl_IncrRefCount(pair[1]);
	Tcl_SetHashValue(hPtr, pair);
    }
    pair = (Tcl_Obj **) Tcl_GetHashValue(hPtr);
    *namePtr = pair[0];
    *modPtr = pair[1];
}

static void
ClearNameCache(void)
{
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    if (nameCachePtr == NULL) {
	return;
    }
    for (hPtr = Tcl_FirstHashEntry(nameCachePtr, &search); hPtr;
	    hPtr = Tcl_NextHashEntry(&search)) {
	Tcl_Obj **pair = (Tcl_Obj **) Tcl_GetHashValue(hPtr);

	Tcl_DecrRefCount(pair[0]);
	Tcl_DecrRefCount(pair[1]);
	ckfree(pair);
    }
    Tcl_DeleteHashTable(nameCachePtr);
    ckfree(nameCachePtr);
    nameCachePtr = NULL;
}

static void
NativeNameUncached(
    Dwfl *dwfl,
    NFrame *nPtr,
    Tcl_Obj **namePtr,
    Tcl_Obj **modPtr)
{
    Dwarf_Addr pc = nPtr->pc - (nPtr->activation ? 0 : 1);
    Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
    const char *modName = NULL, *sym = NULL, *slash;
    Dwarf_Addr start = 0;
    GElf_Off off = 0;
    GElf_Sym s;

    if (mod) {
	modName = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL,
		NULL);
	sym = dwfl_module_addrinfo(mod, pc, &off, &s, NULL, NULL, NULL);
	if (sym && s.st_size && off >= s.st_size) {
	    sym = NULL;		/* A stripped static function. */
	}
    }
    slash = modName ? strrchr(modName, '/') : NULL;
    if (slash) {
	modName = slash + 1;
    }
    *modPtr = Tcl_NewStringObj(modName ? modName : "[unknown]", -1);
    if (sym) {
	*namePtr = Tcl_NewStringObj(sym, -1);
	return;
    }
    if (mod) {
	/*
	 * A stripped function: named after its start from the unwind
	 * tables, "module!fn_0x<start>", as symbolize.c names it in
	 * profiles made in the process.
	 */

	Dwarf_Addr bias;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &bias);
	Dwarf_Frame *frame = NULL;
	Dwarf_Addr fstart, fend;

	if (cfi && dwarf_cfi_addrframe(cfi, pc - bias, &frame) == 0
		&& dwarf_frame_info(frame, &fstart, &fend, NULL) >= 0) {
	    *namePtr = Tcl_ObjPrintf("%s!fn_0x%llx", modName,
		    (unsigned long long) fstart);
	    free(frame);
	    return;
	}
	free(frame);
    }
    if (modName) {
	*namePtr = Tcl_ObjPrintf("%s+0x%lx", modName,
		(unsigned long) (pc - start));
    } else {
	*namePtr = Tcl_ObjPrintf("0x%lx", (unsigned long) pc);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * StackObj --
 *
 *	A thread's mixed stack as a Tcl list, outermost frame first: each
 *	frame a dict {kind c name N module M} or {kind tcl name N ?file F
 *	line L?}.
 *
 *----------------------------------------------------------------------
 */

static Tcl_Obj *
StackObj(
    Dwfl *dwfl,
    ThreadStack *sPtr)
{
    Tcl_Obj *listObj = Tcl_NewObj();
    int i, k, t;

    for (k = 0; k < sPtr->numNative; k++) {
	NFrame *nPtr = &sPtr->native[sPtr->numNative - 1 - k];
	Tcl_Obj *f = Tcl_NewObj(), *name, *mod;

	NativeName(dwfl, nPtr, &name, &mod);
	Tcl_ListObjAppendElement(NULL, f, Tcl_NewStringObj("kind", -1));
	Tcl_ListObjAppendElement(NULL, f, Tcl_NewStringObj("c", -1));
	Tcl_ListObjAppendElement(NULL, f, Tcl_NewStringObj("name", -1));
	Tcl_ListObjAppendElement(NULL, f, name);
	Tcl_ListObjAppendElement(NULL, f, Tcl_NewStringObj("module", -1));
	Tcl_ListObjAppendElement(NULL, f, mod);
	Tcl_ListObjAppendElement(NULL, listObj, f);

	/*
	 * The Tcl frames placed after this one, in order of their place
	 * (interps of one thread were read one after the other).
	 */

	for (t = 0; t < sPtr->numTcl; t++) {
	    TFrame *tf = &sPtr->tcl[t];

	    if (tf->after != k) {
		continue;
	    }
	    f = Tcl_NewObj();
	    Tcl_ListObjAppendElement(NULL, f, Tcl_NewStringObj("kind", -1));
	    Tcl_ListObjAppendElement(NULL, f, Tcl_NewStringObj("tcl", -1));
	    Tcl_ListObjAppendElement(NULL, f, Tcl_NewStringObj("name", -1));
	    Tcl_ListObjAppendElement(NULL, f, tf->name);
	    if (tf->file) {
		Tcl_ListObjAppendElement(NULL, f,
			Tcl_NewStringObj("file", -1));
		Tcl_ListObjAppendElement(NULL, f, tf->file);
	    }
	    if (tf->line > 0) {
		Tcl_ListObjAppendElement(NULL, f,
			Tcl_NewStringObj("line", -1));
		Tcl_ListObjAppendElement(NULL, f, Tcl_NewIntObj(tf->line));
	    }
	    Tcl_ListObjAppendElement(NULL, listObj, f);
	}
    }
    for (i = 0; i < sPtr->numTcl; i++) {
	Tcl_DecrRefCount(sPtr->tcl[i].name);
	if (sPtr->tcl[i].file) {
	    Tcl_DecrRefCount(sPtr->tcl[i].file);
	}
    }
    sPtr->numTcl = 0;
    return listObj;
}

/*
 *----------------------------------------------------------------------
 *
 * ReadThreads --
 *
 *	With the target stopped (or a core): the native and Tcl frames of
 *	every thread, into stacks (numTids of them).
 *
 *----------------------------------------------------------------------
 */

static int
ThreadCb(
    Dwfl_Thread *thread,
    void *arg)
{
    StackBox **boxesPtr = arg;
    Target *tPtr = boxesPtr[0]->tPtr;
    pid_t tid = dwfl_thread_tid(thread);
    int i;

    for (i = 0; i < tPtr->numTids; i++) {
	if (tPtr->tids[i] == tid) {
	    boxesPtr[i]->s.tid = tid;
	    boxesPtr[i]->s.numNative = 0;
	    dwfl_thread_getframes(thread, FrameCb, boxesPtr[i]);
	    break;
	}
    }
    return DWARF_CB_OK;
}

static void
ReadThreads(
    Target *tPtr,
    StackBox **boxes)
{
    int i, j;

    dwfl_getthreads(tPtr->dwfl, ThreadCb, boxes);
    for (i = 0; i < tPtr->numTids; i++) {
	ThreadStack *sPtr = &boxes[i]->s;

	sPtr->tid = tPtr->tids[i];
	for (j = 0; j < tPtr->numInterps; j++) {
	    Tcl_ThreadId owner;

	    if (READ(tPtr, tPtr->interps[j] + offsetof(Interp, threadId),
		    owner) && (uintptr_t) owner == tPtr->fsBase[i]
		    && tPtr->fsBase[i] != 0) {
		ReadInterpFrames(tPtr, tPtr->interps[j], sPtr);
	    }
	}
    }
}

/*
 *----------------------------------------------------------------------
 *
 * ResultObj --
 *
 *	{pause us interps N threads {{tid T unplaced U frames {...}} ...}}
 *
 *----------------------------------------------------------------------
 */

static Tcl_Obj *
ResultObj(
    Target *tPtr,
    StackBox **boxes,
    double pauseUs)
{
    Tcl_Obj *res = Tcl_NewObj(), *threads = Tcl_NewObj();
    int i;

    for (i = 0; i < tPtr->numTids; i++) {
	ThreadStack *sPtr = &boxes[i]->s;
	Tcl_Obj *t = Tcl_NewObj();

	Tcl_ListObjAppendElement(NULL, t, Tcl_NewStringObj("tid", -1));
	Tcl_ListObjAppendElement(NULL, t, Tcl_NewIntObj(sPtr->tid));
	Tcl_ListObjAppendElement(NULL, t, Tcl_NewStringObj("unplaced", -1));
	Tcl_ListObjAppendElement(NULL, t, Tcl_NewIntObj(sPtr->unplaced));
	Tcl_ListObjAppendElement(NULL, t, Tcl_NewStringObj("frames", -1));
	Tcl_ListObjAppendElement(NULL, t, StackObj(tPtr->dwfl, sPtr));
	Tcl_ListObjAppendElement(NULL, threads, t);
    }
    Tcl_ListObjAppendElement(NULL, res, Tcl_NewStringObj("pause", -1));
    Tcl_ListObjAppendElement(NULL, res, Tcl_NewDoubleObj(pauseUs));
    Tcl_ListObjAppendElement(NULL, res, Tcl_NewStringObj("interps", -1));
    Tcl_ListObjAppendElement(NULL, res, Tcl_NewIntObj(tPtr->numInterps));
    Tcl_ListObjAppendElement(NULL, res, Tcl_NewStringObj("threads", -1));
    Tcl_ListObjAppendElement(NULL, res, threads);
    return res;
}

static StackBox **
NewBoxes(
    Target *tPtr)
{
    StackBox **boxes = (StackBox **) ckalloc(MAX_THREADS * sizeof(StackBox *));
    int i;

    for (i = 0; i < MAX_THREADS; i++) {
	boxes[i] = (StackBox *) ckalloc(sizeof(StackBox));
	boxes[i]->tPtr = tPtr;
	boxes[i]->s.numNative = 0;
	boxes[i]->s.numTcl = 0;
	boxes[i]->s.unplaced = 0;
	boxes[i]->s.tid = 0;
    }
    return boxes;
}

static void
FreeBoxes(
    StackBox **boxes)
{
    int i;

    for (i = 0; i < MAX_THREADS; i++) {
	ckfree(boxes[i]);
    }
    ckfree(boxes);
}

static char *debuginfoPath = NULL;

static void
CoreCleanup(
    Target *tPtr)
{
    if (tPtr->dwfl) {
	dwfl_end(tPtr->dwfl);
    }
    if (tPtr->coreElf) {
	elf_end(tPtr->coreElf);
    }
    if (tPtr->coreFd >= 0) {
	close(tPtr->coreFd);
    }
    if (tPtr->segs) {
	ckfree(tPtr->segs);
    }
}

/*
 * PreloadModule --
 *
 *	Read a module's file and unwind tables now, while the target runs,
 *	not during the stop.
 */

static int
PreloadModule(
    Dwfl_Module *mod,
    void **userdata,
    const char *name,
    Dwarf_Addr start,
    void *arg)
{
    Dwarf_Addr bias;

    if (dwfl_module_getelf(mod, &bias) != NULL) {
	dwfl_module_eh_cfi(mod, &bias);
	dwfl_module_dwarf_cfi(mod, &bias);
    }
    return DWARF_CB_OK;
}

static const Dwfl_Callbacks procCallbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .debuginfo_path = &debuginfoPath,
};

/*
 *----------------------------------------------------------------------
 *
 * CoreStacks --
 *
 *	The stacks of the threads of a core file (see ResultObj; pause 0).
 *	exe, when given, is the executable the core is of (else found
 *	from the core's file notes).
 *
 *----------------------------------------------------------------------
 */

static char *coreDebuginfoPath = NULL;

static const Dwfl_Callbacks coreCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .debuginfo_path = &coreDebuginfoPath,
};

typedef struct FindTcl {
    Target *tPtr;
    Dwfl_Module *mod;
} FindTcl;

static int
FindTclModule(
    Dwfl_Module *mod,
    void **userdata,
    const char *name,
    Dwarf_Addr start,
    void *arg)
{
    FindTcl *ftPtr = arg;
    const char *base = name ? strrchr(name, '/') : NULL;

    base = base ? base + 1 : name;
    if (base && (strncmp(base, "libtcl8", 7) == 0
	    || strncmp(base, "libtcl9", 7) == 0)) {
	ftPtr->mod = mod;
	return DWARF_CB_ABORT;
    }
    return DWARF_CB_OK;
}

static int
CoreStacks(
    Tcl_Interp *interp,
    const char *path,
    const char *exe)
{
    Target target, *tPtr = &target;
    const char *ownPath;
    uintptr_t stubsOff, trampOff, trampSize;
    GElf_Ehdr ehdr;
    size_t i, phnum;
    FindTcl ft;
    const unsigned char *id;
    GElf_Addr idAddr;
    unsigned char ownId[64];
    int idLen, ownLen;
    StackBox **boxes;
    Tcl_Obj *resObj;
    int coreSignal = 0;

    memset(tPtr, 0, sizeof(*tPtr));
    elf_version(EV_CURRENT);
    tPtr->coreFd = open(path, O_RDONLY | O_CLOEXEC);
    if (tPtr->coreFd < 0) {
	return AttachError(interp, "NOCORE", "cannot open core file "
		"\"%s\": %s", path, strerror(errno));
    }
    tPtr->coreElf = elf_begin(tPtr->coreFd, ELF_C_READ_MMAP, NULL);
    if (tPtr->coreElf == NULL || gelf_getehdr(tPtr->coreElf, &ehdr) == NULL
	    || ehdr.e_type != ET_CORE || ehdr.e_machine != EM_X86_64
	    || elf_getphdrnum(tPtr->coreElf, &phnum) != 0) {
	if (tPtr->coreElf) {
	    elf_end(tPtr->coreElf);
	}
	close(tPtr->coreFd);
	return AttachError(interp, "NOCORE", "\"%s\" is not a process id or "
		"an x86-64 core file", path);
    }
    tPtr->segs = (Segment *) ckalloc(sizeof(Segment) * (phnum + 1));

    /*
     * Memory segments, and the threads (their ids and thread pointers)
     * from the NT_PRSTATUS notes.
     */

    for (i = 0; i < phnum; i++) {
	GElf_Phdr ph;

	if (gelf_getphdr(tPtr->coreElf, i, &ph) == NULL) {
	    continue;
	}
	if (ph.p_type == PT_LOAD) {
	    Segment *sPtr = &tPtr->segs[tPtr->numSegs++];

	    sPtr->vaddr = ph.p_vaddr;
	    sPtr->memsz = ph.p_memsz;
	    sPtr->filesz = ph.p_filesz;
	    sPtr->offset = ph.p_offset;
	} else if (ph.p_type == PT_NOTE) {
	    Elf_Data *data = elf_getdata_rawchunk(tPtr->coreElf, ph.p_offset,
		    ph.p_filesz, ELF_T_NHDR);
	    size_t off = 0, nameOff, descOff;
	    GElf_Nhdr nh;

	    while (data && (off = gelf_getnote(data, off, &nh, &nameOff,
		    &descOff)) > 0) {
		if (nh.n_type == NT_PRSTATUS && nh.n_descsz
			>= sizeof(struct elf_prstatus)
			&& tPtr->numTids < MAX_THREADS) {
		    struct elf_prstatus st;
		    struct user_regs_struct regs;

		    memcpy(&st, (char *) data->d_buf + descOff, sizeof(st));
		    memcpy(&regs, &st.pr_reg, sizeof(regs));
		    if (tPtr->numTids == 0) {
			coreSignal = st.pr_cursig;
		    }
		    tPtr->tids[tPtr->numTids] = st.pr_pid;
		    tPtr->fsBase[tPtr->numTids] = regs.fs_base;
		    tPtr->numTids++;
		}
	    }
	}
    }

    tPtr->dwfl = dwfl_begin(&coreCallbacks);
    if (tPtr->dwfl == NULL || dwfl_core_file_report(tPtr->dwfl,
	    tPtr->coreElf, exe) < 0) {
	goto dwflError;
    }
    dwfl_report_end(tPtr->dwfl, NULL, NULL);

    /*
     * libtcl: loaded, and the build tclcprof runs.
     */

    ft.tPtr = tPtr;
    ft.mod = NULL;
    dwfl_getmodules(tPtr->dwfl, FindTclModule, &ft, 0);
    if (ft.mod == NULL) {
	CoreCleanup(tPtr);
	return AttachError(interp, "NOTCL", "core file \"%s\" has no libtcl "
		"loaded", path);
    }
    if (!OwnLibtcl(interp, &ownPath, &stubsOff, &trampOff, &trampSize)) {
	CoreCleanup(tPtr);
	return AttachError(interp, "LAYOUT", "cannot locate this process's "
		"libtcl");
    }
    idLen = dwfl_module_build_id(ft.mod, &id, &idAddr);
    ownLen = FileBuildId(ownPath, ownId, sizeof(ownId));
    if (idLen <= 0 || idLen != ownLen || memcmp(id, ownId, idLen) != 0) {
	CoreCleanup(tPtr);
	return AttachError(interp, "LAYOUT", "core file \"%s\" is of another "
		"libtcl than tclcprof's (%s): its layout is unknown", path,
		ownPath);
    }
    {
	Dwarf_Addr bias;

	dwfl_module_info(ft.mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	if (dwfl_module_getelf(ft.mod, &bias) == NULL) {
	    goto dwflError;
	}
	tPtr->tclBase = bias;
    }
    tPtr->stubs = tPtr->tclBase + stubsOff;
    tPtr->trampStart = tPtr->tclBase + trampOff;
    tPtr->trampEnd = tPtr->trampStart + trampSize;

    /*
     * Interps: in the core's writable segments.
     */

    for (i = 0; i < phnum; i++) {
	GElf_Phdr ph;

	if (gelf_getphdr(tPtr->coreElf, i, &ph) && ph.p_type == PT_LOAD
		&& (ph.p_flags & PF_W) && ph.p_filesz > 0) {
	    ScanRegion(tPtr, ph.p_vaddr, ph.p_vaddr + ph.p_filesz, NULL);
	}
    }
    if (dwfl_core_file_attach(tPtr->dwfl, tPtr->coreElf) < 0) {
	goto dwflError;
    }
    boxes = NewBoxes(tPtr);
    ReadThreads(tPtr, boxes);
    resObj = ResultObj(tPtr, boxes, 0.0);
    Tcl_ListObjAppendElement(NULL, resObj, Tcl_NewStringObj("signal", -1));
    Tcl_ListObjAppendElement(NULL, resObj, Tcl_NewIntObj(coreSignal));
    FreeBoxes(boxes);
    Tcl_SetObjResult(interp, resObj);
    CoreCleanup(tPtr);
    return TCL_OK;

  dwflError:
    Tcl_SetObjResult(interp, Tcl_ObjPrintf("libdwfl cannot read core file "
	    "\"%s\": %s", path, dwfl_errmsg(-1)));
    Tcl_SetErrorCode(interp, "TCLCPROF", "ATTACH", "DWFL", NULL);
    CoreCleanup(tPtr);
    return TCL_ERROR;
}

/*
 *----------------------------------------------------------------------
 *
 * ReadMaps --
 *
 *	The text of /proc/PID/maps (a new Tcl_Obj), or NULL.
 *
 *----------------------------------------------------------------------
 */

static Tcl_Obj *
ReadMaps(
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
 * ThreadCpu --
 *
 *	utime + stime of a thread, in clock ticks, or -1.
 *
 *----------------------------------------------------------------------
 */

static long
ThreadCpu(
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

/*
 * A session: the target of the last "Stacks pid -session 1", kept between
 * samples of a recording (its modules, unwind tables and interps), made
 * again when the process's maps change, its interps searched again every
 * second.
 */

typedef struct Session {
    Target target;
    Tcl_Obj *maps;
    double scanned;		/* When the interps were searched (us). */
    int attached;		/* dwfl_linux_proc_attach done. */
    int valid;
} Session;

static Session *sessionPtr = NULL;
static Tcl_Mutex sessionMutex;

static void
EndSession(void)
{
    ClearNameCache();
    if (sessionPtr && sessionPtr->valid) {
	dwfl_end(sessionPtr->target.dwfl);
	Tcl_DecrRefCount(sessionPtr->maps);
	sessionPtr->valid = 0;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * PrepareProc --
 *
 *	Fill a target for process pid while it runs: libtcl, interps,
 *	modules.
 *
 *----------------------------------------------------------------------
 */

static int
PrepareProc(
    Tcl_Interp *interp,
    Target *tPtr,
    int pid)
{
    const char *ownPath;
    uintptr_t stubsOff, trampOff, trampSize;

    memset(tPtr, 0, sizeof(*tPtr));
    tPtr->pid = pid;
    tPtr->coreFd = -1;
    if (kill(pid, 0) != 0 && errno == ESRCH) {
	return AttachError(interp, "NOPID", "no such process: %d", pid);
    }
    if (ProcessGone(pid)) {
	return AttachError(interp, "NOPID", "process %d has exited", pid);
    }
    if (!OwnLibtcl(interp, &ownPath, &stubsOff, &trampOff, &trampSize)) {
	return AttachError(interp, "LAYOUT", "cannot locate this process's "
		"libtcl");
    }
    if (FindProcLibtcl(interp, tPtr, ownPath) != TCL_OK) {
	return TCL_ERROR;
    }
    tPtr->stubs = tPtr->tclBase + stubsOff;
    tPtr->trampStart = tPtr->tclBase + trampOff;
    tPtr->trampEnd = tPtr->trampStart + trampSize;
    ScanProcInterps(tPtr);
    tPtr->dwfl = dwfl_begin(&procCallbacks);
    if (tPtr->dwfl == NULL) {
	return AttachError(interp, "DWFL", "libdwfl: %s", dwfl_errmsg(-1));
    }
    if (dwfl_linux_proc_report(tPtr->dwfl, pid) != 0) {
	dwfl_end(tPtr->dwfl);
	return AttachError(interp, "NOPID", "cannot read the modules of "
		"process %d", pid);
    }
    dwfl_report_end(tPtr->dwfl, NULL, NULL);
    dwfl_getmodules(tPtr->dwfl, PreloadModule, NULL, 0);
    return TCL_OK;
}

#endif /* __x86_64__ */

/*
 *----------------------------------------------------------------------
 *
 * CprofRemoteStacksObjCmd --
 *
 *	::tclcprof::attach::Stacks pid ?holdMs? ?session?
 *	::tclcprof::attach::Stacks core ?executable?
 *
 *	The stacks of every thread of process pid (see ResultObj), with
 *	each thread's "cpu" (utime+stime in clock ticks). holdMs (tests
 *	only) keeps the target stopped that long before reading. session
 *	1 keeps what was prepared for the next call on the same pid
 *	(recordings), 0 (the default) prepares afresh and keeps nothing.
 *
 *----------------------------------------------------------------------
 */

int
CprofRemoteStacksObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Target target, *tPtr = &target;
    int pid, holdMs = 0, session = 0, code, i;
    Tcl_Obj *resObj, *threads;
    double t0, t1, tStopped, tRead;
    StackBox **boxes;

    (void) clientData;
    if (objc < 2 || objc > 4) {
	Tcl_WrongNumArgs(interp, 1, objv,
		"pid|core ?holdMs|executable? ?session?");
	return TCL_ERROR;
    }
#if TCL_MAJOR_VERSION >= 9
    /*
     * The frames are read with the layouts of Tcl 8.6's private headers
     * (Interp, CallFrame, CmdFrame, CoroutineData, ByteCode); Tcl 9's
     * differ and are not read yet: a clear error, not stacks without
     * their Tcl frames.
     */

    return AttachError(interp, "LAYOUT", "reading another process is "
	    "supported with Tcl 8.6 only (this tclcprof is built for Tcl %s)",
	    TCL_PATCH_LEVEL);
#endif
#if !defined(__x86_64__)
    /*
     * Registers, thread pointers and trampoline roles are read the way
     * x86-64 keeps them (PTRACE_GETREGS, fs_base, DESIGN of the splice):
     * elsewhere a clear error.
     */

    (void) tPtr;
    return AttachError(interp, "PLATFORM", "reading another process is "
	    "supported on x86-64 only");
#else
    if (Tcl_GetIntFromObj(NULL, objv[1], &pid) != TCL_OK) {
	const char *s = Tcl_GetString(objv[1]);

	if (*s && strspn(s, "-0123456789") != strlen(s)
		&& access(s, F_OK) == 0) {
	    return CoreStacks(interp, s, objc >= 3
		    ? Tcl_GetString(objv[2]) : NULL);
	}
	return AttachError(interp, "NOPID", "bad pid \"%s\": must be a "
		"process id or a core file", s);
    }
    if (pid <= 0) {
	return AttachError(interp, "NOPID", "bad pid \"%s\": must be a "
		"process id", Tcl_GetString(objv[1]));
    }
    if (objc >= 3 && Tcl_GetIntFromObj(interp, objv[2], &holdMs) != TCL_OK) {
	return TCL_ERROR;
    }
    if (objc == 4 && Tcl_GetBooleanFromObj(interp, objv[3], &session)
	    != TCL_OK) {
	return TCL_ERROR;
    }
    if (pid == getpid()) {
	return AttachError(interp, "SELF", "cannot attach to this process "
		"itself: use tclcprof::stack");
    }

    /*
     * One session at a time, in any thread of this process.
     */

    Tcl_MutexLock(&sessionMutex);
    if (session) {
	Tcl_Obj *maps = ReadMaps(pid);

	if (sessionPtr == NULL) {
	    sessionPtr = (Session *) ckalloc(sizeof(Session));
	    sessionPtr->valid = 0;
	}
	if (maps == NULL) {
	    EndSession();
	    Tcl_MutexUnlock(&sessionMutex);
	    return AttachError(interp, "NOPID", "no such process: %d", pid);
	}
	if (!sessionPtr->valid || sessionPtr->target.pid != pid
		|| strcmp(Tcl_GetString(maps),
		    Tcl_GetString(sessionPtr->maps)) != 0) {
	    EndSession();
	    if (PrepareProc(interp, &sessionPtr->target, pid) != TCL_OK) {
		Tcl_DecrRefCount(maps);
		Tcl_MutexUnlock(&sessionMutex);
		return TCL_ERROR;
	    }
	    sessionPtr->maps = maps;
	    Tcl_IncrRefCount(maps);
	    sessionPtr->scanned = NowUs();
	    sessionPtr->attached = 0;
	    sessionPtr->valid = 1;
	} else {
	    Tcl_DecrRefCount(maps);
	    if (NowUs() - sessionPtr->scanned > 1e6) {
		sessionPtr->target.numInterps = 0;
		ScanProcInterps(&sessionPtr->target);
		sessionPtr->scanned = NowUs();
	    }
	}
	tPtr = &sessionPtr->target;
    } else if (PrepareProc(interp, tPtr, pid) != TCL_OK) {
	Tcl_MutexUnlock(&sessionMutex);
	return TCL_ERROR;
    }

    t0 = NowUs();
    if (StopAll(interp, tPtr) != TCL_OK) {
	if (session) {
	    EndSession();
	} else {
	    dwfl_end(tPtr->dwfl);
	}
	Tcl_MutexUnlock(&sessionMutex);
	return TCL_ERROR;
    }
    if (holdMs > 0) {
	usleep(holdMs * 1000);
    }
    boxes = NewBoxes(tPtr);
    tStopped = NowUs();
    code = 0;
    if (!session || !sessionPtr->attached) {
	code = dwfl_linux_proc_attach(tPtr->dwfl, pid, true);
	if (session && code == 0) {
	    sessionPtr->attached = 1;
	}
    }
    if (code == 0) {
	ReadThreads(tPtr, boxes);
    }
    tRead = NowUs();
    ResumeAll(tPtr);
    t1 = NowUs();
    if (code != 0) {
	FreeBoxes(boxes);
	if (session) {
	    EndSession();
	} else {
	    dwfl_end(tPtr->dwfl);
	}
	Tcl_MutexUnlock(&sessionMutex);
	return AttachError(interp, "DWFL", "libdwfl cannot read process "
		"%d: %s", pid, dwfl_errmsg(-1));
    }
    if (session && nameCachePtr == NULL) {
	nameCachePtr = (Tcl_HashTable *) ckalloc(sizeof(Tcl_HashTable));
	Tcl_InitHashTable(nameCachePtr, TCL_ONE_WORD_KEYS);
    }
    if (session) {
	resObj = ResultObj(tPtr, boxes, t1 - t0);
    } else {
	Tcl_HashTable *saved = nameCachePtr;	/* Another process's. */

	nameCachePtr = NULL;
	resObj = ResultObj(tPtr, boxes, t1 - t0);
	nameCachePtr = saved;
    }
    FreeBoxes(boxes);
    if (!session) {
	dwfl_end(tPtr->dwfl);
    }
    Tcl_MutexUnlock(&sessionMutex);

    /*
     * Each thread's CPU time (after the resume: /proc reads are slow).
     */

    Tcl_ListObjIndex(NULL, resObj, 5, &threads);
    if (threads && !Tcl_IsShared(threads)) {
	Tcl_Size n;
	Tcl_Obj **tv;

	Tcl_ListObjGetElements(NULL, threads, &n, &tv);
	for (i = 0; i < n; i++) {
	    Tcl_Obj *tidObj;
	    int tid;

	    if (Tcl_ListObjIndex(NULL, tv[i], 1, &tidObj) == TCL_OK && tidObj
		    && Tcl_GetIntFromObj(NULL, tidObj, &tid) == TCL_OK
		    && !Tcl_IsShared(tv[i])) {
		Tcl_ListObjAppendElement(NULL, tv[i],
			Tcl_NewStringObj("cpu", -1));
		Tcl_ListObjAppendElement(NULL, tv[i],
			Tcl_NewWideIntObj(ThreadCpu(pid, tid)));
	    }
	}
    }
    Tcl_ListObjAppendElement(NULL, resObj, Tcl_NewStringObj("stopping", -1));
    Tcl_ListObjAppendElement(NULL, resObj, Tcl_NewDoubleObj(tStopped - t0));
    Tcl_ListObjAppendElement(NULL, resObj, Tcl_NewStringObj("reading", -1));
    Tcl_ListObjAppendElement(NULL, resObj, Tcl_NewDoubleObj(tRead - tStopped));
    Tcl_SetObjResult(interp, resObj);
    return TCL_OK;
#endif
}

/*
 *----------------------------------------------------------------------
 *
 * CprofRemoteInterruptObjCmd --
 *
 *	::tclcprof::attach::Interrupt arm|check|disarm
 *
 *	A recording without -duration ends at Ctrl-C (SIGINT) or SIGTERM:
 *	"arm" installs handlers that only set a flag, "check" returns it,
 *	"disarm" puts the previous handlers back.
 *
 *----------------------------------------------------------------------
 */

static volatile sig_atomic_t interrupted = 0;
static struct sigaction oldInt, oldTerm;
static int armed = 0;

static void
OnInterrupt(
    int sig)
{
    (void) sig;
    interrupted = 1;
}

int
CprofRemoteInterruptObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    static const char *const subs[] = {"arm", "check", "disarm", NULL};
    int idx;

    (void) clientData;
    if (objc != 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "arm|check|disarm");
	return TCL_ERROR;
    }
    if (Tcl_GetIndexFromObj(interp, objv[1], subs, "subcommand", 0, &idx)
	    != TCL_OK) {
	return TCL_ERROR;
    }
    switch (idx) {
    case 0:
	if (!armed) {
	    struct sigaction sa;

	    memset(&sa, 0, sizeof(sa));
	    sa.sa_handler = OnInterrupt;
	    sigemptyset(&sa.sa_mask);
	    sigaction(SIGINT, &sa, &oldInt);
	    sigaction(SIGTERM, &sa, &oldTerm);
	    armed = 1;
	}
	interrupted = 0;
	break;
    case 1:
	Tcl_SetObjResult(interp, Tcl_NewBooleanObj(interrupted));
	break;
    case 2:
	if (armed) {
	    sigaction(SIGINT, &oldInt, NULL);
	    sigaction(SIGTERM, &oldTerm, NULL);
	    armed = 0;
	}
	break;
    }
    return TCL_OK;
}
