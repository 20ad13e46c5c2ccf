/*
 * hookthunk.c --
 *
 *	Small pieces of machine code made at run time, one per wrapped
 *	command: the command's nreProc becomes a thunk that loads the
 *	command's wrap record into the fifth argument register and jumps to
 *	the common wrapper, wrap(clientData, interp, objc, objv, record).
 *
 *	Why generated code: Tcl calls a command's nreProc with the command's
 *	own clientData only, and that clientData must stay what the command
 *	was created with (Tk widgets, tclsqlite handles and tdom documents
 *	are found through Tcl_GetCommandInfo's objClientData), so the
 *	wrapper cannot be told which command it runs through clientData;
 *	and many commands share one function and one clientData (most of
 *	Tcl's built-ins have NULL). A distinct entry address per command is
 *	the one piece of information Tcl passes along untouched. No library
 *	makes such closures (libffi's do, but cost a call through its
 *	generic dispatcher and a dependency; these are two instructions).
 *
 *	Layout: blocks of two pages, mapped read-write; the first page is
 *	filled with code once, at the block's creation, and made
 *	read-execute before any of it is used; it is never written again.
 *	The second page holds each slot's two words (record, target), which
 *	are the only thing assigning or freeing a slot changes. So no page is
 *	ever writable and executable at once, and a block can be shared by
 *	every thread. Blocks are never unmapped: a slot's code may be named
 *	by an NRE callback of an interpreter (CprofThunkIdentity) after the
 *	package is gone.
 *
 *	Slot 0 of the first block is not a thunk but a callback that
 *	returns its third argument: an NRE callback neutralised by pointing
 *	it there (when the package is unloaded with some of its callbacks
 *	still queued) runs as a no-op.
 *
 *	x86-64 and aarch64 are supported; elsewhere CprofThunksReady says
 *	why and the capture falls back to Tcl's trace.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "tclcprofInt.h"
#include <sys/mman.h>
#include <unistd.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>

#define SLOT_CODE	32		/* Bytes of code per slot. */
#define SLOT_DATA	16		/* Bytes of data per slot. */

typedef struct Block {
    unsigned char *code;	/* The code page(s). */
    uintptr_t *data;		/* Per slot: {record, target}. */
    int slots;
    struct Block *nextPtr;
} Block;

typedef struct FreeSlot {
    struct FreeSlot *nextPtr;	/* Kept in the slot's data words. */
} FreeSlot;

static struct {
    int state;			/* 0 not tried, 1 ready, -1 unavailable. */
    char message[160];		/* Why not. */
    size_t pageSize;
    Block *blocks;
    uintptr_t *freeList;	/* Data words of a free slot; the first
				 * holds the next free slot's. */
    size_t inUse;		/* Slots assigned. */
    size_t total;
    void *identity;		/* Slot 0 of the first block. */
    uintptr_t lo, hi;		/* Bounds of all code pages, a quick test
				 * for CprofThunkContains. */
} thunks;
TCL_DECLARE_MUTEX(thunkMutex)

#if defined(__x86_64__)

/*
 * Code of slot 'i' of a block:
 *
 *	f3 0f 1e fa		endbr64		(a no-op without CET)
 *	4c 8b 05 <rel32>	mov r8, [rip + data[i].record]
 *	ff 25 <rel32>		jmp [rip + data[i].target]
 *	cc ...			int3 padding
 */

static void
WriteSlot(
    unsigned char *code,
    uintptr_t *dataWords)
{
    unsigned char *p = code;
    int32_t rel;

    memset(code, 0xcc, SLOT_CODE);
    p[0] = 0xf3; p[1] = 0x0f; p[2] = 0x1e; p[3] = 0xfa;
    p += 4;
    p[0] = 0x4c; p[1] = 0x8b; p[2] = 0x05;
    rel = (int32_t) ((intptr_t) &dataWords[0] - (intptr_t) (p + 7));
    memcpy(p + 3, &rel, 4);
    p += 7;
    p[0] = 0xff; p[1] = 0x25;
    rel = (int32_t) ((intptr_t) &dataWords[1] - (intptr_t) (p + 6));
    memcpy(p + 2, &rel, 4);
}

/*
 * The identity callback: int f(ClientData data[], Tcl_Interp *interp,
 * int result) { return result; }
 *
 *	f3 0f 1e fa		endbr64
 *	89 d0			mov eax, edx
 *	c3			ret
 */

static void
WriteIdentity(
    unsigned char *code)
{
    static const unsigned char ident[] = {
	0xf3, 0x0f, 0x1e, 0xfa, 0x89, 0xd0, 0xc3
    };

    memset(code, 0xcc, SLOT_CODE);
    memcpy(code, ident, sizeof(ident));
}

#define HAVE_THUNKS 1
#elif defined(__aarch64__)

/*
 * Code of slot 'i' of a block (AAPCS64: the fifth argument in x4; x16 is
 * the intra-procedure-call scratch register, free at a call):
 *
 *	58xxxxx4	ldr x4, data[i].record		(pc-relative)
 *	58xxxxx0|16	ldr x16, data[i].target
 *	d61f0200	br x16
 *	d4200000 ...	brk #0 padding
 *
 * A literal load reaches +-1 MB: the data page is the next page.
 */

static inline uint32_t
LoadLiteral(
    int reg,
    const void *insn,
    const void *data)
{
    int32_t words = (int32_t) (((intptr_t) data - (intptr_t) insn) / 4);

    return 0x58000000u | (((uint32_t) words & 0x7ffff) << 5) | (uint32_t) reg;
}

static void
WriteSlot(
    unsigned char *code,
    uintptr_t *dataWords)
{
    uint32_t insn[SLOT_CODE / 4];
    int i;

    for (i = 0; i < SLOT_CODE / 4; i++) {
	insn[i] = 0xd4200000u;			/* brk #0 */
    }
    insn[0] = LoadLiteral(4, code, &dataWords[0]);
    insn[1] = LoadLiteral(16, code + 4, &dataWords[1]);
    insn[2] = 0xd61f0200u;			/* br x16 */
    memcpy(code, insn, SLOT_CODE);
}

/*
 * The identity callback (see above):
 *
 *	2a0203e0	mov w0, w2
 *	d65f03c0	ret
 */

static void
WriteIdentity(
    unsigned char *code)
{
    uint32_t insn[SLOT_CODE / 4];
    int i;

    for (i = 0; i < SLOT_CODE / 4; i++) {
	insn[i] = 0xd4200000u;
    }
    insn[0] = 0x2a0203e0u;
    insn[1] = 0xd65f03c0u;
    memcpy(code, insn, SLOT_CODE);
}

#define HAVE_THUNKS 1
#endif /* __x86_64__, __aarch64__ */

#ifdef HAVE_THUNKS

/*
 * Map a new block, fill its code page and seal it. Called with the mutex
 * held. Returns 0 on failure (message set).
 */

static int
NewBlock(void)
{
    size_t ps = thunks.pageSize;
    int slots = (int) (ps / SLOT_CODE), i;
    unsigned char *mem;
    Block *blockPtr;

    if ((size_t) slots * SLOT_DATA > ps) {
	slots = (int) (ps / SLOT_DATA);
    }
    mem = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
	snprintf(thunks.message, sizeof(thunks.message),
		"cannot map memory for command wrappers: %s",
		strerror(errno));
	return 0;
    }
    blockPtr = (Block *) ckalloc(sizeof(Block));
    blockPtr->code = mem;
    blockPtr->data = (uintptr_t *) (mem + ps);
    blockPtr->slots = slots;
    for (i = 0; i < slots; i++) {
	if (thunks.blocks == NULL && i == 0) {
	    WriteIdentity(mem);
	} else {
	    WriteSlot(mem + (size_t) i * SLOT_CODE,
		    &blockPtr->data[2 * i]);
	}
    }
    if (mprotect(mem, ps, PROT_READ | PROT_EXEC) != 0) {
	snprintf(thunks.message, sizeof(thunks.message),
		"cannot make command wrappers executable (mprotect: %s)",
		strerror(errno));
	munmap(mem, 2 * ps);
	ckfree(blockPtr);
	return 0;
    }
    __builtin___clear_cache((char *) mem, (char *) mem + ps);
    for (i = slots - 1; i >= 0; i--) {
	if (thunks.blocks == NULL && i == 0) {
	    thunks.identity = mem;
	    continue;
	}
	blockPtr->data[2 * i] = (uintptr_t) thunks.freeList;
	blockPtr->data[2 * i + 1] = 0;
	thunks.freeList = &blockPtr->data[2 * i];
	thunks.total++;
    }
    blockPtr->nextPtr = thunks.blocks;
    if (thunks.lo == 0 || (uintptr_t) mem < thunks.lo) {
	__atomic_store_n(&thunks.lo, (uintptr_t) mem, __ATOMIC_RELAXED);
    }
    if ((uintptr_t) mem + ps > thunks.hi) {
	__atomic_store_n(&thunks.hi, (uintptr_t) mem + ps, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&thunks.blocks, blockPtr, __ATOMIC_RELEASE);
    return 1;
}

/*
 * A slot's code from its data words and back: a block's code page and
 * data page are one mapping, page-aligned, the data page right after the
 * code page, so both are found with arithmetic, in constant time however
 * many blocks there are (a DOM binding makes and deletes a command per
 * node: a walk over the blocks made that quadratic).
 */

static void *
SlotCode(
    uintptr_t *words)
{
    uintptr_t dataPage = (uintptr_t) words & ~(uintptr_t) (thunks.pageSize - 1);
    size_t slot = ((uintptr_t) words - dataPage) / SLOT_DATA;

    return (unsigned char *) (dataPage - thunks.pageSize) + slot * SLOT_CODE;
}

static uintptr_t *
SlotData(
    void *entry)
{
    uintptr_t codePage = (uintptr_t) entry & ~(uintptr_t) (thunks.pageSize - 1);
    size_t slot = ((uintptr_t) entry - codePage) / SLOT_CODE;

    return (uintptr_t *) (codePage + thunks.pageSize) + 2 * slot;
}
#endif /* HAVE_THUNKS */

/*
 *----------------------------------------------------------------------
 *
 * CprofThunksReady --
 *
 *	Whether thunks can be made here: the architecture is supported and
 *	the system lets a page of code be made (a first block is made).
 *
 * Results:
 *	1 if so; 0 with a message otherwise.
 *
 *----------------------------------------------------------------------
 */

int
CprofThunksReady(
    char *msg,
    size_t msgLen)
{
    int ok;

    Tcl_MutexLock(&thunkMutex);
    if (thunks.state == 0) {
#ifdef HAVE_THUNKS
	long ps = sysconf(_SC_PAGESIZE);

	thunks.pageSize = ps > 0 ? (size_t) ps : 4096;
	thunks.state = NewBlock() ? 1 : -1;
#else
	snprintf(thunks.message, sizeof(thunks.message),
		"command wrapping is not available on this processor");
	thunks.state = -1;
#endif
    }
    ok = (thunks.state == 1);
    if (!ok && msg != NULL) {
	snprintf(msg, msgLen, "%s", thunks.message);
    }
    Tcl_MutexUnlock(&thunkMutex);
    return ok;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofThunkNew, CprofThunkFree --
 *
 *	Assign a slot: its code, when called as f(a, b, c, d), calls
 *	target(a, b, c, d, record) (a jump: the target returns to f's
 *	caller). Free it again. The caller must make sure nothing can call
 *	a slot after freeing it (a wrapped command's nreProc is restored
 *	first; Tcl calls an nreProc right after reading it).
 *
 * Results:
 *	The slot's entry address, or NULL if no memory could be mapped.
 *
 *----------------------------------------------------------------------
 */

void *
CprofThunkNew(
    void *target,
    void *record)
{
#ifdef HAVE_THUNKS
    uintptr_t *words;
    void *entry = NULL;

    Tcl_MutexLock(&thunkMutex);
    if (thunks.state == 1 && (thunks.freeList != NULL || NewBlock())) {
	words = thunks.freeList;
	thunks.freeList = (uintptr_t *) words[0];
	words[0] = (uintptr_t) record;
	__atomic_store_n(&words[1], (uintptr_t) target, __ATOMIC_RELEASE);
	thunks.inUse++;
	entry = SlotCode(words);
    }
    Tcl_MutexUnlock(&thunkMutex);
    return entry;
#else
    (void) target;
    (void) record;
    return NULL;
#endif
}

void
CprofThunkFree(
    void *entry)
{
#ifdef HAVE_THUNKS
    uintptr_t *words = SlotData(entry);

    Tcl_MutexLock(&thunkMutex);
    words[1] = 0;
    words[0] = (uintptr_t) thunks.freeList;
    thunks.freeList = words;
    thunks.inUse--;
    Tcl_MutexUnlock(&thunkMutex);
#else
    (void) entry;
#endif
}

/*
 *----------------------------------------------------------------------
 *
 * CprofThunkContains --
 *
 *	Whether pc lies in a thunk's code page. For the unwinder (the signal
 *	handler's walk, unwindcfi.c): thunks have no call frame information,
 *	and a sample that interrupts one must still find its caller. No
 *	instruction of a slot (or of the identity callback) moves the stack
 *	pointer, so the caller's return address is the word at the stack
 *	pointer, as at any function's entry.
 *
 *	Async-signal-safe: no lock. Blocks are only ever added, each
 *	complete before it is published (release store of thunks.blocks),
 *	and never unmapped or freed, so the list read here is always
 *	well-formed; a block added meanwhile may be missed (the walk then
 *	ends at the thunk, as it did before).
 *
 *----------------------------------------------------------------------
 */

int
CprofThunkContains(
    uintptr_t pc)
{
#ifdef HAVE_THUNKS
    const Block *blockPtr;

    if (pc < __atomic_load_n(&thunks.lo, __ATOMIC_RELAXED)
	    || pc >= __atomic_load_n(&thunks.hi, __ATOMIC_RELAXED)) {
	return 0;
    }
    for (blockPtr = __atomic_load_n(&thunks.blocks, __ATOMIC_ACQUIRE);
	    blockPtr != NULL; blockPtr = blockPtr->nextPtr) {
	if (pc >= (uintptr_t) blockPtr->code
		&& pc < (uintptr_t) blockPtr->code + thunks.pageSize) {
	    return 1;
	}
    }
#else
    (void) pc;
#endif
    return 0;
}

/*
 * The identity NRE callback (see above), or NULL without thunks.
 */

void *
CprofThunkIdentity(void)
{
    void *p;

    Tcl_MutexLock(&thunkMutex);
    p = thunks.identity;
    Tcl_MutexUnlock(&thunkMutex);
    return p;
}

/*
 * Slots in use and made, for status.
 */

void
CprofThunkCounts(
    size_t *inUsePtr,
    size_t *totalPtr)
{
    Tcl_MutexLock(&thunkMutex);
    *inUsePtr = thunks.inUse;
    *totalPtr = thunks.total;
    Tcl_MutexUnlock(&thunkMutex);
}
