/*
 * symfile.h --
 *
 *	What the files of a loaded module say, for the symbolizer
 *	(symbolize.c): tables read through elfutils by symfile.c, shared
 *	process-wide by file identity. In normal context only.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _SYMFILE_H
#define _SYMFILE_H

#include "tclcprofInt.h"

#define CPROF_BUILD_ID_MAX	64	/* Longest build-id kept. */

/*
 * Identity of a file on disk.
 */

typedef struct CprofFileId {
    unsigned long long dev;
    unsigned long long ino;
    long long size;
    long long mtimeSec;
    long mtimeNsec;
} CprofFileId;

typedef struct CprofSymTable CprofSymTable;

/*
 * What a table says of a link-time address.
 */

typedef struct CprofSymFound {
    int how;			/* CPROF_FOUND_*. */
    const char *name;		/* CPROF_FOUND_SYMBOL: the function's name
				 * (valid while the table is held). */
    int nameLen;		/* Its length (-1: up to its NUL). */
    uint64_t start;		/* The function's start (link-time). */
    int fileId;			/* Interned C source file, or -1. */
    int line;			/* Its line, or 0. */
} CprofSymFound;

#define CPROF_FOUND_NONE	0	/* No function known. */
#define CPROF_FOUND_SYMBOL	1	/* A symbol (or PLT stub) names it. */
#define CPROF_FOUND_START	2	/* Only its start is known (unwind
					 * tables of stripped code). */

/*
 * symreader.c: on the reading thread.
 */

MODULE_SCOPE CprofSymTable *CprofSymTableAcquire(const char *key,
			    const char *path, const CprofFileId *idPtr,
			    const unsigned char *image, size_t imageSize);
MODULE_SCOPE void	CprofSymTableRelease(CprofSymTable *tablePtr);
MODULE_SCOPE const unsigned char *CprofSymTableBuildId(
			    CprofSymTable *tablePtr, int *lenPtr);
MODULE_SCOPE void	CprofSymTableLookup(CprofSymTable *tablePtr,
			    uint64_t rel, int wantLine,
			    CprofSymFound *foundPtr);
MODULE_SCOPE int	CprofSymTableWarm(const char *key, const char *path,
			    const CprofFileId *idPtr);

/*
 * symfile.c: on the calling thread (the reading thread's work).
 */

MODULE_SCOPE CprofSymTable *CprofSymFileAcquire(const char *key,
			    const char *path, const CprofFileId *idPtr,
			    const unsigned char *image, size_t imageSize);
MODULE_SCOPE void	CprofSymFileRelease(CprofSymTable *tablePtr);
MODULE_SCOPE void	CprofSymFileLookup(CprofSymTable *tablePtr,
			    uint64_t rel, int wantLine,
			    CprofSymFound *foundPtr);
MODULE_SCOPE int	CprofSymFileCached(const char *key);
MODULE_SCOPE int	CprofMappingSymbol(const char *name, int type,
			    uint64_t size);

#endif /* _SYMFILE_H */
