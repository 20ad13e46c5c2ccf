/*
 * tclcprof.h --
 *
 *	The C interface of tclcprof for extensions and programs that embed
 *	Tcl: labels (see LABELS in the man page). It needs no library to
 *	link with: the functions are reached through a table the package
 *	gives when it is present in an interpreter (Tcl_PkgPresentEx's
 *	client data), so that a program built with this header runs the
 *	same without tclcprof (Tclcprof_GetApi then returns NULL).
 *
 *	    const TclcprofApi *api = Tclcprof_GetApi(interp);
 *	    const char *kv[] = {"request", "42", "user", "bob"};
 *	    int token = api ? api->labelPush(interp, 4, kv) : 0;
 *	    ... work, callbacks into Tcl ...
 *	    if (token > 0) api->labelPop(interp, token);
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef TCLCPROF_H_INCLUDED
#define TCLCPROF_H_INCLUDED

#include <tcl.h>

#define TCLCPROF_API_VERSION	1

typedef struct TclcprofApi {
    int version;		/* TCLCPROF_API_VERSION or later. */

    /*
     * labelPush: add labels (count strings, key value ...) to those in
     * effect in the calling thread, as tclcprof::label does, until the
     * matching labelPop. Returns a token > 0, or 0 with an error in the
     * interpreter's result (TCLCPROF LABEL ...: an odd count, an empty
     * key, a key with "=", too long or too many).
     *
     * labelPop: end the labels of labelPush's token (and of any push made
     * after it in the thread and not popped yet). Returns TCL_OK, or
     * TCL_ERROR with TCLCPROF LABEL POP when the token is not live.
     *
     * labelGet: the labels in effect in the calling thread, as a new
     * dictionary (sorted by key).
     */

    int (*labelPush)(Tcl_Interp *interp, int count,
	    const char *const keyValues[]);
    int (*labelPop)(Tcl_Interp *interp, int token);
    Tcl_Obj *(*labelGet)(Tcl_Interp *interp);
} TclcprofApi;

/*
 * The table, when the package is loaded in the interpreter, else NULL
 * (the interpreter's result and error state are left as they were).
 */

static inline const TclcprofApi *
Tclcprof_GetApi(
    Tcl_Interp *interp)
{
    void *data = NULL;
    Tcl_InterpState saved = Tcl_SaveInterpState(interp, TCL_OK);

    if (Tcl_PkgPresentEx(interp, "tclcprof", NULL, 0, &data) == NULL
	    || data == NULL
	    || ((const TclcprofApi *) data)->version < TCLCPROF_API_VERSION) {
	data = NULL;
    }
    (void) Tcl_RestoreInterpState(interp, saved);
    return (const TclcprofApi *) data;
}

#endif /* TCLCPROF_H_INCLUDED */
