/*
 * capturelabels.c --
 *
 *	The labels in effect (see cmdlabels.c, which sets them): a thread's
 *	table of the sets in effect per execution environment, made for
 *	the thread (CprofLabelsThread), read by the signal handler and the
 *	memory hooks (CprofLabelsNow), an interpreter's entries let go when
 *	it is deleted, the table when the thread ends. Below the sampler
 *	and the memory hooks, which call it; it calls neither (cmdlabels.c,
 *	which grows the table with the memory hooks' guard up, is above
 *	them).
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "tclcprofInt.h"
#include "capturelabels.h"
#include <tclInt.h>
#include <string.h>

static Tcl_ThreadDataKey labelKey;

static void		ThreadExit(ClientData clientData);

/*
 *----------------------------------------------------------------------
 *
 * CprofLabelsThread --
 *
 *	The calling thread's label state, made if new (normal context).
 *
 *----------------------------------------------------------------------
 */

CprofLabelThread *
CprofLabelsThread(void)
{
    CprofLabelThread **ltPtrPtr = (CprofLabelThread **)
	    Tcl_GetThreadData(&labelKey, sizeof(CprofLabelThread *));

    if (*ltPtrPtr == NULL) {
	CprofLabelThread *ltPtr = (CprofLabelThread *)
		ckalloc(sizeof(CprofLabelThread));

	memset(ltPtr, 0, sizeof(CprofLabelThread));
	*ltPtrPtr = ltPtr;
	Tcl_CreateThreadExitHandler(ThreadExit, ltPtrPtr);
    }
    return *ltPtrPtr;
}

static void
ThreadExit(
    ClientData clientData)
{
    CprofLabelThread **ltPtrPtr = (CprofLabelThread **) clientData;
    CprofLabelThread *ltPtr = *ltPtrPtr;
    int i;

    if (ltPtr == NULL) {
	return;
    }
    for (i = 0; i < ltPtr->numInterps; i++) {
	if (ltPtr->interps[i] != NULL) {
	    Tcl_DontCallWhenDeleted(ltPtr->interps[i], CprofLabelsInterpGone,
		    ltPtr);
	}
    }
    *ltPtrPtr = NULL;

    /*
     * The state itself stays (a few hundred bytes per thread that used
     * labels or sampled): a sampler or the memory hooks of the thread may
     * still look through it while the thread ends. Its table goes, the
     * lookup then finding nothing.
     */

    __atomic_store_n(&ltPtr->numInterps, 0, __ATOMIC_RELEASE);
    if (ltPtr->table != NULL) {
	LabelTable *tPtr = ltPtr->table;

	__atomic_store_n(&ltPtr->table, NULL, __ATOMIC_RELEASE);
	ckfree(tPtr);
    }
    if (ltPtr->cScopes != NULL) {
	ckfree(ltPtr->cScopes);
	ltPtr->cScopes = NULL;
	ltPtr->numC = ltPtr->capC = 0;
    }
}

LabelSlot *
CprofLabelsFind(
    LabelTable *tPtr,
    const void *env)
{
    unsigned i, n;

    if (tPtr == NULL || env == NULL) {
	return NULL;
    }
    for (i = Hash(env, tPtr->mask), n = 0; n <= tPtr->mask;
	    i = (i + 1) & tPtr->mask, n++) {
	void *e = tPtr->slots[i].env;

	if (e == NULL) {
	    return NULL;
	}
	if (e == env) {
	    return &tPtr->slots[i];
	}
    }
    return NULL;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofLabelsNow --
 *
 *	The labels in effect in the thread: a set id, 0 for none.
 *
 * Signal safety:
 *	Called from the signal handler and the memory hooks: reads the
 *	thread's preallocated table and Tcl's records of the environments
 *	running (an interpreter's current one, and the resumers of a
 *	running coroutine, all live while it runs). No allocation, no lock.
 *
 *----------------------------------------------------------------------
 */

int
CprofLabelsNow(
    const CprofLabelThread *ltPtr)
{
    LabelTable *tPtr;
    void **volatile *envAddr;
    int i, n, best = 0;
    uint64_t bestSeq = 0;

    if (ltPtr == NULL) {
	return 0;
    }
    tPtr = __atomic_load_n(&ltPtr->table, __ATOMIC_ACQUIRE);
    if (tPtr == NULL || tPtr->live == 0) {
	return 0;
    }
    n = ltPtr->numInterps;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    envAddr = ltPtr->envAddr;
    for (i = 0; i < n; i++) {
	void **addr = envAddr[i];
	ExecEnv *eePtr;
	int depth;

	if (addr == NULL) {
	    continue;
	}
	eePtr = (ExecEnv *) *(void *volatile *) addr;
	for (depth = 0; eePtr != NULL && depth < LABEL_CHAIN; depth++) {
	    LabelSlot *sPtr = CprofLabelsFind(tPtr, eePtr);
	    CoroutineData *corPtr;

	    if (sPtr != NULL) {
		if (sPtr->seq > bestSeq) {
		    bestSeq = sPtr->seq;
		    best = sPtr->id;
		}
		break;
	    }
	    corPtr = eePtr->corPtr;
	    eePtr = (corPtr != NULL) ? corPtr->callerEEPtr : NULL;
	}
    }
    return best;
}

/*
 * An interpreter deleted: its place among the thread's and its entries
 * go.
 */

void
CprofLabelsInterpGone(
    ClientData clientData,
    Tcl_Interp *interp)
{
    CprofLabelThread *ltPtr = (CprofLabelThread *) clientData;
    LabelTable *tPtr = ltPtr->table;
    unsigned j;
    int i;

    for (i = 0; i < ltPtr->numInterps; i++) {
	if (ltPtr->interps[i] == interp) {
	    ltPtr->envAddr[i] = NULL;
	    __atomic_signal_fence(__ATOMIC_SEQ_CST);
	    ltPtr->interps[i] = NULL;
	}
    }
    for (j = 0; tPtr != NULL && j <= tPtr->mask; j++) {
	LabelSlot *sPtr = &tPtr->slots[j];

	if (sPtr->env != NULL && sPtr->env != TOMB && sPtr->interp == interp) {
	    sPtr->env = TOMB;
	    tPtr->live--;
	}
    }
    for (i = ltPtr->numC - 1; i >= 0; i--) {
	if (ltPtr->cScopes[i].interp == interp) {
	    ltPtr->numC = i;
	}
    }
}
