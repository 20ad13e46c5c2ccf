/*
 * cbtest.c --
 *
 *	A small C extension used only by the test suite and the benchmarks:
 *	C commands that call back into Tcl through each public evaluation
 *	entry point, an empty object trace to measure what Tcl's trace
 *	machinery costs by itself, and commands that look at what an
 *	extension sees of a command (Tcl_GetCommandInfo, the command record)
 *	or change it, so that the tests can check the profiler changes
 *	nothing of it. The command record is read through Tcl's private
 *	header (tclInt.h) for its nreProc, which no public call shows.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _GNU_SOURCE
#   define _GNU_SOURCE
#endif
#include <tclInt.h>
#include <tclOO.h>
#include "tclcprof.h"
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#define NOINLINE __attribute__((noinline, noclone))

/*
 * nocfi.c, built without unwind tables.
 */

extern int	CbtestNocfiCmd(ClientData clientData, Tcl_Interp *interp,
		    int objc, Tcl_Obj *const objv[]);

/*
 * memtest.c: allocations from known functions.
 */

extern void	CbtestMemInit(Tcl_Interp *interp);

/*
 * Command procedures that end in "return Tcl_Eval...(...)" would be
 * compiled as tail calls and vanish from native stacks; tests need to see
 * them.
 */

#define NOTAIL __attribute__((optimize("no-optimize-sibling-calls")))

/*
 * Everything here that should show up as a C frame in a profile is
 * NOINLINE; the command procedures are reached through pointers anyway.
 */

/*
 * Spin -- burn 'ms' milliseconds of this thread's CPU time in C.
 */

static double
ThreadCpuMs(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static NOINLINE double
Spin(
    double ms)
{
    double end = ThreadCpuMs() + ms;
    volatile double x = 1.0;

    while (ThreadCpuMs() < end) {
	int i;

	for (i = 0; i < 1000; i++) {
	    x = x * 1.0000001 + 1e-9;
	}
    }
    return x;
}

/*
 * ClockSpin -- burn 'ms' milliseconds of this thread's CPU time doing
 * nothing but read the clock: nearly all of it is spent in the vDSO's
 * clock_gettime (which, for a CPU-time clock, makes the system call
 * itself), so a sample lands there almost every time.
 */

static NOINLINE void
ClockSpin(
    double ms)
{
    double end = ThreadCpuMs() + ms;

    while (ThreadCpuMs() < end) {
	/* nothing */
    }
}

/*
 * cbtest::mapsym spin			-- spin forever in code only a mapping
 *					   symbol names ("$x.spin", nocfi.c;
 *					   x86-64 and aarch64)
 * cbtest::mapsym null			-- call through a null function
 *					   pointer (SIGSEGV at address 0)
 */

#if defined(__x86_64__) || defined(__aarch64__)
extern void	cbtest_mapsym_entry(void);
#endif

static NOTAIL int
MapsymCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    static const char *const how[] = {"spin", "null", NULL};
    void (*volatile fn)(void) = NULL;
    int i;

    (void) clientData;
    if (objc != 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "spin|null");
	return TCL_ERROR;
    }
    if (Tcl_GetIndexFromObj(interp, objv[1], how, "how", 0, &i) != TCL_OK) {
	return TCL_ERROR;
    }
    if (i == 0) {
#if defined(__x86_64__) || defined(__aarch64__)
	fn = cbtest_mapsym_entry;
#else
	Tcl_SetObjResult(interp, Tcl_NewStringObj("not on this machine", -1));
	return TCL_ERROR;
#endif
    }
    fn();
    Tcl_SetObjResult(interp, Tcl_NewStringObj("returned", -1));
    return TCL_OK;
}

/*
 * cbtest::asyncloop			-- forever: mark an async handler of
 *					   this thread and evaluate a command,
 *					   after which Tcl runs the handler
 *					   (Tcl_AsyncInvoke), which counts
 * cbtest::asynccount			-- the handler's runs, all threads
 *
 * A thread whose Tcl_AsyncInvoke is called all the time (attachinject.test:
 * an injection into another thread steps over its hits).
 */

static volatile long asyncRuns = 0;

static int
AsyncCounted(
    ClientData clientData,
    Tcl_Interp *interp,
    int code)
{
    __atomic_add_fetch(&asyncRuns, 1, __ATOMIC_RELAXED);
    return code;
}

static int
AsyncLoopCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Tcl_AsyncHandler h = Tcl_AsyncCreate(AsyncCounted, NULL);

    for (;;) {
	Tcl_AsyncMark(h);
	if (Tcl_EvalEx(interp, "incr ::asyncLoop", -1, 0) != TCL_OK) {
	    Tcl_AsyncDelete(h);
	    return TCL_ERROR;
	}
    }
}

static int
AsyncCountCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Tcl_SetObjResult(interp, Tcl_NewWideIntObj(
	    __atomic_load_n(&asyncRuns, __ATOMIC_RELAXED)));
    return TCL_OK;
}

/*
 * cbtest::spin ms			-- burn CPU in C
 * cbtest::clockspin ms			-- the same, reading the clock only
 *					   (clientData non-NULL)
 */

static NOTAIL int
SpinCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    double ms;

    if (objc != 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "ms");
	return TCL_ERROR;
    }
    if (Tcl_GetDoubleFromObj(interp, objv[1], &ms) != TCL_OK) {
	return TCL_ERROR;
    }
    if (clientData != NULL) {
	ClockSpin(ms);
	return TCL_OK;
    }
    Tcl_SetObjResult(interp, Tcl_NewDoubleObj(Spin(ms) > 0 ? ms : 0));
    return TCL_OK;
}


/*
 * Labels through tclcprof's C interface (tclcprof.h), as an extension
 * or an embedding host sets them:
 *
 * cbtest::labelpush ?key value ...?	-- push, return the token (0 and
 *					   the error when refused)
 * cbtest::labelpop token		-- pop
 * cbtest::labelget			-- the labels in effect
 * cbtest::labelspin labels ms		-- push, spin ms of CPU in C, pop
 * cbtest::labeleval labels script	-- push, evaluate the script, pop
 * cbtest::noapi			-- 1 when tclcprof is not present
 */

static int
LabelCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    const TclcprofApi *api = Tclcprof_GetApi(interp);
    const char *what = (const char *) clientData;
    const char *kv[64];
    Tcl_Obj **elems;
#if TCL_MAJOR_VERSION >= 9
    Tcl_Size n = 0;
#else
    int n = 0;
#endif
    int i, token, code = TCL_OK;

    if (strcmp(what, "noapi") == 0) {
	Tcl_SetObjResult(interp, Tcl_NewIntObj(api == NULL));
	return TCL_OK;
    }
    if (api == NULL) {
	Tcl_SetObjResult(interp, Tcl_NewStringObj("tclcprof not present",
		-1));
	return TCL_ERROR;
    }
    if (strcmp(what, "get") == 0) {
	Tcl_SetObjResult(interp, api->labelGet(interp));
	return TCL_OK;
    }
    if (strcmp(what, "pop") == 0) {
	if (objc != 2 || Tcl_GetIntFromObj(interp, objv[1], &token)
		!= TCL_OK) {
	    return TCL_ERROR;
	}
	return api->labelPop(interp, token);
    }
    if (strcmp(what, "push") == 0) {
	elems = (Tcl_Obj **) objv + 1;
	n = objc - 1;
    } else {
	if (objc != 3 || Tcl_ListObjGetElements(interp, objv[1], &n, &elems)
		!= TCL_OK) {
	    Tcl_WrongNumArgs(interp, 1, objv, "labels arg");
	    return TCL_ERROR;
	}
    }
    if (n > 64) {
	n = 64;
    }
    for (i = 0; i < n; i++) {
	kv[i] = Tcl_GetString(elems[i]);
    }
    token = api->labelPush(interp, (int) n, kv);
    if (token == 0) {
	return TCL_ERROR;
    }
    if (strcmp(what, "push") == 0) {
	Tcl_SetObjResult(interp, Tcl_NewIntObj(token));
	return TCL_OK;
    }
    if (strcmp(what, "spin") == 0) {
	double ms;

	code = Tcl_GetDoubleFromObj(interp, objv[2], &ms);
	if (code == TCL_OK) {
	    Spin(ms);
	}
    } else {
	code = Tcl_EvalObjEx(interp, objv[2], 0);
    }
    if (api->labelPop(interp, token) != TCL_OK) {
	return TCL_ERROR;
    }
    return code;
}

/*
 * cbtest::work n			-- a fixed amount of C work: n thousand
 *					   iterations (for timing, unlike spin)
 */

static NOINLINE double
Work(
    long n)
{
    volatile double x = 1.0;
    long i;

    for (i = 0; i < n * 1000; i++) {
	x = x * 1.0000001 + 1e-9;
    }
    return x;
}

static NOTAIL int
WorkCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    long n;

    if (objc != 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "n");
	return TCL_ERROR;
    }
    if (Tcl_GetLongFromObj(interp, objv[1], &n) != TCL_OK) {
	return TCL_ERROR;
    }
    Tcl_SetObjResult(interp, Tcl_NewDoubleObj(Work(n)));
    return TCL_OK;
}

/*
 * cbtest::dlrun lib symbol n		-- dlopen lib, call int symbol(int) with
 *					   n in a loop for about 'n' ms of CPU,
 *					   dlclose it: samples taken inside are
 *					   named after the library is gone
 */

static NOTAIL int
DlrunCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    void *handle;
    int (*fn)(int);
    double ms, end;
    volatile unsigned int sink = 0;	/* wraps: unsigned */

    if (objc != 4) {
	Tcl_WrongNumArgs(interp, 1, objv, "lib symbol ms");
	return TCL_ERROR;
    }
    if (Tcl_GetDoubleFromObj(interp, objv[3], &ms) != TCL_OK) {
	return TCL_ERROR;
    }
    handle = dlopen(Tcl_GetString(objv[1]), RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
	Tcl_SetObjResult(interp, Tcl_NewStringObj(dlerror(), -1));
	return TCL_ERROR;
    }
    fn = (int (*)(int)) dlsym(handle, Tcl_GetString(objv[2]));
    if (fn == NULL) {
	dlclose(handle);
	Tcl_SetObjResult(interp, Tcl_NewStringObj("no such symbol", -1));
	return TCL_ERROR;
    }
    end = ThreadCpuMs() + ms;
    while (ThreadCpuMs() < end) {
	sink += (unsigned int) fn(100000);
    }
    dlclose(handle);
    Tcl_SetObjResult(interp, Tcl_NewIntObj(sink != 0));
    return TCL_OK;
}

/*
 * cbtest::nocfi ms			-- spin under a frame that has no
 *					   unwind information (x86_64 only)
 */

#if defined(__x86_64__) && defined(__linux__)
#define HAVE_NOCFI 1
extern void cbtest_nocfi_call(void (*fn)(void));
__asm__(
    ".text\n"
    ".globl cbtest_nocfi_call\n"
    ".hidden cbtest_nocfi_call\n"
    ".type cbtest_nocfi_call,@function\n"
    "cbtest_nocfi_call:\n"
    "	push %rbp\n"
    "	mov %rsp, %rbp\n"
    "	call *%rdi\n"
    "	pop %rbp\n"
    "	ret\n"
    ".size cbtest_nocfi_call, .-cbtest_nocfi_call\n");

static double nocfiMs;

static NOINLINE void
NoCfiBody(void)
{
    Spin(nocfiMs);
}

static NOTAIL int
NoCfiCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    if (objc != 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "ms");
	return TCL_ERROR;
    }
    if (Tcl_GetDoubleFromObj(interp, objv[1], &nocfiMs) != TCL_OK) {
	return TCL_ERROR;
    }
    cbtest_nocfi_call(NoCfiBody);
    return TCL_OK;
}
#endif

/*
 * cbtest::callback script		-- a C helper between the command and
 *					   the Tcl it calls back
 */

static NOINLINE NOTAIL int
CallbackHelper(
    Tcl_Interp *interp,
    Tcl_Obj *scriptObj)
{
    int code = Tcl_EvalObjEx(interp, scriptObj, 0);

    Spin(0.0);
    return code;
}

static NOTAIL int
CallbackCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    if (objc != 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "script");
	return TCL_ERROR;
    }
    return CallbackHelper(interp, objv[1]);
}

/*
 * cbtest::sigprof install|check|remove	-- a host that owns SIGPROF
 */

static volatile int hostSignals;

static void
HostHandler(
    int signo,
    siginfo_t *infoPtr,
    void *context)
{
    hostSignals++;
}

static int
SigprofCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    static const char *const subs[] = {"install", "check", "remove", NULL};
    struct sigaction sa;
    int index;

    if (objc != 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "install|check|remove");
	return TCL_ERROR;
    }
    if (Tcl_GetIndexFromObj(interp, objv[1], subs, "subcommand", 0, &index)
	    != TCL_OK) {
	return TCL_ERROR;
    }
    memset(&sa, 0, sizeof(sa));
    switch (index) {
    case 0:
	sa.sa_sigaction = HostHandler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
	break;
    case 1:
	sigaction(SIGPROF, NULL, &sa);
	Tcl_SetObjResult(interp, Tcl_NewBooleanObj(
		(sa.sa_flags & SA_SIGINFO) && sa.sa_sigaction == HostHandler));
	break;
    case 2:
	sa.sa_handler = SIG_DFL;
	sigaction(SIGPROF, &sa, NULL);
	break;
    }
    return TCL_OK;
}

/*
 * cbtest::forkwait n ms		-- fork n children that each spin ms
 *					   and exit 0; returns how many exited
 *					   normally with status 0
 */

static int
ForkWaitCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    int n, i, ok = 0;
    double ms;

    if (objc != 3) {
	Tcl_WrongNumArgs(interp, 1, objv, "n ms");
	return TCL_ERROR;
    }
    if (Tcl_GetIntFromObj(interp, objv[1], &n) != TCL_OK
	    || Tcl_GetDoubleFromObj(interp, objv[2], &ms) != TCL_OK) {
	return TCL_ERROR;
    }
    for (i = 0; i < n; i++) {
	int status;
	pid_t pid = fork();

	if (pid == 0) {
	    Spin(ms);
	    _exit(0);
	}
	if (pid < 0) {
	    break;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
	    /* retry */
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
	    ok++;
	}
    }
    Tcl_SetObjResult(interp, Tcl_NewIntObj(ok));
    return TCL_OK;
}

/*
 * cbtest::fork			-- fork like TclX's fork: the child's pid
 *				   in the parent, 0 in the child, which
 *				   goes on running the same script
 * cbtest::waitpid pid		-- wait for a child; its exit status
 *				   (128 + the signal if it was killed)
 */

static int
ForkCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    pid_t pid;

    if (objc != 1) {
	Tcl_WrongNumArgs(interp, 1, objv, NULL);
	return TCL_ERROR;
    }
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
	Tcl_SetObjResult(interp, Tcl_NewStringObj("fork failed", -1));
	return TCL_ERROR;
    }
    Tcl_SetObjResult(interp, Tcl_NewIntObj((int) pid));
    return TCL_OK;
}

static int
WaitpidCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    int pid, status;

    if (objc != 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "pid");
	return TCL_ERROR;
    }
    if (Tcl_GetIntFromObj(interp, objv[1], &pid) != TCL_OK) {
	return TCL_ERROR;
    }
    while (waitpid((pid_t) pid, &status, 0) < 0) {
	if (errno != EINTR) {
	    Tcl_SetObjResult(interp, Tcl_NewStringObj("waitpid failed", -1));
	    return TCL_ERROR;
	}
    }
    Tcl_SetObjResult(interp, Tcl_NewIntObj(WIFEXITED(status)
	    ? WEXITSTATUS(status) : 128 + WTERMSIG(status)));
    return TCL_OK;
}

/*
 * cbtest::churn start n libA libB | stop	-- background threads that
 *	malloc/free and dlopen/dlclose two libraries in a loop (the
 *	sampler's stress load); stop returns the number of cycles done
 */

static volatile int churnStop;
static volatile long churnCycles;
static pthread_t churnThreads[16];
static int churnCount;
static char churnLibs[2][1024];

static void *
ChurnMain(
    void *arg)
{
    long k = (long) arg;

    while (!churnStop) {
	int i;
	void *blocks[64];

	for (i = 0; i < 64; i++) {
	    blocks[i] = malloc(16 + (size_t) ((i * 37 + k) % 4000));
	}
	for (i = 0; i < 64; i++) {
	    free(blocks[i]);
	}
	if (k % 2 == 0 && churnLibs[0][0]) {
	    void *h = dlopen(churnLibs[(churnCycles / 2) % 2], RTLD_NOW);

	    if (h != NULL) {
		dlclose(h);
	    }
	}
	__atomic_add_fetch(&churnCycles, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

static int
ChurnCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    int i, n;

    if (objc == 2 && strcmp(Tcl_GetString(objv[1]), "stop") == 0) {
	churnStop = 1;
	for (i = 0; i < churnCount; i++) {
	    pthread_join(churnThreads[i], NULL);
	}
	churnCount = 0;
	Tcl_SetObjResult(interp, Tcl_NewWideIntObj(churnCycles));
	return TCL_OK;
    }
    if (objc != 5 || strcmp(Tcl_GetString(objv[1]), "start") != 0) {
	Tcl_WrongNumArgs(interp, 1, objv, "start n libA libB | stop");
	return TCL_ERROR;
    }
    if (Tcl_GetIntFromObj(interp, objv[2], &n) != TCL_OK) {
	return TCL_ERROR;
    }
    if (n < 0 || n > 16 || churnCount != 0) {
	Tcl_SetObjResult(interp, Tcl_NewStringObj("bad churn request", -1));
	return TCL_ERROR;
    }
    strncpy(churnLibs[0], Tcl_GetString(objv[3]), sizeof(churnLibs[0]) - 1);
    strncpy(churnLibs[1], Tcl_GetString(objv[4]), sizeof(churnLibs[1]) - 1);
    churnStop = 0;
    churnCycles = 0;
    for (i = 0; i < n; i++) {
	if (pthread_create(&churnThreads[i], NULL, ChurnMain,
		(void *) (long) i) == 0) {
	    churnCount++;
	}
    }
    return TCL_OK;
}

/*
 * cbtest::evalobjv cmd ?arg ...?	-- Tcl_EvalObjv
 */

static NOTAIL int
EvalObjvCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    if (objc < 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "cmd ?arg ...?");
	return TCL_ERROR;
    }
    return Tcl_EvalObjv(interp, objc - 1, objv + 1, 0);
}

/*
 * cbtest::eval script			-- Tcl_Eval of a string
 */

static NOTAIL int
EvalCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    if (objc != 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "script");
	return TCL_ERROR;
    }
    return Tcl_Eval(interp, Tcl_GetString(objv[1]));
}

/*
 * cbtest::evalobjex count script	-- Tcl_EvalObjEx in a loop; returns
 *					   the list of results
 */

static NOTAIL int
EvalObjExCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    int count, i, code;
    Tcl_Obj *listObj;

    if (objc != 3) {
	Tcl_WrongNumArgs(interp, 1, objv, "count script");
	return TCL_ERROR;
    }
    if (Tcl_GetIntFromObj(interp, objv[1], &count) != TCL_OK) {
	return TCL_ERROR;
    }
    listObj = Tcl_NewListObj(0, NULL);
    Tcl_IncrRefCount(listObj);
    for (i = 0; i < count; i++) {
	code = Tcl_EvalObjEx(interp, objv[2], 0);
	if (code != TCL_OK) {
	    Tcl_DecrRefCount(listObj);
	    return code;
	}
	Tcl_ListObjAppendElement(NULL, listObj, Tcl_GetObjResult(interp));
    }
    Tcl_SetObjResult(interp, listObj);
    Tcl_DecrRefCount(listObj);
    return TCL_OK;
}

/*
 * cbtest::nest depth script		-- recurse 'depth' C frames, then
 *					   Tcl_EvalObjEx the script
 */

static NOINLINE NOTAIL int
Nest(
    Tcl_Interp *interp,
    int depth,
    Tcl_Obj *scriptObj)
{
    volatile char pad[64];

    pad[0] = (char) depth;
    if (depth <= 0) {
	return Tcl_EvalObjEx(interp, scriptObj, 0) + pad[0] * 0;
    }
    return Nest(interp, depth - 1, scriptObj) + pad[0] * 0;
}

static NOTAIL int
NestCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    int depth;

    if (objc != 3) {
	Tcl_WrongNumArgs(interp, 1, objv, "depth script");
	return TCL_ERROR;
    }
    if (Tcl_GetIntFromObj(interp, objv[1], &depth) != TCL_OK) {
	return TCL_ERROR;
    }
    return Nest(interp, depth, objv[2]);
}

/*
 * cbtest::emptytrace on|off		-- an object trace that does nothing,
 *					   with the flags tclcprof uses
 */

static int
EmptyTraceProc(
    ClientData clientData,
    Tcl_Interp *interp,
    int level,
    const char *command,
    Tcl_Command token,
    int objc,
    Tcl_Obj *const objv[])
{
    return TCL_OK;
}

static int
EmptyTraceCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    static Tcl_Trace trace = NULL;
    int on;

    if (objc != 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "boolean");
	return TCL_ERROR;
    }
    if (Tcl_GetBooleanFromObj(interp, objv[1], &on) != TCL_OK) {
	return TCL_ERROR;
    }
    if (on && trace == NULL) {
	trace = Tcl_CreateObjTrace(interp, 0, 1 | 2
		| TCL_ALLOW_INLINE_COMPILATION, EmptyTraceProc, NULL, NULL);
    } else if (!on && trace != NULL) {
	Tcl_DeleteTrace(interp, trace);
	trace = NULL;
    }
    return TCL_OK;
}


/*
 * cbtest::cmdinfo name -- what Tcl_GetCommandInfo tells of a command, and
 *	its nreProc: {objProc objClientData deleteProc deleteData
 *	isNativeObjectProc nreProc}, addresses as integers.
 */

static int
CmdInfoCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Tcl_CmdInfo info;
    Tcl_Command token;
    Tcl_Obj *r[6];

    if (objc != 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "name");
	return TCL_ERROR;
    }
    token = Tcl_FindCommand(interp, Tcl_GetString(objv[1]), NULL, 0);
    if (token == NULL || !Tcl_GetCommandInfoFromToken(token, &info)) {
	Tcl_SetObjResult(interp, Tcl_NewStringObj("no such command", -1));
	return TCL_ERROR;
    }
    r[0] = Tcl_NewWideIntObj((Tcl_WideInt) (intptr_t) info.objProc);
    r[1] = Tcl_NewWideIntObj((Tcl_WideInt) (intptr_t) info.objClientData);
    r[2] = Tcl_NewWideIntObj((Tcl_WideInt) (intptr_t) info.deleteProc);
    r[3] = Tcl_NewWideIntObj((Tcl_WideInt) (intptr_t) info.deleteData);
    r[4] = Tcl_NewIntObj(info.isNativeObjectProc);
    r[5] = Tcl_NewWideIntObj((Tcl_WideInt) (intptr_t)
	    ((Command *) token)->nreProc);
    Tcl_SetObjResult(interp, Tcl_NewListObj(6, r));
    return TCL_OK;
}

/*
 * cbtest::callobjproc name ?arg ...? -- call a command's objProc directly,
 *	as C code that fetched it with Tcl_GetCommandInfo does.
 */

static int
CallObjProcCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Tcl_CmdInfo info;

    if (objc < 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "name ?arg ...?");
	return TCL_ERROR;
    }
    if (!Tcl_GetCommandInfo(interp, Tcl_GetString(objv[1]), &info)) {
	Tcl_SetObjResult(interp, Tcl_NewStringObj("no such command", -1));
	return TCL_ERROR;
    }
    return info.objProc(info.objClientData, interp, objc - 1, objv + 1);
}

/*
 * cbtest::makecmds prefix n -- make n commands prefix0 .. prefix<n-1> at
 *	once (as tdom's childNodes makes a command per node), each
 *	cbtest::nop's code; cbtest::delcmds prefix n deletes them.
 */

static int
MakeCmdsCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    int n, i;
    Tcl_CmdInfo info;

    if (objc != 3) {
	Tcl_WrongNumArgs(interp, 1, objv, "prefix n");
	return TCL_ERROR;
    }
    if (Tcl_GetIntFromObj(interp, objv[2], &n) != TCL_OK) {
	return TCL_ERROR;
    }
    if (!Tcl_GetCommandInfo(interp, "::cbtest::nop", &info)) {
	return TCL_ERROR;
    }
    for (i = 0; i < n; i++) {
	Tcl_Obj *nameObj = Tcl_ObjPrintf("%s%d", Tcl_GetString(objv[1]), i);

	Tcl_IncrRefCount(nameObj);
	if (clientData == NULL) {
	    Tcl_CreateObjCommand(interp, Tcl_GetString(nameObj), info.objProc,
		    NULL, NULL);
	} else {
	    Tcl_DeleteCommand(interp, Tcl_GetString(nameObj));
	}
	Tcl_DecrRefCount(nameObj);
    }
    return TCL_OK;
}

/*
 * cbtest::callobjprocn n name ?arg ...? -- call a command's objProc
 *	directly n times, as tdom's SAX parser calls its handlers: the
 *	command info fetched once with Tcl_GetCommandInfo. Returns the last
 *	result.
 */

static int
CallObjProcNCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Tcl_CmdInfo info;
    int n, i, code = TCL_OK;

    if (objc < 3) {
	Tcl_WrongNumArgs(interp, 1, objv, "n name ?arg ...?");
	return TCL_ERROR;
    }
    if (Tcl_GetIntFromObj(interp, objv[1], &n) != TCL_OK) {
	return TCL_ERROR;
    }
    if (!Tcl_GetCommandInfo(interp, Tcl_GetString(objv[2]), &info)) {
	Tcl_SetObjResult(interp, Tcl_NewStringObj("no such command", -1));
	return TCL_ERROR;
    }
    for (i = 0; i < n && code == TCL_OK; i++) {
	Tcl_ResetResult(interp);
	code = info.objProc(info.objClientData, interp, objc - 2, objv + 2);
    }
    return code;
}

/*
 * cbtest::setinfo name -- Tcl_SetCommandInfo with another objProc (one that
 *	returns "replaced" and its argument count), the clientData kept.
 */

static int
ReplacedCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Tcl_SetObjResult(interp, Tcl_ObjPrintf("replaced %d", objc));
    return TCL_OK;
}

static int
SetInfoCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Tcl_CmdInfo info;

    if (objc != 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "name");
	return TCL_ERROR;
    }
    if (!Tcl_GetCommandInfo(interp, Tcl_GetString(objv[1]), &info)) {
	Tcl_SetObjResult(interp, Tcl_NewStringObj("no such command", -1));
	return TCL_ERROR;
    }
    info.objProc = ReplacedCmd;
    Tcl_SetCommandInfo(interp, Tcl_GetString(objv[1]), &info);
    return TCL_OK;
}

/*
 * cbtest::makeandrun name script ?nre? -- create a command NAME (with
 *	Tcl_CreateObjCommand, or Tcl_NRCreateCommand when nre is true) that
 *	evaluates SCRIPT, and at once evaluate it with Tcl_EvalObjv, with no
 *	other command in between.
 */

static int
MadeCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    return Tcl_EvalObjEx(interp, (Tcl_Obj *) clientData, 0);
}

static int
MadeNRCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    return Tcl_NREvalObj(interp, (Tcl_Obj *) clientData, 0);
}

static int
MadeObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    return Tcl_NRCallObjProc(interp, MadeNRCmd, clientData, objc, objv);
}

static void
MadeDeleted(
    ClientData clientData)
{
    Tcl_DecrRefCount((Tcl_Obj *) clientData);
}

static int
MakeAndRunCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    int nre = 0;
    Tcl_Obj *scriptObj;

    if (objc != 3 && objc != 4) {
	Tcl_WrongNumArgs(interp, 1, objv, "name script ?nre?");
	return TCL_ERROR;
    }
    if (objc == 4 && Tcl_GetBooleanFromObj(interp, objv[3], &nre) != TCL_OK) {
	return TCL_ERROR;
    }
    scriptObj = Tcl_DuplicateObj(objv[2]);
    Tcl_IncrRefCount(scriptObj);
    if (nre) {
	Tcl_NRCreateCommand(interp, Tcl_GetString(objv[1]), MadeObjCmd,
		MadeNRCmd, scriptObj, MadeDeleted);
    } else {
	Tcl_CreateObjCommand(interp, Tcl_GetString(objv[1]), MadeCmd,
		scriptObj, MadeDeleted);
    }
    return Tcl_EvalObjv(interp, 1, objv + 1, 0);
}

#if TCL_MAJOR_VERSION >= 9
/*
 * cbtest::makeandrun2 name script variant -- as cbtest::makeandrun, with
 *	Tcl 9's Tcl_CreateObjCommand2 and one of two Tcl_ObjCmdProc2
 *	functions (variant 0 or 1): commands whose objProc Tcl shares.
 */

static int
Made2Cmd(
    void *clientData,
    Tcl_Interp *interp,
    Tcl_Size objc,
    Tcl_Obj *const objv[])
{
    (void) objc; (void) objv;
    return Tcl_EvalObjEx(interp, (Tcl_Obj *) clientData, 0);
}

static int
Made2OtherCmd(
    void *clientData,
    Tcl_Interp *interp,
    Tcl_Size objc,
    Tcl_Obj *const objv[])
{
    (void) objc; (void) objv;
    return Tcl_EvalObjEx(interp, (Tcl_Obj *) clientData, 0);
}

static int
MakeAndRun2Cmd(
    void *clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    int variant;
    Tcl_Obj *scriptObj;

    if (objc != 4) {
	Tcl_WrongNumArgs(interp, 1, objv, "name script variant");
	return TCL_ERROR;
    }
    if (Tcl_GetIntFromObj(interp, objv[3], &variant) != TCL_OK) {
	return TCL_ERROR;
    }
    scriptObj = Tcl_DuplicateObj(objv[2]);
    Tcl_IncrRefCount(scriptObj);
    Tcl_CreateObjCommand2(interp, Tcl_GetString(objv[1]),
	    variant ? Made2OtherCmd : Made2Cmd, scriptObj, MadeDeleted);
    return Tcl_EvalObjv(interp, 1, objv + 1, 0);
}
#endif

/*
 * cbtest::cmethod class name script -- give class a method implemented in
 *	C (Tcl 9: a Tcl_MethodType2, through Tcl_NewMethod2; 8.6: a
 *	Tcl_MethodType through Tcl_NewMethod) that evaluates script: a
 *	TclOO method with no procedure body and no CallFrame of its own.
 */

static NOINLINE NOTAIL int
CMethodCall(
    void *clientData,
    Tcl_Interp *interp,
    Tcl_ObjectContext context,
#if TCL_MAJOR_VERSION >= 9
    Tcl_Size objc,
#else
    int objc,
#endif
    Tcl_Obj *const *objv)
{
    int code;

    (void) context; (void) objc; (void) objv;
    code = Tcl_EvalObjEx(interp, (Tcl_Obj *) clientData, 0);
    return code;
}

static void
CMethodDelete(
    void *clientData)
{
    Tcl_DecrRefCount((Tcl_Obj *) clientData);
}

static int
CMethodClone(
    Tcl_Interp *interp,
    void *clientData,
    void **newPtr)
{
    (void) interp;
    Tcl_IncrRefCount((Tcl_Obj *) clientData);
    *newPtr = clientData;
    return TCL_OK;
}

#if TCL_MAJOR_VERSION >= 9
static const Tcl_MethodType2 cMethodType = {
    TCL_OO_METHOD_VERSION_2, "cbtest", CMethodCall, CMethodDelete,
    CMethodClone
};
#else
static const Tcl_MethodType cMethodType = {
    TCL_OO_METHOD_VERSION_CURRENT, "cbtest", CMethodCall, CMethodDelete,
    CMethodClone
};
#endif

static int
CMethodCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Tcl_Object object;
    Tcl_Class cls;
    Tcl_Obj *scriptObj;

    if (objc != 4) {
	Tcl_WrongNumArgs(interp, 1, objv, "class name script");
	return TCL_ERROR;
    }
    object = Tcl_GetObjectFromObj(interp, objv[1]);
    if (object == NULL) {
	return TCL_ERROR;
    }
    cls = Tcl_GetObjectAsClass(object);
    if (cls == NULL) {
	Tcl_SetObjResult(interp, Tcl_NewStringObj("not a class", -1));
	return TCL_ERROR;
    }
    scriptObj = Tcl_DuplicateObj(objv[3]);
    Tcl_IncrRefCount(scriptObj);
#if TCL_MAJOR_VERSION >= 9
    Tcl_NewMethod2(interp, cls, objv[2], 1, &cMethodType, scriptObj);
#else
    Tcl_NewMethod(interp, cls, objv[2], 1, &cMethodType, scriptObj);
#endif
    return TCL_OK;
}

/*
 * cbtest::nop ?arg ...? -- a C command that does nothing (the cost of a
 *	captured C command call, in the benchmarks).
 */

static int
NopCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    return TCL_OK;
}

/*
 * cbtest::nodes n -- a command per node, as DOM bindings make them (tdom's
 *	"$node childNodes"): delete the commands the last call made, make n
 *	new C commands ::cbtest::nodeK (each returns its K) and return their
 *	names. The command-churn benchmark: each made, called once, deleted.
 */

static int
NodeCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Tcl_SetObjResult(interp, Tcl_NewWideIntObj((Tcl_WideInt)
	    (intptr_t) clientData));
    return TCL_OK;
}

static void
NodesFree(
    ClientData clientData,
    Tcl_Interp *interp)
{
    Tcl_DecrRefCount((Tcl_Obj *) clientData);
}

static int
NodesCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    static int serial = 0;
    Tcl_Obj *lastObj, *namesObj, **elems;
    int n, i, numElems;
    char name[64];

    if (objc != 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "n");
	return TCL_ERROR;
    }
    if (Tcl_GetIntFromObj(interp, objv[1], &n) != TCL_OK) {
	return TCL_ERROR;
    }
    lastObj = (Tcl_Obj *) Tcl_GetAssocData(interp, "cbtest::nodes", NULL);
    if (lastObj != NULL) {
	Tcl_ListObjGetElements(NULL, lastObj, &numElems, &elems);
	for (i = 0; i < numElems; i++) {
	    Tcl_DeleteCommand(interp, Tcl_GetString(elems[i]));
	}
	Tcl_DeleteAssocData(interp, "cbtest::nodes");
    }
    namesObj = Tcl_NewListObj(0, NULL);
    for (i = 0; i < n; i++) {
	snprintf(name, sizeof(name), "::cbtest::node%d", serial);
	Tcl_CreateObjCommand(interp, name, NodeCmd,
		(ClientData) (intptr_t) serial, NULL);
	serial++;
	Tcl_ListObjAppendElement(NULL, namesObj, Tcl_NewStringObj(name, -1));
    }
    Tcl_IncrRefCount(namesObj);
    Tcl_SetAssocData(interp, "cbtest::nodes", NodesFree, namesObj);
    Tcl_SetObjResult(interp, namesObj);
    return TCL_OK;
}

/*
 * cbtest::cputime ?process? -- this thread's CPU time in microseconds
 *	(timings that another process on the machine does not disturb);
 *	with "process", the whole process's (every thread's, the
 *	profiler's own threads included: what the benchmarks measure).
 */

static int
CputimeCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    struct timespec ts;

    if (objc > 2 || (objc == 2
	    && strcmp(Tcl_GetString(objv[1]), "process") != 0)) {
	Tcl_WrongNumArgs(interp, 1, objv, "?process?");
	return TCL_ERROR;
    }
    if (objc == 1) {
	Tcl_SetObjResult(interp, Tcl_NewWideIntObj(
		(Tcl_WideInt) (ThreadCpuMs() * 1000.0)));
	return TCL_OK;
    }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    Tcl_SetObjResult(interp, Tcl_NewWideIntObj(
	    (Tcl_WideInt) ts.tv_sec * 1000000 + ts.tv_nsec / 1000));
    return TCL_OK;
}

/*
 * cbtest::tornframe script --
 *
 *	Evaluates script inside a proc call frame that has no Proc yet: what
 *	a sample sees between TclPushProcCallFrame's push and its setting
 *	of procPtr (tclProc.c:1608-1614), held still for the frames
 *	capture's tests.
 */

static int
TornFrameCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    CallFrame *framePtr;
    int code;

    if (objc != 2) {
	Tcl_WrongNumArgs(interp, 1, objv, "script");
	return TCL_ERROR;
    }
    (void) TclPushStackFrame(interp, (Tcl_CallFrame **) &framePtr,
	    Tcl_GetCurrentNamespace(interp), FRAME_IS_PROC);
    code = Tcl_EvalObjEx(interp, objv[1], 0);
    TclPopStackFrame(interp);
    return code;
}

DLLEXPORT int
Cbtest_Init(
    Tcl_Interp *interp)
{
    if (Tcl_InitStubs(interp, "8.6-", 0) == NULL) {
	return TCL_ERROR;
    }
    if (Tcl_OOInitStubs(interp) == NULL) {
	return TCL_ERROR;
    }
    CbtestMemInit(interp);
    Tcl_CreateObjCommand(interp, "cbtest::cmethod", CMethodCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "cbtest::evalobjv", EvalObjvCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "cbtest::eval", EvalCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "cbtest::nocfieval", CbtestNocfiCmd, NULL,
	    NULL);
    Tcl_CreateObjCommand(interp, "cbtest::evalobjex", EvalObjExCmd, NULL,
	    NULL);
    Tcl_CreateObjCommand(interp, "cbtest::nest", NestCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "cbtest::nodes", NodesCmd, NULL, NULL);
#if TCL_MAJOR_VERSION >= 9
    Tcl_CreateObjCommand(interp, "cbtest::makeandrun2", MakeAndRun2Cmd, NULL,
	    NULL);
#endif
    Tcl_CreateObjCommand(interp, "cbtest::emptytrace", EmptyTraceCmd, NULL,
	    NULL);
    Tcl_CreateObjCommand(interp, "cbtest::spin", SpinCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "cbtest::asyncloop", AsyncLoopCmd, NULL,
	    NULL);
    Tcl_CreateObjCommand(interp, "cbtest::asynccount", AsyncCountCmd, NULL,
	    NULL);
    Tcl_CreateObjCommand(interp, "cbtest::mapsym", MapsymCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "cbtest::labelpush", LabelCmd, "push", NULL);
    Tcl_CreateObjCommand(interp, "cbtest::labelpop", LabelCmd, "pop", NULL);
    Tcl_CreateObjCommand(interp, "cbtest::labelget", LabelCmd, "get", NULL);
    Tcl_CreateObjCommand(interp, "cbtest::labelspin", LabelCmd, "spin", NULL);
    Tcl_CreateObjCommand(interp, "cbtest::labeleval", LabelCmd, "eval", NULL);
    Tcl_CreateObjCommand(interp, "cbtest::noapi", LabelCmd, "noapi", NULL);
    Tcl_CreateObjCommand(interp, "cbtest::clockspin", SpinCmd, (ClientData) 1,
	    NULL);
    Tcl_CreateObjCommand(interp, "cbtest::work", WorkCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "cbtest::dlrun", DlrunCmd, NULL, NULL);
#ifdef HAVE_NOCFI
    Tcl_CreateObjCommand(interp, "cbtest::nocfi", NoCfiCmd, NULL, NULL);
#endif
    Tcl_CreateObjCommand(interp, "cbtest::callback", CallbackCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "cbtest::sigprof", SigprofCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "cbtest::forkwait", ForkWaitCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "cbtest::fork", ForkCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "cbtest::waitpid", WaitpidCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "cbtest::churn", ChurnCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "cbtest::cmdinfo", CmdInfoCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "cbtest::nop", NopCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "cbtest::tornframe", TornFrameCmd, NULL,
	    NULL);
    Tcl_CreateObjCommand(interp, "cbtest::cputime", CputimeCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "cbtest::callobjproc", CallObjProcCmd, NULL,
	    NULL);
    Tcl_CreateObjCommand(interp, "cbtest::makecmds", MakeCmdsCmd, NULL,
	    NULL);
    Tcl_CreateObjCommand(interp, "cbtest::delcmds", MakeCmdsCmd,
	    (ClientData) 1, NULL);
    Tcl_CreateObjCommand(interp, "cbtest::callobjprocn", CallObjProcNCmd,
	    NULL, NULL);
    Tcl_CreateObjCommand(interp, "cbtest::setinfo", SetInfoCmd, NULL, NULL);
    Tcl_CreateObjCommand(interp, "cbtest::makeandrun", MakeAndRunCmd, NULL,
	    NULL);
    return Tcl_PkgProvideEx(interp, "cbtest", "1.0", NULL);
}
