/*
 * storeread.c --
 *
 *	Runs read back as the value tclcprof::data returns, runs listed, and
 *	several runs (of several files) read and merged into one profile.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "storeInt.h"
#include <string.h>
#include <stdlib.h>
#include <unistd.h>
#include <errno.h>

/*
 * A hash table whose values are Tcl objects, emptied and deleted.
 */

static void
FreeObjTable(
    Tcl_HashTable *tablePtr)
{
    Tcl_HashEntry *hPtr;
    Tcl_HashSearch search;

    for (hPtr = Tcl_FirstHashEntry(tablePtr, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	Tcl_DecrRefCount((Tcl_Obj *) Tcl_GetHashValue(hPtr));
    }
    Tcl_DeleteHashTable(tablePtr);
}

/*
 *----------------------------------------------------------------------
 *
 * Reading --
 *
 *	CprofStoreLoad: a run of a file as the value tclcprof::data returns
 *	(the latest run when runId is 0). CprofStoreRuns: the runs of a
 *	file.
 *
 *----------------------------------------------------------------------
 */

#define PUT(d, k, v) \
    Tcl_DictObjPut(NULL, (d), Tcl_NewStringObj((k), -1), (v))

static Tcl_Obj *
ColumnObj(
    sqlite3_stmt *stmt,
    int col)
{
    switch (sqlite3_column_type(stmt, col)) {
    case SQLITE_INTEGER:
	return Tcl_NewWideIntObj(sqlite3_column_int64(stmt, col));
    case SQLITE_FLOAT:
	return Tcl_NewDoubleObj(sqlite3_column_double(stmt, col));
    case SQLITE_NULL:
	return Tcl_NewObj();
    default:
	return Tcl_NewStringObj((const char *) sqlite3_column_text(stmt, col),
		sqlite3_column_bytes(stmt, col));
    }
}

/*
 *----------------------------------------------------------------------
 *
 * Shared values --
 *
 *	A profile read back is made of one dictionary per node (or row),
 *	whose keys and many of whose values repeat from node to node: the
 *	keys, kinds, interpreters, modules, the names of frames met at many
 *	nodes, the files of lines, small counts. Each is made once per read
 *	and shared by the nodes (an object of 48 bytes, and the string it
 *	holds, per use otherwise: some 1,000 of the 2,150 bytes a node of an
 *	exact profile took).
 *
 *----------------------------------------------------------------------
 */

#define SHARED_INTS	256	/* Integers 0 to 255 are shared. */

typedef struct Shared {
    Tcl_HashTable strings;	/* Text -> its object (keys and columns). */
    Tcl_Obj *ints[SHARED_INTS];	/* Small integers, made when first met. */
    Tcl_Obj *emptyObj;		/* NULL columns. */
} Shared;

static void
SharedInit(
    Shared *shPtr)
{
    Tcl_InitHashTable(&shPtr->strings, TCL_STRING_KEYS);
    memset(shPtr->ints, 0, sizeof(shPtr->ints));
    shPtr->emptyObj = Tcl_NewObj();
    Tcl_IncrRefCount(shPtr->emptyObj);
}

static void
SharedFree(
    Shared *shPtr)
{
    int i;

    FreeObjTable(&shPtr->strings);
    for (i = 0; i < SHARED_INTS; i++) {
	if (shPtr->ints[i] != NULL) {
	    Tcl_DecrRefCount(shPtr->ints[i]);
	}
    }
    Tcl_DecrRefCount(shPtr->emptyObj);
}

/*
 * The shared object of a text ('length' bytes, or up to its NUL with -1).
 */

static Tcl_Obj *
SharedString(
    Shared *shPtr,
    const char *text,
    int length)
{
    Tcl_HashEntry *hPtr;
    Tcl_Obj *objPtr;
    int isNew;

    if (length >= 0 && (size_t) length != strlen(text)) {
	return Tcl_NewStringObj(text, length);	/* An embedded NUL. */
    }
    hPtr = Tcl_CreateHashEntry(&shPtr->strings, text, &isNew);
    if (isNew) {
	objPtr = Tcl_NewStringObj(text, length);
	Tcl_IncrRefCount(objPtr);
	Tcl_SetHashValue(hPtr, objPtr);
    }
    return (Tcl_Obj *) Tcl_GetHashValue(hPtr);
}

/*
 * ColumnObj, with the values that repeat shared.
 */

static Tcl_Obj *
SharedColumn(
    Shared *shPtr,
    sqlite3_stmt *stmt,
    int col)
{
    sqlite3_int64 v;

    switch (sqlite3_column_type(stmt, col)) {
    case SQLITE_INTEGER:
	v = sqlite3_column_int64(stmt, col);
	if (v >= 0 && v < SHARED_INTS) {
	    if (shPtr->ints[v] == NULL) {
		shPtr->ints[v] = Tcl_NewWideIntObj(v);
		Tcl_IncrRefCount(shPtr->ints[v]);
	    }
	    return shPtr->ints[v];
	}
	return Tcl_NewWideIntObj(v);
    case SQLITE_FLOAT:
	return Tcl_NewDoubleObj(sqlite3_column_double(stmt, col));
    case SQLITE_NULL:
	return shPtr->emptyObj;
    default:
	return SharedString(shPtr,
		(const char *) sqlite3_column_text(stmt, col),
		sqlite3_column_bytes(stmt, col));
    }
}

#define SPUT(d, k, v) \
    Tcl_DictObjPut(NULL, (d), SharedString(&shared, (k), -1), (v))
#define SCOL(col) \
    SharedColumn(&shared, stmt, (col))

/*
 * One call tree, built from its rows bottom up: children have higher ids
 * than their parents.
 */

static int
LoadTree(
    sqlite3 *db,
    Tcl_WideInt runId,
    int tree,
    int hasInterp,		/* The frames have an interp column
				 * (schema version 3). */
    int memory,			/* The run's memory tree: its nodes have
				 * rows in memory_nodes. */
    Tcl_Obj **treeObjPtr,
    Tcl_Obj **timelinePtr)	/* Trees 0 and 2: their timeline, if
				 * kept, else left alone. */
{
    static const char *const figKeys[] = {
	"calls", "total_ns", "self_ns", "min_ns", "max_ns"
    };
    sqlite3_stmt *stmt;
    Tcl_HashTable pending;	/* Node id -> its list of children. */
    Tcl_HashTable lineLists;	/* 2 * node id (+1 for caller lines) ->
				 * the node's C source lines. */
    Tcl_HashTable memFigs;	/* Node id -> its memory figures. */
    Tcl_HashTable nodeTimes;	/* Node id -> its times. */
    static const char *const memKeys[] = {
	"alloc_bytes", "alloc_objects", "live_bytes", "live_objects",
	"peak_bytes", "peak_objects"
    };
    Tcl_HashEntry *hPtr;
    Tcl_Obj *rootObj = NULL;
    Shared shared;
    int rc, isNew;
    Tcl_Size k;

    SharedInit(&shared);

    /*
     * The C source lines of the sampled tree, or of a run of mode sample's
     * memory tree (tree 2; none in a file made before they were kept):
     * self_lines of a C frame's node, caller_lines of the node it called
     * from the line.
     */

    Tcl_InitHashTable(&lineLists, TCL_ONE_WORD_KEYS);
    if ((tree == 0 || tree == 2) && sqlite3_prepare_v2(db, tree == 0
	    ? "SELECT node, callee, file, line, weight FROM node_lines"
	    " WHERE run = ?1 ORDER BY id"
	    : "SELECT node, callee, file, line, weight FROM memory_node_lines"
	    " WHERE run = ?1 ORDER BY id", -1, &stmt, NULL) == SQLITE_OK) {
	sqlite3_bind_int64(stmt, 1, runId);
	while (sqlite3_step(stmt) == SQLITE_ROW) {
	    int isCall = sqlite3_column_type(stmt, 1) != SQLITE_NULL;
	    sqlite3_int64 node = sqlite3_column_int64(stmt, isCall ? 1 : 0);
	    Tcl_Obj *listObj;

	    hPtr = Tcl_CreateHashEntry(&lineLists,
		    (char *) (intptr_t) (2 * node + isCall), &isNew);
	    if (isNew) {
		listObj = Tcl_NewListObj(0, NULL);
		Tcl_IncrRefCount(listObj);
		Tcl_SetHashValue(hPtr, listObj);
	    } else {
		listObj = Tcl_GetHashValue(hPtr);
	    }
	    for (k = 2; k < 5; k++) {
		Tcl_ListObjAppendElement(NULL, listObj, SCOL(k));
	    }
	}
	sqlite3_finalize(stmt);
    }

    /*
     * Memory profiles: each node's figures (memory_nodes, absent from
     * files made before it was kept).
     */

    Tcl_InitHashTable(&memFigs, TCL_ONE_WORD_KEYS);
    if (memory && sqlite3_prepare_v2(db, "SELECT node, alloc_bytes,"
	    " alloc_objects, live_bytes, live_objects, peak_bytes,"
	    " peak_objects FROM memory_nodes WHERE run = ?1", -1, &stmt,
	    NULL) == SQLITE_OK) {
	sqlite3_bind_int64(stmt, 1, runId);
	while (sqlite3_step(stmt) == SQLITE_ROW) {
	    Tcl_Obj *figObj = Tcl_NewDictObj();

	    for (k = 0; k < 6; k++) {
		SPUT(figObj, memKeys[k], SCOL(k + 1));
	    }
	    Tcl_IncrRefCount(figObj);
	    hPtr = Tcl_CreateHashEntry(&memFigs, (char *) (intptr_t)
		    sqlite3_column_int64(stmt, 0), &isNew);
	    if (!isNew) {
		Tcl_DecrRefCount((Tcl_Obj *) Tcl_GetHashValue(hPtr));
	    }
	    Tcl_SetHashValue(hPtr, figObj);
	}
	sqlite3_finalize(stmt);
    }

    /*
     * The timeline (none in a file made before they were kept, version
     * 4 and older): the dict of draintimeline.c, and each node's times.
     */

    Tcl_InitHashTable(&nodeTimes, TCL_ONE_WORD_KEYS);
    if (timelinePtr != NULL && sqlite3_prepare_v2(db, "SELECT width_ns,"
	    " buckets, weights, live, peak, node_times FROM timelines"
	    " WHERE run = ?1 AND tree = ?2", -1, &stmt, NULL) == SQLITE_OK) {
	sqlite3_bind_int64(stmt, 1, runId);
	sqlite3_bind_int(stmt, 2, tree);
	if (sqlite3_step(stmt) == SQLITE_ROW) {
	    Tcl_Obj *tlObj = Tcl_NewDictObj(), *listObj = SCOL(5), **elems;
	    Tcl_Size n;

	    SPUT(tlObj, "width_ns", SCOL(0));
	    SPUT(tlObj, "buckets", SCOL(1));
	    SPUT(tlObj, "weights", SCOL(2));
	    if (sqlite3_column_bytes(stmt, 3) > 0) {
		SPUT(tlObj, "live", SCOL(3));
		SPUT(tlObj, "peak", SCOL(4));
	    }
	    *timelinePtr = tlObj;
	    Tcl_IncrRefCount(listObj);
	    if (Tcl_ListObjGetElements(NULL, listObj, &n, &elems) == TCL_OK) {
		for (k = 0; k + 1 < n; k += 2) {
		    Tcl_WideInt node;

		    if (Tcl_GetWideIntFromObj(NULL, elems[k], &node)
			    != TCL_OK) {
			continue;
		    }
		    hPtr = Tcl_CreateHashEntry(&nodeTimes,
			    (char *) (intptr_t) node, &isNew);
		    if (!isNew) {
			Tcl_DecrRefCount((Tcl_Obj *) Tcl_GetHashValue(hPtr));
		    }
		    Tcl_IncrRefCount(elems[k + 1]);
		    Tcl_SetHashValue(hPtr, elems[k + 1]);
		}
	    }
	    Tcl_DecrRefCount(listObj);
	}
	sqlite3_finalize(stmt);
    }

    rc = sqlite3_prepare_v2(db, hasInterp
	    ? "SELECT n.id, n.parent, f.kind, f.name,"
	    " f.tclkind, f.module, n.self, n.total, n.calls, n.total_ns,"
	    " n.self_ns, n.min_ns, n.max_ns, n.suspended_ns, f.interp"
	    " FROM nodes n LEFT JOIN frames f ON f.id = n.frame"
	    " WHERE n.run = ?1 AND n.tree = ?2 AND n.shown"
	    " ORDER BY n.id DESC"
	    : "SELECT n.id, n.parent, f.kind, f.name,"
	    " f.tclkind, f.module, n.self, n.total, n.calls, n.total_ns,"
	    " n.self_ns, n.min_ns, n.max_ns, n.suspended_ns, ''"
	    " FROM nodes n LEFT JOIN frames f ON f.id = n.frame"
	    " WHERE n.run = ?1 AND n.tree = ?2 AND n.shown"
	    " ORDER BY n.id DESC", -1, &stmt, NULL);
    if (rc != SQLITE_OK) {
	FreeObjTable(&lineLists);
	FreeObjTable(&memFigs);
	FreeObjTable(&nodeTimes);
	SharedFree(&shared);
	return rc;
    }
    sqlite3_bind_int64(stmt, 1, runId);
    sqlite3_bind_int(stmt, 2, tree);
    Tcl_InitHashTable(&pending, TCL_ONE_WORD_KEYS);
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
	Tcl_Obj *dictObj = Tcl_NewDictObj(), *childrenObj;
	sqlite3_int64 id = sqlite3_column_int64(stmt, 0);

	if (sqlite3_column_type(stmt, 1) == SQLITE_NULL) {
	    SPUT(dictObj, "name", shared.emptyObj);
	    SPUT(dictObj, "kind", SharedString(&shared, "root", -1));
	} else {
	    const char *kind = (const char *) sqlite3_column_text(stmt, 2);

	    SPUT(dictObj, "name", SCOL(3));
	    SPUT(dictObj, "kind", SCOL(2));
	    if (kind != NULL && strcmp(kind, "c") == 0) {
		SPUT(dictObj, "module", SCOL(5));
	    } else if (kind != NULL && strcmp(kind, "thread") == 0) {
		SPUT(dictObj, "thread", SCOL(5));
	    } else if (kind != NULL && strcmp(kind, "labels") == 0) {
		/* The name is the set. */
	    } else {
		SPUT(dictObj, "tclkind", SCOL(4));
		SPUT(dictObj, "interp", SCOL(14));
		if (sqlite3_column_bytes(stmt, 5) > 0) {
		    SPUT(dictObj, "origin", SCOL(5));
		}
	    }
	}
	SPUT(dictObj, "self", SCOL(6));
	SPUT(dictObj, "total", SCOL(7));
	if (sqlite3_column_type(stmt, 8) != SQLITE_NULL) {
	    for (k = 0; k < 5; k++) {
		SPUT(dictObj, figKeys[k], SCOL(8 + k));
	    }
	    if (sqlite3_column_int64(stmt, 13) > 0) {
		SPUT(dictObj, "suspended_ns", SCOL(13));
	    }
	}
	hPtr = Tcl_FindHashEntry(&memFigs, (char *) (intptr_t) id);
	if (hPtr != NULL) {
	    Tcl_DictObjSize(NULL, (Tcl_Obj *) Tcl_GetHashValue(hPtr), &k);
	    {
		Tcl_DictSearch ds;
		Tcl_Obj *kObj, *vObj;
		int done;

		Tcl_DictObjFirst(NULL, (Tcl_Obj *) Tcl_GetHashValue(hPtr),
			&ds, &kObj, &vObj, &done);
		for (; !done; Tcl_DictObjNext(&ds, &kObj, &vObj, &done)) {
		    Tcl_DictObjPut(NULL, dictObj, kObj, vObj);
		}
		Tcl_DictObjDone(&ds);
	    }
	}
	hPtr = Tcl_FindHashEntry(&nodeTimes, (char *) (intptr_t) id);
	if (hPtr != NULL) {
	    SPUT(dictObj, "times", (Tcl_Obj *) Tcl_GetHashValue(hPtr));
	}
	for (k = 0; k < 2; k++) {
	    hPtr = Tcl_FindHashEntry(&lineLists,
		    (char *) (intptr_t) (2 * id + k));
	    if (hPtr != NULL) {
		SPUT(dictObj, k ? "caller_lines" : "self_lines",
			(Tcl_Obj *) Tcl_GetHashValue(hPtr));
	    }
	}
	hPtr = Tcl_FindHashEntry(&pending, (char *) (intptr_t) id);
	if (hPtr != NULL) {
	    childrenObj = Tcl_GetHashValue(hPtr);
	    Tcl_DeleteHashEntry(hPtr);
	    SPUT(dictObj, "children", childrenObj);
	    Tcl_DecrRefCount(childrenObj);
	} else {
	    SPUT(dictObj, "children", shared.emptyObj);
	}
	if (sqlite3_column_type(stmt, 1) == SQLITE_NULL) {
	    if (rootObj != NULL) {
		Tcl_DecrRefCount(rootObj);
	    }
	    rootObj = dictObj;
	    Tcl_IncrRefCount(rootObj);
	    continue;
	}
	hPtr = Tcl_CreateHashEntry(&pending,
		(char *) (intptr_t) sqlite3_column_int64(stmt, 1), &isNew);
	if (isNew) {
	    childrenObj = Tcl_NewListObj(0, NULL);
	    Tcl_IncrRefCount(childrenObj);
	    Tcl_SetHashValue(hPtr, childrenObj);
	} else {
	    childrenObj = Tcl_GetHashValue(hPtr);
	}
	Tcl_ListObjAppendElement(NULL, childrenObj, dictObj);
    }
    sqlite3_finalize(stmt);
    FreeObjTable(&pending);
    FreeObjTable(&lineLists);
    FreeObjTable(&memFigs);
    FreeObjTable(&nodeTimes);
    SharedFree(&shared);
    if (rc != SQLITE_DONE) {
	if (rootObj != NULL) {
	    Tcl_DecrRefCount(rootObj);
	}
	return rc;
    }
    if (rootObj == NULL) {
	rootObj = Tcl_NewDictObj();
	PUT(rootObj, "name", Tcl_NewObj());
	PUT(rootObj, "kind", Tcl_NewStringObj("root", -1));
	PUT(rootObj, "self", Tcl_NewIntObj(0));
	PUT(rootObj, "total", Tcl_NewIntObj(0));
	PUT(rootObj, "children", Tcl_NewObj());
	Tcl_IncrRefCount(rootObj);
    }
    *treeObjPtr = rootObj;
    rootObj->refCount--;	/* Handed over without being freed. */
    return SQLITE_OK;
}

/*
 * Rows of a query (with ?1 bound to the run) as a list of dicts with the
 * given keys, one per column.
 */

static int
LoadRows(
    sqlite3 *db,
    const char *sql,
    Tcl_WideInt runId,
    const char *const *keys,
    Tcl_Obj **listObjPtr)
{
    sqlite3_stmt *stmt;
    Tcl_Obj *listObj;
    Shared shared;
    int rc, k;

    rc = sqlite3_prepare_v2(db, sql, -1, &stmt, NULL);
    if (rc != SQLITE_OK) {
	return rc;
    }
    sqlite3_bind_int64(stmt, 1, runId);
    listObj = Tcl_NewListObj(0, NULL);
    SharedInit(&shared);
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
	Tcl_Obj *dictObj = Tcl_NewDictObj();

	for (k = 0; keys[k] != NULL; k++) {
	    SPUT(dictObj, keys[k], SCOL(k));
	}
	Tcl_ListObjAppendElement(NULL, listObj, dictObj);
    }
    sqlite3_finalize(stmt);
    SharedFree(&shared);
    if (rc != SQLITE_DONE) {
	Tcl_DecrRefCount(listObj);
	return rc;
    }
    *listObjPtr = listObj;
    return SQLITE_OK;
}

static int
NoRun(
    Tcl_Interp *interp,
    Tcl_Obj *pathObj,
    Tcl_WideInt runId)
{
    char buf[32];

    snprintf(buf, sizeof(buf), "%lld", (long long) runId);
    if (runId == 0) {
	Tcl_SetObjResult(interp, Tcl_ObjPrintf("no runs in \"%s\"",
		Tcl_GetString(pathObj)));
    } else {
	Tcl_SetObjResult(interp, Tcl_ObjPrintf("no run %s in \"%s\"", buf,
		Tcl_GetString(pathObj)));
    }
    Tcl_SetErrorCode(interp, "TCLCPROF", "DB", "NORUN",
	    Tcl_GetString(pathObj), buf, NULL);
    return TCL_ERROR;
}

/*
 * The handlers of a run, if the file has the table and the run has rows:
 * the profile's "handlers", as CprofEventsObj makes it.
 */

static int
LoadHandlers(
    sqlite3 *db,
    Tcl_WideInt runId,
    Tcl_Obj **listObjPtr)
{
    static const char *const keys[] = {
	"origin", "kind", "count", "timed", "total_ns", "max_ns",
	"latency_count", "latency_ns", "latency_max_ns"
    };
    sqlite3_stmt *stmt;
    Tcl_Obj *listObj = NULL;
    int rc, k;

    *listObjPtr = NULL;
    rc = sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE"
	    " type = 'table' AND name = 'handlers'", -1, &stmt, NULL);
    if (rc != SQLITE_OK) {
	return rc;
    }
    rc = sqlite3_step(stmt);
    sqlite3_finalize(stmt);
    if (rc == SQLITE_DONE) {
	return SQLITE_OK;
    }
    if (rc != SQLITE_ROW) {
	return rc;
    }
    rc = sqlite3_prepare_v2(db, "SELECT origin, kind, count, timed,"
	    " total_ns, max_ns, latency_count, latency_ns, latency_max_ns"
	    " FROM handlers WHERE run = ?1 ORDER BY seq", -1, &stmt, NULL);
    if (rc != SQLITE_OK) {
	return rc;
    }
    sqlite3_bind_int64(stmt, 1, runId);
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
	Tcl_Obj *d = Tcl_NewDictObj();

	for (k = 0; k < 9; k++) {
	    if (sqlite3_column_type(stmt, k) != SQLITE_NULL) {
		PUT(d, keys[k], ColumnObj(stmt, k));
	    }
	}
	if (listObj == NULL) {
	    listObj = Tcl_NewListObj(0, NULL);
	}
	Tcl_ListObjAppendElement(NULL, listObj, d);
    }
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) {
	if (listObj != NULL) {
	    Tcl_DecrRefCount(listObj);
	}
	return rc;
    }
    *listObjPtr = listObj;
    return SQLITE_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * LoadThreadEvents --
 *
 *	The events of a run's other threads (thread_events): a list of
 *	dicts thread, name (from the meta's threads) and events, one per
 *	thread after the starting one, as the run had it; NULL for a run of
 *	one thread (and no such events) or a file made before thread_events
 *	was kept.
 *
 * Results:
 *	An SQLite result code.
 *
 *----------------------------------------------------------------------
 */

static int
LoadThreadEvents(
    sqlite3 *db,
    Tcl_WideInt runId,
    Tcl_Obj *metaObj,
    Tcl_Obj **listPtr)
{
    Tcl_Obj *threadsObj = CprofDbMetaGet(metaObj, "threads", NULL);
    Tcl_Obj **threads, **evLists = NULL, *entryObj, *valueObj;
    sqlite3_stmt *stmt;
    int numLists, i, k, rc;
    Tcl_Size numThreads = 0;

    *listPtr = NULL;
    if (threadsObj == NULL || Tcl_ListObjGetElements(NULL, threadsObj,
	    &numThreads, &threads) != TCL_OK) {
	numThreads = 0;
    }
    if (sqlite3_prepare_v2(db, "SELECT t.thread, t.ns, t.type, f.name"
	    " FROM thread_events t JOIN frames f ON f.id = t.frame"
	    " WHERE t.run = ?1 AND t.thread > 0 ORDER BY t.thread, t.seq",
	    -1, &stmt, NULL) != SQLITE_OK) {
	return SQLITE_OK;
    }
    sqlite3_bind_int64(stmt, 1, runId);
    numLists = (numThreads > 1) ? numThreads : 0;
    if (numLists > 0) {
	evLists = ckalloc(numLists * sizeof(Tcl_Obj *));
	for (i = 0; i < numLists; i++) {
	    evLists[i] = Tcl_NewListObj(0, NULL);
	    Tcl_IncrRefCount(evLists[i]);
	}
    }
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
	int place = sqlite3_column_int(stmt, 0);

	if (place >= numLists) {
	    /*
	     * A thread that is not among the meta's threads.
	     */

	    evLists = (evLists == NULL)
		    ? ckalloc((place + 1) * sizeof(Tcl_Obj *))
		    : ckrealloc(evLists, (place + 1) * sizeof(Tcl_Obj *));
	    for (i = numLists; i <= place; i++) {
		evLists[i] = NULL;
	    }
	    numLists = place + 1;
	}
	if (evLists[place] == NULL) {
	    evLists[place] = Tcl_NewListObj(0, NULL);
	    Tcl_IncrRefCount(evLists[place]);
	}
	for (k = 1; k < 4; k++) {
	    Tcl_ListObjAppendElement(NULL, evLists[place],
		    ColumnObj(stmt, k));
	}
    }
    sqlite3_finalize(stmt);
    if (rc == SQLITE_DONE) {
	rc = SQLITE_OK;
	if (numLists > 0) {
	    *listPtr = Tcl_NewListObj(0, NULL);
	}
	for (i = 1; i < numLists; i++) {
	    if (evLists[i] == NULL) {
		continue;
	    }
	    entryObj = Tcl_NewDictObj();
	    valueObj = (i < numThreads)
		    ? CprofDbMetaGet(threads[i], "thread", NULL) : NULL;
	    PUT(entryObj, "thread", valueObj ? valueObj : Tcl_NewObj());
	    valueObj = (i < numThreads)
		    ? CprofDbMetaGet(threads[i], "name", NULL) : NULL;
	    PUT(entryObj, "name", valueObj ? valueObj : Tcl_NewObj());
	    PUT(entryObj, "events", evLists[i]);
	    Tcl_ListObjAppendElement(NULL, *listPtr, entryObj);
	}
    }
    for (i = 0; i < numLists; i++) {
	if (evLists[i] != NULL) {
	    Tcl_DecrRefCount(evLists[i]);
	}
    }
    if (evLists != NULL) {
	ckfree(evLists);
    }
    return rc;
}

Tcl_Obj *
CprofStoreLoad(
    Tcl_Interp *interp,
    Tcl_Obj *pathObj,
    Tcl_WideInt runId)
{
    static const char *const lineKeys[] = {
	"file", "line", "name", "tclkind", "caller", "calls", "total_ns",
	"self_ns", "min_ns", "max_ns", NULL
    };
    static const char *const cmdKeys[] = {"name", "tclkind", "calls", NULL};
    static const char *const covLineKeys[] = {"file", "line", "calls", NULL};
    sqlite3 *db;
    sqlite3_stmt *stmt;
    Tcl_Obj *resultObj = NULL, *metaObj = NULL, *treeObj, *listObj;
    Tcl_Obj *timelineObj;
    char *mode = NULL;
    int rc, hasLines = 0, hasEvents = 0, hasInterp = 0;

    if (CprofDbOpen(interp, pathObj, 0, 0, &db, NULL, 0) != TCL_OK) {
	return NULL;
    }
    rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM"
	    " pragma_table_info('frames') WHERE name = 'interp'", -1, &stmt,
	    NULL);
    if (rc != SQLITE_OK) {
	goto dbError;
    }
    rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) {
	hasInterp = sqlite3_column_int(stmt, 0) > 0;
	rc = SQLITE_OK;
    }
    sqlite3_finalize(stmt);
    if (rc != SQLITE_OK) {
	goto dbError;
    }
    rc = sqlite3_prepare_v2(db, runId > 0 ? "SELECT id, mode, meta,"
	    " has_lines, has_events FROM runs WHERE id = ?1"
	    : "SELECT id, mode, meta, has_lines, has_events FROM runs"
	    " ORDER BY id DESC LIMIT 1", -1, &stmt, NULL);
    if (rc != SQLITE_OK) {
	goto dbError;
    }
    if (runId > 0) {
	sqlite3_bind_int64(stmt, 1, runId);
    }
    rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) {
	runId = sqlite3_column_int64(stmt, 0);
	mode = sqlite3_mprintf("%s", sqlite3_column_text(stmt, 1));
	metaObj = ColumnObj(stmt, 2);
	Tcl_IncrRefCount(metaObj);
	hasLines = sqlite3_column_int(stmt, 3);
	hasEvents = sqlite3_column_int(stmt, 4);
	rc = SQLITE_OK;
    }
    sqlite3_finalize(stmt);
    if (rc == SQLITE_DONE) {
	NoRun(interp, pathObj, runId);
	goto done;
    }
    if (rc != SQLITE_OK) {
	goto dbError;
    }

    resultObj = Tcl_NewDictObj();
    Tcl_IncrRefCount(resultObj);
    PUT(resultObj, "meta", metaObj);
    timelineObj = NULL;
    rc = LoadTree(db, runId, 0, hasInterp, strcmp(mode, "memory") == 0,
	    &treeObj, &timelineObj);
    if (rc != SQLITE_OK) {
	goto dbError;
    }
    PUT(resultObj, "tree", treeObj);
    if (timelineObj != NULL) {
	PUT(resultObj, "timeline", timelineObj);
    }
    if (strcmp(mode, "both") == 0) {
	rc = LoadTree(db, runId, 1, hasInterp, 0, &treeObj, NULL);
	if (rc != SQLITE_OK) {
	    goto dbError;
	}
	PUT(resultObj, "exact", treeObj);
    }
    if (strcmp(mode, "sample") == 0) {
	/*
	 * -mode {sample memory}: the memory tree is tree 2 (none in other
	 * runs), under the key "memory".
	 */

	int hasMemory = 0;

	rc = sqlite3_prepare_v2(db, "SELECT 1 FROM nodes WHERE run = ?1"
		" AND tree = 2 LIMIT 1", -1, &stmt, NULL);
	if (rc != SQLITE_OK) {
	    goto dbError;
	}
	sqlite3_bind_int64(stmt, 1, runId);
	rc = sqlite3_step(stmt);
	hasMemory = (rc == SQLITE_ROW);
	sqlite3_finalize(stmt);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
	    goto dbError;
	}
	rc = SQLITE_OK;
	if (hasMemory) {
	    timelineObj = NULL;
	    rc = LoadTree(db, runId, 2, hasInterp, 1, &treeObj,
		    &timelineObj);
	    if (rc != SQLITE_OK) {
		goto dbError;
	    }
	    PUT(resultObj, "memory", treeObj);
	    if (timelineObj != NULL) {
		PUT(resultObj, "memory_timeline", timelineObj);
	    }
	}
    }
    if (strcmp(mode, "sample") != 0 && strcmp(mode, "memory") != 0) {
	Tcl_Obj *covObj;

	if (hasLines && strcmp(mode, "coverage") != 0) {
	    rc = LoadRows(db, "SELECT l.file, l.line, f.name, f.tclkind,"
		    " l.caller, l.calls, l.total_ns, l.self_ns, l.min_ns,"
		    " l.max_ns"
		    " FROM lines l JOIN frames f ON f.id = l.frame"
		    " WHERE l.run = ?1 AND l.shown ORDER BY l.id", runId,
		    lineKeys, &listObj);
	    if (rc != SQLITE_OK) {
		goto dbError;
	    }
	    PUT(resultObj, "lines", listObj);
	}
	if (hasEvents) {
	    rc = sqlite3_prepare_v2(db, "SELECT e.ns, e.type, f.name FROM"
		    " events e JOIN frames f ON f.id = e.frame WHERE"
		    " e.run = ?1 ORDER BY e.seq", -1, &stmt, NULL);
	    if (rc != SQLITE_OK) {
		goto dbError;
	    }
	    sqlite3_bind_int64(stmt, 1, runId);
	    listObj = Tcl_NewListObj(0, NULL);
	    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		int k;

		for (k = 0; k < 3; k++) {
		    Tcl_ListObjAppendElement(NULL, listObj,
			    ColumnObj(stmt, k));
		}
	    }
	    sqlite3_finalize(stmt);
	    if (rc != SQLITE_DONE) {
		Tcl_DecrRefCount(listObj);
		goto dbError;
	    }
	    PUT(resultObj, "events", listObj);
	    rc = LoadThreadEvents(db, runId, metaObj, &listObj);
	    if (rc != SQLITE_OK) {
		goto dbError;
	    }
	    if (listObj != NULL) {
		PUT(resultObj, "thread_events", listObj);
	    }
	}
	covObj = Tcl_NewDictObj();
	PUT(resultObj, "coverage", covObj);
	rc = LoadRows(db, "SELECT f.name, f.tclkind, c.calls FROM"
		" coverage_commands c JOIN frames f ON f.id = c.frame"
		" WHERE c.run = ?1 AND c.calls > 0 ORDER BY c.seq", runId,
		cmdKeys, &listObj);
	if (rc != SQLITE_OK) {
	    goto dbError;
	}
	PUT(covObj, "commands", listObj);
	rc = sqlite3_prepare_v2(db, "SELECT name FROM coverage_procs"
		" WHERE run = ?1 ORDER BY seq", -1, &stmt, NULL);
	if (rc != SQLITE_OK) {
	    goto dbError;
	}
	sqlite3_bind_int64(stmt, 1, runId);
	listObj = Tcl_NewListObj(0, NULL);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
	    Tcl_ListObjAppendElement(NULL, listObj, ColumnObj(stmt, 0));
	}
	sqlite3_finalize(stmt);
	if (rc != SQLITE_DONE) {
	    Tcl_DecrRefCount(listObj);
	    goto dbError;
	}
	PUT(covObj, "procs", listObj);
	rc = LoadRows(db, "SELECT file, line, calls FROM coverage_lines"
		" WHERE run = ?1 AND calls > 0 ORDER BY seq", runId, covLineKeys,
		&listObj);
	if (rc != SQLITE_OK) {
	    goto dbError;
	}
	PUT(covObj, "lines", listObj);
    }
    rc = LoadHandlers(db, runId, &listObj);
    if (rc != SQLITE_OK) {
	goto dbError;
    }
    if (listObj != NULL) {
	PUT(resultObj, "handlers", listObj);
    }
    goto done;

  dbError:
    CprofDbError(interp, pathObj, db, rc, "read");
    if (resultObj != NULL) {
	Tcl_DecrRefCount(resultObj);
	resultObj = NULL;
    }

  done:
    if (metaObj != NULL) {
	Tcl_DecrRefCount(metaObj);
    }
    sqlite3_free(mode);
    sqlite3_close_v2(db);
    if (resultObj != NULL) {
	resultObj->refCount--;	/* Handed over without being freed. */
    }
    return resultObj;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofStoreCheckRuns, CprofStoreRead --
 *
 *	The value of -run of tclcprof::data: a run id, a list of run ids
 *	(each given once) or "all"; *singlePtr is set to the id when it is
 *	one, else to 0. Errors: TCLCPROF VALUE -run value.
 *
 *	tclcprof::data -db files ?-run runs?: one run of one file
 *	(CprofStoreLoad), or several merged (::tclcprof::mergelib::Read,
 *	in merge.tcl). 'dbObj' names one file when it is the name of an
 *	existing file (or not a list, or an empty one: no such file), else
 *	it is a list of files; runObj
 *	(checked) may be NULL: the latest run of each file.
 *
 * Results:
 *	The profile (a new value, or the merge), or NULL with an error.
 *
 *----------------------------------------------------------------------
 */

int
CprofStoreCheckRuns(
    Tcl_Interp *interp,
    Tcl_Obj *runObj,
    Tcl_WideInt *singlePtr)
{
    Tcl_HashTable seen;
    Tcl_Obj **ids;
    Tcl_WideInt id = 0;
    int i, isNew, dup = 0;
    Tcl_Size n;

    *singlePtr = 0;
    if (strcmp(Tcl_GetString(runObj), "all") == 0) {
	return TCL_OK;
    }
    if (Tcl_ListObjGetElements(NULL, runObj, &n, &ids) != TCL_OK || n == 0) {
	goto bad;
    }
    Tcl_InitHashTable(&seen, TCL_ONE_WORD_KEYS);
    for (i = 0; i < n && !dup; i++) {
	if (Tcl_GetWideIntFromObj(NULL, ids[i], &id) != TCL_OK || id < 1) {
	    Tcl_DeleteHashTable(&seen);
	    goto bad;
	}
	Tcl_CreateHashEntry(&seen, (char *) (intptr_t) id, &isNew);
	dup = !isNew;
    }
    Tcl_DeleteHashTable(&seen);
    if (dup) {
	Tcl_SetObjResult(interp, Tcl_ObjPrintf("bad value \"%s\" for -run: "
		"run %lld is given twice", Tcl_GetString(runObj),
		(long long) id));
	Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", "-run",
		Tcl_GetString(runObj), NULL);
	return TCL_ERROR;
    }
    if (n == 1) {
	*singlePtr = id;
    }
    return TCL_OK;

  bad:
    Tcl_SetObjResult(interp, Tcl_ObjPrintf("bad value \"%s\" for -run: "
	    "expected a run id (a positive integer), a list of run ids or "
	    "\"all\"", Tcl_GetString(runObj)));
    Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", "-run",
	    Tcl_GetString(runObj), NULL);
    return TCL_ERROR;
}

Tcl_Obj *
CprofStoreRead(
    Tcl_Interp *interp,
    Tcl_Obj *dbObj,
    Tcl_Obj *runObj)
{
    Tcl_StatBuf *statPtr = Tcl_AllocStatBuf();
    Tcl_Obj *fileObj = dbObj, **files, *cmd[3], *resultObj;
    Tcl_WideInt runId = 0;
    int exists, code;
    Tcl_Size n;

    if (runObj != NULL
	    && CprofStoreCheckRuns(interp, runObj, &runId) != TCL_OK) {
	ckfree(statPtr);
	return NULL;
    }
    exists = (Tcl_FSStat(dbObj, statPtr) == 0);
    ckfree(statPtr);
    if (!exists && Tcl_ListObjGetElements(NULL, dbObj, &n, &files)
	    == TCL_OK) {
	if (n == 1) {
	    fileObj = files[0];
	} else if (n > 1) {
	    fileObj = NULL;
	}
    }
    if (fileObj != NULL && (runObj == NULL || runId > 0)) {
	Tcl_IncrRefCount(fileObj);
	resultObj = CprofStoreLoad(interp, fileObj, runId);
	Tcl_DecrRefCount(fileObj);
	return resultObj;
    }
    cmd[0] = Tcl_NewStringObj("::tclcprof::mergelib::Read", -1);
    cmd[1] = (fileObj != NULL) ? Tcl_NewListObj(1, &fileObj) : dbObj;
    cmd[2] = (runObj != NULL) ? runObj : Tcl_NewObj();
    for (n = 0; n < 3; n++) {
	Tcl_IncrRefCount(cmd[n]);
    }
    code = Tcl_EvalObjv(interp, 3, cmd, TCL_EVAL_GLOBAL);
    for (n = 0; n < 3; n++) {
	Tcl_DecrRefCount(cmd[n]);
    }
    if (code != TCL_OK) {
	return NULL;
    }
    resultObj = Tcl_GetObjResult(interp);
    Tcl_IncrRefCount(resultObj);
    Tcl_ResetResult(interp);
    resultObj->refCount--;	/* Handed over without being freed. */
    return resultObj;
}

Tcl_Obj *
CprofStoreRuns(
    Tcl_Interp *interp,
    Tcl_Obj *pathObj)
{
    static const char *const keys[] = {
	"id", "label", "status", "stopped_by", "start_time", "end_time",
	"elapsed", "pid", "parent_run", "host", "argv0", "argv", "mode",
	"clock", "rate_requested", "rate_achieved", "samples", "weight",
	"drops", "splice_rate", "calls", "overhead_pct", "test_file",
	"test_name", NULL
    };
    sqlite3 *db;
    Tcl_Obj *listObj;
    int rc;

    if (CprofDbOpen(interp, pathObj, 0, 0, &db, NULL, 0) != TCL_OK) {
	return NULL;
    }
    rc = LoadRows(db, "SELECT id, label, status, stopped_by, start_time,"
	    " end_time, elapsed, pid, parent_run, host, argv0, argv, mode,"
	    " clock, rate_requested, rate_achieved, samples, weight, drops,"
	    " splice_rate, calls, overhead_pct, test_file, test_name"
	    " FROM runs WHERE ?1 = ?1 ORDER BY id", 0, keys, &listObj);
    if (rc != SQLITE_OK) {
	CprofDbError(interp, pathObj, db, rc, "read");
	listObj = NULL;
    }
    sqlite3_close_v2(db);
    return listObj;
}
