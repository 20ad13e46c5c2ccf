/*
 * remoteinterp.c --
 *
 *	Attach layer (see remote.c): the target's libtcl (the same build
 *	as this process's: same file or GNU build-id) and its interpreters,
 *	found by searching its writable memory for the address of libtcl's
 *	stubs table, which every Interp holds in stubTable.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "remoteInt.h"

#ifdef CPROF_RM_SUPPORTED

/*
 *----------------------------------------------------------------------
 *
 * CprofRmOwnLibtcl --
 *
 *	This process's libtcl: its path, identity, load address and the
 *	offsets of tclStubs and TclNRRunCallbacks in it.
 *
 *----------------------------------------------------------------------
 */

int
CprofRmOwnLibtcl(
    Tcl_Interp *interp,
    const char **pathPtr,
    uintptr_t *baseOffStubs,
    uintptr_t *trampOff,
    uintptr_t *trampSize)
{
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    void *stubs = (void *) ((Interp *) interp)->stubTable;
    void *tramp;

    if (!dladdr(stubs, &info) || info.dli_fname == NULL) {
	return 0;
    }
    *pathPtr = info.dli_fname;
    *baseOffStubs = (uintptr_t) stubs - (uintptr_t) info.dli_fbase;
    tramp = dlsym(RTLD_DEFAULT, "TclNRRunCallbacks");
    if (tramp == NULL || !dladdr1(tramp, &info, (void **) &sym,
	    RTLD_DL_SYMENT) || sym == NULL) {
	return 0;
    }
    *trampOff = (uintptr_t) tramp - (uintptr_t) info.dli_fbase;
    *trampSize = sym->st_size ? sym->st_size : 0x200;
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * SameBuildId --
 *
 *	Whether two ELF files have the same (non-empty) GNU build-id.
 *
 *----------------------------------------------------------------------
 */

int
CprofRmFileBuildId(
    const char *path,
    unsigned char *buf,
    int max)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC), n = -1;
    Elf *elf;
    const void *id;

    if (fd < 0) {
	return -1;
    }
    elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (elf) {
	n = dwelf_elf_gnu_build_id(elf, &id);
	if (n > 0 && n <= max) {
	    memcpy(buf, id, n);
	} else {
	    n = -1;
	}
	elf_end(elf);
    }
    close(fd);
    return n;
}

static int
SameBuildId(
    const char *a,
    const char *b)
{
    unsigned char ida[64], idb[64];
    int na, nb;

    elf_version(EV_CURRENT);
    na = CprofRmFileBuildId(a, ida, sizeof(ida));
    nb = CprofRmFileBuildId(b, idb, sizeof(idb));
    return na > 0 && na == nb && memcmp(ida, idb, na) == 0;
}

/*
 * The mappings of a live process, one line of /proc/PID/maps at a time:
 * OpenMaps (NULL if there is no such process), then NextMap until it
 * returns 0 (lines it cannot read are passed over).
 */

typedef struct MapLine {
    unsigned long lo, hi;	/* Its addresses. */
    unsigned long off;		/* Its file offset. */
    unsigned long inode;	/* 0: not a file's. */
    char perms[8];		/* "rwxp" and the like. */
    char file[768];		/* Its file, "" if none. */
} MapLine;

static FILE *
OpenMaps(
    pid_t pid)
{
    char path[64];

    snprintf(path, sizeof(path), "/proc/%d/maps", (int) pid);
    return fopen(path, "r");
}

static int
NextMap(
    FILE *f,
    MapLine *mapPtr)
{
    char line[1024], dev[16];

    while (fgets(line, sizeof(line), f)) {
	mapPtr->file[0] = 0;
	if (sscanf(line, "%lx-%lx %7s %lx %15s %lu %767s", &mapPtr->lo,
		&mapPtr->hi, mapPtr->perms, &mapPtr->off, dev, &mapPtr->inode,
		mapPtr->file) >= 6) {
	    return 1;
	}
    }
    return 0;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofRmFindProcLibtcl --
 *
 *	The load address of the target's libtcl, from /proc/PID/maps,
 *	checked to be the same file as this process's.
 *
 *----------------------------------------------------------------------
 */

int
CprofRmFindProcLibtcl(
    Tcl_Interp *interp,
    Target *tPtr,
    const char *ownPath)
{
    FILE *f;
    MapLine map;
    struct stat own, their;
    int found = 0, sameFile = 0, i, n = 0, chosen = -1;
    struct {
	unsigned long lo, hi;
	char file[768];
    } cand[8];			/* Mappings of a libtcl at offset 0. */
    unsigned long exec[8][2];	/* Its executable mappings: start, offset. */
    int nExec = 0;

    f = OpenMaps(tPtr->pid);
    if (f == NULL) {
	return CprofRmError(interp, "NOPID", "no such process: %d",
		(int) tPtr->pid);
    }
    if (stat(ownPath, &own) != 0) {
	fclose(f);
	return CprofRmError(interp, "LAYOUT", "cannot find this process's "
		"libtcl (%s)", ownPath);
    }
    while (NextMap(f, &map)) {
	if (strstr(map.file, "/libtcl8.") == NULL
		&& strstr(map.file, "/libtcl9.") == NULL) {
	    continue;		/* (Not libtcl9tclcprof0.1.so, tclcprof's
				 * own library built for Tcl 9.) */
	}
	if (map.off == 0 && n < 8) {
	    cand[n].lo = map.lo;
	    cand[n].hi = map.hi;
	    memcpy(cand[n].file, map.file, sizeof(map.file));
	    n++;
	} else if (map.perms[2] == 'x' && nExec < 8) {
	    exec[nExec][0] = map.lo;
	    exec[nExec][1] = map.off;
	    nExec++;
	}
    }
    fclose(f);

    /*
     * The load address is the mapping at offset 0 whose text follows it
     * at its file offset (a shared object's executable segment has its
     * address equal to its offset). Tcl 9 maps the whole of libtcl once
     * more, read-only and at offset 0, for the zip archive of its script
     * library appended to it (zipfs), at a lower address than the loaded
     * library: the first mapping at offset 0 is not the library.
     */

    for (i = 0; i < n && chosen < 0; i++) {
	int k;

	for (k = 0; k < nExec; k++) {
	    if (exec[k][0] >= cand[i].lo
		    && exec[k][0] - cand[i].lo == exec[k][1]) {
		chosen = i;
		break;
	    }
	}
    }
    if (chosen < 0 && n > 0) {
	chosen = 0;
    }
    if (chosen >= 0) {
	char mf[128];

	found = 1;
	tPtr->tclBase = cand[chosen].lo;
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%lx-%lx",
		(int) tPtr->pid, cand[chosen].lo, cand[chosen].hi);
	if (stat(mf, &their) == 0 || stat(cand[chosen].file, &their) == 0) {
	    if (their.st_ino == own.st_ino && their.st_dev == own.st_dev) {
		sameFile = 1;
	    } else {
		/* Another file: the same build (a copy) is the same layout. */
		sameFile = SameBuildId(ownPath, mf)
			|| SameBuildId(ownPath, cand[chosen].file);
	    }
	}
    }
    if (!found) {
	return CprofRmError(interp, "NOTCL", "process %d has no libtcl loaded",
		(int) tPtr->pid);
    }
    if (!sameFile) {
	return CprofRmError(interp, "LAYOUT", "process %d runs another libtcl "
		"than tclcprof's (%s): its layout is unknown", (int) tPtr->pid,
		ownPath);
    }
    return TCL_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * CheckInterp --
 *
 *	Whether addr holds a live Interp: its global namespace points back
 *	at it and it has an execution environment.
 *
 *----------------------------------------------------------------------
 */

static int
CheckInterp(
    Target *tPtr,
    uintptr_t addr)
{
    Interp in;
    Namespace ns;

    if (!READ(tPtr, addr, in) || (uintptr_t) in.stubTable != tPtr->stubs
	    || in.globalNsPtr == NULL || in.execEnvPtr == NULL
	    || (in.flags & DELETED)) {
	return 0;
    }
    if (!READ(tPtr, in.globalNsPtr, ns) || (uintptr_t) ns.interp != addr) {
	return 0;
    }
    return 1;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofRmScanRegion --
 *
 *	Search [lo,hi) of the target for the stubs table's address and
 *	record the interps found.
 *
 *----------------------------------------------------------------------
 */

void
CprofRmScanRegion(
    Target *tPtr,
    uintptr_t lo,
    uintptr_t hi,
    const unsigned char *data)	/* The bytes when already in memory (a
				 * core's segment), else NULL. */
{
    static uintptr_t buf[1 << 17];	/* 1 MB */
    uintptr_t addr, n, i;
    size_t off = offsetof(Interp, stubTable);

    for (addr = lo; addr < hi; addr += n * sizeof(uintptr_t)) {
	n = (hi - addr) / sizeof(uintptr_t);
	if (n > sizeof(buf) / sizeof(uintptr_t)) {
	    n = sizeof(buf) / sizeof(uintptr_t);
	}
	if (n == 0) {
	    break;
	}
	if (data) {
	    memcpy(buf, data + (addr - lo), n * sizeof(uintptr_t));
	} else if (!CprofRmReadMem(tPtr, addr, buf, n * sizeof(uintptr_t))) {
	    continue;
	}
	for (i = 0; i < n; i++) {
	    if (buf[i] == tPtr->stubs && tPtr->numInterps < MAX_INTERPS) {
		uintptr_t cand = addr + i * sizeof(uintptr_t) - off;
		int j, dup = 0;

		for (j = 0; j < tPtr->numInterps; j++) {
		    dup |= tPtr->interps[j] == cand;
		}
		if (!dup && CheckInterp(tPtr, cand)) {
		    tPtr->interps[tPtr->numInterps++] = cand;
		}
	    }
	}
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CprofRmScanProcInterps --
 *
 *	Find the interpreters of a live process: writable private memory
 *	that is not a file's (the heap, anonymous maps, threads' arenas).
 *
 *----------------------------------------------------------------------
 */

void
CprofRmScanProcInterps(
    Target *tPtr)
{
    FILE *f = OpenMaps(tPtr->pid);
    MapLine map;

    if (f == NULL) {
	return;
    }
    while (NextMap(f, &map)) {
	if (map.perms[0] != 'r' || map.perms[1] != 'w' || map.inode != 0
		|| (map.file[0] && strcmp(map.file, "[heap]") != 0)) {
	    continue;
	}
	CprofRmScanRegion(tPtr, map.lo, map.hi, NULL);
    }
    fclose(f);
}

#endif /* CPROF_RM_SUPPORTED */
