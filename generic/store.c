/*
 * store.c --
 *
 *	Profiles in SQLite: one database file holds many runs. This file
 *	has the files and connections (the schema and its upgrades, making
 *	and opening a file safely, busy handling, errors); what is written
 *	and read is in storewrite.c, storedata.c and storeread.c
 *	(storeInt.h). A running
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

#include "storeInt.h"
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#define SCHEMA_VERSION	5
#define OLDEST_VERSION	1	/* The oldest schema still read. */
#define APPLICATION_ID	0x74637066	/* "tcpf" */
#define BUSY_TIMEOUT_MS	5000

/*
 * The C source lines of the sampled tree's nodes (see CprofNodeLine).
 */

#define NODE_LINES_SQL \
"CREATE TABLE IF NOT EXISTS node_lines (\n" \
"  run INTEGER NOT NULL REFERENCES runs(id),\n" \
"  id INTEGER NOT NULL,\n" \
"  node INTEGER NOT NULL,\n"	/* the C frame's node of tree 0 */ \
"  callee INTEGER,\n"		/* the node called, NULL: none */ \
"  file TEXT NOT NULL, line INTEGER NOT NULL,\n" \
"  weight NOT NULL,\n" \
"  PRIMARY KEY (run, id)\n" \
") WITHOUT ROWID;\n"

/*
 * The figures of memory profiles: per node of the run's memory tree (tree
 * 0 of mode memory, tree 2 of mode sample with memory samples too), the
 * node's own bytes and objects allocated, live at the end, and live when
 * the run's live bytes were highest (drainmemory.c). The nodes' self and
 * total hold the bytes allocated.
 */

/*
 * The C source lines of the memory tree of a run of mode sample that takes
 * memory samples too (tree 2; a run of mode memory keeps them in
 * node_lines, its memory tree being tree 0): the columns of node_lines.
 */

#define MEMORY_NODE_LINES_SQL \
"CREATE TABLE IF NOT EXISTS memory_node_lines (\n" \
"  run INTEGER NOT NULL REFERENCES runs(id),\n" \
"  id INTEGER NOT NULL,\n" \
"  node INTEGER NOT NULL,\n"	/* the C frame's node of tree 2 */ \
"  callee INTEGER,\n" \
"  file TEXT NOT NULL, line INTEGER NOT NULL,\n" \
"  weight NOT NULL,\n" \
"  PRIMARY KEY (run, id)\n" \
") WITHOUT ROWID;\n"

#define MEMORY_NODES_SQL \
"CREATE TABLE IF NOT EXISTS memory_nodes (\n" \
"  run INTEGER NOT NULL REFERENCES runs(id),\n" \
"  node INTEGER NOT NULL,\n" \
"  alloc_bytes INTEGER NOT NULL, alloc_objects INTEGER NOT NULL,\n" \
"  live_bytes INTEGER NOT NULL, live_objects INTEGER NOT NULL,\n" \
"  peak_bytes INTEGER NOT NULL, peak_objects INTEGER NOT NULL,\n" \
"  PRIMARY KEY (run, node)\n" \
") WITHOUT ROWID;\n"

/*
 * The events of the threads of a run other than the one that started it
 * (a profile's "thread_events", -events 1 with -scope process): thread is
 * the thread's place in the run's threads (threads.seq, 1 and up), seq
 * the event's place in that thread's sequence; the starting thread's are
 * in events. Added to files of version 3 made before it was kept.
 */

#define THREAD_EVENTS_SQL \
"CREATE TABLE IF NOT EXISTS thread_events (\n" \
"  run INTEGER NOT NULL REFERENCES runs(id),\n" \
"  thread INTEGER NOT NULL,\n" \
"  seq INTEGER NOT NULL,\n" \
"  ns INTEGER NOT NULL,\n" \
"  type TEXT NOT NULL,\n"		/* E, L */ \
"  frame INTEGER NOT NULL REFERENCES frames(id),\n" \
"  PRIMARY KEY (run, thread, seq)\n" \
") WITHOUT ROWID;\n"

/*
 * The schema, version 3. Frames are shared by the runs of a file; every
 * other table is per run. Views answer the usual questions.
 *
 * The columns of a table's primary key come first: SQLite 3.40's
 * PRAGMA integrity_check reads the other columns of a WITHOUT ROWID
 * table at the wrong places otherwise, and reports NULL values in NOT
 * NULL columns that have none. Version 1 had coverage_commands (run,
 * frame, calls, seq) with the key (run, seq); version 2 has (run, seq,
 * frame, calls). Version 1 files are read as they are (every query
 * names its columns) and upgraded when a run is written to them
 * (UpgradeSchema).
 */

#define COVERAGE_COMMANDS_SQL \
"CREATE TABLE coverage_commands (\n" \
"  run INTEGER NOT NULL REFERENCES runs(id),\n" \
"  seq INTEGER NOT NULL,\n" \
"  frame INTEGER NOT NULL REFERENCES frames(id),\n" \
"  calls INTEGER NOT NULL,\n" \
"  PRIMARY KEY (run, seq)\n" \
") WITHOUT ROWID;\n"

#define NEVER_CALLED_SQL \
"CREATE VIEW never_called AS\n" \
"  SELECT p.run, p.name FROM coverage_procs p\n" \
"  WHERE NOT EXISTS (SELECT 1 FROM coverage_commands c\n" \
"    JOIN frames f ON f.id = c.frame\n" \
"    WHERE c.run = p.run AND f.name = p.name AND c.calls > 0);\n"

/*
 * Frames, version 3: a Tcl frame's interpreter (its path from its
 * thread's top interpreter, empty for that one) is part of its identity,
 * and a thread's root in a profile of several threads is a frame of kind
 * "thread" (name: the thread's name; module: its Tcl thread id). The
 * views that read frames show a frame of another interpreter as "name
 * [interp]", as text reports do (DISPLAY_NAME).
 */

#define FRAMES_SQL \
"CREATE TABLE frames (\n" \
"  id INTEGER PRIMARY KEY,\n" \
"  kind TEXT NOT NULL,\n"		/* tcl, c, thread, labels */ \
"  name TEXT NOT NULL,\n" \
"  tclkind TEXT NOT NULL DEFAULT '',\n" \
"  module TEXT NOT NULL DEFAULT '',\n" \
"  interp TEXT NOT NULL DEFAULT '',\n" \
"  file TEXT NOT NULL DEFAULT '',\n" \
"  line INTEGER NOT NULL DEFAULT 0,\n" \
"  UNIQUE (kind, name, tclkind, module, interp, file, line)\n" \
");\n"

/*
 * Version 4: sets of labels are frames of kind "labels" (name: the set, a
 * Tcl list key value ... sorted by key), each with its keys and values in
 * frame_labels (cmdlabels.c).
 */

#define FRAME_LABELS_SQL \
"CREATE TABLE IF NOT EXISTS frame_labels (\n" \
"  frame INTEGER NOT NULL REFERENCES frames(id),\n" \
"  key TEXT NOT NULL,\n" \
"  value TEXT NOT NULL,\n" \
"  PRIMARY KEY (frame, key)\n" \
") WITHOUT ROWID;\n"

/*
 * Version 5: timelines (draintimeline.c), one row per run and tree (0, or 2:
 * the memory tree of -mode {sample memory}): the width of a bucket, the
 * weight per bucket, for memory trees the live and peak bytes per bucket
 * (Tcl lists), and the weight per bucket of the samples that ended at
 * each node (node_times: a Tcl list of node id and {bucket weight ...}).
 * Rewritten whole by each flush.
 */

#define TIMELINES_SQL \
"CREATE TABLE IF NOT EXISTS timelines (\n" \
"  run INTEGER NOT NULL REFERENCES runs(id),\n" \
"  tree INTEGER NOT NULL,\n" \
"  width_ns INTEGER NOT NULL,\n" \
"  buckets INTEGER NOT NULL,\n" \
"  weights TEXT NOT NULL,\n" \
"  live TEXT NOT NULL DEFAULT '',\n" \
"  peak TEXT NOT NULL DEFAULT '',\n" \
"  node_times TEXT NOT NULL DEFAULT '',\n" \
"  PRIMARY KEY (run, tree)\n" \
") WITHOUT ROWID;\n"

#define DISPLAY_NAME(f) \
    f ".name || CASE WHEN " f ".interp = '' THEN '' ELSE ' [' || " f \
    ".interp || ']' END"

/*
 * The threads of a run (its meta's "threads"), one row each in tree
 * order.
 */

#define THREADS_SQL \
"CREATE TABLE threads (\n" \
"  run INTEGER NOT NULL REFERENCES runs(id),\n" \
"  seq INTEGER NOT NULL,\n" \
"  name TEXT NOT NULL,\n" \
"  thread TEXT NOT NULL DEFAULT '',\n" \
"  tid INTEGER,\n" \
"  state TEXT NOT NULL DEFAULT '',\n" \
"  cpu_ns INTEGER, samples INTEGER, weight INTEGER,\n" \
"  interps TEXT NOT NULL DEFAULT '',\n" \
"  PRIMARY KEY (run, seq)\n" \
") WITHOUT ROWID;\n"

#define FRAME_VIEWS_SQL \
"CREATE VIEW node_frames AS\n" \
"  SELECT n.*, f.kind AS kind, f.name AS name, f.tclkind AS tclkind,\n" \
"         f.module AS module, f.interp AS interp\n" \
"  FROM nodes n LEFT JOIN frames f ON f.id = n.frame WHERE n.shown;\n" \
"CREATE VIEW top_self AS\n" \
"  SELECT n.run, f.id AS frame, f.kind, f.name, f.tclkind, f.module,\n" \
"         f.interp, SUM(n.self) AS self, SUM(n.calls) AS calls\n" \
"  FROM nodes n JOIN frames f ON f.id = n.frame\n" \
"  WHERE n.tree = 0 AND n.shown\n" \
"  GROUP BY n.run, f.id ORDER BY n.run, self DESC;\n" \
"CREATE VIEW top_total AS\n" \
"  SELECT n.run, f.id AS frame, f.kind, f.name, f.tclkind, f.module,\n" \
"         f.interp, SUM(n.total) AS total, SUM(n.calls) AS calls\n" \
"  FROM nodes n JOIN frames f ON f.id = n.frame\n" \
"  WHERE n.tree = 0 AND n.shown AND NOT n.recursive\n" \
"  GROUP BY n.run, f.id ORDER BY n.run, total DESC;\n" \
"CREATE VIEW edges AS\n" \
"  SELECT c.run, c.tree, p.frame AS caller, c.frame AS callee,\n" \
"         COUNT(*) AS paths, SUM(c.calls) AS calls, SUM(c.total) AS total,\n" \
"         SUM(c.self) AS self, MAX(c.recursive) AS recursive\n" \
"  FROM nodes c JOIN nodes p\n" \
"    ON p.run = c.run AND p.tree = c.tree AND p.id = c.parent\n" \
"  WHERE c.shown\n" \
"  GROUP BY c.run, c.tree, p.frame, c.frame;\n" \
"CREATE VIEW calls_between AS\n" \
"  SELECT e.run, e.tree,\n" \
"         coalesce(" DISPLAY_NAME("fc") ", '(top)') AS caller_name,\n" \
"         " DISPLAY_NAME("fe") " AS callee_name, e.caller, e.callee,\n" \
"         e.paths, e.calls, e.total, e.self, e.recursive\n" \
"  FROM edges e LEFT JOIN frames fc ON fc.id = e.caller\n" \
"  JOIN frames fe ON fe.id = e.callee;\n" \
NEVER_CALLED_SQL \
"CREATE VIEW stacks AS\n" \
"  WITH RECURSIVE s(run, tree, id, stack, frame_ids) AS (\n" \
"    SELECT n.run, n.tree, n.id, " DISPLAY_NAME("f") ",\n" \
"           CAST(n.frame AS TEXT)\n" \
"    FROM nodes n JOIN frames f ON f.id = n.frame\n" \
"    WHERE n.parent = 0 AND n.shown\n" \
"    UNION ALL\n" \
"    SELECT n.run, n.tree, n.id, s.stack || ';' || " DISPLAY_NAME("f") ",\n" \
"           s.frame_ids || ' ' || n.frame\n" \
"    FROM s JOIN nodes n ON n.run = s.run AND n.tree = s.tree\n" \
"      AND n.parent = s.id JOIN frames f ON f.id = n.frame\n" \
"    WHERE n.shown)\n" \
"  SELECT s.run, s.tree, s.id AS node, s.stack, s.frame_ids,\n" \
"         n.self AS weight\n" \
"  FROM s JOIN nodes n ON n.run = s.run AND n.tree = s.tree\n" \
"    AND n.id = s.id\n" \
"  WHERE n.self > 0;\n"

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
FRAMES_SQL
"CREATE TABLE nodes (\n"
"  run INTEGER NOT NULL REFERENCES runs(id),\n"
"  tree INTEGER NOT NULL,\n"		/* 0 the profile's tree, 1 exact (both),
					 * 2 memory ({sample memory}) */
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
NODE_LINES_SQL
MEMORY_NODES_SQL
MEMORY_NODE_LINES_SQL
"CREATE TABLE events (\n"
"  run INTEGER NOT NULL REFERENCES runs(id),\n"
"  seq INTEGER NOT NULL,\n"
"  ns INTEGER NOT NULL,\n"
"  type TEXT NOT NULL,\n"		/* E, L */
"  frame INTEGER NOT NULL REFERENCES frames(id),\n"
"  PRIMARY KEY (run, seq)\n"
") WITHOUT ROWID;\n"
THREAD_EVENTS_SQL
COVERAGE_COMMANDS_SQL
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
THREADS_SQL
FRAME_LABELS_SQL
TIMELINES_SQL
FRAME_VIEWS_SQL
"CREATE INDEX nodes_parent ON nodes(run, tree, parent);\n";

/*
 * Version 1 to 2: coverage_commands rebuilt with its key first, the view
 * that reads it made again. The new table is made by the very statement
 * of a new file, so that an upgraded file has the schema of a new one.
 */

static const char upgrade1Sql[] =
"DROP VIEW never_called;\n"
"ALTER TABLE coverage_commands RENAME TO coverage_commands_v1;\n"
COVERAGE_COMMANDS_SQL
"INSERT INTO coverage_commands (run, seq, frame, calls)\n"
"  SELECT run, seq, frame, calls FROM coverage_commands_v1;\n"
"DROP TABLE coverage_commands_v1;\n"
NEVER_CALLED_SQL
NODE_LINES_SQL
MEMORY_NODES_SQL
HANDLERS_SQL;

/*
 * Version 2 to 3: frames rebuilt with the interp column in its key (ids
 * kept), the table of threads added, the views that read frames made
 * again. The old table is renamed out of the way with
 * legacy_alter_table on, so that the REFERENCES frames(id) of the other
 * tables are left as they are, and the new one is made by the very
 * statement of a new file: an upgraded file has the schema of a new one.
 */

static const char upgrade2Sql[] =
"PRAGMA legacy_alter_table = ON;\n"
"DROP VIEW IF EXISTS stacks;\n"
"DROP VIEW IF EXISTS never_called;\n"
"DROP VIEW IF EXISTS calls_between;\n"
"DROP VIEW IF EXISTS edges;\n"
"DROP VIEW IF EXISTS top_total;\n"
"DROP VIEW IF EXISTS top_self;\n"
"DROP VIEW IF EXISTS node_frames;\n"
"ALTER TABLE frames RENAME TO frames_v2;\n"
FRAMES_SQL
"INSERT INTO frames (id, kind, name, tclkind, module, interp, file, line)\n"
"  SELECT id, kind, name, tclkind, module, '', file, line FROM frames_v2;\n"
"DROP TABLE frames_v2;\n"
"PRAGMA legacy_alter_table = OFF;\n"
NODE_LINES_SQL
HANDLERS_SQL
THREADS_SQL
FRAME_VIEWS_SQL;

/*
 * Version 3 to 4: the table of labels added.
 */

static const char upgrade3Sql[] =
FRAME_LABELS_SQL;

/*
 * Version 4 to 5: the table of timelines added.
 */

static const char upgrade4Sql[] =
TIMELINES_SQL;

static const char *const stmtSql[ST_COUNT] = {
    "SELECT id FROM frames WHERE kind = ?1 AND name = ?2 AND tclkind = ?3"
	" AND module = ?4 AND interp = ?5 AND file = '' AND line = 0",
    "INSERT INTO frames (kind, name, tclkind, module, interp) VALUES (?1,"
	" ?2, ?3, ?4, ?5)",
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
	" overhead_pct = ?13, meta = ?14 WHERE id = ?1",
    "INSERT INTO node_lines (run, id, node, callee, file, line, weight)"
	" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (run, id)"
	" DO UPDATE SET weight = ?7",
    "INSERT INTO memory_nodes (run, node, alloc_bytes, alloc_objects,"
	" live_bytes, live_objects, peak_bytes, peak_objects) VALUES (?1, ?2,"
	" ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (run, node) DO UPDATE SET"
	" alloc_bytes = ?3, alloc_objects = ?4, live_bytes = ?5,"
	" live_objects = ?6, peak_bytes = ?7, peak_objects = ?8",
    "INSERT INTO memory_node_lines (run, id, node, callee, file, line,"
	" weight) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (run, id)"
	" DO UPDATE SET weight = ?7"
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

const char *
CprofDbErrorClass(
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

int
CprofDbError(
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
	Tcl_SetErrorCode(interp, "TCLCPROF", "DB", CprofDbErrorClass(rc),
		Tcl_GetString(pathObj), NULL);
    }
    return TCL_ERROR;
}

int
CprofDbFormatError(
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
 * WriteSchema, UpgradeSchema, ErrnoRc, RemoveDbFiles --
 *
 *	Write the schema, with the file's owner and version, into an empty
 *	database (inside the caller's transaction); upgrade the schema of a
 *	file of an older version (see schemaSql); the SQLite result code
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

/*
 * Bring a file of an older schema version up to this one, in one
 * transaction (the caller rolls back on failure). Another process may
 * have done it meanwhile: the version is read again inside.
 */

static int
UpgradeSchema(
    sqlite3 *db,
    sqlite3_int64 deadline)
{
    sqlite3_int64 version;
    char sql[64];
    int rc;

    rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc == SQLITE_OK) {
	rc = IntRow(db, "PRAGMA user_version", 1, &version, deadline);
    }
    if (rc == SQLITE_OK && version == 1) {
	rc = sqlite3_exec(db, upgrade1Sql, NULL, NULL, NULL);
	if (rc == SQLITE_OK) {
	    version = 2;
	}
    }
    if (rc == SQLITE_OK && version == 2) {
	rc = sqlite3_exec(db, upgrade2Sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
	    sqlite3_exec(db, "PRAGMA legacy_alter_table = OFF", NULL, NULL,
		    NULL);
	} else {
	    version = 3;
	}
    }
    if (rc == SQLITE_OK && version == 3) {
	rc = sqlite3_exec(db, upgrade3Sql, NULL, NULL, NULL);
	if (rc == SQLITE_OK) {
	    version = 4;
	}
    }
    if (rc == SQLITE_OK && version == 4) {
	rc = sqlite3_exec(db, upgrade4Sql, NULL, NULL, NULL);
	if (rc == SQLITE_OK) {
	    version = 5;
	}
    }
    if (rc == SQLITE_OK) {
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d",
		(int) version);
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    }
    if (rc == SQLITE_OK) {
	rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
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
	return CprofDbError(interp, pathObj, NULL, ErrnoRc(err), "open");
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
	CprofDbError(interp, pathObj, db, rc, "create");
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
		CprofDbError(interp, pathObj, NULL, rc, "create");
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
 *	set), an empty one gets it, one of an older schema version is
 *	upgraded (UpgradeSchema); otherwise it must exist, and is read as it
 *	is, whatever version this code knows it is of. Only regular
 *	files (or symbolic links to them) are used: SQLite would write its
 *	journal beside a device, and block on a FIFO. The connection waits
 *	for locks until 'deadline' (MonotonicMs), or with 0 for the busy
 *	timeout from now.
 *
 * Results:
 *	TCL_OK and *dbPtr, or TCL_ERROR with a TCLCPROF DB error. A file
 *	made by this call is removed again when the call fails.
 *
 *----------------------------------------------------------------------
 */

int
CprofDbOpen(
    Tcl_Interp *interp,
    Tcl_Obj *pathObj,
    int create,
    int direct,
    sqlite3 **dbPtr,
    int *createdPtr,
    sqlite3_int64 deadline)
{
    Tcl_DString ds;
    const char *native;
    sqlite3 *db = NULL;
    sqlite3_int64 header[3], appId, version, tables, mode;
    struct stat st;
    int rc, flags, created = 0, fallback = 0;

    if (strstr(Tcl_GetString(pathObj), "\xC0\x80") != NULL) {
	/*
	 * A NUL in the name (Tcl's encoding of it): no file has one.
	 */

	return CprofDbFormatError(interp, pathObj, "OPEN",
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
	    return CprofDbFormatError(interp, pathObj, "OPEN", S_ISDIR(st.st_mode)
		    ? "it is a directory" : "not a regular file", NULL);
	}
    } else if (!create) {
	Tcl_DStringFree(&ds);
	return CprofDbFormatError(interp, pathObj, "OPEN", "no such file", NULL);
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
	CprofDbError(interp, pathObj, db, rc, "open");
	goto fail;
    }
    if (deadline == 0) {
	deadline = MonotonicMs() + busyTimeoutMs;
    }
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
	    CprofDbFormatError(interp, pathObj, "FOREIGN",
		    "not a tclcprof profile database (not SQLite)", NULL);
	} else {
	    CprofDbError(interp, pathObj, db, rc, "read");
	}
	goto fail;
    }
    if (tables > 0 || appId != 0) {
	if (appId != APPLICATION_ID) {
	    CprofDbFormatError(interp, pathObj, "FOREIGN", "not a tclcprof profile "
		    "database (another program's SQLite file)", NULL);
	    goto fail;
	}
	if ((version < OLDEST_VERSION || version > SCHEMA_VERSION)
		&& interp == NULL) {
	    goto fail;
	} else if (version < OLDEST_VERSION || version > SCHEMA_VERSION) {
	    char buf[32];

	    snprintf(buf, sizeof(buf), "%lld", (long long) version);
	    Tcl_SetObjResult(interp, Tcl_ObjPrintf("cannot use \"%s\": "
		    "profile database schema version %lld, this tclcprof "
		    "knows versions %d to %d", Tcl_GetString(pathObj),
		    (long long) version, OLDEST_VERSION, SCHEMA_VERSION));
	    Tcl_SetErrorCode(interp, "TCLCPROF", "DB", "VERSION",
		    Tcl_GetString(pathObj), buf, NULL);
	    goto fail;
	}
    } else if (!create) {
	CprofDbFormatError(interp, pathObj, "FOREIGN",
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
	    CprofDbError(interp, pathObj, db, rc, "open");
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
		CprofDbError(interp, pathObj, db, rc, "create");
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		goto fail;
	    }
	} else if (version < SCHEMA_VERSION) {
	    rc = UpgradeSchema(db, deadline);
	    if (rc != SQLITE_OK) {
		CprofDbError(interp, pathObj, db, rc, "upgrade");
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
 *	uses. An operation of several connections (a start: the check, the
 *	run's row, and on failure its removal; a save) waits for locks no
 *	longer than the busy timeout in all: its connections share the
 *	deadline set by CprofStoreOpen, until CprofStoreOpDone; then each
 *	write (a flush) has its own.
 *
 *----------------------------------------------------------------------
 */

void
CprofDbForgetShadows(
    CprofStore *storePtr)
{
    Tcl_DeleteHashTable(&storePtr->frameIds);
    Tcl_InitHashTable(&storePtr->frameIds, 4);
    if (storePtr->numTreeFrames > 0) {
	memset(storePtr->treeFrames, 0, storePtr->numTreeFrames
		* sizeof(int64_t));
    }
    storePtr->trees[0].count = 0;
    storePtr->trees[1].count = 0;
    storePtr->trees[2].count = 0;
    storePtr->trees[0].timeChanges = 0;
    storePtr->trees[2].timeChanges = 0;
    storePtr->numMemFrames = 0;
    storePtr->numMemFigs = 0;
    storePtr->numLines = 0;
    storePtr->numNodeLines = 0;
    storePtr->numMemNodeLines = 0;

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

int
CprofDbConnect(
    Tcl_Interp *interp,
    CprofStore *storePtr)
{
    int i, rc;

    if (!SameFile(interp, storePtr)) {
	return TCL_ERROR;
    }
    if (CprofDbOpen(interp, storePtr->pathObj, 1, storePtr->direct,
	    &storePtr->db, &storePtr->created, storePtr->deadline) != TCL_OK) {
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
    /*
     * A file made before node_lines (or memory_nodes, memory_node_lines,
     * thread_events) was kept gets it.
     */

    rc = sqlite3_exec(storePtr->db, NODE_LINES_SQL MEMORY_NODES_SQL
	    MEMORY_NODE_LINES_SQL THREAD_EVENTS_SQL, NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
	CprofDbError(interp, storePtr->pathObj, storePtr->db, rc, "prepare");
	CprofDbDisconnect(storePtr, 0);
	return TCL_ERROR;
    }
    for (i = 0; i < ST_COUNT; i++) {
	rc = sqlite3_prepare_v3(storePtr->db, stmtSql[i], -1,
		SQLITE_PREPARE_PERSISTENT, &storePtr->stmts[i], NULL);
	if (rc != SQLITE_OK) {
	    CprofDbError(interp, storePtr->pathObj, storePtr->db, rc, "prepare");
	    CprofDbDisconnect(storePtr, 0);
	    return TCL_ERROR;
	}
    }
    return TCL_OK;
}

void
CprofDbDisconnect(
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
    storePtr->deadline = MonotonicMs() + busyTimeoutMs;
    Tcl_InitHashTable(&storePtr->frameIds, 4);
    if (CprofDbConnect(interp, storePtr) != TCL_OK) {
	CprofStoreClose(storePtr);
	return TCL_ERROR;
    }
    CprofDbDisconnect(storePtr, 0);
    *storePtrPtr = storePtr;
    return TCL_OK;
}

void
CprofStoreOpDone(
    CprofStore *storePtr)
{
    storePtr->deadline = 0;
}

void
CprofStoreClose(
    CprofStore *storePtr)
{
    int i;

    CprofDbDisconnect(storePtr, 0);
    Tcl_DeleteHashTable(&storePtr->frameIds);
    Tcl_DecrRefCount(storePtr->pathObj);
    if (storePtr->lastErrorObj) {
	Tcl_DecrRefCount(storePtr->lastErrorObj);
    }
    for (i = 0; i < 3; i++) {
	if (storePtr->trees[i].recs) {
	    ckfree(storePtr->trees[i].recs);
	}
    }
    if (storePtr->treeFrames) {
	ckfree(storePtr->treeFrames);
    }
    if (storePtr->memFrames) {
	ckfree(storePtr->memFrames);
    }
    if (storePtr->memFigs) {
	ckfree(storePtr->memFigs);
    }
    if (storePtr->lines) {
	ckfree(storePtr->lines);
    }
    if (storePtr->nodeLines) {
	ckfree(storePtr->nodeLines);
    }
    if (storePtr->memNodeLines) {
	ckfree(storePtr->memNodeLines);
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
 * -history FILE.db: the file's complete runs beyond the newest 'keep'
 * (the store's own run, which is not touched, counted), or ended more
 * than 'keepHours' ago, go, with every table's rows of them, in one
 * transaction. Runs being written (not complete) stay. Failures are
 * ignored: the next rotation tries again.
 */

void
CprofStorePruneRuns(
    CprofStore *storePtr,
    int keep,
    double keepHours)
{
    sqlite3 *db;
    sqlite3_stmt *stmt;
    Tcl_DString ids;
    char num[32];
    int n = 0, found = 0, ok;
    double limit = CprofWallSeconds() - keepHours * 3600.0;

    if ((keep <= 0 && keepHours <= 0) || storePtr->runId == 0
	    || CprofDbConnect(NULL, storePtr) != TCL_OK) {
	return;
    }
    db = storePtr->db;
    Tcl_DStringInit(&ids);
    ok = (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK);
    if (ok && sqlite3_prepare_v2(db, "SELECT id, coalesce(end_time, 0)"
	    " FROM runs WHERE id != ? AND status = 'complete'"
	    " ORDER BY start_time DESC, id DESC", -1, &stmt, NULL)
	    == SQLITE_OK) {
	sqlite3_bind_int64(stmt, 1, storePtr->runId);
	while (sqlite3_step(stmt) == SQLITE_ROW) {
	    n++;
	    if ((keep > 0 && n > keep - 1) || (keepHours > 0
		    && sqlite3_column_double(stmt, 1) < limit)) {
		snprintf(num, sizeof(num), "%s%lld", found ? "," : "",
			(long long) sqlite3_column_int64(stmt, 0));
		Tcl_DStringAppend(&ids, num, -1);
		found = 1;
	    }
	}
	sqlite3_finalize(stmt);
    }
    if (ok && found && sqlite3_prepare_v2(db, "SELECT m.name FROM"
	    " sqlite_master m WHERE m.type = 'table' AND EXISTS (SELECT 1 FROM"
	    " pragma_table_info(m.name) WHERE name = 'run')", -1, &stmt,
	    NULL) == SQLITE_OK) {
	while (ok && sqlite3_step(stmt) == SQLITE_ROW) {
	    char *sql = sqlite3_mprintf("DELETE FROM \"%w\" WHERE run IN (%s)",
		    (const char *) sqlite3_column_text(stmt, 0),
		    Tcl_DStringValue(&ids));

	    ok = (sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
	    sqlite3_free(sql);
	}
	sqlite3_finalize(stmt);
	if (ok) {
	    char *sql = sqlite3_mprintf("DELETE FROM runs WHERE id IN (%s)",
		    Tcl_DStringValue(&ids));

	    ok = (sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
	    sqlite3_free(sql);
	}
    }
    if (ok) {
	ok = (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK);
    }
    if (!ok) {
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    }
    Tcl_DStringFree(&ids);
    CprofDbDisconnect(storePtr, 0);
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
    char *sql;

    if (storePtr->runId == 0 && !storePtr->created) {
	/*
	 * No row of ours, nor a file: nothing to undo (and no lock to wait
	 * for again, after a write that failed on one).
	 */

	return;
    }
    sql = sqlite3_mprintf("DELETE FROM runs WHERE id = %lld",
	    (long long) storePtr->runId);
    if (CprofDbConnect(NULL, storePtr) == TCL_OK) {
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

	CprofDbDisconnect(storePtr, 1);
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
    CprofDbForgetShadows(storePtr);
}

/*
 *----------------------------------------------------------------------
 *
 * Binding helpers --
 *
 *----------------------------------------------------------------------
 */

void
CprofDbBindText(
    sqlite3_stmt *stmt,
    int index,
    const char *text)
{
    sqlite3_bind_text(stmt, index, text ? text : "", -1, SQLITE_TRANSIENT);
}

void
CprofDbBindObj(
    sqlite3_stmt *stmt,
    int index,
    Tcl_Obj *objPtr)
{
    Tcl_Size length;
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

int
CprofDbExec(
    sqlite3_stmt *stmt)
{
    int rc = sqlite3_step(stmt);

    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
}

/*
 * Bind a number (an integer, else a double; NULL when it is neither or
 * missing).
 */

void
CprofDbBindNumber(
    sqlite3_stmt *stmt,
    int index,
    Tcl_Obj *valueObj)
{
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
