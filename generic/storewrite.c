/*
 * storewrite.c --
 *
 *	A run written to its file: CprofStoreBeginRun adds it, each flush
 *	(CprofStoreFlush) writes what changed since the last one, in one
 *	transaction, and CprofStoreSave writes a stopped profile as a new
 *	run. The shadows of what was written, the frames table and the
 *	rollback that makes a failed flush forget them are store.c's ways
 *	described at the top of that file.
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

static int		FlushTree(CprofStore *storePtr,
			    CprofState *statePtr, CprofTree *treePtr,
			    int tree);
static int		FlushTreeEx(CprofStore *storePtr,
			    CprofState *statePtr, CprofTree *treePtr,
			    int tree, int64_t **framesPtr, int *numFramesPtr,
			    int withLines);
static int		FlushNodeLines(CprofStore *storePtr, int memory,
			    CprofTree *treePtr);
static int		FlushTimeline(CprofStore *storePtr,
			    CprofTree *treePtr, int tree);

/*
 *----------------------------------------------------------------------
 *
 * FrameId --
 *
 *	The database id of a frame, added to the frames table if new, and
 *	cached per connection. Tcl frames are keyed by name, kind and
 *	interpreter (interpId, the name id of its path, -1 for the top
 *	one), C frames by name and module, threads' roots (isC
 *	CPROF_FD_THREAD) by name and Tcl thread id (aux).
 *
 *----------------------------------------------------------------------
 */

static int
FrameId(
    CprofStore *storePtr,
    int isC,
    int nameId,
    int aux,
    int interpId,
    int64_t *idPtr)
{
    int key[4], isNew, rc;
    Tcl_HashEntry *hPtr;
    const char *name, *module = "", *tclkind = "", *interpName = "";
    const char *cols[5];
    const char *kind = isC == CPROF_FD_THREAD ? "thread"
	    : isC == CPROF_FD_LABELS ? "labels" : isC ? "c" : "tcl";

    key[0] = isC;
    key[1] = nameId;
    key[2] = aux;
    key[3] = isC ? -1 : interpId;
    hPtr = Tcl_CreateHashEntry(&storePtr->frameIds, (char *) key, &isNew);
    if (!isNew) {
	*idPtr = (int64_t) (intptr_t) Tcl_GetHashValue(hPtr);
	return SQLITE_OK;
    }
    name = CprofNameString(nameId);
    if (isC == CPROF_FD_LABELS) {
	module = "";
    } else if (isC) {
	module = aux >= 0 ? CprofNameString(aux) : "";
    } else {
	int origin = CprofNameOrigin(nameId);

	tclkind = CprofKindName(aux);
	if (origin >= 0) {
	    /*
	     * An event handler's frame: its origin, in the module column.
	     */

	    module = CprofNameString(origin);
	}
	if (interpId >= 0) {
	    interpName = CprofNameString(interpId);
	}
    }
    if (module == NULL) {
	module = "";
    }
    if (interpName == NULL) {
	interpName = "";
    }
    cols[0] = kind;
    cols[1] = name ? name : "?";
    cols[2] = tclkind;
    cols[3] = module;
    cols[4] = interpName;
    rc = CprofDbFrameRow(storePtr, cols, isC == CPROF_FD_LABELS
	    ? (name ? name : "") : NULL, idPtr);
    if (rc != SQLITE_OK) {
	Tcl_DeleteHashEntry(hPtr);
	return rc;
    }
    Tcl_SetHashValue(hPtr, (ClientData) (intptr_t) *idPtr);
    return SQLITE_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofDbFrameRow --
 *
 *	The id of the frames row of five columns (kind, name, tclkind,
 *	module, interp), added if there is none; a new frame of kind labels
 *	gets the frame_labels rows of 'labels' (its label set), if not NULL.
 *
 * Results:
 *	An SQLite code; the id in *idPtr.
 *
 * Side effects:
 *	May add rows.
 *
 *----------------------------------------------------------------------
 */

int
CprofDbFrameRow(
    CprofStore *storePtr,
    const char *const cols[5],
    const char *labels,
    int64_t *idPtr)
{
    sqlite3_stmt *stmt = storePtr->stmts[ST_FRAME_GET];
    int i, rc;

    for (i = 0; i < 5; i++) {
	CprofDbBindText(stmt, i + 1, cols[i]);
    }
    rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) {
	*idPtr = sqlite3_column_int64(stmt, 0);
	rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) {
	sqlite3_reset(stmt);
	stmt = storePtr->stmts[ST_FRAME_PUT];
	for (i = 0; i < 5; i++) {
	    CprofDbBindText(stmt, i + 1, cols[i]);
	}
	rc = CprofDbExec(stmt);
	*idPtr = sqlite3_last_insert_rowid(storePtr->db);
	stmt = storePtr->stmts[ST_FRAME_GET];
	if (rc == SQLITE_OK && labels != NULL) {
	    rc = CprofDbLabelRows(storePtr, *idPtr, labels);
	}
    }
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    return rc;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofDbLabelRows --
 *
 *	The rows of frame_labels of a new frame of kind labels: its set's
 *	keys and values.
 *
 *----------------------------------------------------------------------
 */

int
CprofDbLabelRows(
    CprofStore *storePtr,
    int64_t frameId,
    const char *set)
{
    sqlite3_stmt *stmt;
    Tcl_Size n, i;
    const char **argv;
    int rc;

    if (Tcl_SplitList(NULL, set, &n, &argv) != TCL_OK) {
	return SQLITE_OK;
    }
    rc = sqlite3_prepare_v2(storePtr->db, "INSERT OR IGNORE INTO frame_labels"
	    " (frame, key, value) VALUES (?1, ?2, ?3)", -1, &stmt, NULL);
    for (i = 0; rc == SQLITE_OK && i + 1 < n; i += 2) {
	sqlite3_bind_int64(stmt, 1, frameId);
	CprofDbBindText(stmt, 2, argv[i]);
	CprofDbBindText(stmt, 3, argv[i + 1]);
	rc = CprofDbExec(stmt);
	sqlite3_reset(stmt);
    }
    if (stmt != NULL) {
	sqlite3_finalize(stmt);
    }
    Tcl_Free((char *) argv);
    return rc;
}

/*
 *----------------------------------------------------------------------
 *
 * WriteNode --
 *
 *	Write node 'i' of tree 'tree' if it differs from what was last
 *	written (or is new). Nodes are written in index order, parents
 *	before children; a new node is marked recursive when an ancestor
 *	has the same frame.
 *
 *----------------------------------------------------------------------
 */

static int
WriteNode(
    CprofStore *storePtr,
    int tree,
    int i,
    const NodeRec *recPtr)
{
    ShadowTree *shPtr = &storePtr->trees[tree];
    sqlite3_stmt *stmt = storePtr->stmts[ST_NODE];
    int isNew = (i >= shPtr->count), recursive = 0, rc;

    if (!isNew && memcmp(&shPtr->recs[i], recPtr, sizeof(NodeRec)) == 0) {
	return SQLITE_OK;
    }
    if (isNew && recPtr->frame != 0) {
	int64_t p;

	for (p = recPtr->parent; p > 0; p = shPtr->recs[p].parent) {
	    if (shPtr->recs[p].frame == recPtr->frame) {
		recursive = 1;
		break;
	    }
	}
    }
    sqlite3_bind_int64(stmt, 1, storePtr->runId);
    sqlite3_bind_int(stmt, 2, tree);
    sqlite3_bind_int(stmt, 3, i);
    if (recPtr->parent >= 0) {
	sqlite3_bind_int64(stmt, 4, recPtr->parent);
    }
    if (recPtr->frame != 0) {
	sqlite3_bind_int64(stmt, 5, recPtr->frame);
    }
    sqlite3_bind_int64(stmt, 6, recPtr->self);
    sqlite3_bind_int64(stmt, 7, recPtr->total);
    if (recPtr->hasFig) {
	sqlite3_bind_int64(stmt, 8, (sqlite3_int64) recPtr->fig.calls);
	sqlite3_bind_int64(stmt, 9, recPtr->fig.totalNs);
	sqlite3_bind_int64(stmt, 10, recPtr->fig.selfNs);
	sqlite3_bind_int64(stmt, 11, recPtr->fig.minNs);
	sqlite3_bind_int64(stmt, 12, recPtr->fig.maxNs);
	sqlite3_bind_int64(stmt, 13, recPtr->fig.suspendedNs);
    }
    sqlite3_bind_int(stmt, 14, recursive);
    sqlite3_bind_int(stmt, 15, recPtr->shown);
    rc = CprofDbExec(stmt);
    if (rc != SQLITE_OK) {
	return rc;
    }
    if (isNew) {
	if (i >= shPtr->cap) {
	    int cap = shPtr->cap ? 2 * shPtr->cap : 1024;

	    while (cap <= i) {
		cap *= 2;
	    }
	    shPtr->recs = (NodeRec *) ckrealloc(shPtr->recs,
		    cap * sizeof(NodeRec));
	    shPtr->cap = cap;
	}
	shPtr->count = i + 1;
    }
    shPtr->recs[i] = *recPtr;
    return SQLITE_OK;
}

/*
 * Grow an array of 'size'-byte elements to hold 'need', zeroing the new
 * part.
 */

static void
GrowZero(
    void **arrayPtr,
    int *numPtr,
    int need,
    size_t size)
{
    if (need > *numPtr) {
	*arrayPtr = ckrealloc(*arrayPtr, need * size);
	memset((char *) *arrayPtr + *numPtr * size, 0,
		(need - *numPtr) * size);
	*numPtr = need;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * FlushSampleTree, FlushExactTree --
 *
 *	Bring tree 'tree' of the run up to date with the sampled call tree
 *	(with the exact figures of mode both on its Tcl nodes), or with the
 *	exact call tree.
 *
 *----------------------------------------------------------------------
 */

static int
FlushSampleTree(
    CprofStore *storePtr,
    CprofState *statePtr,
    int tree)
{
    return FlushTree(storePtr, statePtr, &statePtr->tree, tree);
}

static int
FlushTree(
    CprofStore *storePtr,
    CprofState *statePtr,
    CprofTree *treePtr,
    int tree)
{
    return FlushTreeEx(storePtr, statePtr, treePtr, tree,
	    &storePtr->treeFrames, &storePtr->numTreeFrames, 1);
}

/*
 * A tree with its own cache of frame ids (framesPtr: the tree's frame
 * index -> id), and its C source lines: withLines 1 in node_lines, 2 in
 * memory_node_lines, 0 not.
 */

static int
FlushTreeEx(
    CprofStore *storePtr,
    CprofState *statePtr,
    CprofTree *treePtr,
    int tree,
    int64_t **framesPtr,
    int *numFramesPtr,
    int withLines)
{
    CprofExact *exactPtr = (statePtr->options.mode == CPROF_MODE_BOTH)
	    ? &statePtr->exact : NULL;
    ShadowTree *shPtr = &storePtr->trees[tree];
    int i, rc;

    GrowZero((void **) framesPtr, numFramesPtr, treePtr->numFrames,
	    sizeof(int64_t));
    for (i = 0; i < treePtr->numNodes; i++) {
	CprofNode *nPtr = &treePtr->nodes[i];
	NodeRec rec;

	memset(&rec, 0, sizeof(rec));
	rec.parent = nPtr->parent;
	if (i < shPtr->count) {
	    rec.frame = shPtr->recs[i].frame;
	} else if (nPtr->frame >= 0) {
	    int64_t *idPtr = &(*framesPtr)[nPtr->frame];

	    if (*idPtr == 0) {
		CprofFrameDef *fPtr = &treePtr->frames[nPtr->frame];

		rc = FrameId(storePtr, fPtr->isC, fPtr->nameId,
			fPtr->isC ? fPtr->moduleId : fPtr->tclKind,
			fPtr->interpId, idPtr);
		if (rc != SQLITE_OK) {
		    return rc;
		}
	    }
	    rec.frame = *idPtr;
	}
	rec.self = (int64_t) nPtr->self;
	rec.total = (int64_t) nPtr->total;
	rec.hasFig = exactPtr != NULL && nPtr->exact > 0
		&& CprofExactNodeValues(exactPtr, nPtr->exact, &rec.fig);
	rec.shown = 1;
	rc = WriteNode(storePtr, tree, i, &rec);
	if (rc != SQLITE_OK) {
	    return rc;
	}
    }
    if (withLines) {
	rc = FlushNodeLines(storePtr, withLines == 2, treePtr);
    } else {
	rc = SQLITE_OK;
    }
    if (rc == SQLITE_OK && (tree == 0 || tree == 2)) {
	rc = FlushTimeline(storePtr, treePtr, tree);
    }
    return rc;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofDbWriteTimeline --
 *
 *	The row of timelines of tree 'tree' of the run, replaced, from a
 *	timeline dict (draintimeline.c, CprofTimelineObj) and the flat list
 *	{node {bucket weight ...} ...} of its nodes (node: its id in the
 *	run's tree).
 *
 *----------------------------------------------------------------------
 */

int
CprofDbWriteTimeline(
    CprofStore *storePtr,
    int tree,
    Tcl_Obj *timelineObj,
    Tcl_Obj *nodeTimesObj)
{
    static const char *const keys[] = {"width_ns", "buckets", "weights",
	    "live", "peak"};
    sqlite3_stmt *stmt;
    int rc, i;

    rc = sqlite3_prepare_v2(storePtr->db, "INSERT OR REPLACE INTO"
	    " timelines (run, tree, width_ns, buckets, weights, live, peak,"
	    " node_times) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", -1, &stmt,
	    NULL);
    if (rc != SQLITE_OK) {
	return rc;
    }
    sqlite3_bind_int64(stmt, 1, storePtr->runId);
    sqlite3_bind_int(stmt, 2, tree);
    for (i = 0; i < 5; i++) {
	Tcl_Obj *valueObj = CprofDbMetaGet(timelineObj, keys[i], NULL);

	if (i < 2) {
	    Tcl_WideInt w = 0;

	    if (valueObj != NULL) {
		Tcl_GetWideIntFromObj(NULL, valueObj, &w);
	    }
	    sqlite3_bind_int64(stmt, 3 + i, w);
	} else if (valueObj != NULL) {
	    CprofDbBindObj(stmt, 3 + i, valueObj);
	} else {
	    CprofDbBindText(stmt, 3 + i, "");
	}
    }
    if (nodeTimesObj != NULL) {
	CprofDbBindObj(stmt, 8, nodeTimesObj);
    } else {
	CprofDbBindText(stmt, 8, "");
    }
    rc = CprofDbExec(stmt);
    sqlite3_finalize(stmt);
    return rc;
}

/*
 * A tree's timeline, when it changed since it was last written.
 */

static int
FlushTimeline(
    CprofStore *storePtr,
    CprofTree *treePtr,
    int tree)
{
    ShadowTree *shPtr = &storePtr->trees[tree];
    CprofTimeline *tlPtr = &treePtr->timeline;
    Tcl_Obj *timelineObj, *nodeTimesObj, **lists;
    int i, rc;

    if (tlPtr->origin == 0 || shPtr->timeChanges == tlPtr->changes + 1) {
	return SQLITE_OK;
    }
    timelineObj = CprofTimelineObj(tlPtr);
    Tcl_IncrRefCount(timelineObj);
    nodeTimesObj = Tcl_NewListObj(0, NULL);
    Tcl_IncrRefCount(nodeTimesObj);
    lists = CprofTimelineNodeLists(tlPtr, treePtr->numNodes);
    if (lists != NULL) {
	for (i = 0; i < treePtr->numNodes; i++) {
	    if (lists[i] != NULL) {
		Tcl_ListObjAppendElement(NULL, nodeTimesObj,
			Tcl_NewIntObj(i));
		Tcl_ListObjAppendElement(NULL, nodeTimesObj, lists[i]);
	    }
	}
	ckfree(lists);
    }
    rc = CprofDbWriteTimeline(storePtr, tree, timelineObj, nodeTimesObj);
    Tcl_DecrRefCount(timelineObj);
    Tcl_DecrRefCount(nodeTimesObj);
    if (rc == SQLITE_OK) {
	shPtr->timeChanges = tlPtr->changes + 1;
    }
    return rc;
}

/*
 * A memory profile's tree: tree 0 of a run of mode memory (its C source
 * lines in node_lines), tree 2 of a run of mode sample that takes memory
 * samples too (-mode {sample memory}; in memory_node_lines); self and
 * total are bytes allocated. Each
 * node's figures in memory_nodes (rows whose figures changed since the
 * last flush).
 */

static int
FlushMemoryTree(
    CprofStore *storePtr,
    CprofState *statePtr,
    int tree)
{
    CprofTree *treePtr = CprofMemoryPrepare(statePtr, 0, 0);
    sqlite3_stmt *stmt = storePtr->stmts[ST_MEM_NODE];
    int i, k, rc;

    if (treePtr == NULL) {
	return SQLITE_OK;
    }
    rc = (tree == 0) ? FlushTree(storePtr, statePtr, treePtr, 0)
	    : FlushTreeEx(storePtr, statePtr, treePtr, tree,
	    &storePtr->memFrames, &storePtr->numMemFrames, 2);
    if (treePtr->numNodes > storePtr->capMemFigs) {
	storePtr->capMemFigs = treePtr->numNodes + 1024;
	storePtr->memFigs = (int64_t (*)[6]) ckrealloc(storePtr->memFigs,
		storePtr->capMemFigs * sizeof(int64_t[6]));
    }
    for (i = 0; rc == SQLITE_OK && i < treePtr->numNodes; i++) {
	int64_t fig[6];

	CprofMemoryFigures(statePtr, i, fig);
	if (i < storePtr->numMemFigs
		&& memcmp(storePtr->memFigs[i], fig, sizeof(fig)) == 0) {
	    continue;
	}
	sqlite3_bind_int64(stmt, 1, storePtr->runId);
	sqlite3_bind_int(stmt, 2, i);
	for (k = 0; k < 6; k++) {
	    sqlite3_bind_int64(stmt, 3 + k, fig[k]);
	}
	rc = CprofDbExec(stmt);
	if (rc == SQLITE_OK) {
	    memcpy(storePtr->memFigs[i], fig, sizeof(fig));
	    if (i >= storePtr->numMemFigs) {
		storePtr->numMemFigs = i + 1;
	    }
	}
    }
    return rc;
}

/*
 * The C source lines of the sampled tree: new records inserted, changed
 * weights updated (records only grow, in order of creation).
 */

static int
FlushNodeLines(
    CprofStore *storePtr,
    int memory,			/* The memory tree of a run of mode sample:
				 * memory_node_lines. */
    CprofTree *treePtr)
{
    sqlite3_stmt *stmt = storePtr->stmts[memory ? ST_MEM_NODE_LINE
	    : ST_NODE_LINE];
    uint64_t **shadowPtr = memory ? &storePtr->memNodeLines
	    : &storePtr->nodeLines;
    int *numPtr = memory ? &storePtr->numMemNodeLines
	    : &storePtr->numNodeLines;
    int *capPtr = memory ? &storePtr->capMemNodeLines
	    : &storePtr->capNodeLines;
    int i, rc;

    if (treePtr->numLines > *capPtr) {
	*capPtr = treePtr->numLines + 1024;
	*shadowPtr = (uint64_t *) ckrealloc(*shadowPtr,
		*capPtr * sizeof(uint64_t));
    }
    for (i = 0; i < treePtr->numLines; i++) {
	CprofNodeLine *recPtr = &treePtr->lines[i];
	const char *file;

	if (i < *numPtr && (*shadowPtr)[i] == recPtr->weight) {
	    continue;
	}
	file = CprofNameString(recPtr->fileId);
	sqlite3_bind_int64(stmt, 1, storePtr->runId);
	sqlite3_bind_int(stmt, 2, i);
	sqlite3_bind_int(stmt, 3, recPtr->node);
	if (recPtr->child >= 0) {
	    sqlite3_bind_int(stmt, 4, recPtr->child);
	}
	CprofDbBindText(stmt, 5, file ? file : "");
	sqlite3_bind_int(stmt, 6, recPtr->line);
	sqlite3_bind_int64(stmt, 7, (sqlite3_int64) recPtr->weight);
	rc = CprofDbExec(stmt);
	if (rc != SQLITE_OK) {
	    return rc;
	}
	(*shadowPtr)[i] = recPtr->weight;
	if (i >= *numPtr) {
	    *numPtr = i + 1;
	}
    }
    return SQLITE_OK;
}

static int
FlushExactTree(
    CprofStore *storePtr,
    CprofState *statePtr,
    int tree)
{
    CprofExact *exactPtr = &statePtr->exact;
    ShadowTree *shPtr = &storePtr->trees[tree];
    int n = exactPtr->numNodes, i, rc = SQLITE_OK;
    int64_t *adj = (int64_t *) ckalloc(n * sizeof(int64_t));
    int64_t *self = (int64_t *) ckalloc(n * sizeof(int64_t));
    unsigned char *shown = (unsigned char *) ckalloc(n);

    CprofExactAdjust(exactPtr, adj, self, shown);
    for (i = 0; i < n && rc == SQLITE_OK; i++) {
	CprofExactNode *nPtr = &exactPtr->nodes[i];
	NodeRec rec;

	memset(&rec, 0, sizeof(rec));
	rec.parent = nPtr->parent;
	if (i < shPtr->count) {
	    rec.frame = shPtr->recs[i].frame;
	} else if (i > 0) {
	    rc = (nPtr->kind == CPROF_EXACT_LABELS)
		    ? FrameId(storePtr, CPROF_FD_LABELS, nPtr->nameId, -1, -1,
		    &rec.frame)
		    : FrameId(storePtr, 0, nPtr->nameId, nPtr->kind,
		    exactPtr->interpId, &rec.frame);
	    if (rc != SQLITE_OK) {
		break;
	    }
	}
	rec.self = self[i];
	rec.total = adj[i];
	CprofExactFiguresOf(exactPtr, i, adj[i], self[i], &rec.fig);
	rec.hasFig = 1;
	rec.shown = shown[i];
	rc = WriteNode(storePtr, tree, i, &rec);
    }
    ckfree(adj);
    ckfree(self);
    ckfree(shown);
    return rc;
}

/*
 *----------------------------------------------------------------------
 *
 * FlushLines, FlushCoverage, FlushEvents --
 *
 *	Call sites, coverage counts and events of exact timing and coverage.
 *
 *----------------------------------------------------------------------
 */

typedef struct LineRow {
    CprofLineValues v;
    int shown;
} LineRow;

static int
FlushLines(
    CprofStore *storePtr,
    CprofState *statePtr)
{
    CprofExact *exactPtr = &statePtr->exact;
    LineRow *rows = (LineRow *) storePtr->lines;
    sqlite3_stmt *stmt = storePtr->stmts[ST_LINE];
    int i, rc;

    if (exactPtr->numLineRecs > storePtr->capLines) {
	int cap = storePtr->capLines ? storePtr->capLines : 256;

	while (cap < exactPtr->numLineRecs) {
	    cap *= 2;
	}
	rows = (LineRow *) ckrealloc(rows, cap * sizeof(LineRow));
	storePtr->lines = (CprofLineValues *) rows;
	storePtr->capLines = cap;
    }
    for (i = 0; i < exactPtr->numLineRecs; i++) {
	LineRow row;
	int64_t frame;
	const char *file;

	memset(&row, 0, sizeof(row));
	row.shown = CprofExactLineValues(exactPtr, i, &row.v);
	if (i < storePtr->numLines
		&& memcmp(&rows[i], &row, sizeof(row)) == 0) {
	    continue;
	}
	rc = FrameId(storePtr, 0, row.v.nameId, row.v.kind, -1, &frame);
	if (rc != SQLITE_OK) {
	    return rc;
	}
	file = CprofNameString(row.v.fileId);
	sqlite3_bind_int64(stmt, 1, storePtr->runId);
	sqlite3_bind_int(stmt, 2, i);
	CprofDbBindText(stmt, 3, file);
	sqlite3_bind_int(stmt, 4, row.v.line);
	sqlite3_bind_int64(stmt, 5, frame);
	sqlite3_bind_int64(stmt, 6, (sqlite3_int64) row.v.calls);
	sqlite3_bind_int64(stmt, 7, row.v.totalNs);
	sqlite3_bind_int64(stmt, 8, row.v.selfNs);
	sqlite3_bind_int64(stmt, 9, row.v.minNs);
	sqlite3_bind_int64(stmt, 10, row.v.maxNs);
	sqlite3_bind_int(stmt, 11, row.shown);
	CprofDbBindText(stmt, 12, row.v.callerId >= 0
		? CprofNameString(row.v.callerId) : "");
	rc = CprofDbExec(stmt);
	if (rc != SQLITE_OK) {
	    return rc;
	}
	rows[i] = row;
	if (i >= storePtr->numLines) {
	    storePtr->numLines = i + 1;
	}
    }
    return SQLITE_OK;
}

static int
FlushCoverage(
    CprofStore *storePtr,
    CprofState *statePtr,
    int withProcs)
{
    CprofExact *exactPtr = &statePtr->exact;
    sqlite3_stmt *stmt;
    int i, rc;

    GrowZero((void **) &storePtr->cmdCalls, &storePtr->numCmdCalls,
	    exactPtr->numNameCalls, sizeof(CprofNameCalls));
    stmt = storePtr->stmts[ST_COV_CMD];
    for (i = 0; i < exactPtr->numNameCalls; i++) {
	uint64_t calls = exactPtr->nameCalls[i].calls;
	int64_t frame;

	if (calls == storePtr->cmdCalls[i].calls
		&& exactPtr->nameCalls[i].kind == storePtr->cmdCalls[i].kind) {
	    continue;
	}
	rc = FrameId(storePtr, 0, i, exactPtr->nameCalls[i].kind, -1,
		&frame);
	if (rc != SQLITE_OK) {
	    return rc;
	}
	sqlite3_bind_int64(stmt, 1, storePtr->runId);
	sqlite3_bind_int64(stmt, 2, frame);
	sqlite3_bind_int64(stmt, 3, (sqlite3_int64) calls);
	sqlite3_bind_int(stmt, 4, i);
	rc = CprofDbExec(stmt);
	if (rc != SQLITE_OK) {
	    return rc;
	}
	storePtr->cmdCalls[i] = exactPtr->nameCalls[i];
    }

    GrowZero((void **) &storePtr->siteHits, &storePtr->numSiteHits,
	    exactPtr->numSites, sizeof(uint64_t));
    stmt = storePtr->stmts[ST_COV_LINE];
    for (i = 0; i < exactPtr->numSites; i++) {
	uint64_t hits = exactPtr->siteHits[i];

	if (hits == storePtr->siteHits[i]) {
	    continue;
	}
	sqlite3_bind_int64(stmt, 1, storePtr->runId);
	CprofDbBindText(stmt, 2, CprofNameString(exactPtr->sites[i].fileId));
	sqlite3_bind_int(stmt, 3, exactPtr->sites[i].line);
	sqlite3_bind_int64(stmt, 4, (sqlite3_int64) hits);
	sqlite3_bind_int(stmt, 5, i);
	rc = CprofDbExec(stmt);
	if (rc != SQLITE_OK) {
	    return rc;
	}
	storePtr->siteHits[i] = hits;
    }

    /*
     * The procedures defined: read once, when the run ends (as
     * tclcprof::data reads them when it is called).
     */

    if (withProcs) {
	Tcl_Obj *procsObj = CprofDefinedProcs(statePtr->interp), **pv;
	sqlite3_stmt *ins = NULL;
	char *sql;
	Tcl_Size pc;

	Tcl_IncrRefCount(procsObj);
	Tcl_ListObjGetElements(NULL, procsObj, &pc, &pv);
	sql = sqlite3_mprintf("DELETE FROM coverage_procs WHERE run = %lld",
		(long long) storePtr->runId);
	rc = sqlite3_exec(storePtr->db, sql, NULL, NULL, NULL);
	sqlite3_free(sql);
	if (rc == SQLITE_OK) {
	    rc = sqlite3_prepare_v2(storePtr->db, "INSERT INTO"
		    " coverage_procs (run, seq, name) VALUES (?1, ?2, ?3)",
		    -1, &ins, NULL);
	}
	for (i = 0; rc == SQLITE_OK && i < pc; i++) {
	    sqlite3_bind_int64(ins, 1, storePtr->runId);
	    sqlite3_bind_int(ins, 2, i);
	    CprofDbBindObj(ins, 3, pv[i]);
	    rc = CprofDbExec(ins);
	}
	sqlite3_finalize(ins);
	Tcl_DecrRefCount(procsObj);
	if (rc != SQLITE_OK) {
	    return rc;
	}
    }
    return SQLITE_OK;
}

static int
FlushEvents(
    CprofStore *storePtr,
    CprofState *statePtr,
    int final,
    int *writtenPtr)
{
    CprofExact *exactPtr = &statePtr->exact;
    CprofStack *stackPtr = &statePtr->levels.stack;
    sqlite3_stmt *stmt = storePtr->stmts[ST_EVENT];
    int limit = exactPtr->numEvents, i, rc;

    /*
     * An ensemble's enter event is renamed (or taken back) when the
     * subcommand is entered: leave it for the next flush.
     */

    if (!final && stackPtr->depth > 0) {
	CprofFrame *topPtr = &stackPtr->frames[stackPtr->depth - 1];

	if ((topPtr->flags & CPROF_FRAME_FOLD) && topPtr->eventIndex >= 0
		&& topPtr->eventIndex < limit) {
	    limit = topPtr->eventIndex;
	}
    }
    for (i = storePtr->eventsWritten; i < limit; i++) {
	CprofEvent *evPtr = &exactPtr->events[i];
	int64_t frame;
	char type[2];

	if (evPtr->type == 0) {
	    continue;
	}
	rc = FrameId(storePtr, 0, evPtr->nameId, evPtr->kind, -1,
		&frame);
	if (rc != SQLITE_OK) {
	    return rc;
	}
	type[0] = (char) evPtr->type;
	type[1] = '\0';
	sqlite3_bind_int64(stmt, 1, storePtr->runId);
	sqlite3_bind_int(stmt, 2, i);
	sqlite3_bind_int64(stmt, 3, CprofExactTicksToNs(statePtr,
		(int64_t) evPtr->ns));
	CprofDbBindText(stmt, 4, type);
	sqlite3_bind_int64(stmt, 5, frame);
	rc = CprofDbExec(stmt);
	if (rc != SQLITE_OK) {
	    return rc;
	}
    }
    *writtenPtr = limit > storePtr->eventsWritten ? limit
	    : storePtr->eventsWritten;
    return SQLITE_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * FlushHandlers --
 *
 *	The event handlers' figures (statePtr->handlers), rewritten whole:
 *	a row per origin and kind, few of them.
 *
 *----------------------------------------------------------------------
 */

static int
FlushHandlers(
    CprofStore *storePtr,
    CprofState *statePtr)
{
    CprofHandlers *hsPtr = &statePtr->handlers;
    sqlite3_stmt *stmt;
    char *sql;
    int i, rc;

    if (hsPtr->num == 0 && !storePtr->wroteHandlers) {
	return SQLITE_OK;
    }
    rc = sqlite3_exec(storePtr->db, HANDLERS_SQL, NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
	return rc;
    }
    sql = sqlite3_mprintf("DELETE FROM handlers WHERE run = %lld",
	    (long long) storePtr->runId);
    rc = sqlite3_exec(storePtr->db, sql, NULL, NULL, NULL);
    sqlite3_free(sql);
    if (rc != SQLITE_OK) {
	return rc;
    }
    rc = sqlite3_prepare_v2(storePtr->db, HANDLERS_INSERT_SQL, -1, &stmt,
	    NULL);
    for (i = 0; rc == SQLITE_OK && i < hsPtr->num; i++) {
	CprofHandlerStat *hPtr = &hsPtr->stats[i];
	const char *origin = CprofNameString(hPtr->originId);

	sqlite3_bind_int64(stmt, 1, storePtr->runId);
	sqlite3_bind_int(stmt, 2, i);
	CprofDbBindText(stmt, 3, origin ? origin : "unknown");
	CprofDbBindText(stmt, 4, CprofHandlerKindName(hPtr->kind));
	sqlite3_bind_int64(stmt, 5, (sqlite3_int64) hPtr->count);
	sqlite3_bind_int64(stmt, 6, (sqlite3_int64) hPtr->timed);
	sqlite3_bind_int64(stmt, 7, (sqlite3_int64) hPtr->totalNs);
	sqlite3_bind_int64(stmt, 8, (sqlite3_int64) hPtr->maxNs);
	if (hPtr->kind == CPROF_HANDLER_AFTER) {
	    sqlite3_bind_int64(stmt, 9, (sqlite3_int64) hPtr->latencyCount);
	    sqlite3_bind_int64(stmt, 10, (sqlite3_int64) hPtr->latencyNs);
	    sqlite3_bind_int64(stmt, 11,
		    (sqlite3_int64) hPtr->latencyMaxNs);
	}
	rc = CprofDbExec(stmt);
    }
    sqlite3_finalize(stmt);
    if (rc == SQLITE_OK) {
	storePtr->wroteHandlers = (hsPtr->num > 0);
    }
    return rc;
}

/*
 *----------------------------------------------------------------------
 *
 * FlushRun --
 *
 *	The run's row: its figures from the profile's meta (kept whole, as
 *	the meta of the profile read back).
 *
 *----------------------------------------------------------------------
 */

Tcl_Obj *
CprofDbMetaGet(
    Tcl_Obj *dictObj,
    const char *key1,
    const char *key2)
{
    Tcl_Obj *keyObj = Tcl_NewStringObj(key1, -1), *valueObj = NULL;

    Tcl_IncrRefCount(keyObj);
    if (Tcl_DictObjGet(NULL, dictObj, keyObj, &valueObj) != TCL_OK) {
	valueObj = NULL;
    }
    Tcl_DecrRefCount(keyObj);
    if (valueObj != NULL && key2 != NULL) {
	return CprofDbMetaGet(valueObj, key2, NULL);
    }
    return valueObj;
}

static double
MetaDouble(
    Tcl_Obj *dictObj,
    const char *key1,
    const char *key2,
    int *foundPtr)
{
    Tcl_Obj *valueObj = CprofDbMetaGet(dictObj, key1, key2);
    double d;

    if (valueObj == NULL || Tcl_GetDoubleFromObj(NULL, valueObj, &d)
	    != TCL_OK) {
	if (foundPtr) {
	    *foundPtr = 0;
	}
	return 0;
    }
    if (foundPtr) {
	*foundPtr = 1;
    }
    return d;
}

static void
BindMetaNumber(
    sqlite3_stmt *stmt,
    int index,
    Tcl_Obj *metaObj,
    const char *key1,
    const char *key2)
{
    CprofDbBindNumber(stmt, index, CprofDbMetaGet(metaObj, key1, key2));
}

/*
 * The threads of a profile of several (its meta's "threads"), written
 * again whole with the run's row: one row each, in their order.
 */

static int
FlushThreads(
    CprofStore *storePtr,
    Tcl_Obj *metaObj)
{
    static const char *const keys[] = {
	"name", "thread", "tid", "state", "cpu_ns", "samples", "weight",
	"interps"
    };
    Tcl_Obj *listObj = CprofDbMetaGet(metaObj, "threads", NULL), **v;
    sqlite3_stmt *stmt;
    char *sql;
    int i, k, rc;
    Tcl_Size n;

    sql = sqlite3_mprintf("DELETE FROM threads WHERE run = %lld",
	    (long long) storePtr->runId);
    rc = sqlite3_exec(storePtr->db, sql, NULL, NULL, NULL);
    sqlite3_free(sql);
    if (rc != SQLITE_OK || listObj == NULL
	    || Tcl_ListObjGetElements(NULL, listObj, &n, &v) != TCL_OK
	    || n == 0) {
	return rc;
    }
    rc = sqlite3_prepare_v2(storePtr->db, "INSERT INTO threads (run, seq,"
	    " name, thread, tid, state, cpu_ns, samples, weight, interps)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)", -1, &stmt,
	    NULL);
    for (i = 0; rc == SQLITE_OK && i < n; i++) {
	sqlite3_bind_int64(stmt, 1, storePtr->runId);
	sqlite3_bind_int(stmt, 2, i);
	for (k = 0; k < 8; k++) {
	    Tcl_Obj *valueObj = CprofDbMetaGet(v[i], keys[k], NULL);

	    if (k == 0 || k == 1 || k == 3 || k == 7) {
		if (valueObj != NULL) {
		    CprofDbBindObj(stmt, 3 + k, valueObj);
		} else {
		    CprofDbBindText(stmt, 3 + k, "");
		}
	    } else {
		CprofDbBindNumber(stmt, 3 + k, valueObj);
	    }
	}
	rc = CprofDbExec(stmt);
    }
    sqlite3_finalize(stmt);
    return rc;
}

int
CprofDbFlushRun(
    CprofStore *storePtr,
    Tcl_Obj *metaObj,
    int final)
{
    sqlite3_stmt *stmt = storePtr->stmts[ST_RUN];
    Tcl_Obj *dropsObj = CprofDbMetaGet(metaObj, "sampling", "drops"), *valueObj;
    double elapsed, overhead = 0;
    int haveOverhead = 0, found, rc;

    elapsed = MetaDouble(metaObj, "elapsed", NULL, NULL);
    sqlite3_bind_int64(stmt, 1, storePtr->runId);
    valueObj = CprofDbMetaGet(metaObj, "label", NULL);
    CprofDbBindObj(stmt, 2, valueObj ? valueObj : Tcl_NewObj());
    CprofDbBindText(stmt, 3, final ? "complete" : "running");
    valueObj = CprofDbMetaGet(metaObj, "stopped_by", NULL);
    CprofDbBindObj(stmt, 4, valueObj ? valueObj : Tcl_NewObj());
    if (final) {
	sqlite3_bind_double(stmt, 5, CprofWallSeconds());
    }
    sqlite3_bind_double(stmt, 6, elapsed);
    BindMetaNumber(stmt, 7, metaObj, "rate_achieved", NULL);
    BindMetaNumber(stmt, 8, metaObj, "samples", NULL);
    BindMetaNumber(stmt, 9, metaObj, "weight", NULL);
    if (dropsObj != NULL) {
	Tcl_DictSearch search;
	Tcl_Obj *keyObj, *valueObj;
	Tcl_WideInt sum = 0, w;
	int done;

	if (Tcl_DictObjFirst(NULL, dropsObj, &search, &keyObj, &valueObj,
		&done) == TCL_OK) {
	    for (; !done; Tcl_DictObjNext(&search, &keyObj, &valueObj,
		    &done)) {
		if (Tcl_GetWideIntFromObj(NULL, valueObj, &w) == TCL_OK) {
		    sum += w;
		}
	    }
	    Tcl_DictObjDone(&search);
	}
	sqlite3_bind_int64(stmt, 10, sum);
    }
    BindMetaNumber(stmt, 11, metaObj, "sampling", "splice_rate");
    BindMetaNumber(stmt, 12, metaObj, "calls", NULL);

    /*
     * The profiler's share of the run, estimated: the signal handler's
     * time per sample, and exact timing's cost per call as compensation
     * measured it.
     */

    if (elapsed > 0) {
	Tcl_Obj *handlerObj = CprofDbMetaGet(metaObj, "sampling", "handler");
	Tcl_Obj *compObj = CprofDbMetaGet(metaObj, "exact", "compensation");

	if (handlerObj != NULL) {
	    double signals = MetaDouble(metaObj, "sampling", "signals",
		    &found);
	    double mean = MetaDouble(handlerObj, "mean_ns", NULL, NULL);

	    if (found) {
		overhead += signals * mean / (elapsed * 1e9) * 100;
		haveOverhead = 1;
	    }
	}
	if (compObj != NULL) {
	    double callNs = MetaDouble(compObj, "call_ns", NULL, &found);

	    if (found) {
		overhead += MetaDouble(metaObj, "calls", NULL, NULL) * callNs
			/ (elapsed * 1e9) * 100;
		haveOverhead = 1;
	    }
	}
    }
    if (haveOverhead) {
	sqlite3_bind_double(stmt, 13, ((int) (overhead * 100 + 0.5)) / 100.0);
    }
    CprofDbBindObj(stmt, 14, metaObj);
    rc = CprofDbExec(stmt);
    if (rc == SQLITE_OK) {
	rc = FlushThreads(storePtr, metaObj);
    }
    return rc;
}

/*
 *----------------------------------------------------------------------
 *
 * InsertRun, CprofStoreBeginRun --
 *
 *	Add a run to the file and make it the one flushes write. 'infoObj'
 *	is a dict of the run's columns fixed at its start (label, mode,
 *	clock, host, argv0, argv, cwd, tcl_version, tclcprof_version,
 *	rate_requested, test_file, test_name, has_lines, has_events,
 *	parent_run, start_time); the pid is the caller's, the start time
 *	now unless given.
 *
 *----------------------------------------------------------------------
 */

int
CprofDbInsertRun(
    CprofStore *storePtr,
    Tcl_Obj *infoObj)
{
    static const struct {
	const char *name;
	int type;		/* SQLITE_TEXT, SQLITE_INTEGER, SQLITE_FLOAT */
    } columns[] = {
	{"label", SQLITE_TEXT}, {"mode", SQLITE_TEXT},
	{"clock", SQLITE_TEXT}, {"host", SQLITE_TEXT},
	{"argv0", SQLITE_TEXT}, {"argv", SQLITE_TEXT}, {"cwd", SQLITE_TEXT},
	{"tcl_version", SQLITE_TEXT}, {"tclcprof_version", SQLITE_TEXT},
	{"rate_requested", SQLITE_FLOAT}, {"test_file", SQLITE_TEXT},
	{"test_name", SQLITE_TEXT}, {"has_lines", SQLITE_INTEGER},
	{"has_events", SQLITE_INTEGER}, {"parent_run", SQLITE_INTEGER},
	{NULL, 0}
    };
    sqlite3_stmt *stmt = NULL;
    Tcl_DString sql;
    int i, rc;

    Tcl_DStringInit(&sql);
    Tcl_DStringAppend(&sql, "INSERT INTO runs (status, start_time, pid", -1);
    for (i = 0; columns[i].name != NULL; i++) {
	Tcl_DStringAppend(&sql, ", ", 2);
	Tcl_DStringAppend(&sql, columns[i].name, -1);
    }
    Tcl_DStringAppend(&sql, ") VALUES ('running', ?1, ?2", -1);
    for (i = 0; columns[i].name != NULL; i++) {
	char buf[16];

	snprintf(buf, sizeof(buf), ", ?%d", i + 3);
	Tcl_DStringAppend(&sql, buf, -1);
    }
    Tcl_DStringAppend(&sql, ")", 1);
    rc = sqlite3_prepare_v2(storePtr->db, Tcl_DStringValue(&sql), -1, &stmt,
	    NULL);
    Tcl_DStringFree(&sql);
    if (rc == SQLITE_OK) {
	double start = MetaDouble(infoObj, "start_time", NULL, &i);

	sqlite3_bind_double(stmt, 1, i ? start : CprofWallSeconds());
	sqlite3_bind_int64(stmt, 2, (sqlite3_int64) getpid());
	for (i = 0; columns[i].name != NULL; i++) {
	    Tcl_Obj *valueObj = CprofDbMetaGet(infoObj, columns[i].name, NULL);
	    Tcl_WideInt w;
	    double d;

	    if (valueObj == NULL) {
		continue;
	    }
	    if (columns[i].type == SQLITE_INTEGER) {
		if (Tcl_GetWideIntFromObj(NULL, valueObj, &w) == TCL_OK) {
		    sqlite3_bind_int64(stmt, i + 3, w);
		}
	    } else if (columns[i].type == SQLITE_FLOAT) {
		if (Tcl_GetDoubleFromObj(NULL, valueObj, &d) == TCL_OK) {
		    sqlite3_bind_double(stmt, i + 3, d);
		}
	    } else {
		CprofDbBindObj(stmt, i + 3, valueObj);
	    }
	}
	rc = CprofDbExec(stmt);
	sqlite3_finalize(stmt);
    }
    if (rc == SQLITE_OK) {
	storePtr->runId = sqlite3_last_insert_rowid(storePtr->db);
	storePtr->pid = getpid();
	storePtr->eventsWritten = 0;
	storePtr->clearPending = 0;
	storePtr->numTreeFrames = 0;
	CprofDbForgetShadows(storePtr);
    }
    return rc;
}

/*
 *----------------------------------------------------------------------
 *
 * FlushBody, CprofStoreFlush --
 *
 *	Bring the run in the file up to date with the profile in memory, in
 *	one transaction (Write). 'metaObj' is the profile's meta; 'final': the run
 *	is over (its end time and the procedures defined are written).
 *
 * Results:
 *	TCL_OK, or TCL_ERROR with a TCLCPROF DB error in interp (if not
 *	NULL) and in the store's last error; the data in memory is kept and
 *	the next flush writes everything again.
 *
 *----------------------------------------------------------------------
 */

static int
FlushBody(
    CprofStore *storePtr,
    CprofState *statePtr,
    Tcl_Obj *metaObj,
    int final,
    int *eventsPtr)
{
    int mode = statePtr->options.mode, rc = SQLITE_OK;
    sqlite3 *db = storePtr->db;

    if (storePtr->clearPending) {
	static const char *const tables[] = {
	    "nodes", "lines", "events", "coverage_commands",
	    "coverage_lines", "coverage_procs", "node_lines", "memory_nodes",
	    "memory_node_lines", "timelines",
	    NULL
	};
	int i;

	for (i = 0; rc == SQLITE_OK && tables[i] != NULL; i++) {
	    char *sql = sqlite3_mprintf("DELETE FROM %s WHERE run = %lld",
		    tables[i], (long long) storePtr->runId);

	    rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	    sqlite3_free(sql);
	}
    }
    if (rc == SQLITE_OK) {
	switch (mode) {
	case CPROF_MODE_SAMPLE:
	    rc = FlushSampleTree(storePtr, statePtr, 0);
	    if (rc == SQLITE_OK && statePtr->options.memory) {
		rc = FlushMemoryTree(storePtr, statePtr, 2);
	    }
	    break;
	case CPROF_MODE_EXACT:
	    rc = FlushExactTree(storePtr, statePtr, 0);
	    break;
	case CPROF_MODE_BOTH:
	    rc = FlushSampleTree(storePtr, statePtr, 0);
	    if (rc == SQLITE_OK) {
		rc = FlushExactTree(storePtr, statePtr, 1);
	    }
	    break;
	case CPROF_MODE_MEMORY:
	    rc = FlushMemoryTree(storePtr, statePtr, 0);
	    break;
	}
    }
    if (rc == SQLITE_OK && mode != CPROF_MODE_SAMPLE
	    && mode != CPROF_MODE_MEMORY) {
	if (statePtr->options.lines && mode != CPROF_MODE_COVERAGE) {
	    rc = FlushLines(storePtr, statePtr);
	}
	if (rc == SQLITE_OK && statePtr->options.events) {
	    rc = FlushEvents(storePtr, statePtr, final, eventsPtr);
	}
	if (rc == SQLITE_OK) {
	    /*
	     * The procedures defined are read when the run ends, unless it
	     * ends with its interpreter deleted: they are gone by then.
	     */

	    rc = FlushCoverage(storePtr, statePtr, final
		    && !Tcl_InterpDeleted(statePtr->interp));
	}
    }
    if (rc == SQLITE_OK) {
	rc = FlushHandlers(storePtr, statePtr);
    }
    if (rc == SQLITE_OK) {
	rc = CprofDbFlushRun(storePtr, metaObj, final);
    }
    return rc;
}

/*
 * Record a failure of a write: the error (in interp, and as the store's
 * last error), the transaction rolled back, the shadows forgotten.
 */

void
CprofDbWriteFailed(
    Tcl_Interp *interp,
    CprofStore *storePtr,
    int rc)
{
    Tcl_Obj *msgObj = Tcl_ObjPrintf("cannot write profile database \"%s\": %s",
	    Tcl_GetString(storePtr->pathObj), storePtr->db
	    ? sqlite3_errmsg(storePtr->db) : sqlite3_errstr(rc));

    CprofDbError(interp, storePtr->pathObj, storePtr->db, rc, "write");
    if (storePtr->lastErrorObj) {
	Tcl_DecrRefCount(storePtr->lastErrorObj);
    }
    storePtr->lastErrorObj = msgObj;
    Tcl_IncrRefCount(msgObj);
    snprintf(storePtr->lastErrorClass, sizeof(storePtr->lastErrorClass),
	    "%s", CprofDbErrorClass(rc));
    if (storePtr->db != NULL) {
	sqlite3_exec(storePtr->db, "ROLLBACK", NULL, NULL, NULL);
    }
    storePtr->numTreeFrames = 0;
    CprofDbForgetShadows(storePtr);
}

static void
WriteDone(
    CprofStore *storePtr,
    int events,
    uint64_t t0)
{
    storePtr->eventsWritten = events;
    storePtr->clearPending = 0;
    storePtr->flushes++;
    storePtr->lastFlushMs = (CprofClockNs(CLOCK_MONOTONIC) - t0) / 1e6;
    if (storePtr->lastErrorObj) {
	Tcl_DecrRefCount(storePtr->lastErrorObj);
	storePtr->lastErrorObj = NULL;
    }
}

/*
 * Open the store's file for a write, the error recorded as the store's
 * last error too.
 */

int
CprofDbConnectForWrite(
    Tcl_Interp *interp,
    CprofStore *storePtr,
    Tcl_Interp *scratchInterp)
{
    Tcl_Interp *useInterp = interp ? interp : scratchInterp;
    Tcl_InterpState saved = NULL;
    int code;

    if (interp == NULL) {
	saved = Tcl_SaveInterpState(scratchInterp, TCL_OK);
    }
    code = CprofDbConnect(useInterp, storePtr);
    if (code != TCL_OK) {
	Tcl_Obj *msgObj = Tcl_GetObjResult(useInterp);
	Tcl_Obj *optsObj = Tcl_GetReturnOptions(useInterp, code);
	Tcl_Obj *keyObj = Tcl_NewStringObj("-errorcode", -1);
	Tcl_Obj *ecObj = NULL, *classObj = NULL;

	if (storePtr->lastErrorObj) {
	    Tcl_DecrRefCount(storePtr->lastErrorObj);
	}

	/*
	 * The class of the failure as the open gave it (BUSY for a lock
	 * held past the busy timeout, GONE, FOREIGN, ...).
	 */

	Tcl_IncrRefCount(optsObj);
	Tcl_IncrRefCount(keyObj);
	Tcl_DictObjGet(NULL, optsObj, keyObj, &ecObj);
	if (ecObj != NULL) {
	    Tcl_ListObjIndex(NULL, ecObj, 2, &classObj);
	}
	snprintf(storePtr->lastErrorClass, sizeof(storePtr->lastErrorClass),
		"%s", classObj ? Tcl_GetString(classObj) : "OPEN");
	Tcl_DecrRefCount(keyObj);
	Tcl_DecrRefCount(optsObj);
	storePtr->lastErrorObj = Tcl_DuplicateObj(msgObj);
	Tcl_IncrRefCount(storePtr->lastErrorObj);
	storePtr->numTreeFrames = 0;
	CprofDbForgetShadows(storePtr);
    }
    if (saved != NULL) {
	Tcl_RestoreInterpState(scratchInterp, saved);
    }
    return code;
}

/*
 * One write, one transaction: a new run (infoObj not NULL) and/or the
 * current profile (statePtr not NULL; 'final': the run's last state). On
 * failure nothing of it is in the file and a new run has no id.
 */

static int		WriteGuarded(Tcl_Interp *interp,
			    CprofStore *storePtr, CprofState *statePtr,
			    Tcl_Obj *infoObj, Tcl_Obj *metaObj, int final);

static int
Write(
    Tcl_Interp *interp,
    CprofStore *storePtr,
    CprofState *statePtr,
    Tcl_Obj *infoObj,
    Tcl_Obj *metaObj,
    int final)
{
    int code;

    /*
     * SQLite's allocations are the profiler's own: not counted by a
     * memory profile.
     */

    CprofMemGuard(1);
    code = WriteGuarded(interp, storePtr, statePtr, infoObj, metaObj,
	    final);
    CprofMemGuard(0);
    return code;
}

static int
WriteGuarded(
    Tcl_Interp *interp,
    CprofStore *storePtr,
    CprofState *statePtr,
    Tcl_Obj *infoObj,
    Tcl_Obj *metaObj,
    int final)
{
    int rc, events = storePtr->eventsWritten;
    uint64_t t0 = CprofClockNs(CLOCK_MONOTONIC);

    if (CprofDbConnectForWrite(interp, storePtr,
	    statePtr ? statePtr->interp : NULL) != TCL_OK) {
	return TCL_ERROR;
    }
    rc = sqlite3_exec(storePtr->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc == SQLITE_OK && infoObj != NULL) {
	rc = CprofDbInsertRun(storePtr, infoObj);
	events = 0;
    }
    if (rc == SQLITE_OK && statePtr != NULL) {
	rc = FlushBody(storePtr, statePtr, metaObj, final, &events);
    }
    if (rc == SQLITE_OK) {
	rc = sqlite3_exec(storePtr->db, "COMMIT", NULL, NULL, NULL);
    }
    if (rc != SQLITE_OK) {
	CprofDbWriteFailed(interp, storePtr, rc);
	if (infoObj != NULL) {
	    storePtr->runId = 0;
	}
	CprofDbDisconnect(storePtr, 0);
	return TCL_ERROR;
    }
    if (statePtr != NULL) {
	WriteDone(storePtr, events, t0);
    }
    CprofDbDisconnect(storePtr, final);
    return TCL_OK;
}

int
CprofStoreBeginRun(
    Tcl_Interp *interp,
    CprofStore *storePtr,
    Tcl_Obj *infoObj)
{
    return Write(interp, storePtr, NULL, infoObj, NULL, 0);
}

int
CprofStoreFlush(
    Tcl_Interp *interp,
    CprofStore *storePtr,
    CprofState *statePtr,
    Tcl_Obj *metaObj,
    int final)
{
    return Write(interp, storePtr, statePtr, NULL, metaObj, final);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofStoreSave --
 *
 *	Write a profile whole as a new run, in one transaction: the run is
 *	in the file complete, or not at all.
 *
 *----------------------------------------------------------------------
 */

int
CprofStoreSave(
    Tcl_Interp *interp,
    CprofStore *storePtr,
    CprofState *statePtr,
    Tcl_Obj *infoObj,
    Tcl_Obj *metaObj)
{
    return Write(interp, storePtr, statePtr, infoObj, metaObj, 1);
}

/*
 * The error of the last failed flush as a Tcl error (for a flush made
 * without an interpreter to report to).
 */

int
CprofStoreLastError(
    Tcl_Interp *interp,
    CprofStore *storePtr)
{
    if (storePtr->lastErrorObj == NULL) {
	return TCL_OK;
    }
    Tcl_SetObjResult(interp, storePtr->lastErrorObj);
    Tcl_SetErrorCode(interp, "TCLCPROF", "DB", storePtr->lastErrorClass,
	    Tcl_GetString(storePtr->pathObj), NULL);
    return TCL_ERROR;
}

