/*
 * captureoomethods.c --
 *
 *	TclOO methods, for both captures. A method is not a command: a call
 *	"obj m" enters the object's command (which the capture sees and
 *	names "Class m"), and TclOO then runs a chain of method
 *	implementations: filters, m itself, what m reaches with [next],
 *	constructors and destructors. Procedure-bodied methods, TclOO's own
 *	and those of [oo::define]/[oo::objdefine], have pre-call hooks
 *	(ProcedureMethod's preCallProc, called when the body is about to
 *	start, tclOOMethod.c) that TclOO leaves empty and Itcl uses; this
 *	file sets them, keeping any hook already there and calling it
 *	first. The method type and the method's clientData are left alone:
 *	TclOO and Itcl recognise methods by type (info class definition,
 *	Tcl_MethodIsType).
 *
 *	When a method's body starts:
 *
 *	- If the frame on top is the command frame of the call that started
 *	  this chain (an object command frame for the same object, at the
 *	  same level, not yet claimed, and the method first in its chain),
 *	  the frame is claimed: it is this method's, renamed if a filter or
 *	  an unknown handler is what runs.
 *	- Otherwise (next, nextto, constructors, destructors, C methods
 *	  calling on) a frame of its own is pushed at the current level,
 *	  anchored like the frame below it (a method body runs in the
 *	  trampoline of the command that started the chain), and popped by an
 *	  NRE callback queued below the method's own.
 *
 *	Hooks are set when the capture starts, on every class and object,
 *	and later on the classes and object of each call whose method name
 *	was not in the naming cache (a new method, class or object, or a
 *	definition since). They are cleared, every class and object
 *	visited, when the capture stops.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include <tclInt.h>
#include <tclOOInt.h>
#include "captureInt.h"
#include <string.h>

struct CprofMethods {
    CprofCapture *capPtr;
    Tcl_HashTable chained;	/* ProcedureMethod* -> the preCallProc that
				 * was there (Itcl's). */
    Tcl_HashTable seen;		/* Class* -> creation epoch and TclOO epoch
				 * when its methods were last hooked. */
    Tcl_WideInt hooked;		/* Methods hooked. */
    Tcl_WideInt claimed;	/* Method bodies whose frame was their
				 * command's. */
};

typedef struct SeenClass {
    int creationEpoch;
    int epoch;
} SeenClass;

static int		PreCall(void *clientData, Tcl_Interp *interp,
			    Tcl_ObjectContext context,
			    Tcl_CallFrame *framePtr, int *isFinished);

/*
 *----------------------------------------------------------------------
 *
 * HookMethod, UnhookMethod --
 *
 *	Set (clear) the pre-call hook of one method, if it has a procedure
 *	body.
 *
 *----------------------------------------------------------------------
 */

static void
HookMethod(
    CprofMethods *mtPtr,
    Method *mPtr)
{
    ProcedureMethod *pmPtr;

    if (mPtr == NULL || mPtr->typePtr == NULL || mPtr->typePtr
	    != mtPtr->capPtr->statePtr->naming.internals->procMethodType) {
	return;
    }
    pmPtr = (ProcedureMethod *) mPtr->clientData;
    if (pmPtr == NULL || pmPtr->version != TCLOO_PROCEDURE_METHOD_VERSION
	    || pmPtr->preCallProc == PreCall) {
	return;
    }
    if (pmPtr->preCallProc != NULL) {
	int isNew;
	Tcl_HashEntry *hPtr = Tcl_CreateHashEntry(&mtPtr->chained,
		(char *) pmPtr, &isNew);

	Tcl_SetHashValue(hPtr, pmPtr->preCallProc);
    }
    pmPtr->preCallProc = PreCall;
    mtPtr->hooked++;
}

static void
UnhookMethod(
    CprofMethods *mtPtr,
    Method *mPtr)
{
    ProcedureMethod *pmPtr;
    Tcl_HashEntry *hPtr;

    if (mPtr == NULL || mPtr->typePtr == NULL || mPtr->typePtr
	    != mtPtr->capPtr->statePtr->naming.internals->procMethodType) {
	return;
    }
    pmPtr = (ProcedureMethod *) mPtr->clientData;
    if (pmPtr == NULL || pmPtr->preCallProc != PreCall) {
	return;
    }
    hPtr = Tcl_FindHashEntry(&mtPtr->chained, (char *) pmPtr);
    pmPtr->preCallProc = hPtr ? (TclOO_PreCallProc *) Tcl_GetHashValue(hPtr)
	    : NULL;
}

/*
 * Every method of a table of methods.
 */

static void
ForMethods(
    CprofMethods *mtPtr,
    Tcl_HashTable *tablePtr,
    void (*proc)(CprofMethods *, Method *))
{
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    if (tablePtr == NULL) {
	return;
    }
    for (hPtr = Tcl_FirstHashEntry(tablePtr, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	proc(mtPtr, Tcl_GetHashValue(hPtr));
    }
}

/*
 * A class's own methods, constructor and destructor.
 */

static void
ForClass(
    CprofMethods *mtPtr,
    Class *clsPtr,
    void (*proc)(CprofMethods *, Method *))
{
    ForMethods(mtPtr, &clsPtr->classMethods, proc);
    proc(mtPtr, clsPtr->constructorPtr);
    proc(mtPtr, clsPtr->destructorPtr);
}

/*
 * A class and what its methods' chains can reach: its mixins and
 * superclasses, depth first; each class once per TclOO epoch.
 */

static void
HookHierarchy(
    CprofMethods *mtPtr,
    Class *clsPtr,
    int epoch,
    int depth)
{
    Tcl_HashEntry *hPtr;
    SeenClass *seenPtr;
    int isNew, i;

    if (clsPtr == NULL || clsPtr->thisPtr == NULL || depth > 64) {
	return;
    }
    hPtr = Tcl_CreateHashEntry(&mtPtr->seen, (char *) clsPtr, &isNew);
    if (isNew) {
	seenPtr = (SeenClass *) ckalloc(sizeof(SeenClass));
	Tcl_SetHashValue(hPtr, seenPtr);
    } else {
	seenPtr = Tcl_GetHashValue(hPtr);
	if (seenPtr->epoch == epoch
		&& seenPtr->creationEpoch == clsPtr->thisPtr->creationEpoch) {
	    return;
	}
    }
    seenPtr->epoch = epoch;
    seenPtr->creationEpoch = clsPtr->thisPtr->creationEpoch;
    ForClass(mtPtr, clsPtr, HookMethod);
    for (i = 0; i < clsPtr->mixins.num; i++) {
	HookHierarchy(mtPtr, clsPtr->mixins.list[i], epoch, depth + 1);
    }
    for (i = 0; i < clsPtr->superclasses.num; i++) {
	HookHierarchy(mtPtr, clsPtr->superclasses.list[i], epoch, depth + 1);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CprofMethodsSeeObject --
 *
 *	A call through an object's command (or its "my") missed the naming
 *	cache: hook what the object's chains can reach, its own methods and
 *	mixins and its class's hierarchy, and, for a class called as an
 *	object ([Foo new]), that class's hierarchy (its constructors).
 *
 *----------------------------------------------------------------------
 */

void
CprofMethodsSeeObject(
    CprofCapture *capPtr,
    Tcl_Command objCmd)
{
    CprofMethods *mtPtr = capPtr->methodsPtr;
    Object *oPtr = (Object *) ((Command *) objCmd)->objClientData;
    int epoch, i;

    if (mtPtr == NULL || oPtr == NULL || oPtr->fPtr == NULL) {
	return;
    }
    epoch = oPtr->fPtr->epoch;
    ForMethods(mtPtr, oPtr->methodsPtr, HookMethod);
    for (i = 0; i < oPtr->mixins.num; i++) {
	HookHierarchy(mtPtr, oPtr->mixins.list[i], epoch, 0);
    }
    HookHierarchy(mtPtr, oPtr->selfCls, epoch, 0);
    if (oPtr->classPtr != NULL) {
	HookHierarchy(mtPtr, oPtr->classPtr, epoch, 0);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * Every class and object --
 *
 *	Every class is oo::object or below it (subclasses), and every
 *	object is an instance of some class.
 *
 *----------------------------------------------------------------------
 */

static void
ForAll(
    CprofMethods *mtPtr,
    Class *clsPtr,
    Tcl_HashTable *visitedPtr,
    void (*proc)(CprofMethods *, Method *))
{
    int isNew, i;

    if (clsPtr == NULL) {
	return;
    }
    Tcl_CreateHashEntry(visitedPtr, (char *) clsPtr, &isNew);
    if (!isNew) {
	return;
    }
    ForClass(mtPtr, clsPtr, proc);
    for (i = 0; i < clsPtr->instances.num; i++) {
	Object *oPtr = clsPtr->instances.list[i];

	if (oPtr != NULL) {
	    ForMethods(mtPtr, oPtr->methodsPtr, proc);
	}
    }
    for (i = 0; i < clsPtr->subclasses.num; i++) {
	ForAll(mtPtr, clsPtr->subclasses.list[i], visitedPtr, proc);
    }
    for (i = 0; i < clsPtr->mixinSubs.num; i++) {
	ForAll(mtPtr, clsPtr->mixinSubs.list[i], visitedPtr, proc);
    }
}

static void
ForEveryMethod(
    CprofMethods *mtPtr,
    void (*proc)(CprofMethods *, Method *))
{
    Foundation *fPtr = (Foundation *)
	    ((Interp *) mtPtr->capPtr->statePtr->interp)->objectFoundation;
    Tcl_HashTable visited;

    if (fPtr == NULL) {
	return;
    }
    Tcl_InitHashTable(&visited, TCL_ONE_WORD_KEYS);
    ForAll(mtPtr, fPtr->objectCls, &visited, proc);
    ForAll(mtPtr, fPtr->classCls, &visited, proc);
    Tcl_DeleteHashTable(&visited);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofMethodsInstall, CprofMethodsRemove --
 *
 *	Hook every procedure method of the interpreter; unhook them.
 *
 *----------------------------------------------------------------------
 */

void
CprofMethodsInstall(
    CprofCapture *capPtr)
{
    CprofMethods *mtPtr;

    if (capPtr->statePtr->naming.internals->procMethodType == NULL) {
	return;
    }
    mtPtr = (CprofMethods *) ckalloc(sizeof(CprofMethods));
    memset(mtPtr, 0, sizeof(CprofMethods));
    mtPtr->capPtr = capPtr;
    Tcl_InitHashTable(&mtPtr->chained, TCL_ONE_WORD_KEYS);
    Tcl_InitHashTable(&mtPtr->seen, TCL_ONE_WORD_KEYS);
    capPtr->methodsPtr = mtPtr;
    ForEveryMethod(mtPtr, HookMethod);
}

void
CprofMethodsRemove(
    CprofCapture *capPtr)
{
    CprofMethods *mtPtr = capPtr->methodsPtr;
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    if (mtPtr == NULL) {
	return;
    }
    if (!capPtr->statePtr->deleting) {
	ForEveryMethod(mtPtr, UnhookMethod);
    }
    for (hPtr = Tcl_FirstHashEntry(&mtPtr->seen, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	ckfree(Tcl_GetHashValue(hPtr));
    }
    Tcl_DeleteHashTable(&mtPtr->seen);
    Tcl_DeleteHashTable(&mtPtr->chained);
    capPtr->methodsPtr = NULL;
    ckfree(mtPtr);
}

/*
 * Whether the chain of a method about to start is the one the command
 * frame on top started. It is not when the frame was named for a method
 * implemented in C (no pre-call hook of its own) that the chain does not
 * hold: that C method is running and calls other methods of its object
 * through a chain of their own, as Tcl 9's [configure] of
 * oo::configurable calls the property getters and setters (through
 * TclOOPrivateObjectCmd, at the frame's level): those get frames of their
 * own, under the C method's. A filter or a mixin in front of the method
 * (its chain holds it) claims the frame as before.
 */

static int
StartedBy(
    CprofMethods *mtPtr,
    const CprofFrame *topPtr,
    const CallChain *callPtr)
{
    const Method *mPtr = (const Method *) topPtr->methodKey;
    Tcl_Size i;

    if (mPtr == NULL || mPtr->typePtr == NULL || mPtr->typePtr
	    == mtPtr->capPtr->statePtr->naming.internals->procMethodType) {
	return 1;
    }
    for (i = 0; i < callPtr->numChain; i++) {
	if (callPtr->chain[i].mPtr == mPtr) {
	    return 1;
	}
    }
    return 0;
}

/*
 *----------------------------------------------------------------------
 *
 * PreCall --
 *
 *	A procedure method's body is about to start: claim the command
 *	frame that started its chain, or push a frame of its own.
 *
 * Results:
 *	What the hook that was there before returned (TCL_OK without one);
 *	*isFinished likewise.
 *
 *----------------------------------------------------------------------
 */

static int
PreCall(
    void *clientData,
    Tcl_Interp *interp,
    Tcl_ObjectContext context,
    Tcl_CallFrame *callFramePtr,
    int *isFinished)
{
    CallContext *ctxPtr = (CallContext *) context;
    CprofState *statePtr = CprofStateOfInterp(interp);
    CprofCapture *capPtr;
    CprofMethods *mtPtr;
    CprofLevels *lvPtr;
    CprofStack *stackPtr;
    CprofFrame *topPtr, *framePtr;
    Interp *iPtr = (Interp *) interp;
    CprofEntry entry;
    int nameId, code = TCL_OK;

    *isFinished = 0;
    capPtr = statePtr ? statePtr->capturePtr : NULL;
    mtPtr = capPtr ? capPtr->methodsPtr : NULL;
    if (mtPtr != NULL && mtPtr->chained.numEntries > 0
	    && ctxPtr->callPtr != NULL
	    && ctxPtr->index < ctxPtr->callPtr->numChain) {
	Method *mPtr = ctxPtr->callPtr->chain[ctxPtr->index].mPtr;
	ProcedureMethod *pmPtr = (ProcedureMethod *) mPtr->clientData;
	Tcl_HashEntry *hPtr = Tcl_FindHashEntry(&mtPtr->chained,
		(char *) pmPtr);

	if (hPtr != NULL) {
	    TclOO_PreCallProc *prevPtr = (TclOO_PreCallProc *)
		    Tcl_GetHashValue(hPtr);

	    code = prevPtr(pmPtr->clientData, interp, context, callFramePtr,
		    isFinished);
	    if (code != TCL_OK || *isFinished) {
		return code;
	    }
	}
    }
    if (mtPtr == NULL || capPtr->coverage) {
	return code;
    }
    if (capPtr->lookPending != NULL) {
	/*
	 * Commands made since the last push (the object being constructed)
	 * are wrapped before its body dispatches any.
	 */

	capPtr->lookPending(capPtr);
    }
    lvPtr = &statePtr->levels;
    stackPtr = &lvPtr->stack;
    if (stackPtr->depth > 0 && stackPtr->frames[stackPtr->depth - 1].envPtr
	    != iPtr->execEnvPtr) {
	CprofLevelsSettle(lvPtr);
    }
    topPtr = stackPtr->depth > 0 ? &stackPtr->frames[stackPtr->depth - 1]
	    : NULL;
    if (topPtr != NULL && (topPtr->flags & CPROF_FRAME_OBJCMD)
	    && topPtr->objKey == (void *) ctxPtr->oPtr
	    && topPtr->level == iPtr->numLevels
	    && topPtr->envPtr == iPtr->execEnvPtr && ctxPtr->index == 0
	    && !(ctxPtr->callPtr->flags & (CONSTRUCTOR | DESTRUCTOR))
	    && StartedBy(mtPtr, topPtr, ctxPtr->callPtr)) {
	topPtr->flags &= ~CPROF_FRAME_OBJCMD;
	mtPtr->claimed++;
	if (topPtr->methodKey != NULL && topPtr->methodKey
		== (const void *) ctxPtr->callPtr->chain[0].mPtr) {
	    /*
	     * The method the command frame was named for.
	     */

	    return code;
	}
	nameId = CprofNameMethod(&statePtr->naming, context);
	if (nameId >= 0 && topPtr->nameId != nameId) {
	    int oldNameId = topPtr->nameId;

	    topPtr->nameId = nameId;
	    CprofLevelsRename(lvPtr, stackPtr->depth - 1, oldNameId);
	}
	return code;
    }
    nameId = CprofNameMethod(&statePtr->naming, context);
    if (nameId < 0) {
	return code;
    }
    if (ctxPtr->index > 0 && topPtr != NULL) {
	/*
	 * [next]: the method calling it is the innermost method frame of
	 * this object; lazy frames above it are of commands it ran before,
	 * completed (they may share this frame's level).
	 */

	int i;

	for (i = stackPtr->depth - 1; i >= 0; i--) {
	    CprofFrame *fPtr = &stackPtr->frames[i];

	    if (fPtr->envPtr != iPtr->execEnvPtr) {
		break;
	    }
	    if (fPtr->kind == CPROF_KIND_METHOD
		    && fPtr->objKey == (void *) ctxPtr->oPtr) {
		CprofLevelsPopLazy(lvPtr, i);
		break;
	    }
	}
	topPtr = stackPtr->depth > 0 ? &stackPtr->frames[stackPtr->depth - 1]
		: NULL;
    }
    entry.nameId = nameId;
    entry.kind = CPROF_KIND_METHOD;
    entry.flags = CPROF_FRAME_METHOD;
    entry.level = iPtr->numLevels;
    entry.anchor = topPtr ? topPtr->anchor : 0;
    entry.token = NULL;
    entry.objKey = ctxPtr->oPtr;
    entry.methodKey = NULL;
    entry.envPtr = NULL;
    CprofEntrySite(statePtr, lvPtr, interp, &entry);
    framePtr = CprofLevelsEnter(lvPtr, &entry);
    if (framePtr != NULL) {
	lvPtr->counters.methodFrames++;
	CprofSchedulePop(statePtr, lvPtr, framePtr->serial);
    }
    return code;
}

/*
 * Status.
 */

void
CprofMethodsStatus(
    CprofCapture *capPtr,
    Tcl_Obj *dictObj)
{
    CprofMethods *mtPtr = capPtr->methodsPtr;

    if (mtPtr == NULL) {
	return;
    }
    Tcl_DictObjPut(NULL, dictObj, Tcl_NewStringObj("methods_hooked", -1),
	    Tcl_NewWideIntObj(mtPtr->hooked));
    Tcl_DictObjPut(NULL, dictObj, Tcl_NewStringObj("methods_claimed", -1),
	    Tcl_NewWideIntObj(mtPtr->claimed));
}
