/*
 * symfile.c --
 *
 *	What the files of a loaded module say, for the symbolizer
 *	(symbolize.c): function names, function starts and C source lines
 *	of link-time addresses. In normal context only.
 *
 *	The files are read by elfutils (libelf, libdw, libdwfl): function
 *	symbols of .symtab, or of .dynsym and the MiniDebugInfo of
 *	.gnu_debugdata, with libdwfl's choice among nested and overlapping
 *	symbols (dwfl_module_addrinfo); DWARF line tables, compressed
 *	sections included (dwfl_module_getsrc), opened at the first line
 *	asked of a table (profiles made with -lines 1); call frame information
 *	(dwarf_cfi_addrframe). A module without .symtab or without DWARF is
 *	completed by its separate debug file, found by build-id under
 *	/usr/lib/debug/.build-id, else by .gnu_debuglink next to the module,
 *	in its .debug directory or under /usr/lib/debug (where gdb and
 *	libdwfl look), and checked against the module's build-id or the
 *	link's CRC.
 *
 *	What is done here, and why no library does it for us:
 *
 *	- Files are read whole into memory (ReadFile) and handed to libelf
 *	  with elf_memory; the library never opens or maps them: a mapped
 *	  file truncated on disk while it is read raises SIGBUS in the
 *	  profiled program, and a descriptor kept open for lazy reads may be
 *	  closed or reused by the program. So libdwfl's own search for debug
 *	  files (dwfl_standard_find_debuginfo, which maps what it finds, and
 *	  asks debuginfod servers over the network when DEBUGINFOD_URLS is
 *	  set) is not used: FindDebugFile looks in the same places, and a
 *	  debug file is reported to libdwfl as a module of its own; a dwz
 *	  supplementary file is read by LoadAltFile before libdw would map
 *	  it.
 *	- PLT stubs: libdwfl gives them no name (no symbol covers them).
 *	  The stub of the i-th relocation of .rela.plt is the i-th entry of
 *	  .plt.sec, or the (i+1)-th of .plt; named "name@plt", as objdump
 *	  and perf name them (x86-64; the records are read through libelf).
 *	- Function starts of stripped code (static functions of a stripped
 *	  library, such as libtcl's TEBCresume), from the binary search
 *	  table of .eh_frame_hdr: libdw searches it, but hands out rows of
 *	  call frame information, not the start of the function an address
 *	  is in. A start is used only where libdw's CFI covers the address.
 *	- Aliases: libdwfl names a function by whichever of its aliases
 *	  comes first in the table (__libc_malloc, _IO_puts); a profile
 *	  shows the name programs call (malloc, puts), as perf does.
 *	- Caches. dwfl_module_addrinfo scans the whole symbol table; its
 *	  answer is the same for every address between two consecutive
 *	  "breakpoints" (symbol starts and ends, section bounds: the only
 *	  places where what it compares changes), so each table asks it
 *	  once per such segment (and once for the segment's first address,
 *	  where a sizeless symbol matches exactly).
 *
 *	Tables are shared process-wide by the symbolizers, keyed by file
 *	identity (device, inode, size, mtime) under tableMutex, each used
 *	under its own mutex (libdw is not thread-safe); a few unused ones are
 *	kept so that a library loaded again is not read again. These
 *	functions are called on the profiler's reading thread (symreader.c),
 *	so that what they allocate stays out of the program's heap.
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
#include <elfutils/libdwfl.h>
#include <elfutils/libdwelf.h>
#include <dwarf.h>
#include <elf.h>
#include <gelf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <sys/stat.h>

/*
 * Limits.
 */

#define SPARE_TABLES	16		/* Unused tables kept. */
#define MAX_ENTRIES	(1 << 24)	/* PLT and search table entries read. */
#define DEBUG_DIR	"/usr/lib/debug"

/*
 * DWARF pointer encodings of the .eh_frame_hdr search table.
 */

#define PE_UDATA4	0x03
#define PE_SDATA4	0x0b
#define PE_DATAREL	0x30

/*
 * A PLT stub: [start, end), link-time addresses.
 */

typedef struct FuncSym {
    uint64_t start;
    uint64_t end;
    uint32_t name;		/* Offset of the name in the table's pool. */
} FuncSym;

/*
 * The name shown for a function start: of the aliases there, the
 * preferred one.
 */

typedef struct Alias {
    uint64_t start;
    const char *name;		/* In libelf's data. */
    int nameLen;		/* Up to a version suffix ("@..."). */
    int rank;			/* 0: global or weak, 1: local. */
    int underscores;		/* Leading underscores of the name. */
} Alias;

/*
 * What dwfl_module_addrinfo said for the addresses of one segment.
 */

typedef struct SegResult {
    const char *name;		/* NULL: no function symbol. In libelf's
				 * data, valid while the table lives. */
    uint64_t start;		/* The symbol's value. */
    int nameLen;		/* Up to a version suffix ("@..."). */
    int known;			/* Asked already. */
} SegResult;

/*
 * The symbols, lines and unwind tables of one file (or of the vDSO
 * image). key, refCount and idleSince are under tableMutex; the libdwfl
 * handles and the segment cache under the table's own mutex; the rest is
 * immutable once published in tableList.
 */

struct CprofSymTable {
    struct CprofSymTable *nextPtr;	/* Next in tableList. */
    char *key;			/* Identity of the file it was read from. */
    int refCount;		/* Modules using it. */
    unsigned long idleSince;	/* tableTick when refCount went to 0. */
    Tcl_Mutex mutex;		/* Serializes the use of the handles. */
    char *image;		/* The file (or vDSO) in memory. */
    char *debugImage;		/* The separate debug file, or NULL. */
    char *debugPath;		/* Its path. */
    char *altImage;		/* The supplementary DWARF file (dwz) of the
				 * file with the lines, or NULL. */
    Elf *altElf;
    Dwarf *altDwarf;
    Dwfl *dwfl;			/* The file as a module of its own ... */
    Dwfl *debugDwfl;		/* ... and its debug file. */
    Dwfl_Module *mainMod;	/* Unwind tables, PLT. */
    Dwfl_Module *debugMod;	/* The debug file's, or NULL. */
    Dwfl_Module *symMod;	/* Where symbols are looked up, or NULL. */
    Dwfl_Module *lineMod;	/* Where lines are looked up, or NULL. */
    Elf *pendingElf;		/* Handed to libdwfl by FindElf. */
    char *altFrom;		/* Where a relative dwz link is looked up
				 * from: the file with the lines. */
    int dwarfRead;		/* lineMod's DWARF has been opened (at the
				 * first line asked for). */
    Dwarf_CFI *cfi;		/* The main file's .eh_frame, or NULL. */
    Dwarf_Addr cfiBias;
    Alias *aliases;		/* Preferred names, sorted by start. */
    int numAliases;
    uint64_t *breaks;		/* Segment bounds, sorted, distinct. */
    int numBreaks;
    Tcl_HashTable segs;		/* Segment slot -> SegResult (slot 2k+1:
				 * the address breaks[k], 2k+2: after it
				 * and before breaks[k+1], 0: before all). */
    int segsInit;		/* segs is initialized. */
    uint64_t *fdeStarts;	/* Function starts, sorted. */
    int numFdes;
    FuncSym *plts;		/* PLT stubs, "name@plt", sorted by start. */
    int numPlts;
    char *pltNames;		/* Their name pool. */
    unsigned char buildId[CPROF_BUILD_ID_MAX];
    int buildIdLen;		/* 0: the file has no build-id. */
};

typedef struct CprofSymTable SymTable;

static SymTable *tableList = NULL;
static int dwarfOpened = 0;	/* Tables whose DWARF was opened (atomic:
				 * read by tclcprof::debug dwarf). */
static unsigned long tableTick = 0;
static int idleTables = 0;
TCL_DECLARE_MUTEX(tableMutex)

/*
 * Forward declarations.
 */

static int		SameFile(const struct stat *stPtr,
			    const CprofFileId *idPtr);
static char *		ReadFile(const char *path, const CprofFileId *idPtr,
			    size_t *sizePtr, struct stat *stPtr);
static Elf *		OpenElf(char *image, size_t size);
static int		FindElf(Dwfl_Module *mod, void **userdata,
			    const char *name, Dwarf_Addr base,
			    char **fileName, Elf **elfp);
static int		NoDebuginfo(Dwfl_Module *mod, void **userdata,
			    const char *name, Dwarf_Addr base,
			    const char *fileName, const char *debugLink,
			    GElf_Word crc, char **debugName);
static Dwfl_Module *	ReportElf(SymTable *tablePtr, Dwfl **dwflPtr,
			    Elf *elf, const char *name);
static int		SectionNamed(Elf *elf, const char *name,
			    GElf_Shdr *shPtr, Elf_Scn **scnPtr);
static void		FindDebugFile(SymTable *tablePtr, Elf *elf,
			    const char *path);
static void		LoadAltFile(SymTable *tablePtr, const char *path);
static void		ReadPlt(SymTable *tablePtr, Elf *elf);
static const FuncSym *	FindPlt(const SymTable *tablePtr, uint64_t rel);
static int		CompareU64(const void *a, const void *b);
static void		ReadFdeStarts(SymTable *tablePtr, Elf *elf);
static int		CompareAliases(const void *a, const void *b);
static void		ReadSymbols(SymTable *tablePtr, Elf *elf);
static const Alias *	FindAlias(const SymTable *tablePtr, uint64_t start);
static const SegResult *SymbolAt(SymTable *tablePtr, uint64_t rel);
static void		FreeSegments(SymTable *tablePtr);
static int		FdeStart(SymTable *tablePtr, uint64_t rel,
			    uint64_t *startPtr);
static void		SourceLine(SymTable *tablePtr, uint64_t rel,
			    int *fileIdPtr, int *linePtr);
static void		LoadTable(SymTable *tablePtr, const char *path,
			    const CprofFileId *idPtr,
			    const unsigned char *image, size_t imageSize);
static void		FreeTable(SymTable *tablePtr);

static const Dwfl_Callbacks callbacks = {
    FindElf, NoDebuginfo, dwfl_offline_section_address, NULL
};

/*
 *----------------------------------------------------------------------
 *
 * SameFile --
 *
 *	Whether a stat result is the file of a CprofFileId.
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
    const CprofFileId *idPtr)
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
 * ReadFile --
 *
 *	Read a whole regular file into memory, provided it is still the
 *	file idPtr names (when given). Reading, not mapping: a mapped file
 *	truncated on disk while it is parsed would raise SIGBUS in the
 *	profiled program; and the descriptor is closed at once.
 *
 * Results:
 *	A ckalloc'd copy of the file, its size in *sizePtr, or NULL if it
 *	could not be read whole (missing, too large, short read, another
 *	file). Fills *stPtr, when given, with the file's status.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static char *
ReadFile(
    const char *path,
    const CprofFileId *idPtr,
    size_t *sizePtr,
    struct stat *stPtr)
{
    struct stat st;
    char *buf;
    size_t done = 0, size;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0) {
	return NULL;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0
	    || (unsigned long long) st.st_size > (unsigned long long) INT_MAX
	    || (idPtr != NULL && !SameFile(&st, idPtr))) {
	close(fd);
	return NULL;
    }
    size = (size_t) st.st_size;
    buf = attemptckalloc((unsigned) size);
    while (buf != NULL && done < size) {
	ssize_t n = pread(fd, buf + done, size - done, (off_t) done);

	if (n < 0 && errno == EINTR) {
	    continue;
	}
	if (n <= 0) {
	    ckfree(buf);
	    buf = NULL;
	    break;
	}
	done += (size_t) n;
    }
    close(fd);
    *sizePtr = size;
    if (stPtr != NULL) {
	*stPtr = st;
    }
    return buf;
}

/*
 *----------------------------------------------------------------------
 *
 * OpenElf --
 *
 *	libelf's view of an ELF image in memory: an executable or a shared
 *	object (a separate debug file is one too).
 *
 * Results:
 *	The Elf handle, or NULL if the image is no such file.
 *
 * Side effects:
 *	None; the image must outlive the handle.
 *
 *----------------------------------------------------------------------
 */

static Elf *
OpenElf(
    char *image,
    size_t size)
{
    Elf *elf = elf_memory(image, size);
    GElf_Ehdr eh;

    if (elf == NULL) {
	return NULL;
    }
    if (elf_kind(elf) != ELF_K_ELF || gelf_getehdr(elf, &eh) == NULL
	    || (eh.e_type != ET_DYN && eh.e_type != ET_EXEC)) {
	elf_end(elf);
	return NULL;
    }
    return elf;
}

/*
 *----------------------------------------------------------------------
 *
 * FindElf, NoDebuginfo --
 *
 *	libdwfl's callbacks: the ELF handle of a module is the one
 *	ReportElf made ready (never a file libdwfl opens itself); libdwfl
 *	looks for no debug file (FindDebugFile does, see the header).
 *
 * Results:
 *	-1: no file descriptor.
 *
 * Side effects:
 *	FindElf hands the pending handle over to libdwfl.
 *
 *----------------------------------------------------------------------
 */

static int
FindElf(
    Dwfl_Module *mod,
    void **userdata,
    const char *name,
    Dwarf_Addr base,
    char **fileName,
    Elf **elfp)
{
    SymTable *tablePtr = *userdata;

    (void) mod; (void) name; (void) base; (void) fileName;
    if (tablePtr != NULL) {
	*elfp = tablePtr->pendingElf;
	tablePtr->pendingElf = NULL;
    }
    return -1;
}

static int
NoDebuginfo(
    Dwfl_Module *mod,
    void **userdata,
    const char *name,
    Dwarf_Addr base,
    const char *fileName,
    const char *debugLink,
    GElf_Word crc,
    char **debugName)
{
    (void) mod; (void) userdata; (void) name; (void) base; (void) fileName;
    (void) debugLink; (void) crc; (void) debugName;
    return -1;
}

/*
 *----------------------------------------------------------------------
 *
 * ReportElf --
 *
 *	Make an ELF handle the one module of a new Dwfl, at its link-time
 *	addresses (bias 0: addresses are looked up as offsets from the load
 *	base plus the link-time base, as the loader maps them).
 *
 * Results:
 *	The module, or NULL.
 *
 * Side effects:
 *	The handle belongs to the Dwfl from now on (*dwflPtr; freed on
 *	failure).
 *
 *----------------------------------------------------------------------
 */

static Dwfl_Module *
ReportElf(
    SymTable *tablePtr,
    Dwfl **dwflPtr,
    Elf *elf,
    const char *name)
{
    GElf_Addr low = 0, high = 0, bias = 1;
    Dwfl_Module *mod = NULL;
    Dwfl *dwfl;
    size_t i, phnum;
    int first = 1;
    void **userdata;

    if (elf_getphdrnum(elf, &phnum) != 0) {
	elf_end(elf);
	return NULL;
    }
    for (i = 0; i < phnum; i++) {
	GElf_Phdr ph;

	if (gelf_getphdr(elf, (int) i, &ph) == NULL || ph.p_type != PT_LOAD) {
	    continue;
	}
	if (first) {
	    low = ph.p_vaddr & -(ph.p_align ? ph.p_align : 1);
	    first = 0;
	}
	if (ph.p_vaddr + ph.p_memsz > high) {
	    high = ph.p_vaddr + ph.p_memsz;
	}
    }
    dwfl = first ? NULL : dwfl_begin(&callbacks);
    if (dwfl == NULL) {
	elf_end(elf);
	return NULL;
    }
    dwfl_report_begin(dwfl);
    mod = dwfl_report_module(dwfl, name, low, high > low ? high : low + 1);
    dwfl_report_end(dwfl, NULL, NULL);
    if (mod != NULL) {
	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL,
		NULL);
	*userdata = tablePtr;
	tablePtr->pendingElf = elf;
	if (dwfl_module_getelf(mod, &bias) != elf || bias != 0) {
	    mod = NULL;
	}
    }
    if (tablePtr->pendingElf != NULL) {
	elf_end(tablePtr->pendingElf);
	tablePtr->pendingElf = NULL;
    }
    if (mod == NULL) {
	dwfl_end(dwfl);
	return NULL;
    }
    *dwflPtr = dwfl;
    return mod;
}

/*
 *----------------------------------------------------------------------
 *
 * SectionNamed --
 *
 *	Look up a section with contents in the file (not SHT_NOBITS, as
 *	the code sections of a separate debug file are) by name.
 *
 * Results:
 *	1 if found (*shPtr and *scnPtr, when given, filled), else 0.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static int
SectionNamed(
    Elf *elf,
    const char *name,
    GElf_Shdr *shPtr,
    Elf_Scn **scnPtr)
{
    Elf_Scn *scn = NULL;
    size_t strndx;

    if (elf_getshdrstrndx(elf, &strndx) != 0) {
	return 0;
    }
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
	GElf_Shdr sh;
	const char *s;

	if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type == SHT_NOBITS
		|| (s = elf_strptr(elf, strndx, sh.sh_name)) == NULL
		|| strcmp(s, name) != 0) {
	    continue;
	}
	if (shPtr != NULL) {
	    *shPtr = sh;
	}
	if (scnPtr != NULL) {
	    *scnPtr = scn;
	}
	return 1;
    }
    return 0;
}

#define HasDwarf(elf) \
    (SectionNamed((elf), ".debug_info", NULL, NULL) \
	    || SectionNamed((elf), ".zdebug_info", NULL, NULL))

/*
 *----------------------------------------------------------------------
 *
 * FindDebugFile --
 *
 *	For a file without .symtab or without DWARF: its separate debug
 *	file, looked for where gdb and libdwfl look: by build-id,
 *	/usr/lib/debug/.build-id/xx/rest.debug; by .gnu_debuglink, in the
 *	file's directory, its .debug subdirectory and the same directory
 *	under /usr/lib/debug. A candidate must have the file's build-id,
 *	or, the file having none, the CRC the link records; and the
 *	symbols or lines the file lacks.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	On success, the debug file is read into memory and reported
 *	(tablePtr->debugImage, debugDwfl).
 *
 *----------------------------------------------------------------------
 */

static void
FindDebugFile(
    SymTable *tablePtr,
    Elf *elf,
    const char *path)
{
    int hasSymtab = SectionNamed(elf, ".symtab", NULL, NULL);
    int hasDwarf = HasDwarf(elf);
    char *candidates[4], *real = NULL, *dir = NULL;
    const char *link;
    GElf_Word crc = 0;
    struct stat mainSt;
    int n = 0, i;

    if (hasSymtab && hasDwarf) {
	return;
    }
    if (tablePtr->buildIdLen >= 2) {
	Tcl_DString ds;
	char hex[4];

	Tcl_DStringInit(&ds);
	Tcl_DStringAppend(&ds, DEBUG_DIR "/.build-id/", -1);
	for (i = 0; i < tablePtr->buildIdLen; i++) {
	    snprintf(hex, sizeof(hex), "%02x", tablePtr->buildId[i]);
	    Tcl_DStringAppend(&ds, hex, 2);
	    if (i == 0) {
		Tcl_DStringAppend(&ds, "/", 1);
	    }
	}
	Tcl_DStringAppend(&ds, ".debug", -1);
	candidates[n++] = ckalloc(Tcl_DStringLength(&ds) + 1);
	strcpy(candidates[n-1], Tcl_DStringValue(&ds));
	Tcl_DStringFree(&ds);
    }
    link = dwelf_elf_gnu_debuglink(elf, &crc);
    if (link != NULL && link[0] != '\0' && strchr(link, '/') == NULL
	    && path != NULL && (real = realpath(path, NULL)) != NULL
	    && stat(real, &mainSt) == 0) {
	size_t dirLen = strrchr(real, '/') - real;

	dir = ckalloc(dirLen + 1);
	memcpy(dir, real, dirLen);
	dir[dirLen] = '\0';
	candidates[n++] = ckalloc(dirLen + strlen(link) + 2);
	sprintf(candidates[n-1], "%s/%s", dir, link);
	candidates[n++] = ckalloc(dirLen + strlen(link) + 9);
	sprintf(candidates[n-1], "%s/.debug/%s", dir, link);
	candidates[n++] = ckalloc(sizeof(DEBUG_DIR) + dirLen
		+ strlen(link) + 2);
	sprintf(candidates[n-1], "%s%s/%s", DEBUG_DIR, dir, link);
    }

    for (i = 0; i < n && tablePtr->debugDwfl == NULL; i++) {
	struct stat st;
	const void *id;
	size_t size;
	char *image = ReadFile(candidates[i], NULL, &size, &st);
	Elf *dbg;
	ssize_t idLen;
	int ok;

	if (image == NULL) {
	    continue;
	}
	if (real != NULL && st.st_dev == mainSt.st_dev
		&& st.st_ino == mainSt.st_ino) {
	    ckfree(image);		/* The link names the file itself. */
	    continue;
	}
	dbg = OpenElf(image, size);
	if (dbg == NULL) {
	    ckfree(image);
	    continue;
	}
	idLen = dwelf_elf_gnu_build_id(dbg, &id);
	if (tablePtr->buildIdLen > 0) {
	    ok = idLen == tablePtr->buildIdLen
		    && memcmp(id, tablePtr->buildId, idLen) == 0;
	} else {
	    ok = link != NULL && idLen <= 0
		    && (GElf_Word) crc32(0, (const Bytef *) image,
			    (uInt) size) == crc;
	}
	ok = ok && ((!hasSymtab && SectionNamed(dbg, ".symtab", NULL, NULL))
		|| (!hasDwarf && HasDwarf(dbg)));
	if (!ok) {
	    elf_end(dbg);
	    ckfree(image);
	    continue;
	}
	tablePtr->debugImage = image;
	tablePtr->debugPath = ckalloc(strlen(candidates[i]) + 1);
	strcpy(tablePtr->debugPath, candidates[i]);
	tablePtr->debugMod = ReportElf(tablePtr, &tablePtr->debugDwfl, dbg,
		"debug");
	if (tablePtr->debugMod == NULL) {
	    ckfree(image);
	    tablePtr->debugImage = NULL;
	}
    }
    for (i = 0; i < n; i++) {
	ckfree(candidates[i]);
    }
    if (dir != NULL) {
	ckfree(dir);
    }
    if (real != NULL) {
	free(real);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * LoadAltFile --
 *
 *	The supplementary file (.gnu_debugaltlink, made by dwz) of the
 *	file whose DWARF gives lines: read here, where libdw would find
 *	and map it (by build-id under /usr/lib/debug/.build-id, or the
 *	link's absolute path), and also beside that file for a relative
 *	link, as gdb does; used with the build-id the link records.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Reads the module's DWARF; may read the supplementary file and give
 *	it to libdw (dwarf_setalt).
 *
 *----------------------------------------------------------------------
 */

static void
LoadAltFile(
    SymTable *tablePtr,
    const char *path)
{
    Dwarf_Addr bias;
    Dwarf *dw = dwfl_module_getdwarf(tablePtr->lineMod, &bias);
    const char *name;
    const void *id, *altId;
    Tcl_DString ds[3];
    ssize_t idLen;
    int i, n = 0;

    if (dw == NULL || (idLen = dwelf_dwarf_gnu_debugaltlink(dw, &name,
	    &id)) <= 0 || name[0] == '\0') {
	return;
    }
    if (idLen >= 2) {
	const unsigned char *b = id;
	char hex[4];

	Tcl_DStringInit(&ds[n]);
	Tcl_DStringAppend(&ds[n], DEBUG_DIR "/.build-id/", -1);
	for (i = 0; i < idLen; i++) {
	    snprintf(hex, sizeof(hex), i == 0 ? "%02x/" : "%02x", b[i]);
	    Tcl_DStringAppend(&ds[n], hex, -1);
	}
	Tcl_DStringAppend(&ds[n++], ".debug", -1);
    }
    Tcl_DStringInit(&ds[n]);
    if (name[0] != '/') {
	const char *slash = path ? strrchr(path, '/') : NULL;

	if (slash == NULL) {
	    Tcl_DStringFree(&ds[n]);
	    goto search;
	}
	Tcl_DStringAppend(&ds[n], path, (int) (slash - path + 1));
    }
    Tcl_DStringAppend(&ds[n++], name, -1);

  search:
    for (i = 0; i < n; i++) {
	size_t size;
	char *image = tablePtr->altImage == NULL
		? ReadFile(Tcl_DStringValue(&ds[i]), NULL, &size, NULL) : NULL;
	Elf *elf;
	Dwarf *alt;

	Tcl_DStringFree(&ds[i]);
	if (image == NULL) {
	    continue;
	}
	elf = elf_memory(image, size);
	if (elf == NULL || elf_kind(elf) != ELF_K_ELF
		|| dwelf_elf_gnu_build_id(elf, &altId) != idLen
		|| memcmp(altId, id, idLen) != 0
		|| (alt = dwarf_begin_elf(elf, DWARF_C_READ, NULL)) == NULL) {
	    if (elf != NULL) {
		elf_end(elf);
	    }
	    ckfree(image);
	    continue;
	}
	dwarf_setalt(dw, alt);
	tablePtr->altImage = image;
	tablePtr->altElf = elf;
	tablePtr->altDwarf = alt;
    }
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

static void
ReadPlt(
    SymTable *tablePtr,
    Elf *elf)
{
    GElf_Ehdr eh;
    GElf_Shdr relaSh, pltSh, dynSh;
    Elf_Scn *relaScn, *dynScn;
    Elf_Data *relaData, *dynData;
    Tcl_DString pool;
    FuncSym *stubs;
    uint64_t count, i, stride = 16, first = 1;
    int n = 0;

    if (gelf_getehdr(elf, &eh) == NULL || eh.e_machine != EM_X86_64
	    || !SectionNamed(elf, ".rela.plt", &relaSh, &relaScn)
	    || relaSh.sh_type != SHT_RELA) {
	return;
    }
    if (SectionNamed(elf, ".plt.sec", &pltSh, NULL)) {
	first = 0;
    } else if (!SectionNamed(elf, ".plt", &pltSh, NULL)) {
	return;
    }
    if ((dynScn = elf_getscn(elf, relaSh.sh_link)) == NULL
	    || gelf_getshdr(dynScn, &dynSh) == NULL
	    || dynSh.sh_type != SHT_DYNSYM
	    || (relaData = elf_getdata(relaScn, NULL)) == NULL
	    || (dynData = elf_getdata(dynScn, NULL)) == NULL) {
	return;
    }
    count = relaSh.sh_entsize ? relaSh.sh_size / relaSh.sh_entsize : 0;
    if (count == 0 || count > MAX_ENTRIES) {
	return;
    }
    stubs = (FuncSym *) ckalloc(count * sizeof(FuncSym));
    Tcl_DStringInit(&pool);
    for (i = 0; i < count; i++) {
	GElf_Rela r;
	GElf_Sym sym;
	uint64_t start = pltSh.sh_addr + (i + first) * stride;
	const char *name;
	size_t len;

	if (gelf_getrela(relaData, (int) i, &r) == NULL
		|| GELF_R_TYPE(r.r_info) != R_X86_64_JUMP_SLOT
		|| GELF_R_SYM(r.r_info) == 0
		|| start + stride > pltSh.sh_addr + pltSh.sh_size
		|| gelf_getsym(dynData, (int) GELF_R_SYM(r.r_info), &sym)
		    == NULL
		|| (name = elf_strptr(elf, dynSh.sh_link, sym.st_name))
		    == NULL) {
	    continue;
	}
	len = strcspn(name, "@");
	if (len == 0 || len > 1024) {
	    continue;
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
 * ReadFdeStarts --
 *
 *	The function starts of the binary search table of .eh_frame_hdr
 *	(PT_GNU_EH_FRAME): a version byte, three encoding bytes, the
 *	encoded .eh_frame pointer and entry count, then pairs (function
 *	start, FDE address) relative to the table's start, in the layout
 *	every linker writes (4-byte signed pairs, DW_EH_PE_datarel |
 *	DW_EH_PE_sdata4); other layouts are not read.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Fills fdeStarts (link-time addresses, sorted).
 *
 *----------------------------------------------------------------------
 */

static int
CompareU64(
    const void *a,
    const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

    return x < y ? -1 : x > y;
}

static void
ReadFdeStarts(
    SymTable *tablePtr,
    Elf *elf)
{
    GElf_Phdr ph;
    Elf_Data *data = NULL;
    const unsigned char *p;
    uint32_t count, k;
    size_t i, phnum;
    int sorted = 1;

    if (elf_getphdrnum(elf, &phnum) != 0) {
	return;
    }
    for (i = 0; i < phnum && data == NULL; i++) {
	if (gelf_getphdr(elf, (int) i, &ph) != NULL
		&& ph.p_type == PT_GNU_EH_FRAME && ph.p_filesz >= 12) {
	    data = elf_getdata_rawchunk(elf, (int64_t) ph.p_offset,
		    ph.p_filesz, ELF_T_BYTE);
	}
    }
    if (data == NULL || data->d_size < 12) {
	return;
    }
    p = data->d_buf;
    if (p[0] != 1 || ((p[1] & 0x0f) != PE_SDATA4
	    && (p[1] & 0x0f) != PE_UDATA4) || p[2] != PE_UDATA4 || p[3] != (PE_DATAREL | PE_SDATA4)) {
	return;
    }
    memcpy(&count, p + 8, 4);
    if (count == 0 || count > MAX_ENTRIES || (data->d_size - 12) / 8 < count) {
	return;
    }
    tablePtr->fdeStarts = (uint64_t *) ckalloc(count * sizeof(uint64_t));
    for (k = 0; k < count; k++) {
	int32_t rel;

	memcpy(&rel, p + 12 + 8 * (size_t) k, 4);
	tablePtr->fdeStarts[k] = ph.p_vaddr + (int64_t) rel;
	if (k > 0 && tablePtr->fdeStarts[k] < tablePtr->fdeStarts[k-1]) {
	    sorted = 0;
	}
    }
    if (!sorted) {
	qsort(tablePtr->fdeStarts, count, sizeof(uint64_t), CompareU64);
    }
    tablePtr->numFdes = (int) count;
}

/*
 *----------------------------------------------------------------------
 *
 * ReadSymbols, CompareAliases, FindAlias --
 *
 *	Go once through the symbols libdwfl looks at (those of the
 *	auxiliary MiniDebugInfo table included) for:
 *	- the bounds of the segments within which dwfl_module_addrinfo
 *	  gives one answer: the start and end of every symbol, and the
 *	  bounds of the allocated sections (a sizeless symbol is taken only
 *	  within its section);
 *	- the name shown for each function start: libdwfl takes the first
 *	  of a function's aliases in the table (__libc_malloc, _IO_puts),
 *	  a profile shows the name programs call (malloc, puts): a global
 *	  or weak alias before a local one, then the fewest leading
 *	  underscores, then the shortest name.
 *
 * Results:
 *	None.
 *
 * Side effects:
 *	Fills breaks and aliases; initializes the segment cache.
 *
 *----------------------------------------------------------------------
 */

static int
CompareAliases(
    const void *a,
    const void *b)
{
    const Alias *a1 = a, *a2 = b;

    if (a1->start != a2->start) {
	return a1->start < a2->start ? -1 : 1;
    }
    if (a1->rank != a2->rank) {
	return a1->rank - a2->rank;
    }
    if (a1->underscores != a2->underscores) {
	return a1->underscores - a2->underscores;
    }
    if (a1->nameLen != a2->nameLen) {
	return a1->nameLen - a2->nameLen;
    }
    return (a1->name > a2->name) - (a1->name < a2->name);
}

static void
ReadSymbols(
    SymTable *tablePtr,
    Elf *elf)
{
    int n = dwfl_module_getsymtab(tablePtr->symMod), i, m = 0, k = 0, cap;
    Elf_Scn *scn = NULL;
    uint64_t *b;
    Alias *al;

    Tcl_InitHashTable(&tablePtr->segs, TCL_ONE_WORD_KEYS);
    tablePtr->segsInit = 1;
    if (n < 0) {
	n = 0;
    }
    cap = 2 * n + 64;
    b = (uint64_t *) ckalloc(cap * sizeof(uint64_t));
    al = (Alias *) ckalloc((n + 1) * sizeof(Alias));
    for (i = 1; i < n; i++) {
	GElf_Sym sym;
	GElf_Addr addr;
	const char *name = dwfl_module_getsym_info(tablePtr->symMod, i, &sym,
		&addr, NULL, NULL, NULL);
	int type = GELF_ST_TYPE(sym.st_info);

	if (name == NULL || name[0] == '\0' || sym.st_shndx == SHN_UNDEF) {
	    continue;
	}
	b[m++] = addr;
	if (sym.st_size > 0) {
	    b[m++] = addr + sym.st_size;
	}
	if (type == STT_FUNC || type == STT_GNU_IFUNC) {
	    Alias *aPtr = &al[k];

	    aPtr->start = addr;
	    aPtr->name = name;
	    aPtr->nameLen = (int) strcspn(name, "@");
	    aPtr->rank = GELF_ST_BIND(sym.st_info) == STB_LOCAL;
	    for (aPtr->underscores = 0; name[aPtr->underscores] == '_';
		    aPtr->underscores++) {
		/* Count. */
	    }
	    if (aPtr->nameLen > 0 && aPtr->nameLen <= 65535) {
		k++;
	    }
	}
    }
    while (elf != NULL && (scn = elf_nextscn(elf, scn)) != NULL) {
	GElf_Shdr sh;

	if (gelf_getshdr(scn, &sh) == NULL || !(sh.sh_flags & SHF_ALLOC)) {
	    continue;
	}
	if (m + 2 > cap) {
	    cap *= 2;
	    b = (uint64_t *) ckrealloc(b, cap * sizeof(uint64_t));
	}
	b[m++] = sh.sh_addr;
	b[m++] = sh.sh_addr + sh.sh_size;
    }
    qsort(b, m, sizeof(uint64_t), CompareU64);
    for (i = 0, n = 0; i < m; i++) {
	if (n == 0 || b[i] != b[n-1]) {
	    b[n++] = b[i];
	}
    }
    tablePtr->breaks = b;
    tablePtr->numBreaks = n;

    qsort(al, k, sizeof(Alias), CompareAliases);
    for (i = 0, n = 0; i < k; i++) {
	if (n == 0 || al[i].start != al[n-1].start) {
	    al[n++] = al[i];
	}
    }
    tablePtr->aliases = al;
    tablePtr->numAliases = n;
}

static const Alias *
FindAlias(
    const SymTable *tablePtr,
    uint64_t start)
{
    int lo = 0, hi = tablePtr->numAliases;

    while (lo < hi) {
	int mid = lo + (hi - lo) / 2;

	if (tablePtr->aliases[mid].start < start) {
	    lo = mid + 1;
	} else {
	    hi = mid;
	}
    }
    if (lo < tablePtr->numAliases && tablePtr->aliases[lo].start == start) {
	return &tablePtr->aliases[lo];
    }
    return NULL;
}

/*
 *----------------------------------------------------------------------
 *
 * SymbolAt --
 *
 *	The function symbol covering a link-time address, as libdwfl
 *	chooses it, asked once per segment. Called with the table's mutex
 *	held.
 *
 * Results:
 *	The segment's answer (its name NULL when no function symbol
 *	covers the address), or NULL when the table has no symbols.
 *
 * Side effects:
 *	May ask libdwfl (reading the symbol tables the first time) and
 *	cache the answer.
 *
 *----------------------------------------------------------------------
 */

/*
 *----------------------------------------------------------------------
 *
 * CprofMappingSymbol --
 *
 *	Whether a symbol is a mapping symbol: the local, untyped, sizeless
 *	markers the ARM and AArch64 assemblers put where code or data
 *	starts ("$x", "$d", AArch32's "$a" and "$t", each also as
 *	"$x.<anything>"), and RISC-V's "$x<isa>". They name no function:
 *	a symbolizer that took the nearest symbol below an address would
 *	call a PLT stub or any code no sized symbol covers "$x" (perf,
 *	eu-addr2line and gdb skip them; libdwfl skips only "$d"). The
 *	profiles made in the process name functions by STT_FUNC symbols
 *	only (SymbolAt), which no mapping symbol is; the attach layer
 *	(remotenative.c) takes what libdwfl gives and asks this.
 *
 *----------------------------------------------------------------------
 */

int
CprofMappingSymbol(
    const char *name,
    int type,
    uint64_t size)
{
    if (name == NULL || name[0] != '$' || type != STT_NOTYPE || size != 0
	    || strchr("adtx", name[1]) == NULL || name[1] == '\0') {
	return 0;
    }
    return name[2] == '\0' || name[2] == '.'
	    || (name[1] == 'x' && name[2] >= 'a' && name[2] <= 'z');
}

static const SegResult *
SymbolAt(
    SymTable *tablePtr,
    uint64_t rel)
{
    int lo = 0, hi = tablePtr->numBreaks, isNew;
    Tcl_HashEntry *hPtr;
    SegResult *segPtr;
    uintptr_t slot;

    if (tablePtr->symMod == NULL) {
	return NULL;
    }
    while (lo < hi) {
	int mid = lo + (hi - lo) / 2;

	if (tablePtr->breaks[mid] <= rel) {
	    lo = mid + 1;
	} else {
	    hi = mid;
	}
    }
    slot = (lo == 0) ? 0 : (tablePtr->breaks[lo-1] == rel)
	    ? 2 * (uintptr_t) lo - 1 : 2 * (uintptr_t) lo;
    hPtr = Tcl_CreateHashEntry(&tablePtr->segs, (void *) slot, &isNew);
    if (!isNew) {
	return Tcl_GetHashValue(hPtr);
    }
    segPtr = (SegResult *) ckalloc(sizeof(SegResult));
    memset(segPtr, 0, sizeof(SegResult));
    segPtr->known = 1;
    {
	GElf_Sym sym;
	GElf_Off off = 0;
	const char *name;

	memset(&sym, 0, sizeof(sym));
	name = dwfl_module_addrinfo(tablePtr->symMod, rel, &off, &sym, NULL,
		NULL, NULL);
	if (name != NULL && (GELF_ST_TYPE(sym.st_info) == STT_FUNC
		|| GELF_ST_TYPE(sym.st_info) == STT_GNU_IFUNC) && off <= rel) {
	    const Alias *aliasPtr = FindAlias(tablePtr, rel - off);
	    size_t len = strcspn(name, "@");

	    if (aliasPtr != NULL) {
		name = aliasPtr->name;
		len = aliasPtr->nameLen;
	    }
	    if (len > 0 && len <= 65535) {
		segPtr->name = name;
		segPtr->nameLen = (int) len;
		segPtr->start = rel - off;
	    }
	}
    }
    Tcl_SetHashValue(hPtr, segPtr);
    return segPtr;
}

static void
FreeSegments(
    SymTable *tablePtr)
{
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    if (!tablePtr->segsInit) {
	return;
    }
    for (hPtr = Tcl_FirstHashEntry(&tablePtr->segs, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	ckfree(Tcl_GetHashValue(hPtr));
    }
    Tcl_DeleteHashTable(&tablePtr->segs);
    tablePtr->segsInit = 0;
}

/*
 *----------------------------------------------------------------------
 *
 * FdeStart --
 *
 *	The start of the function a link-time address is in, from the
 *	unwind tables: the last function start of .eh_frame_hdr at or
 *	before it, if libdw's call frame information covers the address
 *	(else it lies in a gap between functions). Called with the table's
 *	mutex held.
 *
 * Results:
 *	1 and *startPtr, or 0.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

static int
FdeStart(
    SymTable *tablePtr,
    uint64_t rel,
    uint64_t *startPtr)
{
    int lo = 0, hi = tablePtr->numFdes;
    Dwarf_Frame *frame;

    if (tablePtr->cfi == NULL) {
	return 0;
    }
    while (lo < hi) {
	int mid = lo + (hi - lo) / 2;

	if (tablePtr->fdeStarts[mid] <= rel) {
	    lo = mid + 1;
	} else {
	    hi = mid;
	}
    }
    if (lo == 0 || dwarf_cfi_addrframe(tablePtr->cfi,
	    rel - tablePtr->cfiBias, &frame) != 0) {
	return 0;
    }
    free(frame);
    *startPtr = tablePtr->fdeStarts[lo-1];
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * SourceLine --
 *
 *	The C source file and line of a link-time address, from the DWARF
 *	line table: where the instruction at the address comes from (the
 *	innermost inlined function's line when it was inlined). Called
 *	with the table's mutex held.
 *
 * Results:
 *	*fileIdPtr (an interned path: relative to the compilation
 *	directory made absolute, "/./" and "//" removed; -1 if unknown) and
 *	*linePtr (0 if unknown).
 *
 * Side effects:
 *	May read the module's DWARF (first use) and intern a file name.
 *
 *----------------------------------------------------------------------
 */

static void
SourceLine(
    SymTable *tablePtr,
    uint64_t rel,
    int *fileIdPtr,
    int *linePtr)
{
    Dwfl_Line *dwLinePtr;
    const char *file, *dir;
    char *p, *q;
    Tcl_DString ds;
    int line = 0;

    *fileIdPtr = -1;
    *linePtr = 0;
    if (tablePtr->lineMod != NULL && !tablePtr->dwarfRead) {
	tablePtr->dwarfRead = 1;
	__atomic_add_fetch(&dwarfOpened, 1, __ATOMIC_RELAXED);
	LoadAltFile(tablePtr, tablePtr->altFrom);
    }
    if (tablePtr->lineMod == NULL
	    || (dwLinePtr = dwfl_module_getsrc(tablePtr->lineMod, rel)) == NULL
	    || (file = dwfl_lineinfo(dwLinePtr, NULL, &line, NULL, NULL,
		NULL)) == NULL || line <= 0 || file[0] == '\0') {
	return;
    }
    Tcl_DStringInit(&ds);
    if (file[0] != '/' && (dir = dwfl_line_comp_dir(dwLinePtr)) != NULL
	    && dir[0] == '/') {
	Tcl_DStringAppend(&ds, dir, -1);
	Tcl_DStringAppend(&ds, "/", 1);
    }
    Tcl_DStringAppend(&ds, file, -1);
    for (p = q = Tcl_DStringValue(&ds); *p != '\0'; p++) {
	if (p[0] == '/' && p[1] == '.' && p[2] == '/') {
	    p++;
	} else if (!(p[0] == '/' && p[1] == '/')) {
	    *q++ = *p;
	}
    }
    *fileIdPtr = CprofNameIntern(Tcl_DStringValue(&ds),
	    (int) (q - Tcl_DStringValue(&ds)));
    Tcl_DStringFree(&ds);
    *linePtr = line;
}

/*
 *----------------------------------------------------------------------
 *
 * LoadTable --
 *
 *	Read a file (provided it is still the file idPtr names), or copy
 *	the vDSO's image, and make its tables: libdwfl's module (and its
 *	debug file's), the PLT stubs, the function starts, the segments.
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
LoadTable(
    SymTable *tablePtr,
    const char *path,
    const CprofFileId *idPtr,
    const unsigned char *image,
    size_t imageSize)
{
    Dwfl_Module *debugMod;
    GElf_Addr bias;
    const void *id;
    ssize_t idLen;
    size_t size = imageSize;
    char *buf;
    Elf *elf;
    int hasSymtab, hasDwarf;

    if (path != NULL) {
	buf = ReadFile(path, idPtr, &size, NULL);
    } else {
	buf = attemptckalloc((unsigned) imageSize);
	if (buf != NULL) {
	    memcpy(buf, image, imageSize);
	}
    }
    if (buf == NULL) {
	return;
    }
    elf = OpenElf(buf, size);
    if (elf == NULL) {
	ckfree(buf);
	return;
    }
    tablePtr->image = buf;
    idLen = dwelf_elf_gnu_build_id(elf, &id);
    if (idLen > 0) {
	tablePtr->buildIdLen = idLen > CPROF_BUILD_ID_MAX ? CPROF_BUILD_ID_MAX
		: (int) idLen;
	memcpy(tablePtr->buildId, id, tablePtr->buildIdLen);
    }
    hasSymtab = SectionNamed(elf, ".symtab", NULL, NULL);
    hasDwarf = HasDwarf(elf);
    ReadPlt(tablePtr, elf);
    ReadFdeStarts(tablePtr, elf);
    FindDebugFile(tablePtr, elf, path);

    tablePtr->mainMod = ReportElf(tablePtr, &tablePtr->dwfl, elf,
	    path ? path : "[vdso]");
    if (tablePtr->mainMod == NULL) {
	return;
    }
    debugMod = tablePtr->debugMod;
    tablePtr->symMod = tablePtr->mainMod;
    if (!hasSymtab && debugMod != NULL) {
	Elf *dbg = dwfl_module_getelf(debugMod, &bias);

	if (dbg != NULL && SectionNamed(dbg, ".symtab", NULL, NULL)) {
	    tablePtr->symMod = debugMod;
	}
    }
    tablePtr->lineMod = hasDwarf ? tablePtr->mainMod : debugMod;
    if (tablePtr->lineMod != NULL) {
	/*
	 * The DWARF itself is opened at the first line asked for
	 * (SourceLine): libdw inflates every compressed debug section when
	 * it opens them (libc's debug file: ~0.1 s of CPU and ~12 MB), and
	 * a profile made without -lines 1 asks for none.
	 */

	const char *from = hasDwarf ? path : tablePtr->debugPath;

	if (from != NULL) {
	    tablePtr->altFrom = ckalloc(strlen(from) + 1);
	    strcpy(tablePtr->altFrom, from);
	}
    }
    tablePtr->cfi = dwfl_module_eh_cfi(tablePtr->mainMod,
	    &tablePtr->cfiBias);
    ReadSymbols(tablePtr, dwfl_module_getelf(tablePtr->symMod, &bias));
}

/*
 *----------------------------------------------------------------------
 *
 * FreeTable --
 *
 *	Free a table: libdwfl's handles (which end the ELF handles), then
 *	the images they read.
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
    if (tablePtr->debugDwfl != NULL) {
	dwfl_end(tablePtr->debugDwfl);
    }
    if (tablePtr->dwfl != NULL) {
	dwfl_end(tablePtr->dwfl);
    }
    if (tablePtr->image != NULL) {
	ckfree(tablePtr->image);
    }
    if (tablePtr->debugImage != NULL) {
	ckfree(tablePtr->debugImage);
	ckfree(tablePtr->debugPath);
    }
    if (tablePtr->altFrom != NULL) {
	ckfree(tablePtr->altFrom);
    }
    if (tablePtr->altDwarf != NULL) {
	dwarf_end(tablePtr->altDwarf);
    }
    if (tablePtr->altElf != NULL) {
	elf_end(tablePtr->altElf);
    }
    if (tablePtr->altImage != NULL) {
	ckfree(tablePtr->altImage);
    }
    FreeSegments(tablePtr);
    if (tablePtr->aliases != NULL) {
	ckfree(tablePtr->aliases);
    }
    if (tablePtr->breaks != NULL) {
	ckfree(tablePtr->breaks);
    }
    if (tablePtr->fdeStarts != NULL) {
	ckfree(tablePtr->fdeStarts);
    }
    if (tablePtr->plts != NULL) {
	ckfree(tablePtr->plts);
	ckfree(tablePtr->pltNames);
    }
    Tcl_MutexFinalize(&tablePtr->mutex);
    ckfree(tablePtr->key);
    ckfree(tablePtr);
}

/*
 * The table of a key, with a reference taken, or NULL. Under tableMutex.
 */

static SymTable *
RefTableLocked(
    const char *key)
{
    SymTable *tablePtr;

    for (tablePtr = tableList; tablePtr != NULL;
	    tablePtr = tablePtr->nextPtr) {
	if (strcmp(tablePtr->key, key) == 0) {
	    if (tablePtr->refCount++ == 0) {
		idleTables--;
	    }
	    break;
	}
    }
    return tablePtr;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSymFileAcquire, CprofSymFileRelease --
 *
 *	Take a reference to the shared table of a file (path) or of an
 *	in-memory image, reading it if no symbolizer has; give one back.
 *	Reading happens outside tableMutex; of two threads reading the same
 *	file at once, the second one's result is dropped. Of the tables no
 *	module uses, the SPARE_TABLES most recently released are kept.
 *
 * Results:
 *	CprofSymFileAcquire: the table (possibly empty, never NULL).
 *
 * Side effects:
 *	May read a file, free unused tables.
 *
 *----------------------------------------------------------------------
 */

CprofSymTable *
CprofSymFileAcquire(
    const char *key,
    const char *path,
    const CprofFileId *idPtr,
    const unsigned char *image,
    size_t imageSize)
{
    static int elfReady = 0;
    SymTable *tablePtr, *newPtr;
    size_t keyLen = strlen(key);

    Tcl_MutexLock(&tableMutex);
    if (!elfReady) {
	elf_version(EV_CURRENT);
	elfReady = 1;
    }
    tablePtr = RefTableLocked(key);
    if (tablePtr != NULL) {
	Tcl_MutexUnlock(&tableMutex);
	return tablePtr;
    }
    Tcl_MutexUnlock(&tableMutex);

    newPtr = (SymTable *) ckalloc(sizeof(SymTable));
    memset(newPtr, 0, sizeof(SymTable));
    newPtr->key = ckalloc(keyLen + 1);
    memcpy(newPtr->key, key, keyLen + 1);
    LoadTable(newPtr, path, idPtr, image, imageSize);

    Tcl_MutexLock(&tableMutex);
    tablePtr = RefTableLocked(key);
    if (tablePtr != NULL) {
	Tcl_MutexUnlock(&tableMutex);
	FreeTable(newPtr);
	return tablePtr;
    }
    newPtr->refCount = 1;
    newPtr->nextPtr = tableList;
    tableList = newPtr;
    Tcl_MutexUnlock(&tableMutex);
    return newPtr;
}
/*
 * Whether a table of that key is read (held or spare); any thread.
 */

int
CprofSymFileCached(
    const char *key)
{
    SymTable *tablePtr;
    int found = 0;

    Tcl_MutexLock(&tableMutex);
    for (tablePtr = tableList; tablePtr != NULL;
	    tablePtr = tablePtr->nextPtr) {
	if (strcmp(tablePtr->key, key) == 0) {
	    found = 1;
	    break;
	}
    }
    Tcl_MutexUnlock(&tableMutex);
    return found;
}

void
CprofSymFileRelease(
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
 * CprofSymTableBuildId --
 *
 *	The build-id of a table's file.
 *
 * Results:
 *	The bytes, their number in *lenPtr (0: the file has none).
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

const unsigned char *
CprofSymTableBuildId(
    CprofSymTable *tablePtr,
    int *lenPtr)
{
    *lenPtr = tablePtr->buildIdLen;
    return tablePtr->buildId;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSymFileLookup --
 *
 *	What a table says of a link-time address: the PLT stub, else the
 *	function symbol, else the function start from the unwind tables
 *	it is in; and, when wantLine, its C source line (the first line
 *	asked of a table opens its DWARF).
 *
 * Results:
 *	Fills *foundPtr.
 *
 * Side effects:
 *	May read the file's symbols or DWARF (first use) and intern a file
 *	name.
 *
 *----------------------------------------------------------------------
 */

void
CprofSymFileLookup(
    CprofSymTable *tablePtr,
    uint64_t rel,
    int wantLine,
    CprofSymFound *foundPtr)
{
    const FuncSym *pltPtr = FindPlt(tablePtr, rel);

    memset(foundPtr, 0, sizeof(CprofSymFound));
    foundPtr->nameLen = -1;
    Tcl_MutexLock(&tablePtr->mutex);
    if (pltPtr != NULL) {
	foundPtr->how = CPROF_FOUND_SYMBOL;
	foundPtr->name = tablePtr->pltNames + pltPtr->name;
	foundPtr->start = pltPtr->start;
    } else {
	const SegResult *segPtr = SymbolAt(tablePtr, rel);

	if (segPtr != NULL && segPtr->name != NULL) {
	    foundPtr->how = CPROF_FOUND_SYMBOL;
	    foundPtr->name = segPtr->name;
	    foundPtr->nameLen = segPtr->nameLen;
	    foundPtr->start = segPtr->start;
	} else if (FdeStart(tablePtr, rel, &foundPtr->start)) {
	    foundPtr->how = CPROF_FOUND_START;
	}
    }
    if (wantLine) {
	SourceLine(tablePtr, rel, &foundPtr->fileId, &foundPtr->line);
    }
    Tcl_MutexUnlock(&tablePtr->mutex);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofSymFileDwarfOpened --
 *
 *	How many tables have opened their DWARF (for line lookups) in this
 *	process: tclcprof::debug dwarf, for the tests of -lines.
 *
 * Results:
 *	The count.
 *
 * Side effects:
 *	None.
 *
 *----------------------------------------------------------------------
 */

int
CprofSymFileDwarfOpened(void)
{
    return __atomic_load_n(&dwarfOpened, __ATOMIC_RELAXED);
}
