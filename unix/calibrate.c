/*
 * calibrate.c --
 *
 *	Native stack facts the splice needs, found with libunwind in normal
 *	context (never from a signal handler: libunwind 1.6 is not
 *	async-signal-safe in practice):
 *
 *	- the address range of Tcl's trampoline, TclNRRunCallbacks, read
 *	  from its unwind info (libtcl is stripped, so never by name);
 *	- the stack pointers of the trampoline frames on the current native
 *	  stack, innermost first.
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
