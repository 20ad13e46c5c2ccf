/*
 * remotenative.c --
 *
 *	Attach layer (see remote.c): the native frames of the stopped
 *	threads (or a core's), unwound by elfutils' libdwfl with the
 *	trampolines' registers; the names of C functions; the stacks of
 *	all threads with their Tcl frames spliced in, as Tcl lists.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "remoteInt.h"
#include "symfile.h"

#ifdef CPROF_RM_SUPPORTED

/*
 *----------------------------------------------------------------------
 *
 * The leaf step (aarch64) --
 *
 *	A thread can stop, or be dumped, in code without unwind information
 *	(CFI): a PLT stub (aarch64 linkers write no CFI for .plt, unlike
 *	x86-64's), or an address no module holds (a call through a bad
 *	function pointer). libdwfl then falls back to the frame pointer
 *	chain, which elfutils 0.188 (Debian 12's arm64 libdw1) applies to
 *	the innermost frame as to any other: the caller is right (the link
 *	register) but its stack pointer is taken from the frame record, 16
 *	bytes off, and every frame after is garbage or none (issue 27: a
 *	core of a Tcl 9 tclsh killed in a PLT stub unwound to "$x", one
 *	frame, so its Tcl frames had no anchor; one made with gdb in
 *	waitpid@plt unwound to "$x", Tcl_WaitPid, 0x190c).
 *
 *	In those two cases only, the caller is the link register (x30)
 *	with every other register as it was, as perf and libdwfl's newer
 *	backends do for leaf frames: a PLT stub and a faulting first
 *	instruction change neither sp nor x30. The step is taken only
 *	when x30 - 4 is, in code with CFI, a call that fits: BL to the
 *	stub's entry (or BLR) for a stub, BLR for an address no module
 *	holds; otherwise libdwfl's own unwind is kept. libdwfl then goes
 *	on from the caller, as from the innermost frame of a thread whose
 *	registers those are (dwfl_attach_state on a second Dwfl of the same
 *	modules), started at the call instruction so that its CFI row is
 *	the caller's even when the call ends its function (a noreturn
 *	callee): FrameCb gives that frame its return address.
 *
 *----------------------------------------------------------------------
 */

#if defined(__aarch64__)
#   define LEAF_STEP 1
#endif

#ifdef LEAF_STEP

static int
HasUnwindInfo(
    Dwfl *dwfl,
    Dwarf_Addr pc)
{
    Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
    int k;

    if (mod == NULL) {
	return 0;
    }
    for (k = 0; k < 2; k++) {
	Dwarf_Addr bias;
	Dwarf_CFI *cfi = k ? dwfl_module_dwarf_cfi(mod, &bias)
		: dwfl_module_eh_cfi(mod, &bias);
	Dwarf_Frame *frame = NULL;

	if (cfi && dwarf_cfi_addrframe(cfi, pc - bias, &frame) == 0) {
	    free(frame);
	    return 1;
	}
    }
    return 0;
}

/*
 * CodeAt --
 *	The section of its module's file that holds the code at addr: its
 *	name (NULL if none) and, if wordPtr, the instruction there.
 */

static const char *
CodeAt(
    Dwfl_Module *mod,
    Dwarf_Addr addr,
    uint32_t *wordPtr,
    Dwarf_Addr *secStartPtr)
{
    Dwarf_Addr bias = 0;
    Elf *elf = mod ? dwfl_module_getelf(mod, &bias) : NULL;
    Elf_Scn *scn = NULL;
    size_t shstrndx;

    if (elf == NULL || elf_getshdrstrndx(elf, &shstrndx) != 0) {
	return NULL;
    }
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
	GElf_Shdr sh;
	Elf_Data *data;
	Dwarf_Addr rel = addr - bias;

	if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_PROGBITS
		|| !(sh.sh_flags & SHF_EXECINSTR) || rel < sh.sh_addr
		|| rel + 4 > sh.sh_addr + sh.sh_size) {
	    continue;
	}
	if (wordPtr) {
	    data = elf_getdata(scn, NULL);
	    if (data == NULL || data->d_buf == NULL
		    || rel - sh.sh_addr + 4 > data->d_size) {
		return NULL;
	    }
	    memcpy(wordPtr, (char *) data->d_buf + (rel - sh.sh_addr), 4);
	}
	*secStartPtr = sh.sh_addr + bias;
	return elf_strptr(elf, shstrndx, sh.sh_name);
    }
    return NULL;
}

#define AARCH64_IS_BL(w)	(((w) & 0xfc000000u) == 0x94000000u)
#define AARCH64_BL_TARGET(at, w) \
    ((at) + (Dwarf_Addr) ((int64_t) ((int32_t) ((w) << 6) >> 6) * 4))
#define AARCH64_IS_BLR(w)	(((w) & 0xfffffc1fu) == 0xd63f0000u)

/*
 * LeafCaller --
 *	Whether x30 is the caller of the code at pc, as the header says.
 */

static int
LeafCaller(
    Dwfl *dwfl,
    Dwarf_Addr pc,
    Dwarf_Addr lr)
{
    uint32_t call;
    Dwarf_Addr secStart, callStart;
    const char *sec;
    Dwfl_Module *mod;

    if (lr < 4 || (lr & 3) != 0 || !HasUnwindInfo(dwfl, lr - 4)
	    || (mod = dwfl_addrmodule(dwfl, lr - 4)) == NULL
	    || CodeAt(mod, lr - 4, &call, &callStart) == NULL) {
	return 0;
    }
    if ((mod = dwfl_addrmodule(dwfl, pc)) == NULL) {
	return AARCH64_IS_BLR(call);
    }
    sec = CodeAt(mod, pc, NULL, &secStart);
    if (sec == NULL || !((strcmp(sec, ".plt") == 0 && pc >= secStart + 32)
	    || strcmp(sec, ".iplt") == 0)) {
	return 0;		/* Not a stub (nor the lazy resolver's). */
    }
    if (AARCH64_IS_BL(call)) {
	Dwarf_Addr target = AARCH64_BL_TARGET(lr - 4, call);

	return target <= pc && pc < target + 16;
    }
    return AARCH64_IS_BLR(call);
}

/*
 * PltStubName --
 *	"name@plt" for the PLT stub (after the 32 bytes of the lazy
 *	resolver's) at addr in mod, or NULL: the GOT slot the stub jumps
 *	through, read off its "adrp x16" and "ldr x17, [x16, #off]", and
 *	the jump-slot relocation of that slot in .rela.plt, which names the
 *	function. A layout that does not decode so names nothing.
 */

static Tcl_Obj *
PltStubName(
    Dwfl_Module *mod,
    Dwarf_Addr addr)
{
    Dwarf_Addr bias, secStart, entry, slot, dummy;
    Elf *elf = dwfl_module_getelf(mod, &bias);
    const char *sec = CodeAt(mod, addr, NULL, &secStart);
    uint32_t adrp, ldr;
    int64_t imm;
    Elf_Scn *scn = NULL;
    size_t shstrndx;

    if (elf == NULL || sec == NULL || strcmp(sec, ".plt") != 0
	    || addr < secStart + 32
	    || elf_getshdrstrndx(elf, &shstrndx) != 0) {
	return NULL;
    }
    entry = secStart + 32 + ((addr - secStart - 32) & ~(Dwarf_Addr) 15);
    if (CodeAt(mod, entry, &adrp, &dummy) == NULL
	    || CodeAt(mod, entry + 4, &ldr, &dummy) == NULL
	    || (adrp & 0x9f00001fu) != 0x90000010u
	    || (ldr & 0xffc003ffu) != 0xf9400211u) {
	return NULL;
    }
    imm = (int64_t) ((((adrp >> 5) & 0x7ffffu) << 2) | ((adrp >> 29) & 3u));
    imm = (imm << 43) >> 43;		/* Sign-extended, 21 bits. */
    slot = (((entry - bias) & ~(Dwarf_Addr) 0xfff) + (Dwarf_Addr) (imm << 12))
	    + ((ldr >> 10) & 0xfffu) * 8;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
	GElf_Shdr sh, dynSh;
	Elf_Data *data, *dynData;
	Elf_Scn *dynScn;
	const char *name = NULL;
	size_t i, n;

	if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_RELA
		|| (name = elf_strptr(elf, shstrndx, sh.sh_name)) == NULL
		|| strcmp(name, ".rela.plt") != 0 || sh.sh_entsize == 0
		|| (data = elf_getdata(scn, NULL)) == NULL
		|| (dynScn = elf_getscn(elf, sh.sh_link)) == NULL
		|| gelf_getshdr(dynScn, &dynSh) == NULL
		|| (dynData = elf_getdata(dynScn, NULL)) == NULL) {
	    continue;
	}
	n = sh.sh_size / sh.sh_entsize;
	for (i = 0; i < n; i++) {
	    GElf_Rela r;
	    GElf_Sym sym;

	    if (gelf_getrela(data, (int) i, &r) == NULL || r.r_offset != slot) {
		continue;
	    }
	    if (GELF_R_TYPE(r.r_info) != R_AARCH64_JUMP_SLOT
		    || gelf_getsym(dynData, (int) GELF_R_SYM(r.r_info), &sym)
			== NULL
		    || (name = elf_strptr(elf, dynSh.sh_link, sym.st_name))
			== NULL || name[0] == '\0') {
		return NULL;
	    }
	    return Tcl_ObjPrintf("%.*s@plt", (int) strcspn(name, "@"), name);
	}
    }
    return NULL;
}

static pid_t
LeafNextThread(
    Dwfl *dwfl,
    void *dwflArg,
    void **threadArgPtr)
{
    Target *tPtr = dwflArg;

    (void) dwfl;
    if (*threadArgPtr != NULL || tPtr->leafBox == NULL) {
	return 0;
    }
    *threadArgPtr = tPtr->leafBox;
    return tPtr->leafBox->s.tid;
}

static bool
LeafMemoryRead(
    Dwfl *dwfl,
    Dwarf_Addr addr,
    Dwarf_Word *result,
    void *dwflArg)
{
    (void) dwfl;
    return CprofRmReadMem((Target *) dwflArg, (uintptr_t) addr, result,
	    sizeof(*result)) != 0;
}

static bool
LeafSetRegisters(
    Dwfl_Thread *thread,
    void *threadArg)
{
    StackBox *boxPtr = threadArg;

    if (!dwfl_thread_state_registers(thread, 0, LEAF_REGS,
	    boxPtr->leafRegs)) {
	return false;
    }
    dwfl_thread_state_register_pc(thread, boxPtr->leafRegs[30] - 4);
    return true;
}

static const Dwfl_Thread_Callbacks leafCallbacks = {
    .next_thread = LeafNextThread,
    .memory_read = LeafMemoryRead,
    .set_initial_registers = LeafSetRegisters,
};

static int FrameCb(Dwfl_Frame *frame, void *arg);

/*
 * LeafStep --
 *	After FrameCb stopped at an innermost frame without CFI: its
 *	caller and the frames beyond, when the header's rule allows; else
 *	libdwfl's own unwind of the thread, as without the step.
 */

static void
LeafStep(
    StackBox *boxPtr,
    Dwfl_Thread *thread)
{
    Target *tPtr = boxPtr->tPtr;
    ThreadStack *sPtr = &boxPtr->s;
    int ok = 0;

    if (boxPtr->numLeafRegs == LEAF_REGS && LeafCaller(tPtr->dwfl,
	    sPtr->native[0].pc, boxPtr->leafRegs[30])) {
	/*
	 * The second Dwfl is made once a target (a recording's samples
	 * reuse it): reporting the modules again reads the process's maps
	 * and the modules' headers, which the stop should not wait for at
	 * each sample in a stub.
	 */

	if (tPtr->leafDwfl == NULL && !tPtr->leafFailed) {
	    Dwfl *dwfl2 = dwfl_begin(tPtr->callbacks);

	    tPtr->leafFailed = 1;
	    if (dwfl2 != NULL) {
		dwfl_report_begin(dwfl2);
		if ((tPtr->coreElf ? dwfl_core_file_report(dwfl2,
			tPtr->coreElf, tPtr->coreExe)
			: dwfl_linux_proc_report(dwfl2, tPtr->pid)) >= 0
			&& dwfl_report_end(dwfl2, NULL, NULL) == 0
			&& dwfl_attach_state(dwfl2, tPtr->coreElf,
			    tPtr->pid ? tPtr->pid : sPtr->tid, &leafCallbacks,
			    tPtr)) {
		    tPtr->leafDwfl = dwfl2;
		    tPtr->leafFailed = 0;
		} else {
		    dwfl_end(dwfl2);
		}
	    }
	}
	if (tPtr->leafDwfl != NULL) {
	    tPtr->leafBox = boxPtr;
	    boxPtr->leaf = 2;
	    dwfl_getthread_frames(tPtr->leafDwfl, sPtr->tid, FrameCb, boxPtr);
	    tPtr->leafBox = NULL;
	    ok = sPtr->numNative > 1;
	}
    }
    if (!ok) {
	sPtr->numNative = 0;
	boxPtr->leaf = 3;
	dwfl_thread_getframes(thread, FrameCb, boxPtr);
    }
}

#endif /* LEAF_STEP */

/*
 *----------------------------------------------------------------------
 *
 * UnwindThread --
 *
 *	Native frames of one thread, with the trampolines' registers.
 *
 *----------------------------------------------------------------------
 */

static int
FrameCb(
    Dwfl_Frame *frame,
    void *arg)
{
    StackBox *boxPtr = arg;
    ThreadStack *sPtr = &boxPtr->s;
    Target *tPtr = boxPtr->tPtr;
    NFrame *fPtr;
    Dwarf_Addr pc;
    bool act;
    Dwarf_Word v;

    if (sPtr->numNative >= MAX_NATIVE || !dwfl_frame_pc(frame, &pc, &act)) {
	return DWARF_CB_ABORT;
    }
    fPtr = &sPtr->native[sPtr->numNative++];
    memset(fPtr, 0, sizeof(*fPtr));
    fPtr->pc = pc;
    fPtr->activation = act;
#ifdef LEAF_STEP
    if (sPtr->numNative == 1 && boxPtr->leaf == 0
	    && !HasUnwindInfo(tPtr->dwfl, pc)) {
	/*
	 * Stopped in code without unwind information: its registers
	 * kept, its caller found by LeafStep, not by libdwfl's guess.
	 */

	int r;

	boxPtr->leaf = 1;
	boxPtr->numLeafRegs = 0;
	for (r = 0; r < LEAF_REGS; r++) {
	    if (dwfl_frame_reg(frame, r, &boxPtr->leafRegs[r]) != 0) {
		break;
	    }
	    boxPtr->numLeafRegs++;
	}
	return DWARF_CB_ABORT;
    }
    if (boxPtr->leaf == 2 && sPtr->numNative == 2) {
	/*
	 * The caller LeafStep unwound to, started from its call
	 * instruction (see there): a return address.
	 */

	fPtr->pc = pc + 4;
	fPtr->activation = 0;
	pc = fPtr->pc;
	act = 0;
    }
#endif
    if (dwfl_frame_reg(frame, DW_SP, &v) == 0) {
	fPtr->sp = v;
    }
    if (!act) {
	pc--;
    }
    if (pc >= tPtr->trampStart && pc < tPtr->trampEnd) {
	fPtr->isTramp = 1;
	if (dwfl_frame_reg(frame, DW_TRAMP_RUNNING, &v) == 0) {
	    fPtr->tRunning = v;
	}
	if (dwfl_frame_reg(frame, DW_TRAMP_ROOT, &v) == 0) {
	    fPtr->tRoot = v;
	}
	if (dwfl_frame_reg(frame, DW_TRAMP_INTERP, &v) == 0) {
	    fPtr->tInterp = v;
	}
    }
    return DWARF_CB_OK;
}



/*
 *----------------------------------------------------------------------
 *
 * NativeName --
 *
 *	The name of a native frame's function ("symbol", else
 *	"module+0xoffset") and its module's file name.
 *
 *----------------------------------------------------------------------
 */

/*
 * The names of a session's addresses (pc -> {name module}), so that each
 * sample names only the addresses it has not seen. NULL outside one.
 */

MODULE_SCOPE Tcl_HashTable *cprofRmNameCache;
Tcl_HashTable *cprofRmNameCache = NULL;

static void NativeNameUncached(Dwfl *dwfl, NFrame *nPtr, Tcl_Obj **namePtr,
			    Tcl_Obj **modPtr);

static void
NativeName(
    Dwfl *dwfl,
    NFrame *nPtr,
    Tcl_Obj **namePtr,
    Tcl_Obj **modPtr)
{
    Tcl_HashEntry *hPtr;
    Tcl_Obj **pair;
    int isNew;

    if (cprofRmNameCache == NULL) {
	NativeNameUncached(dwfl, nPtr, namePtr, modPtr);
	return;
    }
    hPtr = Tcl_CreateHashEntry(cprofRmNameCache, (char *) (nPtr->pc
	    - (nPtr->activation ? 0 : 1)), &isNew);
    if (isNew) {
	pair = (Tcl_Obj **) ckalloc(2 * sizeof(Tcl_Obj *));
	NativeNameUncached(dwfl, nPtr, &pair[0], &pair[1]);
	Tcl_IncrRefCount(pair[0]);
	Tcl_IncrRefCount(pair[1]);
	Tcl_SetHashValue(hPtr, pair);
    }
    pair = (Tcl_Obj **) Tcl_GetHashValue(hPtr);
    *namePtr = pair[0];
    *modPtr = pair[1];
}

void
CprofRmClearNameCache(void)
{
    Tcl_HashSearch search;
    Tcl_HashEntry *hPtr;

    if (cprofRmNameCache == NULL) {
	return;
    }
    for (hPtr = Tcl_FirstHashEntry(cprofRmNameCache, &search); hPtr;
	    hPtr = Tcl_NextHashEntry(&search)) {
	Tcl_Obj **pair = (Tcl_Obj **) Tcl_GetHashValue(hPtr);

	Tcl_DecrRefCount(pair[0]);
	Tcl_DecrRefCount(pair[1]);
	ckfree(pair);
    }
    Tcl_DeleteHashTable(cprofRmNameCache);
    ckfree(cprofRmNameCache);
    cprofRmNameCache = NULL;
}

static void
NativeNameUncached(
    Dwfl *dwfl,
    NFrame *nPtr,
    Tcl_Obj **namePtr,
    Tcl_Obj **modPtr)
{
    Dwarf_Addr pc = nPtr->pc - (nPtr->activation ? 0 : 1);
    Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
    const char *modName = NULL, *sym = NULL, *slash;
    Dwarf_Addr start = 0;
    GElf_Off off = 0;
    GElf_Sym s;

    if (mod) {
	modName = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL,
		NULL);
	sym = dwfl_module_addrinfo(mod, pc, &off, &s, NULL, NULL, NULL);
	if (sym && s.st_size && off >= s.st_size) {
	    sym = NULL;		/* A stripped static function. */
	}
	if (sym && CprofMappingSymbol(sym, GELF_ST_TYPE(s.st_info),
		s.st_size)) {
	    /*
	     * "$x" and the like: code no function symbol covers (a PLT
	     * stub, hand-written assembly), named as unnamed code is.
	     */

	    sym = NULL;
	}
    }
    slash = modName ? strrchr(modName, '/') : NULL;
    if (slash) {
	modName = slash + 1;
    }
    *modPtr = Tcl_NewStringObj(modName ? modName : "[unknown]", -1);
    if (sym) {
	*namePtr = Tcl_NewStringObj(sym, -1);
	return;
    }
#ifdef LEAF_STEP
    if (mod && (*namePtr = PltStubName(mod, pc)) != NULL) {
	return;
    }
#endif
    if (mod) {
	/*
	 * A stripped function: named after its start from the unwind
	 * tables, "module!fn_0x<start>", as symbolize.c names it in
	 * profiles made in the process.
	 */

	Dwarf_Addr bias;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &bias);
	Dwarf_Frame *frame = NULL;
	Dwarf_Addr fstart, fend;

	if (cfi && dwarf_cfi_addrframe(cfi, pc - bias, &frame) == 0
		&& dwarf_frame_info(frame, &fstart, &fend, NULL) >= 0) {
	    *namePtr = Tcl_ObjPrintf("%s!fn_0x%llx", modName,
		    (unsigned long long) fstart);
	    free(frame);
	    return;
	}
	free(frame);
    }
    if (modName) {
	*namePtr = Tcl_ObjPrintf("%s+0x%lx", modName,
		(unsigned long) (pc - start));
    } else {
	*namePtr = Tcl_ObjPrintf("0x%lx", (unsigned long) pc);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * StackObj --
 *
 *	A thread's mixed stack as a Tcl list, outermost frame first: each
 *	frame a dict {kind c name N module M pc 0xADDR} (pc: the frame's
 *	program counter, a return address but for the innermost frame) or
 *	{kind tcl name N ?file F line L?}.
 *
 *----------------------------------------------------------------------
 */

static Tcl_Obj *
StackObj(
    Dwfl *dwfl,
    ThreadStack *sPtr)
{
    Tcl_Obj *listObj = Tcl_NewObj();
    int i, k, t;

    for (k = 0; k < sPtr->numNative; k++) {
	NFrame *nPtr = &sPtr->native[sPtr->numNative - 1 - k];
	Tcl_Obj *f = Tcl_NewObj(), *name, *mod;

	NativeName(dwfl, nPtr, &name, &mod);
	Tcl_ListObjAppendElement(NULL, f, Tcl_NewStringObj("kind", -1));
	Tcl_ListObjAppendElement(NULL, f, Tcl_NewStringObj("c", -1));
	Tcl_ListObjAppendElement(NULL, f, Tcl_NewStringObj("name", -1));
	Tcl_ListObjAppendElement(NULL, f, name);
	Tcl_ListObjAppendElement(NULL, f, Tcl_NewStringObj("module", -1));
	Tcl_ListObjAppendElement(NULL, f, mod);
	Tcl_ListObjAppendElement(NULL, f, Tcl_NewStringObj("pc", -1));
	Tcl_ListObjAppendElement(NULL, f, Tcl_ObjPrintf("0x%llx",
		(unsigned long long) nPtr->pc));
	Tcl_ListObjAppendElement(NULL, listObj, f);

	/*
	 * The Tcl frames placed after this one, in order of their place
	 * (interps of one thread were read one after the other).
	 */

	for (t = 0; t < sPtr->numTcl; t++) {
	    TFrame *tf = &sPtr->tcl[t];

	    if (tf->after != k) {
		continue;
	    }
	    f = Tcl_NewObj();
	    Tcl_ListObjAppendElement(NULL, f, Tcl_NewStringObj("kind", -1));
	    Tcl_ListObjAppendElement(NULL, f, Tcl_NewStringObj("tcl", -1));
	    Tcl_ListObjAppendElement(NULL, f, Tcl_NewStringObj("name", -1));
	    Tcl_ListObjAppendElement(NULL, f, tf->name);
	    Tcl_ListObjAppendElement(NULL, f, Tcl_NewStringObj("tclkind", -1));
	    Tcl_ListObjAppendElement(NULL, f, Tcl_NewStringObj(
		    tf->tclkind ? tf->tclkind : "proc", -1));
	    if (tf->interp) {
		Tcl_Size len = 0;

		Tcl_ListObjLength(NULL, tf->interp, &len);
		if (len > 0) {
		    Tcl_ListObjAppendElement(NULL, f,
			    Tcl_NewStringObj("interp", -1));
		    Tcl_ListObjAppendElement(NULL, f, tf->interp);
		}
	    }
	    if (tf->file) {
		Tcl_ListObjAppendElement(NULL, f,
			Tcl_NewStringObj("file", -1));
		Tcl_ListObjAppendElement(NULL, f, tf->file);
	    }
	    if (tf->line > 0) {
		Tcl_ListObjAppendElement(NULL, f,
			Tcl_NewStringObj("line", -1));
		Tcl_ListObjAppendElement(NULL, f, Tcl_NewIntObj(tf->line));
	    }
	    Tcl_ListObjAppendElement(NULL, listObj, f);
	}
    }
    for (i = 0; i < sPtr->numTcl; i++) {
	Tcl_DecrRefCount(sPtr->tcl[i].name);
	if (sPtr->tcl[i].file) {
	    Tcl_DecrRefCount(sPtr->tcl[i].file);
	}
	if (sPtr->tcl[i].interp) {
	    Tcl_DecrRefCount(sPtr->tcl[i].interp);
	}
    }
    sPtr->numTcl = 0;
    return listObj;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofRmReadThreads --
 *
 *	With the target stopped (or a core): the native and Tcl frames of
 *	every thread, into stacks (numTids of them).
 *
 *----------------------------------------------------------------------
 */

static int
ThreadCb(
    Dwfl_Thread *thread,
    void *arg)
{
    StackBox **boxesPtr = arg;
    Target *tPtr = boxesPtr[0]->tPtr;
    pid_t tid = dwfl_thread_tid(thread);
    int i;

    for (i = 0; i < tPtr->numTids; i++) {
	if (tPtr->tids[i] == tid) {
	    boxesPtr[i]->s.tid = tid;
	    boxesPtr[i]->s.numNative = 0;
	    boxesPtr[i]->leaf = 0;
	    dwfl_thread_getframes(thread, FrameCb, boxesPtr[i]);
#ifdef LEAF_STEP
	    if (boxesPtr[i]->leaf == 1) {
		LeafStep(boxesPtr[i], thread);
	    }
#endif
	    break;
	}
    }
    return DWARF_CB_OK;
}

void
CprofRmReadThreads(
    Target *tPtr,
    StackBox **boxes)
{
    int i, j;

    dwfl_getthreads(tPtr->dwfl, ThreadCb, boxes);
    CprofRmThreadOwners(tPtr);
    for (i = 0; i < tPtr->numTids; i++) {
	ThreadStack *sPtr = &boxes[i]->s;

	sPtr->tid = tPtr->tids[i];
	for (j = 0; j < tPtr->numInterps; j++) {
	    Tcl_ThreadId owner;

	    if (READ(tPtr, tPtr->interps[j] + offsetof(Interp, threadId),
		    owner) && (uintptr_t) owner == tPtr->fsBase[i]
		    && tPtr->fsBase[i] != 0) {
		Tcl_Obj *pathObj = CprofRmInterpPath(tPtr, tPtr->interps[j]);

		Tcl_IncrRefCount(pathObj);
		if (sPtr->interps == NULL) {
		    sPtr->interps = Tcl_NewObj();
		    Tcl_IncrRefCount(sPtr->interps);
		}
		Tcl_ListObjAppendElement(NULL, sPtr->interps, pathObj);
		CprofRmReadInterpFrames(tPtr, tPtr->interps[j], sPtr, pathObj);
		Tcl_DecrRefCount(pathObj);
	    }
	}
    }
}

/*
 *----------------------------------------------------------------------
 *
 * CprofRmResultObj --
 *
 *	{pause us interps N threads {{tid T unplaced U thread tid0x...
 *	interps {path ...} frames {...}} ...}}
 *
 *----------------------------------------------------------------------
 */

Tcl_Obj *
CprofRmResultObj(
    Target *tPtr,
    StackBox **boxes,
    double pauseUs)
{
    Tcl_Obj *res = Tcl_NewObj(), *threads = Tcl_NewObj();
    int i;

    for (i = 0; i < tPtr->numTids; i++) {
	ThreadStack *sPtr = &boxes[i]->s;
	Tcl_Obj *t = Tcl_NewObj();

	Tcl_ListObjAppendElement(NULL, t, Tcl_NewStringObj("tid", -1));
	Tcl_ListObjAppendElement(NULL, t, Tcl_NewIntObj(sPtr->tid));
	Tcl_ListObjAppendElement(NULL, t, Tcl_NewStringObj("unplaced", -1));
	Tcl_ListObjAppendElement(NULL, t, Tcl_NewIntObj(sPtr->unplaced));
	Tcl_ListObjAppendElement(NULL, t, Tcl_NewStringObj("thread", -1));
	Tcl_ListObjAppendElement(NULL, t, tPtr->fsBase[i]
		? Tcl_ObjPrintf("tid0x%lx", (unsigned long) tPtr->fsBase[i])
		: Tcl_NewObj());
	Tcl_ListObjAppendElement(NULL, t, Tcl_NewStringObj("interps", -1));
	Tcl_ListObjAppendElement(NULL, t, sPtr->interps ? sPtr->interps
		: Tcl_NewObj());
	Tcl_ListObjAppendElement(NULL, t, Tcl_NewStringObj("frames", -1));
	Tcl_ListObjAppendElement(NULL, t, StackObj(tPtr->dwfl, sPtr));
	Tcl_ListObjAppendElement(NULL, threads, t);
    }
    Tcl_ListObjAppendElement(NULL, res, Tcl_NewStringObj("pause", -1));
    Tcl_ListObjAppendElement(NULL, res, Tcl_NewDoubleObj(pauseUs));
    Tcl_ListObjAppendElement(NULL, res, Tcl_NewStringObj("interps", -1));
    Tcl_ListObjAppendElement(NULL, res, Tcl_NewIntObj(tPtr->numInterps));
    Tcl_ListObjAppendElement(NULL, res, Tcl_NewStringObj("threads", -1));
    Tcl_ListObjAppendElement(NULL, res, threads);
    return res;
}

StackBox **
CprofRmNewBoxes(
    Target *tPtr)
{
    StackBox **boxes = (StackBox **) ckalloc(MAX_THREADS * sizeof(StackBox *));
    int i;

    for (i = 0; i < MAX_THREADS; i++) {
	boxes[i] = (StackBox *) ckalloc(sizeof(StackBox));
	boxes[i]->tPtr = tPtr;
	boxes[i]->s.numNative = 0;
	boxes[i]->s.numTcl = 0;
	boxes[i]->s.unplaced = 0;
	boxes[i]->s.tid = 0;
	boxes[i]->s.interps = NULL;
	boxes[i]->leaf = 0;
	boxes[i]->numLeafRegs = 0;
    }
    return boxes;
}

void
CprofRmFreeBoxes(
    StackBox **boxes)
{
    int i;

    for (i = 0; i < MAX_THREADS; i++) {
	if (boxes[i]->s.interps) {
	    Tcl_DecrRefCount(boxes[i]->s.interps);
	}
	ckfree(boxes[i]);
    }
    ckfree(boxes);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofRmEndDwfl --
 *
 *	End a target's Dwfl, and the leaf step's if one was made.
 *
 *----------------------------------------------------------------------
 */

void
CprofRmEndDwfl(
    Target *tPtr)
{
    if (tPtr->leafDwfl != NULL) {
	dwfl_end(tPtr->leafDwfl);
	tPtr->leafDwfl = NULL;
    }
    tPtr->leafFailed = 0;
    if (tPtr->dwfl != NULL) {
	dwfl_end(tPtr->dwfl);
	tPtr->dwfl = NULL;
    }
}

#endif /* CPROF_RM_SUPPORTED */
