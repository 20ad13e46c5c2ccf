/*
 * captureframesresolve.c --
 *
 *	The drain's half of the frames capture (captureframes.c reads Tcl's frames
 *	in the signal handler): the references a sample holds are named
 *	here, in normal context, after checking that what they point at is
 *	still what it was (the fault-safe copy, SafeCopy), and the Tcl frames
 *	are placed among the native ones (Anchor). See captureframes.c's comment
 *	for the whole.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _GNU_SOURCE
#   define _GNU_SOURCE		/* process_vm_readv */
#endif
#include "captureframesInt.h"
#include <string.h>
#include <unistd.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/uio.h>

/*
 *----------------------------------------------------------------------
 *
 * CprofFramesResolve --
 *
 *	Drain side: name a sample's raw references (in[], outermost first)
 *	into out[], leaving out the commands whose code could not be found.
 *	References the reader did not write (another capture's) are copied
 *	as they are.
 *
 * Results:
 *	The number of references written to out[].
 *
 *----------------------------------------------------------------------
 */

/*
 * Copy 'size' bytes at 'addr' without ever faulting: 1 if all could be
 * read. Two ways, chosen once per process by a probe (CprofFramesCopyMethod):
 * process_vm_readv on the process itself, which fails with EFAULT on an
 * unmapped page; where that system call is refused (a seccomp filter;
 * qemu-user, which does not emulate it) a write of the bytes into a pipe
 * of our own, which the kernel (or qemu, checking the guest's pages) fails
 * the same way, and a read of them back. Where neither works, the frames
 * capture is not used (CprofCaptureInstall falls back to wrap).
 */

static const char *const copyMethodNames[] = {
    "none", "process_vm_readv", "pipe", NULL
};
static int copyMethod = CPROF_COPY_UNPROBED;
static int copyPipe[2] = {-1, -1};
static pid_t copyPipePid = 0;
TCL_DECLARE_MUTEX(copyMutex)

/*
 * The copy by process_vm_readv, which fails instead of faulting (also for
 * captureframes.c's probe of the callback records, before the way is
 * probed).
 */

int
CprofFramesCopyVm(
    const void *addr,
    void *buf,
    size_t size)
{
    struct iovec local, remote;

    local.iov_base = buf;
    local.iov_len = size;
    remote.iov_base = (void *) addr;
    remote.iov_len = size;
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0)
	    == (ssize_t) size;
}

/*
 * Called with copyMutex held. The pipe is the process's own (made again
 * in a forked child, whose parent keeps using its copy), non-blocking
 * and closed on exec; it is empty between calls.
 */

static int
CopyPipe(
    const void *addr,
    void *buf,
    size_t size)
{
    ssize_t n, got = 0;

    if (size > 4096) {
	return 0;
    }
    if (copyPipePid != getpid()) {
	if (copyPipe[0] >= 0 && copyPipePid != 0) {
	    close(copyPipe[0]);
	    close(copyPipe[1]);
	}
	copyPipe[0] = copyPipe[1] = -1;
	if (pipe2(copyPipe, O_CLOEXEC | O_NONBLOCK) != 0) {
	    copyPipe[0] = copyPipe[1] = -1;
	    return 0;
	}
	copyPipePid = getpid();
    }
    do {
	n = write(copyPipe[1], addr, size);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) {
	return 0;
    }
    while (got < n) {
	ssize_t r = read(copyPipe[0], (char *) buf + got, (size_t) (n - got));

	if (r < 0 && errno == EINTR) {
	    continue;
	}
	if (r <= 0) {
	    break;
	}
	got += r;
    }
    return n == (ssize_t) size && got == n;
}

/*
 * Whether a way copies a known buffer right and refuses an address that
 * is never mapped (the first page).
 */

static int
CopyWorks(
    int method)
{
    static const char known[48] = "tclcprof: a fault-safe copy of this";
    char buf[sizeof(known)];
    int ok;

    memset(buf, 0, sizeof(buf));
    ok = (method == CPROF_COPY_VM)
	    ? CprofFramesCopyVm(known, buf, sizeof(known))
	    : CopyPipe(known, buf, sizeof(known));
    if (!ok || memcmp(buf, known, sizeof(known)) != 0) {
	return 0;
    }
    return !((method == CPROF_COPY_VM)
	    ? CprofFramesCopyVm((const void *) (uintptr_t) 64, buf, 16)
	    : CopyPipe((const void *) (uintptr_t) 64, buf, 16));
}

int
CprofFramesCopyMethod(
    const char *force)
{
    int method;

    Tcl_MutexLock(&copyMutex);
    if (force != NULL) {
	int i;

	copyMethod = CPROF_COPY_UNPROBED;
	for (i = 0; copyMethodNames[i] != NULL; i++) {
	    if (strcmp(force, copyMethodNames[i]) == 0) {
		copyMethod = i;
	    }
	}
    }
    if (copyMethod == CPROF_COPY_UNPROBED) {
	copyMethod = CopyWorks(CPROF_COPY_VM) ? CPROF_COPY_VM
		: CopyWorks(CPROF_COPY_PIPE) ? CPROF_COPY_PIPE
		: CPROF_COPY_NONE;
    }
    method = copyMethod;
    Tcl_MutexUnlock(&copyMutex);
    return method;
}

const char *
CprofFramesCopyName(
    int method)
{
    return (method >= 0 && method <= CPROF_COPY_PIPE)
	    ? copyMethodNames[method] : "unprobed";
}

static int
SafeCopy(
    const void *addr,
    void *buf,
    size_t size)
{
    int ok;

    if (addr == NULL) {
	return 0;
    }
    if (copyMethod == CPROF_COPY_VM) {
	return CprofFramesCopyVm(addr, buf, size);
    }
    Tcl_MutexLock(&copyMutex);
    ok = (copyMethod == CPROF_COPY_PIPE) && CopyPipe(addr, buf, size);
    Tcl_MutexUnlock(&copyMutex);
    return ok;
}

static void
LetGoIfFull(
    CprofFrames *fPtr)
{
    if (fPtr->procs.numEntries + fPtr->methods.numEntries
	    + fPtr->codes.numEntries >= MAX_HELD) {
	CprofFramesReleaseHeld(fPtr);
    }
}

static int
ProcName(
    CprofFrames *fPtr,
    const CprofTclRef *refPtr,
    int *kindPtr)
{
    Proc *procPtr = (Proc *) refPtr->anchor;
    Tcl_HashEntry *hPtr = Tcl_FindHashEntry(&fPtr->procs, (char *) procPtr);
    HeldProc *hpPtr;
    Proc procCopy;
    Command cmdCopy;
    const CprofCmdName *namePtr;
    int isNew;

    if (hPtr != NULL) {
	hpPtr = Tcl_GetHashValue(hPtr);

	/*
	 * Held, so this is the Proc sampled; its body may have been
	 * replaced since (a recompile in another namespace).
	 */

	if (hpPtr->bodyPtr == refPtr->ident
		|| procPtr->bodyPtr == refPtr->ident) {
	    Command *cmdPtr = hpPtr->cmdPtr;

	    if (!(cmdPtr->flags & CMD_IS_DELETED)
		    && (int) cmdPtr->cmdEpoch != hpPtr->epoch) {
		/*
		 * Renamed since: named by its new name, as the wrapper
		 * names it.
		 */

		const CprofCmdName *namePtr = CprofNameCommand(
			fPtr->namingPtr, (Tcl_Command) cmdPtr);

		hpPtr->epoch = (int) cmdPtr->cmdEpoch;
		if (namePtr != NULL && namePtr->nameId >= 0) {
		    CprofNameHold(&fPtr->refs, namePtr->nameId);
		    hpPtr->nameId = namePtr->nameId;
		    hpPtr->kind = namePtr->kind;
		}
	    }
	    *kindPtr = hpPtr->kind;
	    return hpPtr->nameId;
	}
	return -1;
    }

    /*
     * First seen: still a counted Proc with that body, whose command (not
     * deleted) still has it as its Proc.
     */

    if (!SafeCopy(procPtr, &procCopy, sizeof(Proc))
	    || procCopy.refCount <= 0 || procCopy.bodyPtr != refPtr->ident
	    || procCopy.cmdPtr == NULL
	    || !SafeCopy(procCopy.cmdPtr, &cmdCopy, sizeof(Command))
	    || (cmdCopy.flags & CMD_IS_DELETED) || cmdCopy.hPtr == NULL
	    || TclIsProc(&cmdCopy) != procPtr) {
	return -1;
    }
    namePtr = CprofNameCommand(fPtr->namingPtr,
	    (Tcl_Command) procCopy.cmdPtr);
    if (namePtr == NULL || namePtr->nameId < 0) {
	return -1;
    }
    CprofNameHold(&fPtr->refs, namePtr->nameId);
    LetGoIfFull(fPtr);
    procPtr->refCount++;
    hpPtr = (HeldProc *) ckalloc(sizeof(HeldProc));
    hpPtr->procPtr = procPtr;
    hpPtr->bodyPtr = refPtr->ident;
    hpPtr->cmdPtr = procCopy.cmdPtr;
    hpPtr->cmdPtr->refCount++;
    hpPtr->epoch = (int) hpPtr->cmdPtr->cmdEpoch;
    hpPtr->nameId = namePtr->nameId;
    hpPtr->kind = namePtr->kind;
    hPtr = Tcl_CreateHashEntry(&fPtr->procs, (char *) procPtr, &isNew);
    Tcl_SetHashValue(hPtr, hpPtr);
    *kindPtr = hpPtr->kind;
    return hpPtr->nameId;
}

static int
MethodName(
    CprofFrames *fPtr,
    const CprofTclRef *refPtr)
{
    Method *mPtr = (Method *) refPtr->anchor;
    Tcl_HashEntry *hPtr = Tcl_FindHashEntry(&fPtr->methods, (char *) mPtr);
    HeldMethod *hmPtr;
    int slot = ((refPtr->node & CONSTRUCTOR) ? 1 : 0)
	    | ((refPtr->node & DESTRUCTOR) ? 2 : 0), isNew;

    if (hPtr == NULL) {
	Method methodCopy;
	Class classCopy;
	Object objectCopy;
	Object *declObjPtr;

	/*
	 * First seen: still a counted Method with that name, whose
	 * declaring object (or class, whose object is still its) is
	 * counted and can still be named.
	 */

	if (!SafeCopy(mPtr, &methodCopy, sizeof(Method))
		|| methodCopy.refCount <= 0
		|| methodCopy.namePtr != refPtr->ident) {
	    return -1;
	}
	declObjPtr = methodCopy.declaringObjectPtr;
	if (declObjPtr == NULL) {
	    if (methodCopy.declaringClassPtr == NULL
		    || !SafeCopy(methodCopy.declaringClassPtr, &classCopy,
			    sizeof(Class))) {
		return -1;
	    }
	    declObjPtr = classCopy.thisPtr;
	}
	if (!SafeCopy(declObjPtr, &objectCopy, sizeof(Object))
		|| objectCopy.refCount <= 0
		|| (methodCopy.declaringObjectPtr == NULL
			&& objectCopy.classPtr
			!= methodCopy.declaringClassPtr)
		|| (objectCopy.command == NULL
			&& objectCopy.cachedNameObj == NULL)) {
	    return -1;
	}
	LetGoIfFull(fPtr);
	mPtr->refCount++;
	hmPtr = (HeldMethod *) ckalloc(sizeof(HeldMethod));
	hmPtr->mPtr = mPtr;
	hmPtr->namePtr = refPtr->ident;
	hmPtr->nameId[0] = hmPtr->nameId[1] = hmPtr->nameId[2]
		= hmPtr->nameId[3] = -2;
	hPtr = Tcl_CreateHashEntry(&fPtr->methods, (char *) mPtr, &isNew);
	Tcl_SetHashValue(hPtr, hmPtr);
    } else {
	hmPtr = Tcl_GetHashValue(hPtr);
	if (hmPtr->namePtr != refPtr->ident) {
	    return -1;
	}
    }
    if (hmPtr->nameId[slot] == -2) {
	hmPtr->nameId[slot] = CprofNameMethodRecord(fPtr->namingPtr, mPtr,
		refPtr->node & (CONSTRUCTOR | DESTRUCTOR));
	CprofNameHold(&fPtr->refs, hmPtr->nameId[slot]);
    }
    return hmPtr->nameId[slot];
}

/*
 * Whether a method called through an object's command runs Tcl code in a
 * trampoline of its own, as a command with no NRE entry does (Anchor). A
 * procedure-bodied method, a forward and TclOO's own C methods (destroy,
 * eval, create, new: all in libtcl) go on in the trampoline that invoked
 * them; a method type of another library (an extension's Tcl_NewMethod, or
 * Tcl 9's Tcl_NewMethod2, with a C callProc that evaluates Tcl through
 * Tcl_Eval*) starts one. The one exception known is Tcl 9's [configure] of
 * oo::configurable, in libtcl, which runs the property getters and setters
 * through a trampoline of its own: its frames go one trampoline out.
 */

static int
MethodNests(
    CprofFrames *fPtr,
    const Method *mPtr)
{
    Dl_info info;

    if (mPtr == NULL || mPtr->typePtr == NULL
	    || mPtr->typePtr->callProc == NULL
	    || (const void *) mPtr->typePtr
		    == fPtr->namingPtr->internals->procMethodType) {
	return 0;
    }
    if (fPtr->libtclBase == NULL) {
	if (!dladdr((void *) tclStubsPtr->tcl_GetVersion, &info)) {
	    return 0;
	}
	fPtr->libtclBase = info.dli_fbase;
    }
    return !dladdr((void *) mPtr->typePtr->callProc, &info)
	    || info.dli_fbase != fPtr->libtclBase;
}

/*
 * The name of a call from its literal words, as the wrapper names it: an
 * object's method call by its method, an ensemble's by its subcommand
 * (through the ensemble's map), a command named with its first argument
 * (db eval) or its script (source) with it; else the command's name, or
 * the first word when it names no command.
 */

/*
 * The command of an ensemble without a map that a subcommand names: the
 * command of that name in the ensemble's namespace, or the only one whose
 * name it starts (the ensemble takes unique prefixes).
 */

static Tcl_Command
EnsembleImpl(
    CprofFrames *fPtr,
    Tcl_Namespace *nsPtr,
    const char *sub)
{
    Tcl_Command token = Tcl_FindCommand(fPtr->interp, sub, nsPtr,
	    TCL_NAMESPACE_ONLY);
    Tcl_HashTable *tablePtr = &((Namespace *) nsPtr)->cmdTable;
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr, *foundPtr = NULL;
    size_t len = strlen(sub);

    if (token != NULL || len == 0) {
	return token;
    }
    for (hPtr = Tcl_FirstHashEntry(tablePtr, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	if (strncmp((const char *) Tcl_GetHashKey(tablePtr, hPtr), sub,
		len) == 0) {
	    if (foundPtr != NULL) {
		return NULL;
	    }
	    foundPtr = hPtr;
	}
    }
    return (foundPtr != NULL) ? (Tcl_Command) Tcl_GetHashValue(foundPtr)
	    : NULL;
}

static int
NameOfCall(
    CprofFrames *fPtr,
    Tcl_Namespace *nsPtr,
    int objc,
    Tcl_Obj *const objv[],
    int *kindPtr,
    int *nestsPtr)
{
    Tcl_Command token = Tcl_FindCommand(fPtr->interp,
	    Tcl_GetString(objv[0]), nsPtr, nsPtr ? 0 : TCL_GLOBAL_ONLY);
    const CprofCmdName *namePtr;
    int nameId = -1;

    *nestsPtr = 0;

    if (token == NULL) {
	*kindPtr = CPROF_KIND_CMD;
	return CprofNameInternIn(&fPtr->refs, Tcl_GetString(objv[0]), -1);
    }
    namePtr = CprofNameCommand(fPtr->namingPtr, token);
    if (namePtr == NULL || namePtr->nameId < 0) {
	*kindPtr = CPROF_KIND_CMD;
	return CprofNameInternIn(&fPtr->refs, Tcl_GetString(objv[0]), -1);
    }
    *kindPtr = namePtr->kind;
    *nestsPtr = (((Command *) token)->nreProc == NULL);
    if (namePtr->flags & CPROF_NAME_COROUTINE) {
	/*
	 * Named after its body once the frames are known (Resolve).
	 */

	return CprofNameCoroutine(fPtr->namingPtr, -1);
    }
    if ((namePtr->flags & CPROF_NAME_OBJECT) && objc > 1) {
	const void *method;
	int fresh;

	nameId = CprofNameMethodCall(fPtr->namingPtr, token, objc, objv,
		&fresh, &method);
	if (nameId >= 0) {
	    *kindPtr = CPROF_KIND_METHOD;
	}
	*nestsPtr = MethodNests(fPtr, (const Method *) method);
    } else if ((namePtr->flags & CPROF_NAME_ENSEMBLE) && objc > 1) {
	Tcl_Obj *mapObj = NULL, *targetObj = NULL, *cmdObj;

	if (Tcl_GetEnsembleMappingDict(NULL, token, &mapObj) == TCL_OK
		&& mapObj != NULL
		&& Tcl_DictObjGet(NULL, mapObj, objv[1], &targetObj) == TCL_OK
		&& targetObj != NULL
		&& Tcl_ListObjIndex(NULL, targetObj, 0, &cmdObj) == TCL_OK
		&& cmdObj != NULL) {
	    Tcl_Command implToken = Tcl_FindCommand(fPtr->interp,
		    Tcl_GetString(cmdObj), NULL, TCL_GLOBAL_ONLY);

	    if (implToken != NULL) {
		nameId = CprofNameFold(fPtr->namingPtr, namePtr->nameId,
			token, implToken);
		*nestsPtr = (((Command *) implToken)->nreProc == NULL);
	    }
	} else {
	    Tcl_Namespace *ensNsPtr = NULL;
	    Tcl_Command implToken;

	    /*
	     * No map: the subcommand is the command of that name exported
	     * from the ensemble's namespace.
	     */

	    if (Tcl_GetEnsembleNamespace(NULL, token, &ensNsPtr) == TCL_OK
		    && ensNsPtr != NULL
		    && (implToken = EnsembleImpl(fPtr, ensNsPtr,
			    Tcl_GetString(objv[1]))) != NULL) {
		nameId = CprofNameFold(fPtr->namingPtr, namePtr->nameId,
			token, implToken);
		*nestsPtr = (((Command *) implToken)->nreProc == NULL);
	    }
	}
    } else if (namePtr->flags & (CPROF_NAME_SUBCMD | CPROF_NAME_SCRIPT)) {
	nameId = CprofNameArgument(fPtr->namingPtr, namePtr, objc, objv);
    }
    if (nameId < 0) {
	nameId = namePtr->nameId;
    }
    CprofNameHold(&fPtr->refs, nameId);
    return nameId;
}

/*
 * The name of a command from its text: its literal words (up to four:
 * enough for a method's, a subcommand's or a script's name), the first
 * resolved in nsPtr (NULL: the global namespace). 0: no name (the first
 * word is not literal), else the name id + 1. Text that does not parse
 * (a command longer than what was copied) is read up to its first word
 * that is not a bare one.
 */

static int
NameOfText(
    CprofFrames *fPtr,
    Tcl_Namespace *nsPtr,
    const char *text,
    int len,
    int *kindPtr,
    int *nestsPtr)
{
    Tcl_Obj *words[4];
    Tcl_Parse parse;
    int objc = 0, nameId = 0, w;

    if (Tcl_ParseCommand(NULL, text, len, 0, &parse) == TCL_OK) {
	Tcl_Token *tokPtr = parse.tokenPtr;

	for (w = 0; w < parse.numWords && objc < 4; w++) {
	    if (tokPtr->type != TCL_TOKEN_SIMPLE_WORD) {
		break;
	    }
	    words[objc] = Tcl_NewStringObj(tokPtr[1].start, tokPtr[1].size);
	    Tcl_IncrRefCount(words[objc]);
	    objc++;
	    tokPtr += tokPtr->numComponents + 1;
	}
	Tcl_FreeParse(&parse);
    } else {
	const char *p = text, *end = text + len;

	while (objc < 4) {
	    const char *start;

	    while (p < end && (*p == ' ' || *p == '\t')) {
		p++;
	    }
	    start = p;
	    while (p < end && strchr(" \t\n;{}[]$\"\\", *p) == NULL) {
		p++;
	    }
	    if (p == start || (p < end && *p != ' ' && *p != '\t')) {
		break;
	    }
	    words[objc] = Tcl_NewStringObj(start, p - start);
	    Tcl_IncrRefCount(words[objc]);
	    objc++;
	}
    }
    if (objc > 0) {
	nameId = NameOfCall(fPtr, nsPtr, objc, words, kindPtr, nestsPtr) + 1;
    }
    while (objc-- > 0) {
	Tcl_DecrRefCount(words[objc]);
    }
    return nameId;
}

/*
 * The namespace a bytecode's commands are resolved in, when it is safely
 * known: a procedure body's (its command, still its, not deleted), the
 * global namespace's; else NULL (resolved from the global namespace).
 */

static Tcl_Namespace *
CodeNamespace(
    CprofFrames *fPtr,
    const ByteCode *copyPtr)
{
    Interp *iPtr = (Interp *) fPtr->interp;
    Proc procCopy;
    Command cmdCopy;

    if (copyPtr->procPtr == NULL) {
	return NULL;
    }
    if (!SafeCopy(copyPtr->procPtr, &procCopy, sizeof(Proc))
	    || procCopy.refCount <= 0 || procCopy.cmdPtr == NULL
	    || !SafeCopy(procCopy.cmdPtr, &cmdCopy, sizeof(Command))
	    || (cmdCopy.flags & CMD_IS_DELETED) || cmdCopy.hPtr == NULL
	    || TclIsProc(&cmdCopy) != copyPtr->procPtr
	    || cmdCopy.nsPtr == NULL || cmdCopy.nsPtr == iPtr->globalNsPtr) {
	return NULL;
    }
    return (Tcl_Namespace *) cmdCopy.nsPtr;
}

/*
 * A command of a script evaluated from its string: its text read again
 * (it must start with the bytes the handler copied and be one command of
 * the length it had), named from its literal words. -1: the text is gone.
 */

#define EVAL_TEXT_MAX	4096

static int
EvalName(
    CprofFrames *fPtr,
    const CprofTclRef *refPtr,
    int *kindPtr,
    int *nestsPtr)
{
    int len = refPtr->node & CPROF_RAW_EVAL_LEN;
    int copied = (len < EVAL_TEXT_MAX) ? len : EVAL_TEXT_MAX;
    char text[EVAL_TEXT_MAX];
    uintptr_t head = 0;
    Tcl_Parse parse;
    int nameId;

    *kindPtr = CPROF_KIND_CMD;
    *nestsPtr = 0;
    if (copied <= 0 || !SafeCopy((const void *) refPtr->anchor, text,
	    (size_t) copied)) {
	return -1;
    }
    memcpy(&head, text, copied < (int) sizeof(head) ? (size_t) copied
	    : sizeof(head));
    if (head != (uintptr_t) refPtr->ident) {
	return -1;
    }
    if (len <= EVAL_TEXT_MAX) {
	if (Tcl_ParseCommand(NULL, text, len, 0, &parse) != TCL_OK) {
	    return -1;
	}
	nameId = (parse.commandStart == text && parse.commandSize == len)
		? 0 : -1;
	Tcl_FreeParse(&parse);
	if (nameId < 0) {
	    return -1;
	}
    }
    nameId = NameOfText(fPtr, NULL, text, copied, kindPtr, nestsPtr);
    return nameId - 1;
}

/*
 * A command that C code ran through Tcl_EvalObjv (CPROF_RAW_OBJV): its
 * first two words read again (each must have the length it had and start
 * with the bytes the handler copied), named from them as the wrapper
 * names a call. -1: the words are gone.
 */

static int
ObjvName(
    CprofFrames *fPtr,
    const CprofTclRef *refPtr,
    int *kindPtr,
    int *nestsPtr)
{
    int len0 = refPtr->node & 0xff, len1 = (refPtr->node >> 8) & 0xff;
    char text0[CPROF_RAW_WORD_MAX + 1], text1[CPROF_RAW_WORD_MAX + 1];
    uintptr_t head = 0;
    Tcl_Obj *words[2];
    int objc = 1, nameId;

    *kindPtr = CPROF_KIND_CMD;
    *nestsPtr = 0;
    if (len0 <= 0 || !SafeCopy((const void *) refPtr->anchor, text0,
	    (size_t) len0)) {
	return -1;
    }
    memcpy(&head, text0, len0 < (int) sizeof(head) ? (size_t) len0
	    : sizeof(head));
    if (head != (uintptr_t) refPtr->ident) {
	return -1;
    }
    if (len1 > 0 && refPtr->siteCode != NULL) {
	head = 0;
	if (!SafeCopy(refPtr->siteCode, text1, (size_t) len1)) {
	    return -1;
	}
	memcpy(&head, text1, len1 < (int) sizeof(head) ? (size_t) len1
		: sizeof(head));
	if (CprofFramesWordDigest(head) != refPtr->siteOffset) {
	    return -1;
	}
	objc = 2;
    }
    words[0] = Tcl_NewStringObj(text0, len0);
    Tcl_IncrRefCount(words[0]);
    if (objc > 1) {
	words[1] = Tcl_NewStringObj(text1, len1);
	Tcl_IncrRefCount(words[1]);
    }
    nameId = NameOfCall(fPtr, NULL, objc, words, kindPtr, nestsPtr);
    while (objc-- > 0) {
	Tcl_DecrRefCount(words[objc]);
    }
    return nameId;
}

/*
 * Whether codePtr is a live ByteCode of this interpreter with pc in its
 * code: checked on a copy the first time, then held (in fPtr->codes) for
 * the rest of the run, so that its address stays its own.
 */

static int
HoldCode(
    CprofFrames *fPtr,
    ByteCode *codePtr,
    const char *pc)
{
    ByteCode copy;
    int isNew;

    if (Tcl_FindHashEntry(&fPtr->codes, (char *) codePtr) != NULL) {
	return 1;
    }
    if (!SafeCopy(codePtr, &copy, sizeof(ByteCode))
	    || copy.refCount <= 0
	    || copy.interpHandle != ((Interp *) fPtr->interp)->handle
	    || copy.numCodeBytes <= 0
	    || pc < (const char *) copy.codeStart
	    || pc >= (const char *) copy.codeStart + copy.numCodeBytes
	    || (const char *) copy.codeStart <= (const char *) codePtr
	    || (const char *) copy.codeStart
		    > (const char *) codePtr + sizeof(ByteCode) + 64) {
	return 0;
    }
    LetGoIfFull(fPtr);
    CprofHoldSiteKey(CPROF_SITE_BYTECODE, codePtr);
    Tcl_CreateHashEntry(&fPtr->codes, (char *) codePtr, &isNew);
    return 1;
}

/*
 * A command invoked from bytecode: the first word of its source, as the
 * command it names now (its name as the wrapper gives it), or the word.
 * 0: no name (not a plain word), -1: the code is not this interpreter's
 * live bytecode.
 */

static int
CommandName(
    CprofFrames *fPtr,
    const CprofTclRef *refPtr,
    int *kindPtr,
    int *nestsPtr)
{
    ByteCode *codePtr = (ByteCode *) refPtr->anchor;
    const char *pc = (const char *) codePtr + refPtr->node;
    Tcl_HashEntry *hPtr;
    CmdFrame cf;
    int isNew, nameId = 0, kind = CPROF_KIND_CMD, nests = 0;

    *nestsPtr = 0;
    if (!HoldCode(fPtr, codePtr, pc)) {
	return -1;
    }
    hPtr = Tcl_CreateHashEntry(&fPtr->sites, pc, &isNew);
    if (!isNew) {
	int v = PTR2INT(Tcl_GetHashValue(hPtr));

	*kindPtr = (v >> 24) & 0xf;
	*nestsPtr = (v >> 28) & 1;
	return (v & 0xffffff) - 1;
    }
    memset(&cf, 0, sizeof(cf));
    cf.type = TCL_LOCATION_BC;
    cf.data.tebc.codePtr = codePtr;
    cf.data.tebc.pc = pc;
    TclGetSrcInfoForPc(&cf);
    if (cf.type == TCL_LOCATION_SOURCE && cf.data.eval.path != NULL) {
	Tcl_DecrRefCount(cf.data.eval.path);
    }
    if (cf.cmd != NULL && cf.len > 0) {
	nameId = NameOfText(fPtr, CodeNamespace(fPtr, codePtr), cf.cmd,
		cf.len, &kind, &nests);
    }
    if (nameId > 0xffffff || kind > 0xf) {
	nameId = 0;
    }
    Tcl_SetHashValue(hPtr, INT2PTR((nests << 28) | (kind << 24) | nameId));
    *kindPtr = kind;
    *nestsPtr = nests;
    return nameId - 1;
}

/*
 * A command frame whose first word is not literal ([self] create, $obj
 * destroy): named from what runs above it and its literal second word
 * when that tells the method for sure: a class's first constructor
 * called from these very words runs from oo::class's create, new or
 * createWithNamespace; a destructor under "destroy", from oo::object's
 * destroy. -1 otherwise.
 */

static int
OoFallbackName(
    CprofFrames *fPtr,
    const CprofTclRef *refPtr,
    const CprofTclRef *nextPtr)
{
    ByteCode *codePtr = (ByteCode *) refPtr->anchor;
    CmdFrame cf;
    Tcl_Parse parse;
    Tcl_Token *tokPtr;
    char name[64];
    int nameId = -1, ctor = (refPtr->ident == CPROF_RAW_CTOR);
    int dtor = nextPtr != NULL && nextPtr->nameId == CPROF_FRAMES_RAW
	    && nextPtr->kind == CPROF_RAW_METHOD
	    && (nextPtr->node & DESTRUCTOR);

    if ((!ctor && !dtor)
	    || Tcl_FindHashEntry(&fPtr->codes, (char *) codePtr) == NULL) {
	return -1;
    }
    memset(&cf, 0, sizeof(cf));
    cf.type = TCL_LOCATION_BC;
    cf.data.tebc.codePtr = codePtr;
    cf.data.tebc.pc = (const char *) codePtr + refPtr->node;
    TclGetSrcInfoForPc(&cf);
    if (cf.type == TCL_LOCATION_SOURCE && cf.data.eval.path != NULL) {
	Tcl_DecrRefCount(cf.data.eval.path);
    }
    if (cf.cmd == NULL || cf.len <= 0 || Tcl_ParseCommand(NULL, cf.cmd,
	    cf.len, 0, &parse) != TCL_OK) {
	return -1;
    }
    tokPtr = parse.tokenPtr;
    if (parse.numWords >= 2 && tokPtr->type != TCL_TOKEN_SIMPLE_WORD) {
	Tcl_Token *t2 = tokPtr + tokPtr->numComponents + 1;

	if (t2->type == TCL_TOKEN_SIMPLE_WORD && t2[1].size < 32) {
	    char word[32];

	    memcpy(word, t2[1].start, t2[1].size);
	    word[t2[1].size] = '\0';
	    if (ctor && (strcmp(word, "create") == 0
		    || strcmp(word, "new") == 0
		    || strcmp(word, "createWithNamespace") == 0)) {
		snprintf(name, sizeof(name), "oo::class %s", word);
		nameId = CprofNameInternIn(&fPtr->refs, name, -1);
	    } else if (dtor && strcmp(word, "destroy") == 0) {
		nameId = CprofNameInternIn(&fPtr->refs, "oo::object destroy",
			-1);
	    }
	}
    }
    Tcl_FreeParse(&parse);
    return nameId;
}

/*
 * Anchors for the splice (drainsplice.c), from the nesting of trampolines: a
 * command with no NRE entry (a plain objProc, Command.nreProc NULL) can
 * run Tcl code only through Tcl_Eval*, which starts a trampoline of its
 * own (TclNRRunCallbacks); NRE commands (procs, methods, eval, uplevel,
 * catch, ensembles...) run theirs in the trampoline that invoked them.
 * So the frames of the sampler's interpreter go, outermost first, in the
 * outermost trampoline of the native stack, one trampoline further in
 * after each such command. When the native stack has fewer trampolines
 * than that needs (Tcl code run from C with no Tcl frame of its own to
 * show it), the frames keep no anchor: the splice puts them after the
 * innermost trampoline, and counts them unmatched.
 */

#define NEST_CMD		1	/* A command frame that nests. */
#define NEST_IS_CMD		2	/* A command frame. */
#define NEST_CALLED_FROM_C	4	/* A procedure frame with no call
					 * site. */

static void
Anchor(
    CprofFrames *fPtr,
    CprofTclRef *out,
    int n,
    const unsigned char *nest,
    const CprofNativeStack *nativePtr)
{
    int tramps[CPROF_NATIVE_MAX], k = 0, need = 1, i, j, t = 0;
    int children = 0, spare;

    for (j = nativePtr->n - 1; j >= 0; j--) {
	uintptr_t pc = (j == 0) ? nativePtr->ip[0] : nativePtr->ip[j] - 1;

	if (pc >= nativePtr->trampStart && pc < nativePtr->trampEnd) {
	    /*
	     * Not a trampoline of a child interpreter: frames of its level
	     * stack (the wrapper's, anchored exactly) name it.
	     */

	    for (i = 0; i < n; i++) {
		if (out[i].interpId >= 0 && out[i].anchor == nativePtr->cfa[j]) {
		    break;
		}
	    }
	    if (i == n) {
		tramps[k++] = j;
	    }
	}
    }
    for (i = 0; i + 1 < n; i++) {
	if (out[i].interpId < 0 && (nest[i] & NEST_CMD)) {
	    need++;
	}
	if (out[i].interpId >= 0) {
	    children = 1;
	}
    }
    if (k == 0 || need > k) {
	fPtr->counters.unanchored++;
	return;
    }

    /*
     * Trampolines left over with a child interpreter's frames in the
     * sample: a command ran the child's code (its trampolines are left
     * out above), which called back into this interpreter (an alias):
     * the procedure called from C with no call site of its own after a
     * command frame starts a trampoline further in.
     */

    spare = children ? k - need : 0;
    for (i = 0; i < n; i++) {
	if (out[i].interpId >= 0) {
	    continue;
	}
	if (spare > 0 && (nest[i] & NEST_CALLED_FROM_C) && i > 0
		&& (nest[i - 1] & NEST_IS_CMD) && t + 1 < k) {
	    t++;
	    spare--;
	}
	out[i].anchor = nativePtr->cfa[tramps[t]];
	if ((nest[i] & NEST_CMD) && t + 1 < k) {
	    t++;
	}
    }
}

/*
 * Whether a command frame's name is the coroutine command's or a
 * coroutine's ("<coroutine ...>").
 */

static int
IsCoroutineName(
    CprofFrames *fPtr,
    int nameId)
{
    const char *name = CprofNameString(nameId);

    return nameId == CprofNameCoroutine(fPtr->namingPtr, -1)
	    || (name != NULL && (strcmp(name, "coroutine") == 0
	    || strcmp(name, "::coroutine") == 0
	    || strncmp(name, "<coroutine", 10) == 0));
}

/*
 * Whether an ensemble frame's name ("ensemble subcommand", the
 * implementation's tail) names the procedure procId as its subcommand.
 */

static int
FoldsInto(
    int ensId,
    int procId)
{
    const char *ens = CprofNameString(ensId);
    const char *proc = CprofNameString(procId);
    const char *sub, *tail;

    if (ens == NULL || proc == NULL || (sub = strrchr(ens, ' ')) == NULL) {
	return 0;
    }
    sub++;
    tail = strrchr(proc, ':');
    tail = (tail != NULL) ? tail + 1 : proc;
    return *sub != '\0' && strcmp(sub, tail) == 0;
}

/*
 * An event handler's frame (or a coroutine's) put before the frame the
 * reference gives, in its place among the native frames.
 */

static inline void
AddBefore(
    CprofTclRef *out,
    int *nPtr,
    int room,
    unsigned char *nest,
    const CprofTclRef *refPtr,
    int nameId,
    int kind)
{
    CprofTclRef *o;

    if (*nPtr >= room) {
	return;
    }
    o = &out[*nPtr];
    *o = *refPtr;
    o->nameId = nameId;
    o->kind = kind;
    o->flags &= ~CPROF_REF_CURRENT;
    o->node = -1;
    o->anchor = 0;
    o->ident = NULL;
    o->siteCode = NULL;
    o->siteOffset = 0;
    nest[(*nPtr)++] = 0;
}

/*
 * The event handler whose script runs the frame of a reference named
 * already (its code held): a command's code, or a call site's (checked
 * and held here), unless it is the code of the command just before (a
 * constructor's call site, a frame of its own too). -1: none.
 */

static int
HandlerOfRef(
    CprofFrames *fPtr,
    const CprofTclRef *refPtr,
    const void *lastCode)
{
    ByteCode *codePtr = NULL;

    if (fPtr->handlerProc == NULL || refPtr->kind == CPROF_RAW_OBJV) {
	return -1;
    }
    if (refPtr->kind == CPROF_RAW_CMD) {
	codePtr = (ByteCode *) refPtr->anchor;
    } else if (refPtr->siteCode != NULL && refPtr->siteCode != lastCode) {
	codePtr = (ByteCode *) refPtr->siteCode;
	if (!HoldCode(fPtr, codePtr, (const char *) codePtr
		+ refPtr->siteOffset)) {
	    return -1;
	}
    }
    if (codePtr == NULL
	    || Tcl_FindHashEntry(&fPtr->codes, (char *) codePtr) == NULL) {
	return -1;
    }
    return fPtr->handlerProc(fPtr->handlerData, 1, codePtr);
}

void
CprofFramesSetHandlers(
    CprofFrames *fPtr,
    CprofFramesHandlerProc *proc,
    void *data)
{
    fPtr->handlerData = data;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    fPtr->handlerProc = proc;
}

/*
 * Whether a command frame is TclOO's [next] or [nextto], which the
 * wrapper leaves unwrapped (the method they reach has its frame): left
 * out.
 */

static inline int
IsNext(
    const CprofFrames *fPtr,
    int nameId,
    int kind)
{
    int i;

    if (kind != CPROF_KIND_CMD) {
	return 0;
    }
    for (i = 0; i < 4; i++) {
	if (fPtr->nextIds[i] == nameId) {
	    return 1;
	}
    }
    return 0;
}

static int
Resolve(
    CprofFrames *fPtr,
    const CprofTclRef *in,
    int nIn,
    const CprofNativeStack *nativePtr,
    CprofTclRef *out,
    int room,
    unsigned char *nest)
{
    int i, n = 0, nests = 0, lastRaw = -1, resume, addCoro = 0;
    int lastResume = 0, eventId;
    const void *lastCode = NULL;

    for (i = 0; i < nIn; i++) {
	const CprofTclRef *refPtr = &in[i];
	int nameId, kind = CPROF_KIND_PROC, isCmd;

	if (refPtr->nameId != CPROF_FRAMES_RAW) {
	    out[n++] = *refPtr;
	    lastRaw = -1;
	    continue;
	}
	resume = (refPtr->kind == CPROF_RAW_CMD
		&& refPtr->ident == CPROF_RAW_RESUME)
		|| ((refPtr->kind == CPROF_RAW_EVAL
		|| refPtr->kind == CPROF_RAW_OBJV)
		&& (refPtr->node & CPROF_RAW_EVAL_RESUME));
	if (resume) {
	    /*
	     * The command that resumed the coroutine above it: the
	     * coroutine's command (named after its body below), the
	     * coroutine command that made it, or a command that resumed it
	     * from C (then a coroutine frame of its own follows).
	     */

	    int coroId = CprofNameCoroutine(fPtr->namingPtr, -1);
	    const char *name;

	    nameId = (refPtr->kind == CPROF_RAW_CMD)
		    ? CommandName(fPtr, refPtr, &kind, &nests)
		    : (refPtr->kind == CPROF_RAW_OBJV)
		    ? ObjvName(fPtr, refPtr, &kind, &nests)
		    : EvalName(fPtr, refPtr, &kind, &nests);
	    name = (nameId >= 0) ? CprofNameString(nameId) : NULL;
	    if (nameId >= 0 && nameId != coroId && name != NULL
		    && (strcmp(name, "coroutine") == 0
		    || strcmp(name, "::coroutine") == 0)) {
		/* Made by the coroutine command: that frame alone. */
	    } else if (nameId >= 0 && nameId != coroId && nests) {
		/* Resumed from C by a command with no NRE entry. */
		addCoro = 1;
	    } else {
		/*
		 * The coroutine's command (gone by now, or called by a word
		 * that is not literal).
		 */

		nameId = coroId;
		kind = CPROF_KIND_CMD;
		nests = 0;
	    }
	    fPtr->counters.named++;
	    goto named;
	}
	switch (refPtr->kind) {
	case CPROF_RAW_PROC:
	    nameId = ProcName(fPtr, refPtr, &kind);
	    break;
	case CPROF_RAW_LAMBDA:
	    nameId = fPtr->applyId;
	    kind = fPtr->applyKind;
	    break;
	case CPROF_RAW_METHOD:
	    nameId = MethodName(fPtr, refPtr);
	    kind = CPROF_KIND_METHOD;
	    break;
	case CPROF_RAW_LIST:
	    /*
	     * A list evaluated directly: an event handler's frame if it is
	     * a handler's script, a coroutine's if it resumed one.
	     */

	    eventId = (fPtr->handlerProc != NULL) ? fPtr->handlerProc(
		    fPtr->handlerData, 0, (const void *) refPtr->anchor) : -1;
	    if (eventId >= 0) {
		AddBefore(out, &n, room, nest, refPtr, eventId, CPROF_KIND_EVENT);
	    }
	    if (refPtr->ident == CPROF_RAW_RESUME) {
		AddBefore(out, &n, room, nest, refPtr,
			CprofNameCoroutine(fPtr->namingPtr, -1),
			CPROF_KIND_CMD);
	    }
	    lastRaw = -1;
	    continue;
	case CPROF_RAW_EVAL:
	case CPROF_RAW_OBJV:
	    nameId = (refPtr->kind == CPROF_RAW_EVAL)
		    ? EvalName(fPtr, refPtr, &kind, &nests)
		    : ObjvName(fPtr, refPtr, &kind, &nests);
	    if (nameId < 0) {
		fPtr->counters.unnamed++;
		continue;
	    }
	    if (IsNext(fPtr, nameId, kind)) {
		continue;
	    }
	    break;
	case CPROF_RAW_CMD:
	    nameId = CommandName(fPtr, refPtr, &kind, &nests);
	    if (nameId >= 0 && IsNext(fPtr, nameId, kind)) {
		/*
		 * [next] or [nextto] that reached a method with no frame
		 * (a forward), or called by a word that is not literal.
		 */

		continue;
	    }
	    if (nameId == -1 && (nameId = OoFallbackName(fPtr, refPtr,
		    i + 1 < nIn ? &in[i + 1] : NULL)) >= 0) {
		kind = CPROF_KIND_METHOD;
		nests = 0;
	    }
	    if (nameId == -1 && refPtr->anchor != 0) {
		/*
		 * Code that could not be found (no longer live): the frame
		 * is left out rather than named "[stale]", as the wrapper
		 * leaves out what it does not wrap.
		 */

		fPtr->counters.unnamed++;
		continue;
	    }
	    break;
	default:
	    nameId = -1;
	}
	if (nameId < 0) {
	    if (refPtr->kind == CPROF_RAW_CMD
		    || refPtr->kind == CPROF_RAW_EVAL
		    || refPtr->kind == CPROF_RAW_OBJV) {
		fPtr->counters.unnamed++;
		continue;
	    }
	    fPtr->counters.stale++;
	    nameId = fPtr->staleId;
	    kind = CPROF_KIND_PROC;
	} else {
	    fPtr->counters.named++;
	}
      named:
	if ((refPtr->kind == CPROF_RAW_PROC || refPtr->kind == CPROF_RAW_METHOD
		|| refPtr->kind == CPROF_RAW_OBJV)
		&& n > 0 && lastRaw == CPROF_RAW_CMD
		&& out[n - 1].interpId == refPtr->interpId
		&& (out[n - 1].kind == CPROF_KIND_PROC
		|| (!lastResume && IsCoroutineName(fPtr, out[n - 1].nameId)))) {
	    /*
	     * The call site names a procedure but another one runs above
	     * it: the first did a tailcall (which the wrapper shows as the
	     * frame replaced), or its call's words were rewritten (the
	     * same procedure twice otherwise). Or it made or resumed a
	     * coroutine that did a yieldto: the command yielded to runs in
	     * its place.
	     */

	    n--;
	    lastRaw = -1;
	}
	if (refPtr->kind == CPROF_RAW_PROC && n > 0
		&& out[n - 1].kind == CPROF_KIND_ENSEMBLE
		&& out[n - 1].interpId == refPtr->interpId
		&& FoldsInto(out[n - 1].nameId, nameId)) {
	    /*
	     * The procedure implementing the ensemble's subcommand just
	     * below: the wrapper folds the two into one frame.
	     */

	    continue;
	}
	if (refPtr->kind == CPROF_RAW_METHOD
		&& (refPtr->node & CPROF_RAW_METHOD_FORWARD) && n > 0
		&& out[n - 1].nameId == nameId
		&& out[n - 1].interpId == refPtr->interpId) {
	    /*
	     * A forward whose call's literal words named it already.
	     */

	    continue;
	}
	if (refPtr->kind == CPROF_RAW_METHOD
		&& (refPtr->node & CPROF_RAW_METHOD_FORWARD) && n > 0
		&& lastRaw == CPROF_RAW_CMD && out[n - 1].nameId == fPtr->myId
		&& out[n - 1].interpId == refPtr->interpId) {
	    /*
	     * A forward called by [my] from a method's body: its call site,
	     * which the wrapper names by the forward.
	     */

	    n--;
	}
	if ((eventId = HandlerOfRef(fPtr, refPtr, lastCode)) >= 0) {
	    AddBefore(out, &n, room, nest, refPtr, eventId, CPROF_KIND_EVENT);
	}
	lastCode = (refPtr->kind == CPROF_RAW_CMD)
		? (const void *) refPtr->anchor : NULL;
	if (n >= room) {
	    break;
	}
	out[n] = *refPtr;
	out[n].nameId = nameId;
	out[n].kind = kind;
	out[n].node = -1;
	out[n].anchor = 0;
	out[n].ident = NULL;
	if (refPtr->kind == CPROF_RAW_OBJV) {
	    out[n].siteCode = NULL;	/* A word's text, not a site. */
	    out[n].siteOffset = 0;
	}
	isCmd = refPtr->kind == CPROF_RAW_CMD || refPtr->kind == CPROF_RAW_EVAL
		|| refPtr->kind == CPROF_RAW_OBJV;
	nest[n] = (isCmd && nests ? NEST_CMD : 0) | (isCmd ? NEST_IS_CMD : 0)
		| (refPtr->kind == CPROF_RAW_PROC && refPtr->siteCode == NULL
		? NEST_CALLED_FROM_C : 0);
	n++;
	nests = 0;
	lastRaw = refPtr->kind;
	lastResume = resume;
	if (addCoro && n < room) {
	    out[n] = out[n - 1];
	    out[n].nameId = CprofNameCoroutine(fPtr->namingPtr, -1);
	    out[n].kind = CPROF_KIND_CMD;
	    out[n].flags &= ~CPROF_REF_CURRENT;
	    out[n].siteCode = NULL;
	    out[n].siteOffset = 0;
	    nest[n] = 0;
	    n++;
	    lastRaw = -1;
	}
	addCoro = 0;
    }
    if (n > 0 && n < nIn && (in[nIn - 1].flags & CPROF_REF_CURRENT)) {
	out[n - 1].flags |= CPROF_REF_CURRENT;
    }

    /*
     * A command resuming a coroutine is named after the code the
     * coroutine runs (its outermost frame, next), as the wrapper names it.
     */

    for (i = 0; i + 1 < n; i++) {
	if (out[i].nameId == CprofNameCoroutine(fPtr->namingPtr, -1)
		&& out[i + 1].interpId == out[i].interpId) {
	    out[i].nameId = CprofNameCoroutine(fPtr->namingPtr,
		    out[i + 1].nameId);
	    CprofNameHold(&fPtr->refs, out[i].nameId);
	}
    }
    if (nativePtr != NULL) {
	Anchor(fPtr, out, n, nest, nativePtr);
    }
    return n;
}

int
CprofFramesResolve(
    CprofFrames *fPtr,
    const CprofTclRef *in,
    int nIn,
    const CprofNativeStack *nativePtr,
    CprofTclRef *out)
{
    unsigned char nest[CPROF_TCL_MAX];

    return Resolve(fPtr, in, nIn, nativePtr, out, CPROF_TCL_MAX, nest);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofFramesResolveAll --
 *
 *	Normal context: name the n frames of raw (read with room for that
 *	many, by CprofFramesStack) as a sample's are, without anchors, into
 *	*outPtr, ckalloc'ed (the caller frees it).
 *
 * Results:
 *	The number of frames.
 *
 *----------------------------------------------------------------------
 */

int
CprofFramesResolveAll(
    CprofFrames *fPtr,
    const CprofTclRef *raw,
    int n,
    int room,
    CprofTclRef **outPtr)
{
    CprofTclRef *out = (CprofTclRef *) ckalloc(room * sizeof(CprofTclRef));
    unsigned char *nest = (unsigned char *) ckalloc(room);

    n = Resolve(fPtr, raw, n, NULL, out, room, nest);
    ckfree(nest);
    *outPtr = out;
    return n;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofFramesCounts, CprofFramesStatus --
 *
 *	The reader's counters, and status's "frames" dict of them.
 *
 *----------------------------------------------------------------------
 */

void
CprofFramesCounts(
    CprofFrames *fPtr,
    CprofFramesCounters *countersPtr)
{
    *countersPtr = fPtr->counters;
}

Tcl_Obj *
CprofFramesStatus(
    const CprofFramesCounters *cPtr)
{
    Tcl_Obj *dictObj = Tcl_NewDictObj();

#define PUT(k, v) Tcl_DictObjPut(NULL, dictObj, Tcl_NewStringObj((k), -1), \
	Tcl_NewWideIntObj((Tcl_WideInt) (v)))
    PUT("samples", cPtr->samples);
    PUT("frames", cPtr->frames);
    PUT("torn_proc", cPtr->tornProc);
    PUT("torn_coroutine", cPtr->tornCoro);
    PUT("torn", cPtr->tornProc + cPtr->tornCoro);
    PUT("cut", cPtr->cut);
    PUT("named", cPtr->named);
    PUT("stale", cPtr->stale);
    PUT("unnamed", cPtr->unnamed);
    PUT("unanchored", cPtr->unanchored);
    PUT("evalobjv", cPtr->calls);
#undef PUT
    return dictObj;
}

/*
 * A method's reference let go of: what TclOODelMethodRef does
 * (tclOOMethod.c:270-283), which libtcl does not export.
 */

static void
LetGoOfMethod(
    Method *mPtr)
{
    if (mPtr->refCount-- <= 1) {
	if (mPtr->typePtr != NULL && mPtr->typePtr->deleteProc != NULL) {
	    mPtr->typePtr->deleteProc(mPtr->clientData);
	}
	if (mPtr->namePtr != NULL) {
	    Tcl_DecrRefCount(mPtr->namePtr);
	}
	ckfree(mPtr);
    }
}

/*
 * What the drain holds (procedures, methods, bytecodes) let go of: when
 * the reader is freed, and when the holds reach MAX_HELD (LetGoIfFull).
 */

void
CprofFramesReleaseHeld(
    CprofFrames *fPtr)
{
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    for (hPtr = Tcl_FirstHashEntry(&fPtr->procs, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	HeldProc *hpPtr = Tcl_GetHashValue(hPtr);

	if (hpPtr != NULL) {
	    if (--hpPtr->procPtr->refCount <= 0) {
		TclProcCleanupProc(hpPtr->procPtr);
	    }
	    TclCleanupCommandMacro(hpPtr->cmdPtr);
	    ckfree(hpPtr);
	}
    }
    for (hPtr = Tcl_FirstHashEntry(&fPtr->methods, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	HeldMethod *hmPtr = Tcl_GetHashValue(hPtr);

	if (hmPtr != NULL) {
	    LetGoOfMethod(hmPtr->mPtr);
	    ckfree(hmPtr);
	}
    }
    for (hPtr = Tcl_FirstHashEntry(&fPtr->codes, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	CprofReleaseSiteKey(CPROF_SITE_BYTECODE,
		(void *) Tcl_GetHashKey(&fPtr->codes, hPtr));
    }
    Tcl_DeleteHashTable(&fPtr->procs);
    Tcl_DeleteHashTable(&fPtr->methods);
    Tcl_DeleteHashTable(&fPtr->codes);
    Tcl_DeleteHashTable(&fPtr->sites);
    Tcl_InitHashTable(&fPtr->procs, TCL_ONE_WORD_KEYS);
    Tcl_InitHashTable(&fPtr->methods, TCL_ONE_WORD_KEYS);
    Tcl_InitHashTable(&fPtr->codes, TCL_ONE_WORD_KEYS);
    Tcl_InitHashTable(&fPtr->sites, TCL_ONE_WORD_KEYS);
}
