/*
 * exactread.c --
 *
 *	Exact timing's data as values (the call tree, the lines, the events,
 *	coverage), read when a profile is taken: the collection is exact.c.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "exactInt.h"
#include <string.h>

/*
 *----------------------------------------------------------------------
 *
 * Reading the data --
 *
 *	CprofExactTreeObj: the exact call tree as nested node dicts (built
 *	bottom up, without recursion). CprofExactNodeFigures: one node's
 *	figures added to a dict (mode both annotates the sampled tree with
 *	them). CprofExactLinesObj, CprofExactEventsObj,
 *	CprofExactCoverageObj: the other parts of a profile.
 *
 *----------------------------------------------------------------------
 */

#define PUT(d, k, v) \
    Tcl_DictObjPut(NULL, (d), Tcl_NewStringObj((k), -1), (v))

/*
 *----------------------------------------------------------------------
 *
 * CprofExactAdjust --
 *
 *	Totals adjusted bottom up so that no node's total is below its
 *	children's sum (compensation can take a node below when its own
 *	share was overestimated), the self times that follow, and which
 *	nodes a profile shows: not those nothing was charged to (an
 *	ensemble's frame before it was named with its subcommand), unless a
 *	node below them is shown. The arrays have numNodes elements; times
 *	in ns.
 *
 *----------------------------------------------------------------------
 */

void
CprofExactAdjust(
    CprofExact *exactPtr,
    int64_t *adj,
    int64_t *self,
    unsigned char *shown)
{
    int64_t *childSum = (int64_t *) ckalloc(exactPtr->numNodes
	    * sizeof(int64_t));
    int i;

    memset(childSum, 0, exactPtr->numNodes * sizeof(int64_t));
    memset(shown, 0, exactPtr->numNodes);
    for (i = exactPtr->numNodes - 1; i >= 0; i--) {
	CprofExactNode *nPtr = &exactPtr->nodes[i];
	int64_t t = (i == 0) ? 0 : TicksToNs(exactPtr, nPtr->totalNs);

	if (t < 0) {
	    t = 0;
	}
	if (t < childSum[i]) {
	    t = childSum[i];
	}
	adj[i] = t;
	self[i] = t - childSum[i];
	if (i == 0 || shown[i] || nPtr->calls != 0 || nPtr->totalNs != 0
		|| nPtr->suspendedNs != 0) {
	    shown[i] = 1;
	    if (nPtr->parent >= 0) {
		shown[nPtr->parent] = 1;
	    }
	}
	if (nPtr->parent >= 0) {
	    childSum[nPtr->parent] += t;
	}
    }
    ckfree(childSum);
}

/*
 * The figures of a node whose (adjusted) total and self times are known.
 */

void
CprofExactFiguresOf(
    CprofExact *exactPtr,
    int node,
    int64_t total,
    int64_t self,
    CprofFigures *figPtr)
{
    CprofExactNode *nPtr = &exactPtr->nodes[node];

    figPtr->calls = nPtr->calls;
    figPtr->totalNs = total;
    figPtr->selfNs = self;
    figPtr->minNs = nPtr->calls ? TicksToNs(exactPtr, (int64_t) nPtr->minNs)
	    : 0;
    figPtr->maxNs = TicksToNs(exactPtr, (int64_t) nPtr->maxNs);
    figPtr->suspendedNs = TicksToNs(exactPtr, (int64_t) nPtr->suspendedNs);
}

/*
 * Put a node's figures into its dict: calls total_ns self_ns min_ns max_ns
 * and, when not zero, suspended_ns.
 */

void
CprofFiguresPut(
    Tcl_Obj *dictObj,
    const CprofFigures *figPtr)
{
    PUT(dictObj, "calls", Tcl_NewWideIntObj((Tcl_WideInt) figPtr->calls));
    PUT(dictObj, "total_ns", Tcl_NewWideIntObj(figPtr->totalNs));
    PUT(dictObj, "self_ns", Tcl_NewWideIntObj(figPtr->selfNs));
    PUT(dictObj, "min_ns", Tcl_NewWideIntObj(figPtr->minNs));
    PUT(dictObj, "max_ns", Tcl_NewWideIntObj(figPtr->maxNs));
    if (figPtr->suspendedNs > 0) {
	PUT(dictObj, "suspended_ns", Tcl_NewWideIntObj(figPtr->suspendedNs));
    }
}

Tcl_Obj *
CprofExactTreeObj(
    CprofExact *exactPtr,
    int links)			/* Give the state's serial (root), the links
				 * (kind link, link {serial node}) and the
				 * ids of the nodes links stand for (id):
				 * for CprofScopeProfile, which joins the
				 * trees of a thread's interpreters at them
				 * and removes these keys. Else link nodes
				 * are shown as nodes named after the frame
				 * they stand for. */
{
    int n = exactPtr->numNodes, i;
    int64_t *adj = (int64_t *) ckalloc(n * sizeof(int64_t));
    int64_t *self = (int64_t *) ckalloc(n * sizeof(int64_t));
    unsigned char *shown = (unsigned char *) ckalloc(n);
    Tcl_Obj **objs = (Tcl_Obj **) ckalloc(n * sizeof(Tcl_Obj *));
    Tcl_Obj *kindObjs[CPROF_KIND_COUNT], *tclObj, *resultObj, *interpObj;
    Tcl_Obj *linkObj = NULL;
    const char *interpName = exactPtr->interpId >= 0
	    ? CprofNameString(exactPtr->interpId) : NULL;
    int *linkOf = NULL;

    CprofExactAdjust(exactPtr, adj, self, shown);
    if (links && exactPtr->serial != 0) {
	linkOf = (int *) ckalloc(n * sizeof(int));
	for (i = 0; i < n; i++) {
	    linkOf[i] = -1;
	}
	for (i = 0; i < exactPtr->numLinks; i++) {
	    if (exactPtr->links[i].node < n) {
		linkOf[exactPtr->links[i].node] = i;
	    }
	}
	linkObj = Tcl_NewStringObj("link", -1);
	Tcl_IncrRefCount(linkObj);
    }
    interpObj = Tcl_NewStringObj(interpName ? interpName : "", -1);
    Tcl_IncrRefCount(interpObj);
    for (i = 0; i < CPROF_KIND_COUNT; i++) {
	kindObjs[i] = Tcl_NewStringObj(CprofKindName(i), -1);
	Tcl_IncrRefCount(kindObjs[i]);
    }
    tclObj = Tcl_NewStringObj("tcl", -1);
    Tcl_IncrRefCount(tclObj);

    /*
     * Children have higher indices than their parents: build from the
     * last node back, each node after its children.
     */

    for (i = n - 1; i >= 0; i--) {
	CprofExactNode *nPtr = &exactPtr->nodes[i];
	Tcl_Obj *dictObj, *childrenObj;
	CprofFigures fig;
	int c;

	if (!shown[i]) {
	    objs[i] = NULL;
	    continue;
	}
	dictObj = Tcl_NewDictObj();
	childrenObj = Tcl_NewListObj(0, NULL);
	if (i == 0) {
	    PUT(dictObj, "name", Tcl_NewObj());
	    PUT(dictObj, "kind", Tcl_NewStringObj("root", -1));
	    if (linkOf != NULL) {
		PUT(dictObj, "serial", Tcl_NewIntObj(exactPtr->serial));
	    }
	} else if (linkOf != NULL && linkOf[i] >= 0) {
	    const struct CprofExactLink *lPtr = &exactPtr->links[linkOf[i]];
	    Tcl_Obj *pair[2];

	    pair[0] = Tcl_NewIntObj(lPtr->peerSerial);
	    pair[1] = Tcl_NewIntObj(lPtr->peerNode);
	    PUT(dictObj, "name", Tcl_NewObj());
	    PUT(dictObj, "kind", linkObj);
	    PUT(dictObj, "link", Tcl_NewListObj(2, pair));
	} else if (nPtr->kind == CPROF_EXACT_LABELS) {
	    const char *name = CprofNameString(nPtr->nameId);

	    PUT(dictObj, "name", Tcl_NewStringObj(name ? name : "", -1));
	    PUT(dictObj, "kind", Tcl_NewStringObj("labels", -1));
	} else {
	    const char *name = CprofNameString(nPtr->nameId);

	    int origin = CprofNameOrigin(nPtr->nameId);

	    PUT(dictObj, "name", Tcl_NewStringObj(name ? name : "?", -1));
	    PUT(dictObj, "kind", tclObj);
	    PUT(dictObj, "tclkind", kindObjs[nPtr->kind]);
	    PUT(dictObj, "interp", interpObj);
	    if (origin >= 0) {
		PUT(dictObj, "origin",
			Tcl_NewStringObj(CprofNameString(origin), -1));
	    }
	}
	if (linkOf != NULL && i > 0 && exactPtr->targetMap.mask != 0
		&& CprofPairMapHas(&exactPtr->targetMap, (uint64_t) i, 0)) {
	    PUT(dictObj, "id", Tcl_NewIntObj(i));
	}
	PUT(dictObj, "self", Tcl_NewWideIntObj(self[i]));
	PUT(dictObj, "total", Tcl_NewWideIntObj(adj[i]));
	CprofExactFiguresOf(exactPtr, i, adj[i], self[i], &fig);
	CprofFiguresPut(dictObj, &fig);
	for (c = nPtr->firstChild; c >= 0; c = exactPtr->nodes[c].nextSibling) {
	    if (objs[c] != NULL) {
		Tcl_ListObjAppendElement(NULL, childrenObj, objs[c]);
		Tcl_DecrRefCount(objs[c]);
	    }
	}
	PUT(dictObj, "children", childrenObj);
	Tcl_IncrRefCount(dictObj);
	objs[i] = dictObj;
    }
    resultObj = objs[0];
    Tcl_DecrRefCount(tclObj);
    Tcl_DecrRefCount(interpObj);
    if (linkOf != NULL) {
	Tcl_DecrRefCount(linkObj);
	ckfree(linkOf);
    }
    for (i = 0; i < CPROF_KIND_COUNT; i++) {
	Tcl_DecrRefCount(kindObjs[i]);
    }
    ckfree(objs);
    ckfree(shown);
    ckfree(adj);
    ckfree(self);
    resultObj->refCount--;	/* Handed over without being freed. */
    return resultObj;
}

/*
 * The figures a node of the sampled tree carries in mode both: those of
 * its exact node, adjusted one level deep (enough for a single node's
 * figures to be self-consistent). 0 when there are none.
 */

int
CprofExactNodeValues(
    CprofExact *exactPtr,
    int node,
    CprofFigures *figPtr)
{
    CprofExactNode *nPtr;
    int64_t total, childSum = 0;
    int c;

    if (node <= 0 || node >= exactPtr->numNodes) {
	return 0;
    }
    nPtr = &exactPtr->nodes[node];
    for (c = nPtr->firstChild; c >= 0; c = exactPtr->nodes[c].nextSibling) {
	int64_t t = TicksToNs(exactPtr, exactPtr->nodes[c].totalNs);

	childSum += t > 0 ? t : 0;
    }
    total = TicksToNs(exactPtr, nPtr->totalNs);
    if (total < 0) {
	total = 0;
    }
    if (total < childSum) {
	total = childSum;
    }
    CprofExactFiguresOf(exactPtr, node, total, total - childSum, figPtr);
    return 1;
}

void
CprofExactNodeFigures(
    CprofExact *exactPtr,
    int node,
    Tcl_Obj *dictObj)
{
    CprofFigures fig;

    if (CprofExactNodeValues(exactPtr, node, &fig)) {
	CprofFiguresPut(dictObj, &fig);
    }
}

/*
 * The figures of call-site record 'rec' as a profile shows them. Returns
 * 0 for a record a profile leaves out (no call completed nor running).
 */

int
CprofExactLineValues(
    CprofExact *exactPtr,
    int rec,
    CprofLineValues *valPtr)
{
    CprofLineRec *recPtr = &exactPtr->lineRecs[rec];
    CprofSite *sitePtr = &exactPtr->sites[recPtr->site];

    valPtr->fileId = sitePtr->fileId;
    valPtr->line = sitePtr->line;
    valPtr->nameId = recPtr->nameId;
    valPtr->kind = recPtr->kind;
    valPtr->callerId = recPtr->callerId;
    valPtr->calls = recPtr->calls;
    valPtr->totalNs = recPtr->totalNs > 0
	    ? TicksToNs(exactPtr, recPtr->totalNs) : 0;
    valPtr->selfNs = recPtr->selfNs > 0
	    ? TicksToNs(exactPtr, recPtr->selfNs) : 0;
    valPtr->minNs = recPtr->calls
	    ? TicksToNs(exactPtr, (int64_t) recPtr->minNs) : 0;
    valPtr->maxNs = TicksToNs(exactPtr, (int64_t) recPtr->maxNs);
    return recPtr->calls != 0 || recPtr->active != 0;
}

Tcl_Obj *
CprofExactLinesObj(
    CprofExact *exactPtr)
{
    Tcl_Obj *listObj = Tcl_NewListObj(0, NULL);
    CprofLineValues v;
    int i;

    for (i = 0; i < exactPtr->numLineRecs; i++) {
	Tcl_Obj *dictObj;
	const char *file, *name, *caller;

	if (!CprofExactLineValues(exactPtr, i, &v)) {
	    continue;
	}
	file = CprofNameString(v.fileId);
	name = CprofNameString(v.nameId);
	dictObj = Tcl_NewDictObj();
	PUT(dictObj, "file", Tcl_NewStringObj(file ? file : "", -1));
	PUT(dictObj, "line", Tcl_NewIntObj(v.line));
	PUT(dictObj, "name", Tcl_NewStringObj(name ? name : "?", -1));
	PUT(dictObj, "tclkind", Tcl_NewStringObj(CprofKindName(v.kind), -1));
	caller = v.callerId >= 0 ? CprofNameString(v.callerId) : NULL;
	PUT(dictObj, "caller", Tcl_NewStringObj(caller ? caller : "", -1));
	PUT(dictObj, "calls", Tcl_NewWideIntObj((Tcl_WideInt) v.calls));
	PUT(dictObj, "total_ns", Tcl_NewWideIntObj(v.totalNs));
	PUT(dictObj, "self_ns", Tcl_NewWideIntObj(v.selfNs));
	PUT(dictObj, "min_ns", Tcl_NewWideIntObj(v.minNs));
	PUT(dictObj, "max_ns", Tcl_NewWideIntObj(v.maxNs));
	Tcl_ListObjAppendElement(NULL, listObj, dictObj);
    }
    return listObj;
}

Tcl_Obj *
CprofExactEventsObj(
    CprofExact *exactPtr)
{
    Tcl_Obj *listObj = Tcl_NewListObj(0, NULL);
    Tcl_Obj *enterObj = Tcl_NewStringObj("E", 1);
    Tcl_Obj *leaveObj = Tcl_NewStringObj("L", 1);
    Tcl_HashTable names;
    int i;

    /*
     * One shared name object per name id.
     */

    Tcl_InitHashTable(&names, TCL_ONE_WORD_KEYS);
    for (i = 0; i < exactPtr->numEvents; i++) {
	CprofEvent *evPtr = &exactPtr->events[i];
	Tcl_HashEntry *hPtr;
	int isNew;

	if (evPtr->type == 0) {
	    continue;
	}
	hPtr = Tcl_CreateHashEntry(&names, INT2PTR(evPtr->nameId), &isNew);
	if (isNew) {
	    const char *name = CprofNameString(evPtr->nameId);

	    Tcl_SetHashValue(hPtr, Tcl_NewStringObj(name ? name : "?", -1));
	}
	Tcl_ListObjAppendElement(NULL, listObj, Tcl_NewWideIntObj(
		TicksToNs(exactPtr, (int64_t) evPtr->ns)));
	Tcl_ListObjAppendElement(NULL, listObj,
		evPtr->type == 'E' ? enterObj : leaveObj);
	Tcl_ListObjAppendElement(NULL, listObj, Tcl_GetHashValue(hPtr));
    }
    Tcl_DeleteHashTable(&names);
    if (enterObj->refCount == 0) {
	Tcl_DecrRefCount(enterObj);
    }
    if (leaveObj->refCount == 0) {
	Tcl_DecrRefCount(leaveObj);
    }
    return listObj;
}

/*
 * Coverage: {commands {{name N tclkind K calls C} ...} procs {defined
 * procs} lines {{file F line L calls C} ...}}: the commands entered (by
 * name, hidden ones too), the procedures defined now, the call sites.
 */

Tcl_Obj *
CprofExactCoverageObj(
    CprofState *statePtr)
{
    CprofExact *exactPtr = &statePtr->exact;
    Tcl_Obj *resultObj = Tcl_NewDictObj(), *cmdsObj = Tcl_NewListObj(0, NULL);
    Tcl_Obj *linesObj = Tcl_NewListObj(0, NULL);
    int i;

    for (i = 0; i < exactPtr->numNameCalls; i++) {
	if (exactPtr->nameCalls[i].calls > 0) {
	    Tcl_Obj *d = Tcl_NewDictObj();
	    const char *name = CprofNameString(i);

	    PUT(d, "name", Tcl_NewStringObj(name ? name : "?", -1));
	    PUT(d, "tclkind", Tcl_NewStringObj(CprofKindName(
		    exactPtr->nameCalls[i].kind), -1));
	    PUT(d, "calls", Tcl_NewWideIntObj((Tcl_WideInt)
		    exactPtr->nameCalls[i].calls));
	    Tcl_ListObjAppendElement(NULL, cmdsObj, d);
	}
    }
    for (i = 0; i < exactPtr->numSites; i++) {
	if (exactPtr->siteHits[i] > 0) {
	    Tcl_Obj *d = Tcl_NewDictObj();
	    const char *file = CprofNameString(exactPtr->sites[i].fileId);

	    PUT(d, "file", Tcl_NewStringObj(file ? file : "", -1));
	    PUT(d, "line", Tcl_NewIntObj(exactPtr->sites[i].line));
	    PUT(d, "calls", Tcl_NewWideIntObj((Tcl_WideInt)
		    exactPtr->siteHits[i]));
	    Tcl_ListObjAppendElement(NULL, linesObj, d);
	}
    }
    PUT(resultObj, "commands", cmdsObj);
    PUT(resultObj, "procs", CprofDefinedProcs(statePtr->interp));
    PUT(resultObj, "lines", linesObj);
    return resultObj;
}

