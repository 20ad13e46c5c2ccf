/*
 * cmdscopeInt.h --
 *
 *	What cmdscope.c (sessions: members found, started, stopped, their
 *	parts published) and cmdscopedata.c (the session's profile put
 *	together) share.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#ifndef _SCOPEINT_H
#define _SCOPEINT_H

#include "cmdInt.h"

enum ThreadState {
    THREAD_RUNNING, THREAD_STOPPED, THREAD_EXITED, THREAD_LATE
};
MODULE_SCOPE const char *const cprofThreadStateNames[];

/*
 * A thread that took part.
 */

typedef struct ThreadRec {
    Tcl_ThreadId id;
    pid_t tid;
    char tclId[40];		/* tid0x..., as the Thread package says. */
    CprofInterp *primaryPtr;	/* The member sampling it, while it runs. */
    int state;			/* enum ThreadState. */
    uint64_t cpuStartNs;	/* Its CPU time when it joined. */
    uint64_t cpuNs;		/* ... spent while it took part. */
    int order;			/* Order of joining. */
    int interps[64];		/* Interpreters profiled in it (interpId,
				 * -1 the top one), the first 64. */
    int numInterps;
    struct ThreadRec *nextPtr;
} ThreadRec;


/*
 * What a member published: its profile value (for the primary of a
 * thread, whose samples hold the frames of all its interpreters, the
 * thread's sampled tree; for the others, their exact tree, coverage and
 * call sites).
 */

typedef struct Part {
    ThreadRec *threadPtr;
    int primary;
    char *value;		/* Its profile value, as a string, or
				 * NULL. */
    Tcl_WideInt samples, weight, calls;
				/* Its meta's figures. */
    int interpId;		/* Its interpreter (CprofFrameDef's). */
    Tcl_WideInt startNs;	/* Its run's start (monotonic) ... */
    uint64_t startTicks;	/* ... and in its exact clock's ticks: its
				 * events' time 0. */
    int epoch;			/* With -history: the interval it belongs
				 * to (CprofSession's epoch). */
    struct Part *nextPtr;
} Part;

/*
 * With -history, which parts make a profile: those of the interval
 * joined.
 */

#define PART_COUNTS(sPtr, pPtr) \
    (!(sPtr)->intervals || (pPtr)->epoch == (sPtr)->joinEpoch)


struct CprofSession {
    int scope;			/* enum CprofScope. */
    CprofInterp *ownerPtr;	/* NULL once the owner's state is gone. */
    Tcl_ThreadId ownerThread;
    pid_t pid;			/* The process it was started in. */
    CprofOptions options;	/* The run's, for members. */
    int stopping;
    int refCount;
    CprofInterp *members;	/* Live members (nextMemberPtr). */
    ThreadRec *threads;		/* In order of joining, the owner's first. */
    int numThreads;
    Part *parts;		/* Newest first. */
    Tcl_Condition cond;		/* A member of another thread stopped. */
    CprofSymbolizer *symPtr;	/* Native names, for the members' drains
				 * (one set of module files read for all
				 * threads), and its lock. */
    Tcl_Mutex symMutex;
    CprofNameRefs names;	/* The members' paths (interpId), held
				 * while the session lasts (under
				 * scopeMutex). */

    /* -history (the owner's run rotates its files): intervals. */
    int intervals;		/* The owner's run keeps a history. */
    int epoch;			/* The current interval (0, 1, ...): a
				 * member whose memberEpoch differs is asked
				 * to publish what it collected and clear
				 * it (atomic reads). */
    int joined;			/* The last interval whose file got its
				 * whole; -1 before. */
    int joinEpoch;		/* The interval a profile value is made of
				 * (the current one, or the one ending). */
};


MODULE_SCOPE Tcl_Mutex cprofScopeMutex;

MODULE_SCOPE const char *CprofScopeThreadName(Tcl_ThreadId id);
MODULE_SCOPE void	CprofScopeThreadNameSet(Tcl_ThreadId id,
			    const char *name);
MODULE_SCOPE Tcl_Obj *	CprofScopeThreadNameObj(const ThreadRec *tPtr);
MODULE_SCOPE uint64_t	CprofScopeThreadCpuNs(void);
MODULE_SCOPE Tcl_Obj *	CprofScopeWhole(CprofInterp *ciPtr);

#endif /* _SCOPEINT_H */
