/*
 * remotecore.c --
 *
 *	Attach layer (see remote.c): the stacks of the threads of a core
 *	file: its memory segments, threads and thread pointers from its
 *	notes, its modules through libdwfl.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "remoteInt.h"

#ifdef CPROF_RM_SUPPORTED

static void
CoreCleanup(
    Target *tPtr)
{
    CprofRmEndDwfl(tPtr);
    if (tPtr->coreElf) {
	elf_end(tPtr->coreElf);
    }
    if (tPtr->coreFd >= 0) {
	close(tPtr->coreFd);
    }
    if (tPtr->segs) {
	ckfree(tPtr->segs);
    }
}


/*
 *----------------------------------------------------------------------
 *
 * CprofRmCoreStacks --
 *
 *	The stacks of the threads of a core file (see CprofRmResultObj; pause 0).
 *	exe, when given, is the executable the core is of (else found
 *	from the core's file notes).
 *
 *----------------------------------------------------------------------
 */

static char *coreDebuginfoPath = NULL;

static const Dwfl_Callbacks coreCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .debuginfo_path = &coreDebuginfoPath,
};

typedef struct FindTcl {
    Target *tPtr;
    Dwfl_Module *mod;
} FindTcl;

static int
FindTclModule(
    Dwfl_Module *mod,
    void **userdata,
    const char *name,
    Dwarf_Addr start,
    void *arg)
{
    FindTcl *ftPtr = arg;
    const char *base = name ? strrchr(name, '/') : NULL;

    base = base ? base + 1 : name;
    if (base && (strncmp(base, "libtcl8.", 8) == 0
	    || strncmp(base, "libtcl9.", 8) == 0)) {	/* Not libtcl9tclcprof. */
	ftPtr->mod = mod;
	return DWARF_CB_ABORT;
    }
    return DWARF_CB_OK;
}

/*
 * LoadedBase --
 *
 *	The load address of the shared object "name" in a core, from its
 *	NT_FILE note (the file mappings): the mapping at offset 0 that the
 *	object's next segment follows at its file offset. Tcl 9 maps the
 *	whole of libtcl once more, at offset 0 and a lower address, for
 *	the zip archive of its script library (zipfs); libdwfl reports the
 *	module there. dflt when no mapping fits.
 */

#ifndef NT_FILE
#   define NT_FILE 0x46494c45
#endif

/*
 * The loader's name of a file and the kernel's may differ by directory (a
 * merged /usr: /lib/x86_64-linux-gnu/... against /usr/lib/...): compared
 * by their last component.
 */

static int
SameTail(
    const char *a,
    const char *b)
{
    const char *ta = strrchr(a, '/'), *tb = strrchr(b, '/');

    return strcmp(ta ? ta + 1 : a, tb ? tb + 1 : b) == 0;
}

static uintptr_t
LoadedBase(
    Elf *core,
    const char *name,
    uintptr_t dflt)
{
    size_t i, phnum;

    if (name == NULL || elf_getphdrnum(core, &phnum) != 0) {
	return dflt;
    }
    for (i = 0; i < phnum; i++) {
	GElf_Phdr ph;
	Elf_Data *data;
	size_t off = 0, nameOff, descOff;
	GElf_Nhdr nh;

	if (gelf_getphdr(core, i, &ph) == NULL || ph.p_type != PT_NOTE) {
	    continue;
	}
	data = elf_getdata_rawchunk(core, ph.p_offset, ph.p_filesz,
		ELF_T_NHDR);
	while (data && (off = gelf_getnote(data, off, &nh, &nameOff,
		&descOff)) > 0) {
	    const uint64_t *d = (const uint64_t *)
		    ((const char *) data->d_buf + descOff);
	    uint64_t count, page, a, b;
	    const char *names, *na, *nb, *end;

	    if (nh.n_type != NT_FILE || nh.n_descsz < 16) {
		continue;
	    }
	    count = d[0];
	    page = d[1];
	    if (count > (nh.n_descsz - 16) / 24) {
		continue;
	    }
	    names = (const char *) (d + 2 + 3 * count);
	    end = (const char *) d + nh.n_descsz;
	    for (a = 0, na = names; a < count && na < end;
		    a++, na += strlen(na) + 1) {
		if (d[2 + 3 * a + 2] != 0 || !SameTail(na, name)) {
		    continue;
		}
		for (b = 0, nb = names; b < count && nb < end;
			b++, nb += strlen(nb) + 1) {
		    uint64_t start = d[2 + 3 * b], ofs = d[2 + 3 * b + 2];

		    if (ofs != 0 && start > d[2 + 3 * a]
			    && start - d[2 + 3 * a] == ofs * page
			    && SameTail(nb, name)) {
			return (uintptr_t) d[2 + 3 * a];
		    }
		}
	    }
	}
    }
    return dflt;
}

int
CprofRmCoreStacks(
    Tcl_Interp *interp,
    const char *path,
    const char *exe)
{
    Target target, *tPtr = &target;
    const char *ownPath;
    uintptr_t stubsOff, trampOff, trampSize;
    GElf_Ehdr ehdr;
    size_t i, phnum;
    FindTcl ft;
    const unsigned char *id;
    GElf_Addr idAddr;
    unsigned char ownId[64];
    int idLen, ownLen;
    StackBox **boxes;
    Tcl_Obj *resObj;
    int coreSignal = 0, hasFileNote = 0;
    char psargs[ELF_PRARGSZ + 1];

    memset(tPtr, 0, sizeof(*tPtr));
    psargs[0] = '\0';
    elf_version(EV_CURRENT);
    tPtr->coreFd = open(path, O_RDONLY | O_CLOEXEC);
    if (tPtr->coreFd < 0) {
	return CprofRmError(interp, "NOCORE", "cannot open core file "
		"\"%s\": %s", path, strerror(errno));
    }
    tPtr->coreElf = elf_begin(tPtr->coreFd, ELF_C_READ_MMAP, NULL);
    if (tPtr->coreElf == NULL || gelf_getehdr(tPtr->coreElf, &ehdr) == NULL
	    || ehdr.e_type != ET_CORE || ehdr.e_machine != CPROF_RM_MACHINE
	    || elf_getphdrnum(tPtr->coreElf, &phnum) != 0) {
	if (tPtr->coreElf) {
	    elf_end(tPtr->coreElf);
	}
	close(tPtr->coreFd);
	return CprofRmError(interp, "NOCORE", "\"%s\" is not a process id or "
		"an " CPROF_RM_MACHINE_NAME " core file", path);
    }
    tPtr->segs = (Segment *) ckalloc(sizeof(Segment) * (phnum + 1));

    /*
     * Memory segments, and the threads (their ids and thread pointers)
     * from the NT_PRSTATUS notes.
     */

    for (i = 0; i < phnum; i++) {
	GElf_Phdr ph;

	if (gelf_getphdr(tPtr->coreElf, i, &ph) == NULL) {
	    continue;
	}
	if (ph.p_type == PT_LOAD) {
	    Segment *sPtr = &tPtr->segs[tPtr->numSegs++];

	    sPtr->vaddr = ph.p_vaddr;
	    sPtr->memsz = ph.p_memsz;
	    sPtr->filesz = ph.p_filesz;
	    sPtr->offset = ph.p_offset;
	} else if (ph.p_type == PT_NOTE) {
	    Elf_Data *data = elf_getdata_rawchunk(tPtr->coreElf, ph.p_offset,
		    ph.p_filesz, ELF_T_NHDR);
	    size_t off = 0, nameOff, descOff;
	    GElf_Nhdr nh;

	    while (data && (off = gelf_getnote(data, off, &nh, &nameOff,
		    &descOff)) > 0) {
		if (nh.n_type == NT_FILE) {
		    hasFileNote = 1;
		} else if (nh.n_type == NT_PRPSINFO
			&& nh.n_descsz >= sizeof(struct elf_prpsinfo)) {
		    struct elf_prpsinfo ps;

		    memcpy(&ps, (char *) data->d_buf + descOff, sizeof(ps));
		    memcpy(psargs, ps.pr_psargs, ELF_PRARGSZ);
		    psargs[ELF_PRARGSZ] = '\0';
		}
		if (nh.n_type == NT_PRSTATUS && nh.n_descsz
			>= sizeof(struct elf_prstatus)
			&& tPtr->numTids < MAX_THREADS) {
		    struct elf_prstatus st;
#if defined(__x86_64__)
		    struct user_regs_struct regs;
#endif

		    memcpy(&st, (char *) data->d_buf + descOff, sizeof(st));
		    if (tPtr->numTids == 0) {
			coreSignal = st.pr_cursig;
		    }
		    tPtr->tids[tPtr->numTids] = st.pr_pid;
#if defined(__x86_64__)
		    memcpy(&regs, &st.pr_reg, sizeof(regs));
		    tPtr->fsBase[tPtr->numTids] =
			    getenv("TCLCPROF_TEST_NO_THREAD_POINTER") ? 0
			    : regs.fs_base;
#else
		    /*
		     * aarch64's thread pointer is not in NT_PRSTATUS:
		     * CprofRmThreadOwners finds each thread's pthread_t.
		     */

		    tPtr->fsBase[tPtr->numTids] = 0;
#endif
		    tPtr->numTids++;
		}
	    }
	}
    }

    /*
     * Without the file mappings (NT_FILE: qemu-user's cores of its guests
     * have none, and their text segments are not dumped) libdwfl finds
     * the modules through the executable's dynamic section: the
     * executable is the command line's first word when that is a file.
     */

    if (exe == NULL && !hasFileNote && psargs[0] == '/') {
	psargs[strcspn(psargs, " ")] = '\0';
	if (access(psargs, R_OK) == 0) {
	    exe = psargs;
	}
    }
    tPtr->callbacks = &coreCallbacks;
    tPtr->coreExe = exe;
    tPtr->dwfl = dwfl_begin(&coreCallbacks);
    if (tPtr->dwfl == NULL || dwfl_core_file_report(tPtr->dwfl,
	    tPtr->coreElf, exe) < 0) {
	goto dwflError;
    }
    dwfl_report_end(tPtr->dwfl, NULL, NULL);

    /*
     * libtcl: loaded, and the build tclcprof runs.
     */

    ft.tPtr = tPtr;
    ft.mod = NULL;
    dwfl_getmodules(tPtr->dwfl, FindTclModule, &ft, 0);
    if (ft.mod == NULL) {
	CoreCleanup(tPtr);
	return CprofRmError(interp, "NOTCL", "core file \"%s\" has no libtcl "
		"loaded%s", path, (exe == NULL && !hasFileNote)
		? " (or its file mappings are not in it: name its executable, "
		"tclcprof dump CORE EXECUTABLE)" : "");
    }
    if (!CprofRmOwnLibtcl(interp, &ownPath, &stubsOff, &trampOff, &trampSize)) {
	CoreCleanup(tPtr);
	return CprofRmError(interp, "LAYOUT", "cannot locate this process's "
		"libtcl");
    }
    idLen = dwfl_module_build_id(ft.mod, &id, &idAddr);
    ownLen = CprofRmFileBuildId(ownPath, ownId, sizeof(ownId));
    if (idLen <= 0 || idLen != ownLen || memcmp(id, ownId, idLen) != 0) {
	CoreCleanup(tPtr);
	return CprofRmError(interp, "LAYOUT", "core file \"%s\" is of another "
		"libtcl than tclcprof's (%s): its layout is unknown", path,
		ownPath);
    }
    {
	Dwarf_Addr bias;

	dwfl_module_info(ft.mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	const char *modName = NULL;

	if (dwfl_module_getelf(ft.mod, &bias) == NULL) {
	    goto dwflError;
	}
	modName = dwfl_module_info(ft.mod, NULL, NULL, NULL, NULL, NULL,
		NULL, NULL);
	tPtr->tclBase = LoadedBase(tPtr->coreElf, modName, bias);
    }
    tPtr->stubs = tPtr->tclBase + stubsOff;
    tPtr->trampStart = tPtr->tclBase + trampOff;
    tPtr->trampEnd = tPtr->trampStart + trampSize;

    /*
     * Interps: in the core's writable segments.
     */

    for (i = 0; i < phnum; i++) {
	GElf_Phdr ph;

	if (gelf_getphdr(tPtr->coreElf, i, &ph) && ph.p_type == PT_LOAD
		&& (ph.p_flags & PF_W) && ph.p_filesz > 0) {
	    CprofRmScanRegion(tPtr, ph.p_vaddr, ph.p_vaddr + ph.p_filesz, NULL);
	}
    }
    if (dwfl_core_file_attach(tPtr->dwfl, tPtr->coreElf) < 0) {
	goto dwflError;
    }
    boxes = CprofRmNewBoxes(tPtr);
    CprofRmReadThreads(tPtr, boxes);
    resObj = CprofRmResultObj(tPtr, boxes, 0.0);
    Tcl_ListObjAppendElement(NULL, resObj, Tcl_NewStringObj("signal", -1));
    Tcl_ListObjAppendElement(NULL, resObj, Tcl_NewIntObj(coreSignal));
    CprofRmFreeBoxes(boxes);
    Tcl_SetObjResult(interp, resObj);
    CoreCleanup(tPtr);
    return TCL_OK;

  dwflError:
    Tcl_SetObjResult(interp, Tcl_ObjPrintf("libdwfl cannot read core file "
	    "\"%s\": %s", path, dwfl_errmsg(-1)));
    Tcl_SetErrorCode(interp, "TCLCPROF", "ATTACH", "DWFL", NULL);
    CoreCleanup(tPtr);
    return TCL_ERROR;
}

#endif /* CPROF_RM_SUPPORTED */
