/*
 * store.c --
 *
 *	Profiles in SQLite: one database file holds many runs. A running
 *	profile with -db is written by flushes, each one transaction that
 *	brings the file up to date with the data in memory; a stopped one by
 *	tclcprof::save. Profiles are read back (tclcprof::data -db) as the
 *	very value tclcprof::data returns from memory, so that reports and
 *	exports give the same output from a file as from memory.
 *
 *	A flush writes what changed since the last one: each table row of
 *	the file has a shadow copy in memory of what was last written (call
 *	tree nodes, call sites, coverage counts), compared with the value a
 *	profile would show now; new rows are inserted, changed ones updated,
 *	events appended. Values come from the same functions that build the
 *	profile value (exact.c: CprofExactAdjust, CprofExactFiguresOf,
 *	CprofExactLineValues), so the file cannot disagree with memory.
 *
 *	A failed flush rolls back and forgets every shadow, so that the next
 *	one rewrites everything (rows are upserted); nothing collected in
 *	memory is lost.
 *
 *	No connection is held between writes: each one (adding a run, a
 *	flush, a save) opens the file and closes it. SQLite keeps lock state
 *	per file and per process, shared by all its connections, and a
 *	connection must not cross fork: a child that inherited an open
 *	connection and opened another to the same file would write without
 *	real locks, and the parent closing its own would checkpoint and
 *	remove the write-ahead log under the child. Between writes there is
 *	nothing to inherit. Intermediate flushes close without a checkpoint
 *	(SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE; SQLite checkpoints as the log
 *	grows), the last one of a run with one.
 *
 *	The schema is documented in the man page, DATABASE SCHEMA. Its
 *	version is kept in the file's user_version, its owner in the
 *	file's application_id: a file that is another program's database, or
 *	has a schema version this code does not know, is refused.
 *
 *	Everything here runs in normal context, in the thread that owns the
 *	profiled interpreter.
 *
 * Copyright (c) 2026 The tclcprof authors.
 *
 * See the file "LICENSE" for information on usage and redistribution of
 * this file, and for a DISCLAIMER OF ALL WARRANTIES.
 */

#include "tclcprofInt.h"
#include <sqlite3.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#define SCHEMA_VERSION	1
#define APPLICATION_ID	0x74637066	/* "tcpf" */
#define BUSY_TIMEOUT_MS	5000

/*
 * Event handlers per origin and kind (events.c): added to version 1 with
 * CREATE TABLE IF NOT EXISTS, so that a file made before it gets it when
 * a run with handlers is written, and readers look for it first.
 */

#define HANDLERS_SQL \
"CREATE TABLE IF NOT EXISTS handlers (\n" \
"  run INTEGER NOT NULL REFERENCES runs(id),\n" \
"  seq INTEGER NOT NULL,\n" \
"  origin TEXT NOT NULL,\n" \
"  kind TEXT NOT NULL,\n" \
"  count INTEGER NOT NULL, timed INTEGER NOT NULL,\n" \
"  total_ns INTEGER NOT NULL, max_ns INTEGER NOT NULL,\n" \
"  latency_count INTEGER, latency_ns INTEGER, latency_max_ns INTEGER,\n" \
"  PRIMARY KEY (run, seq)\n" \
") WITHOUT ROWID;\n"

/*
 * The schema, version 1. Frames are shared by the runs of a file; every
 * other table is per run. Views answer the usual questions.
 */

static const char schemaSql[] =
"CREATE TABLE runs (\n"
"  id INTEGER PRIMARY KEY,\n"
"  label TEXT NOT NULL DEFAULT '',\n"
"  status TEXT NOT NULL,\n"		/* running, complete */
"  stopped_by TEXT NOT NULL DEFAULT '',\n"
"  start_time REAL NOT NULL,\n"	/* Unix time, seconds */
"  end_time REAL,\n"
"  elapsed REAL,\n"
"  pid INTEGER NOT NULL,\n"
"  parent_run INTEGER REFERENCES runs(id),\n"
"  host TEXT, argv0 TEXT, argv TEXT, cwd TEXT,\n"
"  tcl_version TEXT, tclcprof_version TEXT,\n"
"  mode TEXT NOT NULL, clock TEXT NOT NULL,\n"
"  rate_requested REAL, rate_achieved REAL,\n"
"  samples INTEGER, weight INTEGER, drops INTEGER, splice_rate REAL,\n"
"  calls INTEGER, overhead_pct REAL,\n"
"  test_file TEXT, test_name TEXT,\n"
"  has_lines INTEGER NOT NULL DEFAULT 0,\n"
"  has_events INTEGER NOT NULL DEFAULT 0,\n"
"  meta TEXT NOT NULL DEFAULT ''\n"
");\n"
"CREATE TABLE frames (\n"
"  id INTEGER PRIMARY KEY,\n"
"  kind TEXT NOT NULL,\n"		/* tcl, c */
"  name TEXT NOT NULL,\n"
"  tclkind TEXT NOT NULL DEFAULT '',\n"
"  module TEXT NOT NULL DEFAULT '',\n"
"  file TEXT NOT NULL DEFAULT '',\n"
"  line INTEGER NOT NULL DEFAULT 0,\n"
"  UNIQUE (kind, name, tclkind, module, file, line)\n"
");\n"
"CREATE TABLE nodes (\n"
"  run INTEGER NOT NULL REFERENCES runs(id),\n"
"  tree INTEGER NOT NULL,\n"		/* 0 the profile's tree, 1 exact (both) */
"  id INTEGER NOT NULL,\n"
"  parent INTEGER,\n"
"  frame INTEGER REFERENCES frames(id),\n"
"  self NOT NULL, total NOT NULL,\n"
"  calls INTEGER, total_ns INTEGER, self_ns INTEGER,\n"
"  min_ns INTEGER, max_ns INTEGER, suspended_ns INTEGER,\n"
"  recursive INTEGER NOT NULL DEFAULT 0,\n"
"  shown INTEGER NOT NULL DEFAULT 1,\n"
"  PRIMARY KEY (run, tree, id)\n"
") WITHOUT ROWID;\n"
"CREATE TABLE lines (\n"
"  run INTEGER NOT NULL REFERENCES runs(id),\n"
"  id INTEGER NOT NULL,\n"
"  file TEXT NOT NULL, line INTEGER NOT NULL,\n"
"  frame INTEGER NOT NULL REFERENCES frames(id),\n"
"  caller TEXT NOT NULL DEFAULT '',\n"
"  calls INTEGER, total_ns INTEGER, self_ns INTEGER,\n"
"  min_ns INTEGER, max_ns INTEGER,\n"
"  shown INTEGER NOT NULL DEFAULT 1,\n"
"  PRIMARY KEY (run, id)\n"
") WITHOUT ROWID;\n"
"CREATE TABLE events (\n"
"  run INTEGER NOT NULL REFERENCES runs(id),\n"
"  seq INTEGER NOT NULL,\n"
"  ns INTEGER NOT NULL,\n"
"  type TEXT NOT NULL,\n"		/* E, L */
"  frame INTEGER NOT NULL REFERENCES frames(id),\n"
"  PRIMARY KEY (run, seq)\n"
") WITHOUT ROWID;\n"
"CREATE TABLE coverage_commands (\n"
"  run INTEGER NOT NULL REFERENCES runs(id),\n"
"  frame INTEGER NOT NULL REFERENCES frames(id),\n"
"  calls INTEGER NOT NULL,\n"
"  seq INTEGER NOT NULL,\n"
"  PRIMARY KEY (run, seq)\n"
") WITHOUT ROWID;\n"
"CREATE TABLE coverage_lines (\n"
"  run INTEGER NOT NULL REFERENCES runs(id),\n"
"  file TEXT NOT NULL, line INTEGER NOT NULL,\n"
"  calls INTEGER NOT NULL,\n"
"  seq INTEGER NOT NULL,\n"
"  PRIMARY KEY (run, file, line)\n"
") WITHOUT ROWID;\n"
"CREATE TABLE coverage_procs (\n"
"  run INTEGER NOT NULL REFERENCES runs(id),\n"
"  seq INTEGER NOT NULL,\n"
"  name TEXT NOT NULL,\n"
"  PRIMARY KEY (run, seq)\n"
") WITHOUT ROWID;\n"
HANDLERS_SQL
"CREATE VIEW node_frames AS\n"
"  SELECT n.*, f.kind AS kind, f.name AS name, f.tclkind AS tclkind,\n"
"         f.module AS module\n"
"  FROM nodes n LEFT JOIN frames f ON f.id = n.frame WHERE n.shown;\n"
"CREATE VIEW top_self AS\n"
"  SELECT n.run, f.id AS frame, f.kind, f.name, f.tclkind, f.module,\n"
"         SUM(n.self) AS self, SUM(n.calls) AS calls\n"
"  FROM nodes n JOIN frames f ON f.id = n.frame\n"
"  WHERE n.tree = 0 AND n.shown\n"
"  GROUP BY n.run, f.id ORDER BY n.run, self DESC;\n"
"CREATE VIEW top_total AS\n"
"  SELECT n.run, f.id AS frame, f.kind, f.name, f.tclkind, f.module,\n"
"         SUM(n.total) AS total, SUM(n.calls) AS calls\n"
"  FROM nodes n JOIN frames f ON f.id = n.frame\n"
"  WHERE n.tree = 0 AND n.shown AND NOT n.recursive\n"
"  GROUP BY n.run, f.id ORDER BY n.run, total DESC;\n"
"CREATE VIEW edges AS\n"
"  SELECT c.run, c.tree, p.frame AS caller, c.frame AS callee,\n"
"         COUNT(*) AS paths, SUM(c.calls) AS calls, SUM(c.total) AS total,\n"
"         SUM(c.self) AS self, MAX(c.recursive) AS recursive\n"
"  FROM nodes c JOIN nodes p\n"
"    ON p.run = c.run AND p.tree = c.tree AND p.id = c.parent\n"
"  WHERE c.shown\n"
"  GROUP BY c.run, c.tree, p.frame, c.frame;\n"
"CREATE VIEW calls_between AS\n"
"  SELECT e.run, e.tree, coalesce(fc.name, '(top)') AS caller_name,\n"
"         fe.name AS callee_name, e.caller, e.callee, e.paths, e.calls,\n"
"         e.total, e.self, e.recursive\n"
"  FROM edges e LEFT JOIN frames fc ON fc.id = e.caller\n"
"  JOIN frames fe ON fe.id = e.callee;\n"
"CREATE VIEW never_called AS\n"
"  SELECT p.run, p.name FROM coverage_procs p\n"
"  WHERE NOT EXISTS (SELECT 1 FROM coverage_commands c\n"
"    JOIN frames f ON f.id = c.frame\n"
"    WHERE c.run = p.run AND f.name = p.name AND c.calls > 0);\n"
"CREATE VIEW stacks AS\n"
"  WITH RECURSIVE s(run, tree, id, stack, frame_ids) AS (\n"
"    SELECT n.run, n.tree, n.id, f.name, CAST(n.frame AS TEXT)\n"
"    FROM nodes n JOIN frames f ON f.id = n.frame\n"
"    WHERE n.parent = 0 AND n.shown\n"
"    UNION ALL\n"
"    SELECT n.run, n.tree, n.id, s.stack || ';' || f.name,\n"
"           s.frame_ids || ' ' || n.frame\n"
"    FROM s JOIN nodes n ON n.run = s.run AND n.tree = s.tree\n"
"      AND n.parent = s.id JOIN frames f ON f.id = n.frame\n"
"    WHERE n.shown)\n"
"  SELECT s.run, s.tree, s.id AS node, s.stack, s.frame_ids,\n"
"         n.self AS weight\n"
"  FROM s JOIN nodes n ON n.run = s.run AND n.tree = s.tree\n"
"    AND n.id = s.id\n"
"  WHERE n.self > 0;\n"
"CREATE INDEX nodes_parent ON nodes(run, tree, parent);\n";

/*
 * Prepared statements of a writing connection.
 */

enum {
    ST_FRAME_GET, ST_FRAME_PUT, ST_NODE, ST_LINE, ST_EVENT, ST_COV_CMD,
    ST_COV_LINE, ST_RUN, ST_COUNT
};

static const char *const stmtSql[ST_COUNT] = {
    "SELECT id FROM frames WHERE kind = ?1 AND name = ?2 AND tclkind = ?3"
	" AND module = ?4 AND file = '' AND line = 0",
    "INSERT INTO frames (kind, name, tclkind, module) VALUES (?1, ?2, ?3,"
	" ?4)",
    "INSERT INTO nodes (run, tree, id, parent, frame, self, total, calls,"
	" total_ns, self_ns, min_ns, max_ns, suspended_ns, recursive, shown)"
	" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
	" ?15) ON CONFLICT (run, tree, id) DO UPDATE SET self = ?6,"
	" total = ?7, calls = ?8, total_ns = ?9, self_ns = ?10, min_ns = ?11,"
	" max_ns = ?12, suspended_ns = ?13, shown = ?15",
    "INSERT INTO lines (run, id, file, line, frame, calls, total_ns,"
	" self_ns, min_ns, max_ns, shown, caller) VALUES (?1, ?2, ?3, ?4, ?5,"
	" ?6, ?7, ?8, ?9, ?10, ?11, ?12) ON CONFLICT (run, id) DO UPDATE SET"
	" calls = ?6, total_ns = ?7, self_ns = ?8, min_ns = ?9, max_ns = ?10,"
	" shown = ?11",
    "INSERT OR REPLACE INTO events (run, seq, ns, type, frame)"
	" VALUES (?1, ?2, ?3, ?4, ?5)",
    "INSERT INTO coverage_commands (run, frame, calls, seq)"
	" VALUES (?1, ?2, ?3, ?4) ON CONFLICT (run, seq)"
	" DO UPDATE SET calls = ?3, frame = ?2",
    "INSERT INTO coverage_lines (run, file, line, calls, seq)"
	" VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (run, file, line)"
	" DO UPDATE SET calls = ?4",
    "UPDATE runs SET label = ?2, status = ?3, stopped_by = ?4,"
	" end_time = ?5, elapsed = ?6, rate_achieved = ?7, samples = ?8,"
	" weight = ?9, drops = ?10, splice_rate = ?11, calls = ?12,"
	" overhead_pct = ?13, meta = ?14 WHERE id = ?1"
};

static void		Disconnect(CprofStore *storePtr, int checkpoint);

/*
 * What was last written of a call-tree node, and of a call site.
 */

typedef struct NodeRec {
    int64_t parent;		/* Index of the parent node, -1 for the root. */
    int64_t frame;		/* Database frame id (0: the root). */
    int64_t self, total;
    CprofFigures fig;
    int hasFig;
    int shown;
} NodeRec;

typedef struct ShadowTree {
    NodeRec *recs;
    int count, cap;
} ShadowTree;

struct CprofStore {
    sqlite3 *db;
    Tcl_Obj *pathObj;		/* As given. */
    pid_t pid;			/* The process that opened it. */
    int direct;			/* -commit direct. */
    Tcl_WideInt runId;		/* The run being written, or 0. */
    sqlite3_stmt *stmts[ST_COUNT];
    Tcl_HashTable frameIds;	/* (isC, nameId, module or kind) -> id. */
    int64_t *treeFrames;	/* Sampled tree frame index -> id, or 0. */
    int numTreeFrames;
    ShadowTree trees[2];
    CprofLineValues *lines;	/* Call sites as last written. */
    int numLines, capLines;
    CprofNameCalls *cmdCalls;	/* Coverage: calls (and kind) by name id,
				 * as written. */
    int numCmdCalls;
    uint64_t *siteHits;		/* Coverage: calls by site, written. */
    int numSiteHits;
    int eventsWritten;		/* Events of the buffer written. */
    int clearPending;		/* The run's rows must go first (reset). */
    int wroteHandlers;		/* The run has rows in handlers. */
    int flushes;		/* Successful flushes. */
    double lastFlushMs;		/* How long the last one took. */
    Tcl_Obj *lastErrorObj;	/* Message of the last failure, or NULL. */
    int lastErrorRc;		/* Its SQLite result code. */
    int haveIdentity;		/* The file's device and inode are known: */
    unsigned long long device;	/* as first opened, to tell a file */
    unsigned long long inode;	/* deleted or replaced meanwhile. */
    int created;		/* The file did not exist: this store made it
				 * (CreateDb). */
};

/*
 * Test hook: a limit on the pages of connections opened from now on, to
 * simulate a full disk (tclcprof::debug dblimit; 0: none).
 */

static int pageLimit = 0;
static int busyTimeoutMs = BUSY_TIMEOUT_MS;

void
CprofStoreSetPageLimit(
    int pages)
{
    pageLimit = pages;
}

/*
 * Test hook: the busy timeout of connections opened from now on
 * (tclcprof::debug dbbusy).
 */

void
CprofStoreSetBusyTimeout(
    int ms)
{
    busyTimeoutMs = ms;
}

/*
 *----------------------------------------------------------------------
 *
 * Errors --
 *
 *	An SQLite failure as a Tcl error: "TCLCPROF DB class path", with
 *	SQLite's message.
 *
 *----------------------------------------------------------------------
 */

static const char *
ErrorClass(
    int rc)
{
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
	return "BUSY";
    case SQLITE_FULL:
	return "FULL";
    case SQLITE_READONLY:
	return "READONLY";
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_AUTH:
	return "OPEN";
    case SQLITE_CORRUPT:
	return "CORRUPT";
    case SQLITE_NOTADB:
	return "FOREIGN";
    case SQLITE_IOERR:
	return "IO";
    case SQLITE_NOMEM:
	return "MEMORY";
    default:
	return "ERROR";
    }
}

static int
DbError(
    Tcl_Interp *interp,
    Tcl_Obj *pathObj,
    sqlite3 *db,
    int rc,
    const char *doing)
{
    const char *msg = (db != NULL) ? sqlite3_errmsg(db) : sqlite3_errstr(rc);

    if (interp != NULL) {
	Tcl_SetObjResult(interp, Tcl_ObjPrintf("cannot %s profile database "
		"\"%s\": %s", doing, Tcl_GetString(pathObj), msg));
	Tcl_SetErrorCode(interp, "TCLCPROF", "DB", ErrorClass(rc),
		Tcl_GetString(pathObj), NULL);
    }
    return TCL_ERROR;
}

static int
FormatError(
    Tcl_Interp *interp,
    Tcl_Obj *pathObj,
    const char *class,
    const char *message,
    const char *extra)
{
    if (interp == NULL) {
	return TCL_ERROR;
    }
    Tcl_SetObjResult(interp, Tcl_ObjPrintf("cannot use \"%s\": %s",
	    Tcl_GetString(pathObj), message));
    Tcl_SetErrorCode(interp, "TCLCPROF", "DB", class, Tcl_GetString(pathObj),
	    extra, NULL);
    return TCL_ERROR;
}

/*
 * Milliseconds of the monotonic clock.
 */

static sqlite3_int64
MonotonicMs(void)
{
    return (sqlite3_int64) (CprofClockNs(CLOCK_MONOTONIC) / 1000000);
}

/*
 * The busy handler of every connection: wait for a lock until the
 * connection's deadline (its opening plus the busy timeout, carried in
 * the handler's argument), then give up. A connection serves one
 * operation (a flush, a save, a read), so that no operation blocks the
 * program longer than the busy timeout, however many statements it runs
 * (SQLite's own busy timeout would grant each statement the whole of it).
 */

static int
BusyHandler(
    void *clientData,
    int count)
{
    sqlite3_int64 deadline = (sqlite3_int64) (intptr_t) clientData;
    sqlite3_int64 left = deadline - MonotonicMs();

    if (left <= 0) {
	return 0;
    }
    sqlite3_sleep((int) (left < 10 ? left : (count < 5 ? 1 : 10)));
    return 1;
}

/*
 * Run a statement that returns one row of 'n' integers (pragmas, counts),
 * or none (then the values are 0). While a file is being created by
 * another process some of its locks are not covered by SQLite's busy
 * handler: such a statement is tried again until the connection's
 * deadline.
 */

static int
IntRow(
    sqlite3 *db,
    const char *sql,
    int n,
    sqlite3_int64 *values,
    sqlite3_int64 deadline)
{
    int rc, i;

    for (;;) {
	sqlite3_stmt *stmt;

	rc = sqlite3_prepare_v2(db, sql, -1, &stmt, NULL);
	if (rc == SQLITE_OK) {
	    rc = sqlite3_step(stmt);
	    for (i = 0; i < n; i++) {
		values[i] = (rc == SQLITE_ROW) ? sqlite3_column_int64(stmt, i)
			: 0;
	    }
	    if (rc == SQLITE_ROW || rc == SQLITE_DONE) {
		rc = SQLITE_OK;
	    }
	    sqlite3_finalize(stmt);
	}
	if ((rc & 0xff) != SQLITE_BUSY || MonotonicMs() >= deadline) {
	    return rc;
	}
	sqlite3_sleep(10);
    }
}

/*
 *----------------------------------------------------------------------
 *
 * WriteSchema, ErrnoRc, RemoveDbFiles --
 *
 *	Write the schema, with the file's owner and version, into an empty
 *	database (inside the caller's transaction); the SQLite result code
 *	that stands for a system error; remove a database file and the
 *	files SQLite keeps beside it.
 *
 *----------------------------------------------------------------------
 */

static int
WriteSchema(
    sqlite3 *db)
{
    char sql[64];
    int rc;

    rc = sqlite3_exec(db, schemaSql, NULL, NULL, NULL);
    if (rc == SQLITE_OK) {
	snprintf(sql, sizeof(sql), "PRAGMA application_id = %d",
		APPLICATION_ID);
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    }
    if (rc == SQLITE_OK) {
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d",
		SCHEMA_VERSION);
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    }
    return rc;
}

static int
ErrnoRc(
    int err)
{
    switch (err) {
    case ENOSPC:
#ifdef EDQUOT
    case EDQUOT:
#endif
	return SQLITE_FULL;
    case EROFS:
	return SQLITE_READONLY;
    case EIO:
	return SQLITE_IOERR;
    case ENOMEM:
	return SQLITE_NOMEM;
    default:
	return SQLITE_CANTOPEN;
    }
}

static void
RemoveDbFiles(
    const char *native)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    Tcl_DString ds;
    int i;

    Tcl_DStringInit(&ds);
    for (i = 0; i < 4; i++) {
	Tcl_DStringSetLength(&ds, 0);
	Tcl_DStringAppend(&ds, native, -1);
	Tcl_DStringAppend(&ds, suffixes[i], -1);
	unlink(Tcl_DStringValue(&ds));
    }
    Tcl_DStringFree(&ds);
}

/*
 *----------------------------------------------------------------------
 *
 * CreateDb --
 *
 *	Make a new database file whole or not at all: the schema is written
 *	into a file of its own in the same directory, which is then linked
 *	to the file's name and removed. A failure (a directory that cannot
 *	be written, a full disk) leaves nothing behind, and no one ever sees
 *	the file empty. When another process made the file in the meantime,
 *	link fails and that file is used instead. On a file system without
 *	hard links the new file is renamed, if the name is still free.
 *
 * Results:
 *	TCL_OK (*createdPtr set when this call made the file), or TCL_ERROR
 *	with a TCLCPROF DB error. With *fallbackPtr set and TCL_OK, no file
 *	was made (its name is too long for a companion): the caller creates
 *	it in place.
 *
 *----------------------------------------------------------------------
 */

static int
CreateDb(
    Tcl_Interp *interp,
    Tcl_Obj *pathObj,
    const char *native,
    int *createdPtr,
    int *fallbackPtr)
{
    Tcl_DString tmp;
    sqlite3 *db = NULL;
    char suffix[48], sql[64];
    int fd = -1, rc = SQLITE_OK, i, err;

    *fallbackPtr = 0;
    Tcl_DStringInit(&tmp);
    for (i = 0; i < 100; i++) {
	snprintf(suffix, sizeof(suffix), ".%ld-%d.new", (long) getpid(), i);
	Tcl_DStringSetLength(&tmp, 0);
	Tcl_DStringAppend(&tmp, native, -1);
	Tcl_DStringAppend(&tmp, suffix, -1);

	/*
	 * The permissions SQLite gives a file it creates.
	 */

	fd = open(Tcl_DStringValue(&tmp), O_RDWR | O_CREAT | O_EXCL
		| O_CLOEXEC, 0644);
	if (fd >= 0 || errno != EEXIST) {
	    break;
	}
    }
    if (fd < 0) {
	err = errno;
	Tcl_DStringFree(&tmp);
	if (err == ENAMETOOLONG) {
	    *fallbackPtr = 1;
	    return TCL_OK;
	}
	return DbError(interp, pathObj, NULL, ErrnoRc(err), "open");
    }
    close(fd);

    rc = sqlite3_open_v2(Tcl_DStringValue(&tmp), &db,
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc == SQLITE_OK && pageLimit > 0) {
	snprintf(sql, sizeof(sql), "PRAGMA max_page_count = %d", pageLimit);
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    }
    if (rc == SQLITE_OK) {
	rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc == SQLITE_OK) {
	    rc = WriteSchema(db);
	}
	if (rc == SQLITE_OK) {
	    rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	}
    }
    if (rc != SQLITE_OK) {
	DbError(interp, pathObj, db, rc, "create");
    }
    if (db != NULL) {
	sqlite3_close_v2(db);
    }
    if (rc == SQLITE_OK) {
	if (link(Tcl_DStringValue(&tmp), native) == 0) {
	    *createdPtr = 1;
	} else if (errno != EEXIST) {
	    err = errno;
	    if ((err == EPERM || err == ENOTSUP || err == EOPNOTSUPP
		    || err == ENOSYS || err == EMLINK)
		    && access(native, F_OK) != 0 && errno == ENOENT) {
		/*
		 * No hard links here. Another process could make the file
		 * between the look and the rename, and lose it: a small
		 * window, on unusual file systems.
		 */

		if (rename(Tcl_DStringValue(&tmp), native) == 0) {
		    *createdPtr = 1;
		} else {
		    err = errno;
		    rc = ErrnoRc(err);
		}
	    } else {
		rc = ErrnoRc(err);
	    }
	    if (rc != SQLITE_OK) {
		DbError(interp, pathObj, NULL, rc, "create");
	    }
	}
    }
    RemoveDbFiles(Tcl_DStringValue(&tmp));
    Tcl_DStringFree(&tmp);
    return (rc == SQLITE_OK) ? TCL_OK : TCL_ERROR;
}

/*
 *----------------------------------------------------------------------
 *
 * OpenDb --
 *
 *	Open a database file and check that it is tclcprof's, of a schema
 *	version this code knows. 'create': a file that does not exist is
 *	made with the schema (CreateDb; *createdPtr, if not NULL, is then
 *	set), an empty one gets it; otherwise it must exist. Only regular
 *	files (or symbolic links to them) are used: SQLite would write its
 *	journal beside a device, and block on a FIFO.
 *
 * Results:
 *	TCL_OK and *dbPtr, or TCL_ERROR with a TCLCPROF DB error. A file
 *	made by this call is removed again when the call fails.
 *
 *----------------------------------------------------------------------
 */

static int
OpenDb(
    Tcl_Interp *interp,
    Tcl_Obj *pathObj,
    int create,
    int direct,
    sqlite3 **dbPtr,
    int *createdPtr)
{
    Tcl_DString ds;
    const char *native;
    sqlite3 *db = NULL;
    sqlite3_int64 header[3], appId, version, tables, mode, deadline;
    struct stat st;
    int rc, flags, created = 0, fallback = 0;

    if (strstr(Tcl_GetString(pathObj), "\xC0\x80") != NULL) {
	/*
	 * A NUL in the name (Tcl's encoding of it): no file has one.
	 */

	return FormatError(interp, pathObj, "OPEN",
		"the file name contains a NUL character", NULL);
    }
    native = Tcl_TranslateFileName(interp, Tcl_GetString(pathObj), &ds);
    if (native == NULL) {
	if (interp != NULL) {
	    Tcl_SetErrorCode(interp, "TCLCPROF", "DB", "OPEN",
		    Tcl_GetString(pathObj), NULL);
	}
	return TCL_ERROR;
    }
    if (stat(native, &st) == 0) {
	if (!S_ISREG(st.st_mode)) {
	    Tcl_DStringFree(&ds);
	    return FormatError(interp, pathObj, "OPEN", S_ISDIR(st.st_mode)
		    ? "it is a directory" : "not a regular file", NULL);
	}
    } else if (!create) {
	Tcl_DStringFree(&ds);
	return FormatError(interp, pathObj, "OPEN", "no such file", NULL);
    } else if (errno == ENOENT) {
	if (CreateDb(interp, pathObj, native, &created, &fallback)
		!= TCL_OK) {
	    Tcl_DStringFree(&ds);
	    return TCL_ERROR;
	}
	if (fallback) {
	    created = 1;	/* By SQLite, below. */
	}
    }
    flags = SQLITE_OPEN_NOMUTEX | (create
	    ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
	    : SQLITE_OPEN_READONLY);
    rc = sqlite3_open_v2(native, &db, flags, NULL);
    if (rc != SQLITE_OK) {
	DbError(interp, pathObj, db, rc, "open");
	goto fail;
    }
    deadline = MonotonicMs() + busyTimeoutMs;
    sqlite3_busy_handler(db, BusyHandler, (void *) (intptr_t) deadline);

    /*
     * In one statement, one snapshot: another process may be creating
     * the file.
     */

    rc = IntRow(db, "SELECT"
	    " (SELECT application_id FROM pragma_application_id),"
	    " (SELECT user_version FROM pragma_user_version),"
	    " (SELECT count(*) FROM sqlite_schema)", 3, header, deadline);
    appId = header[0];
    version = header[1];
    tables = header[2];
    if (rc != SQLITE_OK) {
	if ((rc & 0xff) == SQLITE_NOTADB) {
	    FormatError(interp, pathObj, "FOREIGN",
		    "not a tclcprof profile database (not SQLite)", NULL);
	} else {
	    DbError(interp, pathObj, db, rc, "read");
	}
	goto fail;
    }
    if (tables > 0 || appId != 0) {
	if (appId != APPLICATION_ID) {
	    FormatError(interp, pathObj, "FOREIGN", "not a tclcprof profile "
		    "database (another program's SQLite file)", NULL);
	    goto fail;
	}
	if (version != SCHEMA_VERSION && interp == NULL) {
	    goto fail;
	} else if (version != SCHEMA_VERSION) {
	    char buf[32];

	    snprintf(buf, sizeof(buf), "%lld", (long long) version);
	    Tcl_SetObjResult(interp, Tcl_ObjPrintf("cannot use \"%s\": "
		    "profile database schema version %lld, this tclcprof "
		    "knows version %d", Tcl_GetString(pathObj),
		    (long long) version, SCHEMA_VERSION));
	    Tcl_SetErrorCode(interp, "TCLCPROF", "DB", "VERSION",
		    Tcl_GetString(pathObj), buf, NULL);
	    goto fail;
	}
    } else if (!create) {
	FormatError(interp, pathObj, "FOREIGN",
		"not a tclcprof profile database (empty)", NULL);
	goto fail;
    }

    if (create) {
	char sql[64];

	/*
	 * WAL lets readers (the sqlite3 shell, Tcl's sqlite3 package, a
	 * report) read while runs are written, and writers of several
	 * processes take turns. A committed flush survives the process
	 * crashing; with -commit direct, a power failure too.
	 */

	rc = IntRow(db, "PRAGMA journal_mode = WAL", 1, &mode,
		deadline);
	if (rc == SQLITE_OK) {
	    rc = sqlite3_exec(db, direct ? "PRAGMA synchronous = FULL"
		    : "PRAGMA synchronous = NORMAL", NULL, NULL, NULL);
	}
	if (rc == SQLITE_OK && pageLimit > 0) {
	    snprintf(sql, sizeof(sql), "PRAGMA max_page_count = %d",
		    pageLimit);
	    rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	}
	if (rc != SQLITE_OK) {
	    DbError(interp, pathObj, db, rc, "open");
	    goto fail;
	}
	if (tables == 0) {
	    /*
	     * An empty file (made by someone else, or here when CreateDb
	     * could not). Another process may be giving it the schema too:
	     * look again inside the write transaction.
	     */

	    rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	    if (rc == SQLITE_OK) {
		rc = IntRow(db, "SELECT count(*) FROM sqlite_schema", 1,
			&tables, deadline);
	    }
	    if (rc == SQLITE_OK && tables == 0) {
		rc = WriteSchema(db);
	    }
	    if (rc == SQLITE_OK) {
		rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	    }
	    if (rc != SQLITE_OK) {
		DbError(interp, pathObj, db, rc, "create");
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		goto fail;
	    }
	}
    }
    Tcl_DStringFree(&ds);
    if (createdPtr != NULL && created) {
	*createdPtr = 1;
    }
    *dbPtr = db;
    return TCL_OK;

  fail:
    if (db != NULL) {
	sqlite3_close_v2(db);
    }
    if (created) {
	/*
	 * Made a moment ago, holding nothing but the schema.
	 */

	RemoveDbFiles(native);
    }
    Tcl_DStringFree(&ds);
    return TCL_ERROR;
}

/*
 *----------------------------------------------------------------------
 *
 * CprofStoreOpen, CprofStoreClose --
 *
 *	Make the store of a file that runs are written to: the file is
 *	opened once (created with the schema if needed, checked otherwise)
 *	so that problems show at once, and closed; free a store.
 *	Connect and Disconnect open and close the connection each write
 *	uses.
 *
 *----------------------------------------------------------------------
 */

static void
ForgetShadows(
    CprofStore *storePtr)
{
    Tcl_DeleteHashTable(&storePtr->frameIds);
    Tcl_InitHashTable(&storePtr->frameIds, 3);
    if (storePtr->numTreeFrames > 0) {
	memset(storePtr->treeFrames, 0, storePtr->numTreeFrames
		* sizeof(int64_t));
    }
    storePtr->trees[0].count = 0;
    storePtr->trees[1].count = 0;
    storePtr->numLines = 0;

    /*
     * Not 0: a count that dropped to 0 since it was written (an ensemble
     * counted under its own name until it learns its subcommand) must be
     * written again too.
     */

    if (storePtr->cmdCalls) {
	memset(storePtr->cmdCalls, 0xff, storePtr->numCmdCalls
		* sizeof(CprofNameCalls));
    }
    if (storePtr->siteHits) {
	memset(storePtr->siteHits, 0xff, storePtr->numSiteHits
		* sizeof(uint64_t));
    }
}

/*
 * Whether the store's file is still the one it first opened. A file
 * deleted (log rotation, a cleaner of temporary files) or replaced while
 * a run writes to it would otherwise be created anew, empty, by the next
 * write, and the run would be in no file: the write fails instead
 * (TCLCPROF DB GONE) and the profile stays in memory, to be saved
 * elsewhere.
 */

static int
SameFile(
    Tcl_Interp *interp,
    CprofStore *storePtr)
{
    Tcl_StatBuf *statPtr;
    int same;

    if (!storePtr->haveIdentity) {
	return 1;
    }
    statPtr = Tcl_AllocStatBuf();
    same = Tcl_FSStat(storePtr->pathObj, statPtr) == 0
	    && Tcl_GetFSDeviceFromStat(statPtr) == storePtr->device
	    && Tcl_GetFSInodeFromStat(statPtr) == storePtr->inode;
    ckfree(statPtr);
    if (!same && interp != NULL) {
	Tcl_SetObjResult(interp, Tcl_ObjPrintf(
		"cannot write profile database \"%s\": the file was deleted"
		" or replaced while the run was writing to it (the profile"
		" is still in memory: tclcprof::save it elsewhere)",
		Tcl_GetString(storePtr->pathObj)));
	Tcl_SetErrorCode(interp, "TCLCPROF", "DB", "GONE",
		Tcl_GetString(storePtr->pathObj), NULL);
    }
    return same;
}

static int
Connect(
    Tcl_Interp *interp,
    CprofStore *storePtr)
{
    int i, rc;

    if (!SameFile(interp, storePtr)) {
	return TCL_ERROR;
    }
    if (OpenDb(interp, storePtr->pathObj, 1, storePtr->direct,
	    &storePtr->db, &storePtr->created) != TCL_OK) {
	storePtr->db = NULL;
	return TCL_ERROR;
    }
    if (!storePtr->haveIdentity) {
	Tcl_StatBuf *statPtr = Tcl_AllocStatBuf();

	if (Tcl_FSStat(storePtr->pathObj, statPtr) == 0) {
	    storePtr->device = Tcl_GetFSDeviceFromStat(statPtr);
	    storePtr->inode = Tcl_GetFSInodeFromStat(statPtr);
	    storePtr->haveIdentity = 1;
	}
	ckfree(statPtr);
    }
    sqlite3_db_config(storePtr->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1,
	    NULL);
    for (i = 0; i < ST_COUNT; i++) {
	rc = sqlite3_prepare_v3(storePtr->db, stmtSql[i], -1,
		SQLITE_PREPARE_PERSISTENT, &storePtr->stmts[i], NULL);
	if (rc != SQLITE_OK) {
	    DbError(interp, storePtr->pathObj, storePtr->db, rc, "prepare");
	    Disconnect(storePtr, 0);
	    return TCL_ERROR;
	}
    }
    return TCL_OK;
}

static void
Disconnect(
    CprofStore *storePtr,
    int checkpoint)
{
    int i;

    if (storePtr->db == NULL) {
	return;
    }
    for (i = 0; i < ST_COUNT; i++) {
	sqlite3_finalize(storePtr->stmts[i]);
	storePtr->stmts[i] = NULL;
    }
    if (checkpoint) {
	sqlite3_db_config(storePtr->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0,
		NULL);
    }
    sqlite3_close_v2(storePtr->db);
    storePtr->db = NULL;
}

int
CprofStoreOpen(
    Tcl_Interp *interp,
    Tcl_Obj *pathObj,
    int direct,
    CprofStore **storePtrPtr)
{
    CprofStore *storePtr;

    storePtr = (CprofStore *) ckalloc(sizeof(CprofStore));
    memset(storePtr, 0, sizeof(CprofStore));
    storePtr->pathObj = pathObj;
    Tcl_IncrRefCount(pathObj);
    storePtr->pid = getpid();
    storePtr->direct = direct;
    Tcl_InitHashTable(&storePtr->frameIds, 3);
    if (Connect(interp, storePtr) != TCL_OK) {
	CprofStoreClose(storePtr);
	return TCL_ERROR;
    }
    Disconnect(storePtr, 0);
    *storePtrPtr = storePtr;
    return TCL_OK;
}

void
CprofStoreClose(
    CprofStore *storePtr)
{
    int i;

    Disconnect(storePtr, 0);
    Tcl_DeleteHashTable(&storePtr->frameIds);
    Tcl_DecrRefCount(storePtr->pathObj);
    if (storePtr->lastErrorObj) {
	Tcl_DecrRefCount(storePtr->lastErrorObj);
    }
    for (i = 0; i < 2; i++) {
	if (storePtr->trees[i].recs) {
	    ckfree(storePtr->trees[i].recs);
	}
    }
    if (storePtr->treeFrames) {
	ckfree(storePtr->treeFrames);
    }
    if (storePtr->lines) {
	ckfree(storePtr->lines);
    }
    if (storePtr->cmdCalls) {
	ckfree(storePtr->cmdCalls);
    }
    if (storePtr->siteHits) {
	ckfree(storePtr->siteHits);
    }
    ckfree(storePtr);
}

/*
 * Accessors for the command layer.
 */

Tcl_WideInt
CprofStoreRunId(
    CprofStore *storePtr)
{
    return storePtr->runId;
}

int
CprofStoreForked(
    CprofStore *storePtr)
{
    return storePtr->pid != getpid();
}

int
CprofStoreFailing(
    CprofStore *storePtr)
{
    return storePtr->lastErrorObj != NULL;
}

/*
 * A run that could not start after all, or a save that failed: the run's
 * row goes (if it was added) and, when this store made the file and no
 * other run is in it, so does the file: a failed start or save leaves
 * nothing behind.
 */

void
CprofStoreDiscardRun(
    CprofStore *storePtr)
{
    sqlite3_int64 runs = 1;
    char *sql = sqlite3_mprintf("DELETE FROM runs WHERE id = %lld",
	    (long long) storePtr->runId);

    if (Connect(NULL, storePtr) == TCL_OK) {
	if (sqlite3_exec(storePtr->db, "BEGIN IMMEDIATE", NULL, NULL, NULL)
		== SQLITE_OK) {
	    if (storePtr->runId != 0) {
		sqlite3_exec(storePtr->db, sql, NULL, NULL, NULL);
	    }
	    if (IntRow(storePtr->db, "SELECT count(*) FROM runs", 1, &runs,
		    MonotonicMs()) != SQLITE_OK) {
		runs = 1;
	    }
	    if (sqlite3_exec(storePtr->db, "COMMIT", NULL, NULL, NULL)
		    != SQLITE_OK) {
		sqlite3_exec(storePtr->db, "ROLLBACK", NULL, NULL, NULL);
		runs = 1;
	    }
	}

	/*
	 * Closed with a checkpoint, so that the write-ahead log goes with
	 * the last connection.
	 */

	Disconnect(storePtr, 1);
	if (storePtr->created && runs == 0) {
	    Tcl_DString ds;
	    const char *native = Tcl_TranslateFileName(NULL,
		    Tcl_GetString(storePtr->pathObj), &ds);

	    if (native != NULL) {
		RemoveDbFiles(native);
		Tcl_DStringFree(&ds);
	    }
	}
    }
    sqlite3_free(sql);
    storePtr->runId = 0;
}

Tcl_Obj *
CprofStoreStatus(
    CprofStore *storePtr)
{
    Tcl_Obj *dictObj = Tcl_NewDictObj();

    Tcl_DictObjPut(NULL, dictObj, Tcl_NewStringObj("file", -1),
	    storePtr->pathObj);
    Tcl_DictObjPut(NULL, dictObj, Tcl_NewStringObj("run", -1),
	    Tcl_NewWideIntObj(storePtr->runId));
    Tcl_DictObjPut(NULL, dictObj, Tcl_NewStringObj("commit", -1),
	    Tcl_NewStringObj(storePtr->direct ? "direct" : "staged", -1));
    Tcl_DictObjPut(NULL, dictObj, Tcl_NewStringObj("flushes", -1),
	    Tcl_NewIntObj(storePtr->flushes));
    Tcl_DictObjPut(NULL, dictObj, Tcl_NewStringObj("last_flush_ms", -1),
	    Tcl_NewDoubleObj(((int) (storePtr->lastFlushMs * 1000 + 0.5))
	    / 1000.0));
    Tcl_DictObjPut(NULL, dictObj, Tcl_NewStringObj("last_error", -1),
	    storePtr->lastErrorObj ? storePtr->lastErrorObj : Tcl_NewObj());
    return dictObj;
}

/*
 * The data of the run was cleared (reset): its rows go at the next flush.
 */

void
CprofStoreClear(
    CprofStore *storePtr)
{
    storePtr->clearPending = 1;
    storePtr->eventsWritten = 0;
    storePtr->numTreeFrames = 0;
    ForgetShadows(storePtr);
}

/*
 *----------------------------------------------------------------------
 *
 * Binding helpers --
 *
 *----------------------------------------------------------------------
 */

static void
BindText(
    sqlite3_stmt *stmt,
    int index,
    const char *text)
{
    sqlite3_bind_text(stmt, index, text ? text : "", -1, SQLITE_TRANSIENT);
}

static void
BindObj(
    sqlite3_stmt *stmt,
    int index,
    Tcl_Obj *objPtr)
{
    int length;
    const char *text;

    if (objPtr == NULL) {
	sqlite3_bind_null(stmt, index);
	return;
    }
    text = Tcl_GetStringFromObj(objPtr, &length);
    sqlite3_bind_text(stmt, index, text, length, SQLITE_TRANSIENT);
}

/*
 * Step a statement that returns no row, and reset it.
 */

static int
Exec(
    sqlite3_stmt *stmt)
{
    int rc = sqlite3_step(stmt);

    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
}

/*
 *----------------------------------------------------------------------
 *
 * FrameId --
 *
 *	The database id of a frame, added to the frames table if new, and
 *	cached per connection. Tcl frames are keyed by name and kind, C
 *	frames by name and module.
 *
 *----------------------------------------------------------------------
 */

static int
FrameId(
    CprofStore *storePtr,
    int isC,
    int nameId,
    int aux,
    int64_t *idPtr)
{
    int key[3], isNew, rc;
    Tcl_HashEntry *hPtr;
    sqlite3_stmt *stmt;
    const char *name, *module = "", *tclkind = "";

    key[0] = isC;
    key[1] = nameId;
    key[2] = aux;
    hPtr = Tcl_CreateHashEntry(&storePtr->frameIds, (char *) key, &isNew);
    if (!isNew) {
	*idPtr = (int64_t) (intptr_t) Tcl_GetHashValue(hPtr);
	return SQLITE_OK;
    }
    name = CprofNameString(nameId);
    if (isC) {
	module = aux >= 0 ? CprofNameString(aux) : "";
    } else {
	int origin = CprofNameOrigin(nameId);

	tclkind = CprofKindName(aux);
	if (origin >= 0) {
	    /*
	     * An event handler's frame: its origin, in the module column.
	     */

	    module = CprofNameString(origin);
	}
    }
    stmt = storePtr->stmts[ST_FRAME_GET];
    BindText(stmt, 1, isC ? "c" : "tcl");
    BindText(stmt, 2, name ? name : "?");
    BindText(stmt, 3, tclkind);
    BindText(stmt, 4, module);
    rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) {
	*idPtr = sqlite3_column_int64(stmt, 0);
	rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) {
	sqlite3_reset(stmt);
	stmt = storePtr->stmts[ST_FRAME_PUT];
	BindText(stmt, 1, isC ? "c" : "tcl");
	BindText(stmt, 2, name ? name : "?");
	BindText(stmt, 3, tclkind);
	BindText(stmt, 4, module);
	rc = Exec(stmt);
	*idPtr = sqlite3_last_insert_rowid(storePtr->db);
	stmt = storePtr->stmts[ST_FRAME_GET];
    }
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    if (rc != SQLITE_OK) {
	Tcl_DeleteHashEntry(hPtr);
	return rc;
    }
    Tcl_SetHashValue(hPtr, (ClientData) (intptr_t) *idPtr);
    return SQLITE_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * WriteNode --
 *
 *	Write node 'i' of tree 'tree' if it differs from what was last
 *	written (or is new). Nodes are written in index order, parents
 *	before children; a new node is marked recursive when an ancestor
 *	has the same frame.
 *
 *----------------------------------------------------------------------
 */

static int
WriteNode(
    CprofStore *storePtr,
    int tree,
    int i,
    const NodeRec *recPtr)
{
    ShadowTree *shPtr = &storePtr->trees[tree];
    sqlite3_stmt *stmt = storePtr->stmts[ST_NODE];
    int isNew = (i >= shPtr->count), recursive = 0, rc;

    if (!isNew && memcmp(&shPtr->recs[i], recPtr, sizeof(NodeRec)) == 0) {
	return SQLITE_OK;
    }
    if (isNew && recPtr->frame != 0) {
	int64_t p;

	for (p = recPtr->parent; p > 0; p = shPtr->recs[p].parent) {
	    if (shPtr->recs[p].frame == recPtr->frame) {
		recursive = 1;
		break;
	    }
	}
    }
    sqlite3_bind_int64(stmt, 1, storePtr->runId);
    sqlite3_bind_int(stmt, 2, tree);
    sqlite3_bind_int(stmt, 3, i);
    if (recPtr->parent >= 0) {
	sqlite3_bind_int64(stmt, 4, recPtr->parent);
    }
    if (recPtr->frame != 0) {
	sqlite3_bind_int64(stmt, 5, recPtr->frame);
    }
    sqlite3_bind_int64(stmt, 6, recPtr->self);
    sqlite3_bind_int64(stmt, 7, recPtr->total);
    if (recPtr->hasFig) {
	sqlite3_bind_int64(stmt, 8, (sqlite3_int64) recPtr->fig.calls);
	sqlite3_bind_int64(stmt, 9, recPtr->fig.totalNs);
	sqlite3_bind_int64(stmt, 10, recPtr->fig.selfNs);
	sqlite3_bind_int64(stmt, 11, recPtr->fig.minNs);
	sqlite3_bind_int64(stmt, 12, recPtr->fig.maxNs);
	sqlite3_bind_int64(stmt, 13, recPtr->fig.suspendedNs);
    }
    sqlite3_bind_int(stmt, 14, recursive);
    sqlite3_bind_int(stmt, 15, recPtr->shown);
    rc = Exec(stmt);
    if (rc != SQLITE_OK) {
	return rc;
    }
    if (isNew) {
	if (i >= shPtr->cap) {
	    int cap = shPtr->cap ? 2 * shPtr->cap : 1024;

	    while (cap <= i) {
		cap *= 2;
	    }
	    shPtr->recs = (NodeRec *) ckrealloc(shPtr->recs,
		    cap * sizeof(NodeRec));
	    shPtr->cap = cap;
	}
	shPtr->count = i + 1;
    }
    shPtr->recs[i] = *recPtr;
    return SQLITE_OK;
}

/*
 * Grow an array of 'size'-byte elements to hold 'need', zeroing the new
 * part.
 */

static void
GrowZero(
    void **arrayPtr,
    int *numPtr,
    int need,
    size_t size)
{
    if (need > *numPtr) {
	*arrayPtr = ckrealloc(*arrayPtr, need * size);
	memset((char *) *arrayPtr + *numPtr * size, 0,
		(need - *numPtr) * size);
	*numPtr = need;
    }
}

/*
 *----------------------------------------------------------------------
 *
 * FlushSampleTree, FlushExactTree --
 *
 *	Bring tree 'tree' of the run up to date with the sampled call tree
 *	(with the exact figures of mode both on its Tcl nodes), or with the
 *	exact call tree.
 *
 *----------------------------------------------------------------------
 */

static int
FlushSampleTree(
    CprofStore *storePtr,
    CprofState *statePtr,
    int tree)
{
    CprofTree *treePtr = &statePtr->tree;
    CprofExact *exactPtr = (statePtr->options.mode == CPROF_MODE_BOTH)
	    ? &statePtr->exact : NULL;
    ShadowTree *shPtr = &storePtr->trees[tree];
    int i, rc;

    GrowZero((void **) &storePtr->treeFrames, &storePtr->numTreeFrames,
	    treePtr->numFrames, sizeof(int64_t));
    for (i = 0; i < treePtr->numNodes; i++) {
	CprofNode *nPtr = &treePtr->nodes[i];
	NodeRec rec;

	memset(&rec, 0, sizeof(rec));
	rec.parent = nPtr->parent;
	if (i < shPtr->count) {
	    rec.frame = shPtr->recs[i].frame;
	} else if (nPtr->frame >= 0) {
	    int64_t *idPtr = &storePtr->treeFrames[nPtr->frame];

	    if (*idPtr == 0) {
		CprofFrameDef *fPtr = &treePtr->frames[nPtr->frame];

		rc = FrameId(storePtr, fPtr->isC, fPtr->nameId,
			fPtr->isC ? fPtr->moduleId : fPtr->tclKind, idPtr);
		if (rc != SQLITE_OK) {
		    return rc;
		}
	    }
	    rec.frame = *idPtr;
	}
	rec.self = (int64_t) nPtr->self;
	rec.total = (int64_t) nPtr->total;
	rec.hasFig = exactPtr != NULL && nPtr->exact > 0
		&& CprofExactNodeValues(exactPtr, nPtr->exact, &rec.fig);
	rec.shown = 1;
	rc = WriteNode(storePtr, tree, i, &rec);
	if (rc != SQLITE_OK) {
	    return rc;
	}
    }
    return SQLITE_OK;
}

static int
FlushExactTree(
    CprofStore *storePtr,
    CprofState *statePtr,
    int tree)
{
    CprofExact *exactPtr = &statePtr->exact;
    ShadowTree *shPtr = &storePtr->trees[tree];
    int n = exactPtr->numNodes, i, rc = SQLITE_OK;
    int64_t *adj = (int64_t *) ckalloc(n * sizeof(int64_t));
    int64_t *self = (int64_t *) ckalloc(n * sizeof(int64_t));
    unsigned char *shown = (unsigned char *) ckalloc(n);

    CprofExactAdjust(exactPtr, adj, self, shown);
    for (i = 0; i < n && rc == SQLITE_OK; i++) {
	CprofExactNode *nPtr = &exactPtr->nodes[i];
	NodeRec rec;

	memset(&rec, 0, sizeof(rec));
	rec.parent = nPtr->parent;
	if (i < shPtr->count) {
	    rec.frame = shPtr->recs[i].frame;
	} else if (i > 0) {
	    rc = FrameId(storePtr, 0, nPtr->nameId, nPtr->kind, &rec.frame);
	    if (rc != SQLITE_OK) {
		break;
	    }
	}
	rec.self = self[i];
	rec.total = adj[i];
	CprofExactFiguresOf(exactPtr, i, adj[i], self[i], &rec.fig);
	rec.hasFig = 1;
	rec.shown = shown[i];
	rc = WriteNode(storePtr, tree, i, &rec);
    }
    ckfree(adj);
    ckfree(self);
    ckfree(shown);
    return rc;
}

/*
 *----------------------------------------------------------------------
 *
 * FlushLines, FlushCoverage, FlushEvents --
 *
 *	Call sites, coverage counts and events of exact timing and coverage.
 *
 *----------------------------------------------------------------------
 */

typedef struct LineRow {
    CprofLineValues v;
    int shown;
} LineRow;

static int
FlushLines(
    CprofStore *storePtr,
    CprofState *statePtr)
{
    CprofExact *exactPtr = &statePtr->exact;
    LineRow *rows = (LineRow *) storePtr->lines;
    sqlite3_stmt *stmt = storePtr->stmts[ST_LINE];
    int i, rc;

    if (exactPtr->numLineRecs > storePtr->capLines) {
	int cap = storePtr->capLines ? storePtr->capLines : 256;

	while (cap < exactPtr->numLineRecs) {
	    cap *= 2;
	}
	rows = (LineRow *) ckrealloc(rows, cap * sizeof(LineRow));
	storePtr->lines = (CprofLineValues *) rows;
	storePtr->capLines = cap;
    }
    for (i = 0; i < exactPtr->numLineRecs; i++) {
	LineRow row;
	int64_t frame;
	const char *file;

	memset(&row, 0, sizeof(row));
	row.shown = CprofExactLineValues(exactPtr, i, &row.v);
	if (i < storePtr->numLines
		&& memcmp(&rows[i], &row, sizeof(row)) == 0) {
	    continue;
	}
	rc = FrameId(storePtr, 0, row.v.nameId, row.v.kind, &frame);
	if (rc != SQLITE_OK) {
	    return rc;
	}
	file = CprofNameString(row.v.fileId);
	sqlite3_bind_int64(stmt, 1, storePtr->runId);
	sqlite3_bind_int(stmt, 2, i);
	BindText(stmt, 3, file);
	sqlite3_bind_int(stmt, 4, row.v.line);
	sqlite3_bind_int64(stmt, 5, frame);
	sqlite3_bind_int64(stmt, 6, (sqlite3_int64) row.v.calls);
	sqlite3_bind_int64(stmt, 7, row.v.totalNs);
	sqlite3_bind_int64(stmt, 8, row.v.selfNs);
	sqlite3_bind_int64(stmt, 9, row.v.minNs);
	sqlite3_bind_int64(stmt, 10, row.v.maxNs);
	sqlite3_bind_int(stmt, 11, row.shown);
	BindText(stmt, 12, row.v.callerId >= 0
		? CprofNameString(row.v.callerId) : "");
	rc = Exec(stmt);
	if (rc != SQLITE_OK) {
	    return rc;
	}
	rows[i] = row;
	if (i >= storePtr->numLines) {
	    storePtr->numLines = i + 1;
	}
    }
    return SQLITE_OK;
}

static int
FlushCoverage(
    CprofStore *storePtr,
    CprofState *statePtr,
    int withProcs)
{
    CprofExact *exactPtr = &statePtr->exact;
    sqlite3_stmt *stmt;
    int i, rc;

    GrowZero((void **) &storePtr->cmdCalls, &storePtr->numCmdCalls,
	    exactPtr->numNameCalls, sizeof(CprofNameCalls));
    stmt = storePtr->stmts[ST_COV_CMD];
    for (i = 0; i < exactPtr->numNameCalls; i++) {
	uint64_t calls = exactPtr->nameCalls[i].calls;
	int64_t frame;

	if (calls == storePtr->cmdCalls[i].calls
		&& exactPtr->nameCalls[i].kind == storePtr->cmdCalls[i].kind) {
	    continue;
	}
	rc = FrameId(storePtr, 0, i, exactPtr->nameCalls[i].kind, &frame);
	if (rc != SQLITE_OK) {
	    return rc;
	}
	sqlite3_bind_int64(stmt, 1, storePtr->runId);
	sqlite3_bind_int64(stmt, 2, frame);
	sqlite3_bind_int64(stmt, 3, (sqlite3_int64) calls);
	sqlite3_bind_int(stmt, 4, i);
	rc = Exec(stmt);
	if (rc != SQLITE_OK) {
	    return rc;
	}
	storePtr->cmdCalls[i] = exactPtr->nameCalls[i];
    }

    GrowZero((void **) &storePtr->siteHits, &storePtr->numSiteHits,
	    exactPtr->numSites, sizeof(uint64_t));
    stmt = storePtr->stmts[ST_COV_LINE];
    for (i = 0; i < exactPtr->numSites; i++) {
	uint64_t hits = exactPtr->siteHits[i];

	if (hits == storePtr->siteHits[i]) {
	    continue;
	}
	sqlite3_bind_int64(stmt, 1, storePtr->runId);
	BindText(stmt, 2, CprofNameString(exactPtr->sites[i].fileId));
	sqlite3_bind_int(stmt, 3, exactPtr->sites[i].line);
	sqlite3_bind_int64(stmt, 4, (sqlite3_int64) hits);
	sqlite3_bind_int(stmt, 5, i);
	rc = Exec(stmt);
	if (rc != SQLITE_OK) {
	    return rc;
	}
	storePtr->siteHits[i] = hits;
    }

    /*
     * The procedures defined: read once, when the run ends (as
     * tclcprof::data reads them when it is called).
     */

    if (withProcs) {
	Tcl_Obj *procsObj = CprofDefinedProcs(statePtr->interp), **pv;
	sqlite3_stmt *ins = NULL;
	char *sql;
	int pc;

	Tcl_IncrRefCount(procsObj);
	Tcl_ListObjGetElements(NULL, procsObj, &pc, &pv);
	sql = sqlite3_mprintf("DELETE FROM coverage_procs WHERE run = %lld",
		(long long) storePtr->runId);
	rc = sqlite3_exec(storePtr->db, sql, NULL, NULL, NULL);
	sqlite3_free(sql);
	if (rc == SQLITE_OK) {
	    rc = sqlite3_prepare_v2(storePtr->db, "INSERT INTO"
		    " coverage_procs (run, seq, name) VALUES (?1, ?2, ?3)",
		    -1, &ins, NULL);
	}
	for (i = 0; rc == SQLITE_OK && i < pc; i++) {
	    sqlite3_bind_int64(ins, 1, storePtr->runId);
	    sqlite3_bind_int(ins, 2, i);
	    BindObj(ins, 3, pv[i]);
	    rc = Exec(ins);
	}
	sqlite3_finalize(ins);
	Tcl_DecrRefCount(procsObj);
	if (rc != SQLITE_OK) {
	    return rc;
	}
    }
    return SQLITE_OK;
}

static int
FlushEvents(
    CprofStore *storePtr,
    CprofState *statePtr,
    int final,
    int *writtenPtr)
{
    CprofExact *exactPtr = &statePtr->exact;
    CprofStack *stackPtr = &statePtr->levels.stack;
    sqlite3_stmt *stmt = storePtr->stmts[ST_EVENT];
    int limit = exactPtr->numEvents, i, rc;

    /*
     * An ensemble's enter event is renamed (or taken back) when the
     * subcommand is entered: leave it for the next flush.
     */

    if (!final && stackPtr->depth > 0) {
	CprofFrame *topPtr = &stackPtr->frames[stackPtr->depth - 1];

	if ((topPtr->flags & CPROF_FRAME_FOLD) && topPtr->eventIndex >= 0
		&& topPtr->eventIndex < limit) {
	    limit = topPtr->eventIndex;
	}
    }
    for (i = storePtr->eventsWritten; i < limit; i++) {
	CprofEvent *evPtr = &exactPtr->events[i];
	int64_t frame;
	char type[2];

	if (evPtr->type == 0) {
	    continue;
	}
	rc = FrameId(storePtr, 0, evPtr->nameId, evPtr->kind, &frame);
	if (rc != SQLITE_OK) {
	    return rc;
	}
	type[0] = (char) evPtr->type;
	type[1] = '\0';
	sqlite3_bind_int64(stmt, 1, storePtr->runId);
	sqlite3_bind_int(stmt, 2, i);
	sqlite3_bind_int64(stmt, 3, CprofExactTicksToNs(statePtr,
		(int64_t) evPtr->ns));
	BindText(stmt, 4, type);
	sqlite3_bind_int64(stmt, 5, frame);
	rc = Exec(stmt);
	if (rc != SQLITE_OK) {
	    return rc;
	}
    }
    *writtenPtr = limit > storePtr->eventsWritten ? limit
	    : storePtr->eventsWritten;
    return SQLITE_OK;
}

/*
 *----------------------------------------------------------------------
 *
 * FlushHandlers --
 *
 *	The event handlers' figures (statePtr->handlers), rewritten whole:
 *	a row per origin and kind, few of them.
 *
 *----------------------------------------------------------------------
 */

static int
FlushHandlers(
    CprofStore *storePtr,
    CprofState *statePtr)
{
    CprofHandlers *hsPtr = &statePtr->handlers;
    sqlite3_stmt *stmt;
    char *sql;
    int i, rc;

    if (hsPtr->num == 0 && !storePtr->wroteHandlers) {
	return SQLITE_OK;
    }
    rc = sqlite3_exec(storePtr->db, HANDLERS_SQL, NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
	return rc;
    }
    sql = sqlite3_mprintf("DELETE FROM handlers WHERE run = %lld",
	    (long long) storePtr->runId);
    rc = sqlite3_exec(storePtr->db, sql, NULL, NULL, NULL);
    sqlite3_free(sql);
    if (rc != SQLITE_OK) {
	return rc;
    }
    rc = sqlite3_prepare_v2(storePtr->db, "INSERT INTO handlers (run, seq,"
	    " origin, kind, count, timed, total_ns, max_ns, latency_count,"
	    " latency_ns, latency_max_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7,"
	    " ?8, ?9, ?10, ?11)", -1, &stmt, NULL);
    for (i = 0; rc == SQLITE_OK && i < hsPtr->num; i++) {
	CprofHandlerStat *hPtr = &hsPtr->stats[i];
	const char *origin = CprofNameString(hPtr->originId);

	sqlite3_bind_int64(stmt, 1, storePtr->runId);
	sqlite3_bind_int(stmt, 2, i);
	BindText(stmt, 3, origin ? origin : "unknown");
	BindText(stmt, 4, CprofHandlerKindName(hPtr->kind));
	sqlite3_bind_int64(stmt, 5, (sqlite3_int64) hPtr->count);
	sqlite3_bind_int64(stmt, 6, (sqlite3_int64) hPtr->timed);
	sqlite3_bind_int64(stmt, 7, (sqlite3_int64) hPtr->totalNs);
	sqlite3_bind_int64(stmt, 8, (sqlite3_int64) hPtr->maxNs);
	if (hPtr->kind == CPROF_HANDLER_AFTER) {
	    sqlite3_bind_int64(stmt, 9, (sqlite3_int64) hPtr->latencyCount);
	    sqlite3_bind_int64(stmt, 10, (sqlite3_int64) hPtr->latencyNs);
	    sqlite3_bind_int64(stmt, 11,
		    (sqlite3_int64) hPtr->latencyMaxNs);
	}
	rc = Exec(stmt);
    }
    sqlite3_finalize(stmt);
    if (rc == SQLITE_OK) {
	storePtr->wroteHandlers = (hsPtr->num > 0);
    }
    return rc;
}

/*
 *----------------------------------------------------------------------
 *
 * FlushRun --
 *
 *	The run's row: its figures from the profile's meta (kept whole, as
 *	the meta of the profile read back).
 *
 *----------------------------------------------------------------------
 */

static Tcl_Obj *
MetaGet(
    Tcl_Obj *dictObj,
    const char *key1,
    const char *key2)
{
    Tcl_Obj *keyObj = Tcl_NewStringObj(key1, -1), *valueObj = NULL;

    Tcl_IncrRefCount(keyObj);
    if (Tcl_DictObjGet(NULL, dictObj, keyObj, &valueObj) != TCL_OK) {
	valueObj = NULL;
    }
    Tcl_DecrRefCount(keyObj);
    if (valueObj != NULL && key2 != NULL) {
	return MetaGet(valueObj, key2, NULL);
    }
    return valueObj;
}

static double
MetaDouble(
    Tcl_Obj *dictObj,
    const char *key1,
    const char *key2,
    int *foundPtr)
{
    Tcl_Obj *valueObj = MetaGet(dictObj, key1, key2);
    double d;

    if (valueObj == NULL || Tcl_GetDoubleFromObj(NULL, valueObj, &d)
	    != TCL_OK) {
	if (foundPtr) {
	    *foundPtr = 0;
	}
	return 0;
    }
    if (foundPtr) {
	*foundPtr = 1;
    }
    return d;
}

static void
BindMetaNumber(
    sqlite3_stmt *stmt,
    int index,
    Tcl_Obj *metaObj,
    const char *key1,
    const char *key2)
{
    Tcl_Obj *valueObj = MetaGet(metaObj, key1, key2);
    Tcl_WideInt w;
    double d;

    if (valueObj == NULL) {
	sqlite3_bind_null(stmt, index);
    } else if (Tcl_GetWideIntFromObj(NULL, valueObj, &w) == TCL_OK) {
	sqlite3_bind_int64(stmt, index, w);
    } else if (Tcl_GetDoubleFromObj(NULL, valueObj, &d) == TCL_OK) {
	sqlite3_bind_double(stmt, index, d);
    } else {
	sqlite3_bind_null(stmt, index);
    }
}

static int
FlushRun(
    CprofStore *storePtr,
    Tcl_Obj *metaObj,
    int final)
{
    sqlite3_stmt *stmt = storePtr->stmts[ST_RUN];
    Tcl_Obj *dropsObj = MetaGet(metaObj, "sampling", "drops");
    double elapsed, overhead = 0;
    int haveOverhead = 0, found;

    elapsed = MetaDouble(metaObj, "elapsed", NULL, NULL);
    sqlite3_bind_int64(stmt, 1, storePtr->runId);
    BindObj(stmt, 2, MetaGet(metaObj, "label", NULL));
    BindText(stmt, 3, final ? "complete" : "running");
    BindObj(stmt, 4, MetaGet(metaObj, "stopped_by", NULL));
    if (final) {
	sqlite3_bind_double(stmt, 5, CprofWallSeconds());
    }
    sqlite3_bind_double(stmt, 6, elapsed);
    BindMetaNumber(stmt, 7, metaObj, "rate_achieved", NULL);
    BindMetaNumber(stmt, 8, metaObj, "samples", NULL);
    BindMetaNumber(stmt, 9, metaObj, "weight", NULL);
    if (dropsObj != NULL) {
	Tcl_DictSearch search;
	Tcl_Obj *keyObj, *valueObj;
	Tcl_WideInt sum = 0, w;
	int done;

	if (Tcl_DictObjFirst(NULL, dropsObj, &search, &keyObj, &valueObj,
		&done) == TCL_OK) {
	    for (; !done; Tcl_DictObjNext(&search, &keyObj, &valueObj,
		    &done)) {
		if (Tcl_GetWideIntFromObj(NULL, valueObj, &w) == TCL_OK) {
		    sum += w;
		}
	    }
	    Tcl_DictObjDone(&search);
	}
	sqlite3_bind_int64(stmt, 10, sum);
    }
    BindMetaNumber(stmt, 11, metaObj, "sampling", "splice_rate");
    BindMetaNumber(stmt, 12, metaObj, "calls", NULL);

    /*
     * The profiler's share of the run, estimated: the signal handler's
     * time per sample, and exact timing's cost per call as compensation
     * measured it.
     */

    if (elapsed > 0) {
	Tcl_Obj *handlerObj = MetaGet(metaObj, "sampling", "handler");
	Tcl_Obj *compObj = MetaGet(metaObj, "exact", "compensation");

	if (handlerObj != NULL) {
	    double signals = MetaDouble(metaObj, "sampling", "signals",
		    &found);
	    double mean = MetaDouble(handlerObj, "mean_ns", NULL, NULL);

	    if (found) {
		overhead += signals * mean / (elapsed * 1e9) * 100;
		haveOverhead = 1;
	    }
	}
	if (compObj != NULL) {
	    double callNs = MetaDouble(compObj, "call_ns", NULL, &found);

	    if (found) {
		overhead += MetaDouble(metaObj, "calls", NULL, NULL) * callNs
			/ (elapsed * 1e9) * 100;
		haveOverhead = 1;
	    }
	}
    }
    if (haveOverhead) {
	sqlite3_bind_double(stmt, 13, ((int) (overhead * 100 + 0.5)) / 100.0);
    }
    BindObj(stmt, 14, metaObj);
    return Exec(stmt);
}

/*
 *----------------------------------------------------------------------
 *
 * InsertRun, CprofStoreBeginRun --
 *
 *	Add a run to the file and make it the one flushes write. 'infoObj'
 *	is a dict of the run's columns fixed at its start (label, mode,
 *	clock, host, argv0, argv, cwd, tcl_version, tclcprof_version,
 *	rate_requested, test_file, test_name, has_lines, has_events,
 *	parent_run, start_time); the pid is the caller's, the start time
 *	now unless given.
 *
 *----------------------------------------------------------------------
 */

static int
InsertRun(
    CprofStore *storePtr,
    Tcl_Obj *infoObj)
{
    static const struct {
	const char *name;
	int type;		/* SQLITE_TEXT, SQLITE_INTEGER, SQLITE_FLOAT */
    } columns[] = {
	{"label", SQLITE_TEXT}, {"mode", SQLITE_TEXT},
	{"clock", SQLITE_TEXT}, {"host", SQLITE_TEXT},
	{"argv0", SQLITE_TEXT}, {"argv", SQLITE_TEXT}, {"cwd", SQLITE_TEXT},
	{"tcl_version", SQLITE_TEXT}, {"tclcprof_version", SQLITE_TEXT},
	{"rate_requested", SQLITE_FLOAT}, {"test_file", SQLITE_TEXT},
	{"test_name", SQLITE_TEXT}, {"has_lines", SQLITE_INTEGER},
	{"has_events", SQLITE_INTEGER}, {"parent_run", SQLITE_INTEGER},
	{NULL, 0}
    };
    sqlite3_stmt *stmt = NULL;
    Tcl_DString sql;
    int i, rc;

    Tcl_DStringInit(&sql);
    Tcl_DStringAppend(&sql, "INSERT INTO runs (status, start_time, pid", -1);
    for (i = 0; columns[i].name != NULL; i++) {
	Tcl_DStringAppend(&sql, ", ", 2);
	Tcl_DStringAppend(&sql, columns[i].name, -1);
    }
    Tcl_DStringAppend(&sql, ") VALUES ('running', ?1, ?2", -1);
    for (i = 0; columns[i].name != NULL; i++) {
	char buf[16];

	snprintf(buf, sizeof(buf), ", ?%d", i + 3);
	Tcl_DStringAppend(&sql, buf, -1);
    }
    Tcl_DStringAppend(&sql, ")", 1);
    rc = sqlite3_prepare_v2(storePtr->db, Tcl_DStringValue(&sql), -1, &stmt,
	    NULL);
    Tcl_DStringFree(&sql);
    if (rc == SQLITE_OK) {
	double start = MetaDouble(infoObj, "start_time", NULL, &i);

	sqlite3_bind_double(stmt, 1, i ? start : CprofWallSeconds());
	sqlite3_bind_int64(stmt, 2, (sqlite3_int64) getpid());
	for (i = 0; columns[i].name != NULL; i++) {
	    Tcl_Obj *valueObj = MetaGet(infoObj, columns[i].name, NULL);
	    Tcl_WideInt w;
	    double d;

	    if (valueObj == NULL) {
		continue;
	    }
	    if (columns[i].type == SQLITE_INTEGER) {
		if (Tcl_GetWideIntFromObj(NULL, valueObj, &w) == TCL_OK) {
		    sqlite3_bind_int64(stmt, i + 3, w);
		}
	    } else if (columns[i].type == SQLITE_FLOAT) {
		if (Tcl_GetDoubleFromObj(NULL, valueObj, &d) == TCL_OK) {
		    sqlite3_bind_double(stmt, i + 3, d);
		}
	    } else {
		BindObj(stmt, i + 3, valueObj);
	    }
	}
	rc = Exec(stmt);
	sqlite3_finalize(stmt);
    }
    if (rc == SQLITE_OK) {
	storePtr->runId = sqlite3_last_insert_rowid(storePtr->db);
	storePtr->pid = getpid();
	storePtr->eventsWritten = 0;
	storePtr->clearPending = 0;
	storePtr->numTreeFrames = 0;
	ForgetShadows(storePtr);
    }
    return rc;
}

/*
 *----------------------------------------------------------------------
 *
 * FlushBody, CprofStoreFlush --
 *
 *	Bring the run in the file up to date with the profile in memory, in
 *	one transaction (Write). 'metaObj' is the profile's meta; 'final': the run
 *	is over (its end time and the procedures defined are written).
 *
 * Results:
 *	TCL_OK, or TCL_ERROR with a TCLCPROF DB error in interp (if not
 *	NULL) and in the store's last error; the data in memory is kept and
 *	the next flush writes everything again.
 *
 *----------------------------------------------------------------------
 */

static int
FlushBody(
    CprofStore *storePtr,
    CprofState *statePtr,
    Tcl_Obj *metaObj,
    int final,
    int *eventsPtr)
{
    int mode = statePtr->options.mode, rc = SQLITE_OK;
    sqlite3 *db = storePtr->db;

    if (storePtr->clearPending) {
	static const char *const tables[] = {
	    "nodes", "lines", "events", "coverage_commands",
	    "coverage_lines", "coverage_procs", NULL
	};
	int i;

	for (i = 0; rc == SQLITE_OK && tables[i] != NULL; i++) {
	    char *sql = sqlite3_mprintf("DELETE FROM %s WHERE run = %lld",
		    tables[i], (long long) storePtr->runId);

	    rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	    sqlite3_free(sql);
	}
    }
    if (rc == SQLITE_OK) {
	switch (mode) {
	case CPROF_MODE_SAMPLE:
	    rc = FlushSampleTree(storePtr, statePtr, 0);
	    break;
	case CPROF_MODE_EXACT:
	    rc = FlushExactTree(storePtr, statePtr, 0);
	    break;
	case CPROF_MODE_BOTH:
	    rc = FlushSampleTree(storePtr, statePtr, 0);
	    if (rc == SQLITE_OK) {
		rc = FlushExactTree(storePtr, statePtr, 1);
	    }
	    break;
	}
    }
    if (rc == SQLITE_OK && mode != CPROF_MODE_SAMPLE) {
	if (statePtr->options.lines && mode != CPROF_MODE_COVERAGE) {
	    rc = FlushLines(storePtr, statePtr);
	}
	if (rc == SQLITE_OK && statePtr->options.events) {
	    rc = FlushEvents(storePtr, statePtr, final, eventsPtr);
	}
	if (rc == SQLITE_OK) {
	    /*
	     * The procedures defined are read when the run ends, unless it
	     * ends with its interpreter deleted: they are gone by then.
	     */

	    rc = FlushCoverage(storePtr, statePtr, final
		    && !Tcl_InterpDeleted(statePtr->interp));
	}
    }
    if (rc == SQLITE_OK) {
	rc = FlushHandlers(storePtr, statePtr);
    }
    if (rc == SQLITE_OK) {
	rc = FlushRun(storePtr, metaObj, final);
    }
    return rc;
}

/*
 * Record a failure of a write: the error (in interp, and as the store's
 * last error), the transaction rolled back, the shadows forgotten.
 */

static void
WriteFailed(
    Tcl_Interp *interp,
    CprofStore *storePtr,
    int rc)
{
    Tcl_Obj *msgObj = Tcl_ObjPrintf("cannot write profile database \"%s\": %s",
	    Tcl_GetString(storePtr->pathObj), storePtr->db
	    ? sqlite3_errmsg(storePtr->db) : sqlite3_errstr(rc));

    DbError(interp, storePtr->pathObj, storePtr->db, rc, "write");
    if (storePtr->lastErrorObj) {
	Tcl_DecrRefCount(storePtr->lastErrorObj);
    }
    storePtr->lastErrorObj = msgObj;
    Tcl_IncrRefCount(msgObj);
    storePtr->lastErrorRc = rc;
    if (storePtr->db != NULL) {
	sqlite3_exec(storePtr->db, "ROLLBACK", NULL, NULL, NULL);
    }
    storePtr->numTreeFrames = 0;
    ForgetShadows(storePtr);
}

static void
WriteDone(
    CprofStore *storePtr,
    int events,
    uint64_t t0)
{
    storePtr->eventsWritten = events;
    storePtr->clearPending = 0;
    storePtr->flushes++;
    storePtr->lastFlushMs = (CprofClockNs(CLOCK_MONOTONIC) - t0) / 1e6;
    if (storePtr->lastErrorObj) {
	Tcl_DecrRefCount(storePtr->lastErrorObj);
	storePtr->lastErrorObj = NULL;
    }
}

/*
 * Open the store's file for a write, the error recorded as the store's
 * last error too.
 */

static int
ConnectForWrite(
    Tcl_Interp *interp,
    CprofStore *storePtr,
    Tcl_Interp *scratchInterp)
{
    Tcl_Interp *useInterp = interp ? interp : scratchInterp;
    Tcl_InterpState saved = NULL;
    int code;

    if (interp == NULL) {
	saved = Tcl_SaveInterpState(scratchInterp, TCL_OK);
    }
    code = Connect(useInterp, storePtr);
    if (code != TCL_OK) {
	Tcl_Obj *msgObj = Tcl_GetObjResult(useInterp);

	if (storePtr->lastErrorObj) {
	    Tcl_DecrRefCount(storePtr->lastErrorObj);
	}
	storePtr->lastErrorObj = Tcl_DuplicateObj(msgObj);
	Tcl_IncrRefCount(storePtr->lastErrorObj);
	storePtr->lastErrorRc = SQLITE_CANTOPEN;
	storePtr->numTreeFrames = 0;
	ForgetShadows(storePtr);
    }
    if (saved != NULL) {
	Tcl_RestoreInterpState(scratchInterp, saved);
    }
    return code;
}

/*
 * One write, one transaction: a new run (infoObj not NULL) and/or the
 * current profile (statePtr not NULL; 'final': the run's last state). On
 * failure nothing of it is in the file and a new run has no id.
 */

static int
Write(
    Tcl_Interp *interp,
    CprofStore *storePtr,
    CprofState *statePtr,
    Tcl_Obj *infoObj,
    Tcl_Obj *metaObj,
    int final)
{
    int rc, events = storePtr->eventsWritten;
    uint64_t t0 = CprofClockNs(CLOCK_MONOTONIC);

    if (ConnectForWrite(interp, storePtr,
	    statePtr ? statePtr->interp : NULL) != TCL_OK) {
	return TCL_ERROR;
    }
    rc = sqlite3_exec(storePtr->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc == SQLITE_OK && infoObj != NULL) {
	rc = InsertRun(storePtr, infoObj);
	events = 0;
    }
    if (rc == SQLITE_OK && statePtr != NULL) {
	rc = FlushBody(storePtr, statePtr, metaObj, final, &events);
    }
    if (rc == SQLITE_OK) {
	rc = sqlite3_exec(storePtr->db, "COMMIT", NULL, NULL, NULL);
    }
    if (rc != SQLITE_OK) {
	WriteFailed(interp, storePtr, rc);
	if (infoObj != NULL) {
	    storePtr->runId = 0;
	}
	Disconnect(storePtr, 0);
	return TCL_ERROR;
    }
    if (statePtr != NULL) {
	WriteDone(storePtr, events, t0);
    }
    Disconnect(storePtr, final);
    return TCL_OK;
}

int
CprofStoreBeginRun(
    Tcl_Interp *interp,
    CprofStore *storePtr,
    Tcl_Obj *infoObj)
{
    return Write(interp, storePtr, NULL, infoObj, NULL, 0);
}

int
CprofStoreFlush(
    Tcl_Interp *interp,
    CprofStore *storePtr,
    CprofState *statePtr,
    Tcl_Obj *metaObj,
    int final)
{
    return Write(interp, storePtr, statePtr, NULL, metaObj, final);
}

/*
 *----------------------------------------------------------------------
 *
 * CprofStoreSave --
 *
 *	Write a profile whole as a new run, in one transaction: the run is
 *	in the file complete, or not at all.
 *
 *----------------------------------------------------------------------
 */

int
CprofStoreSave(
    Tcl_Interp *interp,
    CprofStore *storePtr,
    CprofState *statePtr,
    Tcl_Obj *infoObj,
    Tcl_Obj *metaObj)
{
    return Write(interp, storePtr, statePtr, infoObj, metaObj, 1);
}

/*
 * The error of the last failed flush as a Tcl error (for a flush made
 * without an interpreter to report to).
 */

int
CprofStoreLastError(
    Tcl_Interp *interp,
    CprofStore *storePtr)
{
    if (storePtr->lastErrorObj == NULL) {
	return TCL_OK;
    }
    Tcl_SetObjResult(interp, storePtr->lastErrorObj);
    Tcl_SetErrorCode(interp, "TCLCPROF", "DB",
	    ErrorClass(storePtr->lastErrorRc),
	    Tcl_GetString(storePtr->pathObj), NULL);
    return TCL_ERROR;
}

/*
 *----------------------------------------------------------------------
 *
 * Reading --
 *
 *	CprofStoreLoad: a run of a file as the value tclcprof::data returns
 *	(the latest run when runId is 0). CprofStoreRuns: the runs of a
 *	file.
 *
 *----------------------------------------------------------------------
 */

#define PUT(d, k, v) \
    Tcl_DictObjPut(NULL, (d), Tcl_NewStringObj((k), -1), (v))

static Tcl_Obj *
ColumnObj(
    sqlite3_stmt *stmt,
    int col)
{
    switch (sqlite3_column_type(stmt, col)) {
    case SQLITE_INTEGER:
	return Tcl_NewWideIntObj(sqlite3_column_int64(stmt, col));
    case SQLITE_FLOAT:
	return Tcl_NewDoubleObj(sqlite3_column_double(stmt, col));
    case SQLITE_NULL:
	return Tcl_NewObj();
    default:
	return Tcl_NewStringObj((const char *) sqlite3_column_text(stmt, col),
		sqlite3_column_bytes(stmt, col));
    }
}

/*
 * One call tree, built from its rows bottom up: children have higher ids
 * than their parents.
 */

static int
LoadTree(
    sqlite3 *db,
    Tcl_WideInt runId,
    int tree,
    Tcl_Obj **treeObjPtr)
{
    static const char *const figKeys[] = {
	"calls", "total_ns", "self_ns", "min_ns", "max_ns"
    };
    sqlite3_stmt *stmt;
    Tcl_HashTable pending;	/* Node id -> its list of children. */
    Tcl_HashEntry *hPtr;
    Tcl_HashSearch search;
    Tcl_Obj *rootObj = NULL;
    int rc, isNew, k;

    rc = sqlite3_prepare_v2(db, "SELECT n.id, n.parent, f.kind, f.name,"
	    " f.tclkind, f.module, n.self, n.total, n.calls, n.total_ns,"
	    " n.self_ns, n.min_ns, n.max_ns, n.suspended_ns"
	    " FROM nodes n LEFT JOIN frames f ON f.id = n.frame"
	    " WHERE n.run = ?1 AND n.tree = ?2 AND n.shown"
	    " ORDER BY n.id DESC", -1, &stmt, NULL);
    if (rc != SQLITE_OK) {
	return rc;
    }
    sqlite3_bind_int64(stmt, 1, runId);
    sqlite3_bind_int(stmt, 2, tree);
    Tcl_InitHashTable(&pending, TCL_ONE_WORD_KEYS);
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
	Tcl_Obj *dictObj = Tcl_NewDictObj(), *childrenObj;
	sqlite3_int64 id = sqlite3_column_int64(stmt, 0);

	if (sqlite3_column_type(stmt, 1) == SQLITE_NULL) {
	    PUT(dictObj, "name", Tcl_NewObj());
	    PUT(dictObj, "kind", Tcl_NewStringObj("root", -1));
	} else {
	    const char *kind = (const char *) sqlite3_column_text(stmt, 2);

	    PUT(dictObj, "name", ColumnObj(stmt, 3));
	    PUT(dictObj, "kind", ColumnObj(stmt, 2));
	    if (kind != NULL && strcmp(kind, "c") == 0) {
		PUT(dictObj, "module", ColumnObj(stmt, 5));
	    } else {
		PUT(dictObj, "tclkind", ColumnObj(stmt, 4));
		if (sqlite3_column_bytes(stmt, 5) > 0) {
		    PUT(dictObj, "origin", ColumnObj(stmt, 5));
		}
	    }
	}
	PUT(dictObj, "self", ColumnObj(stmt, 6));
	PUT(dictObj, "total", ColumnObj(stmt, 7));
	if (sqlite3_column_type(stmt, 8) != SQLITE_NULL) {
	    for (k = 0; k < 5; k++) {
		PUT(dictObj, figKeys[k], ColumnObj(stmt, 8 + k));
	    }
	    if (sqlite3_column_int64(stmt, 13) > 0) {
		PUT(dictObj, "suspended_ns", ColumnObj(stmt, 13));
	    }
	}
	hPtr = Tcl_FindHashEntry(&pending, (char *) (intptr_t) id);
	if (hPtr != NULL) {
	    childrenObj = Tcl_GetHashValue(hPtr);
	    Tcl_DeleteHashEntry(hPtr);
	    PUT(dictObj, "children", childrenObj);
	    Tcl_DecrRefCount(childrenObj);
	} else {
	    PUT(dictObj, "children", Tcl_NewObj());
	}
	if (sqlite3_column_type(stmt, 1) == SQLITE_NULL) {
	    if (rootObj != NULL) {
		Tcl_DecrRefCount(rootObj);
	    }
	    rootObj = dictObj;
	    Tcl_IncrRefCount(rootObj);
	    continue;
	}
	hPtr = Tcl_CreateHashEntry(&pending,
		(char *) (intptr_t) sqlite3_column_int64(stmt, 1), &isNew);
	if (isNew) {
	    childrenObj = Tcl_NewListObj(0, NULL);
	    Tcl_IncrRefCount(childrenObj);
	    Tcl_SetHashValue(hPtr, childrenObj);
	} else {
	    childrenObj = Tcl_GetHashValue(hPtr);
	}
	Tcl_ListObjAppendElement(NULL, childrenObj, dictObj);
    }
    sqlite3_finalize(stmt);
    for (hPtr = Tcl_FirstHashEntry(&pending, &search); hPtr != NULL;
	    hPtr = Tcl_NextHashEntry(&search)) {
	Tcl_DecrRefCount((Tcl_Obj *) Tcl_GetHashValue(hPtr));
    }
    Tcl_DeleteHashTable(&pending);
    if (rc != SQLITE_DONE) {
	if (rootObj != NULL) {
	    Tcl_DecrRefCount(rootObj);
	}
	return rc;
    }
    if (rootObj == NULL) {
	rootObj = Tcl_NewDictObj();
	PUT(rootObj, "name", Tcl_NewObj());
	PUT(rootObj, "kind", Tcl_NewStringObj("root", -1));
	PUT(rootObj, "self", Tcl_NewIntObj(0));
	PUT(rootObj, "total", Tcl_NewIntObj(0));
	PUT(rootObj, "children", Tcl_NewObj());
	Tcl_IncrRefCount(rootObj);
    }
    *treeObjPtr = rootObj;
    rootObj->refCount--;	/* Handed over without being freed. */
    return SQLITE_OK;
}

/*
 * Rows of a query (with ?1 bound to the run) as a list of dicts with the
 * given keys, one per column.
 */

static int
LoadRows(
    sqlite3 *db,
    const char *sql,
    Tcl_WideInt runId,
    const char *const *keys,
    Tcl_Obj **listObjPtr)
{
    sqlite3_stmt *stmt;
    Tcl_Obj *listObj;
    int rc, k;

    rc = sqlite3_prepare_v2(db, sql, -1, &stmt, NULL);
    if (rc != SQLITE_OK) {
	return rc;
    }
    sqlite3_bind_int64(stmt, 1, runId);
    listObj = Tcl_NewListObj(0, NULL);
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
	Tcl_Obj *dictObj = Tcl_NewDictObj();

	for (k = 0; keys[k] != NULL; k++) {
	    PUT(dictObj, keys[k], ColumnObj(stmt, k));
	}
	Tcl_ListObjAppendElement(NULL, listObj, dictObj);
    }
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) {
	Tcl_DecrRefCount(listObj);
	return rc;
    }
    *listObjPtr = listObj;
    return SQLITE_OK;
}

static int
NoRun(
    Tcl_Interp *interp,
    Tcl_Obj *pathObj,
    Tcl_WideInt runId)
{
    char buf[32];

    snprintf(buf, sizeof(buf), "%lld", (long long) runId);
    if (runId == 0) {
	Tcl_SetObjResult(interp, Tcl_ObjPrintf("no runs in \"%s\"",
		Tcl_GetString(pathObj)));
    } else {
	Tcl_SetObjResult(interp, Tcl_ObjPrintf("no run %s in \"%s\"", buf,
		Tcl_GetString(pathObj)));
    }
    Tcl_SetErrorCode(interp, "TCLCPROF", "DB", "NORUN",
	    Tcl_GetString(pathObj), buf, NULL);
    return TCL_ERROR;
}

/*
 * The handlers of a run, if the file has the table and the run has rows:
 * the profile's "handlers", as CprofEventsObj makes it.
 */

static int
LoadHandlers(
    sqlite3 *db,
    Tcl_WideInt runId,
    Tcl_Obj **listObjPtr)
{
    static const char *const keys[] = {
	"origin", "kind", "count", "timed", "total_ns", "max_ns",
	"latency_count", "latency_ns", "latency_max_ns"
    };
    sqlite3_stmt *stmt;
    Tcl_Obj *listObj = NULL;
    int rc, k;

    *listObjPtr = NULL;
    rc = sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE"
	    " type = 'table' AND name = 'handlers'", -1, &stmt, NULL);
    if (rc != SQLITE_OK) {
	return rc;
    }
    rc = sqlite3_step(stmt);
    sqlite3_finalize(stmt);
    if (rc == SQLITE_DONE) {
	return SQLITE_OK;
    }
    if (rc != SQLITE_ROW) {
	return rc;
    }
    rc = sqlite3_prepare_v2(db, "SELECT origin, kind, count, timed,"
	    " total_ns, max_ns, latency_count, latency_ns, latency_max_ns"
	    " FROM handlers WHERE run = ?1 ORDER BY seq", -1, &stmt, NULL);
    if (rc != SQLITE_OK) {
	return rc;
    }
    sqlite3_bind_int64(stmt, 1, runId);
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
	Tcl_Obj *d = Tcl_NewDictObj();

	for (k = 0; k < 9; k++) {
	    if (sqlite3_column_type(stmt, k) != SQLITE_NULL) {
		PUT(d, keys[k], ColumnObj(stmt, k));
	    }
	}
	if (listObj == NULL) {
	    listObj = Tcl_NewListObj(0, NULL);
	}
	Tcl_ListObjAppendElement(NULL, listObj, d);
    }
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) {
	if (listObj != NULL) {
	    Tcl_DecrRefCount(listObj);
	}
	return rc;
    }
    *listObjPtr = listObj;
    return SQLITE_OK;
}

Tcl_Obj *
CprofStoreLoad(
    Tcl_Interp *interp,
    Tcl_Obj *pathObj,
    Tcl_WideInt runId)
{
    static const char *const lineKeys[] = {
	"file", "line", "name", "tclkind", "caller", "calls", "total_ns",
	"self_ns", "min_ns", "max_ns", NULL
    };
    static const char *const cmdKeys[] = {"name", "tclkind", "calls", NULL};
    static const char *const covLineKeys[] = {"file", "line", "calls", NULL};
    sqlite3 *db;
    sqlite3_stmt *stmt;
    Tcl_Obj *resultObj = NULL, *metaObj = NULL, *treeObj, *listObj;
    char *mode = NULL;
    int rc, hasLines = 0, hasEvents = 0;

    if (OpenDb(interp, pathObj, 0, 0, &db, NULL) != TCL_OK) {
	return NULL;
    }
    rc = sqlite3_prepare_v2(db, runId > 0 ? "SELECT id, mode, meta,"
	    " has_lines, has_events FROM runs WHERE id = ?1"
	    : "SELECT id, mode, meta, has_lines, has_events FROM runs"
	    " ORDER BY id DESC LIMIT 1", -1, &stmt, NULL);
    if (rc != SQLITE_OK) {
	goto dbError;
    }
    if (runId > 0) {
	sqlite3_bind_int64(stmt, 1, runId);
    }
    rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) {
	runId = sqlite3_column_int64(stmt, 0);
	mode = sqlite3_mprintf("%s", sqlite3_column_text(stmt, 1));
	metaObj = ColumnObj(stmt, 2);
	Tcl_IncrRefCount(metaObj);
	hasLines = sqlite3_column_int(stmt, 3);
	hasEvents = sqlite3_column_int(stmt, 4);
	rc = SQLITE_OK;
    }
    sqlite3_finalize(stmt);
    if (rc == SQLITE_DONE) {
	NoRun(interp, pathObj, runId);
	goto done;
    }
    if (rc != SQLITE_OK) {
	goto dbError;
    }

    resultObj = Tcl_NewDictObj();
    Tcl_IncrRefCount(resultObj);
    PUT(resultObj, "meta", metaObj);
    rc = LoadTree(db, runId, 0, &treeObj);
    if (rc != SQLITE_OK) {
	goto dbError;
    }
    PUT(resultObj, "tree", treeObj);
    if (strcmp(mode, "both") == 0) {
	rc = LoadTree(db, runId, 1, &treeObj);
	if (rc != SQLITE_OK) {
	    goto dbError;
	}
	PUT(resultObj, "exact", treeObj);
    }
    if (strcmp(mode, "sample") != 0) {
	Tcl_Obj *covObj;

	if (hasLines && strcmp(mode, "coverage") != 0) {
	    rc = LoadRows(db, "SELECT l.file, l.line, f.name, f.tclkind,"
		    " l.caller, l.calls, l.total_ns, l.self_ns, l.min_ns,"
		    " l.max_ns"
		    " FROM lines l JOIN frames f ON f.id = l.frame"
		    " WHERE l.run = ?1 AND l.shown ORDER BY l.id", runId,
		    lineKeys, &listObj);
	    if (rc != SQLITE_OK) {
		goto dbError;
	    }
	    PUT(resultObj, "lines", listObj);
	}
	if (hasEvents) {
	    rc = sqlite3_prepare_v2(db, "SELECT e.ns, e.type, f.name FROM"
		    " events e JOIN frames f ON f.id = e.frame WHERE"
		    " e.run = ?1 ORDER BY e.seq", -1, &stmt, NULL);
	    if (rc != SQLITE_OK) {
		goto dbError;
	    }
	    sqlite3_bind_int64(stmt, 1, runId);
	    listObj = Tcl_NewListObj(0, NULL);
	    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		int k;

		for (k = 0; k < 3; k++) {
		    Tcl_ListObjAppendElement(NULL, listObj,
			    ColumnObj(stmt, k));
		}
	    }
	    sqlite3_finalize(stmt);
	    if (rc != SQLITE_DONE) {
		Tcl_DecrRefCount(listObj);
		goto dbError;
	    }
	    PUT(resultObj, "events", listObj);
	}
	covObj = Tcl_NewDictObj();
	PUT(resultObj, "coverage", covObj);
	rc = LoadRows(db, "SELECT f.name, f.tclkind, c.calls FROM"
		" coverage_commands c JOIN frames f ON f.id = c.frame"
		" WHERE c.run = ?1 AND c.calls > 0 ORDER BY c.seq", runId,
		cmdKeys, &listObj);
	if (rc != SQLITE_OK) {
	    goto dbError;
	}
	PUT(covObj, "commands", listObj);
	rc = sqlite3_prepare_v2(db, "SELECT name FROM coverage_procs"
		" WHERE run = ?1 ORDER BY seq", -1, &stmt, NULL);
	if (rc != SQLITE_OK) {
	    goto dbError;
	}
	sqlite3_bind_int64(stmt, 1, runId);
	listObj = Tcl_NewListObj(0, NULL);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
	    Tcl_ListObjAppendElement(NULL, listObj, ColumnObj(stmt, 0));
	}
	sqlite3_finalize(stmt);
	if (rc != SQLITE_DONE) {
	    Tcl_DecrRefCount(listObj);
	    goto dbError;
	}
	PUT(covObj, "procs", listObj);
	rc = LoadRows(db, "SELECT file, line, calls FROM coverage_lines"
		" WHERE run = ?1 AND calls > 0 ORDER BY seq", runId, covLineKeys,
		&listObj);
	if (rc != SQLITE_OK) {
	    goto dbError;
	}
	PUT(covObj, "lines", listObj);
    }
    rc = LoadHandlers(db, runId, &listObj);
    if (rc != SQLITE_OK) {
	goto dbError;
    }
    if (listObj != NULL) {
	PUT(resultObj, "handlers", listObj);
    }
    goto done;

  dbError:
    DbError(interp, pathObj, db, rc, "read");
    if (resultObj != NULL) {
	Tcl_DecrRefCount(resultObj);
	resultObj = NULL;
    }

  done:
    if (metaObj != NULL) {
	Tcl_DecrRefCount(metaObj);
    }
    sqlite3_free(mode);
    sqlite3_close_v2(db);
    if (resultObj != NULL) {
	resultObj->refCount--;	/* Handed over without being freed. */
    }
    return resultObj;
}

Tcl_Obj *
CprofStoreRuns(
    Tcl_Interp *interp,
    Tcl_Obj *pathObj)
{
    static const char *const keys[] = {
	"id", "label", "status", "stopped_by", "start_time", "end_time",
	"elapsed", "pid", "parent_run", "host", "argv0", "argv", "mode",
	"clock", "rate_requested", "rate_achieved", "samples", "weight",
	"drops", "splice_rate", "calls", "overhead_pct", "test_file",
	"test_name", NULL
    };
    sqlite3 *db;
    Tcl_Obj *listObj;
    int rc;

    if (OpenDb(interp, pathObj, 0, 0, &db, NULL) != TCL_OK) {
	return NULL;
    }
    rc = LoadRows(db, "SELECT id, label, status, stopped_by, start_time,"
	    " end_time, elapsed, pid, parent_run, host, argv0, argv, mode,"
	    " clock, rate_requested, rate_achieved, samples, weight, drops,"
	    " splice_rate, calls, overhead_pct, test_file, test_name"
	    " FROM runs WHERE ?1 = ?1 ORDER BY id", 0, keys, &listObj);
    if (rc != SQLITE_OK) {
	DbError(interp, pathObj, db, rc, "read");
	listObj = NULL;
    }
    sqlite3_close_v2(db);
    return listObj;
}
