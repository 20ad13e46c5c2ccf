/*
 * draintree.c --
 *
 *	The in-memory call tree, and the drain's last stage: a resolved
 *	stack (drainresolve.c) added to it (CprofDrainAddStack), with the
 *	sample's time to the tree's timeline (draintimeline.c).
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

#include "drainInt.h"
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

static int		FrameIndex(CprofTree *treePtr,
			    const CprofFrameDef *keyPtr);

/*
 *----------------------------------------------------------------------
 *
 * CprofTreeFrame, FrameIndex --
 *
 *	The index of a frame definition, added if new (FrameIndex: one
 *	in the form the tree keeps, as drainresolve.c makes them).
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

    key.isC = isC;
    key.nameId = nameId;
    key.moduleId = isC ? moduleId : -1;
    key.tclKind = isC ? -1 : tclKind;
    key.interpId = isC ? -1 : interpId;
    return FrameIndex(treePtr, &key);
}

static int
FrameIndex(
    CprofTree *treePtr,
    const CprofFrameDef *keyPtr)
{
    Tcl_HashEntry *hPtr;
    int isNew, index;

    hPtr = Tcl_CreateHashEntry(&treePtr->frameIndex, (char *) keyPtr,
	    &isNew);
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
    treePtr->frames[index] = *keyPtr;
    Tcl_SetHashValue(hPtr, INT2PTR(index));
    CprofNameHold(&treePtr->refs, keyPtr->nameId);
    CprofNameHold(&treePtr->refs, keyPtr->moduleId);
    CprofNameHold(&treePtr->refs, keyPtr->interpId);
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
 *----------------------------------------------------------------------
 *
 * CprofDrainAddStack --
 *
 *	The drain's last stage: a resolved stack's frames made the tree's
 *	(CprofTreeFrame), the path added with the sample's count and weight
 *	(and, in the state's own tree of a run that times calls too, each
 *	Tcl frame's exact node), and the sample's time to the timeline.
 *
 * Results:
 *	The node the sample ends at.
 *
 *----------------------------------------------------------------------
 */

int
CprofDrainAddStack(
    CprofState *statePtr,
    CprofTree *treePtr,
    const CprofSample *samplePtr,
    const CprofDrainStack *stackPtr)
{
    int frames[CPROF_STACK_MAX];
    int withExact = statePtr->exact.on && treePtr == &statePtr->tree;
    int i, leaf;

    for (i = 0; i < stackPtr->n; i++) {
	frames[i] = FrameIndex(treePtr, &stackPtr->def[i]);
    }
    leaf = CprofTreeAddLines(treePtr, frames,
	    withExact ? stackPtr->exact : NULL, stackPtr->fileId,
	    stackPtr->line, stackPtr->n, samplePtr->count, samplePtr->weight);
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
    return leaf;
}
