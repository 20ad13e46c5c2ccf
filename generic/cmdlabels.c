/*
 * cmdlabels.c --
 *
 *	Labels: key value pairs a program puts on the work it does
 *	(tclcprof::label, the C interface of tclcprof.h), which samples,
 *	memory samples and exact calls carry (see LABELS in the man page).
 *
 *	A set of labels is interned once for the process as its canonical
 *	string, a Tcl list "key value ..." sorted by key, in the name table
 *	(pinned); its id is that name id + 1, 0 being no labels. The sets
 *	are bounded (LABEL_MAX_SETS): beyond, a new set is recorded as the
 *	set {tclcprof overflow}.
 *
 *	Labels are per thread, and follow Tcl's execution environments, so
 *	that a coroutine keeps its own: each thread has a small open
 *	addressing table, keyed by execution environment (Tcl's ExecEnv: an
 *	interpreter's own, or a coroutine's), of the set in effect in that
 *	environment with the sequence number of when it was set. The labels
 *	in effect now are found from the current environment of each
 *	interpreter of the thread that ever used labels: the environment's
 *	own entry, or that of the environment that resumed it (a coroutine
 *	without labels of its own runs with its resumer's), the latest set
 *	of those found winning (an interpreter called from another, inside
 *	its labels, sets them later). Nothing is done at a yield or a
 *	resume: the lookup follows Tcl's own pointers.
 *
 *	The signal handler and the memory hooks run the lookup
 *	(CprofLabelsNow, capturelabels.c, below them, as is the making of a
 *	thread's table and the letting go of an interpreter's entries;
 *	this file, which fills the table and grows it with the memory
 *	hooks' guard up, is above them): it reads the thread's table (preallocated, replaced
 *	whole when it grows: only the thread itself writes it, and a handler
 *	on that thread runs before or after a replacement, never during
 *	one) and Tcl's environment and coroutine records, live while they
 *	run. No allocation, no lock.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "tclcprofInt.h"
#include "tclcprof.h"
#include "capturelabels.h"
#include <tclInt.h>
#include <stdlib.h>
#include <string.h>

#define LABEL_MAX_KEYS	32	/* Keys in a set. */
#define LABEL_MAX_LEN	256	/* Bytes of a key or a value. */
#define LABEL_MAX_SETS	65536	/* Sets interned in the process. */
#define LABEL_INTERPS	16	/* Interpreters of a thread looked at, at
				 * first (the arrays grow as needed). */

static Tcl_HashTable labelSets;	/* Canonical string -> id. */
static int labelSetsInit = 0;
static int overflowId = 0;
static Tcl_WideInt overflows = 0;	/* Scopes recorded as the overflow
					 * set. */
TCL_DECLARE_MUTEX(labelMutex)


/*
 *----------------------------------------------------------------------
 *
 * The table --
 *
 *	CprofLabelsFind (capturelabels.c): an environment's slot, or NULL
 *	(signal safe). Set: put an
 *	environment's set and sequence. Remove: take it out. A slot is
 *	filled before its env is written (the handler matches on env);
 *	a table that fills up is replaced by a bigger one, published with
 *	one store.
 *
 *----------------------------------------------------------------------
 */

static LabelTable *
NewTable(
    unsigned size)
{
    LabelTable *tPtr = (LabelTable *) ckalloc(sizeof(LabelTable)
	    + (size - 1) * sizeof(LabelSlot));

    memset(tPtr, 0, sizeof(LabelTable) + (size - 1) * sizeof(LabelSlot));
    tPtr->mask = size - 1;
    return tPtr;
}

static void
Put(
    LabelTable *tPtr,
    void *env,
    Tcl_Interp *interp,
    int id,
    uint64_t seq)
{
    unsigned i;

    for (i = Hash(env, tPtr->mask); ; i = (i + 1) & tPtr->mask) {
	LabelSlot *sPtr = &tPtr->slots[i];

	if (sPtr->env == NULL || sPtr->env == TOMB) {
	    if (sPtr->env == NULL) {
		tPtr->used++;
	    }
	    sPtr->interp = interp;
	    sPtr->id = id;
	    sPtr->seq = seq;
	    __atomic_signal_fence(__ATOMIC_SEQ_CST);
	    sPtr->env = env;
	    tPtr->live++;
	    return;
	}
    }
}

static void
Set(
    CprofLabelThread *ltPtr,
    void *env,
    Tcl_Interp *interp,
    int id,
    uint64_t seq)
{
    LabelTable *tPtr = ltPtr->table;
    LabelSlot *sPtr = CprofLabelsFind(tPtr, env);

    if (sPtr != NULL) {
	sPtr->id = id;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	sPtr->seq = seq;
	return;
    }
    if (tPtr == NULL || 2 * (tPtr->used + 1) > tPtr->mask + 1) {
	/*
	 * Full (live slots and tombstones): a new table, twice the live
	 * slots' room at least, the live slots copied.
	 */

	unsigned size = 16, i;
	LabelTable *newPtr;

	while (size < 4 * ((tPtr ? tPtr->live : 0) + 1)) {
	    size *= 2;
	}
	newPtr = NewTable(size);
	for (i = 0; tPtr != NULL && i <= tPtr->mask; i++) {
	    LabelSlot *oPtr = &tPtr->slots[i];

	    if (oPtr->env != NULL && oPtr->env != TOMB) {
		Put(newPtr, oPtr->env, oPtr->interp, oPtr->id, oPtr->seq);
	    }
	}
	__atomic_store_n(&ltPtr->table, newPtr, __ATOMIC_RELEASE);
	if (tPtr != NULL) {
	    ckfree(tPtr);
	}
	tPtr = newPtr;
    }
    Put(tPtr, env, interp, id, seq);
}

static void
Remove(
    CprofLabelThread *ltPtr,
    void *env)
{
    LabelSlot *sPtr = CprofLabelsFind(ltPtr->table, env);

    if (sPtr != NULL) {
	sPtr->env = TOMB;
	ltPtr->table->live--;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * InterpSlot --
 *
 *	An interpreter's place among those the lookup looks at, taken at
 *	its first use of labels (the arrays grown when all are taken); its
 *	entries and place let go when it is deleted.
 *
 *----------------------------------------------------------------------
 */

/*
 * Room for more interpreters: new arrays, twice the size, the old
 * entries copied. The new envAddr is published before numInterps counts
 * a slot of it, and the old one freed at once: the handler that reads it
 * runs in this thread (a signal of its own, or the memory hooks of its
 * allocations), so none is reading it once this code runs again.
 */

static void
Grow(
    CprofLabelThread *ltPtr)
{
    int cap = ltPtr->capInterps ? 2 * ltPtr->capInterps : LABEL_INTERPS;
    void **volatile *oldAddr = ltPtr->envAddr, **volatile *newAddr;
    Tcl_Interp **newInterps;
    int i;

    CprofMemGuard(1);			/* The profiler's, not counted. */
    newAddr = (void **volatile *) ckalloc(cap * sizeof(void *));
    newInterps = (Tcl_Interp **) ckalloc(cap * sizeof(Tcl_Interp *));
    for (i = 0; i < cap; i++) {
	newAddr[i] = (i < ltPtr->capInterps) ? oldAddr[i] : NULL;
	newInterps[i] = (i < ltPtr->capInterps) ? ltPtr->interps[i] : NULL;
    }
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&ltPtr->envAddr, newAddr, __ATOMIC_RELEASE);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (oldAddr != NULL) {
	ckfree((void *) oldAddr);
    }
    if (ltPtr->interps != NULL) {
	ckfree(ltPtr->interps);
    }
    ltPtr->interps = newInterps;
    ltPtr->capInterps = cap;
    CprofMemGuard(0);
}

static void
InterpSlot(
    CprofLabelThread *ltPtr,
    Tcl_Interp *interp)
{
    int i, free = -1;

    for (i = 0; i < ltPtr->numInterps; i++) {
	if (ltPtr->interps[i] == interp) {
	    return;
	}
	if (ltPtr->interps[i] == NULL && free < 0) {
	    free = i;
	}
    }
    if (free < 0) {
	if (ltPtr->numInterps == ltPtr->capInterps) {
	    Grow(ltPtr);
	}
	free = ltPtr->numInterps;
    }
    ltPtr->interps[free] = interp;
    ltPtr->envAddr[free] = (void **) &((Interp *) interp)->execEnvPtr;
    if (free == ltPtr->numInterps) {
	__atomic_store_n(&ltPtr->numInterps, free + 1, __ATOMIC_RELEASE);
    }
    Tcl_CallWhenDeleted(interp, CprofLabelsInterpGone, ltPtr);
}

/*
 *----------------------------------------------------------------------
 *
 * Sets --
 *
 *	LabelError: a TCLCPROF LABEL error. MakeSet: the id of the set in
 *	effect under 'baseId' with the pairs added (a pair with an empty
 *	value takes its key out). CprofLabelsString: a set's canonical
 *	string (NULL for 0).
 *
 *----------------------------------------------------------------------
 */

static int
LabelError(
    Tcl_Interp *interp,
    const char *code,
    Tcl_Obj *msgObj)
{
    if (interp != NULL) {
	Tcl_SetObjResult(interp, msgObj);
	Tcl_SetErrorCode(interp, "TCLCPROF", "LABEL", code, NULL);
    } else {
	Tcl_DecrRefCount(msgObj);
    }
    return TCL_ERROR;
}

const char *
CprofLabelsString(
    int id)
{
    return id > 0 ? CprofNameString(id - 1) : NULL;
}

typedef struct Pair {
    const char *key;
    const char *value;
} Pair;

static int
ComparePairs(
    const void *a,
    const void *b)
{
    return strcmp(((const Pair *) a)->key, ((const Pair *) b)->key);
}

static int
CheckPair(
    Tcl_Interp *interp,
    const char *key,
    const char *value)
{
    if (key[0] == '\0') {
	return LabelError(interp, "KEY", Tcl_NewStringObj(
		"bad label key \"\": must not be empty", -1));
    }
    if (strchr(key, '=') != NULL) {
	return LabelError(interp, "KEY", Tcl_ObjPrintf(
		"bad label key \"%s\": must not contain \"=\"", key));
    }
    if (strlen(key) > LABEL_MAX_LEN || strlen(value) > LABEL_MAX_LEN) {
	return LabelError(interp, "LENGTH", Tcl_ObjPrintf(
		"label key or value longer than %d bytes", LABEL_MAX_LEN));
    }
    return TCL_OK;
}

static int
MakeSet(
    Tcl_Interp *interp,
    int baseId,
    int count,
    const char *const kv[],
    int *idPtr)
{
    Pair pairs[2 * LABEL_MAX_KEYS];
    Tcl_Size baseCount = 0;
    const char **baseArgv = NULL;
    const char *argv[2 * LABEL_MAX_KEYS];
    int i, j, n = 0, id, isNew;
    char *canonical;
    Tcl_HashEntry *hPtr;

    if (count % 2 != 0) {
	return LabelError(interp, "ODD", Tcl_NewStringObj(
		"labels must be a list of keys and values (an even number "
		"of elements)", -1));
    }
    if (count / 2 > LABEL_MAX_KEYS) {
	return LabelError(interp, "COUNT", Tcl_ObjPrintf(
		"too many labels: at most %d keys", LABEL_MAX_KEYS));
    }
    for (i = 0; i < count; i += 2) {
	if (CheckPair(interp, kv[i], kv[i + 1]) != TCL_OK) {
	    return TCL_ERROR;
	}
    }
    if (baseId > 0 && Tcl_SplitList(NULL, CprofLabelsString(baseId),
	    &baseCount, &baseArgv) == TCL_OK) {
	for (i = 0; i + 1 < baseCount && n < LABEL_MAX_KEYS; i += 2) {
	    pairs[n].key = baseArgv[i];
	    pairs[n++].value = baseArgv[i + 1];
	}
    }
    for (i = 0; i < count; i += 2) {
	for (j = 0; j < n; j++) {
	    if (strcmp(pairs[j].key, kv[i]) == 0) {
		break;
	    }
	}
	if (j == n) {
	    if (n == 2 * LABEL_MAX_KEYS) {
		break;
	    }
	    n++;
	}
	pairs[j].key = kv[i];
	pairs[j].value = kv[i + 1];
    }
    for (i = j = 0; i < n; i++) {
	if (pairs[i].value[0] != '\0') {
	    pairs[j++] = pairs[i];
	}
    }
    n = j;
    if (n > LABEL_MAX_KEYS) {
	if (baseArgv != NULL) {
	    Tcl_Free((char *) baseArgv);
	}
	return LabelError(interp, "COUNT", Tcl_ObjPrintf(
		"too many labels: at most %d keys", LABEL_MAX_KEYS));
    }
    if (n == 0) {
	if (baseArgv != NULL) {
	    Tcl_Free((char *) baseArgv);
	}
	*idPtr = 0;
	return TCL_OK;
    }
    qsort(pairs, n, sizeof(Pair), ComparePairs);
    for (i = 0; i < n; i++) {
	argv[2 * i] = pairs[i].key;
	argv[2 * i + 1] = pairs[i].value;
    }
    canonical = Tcl_Merge(2 * n, argv);
    if (baseArgv != NULL) {
	Tcl_Free((char *) baseArgv);
    }

    Tcl_MutexLock(&labelMutex);
    if (!labelSetsInit) {
	Tcl_InitHashTable(&labelSets, TCL_STRING_KEYS);
	labelSetsInit = 1;
    }
    hPtr = Tcl_FindHashEntry(&labelSets, canonical);
    if (hPtr != NULL) {
	id = PTR2INT(Tcl_GetHashValue(hPtr));
    } else if (labelSets.numEntries >= LABEL_MAX_SETS) {
	if (overflowId == 0) {
	    overflowId = CprofNameIntern("tclcprof overflow", -1) + 1;
	}
	id = overflowId;
	overflows++;
    } else {
	id = CprofNameIntern(canonical, -1) + 1;
	hPtr = Tcl_CreateHashEntry(&labelSets, canonical, &isNew);
	Tcl_SetHashValue(hPtr, INT2PTR(id));
    }
    Tcl_MutexUnlock(&labelMutex);
    Tcl_Free(canonical);
    *idPtr = id;
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * Begin, End --
 *
 *	A scope of labels in the interpreter's current environment: the
 *	new set put in effect there, what it replaced kept in the scope;
 *	and put back. Begin returns TCL_ERROR for bad labels.
 *
 *----------------------------------------------------------------------
 */

static int
Begin(
    Tcl_Interp *interp,
    int count,
    const char *const kv[],
    LabelScope *scopePtr)
{
    CprofLabelThread *ltPtr = CprofLabelsThread();
    void *env = ((Interp *) interp)->execEnvPtr;
    LabelSlot *sPtr;
    int id;

    if (MakeSet(interp, CprofLabelsNow(ltPtr), count, kv, &id) != TCL_OK) {
	return TCL_ERROR;
    }
    scopePtr->interp = interp;
    scopePtr->env = env;
    scopePtr->id = id;
    InterpSlot(ltPtr, interp);		/* (Grows as needed.) */
    sPtr = CprofLabelsFind(ltPtr->table, env);
    scopePtr->had = (sPtr != NULL);
    scopePtr->oldId = sPtr ? sPtr->id : 0;
    scopePtr->oldSeq = sPtr ? sPtr->seq : 0;
    Set(ltPtr, env, interp, id, ++ltPtr->seq);
    return TCL_OK;
}

static void
End(
    LabelScope *scopePtr)
{
    CprofLabelThread *ltPtr = CprofLabelsThread();

    if (scopePtr->env == NULL) {
	return;
    }
    if (scopePtr->had) {
	Set(ltPtr, scopePtr->env, scopePtr->interp, scopePtr->oldId,
		scopePtr->oldSeq);
    } else {
	Remove(ltPtr, scopePtr->env);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CprofLabelsDict --
 *
 *	A set as a new dictionary (empty for 0).
 *
 *----------------------------------------------------------------------
 */

Tcl_Obj *
CprofLabelsDict(
    int id)
{
    Tcl_Obj *listObj = Tcl_NewStringObj(id > 0 ? CprofLabelsString(id) : "",
	    -1);
    Tcl_Obj *dictObj = Tcl_NewDictObj();
    Tcl_Size n, i;
    Tcl_Obj **elems;

    Tcl_IncrRefCount(listObj);
    if (Tcl_ListObjGetElements(NULL, listObj, &n, &elems) == TCL_OK) {
	for (i = 0; i + 1 < n; i += 2) {
	    Tcl_DictObjPut(NULL, dictObj, elems[i], elems[i + 1]);
	}
    }
    Tcl_DecrRefCount(listObj);
    return dictObj;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofLabelObjCmd, LabelNRCmd, LabelDone --
 *
 *	tclcprof::label ?labels script?
 *
 *	Without arguments, the labels in effect; with them, the script
 *	evaluated in the caller's context with the labels added, its
 *	result, code and options passed through (the scope is ended by an
 *	NRE callback: a coroutine may yield inside).
 *
 *----------------------------------------------------------------------
 */

static int
LabelDone(
    ClientData data[],
    Tcl_Interp *interp,
    int result)
{
    LabelScope *scopePtr = (LabelScope *) data[0];

    (void) interp;
    End(scopePtr);
    ckfree(scopePtr);
    return result;
}

static int
LabelNRCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    Tcl_Size n, i;
    Tcl_Obj **elems;
    const char *kv[2 * LABEL_MAX_KEYS + 2];
    LabelScope *scopePtr;

    (void) clientData;
    if (objc == 1) {
	Tcl_SetObjResult(interp,
		CprofLabelsDict(CprofLabelsNow(CprofLabelsThread())));
	return TCL_OK;
    }
    if (objc != 3) {
	CprofWrongArgs(interp, 1, objv, "?labels script?");
	return TCL_ERROR;
    }
    if (Tcl_ListObjGetElements(NULL, objv[1], &n, &elems) != TCL_OK) {
	return LabelError(interp, "LIST", Tcl_ObjPrintf(
		"labels must be a list of keys and values, not \"%s\"",
		Tcl_GetString(objv[1])));
    }
    if (n % 2 != 0) {
	return LabelError(interp, "ODD", Tcl_NewStringObj(
		"labels must be a list of keys and values (an even number "
		"of elements)", -1));
    }
    if (n > 2 * LABEL_MAX_KEYS) {
	return LabelError(interp, "COUNT", Tcl_ObjPrintf(
		"too many labels: at most %d keys", LABEL_MAX_KEYS));
    }
    for (i = 0; i < n; i++) {
	kv[i] = Tcl_GetString(elems[i]);
    }
    scopePtr = (LabelScope *) ckalloc(sizeof(LabelScope));
    if (Begin(interp, (int) n, kv, scopePtr) != TCL_OK) {
	ckfree(scopePtr);
	return TCL_ERROR;
    }
    Tcl_NRAddCallback(interp, LabelDone, scopePtr, NULL, NULL, NULL);
    return Tcl_NREvalObj(interp, objv[2], 0);
}

int
CprofLabelObjCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    return Tcl_NRCallObjProc(interp, LabelNRCmd, clientData, objc, objv);
}

int
CprofLabelNRCmd(
    ClientData clientData,
    Tcl_Interp *interp,
    int objc,
    Tcl_Obj *const objv[])
{
    return LabelNRCmd(clientData, interp, objc, objv);
}

/*
 *----------------------------------------------------------------------
 *
 * The C interface (tclcprof.h) --
 *
 *	ApiPush, ApiPop, ApiGet: scopes kept per thread, innermost last;
 *	a token is a scope's place + 1.
 *
 *----------------------------------------------------------------------
 */

static int
ApiPush(
    Tcl_Interp *interp,
    int count,
    const char *const keyValues[])
{
    CprofLabelThread *ltPtr = CprofLabelsThread();
    LabelScope scope;

    if (count < 0 || (count > 0 && keyValues == NULL)) {
	LabelError(interp, "ODD", Tcl_NewStringObj(
		"labels must be keys and values", -1));
	return 0;
    }
    if (Begin(interp, count, keyValues, &scope) != TCL_OK) {
	return 0;
    }
    if (ltPtr->numC == ltPtr->capC) {
	ltPtr->capC = ltPtr->capC ? 2 * ltPtr->capC : 8;
	ltPtr->cScopes = (LabelScope *) ckrealloc(ltPtr->cScopes,
		ltPtr->capC * sizeof(LabelScope));
    }
    ltPtr->cScopes[ltPtr->numC++] = scope;
    return ltPtr->numC;
}

static int
ApiPop(
    Tcl_Interp *interp,
    int token)
{
    CprofLabelThread *ltPtr = CprofLabelsThread();

    if (token < 1 || token > ltPtr->numC) {
	if (interp != NULL) {
	    Tcl_SetObjResult(interp, Tcl_ObjPrintf(
		    "no labels pushed with token %d in this thread", token));
	    Tcl_SetErrorCode(interp, "TCLCPROF", "LABEL", "POP", NULL);
	}
	return TCL_ERROR;
    }
    while (ltPtr->numC >= token) {
	End(&ltPtr->cScopes[--ltPtr->numC]);
    }
    return TCL_OK;
}

static Tcl_Obj *
ApiGet(
    Tcl_Interp *interp)
{
    (void) interp;
    return CprofLabelsDict(CprofLabelsNow(CprofLabelsThread()));
}

static const TclcprofApi api = {
    TCLCPROF_API_VERSION,
    ApiPush,
    ApiPop,
    ApiGet
};

const void *
CprofLabelsApi(void)
{
    return &api;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofLabelsStatus --
 *
 *	status's "labels": sets (interned in the process), limit, and
 *	overflow (scopes recorded as the set {tclcprof overflow} because
 *	the limit was reached); in_effect, the labels in effect in the
 *	calling thread.
 *
 *----------------------------------------------------------------------
 */

Tcl_Obj *
CprofLabelsStatus(void)
{
    Tcl_Obj *dictObj = Tcl_NewDictObj();
    Tcl_WideInt sets, over;

    Tcl_MutexLock(&labelMutex);
    sets = labelSetsInit ? labelSets.numEntries : 0;
    over = overflows;
    Tcl_MutexUnlock(&labelMutex);
    Tcl_DictObjPut(NULL, dictObj, Tcl_NewStringObj("sets", -1),
	    Tcl_NewWideIntObj(sets));
    Tcl_DictObjPut(NULL, dictObj, Tcl_NewStringObj("limit", -1),
	    Tcl_NewIntObj(LABEL_MAX_SETS));
    Tcl_DictObjPut(NULL, dictObj, Tcl_NewStringObj("overflow", -1),
	    Tcl_NewWideIntObj(over));
    Tcl_DictObjPut(NULL, dictObj, Tcl_NewStringObj("in_effect", -1),
	    CprofLabelsDict(CprofLabelsNow(CprofLabelsThread())));
    return dictObj;
}
