/*
 * symbolize.c --
 *
 *	Native addresses to function names and C source lines, for the C
 *	frames of samples. All of it runs in normal context (drain,
 *	reports), never in the signal handler. What the files of a module
 *	say is read through elfutils by symfile.c; here are the modules
 *	and the caches:
 *
 *	- Modules: CprofSymRefresh takes a snapshot of the loaded modules
 *	  with dl_iterate_phdr (path, load base, executable segments, GNU
 *	  build-id read from the mapped PT_NOTE: libelf reads files, not the
 *	  images the loader mapped). The loader's load/unload counters make
 *	  a refresh with nothing changed cost one callback. A module whose
 *	  path, base, build-id, segments or file identity changed is a new
 *	  module: the cached names of the old one are forgotten, so that an
 *	  address is never named after another library now loaded where
 *	  its own was; an address in no module is "[unknown]". A file
 *	  whose build-id is not the one in memory (replaced on disk since
 *	  it was loaded) is not read.
 *	- Names: a symbol's (or "name@plt"), else "module!fn_0x<start>"
 *	  (stripped code: the function's start, from the unwind tables),
 *	  else "module+0x<offset>". The vDSO, which has no file, is read
 *	  from its mapped image.
 *	- Caches: each symbolizer caches address -> result in a
 *	  one-word-key hash table (a warm lookup is one hash probe and one
 *	  copy), and function start -> result so that the addresses of one
 *	  function share one interned name, and one entry when they have no
 *	  source line (an address with a line has an entry of its own). The
 *	  cache is flushed when it reaches CACHE_MAX entries.
 *	- Lines: only a symbolizer whose lines are on (CprofSymSetLines: a
 *	  run with -lines 1; on by default for other callers) asks for C
 *	  source lines, so that a profile made without them never opens a
 *	  module's DWARF (libc's debug file: ~0.1 s and ~12 MB).
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _GNU_SOURCE
#   define _GNU_SOURCE
#endif
#include "symfile.h"
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/stat.h>

/*
 * Limits.
 */

#define CACHE_MAX	(1 << 20)	/* Address cache entries before a
					 * flush. */
#define SLAB_ENTRIES	512		/* Cache entries per allocation. */
#define NAME_MAX_SHOWN	200		/* Module name length in synthesized
					 * names. */
#define WARM_ROUNDS	10		/* Warm passes of debug symbols. */

/*
 * A loaded module, as seen by one symbolizer.
 */

typedef struct Module {
    char *name;			/* dlpi_name ("" for the main program). */
    char *path;			/* File to read; NULL for the vDSO. */
    char *baseName;		/* Shown module name. */
    int moduleId;		/* Interned baseName. */
    uintptr_t base;		/* Load bias (dlpi_addr). */
    uintptr_t *spans;		/* Executable segments: start, end pairs. */
    int numSpans;
    unsigned char buildId[CPROF_BUILD_ID_MAX];
    int buildIdLen;		/* From the mapped PT_NOTE; 0 if none. */
    int statOk;			/* fileId is valid. */
    CprofFileId fileId;
    int isMain;			/* The main program. */
    int isVdso;			/* The vDSO: read from memory. */
    size_t imageSize;		/* vDSO: bytes of its image mapped. */
    int inTcl;			/* Contains Tcl_EvalObjv. */
    int tableTried;		/* tablePtr has been looked for. */
    CprofSymTable *tablePtr;		/* Its symbols, or NULL. */
    int seen;			/* Refresh: still loaded. */
} Module;

/*
 * An executable address range of a module; the symbolizer keeps them
 * sorted by start.
 */

typedef struct ExecRange {
    uintptr_t start;
    uintptr_t end;
    Module *modPtr;
} ExecRange;

/*
 * A cached result: a function's, shared by all its addresses that have no
 * source line, or an address's own (a copy of its function's with the
 * line), so that a warm lookup is one hash probe and one copy either way.
 */

typedef struct CacheEntry {
    CprofSymInfo info;
    Module *modPtr;		/* NULL: the address is in no module. */
} CacheEntry;

typedef struct CacheSlab {
    struct CacheSlab *nextPtr;
    int used;
    CacheEntry entries[SLAB_ENTRIES];
} CacheSlab;

struct CprofSymbolizer {
    Module **modules;		/* Loaded modules, in loader order. */
    int numModules;
    ExecRange *ranges;		/* Sorted by start. */
    int numRanges;
    Tcl_HashTable addrCache;	/* Address -> CacheEntry. */
    Tcl_HashTable funcCache;	/* Function start -> CacheEntry. */
    CacheSlab *slabs;		/* Storage of the entries. */
    int numEntries;		/* Entries handed out from slabs. */
    int numUnknown;		/* Addresses cached as unknown. */
    CacheEntry unknownEntry;	/* The result for addresses in no module. */
    int initialized;		/* A refresh has been done. */
    int haveCounts;		/* adds and subs are valid. */
    unsigned long long adds;	/* Loader counters at the last refresh. */
    unsigned long long subs;
    char *exePath;		/* The main program's path, or NULL. */
    char *exeName;		/* Base name of the main program. */
    int lines;			/* Find C source lines (CprofSymSetLines). */
};

/*
 * The snapshot taken inside dl_iterate_phdr, in storage allocated before
 * the walk (no allocation while the loader lock is held).
 */

typedef struct SnapModule {
    size_t nameOff;		/* Name in the snapshot's pool. */
    uintptr_t base;
    int firstSpan;
    int numSpans;
    int isMain;
    int isVdso;
    size_t imageSize;
    unsigned char buildId[CPROF_BUILD_ID_MAX];
    int buildIdLen;
} SnapModule;

typedef struct Snapshot {
    SnapModule *mods;
    int numMods, capMods, needMods;
    uintptr_t *spans;		/* start, end pairs. */
    int numSpans, capSpans, needSpans;
    char *pool;
    size_t poolLen, poolCap, needPool;
    int index;			/* Modules reported so far. */
    int checkOnly;		/* Stop if the counters equal old ones. */
    unsigned long long oldAdds, oldSubs;
    int haveCounts;
    unsigned long long adds, subs;
    int unchanged;
    uintptr_t vdsoEhdr;
    size_t pageSize;
} Snapshot;

/*
 * Forward declarations.
 */

static int		InRange(uint64_t size, uint64_t off, uint64_t len);
static int		ParseNotes(const unsigned char *p, uint64_t size,
			    uint64_t align, unsigned char *buildId);
static int		MemBuildId(const struct dl_phdr_info *info,
			    unsigned char *buildId);
static int		SnapshotCallback(struct dl_phdr_info *info,
			    size_t size, void *clientData);
static int		TakeSnapshot(CprofSymbolizer *symPtr,
			    Snapshot *snapPtr);
static const char *	BaseName(const char *path);
static Module *		NewModule(CprofSymbolizer *symPtr,
			    const Snapshot *snapPtr, const SnapModule *smPtr,
			    const char *path, int statOk,
			    const CprofFileId *idPtr);
static void		FreeModule(Module *modPtr);
static int		SameModule(const Module *modPtr,
			    const Snapshot *snapPtr, const SnapModule *smPtr,
			    int statOk, const CprofFileId *idPtr);
static int		CompareExecRanges(const void *a, const void *b);
static Module *		FindModule(CprofSymbolizer *symPtr, uintptr_t addr);
static CprofSymTable *	ModuleTable(Module *modPtr);
static CacheEntry *	NewEntry(CprofSymbolizer *symPtr);
static void		FlushCache(CprofSymbolizer *symPtr);
static void		PurgeCache(CprofSymbolizer *symPtr);
static CacheEntry *	FuncEntry(CprofSymbolizer *symPtr, Module *modPtr,
			    uintptr_t funcStart, int exact, const char *name,
			    int nameLen);
static CacheEntry *	Describe(CprofSymbolizer *symPtr, uintptr_t addr);

/*
 *----------------------------------------------------------------------
 *
 * InRange --
 *
 *	Whether [off, off+len) lies within an object of 'size' bytes,
 *	without overflow.
 *
 * Results:
 *	1 or 0.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static int
InRange(
    uint64_t size,
    uint64_t off,
    uint64_t len)
{
    return off <= size && len <= size - off;
}

/*
 *----------------------------------------------------------------------
 *
 * ParseNotes --
 *
 *	Look for the GNU build-id note among 'size' bytes of ELF notes.
 *
 * Results:
 *	The build-id's length (at most CPROF_BUILD_ID_MAX), or 0 if none.
 *
 * Side effects:
 *	Copies the build-id to buildId.
 *
 *----------------------------------------------------------------------
 */

static int
ParseNotes(
    const unsigned char *p,
    uint64_t size,
    uint64_t align,
    unsigned char *buildId)
{
    uint64_t pos = 0;

    align = (align == 8) ? 8 : 4;
    while (InRange(size, pos, 12)) {
	uint32_t word[3];
	uint64_t namePos, descPos, next;

	memcpy(word, p + pos, sizeof(word));
	namePos = pos + 12;
	descPos = namePos + ((word[0] + align - 1) & ~(align - 1));
	next = descPos + ((word[1] + align - 1) & ~(align - 1));
	if (!InRange(size, namePos, word[0])
		|| !InRange(size, descPos, word[1])) {
	    return 0;
	}
	if (word[2] == NT_GNU_BUILD_ID && word[0] == 4
		&& memcmp(p + namePos, "GNU", 4) == 0 && word[1] > 0) {
	    int len = word[1] > CPROF_BUILD_ID_MAX ? CPROF_BUILD_ID_MAX : (int) word[1];

	    memcpy(buildId, p + descPos, len);
	    return len;
	}
	if (next <= pos) {
	    return 0;
	}
	pos = next;
    }
    return 0;
}

/*
 *----------------------------------------------------------------------
 *
 * MemBuildId --
 *
 *	The build-id of a loaded module, from its mapped PT_NOTE segments.
 *	A note is read only if a readable PT_LOAD segment's file contents
 *	cover it. Called inside dl_iterate_phdr, so the module stays
 *	mapped.
 *
 * Results:
 *	The build-id's length, 0 if none.
 *
 * Side effects:
 *	Copies the build-id to buildId.
 *
 *----------------------------------------------------------------------
 */

static int
MemBuildId(
    const struct dl_phdr_info *info,
    unsigned char *buildId)
{
    int i, j, len;

    for (i = 0; i < info->dlpi_phnum; i++) {
	const ElfW(Phdr) *notePtr = &info->dlpi_phdr[i];

	if (notePtr->p_type != PT_NOTE || notePtr->p_memsz == 0) {
	    continue;
	}
	for (j = 0; j < info->dlpi_phnum; j++) {
	    const ElfW(Phdr) *loadPtr = &info->dlpi_phdr[j];

	    if (loadPtr->p_type == PT_LOAD && (loadPtr->p_flags & PF_R)
		    && notePtr->p_vaddr >= loadPtr->p_vaddr
		    && InRange(loadPtr->p_filesz,
			notePtr->p_vaddr - loadPtr->p_vaddr,
			notePtr->p_memsz)) {
		len = ParseNotes((const unsigned char *)
			(info->dlpi_addr + notePtr->p_vaddr),
			notePtr->p_memsz, notePtr->p_align, buildId);
		if (len > 0) {
		    return len;
		}
		break;
	    }
	}
    }
    return 0;
}

/*
 *----------------------------------------------------------------------
 *
 * SnapshotCallback --
 *
 *	dl_iterate_phdr callback: record one module in the snapshot's
 *	preallocated storage. On the first module, stop at once if the
 *	loader's counters show nothing was loaded or unloaded since the
 *	last snapshot. Modules that do not fit are counted, so that the
 *	caller can retry with enough room.
 *
 * Results:
 *	0 to go on, 1 to stop.
 *
 * Side effects:
 *	Fills the snapshot.
 *
 *----------------------------------------------------------------------
 */

static int
SnapshotCallback(
    struct dl_phdr_info *info,
    size_t size,
    void *clientData)
{
    Snapshot *snapPtr = clientData;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    int index = snapPtr->index++;
    int i, isVdso = 0, isMain, numSpans = 0;
    size_t nameLen, imageEnd = 0;
    SnapModule *smPtr;

    if (index == 0 && size >= offsetof(struct dl_phdr_info, dlpi_subs)
	    + sizeof(info->dlpi_subs)) {
	snapPtr->haveCounts = 1;
	snapPtr->adds = info->dlpi_adds;
	snapPtr->subs = info->dlpi_subs;
	if (snapPtr->checkOnly && snapPtr->adds == snapPtr->oldAdds
		&& snapPtr->subs == snapPtr->oldSubs) {
	    snapPtr->unchanged = 1;
	    return 1;
	}
    }

    for (i = 0; i < info->dlpi_phnum; i++) {
	const ElfW(Phdr) *phPtr = &info->dlpi_phdr[i];

	if (phPtr->p_type != PT_LOAD) {
	    continue;
	}
	if (phPtr->p_offset == 0 && snapPtr->vdsoEhdr != 0
		&& info->dlpi_addr + phPtr->p_vaddr == snapPtr->vdsoEhdr) {
	    isVdso = 1;
	}
	if (phPtr->p_offset + phPtr->p_filesz > imageEnd) {
	    imageEnd = phPtr->p_offset + phPtr->p_filesz;
	}
	if ((phPtr->p_flags & PF_X) && phPtr->p_memsz > 0) {
	    numSpans++;
	}
    }
    isMain = (index == 0 && name[0] == '\0' && !isVdso);
    if (numSpans == 0 || (name[0] == '\0' && !isMain && !isVdso)) {
	return 0;
    }

    nameLen = strlen(name);
    snapPtr->needMods++;
    snapPtr->needSpans += numSpans;
    snapPtr->needPool += nameLen + 1;
    if (snapPtr->numMods >= snapPtr->capMods
	    || snapPtr->numSpans + numSpans > snapPtr->capSpans
	    || snapPtr->poolLen + nameLen + 1 > snapPtr->poolCap) {
	return 0;
    }

    smPtr = &snapPtr->mods[snapPtr->numMods++];
    smPtr->nameOff = snapPtr->poolLen;
    memcpy(snapPtr->pool + snapPtr->poolLen, name, nameLen + 1);
    snapPtr->poolLen += nameLen + 1;
    smPtr->base = info->dlpi_addr;
    smPtr->isMain = isMain;
    smPtr->isVdso = isVdso;
    smPtr->imageSize = isVdso ? (imageEnd + snapPtr->pageSize - 1)
	    & ~(snapPtr->pageSize - 1) : 0;
    smPtr->firstSpan = snapPtr->numSpans;
    smPtr->numSpans = numSpans;
    for (i = 0; i < info->dlpi_phnum; i++) {
	const ElfW(Phdr) *phPtr = &info->dlpi_phdr[i];

	if (phPtr->p_type == PT_LOAD && (phPtr->p_flags & PF_X)
		&& phPtr->p_memsz > 0) {
	    uintptr_t *spanPtr = &snapPtr->spans[2 * snapPtr->numSpans++];

	    spanPtr[0] = info->dlpi_addr + phPtr->p_vaddr;
	    spanPtr[1] = spanPtr[0] + phPtr->p_memsz;
	}
    }
    smPtr->buildIdLen = MemBuildId(info, smPtr->buildId);
    return 0;
}

/*
 *----------------------------------------------------------------------
 *
 * TakeSnapshot --
 *
 *	Walk the loaded modules, growing the snapshot's storage until
 *	everything fits.
 *
 * Results:
 *	1 if the module list may have changed (the snapshot is filled), 0
 *	if the loader's counters say it did not.
 *
 * Side effects:
 *	Allocates the snapshot's storage; the caller frees it.
 *
 *----------------------------------------------------------------------
 */

static int
TakeSnapshot(
    CprofSymbolizer *symPtr,
    Snapshot *snapPtr)
{
    int tries;
    long pageSize = sysconf(_SC_PAGESIZE);

    memset(snapPtr, 0, sizeof(Snapshot));
    snapPtr->vdsoEhdr = (uintptr_t) getauxval(AT_SYSINFO_EHDR);
    snapPtr->pageSize = pageSize > 0 ? (size_t) pageSize : 4096;
    snapPtr->checkOnly = symPtr->initialized && symPtr->haveCounts;
    snapPtr->oldAdds = symPtr->adds;
    snapPtr->oldSubs = symPtr->subs;
    snapPtr->capMods = 64;
    snapPtr->capSpans = 128;
    snapPtr->poolCap = 8192;

    for (tries = 0; ; tries++) {
	snapPtr->mods = (SnapModule *)
		ckalloc(snapPtr->capMods * sizeof(SnapModule));
	snapPtr->spans = (uintptr_t *)
		ckalloc(snapPtr->capSpans * 2 * sizeof(uintptr_t));
	snapPtr->pool = ckalloc(snapPtr->poolCap);
	snapPtr->numMods = snapPtr->numSpans = 0;
	snapPtr->needMods = snapPtr->needSpans = 0;
	snapPtr->poolLen = snapPtr->needPool = 0;
	snapPtr->index = 0;
	dl_iterate_phdr(SnapshotCallback, snapPtr);
	if (snapPtr->unchanged) {
	    return 0;
	}
	if (snapPtr->needMods == snapPtr->numMods || tries >= 8) {
	    return 1;
	}
	ckfree(snapPtr->mods);
	ckfree(snapPtr->spans);
	ckfree(snapPtr->pool);
	snapPtr->capMods = 2 * snapPtr->needMods + 16;
	snapPtr->capSpans = 2 * snapPtr->needSpans + 16;
	snapPtr->poolCap = 2 * snapPtr->needPool + 1024;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * BaseName --
 *
 *	The part of a path after its last slash.
 *
 * Results:
 *	A pointer into path.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static const char *
BaseName(
    const char *path)
{
    const char *slash = strrchr(path, '/');

    return (slash != NULL && slash[1] != '\0') ? slash + 1 : path;
}

/*
 *----------------------------------------------------------------------
 *
 * NewModule, FreeModule --
 *
 *	Make a module from a snapshot entry; free one.
 *
 * Results:
 *	NewModule: the module.
 *
 * Side effects:
 *	Allocates or frees memory; interns the module's name; FreeModule
 *	releases the module's table.
 *
 *----------------------------------------------------------------------
 */

static Module *
NewModule(
    CprofSymbolizer *symPtr,
    const Snapshot *snapPtr,
    const SnapModule *smPtr,
    const char *path,
    int statOk,
    const CprofFileId *idPtr)
{
    Module *modPtr = (Module *) ckalloc(sizeof(Module));
    const char *name = snapPtr->pool + smPtr->nameOff;
    const char *shown;
    size_t len;

    memset(modPtr, 0, sizeof(Module));
    len = strlen(name);
    modPtr->name = ckalloc(len + 1);
    memcpy(modPtr->name, name, len + 1);
    if (path != NULL) {
	len = strlen(path);
	modPtr->path = ckalloc(len + 1);
	memcpy(modPtr->path, path, len + 1);
    }
    if (smPtr->isMain) {
	shown = symPtr->exeName;
    } else if (smPtr->isVdso && name[0] == '\0') {
	shown = "linux-vdso.so.1";
    } else {
	shown = BaseName(name);
    }
    len = strlen(shown);
    modPtr->baseName = ckalloc(len + 1);
    memcpy(modPtr->baseName, shown, len + 1);
    modPtr->moduleId = CprofNameIntern(shown, (int) len);
    modPtr->base = smPtr->base;
    modPtr->numSpans = smPtr->numSpans;
    modPtr->spans = (uintptr_t *)
	    ckalloc(2 * smPtr->numSpans * sizeof(uintptr_t));
    memcpy(modPtr->spans, snapPtr->spans + 2 * smPtr->firstSpan,
	    2 * smPtr->numSpans * sizeof(uintptr_t));
    memcpy(modPtr->buildId, smPtr->buildId, smPtr->buildIdLen);
    modPtr->buildIdLen = smPtr->buildIdLen;
    modPtr->statOk = statOk;
    if (statOk) {
	modPtr->fileId = *idPtr;
    }
    modPtr->isMain = smPtr->isMain;
    modPtr->isVdso = smPtr->isVdso;
    modPtr->imageSize = smPtr->imageSize;
    return modPtr;
}

static void
FreeModule(
    Module *modPtr)
{
    if (modPtr->tablePtr != NULL) {
	CprofSymTableRelease(modPtr->tablePtr);
    }
    ckfree(modPtr->name);
    if (modPtr->path != NULL) {
	ckfree(modPtr->path);
    }
    ckfree(modPtr->baseName);
    ckfree(modPtr->spans);
    ckfree(modPtr);
}

/*
 *----------------------------------------------------------------------
 *
 * SameModule --
 *
 *	Whether a known module is the module of a snapshot entry: same
 *	name, load base, build-id, executable segments and file identity.
 *
 * Results:
 *	1 or 0.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static int
SameModule(
    const Module *modPtr,
    const Snapshot *snapPtr,
    const SnapModule *smPtr,
    int statOk,
    const CprofFileId *idPtr)
{
    return modPtr->base == smPtr->base
	    && modPtr->isMain == smPtr->isMain
	    && modPtr->isVdso == smPtr->isVdso
	    && modPtr->numSpans == smPtr->numSpans
	    && modPtr->buildIdLen == smPtr->buildIdLen
	    && memcmp(modPtr->buildId, smPtr->buildId,
		smPtr->buildIdLen) == 0
	    && memcmp(modPtr->spans, snapPtr->spans + 2 * smPtr->firstSpan,
		2 * smPtr->numSpans * sizeof(uintptr_t)) == 0
	    && strcmp(modPtr->name, snapPtr->pool + smPtr->nameOff) == 0
	    && modPtr->statOk == statOk
	    && (!statOk || memcmp(&modPtr->fileId, idPtr,
		sizeof(CprofFileId)) == 0);
}

/*
 *----------------------------------------------------------------------
 *
 * CompareExecRanges --
 *
 *	qsort order of ExecRanges: by start.
 *
 * Results:
 *	<0, 0, >0.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static int
CompareExecRanges(
    const void *a,
    const void *b)
{
    const ExecRange *r1 = a, *r2 = b;

    if (r1->start != r2->start) {
	return r1->start < r2->start ? -1 : 1;
    }
    return 0;
}

/*
 *----------------------------------------------------------------------
 *
 * FindModule --
 *
 *	The module whose executable segments hold an address.
 *
 * Results:
 *	The module, or NULL.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static Module *
FindModule(
    CprofSymbolizer *symPtr,
    uintptr_t addr)
{
    int lo = 0, hi = symPtr->numRanges;

    while (lo < hi) {
	int mid = lo + (hi - lo) / 2;

	if (symPtr->ranges[mid].start <= addr) {
	    lo = mid + 1;
	} else {
	    hi = mid;
	}
    }
    if (lo > 0 && addr < symPtr->ranges[lo-1].end) {
	return symPtr->ranges[lo-1].modPtr;
    }
    return NULL;
}

/*
 *----------------------------------------------------------------------
 *
 * ModuleTable --
 *
 *	The parsed symbols of a module, acquired at its first use. A table
 *	whose build-id differs from the one in memory (the file was replaced
 *	since it was loaded) is not used.
 *
 * Results:
 *	The table, or NULL.
 *
 * Side effects:
 *	May parse the module's file.
 *
 *----------------------------------------------------------------------
 */

/*
 * The key of a module's file among the tables of symfile.c (the file's
 * identity), or 0 when it has none to read.
 */

static int
FileKey(
    Module *modPtr,
    char *key,
    size_t size)
{
    const CprofFileId *idPtr = &modPtr->fileId;

    if (modPtr->isVdso || !modPtr->statOk || modPtr->path == NULL) {
	return 0;
    }
    snprintf(key, size, "file:%llx:%llx:%llx:%llx.%09ld",
	    idPtr->dev, idPtr->ino, (unsigned long long) idPtr->size,
	    (unsigned long long) idPtr->mtimeSec, idPtr->mtimeNsec);
    return 1;
}

static CprofSymTable *
ModuleTable(
    Module *modPtr)
{
    char key[160];
    CprofSymTable *tablePtr = NULL;

    if (modPtr->tableTried) {
	return modPtr->tablePtr;
    }
    modPtr->tableTried = 1;
    if (modPtr->isVdso) {
	if (modPtr->imageSize > 0) {
	    snprintf(key, sizeof(key), "vdso:%llx:%llx",
		    (unsigned long long) modPtr->base,
		    (unsigned long long) modPtr->imageSize);
	    tablePtr = CprofSymTableAcquire(key, NULL, NULL,
		    (const unsigned char *) modPtr->base, modPtr->imageSize);
	}
    } else if (FileKey(modPtr, key, sizeof(key))) {
	tablePtr = CprofSymTableAcquire(key, modPtr->path, &modPtr->fileId,
		NULL, 0);
    }
    if (tablePtr != NULL && modPtr->buildIdLen > 0) {
	int len;
	const unsigned char *id = CprofSymTableBuildId(tablePtr, &len);

	if (len > 0 && (len != modPtr->buildIdLen
		|| memcmp(modPtr->buildId, id, len) != 0)) {
	    CprofSymTableRelease(tablePtr);
	    tablePtr = NULL;
	}
    }
    modPtr->tablePtr = tablePtr;
    return tablePtr;
}

/*
 *----------------------------------------------------------------------
 *
 * NewEntry --
 *
 *	A fresh cache entry from the symbolizer's slabs.
 *
 * Results:
 *	The entry (uninitialized).
 *
 * Side effects:
 *	May allocate a slab.
 *
 *----------------------------------------------------------------------
 */

static CacheEntry *
NewEntry(
    CprofSymbolizer *symPtr)
{
    CacheSlab *slabPtr = symPtr->slabs;

    if (slabPtr == NULL || slabPtr->used == SLAB_ENTRIES) {
	slabPtr = (CacheSlab *) ckalloc(sizeof(CacheSlab));
	slabPtr->used = 0;
	slabPtr->nextPtr = symPtr->slabs;
	symPtr->slabs = slabPtr;
    }
    symPtr->numEntries++;
    return &slabPtr->entries[slabPtr->used++];
}

/*
 *----------------------------------------------------------------------
 *
 * FlushCache --
 *
 *	Forget every cached result.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Empties both caches and frees the entries.
 *
 *----------------------------------------------------------------------
 */

static void
FlushCache(
    CprofSymbolizer *symPtr)
{
    CacheSlab *slabPtr;

    Tcl_DeleteHashTable(&symPtr->addrCache);
    Tcl_DeleteHashTable(&symPtr->funcCache);
    Tcl_InitHashTable(&symPtr->addrCache, TCL_ONE_WORD_KEYS);
    Tcl_InitHashTable(&symPtr->funcCache, TCL_ONE_WORD_KEYS);
    while ((slabPtr = symPtr->slabs) != NULL) {
	symPtr->slabs = slabPtr->nextPtr;
	ckfree(slabPtr);
    }
    symPtr->numEntries = 0;
    symPtr->numUnknown = 0;
}

/*
 *----------------------------------------------------------------------
 *
 * PurgeCache --
 *
 *	Forget the cached results of modules no longer seen (seen == 0)
 *	and of addresses that were in no module. Their entries stay in the
 *	slabs until the next flush.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Deletes hash entries.
 *
 *----------------------------------------------------------------------
 */

static void
PurgeCache(
    CprofSymbolizer *symPtr)
{
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    for (hPtr = Tcl_FirstHashEntry(&symPtr->addrCache, &search);
	    hPtr != NULL; hPtr = Tcl_NextHashEntry(&search)) {
	CacheEntry *entryPtr = Tcl_GetHashValue(hPtr);

	if (entryPtr->modPtr == NULL || !entryPtr->modPtr->seen) {
	    Tcl_DeleteHashEntry(hPtr);
	}
    }
    for (hPtr = Tcl_FirstHashEntry(&symPtr->funcCache, &search);
	    hPtr != NULL; hPtr = Tcl_NextHashEntry(&search)) {
	CacheEntry *entryPtr = Tcl_GetHashValue(hPtr);

	if (!entryPtr->modPtr->seen) {
	    Tcl_DeleteHashEntry(hPtr);
	}
    }
    symPtr->numUnknown = 0;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSymSetLines --
 *
 *	Whether the symbolizer finds the C source line of each address
 *	(a run's -lines). A change forgets the cached results, which were
 *	made with the other setting.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	May flush the caches.
 *
 *----------------------------------------------------------------------
 */

void
CprofSymSetLines(
    CprofSymbolizer *symPtr,
    int lines)
{
    lines = (lines != 0);
    if (symPtr->lines != lines) {
	FlushCache(symPtr);
	symPtr->lines = lines;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSymNew --
 *
 *	Create a symbolizer. The module list is read at the first refresh.
 *
 * Results:
 *	The symbolizer.
 *
 * Side effects:
 *	Allocates memory.
 *
 *----------------------------------------------------------------------
 */

CprofSymbolizer *
CprofSymNew(void)
{
    CprofSymbolizer *symPtr = (CprofSymbolizer *)
	    ckalloc(sizeof(CprofSymbolizer));
    char exe[PATH_MAX];
    ssize_t len;
    const char *shown;
    size_t shownLen;

    memset(symPtr, 0, sizeof(CprofSymbolizer));
    symPtr->lines = 1;
    Tcl_InitHashTable(&symPtr->addrCache, TCL_ONE_WORD_KEYS);
    Tcl_InitHashTable(&symPtr->funcCache, TCL_ONE_WORD_KEYS);
    symPtr->unknownEntry.info.nameId = CprofNameIntern("[unknown]", -1);
    symPtr->unknownEntry.info.moduleId = -1;
    symPtr->unknownEntry.info.fileId = -1;

    len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (len > 0) {
	exe[len] = '\0';
	symPtr->exePath = ckalloc(len + 1);
	memcpy(symPtr->exePath, exe, len + 1);
	shown = BaseName(exe);
    } else {
	shown = "[main]";
    }
    shownLen = strlen(shown);
    symPtr->exeName = ckalloc(shownLen + 1);
    memcpy(symPtr->exeName, shown, shownLen + 1);
    return symPtr;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSymFree --
 *
 *	Delete a symbolizer.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Frees its memory and releases its modules' tables.
 *
 *----------------------------------------------------------------------
 */

void
CprofSymFree(
    CprofSymbolizer *symPtr)
{
    int i;

    if (symPtr == NULL) {
	return;
    }
    FlushCache(symPtr);
    Tcl_DeleteHashTable(&symPtr->addrCache);
    Tcl_DeleteHashTable(&symPtr->funcCache);
    for (i = 0; i < symPtr->numModules; i++) {
	FreeModule(symPtr->modules[i]);
    }
    if (symPtr->modules != NULL) {
	ckfree(symPtr->modules);
    }
    if (symPtr->ranges != NULL) {
	ckfree(symPtr->ranges);
    }
    if (symPtr->exePath != NULL) {
	ckfree(symPtr->exePath);
    }
    ckfree(symPtr->exeName);
    ckfree(symPtr);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSymRefresh --
 *
 *	Bring the module list up to date. Modules unchanged since the last
 *	refresh are kept with their cached results; modules gone or changed
 *	are dropped with theirs; results cached as unknown are forgotten
 *	when a module was added. Marks the module holding Tcl_EvalObjv as
 *	Tcl's.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	May stat module files; updates the module list and the caches.
 *
 *----------------------------------------------------------------------
 */

void
CprofSymRefresh(
    CprofSymbolizer *symPtr)
{
    Snapshot snap;
    Module **modules;
    ExecRange *ranges;
    Module *tclModPtr;
    uintptr_t tclAddr;
    int i, j, k, numRanges = 0, added = 0, dropped = 0;

    if (!TakeSnapshot(symPtr, &snap)) {
	ckfree(snap.mods);
	ckfree(snap.spans);
	ckfree(snap.pool);
	return;
    }
    symPtr->initialized = 1;
    symPtr->haveCounts = snap.haveCounts;
    symPtr->adds = snap.adds;
    symPtr->subs = snap.subs;

    for (i = 0; i < symPtr->numModules; i++) {
	symPtr->modules[i]->seen = 0;
    }
    modules = (Module **) ckalloc((snap.numMods + 1) * sizeof(Module *));
    for (i = 0; i < snap.numMods; i++) {
	const SnapModule *smPtr = &snap.mods[i];
	const char *name = snap.pool + smPtr->nameOff;
	char *resolved = NULL;
	const char *path = NULL;
	struct stat st;
	CprofFileId id;
	int statOk = 0;
	Module *modPtr = NULL;

	memset(&id, 0, sizeof(id));
	if (smPtr->isMain) {
	    /*
	     * The main program: by the path the kernel reports (under a
	     * tool such as valgrind /proc/self/exe itself is the tool),
	     * else through /proc/self/exe (which still reaches a deleted
	     * or replaced executable).
	     */

	    path = symPtr->exePath;
	    if (path == NULL || stat(path, &st) != 0) {
		path = "/proc/self/exe";
	    }
	} else if (!smPtr->isVdso) {
	    path = name;
	    if (name[0] != '/') {
		resolved = realpath(name, NULL);
		if (resolved != NULL) {
		    path = resolved;
		}
	    }
	}
	if (path != NULL && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
	    statOk = 1;
	    id.dev = (unsigned long long) st.st_dev;
	    id.ino = (unsigned long long) st.st_ino;
	    id.size = (long long) st.st_size;
	    id.mtimeSec = (long long) st.st_mtim.tv_sec;
	    id.mtimeNsec = st.st_mtim.tv_nsec;
	}
	for (j = 0; j < symPtr->numModules; j++) {
	    Module *oldPtr = symPtr->modules[j];

	    if (!oldPtr->seen
		    && SameModule(oldPtr, &snap, smPtr, statOk, &id)) {
		modPtr = oldPtr;
		break;
	    }
	}
	if (modPtr == NULL) {
	    modPtr = NewModule(symPtr, &snap, smPtr, path, statOk, &id);
	    added++;
	}
	modPtr->seen = 1;
	modules[i] = modPtr;
	numRanges += modPtr->numSpans;
	if (resolved != NULL) {
	    free(resolved);
	}
    }
    for (j = 0; j < symPtr->numModules; j++) {
	if (!symPtr->modules[j]->seen) {
	    dropped++;
	}
    }

    /*
     * Forget what was cached about modules gone and, if new modules came,
     * about addresses that were in none. Then free the modules gone.
     */

    if (dropped > 0 || (added > 0 && symPtr->numUnknown > 0)) {
	PurgeCache(symPtr);
    }
    for (j = 0; j < symPtr->numModules; j++) {
	if (!symPtr->modules[j]->seen) {
	    FreeModule(symPtr->modules[j]);
	}
    }
    if (symPtr->modules != NULL) {
	ckfree(symPtr->modules);
    }
    symPtr->modules = modules;
    symPtr->numModules = snap.numMods;

    ranges = (ExecRange *) ckalloc((numRanges + 1) * sizeof(ExecRange));
    k = 0;
    for (i = 0; i < symPtr->numModules; i++) {
	Module *modPtr = modules[i];

	modPtr->inTcl = 0;
	for (j = 0; j < modPtr->numSpans; j++) {
	    ranges[k].start = modPtr->spans[2*j];
	    ranges[k].end = modPtr->spans[2*j + 1];
	    ranges[k].modPtr = modPtr;
	    k++;
	}
    }
    qsort(ranges, k, sizeof(ExecRange), CompareExecRanges);
    if (symPtr->ranges != NULL) {
	ckfree(symPtr->ranges);
    }
    symPtr->ranges = ranges;
    symPtr->numRanges = k;

    tclAddr = (tclStubsPtr != NULL)
	    ? (uintptr_t) tclStubsPtr->tcl_EvalObjv : 0;
    tclModPtr = tclAddr ? FindModule(symPtr, tclAddr) : NULL;
    if (tclModPtr != NULL) {
	tclModPtr->inTcl = 1;
    }

    ckfree(snap.mods);
    ckfree(snap.spans);
    ckfree(snap.pool);
}

/*
 *----------------------------------------------------------------------
 *
 * FuncEntry --
 *
 *	The cache entry of a function, shared by all its addresses; made
 *	(and its name interned) at the first address seen in it.
 *
 * Results:
 *	The entry.
 *
 * Side effects:
 *	May add to the function cache and intern a name.
 *
 *----------------------------------------------------------------------
 */

static CacheEntry *
FuncEntry(
    CprofSymbolizer *symPtr,
    Module *modPtr,
    uintptr_t funcStart,
    int exact,
    const char *name,
    int nameLen)
{
    Tcl_HashEntry *hPtr;
    CacheEntry *entryPtr;
    int isNew;

    hPtr = Tcl_CreateHashEntry(&symPtr->funcCache, (void *) funcStart,
	    &isNew);
    if (!isNew) {
	entryPtr = Tcl_GetHashValue(hPtr);
	if (entryPtr->modPtr == modPtr && entryPtr->info.exact == exact) {
	    return entryPtr;
	}
    }
    entryPtr = NewEntry(symPtr);
    memset(entryPtr, 0, sizeof(CacheEntry));
    entryPtr->modPtr = modPtr;
    entryPtr->info.nameId = CprofNameIntern(name, nameLen);
    entryPtr->info.moduleId = modPtr->moduleId;
    entryPtr->info.funcStart = funcStart;
    entryPtr->info.inTcl = modPtr->inTcl;
    entryPtr->info.exact = exact;
    entryPtr->info.fileId = -1;
    if (isNew) {
	Tcl_SetHashValue(hPtr, entryPtr);
    }
    return entryPtr;
}

/*
 *----------------------------------------------------------------------
 *
 * Describe --
 *
 *	Name an address not in the address cache: as a PLT stub, by
 *	symbol, else by the unwind tables' function start, else by offset
 *	in its module; and find its source line.
 *
 * Results:
 *	The address's cache entry.
 *
 * Side effects:
 *	May read the module's files, intern names, add entries.
 *
 *----------------------------------------------------------------------
 */

static CacheEntry *
Describe(
    CprofSymbolizer *symPtr,
    uintptr_t addr)
{
    Module *modPtr = FindModule(symPtr, addr);
    CprofSymTable *tablePtr;
    CprofSymFound found;
    CacheEntry *funcPtr = NULL, *entryPtr;
    uint64_t rel;
    char buf[NAME_MAX_SHOWN + 64];

    if (modPtr == NULL) {
	return &symPtr->unknownEntry;
    }
    rel = (uint64_t) (addr - modPtr->base);
    tablePtr = ModuleTable(modPtr);
    found.fileId = -1;
    if (tablePtr != NULL) {
	CprofSymTableLookup(tablePtr, rel, symPtr->lines, &found);
	if (found.how == CPROF_FOUND_SYMBOL) {
	    funcPtr = FuncEntry(symPtr, modPtr,
		    modPtr->base + (uintptr_t) found.start, 1, found.name,
		    found.nameLen);
	} else if (found.how == CPROF_FOUND_START) {
	    snprintf(buf, sizeof(buf), "%.*s!fn_0x%llx", NAME_MAX_SHOWN,
		    modPtr->baseName, (unsigned long long) found.start);
	    funcPtr = FuncEntry(symPtr, modPtr,
		    modPtr->base + (uintptr_t) found.start, 0, buf, -1);
	}
    }
    if (funcPtr == NULL) {
	snprintf(buf, sizeof(buf), "%.*s+0x%llx", NAME_MAX_SHOWN,
		modPtr->baseName, (unsigned long long) rel);
	funcPtr = NewEntry(symPtr);
	memset(funcPtr, 0, sizeof(CacheEntry));
	funcPtr->modPtr = modPtr;
	funcPtr->info.nameId = CprofNameIntern(buf, -1);
	funcPtr->info.moduleId = modPtr->moduleId;
	funcPtr->info.inTcl = modPtr->inTcl;
	funcPtr->info.fileId = -1;
    }
    if (found.fileId < 0) {
	return funcPtr;
    }
    entryPtr = NewEntry(symPtr);
    *entryPtr = *funcPtr;
    entryPtr->info.fileId = found.fileId;
    entryPtr->info.line = found.line;
    return entryPtr;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSymWarm --
 *
 *	Whether naming these addresses can go without waiting for a file to
 *	be read: every module they are in has its table, or has it read
 *	already by the reading thread. The tables missing are asked for
 *	ahead (symreader.c), for a later drain. Uses the module list of the
 *	last refresh.
 *
 * Results:
 *	1 or 0.
 *
 * Side effects:
 *	May queue reads on the reading thread.
 *
 *----------------------------------------------------------------------
 */

int
CprofSymWarm(
    CprofSymbolizer *symPtr,
    const uintptr_t *addrs,
    int n)
{
    Module *lastPtr = NULL;
    char key[160];
    int i, warm = 1;

    for (i = 0; i < n; i++) {
	Module *modPtr = FindModule(symPtr, addrs[i]);

	if (modPtr == NULL || modPtr == lastPtr || modPtr->tableTried) {
	    continue;
	}
	lastPtr = modPtr;
	if (FileKey(modPtr, key, sizeof(key))
		&& !CprofSymTableWarm(key, modPtr->path, &modPtr->fileId)) {
	    warm = 0;
	}
    }
    return warm;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSymResolve --
 *
 *	Name a native address (a PC, or a return address minus one) and
 *	give its source line. The module list is the one of the last
 *	refresh (the first call makes one).
 *
 * Results:
 *	Fills *infoPtr.
 *
 * Side effects:
 *	Caches the result; the first address in a module reads its files
 *	unless another symbolizer has.
 *
 *----------------------------------------------------------------------
 */

void
CprofSymResolve(
    CprofSymbolizer *symPtr,
    uintptr_t addr,
    CprofSymInfo *infoPtr)
{
    Tcl_HashEntry *hPtr;
    CacheEntry *entryPtr;
    int isNew;

    hPtr = Tcl_FindHashEntry(&symPtr->addrCache, (void *) addr);
    if (hPtr != NULL) {
	*infoPtr = ((CacheEntry *) Tcl_GetHashValue(hPtr))->info;
	return;
    }
    if (!symPtr->initialized) {
	CprofSymRefresh(symPtr);
    }
    if (symPtr->addrCache.numEntries >= CACHE_MAX
	    || symPtr->numEntries >= CACHE_MAX) {
	FlushCache(symPtr);
    }
    entryPtr = Describe(symPtr, addr);
    hPtr = Tcl_CreateHashEntry(&symPtr->addrCache, (void *) addr, &isNew);
    Tcl_SetHashValue(hPtr, entryPtr);
    if (entryPtr->modPtr == NULL) {
	symPtr->numUnknown++;
    }
    *infoPtr = entryPtr->info;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSymDebug --
 *
 *	tclcprof::debug symbols addresses: what the symbolizer makes of
 *	each address, and what that costs. A fresh symbolizer resolves the
 *	list once (cold: nothing cached for those addresses in it; the
 *	files parsed by other symbolizers of the process are shared, the
 *	first symbolizer of a process parses them), then WARM_ROUNDS times
 *	more (warm: every address cached).
 *
 * Results:
 *	A dict: names, modules, files and lines (one per address; the file
 *	empty and the line 0 when unknown), cold_ns and warm_ns (per
 *	address). Errors: TCLCPROF VALUE symbols.
 *
 * Side effects:
 *	May parse module files.
 *
 *----------------------------------------------------------------------
 */

int
CprofSymDebug(
    Tcl_Interp *interp,
    Tcl_Obj *addrsObj)
{
    CprofSymbolizer *symPtr;
    Tcl_Obj **elems, *namesObj, *modulesObj, *filesObj, *linesObj;
    Tcl_Obj *resultObj;
    uintptr_t *addrs;
    uint64_t t0, t1, t2;
    int i, r;
    Tcl_Size n;

    if (Tcl_ListObjGetElements(NULL, addrsObj, &n, &elems) != TCL_OK) {
	goto bad;
    }
    addrs = (uintptr_t *) ckalloc((n + 1) * sizeof(uintptr_t));
    for (i = 0; i < n; i++) {
	Tcl_WideInt w;

	if (Tcl_GetWideIntFromObj(NULL, elems[i], &w) != TCL_OK || w <= 0) {
	    ckfree(addrs);
	    goto bad;
	}
	addrs[i] = (uintptr_t) w;
    }
    symPtr = CprofSymNew();
    CprofSymRefresh(symPtr);
    namesObj = Tcl_NewListObj(0, NULL);
    modulesObj = Tcl_NewListObj(0, NULL);
    filesObj = Tcl_NewListObj(0, NULL);
    linesObj = Tcl_NewListObj(0, NULL);
    t0 = CprofClockNs(CLOCK_MONOTONIC);
    for (i = 0; i < n; i++) {
	CprofSymInfo info;

	CprofSymResolve(symPtr, addrs[i], &info);
    }
    t1 = CprofClockNs(CLOCK_MONOTONIC);
    for (r = 0; r < WARM_ROUNDS; r++) {
	for (i = 0; i < n; i++) {
	    CprofSymInfo info;

	    CprofSymResolve(symPtr, addrs[i], &info);
	}
    }
    t2 = CprofClockNs(CLOCK_MONOTONIC);
    for (i = 0; i < n; i++) {
	CprofSymInfo info;
	const char *s;

	CprofSymResolve(symPtr, addrs[i], &info);
	s = CprofNameString(info.nameId);
	Tcl_ListObjAppendElement(NULL, namesObj,
		Tcl_NewStringObj(s ? s : "", -1));
	s = info.moduleId >= 0 ? CprofNameString(info.moduleId) : NULL;
	Tcl_ListObjAppendElement(NULL, modulesObj,
		Tcl_NewStringObj(s ? s : "", -1));
	s = info.fileId >= 0 ? CprofNameString(info.fileId) : NULL;
	Tcl_ListObjAppendElement(NULL, filesObj,
		Tcl_NewStringObj(s ? s : "", -1));
	Tcl_ListObjAppendElement(NULL, linesObj, Tcl_NewIntObj(info.line));
    }
    CprofSymFree(symPtr);
    ckfree(addrs);
    resultObj = Tcl_NewDictObj();
    Tcl_DictObjPut(NULL, resultObj, Tcl_NewStringObj("names", -1), namesObj);
    Tcl_DictObjPut(NULL, resultObj, Tcl_NewStringObj("modules", -1),
	    modulesObj);
    Tcl_DictObjPut(NULL, resultObj, Tcl_NewStringObj("files", -1), filesObj);
    Tcl_DictObjPut(NULL, resultObj, Tcl_NewStringObj("lines", -1), linesObj);
    Tcl_DictObjPut(NULL, resultObj, Tcl_NewStringObj("cold_ns", -1),
	    Tcl_NewDoubleObj(n ? (double) (t1 - t0) / n : 0));
    Tcl_DictObjPut(NULL, resultObj, Tcl_NewStringObj("warm_ns", -1),
	    Tcl_NewDoubleObj(n ? (double) (t2 - t1) / n / WARM_ROUNDS : 0));
    Tcl_SetObjResult(interp, resultObj);
    return TCL_OK;

  bad:
    Tcl_SetObjResult(interp, Tcl_ObjPrintf("bad addresses \"%.50s\": "
	    "expected a list of positive integers", Tcl_GetString(addrsObj)));
    Tcl_SetErrorCode(interp, "TCLCPROF", "VALUE", "symbols", NULL);
    return TCL_ERROR;
}
