/*
 * cmdscopedata.c --
 *
 *	The profile of a session (cmdscope.c) put together, in its owner's
 *	thread: the owner's own value with the parts its members published
 *	(and what its thread's running child interpreters have so far): the
 *	exact trees of a thread's interpreters joined at their links
 *	(exact.c), one root per thread, call sites, coverage, handlers and
 *	events merged (library/merge.tcl), and the meta's threads, with
 *	their names (tclcprof::threadname, in cmdscope.c, sets them) and
 *	CPU times. Below cmdscope.c, it holds the lock of the sessions.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "cmdscopeInt.h"
#include <string.h>
#include <unistd.h>

Tcl_Mutex cprofScopeMutex;	/* Sessions, their threads and parts. */

/*
 * Names given with tclcprof::threadname, per thread, for the life of the
 * process (under cprofScopeMutex).
 */

typedef struct ThreadName {
    Tcl_ThreadId id;
    char name[64];
    struct ThreadName *nextPtr;
} ThreadName;

static ThreadName *threadNames;

/*
 *----------------------------------------------------------------------
 *
 * Threads: their names and CPU times --
 *
 *	CprofScopeThreadName: the name given to a thread, or NULL.
 *	CprofScopeThreadNameSet: give it one (up to 63 bytes, checked by
 *	the caller). Both with cprofScopeMutex held.
 *	CprofScopeThreadNameObj: the name a thread's root is shown with.
 *
 *----------------------------------------------------------------------
 */

const char *
CprofScopeThreadName(
    Tcl_ThreadId id)
{
    ThreadName *nPtr;

    for (nPtr = threadNames; nPtr != NULL; nPtr = nPtr->nextPtr) {
	if (nPtr->id == id) {
	    return nPtr->name;
	}
    }
    return NULL;
}

void
CprofScopeThreadNameSet(
    Tcl_ThreadId id,
    const char *name)
{
    ThreadName *nPtr;

    for (nPtr = threadNames; nPtr != NULL; nPtr = nPtr->nextPtr) {
	if (nPtr->id == id) {
	    break;
	}
    }
    if (nPtr == NULL) {
	nPtr = (ThreadName *) ckalloc(sizeof(ThreadName));
	nPtr->id = id;
	nPtr->nextPtr = threadNames;
	threadNames = nPtr;
    }
    snprintf(nPtr->name, sizeof(nPtr->name), "%s", name);
}

Tcl_Obj *
CprofScopeThreadNameObj(
    const ThreadRec *tPtr)
{
    const char *name = CprofScopeThreadName(tPtr->id);

    if (name != NULL) {
	return Tcl_NewStringObj(name, -1);
    }
    if (tPtr->tid == getpid()) {
	return Tcl_NewStringObj("main", -1);
    }
    return Tcl_NewStringObj(tPtr->tclId, -1);
}

uint64_t
CprofScopeThreadCpuNs(void)
{
    return (uint64_t) CprofClockNs(CLOCK_THREAD_CPUTIME_ID);
}

/*
 * Joining the exact trees of a thread's interpreters (exact.c, Peers and
 * links): each tree's link nodes stand for a frame of another tree (its
 * serial and node id); their children are moved under that node, whose
 * self time loses their totals. Subtrees with nothing to change are
 * kept as they are. Children of other trees' roots, and links whose
 * frame is not in any tree (its interpreter's part is not there yet),
 * go to the root: beside the thread's tree, as a tree of its own.
 */

typedef struct Joiner {
    Tcl_HashTable grafts;	/* "serial id" -> list of {serial node}. */
    Tcl_Obj *loose;		/* List of {serial node} for the root. */
} Joiner;

#define LIVE_MAX 64		/* Running members of the owner's thread
				 * read by its data, at most. */

static const char *
KindOf(
    Tcl_Obj *nodeObj)
{
    Tcl_Obj *kindObj = CprofDictGet(nodeObj, "kind");

    return kindObj ? Tcl_GetString(kindObj) : "";
}

static void
AddGraft(
    Tcl_Obj *listObj,
    int serial,
    Tcl_Obj *nodeObj)
{
    Tcl_Obj *pair[2];

    pair[0] = Tcl_NewIntObj(serial);
    pair[1] = nodeObj;
    Tcl_ListObjAppendElement(NULL, listObj, Tcl_NewListObj(2, pair));
}

/*
 * The children of a node, 0 when it has none. The trees are as deep as
 * the program's recursion (100,000 levels and more): CollectLinks and
 * Emit walk them with stacks of their own, no C code recurses per level.
 */

static int
Kids(
    Tcl_Obj *nodeObj,
    Tcl_Obj ***kidsPtr)
{
    Tcl_Obj *kidsObj = CprofDictGet(nodeObj, "children");
    Tcl_Size n = 0;

    if (kidsObj == NULL
	    || Tcl_ListObjGetElements(NULL, kidsObj, &n, kidsPtr) != TCL_OK) {
	return 0;
    }
    return n;
}

/*
 * Every link of a tree, its children put in the table of grafts under
 * the frame it stands for (in the order of a depth-first walk). A list
 * walked is a node's children or, when graftsObj is set, a link's
 * children, each added to graftsObj before its own children are walked.
 */

typedef struct LinkWalk {
    Tcl_Obj **items;
    int n, i;
    Tcl_Obj *graftsObj;
} LinkWalk;

static void
CollectLinks(
    Joiner *jPtr,
    Tcl_Obj *nodeObj,
    int serial)
{
    LinkWalk *walk;
    int top = 0, cap = 64;

    walk = (LinkWalk *) ckalloc(cap * sizeof(LinkWalk));
    walk[0].n = Kids(nodeObj, &walk[0].items);
    walk[0].i = 0;
    walk[0].graftsObj = NULL;
    while (top >= 0) {
	LinkWalk *wPtr = &walk[top];
	Tcl_Obj *itemObj, *linkObj, *gkidsObj, **pair, **gs = NULL;
	Tcl_Obj *graftsObj = NULL;	/* Set: a link's children, to add. */
	Tcl_HashEntry *hPtr;
	char key[48];
	int isNew, target[2];
	Tcl_Size np, ng = 0;

	if (wPtr->i >= wPtr->n) {
	    top--;
	    continue;
	}
	itemObj = wPtr->items[wPtr->i++];
	if (wPtr->graftsObj != NULL) {
	    AddGraft(wPtr->graftsObj, serial, itemObj);
	    ng = Kids(itemObj, &gs);
	} else if (strcmp(KindOf(itemObj), "link") != 0) {
	    ng = Kids(itemObj, &gs);
	} else {
	    linkObj = CprofDictGet(itemObj, "link");
	    gkidsObj = CprofDictGet(itemObj, "children");
	    if (linkObj == NULL || gkidsObj == NULL
		    || Tcl_ListObjGetElements(NULL, linkObj, &np, &pair)
			!= TCL_OK
		    || np != 2
		    || Tcl_GetIntFromObj(NULL, pair[0], &target[0]) != TCL_OK
		    || Tcl_GetIntFromObj(NULL, pair[1], &target[1]) != TCL_OK
		    || Tcl_ListObjGetElements(NULL, gkidsObj, &ng, &gs)
			!= TCL_OK) {
		continue;
	    }
	    snprintf(key, sizeof(key), "%d %d", target[0], target[1]);
	    hPtr = Tcl_CreateHashEntry(&jPtr->grafts, key, &isNew);
	    if (isNew) {
		Tcl_Obj *listObj = Tcl_NewListObj(0, NULL);

		Tcl_IncrRefCount(listObj);
		Tcl_SetHashValue(hPtr, listObj);
	    }
	    graftsObj = (Tcl_Obj *) Tcl_GetHashValue(hPtr);
	}
	if (ng == 0) {
	    continue;
	}
	if (++top == cap) {
	    cap *= 2;
	    walk = (LinkWalk *) ckrealloc(walk, cap * sizeof(LinkWalk));
	}
	walk[top].items = gs;
	walk[top].n = ng;
	walk[top].i = 0;
	walk[top].graftsObj = graftsObj;
    }
    ckfree(walk);
}

/*
 * A tree with its links taken out and the grafts put under the frames
 * they stand for: a node's new children are its children but links, in
 * their new form, then its grafts (taken from the table: each is used
 * once), whose totals its self loses. A node with nothing changed below
 * it is kept as it is; the others are copies.
 */

typedef struct EmitNode {
    Tcl_Obj *nodeObj;		/* The node as it is. */
    int serial;			/* Its tree's. */
    Tcl_Obj **kids;		/* Its children ... */
    int n, i;			/* ... their number, the next one. */
    int graftsTaken;		/* Whether its grafts were looked up. */
    Tcl_Obj *graftsObj;		/* List of {serial node}, or NULL. */
    int g;			/* Next graft. */
    Tcl_Obj *newKids;		/* Its children in their new form. */
    int changed;		/* Whether it must be copied. */
    Tcl_WideInt moved;		/* Totals of its grafts. */
} EmitNode;

static void
EmitOpen(
    EmitNode *ePtr,
    Tcl_Obj *nodeObj,
    int serial)
{
    ePtr->nodeObj = nodeObj;
    ePtr->serial = serial;
    ePtr->n = Kids(nodeObj, &ePtr->kids);
    ePtr->i = 0;
    ePtr->graftsTaken = 0;
    ePtr->graftsObj = NULL;
    ePtr->g = 0;
    ePtr->newKids = Tcl_NewListObj(0, NULL);
    Tcl_IncrRefCount(ePtr->newKids);
    ePtr->changed = (CprofDictGet(nodeObj, "id") != NULL);
    ePtr->moved = 0;
}

static Tcl_Obj *
EmitClose(
    EmitNode *ePtr)
{
    Tcl_Obj *copyObj, *nodeObj = ePtr->nodeObj;

    if (ePtr->graftsObj != NULL) {
	Tcl_DecrRefCount(ePtr->graftsObj);
    }
    if (!ePtr->changed) {
	Tcl_DecrRefCount(ePtr->newKids);
	return nodeObj;
    }
    copyObj = Tcl_DuplicateObj(nodeObj);
    if (CprofDictGet(nodeObj, "id") != NULL) {
	Tcl_Obj *keyObj = Tcl_NewStringObj("id", -1);

	Tcl_IncrRefCount(keyObj);
	Tcl_DictObjRemove(NULL, copyObj, keyObj);
	Tcl_DecrRefCount(keyObj);
    }
    PUT(copyObj, "children", ePtr->newKids);
    Tcl_DecrRefCount(ePtr->newKids);
    if (ePtr->moved > 0) {
	static const char *const selfKeys[] = {"self", "self_ns"};
	int k;

	for (k = 0; k < 2; k++) {
	    if (CprofDictGet(copyObj, selfKeys[k]) != NULL) {
		Tcl_WideInt self = CprofDictGetWide(copyObj, selfKeys[k])
			- ePtr->moved;

		PUT(copyObj, selfKeys[k], Tcl_NewWideIntObj(self > 0 ? self
			: 0));
	    }
	}
    }
    return copyObj;
}

static Tcl_Obj *
Emit(
    Joiner *jPtr,
    Tcl_Obj *nodeObj,
    int serial)
{
    EmitNode *path;
    Tcl_Obj *resultObj = NULL;
    int top = 0, cap = 64;

    path = (EmitNode *) ckalloc(cap * sizeof(EmitNode));
    EmitOpen(&path[0], nodeObj, serial);
    while (top >= 0) {
	EmitNode *ePtr = &path[top];
	Tcl_Obj *nextObj = NULL, *doneObj;
	int nextSerial = ePtr->serial;

	if (ePtr->i < ePtr->n) {
	    nextObj = ePtr->kids[ePtr->i++];
	    if (strcmp(KindOf(nextObj), "link") == 0) {
		ePtr->changed = 1;
		continue;
	    }
	} else if (!ePtr->graftsTaken) {
	    Tcl_Obj *idObj = CprofDictGet(ePtr->nodeObj, "id");

	    ePtr->graftsTaken = 1;
	    if (idObj != NULL) {
		Tcl_HashEntry *hPtr;
		char key[48];

		snprintf(key, sizeof(key), "%d %s", ePtr->serial,
			Tcl_GetString(idObj));
		hPtr = Tcl_FindHashEntry(&jPtr->grafts, key);
		if (hPtr != NULL) {
		    ePtr->graftsObj = (Tcl_Obj *) Tcl_GetHashValue(hPtr);
		    Tcl_DeleteHashEntry(hPtr);
		}
	    }
	    continue;
	} else if (ePtr->graftsObj != NULL) {
	    Tcl_Obj *pairObj, *itemObj = NULL;
	    Tcl_Size ng;

	    Tcl_ListObjLength(NULL, ePtr->graftsObj, &ng);
	    if (ePtr->g < ng) {
		Tcl_ListObjIndex(NULL, ePtr->graftsObj, ePtr->g++, &itemObj);
		Tcl_ListObjIndex(NULL, itemObj, 0, &pairObj);
		Tcl_GetIntFromObj(NULL, pairObj, &nextSerial);
		Tcl_ListObjIndex(NULL, itemObj, 1, &nextObj);
		ePtr->moved += CprofDictGetWide(nextObj, "total");
	    }
	}
	if (nextObj != NULL) {
	    if (++top == cap) {
		cap *= 2;
		path = (EmitNode *) ckrealloc(path, cap * sizeof(EmitNode));
	    }
	    EmitOpen(&path[top], nextObj, nextSerial);
	    continue;
	}

	/*
	 * All its children and grafts done: the node in its new form goes
	 * to its parent's new children.
	 */

	doneObj = EmitClose(ePtr);
	if (top == 0) {
	    resultObj = doneObj;
	} else {
	    EmitNode *parentPtr = &path[top - 1];

	    parentPtr->changed |= (doneObj != ePtr->nodeObj);
	    Tcl_ListObjAppendElement(NULL, parentPtr->newKids, doneObj);
	}
	top--;
    }
    ckfree(path);
    return resultObj;
}

/*
 * The exact trees of one thread's interpreters as one: mainObj, the
 * primary's (or owner's), and others[], the other interpreters', oldest
 * first.
 */

static Tcl_Obj *
JoinExact(
    Tcl_Obj *mainObj,
    Tcl_Obj *const *others,
    int numOthers)
{
    Joiner join;
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;
    Tcl_Obj *rootObj, *kidsObj, **items, *keyObj;
    Tcl_WideInt total = 0;
    int mainSerial = (int) CprofDictGetWide(mainObj, "serial"), i, k;
    Tcl_Size n;

    Tcl_InitHashTable(&join.grafts, TCL_STRING_KEYS);
    join.loose = Tcl_NewListObj(0, NULL);
    Tcl_IncrRefCount(join.loose);
    CollectLinks(&join, mainObj, mainSerial);
    for (i = 0; i < numOthers; i++) {
	int serial = (int) CprofDictGetWide(others[i], "serial");
	Tcl_Obj *kids2 = CprofDictGet(others[i], "children"), **ks;
	Tcl_Size nk;

	CollectLinks(&join, others[i], serial);
	if (kids2 != NULL
		&& Tcl_ListObjGetElements(NULL, kids2, &nk, &ks) == TCL_OK) {
	    for (k = 0; k < nk; k++) {
		if (strcmp(KindOf(ks[k]), "link") != 0) {
		    AddGraft(join.loose, serial, ks[k]);
		}
	    }
	}
    }

    rootObj = Emit(&join, mainObj, mainSerial);
    Tcl_IncrRefCount(rootObj);
    if (Tcl_IsShared(rootObj)) {
	Tcl_Obj *copyObj = Tcl_DuplicateObj(rootObj);

	Tcl_DecrRefCount(rootObj);
	rootObj = copyObj;
	Tcl_IncrRefCount(rootObj);
    }
    kidsObj = CprofDictGet(rootObj, "children");
    kidsObj = kidsObj ? Tcl_DuplicateObj(kidsObj) : Tcl_NewListObj(0, NULL);

    /*
     * The other trees' top-level calls, then what is left: links to
     * frames no tree has (a running member's part is not published
     * yet), whose subtrees go to the root too.
     */

    for (;;) {
	Tcl_ListObjGetElements(NULL, join.loose, &n, &items);
	for (i = 0; i < n; i++) {
	    Tcl_Obj *pairObj, *subObj;
	    int s2;

	    Tcl_ListObjIndex(NULL, items[i], 0, &pairObj);
	    Tcl_GetIntFromObj(NULL, pairObj, &s2);
	    Tcl_ListObjIndex(NULL, items[i], 1, &subObj);
	    Tcl_ListObjAppendElement(NULL, kidsObj,
		    Emit(&join, subObj, s2));
	}
	Tcl_DecrRefCount(join.loose);
	hPtr = Tcl_FirstHashEntry(&join.grafts, &search);
	if (hPtr == NULL) {
	    break;
	}
	join.loose = (Tcl_Obj *) Tcl_GetHashValue(hPtr);
	Tcl_DeleteHashEntry(hPtr);
    }
    Tcl_DeleteHashTable(&join.grafts);
    Tcl_ListObjGetElements(NULL, kidsObj, &n, &items);
    for (i = 0; i < n; i++) {
	total += CprofDictGetWide(items[i], "total");
    }
    PUT(rootObj, "children", kidsObj);
    PUT(rootObj, "total", Tcl_NewWideIntObj(total));
    keyObj = Tcl_NewStringObj("serial", -1);
    Tcl_IncrRefCount(keyObj);
    Tcl_DictObjRemove(NULL, rootObj, keyObj);
    Tcl_DecrRefCount(keyObj);
    rootObj->refCount--;	/* Handed over without being freed. */
    return rootObj;
}

/*
 * What a part adds to the owner's call sites, coverage, handlers and
 * events: {profile VALUE thread ORDER interp PATH offset NS}, NS its
 * run's start less the owner's (its events' times are from its start).
 */

static Tcl_Obj *
SideOf(
    Tcl_Obj *valueObj,
    int order,
    const Part *pPtr,
    CprofInterp *ownerPtr)
{
    Tcl_Obj *sideObj = Tcl_NewDictObj();
    const char *path = pPtr->interpId >= 0 ? CprofNameString(pPtr->interpId)
	    : NULL;
    Tcl_WideInt offset;

    /*
     * In the clock's own ticks, converted as the events are, where the
     * two clocks are one (the same thread, or the wall clock): event
     * times then line up to the tick. Else (CPU clocks of two threads)
     * by the monotonic clock.
     */

    if (order == 0 || ownerPtr->state.options.clock != CPROF_CLOCK_CPU) {
	offset = CprofExactTicksToNs(&ownerPtr->state,
		(int64_t) (pPtr->startTicks
		- ownerPtr->state.exact.runStartNs));
    } else {
	offset = pPtr->startNs - ownerPtr->state.exact.runStartMonoNs;
    }

    PUT(sideObj, "profile", valueObj);
    PUT(sideObj, "thread", Tcl_NewIntObj(order));
    PUT(sideObj, "interp", Tcl_NewStringObj(path ? path : "", -1));
    PUT(sideObj, "offset", Tcl_NewWideIntObj(offset));
    return sideObj;
}

/*
 * The call sites, coverage, event handlers and events of the parts,
 * merged with the owner's (library/merge.tcl, ::tclcprof::mergelib::Sides).
 * When that fails, the owner's own are kept.
 */

static Tcl_Obj *
MergeSides(
    CprofInterp *ciPtr,
    Tcl_Obj *ownObj,
    Tcl_Obj *sidesObj)
{
    Tcl_Interp *interp = ciPtr->state.interp;
    Tcl_InterpState saved;
    Tcl_Obj *objv[3], *resultObj = ownObj;
    int i;
    Tcl_Size n = 0;

    if (interp == NULL || Tcl_InterpDeleted(interp)
	    || Tcl_ListObjLength(NULL, sidesObj, &n) != TCL_OK || n == 0) {
	return ownObj;
    }
    saved = Tcl_SaveInterpState(interp, TCL_OK);
    objv[0] = Tcl_NewStringObj("::tclcprof::mergelib::Sides", -1);
    objv[1] = ownObj;
    objv[2] = sidesObj;
    for (i = 0; i < 3; i++) {
	Tcl_IncrRefCount(objv[i]);
    }
    if (Tcl_EvalObjv(interp, 3, objv, TCL_EVAL_GLOBAL) == TCL_OK) {
	resultObj = Tcl_GetObjResult(interp);
    }
    Tcl_IncrRefCount(resultObj);
    Tcl_RestoreInterpState(interp, saved);
    for (i = 0; i < 3; i++) {
	Tcl_DecrRefCount(objv[i]);
    }
    resultObj->refCount--;	/* Handed over without being freed. */
    return resultObj;
}

/*
 * The exact figures of a node of an exact tree that stands for no call
 * (the root, a thread's root): no calls, its total as its time, as the
 * root of a thread's own exact tree has them, so that the tree is read
 * as one of times.
 */

static void
NoCallFigures(
    Tcl_Obj *nodeObj,
    Tcl_WideInt total)
{
    PUT(nodeObj, "calls", Tcl_NewWideIntObj(0));
    PUT(nodeObj, "total_ns", Tcl_NewWideIntObj(total));
    PUT(nodeObj, "self_ns", Tcl_NewWideIntObj(0));
    PUT(nodeObj, "min_ns", Tcl_NewWideIntObj(0));
    PUT(nodeObj, "max_ns", Tcl_NewWideIntObj(0));
}

/*
 * A thread's root: its tree's top-level nodes under a node of kind
 * thread (of an exact tree, with its figures).
 */

static Tcl_Obj *
ThreadNode(
    const ThreadRec *tPtr,
    Tcl_Obj *treeObj,
    int exact)
{
    Tcl_Obj *nodeObj = Tcl_NewDictObj(), *kidsObj;
    Tcl_WideInt total = CprofDictGetWide(treeObj, "total");

    PUT(nodeObj, "name", CprofScopeThreadNameObj(tPtr));
    PUT(nodeObj, "kind", Tcl_NewStringObj("thread", -1));
    PUT(nodeObj, "thread", Tcl_NewStringObj(tPtr->tclId, -1));
    PUT(nodeObj, "self", Tcl_NewWideIntObj(0));
    PUT(nodeObj, "total", Tcl_NewWideIntObj(total));
    if (exact) {
	NoCallFigures(nodeObj, total);
    }
    kidsObj = CprofDictGet(treeObj, "children");
    PUT(nodeObj, "children", kidsObj ? kidsObj : Tcl_NewListObj(0, NULL));
    return nodeObj;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofScopeProfile --
 *
 *	The owner's profile value with what the members published: the
 *	exact trees of child interpreters beside its own, and, with more
 *	than one thread, one root per thread (kind thread). 'ownObj' is the
 *	owner's own value (unshared); returns the whole.
 *
 *----------------------------------------------------------------------
 */

Tcl_Obj *
CprofScopeProfile(
    CprofInterp *ciPtr,
    Tcl_Obj *ownObj)
{
    CprofSession *sPtr = ciPtr->sessionPtr;
    int mode = ciPtr->state.options.mode, n, i, numThreads = 0;
    const char *exactKey = (mode == CPROF_MODE_EXACT) ? "tree"
	    : (mode == CPROF_MODE_BOTH) ? "exact" : NULL;
    Tcl_Obj **trees, **exacts, **values, *metaObj, *sidesObj;
    Tcl_WideInt *partCalls;
    ThreadRec **recs, *tPtr;
    Part *pPtr, **prims, live[LIVE_MAX];
    Tcl_Obj *liveValues[LIVE_MAX];
    int numLive = 0;

    if (sPtr == NULL) {
	return ownObj;
    }
    if (ciPtr->member) {
	/*
	 * A member asked for its own profile (the package is loaded in
	 * it): its exact tree without the links.
	 */

	if (exactKey != NULL && CprofDictGet(ownObj, exactKey) != NULL) {
	    if (Tcl_IsShared(ownObj)) {
		ownObj = Tcl_DuplicateObj(ownObj);
	    }
	    PUT(ownObj, exactKey, JoinExact(CprofDictGet(ownObj, exactKey), NULL, 0));
	}
	return ownObj;
    }

    /*
     * The members of this thread still running (child interpreters):
     * what they have so far, read here, in their thread.
     */

    {
	CprofInterp *mPtr, *list[LIVE_MAX];
	Tcl_ThreadId self = Tcl_GetCurrentThread();
	int m = 0, k;

	Tcl_MutexLock(&cprofScopeMutex);
	for (mPtr = sPtr->members; mPtr != NULL && m < LIVE_MAX;
		mPtr = mPtr->nextMemberPtr) {
	    if (mPtr->thread == self && mPtr->state.running
		    && mPtr->state.startNs != 0) {
		list[m++] = mPtr;
	    }
	}
	Tcl_MutexUnlock(&cprofScopeMutex);
	for (k = 0; k < m; k++) {
	    Tcl_Obj *valueObj = CprofProfileValue(list[k], -1, 0);

	    Tcl_IncrRefCount(valueObj);
	    memset(&live[k], 0, sizeof(Part));
	    live[k].calls = CprofDictGetWide(CprofDictGet(valueObj, "meta"), "calls");
	    live[k].interpId = list[k]->interpId;
	    live[k].startNs = list[k]->state.exact.runStartMonoNs;
	    live[k].startTicks = list[k]->state.exact.runStartNs;
	    liveValues[k] = valueObj;
	}
	numLive = m;
    }

    Tcl_MutexLock(&cprofScopeMutex);
    n = sPtr->numThreads;
    recs = (ThreadRec **) ckalloc(n * sizeof(ThreadRec *));
    trees = (Tcl_Obj **) ckalloc(n * sizeof(Tcl_Obj *));
    exacts = (Tcl_Obj **) ckalloc(n * sizeof(Tcl_Obj *));
    values = (Tcl_Obj **) ckalloc(n * sizeof(Tcl_Obj *));
    memset(trees, 0, n * sizeof(Tcl_Obj *));
    memset(exacts, 0, n * sizeof(Tcl_Obj *));
    memset(values, 0, n * sizeof(Tcl_Obj *));
    for (tPtr = sPtr->threads; tPtr != NULL; tPtr = tPtr->nextPtr) {
	recs[tPtr->order] = tPtr;
    }

    /*
     * Each thread's value: the owner's own, the others' as published.
     */

    values[0] = ownObj;
    prims = (Part **) ckalloc(n * sizeof(Part *));
    memset(prims, 0, n * sizeof(Part *));
    for (pPtr = sPtr->parts; pPtr != NULL; pPtr = pPtr->nextPtr) {
	int order = pPtr->threadPtr->order;

	if (!PART_COUNTS(sPtr, pPtr)) {
	    continue;
	}
	if (pPtr->primary && order > 0 && prims[order] == NULL) {
	    /*
	     * The newest, as CprofScopeMeta takes its figures.
	     */

	    prims[order] = pPtr;
	    values[order] = Tcl_NewStringObj(pPtr->value, -1);
	}
    }
    for (i = 0; i < n; i++) {
	if (values[i] != NULL) {
	    if (i > 0) {
		Tcl_IncrRefCount(values[i]);
	    }
	    trees[i] = CprofDictGet(values[i], "tree");
	    exacts[i] = exactKey ? CprofDictGet(values[i], exactKey) : NULL;
	    if (trees[i] != NULL) {
		Tcl_IncrRefCount(trees[i]);
	    }
	    if (exacts[i] != NULL) {
		Tcl_IncrRefCount(exacts[i]);
	    }
	}
    }

    /*
     * The exact trees of each thread's interpreters joined at their
     * links, the other interpreters' (oldest first) beside where they
     * have none. Every part's value goes to the merge of call sites,
     * coverage and handlers below, and its calls to its thread's.
     */

    partCalls = (Tcl_WideInt *) ckalloc(n * sizeof(Tcl_WideInt));
    memset(partCalls, 0, n * sizeof(Tcl_WideInt));
    sidesObj = Tcl_NewListObj(0, NULL);
    Tcl_IncrRefCount(sidesObj);
    for (i = 0; i < n; i++) {
	Part *list[256];
	Tcl_Obj *others[256];
	int m = 0, k, numOthers = 0;

	for (pPtr = sPtr->parts; pPtr != NULL && m < 256;
		pPtr = pPtr->nextPtr) {
	    if (pPtr->threadPtr->order == i && PART_COUNTS(sPtr, pPtr)
		    && (!pPtr->primary || pPtr == prims[i])) {
		partCalls[i] += pPtr->calls;
		if (!pPtr->primary) {
		    list[m++] = pPtr;
		}
	    }
	}
	if (prims[i] != NULL) {
	    Tcl_ListObjAppendElement(NULL, sidesObj,
		    SideOf(values[i], i, prims[i], ciPtr));
	}
	for (k = m - 1; k >= 0; k--) {
	    Tcl_Obj *valueObj = Tcl_NewStringObj(list[k]->value, -1);
	    Tcl_Obj *exactObj = exactKey ? CprofDictGet(valueObj, exactKey) : NULL;

	    Tcl_ListObjAppendElement(NULL, sidesObj,
		    SideOf(valueObj, i, list[k], ciPtr));
	    if (exactObj != NULL) {
		others[numOthers++] = exactObj;
	    }
	}
	for (k = 0; i == 0 && k < numLive && numOthers < 256; k++) {
	    Tcl_Obj *exactObj = exactKey ? CprofDictGet(liveValues[k], exactKey)
		    : NULL;

	    partCalls[0] += live[k].calls;
	    Tcl_ListObjAppendElement(NULL, sidesObj,
		    SideOf(liveValues[k], 0, &live[k], ciPtr));
	    if (exactObj != NULL) {
		others[numOthers++] = exactObj;
	    }
	}
	if (exacts[i] == NULL) {
	    continue;
	}
	{
	    Tcl_Obj *joinedObj = JoinExact(exacts[i], others, numOthers);

	    Tcl_IncrRefCount(joinedObj);
	    Tcl_DecrRefCount(exacts[i]);
	    exacts[i] = joinedObj;
	}
	if (mode == CPROF_MODE_EXACT) {
	    if (trees[i] != NULL) {
		Tcl_DecrRefCount(trees[i]);
	    }
	    trees[i] = exacts[i];
	    Tcl_IncrRefCount(trees[i]);
	}
    }

    for (i = 0; i < n; i++) {
	if (trees[i] != NULL) {
	    numThreads++;
	}
    }
    Tcl_MutexUnlock(&cprofScopeMutex);

    if (Tcl_IsShared(ownObj)) {
	ownObj = Tcl_DuplicateObj(ownObj);
    }
    metaObj = CprofDictGet(ownObj, "meta");
    metaObj = metaObj ? Tcl_DuplicateObj(metaObj) : Tcl_NewDictObj();
    if (numThreads > 1) {
	Tcl_WideInt samples = 0, weight = 0, calls = 0;
	Tcl_Obj *rootObj, *kidsObj, *exactRootObj = NULL, *exactKidsObj = NULL;
	Tcl_WideInt total = 0, exactTotal = 0;

	rootObj = Tcl_NewDictObj();
	kidsObj = Tcl_NewListObj(0, NULL);
	if (mode == CPROF_MODE_BOTH) {
	    exactRootObj = Tcl_NewDictObj();
	    exactKidsObj = Tcl_NewListObj(0, NULL);
	}
	for (i = 0; i < n; i++) {
	    Tcl_Obj *metaI = values[i] ? CprofDictGet(values[i], "meta") : NULL;

	    if (trees[i] == NULL) {
		continue;
	    }
	    Tcl_ListObjAppendElement(NULL, kidsObj,
		    ThreadNode(recs[i], trees[i], mode == CPROF_MODE_EXACT));
	    total += CprofDictGetWide(trees[i], "total");
	    if (exactKidsObj != NULL && exacts[i] != NULL) {
		Tcl_ListObjAppendElement(NULL, exactKidsObj,
			ThreadNode(recs[i], exacts[i], 1));
		exactTotal += CprofDictGetWide(exacts[i], "total");
	    }
	    samples += CprofDictGetWide(metaI, "samples");
	    weight += CprofDictGetWide(metaI, "weight");
	    calls += partCalls[i] + (i == 0 ? CprofDictGetWide(metaI, "calls") : 0);
	}
	PUT(rootObj, "name", Tcl_NewObj());
	PUT(rootObj, "kind", Tcl_NewStringObj("root", -1));
	PUT(rootObj, "self", Tcl_NewWideIntObj(0));
	PUT(rootObj, "total", Tcl_NewWideIntObj(total));
	if (mode == CPROF_MODE_EXACT) {
	    NoCallFigures(rootObj, total);
	}
	PUT(rootObj, "children", kidsObj);
	PUT(ownObj, "tree", rootObj);
	if (exactRootObj != NULL) {
	    PUT(exactRootObj, "name", Tcl_NewObj());
	    PUT(exactRootObj, "kind", Tcl_NewStringObj("root", -1));
	    PUT(exactRootObj, "self", Tcl_NewWideIntObj(0));
	    PUT(exactRootObj, "total", Tcl_NewWideIntObj(exactTotal));
	    NoCallFigures(exactRootObj, exactTotal);
	    PUT(exactRootObj, "children", exactKidsObj);
	    PUT(ownObj, "exact", exactRootObj);
	}
	if (CprofModeSamples(mode)) {
	    PUT(metaObj, "samples", Tcl_NewWideIntObj(samples));
	    PUT(metaObj, "weight", Tcl_NewWideIntObj(weight));
	}
	if (CprofModeExact(mode)) {
	    PUT(metaObj, "calls", Tcl_NewWideIntObj(calls));
	}
    } else if (trees[0] != NULL) {
	PUT(ownObj, "tree", trees[0]);
	if (mode == CPROF_MODE_BOTH && exacts[0] != NULL) {
	    PUT(ownObj, "exact", exacts[0]);
	}
	if (CprofModeExact(mode) && partCalls[0] > 0) {
	    PUT(metaObj, "calls", Tcl_NewWideIntObj(
		    CprofDictGetWide(metaObj, "calls") + partCalls[0]));
	}
    }
    PUT(ownObj, "meta", metaObj);
    ownObj = MergeSides(ciPtr, ownObj, sidesObj);
    Tcl_DecrRefCount(sidesObj);
    ckfree(partCalls);
    for (i = 0; i < numLive; i++) {
	Tcl_DecrRefCount(liveValues[i]);
    }
    for (i = 0; i < n; i++) {
	if (trees[i] != NULL) {
	    Tcl_DecrRefCount(trees[i]);
	}
	if (exacts[i] != NULL) {
	    Tcl_DecrRefCount(exacts[i]);
	}
	if (values[i] != NULL && i > 0) {
	    Tcl_DecrRefCount(values[i]);
	}
    }
    ckfree(recs);
    ckfree(prims);
    ckfree(trees);
    ckfree(exacts);
    ckfree(values);
    return ownObj;
}

/*
 * cmdrundb.c's last write of the owner's run: the whole profile when members
 * published parts of their own (other threads, or children's exact
 * trees), else NULL (the run as flushed is the whole).
 */

Tcl_Obj *
CprofScopeWhole(
    CprofInterp *ciPtr)
{
    CprofSession *sPtr = ciPtr->sessionPtr;
    Part *pPtr;
    int parts;

    if (sPtr == NULL || ciPtr->member) {
	return NULL;
    }
    Tcl_MutexLock(&cprofScopeMutex);
    parts = 0;
    for (pPtr = sPtr->parts; pPtr != NULL; pPtr = pPtr->nextPtr) {
	if (PART_COUNTS(sPtr, pPtr)) {
	    parts = 1;
	    break;
	}
    }
    Tcl_MutexUnlock(&cprofScopeMutex);
    if (!parts) {
	return NULL;
    }
    return CprofScopeProfile(ciPtr, CprofProfileValue(ciPtr, -1, 0));
}

/*
 *----------------------------------------------------------------------
 *
 * CprofScopeMeta --
 *
 *	The owner's meta gets the session's scope and its threads: one
 *	dict each, with what its samples stand for (its own figures for the
 *	owner's thread, what was published for the others).
 *
 *----------------------------------------------------------------------
 */

void
CprofScopeMeta(
    CprofInterp *ciPtr,
    Tcl_Obj *metaObj)
{
    CprofSession *sPtr = ciPtr->sessionPtr;
    Tcl_Obj *threadsObj = Tcl_NewListObj(0, NULL);
    ThreadRec **recs, *tPtr;
    Part **parts, *pPtr;
    Tcl_WideInt *otherCalls;
    int n, i;

    Tcl_MutexLock(&cprofScopeMutex);
    n = sPtr->numThreads;
    recs = (ThreadRec **) ckalloc(n * sizeof(ThreadRec *));
    parts = (Part **) ckalloc(n * sizeof(Part *));
    memset(parts, 0, n * sizeof(Part *));
    otherCalls = (Tcl_WideInt *) ckalloc(n * sizeof(Tcl_WideInt));
    memset(otherCalls, 0, n * sizeof(Tcl_WideInt));
    for (tPtr = sPtr->threads; tPtr != NULL; tPtr = tPtr->nextPtr) {
	recs[tPtr->order] = tPtr;
    }
    for (pPtr = sPtr->parts; pPtr != NULL; pPtr = pPtr->nextPtr) {
	if (!PART_COUNTS(sPtr, pPtr)) {
	    continue;
	}
	if (pPtr->primary && parts[pPtr->threadPtr->order] == NULL) {
	    parts[pPtr->threadPtr->order] = pPtr;
	} else if (!pPtr->primary) {
	    /*
	     * The calls of its other interpreters count as the thread's.
	     */

	    otherCalls[pPtr->threadPtr->order] += pPtr->calls;
	}
    }
    for (i = 0; i < n; i++) {
	Tcl_Obj *d = Tcl_NewDictObj(), *listObj;
	Tcl_WideInt samples = 0, weight = 0, calls = 0;
	uint64_t cpuNs;
	int k;

	tPtr = recs[i];
	if (sPtr->intervals && i > 0 && parts[i] == NULL
		&& tPtr->primaryPtr == NULL) {
	    /*
	     * -history: a thread that took no part in this interval.
	     */

	    Tcl_DecrRefCount(d);
	    continue;
	}
	if (i == 0) {
	    samples = CprofDictGetWide(metaObj, "samples");
	    weight = CprofDictGetWide(metaObj, "weight");
	    calls = CprofDictGetWide(metaObj, "calls");
	} else if (parts[i] != NULL) {
	    samples = parts[i]->samples;
	    weight = parts[i]->weight;
	    calls = parts[i]->calls;
	}
	cpuNs = (tPtr->state == THREAD_RUNNING && i == 0)
		? CprofScopeThreadCpuNs() - tPtr->cpuStartNs : tPtr->cpuNs;
	PUT(d, "name", CprofScopeThreadNameObj(tPtr));
	PUT(d, "thread", Tcl_NewStringObj(tPtr->tclId, -1));
	PUT(d, "tid", Tcl_NewIntObj((int) tPtr->tid));
	PUT(d, "state", Tcl_NewStringObj(
		cprofThreadStateNames[tPtr->state == THREAD_RUNNING && i > 0
		&& sPtr->stopping ? THREAD_LATE : tPtr->state], -1));
	PUT(d, "cpu_ns", Tcl_NewWideIntObj((Tcl_WideInt) cpuNs));
	PUT(d, "samples", Tcl_NewWideIntObj(samples));
	PUT(d, "weight", Tcl_NewWideIntObj(weight));
	PUT(d, "calls", Tcl_NewWideIntObj(calls + otherCalls[i]));
	listObj = Tcl_NewListObj(0, NULL);
	for (k = 0; k < tPtr->numInterps; k++) {
	    const char *path = tPtr->interps[k] >= 0
		    ? CprofNameString(tPtr->interps[k]) : NULL;

	    Tcl_ListObjAppendElement(NULL, listObj,
		    Tcl_NewStringObj(path ? path : "", -1));
	}
	PUT(d, "interps", listObj);
	Tcl_ListObjAppendElement(NULL, threadsObj, d);
    }
    Tcl_MutexUnlock(&cprofScopeMutex);
    ckfree(recs);
    ckfree(parts);
    ckfree(otherCalls);
    PUT(metaObj, "scope", Tcl_NewStringObj(cprofScopeNames[sPtr->scope], -1));
    PUT(metaObj, "threads", threadsObj);
}

