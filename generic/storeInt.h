/*
 * storeInt.h --
 *
 *	What the files of the store share: a connection's state (struct
 *	CprofStore) and the helpers each file offers the others.
 *
 *	    store.c	files and connections: the schema and its
 *			upgrades, creating and opening a file safely, busy
 *			handling, errors
 *	    storewrite.c	a run written by flushes and save: what
 *			changed since the last write
 *	    storedata.c	a profile value (a merge) written as a run
 *	    storeread.c	runs read back as profile values, listed, merged
 *
 *	From the top: storedata.c (which writes through storewrite.c's
 *	run rows), storeread.c, storewrite.c, store.c; no file calls one
 *	above it.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _STOREINT_H
#define _STOREINT_H

#include "tclcprofInt.h"
#include <sqlite3.h>

/*
 * Event handlers per origin and kind (captureevents.c): in the schema, and
 * made with CREATE TABLE IF NOT EXISTS when a run with handlers is
 * written to a file made before it (readers look for it first).
 */

#define HANDLERS_SQL \
"CREATE TABLE IF NOT EXISTS handlers (\n" \
"  run INTEGER NOT NULL REFERENCES runs(id),\n" \
"  seq INTEGER NOT NULL,\n" \
"  origin TEXT NOT NULL,\n" \
"  kind TEXT NOT NULL,\n" \
"  count INTEGER NOT NULL, timed INTEGER NOT NULL,\n" \
"  total_ns INTEGER NOT NULL, max_ns INTEGER NOT NULL,\n" \
"  latency_count INTEGER, latency_ns INTEGER, latency_max_ns INTEGER,\n" \
"  PRIMARY KEY (run, seq)\n" \
") WITHOUT ROWID;\n"

#define HANDLERS_INSERT_SQL \
    "INSERT INTO handlers (run, seq, origin, kind, count, timed, total_ns," \
    " max_ns, latency_count, latency_ns, latency_max_ns) VALUES (?1, ?2," \
    " ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"

/*
 * Prepared statements of a writing connection.
 */

enum {
    ST_FRAME_GET, ST_FRAME_PUT, ST_NODE, ST_LINE, ST_EVENT, ST_COV_CMD,
    ST_COV_LINE, ST_RUN, ST_NODE_LINE, ST_MEM_NODE, ST_MEM_NODE_LINE,
    ST_COUNT
};

/*
 * What was last written of a call-tree node, and of a call site.
 */

typedef struct NodeRec {
    int64_t parent;		/* Index of the parent node, -1 for the root. */
    int64_t frame;		/* Database frame id (0: the root). */
    int64_t self, total;
    CprofFigures fig;
    int hasFig;
    int shown;
} NodeRec;

typedef struct ShadowTree {
    NodeRec *recs;
    int count, cap;
    uint64_t timeChanges;	/* Its timeline's changes as last written
				 * (+1; 0: not written). */
} ShadowTree;

struct CprofStore {
    sqlite3 *db;
    Tcl_Obj *pathObj;		/* As given. */
    pid_t pid;			/* The process that opened it. */
    int direct;			/* -commit direct. */
    Tcl_WideInt runId;		/* The run being written, or 0. */
    sqlite3_stmt *stmts[ST_COUNT];
    Tcl_HashTable frameIds;	/* (isC, nameId, module or kind) -> id. */
    int64_t *treeFrames;	/* Sampled tree frame index -> id, or 0. */
    int numTreeFrames;
    ShadowTree trees[3];	/* Trees 0, 1 and 2 (the memory tree of
				 * -mode {sample memory}). */
    int64_t *memFrames;		/* Tree 2's frame index -> id, or 0. */
    int numMemFrames;
    int64_t (*memFigs)[6];	/* Memory figures of the memory tree's
				 * nodes as last written. */
    int numMemFigs, capMemFigs;
    CprofLineValues *lines;	/* Call sites as last written. */
    int numLines, capLines;
    uint64_t *nodeLines;	/* Weights of the tree's C source lines as
				 * last written. */
    int numNodeLines, capNodeLines;
    uint64_t *memNodeLines;	/* The same of the memory tree of a run of
				 * mode sample (memory_node_lines). */
    int numMemNodeLines, capMemNodeLines;
    CprofNameCalls *cmdCalls;	/* Coverage: calls (and kind) by name id,
				 * as written. */
    int numCmdCalls;
    uint64_t *siteHits;		/* Coverage: calls by site, written. */
    int numSiteHits;
    int eventsWritten;		/* Events of the buffer written. */
    int clearPending;		/* The run's rows must go first (reset). */
    int wroteHandlers;		/* The run has rows in handlers. */
    int flushes;		/* Successful flushes. */
    double lastFlushMs;		/* How long the last one took. */
    Tcl_Obj *lastErrorObj;	/* Message of the last failure, or NULL. */
    char lastErrorClass[16];	/* Its class (TCLCPROF DB class path). */
    sqlite3_int64 deadline;	/* Of the operation under way (monotonic
				 * ms, see CprofStoreOpen), or 0. */
    int haveIdentity;		/* The file's device and inode are known: */
    unsigned long long device;	/* as first opened, to tell a file */
    unsigned long long inode;	/* deleted or replaced meanwhile. */
    int created;		/* The file did not exist: this store made it
				 * (CreateDb). */
};

/*
 * store.c
 */

MODULE_SCOPE const char *CprofDbErrorClass(int rc);
MODULE_SCOPE int	CprofDbError(Tcl_Interp *interp, Tcl_Obj *pathObj,
			    sqlite3 *db, int rc, const char *doing);
MODULE_SCOPE int	CprofDbFormatError(Tcl_Interp *interp,
			    Tcl_Obj *pathObj, const char *class,
			    const char *message, const char *extra);
MODULE_SCOPE int	CprofDbOpen(Tcl_Interp *interp, Tcl_Obj *pathObj,
			    int create, int direct, sqlite3 **dbPtr,
			    int *createdPtr, sqlite3_int64 deadline);
MODULE_SCOPE int	CprofDbConnect(Tcl_Interp *interp,
			    CprofStore *storePtr);
MODULE_SCOPE void	CprofDbDisconnect(CprofStore *storePtr,
			    int checkpoint);
MODULE_SCOPE void	CprofDbForgetShadows(CprofStore *storePtr);
MODULE_SCOPE void	CprofDbBindText(sqlite3_stmt *stmt, int index,
			    const char *text);
MODULE_SCOPE void	CprofDbBindObj(sqlite3_stmt *stmt, int index,
			    Tcl_Obj *objPtr);
MODULE_SCOPE void	CprofDbBindNumber(sqlite3_stmt *stmt, int index,
			    Tcl_Obj *valueObj);
MODULE_SCOPE int	CprofDbExec(sqlite3_stmt *stmt);
MODULE_SCOPE int	CprofDbWriteTimeline(CprofStore *storePtr, int tree,
			    Tcl_Obj *timelineObj, Tcl_Obj *nodeTimesObj);
MODULE_SCOPE int	CprofDbFrameRow(CprofStore *storePtr,
			    const char *const cols[5], const char *labels,
			    int64_t *idPtr);
MODULE_SCOPE int	CprofDbLabelRows(CprofStore *storePtr, int64_t frameId,
			    const char *set);

/*
 * storewrite.c
 */

MODULE_SCOPE Tcl_Obj *	CprofDbMetaGet(Tcl_Obj *dictObj, const char *key1,
			    const char *key2);
MODULE_SCOPE int	CprofDbConnectForWrite(Tcl_Interp *interp,
			    CprofStore *storePtr, Tcl_Interp *scratchInterp);
MODULE_SCOPE int	CprofDbInsertRun(CprofStore *storePtr,
			    Tcl_Obj *infoObj);
MODULE_SCOPE int	CprofDbFlushRun(CprofStore *storePtr, Tcl_Obj *metaObj,
			    int final);
MODULE_SCOPE void	CprofDbWriteFailed(Tcl_Interp *interp,
			    CprofStore *storePtr, int rc);

#endif /* _STOREINT_H */
