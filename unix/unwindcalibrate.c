/*
 * unwindcalibrate.c --
 *
 *	Native stack facts the splice needs, found with libunwind in normal
 *	context (never from a signal handler: libunwind 1.6 is not
 *	async-signal-safe in practice):
 *
 *	- the address range of Tcl's trampoline, TclNRRunCallbacks, read
 *	  from its unwind info (libtcl is stripped, so never by name);
 *	- the stack pointers of the trampoline frames on the current native
 *	  stack, innermost first;
 *	- the address range of Tcl's bytecode engine (TEBCresume, static in
 *	  tclExecute.c), for the pc of the bytecode a sample interrupts.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "tclcprofInt.h"
#include <tclInt.h>
#include <stdio.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

/*
 *----------------------------------------------------------------------
 *
 * CprofTrampolineRange --
 *
 *	[start, end) of TclNRRunCallbacks, whose address comes from Tcl's
 *	internal stubs table.
 *
 * Results:
 *	1 and the range, or 0 with a reason in msg.
 *
 *----------------------------------------------------------------------
 */

int
CprofTrampolineRange(
    uintptr_t *startPtr,
    uintptr_t *endPtr,
    char *msg,
    size_t msgLen)
{
    unw_proc_info_t pi;
    uintptr_t addr = (uintptr_t) tclIntStubsPtr->tclNRRunCallbacks;
    int code;

    if (addr == 0) {
	snprintf(msg, msgLen, "TclNRRunCallbacks is not in Tcl's stubs table");
	return 0;
    }
    code = unw_get_proc_info_by_ip(unw_local_addr_space, (unw_word_t) addr,
	    &pi, NULL);
    if (code != 0) {
	snprintf(msg, msgLen, "no unwind info for TclNRRunCallbacks (%s)",
		unw_strerror(code));
	return 0;
    }
    if (pi.start_ip > addr || pi.end_ip <= addr) {
	snprintf(msg, msgLen, "unwind info for TclNRRunCallbacks does not "
		"cover its address");
	return 0;
    }
    *startPtr = (uintptr_t) pi.start_ip;
    *endPtr = (uintptr_t) pi.end_ip;
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofNativeTrampolines --
 *
 *	Walk the current native stack and record the stack pointer of each
 *	frame executing in [start, end), innermost first, at most max.
 *
 * Results:
 *	The number of frames recorded.
 *
 *----------------------------------------------------------------------
 */

int
CprofNativeTrampolines(
    uintptr_t start,
    uintptr_t end,
    uintptr_t *sps,
    int max)
{
    unw_context_t context;
    unw_cursor_t cursor;
    int n = 0, steps = 0;

    if (unw_getcontext(&context) != 0
	    || unw_init_local(&cursor, &context) != 0) {
	return 0;
    }
    while (n < max && steps++ < 4096 && unw_step(&cursor) > 0) {
	unw_word_t ip, sp;

	if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0
		|| unw_get_reg(&cursor, UNW_REG_SP, &sp) != 0) {
	    break;
	}

	/*
	 * ip is a return address: the call is just before it.
	 */

	if (ip - 1 >= start && ip - 1 < end) {
	    sps[n++] = (uintptr_t) sp;
	}
    }
    return n;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofBytecodeRange --
 *
 *	[start, end) of TEBCresume, the function of Tcl's bytecode engine
 *	(static, so never by name): found once per process by evaluating
 *	a script that invokes a probe command. Bytecode invokes a command
 *	after queueing TEBCresume as an NRE callback whose first datum is
 *	its TEBCdata, and TEBCdata holds the ByteCode and then (after two
 *	pointers) the command frame Tcl's cmdFramePtr points to; the probe
 *	finds that callback among the last few queued. The range is then
 *	read from the function's unwind info.
 *
 * Results:
 *	1 and the range, or 0 when it cannot be found (no bytecode pcs are
 *	taken then).
 *
 *----------------------------------------------------------------------
 */

typedef struct TebcDataHead {		/* The head of tclExecute.c's */
    void *codePtr;			/* TEBCdata (Tcl 8.6). */
    void *catchTop;
    void *auxObjList;
    CmdFrame cmdFrame;
} TebcDataHead;

static int
BytecodeProbeCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Interp *iPtr = (Interp *) interp;
    CmdFrame *cfPtr = iPtr->cmdFramePtr;
    NRE_callback *cbPtr;
    char *tdPtr;
    int i;

    if (cfPtr == NULL || cfPtr->type != TCL_LOCATION_BC
	    || cfPtr->data.tebc.codePtr == NULL) {
	return TCL_OK;
    }
    tdPtr = (char *) cfPtr - offsetof(TebcDataHead, cmdFrame);
    if (((TebcDataHead *) tdPtr)->codePtr != cfPtr->data.tebc.codePtr) {
	return TCL_OK;
    }
    for (cbPtr = TOP_CB(iPtr), i = 0; cbPtr != NULL && i < 16;
	    cbPtr = cbPtr->nextPtr, i++) {
	if (cbPtr->data[0] == (ClientData) tdPtr) {
	    *(uintptr_t *) clientData = (uintptr_t) cbPtr->procPtr;
	    break;
	}
    }
    return TCL_OK;
}

int
CprofBytecodeRange(
    Tcl_Interp *interp,
    uintptr_t *startPtr,
    uintptr_t *endPtr)
{
    static int state = 0;	/* 0: not probed; 1: found; -1: not found. */
    static uintptr_t start, end;
    TCL_DECLARE_MUTEX(probeMutex)
    int found;

    Tcl_MutexLock(&probeMutex);
    found = state;
    Tcl_MutexUnlock(&probeMutex);
    if (found == 0) {
	uintptr_t addr = 0, s = 0, e = 0;
	Tcl_Command token;
	Tcl_Obj *scriptObj;
	Tcl_InterpState saved = Tcl_SaveInterpState(interp, TCL_OK);
	unw_proc_info_t pi;

	/*
	 * A global name: no namespace is made where ::tclcprof is not.
	 */

	token = Tcl_CreateObjCommand(interp, "::tclcprof_BytecodeProbe",
		BytecodeProbeCmd, &addr, NULL);

	/*
	 * A fresh string is compiled (a list would be evaluated directly).
	 */

	scriptObj = Tcl_NewStringObj("::tclcprof_BytecodeProbe;", -1);
	Tcl_IncrRefCount(scriptObj);
	(void) Tcl_EvalObjEx(interp, scriptObj, 0);
	Tcl_DecrRefCount(scriptObj);
	Tcl_DeleteCommandFromToken(interp, token);
	Tcl_RestoreInterpState(interp, saved);
	found = -1;
	if (addr != 0 && unw_get_proc_info_by_ip(unw_local_addr_space,
		(unw_word_t) addr, &pi, NULL) == 0
		&& pi.start_ip <= addr && pi.end_ip > addr) {
	    s = (uintptr_t) pi.start_ip;
	    e = (uintptr_t) pi.end_ip;
	    found = 1;
	}
	Tcl_MutexLock(&probeMutex);
	if (state == 0) {
	    state = found;
	    start = s;
	    end = e;
	}
	Tcl_MutexUnlock(&probeMutex);
    }
    Tcl_MutexLock(&probeMutex);
    found = state;
    *startPtr = start;
    *endPtr = end;
    Tcl_MutexUnlock(&probeMutex);
    return found == 1;
}
