/*
 * hookpreload.c --
 *
 *	libtclcprofpreload.so: the TCLCPROF environment variable on its own,
 *	for any program linked to libtcl, whether it loads the package or
 *	not (an embedding host that never says "package require"):
 *
 *	    LD_PRELOAD=.../libtclcprofpreload.so TCLCPROF='-mode exact' ./host
 *
 *	The library defines Tcl_CreateInterp. Preloaded, it comes before
 *	libtcl in the dynamic linker's search order, so that the program's
 *	calls (and those of every module loaded later, tclsh's Tcl_Main
 *	among them: a macro that calls Tcl_CreateInterp from the program)
 *	reach this function, which calls libtcl's and returns its
 *	interpreter. The first interpreter of the process, when TCLCPROF is
 *	set and not empty (and TCLCPROF_NOPRELOAD is not set: the
 *	command-line tool's own tclsh, which profiles in its own way), gets
 *	the package loaded into it at once (load
 *	of libtclcprof from this library's own directory, where "make" and
 *	"make install" put both): the package's initialisation starts the
 *	run from TCLCPROF as it does for "package require tclcprof", with
 *	-scope process unless TCLCPROF says otherwise, so that the
 *	interpreters made later are profiled too. Nothing else is done:
 *	libtcl's calls among its own functions never come here, other
 *	interpreters are the package's business (cmdscope.c), and without
 *	TCLCPROF the library only passes calls on.
 *
 *	When TCLCPROF cannot take effect a line on stderr says so, and the
 *	program runs unprofiled: the package could not be loaded (another
 *	Tcl than 8.6, the library missing, a bad TCLCPROF: the error of
 *	package require), or the process ends without having made an
 *	interpreter here although it has a Tcl (a statically linked Tcl,
 *	whose calls the dynamic linker does not route, or a program that
 *	never made an interpreter). A program without Tcl at all (a child
 *	of the profiled program that inherited the variables) is left
 *	alone.
 *
 *	The library is linked with Tcl's stub library, whose symbols it
 *	keeps to itself (only Tcl_CreateInterp is exported), and not with
 *	libtcl: it may be preloaded into any program.
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
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * With stubs, tcl.h makes Tcl_CreateInterp a macro that reads the stubs
 * table: this file defines the function itself.
 */

#undef Tcl_CreateInterp

#ifndef CPROF_PKG_LIB_FILE
#   define CPROF_PKG_LIB_FILE	"libtclcprof" PACKAGE_VERSION ".so"
#endif

typedef Tcl_Interp *(CreateInterpProc)(void);
typedef void (GetVersionProc)(int *majorPtr, int *minorPtr,
	int *patchPtr, int *typePtr);

__attribute__((visibility("default"))) Tcl_Interp *Tcl_CreateInterp(void);

/*
 * The function's address as this library takes it, by a hidden alias: not
 * through a GOT entry of Tcl_CreateInterp, which the package's cmdscope.c
 * points at its own hook while a run goes on (every module's but
 * libtcl's).
 */

extern Tcl_Interp *OwnCreateInterp(void)
	__attribute__((visibility("hidden")));

static CreateInterpProc *realCreateInterp;
static int firstDone;		/* The first interpreter was made (atomic):
				 * later ones are passed on untouched. */

/*
 * The interpreter the package was loaded into, while it lives and Tcl has
 * not finalized its thread (ExitWrite).
 */

static Tcl_Interp *attachedInterp;
static pthread_t attachedThread;

/*
 *----------------------------------------------------------------------
 *
 * EnvSet --
 *
 *	Whether TCLCPROF is set to something other than blanks (the
 *	package ignores an empty one too).
 *
 *----------------------------------------------------------------------
 */

static int
EnvSet(void)
{
    const char *value = getenv("TCLCPROF");

    if (value == NULL) {
	return 0;
    }
    while (*value == ' ' || *value == '\t' || *value == '\n'
	    || *value == '\r') {
	value++;
    }
    return *value != '\0';
}

static void
Warn(
    const char *what,
    const char *detail)
{
    fprintf(stderr, "tclcprof: TCLCPROF cannot take effect: %s%s%s\n",
	    what, detail != NULL ? ": " : "", detail != NULL ? detail : "");
}

/*
 *----------------------------------------------------------------------
 *
 * FindReal --
 *
 *	libtcl's definition of 'name': the next one after this library in
 *	the search order, or, for a libtcl that a module loaded later
 *	brought in with local scope (where RTLD_NEXT does not look), the
 *	first module loaded that resolves the name to another function
 *	than this library's.
 *
 *----------------------------------------------------------------------
 */

typedef struct Search {
    const char *name;
    void *own;
    void *found;
} Search;

static int
SearchModule(
    struct dl_phdr_info *info,
    size_t size,
    void *data)
{
    Search *sPtr = (Search *) data;
    void *handle, *p;

    (void) size;
    if (info->dlpi_name == NULL || info->dlpi_name[0] == '\0') {
	return 0;			/* The program: RTLD_NEXT saw it. */
    }
    handle = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (handle == NULL) {
	return 0;
    }
    p = dlsym(handle, sPtr->name);
    dlclose(handle);
    if (p != NULL && p != sPtr->own) {
	sPtr->found = p;
	return 1;
    }
    return 0;
}

static void *
FindReal(
    const char *name,
    void *own)
{
    Search search;
    void *p = dlsym(RTLD_NEXT, name);

    if (p != NULL && p != own) {
	return p;
    }
    search.name = name;
    search.own = own;
    search.found = NULL;
    dl_iterate_phdr(SearchModule, &search);
    return search.found;
}

/*
 *----------------------------------------------------------------------
 *
 * LibraryPath --
 *
 *	The package's shared library, next to this one, into buf (no Tcl
 *	call: AtExit has no stubs table). Returns 0 when this library's
 *	own file cannot be told or the path is too long.
 *
 *----------------------------------------------------------------------
 */

static int
LibraryPath(
    char *buf,
    size_t size)
{
    Dl_info info;
    const char *slash;
    int dirLen, n;

    if (!dladdr((void *) OwnCreateInterp, &info) || info.dli_fname == NULL) {
	return 0;
    }
    slash = strrchr(info.dli_fname, '/');
    dirLen = (slash == NULL) ? 0 : (int) (slash + 1 - info.dli_fname);
    n = snprintf(buf, size, "%.*s%s", dirLen, info.dli_fname,
	    CPROF_PKG_LIB_FILE);
    return n > 0 && (size_t) n < size;
}

/*
 *----------------------------------------------------------------------
 *
 * ExitWrite, InterpGone, ThreadGone --
 *
 *	A run is written when the program deletes its interpreter, or
 *	exits through Tcl (Tcl_Exit, Tcl_Finalize, Tcl_FinalizeThread: the
 *	package's thread exit handler). A host that returns from main or
 *	calls exit() with its interpreter alive does neither: then, from
 *	atexit, in the interpreter's thread, Tcl_FinalizeThread runs that
 *	handler as Tcl's exit would. Not in another thread (whose Tcl is
 *	not the interpreter's), nor once the interpreter is deleted or
 *	Tcl has finalized the thread itself.
 *
 *----------------------------------------------------------------------
 */

static void
InterpGone(
    ClientData clientData,
    Tcl_Interp *interp)
{
    (void) clientData;
    (void) interp;
    attachedInterp = NULL;
}

static void
ThreadGone(
    ClientData clientData)
{
    (void) clientData;
    attachedInterp = NULL;
}

static void
ExitWrite(void)
{
    if (attachedInterp != NULL
	    && pthread_equal(pthread_self(), attachedThread)) {
	attachedInterp = NULL;
	Tcl_FinalizeThread();
    }
}

/*
 *----------------------------------------------------------------------
 *
 * Attach --
 *
 *	The first interpreter of the process was made, TCLCPROF is set:
 *	load the package into it, which starts the run. The interpreter's
 *	result and error state are left as they were (empty).
 *
 *----------------------------------------------------------------------
 */

static void
Attach(
    Tcl_Interp *interp)
{
    Dl_info info;
    GetVersionProc *versionProc = NULL;
    int major = 0, minor = 0;
    char path[4096];
    Tcl_Obj *cmdObj;
    Tcl_InterpState saved;
    char buf[64];

    /*
     * The stubs table is checked by its magic number, which says nothing
     * of a Tcl 8.5 or 9: ask libtcl its version first.
     */

    if (dladdr((void *) realCreateInterp, &info) && info.dli_fname != NULL) {
	void *handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);

	if (handle != NULL) {
	    versionProc = (GetVersionProc *) dlsym(handle, "Tcl_GetVersion");
	    dlclose(handle);
	}
    }
    if (versionProc == NULL) {
	Warn("cannot tell the version of this program's Tcl", NULL);
	return;
    }
    versionProc(&major, &minor, NULL, NULL);
    if (major != TCL_MAJOR_VERSION || minor != TCL_MINOR_VERSION) {
	snprintf(buf, sizeof(buf), "this program runs Tcl %d.%d", major,
		minor);
	Warn("tclcprof needs Tcl " TCL_VERSION, buf);
	return;
    }
    if (Tcl_InitStubs(interp, "8.6-", 0) == NULL) {
	Warn("Tcl's stubs table is not that of Tcl " TCL_VERSION, NULL);
	return;
    }
    if (!LibraryPath(path, sizeof(path))) {
	Warn("cannot tell where libtclcprofpreload was loaded from", NULL);
	return;
    }

    saved = Tcl_SaveInterpState(interp, TCL_OK);
    cmdObj = Tcl_NewListObj(0, NULL);
    Tcl_IncrRefCount(cmdObj);
    Tcl_ListObjAppendElement(NULL, cmdObj, Tcl_NewStringObj("load", -1));
    Tcl_ListObjAppendElement(NULL, cmdObj, Tcl_NewStringObj(path, -1));
    Tcl_ListObjAppendElement(NULL, cmdObj, Tcl_NewStringObj("Tclcprof", -1));
    if (Tcl_EvalObjEx(interp, cmdObj, TCL_EVAL_GLOBAL) != TCL_OK) {
	Warn(Tcl_GetStringResult(interp), NULL);
    } else {
	attachedInterp = interp;
	attachedThread = pthread_self();
	Tcl_CallWhenDeleted(interp, InterpGone, NULL);
	Tcl_CreateThreadExitHandler(ThreadGone, NULL);
	atexit(ExitWrite);
    }
    Tcl_DecrRefCount(cmdObj);
    Tcl_RestoreInterpState(interp, saved);
}

/*
 *----------------------------------------------------------------------
 *
 * Tcl_CreateInterp --
 *
 *	The program's Tcl_CreateInterp: libtcl's, then, for the process's
 *	first interpreter with TCLCPROF set, Attach.
 *
 *----------------------------------------------------------------------
 */

Tcl_Interp *
Tcl_CreateInterp(void)
{
    CreateInterpProc *procPtr = __atomic_load_n(&realCreateInterp,
	    __ATOMIC_ACQUIRE);
    Tcl_Interp *interp;

    if (procPtr == NULL) {
	procPtr = (CreateInterpProc *) FindReal("Tcl_CreateInterp",
		(void *) OwnCreateInterp);
	if (procPtr == NULL) {
	    fprintf(stderr, "tclcprof: libtclcprofpreload: no Tcl_CreateInterp"
		    " in this program but its own\n");
	    return NULL;
	}
	__atomic_store_n(&realCreateInterp, procPtr, __ATOMIC_RELEASE);
    }
    interp = procPtr();
    if (interp != NULL && !__atomic_exchange_n(&firstDone, 1,
	    __ATOMIC_ACQ_REL) && EnvSet()
	    && getenv("TCLCPROF_NOPRELOAD") == NULL) {
	Attach(interp);
    }
    return interp;
}

extern Tcl_Interp *OwnCreateInterp(void)
	__attribute__((alias("Tcl_CreateInterp"), visibility("hidden")));

/*
 *----------------------------------------------------------------------
 *
 * AtExit --
 *
 *	The process ends and no interpreter was made here, with TCLCPROF
 *	set: say why nothing was profiled, when the program has a Tcl (one
 *	that is not libtcl, built into the program, or a libtcl never
 *	asked for an interpreter) and the package was not loaded some
 *	other way.
 *
 *----------------------------------------------------------------------
 */

static void __attribute__((destructor))
AtExit(void)
{
    void *own = (void *) OwnCreateInterp;
    void *global, *next;
    char path[4096];

    if (__atomic_load_n(&firstDone, __ATOMIC_ACQUIRE) || !EnvSet()) {
	return;
    }
    global = dlsym(RTLD_DEFAULT, "Tcl_CreateInterp");
    next = FindReal("Tcl_CreateInterp", own);
    if (next == NULL && (global == NULL || global == own)) {
	return;				/* No Tcl in this program. */
    }
    if (LibraryPath(path, sizeof(path))) {
	void *handle = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);

	if (handle != NULL) {
	    dlclose(handle);
	    return;			/* The package was loaded. */
	}
    }
    Warn((global != NULL && global != own)
	    ? "this program's Tcl is linked into it statically, where"
	    " libtclcprofpreload cannot see its interpreters (load the"
	    " package instead)"
	    : "this program made no Tcl interpreter", NULL);
}
