/*
 * hookgot.c --
 *
 *	Redirect calls of a set of functions (by symbol name) made by every
 *	loaded module to hooks, by rewriting the modules' GOT entries: the
 *	JUMP_SLOT relocations of their PLT and the GLOB_DAT relocations of
 *	code built without a PLT. Modules loaded later are patched when the
 *	caller says so (the memory hooks do it from their dlopen hook); the
 *	records of a module unloaded are dropped (from their dlclose hook),
 *	and every entry still holding a hook gets its original value back
 *	at restore. No LD_PRELOAD is needed, and a run can start and stop
 *	at any time.
 *
 *	Why hand-written: what is needed of each module is its dynamic
 *	section, already mapped and relocated by the loader, read through
 *	dl_iterate_phdr: the relocation tables, the symbol table and its
 *	strings. libelf would read the files again from disk (a module's
 *	file may be gone or replaced) and map nothing more useful.
 *
 *	Entries in a RELRO segment (read-only after relocation, as in
 *	libc) are made writable for the store and read-only again. The
 *	stores are single aligned 8-byte writes: a thread calling through
 *	an entry at that moment calls either the old target or the hook.
 *
 *	Not patched: tclcprof's own library (its allocations are never the
 *	program's), the dynamic loader and the vDSO.
 *
 *	Everything here runs in normal context, under the caller's lock.
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
#include "hookgot.h"
#include "arch.h"
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * One patched entry.
 */

typedef struct Patch {
    uintptr_t slot;		/* Address of the GOT entry. */
    uintptr_t old;		/* Its value before. */
    uintptr_t hook;		/* The value written. */
    uintptr_t base;		/* Its module's load address... */
    uintptr_t relroStart;	/* ...and RELRO range, [start, end), or 0 */
    uintptr_t relroEnd;		/* when the entry is writable anyway. */
    int target;			/* Index into the targets. */
} Patch;

/*
 * A set of patches: the memory hooks' (the default set) and the scope's
 * (cmdscope.c: Tcl_CreateInterp called by modules linked to libtcl), each
 * patched and restored under its own caller's lock.
 */

struct CprofGotSet {
    const CprofGotTarget *targets;
    int numTargets;
    Patch *patches;
    int num, cap;
    uintptr_t skipAddr;		/* The module holding this address is not
				 * patched (0: none but tclcprof's own). */
    int modules;		/* Modules seen at the last scan. */
};

static CprofGotSet defaultSet;
static uintptr_t ownAddr;	/* An address in tclcprof's own mapping. */

typedef struct Scan {
    CprofGotSet *gPtr;
    int count;
} Scan;

static uintptr_t
PageOf(
    uintptr_t addr)
{
    static uintptr_t pageSize;

    if (pageSize == 0) {
	pageSize = (uintptr_t) sysconf(_SC_PAGESIZE);
    }
    return addr & ~(pageSize - 1);
}

/*
 * Write one entry, making a read-only (RELRO) page writable for it.
 */

static int
WriteSlot(
    uintptr_t slot,
    uintptr_t value,
    uintptr_t relroStart,
    uintptr_t relroEnd)
{
    int ro = (slot >= relroStart && slot < relroEnd);
    uintptr_t page = PageOf(slot);
    long pageSize = sysconf(_SC_PAGESIZE);

    if (ro && mprotect((void *) page, (size_t) pageSize,
	    PROT_READ | PROT_WRITE) != 0) {
	return 0;
    }
    __atomic_store_n((uintptr_t *) slot, value, __ATOMIC_RELEASE);
    if (ro) {
	mprotect((void *) page, (size_t) pageSize, PROT_READ);
    }
    return 1;
}

static void
AddPatch(
    CprofGotSet *gPtr,
    const Patch *pPtr)
{
    if (gPtr->num == gPtr->cap) {
	int cap = gPtr->cap ? 2 * gPtr->cap : 64;
	Patch *newPtr = (Patch *) realloc(gPtr->patches, cap * sizeof(Patch));

	if (newPtr == NULL) {
	    return;
	}
	gPtr->patches = newPtr;
	gPtr->cap = cap;
    }
    gPtr->patches[gPtr->num++] = *pPtr;
}

/*
 * Patch the entries of one relocation table.
 */

static void
PatchRelocs(
    CprofGotSet *gPtr,
    uintptr_t base,
    const ElfW(Rela) *rel,
    size_t count,
    const ElfW(Sym) *symtab,
    const char *strtab,
    uintptr_t relroStart,
    uintptr_t relroEnd,
    int *countPtr)
{
    size_t i;
    int t;

    for (i = 0; i < count; i++) {
	unsigned long type = ELF64_R_TYPE(rel[i].r_info);
	unsigned long sym = ELF64_R_SYM(rel[i].r_info);
	const char *name;
	Patch patch;

	if (!CPROF_GOT_RELOC(type, rel[i].r_addend) || sym == 0) {
	    continue;
	}
	name = strtab + symtab[sym].st_name;
	for (t = 0; t < gPtr->numTargets; t++) {
	    if (strcmp(name, gPtr->targets[t].name) == 0) {
		break;
	    }
	}
	if (t == gPtr->numTargets) {
	    continue;
	}
	patch.slot = base + rel[i].r_offset;
	patch.hook = (uintptr_t) gPtr->targets[t].hook;
	patch.old = __atomic_load_n((uintptr_t *) patch.slot,
		__ATOMIC_ACQUIRE);
	if (patch.old == patch.hook) {
	    continue;			/* Patched already. */
	}
	patch.base = base;
	patch.relroStart = relroStart;
	patch.relroEnd = relroEnd;
	patch.target = t;
	if (WriteSlot(patch.slot, patch.hook, relroStart, relroEnd)) {
	    AddPatch(gPtr, &patch);
	    (*countPtr)++;
	}
    }
}

/*
 * dl_iterate_phdr callback: patch one module.
 */

static int
PatchModule(
    struct dl_phdr_info *info,
    size_t size,
    void *data)
{
    uintptr_t base = info->dlpi_addr;
    const ElfW(Dyn) *dyn = NULL;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const ElfW(Rela) *jmprel = NULL, *rela = NULL;
    size_t pltrelsz = 0, relasz = 0;
    uintptr_t relroStart = 0, relroEnd = 0, lo = UINTPTR_MAX, hi = 0;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    Scan *scanPtr = (Scan *) data;
    CprofGotSet *gPtr = scanPtr->gPtr;
    int i;

    (void) size;
    gPtr->modules++;
    if (strstr(name, "linux-vdso") != NULL || strstr(name, "ld-linux")
	    != NULL) {
	return 0;
    }
    for (i = 0; i < info->dlpi_phnum; i++) {
	const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

	if (ph->p_type == PT_DYNAMIC) {
	    dyn = (const ElfW(Dyn) *) (base + ph->p_vaddr);
	} else if (ph->p_type == PT_GNU_RELRO) {
	    relroStart = PageOf(base + ph->p_vaddr);
	    relroEnd = base + ph->p_vaddr + ph->p_memsz;
	} else if (ph->p_type == PT_LOAD) {
	    if (base + ph->p_vaddr < lo) {
		lo = base + ph->p_vaddr;
	    }
	    if (base + ph->p_vaddr + ph->p_memsz > hi) {
		hi = base + ph->p_vaddr + ph->p_memsz;
	    }
	}
    }
    if (dyn == NULL || (lo <= ownAddr && ownAddr < hi)
	    || (lo <= gPtr->skipAddr && gPtr->skipAddr < hi)) {
	return 0;			/* No dynamic section, our own, or the
					 * one the set leaves alone. */
    }

    /*
     * The loader relocates the addresses of the dynamic section in place
     * on this platform, except in modules it maps read-only: an address
     * below the load address is still relative.
     */

#define ADDR(v)	((uintptr_t) (v) < base ? base + (uintptr_t) (v) \
	: (uintptr_t) (v))
    for (; dyn->d_tag != DT_NULL; dyn++) {
	switch (dyn->d_tag) {
	case DT_SYMTAB:
	    symtab = (const ElfW(Sym) *) ADDR(dyn->d_un.d_ptr);
	    break;
	case DT_STRTAB:
	    strtab = (const char *) ADDR(dyn->d_un.d_ptr);
	    break;
	case DT_JMPREL:
	    jmprel = (const ElfW(Rela) *) ADDR(dyn->d_un.d_ptr);
	    break;
	case DT_PLTRELSZ:
	    pltrelsz = dyn->d_un.d_val;
	    break;
	case DT_RELA:
	    rela = (const ElfW(Rela) *) ADDR(dyn->d_un.d_ptr);
	    break;
	case DT_RELASZ:
	    relasz = dyn->d_un.d_val;
	    break;
	}
    }
#undef ADDR
    if (symtab == NULL || strtab == NULL) {
	return 0;
    }
    if (jmprel != NULL) {
	PatchRelocs(gPtr, base, jmprel, pltrelsz / sizeof(ElfW(Rela)), symtab,
		strtab, relroStart, relroEnd, &scanPtr->count);
    }
    if (rela != NULL) {
	PatchRelocs(gPtr, base, rela, relasz / sizeof(ElfW(Rela)), symtab,
		strtab, relroStart, relroEnd, &scanPtr->count);
    }
    return 0;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofGotPatch --
 *
 *	Point the GOT entries of every loaded module (but tclcprof's own,
 *	the loader's and the vDSO's) for the targets' symbols at their
 *	hooks. Entries patched already are left alone, so that it can be
 *	called again after a dlopen. 'targets' must stay valid until
 *	CprofGotRestore.
 *
 * Results:
 *	The number of entries patched by this call.
 *
 *----------------------------------------------------------------------
 */

/*
 * Once entries point into this library it must never be unmapped: Tcl's
 * full finalization (TCL_FINALIZE_ON_EXIT) unloads it without its unload
 * procedure, and a call through an entry, or a return into a hook that
 * called dlclose, would land on nothing. A reference taken with
 * RTLD_NODELETE keeps it mapped for the life of the process (its
 * destructors still put the entries back at exit).
 */

static void
PinSelf(void)
{
    static int pinned;
    Dl_info info;

    if (pinned) {
	return;
    }
    if (dladdr((void *) PinSelf, &info) != 0 && info.dli_fname != NULL
	    && dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE)
	    != NULL) {
	pinned = 1;
    }
}

int
CprofGotSetPatch(
    CprofGotSet *gPtr,
    const CprofGotTarget *targets,
    int numTargets)
{
    Scan scan;

    PinSelf();
    if (ownAddr == 0) {
	ownAddr = (uintptr_t) (void *) CprofGotSetPatch;
    }
    gPtr->targets = targets;
    gPtr->numTargets = numTargets;
    gPtr->modules = 0;
    scan.gPtr = gPtr;
    scan.count = 0;
    dl_iterate_phdr(PatchModule, &scan);
    return scan.count;
}

int
CprofGotPatch(
    const CprofGotTarget *targets,
    int numTargets)
{
    return CprofGotSetPatch(&defaultSet, targets, numTargets);
}

/*
 * A set of its own, leaving alone the module that holds skipAddr (0:
 * none but tclcprof's own).
 */

CprofGotSet *
CprofGotSetNew(
    void *skipAddr)
{
    CprofGotSet *gPtr = (CprofGotSet *) calloc(1, sizeof(CprofGotSet));

    if (gPtr != NULL) {
	gPtr->skipAddr = (uintptr_t) skipAddr;
    }
    return gPtr;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofGotForgetClosed --
 *
 *	After a dlclose: drop the records of entries in modules no longer
 *	loaded (their memory may be gone or reused).
 *
 *----------------------------------------------------------------------
 */

typedef struct Loaded {
    uintptr_t *bases;
    int num, cap;
} Loaded;

static int
CollectBase(
    struct dl_phdr_info *info,
    size_t size,
    void *data)
{
    Loaded *lPtr = (Loaded *) data;

    (void) size;
    if (lPtr->num == lPtr->cap) {
	int cap = lPtr->cap ? 2 * lPtr->cap : 64;
	uintptr_t *newPtr = (uintptr_t *) realloc(lPtr->bases,
		cap * sizeof(uintptr_t));

	if (newPtr == NULL) {
	    return 1;
	}
	lPtr->bases = newPtr;
	lPtr->cap = cap;
    }
    lPtr->bases[lPtr->num++] = info->dlpi_addr;
    return 0;
}

static void
ForgetClosed(
    CprofGotSet *gPtr)
{
    Loaded loaded = {NULL, 0, 0};
    int i, j, k;

    if (dl_iterate_phdr(CollectBase, &loaded) != 0) {
	free(loaded.bases);
	return;				/* No memory: keep every record. */
    }
    for (i = k = 0; i < gPtr->num; i++) {
	for (j = 0; j < loaded.num; j++) {
	    if (loaded.bases[j] == gPtr->patches[i].base) {
		break;
	    }
	}
	if (j < loaded.num) {
	    gPtr->patches[k++] = gPtr->patches[i];
	}
    }
    gPtr->num = k;
    free(loaded.bases);
}

void
CprofGotForgetClosed(void)
{
    ForgetClosed(&defaultSet);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofGotRestore --
 *
 *	Give every patched entry that still holds its hook its value from
 *	before, and forget the records.
 *
 * Results:
 *	The number of entries restored.
 *
 *----------------------------------------------------------------------
 */

int
CprofGotSetRestore(
    CprofGotSet *gPtr)
{
    int i, n = 0;

    ForgetClosed(gPtr);
    for (i = gPtr->num - 1; i >= 0; i--) {
	Patch *pPtr = &gPtr->patches[i];

	if (__atomic_load_n((uintptr_t *) pPtr->slot, __ATOMIC_ACQUIRE)
		== pPtr->hook && WriteSlot(pPtr->slot, pPtr->old,
		pPtr->relroStart, pPtr->relroEnd)) {
	    n++;
	}
    }
    gPtr->num = 0;
    return n;
}

int
CprofGotRestore(void)
{
    return CprofGotSetRestore(&defaultSet);
}

/*
 * How many entries are patched now, in how many modules seen.
 */

int
CprofGotPatched(
    int *modulesPtr)
{
    if (modulesPtr != NULL) {
	*modulesPtr = defaultSet.modules;
    }
    return defaultSet.num;
}
