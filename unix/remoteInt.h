/*
 * remoteInt.h --
 *
 *	Internal declarations of the attach layer (reading another process or
 *	a core file from outside): unix/remote.c (the Tcl commands, sessions),
 *	remoteptrace.c (process control, memory), remoteinterp.c (libtcl and
 *	interps), remoteframes.c (Tcl frames), remotenative.c (native frames,
 *	names, stacks), remotecore.c (core files).
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _REMOTEINT_H
#define _REMOTEINT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
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
#include <sys/resource.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <sys/procfs.h>
#include <pthread.h>
#include <elf.h>
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
    void *stack[1];		/* The level's catch and operand stacks. */
} RemoteTEBCdata;

#define MAX_THREADS	256
#define MAX_NATIVE	256
#define MAX_TCL		512
#define MAX_INTERPS	64
#define MAX_CB		100000

/*
 * The platforms the attach layer reads: x86-64 and aarch64 Linux. What
 * differs between them:
 *
 * - The DWARF numbers of the stack pointer and of the callee-saved
 *   registers in which Tcl's trampoline (TclNRRunCallbacks) keeps, across
 *   its call of each callback, the interp, its root callback and the
 *   callback running: rsp, r13, r12, rbx in Debian's x86-64 libtcl8.6 and
 *   in Tcl 9.0 built with gcc -O2 there; sp, x21, x22, x19 in Debian's
 *   arm64 libtcl8.6 and in Tcl 9.0 cross-built with gcc -O2 (read off
 *   their disassembly: objdump -d --disassemble=TclNRRunCallbacks, the
 *   registers live across its "call *%rcx" / "blr x3"). libdwfl's
 *   unwinder gives them per frame.
 * - How a thread's pthread_t (an interp's threadId) is found: x86-64's
 *   thread pointer (fs_base, in the registers ptrace and the core's
 *   NT_PRSTATUS give) is its pthread_t; aarch64 keeps the thread pointer
 *   (TPIDR_EL0) in a register set of its own, NT_ARM_TLS, that a live
 *   thread gives through PTRACE_GETREGSET and a core file may not hold
 *   (qemu-user writes none): there the thread of an interp is the one
 *   whose id its pthread_t holds (CprofRmThreadOwners).
 */

#if defined(__x86_64__)
#   define CPROF_RM_SUPPORTED	1
#   define CPROF_RM_MACHINE	EM_X86_64
#   define CPROF_RM_MACHINE_NAME "x86-64"
#   define DW_SP		7
#   define DW_TRAMP_INTERP	13
#   define DW_TRAMP_ROOT	12
#   define DW_TRAMP_RUNNING	3
#elif defined(__aarch64__)
#   define CPROF_RM_SUPPORTED	1
#   define CPROF_RM_MACHINE	EM_AARCH64
#   define CPROF_RM_MACHINE_NAME "aarch64"
#   define DW_SP		31
#   define DW_TRAMP_INTERP	21
#   define DW_TRAMP_ROOT	22
#   define DW_TRAMP_RUNNING	19
#endif

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
    uintptr_t fsBase[MAX_THREADS];	/* The pthread_t of each (its thread
					 * pointer on x86-64), or 0 when
					 * unknown. */
    const Dwfl_Callbacks *callbacks;	/* dwfl's, to report the modules
					 * again (the leaf step). */
    const char *coreExe;	/* A core's executable as given to
				 * dwfl_core_file_report, or NULL. */
    Dwfl *leafDwfl;		/* The same modules, attached to the leaf
				 * step's thread callbacks (remotenative.c),
				 * made at its first use; NULL before. */
    struct StackBox *leafBox;	/* The stack the leaf step unwinds. */
    int leafFailed;		/* leafDwfl could not be made. */
} Target;

typedef struct NFrame {		/* A native frame. */
    uintptr_t pc;
    uintptr_t sp;
    int activation;
    int isTramp;
    uintptr_t tInterp, tRoot, tRunning;	/* A trampoline's interp, root
					 * callback and running callback
					 * (DW_TRAMP_*). */
} NFrame;

typedef struct TFrame {		/* A Tcl frame. */
    Tcl_Obj *name;
    Tcl_Obj *file;
    int line;
    int after;			/* Native index it follows (outer->inner),
				 * -1 when not placed. */
    const char *tclkind;	/* "proc", "method", "cmd". */
    Tcl_Obj *interp;		/* Its interp's path from its thread's top
				 * one (a list, empty for that one). */
} TFrame;

typedef struct ThreadStack {
    pid_t tid;
    int numNative;
    NFrame native[MAX_NATIVE];	/* Innermost first, as unwound. */
    int numTcl;
    TFrame tcl[MAX_TCL];	/* Outermost first. */
    int unplaced;
    Tcl_Obj *interps;		/* The paths of its interps, or NULL. */
} ThreadStack;

#define LEAF_REGS	32	/* aarch64: x0-x30 and sp (DWARF 0-31). */

typedef struct StackBox {	/* A thread's stack and its target. */
    Target *tPtr;
    ThreadStack s;
    int leaf;			/* Its innermost frame is in code without
				 * unwind information (remotenative.c's
				 * leaf step): 1 while its registers are
				 * taken, 2 while the unwind goes on from
				 * its caller. */
    Dwarf_Word leafRegs[LEAF_REGS];	/* That frame's registers. */
    int numLeafRegs;
} StackBox;

#define READ(tPtr, addr, var) CprofRmReadMem((tPtr), (uintptr_t) (addr), &(var), sizeof(var))


/*
 * remoteptrace.c
 */

MODULE_SCOPE int	CprofRmError(Tcl_Interp *interp, const char *code,
			    const char *fmt, ...);
#ifdef CPROF_RM_SUPPORTED
MODULE_SCOPE int	CprofRmReadMem(Target *tPtr, uintptr_t addr, void *buf,
			    size_t len);
MODULE_SCOPE Tcl_Obj *	CprofRmReadString(Target *tPtr, uintptr_t addr,
			    int max);
MODULE_SCOPE Tcl_Obj *	CprofRmReadObjString(Target *tPtr, uintptr_t objAddr);
MODULE_SCOPE int	CprofRmStopAll(Tcl_Interp *interp, Target *tPtr);
MODULE_SCOPE void	CprofRmResumeAll(Target *tPtr);
MODULE_SCOPE int	CprofRmProcessGone(pid_t pid);
MODULE_SCOPE int	CprofRmAttachError(Tcl_Interp *interp, pid_t pid,
			    int err);
MODULE_SCOPE Tcl_Obj *	CprofRmReadMaps(pid_t pid);
MODULE_SCOPE long	CprofRmThreadCpu(pid_t pid, pid_t tid);
MODULE_SCOPE void	CprofRmThreadOwners(Target *tPtr);

/*
 * remote.c
 */

MODULE_SCOPE int	CprofRmPrepareProc(Tcl_Interp *interp, Target *tPtr,
			    int pid);

/*
 * remoteinterp.c
 */

MODULE_SCOPE int	CprofRmOwnLibtcl(Tcl_Interp *interp,
			    const char **pathPtr, uintptr_t *baseOffStubs,
			    uintptr_t *trampOff, uintptr_t *trampSize);
MODULE_SCOPE int	CprofRmFileBuildId(const char *path,
			    unsigned char *buf, int max);
MODULE_SCOPE int	CprofRmFindProcLibtcl(Tcl_Interp *interp,
			    Target *tPtr, const char *ownPath);
MODULE_SCOPE void	CprofRmScanRegion(Target *tPtr, uintptr_t lo,
			    uintptr_t hi, const unsigned char *data);
MODULE_SCOPE void	CprofRmScanProcInterps(Target *tPtr);

/*
 * remoteframes.c
 */

MODULE_SCOPE void	CprofRmReadInterpFrames(Target *tPtr,
			    uintptr_t inAddr, ThreadStack *sPtr,
			    Tcl_Obj *pathObj);
MODULE_SCOPE Tcl_Obj *	CprofRmInterpPath(Target *tPtr, uintptr_t inAddr);

/*
 * remotenative.c: the names of a session's addresses (NULL outside one).
 */

MODULE_SCOPE Tcl_HashTable *cprofRmNameCache;
MODULE_SCOPE void	CprofRmClearNameCache(void);
MODULE_SCOPE void	CprofRmReadThreads(Target *tPtr, StackBox **boxes);
MODULE_SCOPE Tcl_Obj *	CprofRmResultObj(Target *tPtr, StackBox **boxes,
			    double pauseUs);
MODULE_SCOPE StackBox **CprofRmNewBoxes(Target *tPtr);
MODULE_SCOPE void	CprofRmFreeBoxes(StackBox **boxes);
MODULE_SCOPE void	CprofRmEndDwfl(Target *tPtr);

/*
 * remotecore.c
 */

MODULE_SCOPE int	CprofRmCoreStacks(Tcl_Interp *interp,
			    const char *path, const char *exe);
#endif /* CPROF_RM_SUPPORTED */

#endif /* _REMOTEINT_H */
