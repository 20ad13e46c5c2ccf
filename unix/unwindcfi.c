/*
 * unwindcfi.c --
 *
 *	The native stacks of sampled allocations (hookmem.c): a walk of the
 *	call frame information with each code address's rule worked out
 *	once and cached, libgcc's unwinder (CprofNativeWalk, unwindgcc.c)
 *	where that cannot go. The signal handler's walk too
 *	(CprofCfiWalkFrom, sampler.c).
 *
 *	Why by hand: libgcc decodes every frame's CFI anew at each walk
 *	(some 27,000 instructions for a Tcl program's stack, most of what a
 *	sampled allocation cost); libunwind's cached local unwinding needs
 *	its own allocations and dl_iterate_phdr calls inside the malloc
 *	hook, where a thread in dlopen holding the loader's lock while it
 *	allocates would deadlock it. Here the rules libgcc's FDE gives
 *	(_Unwind_Find_FDE, called with no lock of ours held) are decoded for
 *	the common cases only and kept in a table mapped outside the
 *	program's heap; anything else is libgcc's.
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
#include "unwindcfi.h"
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/*
 *----------------------------------------------------------------------
 *
 * The unwinder of sampled allocations (x86-64) --
 *
 *	libgcc's unwinder, which the sampler uses, decodes each frame's
 *	call frame information anew: about 1,100 instructions a frame, some
 *	27,000 for a Tcl program's stack, most of what a sampled
 *	allocation costs. Here the rule of each code address met (how to
 *	find its frame's CFA, return address and saved %rbp) is worked out
 *	once, from the FDE libgcc finds (_Unwind_Find_FDE), and cached, so
 *	that a walk costs a table lookup and two loads a frame.
 *
 *	Only the rules gcc and clang emit for ordinary code are taken: CFA
 *	= %rsp or %rbp + offset, the return address at CFA - 8, %rbp saved
 *	at an offset from the CFA or left alone. Anything else (signal
 *	frames, CFA expressions, stack realignment through another
 *	register, an FDE that cannot be read) makes the rule "unsupported",
 *	and the walk is done again by libgcc (CprofNativeWalk); a frame
 *	without an FDE, or whose return address is undefined, ends the
 *	stack, as it does for libgcc. Each frame's CFA must lie above the
 *	previous one, or the walk is handed to libgcc too.
 *
 *	The cache (WALK_SLOTS rules, insert-only, linear probing) and the
 *	walk are under walkMutex, a rule's working out is not (MemWalk); it
 *	is emptied at each start and when a module is unloaded (its
 *	addresses may be reused by another).
 *
 *----------------------------------------------------------------------
 */

#define WALK_SLOTS	4096
#define WALK_PROBES	16

enum {
    RULE_NONE,			/* Empty slot. */
    RULE_FRAME,			/* A frame: cfaReg + cfaOff. */
    RULE_END,			/* No caller (no FDE, or RA undefined). */
    RULE_OTHER			/* Unsupported: libgcc walks. */
};

/*
 * The callee-saved registers a rule follows, in the order of
 * CprofCfiStart.regs: %rbx %rbp %r12-%r15 (DWARF 3 6 12-15). Only %rbp is
 * needed to walk; the others are the registers of the frame whose pc
 * candidates the sampler keeps (sampled lines).
 */

#define SAVED_RBP	1

static const int savedDwarf[CPROF_CFI_SAVED] = {3, 6, 12, 13, 14, 15};

typedef struct WalkRule {
    uintptr_t pc;		/* The address looked up; 0: empty slot.
				 * Written last, with release order: a
				 * reader that sees it sees the rest. */
    int32_t cfaOff;
    int16_t saveOff[CPROF_CFI_SAVED];
				/* Register saved at CFA + saveOff; 0: kept
				 * (its value in the callee's frame). */
    uint8_t cfaReg;		/* 6 %rbp, 7 %rsp (DWARF numbers). */
    uint8_t kind;
} WalkRule;

typedef struct DwarfEhBases {
    void *tbase, *dbase, *func;
} DwarfEhBases;

typedef const void *(*FindFdeProc)(void *pc, DwarfEhBases *bases);

/*
 * A code address's first slot in the rule table (multiplicative hashing,
 * the table's 12 bits).
 */

static inline uint32_t
RuleHash(
    uintptr_t pc)
{
    return (uint32_t) (((uint64_t) pc * 0x9e3779b97f4a7c15ull) >> (64 - 12));
}

static pthread_mutex_t walkMutex = PTHREAD_MUTEX_INITIALIZER;
static WalkRule *walkRules;	/* WALK_SLOTS, mmap'd at the first start. */
#define WALK_RECENT	32
#define SUBS_UNKNOWN	(~0ull)
static const WalkRule *recentRules[WALK_RECENT];
static uintptr_t recentCfas[WALK_RECENT];
static int numRecent;		/* The last walk's rules and CFAs (under
				 * walkMutex): prefetched when a walk starts.
				 * A stack's outer frames are those of the
				 * walk before, and sampled allocations come
				 * far apart: by then a program busy with
				 * its data has pushed those lines out of
				 * the cache, and a walk that met each miss
				 * in turn, a frame's rule before the next
				 * frame's, cost some 300 ns. Stale entries
				 * are harmless: prefetches do not fault. */
static FindFdeProc pFindFde;
static unsigned long long rulesSubs;
static void		ForgetLocked(unsigned long long subs);
static int		SubsOf(struct dl_phdr_info *info, size_t size,
			    void *clientData);
static int fastWalkOk;		/* The fast walk can be used. */
static uint64_t walkFast, walkSlow, walkRulesMade;
				/* Walks done each way (under walkMutex). */
static unsigned walkGen;	/* Odd while the rules are being forgotten,
				 * changes each time they are (a seqlock for
				 * the signal handler's walk, which reads the
				 * table without walkMutex). */
static int walkCheck;		/* Test hook: walk both ways, compare. */
static uint64_t walkChecked, walkMismatch;

#if defined(__x86_64__)

static uint64_t
ReadUleb(
    const uint8_t **pPtr,
    const uint8_t *end,
    int *okPtr)
{
    uint64_t v = 0;
    int shift = 0;
    const uint8_t *p = *pPtr;

    while (p < end) {
	uint8_t b = *p++;

	if (shift < 64) {
	    v |= (uint64_t) (b & 0x7f) << shift;
	}
	shift += 7;
	if (!(b & 0x80)) {
	    *pPtr = p;
	    return v;
	}
    }
    *okPtr = 0;
    *pPtr = end;
    return 0;
}

static int64_t
ReadSleb(
    const uint8_t **pPtr,
    const uint8_t *end,
    int *okPtr)
{
    int64_t v = 0;
    int shift = 0;
    uint8_t b = 0;
    const uint8_t *p = *pPtr;

    while (p < end) {
	b = *p++;
	if (shift < 64) {
	    v |= (int64_t) (b & 0x7f) << shift;
	}
	shift += 7;
	if (!(b & 0x80)) {
	    if (shift < 64 && (b & 0x40)) {
		v |= -((int64_t) 1 << shift);
	    }
	    *pPtr = p;
	    return v;
	}
    }
    *okPtr = 0;
    *pPtr = end;
    return 0;
}

/*
 * The size of a pointer in encoding 'enc' (DW_EH_PE_*), -1 for variable
 * or unknown (LEB128, aligned).
 */

static int
EncodedSize(
    uint8_t enc)
{
    if (enc == 0xff) {
	return 0;
    }
    if ((enc & 0x70) == 0x50) {
	return -1;
    }
    switch (enc & 0x0f) {
    case 0x00: case 0x04: case 0x0c:
	return 8;
    case 0x02: case 0x0a:
	return 2;
    case 0x03: case 0x0b:
	return 4;
    default:
	return -1;
    }
}

/*
 * The state the CFA program builds: what is needed of it.
 */

typedef struct CfaState {
    int cfaReg;
    int64_t cfaOff;
    int saveHow[CPROF_CFI_SAVED];
				/* Each followed register: 0 kept, 1 saved
				 * at CFA + saveOff, 2 other. */
    int64_t saveOff[CPROF_CFI_SAVED];
    int raHow;			/* 0 unset, 1 at CFA + raOff, 2 undefined,
				 * 3 other */
    int64_t raOff;
} CfaState;

/*
 * Run a CFA program up to (not past) the instructions for 'pc', from
 * 'loc'. Returns 0 for an unsupported instruction or bad data.
 */

static int
RunCfa(
    const uint8_t *p,
    const uint8_t *end,
    uintptr_t loc,
    uintptr_t pc,
    uint64_t codeAlign,
    int64_t dataAlign,
    int raReg,
    CfaState *sPtr,
    const CfaState *initPtr)
{
    CfaState stack[8];
    int depth = 0, ok = 1;

    while (p < end && ok) {
	uint8_t op = *p++;
	uint64_t reg = 0;
	int64_t off = 0;
	int setReg = 0;		/* 1 offset rule, 2 undefined, 3 other,
				 * 4 restore, 5 same value */

	switch (op >> 6) {
	case 1:			/* DW_CFA_advance_loc */
	    loc += (op & 0x3f) * codeAlign;
	    if (loc > pc) {
		return 1;
	    }
	    continue;
	case 2:			/* DW_CFA_offset */
	    reg = op & 0x3f;
	    off = (int64_t) ReadUleb(&p, end, &ok) * dataAlign;
	    setReg = 1;
	    break;
	case 3:			/* DW_CFA_restore */
	    reg = op & 0x3f;
	    setReg = 4;
	    break;
	default:
	    switch (op) {
	    case 0x00:		/* DW_CFA_nop */
		continue;
	    case 0x02:		/* DW_CFA_advance_loc1 */
		if (p + 1 > end) {
		    return 0;
		}
		loc += p[0] * codeAlign;
		p += 1;
		if (loc > pc) {
		    return 1;
		}
		continue;
	    case 0x03: {	/* DW_CFA_advance_loc2 */
		uint16_t d;

		if (p + 2 > end) {
		    return 0;
		}
		memcpy(&d, p, 2);
		p += 2;
		loc += d * codeAlign;
		if (loc > pc) {
		    return 1;
		}
		continue;
	    }
	    case 0x04: {	/* DW_CFA_advance_loc4 */
		uint32_t d;

		if (p + 4 > end) {
		    return 0;
		}
		memcpy(&d, p, 4);
		p += 4;
		loc += d * codeAlign;
		if (loc > pc) {
		    return 1;
		}
		continue;
	    }
	    case 0x05:		/* DW_CFA_offset_extended */
		reg = ReadUleb(&p, end, &ok);
		off = (int64_t) ReadUleb(&p, end, &ok) * dataAlign;
		setReg = 1;
		break;
	    case 0x06:		/* DW_CFA_restore_extended */
		reg = ReadUleb(&p, end, &ok);
		setReg = 4;
		break;
	    case 0x07:		/* DW_CFA_undefined */
		reg = ReadUleb(&p, end, &ok);
		setReg = 2;
		break;
	    case 0x08:		/* DW_CFA_same_value */
		reg = ReadUleb(&p, end, &ok);
		setReg = 5;
		break;
	    case 0x09:		/* DW_CFA_register */
		reg = ReadUleb(&p, end, &ok);
		(void) ReadUleb(&p, end, &ok);
		setReg = 3;
		break;
	    case 0x0a:		/* DW_CFA_remember_state */
		if (depth == 8) {
		    return 0;
		}
		stack[depth++] = *sPtr;
		continue;
	    case 0x0b:		/* DW_CFA_restore_state */
		if (depth == 0) {
		    return 0;
		}
		{
		    /* The CFA rule is not part of the state saved? It is
		     * in libgcc: the whole row is restored. */
		    *sPtr = stack[--depth];
		}
		continue;
	    case 0x0c:		/* DW_CFA_def_cfa */
		sPtr->cfaReg = (int) ReadUleb(&p, end, &ok);
		sPtr->cfaOff = (int64_t) ReadUleb(&p, end, &ok);
		continue;
	    case 0x0d:		/* DW_CFA_def_cfa_register */
		sPtr->cfaReg = (int) ReadUleb(&p, end, &ok);
		continue;
	    case 0x0e:		/* DW_CFA_def_cfa_offset */
		sPtr->cfaOff = (int64_t) ReadUleb(&p, end, &ok);
		continue;
	    case 0x11:		/* DW_CFA_offset_extended_sf */
		reg = ReadUleb(&p, end, &ok);
		off = ReadSleb(&p, end, &ok) * dataAlign;
		setReg = 1;
		break;
	    case 0x12:		/* DW_CFA_def_cfa_sf */
		sPtr->cfaReg = (int) ReadUleb(&p, end, &ok);
		sPtr->cfaOff = ReadSleb(&p, end, &ok) * dataAlign;
		continue;
	    case 0x13:		/* DW_CFA_def_cfa_offset_sf */
		sPtr->cfaOff = ReadSleb(&p, end, &ok) * dataAlign;
		continue;
	    case 0x14:		/* DW_CFA_val_offset */
		reg = ReadUleb(&p, end, &ok);
		(void) ReadUleb(&p, end, &ok);
		setReg = 3;
		break;
	    case 0x15:		/* DW_CFA_val_offset_sf */
		reg = ReadUleb(&p, end, &ok);
		(void) ReadSleb(&p, end, &ok);
		setReg = 3;
		break;
	    case 0x10:		/* DW_CFA_expression */
	    case 0x16: {	/* DW_CFA_val_expression */
		uint64_t len;

		reg = ReadUleb(&p, end, &ok);
		len = ReadUleb(&p, end, &ok);
		if (len > (uint64_t) (end - p)) {
		    return 0;
		}
		p += len;
		setReg = 3;
		break;
	    }
	    case 0x2e:		/* DW_CFA_GNU_args_size */
		(void) ReadUleb(&p, end, &ok);
		continue;
	    case 0x2f:		/* DW_CFA_GNU_negative_offset_extended */
		reg = ReadUleb(&p, end, &ok);
		off = -(int64_t) ReadUleb(&p, end, &ok) * dataAlign;
		setReg = 1;
		break;
	    default:		/* set_loc, def_cfa_expression, others. */
		return 0;
	    }
	}

	/*
	 * A register's rule: only the followed registers' and the return
	 * address's count.
	 */

	if ((int) reg == raReg) {
	    switch (setReg) {
	    case 1:
		sPtr->raHow = 1;
		sPtr->raOff = off;
		break;
	    case 2:
		sPtr->raHow = 2;
		break;
	    case 4:
		sPtr->raHow = initPtr->raHow;
		sPtr->raOff = initPtr->raOff;
		break;
	    default:
		sPtr->raHow = 3;
		break;
	    }
	} else {
	    int k;

	    for (k = 0; k < CPROF_CFI_SAVED; k++) {
		if ((int) reg == savedDwarf[k]) {
		    break;
		}
	    }
	    if (k == CPROF_CFI_SAVED) {
		continue;
	    }
	    switch (setReg) {
	    case 1:
		sPtr->saveHow[k] = 1;
		sPtr->saveOff[k] = off;
		break;
	    case 4:
		sPtr->saveHow[k] = initPtr->saveHow[k];
		sPtr->saveOff[k] = initPtr->saveOff[k];
		break;
	    case 5:
		sPtr->saveHow[k] = 0;
		break;
	    default:
		sPtr->saveHow[k] = 2;
		break;
	    }
	}
    }
    return ok;
}

/*
 * Work out the rule of a code address (a return address minus one, or the
 * walk's own first PC) from its FDE.
 */

static void
ComputeRule(
    uintptr_t pc,
    WalkRule *rulePtr)
{
    DwarfEhBases bases;
    const uint8_t *fde, *cie, *p, *end, *cieEnd, *cieInsns;
    uint32_t len, ciePtr;
    const char *aug;
    uint64_t codeAlign, augLen;
    int64_t dataAlign;
    int raReg, ok = 1, size, k;
    uint8_t fdeEnc = 0;
    CfaState init, state;

    memset(rulePtr, 0, sizeof(WalkRule));
    rulePtr->pc = pc;
    rulePtr->kind = RULE_OTHER;
    fde = (const uint8_t *) pFindFde((void *) pc, &bases);
    if (fde == NULL) {
	if (CprofThunkContains(pc)) {
	    /*
	     * A command's thunk (hookthunk.c): no instruction of it moves
	     * the stack pointer, so its frame is an entry's, the return
	     * address at the stack pointer.
	     */

	    rulePtr->cfaReg = 7;
	    rulePtr->cfaOff = 8;
	    rulePtr->kind = RULE_FRAME;
	    return;
	}
	rulePtr->kind = RULE_END;
	return;
    }

    /*
     * The CIE.
     */

    memcpy(&len, fde, 4);
    memcpy(&ciePtr, fde + 4, 4);
    if (len == 0xffffffffu || len < 8) {
	return;
    }
    cie = fde + 4 - ciePtr;
    memcpy(&len, cie, 4);
    if (len == 0xffffffffu || len < 8) {
	return;
    }
    cieEnd = cie + 4 + len;
    p = cie + 8;			/* Past the length and the CIE id. */
    if (*p != 1 && *p != 3) {
	return;				/* Version. */
    }
    p++;
    aug = (const char *) p;
    p += strlen(aug) + 1;
    if (p > cieEnd || aug[0] != 'z') {
	return;
    }
    codeAlign = ReadUleb(&p, cieEnd, &ok);
    dataAlign = ReadSleb(&p, cieEnd, &ok);
    raReg = (cie[8] == 1) ? (p < cieEnd ? *p++ : -1)
	    : (int) ReadUleb(&p, cieEnd, &ok);
    augLen = ReadUleb(&p, cieEnd, &ok);
    if (!ok || augLen > (uint64_t) (cieEnd - p)) {
	return;
    }
    cieInsns = p + augLen;
    for (aug++; *aug != '\0'; aug++) {
	switch (*aug) {
	case 'R':
	    fdeEnc = *p++;
	    break;
	case 'L':
	    p++;
	    break;
	case 'P':
	    size = EncodedSize(*p);
	    if (size < 0) {
		return;
	    }
	    p += 1 + size;
	    break;
	default:
	    return;			/* 'S' (signal frames) and others. */
	}
    }
    if (raReg != 16) {
	return;
    }

    /*
     * The FDE: past its addresses and augmentation data, to its program.
     */

    memcpy(&len, fde, 4);
    end = fde + 4 + len;
    p = fde + 8;
    size = EncodedSize(fdeEnc);
    if (size <= 0) {
	return;
    }
    p += 2 * size;
    augLen = ReadUleb(&p, end, &ok);
    if (!ok || augLen > (uint64_t) (end - p)) {
	return;
    }
    p += augLen;

    memset(&init, 0, sizeof(init));
    init.cfaReg = -1;
    if (!RunCfa(cieInsns, cieEnd, 0, UINTPTR_MAX, codeAlign, dataAlign,
	    raReg, &init, &init)) {
	return;
    }
    state = init;
    if (!RunCfa(p, end, (uintptr_t) bases.func, pc, codeAlign, dataAlign,
	    raReg, &state, &init)) {
	return;
    }
    if (state.raHow == 2) {
	rulePtr->kind = RULE_END;
	return;
    }
    if ((state.cfaReg != 6 && state.cfaReg != 7) || state.raHow != 1
	    || state.raOff != -8
	    || state.cfaOff < INT32_MIN || state.cfaOff > INT32_MAX) {
	return;
    }
    for (k = 0; k < CPROF_CFI_SAVED; k++) {
	if (state.saveHow[k] == 2 || (state.saveHow[k] == 1
		&& (state.saveOff[k] == 0 || state.saveOff[k] < INT16_MIN
		|| state.saveOff[k] > INT16_MAX))) {
	    return;
	}
	rulePtr->saveOff[k] = (int16_t)
		(state.saveHow[k] == 1 ? state.saveOff[k] : 0);
    }
    rulePtr->cfaReg = (uint8_t) state.cfaReg;
    rulePtr->cfaOff = (int32_t) state.cfaOff;
    rulePtr->kind = RULE_FRAME;
}

/*
 * The cached rule of a code address, or NULL (under walkMutex, or from the
 * signal handler inside the seqlock walkGen: CprofCfiWalkFrom).
 */

static inline const WalkRule *
FindRule(
    uintptr_t pc)
{
    uint32_t i = RuleHash(pc), k;

    for (k = 0; k < WALK_PROBES; k++, i = (i + 1) & (WALK_SLOTS - 1)) {
	uintptr_t at = __atomic_load_n(&walkRules[i].pc, __ATOMIC_ACQUIRE);

	if (at == pc) {
	    return &walkRules[i];
	}
	if (at == 0) {
	    return NULL;
	}
    }
    return NULL;
}

/*
 * Keep a rule. Returns 0 when its probe sequence is full: the address is
 * never cached, its walks are libgcc's (memory hooks) or work the rule out
 * each time (the signal handler). Lock-free, as the signal handler keeps
 * the rules it works out too: a slot is claimed by swapping its empty
 * address for RULE_CLAIMED, filled, then given its address with release
 * order; a reader skips a claimed slot.
 */

#define RULE_CLAIMED	((uintptr_t) 1)

static int
CacheRule(
    const WalkRule *rulePtr)
{
    uint32_t i = RuleHash(rulePtr->pc), k;

    for (k = 0; k < WALK_PROBES; k++, i = (i + 1) & (WALK_SLOTS - 1)) {
	uintptr_t at = __atomic_load_n(&walkRules[i].pc, __ATOMIC_ACQUIRE);

	if (at == rulePtr->pc) {
	    return 1;
	}
	if (at == 0) {
	    if (__atomic_compare_exchange_n(&walkRules[i].pc, &at,
		    RULE_CLAIMED, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		memcpy((char *) &walkRules[i] + sizeof(uintptr_t),
			(const char *) rulePtr + sizeof(uintptr_t),
			sizeof(WalkRule) - sizeof(uintptr_t));
		__atomic_store_n(&walkRules[i].pc, rulePtr->pc,
			__ATOMIC_RELEASE);
		return 1;
	    }
	    if (at == rulePtr->pc) {
		return 1;
	    }
	}
    }
    return 0;
}

/*
 * Walk this thread's stack: the frames' return addresses (this
 * function's own PC first) and CFAs, as CprofNativeWalk gives them.
 * Returns the number of frames, WALK_LIBGCC when a frame needs libgcc, or
 * WALK_MISS when the rule of the address *missPtr is not known yet. Under
 * walkMutex; reads the cache and the thread's own stack only.
 */

#define WALK_LIBGCC	(-1)
#define WALK_MISS	(-2)

static int __attribute__((noinline))
FastWalk(
    uintptr_t *ip,
    uintptr_t *cfa,
    int max,
    uintptr_t *missPtr)
{
    uintptr_t pc, sp, fp, limit;
    int n = 0;

    __asm__ volatile(
	"lea 0(%%rip), %0\n\t"
	"mov %%rsp, %1\n\t"
	"mov %%rbp, %2"
	: "=r"(pc), "=r"(sp), "=r"(fp));
    limit = sp + ((uintptr_t) 1 << 30);
    for (n = 0; n < numRecent; n++) {
	__builtin_prefetch(recentRules[n]);
	__builtin_prefetch((const void *) (recentCfas[n] - 8));
    }
    n = numRecent = 0;
    while (n < max) {
	uintptr_t look = (n == 0) ? pc : pc - 1, frameCfa;
	const WalkRule *rPtr = FindRule(look);

	if (rPtr == NULL) {
	    *missPtr = look;
	    return WALK_MISS;
	}
	if (rPtr->kind == RULE_END) {
	    if (n == 0) {
		return WALK_LIBGCC;
	    }
	    ip[n] = pc;
	    cfa[n] = sp;
	    return n + 1;
	}
	if (rPtr->kind != RULE_FRAME) {
	    return WALK_LIBGCC;
	}
	frameCfa = (rPtr->cfaReg == 7 ? sp : fp) + (intptr_t) rPtr->cfaOff;
	if (frameCfa <= sp || frameCfa >= limit || (frameCfa & 7)) {
	    return WALK_LIBGCC;
	}
	ip[n] = pc;
	cfa[n] = sp;
	if (n < WALK_RECENT) {
	    recentRules[n] = rPtr;
	    recentCfas[n] = frameCfa;
	    numRecent = n + 1;
	}
	n++;
	if (rPtr->saveOff[SAVED_RBP] != 0) {
	    fp = *(const uintptr_t *) (frameCfa
		    + (intptr_t) rPtr->saveOff[SAVED_RBP]);
	}
	pc = *(const uintptr_t *) (frameCfa - 8);
	sp = frameCfa;
	if (pc == 0) {
	    return n;
	}
    }
    return n;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofCfiWalkFrom --
 *
 *	The sampler's walk (sampler.c SignalHandler): the same walk from
 *	the interrupted registers, in the signal handler. It takes no lock
 *	and allocates nothing:
 *
 *	- The rule table is read without walkMutex. A rule is published by
 *	  its address, stored last with release order (CacheRule); the
 *	  table is emptied only inside the seqlock walkGen, and a walk that
 *	  saw it change (or odd) is thrown away and done by libgcc.
 *	- A rule not in the table is worked out here, from the FDE libgcc's
 *	  _Unwind_Find_FDE finds (what libgcc's own unwinder calls for every
 *	  frame in this handler), and kept (CacheRule is lock-free). A
 *	  module unloaded between the generation check and the store could
 *	  leave one rule of it behind until the next drain notices the
 *	  unload (CprofCfiModules): a wrong stack at worst, never a fault.
 *	- Every word read is on the interrupted thread's stack, between its
 *	  stack pointer and the top of the stack (stackHi, found at arm in
 *	  normal context): memory that is mapped. A stale or wrong rule can
 *	  make a wrong stack, never a fault.
 *
 * Results:
 *	The number of frames (ip[0] the interrupted pc, then return
 *	addresses; cfa[] each frame's stack pointer, as libgcc's
 *	_Unwind_GetCFA gives them), or -1 when libgcc must walk (a signal
 *	frame, an unsupported rule, a frame outside the stack).
 *
 * Signal safety:
 *	Reads the rule table, the unwind tables and the thread's stack;
 *	writes only to its arguments and to empty slots of the table.
 *
 *----------------------------------------------------------------------
 */

static inline int
StackWord(
    const CprofCfiStart *startPtr,
    uintptr_t addr,
    uintptr_t *valuePtr)
{
    if (addr < startPtr->sp || addr > startPtr->stackHi - 8 || (addr & 7)) {
	return 0;
    }
    *valuePtr = *(const uintptr_t *) addr;
    return 1;
}

/*
 * A frame of the walk: its pc and sp; while 'follow', the first frame in
 * the marked range is the mark, with the registers there. Returns whether
 * to look for the mark further.
 */

static inline int
RecordFrame(
    CprofCfiStart *startPtr,
    uintptr_t *ip,
    uintptr_t *cfa,
    int n,
    uintptr_t pc,
    uintptr_t sp,
    uintptr_t look,
    const uintptr_t regs[CPROF_CFI_SAVED],
    int follow)
{
    ip[n] = pc;
    cfa[n] = sp;
    if (follow && look >= startPtr->markLo && look < startPtr->markHi) {
	startPtr->mark = n;
	memcpy(startPtr->markRegs, regs, CPROF_CFI_SAVED * sizeof(uintptr_t));
	return 0;
    }
    return follow;
}

int
CprofCfiWalkFrom(
    CprofCfiStart *startPtr,
    uintptr_t *ip,
    uintptr_t *cfa,
    int max)
{
    uintptr_t pc = startPtr->pc, sp = startPtr->sp;
    uintptr_t regs[CPROF_CFI_SAVED];
    unsigned gen;
    int n = 0, k, follow;

    startPtr->mark = -1;
    startPtr->truncated = 0;
    if (!fastWalkOk || walkRules == NULL || sp >= startPtr->stackHi
	    || sp < startPtr->stackLo) {
	return -1;
    }
    gen = __atomic_load_n(&walkGen, __ATOMIC_ACQUIRE);
    if (gen & 1) {
	return -1;
    }
    memcpy(regs, startPtr->regs, sizeof(regs));
    follow = (startPtr->markHi != 0);
    while (pc != 0) {
	uintptr_t look = (n == 0) ? pc : pc - 1, frameCfa, word;
	const WalkRule *rPtr = FindRule(look);
	WalkRule rule;

	if (n >= max) {
	    startPtr->truncated = 1;
	    break;
	}
	if (rPtr != NULL) {
	    rule = *rPtr;
	    if (rule.pc != look) {
		return -1;		/* Emptied meanwhile. */
	    }
	} else {
	    ComputeRule(look, &rule);
	    startPtr->rulesMade++;
	    if (__atomic_load_n(&walkGen, __ATOMIC_ACQUIRE) != gen) {
		return -1;
	    }
	    CacheRule(&rule);
	}
	if (rule.kind == RULE_END) {
	    if (n == 0) {
		return -1;
	    }
	    RecordFrame(startPtr, ip, cfa, n, pc, sp, look, regs, follow);
	    n++;
	    break;
	}
	if (rule.kind != RULE_FRAME) {
	    return -1;
	}
	frameCfa = (rule.cfaReg == 7 ? sp : regs[SAVED_RBP])
		+ (intptr_t) rule.cfaOff;
	if (frameCfa <= sp || frameCfa >= startPtr->stackHi
		|| (frameCfa & 7)) {
	    return -1;
	}
	follow = RecordFrame(startPtr, ip, cfa, n, pc, sp, look, regs, follow);
	n++;

	/*
	 * The caller's registers: those this frame saved, from their
	 * slots (only %rbp once the marked frame is found).
	 */

	if (follow) {
	    for (k = 0; k < CPROF_CFI_SAVED; k++) {
		if (rule.saveOff[k] != 0) {
		    if (!StackWord(startPtr,
			    frameCfa + (intptr_t) rule.saveOff[k], &word)) {
			return -1;
		    }
		    regs[k] = word;
		}
	    }
	} else if (rule.saveOff[SAVED_RBP] != 0) {
	    if (!StackWord(startPtr,
		    frameCfa + (intptr_t) rule.saveOff[SAVED_RBP], &word)) {
		return -1;
	    }
	    regs[SAVED_RBP] = word;
	}
	if (!StackWord(startPtr, frameCfa - 8, &pc)) {
	    return -1;
	}
	sp = frameCfa;
    }
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&walkGen, __ATOMIC_RELAXED) != gen) {
	return -1;
    }
    return n;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofCfiModules --
 *
 *	At a drain (normal context): forget the rules if a module was
 *	unloaded since they were worked out, as its addresses may now be
 *	another's (in sample mode no dlclose hook tells: until this drain a
 *	sample may be walked with a rule of the unloaded module, which can
 *	make a wrong stack but no fault, see CprofCfiWalkFrom).
 *
 *----------------------------------------------------------------------
 */

void
CprofCfiModules(void)
{
    unsigned long long subs = SUBS_UNKNOWN;

    if (!fastWalkOk) {
	return;
    }
    dl_iterate_phdr(SubsOf, &subs);
    pthread_mutex_lock(&walkMutex);
    if (subs == SUBS_UNKNOWN || subs != rulesSubs) {
	ForgetLocked(subs);
    }
    pthread_mutex_unlock(&walkMutex);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofCfiWalkAt --
 *
 *	The signal handler's walk (CprofCfiWalkFrom) as if the thread had
 *	been interrupted at 'pc' right as its caller's call reached it: the
 *	stack pointer at this function's return address, the caller's
 *	registers as they are. For tclcprof::debug walkat, which tests the
 *	rules of code without call frame information (a command's thunk).
 *	Normal context, during a run (the rule table is mapped at start).
 *
 * Results:
 *	The number of frames, or -1 if the walk gave up.
 *
 *----------------------------------------------------------------------
 */

int __attribute__((noinline))
CprofCfiWalkAt(
    uintptr_t pc,
    uintptr_t *ip,
    uintptr_t *cfa,
    int max)
{
    CprofCfiStart start;
    uintptr_t *fp = (uintptr_t *) __builtin_frame_address(0);
    pthread_attr_t attr;
    void *addr;
    size_t size;
    int n;

    memset(&start, 0, sizeof(start));
    if (pthread_getattr_np(pthread_self(), &attr) != 0) {
	return -1;
    }
    if (pthread_attr_getstack(&attr, &addr, &size) != 0) {
	pthread_attr_destroy(&attr);
	return -1;
    }
    pthread_attr_destroy(&attr);
    start.pc = pc;
    start.sp = (uintptr_t) (fp + 1);		/* Our return address. */
    start.regs[SAVED_RBP] = fp[0];		/* The caller's %rbp. */
    start.stackLo = (uintptr_t) addr;
    start.stackHi = (uintptr_t) addr + size;
    n = CprofCfiWalkFrom(&start, ip, cfa, max);
    __asm__ volatile ("" ::: "memory");	/* No tail call: fp stays ours. */
    return n;
}

#else /* !__x86_64__ */

/*
 * Elsewhere (aarch64) every walk is libgcc's: fastWalkOk stays 0, so
 * none of these is called.
 */

#define WALK_LIBGCC	(-1)
#define WALK_MISS	(-2)

static void
ComputeRule(
    uintptr_t pc,
    WalkRule *rulePtr)
{
    rulePtr->pc = pc;
    rulePtr->kind = RULE_OTHER;
}

static int
CacheRule(
    const WalkRule *rulePtr)
{
    return 0;
}

int
CprofCfiWalkFrom(
    CprofCfiStart *startPtr,
    uintptr_t *ip,
    uintptr_t *cfa,
    int max)
{
    startPtr->mark = -1;
    startPtr->truncated = 0;
    return -1;
}

int
CprofCfiWalkAt(
    uintptr_t pc,
    uintptr_t *ip,
    uintptr_t *cfa,
    int max)
{
    return -1;
}

void
CprofCfiModules(void)
{
}

static int
FastWalk(
    uintptr_t *ip,
    uintptr_t *cfa,
    int max,
    uintptr_t *missPtr)
{
    (void) recentRules;
    (void) recentCfas;
    return WALK_LIBGCC;
}

#endif

/*
 * The native stack of a sampled allocation: the fast walk, or libgcc's
 * (CprofNativeWalk).
 */

int
CprofCfiWalk(
    uintptr_t *ip,
    uintptr_t *cfa,
    int max,
    uintptr_t ownLo,		/* The caller's own text: where the two */
    uintptr_t ownHi)		/* walks compared (-check) start. */
{
    int n = WALK_LIBGCC, tries;

    if (fastWalkOk) {
	/*
	 * A rule not known yet is worked out with the lock released (libgcc
	 * finding the FDE may take the loader's lock, which a thread in
	 * dlopen holds while it allocates), then the walk starts again.
	 * Rules are not kept if the modules changed meanwhile.
	 */

	for (tries = 0; tries < 4 * CPROF_NATIVE_MAX; tries++) {
	    uintptr_t miss = 0;
	    WalkRule rule;
	    unsigned g;
	    int kept;

	    pthread_mutex_lock(&walkMutex);
	    g = walkGen;
	    n = FastWalk(ip, cfa, max, &miss);
	    pthread_mutex_unlock(&walkMutex);
	    if (n != WALK_MISS) {
		break;
	    }
	    ComputeRule(miss, &rule);
	    pthread_mutex_lock(&walkMutex);
	    kept = (walkGen == g) && CacheRule(&rule);
	    walkRulesMade += kept;
	    pthread_mutex_unlock(&walkMutex);
	    if (!kept) {
		n = WALK_LIBGCC;
		break;
	    }
	}
	if (n == WALK_MISS) {
	    n = WALK_LIBGCC;
	}
	if (n >= 0 && walkCheck) {
	    uintptr_t ip2[CPROF_NATIVE_MAX + 8], cfa2[CPROF_NATIVE_MAX + 8];
	    int n2 = CprofNativeWalk(ip2, cfa2, CPROF_NATIVE_MAX + 8), i, j;
	    int differ;

	    /*
	     * Both start inside this file (the first frames differ: each
	     * walker's own); compare from the first frame outside it.
	     */

	    for (i = 0; i < n && ip[i] >= ownLo && ip[i] < ownHi; i++) {
	    }
	    for (j = 0; j < n2 && ip2[j] >= ownLo && ip2[j] < ownHi; j++) {
	    }
	    differ = (n - i != n2 - j
		    || memcmp(ip + i, ip2 + j, (n - i) * sizeof(uintptr_t))
		    || memcmp(cfa + i, cfa2 + j, (n - i) * sizeof(uintptr_t)));
	    pthread_mutex_lock(&walkMutex);
	    walkChecked++;
	    walkMismatch += differ;
	    pthread_mutex_unlock(&walkMutex);
	}
	pthread_mutex_lock(&walkMutex);
	if (n >= 0) {
	    walkFast++;
	} else {
	    walkSlow++;
	}
	pthread_mutex_unlock(&walkMutex);
    }
    if (n < 0) {
	n = CprofNativeWalk(ip, cfa, max);
    }
    return n;
}

/*
 * Forget every rule (a module unloaded during a run). The next start
 * empties the table again (rulesSubs unknown): it cannot tell whether a
 * module went after this.
 */

static unsigned long long rulesSubs = SUBS_UNKNOWN;
				/* The loader's count of modules unloaded
				 * when the rules were emptied (under
				 * walkMutex). */

static void
ForgetLocked(
    unsigned long long subs)
{
    __atomic_store_n(&walkGen, walkGen + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    if (walkRules != NULL) {
	memset(walkRules, 0, WALK_SLOTS * sizeof(WalkRule));
    }
    numRecent = 0;
    __atomic_store_n(&walkGen, walkGen + 1, __ATOMIC_RELEASE);
    rulesSubs = subs;
}

void
CprofCfiForget(void)
{
    pthread_mutex_lock(&walkMutex);
    ForgetLocked(SUBS_UNKNOWN);
    pthread_mutex_unlock(&walkMutex);
}

static int
SubsOf(
    struct dl_phdr_info *info,
    size_t size,
    void *clientData)
{
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs)
	    + sizeof(info->dlpi_subs)) {
	*(unsigned long long *) clientData = info->dlpi_subs;
    }
    return 1;				/* The first module says it. */
}

/*
 * A start: the rules worked out by earlier runs stay, unless a module was
 * unloaded since (the loader counts unloads: dlpi_subs), as its addresses
 * may now be another's. Otherwise each run's first samples would work
 * out again, address by address, rules that have not changed (an FDE
 * found and decoded each).
 */

void
CprofCfiRenew(void)
{
    unsigned long long subs = SUBS_UNKNOWN;

    dl_iterate_phdr(SubsOf, &subs);
    pthread_mutex_lock(&walkMutex);
    if (subs == SUBS_UNKNOWN || subs != rulesSubs) {
	ForgetLocked(subs);
    }
    pthread_mutex_unlock(&walkMutex);
}

/*
 * The rule table, and libgcc's FDE lookup, once per process (the first
 * start of a memory run, or the first arm of a sampler).
 */

static void
CfiInitOnce(void)
{
    void *mem = mmap(NULL, WALK_SLOTS * sizeof(WalkRule),
	    PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void *handle = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NOLOAD);

    if (handle != NULL) {
	pFindFde = (FindFdeProc) dlsym(handle, "_Unwind_Find_FDE");
	dlclose(handle);
    }
    if (mem != MAP_FAILED) {
	walkRules = (WalkRule *) mem;
    }
#if defined(__x86_64__)
    __atomic_store_n(&fastWalkOk, (walkRules != NULL && pFindFde != NULL),
	    __ATOMIC_RELEASE);
#endif
}

void
CprofCfiInit(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;

    pthread_once(&once, CfiInitOnce);
}

/*
 * The bytes the rule table takes.
 */

size_t
CprofCfiBytes(void)
{
    return walkRules != NULL ? WALK_SLOTS * sizeof(WalkRule) : 0;
}

/*
 * Around fork (hookmem.c's atfork handlers): the table's lock.
 */

void
CprofCfiLock(void)
{
    pthread_mutex_lock(&walkMutex);
}

void
CprofCfiUnlock(void)
{
    pthread_mutex_unlock(&walkMutex);
}

/*
 * Test hook: the walks of sampled allocations so far (fast, handed to
 * libgcc; checked and differing since the last change of 'check'), and the
 * rules worked out and kept so far. Then,
 * with 'check' 1, each fast walk is compared with libgcc's from now on;
 * 0 stops that; -1 changes nothing.
 */

void
CprofMemWalkStats(
    int check,
    uint64_t counts[5])
{
    pthread_mutex_lock(&walkMutex);
    counts[0] = walkFast;
    counts[1] = walkSlow;
    counts[2] = walkChecked;
    counts[3] = walkMismatch;
    counts[4] = walkRulesMade;
    if (check >= 0) {
	walkCheck = check;
	walkChecked = walkMismatch = 0;
    }
    pthread_mutex_unlock(&walkMutex);
}
