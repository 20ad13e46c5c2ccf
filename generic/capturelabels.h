/*
 * capturelabels.h --
 *
 *	What the two halves of labels share: the per-thread table of the
 *	sets in effect (capturelabels.c makes a thread's, reads it in the
 *	signal handler and the memory hooks, and lets an interpreter's
 *	entries go; cmdlabels.c, above the memory hooks, fills it).
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _CAPTURELABELS_H
#define _CAPTURELABELS_H

#define LABEL_CHAIN	16	/* Resumers followed from a coroutine. */
#define TOMB		((void *) 1)

typedef struct LabelSlot {
    void *volatile env;		/* ExecEnv*, NULL (empty) or TOMB. */
    Tcl_Interp *interp;		/* Its interpreter. */
    volatile int id;		/* The set in effect there. */
    volatile uint64_t seq;	/* When it was set. */
} LabelSlot;

typedef struct LabelTable {
    unsigned mask;		/* Slots - 1 (a power of two). */
    unsigned used;		/* Slots not empty (live and tombs). */
    unsigned live;
    LabelSlot slots[1];
} LabelTable;

/*
 * A label scope: what it replaced in its environment.
 */

typedef struct LabelScope {
    Tcl_Interp *interp;
    void *env;
    int id;			/* The set it put in effect. */
    int had;			/* The environment had an entry: */
    int oldId;			/* its set */
    uint64_t oldSeq;		/* and sequence. */
} LabelScope;

struct CprofLabelThread {
    LabelTable *volatile table;	/* NULL until labels are first used. */
    void **volatile *volatile envAddr;
				/* &iPtr->execEnvPtr of the interpreters
				 * that used labels, or NULL; capInterps
				 * of them, grown in normal context (a new
				 * array published before numInterps
				 * counts its new slots). */
    Tcl_Interp **interps;	/* The interpreters (normal context). */
    int capInterps;
    volatile int numInterps;	/* Slots of envAddr once used. */
    uint64_t seq;
    LabelScope *cScopes;	/* The C interface's pushes, innermost */
    int numC, capC;		/* last. */
};

/*
 * An environment's slot (signal safe).
 */

static inline unsigned
Hash(
    const void *env,
    unsigned mask)
{
    uint64_t h = (uint64_t) (uintptr_t) env * 0x9e3779b97f4a7c15ull;

    return (unsigned) (h >> 32) & mask;
}

MODULE_SCOPE LabelSlot *CprofLabelsFind(LabelTable *tPtr, const void *env);
MODULE_SCOPE void	CprofLabelsInterpGone(ClientData clientData,
			    Tcl_Interp *interp);

#endif /* _CAPTURELABELS_H */
