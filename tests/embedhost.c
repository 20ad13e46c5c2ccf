/*
 * embedhost.c --
 *
 *	A small program that embeds Tcl as C hosts do, for the tests of the
 *	preload library (unix/hookpreload.c): it makes an interpreter, without
 *	Tcl_Init and without ever loading the package, evaluates its first
 *	argument in it and prints the result, then ends as its second
 *	argument says:
 *
 *	    embedhost script ?delete|exit|return?
 *	    embedhost -nointerp
 *
 *	delete (the default): Tcl_DeleteInterp, then return from main;
 *	exit: Tcl_Exit(0); return: return from main with the interpreter
 *	still there (no Tcl call at all). An error of the script is printed
 *	on stderr and the exit status is then 1. With -nointerp it makes
 *	no interpreter at all and returns 0.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include <tcl.h>
#include <stdio.h>
#include <string.h>

int
main(
    int argc,
    char **argv)
{
    Tcl_Interp *interp;
    const char *how = (argc > 2) ? argv[2] : "delete";
    int code;

    if (argc < 2) {
	fprintf(stderr, "usage: %s script ?delete|exit|return?\n", argv[0]);
	return 2;
    }
    Tcl_FindExecutable(argv[0]);
    if (strcmp(argv[1], "-nointerp") == 0) {
	return 0;
    }
    interp = Tcl_CreateInterp();
    code = Tcl_Eval(interp, argv[1]);
    if (code != TCL_OK) {
	fprintf(stderr, "%s\n", Tcl_GetStringResult(interp));
    } else {
	printf("%s\n", Tcl_GetStringResult(interp));
	fflush(stdout);
    }
    if (strcmp(how, "exit") == 0) {
	Tcl_Exit(code != TCL_OK);
    } else if (strcmp(how, "delete") == 0) {
	Tcl_DeleteInterp(interp);
    }
    return code != TCL_OK;
}
