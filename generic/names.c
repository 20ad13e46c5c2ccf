/*
 * names.c --
 *
 *	The name table: process-wide interned display names. Every stage
 *	stores ids, never strings (the signal handler copies ids). An id
 *	lives while something holds it: each structure that keeps ids has
 *	a holder (CprofNameRefs, a bit per id) and takes the ids it stores,
 *	and lets go of all of them when its contents go: an interpreter's
 *	naming caches (whose names the capture's records, the level stack
 *	and the sampler's ring use) when its run stops; a call tree, exact
 *	timing's records and the handlers' statistics (the profile) at
 *	reset and at the next start; the event records when the run stops.
 *	An id no holder holds is freed, and given again to another name.
 *	The profiler's fixed vocabulary and the names of native code (the
 *	symbolizer's, bounded by the code loaded) are pinned instead.
 *	Why holders: the ids are in many structures of several
 *	interpreters and threads at once, some written by a signal handler.
 *	A mark over all of them would have to stop the threads that profile
 *	and know every structure; a count per stored id would cost on every
 *	push. A holder is touched only when its structure stores an id it
 *	did not have (a new node, a name missed by the caches), by its own
 *	thread, and each release happens where its structure is emptied,
 *	after what copied ids out of it is drained (stop drains the ring
 *	and the memory samples, a child interpreter's its host's). A
 *	profile database's cache of frame rows by id lives no longer than
 *	the run whose profile holds those ids. Names of commands the
 *	program makes on the fly (procs, C commands with generated names)
 *	stay held by the naming caches until the run stops.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "tclcprofInt.h"
#include <string.h>
#include <stdio.h>

/*
 * The process-wide name table. An entry lives while a holder (see the file
 * comment) holds it or it is pinned; a free entry's slot (name NULL) is on
 * the free list, threaded through 'origin', and its id is given again.
 */

typedef struct NameEntry {
    char *name;			/* The string (an alias's is its base's);
				 * NULL for a free slot. */
    Tcl_HashEntry *hPtr;	/* Its entry in byName, or in aliases. */
    int origin;			/* An alias's origin id, or -1; free slot:
				 * the next free id, or -1. */
    int base;			/* An alias's name id, or -1. */
    int refs;			/* Holders holding it, and the aliases made
				 * of it (base or origin). */
    int pinned;			/* Never freed (CprofNameIntern). */
} NameEntry;

typedef struct NameTable {
    Tcl_HashTable byName;	/* name -> id */
    Tcl_HashTable aliases;	/* (name id, origin id) -> alias id */
    NameEntry *entries;		/* id -> entry */
    int count;			/* Slots in use or free. */
    int capacity;
    int live;			/* Entries in use. */
    int freeList;		/* First free id, or -1. */
    int initialized;
} NameTable;

static NameTable nameTable;
static unsigned nameGeneration = 0;
TCL_DECLARE_MUTEX(nameMutex)

/*
 *----------------------------------------------------------------------
 *
 * The name table --
 *
 *	CprofNameIntern: the id of a name, pinned (never freed: the fixed
 *	vocabulary of the profiler, native code's names). CprofNameInternIn:
 *	the id of a name, held by a holder. CprofNameHoldSlow (through
 *	CprofNameHold): a holder takes an id it has not held yet.
 *	CprofNameRelease: a holder lets go of every id it holds; an id no
 *	holder holds any more, and not pinned, is freed (its string and
 *	table entries go, its id may name another string later).
 *	CprofNameString: the string of an id (NULL for a bad or free id),
 *	valid while the id is held. CprofNameCount: the names in the table;
 *	CprofNameGeneration: how many were ever freed (caches indexed by id
 *	start afresh when it moves). CprofNameList: the names matching a
 *	pattern (tclcprof::debug names).
 *
 *----------------------------------------------------------------------
 */

static void
InitNameTable(void)
{
    if (!nameTable.initialized) {
	Tcl_InitHashTable(&nameTable.byName, TCL_STRING_KEYS);
	Tcl_InitHashTable(&nameTable.aliases, 2);
	nameTable.freeList = -1;
	nameTable.initialized = 1;
    }
}

/*
 * A new entry, on a free slot if there is one. Called with nameMutex
 * held.
 */

static int
NewEntry(
    char *name,
    Tcl_HashEntry *hPtr,
    int origin,
    int base)
{
    NameEntry *ePtr;
    int id;

    if (nameTable.freeList >= 0) {
	id = nameTable.freeList;
	nameTable.freeList = nameTable.entries[id].origin;
    } else {
	if (nameTable.count == nameTable.capacity) {
	    nameTable.capacity = nameTable.capacity
		    ? 2 * nameTable.capacity : 256;
	    nameTable.entries = (NameEntry *) ckrealloc(nameTable.entries,
		    nameTable.capacity * sizeof(NameEntry));
	}
	id = nameTable.count++;
    }
    ePtr = &nameTable.entries[id];
    ePtr->name = name;
    ePtr->hPtr = hPtr;
    ePtr->origin = origin;
    ePtr->base = base;
    ePtr->refs = 0;
    ePtr->pinned = 0;
    nameTable.live++;
    return id;
}

static inline int
LiveId(
    int id)
{
    return id >= 0 && id < nameTable.count
	    && nameTable.entries[id].name != NULL;
}

/*
 * One reference less; the entry goes with the last one unless pinned, and
 * an alias lets go of its name and origin. Called with nameMutex held.
 */

static void
Unref(
    int id)
{
    while (LiveId(id)) {
	NameEntry *ePtr = &nameTable.entries[id];
	int base = ePtr->base, origin = ePtr->origin;

	if (--ePtr->refs > 0 || ePtr->pinned) {
	    return;
	}
	Tcl_DeleteHashEntry(ePtr->hPtr);
	ePtr->name = NULL;
	ePtr->hPtr = NULL;
	ePtr->origin = nameTable.freeList;
	nameTable.freeList = id;
	nameTable.live--;
	nameGeneration++;
	if (base < 0) {
	    return;
	}
	Unref(origin);
	id = base;
    }
}

/*
 * The id of a name, made if new. Called with nameMutex held.
 */

static int
Lookup(
    const char *name,
    int length)
{
    Tcl_HashEntry *hPtr;
    Tcl_DString ds;
    int isNew, id;

    Tcl_DStringInit(&ds);
    Tcl_DStringAppend(&ds, name, length);
    InitNameTable();
    hPtr = Tcl_CreateHashEntry(&nameTable.byName, Tcl_DStringValue(&ds),
	    &isNew);
    if (isNew) {
	id = NewEntry((char *) Tcl_GetHashKey(&nameTable.byName, hPtr), hPtr,
		-1, -1);
	Tcl_SetHashValue(hPtr, INT2PTR(id));
    } else {
	id = PTR2INT(Tcl_GetHashValue(hPtr));
    }
    Tcl_DStringFree(&ds);
    return id;
}

/*
 * Whether a holder holds an id; take it if not. Called with nameMutex
 * held.
 */

static void
HoldLocked(
    CprofNameRefs *refsPtr,
    int id)
{
    int word = id >> 6;

    if (!LiveId(id)) {
	return;
    }
    if (word >= refsPtr->numWords) {
	int n = refsPtr->numWords ? refsPtr->numWords : 4;

	while (n <= word) {
	    n *= 2;
	}
	refsPtr->bits = (uint64_t *) ckrealloc(refsPtr->bits,
		n * sizeof(uint64_t));
	memset(refsPtr->bits + refsPtr->numWords, 0,
		(n - refsPtr->numWords) * sizeof(uint64_t));
	refsPtr->numWords = n;
    }
    if (!(refsPtr->bits[word] & ((uint64_t) 1 << (id & 63)))) {
	refsPtr->bits[word] |= (uint64_t) 1 << (id & 63);
	refsPtr->count++;
	nameTable.entries[id].refs++;
    }
}

/*
 * The id of a name, made if new: pinned (CprofNameIntern, or a NULL
 * holder), or held by a holder (CprofNameInternIn).
 */

int
CprofNameIntern(
    const char *name,
    int length)
{
    return CprofNameInternIn(NULL, name, length);
}

int
CprofNameInternIn(
    CprofNameRefs *refsPtr,
    const char *name,
    int length)
{
    int id;

    if (length < 0) {
	length = (int) strlen(name);
    }
    Tcl_MutexLock(&nameMutex);
    id = Lookup(name, length);
    if (refsPtr == NULL) {
	nameTable.entries[id].pinned = 1;
    } else {
	HoldLocked(refsPtr, id);
    }
    Tcl_MutexUnlock(&nameMutex);
    return id;
}

void
CprofNameHoldSlow(
    CprofNameRefs *refsPtr,
    int id)
{
    Tcl_MutexLock(&nameMutex);
    HoldLocked(refsPtr, id);
    Tcl_MutexUnlock(&nameMutex);
}

void
CprofNameRelease(
    CprofNameRefs *refsPtr)
{
    int w;

    if (refsPtr->bits == NULL) {
	return;
    }
    Tcl_MutexLock(&nameMutex);
    for (w = 0; w < refsPtr->numWords; w++) {
	uint64_t bits = refsPtr->bits[w];

	while (bits != 0) {
	    int b = __builtin_ctzll(bits);

	    bits &= bits - 1;
	    Unref(w * 64 + b);
	}
    }
    Tcl_MutexUnlock(&nameMutex);
    ckfree(refsPtr->bits);
    refsPtr->bits = NULL;
    refsPtr->numWords = 0;
    refsPtr->count = 0;
}

const char *
CprofNameString(
    int id)
{
    const char *name = NULL;

    Tcl_MutexLock(&nameMutex);
    if (LiveId(id)) {
	name = nameTable.entries[id].name;
    }
    Tcl_MutexUnlock(&nameMutex);
    return name;
}

int
CprofNameCount(void)
{
    int count;

    Tcl_MutexLock(&nameMutex);
    count = nameTable.live;
    Tcl_MutexUnlock(&nameMutex);
    return count;
}

unsigned
CprofNameGeneration(void)
{
    return __atomic_load_n(&nameGeneration, __ATOMIC_RELAXED);
}

Tcl_Obj *
CprofNameList(
    const char *pattern)
{
    Tcl_Obj *listObj = Tcl_NewListObj(0, NULL);
    int id;

    Tcl_MutexLock(&nameMutex);
    for (id = 0; id < nameTable.count; id++) {
	const NameEntry *ePtr = &nameTable.entries[id];

	if (ePtr->name != NULL && ePtr->base < 0
		&& Tcl_StringMatch(ePtr->name, pattern)) {
	    Tcl_ListObjAppendElement(NULL, listObj,
		    Tcl_NewStringObj(ePtr->name, -1));
	}
    }
    Tcl_MutexUnlock(&nameMutex);
    return listObj;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofNameWithOrigin, CprofNameOrigin --
 *
 *	An alias: an id of its own for a name and an origin (the frame of
 *	an event handler, named "after ::h::work", scheduled at some place
 *	of the program, the origin's name), so that handlers of the same
 *	name scheduled at different places are frames of their own
 *	everywhere ids are compared, while CprofNameString gives the name.
 *	The alias is held by the holder given; it holds its name and its
 *	origin while it lives.
 *
 * Results:
 *	The alias's id; the origin's id of an alias, -1 for another id.
 *
 *----------------------------------------------------------------------
 */

int
CprofNameWithOrigin(
    CprofNameRefs *refsPtr,
    int nameId,
    int originId)
{
    Tcl_HashEntry *hPtr;
    int key[2], isNew, id = nameId;

    key[0] = nameId;
    key[1] = originId;
    Tcl_MutexLock(&nameMutex);
    InitNameTable();
    if (LiveId(nameId) && LiveId(originId)
	    && nameTable.entries[nameId].base < 0) {
	hPtr = Tcl_CreateHashEntry(&nameTable.aliases, (char *) key, &isNew);
	if (isNew) {
	    id = NewEntry(nameTable.entries[nameId].name, hPtr, originId,
		    nameId);
	    nameTable.entries[nameId].refs++;
	    nameTable.entries[originId].refs++;
	    Tcl_SetHashValue(hPtr, INT2PTR(id));
	} else {
	    id = PTR2INT(Tcl_GetHashValue(hPtr));
	}
    }
    HoldLocked(refsPtr, id);
    Tcl_MutexUnlock(&nameMutex);
    return id;
}

int
CprofNameOrigin(
    int id)
{
    int origin = -1;

    Tcl_MutexLock(&nameMutex);
    if (LiveId(id)) {
	origin = nameTable.entries[id].base >= 0
		? nameTable.entries[id].origin : -1;
    }
    Tcl_MutexUnlock(&nameMutex);
    return origin;
}
