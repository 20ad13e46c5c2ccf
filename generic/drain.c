/*
 * drain.c --
 *
 *	From raw samples to the in-memory call tree: drain the sampler's
 *	ring, splice each sample's Tcl frames into its native frames, name
 *	the native frames, drop what the options hide, and add the stack to
 *	the call tree.
 *
 *	The call tree has one node per distinct path from the root; each node
 *	carries "self" (weight of samples whose innermost kept frame is that
 *	node, "In") and "total" (weight of samples passing through it,
 *	"Under"). A recursive function appears as a chain of nodes, each
 *	counted once per sample. Memory grows with the number of distinct
 *	paths, not with run length, and is capped at CPROF_TREE_MAX_NODES;
 *	past that, new paths are cut at their deepest existing node and the
 *	folded weight is counted.
 *
 *	C frames with debug information carry their source line (where the
 *	sampled instruction, or the call to the next frame, is): each
 *	node keeps the weight of its samples by line, and by line of the
 *	call to each child (CprofNodeLine), for reports by line and the
 *	exports that place costs at lines.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _GNU_SOURCE
#   define _GNU_SOURCE
#endif
#include "tclcprofInt.h"
#include "captureframes.h"
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

/*
 *----------------------------------------------------------------------
 *
 * CprofTreeInit, CprofTreeFree --
 *
 *----------------------------------------------------------------------
 */

void
CprofTreeInit(
    CprofTree *treePtr)
{
    memset(treePtr, 0, sizeof(CprofTree));
    Tcl_InitHashTable(&treePtr->frameIndex,
	    (int) (sizeof(CprofFrameDef) / sizeof(int)));
    Tcl_InitHashTable(&treePtr->childIndex, 2);
    Tcl_InitHashTable(&treePtr->lineIndex, 4);
    treePtr->capNodes = 1024;
    treePtr->nodes = (CprofNode *) ckalloc(treePtr->capNodes
	    * sizeof(CprofNode));
    treePtr->numNodes = 1;
    memset(&treePtr->nodes[0], 0, sizeof(CprofNode));
    treePtr->nodes[0].frame = -1;
    treePtr->nodes[0].parent = -1;
    treePtr->nodes[0].firstChild = -1;
    treePtr->nodes[0].nextSibling = -1;
    treePtr->nodes[0].exact = -1;
    CprofTimelineInit(&treePtr->timeline);
}

void
CprofTreeFree(
    CprofTree *treePtr)
{
    CprofNameRelease(&treePtr->refs);
    CprofTimelineFree(&treePtr->timeline);
    Tcl_DeleteHashTable(&treePtr->frameIndex);
    Tcl_DeleteHashTable(&treePtr->childIndex);
    Tcl_DeleteHashTable(&treePtr->lineIndex);
    if (treePtr->lines) {
	ckfree(treePtr->lines);
    }
    if (treePtr->frames) {
	ckfree(treePtr->frames);
    }
    if (treePtr->nodes) {
	ckfree(treePtr->nodes);
    }
    memset(treePtr, 0, sizeof(CprofTree));
}

/*
 * Empty a tree for a new profile, keeping its arrays up to
 * CPROF_KEEP_BYTES each (a run started after another finds them
 * allocated, instead of growing them from the heap of the program it
 * profiles, between the program's blocks; a huge tree's are given back).
 */

void
CprofTreeReset(
    CprofTree *treePtr)
{
    CprofFrameDef *frames = treePtr->frames;
    CprofNode *nodes = treePtr->nodes;
    CprofNodeLine *lines = treePtr->lines;
    int capFrames = treePtr->capFrames, capNodes = treePtr->capNodes;
    int capLines = treePtr->capLines;

    if ((size_t) capFrames * sizeof(CprofFrameDef) > CPROF_KEEP_BYTES) {
	ckfree(frames);
	frames = NULL;
    }
    if ((size_t) capLines * sizeof(CprofNodeLine) > CPROF_KEEP_BYTES) {
	ckfree(lines);
	lines = NULL;
    }
    if ((size_t) capNodes * sizeof(CprofNode) > CPROF_KEEP_BYTES) {
	ckfree(nodes);
	nodes = NULL;
    }
    treePtr->frames = NULL;
    treePtr->nodes = NULL;
    treePtr->lines = NULL;
    CprofTreeFree(treePtr);
    CprofTreeInit(treePtr);
    if (nodes != NULL && capNodes > treePtr->capNodes) {
	memcpy(nodes, treePtr->nodes, sizeof(CprofNode));
	ckfree(treePtr->nodes);
	treePtr->nodes = nodes;
	treePtr->capNodes = capNodes;
    } else if (nodes != NULL) {
	ckfree(nodes);
    }
    treePtr->frames = frames;
    treePtr->capFrames = frames != NULL ? capFrames : 0;
    treePtr->lines = lines;
    treePtr->capLines = lines != NULL ? capLines : 0;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofTreeFrame --
 *
 *	The index of a frame definition, added if new.
 *
 *----------------------------------------------------------------------
 */

int
CprofTreeFrame(
    CprofTree *treePtr,
    int isC,
    int nameId,
    int moduleId,
    int tclKind,
    int interpId)
{
    CprofFrameDef key;
    Tcl_HashEntry *hPtr;
    int isNew, index;

    key.isC = isC;
    key.nameId = nameId;
    key.moduleId = isC ? moduleId : -1;
    key.tclKind = isC ? -1 : tclKind;
    key.interpId = isC ? -1 : interpId;
    hPtr = Tcl_CreateHashEntry(&treePtr->frameIndex, (char *) &key, &isNew);
    if (!isNew) {
	return PTR2INT(Tcl_GetHashValue(hPtr));
    }
    if (treePtr->numFrames == treePtr->capFrames) {
	treePtr->capFrames = treePtr->capFrames ? 2 * treePtr->capFrames
		: 256;
	treePtr->frames = (CprofFrameDef *) ckrealloc(treePtr->frames,
		treePtr->capFrames * sizeof(CprofFrameDef));
    }
    index = treePtr->numFrames++;
    treePtr->frames[index] = key;
    Tcl_SetHashValue(hPtr, INT2PTR(index));
    CprofNameHold(&treePtr->refs, key.nameId);
    CprofNameHold(&treePtr->refs, key.moduleId);
    CprofNameHold(&treePtr->refs, key.interpId);
    return index;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofTreeAdd, CprofTreeAddLines --
 *
 *	Add one stack (frame indices, outermost first) with its weight,
 *	standing for 'count' samples; return the node it ends at.
 *	'exact', when not NULL, gives for each frame the exact call-tree
 *	node of its Tcl path (-1 for C frames): recorded on the node.
 *	'fileIds' and 'lines', when not NULL, give each frame's source
 *	line (a line of 0: none): recorded as the node's line, with the
 *	next frame's node as the child called from it (-1 for the last).
 *
 *----------------------------------------------------------------------
 */

int
CprofTreeAdd(
    CprofTree *treePtr,
    const int *frames,
    const int *exact,
    int numFrames,
    uint64_t count,
    uint64_t weight)
{
    return CprofTreeAddLines(treePtr, frames, exact, NULL, NULL, numFrames,
	    count, weight);
}

static void
AddLine(
    CprofTree *treePtr,
    int node,
    int child,
    int fileId,
    int line,
    uint64_t weight)
{
    int key[4], isNew;
    Tcl_HashEntry *hPtr;

    key[0] = node;
    key[1] = child;
    key[2] = fileId;
    key[3] = line;
    if (treePtr->numLines >= CPROF_TREE_MAX_NODES) {
	hPtr = Tcl_FindHashEntry(&treePtr->lineIndex, (char *) key);
	if (hPtr != NULL) {
	    treePtr->lines[PTR2INT(Tcl_GetHashValue(hPtr))].weight += weight;
	}
	return;
    }
    hPtr = Tcl_CreateHashEntry(&treePtr->lineIndex, (char *) key, &isNew);
    if (isNew) {
	CprofNodeLine *recPtr;

	if (treePtr->numLines == treePtr->capLines) {
	    treePtr->capLines = treePtr->capLines ? 2 * treePtr->capLines
		    : 256;
	    treePtr->lines = (CprofNodeLine *) ckrealloc(treePtr->lines,
		    treePtr->capLines * sizeof(CprofNodeLine));
	}
	recPtr = &treePtr->lines[treePtr->numLines];
	recPtr->node = node;
	recPtr->child = child;
	recPtr->fileId = fileId;
	recPtr->line = line;
	recPtr->weight = 0;
	CprofNameHold(&treePtr->refs, fileId);
	Tcl_SetHashValue(hPtr, INT2PTR(treePtr->numLines));
	treePtr->numLines++;
    }
    treePtr->lines[PTR2INT(Tcl_GetHashValue(hPtr))].weight += weight;
}

int
CprofTreeAddLines(
    CprofTree *treePtr,
    const int *frames,
    const int *exact,
    const int *fileIds,
    const int *lines,
    int numFrames,
    uint64_t count,
    uint64_t weight)
{
    int node = 0, i, lineAt = -1;

    treePtr->samples += count;
    treePtr->weight += weight;
    treePtr->nodes[0].total += weight;
    for (i = 0; i < numFrames; i++) {
	int key[2], isNew, child;
	Tcl_HashEntry *hPtr;

	key[0] = node;
	key[1] = frames[i];
	if (treePtr->numNodes >= CPROF_TREE_MAX_NODES) {
	    hPtr = Tcl_FindHashEntry(&treePtr->childIndex, (char *) key);
	    if (hPtr == NULL) {
		treePtr->truncatedNodes += weight;
		break;
	    }
	    isNew = 0;
	} else {
	    hPtr = Tcl_CreateHashEntry(&treePtr->childIndex, (char *) key,
		    &isNew);
	}
	if (isNew) {
	    CprofNode *nPtr;

	    if (treePtr->numNodes == treePtr->capNodes) {
		treePtr->capNodes *= 2;
		treePtr->nodes = (CprofNode *) ckrealloc(treePtr->nodes,
			treePtr->capNodes * sizeof(CprofNode));
	    }
	    child = treePtr->numNodes++;
	    nPtr = &treePtr->nodes[child];
	    nPtr->frame = frames[i];
	    nPtr->parent = node;
	    nPtr->firstChild = -1;
	    nPtr->nextSibling = treePtr->nodes[node].firstChild;
	    nPtr->self = 0;
	    nPtr->total = 0;
	    nPtr->exact = -1;
	    treePtr->nodes[node].firstChild = child;
	    Tcl_SetHashValue(hPtr, INT2PTR(child));
	} else {
	    child = PTR2INT(Tcl_GetHashValue(hPtr));
	}
	if (lineAt >= 0) {
	    AddLine(treePtr, node, child, fileIds[lineAt], lines[lineAt],
		    weight);
	}
	node = child;
	lineAt = (lines != NULL && lines[i] > 0) ? i : -1;
	treePtr->nodes[node].total += weight;
	if (exact != NULL && exact[i] >= 0 && treePtr->nodes[node].exact < 0) {
	    treePtr->nodes[node].exact = exact[i];
	}
    }
    if (lineAt >= 0) {
	AddLine(treePtr, node, -1, fileIds[lineAt], lines[lineAt], weight);
    }
    treePtr->nodes[node].self += weight;
    treePtr->lastLeaf = node;
    return node;
}

/*
 * Weight the sampler could not take as a sample (CprofSampler.tailWeight:
 * the timer's expirations after the last signal it handled), charged to
 * the stack of the last sample: what the thread was last seen doing.
 * Returns 0 when there is no sample to charge it to.
 */

int
CprofTreeAddTail(
    CprofTree *treePtr,
    uint64_t weight)
{
    int node = treePtr->lastLeaf;

    if (weight == 0 || node <= 0 || node >= treePtr->numNodes) {
	return 0;			/* No sample yet: nowhere to put it. */
    }
    treePtr->weight += weight;
    treePtr->nodes[node].self += weight;
    if (!treePtr->timeline.manual && treePtr->timeline.origin != 0) {
	CprofTimelineAdd(&treePtr->timeline, node,
		CprofClockNs(CLOCK_MONOTONIC), 0, weight);
    }
    for (; node >= 0; node = treePtr->nodes[node].parent) {
	treePtr->nodes[node].total += weight;
    }
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofTreeToObj --
 *
 *	The tree as nested dicts: {name kind self total children} plus
 *	tclkind (Tcl frames) or module (C frames), and, given the exact
 *	timing data of mode both, the exact figures of Tcl frames (calls
 *	total_ns self_ns min_ns max_ns). The root has name {} and kind
 *	root. C source lines: self_lines on a C frame's node (its self
 *	weight by line, {file line weight ...}), caller_lines on a node
 *	whose parent is a C frame (its total by the parent's line).
 *	CprofTreeToObjEx calls nodeProc, when not NULL, with each node's
 *	dict to add figures of the caller's (drainmemory.c).
 *
 *----------------------------------------------------------------------
 */

typedef struct NodeProc {
    void (*proc)(void *data, int node, Tcl_Obj *dictObj);
    void *data;
    Tcl_Obj **times;		/* Per node its timeline's cells, or NULL
				 * (draintimeline.c). */
    Tcl_Obj *timesKey;
} NodeProc;

/*
 * One node's dict without its children (NodeDict), and the whole tree
 * built from them depth first with a stack of the nodes open on the
 * path (TreeDicts): a tree is as deep as the program's recursion
 * (100,000 levels and more), so no C code recurses per level.
 */

typedef struct OpenNode {
    int child;			/* Next child to visit, -1: none left. */
    Tcl_Obj *dictObj;		/* The node's dict, children not put. */
    Tcl_Obj *kidsObj;		/* Its children's dicts so far. */
} OpenNode;

static Tcl_Obj *
NodeDict(
    CprofTree *treePtr,
    CprofExact *exactPtr,
    int node,
    Tcl_Obj *const keys[],
    Tcl_Obj **lineLists,
    const NodeProc *npPtr)
{
    CprofNode *nPtr = &treePtr->nodes[node];
    Tcl_Obj *dictObj = Tcl_NewDictObj();

    if (nPtr->frame < 0) {
	Tcl_DictObjPut(NULL, dictObj, keys[0], Tcl_NewObj());
	Tcl_DictObjPut(NULL, dictObj, keys[1], Tcl_NewStringObj("root", -1));
    } else {
	CprofFrameDef *fPtr = &treePtr->frames[nPtr->frame];
	const char *name = CprofNameString(fPtr->nameId);

	Tcl_DictObjPut(NULL, dictObj, keys[0],
		Tcl_NewStringObj(name ? name : "?", -1));
	Tcl_DictObjPut(NULL, dictObj, keys[1],
		Tcl_NewStringObj(fPtr->isC == CPROF_FD_THREAD ? "thread"
		: fPtr->isC == CPROF_FD_LABELS ? "labels"
		: fPtr->isC ? "c" : "tcl", -1));
	if (fPtr->isC == CPROF_FD_LABELS) {
	    /* The name is the set. */
	} else if (fPtr->isC == CPROF_FD_THREAD) {
	    const char *id = fPtr->moduleId >= 0
		    ? CprofNameString(fPtr->moduleId) : NULL;

	    Tcl_DictObjPut(NULL, dictObj, Tcl_NewStringObj("thread", -1),
		    Tcl_NewStringObj(id ? id : "", -1));
	} else if (fPtr->isC) {
	    const char *mod = fPtr->moduleId >= 0
		    ? CprofNameString(fPtr->moduleId) : NULL;

	    Tcl_DictObjPut(NULL, dictObj, keys[5],
		    Tcl_NewStringObj(mod ? mod : "", -1));
	} else {
	    int origin = CprofNameOrigin(fPtr->nameId);

	    const char *ip = fPtr->interpId >= 0
		    ? CprofNameString(fPtr->interpId) : NULL;

	    Tcl_DictObjPut(NULL, dictObj, keys[6],
		    Tcl_NewStringObj(CprofKindName(fPtr->tclKind), -1));
	    Tcl_DictObjPut(NULL, dictObj, keys[9],
		    Tcl_NewStringObj(ip ? ip : "", -1));
	    if (origin >= 0) {
		Tcl_DictObjPut(NULL, dictObj, Tcl_NewStringObj("origin", -1),
			Tcl_NewStringObj(CprofNameString(origin), -1));
	    }
	}
    }
    Tcl_DictObjPut(NULL, dictObj, keys[2],
	    Tcl_NewWideIntObj((Tcl_WideInt) nPtr->self));
    Tcl_DictObjPut(NULL, dictObj, keys[3],
	    Tcl_NewWideIntObj((Tcl_WideInt) nPtr->total));
    if (exactPtr != NULL && nPtr->exact > 0) {
	CprofExactNodeFigures(exactPtr, nPtr->exact, dictObj);
    }
    if (npPtr->proc != NULL) {
	npPtr->proc(npPtr->data, node, dictObj);
    }
    if (npPtr->times != NULL && npPtr->times[node] != NULL) {
	Tcl_DictObjPut(NULL, dictObj, npPtr->timesKey, npPtr->times[node]);
    }
    if (lineLists != NULL && lineLists[2 * node] != NULL) {
	Tcl_DictObjPut(NULL, dictObj, keys[7], lineLists[2 * node]);
    }
    if (lineLists != NULL && lineLists[2 * node + 1] != NULL) {
	Tcl_DictObjPut(NULL, dictObj, keys[8], lineLists[2 * node + 1]);
    }
    return dictObj;
}

static Tcl_Obj *
TreeDicts(
    CprofTree *treePtr,
    CprofExact *exactPtr,
    Tcl_Obj *const keys[],
    Tcl_Obj **lineLists,
    const NodeProc *npPtr)
{
    OpenNode *path;
    Tcl_Obj *resultObj = NULL;
    int depth = 0, cap = 64;

    path = (OpenNode *) ckalloc(cap * sizeof(OpenNode));
    path[0].child = treePtr->nodes[0].firstChild;
    path[0].dictObj = NodeDict(treePtr, exactPtr, 0, keys, lineLists,
	    npPtr);
    path[0].kidsObj = Tcl_NewListObj(0, NULL);
    while (depth >= 0) {
	OpenNode *topPtr = &path[depth];
	int child = topPtr->child;

	if (child >= 0) {
	    topPtr->child = treePtr->nodes[child].nextSibling;
	    if (++depth == cap) {
		cap *= 2;
		path = (OpenNode *) ckrealloc(path, cap * sizeof(OpenNode));
	    }
	    path[depth].child = treePtr->nodes[child].firstChild;
	    path[depth].dictObj = NodeDict(treePtr, exactPtr, child, keys,
		    lineLists, npPtr);
	    path[depth].kidsObj = Tcl_NewListObj(0, NULL);
	    continue;
	}
	Tcl_DictObjPut(NULL, topPtr->dictObj, keys[4], topPtr->kidsObj);
	if (depth == 0) {
	    resultObj = topPtr->dictObj;
	} else {
	    Tcl_ListObjAppendElement(NULL, path[depth - 1].kidsObj,
		    topPtr->dictObj);
	}
	depth--;
    }
    ckfree(path);
    return resultObj;
}

Tcl_Obj *
CprofTreeToObj(
    CprofTree *treePtr,
    CprofExact *exactPtr)
{
    return CprofTreeToObjEx(treePtr, exactPtr, NULL, NULL);
}

Tcl_Obj *
CprofTreeToObjEx(
    CprofTree *treePtr,
    CprofExact *exactPtr,
    void (*nodeProc)(void *data, int node, Tcl_Obj *dictObj),
    void *data)
{
    NodeProc np;
    static const char *const keyNames[] = {
	"name", "kind", "self", "total", "children", "module", "tclkind",
	"self_lines", "caller_lines", "interp"
    };
    Tcl_Obj *keys[10], *resultObj, **lineLists = NULL;
    int i;

    for (i = 0; i < 10; i++) {
	keys[i] = Tcl_NewStringObj(keyNames[i], -1);
	Tcl_IncrRefCount(keys[i]);
    }
    if (treePtr->numLines > 0) {
	lineLists = (Tcl_Obj **) ckalloc(2 * treePtr->numNodes
		* sizeof(Tcl_Obj *));
	memset(lineLists, 0, 2 * treePtr->numNodes * sizeof(Tcl_Obj *));
	for (i = 0; i < treePtr->numLines; i++) {
	    CprofNodeLine *recPtr = &treePtr->lines[i];
	    Tcl_Obj **listPtr = (recPtr->child < 0)
		    ? &lineLists[2 * recPtr->node]
		    : &lineLists[2 * recPtr->child + 1];
	    const char *file = CprofNameString(recPtr->fileId);

	    if (*listPtr == NULL) {
		*listPtr = Tcl_NewListObj(0, NULL);
	    }
	    Tcl_ListObjAppendElement(NULL, *listPtr,
		    Tcl_NewStringObj(file ? file : "", -1));
	    Tcl_ListObjAppendElement(NULL, *listPtr,
		    Tcl_NewIntObj(recPtr->line));
	    Tcl_ListObjAppendElement(NULL, *listPtr,
		    Tcl_NewWideIntObj((Tcl_WideInt) recPtr->weight));
	}
    }
    np.proc = nodeProc;
    np.data = data;
    np.times = treePtr->noTimes ? NULL
	    : CprofTimelineNodeLists(&treePtr->timeline, treePtr->numNodes);
    np.timesKey = Tcl_NewStringObj("times", -1);
    Tcl_IncrRefCount(np.timesKey);
    resultObj = TreeDicts(treePtr, exactPtr, keys, lineLists, &np);
    Tcl_DecrRefCount(np.timesKey);
    if (np.times != NULL) {
	ckfree(np.times);
    }
    if (lineLists != NULL) {
	ckfree(lineLists);
    }
    for (i = 0; i < 10; i++) {
	Tcl_DecrRefCount(keys[i]);
    }
    return resultObj;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofNodeLinesObjCmd --
 *
 *	::tclcprof::reportlib::NodeLines nodes -- of a list of node dicts
 *	(as reports lay a tree out), those with C source lines: a flat
 *	list {index self_lines caller_lines ...} (a key a node lacks is
 *	empty), so that reports and exports of trees without lines do not
 *	look at every node in Tcl.
 *
 *----------------------------------------------------------------------
 */

int
CprofNodeLinesObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Tcl_Obj **nodes, *keys[2], *resultObj;
    int i, k;
    Tcl_Size n;

    if (objc != 2) {
	CprofWrongArgs(interp, 1, objv, "nodes");
	return TCL_ERROR;
    }
    if (Tcl_ListObjGetElements(interp, objv[1], &n, &nodes) != TCL_OK) {
	return TCL_ERROR;
    }
    keys[0] = Tcl_NewStringObj("self_lines", -1);
    keys[1] = Tcl_NewStringObj("caller_lines", -1);
    Tcl_IncrRefCount(keys[0]);
    Tcl_IncrRefCount(keys[1]);
    resultObj = Tcl_NewListObj(0, NULL);
    for (i = 0; i < n; i++) {
	Tcl_Obj *valueObj[2] = {NULL, NULL};

	for (k = 0; k < 2; k++) {
	    if (Tcl_DictObjGet(NULL, nodes[i], keys[k], &valueObj[k])
		    != TCL_OK) {
		valueObj[k] = NULL;
	    }
	}
	if (valueObj[0] == NULL && valueObj[1] == NULL) {
	    continue;
	}
	Tcl_ListObjAppendElement(NULL, resultObj, Tcl_NewIntObj(i));
	for (k = 0; k < 2; k++) {
	    Tcl_ListObjAppendElement(NULL, resultObj,
		    valueObj[k] ? valueObj[k] : Tcl_NewObj());
	}
    }
    Tcl_DecrRefCount(keys[0]);
    Tcl_DecrRefCount(keys[1]);
    Tcl_SetObjResult(interp, resultObj);
    return TCL_OK;
}

/*
 * Whether a module is tclcprof's own library: its frames (the trace
 * callback, a drain) are the profiler's work inside Tcl's and are shown
 * with Tcl's internals.
 */

static int
IsOwnModule(
    int moduleId)
{
    static int ownId = -2;

    if (ownId == -2) {
	Dl_info info;

	ownId = -1;
	if (dladdr((void *) CprofAddSample, &info) && info.dli_fname) {
	    const char *base = strrchr(info.dli_fname, '/');

	    ownId = CprofNameIntern(base ? base + 1 : info.dli_fname, -1);
	}
    }
    return moduleId >= 0 && moduleId == ownId;
}

/*
 * Module classes, cached per module name id in statePtr->moduleFlags:
 * system libraries (libc, libm, the dynamic loader, libgcc, libpthread,
 * libdl, librt, zlib, the vDSO), and among them those whose frames head
 * every stack (libc's start-up code, the loader).
 */

#define MOD_UNKNOWN	0
#define MOD_USER	1
#define MOD_SYSTEM	2
#define MOD_STARTUP	3	/* A system library that runs start-up code. */

static int
ModuleClass(
    CprofState *statePtr,
    int moduleId)
{
    static const struct {
	const char *prefix;
	int class;
    } classes[] = {
	{"libc.so", MOD_STARTUP}, {"ld-linux", MOD_STARTUP},
	{"libm.so", MOD_SYSTEM}, {"libgcc_s", MOD_SYSTEM},
	{"libpthread", MOD_SYSTEM}, {"libdl.so", MOD_SYSTEM},
	{"librt.so", MOD_SYSTEM}, {"libz.so", MOD_SYSTEM},
	{"linux-vdso", MOD_SYSTEM}, {NULL, 0}
    };
    unsigned char *flagsPtr;

    if (moduleId < 0) {
	return MOD_USER;
    }
    if (moduleId >= statePtr->numModuleFlags) {
	int n = moduleId + 64;

	statePtr->moduleFlags = (unsigned char *) ckrealloc(
		statePtr->moduleFlags, n);
	memset(statePtr->moduleFlags + statePtr->numModuleFlags, MOD_UNKNOWN,
		n - statePtr->numModuleFlags);
	statePtr->numModuleFlags = n;
    }
    flagsPtr = &statePtr->moduleFlags[moduleId];
    if (*flagsPtr == MOD_UNKNOWN) {
	const char *name = CprofNameString(moduleId);
	int i;

	*flagsPtr = MOD_USER;
	for (i = 0; name != NULL && classes[i].prefix != NULL; i++) {
	    if (strncmp(name, classes[i].prefix,
		    strlen(classes[i].prefix)) == 0) {
		*flagsPtr = (unsigned char) classes[i].class;
		break;
	    }
	}
    }
    return *flagsPtr;
}

/*
 * Name ids the per-frame filters compare with, interned once per process
 * (ids are stable and the same in every thread).
 */

static struct {
    int ready;
    int start;			/* "_start" */
    int main;			/* "main" */
    int libcStart[3];		/* the functions of libc that call main */
    int idle;			/* "[idle]" */
    int tclpWait;		/* "TclpWaitForEvent": Tcl 9's
				 * Tcl_WaitForEvent tail-calls it, so the
				 * wait's stack shows it instead. */
} ids;

static void
InitIds(void)
{
    if (!ids.ready) {
	ids.start = CprofNameIntern("_start", -1);
	ids.main = CprofNameIntern("main", -1);
	ids.libcStart[0] = CprofNameIntern("__libc_start_call_main", -1);
	ids.libcStart[1] = CprofNameIntern("__libc_start_main", -1);
	ids.libcStart[2] = CprofNameIntern("__libc_start_main_impl", -1);
	ids.idle = CprofNameIntern("[idle]", -1);
	ids.tclpWait = CprofNameIntern("TclpWaitForEvent", -1);
	ids.ready = 1;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * TclFrameLine --
 *
 *	Sampled lines: the source line a kept Tcl frame of a sample was
 *	executing, the one at merged[i] (see drainlines.c). The frames right
 *	after it that are not shown (control commands, hidden frames) run
 *	its code too; after them comes what it was executing:
 *
 *	- a Tcl frame, of the same interpreter and with no native frame
 *	  in between (so invoked by its bytecode, not by a C function it
 *	  called): the line of that frame's call site;
 *	- the innermost frame of the bytecode engine, when the last of
 *	  them is at its interpreter's current level (the bytecode is its,
 *	  not that of a command without a frame, such as a coroutine made
 *	  before the start): the line of the pc it was interrupted at. The
 *	  candidates for that pc include stale words: pointers into the
 *	  bytecode of the frames outside it (its caller's, left in a
 *	  register), whose lines would put it on its caller's line. A
 *	  ByteCode that a call site of the sample says is run by another
 *	  frame (of another name: not a recursion) is no candidate
 *	  (OtherFramesCode);
 *	- anything else, or when those give no line: the call site of the
 *	  innermost frame not shown, if there is one.
 *
 * Results:
 *	1 and the file's name id and the line, or 0.
 *
 *----------------------------------------------------------------------
 */

static int
TclShown(
    CprofState *statePtr,
    const CprofTclRef *refPtr)
{
    return !((refPtr->kind == CPROF_KIND_CONTROL && !statePtr->options.control)
	    || (refPtr->flags & CPROF_FRAME_HIDDEN));
}

/*
 * The interpreter of a sample's Tcl frame: the sampler's own, or one whose
 * level stack it samples too (a CprofStack heads its CprofLevels).
 */

typedef char LevelsStackFirst[offsetof(CprofLevels, stack) == 0 ? 1 : -1];

static Tcl_Interp *
InterpOfFrame(
    CprofState *statePtr,
    int interpId)
{
    CprofSampler *sPtr = statePtr->samplerPtr;
    int i;

    if (interpId < 0) {
	return statePtr->interp;
    }
    for (i = 0; sPtr != NULL && i < sPtr->numExtra; i++) {
	CprofStack *stackPtr = sPtr->extra[i].stackPtr;

	if (stackPtr != NULL && sPtr->extra[i].interpId == interpId) {
	    return ((CprofLevels *) stackPtr)->interp;
	}
    }
    return NULL;
}

/*
 * The ByteCodes the sample's Tcl frames of one interpreter, up to 'lastPtr',
 * were invoked from (their siteCode), each run by the frame before it, or
 * by code outside every frame for the first: those run by a frame whose
 * name is not lastPtr's, which lastPtr does not run. At most 'max'.
 */

static int
OtherFramesCode(
    const CprofTclRef *tcl,
    const CprofSpliceEntry *merged,
    int n,
    const CprofTclRef *lastPtr,
    const void **codes,
    int max)
{
    const CprofTclRef *prevPtr = NULL;
    int k, num = 0;

    for (k = 0; k < n && num < max; k++) {
	const CprofTclRef *refPtr;

	if (!merged[k].isTcl) {
	    continue;
	}
	refPtr = &tcl[merged[k].index];
	if (refPtr->interpId != lastPtr->interpId) {
	    continue;
	}
	if (refPtr->siteCode != NULL
		&& (prevPtr == NULL || prevPtr->nameId != lastPtr->nameId)) {
	    codes[num++] = refPtr->siteCode;
	}
	if (refPtr == lastPtr) {
	    break;
	}
	prevPtr = refPtr;
    }
    return num;
}

static int
TclFrameLine(
    CprofState *statePtr,
    const CprofSample *samplePtr,
    const CprofTclRef *tcl,
    const CprofSpliceEntry *merged,
    int n,
    int i,
    int *fileIdPtr,
    int *linePtr)
{
    const CprofTclRef *framePtr = &tcl[merged[i].index];
    const CprofTclRef *hiddenPtr = NULL, *lastPtr = framePtr;
    Tcl_Interp *interp = InterpOfFrame(statePtr, framePtr->interpId);
    int j;

    if (interp == NULL) {
	return 0;
    }
    if (statePtr->srcLinesPtr == NULL) {
	statePtr->srcLinesPtr = CprofSrcLinesNew();
    }
    for (j = i + 1; j < n && merged[j].isTcl; j++) {
	const CprofTclRef *refPtr = &tcl[merged[j].index];

	if (refPtr->interpId != framePtr->interpId) {
	    j = n;
	    break;
	}
	if (TclShown(statePtr, refPtr)) {
	    if (refPtr->siteCode != NULL && CprofSrcLinesSite(
		    statePtr->srcLinesPtr, interp, refPtr->siteCode,
		    refPtr->siteOffset, fileIdPtr, linePtr)) {
		return 1;
	    }
	    break;
	}
	hiddenPtr = lastPtr = refPtr;
    }
    if (j < n && !merged[j].isTcl && merged[j].index == samplePtr->tebcFrame
	    && (lastPtr->flags & CPROF_REF_CURRENT)) {
	const void *others[CPROF_TCL_MAX];
	int numOthers = OtherFramesCode(tcl, merged, n, lastPtr, others,
		CPROF_TCL_MAX);

	if (CprofSrcLinesPc(statePtr->srcLinesPtr, interp, samplePtr->cand,
		samplePtr->nCand, others, numOthers, fileIdPtr, linePtr)) {
	    return 1;
	}
    }
    return hiddenPtr != NULL && hiddenPtr->siteCode != NULL
	    && CprofSrcLinesSite(statePtr->srcLinesPtr, interp,
	    hiddenPtr->siteCode, hiddenPtr->siteOffset, fileIdPtr, linePtr);
}

/*
 * -capture check: the procedures of a sample's level stack (the wrapper's)
 * against those read from Tcl's own frames (captureframes.c), which follow them
 * in tcl[]: they agree, or differ by the one innermost frame that one saw
 * before the other (a proc being entered or left), Tcl's going on outside
 * the wrapper's (procs already running at start). tclcprof's own procs
 * are left out (the wrapper does not push them). Counted apart from the
 * wrapper's checks against the trace (status: capture check frames_*),
 * the first disagreement kept. Returns the number of the level stack's
 * frames.
 */

static int
ProcIds(
    const CprofTclRef *refs,
    int n,
    int *ids)
{
    int i, k = 0;

    for (i = 0; i < n; i++) {
	const char *name;

	if (refs[i].interpId >= 0 || refs[i].kind != CPROF_KIND_PROC) {
	    continue;
	}
	name = CprofNameString(refs[i].nameId);
	if (name != NULL && strncmp(name, "::tclcprof::", 12) == 0) {
	    continue;
	}
	ids[k++] = refs[i].nameId;
    }
    return k;
}

/*
 * Whether b[0..nb) ends with a[0..na): Tcl's frames go on outside what
 * the wrapper saw (procs already running at start).
 */

static int
EndsWith(
    const int *b,
    int nb,
    const int *a,
    int na)
{
    return nb >= na && memcmp(a, b + nb - na, na * sizeof(int)) == 0;
}

static int
CheckFrames(
    CprofState *statePtr,
    const CprofTclRef *tcl,
    int nTcl,
    int truncated)
{
    CprofTclRef named[CPROF_TCL_MAX];
    int a[CPROF_TCL_MAX], b[CPROF_TCL_MAX];
    int nWrap = 0, nNamed, na, nb, agree;

    while (nWrap < nTcl && tcl[nWrap].nameId != CPROF_FRAMES_RAW) {
	nWrap++;
    }
    if (statePtr->framesPtr == NULL || truncated) {
	return nWrap;
    }
    nNamed = CprofFramesResolve(statePtr->framesPtr, tcl + nWrap,
	    nTcl - nWrap, NULL, named);
    na = ProcIds(tcl, nWrap, a);
    nb = ProcIds(named, nNamed, b);
    agree = EndsWith(b, nb, a, na) || (na > 0 && EndsWith(b, nb, a, na - 1))
	    || (nb > 0 && EndsWith(b, nb - 1, a, na));
    statePtr->framesChecks++;
    if (!agree) {
	statePtr->framesDisagreements++;
	if (statePtr->framesFirst[0] == '\0') {
	    Tcl_DString ds;
	    int i;

	    Tcl_DStringInit(&ds);
	    Tcl_DStringAppend(&ds, "wrap:", -1);
	    for (i = 0; i < na; i++) {
		Tcl_DStringAppend(&ds, " ", 1);
		Tcl_DStringAppend(&ds, CprofNameString(a[i]), -1);
	    }
	    Tcl_DStringAppend(&ds, "; frames:", -1);
	    for (i = 0; i < nb; i++) {
		Tcl_DStringAppend(&ds, " ", 1);
		Tcl_DStringAppend(&ds, CprofNameString(b[i]), -1);
	    }
	    snprintf(statePtr->framesFirst, sizeof(statePtr->framesFirst),
		    "%s", Tcl_DStringValue(&ds));
	    Tcl_DStringFree(&ds);
	}
    }
    return nWrap;
}

/*
 * -capture frames: name a sample's raw references (captureframes.c) into out[]
 * and place them among its native frames; mark the frames -include and
 * -exclude leave out, as the wrapper would not push them. Returns how
 * many were written.
 */

static int
NameRawFrames(
    CprofState *statePtr,
    const CprofSample *samplePtr,
    CprofTclRef *out)
{
    CprofNativeStack native;
    int i, n;

    if (statePtr->framesPtr == NULL) {
	return 0;
    }
    native.ip = samplePtr->ip;
    native.cfa = samplePtr->cfa;
    native.n = samplePtr->nNative;
    native.trampStart = statePtr->calib.trampStart;
    native.trampEnd = statePtr->calib.trampEnd;
    n = CprofFramesResolve(statePtr->framesPtr, samplePtr->tcl,
	    samplePtr->nTcl, &native, out);
    if (statePtr->exact.includeObj != NULL
	    || statePtr->exact.excludeObj != NULL) {
	for (i = 0; i < n; i++) {
	    if (out[i].interpId < 0 && CprofFrameHidden(statePtr,
		    out[i].nameId, out[i].kind)) {
		out[i].flags |= CPROF_FRAME_HIDDEN;
	    }
	}
    }
    return n;
}

/*
 * A drain put off (CprofDrainSoon: symbol tables are being read): the Tcl
 * frames of the samples waiting in the ring are named now, in place,
 * while what they point at lives (the bytecode of a loop whose script is
 * freed when the loop ends, a procedure deleted before the next drain);
 * their native frames wait for the tables. The ring's published slots are
 * the drain's: the handler writes only unpublished ones.
 */

static void
NameFramesEarly(
    CprofState *statePtr,
    CprofSampler *sPtr)
{
    CprofTclRef named[CPROF_TCL_MAX];
    CprofSample *samplePtr;
    uint32_t i;
    int n;

    if (statePtr->framesPtr == NULL) {
	return;
    }
    for (i = 0; (samplePtr = CprofSamplerPeekAt(sPtr, i)) != NULL; i++) {
	if ((samplePtr->flags & (CPROF_SAMPLE_RAW | CPROF_SAMPLE_FRAMES_CHECK))
		!= CPROF_SAMPLE_RAW) {
	    continue;
	}
	n = NameRawFrames(statePtr, samplePtr, named);
	if (n > CPROF_TCL_MAX) {
	    n = CPROF_TCL_MAX;
	}
	memcpy(samplePtr->tcl, named, n * sizeof(CprofTclRef));
	samplePtr->nTcl = (uint16_t) n;
	samplePtr->flags &= ~CPROF_SAMPLE_RAW;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CprofAddSample, CprofAddSampleTo --
 *
 *	Splice, name, filter and aggregate one raw sample, into the
 *	state's tree or the one given (memory samples: drainmemory.c).
 *	CprofAddSampleTo returns the node the sample ends at.
 *
 *----------------------------------------------------------------------
 */

void
CprofAddSample(
    CprofState *statePtr,
    const CprofSample *samplePtr)
{
    CprofAddSampleTo(statePtr, &statePtr->tree, samplePtr);
}

int
CprofAddSampleTo(
    CprofState *statePtr,
    CprofTree *treePtr,
    const CprofSample *samplePtr)
{
    CprofSpliceEntry merged[CPROF_NATIVE_MAX + CPROF_TCL_MAX];
    int frames[CPROF_NATIVE_MAX + CPROF_TCL_MAX + 1];
    int exact[CPROF_NATIVE_MAX + CPROF_TCL_MAX + 1];
    int fileIds[CPROF_NATIVE_MAX + CPROF_TCL_MAX + 1];
    int lines[CPROF_NATIVE_MAX + CPROF_TCL_MAX + 1];
    int labelFrames = 0;		/* 1: the stack starts with its labels. */
    int withExact = statePtr->exact.on && treePtr == &statePtr->tree;
    int tclLines = treePtr == &statePtr->tree && statePtr->samplerPtr != NULL
	    && statePtr->samplerPtr->lines;
    int n, i, kept = 0, unmatched, beyond, startup = 1;
    int native = statePtr->options.native;
    int leaf;
    int afterTcl = 0;		/* The last native frame was Tcl's own. */
    int callsMain = 0;		/* The last native frame was libc's start. */
    int moduleClass;
    const CprofTclRef *tcl = samplePtr->tcl;
    int nTcl = samplePtr->nTcl;
    CprofTclRef *keptTcl = NULL;
    CprofTclRef sortedTcl[CPROF_TCL_MAX];
    CprofTclRef rawTcl[CPROF_TCL_MAX];
    int idleOn = (statePtr->options.clock == CPROF_CLOCK_WALL
	    && treePtr == &statePtr->tree);
    int idleNode = -1;		/* Exact node of an [idle] frame pushed
				 * (mode both). */

    if (samplePtr->flags & CPROF_SAMPLE_CHECKED) {
	const uint64_t *c = samplePtr->check;

	/*
	 * -capture check: the two stacks agree, or differ by the one frame
	 * one capture saw before the other.
	 */

	statePtr->sampleChecks++;
	if (c[0] != c[2] && c[0] != c[3] && c[1] != c[2]) {
	    statePtr->sampleDisagreements++;
	}
    }

    InitIds();

    /*
     * -capture frames: the handler's raw references named (captureframes.c).
     */

    if ((samplePtr->flags & CPROF_SAMPLE_RAW)
	    && (samplePtr->flags & CPROF_SAMPLE_FRAMES_CHECK)) {
	/*
	 * -capture check: the level stack's frames are the sample's, Tcl's
	 * own frames (after them) are compared with them.
	 */

	nTcl = CheckFrames(statePtr, tcl, nTcl,
		(samplePtr->flags & CPROF_SAMPLE_TCL_TRUNC) != 0);
    } else if (samplePtr->flags & CPROF_SAMPLE_RAW) {
	nTcl = NameRawFrames(statePtr, samplePtr, rawTcl);
	tcl = rawTcl;
    }

    /*
     * Frames of several interpreters (child interpreters, sampled with
     * their parent's thread): in the order of their native frames, the
     * outermost (highest stack address) first; frames of one
     * interpreter keep their order.
     */

    for (i = 0; i < nTcl; i++) {
	if (tcl[i].interpId >= 0) {
	    break;
	}
    }
    if (i < nTcl && nTcl > 1) {
	int j;

	memcpy(sortedTcl, tcl, nTcl * sizeof(CprofTclRef));
	for (i = 1; i < nTcl; i++) {
	    CprofTclRef ref = sortedTcl[i];

	    for (j = i; j > 0 && ref.anchor != 0
		    && sortedTcl[j - 1].anchor != 0
		    && sortedTcl[j - 1].anchor < ref.anchor
		    && sortedTcl[j - 1].interpId != ref.interpId; j--) {
		sortedTcl[j] = sortedTcl[j - 1];
	    }
	    sortedTcl[j] = ref;
	}
	tcl = sortedTcl;
    }

    /*
     * Waiting: a sample whose native stack is inside Tcl_WaitForEvent,
     * on the wall clock, gets a frame [idle] in place of what is inside
     * the wait (captureevents.c pushes one for exact timing: that one is left
     * out of the splice, its node kept for the frame put here).
     */

    if (idleOn) {
	for (i = 0; i < nTcl; i++) {
	    if (tcl[i].kind == CPROF_KIND_IDLE) {
		break;
	    }
	}
	if (i < nTcl) {
	    int j;

	    keptTcl = (CprofTclRef *) ckalloc(nTcl * sizeof(CprofTclRef));
	    for (i = j = 0; i < nTcl; i++) {
		if (tcl[i].kind == CPROF_KIND_IDLE) {
		    idleNode = tcl[i].node;
		} else {
		    keptTcl[j++] = tcl[i];
		}
	    }
	    tcl = keptTcl;
	    nTcl = j;
	}
    }
    n = CprofSplice(samplePtr->ip, samplePtr->cfa, samplePtr->nNative,
	    tcl, nTcl, statePtr->calib.trampStart,
	    statePtr->calib.trampEnd, merged, &unmatched, &beyond);
    if (nTcl > 0) {
	if (beyond) {
	    statePtr->shortSamples++;
	}
	if (unmatched) {
	    statePtr->unsplicedSamples++;
	    statePtr->unmatchedFrames += unmatched;
	} else {
	    statePtr->splicedSamples++;
	}
    }

    /*
     * Labels (cmdlabels.c): the sample's set heads its stack, a node of its
     * own under the root.
     */

    if (samplePtr->labels > 0) {
	exact[kept] = -1;
	lines[kept] = 0;
	fileIds[kept] = -1;
	frames[kept++] = CprofTreeFrame(treePtr, CPROF_FD_LABELS,
		samplePtr->labels - 1, -1, -1, -1);
	labelFrames = 1;
    }

    for (i = 0; i < n; i++) {
	if (merged[i].isTcl) {
	    const CprofTclRef *refPtr = &tcl[merged[i].index];

	    startup = 0;
	    if (!TclShown(statePtr, refPtr)) {
		continue;
	    }
	    exact[kept] = refPtr->node;
	    lines[kept] = 0;
	    if (tclLines && !TclFrameLine(statePtr, samplePtr, tcl, merged, n,
		    i, &fileIds[kept], &lines[kept])) {
		lines[kept] = 0;
	    }
	    frames[kept++] = CprofTreeFrame(treePtr, 0, refPtr->nameId, -1,
		    refPtr->kind, refPtr->interpId);
	} else {
	    int j = merged[i].index;
	    uintptr_t addr = (j == 0) ? samplePtr->ip[0]
		    : samplePtr->ip[j] - 1;
	    CprofSymInfo info;

	    if (native == CPROF_NATIVE_NONE && !idleOn) {
		continue;
	    }
	    CprofSymResolve(statePtr->symPtr, addr, &info);
	    if (idleOn && info.funcStart != 0
		    && (info.funcStart == (uintptr_t) Tcl_WaitForEvent
		    || (info.inTcl && info.nameId == ids.tclpWait))) {
		if (native == CPROF_NATIVE_ALL) {
		    exact[kept] = -1;
		    lines[kept] = 0;
		    frames[kept++] = CprofTreeFrame(treePtr, 1, info.nameId,
			    info.moduleId, -1, -1);
		}
		exact[kept] = idleNode;
		lines[kept] = 0;
		frames[kept++] = CprofTreeFrame(treePtr, 0, ids.idle, -1,
			CPROF_KIND_IDLE, -1);
		break;
	    }
	    if (native == CPROF_NATIVE_NONE) {
		continue;
	    }

	    /*
	     * The C library's start-up code calls main: name it so when the
	     * program is stripped.
	     */

	    if (callsMain && !info.exact) {
		info.nameId = ids.main;
	    }
	    callsMain = (info.nameId == ids.libcStart[0]
		    || info.nameId == ids.libcStart[1]
		    || info.nameId == ids.libcStart[2]);
	    if (native == CPROF_NATIVE_USER) {
		if (info.inTcl || IsOwnModule(info.moduleId)) {
		    startup = 0;
		    afterTcl = 1;
		    continue;
		}

		/*
		 * System libraries called by Tcl's internals (malloc,
		 * memcpy, poll...) are part of Tcl's work; called from user
		 * C code they are shown.
		 */

		moduleClass = ModuleClass(statePtr, info.moduleId);
		if (afterTcl && moduleClass >= MOD_SYSTEM) {
		    continue;
		}
		afterTcl = 0;

		/*
		 * The C library's start-up frames (_start,
		 * __libc_start_main, start_thread, clone) head every stack
		 * and say nothing.
		 */

		if (startup && (moduleClass == MOD_STARTUP
			|| info.nameId == ids.start)) {
		    continue;
		}

		/*
		 * A stripped executable's _start has no name: it is the
		 * unnamed function that calls the C library's start-up.
		 */

		if (startup && kept == labelFrames && !info.exact && i + 1 < n
			&& !merged[i + 1].isTcl) {
		    int k = merged[i + 1].index;
		    CprofSymInfo next;

		    CprofSymResolve(statePtr->symPtr, (k == 0)
			    ? samplePtr->ip[0] : samplePtr->ip[k] - 1, &next);
		    if (next.nameId == ids.libcStart[0]
			    || next.nameId == ids.libcStart[1]
			    || next.nameId == ids.libcStart[2]) {
			continue;
		    }
		}
	    }
	    startup = 0;
	    exact[kept] = -1;
	    fileIds[kept] = info.fileId;
	    lines[kept] = info.fileId >= 0 ? info.line : 0;
	    frames[kept++] = CprofTreeFrame(treePtr, 1, info.nameId,
		    info.moduleId, -1, -1);
	}
    }
    leaf = CprofTreeAddLines(treePtr, frames, withExact ? exact : NULL,
	    fileIds, lines, kept, samplePtr->count, samplePtr->weight);
    if (treePtr->timeline.manual) {
	/* (Memory samples: drainmemory.c adds their bytes.) */
    } else if (samplePtr->flags & CPROF_SAMPLE_SPAN) {
	/*
	 * A spooled sample (the samples merged of a thread that ran no Tcl
	 * for a while): spread over the time they were taken in.
	 */

	CprofTimelineSpread(&treePtr->timeline, leaf, samplePtr->timeNs,
		samplePtr->timeEndNs, (uint64_t) statePtr->startNs,
		samplePtr->weight);
    } else if (samplePtr->timeNs != 0) {
	CprofTimelineAdd(&treePtr->timeline, leaf, samplePtr->timeNs,
		(uint64_t) statePtr->startNs, samplePtr->weight);
    } else {
	CprofTimelineSpread(&treePtr->timeline, leaf, 0,
		CprofClockNs(CLOCK_MONOTONIC), (uint64_t) statePtr->startNs,
		samplePtr->weight);
    }
    statePtr->hasData = 1;
    if (keptTcl != NULL) {
	ckfree(keptTcl);
    }
    return leaf;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofDrainSoon --
 *
 *	A drain in the middle of a run (the event loop's timer, or the
 *	handler asking from a command boundary), which waits for no file:
 *	when a module of the samples in the ring has no symbol table yet,
 *	the table is asked for on the reading thread (symreader.c) and the
 *	samples stay in the ring (the spool takes what overflows) for a
 *	later drain (not the first drain in a child after fork, which makes
 *	the child's timer). The samples are looked at in order up to the
 *	first that needs a table not read yet (the handler asks again at
 *	every sample once the ring is half full: each look stays short).
 *	Put off for PUT_OFF_MAX_NS at most in a row; then, or with samples
 *	spooled, it is a drain like any other. Stop, status, data and
 *	saving drain with CprofDrain, which waits.
 *
 *----------------------------------------------------------------------
 */

#define PUT_OFF_MAX_NS	3000000000u	/* 3 s */

void
CprofDrainSoon(
    CprofState *statePtr)
{
    CprofSampler *sPtr = statePtr->samplerPtr;

    if (sPtr != NULL && statePtr->symPtr != NULL && statePtr->memPtr == NULL
	    && !sPtr->forked && CprofSamplerSpoolEmpty(sPtr)
	    && CprofSamplerPeek(sPtr) != NULL) {
	uint64_t now = CprofClockNs(CLOCK_MONOTONIC);

	if (statePtr->putOffSinceNs == 0
		|| now - statePtr->putOffSinceNs < PUT_OFF_MAX_NS) {
	    CprofSample *samplePtr;
	    uint32_t i;
	    int warm = 1;

	    /*
	     * A sample landing here is the profiler's own, as in a drain.
	     */

	    int held = CprofSamplerOwn(sPtr);

	    if (statePtr->symLockPtr != NULL) {
		Tcl_MutexLock(statePtr->symLockPtr);
	    }
	    CprofSymRefresh(statePtr->symPtr);
	    for (i = 0; warm
		    && (samplePtr = CprofSamplerPeekAt(sPtr, i)) != NULL; i++) {
		warm = CprofSymWarm(statePtr->symPtr, samplePtr->ip,
			samplePtr->nNative);
	    }
	    if (statePtr->symLockPtr != NULL) {
		Tcl_MutexUnlock(statePtr->symLockPtr);
	    }
	    CprofSamplerOwnEnd(sPtr, held);
	    if (!warm) {
		if (statePtr->putOffSinceNs == 0) {
		    statePtr->putOffSinceNs = now;
		}
		statePtr->drainsPutOff++;
		sPtr->needDrain = 0;
		held = CprofSamplerOwn(sPtr);
		CprofMemGuard(1);
		NameFramesEarly(statePtr, sPtr);
		CprofMemGuard(0);
		CprofSamplerOwnEnd(sPtr, held);
		return;
	    }
	}
    }
    statePtr->putOffSinceNs = 0;
    CprofDrain(statePtr);
}

/*
 * The memory samples' drain (drainmemory.c), registered when memory profiling
 * first starts: memory profiles are built on the trees of this file, so
 * this file does not call up into drainmemory.c (tools/objcycles).
 */

static CprofDrainProc *memoryDrainProc = NULL;

void
CprofDrainSetMemory(
    CprofDrainProc *proc)
{
    memoryDrainProc = proc;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofDrain --
 *
 *	Process every sample waiting in the ring and in the spool (where the
 *	handler merges samples when the ring is full: the thread was away
 *	from Tcl for long). Runs in normal context in the sampled thread:
 *	from the trace callback when the handler asks, from an event-loop
 *	timer, and before data is read. Samples that land
 *	while it runs are counted as the profiler's own overhead. In a child
 *	process, the first drain after fork makes the sampler's timer again.
 *
 *----------------------------------------------------------------------
 */

void
CprofDrain(
    CprofState *statePtr)
{
    CprofSampler *sPtr = statePtr->samplerPtr;
    CprofSample *samplePtr;
    uint64_t t0 = 0;
    int held;

    /*
     * A time sample landing in any of this, the memory samples' drain
     * too, is the profiler's own.
     */

    held = CprofSamplerOwn(sPtr);
    if (statePtr->memPtr != NULL && memoryDrainProc != NULL) {
	if (statePtr->symLockPtr != NULL) {
	    Tcl_MutexLock(statePtr->symLockPtr);
	}
	memoryDrainProc(statePtr);
	if (statePtr->symLockPtr != NULL) {
	    Tcl_MutexUnlock(statePtr->symLockPtr);
	}
    }
    if (sPtr == NULL) {
	return;
    }

    /*
     * With memory samples too, what the drain allocates (names, the
     * symbolizer's tables) is the profiler's own: not counted.
     */

    CprofMemGuard(1);
    if (sPtr->forked) {
	CprofSamplerAfterFork(statePtr->interp, sPtr);
    }
    if (statePtr->exact.on) {
	t0 = CprofExactNow(statePtr);
    }
    sPtr->needDrain = 0;
    CprofSamplerModules();
    samplePtr = CprofSamplerTakeSpooled(sPtr);
    if (samplePtr != NULL || CprofSamplerPeek(sPtr) != NULL) {
	/*
	 * A symbolizer shared by the threads of a session (cmdscope.c) is
	 * used by one drain at a time.
	 */

	if (statePtr->symLockPtr != NULL) {
	    Tcl_MutexLock(statePtr->symLockPtr);
	}
	CprofSymRefresh(statePtr->symPtr);

	/*
	 * First what overflowed into the spool, then the ring.
	 */

	for (; samplePtr != NULL; samplePtr = CprofSamplerTakeSpooled(sPtr)) {
	    CprofAddSample(statePtr, samplePtr);
	}
	while ((samplePtr = CprofSamplerPeek(sPtr)) != NULL) {
	    CprofAddSample(statePtr, samplePtr);
	    CprofSamplerRelease(sPtr);
	}
	if (statePtr->symLockPtr != NULL) {
	    Tcl_MutexUnlock(statePtr->symLockPtr);
	}
    }
    CprofSamplerOwnEnd(sPtr, held);
    CprofMemGuard(0);

    /*
     * With exact timing on, the time spent here is not the program's.
     */

    if (statePtr->exact.on) {
	CprofExactShift(statePtr, CprofExactNow(statePtr) - t0);
    }
}
