/*
 * symbolize.c --
 *
 *	Native addresses to function names, for the C frames of samples. All
 *	of it runs in normal context.
 *
 *	- Modules: CprofSymRefresh takes a snapshot of the loaded modules with
 *	  dl_iterate_phdr (path, load base, executable segments, GNU build-id
 *	  read from the mapped PT_NOTE). The loader's load/unload counters make
 *	  a refresh with nothing changed cost one callback. A module whose
 *	  path, base, build-id, segments or file identity changed is a new
 *	  module: the cached names of the old one are forgotten.
 *	- Symbols: an own ELF64 reader over the file (read into memory, every
 *	  offset checked against the file size). .symtab when present (static
 *	  functions of unstripped libraries have names), else .dynsym; else
 *	  the .symtab of the separate debug file found by build-id under
 *	  /usr/lib/debug/.build-id. Where no symbol covers an address (static
 *	  functions of a stripped library, such as libtcl's TEBCresume) the
 *	  function starts of .eh_frame_hdr's search table give a stable
 *	  synthesized name "module!fn_0x<start offset>"; failing that
 *	  "module+0x<offset>". The vDSO, which has no file, is read from its
 *	  mapped image.
 *	- Parsed tables are immutable and shared process-wide between
 *	  symbolizers, keyed by file identity (device, inode, size, mtime)
 *	  under tableMutex; a few unused ones are kept so that a library
 *	  loaded again is not parsed again.
 *	- Each symbolizer caches address -> result in a one-word-key hash
 *	  table (a warm lookup is one hash probe), and function start ->
 *	  result so that the addresses of one function share one entry and
 *	  one interned name. The cache is flushed when it reaches CACHE_MAX
 *	  entries.
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
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
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
#define BUILD_ID_MAX	64		/* Longest build-id kept. */
#define SPARE_TABLES	16		/* Unused parsed tables kept. */
#define WALK_BACK	16		/* Earlier symbols tried for a nested
					 * or overlapping symbol. */
#define MAX_SYMBOLS	(1 << 24)	/* Symbols read from one table. */
#define MAX_FDES	(1 << 24)	/* Search table entries read. */
#define MAX_EXEC_SEGS	16		/* Executable segments per file. */
#define NAME_MAX_SHOWN	200		/* Module name length in synthesized
					 * names. */
#define DEBUG_DIR	"/usr/lib/debug/.build-id/"

/*
 * DWARF pointer encodings (.eh_frame, .eh_frame_hdr).
 */

#define PE_OMIT		0xff
#define PE_INDIRECT	0x80
#define PE_ABSPTR	0x00
#define PE_ULEB128	0x01
#define PE_UDATA2	0x02
#define PE_UDATA4	0x03
#define PE_UDATA8	0x04
#define PE_SLEB128	0x09
#define PE_SDATA2	0x0a
#define PE_SDATA4	0x0b
#define PE_SDATA8	0x0c
#define PE_PCREL	0x10
#define PE_DATAREL	0x30

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#   define HOST_ELFDATA ELFDATA2LSB
#else
#   define HOST_ELFDATA ELFDATA2MSB
#endif

/*
 * A function symbol of a parsed table, in link-time addresses:
 * [start, end).
 */

typedef struct FuncSym {
    uint64_t start;
    uint64_t end;
    uint32_t name;		/* Offset of the name in the table's pool. */
} FuncSym;

/*
 * A function known from .eh_frame_hdr only: [start, end).
 */

typedef struct FuncRange {
    uint64_t start;
    uint64_t end;
} FuncRange;

/*
 * The parsed symbols of one file (or of the vDSO image). Immutable once
 * published in tableList; refCount and idleSince are under tableMutex.
 */

typedef struct SymTable {
    struct SymTable *nextPtr;	/* Next in tableList. */
    char *key;			/* Identity of the file it was read from. */
    int refCount;		/* Modules using it. */
    unsigned long idleSince;	/* tableTick when refCount went to 0. */
    FuncSym *syms;		/* Sorted by start, one per start. */
    int numSyms;
    char *names;		/* Name pool. */
    FuncRange *fdes;		/* Sorted by start. */
    int numFdes;
    FuncSym *plts;		/* PLT stubs, "name@plt", sorted by start. */
    int numPlts;
    char *pltNames;		/* Their name pool. */
    int fromSymtab;		/* Symbols came from a .symtab. */
    unsigned char buildId[BUILD_ID_MAX];
    int buildIdLen;		/* 0: the file has no build-id. */
} SymTable;

static SymTable *tableList = NULL;
static unsigned long tableTick = 0;
static int idleTables = 0;
TCL_DECLARE_MUTEX(tableMutex)

/*
 * Identity of a file on disk.
 */

typedef struct FileId {
    unsigned long long dev;
    unsigned long long ino;
    long long size;
    long long mtimeSec;
    long mtimeNsec;
} FileId;

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
    unsigned char buildId[BUILD_ID_MAX];
    int buildIdLen;		/* From the mapped PT_NOTE; 0 if none. */
    int statOk;			/* fileId is valid. */
    FileId fileId;
    int isMain;			/* The main program. */
    int isVdso;			/* The vDSO: read from memory. */
    size_t imageSize;		/* vDSO: bytes of its image mapped. */
    int inTcl;			/* Contains Tcl_EvalObjv. */
    int tableTried;		/* tablePtr has been looked for. */
    SymTable *tablePtr;		/* Its symbols, or NULL. */
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
 * A cached result. Entries of functions are shared by all the addresses
 * in the function.
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
};

/*
 * A view of an ELF64 image (a mapped file or the vDSO).
 */

typedef struct ElfView {
    const unsigned char *img;
    size_t size;
    Elf64_Ehdr eh;
    int phnum;			/* 0 if the program headers are unusable. */
    int shnum;			/* 0 if the section headers are unusable. */
    int numExec;
    uint64_t execStart[MAX_EXEC_SEGS];
    uint64_t execEnd[MAX_EXEC_SEGS];
} ElfView;

/*
 * A bounded reader over [off0, end) of an image whose byte off0 has the
 * link-time address vaddr0.
 */

typedef struct Reader {
    const unsigned char *img;
    uint64_t pos;
    uint64_t end;
    uint64_t off0;
    uint64_t vaddr0;
} Reader;

/*
 * A symbol as read, before sorting and merging of aliases.
 */

typedef struct RawSym {
    uint64_t start;
    uint64_t size;
    uint64_t bound;		/* End of its section or segment, 0 if
				 * unknown. */
    uint32_t name;		/* Offset in the string table. */
    uint32_t nameLen;		/* Up to any '@' of a version suffix. */
    int rank;			/* 0: global or weak, 1: local. */
    int underscores;		/* Leading underscores of the name. */
} RawSym;

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
    unsigned char buildId[BUILD_ID_MAX];
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
static int		OpenView(ElfView *vPtr, const unsigned char *img,
			    size_t size);
static int		GetPhdr(const ElfView *vPtr, int i, Elf64_Phdr *phPtr);
static int		GetShdr(const ElfView *vPtr, int i, Elf64_Shdr *shPtr);
static uint64_t		ExecSegEnd(const ElfView *vPtr, uint64_t vaddr);
static int		ParseNotes(const unsigned char *p, uint64_t size,
			    uint64_t align, unsigned char *buildId);
static int		ViewBuildId(const ElfView *vPtr,
			    unsigned char *buildId);
static int		ReadBytes(Reader *rPtr, void *out, size_t n);
static int		ReadU8(Reader *rPtr, unsigned *valuePtr);
static int		ReadUleb(Reader *rPtr, uint64_t *valuePtr);
static int		ReadSleb(Reader *rPtr, int64_t *valuePtr);
static int		ReadEncoded(Reader *rPtr, int enc, uint64_t dataBase,
			    uint64_t *valuePtr);
static int		SegmentReader(const ElfView *vPtr, uint64_t vaddr,
			    Reader *rPtr);
static int		CieFdeEncoding(Reader *rPtr, uint64_t ciePos);
static int		FdeRange(const ElfView *vPtr, uint64_t fdeVaddr,
			    uint64_t *startPtr, uint64_t *lengthPtr);
static int		CompareRanges(const void *a, const void *b);
static void		ReadFdes(const ElfView *vPtr, SymTable *tablePtr);
static const FuncRange *FindFde(const SymTable *tablePtr, uint64_t rel);
static int		CompareRawSyms(const void *a, const void *b);
static int		ReadSymbols(const ElfView *vPtr, SymTable *tablePtr,
			    uint32_t type);
static const FuncSym *	FindSym(const SymTable *tablePtr, uint64_t rel);
static void		ReadPlt(const ElfView *vPtr, SymTable *tablePtr);
static const FuncSym *	FindPlt(const SymTable *tablePtr, uint64_t rel);
static void		ParseImage(SymTable *tablePtr,
			    const unsigned char *img, size_t size);
static int		SameFile(const struct stat *stPtr,
			    const FileId *idPtr);
static void		LoadDebugSymbols(SymTable *tablePtr);
static void		LoadFile(SymTable *tablePtr, const char *path,
			    const FileId *idPtr);
static void		FreeTable(SymTable *tablePtr);
static SymTable *	AcquireTable(const char *key, const char *path,
			    const FileId *idPtr, const unsigned char *image,
			    size_t imageSize);
static void		ReleaseTable(SymTable *tablePtr);
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
			    const FileId *idPtr);
static void		FreeModule(Module *modPtr);
static int		SameModule(const Module *modPtr,
			    const Snapshot *snapPtr, const SnapModule *smPtr,
			    int statOk, const FileId *idPtr);
static int		CompareExecRanges(const void *a, const void *b);
static Module *		FindModule(CprofSymbolizer *symPtr, uintptr_t addr);
static SymTable *	ModuleTable(Module *modPtr);
static CacheEntry *	NewEntry(CprofSymbolizer *symPtr);
static void		FlushCache(CprofSymbolizer *symPtr);
static void		PurgeCache(CprofSymbolizer *symPtr);
static CacheEntry *	FuncEntry(CprofSymbolizer *symPtr, Module *modPtr,
			    uintptr_t funcStart, int exact, const char *name);
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
 * OpenView --
 *
 *	Check an ELF64 image of this machine's byte order and note where
 *	its program and section headers are, if they are usable.
 *
 * Results:
 *	1 if the image is usable, 0 if not.
 *
 * Side effects:
 *	Fills *vPtr.
 *
 *----------------------------------------------------------------------
 */

static int
OpenView(
    ElfView *vPtr,
    const unsigned char *img,
    size_t size)
{
    Elf64_Ehdr *ehPtr = &vPtr->eh;
    uint64_t shnum;
    int i;

    memset(vPtr, 0, sizeof(ElfView));
    vPtr->img = img;
    vPtr->size = size;
    if (size < sizeof(Elf64_Ehdr)) {
	return 0;
    }
    memcpy(ehPtr, img, sizeof(Elf64_Ehdr));
    if (memcmp(ehPtr->e_ident, ELFMAG, SELFMAG) != 0
	    || ehPtr->e_ident[EI_CLASS] != ELFCLASS64
	    || ehPtr->e_ident[EI_DATA] != HOST_ELFDATA
	    || (ehPtr->e_type != ET_DYN && ehPtr->e_type != ET_EXEC)) {
	return 0;
    }

    if (ehPtr->e_phentsize == sizeof(Elf64_Phdr) && ehPtr->e_phnum > 0
	    && ehPtr->e_phnum < PN_XNUM && InRange(size, ehPtr->e_phoff,
		(uint64_t) ehPtr->e_phnum * sizeof(Elf64_Phdr))) {
	vPtr->phnum = ehPtr->e_phnum;
    }

    if (ehPtr->e_shentsize == sizeof(Elf64_Shdr) && ehPtr->e_shoff != 0
	    && InRange(size, ehPtr->e_shoff, sizeof(Elf64_Shdr))) {
	shnum = ehPtr->e_shnum;
	if (shnum == 0) {
	    Elf64_Shdr sh0;

	    /*
	     * Extended numbering: the count is in section 0.
	     */

	    memcpy(&sh0, img + ehPtr->e_shoff, sizeof(Elf64_Shdr));
	    shnum = sh0.sh_size;
	}
	if (shnum > 0 && shnum <= (1 << 20) && InRange(size, ehPtr->e_shoff,
		shnum * sizeof(Elf64_Shdr))) {
	    vPtr->shnum = (int) shnum;
	}
    }

    for (i = 0; i < vPtr->phnum && vPtr->numExec < MAX_EXEC_SEGS; i++) {
	Elf64_Phdr ph;

	GetPhdr(vPtr, i, &ph);
	if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && ph.p_memsz > 0
		&& ph.p_vaddr + ph.p_memsz > ph.p_vaddr) {
	    vPtr->execStart[vPtr->numExec] = ph.p_vaddr;
	    vPtr->execEnd[vPtr->numExec] = ph.p_vaddr + ph.p_memsz;
	    vPtr->numExec++;
	}
    }
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * GetPhdr, GetShdr --
 *
 *	Copy out program header or section header i (the image may hold
 *	them unaligned).
 *
 * Results:
 *	1, or 0 if there is no such header.
 *
 * Side effects:
 *	Fills the header.
 *
 *----------------------------------------------------------------------
 */

static int
GetPhdr(
    const ElfView *vPtr,
    int i,
    Elf64_Phdr *phPtr)
{
    if (i < 0 || i >= vPtr->phnum) {
	return 0;
    }
    memcpy(phPtr, vPtr->img + vPtr->eh.e_phoff
	    + (uint64_t) i * sizeof(Elf64_Phdr), sizeof(Elf64_Phdr));
    return 1;
}

static int
GetShdr(
    const ElfView *vPtr,
    int i,
    Elf64_Shdr *shPtr)
{
    if (i < 0 || i >= vPtr->shnum) {
	return 0;
    }
    memcpy(shPtr, vPtr->img + vPtr->eh.e_shoff
	    + (uint64_t) i * sizeof(Elf64_Shdr), sizeof(Elf64_Shdr));
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * ExecSegEnd --
 *
 *	The end of the executable segment containing a link-time address.
 *
 * Results:
 *	The end address, or 0 if no executable segment contains it.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static uint64_t
ExecSegEnd(
    const ElfView *vPtr,
    uint64_t vaddr)
{
    int i;

    for (i = 0; i < vPtr->numExec; i++) {
	if (vaddr >= vPtr->execStart[i] && vaddr < vPtr->execEnd[i]) {
	    return vPtr->execEnd[i];
	}
    }
    return 0;
}

/*
 *----------------------------------------------------------------------
 *
 * ParseNotes --
 *
 *	Look for the GNU build-id note among 'size' bytes of ELF notes.
 *
 * Results:
 *	The build-id's length (at most BUILD_ID_MAX), or 0 if none.
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
	    int len = word[1] > BUILD_ID_MAX ? BUILD_ID_MAX : (int) word[1];

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
 * ViewBuildId --
 *
 *	The build-id of an image, from its note sections or else its
 *	PT_NOTE segments.
 *
 * Results:
 *	The length of the build-id, 0 if none.
 *
 * Side effects:
 *	Copies the build-id to buildId.
 *
 *----------------------------------------------------------------------
 */

static int
ViewBuildId(
    const ElfView *vPtr,
    unsigned char *buildId)
{
    int i, len;

    for (i = 0; i < vPtr->shnum; i++) {
	Elf64_Shdr sh;

	GetShdr(vPtr, i, &sh);
	if (sh.sh_type == SHT_NOTE
		&& InRange(vPtr->size, sh.sh_offset, sh.sh_size)) {
	    len = ParseNotes(vPtr->img + sh.sh_offset, sh.sh_size,
		    sh.sh_addralign, buildId);
	    if (len > 0) {
		return len;
	    }
	}
    }
    for (i = 0; i < vPtr->phnum; i++) {
	Elf64_Phdr ph;

	GetPhdr(vPtr, i, &ph);
	if (ph.p_type == PT_NOTE
		&& InRange(vPtr->size, ph.p_offset, ph.p_filesz)) {
	    len = ParseNotes(vPtr->img + ph.p_offset, ph.p_filesz,
		    ph.p_align, buildId);
	    if (len > 0) {
		return len;
	    }
	}
    }
    return 0;
}

/*
 *----------------------------------------------------------------------
 *
 * ReadBytes, ReadU8, ReadUleb, ReadSleb --
 *
 *	Bounded reads of raw bytes and LEB128 numbers.
 *
 * Results:
 *	1, or 0 at the end of the reader's range.
 *
 * Side effects:
 *	Advance the reader.
 *
 *----------------------------------------------------------------------
 */

static int
ReadBytes(
    Reader *rPtr,
    void *out,
    size_t n)
{
    if (rPtr->pos > rPtr->end || n > rPtr->end - rPtr->pos) {
	return 0;
    }
    memcpy(out, rPtr->img + rPtr->pos, n);
    rPtr->pos += n;
    return 1;
}

static int
ReadU8(
    Reader *rPtr,
    unsigned *valuePtr)
{
    unsigned char c;

    if (!ReadBytes(rPtr, &c, 1)) {
	return 0;
    }
    *valuePtr = c;
    return 1;
}

static int
ReadUleb(
    Reader *rPtr,
    uint64_t *valuePtr)
{
    uint64_t value = 0;
    unsigned shift = 0, c;

    do {
	if (!ReadU8(rPtr, &c)) {
	    return 0;
	}
	if (shift < 64) {
	    value |= (uint64_t) (c & 0x7f) << shift;
	}
	shift += 7;
    } while (c & 0x80);
    *valuePtr = value;
    return 1;
}

static int
ReadSleb(
    Reader *rPtr,
    int64_t *valuePtr)
{
    uint64_t value = 0;
    unsigned shift = 0, c;

    do {
	if (!ReadU8(rPtr, &c)) {
	    return 0;
	}
	if (shift < 64) {
	    value |= (uint64_t) (c & 0x7f) << shift;
	}
	shift += 7;
    } while (c & 0x80);
    if (shift < 64 && (c & 0x40)) {
	value |= ~(uint64_t) 0 << shift;
    }
    *valuePtr = (int64_t) value;
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * ReadEncoded --
 *
 *	Read a pointer in a DWARF exception-header encoding: absolute,
 *	pc-relative (to the field's own link-time address) or data-relative
 *	(to dataBase). The indirect bit is ignored: the caller either wants
 *	the pointer's location or only skips it.
 *
 * Results:
 *	1, or 0 if the encoding is not supported or the data ends.
 *
 * Side effects:
 *	Advances the reader; sets *valuePtr.
 *
 *----------------------------------------------------------------------
 */

static int
ReadEncoded(
    Reader *rPtr,
    int enc,
    uint64_t dataBase,
    uint64_t *valuePtr)
{
    uint64_t fieldVaddr = rPtr->vaddr0 + (rPtr->pos - rPtr->off0);
    uint64_t value;

    if (enc == PE_OMIT) {
	return 0;
    }
    switch (enc & 0x0f) {
    case PE_ABSPTR:
    case PE_UDATA8:
    case PE_SDATA8: {
	uint64_t v;

	if (!ReadBytes(rPtr, &v, 8)) {
	    return 0;
	}
	value = v;
	break;
    }
    case PE_UDATA4: {
	uint32_t v;

	if (!ReadBytes(rPtr, &v, 4)) {
	    return 0;
	}
	value = v;
	break;
    }
    case PE_SDATA4: {
	int32_t v;

	if (!ReadBytes(rPtr, &v, 4)) {
	    return 0;
	}
	value = (uint64_t) (int64_t) v;
	break;
    }
    case PE_UDATA2: {
	uint16_t v;

	if (!ReadBytes(rPtr, &v, 2)) {
	    return 0;
	}
	value = v;
	break;
    }
    case PE_SDATA2: {
	int16_t v;

	if (!ReadBytes(rPtr, &v, 2)) {
	    return 0;
	}
	value = (uint64_t) (int64_t) v;
	break;
    }
    case PE_ULEB128:
	if (!ReadUleb(rPtr, &value)) {
	    return 0;
	}
	break;
    case PE_SLEB128: {
	int64_t v;

	if (!ReadSleb(rPtr, &v)) {
	    return 0;
	}
	value = (uint64_t) v;
	break;
    }
    default:
	return 0;
    }
    switch (enc & 0x70) {
    case 0:
	break;
    case PE_PCREL:
	value += fieldVaddr;
	break;
    case PE_DATAREL:
	value += dataBase;
	break;
    default:
	return 0;
    }
    *valuePtr = value;
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * SegmentReader --
 *
 *	A reader over the file contents of the PT_LOAD segment that holds a
 *	link-time address, positioned at that address.
 *
 * Results:
 *	1, or 0 if no loaded file contents hold the address.
 *
 * Side effects:
 *	Fills *rPtr.
 *
 *----------------------------------------------------------------------
 */

static int
SegmentReader(
    const ElfView *vPtr,
    uint64_t vaddr,
    Reader *rPtr)
{
    int i;

    for (i = 0; i < vPtr->phnum; i++) {
	Elf64_Phdr ph;

	GetPhdr(vPtr, i, &ph);
	if (ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr
		&& vaddr - ph.p_vaddr < ph.p_filesz
		&& InRange(vPtr->size, ph.p_offset, ph.p_filesz)) {
	    rPtr->img = vPtr->img;
	    rPtr->off0 = ph.p_offset;
	    rPtr->end = ph.p_offset + ph.p_filesz;
	    rPtr->vaddr0 = ph.p_vaddr;
	    rPtr->pos = ph.p_offset + (vaddr - ph.p_vaddr);
	    return 1;
	}
    }
    return 0;
}

/*
 *----------------------------------------------------------------------
 *
 * CieFdeEncoding --
 *
 *	The pointer encoding of the FDEs of the CIE at image offset ciePos.
 *
 * Results:
 *	The encoding, or -1 if the CIE cannot be read.
 *
 * Side effects:
 *	Moves the reader.
 *
 *----------------------------------------------------------------------
 */

static int
CieFdeEncoding(
    Reader *rPtr,
    uint64_t ciePos)
{
    uint32_t len32, id32;
    uint64_t len, id, recordEnd, value;
    int64_t svalue;
    unsigned version, c;
    char aug[16];
    int augLen = 0, enc = PE_ABSPTR, i, is64 = 0;

    if (ciePos < rPtr->off0 || ciePos >= rPtr->end) {
	return -1;
    }
    rPtr->pos = ciePos;
    if (!ReadBytes(rPtr, &len32, 4) || len32 == 0) {
	return -1;
    }
    len = len32;
    if (len32 == 0xffffffffu) {
	if (!ReadBytes(rPtr, &len, 8)) {
	    return -1;
	}
	is64 = 1;
    }
    if (!InRange(rPtr->end, rPtr->pos, len)) {
	return -1;
    }
    recordEnd = rPtr->pos + len;
    rPtr->end = recordEnd;
    if (is64) {
	if (!ReadBytes(rPtr, &id, 8)) {
	    return -1;
	}
    } else {
	if (!ReadBytes(rPtr, &id32, 4)) {
	    return -1;
	}
	id = id32;
    }
    if (id != 0 || !ReadU8(rPtr, &version)
	    || (version != 1 && version != 3 && version != 4)) {
	return -1;
    }
    do {
	if (!ReadU8(rPtr, &c)) {
	    return -1;
	}
	if (augLen == (int) sizeof(aug)) {
	    return -1;
	}
	aug[augLen++] = (char) c;
    } while (c != 0);
    if (version == 4) {
	unsigned addressSize, segmentSize;

	if (!ReadU8(rPtr, &addressSize) || !ReadU8(rPtr, &segmentSize)) {
	    return -1;
	}
    }
    if (!ReadUleb(rPtr, &value) || !ReadSleb(rPtr, &svalue)) {
	return -1;
    }
    if (version == 1) {
	if (!ReadU8(rPtr, &c)) {
	    return -1;
	}
    } else if (!ReadUleb(rPtr, &value)) {
	return -1;
    }
    if (aug[0] == '\0') {
	return enc;
    }
    if (aug[0] != 'z' || !ReadUleb(rPtr, &value)) {
	return -1;
    }
    for (i = 1; aug[i] != '\0'; i++) {
	switch (aug[i]) {
	case 'R':
	    if (!ReadU8(rPtr, &c)) {
		return -1;
	    }
	    return (int) c;
	case 'P':
	    if (!ReadU8(rPtr, &c)
		    || !ReadEncoded(rPtr, (int) c & ~PE_INDIRECT, 0, &value)) {
		return -1;
	    }
	    break;
	case 'L':
	    if (!ReadU8(rPtr, &c)) {
		return -1;
	    }
	    break;
	case 'S':
	case 'B':
	    break;
	default:
	    return -1;
	}
    }
    return enc;
}

/*
 *----------------------------------------------------------------------
 *
 * FdeRange --
 *
 *	Read the code range of the FDE at a link-time address.
 *
 * Results:
 *	1 with the start and length of the range, or 0.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static int
FdeRange(
    const ElfView *vPtr,
    uint64_t fdeVaddr,
    uint64_t *startPtr,
    uint64_t *lengthPtr)
{
    Reader r, cie;
    uint32_t len32, id32;
    uint64_t len, id, idPos, recordEnd, start, length;
    int enc, is64 = 0;

    if (!SegmentReader(vPtr, fdeVaddr, &r)) {
	return 0;
    }
    if (!ReadBytes(&r, &len32, 4) || len32 == 0) {
	return 0;
    }
    len = len32;
    if (len32 == 0xffffffffu) {
	if (!ReadBytes(&r, &len, 8)) {
	    return 0;
	}
	is64 = 1;
    }
    if (!InRange(r.end, r.pos, len)) {
	return 0;
    }
    recordEnd = r.pos + len;
    idPos = r.pos;
    if (is64) {
	if (!ReadBytes(&r, &id, 8)) {
	    return 0;
	}
    } else {
	if (!ReadBytes(&r, &id32, 4)) {
	    return 0;
	}
	id = id32;
    }
    if (id == 0 || id > idPos - r.off0) {
	return 0;
    }
    cie = r;
    enc = CieFdeEncoding(&cie, idPos - id);
    if (enc < 0) {
	return 0;
    }
    r.end = recordEnd;
    if (!ReadEncoded(&r, enc & ~PE_INDIRECT, 0, &start)
	    || !ReadEncoded(&r, enc & 0x0f, 0, &length)) {
	return 0;
    }
    *startPtr = start;
    *lengthPtr = length;
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * CompareRanges --
 *
 *	qsort order of FuncRanges: by start, the longer first.
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
CompareRanges(
    const void *a,
    const void *b)
{
    const FuncRange *r1 = a, *r2 = b;

    if (r1->start != r2->start) {
	return r1->start < r2->start ? -1 : 1;
    }
    if (r1->end != r2->end) {
	return r1->end > r2->end ? -1 : 1;
    }
    return 0;
}

/*
 *----------------------------------------------------------------------
 *
 * ReadFdes --
 *
 *	Read the function starts of the binary search table of
 *	.eh_frame_hdr (found through PT_GNU_EH_FRAME), and the end of each
 *	function from its FDE. A function whose FDE cannot be read ends at
 *	the next start, or at the end of its executable segment.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Sets tablePtr->fdes and numFdes.
 *
 *----------------------------------------------------------------------
 */

static void
ReadFdes(
    const ElfView *vPtr,
    SymTable *tablePtr)
{
    Elf64_Phdr ph;
    Reader r;
    unsigned version, ptrEnc, countEnc, tableEnc;
    uint64_t ehFrame, count, i;
    FuncRange *fdes;
    int found = 0, n = 0, j, sorted = 1;

    for (j = 0; j < vPtr->phnum; j++) {
	GetPhdr(vPtr, j, &ph);
	if (ph.p_type == PT_GNU_EH_FRAME) {
	    found = 1;
	    break;
	}
    }
    if (!found || !InRange(vPtr->size, ph.p_offset, ph.p_filesz)) {
	return;
    }
    r.img = vPtr->img;
    r.pos = r.off0 = ph.p_offset;
    r.end = ph.p_offset + ph.p_filesz;
    r.vaddr0 = ph.p_vaddr;
    if (!ReadU8(&r, &version) || version != 1 || !ReadU8(&r, &ptrEnc)
	    || !ReadU8(&r, &countEnc) || !ReadU8(&r, &tableEnc)
	    || !ReadEncoded(&r, (int) ptrEnc, ph.p_vaddr, &ehFrame)
	    || !ReadEncoded(&r, (int) countEnc, ph.p_vaddr, &count)
	    || tableEnc == PE_OMIT || count == 0
	    || count > (r.end - r.pos) / 2 || count > MAX_FDES) {
	return;
    }
    fdes = (FuncRange *) ckalloc(count * sizeof(FuncRange));
    for (i = 0; i < count; i++) {
	uint64_t start, fde, fdeStart, length;

	if (!ReadEncoded(&r, (int) tableEnc, ph.p_vaddr, &start)
		|| !ReadEncoded(&r, (int) tableEnc, ph.p_vaddr, &fde)) {
	    break;
	}
	fdes[n].start = start;
	fdes[n].end = 0;
	if (FdeRange(vPtr, fde, &fdeStart, &length) && fdeStart == start
		&& length > 0 && start + length > start) {
	    fdes[n].end = start + length;
	}
	if (n > 0 && fdes[n-1].start > start) {
	    sorted = 0;
	}
	n++;
    }
    if (n == 0) {
	ckfree(fdes);
	return;
    }
    if (!sorted) {
	qsort(fdes, n, sizeof(FuncRange), CompareRanges);
    }

    /*
     * One entry per start; fill unknown ends.
     */

    count = n;
    n = 0;
    for (i = 0; i < count; i++) {
	if (n > 0 && fdes[n-1].start == fdes[i].start) {
	    if (fdes[i].end > fdes[n-1].end) {
		fdes[n-1].end = fdes[i].end;
	    }
	    continue;
	}
	fdes[n++] = fdes[i];
    }
    for (j = 0; j < n; j++) {
	if (fdes[j].end == 0) {
	    uint64_t end = ExecSegEnd(vPtr, fdes[j].start);

	    if (j + 1 < n && (end == 0 || fdes[j+1].start < end)) {
		end = fdes[j+1].start;
	    }
	    fdes[j].end = (end > fdes[j].start) ? end : fdes[j].start + 1;
	}
    }
    tablePtr->fdes = fdes;
    tablePtr->numFdes = n;
}

/*
 *----------------------------------------------------------------------
 *
 * FindFde --
 *
 *	The .eh_frame_hdr function holding a link-time address.
 *
 * Results:
 *	The function's range, or NULL.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static const FuncRange *
FindFde(
    const SymTable *tablePtr,
    uint64_t rel)
{
    int lo = 0, hi = tablePtr->numFdes;

    while (lo < hi) {
	int mid = lo + (hi - lo) / 2;

	if (tablePtr->fdes[mid].start <= rel) {
	    lo = mid + 1;
	} else {
	    hi = mid;
	}
    }
    if (lo > 0 && rel < tablePtr->fdes[lo-1].end) {
	return &tablePtr->fdes[lo-1];
    }
    return NULL;
}

/*
 *----------------------------------------------------------------------
 *
 * CompareRawSyms --
 *
 *	qsort order of symbols: by address, then the preferred alias first
 *	(global or weak before local, fewer leading underscores, shorter).
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
CompareRawSyms(
    const void *a,
    const void *b)
{
    const RawSym *s1 = a, *s2 = b;

    if (s1->start != s2->start) {
	return s1->start < s2->start ? -1 : 1;
    }
    if (s1->rank != s2->rank) {
	return s1->rank - s2->rank;
    }
    if (s1->underscores != s2->underscores) {
	return s1->underscores - s2->underscores;
    }
    if (s1->nameLen != s2->nameLen) {
	return s1->nameLen < s2->nameLen ? -1 : 1;
    }
    if (s1->name != s2->name) {
	return s1->name < s2->name ? -1 : 1;
    }
    return 0;
}

/*
 *----------------------------------------------------------------------
 *
 * ReadSymbols --
 *
 *	Read the function symbols of the first symbol table of a type
 *	(SHT_SYMTAB or SHT_DYNSYM). Aliases (symbols at one address) become
 *	one entry named by the preferred alias. A symbol of size 0 ends at
 *	the next symbol, at the end of its section and at the end of the FDE
 *	starting where it starts, whichever comes first.
 *
 * Results:
 *	1 if function symbols were read, else 0.
 *
 * Side effects:
 *	If any function symbol was read, replaces tablePtr's symbols.
 *
 *----------------------------------------------------------------------
 */

static int
ReadSymbols(
    const ElfView *vPtr,
    SymTable *tablePtr,
    uint32_t type)
{
    Elf64_Shdr symSh, strSh, sh;
    const char *strtab;
    RawSym *raw;
    FuncSym *syms;
    char *names;
    uint64_t count, entSize, i, poolSize;
    int found = 0, n = 0, m, j;

    memset(&symSh, 0, sizeof(symSh));
    memset(&strSh, 0, sizeof(strSh));
    for (j = 0; j < vPtr->shnum; j++) {
	GetShdr(vPtr, j, &sh);
	if (sh.sh_type == type) {
	    symSh = sh;
	    found = 1;
	    break;
	}
    }
    if (!found || !GetShdr(vPtr, (int) symSh.sh_link, &strSh)) {
	return 0;
    }
    entSize = symSh.sh_entsize ? symSh.sh_entsize : sizeof(Elf64_Sym);
    if (strSh.sh_type != SHT_STRTAB || strSh.sh_size == 0
	    || entSize < sizeof(Elf64_Sym)
	    || !InRange(vPtr->size, symSh.sh_offset, symSh.sh_size)
	    || !InRange(vPtr->size, strSh.sh_offset, strSh.sh_size)) {
	return 0;
    }
    strtab = (const char *) vPtr->img + strSh.sh_offset;
    count = symSh.sh_size / entSize;
    if (count > MAX_SYMBOLS) {
	count = MAX_SYMBOLS;
    }
    if (count == 0) {
	return 0;
    }

    raw = (RawSym *) ckalloc(count * sizeof(RawSym));
    for (i = 0; i < count; i++) {
	Elf64_Sym sym;
	const char *name, *at;
	uint64_t len, bound = 0;
	int symType;

	memcpy(&sym, vPtr->img + symSh.sh_offset + i * entSize,
		sizeof(Elf64_Sym));
	symType = ELF64_ST_TYPE(sym.st_info);
	if ((symType != STT_FUNC && symType != STT_GNU_IFUNC)
		|| sym.st_shndx == SHN_UNDEF
		|| sym.st_shndx >= SHN_LORESERVE || sym.st_value == 0
		|| sym.st_name >= strSh.sh_size) {
	    continue;
	}
	name = strtab + sym.st_name;
	len = strnlen(name, strSh.sh_size - sym.st_name);
	if (len == strSh.sh_size - sym.st_name) {
	    continue;			/* Not terminated. */
	}
	at = memchr(name, '@', len);
	if (at != NULL) {
	    len = at - name;
	}
	if (len == 0 || len > 65535) {
	    continue;
	}
	if (GetShdr(vPtr, sym.st_shndx, &sh) && sym.st_value >= sh.sh_addr
		&& sym.st_value - sh.sh_addr < sh.sh_size) {
	    bound = sh.sh_addr + sh.sh_size;
	} else {
	    bound = ExecSegEnd(vPtr, sym.st_value);
	}
	raw[n].start = sym.st_value;
	raw[n].size = (sym.st_value + sym.st_size > sym.st_value)
		? sym.st_size : 0;
	raw[n].bound = bound;
	raw[n].name = sym.st_name;
	raw[n].nameLen = (uint32_t) len;
	raw[n].rank = (ELF64_ST_BIND(sym.st_info) == STB_LOCAL);
	raw[n].underscores = 0;
	while (raw[n].underscores < (int) len
		&& name[raw[n].underscores] == '_') {
	    raw[n].underscores++;
	}
	n++;
    }
    if (n == 0) {
	ckfree(raw);
	return 0;
    }
    qsort(raw, n, sizeof(RawSym), CompareRawSyms);

    /*
     * Merge aliases: keep the first (preferred) name, the largest size
     * and bound.
     */

    m = 0;
    poolSize = 0;
    for (j = 0; j < n; j++) {
	if (m > 0 && raw[m-1].start == raw[j].start) {
	    if (raw[j].size > raw[m-1].size) {
		raw[m-1].size = raw[j].size;
	    }
	    if (raw[j].bound > raw[m-1].bound) {
		raw[m-1].bound = raw[j].bound;
	    }
	    continue;
	}
	raw[m++] = raw[j];
	poolSize += raw[j].nameLen + 1;
    }
    if (poolSize > UINT32_MAX) {
	ckfree(raw);
	return 0;
    }

    syms = (FuncSym *) ckalloc(m * sizeof(FuncSym));
    names = ckalloc(poolSize);
    poolSize = 0;
    for (j = 0; j < m; j++) {
	uint64_t end;

	syms[j].start = raw[j].start;
	syms[j].name = (uint32_t) poolSize;
	memcpy(names + poolSize, strtab + raw[j].name, raw[j].nameLen);
	names[poolSize + raw[j].nameLen] = '\0';
	poolSize += raw[j].nameLen + 1;
	if (raw[j].size > 0) {
	    end = raw[j].start + raw[j].size;
	} else {
	    const FuncRange *fdePtr = FindFde(tablePtr, raw[j].start);

	    end = raw[j].bound;
	    if (j + 1 < m && (end == 0 || raw[j+1].start < end)) {
		end = raw[j+1].start;
	    }
	    if (fdePtr != NULL && fdePtr->start == raw[j].start
		    && (end == 0 || fdePtr->end < end)) {
		end = fdePtr->end;
	    }
	    if (end < raw[j].start) {
		end = raw[j].start;
	    }
	}
	syms[j].end = end;
    }
    ckfree(raw);

    if (tablePtr->syms != NULL) {
	ckfree(tablePtr->syms);
	ckfree(tablePtr->names);
    }
    tablePtr->syms = syms;
    tablePtr->numSyms = m;
    tablePtr->names = names;
    tablePtr->fromSymtab = (type == SHT_SYMTAB);
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * FindSym --
 *
 *	The function symbol covering a link-time address: the last symbol
 *	starting at or before it whose range holds it (so that a symbol
 *	nested in a larger one wins).
 *
 * Results:
 *	The symbol, or NULL.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static const FuncSym *
FindSym(
    const SymTable *tablePtr,
    uint64_t rel)
{
    int lo = 0, hi = tablePtr->numSyms, k;

    while (lo < hi) {
	int mid = lo + (hi - lo) / 2;

	if (tablePtr->syms[mid].start <= rel) {
	    lo = mid + 1;
	} else {
	    hi = mid;
	}
    }
    for (k = 0, lo--; lo >= 0 && k < WALK_BACK; lo--, k++) {
	if (rel < tablePtr->syms[lo].end) {
	    return &tablePtr->syms[lo];
	}
    }
    return NULL;
}

/*
 *----------------------------------------------------------------------
 *
 * ParseImage --
 *
 *	Read the build-id, function starts and symbols (of .symtab, else of
 *	.dynsym) of an ELF image.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Fills the table as far as the image allows.
 *
 *----------------------------------------------------------------------
 */

static void
ParseImage(
    SymTable *tablePtr,
    const unsigned char *img,
    size_t size)
{
    ElfView v;

    if (!OpenView(&v, img, size)) {
	return;
    }
    tablePtr->buildIdLen = ViewBuildId(&v, tablePtr->buildId);
    ReadFdes(&v, tablePtr);
    if (!ReadSymbols(&v, tablePtr, SHT_SYMTAB)) {
	ReadSymbols(&v, tablePtr, SHT_DYNSYM);
    }
    ReadPlt(&v, tablePtr);
}

/*
 *----------------------------------------------------------------------
 *
 * ReadPlt, FindPlt --
 *
 *	Name the PLT stubs of an x86-64 module, "name@plt" as perf does:
 *	no symbol covers them, so they would be named by their unwind
 *	entry, "module!fn_0x...". The stub of the i-th relocation of
 *	.rela.plt is the i-th entry of .plt.sec when the module has one
 *	(IBT-enabled code), else the (i+1)-th of .plt (whose first entry
 *	calls the dynamic linker); entries are 16 bytes. Relocations that
 *	name no symbol (IRELATIVE) leave their stub unnamed.
 *
 *----------------------------------------------------------------------
 */

static int
SectionIs(
    const ElfView *vPtr,
    const Elf64_Shdr *strShPtr,
    const Elf64_Shdr *shPtr,
    const char *name)
{
    size_t len = strlen(name) + 1;

    return shPtr->sh_name < strShPtr->sh_size
	    && strShPtr->sh_size - shPtr->sh_name >= len
	    && memcmp(vPtr->img + strShPtr->sh_offset + shPtr->sh_name, name,
		    len) == 0;
}

static void
ReadPlt(
    const ElfView *vPtr,
    SymTable *tablePtr)
{
    Elf64_Shdr strSh, sh, rela, dynsym, dynstr, plt;
    Tcl_DString pool;
    FuncSym *stubs;
    uint64_t count, i, stride = 16, first = 1;
    int j, haveRela = 0, havePlt = 0, n = 0;

    memset(&rela, 0, sizeof(rela));
    memset(&plt, 0, sizeof(plt));
    if (vPtr->eh.e_machine != EM_X86_64 || vPtr->shnum == 0
	    || !GetShdr(vPtr, vPtr->eh.e_shstrndx, &strSh)
	    || !InRange(vPtr->size, strSh.sh_offset, strSh.sh_size)) {
	return;
    }
    for (j = 0; j < vPtr->shnum; j++) {
	GetShdr(vPtr, j, &sh);
	if (sh.sh_type == SHT_RELA && SectionIs(vPtr, &strSh, &sh,
		".rela.plt")) {
	    rela = sh;
	    haveRela = 1;
	} else if (SectionIs(vPtr, &strSh, &sh, ".plt.sec")) {
	    plt = sh;
	    first = 0;
	    havePlt = 2;
	} else if (havePlt < 2 && SectionIs(vPtr, &strSh, &sh, ".plt")) {
	    plt = sh;
	    havePlt = 1;
	}
    }
    if (!haveRela || !havePlt
	    || rela.sh_entsize != sizeof(Elf64_Rela)
	    || !InRange(vPtr->size, rela.sh_offset, rela.sh_size)
	    || !GetShdr(vPtr, (int) rela.sh_link, &dynsym)
	    || dynsym.sh_type != SHT_DYNSYM
	    || !InRange(vPtr->size, dynsym.sh_offset, dynsym.sh_size)
	    || !GetShdr(vPtr, (int) dynsym.sh_link, &dynstr)
	    || dynstr.sh_type != SHT_STRTAB
	    || !InRange(vPtr->size, dynstr.sh_offset, dynstr.sh_size)) {
	return;
    }
    count = rela.sh_size / sizeof(Elf64_Rela);
    if (count == 0 || count > MAX_SYMBOLS) {
	return;
    }
    stubs = (FuncSym *) ckalloc(count * sizeof(FuncSym));
    Tcl_DStringInit(&pool);
    for (i = 0; i < count; i++) {
	Elf64_Rela r;
	Elf64_Sym sym;
	uint64_t symIdx, start = plt.sh_addr + (i + first) * stride;
	const char *name;
	size_t len;

	memcpy(&r, vPtr->img + rela.sh_offset + i * sizeof(Elf64_Rela),
		sizeof(Elf64_Rela));
	symIdx = ELF64_R_SYM(r.r_info);
	if (ELF64_R_TYPE(r.r_info) != R_X86_64_JUMP_SLOT || symIdx == 0
		|| (symIdx + 1) * sizeof(Elf64_Sym) > dynsym.sh_size
		|| start + stride > plt.sh_addr + plt.sh_size) {
	    continue;
	}
	memcpy(&sym, vPtr->img + dynsym.sh_offset + symIdx * sizeof(Elf64_Sym),
		sizeof(Elf64_Sym));
	if (sym.st_name >= dynstr.sh_size) {
	    continue;
	}
	name = (const char *) vPtr->img + dynstr.sh_offset + sym.st_name;
	len = strnlen(name, dynstr.sh_size - sym.st_name);
	if (len == dynstr.sh_size - sym.st_name || len == 0 || len > 1024) {
	    continue;
	}
	if (memchr(name, '@', len) != NULL) {
	    len = (const char *) memchr(name, '@', len) - name;
	}
	stubs[n].start = start;
	stubs[n].end = start + stride;
	stubs[n].name = (uint32_t) Tcl_DStringLength(&pool);
	Tcl_DStringAppend(&pool, name, (int) len);
	Tcl_DStringAppend(&pool, "@plt", 5);	/* With its NUL. */
	n++;
    }
    if (n == 0) {
	ckfree(stubs);
	Tcl_DStringFree(&pool);
	return;
    }
    tablePtr->plts = stubs;
    tablePtr->numPlts = n;
    tablePtr->pltNames = ckalloc(Tcl_DStringLength(&pool));
    memcpy(tablePtr->pltNames, Tcl_DStringValue(&pool),
	    Tcl_DStringLength(&pool));
    Tcl_DStringFree(&pool);
}

static const FuncSym *
FindPlt(
    const SymTable *tablePtr,
    uint64_t rel)
{
    int lo = 0, hi = tablePtr->numPlts;

    while (lo < hi) {
	int mid = lo + (hi - lo) / 2;

	if (tablePtr->plts[mid].end <= rel) {
	    lo = mid + 1;
	} else {
	    hi = mid;
	}
    }
    if (lo < tablePtr->numPlts && tablePtr->plts[lo].start <= rel) {
	return &tablePtr->plts[lo];
    }
    return NULL;
}

/*
 *----------------------------------------------------------------------
 *
 * SameFile --
 *
 *	Whether a stat result is the file of a FileId.
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
SameFile(
    const struct stat *stPtr,
    const FileId *idPtr)
{
    return (unsigned long long) stPtr->st_dev == idPtr->dev
	    && (unsigned long long) stPtr->st_ino == idPtr->ino
	    && (long long) stPtr->st_size == idPtr->size
	    && (long long) stPtr->st_mtim.tv_sec == idPtr->mtimeSec
	    && stPtr->st_mtim.tv_nsec == idPtr->mtimeNsec;
}

/*
 *----------------------------------------------------------------------
 *
 * ReadImage --
 *
 *	Read a whole file into memory. Reading, not mapping: a mapped file
 *	truncated on disk while it is parsed would raise SIGBUS in the
 *	profiled program.
 *
 * Results:
 *	A ckalloc'd copy of the file's size bytes, or NULL if it could not
 *	be read whole (too large, short read, I/O error).
 *
 *----------------------------------------------------------------------
 */

static const unsigned char *
ReadImage(
    int fd,
    size_t size)
{
    unsigned char *buf;
    size_t done = 0;

    if (size > (size_t) INT_MAX) {
	return NULL;
    }
    buf = (unsigned char *) attemptckalloc((unsigned) size);
    if (buf == NULL) {
	return NULL;
    }
    while (done < size) {
	ssize_t n = pread(fd, buf + done, size - done, (off_t) done);

	if (n < 0 && errno == EINTR) {
	    continue;
	}
	if (n <= 0) {
	    ckfree((char *) buf);
	    return NULL;
	}
	done += (size_t) n;
    }
    return buf;
}

/*
 *----------------------------------------------------------------------
 *
 * LoadDebugSymbols --
 *
 *	For a file without .symtab: read the .symtab of its separate debug
 *	file, /usr/lib/debug/.build-id/xx/yyyy.debug, if it is installed and
 *	has the same build-id.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	May replace the table's symbols.
 *
 *----------------------------------------------------------------------
 */

static void
LoadDebugSymbols(
    SymTable *tablePtr)
{
    char path[sizeof(DEBUG_DIR) + 2 * BUILD_ID_MAX + 16];
    unsigned char buildId[BUILD_ID_MAX];
    struct stat st;
    const unsigned char *img;
    size_t size;
    char *p;
    ElfView v;
    int fd, i;

    if (tablePtr->buildIdLen < 2) {
	return;
    }
    p = path + sprintf(path, "%s%02x/", DEBUG_DIR, tablePtr->buildId[0]);
    for (i = 1; i < tablePtr->buildIdLen; i++) {
	p += sprintf(p, "%02x", tablePtr->buildId[i]);
    }
    strcpy(p, ".debug");

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
	return;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0
	    || (unsigned long long) st.st_size > SIZE_MAX) {
	close(fd);
	return;
    }
    size = (size_t) st.st_size;
    img = ReadImage(fd, size);
    close(fd);
    if (img == NULL) {
	return;
    }
    if (OpenView(&v, img, size)
	    && ViewBuildId(&v, buildId) == tablePtr->buildIdLen
	    && memcmp(buildId, tablePtr->buildId, tablePtr->buildIdLen) == 0) {
	ReadSymbols(&v, tablePtr, SHT_SYMTAB);
    }
    ckfree((char *) img);
}

/*
 *----------------------------------------------------------------------
 *
 * LoadFile --
 *
 *	Parse the ELF file at path, provided it is still the file idPtr
 *	names.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Fills the table as far as the file allows (nothing if it cannot be
 *	read).
 *
 *----------------------------------------------------------------------
 */

static void
LoadFile(
    SymTable *tablePtr,
    const char *path,
    const FileId *idPtr)
{
    struct stat st;
    const unsigned char *img;
    size_t size;
    int fd;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
	return;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !SameFile(&st, idPtr)
	    || st.st_size <= 0
	    || (unsigned long long) st.st_size > SIZE_MAX) {
	close(fd);
	return;
    }
    size = (size_t) st.st_size;
    img = ReadImage(fd, size);
    close(fd);
    if (img == NULL) {
	return;
    }
    ParseImage(tablePtr, img, size);
    ckfree((char *) img);
    if (!tablePtr->fromSymtab) {
	LoadDebugSymbols(tablePtr);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * FreeTable --
 *
 *	Free a parsed table.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Frees memory.
 *
 *----------------------------------------------------------------------
 */

static void
FreeTable(
    SymTable *tablePtr)
{
    if (tablePtr->syms != NULL) {
	ckfree(tablePtr->syms);
	ckfree(tablePtr->names);
    }
    if (tablePtr->fdes != NULL) {
	ckfree(tablePtr->fdes);
    }
    if (tablePtr->plts != NULL) {
	ckfree(tablePtr->plts);
	ckfree(tablePtr->pltNames);
    }
    ckfree(tablePtr->key);
    ckfree(tablePtr);
}

/*
 *----------------------------------------------------------------------
 *
 * AcquireTable, ReleaseTable --
 *
 *	Take a reference to the shared table of a file (path) or of an
 *	in-memory image, parsing it if no symbolizer has; give one back.
 *	Parsing happens outside tableMutex; of two threads parsing the same
 *	file at once, the second one's result is dropped. Of the tables no
 *	module uses, the SPARE_TABLES most recently released are kept.
 *
 * Results:
 *	AcquireTable: the table (possibly empty, never NULL).
 *
 * Side effects:
 *	May parse a file, free unused tables.
 *
 *----------------------------------------------------------------------
 */

static SymTable *
AcquireTable(
    const char *key,
    const char *path,
    const FileId *idPtr,
    const unsigned char *image,
    size_t imageSize)
{
    SymTable *tablePtr, *newPtr;
    size_t keyLen = strlen(key);

    Tcl_MutexLock(&tableMutex);
    for (tablePtr = tableList; tablePtr != NULL;
	    tablePtr = tablePtr->nextPtr) {
	if (strcmp(tablePtr->key, key) == 0) {
	    if (tablePtr->refCount++ == 0) {
		idleTables--;
	    }
	    Tcl_MutexUnlock(&tableMutex);
	    return tablePtr;
	}
    }
    Tcl_MutexUnlock(&tableMutex);

    newPtr = (SymTable *) ckalloc(sizeof(SymTable));
    memset(newPtr, 0, sizeof(SymTable));
    newPtr->key = ckalloc(keyLen + 1);
    memcpy(newPtr->key, key, keyLen + 1);
    if (path != NULL) {
	LoadFile(newPtr, path, idPtr);
    } else {
	ParseImage(newPtr, image, imageSize);
    }

    Tcl_MutexLock(&tableMutex);
    for (tablePtr = tableList; tablePtr != NULL;
	    tablePtr = tablePtr->nextPtr) {
	if (strcmp(tablePtr->key, key) == 0) {
	    if (tablePtr->refCount++ == 0) {
		idleTables--;
	    }
	    Tcl_MutexUnlock(&tableMutex);
	    FreeTable(newPtr);
	    return tablePtr;
	}
    }
    newPtr->refCount = 1;
    newPtr->nextPtr = tableList;
    tableList = newPtr;
    Tcl_MutexUnlock(&tableMutex);
    return newPtr;
}

static void
ReleaseTable(
    SymTable *tablePtr)
{
    Tcl_MutexLock(&tableMutex);
    if (--tablePtr->refCount == 0) {
	tablePtr->idleSince = ++tableTick;
	idleTables++;
	while (idleTables > SPARE_TABLES) {
	    SymTable **linkPtr, **oldestPtr = NULL;

	    for (linkPtr = &tableList; *linkPtr != NULL;
		    linkPtr = &(*linkPtr)->nextPtr) {
		if ((*linkPtr)->refCount == 0 && (oldestPtr == NULL
			|| (*linkPtr)->idleSince < (*oldestPtr)->idleSince)) {
		    oldestPtr = linkPtr;
		}
	    }
	    if (oldestPtr == NULL) {
		break;
	    }
	    tablePtr = *oldestPtr;
	    *oldestPtr = tablePtr->nextPtr;
	    FreeTable(tablePtr);
	    idleTables--;
	}
    }
    Tcl_MutexUnlock(&tableMutex);
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
    const FileId *idPtr)
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
	ReleaseTable(modPtr->tablePtr);
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
    const FileId *idPtr)
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
		sizeof(FileId)) == 0);
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

static SymTable *
ModuleTable(
    Module *modPtr)
{
    char key[160];
    SymTable *tablePtr = NULL;

    if (modPtr->tableTried) {
	return modPtr->tablePtr;
    }
    modPtr->tableTried = 1;
    if (modPtr->isVdso) {
	if (modPtr->imageSize > 0) {
	    snprintf(key, sizeof(key), "vdso:%llx:%llx",
		    (unsigned long long) modPtr->base,
		    (unsigned long long) modPtr->imageSize);
	    tablePtr = AcquireTable(key, NULL, NULL,
		    (const unsigned char *) modPtr->base, modPtr->imageSize);
	}
    } else if (modPtr->statOk && modPtr->path != NULL) {
	const FileId *idPtr = &modPtr->fileId;

	snprintf(key, sizeof(key), "file:%llx:%llx:%llx:%llx.%09ld",
		idPtr->dev, idPtr->ino, (unsigned long long) idPtr->size,
		(unsigned long long) idPtr->mtimeSec, idPtr->mtimeNsec);
	tablePtr = AcquireTable(key, modPtr->path, idPtr, NULL, 0);
    }
    if (tablePtr != NULL && modPtr->buildIdLen > 0
	    && tablePtr->buildIdLen > 0
	    && (modPtr->buildIdLen != tablePtr->buildIdLen
		|| memcmp(modPtr->buildId, tablePtr->buildId,
		    modPtr->buildIdLen) != 0)) {
	ReleaseTable(tablePtr);
	tablePtr = NULL;
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
    Tcl_InitHashTable(&symPtr->addrCache, TCL_ONE_WORD_KEYS);
    Tcl_InitHashTable(&symPtr->funcCache, TCL_ONE_WORD_KEYS);
    symPtr->unknownEntry.info.nameId = CprofNameIntern("[unknown]", -1);
    symPtr->unknownEntry.info.moduleId = -1;

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
	FileId id;
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
    const char *name)
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
    entryPtr->modPtr = modPtr;
    entryPtr->info.nameId = CprofNameIntern(name, -1);
    entryPtr->info.moduleId = modPtr->moduleId;
    entryPtr->info.funcStart = funcStart;
    entryPtr->info.inTcl = modPtr->inTcl;
    entryPtr->info.exact = exact;
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
 *	Name an address not in the address cache: by symbol, else by
 *	.eh_frame_hdr function start, else by offset in its module.
 *
 * Results:
 *	The cache entry holding the result.
 *
 * Side effects:
 *	May parse the module's file, intern names, add entries.
 *
 *----------------------------------------------------------------------
 */

static CacheEntry *
Describe(
    CprofSymbolizer *symPtr,
    uintptr_t addr)
{
    Module *modPtr = FindModule(symPtr, addr);
    SymTable *tablePtr;
    CacheEntry *entryPtr;
    uint64_t rel;
    char buf[NAME_MAX_SHOWN + 64];

    if (modPtr == NULL) {
	return &symPtr->unknownEntry;
    }
    rel = (uint64_t) (addr - modPtr->base);
    tablePtr = ModuleTable(modPtr);
    if (tablePtr != NULL) {
	const FuncSym *symEntPtr = FindPlt(tablePtr, rel);
	const FuncRange *fdePtr;

	if (symEntPtr != NULL) {
	    return FuncEntry(symPtr, modPtr,
		    modPtr->base + (uintptr_t) symEntPtr->start, 1,
		    tablePtr->pltNames + symEntPtr->name);
	}
	symEntPtr = FindSym(tablePtr, rel);
	if (symEntPtr != NULL) {
	    return FuncEntry(symPtr, modPtr,
		    modPtr->base + (uintptr_t) symEntPtr->start, 1,
		    tablePtr->names + symEntPtr->name);
	}
	fdePtr = FindFde(tablePtr, rel);
	if (fdePtr != NULL) {
	    snprintf(buf, sizeof(buf), "%.*s!fn_0x%llx", NAME_MAX_SHOWN,
		    modPtr->baseName, (unsigned long long) fdePtr->start);
	    return FuncEntry(symPtr, modPtr,
		    modPtr->base + (uintptr_t) fdePtr->start, 0, buf);
	}
    }
    snprintf(buf, sizeof(buf), "%.*s+0x%llx", NAME_MAX_SHOWN,
	    modPtr->baseName, (unsigned long long) rel);
    entryPtr = NewEntry(symPtr);
    entryPtr->modPtr = modPtr;
    entryPtr->info.nameId = CprofNameIntern(buf, -1);
    entryPtr->info.moduleId = modPtr->moduleId;
    entryPtr->info.funcStart = 0;
    entryPtr->info.inTcl = modPtr->inTcl;
    entryPtr->info.exact = 0;
    return entryPtr;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSymResolve --
 *
 *	Name a native address (a PC, or a return address minus one). The
 *	module list is the one of the last refresh (the first call makes
 *	one).
 *
 * Results:
 *	Fills *infoPtr.
 *
 * Side effects:
 *	Caches the result; the first address in a module parses its file
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
 *	A dict: names, modules (one per address), cold_ns and warm_ns (per
 *	address). Errors: TCLCPROF VALUE symbols.
 *
 * Side effects:
 *	May parse module files.
 *
 *----------------------------------------------------------------------
 */

#define WARM_ROUNDS 10

int
CprofSymDebug(
    Tcl_Interp *interp,
    Tcl_Obj *addrsObj)
{
    CprofSymbolizer *symPtr;
    Tcl_Obj **elems, *namesObj, *modulesObj, *resultObj;
    uintptr_t *addrs;
    uint64_t t0, t1, t2;
    int n, i, r;

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
    }
    CprofSymFree(symPtr);
    ckfree(addrs);
    resultObj = Tcl_NewDictObj();
    Tcl_DictObjPut(NULL, resultObj, Tcl_NewStringObj("names", -1), namesObj);
    Tcl_DictObjPut(NULL, resultObj, Tcl_NewStringObj("modules", -1),
	    modulesObj);
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
