/*
 * storedata.c --
 *
 *	A profile value written to a file as a new run (tclcprof::save
 *	-data, tclcprof merge), or in place of a store's own run
 *	(CprofStoreReplaceRun: a run of several threads, whole at its end).
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
 *----------------------------------------------------------------------
 *
 * Writing a profile value --
 *
 *	CprofStoreSaveData (tclcprof::save file -data profile) writes a
 *	profile value, such as tclcprof::data returns (a merge of runs
 *	among them), to a file as a new run, in one transaction: its call
 *	trees, call sites, events and coverage as a run of its mode would
 *	have written them, and its meta. The value is checked first, as a
 *	report checks -data (::tclcprof::mergelib::CheckSave); what is
 *	written is read back as the same value (children in another order).
 *
 *----------------------------------------------------------------------
 */

enum {
    DK_NAME, DK_KIND, DK_TCLKIND, DK_MODULE, DK_SELF, DK_TOTAL, DK_CALLS,
    DK_TOTAL_NS, DK_SELF_NS, DK_MIN_NS, DK_MAX_NS, DK_SUSPENDED_NS,
    DK_CHILDREN, DK_FILE, DK_LINE, DK_CALLER, DK_SELF_LINES,
    DK_CALLER_LINES, DK_ORIGIN, DK_INTERP, DK_THREAD, DK_ALLOC_BYTES,
    DK_ALLOC_OBJECTS, DK_LIVE_BYTES, DK_LIVE_OBJECTS, DK_PEAK_BYTES,
    DK_PEAK_OBJECTS, DK_TIMES, DK_COUNT
};
static const char *const dataKeyNames[DK_COUNT] = {
    "name", "kind", "tclkind", "module", "self", "total", "calls",
    "total_ns", "self_ns", "min_ns", "max_ns", "suspended_ns", "children",
    "file", "line", "caller", "self_lines", "caller_lines", "origin", "interp", "thread",
    "alloc_bytes", "alloc_objects", "live_bytes", "live_objects",
    "peak_bytes", "peak_objects", "times"
};

typedef struct DataWriter {
    CprofStore *storePtr;
    Tcl_Obj *keys[DK_COUNT];	/* The keys of dataKeyNames. */
    Tcl_HashTable frames;	/* {kind name tclkind module interp} -> frame
				 * id. */
    int nextLine;		/* Id of the next node_lines row... */
    int nextMemLine;		/* ...and memory_node_lines row. */
    Tcl_Obj *nodeTimes;		/* The tree being written: {node times
				 * ...} of its nodes with times. */
} DataWriter;

static int		DataNodeLines(DataWriter *wPtr, int memory,
			    Tcl_Obj *listObj,
			    int64_t node, int64_t callee);
static int		DataHandlers(DataWriter *wPtr, Tcl_Obj *profileObj);
static int		DataThreadEvents(DataWriter *wPtr,
			    Tcl_Obj *profileObj);

/*
 * A key of a dict, or NULL.
 */

static Tcl_Obj *
DataGet(
    DataWriter *wPtr,
    Tcl_Obj *dictObj,
    int key)
{
    Tcl_Obj *valueObj = NULL;

    if (dictObj == NULL || Tcl_DictObjGet(NULL, dictObj, wPtr->keys[key],
	    &valueObj) != TCL_OK) {
	return NULL;
    }
    return valueObj;
}

/*
 * The frame id of a node or record, by kind, name, tclkind, module and
 * interp, added to the frames table if new. A thread's root keeps its
 * Tcl thread id in the module column; a Tcl frame without "interp" is of
 * the top interpreter.
 */

static int
DataFrameId(
    DataWriter *wPtr,
    const char *kind,
    Tcl_Obj *dictObj,
    int64_t *idPtr)
{
    Tcl_Obj *parts[5], *keyObj;
    const char *cols[5];
    Tcl_HashEntry *hPtr;
    int i, isNew, rc, isTcl = (strcmp(kind, "tcl") == 0);

    parts[0] = Tcl_NewStringObj(kind, -1);
    parts[1] = DataGet(wPtr, dictObj, DK_NAME);
    parts[2] = DataGet(wPtr, dictObj, DK_TCLKIND);
    parts[3] = DataGet(wPtr, dictObj,
	    strcmp(kind, "thread") == 0 ? DK_THREAD : DK_MODULE);
    parts[4] = isTcl ? DataGet(wPtr, dictObj, DK_INTERP) : NULL;
    if (parts[3] == NULL && isTcl) {
	/*
	 * An event handler's frame keeps its origin where a run writes it
	 * (frames.module).
	 */

	parts[3] = DataGet(wPtr, dictObj, DK_ORIGIN);
    }
    for (i = 1; i < 5; i++) {
	if (parts[i] == NULL) {
	    parts[i] = Tcl_NewObj();
	}
    }
    keyObj = Tcl_NewListObj(5, parts);
    Tcl_IncrRefCount(keyObj);
    hPtr = Tcl_CreateHashEntry(&wPtr->frames, Tcl_GetString(keyObj), &isNew);
    if (!isNew) {
	*idPtr = (int64_t) (intptr_t) Tcl_GetHashValue(hPtr);
	Tcl_DecrRefCount(keyObj);
	return SQLITE_OK;
    }
    for (i = 0; i < 5; i++) {
	cols[i] = Tcl_GetString(parts[i]);
    }
    rc = CprofDbFrameRow(wPtr->storePtr, cols,
	    strcmp(kind, "labels") == 0 ? cols[1] : NULL, idPtr);
    Tcl_DecrRefCount(keyObj);
    if (rc != SQLITE_OK) {
	Tcl_DeleteHashEntry(hPtr);
	return rc;
    }
    Tcl_SetHashValue(hPtr, (ClientData) (intptr_t) *idPtr);
    return SQLITE_OK;
}

/*
 * The frame id of an event's name (a Tcl frame of that name).
 */

static int
EventFrameId(
    DataWriter *wPtr,
    Tcl_Obj *nameObj,
    int64_t *idPtr)
{
    Tcl_Obj *nameDict = Tcl_NewDictObj();
    int rc;

    Tcl_IncrRefCount(nameDict);
    Tcl_DictObjPut(NULL, nameDict, wPtr->keys[DK_NAME], nameObj);
    rc = DataFrameId(wPtr, "tcl", nameDict, idPtr);
    Tcl_DecrRefCount(nameDict);
    return rc;
}

/*
 * One call tree, depth first without recursion: ids in preorder, so that
 * children come after their parents, the last child first (LoadTree
 * reads the children of a node in the order of their ids, the highest
 * first: the tree reads back in its order); a node is recursive when a
 * node above it has its frame (counted per frame along the path).
 */

typedef struct DataLevel {
    Tcl_Obj *childrenObj;	/* The node's children (a reference). */
    int next;			/* The next child to write, counting down. */
    int64_t id, frame;
} DataLevel;

static int
DataTree(
    DataWriter *wPtr,
    int tree,
    int memory,			/* A memory tree: each node's figures go
				 * to memory_nodes. */
    Tcl_Obj *rootObj)
{
    CprofStore *storePtr = wPtr->storePtr;
    sqlite3_stmt *stmt = storePtr->stmts[ST_NODE];
    DataLevel *levels = NULL;
    Tcl_HashTable onPath;	/* Frame id -> nodes of the path with it. */
    Tcl_HashEntry *hPtr;
    Tcl_Obj *nodeObj = rootObj, *childrenObj;
    int depth = 0, cap = 0, rc = SQLITE_OK, isNew;
    Tcl_Size k;
    int64_t nextId = 0, parent = -1, frame = 0;

    Tcl_InitHashTable(&onPath, TCL_ONE_WORD_KEYS);
    while (nodeObj != NULL) {
	int64_t id = nextId++;
	int recursive = 0;

	if (parent >= 0) {
	    Tcl_Obj *kindObj = DataGet(wPtr, nodeObj, DK_KIND);

	    rc = DataFrameId(wPtr, kindObj ? Tcl_GetString(kindObj) : "",
		    nodeObj, &frame);
	    if (rc != SQLITE_OK) {
		break;
	    }
	    hPtr = Tcl_CreateHashEntry(&onPath, (char *) (intptr_t) frame,
		    &isNew);
	    if (isNew) {
		Tcl_SetHashValue(hPtr, (ClientData) (intptr_t) 0);
	    }
	    recursive = (intptr_t) Tcl_GetHashValue(hPtr) > 0;
	    Tcl_SetHashValue(hPtr, (ClientData)
		    ((intptr_t) Tcl_GetHashValue(hPtr) + 1));
	}
	sqlite3_bind_int64(stmt, 1, storePtr->runId);
	sqlite3_bind_int(stmt, 2, tree);
	sqlite3_bind_int64(stmt, 3, id);
	if (parent >= 0) {
	    sqlite3_bind_int64(stmt, 4, parent);
	    sqlite3_bind_int64(stmt, 5, frame);
	}
	CprofDbBindNumber(stmt, 6, DataGet(wPtr, nodeObj, DK_SELF));
	CprofDbBindNumber(stmt, 7, DataGet(wPtr, nodeObj, DK_TOTAL));
	if (DataGet(wPtr, nodeObj, DK_CALLS) != NULL) {
	    for (k = DK_CALLS; k <= DK_MAX_NS; k++) {
		CprofDbBindNumber(stmt, 8 + k - DK_CALLS, DataGet(wPtr, nodeObj, k));
	    }
	    sqlite3_bind_int64(stmt, 13, 0);
	    if (DataGet(wPtr, nodeObj, DK_SUSPENDED_NS) != NULL) {
		CprofDbBindNumber(stmt, 13, DataGet(wPtr, nodeObj, DK_SUSPENDED_NS));
	    }
	}
	sqlite3_bind_int(stmt, 14, recursive);
	sqlite3_bind_int(stmt, 15, 1);
	rc = CprofDbExec(stmt);
	if (DataGet(wPtr, nodeObj, DK_TIMES) != NULL
		&& wPtr->nodeTimes != NULL) {
	    Tcl_ListObjAppendElement(NULL, wPtr->nodeTimes,
		    Tcl_NewWideIntObj((Tcl_WideInt) id));
	    Tcl_ListObjAppendElement(NULL, wPtr->nodeTimes,
		    DataGet(wPtr, nodeObj, DK_TIMES));
	}
	if (rc == SQLITE_OK && memory) {
	    sqlite3_stmt *memStmt = storePtr->stmts[ST_MEM_NODE];

	    sqlite3_bind_int64(memStmt, 1, storePtr->runId);
	    sqlite3_bind_int64(memStmt, 2, id);
	    for (k = 0; k < 6; k++) {
		Tcl_Obj *figObj = DataGet(wPtr, nodeObj, DK_ALLOC_BYTES + k);

		if (figObj != NULL) {
		    CprofDbBindNumber(memStmt, 3 + k, figObj);
		} else {
		    sqlite3_bind_int64(memStmt, 3 + k, 0);
		}
	    }
	    rc = CprofDbExec(memStmt);
	}
	if (rc == SQLITE_OK && (tree == 0 || tree == 2)) {
	    rc = DataNodeLines(wPtr, tree == 2,
		    DataGet(wPtr, nodeObj, DK_SELF_LINES), id, -1);
	    if (rc == SQLITE_OK && parent >= 0) {
		rc = DataNodeLines(wPtr, tree == 2, DataGet(wPtr, nodeObj,
			DK_CALLER_LINES), parent, id);
	    }
	}
	if (rc != SQLITE_OK) {
	    break;
	}

	/*
	 * Down to the node's children; when they are all written, up to
	 * the next child of an ancestor.
	 */

	if (depth == cap) {
	    cap = cap ? 2 * cap : 64;
	    levels = (DataLevel *) ckrealloc(levels, cap * sizeof(DataLevel));
	}
	childrenObj = DataGet(wPtr, nodeObj, DK_CHILDREN);
	if (childrenObj == NULL) {
	    childrenObj = Tcl_NewObj();
	}
	Tcl_IncrRefCount(childrenObj);
	if (Tcl_ListObjLength(NULL, childrenObj, &k) != TCL_OK) {
	    k = 0;
	}
	levels[depth].childrenObj = childrenObj;
	levels[depth].next = k - 1;
	levels[depth].id = id;
	levels[depth].frame = (parent >= 0) ? frame : 0;
	depth++;
	nodeObj = NULL;
	while (depth > 0) {
	    DataLevel *lPtr = &levels[depth - 1];

	    if (lPtr->next >= 0 && Tcl_ListObjIndex(NULL, lPtr->childrenObj,
		    lPtr->next, &nodeObj) == TCL_OK && nodeObj != NULL) {
		lPtr->next--;
		parent = lPtr->id;
		break;
	    }
	    nodeObj = NULL;
	    Tcl_DecrRefCount(lPtr->childrenObj);
	    if (lPtr->frame != 0) {
		hPtr = Tcl_FindHashEntry(&onPath,
			(char *) (intptr_t) lPtr->frame);
		Tcl_SetHashValue(hPtr, (ClientData)
			((intptr_t) Tcl_GetHashValue(hPtr) - 1));
	    }
	    depth--;
	}
    }
    while (depth > 0) {
	Tcl_DecrRefCount(levels[--depth].childrenObj);
    }
    if (levels != NULL) {
	ckfree(levels);
    }
    Tcl_DeleteHashTable(&onPath);
    return rc;
}

/*
 * The C source lines of a node of the sampled tree (self_lines: node,
 * no callee) or of the line its parent called it from (caller_lines:
 * the parent's node, this one the callee), as {file line weight ...};
 * of the memory tree of a run of mode sample (tree 2) if memory.
 */

static int
DataNodeLines(
    DataWriter *wPtr,
    int memory,
    Tcl_Obj *listObj,
    int64_t node,
    int64_t callee)
{
    CprofStore *storePtr = wPtr->storePtr;
    sqlite3_stmt *stmt = storePtr->stmts[memory ? ST_MEM_NODE_LINE
	    : ST_NODE_LINE];
    Tcl_Obj **v;
    int i, rc;
    Tcl_Size n;

    if (listObj == NULL
	    || Tcl_ListObjGetElements(NULL, listObj, &n, &v) != TCL_OK) {
	return SQLITE_OK;
    }
    for (i = 0; i + 2 < n; i += 3) {
	sqlite3_bind_int64(stmt, 1, storePtr->runId);
	sqlite3_bind_int(stmt, 2, memory ? wPtr->nextMemLine++
		: wPtr->nextLine++);
	sqlite3_bind_int64(stmt, 3, node);
	if (callee >= 0) {
	    sqlite3_bind_int64(stmt, 4, callee);
	}
	CprofDbBindObj(stmt, 5, v[i]);
	CprofDbBindNumber(stmt, 6, v[i+1]);
	CprofDbBindNumber(stmt, 7, v[i+2]);
	rc = CprofDbExec(stmt);
	if (rc != SQLITE_OK) {
	    return rc;
	}
    }
    return SQLITE_OK;
}

/*
 * The event handlers of a profile (its "handlers": dicts of origin,
 * kind, count, timed, total_ns, max_ns and for timers the latency
 * figures), a row each.
 */

static int
DataHandlers(
    DataWriter *wPtr,
    Tcl_Obj *profileObj)
{
    static const char *const keys[] = {
	"origin", "kind", "count", "timed", "total_ns", "max_ns",
	"latency_count", "latency_ns", "latency_max_ns"
    };
    CprofStore *storePtr = wPtr->storePtr;
    Tcl_Obj *listObj = CprofDbMetaGet(profileObj, "handlers", NULL), **v;
    sqlite3_stmt *stmt;
    int i, k, rc;
    Tcl_Size n;

    if (listObj == NULL
	    || Tcl_ListObjGetElements(NULL, listObj, &n, &v) != TCL_OK
	    || n == 0) {
	return SQLITE_OK;
    }
    rc = sqlite3_exec(storePtr->db, HANDLERS_SQL, NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
	return rc;
    }
    rc = sqlite3_prepare_v2(storePtr->db, HANDLERS_INSERT_SQL, -1, &stmt,
	    NULL);
    for (i = 0; rc == SQLITE_OK && i < n; i++) {
	sqlite3_bind_int64(stmt, 1, storePtr->runId);
	sqlite3_bind_int(stmt, 2, i);
	for (k = 0; k < 9; k++) {
	    Tcl_Obj *valueObj = CprofDbMetaGet(v[i], keys[k], NULL);

	    if (k < 2) {
		CprofDbBindObj(stmt, 3 + k, valueObj ? valueObj
			: Tcl_NewStringObj("unknown", -1));
	    } else if (valueObj != NULL) {
		CprofDbBindNumber(stmt, 3 + k, valueObj);
	    } else if (k < 6) {
		sqlite3_bind_int(stmt, 3 + k, 0);
	    }
	}
	rc = CprofDbExec(stmt);
    }
    sqlite3_finalize(stmt);
    return rc;
}

/*
 * The elements of a list in a dict (an empty list when it is missing).
 */

static void
DataList(
    Tcl_Obj *dictObj,
    const char *key,
    Tcl_Size *countPtr,
    Tcl_Obj ***elemsPtr)
{
    Tcl_Obj *listObj = dictObj ? CprofDbMetaGet(dictObj, key, NULL) : NULL;

    if (listObj == NULL
	    || Tcl_ListObjGetElements(NULL, listObj, countPtr, elemsPtr)
	    != TCL_OK) {
	*countPtr = 0;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * DataThreadEvents --
 *
 *	The events of the other threads of a profile (thread_events, a list
 *	of dicts with thread, name and events) into thread_events, each
 *	thread by its place in the meta's threads (found by its Tcl thread
 *	id, else by its name), which is where a reader finds its name and id
 *	again. An entry that matches no thread there (or one matched
 *	already) is put after them, in its order.
 *
 * Results:
 *	An SQLite result code.
 *
 *----------------------------------------------------------------------
 */

static int
DataThreadEvents(
    DataWriter *wPtr,
    Tcl_Obj *profileObj)
{
    static const int matchKeys[2] = {DK_THREAD, DK_NAME};
    CprofStore *storePtr = wPtr->storePtr;
    Tcl_Obj **entries, **threads, **rows, *metaObj;
    sqlite3_stmt *stmt;
    char *used;
    int64_t frame;
    int i, j, m, place, rc;
    Tcl_Size numEntries, numThreads, n;

    DataList(profileObj, "thread_events", &numEntries, &entries);
    if (numEntries == 0) {
	return SQLITE_OK;
    }
    metaObj = CprofDbMetaGet(profileObj, "meta", NULL);
    DataList(metaObj, "threads", &numThreads, &threads);
    rc = sqlite3_prepare_v2(storePtr->db, "INSERT INTO thread_events"
	    " (run, thread, seq, ns, type, frame) VALUES (?1, ?2, ?3, ?4,"
	    " ?5, ?6)", -1, &stmt, NULL);
    if (rc != SQLITE_OK) {
	return rc;
    }
    used = ckalloc(numThreads + 1);
    memset(used, 0, numThreads + 1);
    for (j = 0; rc == SQLITE_OK && j < numEntries; j++) {
	place = 0;
	for (m = 0; place == 0 && m < 2; m++) {
	    Tcl_Obj *idObj = DataGet(wPtr, entries[j], matchKeys[m]);

	    for (i = 1; idObj != NULL && i < numThreads; i++) {
		Tcl_Obj *otherObj = DataGet(wPtr, threads[i], matchKeys[m]);

		if (!used[i] && otherObj != NULL && strcmp(
			Tcl_GetString(otherObj), Tcl_GetString(idObj)) == 0) {
		    place = i;
		    used[i] = 1;
		    break;
		}
	    }
	}
	if (place == 0) {
	    place = (numThreads > 1 ? numThreads : 1) + j;
	}
	DataList(entries[j], "events", &n, &rows);
	for (i = 0; rc == SQLITE_OK && i + 2 < n; i += 3) {
	    rc = EventFrameId(wPtr, rows[i + 2], &frame);
	    if (rc != SQLITE_OK) {
		break;
	    }
	    sqlite3_bind_int64(stmt, 1, storePtr->runId);
	    sqlite3_bind_int(stmt, 2, place);
	    sqlite3_bind_int(stmt, 3, i / 3);
	    CprofDbBindNumber(stmt, 4, rows[i]);
	    CprofDbBindObj(stmt, 5, rows[i + 1]);
	    sqlite3_bind_int64(stmt, 6, frame);
	    rc = CprofDbExec(stmt);
	}
    }
    ckfree(used);
    sqlite3_finalize(stmt);
    return rc;
}

/*
 * A sampled or memory tree (0 or 2) and its timeline, if it has one (the
 * nodes' times collected as the tree is written).
 */

static int
DataTimedTree(
    DataWriter *wPtr,
    int tree,
    int memory,
    Tcl_Obj *rootObj,
    Tcl_Obj *timelineObj)
{
    int rc;

    if (timelineObj != NULL) {
	wPtr->nodeTimes = Tcl_NewListObj(0, NULL);
	Tcl_IncrRefCount(wPtr->nodeTimes);
    }
    rc = DataTree(wPtr, tree, memory, rootObj);
    if (timelineObj != NULL) {
	if (rc == SQLITE_OK) {
	    rc = CprofDbWriteTimeline(wPtr->storePtr, tree, timelineObj,
		    wPtr->nodeTimes);
	}
	Tcl_DecrRefCount(wPtr->nodeTimes);
	wPtr->nodeTimes = NULL;
    }
    return rc;
}

static int
DataBody(
    DataWriter *wPtr,
    Tcl_Obj *profileObj,
    const char *mode)
{
    CprofStore *storePtr = wPtr->storePtr;
    Tcl_Obj **rows, *covObj, *rowObj;
    sqlite3_stmt *stmt;
    int64_t frame;
    int i, rc;
    Tcl_Size n;

    rc = DataTimedTree(wPtr, 0, strcmp(mode, "memory") == 0,
	    CprofDbMetaGet(profileObj, "tree", NULL),
	    CprofDbMetaGet(profileObj, "timeline", NULL));
    if (rc == SQLITE_OK && strcmp(mode, "both") == 0) {
	rc = DataTree(wPtr, 1, 0, CprofDbMetaGet(profileObj, "exact", NULL));
    }
    if (rc == SQLITE_OK && strcmp(mode, "sample") == 0
	    && CprofDbMetaGet(profileObj, "memory", NULL) != NULL) {
	/*
	 * -mode {sample memory}: the memory tree as tree 2.
	 */

	rc = DataTimedTree(wPtr, 2, 1, CprofDbMetaGet(profileObj, "memory",
		NULL), CprofDbMetaGet(profileObj, "memory_timeline", NULL));
    }
    if (rc == SQLITE_OK) {
	rc = DataHandlers(wPtr, profileObj);
    }
    if (rc != SQLITE_OK || strcmp(mode, "sample") == 0
	    || strcmp(mode, "memory") == 0) {
	return rc;
    }

    /*
     * Call sites (not in coverage mode, whose sites are coverage lines).
     * The elements of each list stay valid: only its elements are read.
     */

    stmt = storePtr->stmts[ST_LINE];
    n = 0;
    if (strcmp(mode, "coverage") != 0) {
	DataList(profileObj, "lines", &n, &rows);
    }
    for (i = 0; rc == SQLITE_OK && i < n; i++) {
	Tcl_Obj *callerObj;

	rowObj = rows[i];
	rc = DataFrameId(wPtr, "tcl", rowObj, &frame);
	if (rc != SQLITE_OK) {
	    break;
	}
	sqlite3_bind_int64(stmt, 1, storePtr->runId);
	sqlite3_bind_int(stmt, 2, i);
	CprofDbBindObj(stmt, 3, DataGet(wPtr, rowObj, DK_FILE));
	CprofDbBindNumber(stmt, 4, DataGet(wPtr, rowObj, DK_LINE));
	sqlite3_bind_int64(stmt, 5, frame);
	CprofDbBindNumber(stmt, 6, DataGet(wPtr, rowObj, DK_CALLS));
	CprofDbBindNumber(stmt, 7, DataGet(wPtr, rowObj, DK_TOTAL_NS));
	CprofDbBindNumber(stmt, 8, DataGet(wPtr, rowObj, DK_SELF_NS));
	CprofDbBindNumber(stmt, 9, DataGet(wPtr, rowObj, DK_MIN_NS));
	CprofDbBindNumber(stmt, 10, DataGet(wPtr, rowObj, DK_MAX_NS));
	sqlite3_bind_int(stmt, 11, 1);
	callerObj = DataGet(wPtr, rowObj, DK_CALLER);
	if (callerObj != NULL) {
	    CprofDbBindObj(stmt, 12, callerObj);
	} else {
	    CprofDbBindText(stmt, 12, "");
	}
	rc = CprofDbExec(stmt);
    }

    /*
     * Events: a flat list of time, type and name.
     */

    stmt = storePtr->stmts[ST_EVENT];
    DataList(profileObj, "events", &n, &rows);
    for (i = 0; rc == SQLITE_OK && i + 2 < n; i += 3) {
	rc = EventFrameId(wPtr, rows[i + 2], &frame);
	if (rc != SQLITE_OK) {
	    break;
	}
	sqlite3_bind_int64(stmt, 1, storePtr->runId);
	sqlite3_bind_int(stmt, 2, i / 3);
	CprofDbBindNumber(stmt, 3, rows[i]);
	CprofDbBindObj(stmt, 4, rows[i + 1]);
	sqlite3_bind_int64(stmt, 5, frame);
	rc = CprofDbExec(stmt);
    }
    if (rc == SQLITE_OK) {
	rc = DataThreadEvents(wPtr, profileObj);
    }

    /*
     * Coverage.
     */

    covObj = CprofDbMetaGet(profileObj, "coverage", NULL);
    stmt = storePtr->stmts[ST_COV_CMD];
    DataList(covObj, "commands", &n, &rows);
    for (i = 0; rc == SQLITE_OK && i < n; i++) {
	rc = DataFrameId(wPtr, "tcl", rows[i], &frame);
	if (rc != SQLITE_OK) {
	    break;
	}
	sqlite3_bind_int64(stmt, 1, storePtr->runId);
	sqlite3_bind_int64(stmt, 2, frame);
	CprofDbBindNumber(stmt, 3, DataGet(wPtr, rows[i], DK_CALLS));
	sqlite3_bind_int(stmt, 4, i);
	rc = CprofDbExec(stmt);
    }
    stmt = storePtr->stmts[ST_COV_LINE];
    DataList(covObj, "lines", &n, &rows);
    for (i = 0; rc == SQLITE_OK && i < n; i++) {
	sqlite3_bind_int64(stmt, 1, storePtr->runId);
	CprofDbBindObj(stmt, 2, DataGet(wPtr, rows[i], DK_FILE));
	CprofDbBindNumber(stmt, 3, DataGet(wPtr, rows[i], DK_LINE));
	CprofDbBindNumber(stmt, 4, DataGet(wPtr, rows[i], DK_CALLS));
	sqlite3_bind_int(stmt, 5, i);
	rc = CprofDbExec(stmt);
    }
    DataList(covObj, "procs", &n, &rows);
    if (rc == SQLITE_OK && n > 0) {
	rc = sqlite3_prepare_v2(storePtr->db, "INSERT INTO coverage_procs"
		" (run, seq, name) VALUES (?1, ?2, ?3)", -1, &stmt, NULL);
	for (i = 0; rc == SQLITE_OK && i < n; i++) {
	    sqlite3_bind_int64(stmt, 1, storePtr->runId);
	    sqlite3_bind_int(stmt, 2, i);
	    CprofDbBindObj(stmt, 3, rows[i]);
	    rc = CprofDbExec(stmt);
	}
	sqlite3_finalize(stmt);
    }
    return rc;
}

/*
 * The columns of the run fixed at its start: the profile's (label, mode,
 * clock, rate), and this process's.
 */

static Tcl_Obj *
DataRunInfo(
    Tcl_Interp *interp,
    Tcl_Obj *profileObj,
    Tcl_Obj *metaObj)
{
    static const char *const fromMeta[] = {
	"label", "mode", "clock", "rate_requested", NULL
    };
    static const char *const globals[][2] = {
	{"argv0", "argv0"}, {"argv", "argv"},
	{"tcl_version", "tcl_patchLevel"}, {NULL, NULL}
    };
    Tcl_Obj *infoObj = Tcl_NewDictObj(), *valueObj, *cwdObj;
    int i;

    for (i = 0; fromMeta[i] != NULL; i++) {
	valueObj = CprofDbMetaGet(metaObj, fromMeta[i], NULL);
	if (valueObj != NULL) {
	    Tcl_DictObjPut(NULL, infoObj, Tcl_NewStringObj(fromMeta[i], -1),
		    valueObj);
	}
    }
    for (i = 0; i < 2; i++) {
	static const char *const notNull[] = {"label", "clock"};

	/*
	 * A profile made by hand, without a label, or of samples without
	 * their clock: the columns cannot be NULL.
	 */

	if (CprofDbMetaGet(metaObj, notNull[i], NULL) == NULL) {
	    Tcl_DictObjPut(NULL, infoObj, Tcl_NewStringObj(notNull[i], -1),
		    Tcl_NewObj());
	}
    }
    Tcl_DictObjPut(NULL, infoObj, Tcl_NewStringObj("host", -1),
	    Tcl_NewStringObj(Tcl_GetHostName(), -1));
    for (i = 0; globals[i][0] != NULL; i++) {
	valueObj = Tcl_GetVar2Ex(interp, globals[i][1], NULL,
		TCL_GLOBAL_ONLY);
	if (valueObj != NULL) {
	    Tcl_DictObjPut(NULL, infoObj, Tcl_NewStringObj(globals[i][0], -1),
		    valueObj);
	}
    }
    cwdObj = Tcl_FSGetCwd(interp);
    if (cwdObj != NULL) {
	Tcl_DictObjPut(NULL, infoObj, Tcl_NewStringObj("cwd", -1), cwdObj);
	Tcl_DecrRefCount(cwdObj);
    } else {
	Tcl_ResetResult(interp);
    }
    Tcl_DictObjPut(NULL, infoObj, Tcl_NewStringObj("tclcprof_version", -1),
	    Tcl_NewStringObj(PACKAGE_VERSION, -1));
    Tcl_DictObjPut(NULL, infoObj, Tcl_NewStringObj("has_lines", -1),
	    Tcl_NewIntObj(CprofDbMetaGet(profileObj, "lines", NULL) != NULL));
    Tcl_DictObjPut(NULL, infoObj, Tcl_NewStringObj("has_events", -1),
	    Tcl_NewIntObj(CprofDbMetaGet(profileObj, "events", NULL) != NULL));
    return infoObj;
}

int
CprofStoreSaveData(
    Tcl_Interp *interp,
    Tcl_Obj *pathObj,
    Tcl_Obj *profileObj,
    Tcl_Obj *labelObj)
{
    CprofStore *storePtr = NULL;
    DataWriter writer;
    Tcl_Obj *cmd[2], *metaObj, *infoObj;
    int code, rc, i;

    Tcl_IncrRefCount(profileObj);
    cmd[0] = Tcl_NewStringObj("::tclcprof::mergelib::CheckSave", -1);
    cmd[1] = profileObj;
    Tcl_IncrRefCount(cmd[0]);
    code = Tcl_EvalObjv(interp, 2, cmd, TCL_EVAL_GLOBAL);
    Tcl_DecrRefCount(cmd[0]);
    if (code != TCL_OK) {
	Tcl_DecrRefCount(profileObj);
	return TCL_ERROR;
    }
    Tcl_ResetResult(interp);
    metaObj = Tcl_DuplicateObj(CprofDbMetaGet(profileObj, "meta", NULL));
    Tcl_IncrRefCount(metaObj);
    if (labelObj != NULL) {
	Tcl_DictObjPut(NULL, metaObj, Tcl_NewStringObj("label", -1),
		labelObj);
    }

    infoObj = DataRunInfo(interp, profileObj, metaObj);
    Tcl_IncrRefCount(infoObj);

    code = CprofStoreOpen(interp, pathObj, 0, &storePtr);
    if (code == TCL_OK) {
	code = CprofDbConnectForWrite(interp, storePtr, interp);
    }
    if (code == TCL_OK) {
	writer.storePtr = storePtr;
	writer.nextLine = writer.nextMemLine = 0;
	writer.nodeTimes = NULL;
	for (i = 0; i < DK_COUNT; i++) {
	    writer.keys[i] = Tcl_NewStringObj(dataKeyNames[i], -1);
	    Tcl_IncrRefCount(writer.keys[i]);
	}
	Tcl_InitHashTable(&writer.frames, TCL_STRING_KEYS);
	rc = sqlite3_exec(storePtr->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc == SQLITE_OK) {
	    rc = CprofDbInsertRun(storePtr, infoObj);
	}
	if (rc == SQLITE_OK) {
	    rc = DataBody(&writer, profileObj,
		    Tcl_GetString(CprofDbMetaGet(metaObj, "mode", NULL)));
	}
	if (rc == SQLITE_OK) {
	    rc = CprofDbFlushRun(storePtr, metaObj, 1);
	}
	if (rc == SQLITE_OK) {
	    rc = sqlite3_exec(storePtr->db, "COMMIT", NULL, NULL, NULL);
	}
	for (i = 0; i < DK_COUNT; i++) {
	    Tcl_DecrRefCount(writer.keys[i]);
	}
	Tcl_DeleteHashTable(&writer.frames);
	if (rc == SQLITE_OK) {
	    CprofDbDisconnect(storePtr, 1);
	    Tcl_SetObjResult(interp, Tcl_NewWideIntObj(storePtr->runId));
	} else {
	    CprofDbWriteFailed(interp, storePtr, rc);
	    storePtr->runId = 0;
	    CprofDbDisconnect(storePtr, 0);
	    code = TCL_ERROR;
	}
    }
    if (code != TCL_OK && storePtr != NULL) {
	/*
	 * A file made by this save goes again.
	 */

	CprofStoreDiscardRun(storePtr);
    }
    if (storePtr != NULL) {
	CprofStoreClose(storePtr);
    }
    Tcl_DecrRefCount(infoObj);
    Tcl_DecrRefCount(metaObj);
    Tcl_DecrRefCount(profileObj);
    return code;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofStoreReplaceRun --
 *
 *	Write a profile value as a new run of the store's file (as save
 *	-data does), then remove the store's own run, every table's rows of
 *	it, and give the new run its number, in one transaction: a run
 *	whose whole is only known at its end (one of several threads or
 *	interpreters, cmdscope.c) ends up as one run, under the number it had
 *	while it ran. If the new run cannot be written, the old one stays.
 *
 *----------------------------------------------------------------------
 */

int
CprofStoreReplaceRun(
    Tcl_Interp *interp,
    CprofStore *storePtr,
    Tcl_Obj *profileObj)
{
    sqlite3_stmt *stmt;
    Tcl_Obj *pathObj = storePtr->pathObj;
    sqlite3_int64 oldRun = storePtr->runId;
    Tcl_WideInt newRun = 0;
    int code, ok = 1;

    Tcl_IncrRefCount(pathObj);
    code = CprofStoreSaveData(interp, pathObj, profileObj, NULL);
    if (code == TCL_OK && (Tcl_GetWideIntFromObj(NULL,
	    Tcl_GetObjResult(interp), &newRun) != TCL_OK || newRun <= 0)) {
	newRun = 0;
    }
    if (code == TCL_OK && oldRun != 0 && newRun != 0 && newRun != oldRun
	    && CprofDbConnect(interp, storePtr) == TCL_OK) {
	sqlite3 *db = storePtr->db;

	ok = (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL)
		== SQLITE_OK);
	if (ok && sqlite3_prepare_v2(db, "SELECT m.name FROM sqlite_master m"
		" WHERE m.type = 'table' AND EXISTS (SELECT 1 FROM"
		" pragma_table_info(m.name) WHERE name = 'run')", -1, &stmt,
		NULL) == SQLITE_OK) {
	    while (ok && sqlite3_step(stmt) == SQLITE_ROW) {
		char *sql = sqlite3_mprintf(
			"DELETE FROM \"%w\" WHERE run = %lld;"
			" UPDATE \"%w\" SET run = %lld WHERE run = %lld",
			(const char *) sqlite3_column_text(stmt, 0),
			(long long) oldRun,
			(const char *) sqlite3_column_text(stmt, 0),
			(long long) oldRun, (long long) newRun);

		ok = (sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
		sqlite3_free(sql);
	    }
	    sqlite3_finalize(stmt);
	}
	if (ok) {
	    /*
	     * The new run takes the old one's number, the one status, the
	     * tool's message and any forked child's parent_run gave, and
	     * its start time (the new run's is that of this write).
	     */

	    char *sql = sqlite3_mprintf("UPDATE runs SET start_time ="
		    " (SELECT start_time FROM runs WHERE id = %lld)"
		    " WHERE id = %lld;"
		    " DELETE FROM runs WHERE id = %lld;"
		    " UPDATE runs SET id = %lld WHERE id = %lld",
		    (long long) oldRun, (long long) newRun,
		    (long long) oldRun, (long long) oldRun, (long long) newRun);

	    ok = (sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK)
		    && (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL)
		    == SQLITE_OK);
	    sqlite3_free(sql);
	}
	if (!ok) {
	    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	}
	CprofDbDisconnect(storePtr, 1);
    }
    Tcl_DecrRefCount(pathObj);
    return code;
}
