-- store-v2.sql --
--
--	A profile database of schema version 2, as tclcprof wrote it before
--	version 3 (commit be68c80), dumped with the sqlite3 shell's .dump
--	(plus its application_id and user_version, which .dump leaves out).
--	tests/store.test loads it to check that such files are still read,
--	and upgraded to the schema of a new file when a run is written to
--	them. Made by:
--
--	    namespace eval ::fx {}
--	    proc ::fx::b {} { return b }
--	    proc ::fx::a {} { ::fx::b; ::fx::b; ::fx::b }
--	    tclcprof::profile -mode exact -lines 1 -db $f -label exact { ::fx::a }
--	    tclcprof::save $f -label sample -data {meta {mode sample clock cpu
--	        rate_requested 100.0 samples 3 weight 3} tree {name {} kind root
--	        self 0 total 3 children {{name ::fx::a kind tcl tclkind proc
--	        self 1 total 3 children {{name memcpy kind c module libc.so.6
--	        self 2 total 2 children {}}}}}}}
--
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  label TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL,
  stopped_by TEXT NOT NULL DEFAULT '',
  start_time REAL NOT NULL,
  end_time REAL,
  elapsed REAL,
  pid INTEGER NOT NULL,
  parent_run INTEGER REFERENCES runs(id),
  host TEXT, argv0 TEXT, argv TEXT, cwd TEXT,
  tcl_version TEXT, tclcprof_version TEXT,
  mode TEXT NOT NULL, clock TEXT NOT NULL,
  rate_requested REAL, rate_achieved REAL,
  samples INTEGER, weight INTEGER, drops INTEGER, splice_rate REAL,
  calls INTEGER, overhead_pct REAL,
  test_file TEXT, test_name TEXT,
  has_lines INTEGER NOT NULL DEFAULT 0,
  has_events INTEGER NOT NULL DEFAULT 0,
  meta TEXT NOT NULL DEFAULT ''
);
INSERT INTO runs VALUES(1,'exact','complete','',1795559064.9240021705,1795559064.9731256961,0.00010370499999999999727,28377,NULL,'vm','/tmp/mkv2.tcl','','/tmp','8.6.13','0.1','exact','wall',NULL,NULL,NULL,NULL,NULL,NULL,4,0.11999999999999999555,NULL,NULL,1,0,'mode exact clock wall elapsed 0.000103705 label exact running 0 stopped_by {} subcommands .* calls 4 lines 1 include {} exclude {} compensate 1 exact {active 0 calls 4 nodes 3 truncated_nodes 0 compensation {inside_ns 0 call_ns 32} unfinished 0 suspended_ns 0 sites 1 site_keys 0 no_location 1 events {recorded 0 dropped 0} slow_calls 0}');
INSERT INTO runs VALUES(2,'sample','complete','',1795559064.9765939713,1795559064.9766383171,0.0,28377,NULL,'vm','/tmp/mkv2.tcl','','/tmp','8.6.13','0.1','sample','cpu',100.0,NULL,3,3,NULL,NULL,NULL,NULL,NULL,NULL,0,0,'mode sample clock cpu rate_requested 100.0 samples 3 weight 3 label sample');
CREATE TABLE frames (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  tclkind TEXT NOT NULL DEFAULT '',
  module TEXT NOT NULL DEFAULT '',
  file TEXT NOT NULL DEFAULT '',
  line INTEGER NOT NULL DEFAULT 0,
  UNIQUE (kind, name, tclkind, module, file, line)
);
INSERT INTO frames VALUES(1,'tcl','::fx::a','proc','','',0);
INSERT INTO frames VALUES(2,'tcl','::fx::b','proc','','',0);
INSERT INTO frames VALUES(3,'c','memcpy','','libc.so.6','',0);
CREATE TABLE nodes (
  run INTEGER NOT NULL REFERENCES runs(id),
  tree INTEGER NOT NULL,
  id INTEGER NOT NULL,
  parent INTEGER,
  frame INTEGER REFERENCES frames(id),
  self NOT NULL, total NOT NULL,
  calls INTEGER, total_ns INTEGER, self_ns INTEGER,
  min_ns INTEGER, max_ns INTEGER, suspended_ns INTEGER,
  recursive INTEGER NOT NULL DEFAULT 0,
  shown INTEGER NOT NULL DEFAULT 1,
  PRIMARY KEY (run, tree, id)
) WITHOUT ROWID;
INSERT INTO nodes VALUES(1,0,0,NULL,NULL,0,42689,0,42689,0,0,0,0,0,1);
INSERT INTO nodes VALUES(1,0,1,0,1,33916,42689,1,42689,33916,42689,42689,0,0,1);
INSERT INTO nodes VALUES(1,0,2,1,2,8773,8773,3,8773,8773,80,8553,0,0,1);
INSERT INTO nodes VALUES(2,0,0,NULL,NULL,0,3,NULL,NULL,NULL,NULL,NULL,NULL,0,1);
INSERT INTO nodes VALUES(2,0,1,0,1,1,3,NULL,NULL,NULL,NULL,NULL,NULL,0,1);
INSERT INTO nodes VALUES(2,0,2,1,3,2,2,NULL,NULL,NULL,NULL,NULL,NULL,0,1);
CREATE TABLE lines (
  run INTEGER NOT NULL REFERENCES runs(id),
  id INTEGER NOT NULL,
  file TEXT NOT NULL, line INTEGER NOT NULL,
  frame INTEGER NOT NULL REFERENCES frames(id),
  caller TEXT NOT NULL DEFAULT '',
  calls INTEGER, total_ns INTEGER, self_ns INTEGER,
  min_ns INTEGER, max_ns INTEGER,
  shown INTEGER NOT NULL DEFAULT 1,
  PRIMARY KEY (run, id)
) WITHOUT ROWID;
INSERT INTO lines VALUES(1,0,'/tmp/mkv2.tcl',6,2,'::fx::a',3,8773,8773,80,8553,1);
CREATE TABLE node_lines (
  run INTEGER NOT NULL REFERENCES runs(id),
  id INTEGER NOT NULL,
  node INTEGER NOT NULL,
  callee INTEGER,
  file TEXT NOT NULL, line INTEGER NOT NULL,
  weight NOT NULL,
  PRIMARY KEY (run, id)
) WITHOUT ROWID;
CREATE TABLE events (
  run INTEGER NOT NULL REFERENCES runs(id),
  seq INTEGER NOT NULL,
  ns INTEGER NOT NULL,
  type TEXT NOT NULL,
  frame INTEGER NOT NULL REFERENCES frames(id),
  PRIMARY KEY (run, seq)
) WITHOUT ROWID;
CREATE TABLE coverage_commands (
  run INTEGER NOT NULL REFERENCES runs(id),
  seq INTEGER NOT NULL,
  frame INTEGER NOT NULL REFERENCES frames(id),
  calls INTEGER NOT NULL,
  PRIMARY KEY (run, seq)
) WITHOUT ROWID;
INSERT INTO coverage_commands VALUES(1,7,1,1);
INSERT INTO coverage_commands VALUES(1,8,2,3);
CREATE TABLE coverage_lines (
  run INTEGER NOT NULL REFERENCES runs(id),
  file TEXT NOT NULL, line INTEGER NOT NULL,
  calls INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  PRIMARY KEY (run, file, line)
) WITHOUT ROWID;
INSERT INTO coverage_lines VALUES(1,'/tmp/mkv2.tcl',6,3,0);
CREATE TABLE coverage_procs (
  run INTEGER NOT NULL REFERENCES runs(id),
  seq INTEGER NOT NULL,
  name TEXT NOT NULL,
  PRIMARY KEY (run, seq)
) WITHOUT ROWID;
INSERT INTO coverage_procs VALUES(1,0,'::auto_load_index');
INSERT INTO coverage_procs VALUES(1,1,'::unknown');
INSERT INTO coverage_procs VALUES(1,2,'::auto_import');
INSERT INTO coverage_procs VALUES(1,3,'::auto_execok');
INSERT INTO coverage_procs VALUES(1,4,'::auto_qualify');
INSERT INTO coverage_procs VALUES(1,5,'::auto_load');
INSERT INTO coverage_procs VALUES(1,6,'::tclLog');
INSERT INTO coverage_procs VALUES(1,7,'::fx::a');
INSERT INTO coverage_procs VALUES(1,8,'::fx::b');
INSERT INTO coverage_procs VALUES(1,9,'::tcl::CopyDirectory');
INSERT INTO coverage_procs VALUES(1,10,'::tcl::clock::format');
INSERT INTO coverage_procs VALUES(1,11,'::tcl::clock::scan');
INSERT INTO coverage_procs VALUES(1,12,'::tcl::clock::add');
INSERT INTO coverage_procs VALUES(1,13,'::tcl::mathfunc::min');
INSERT INTO coverage_procs VALUES(1,14,'::tcl::mathfunc::max');
CREATE TABLE handlers (
  run INTEGER NOT NULL REFERENCES runs(id),
  seq INTEGER NOT NULL,
  origin TEXT NOT NULL,
  kind TEXT NOT NULL,
  count INTEGER NOT NULL, timed INTEGER NOT NULL,
  total_ns INTEGER NOT NULL, max_ns INTEGER NOT NULL,
  latency_count INTEGER, latency_ns INTEGER, latency_max_ns INTEGER,
  PRIMARY KEY (run, seq)
) WITHOUT ROWID;
CREATE VIEW node_frames AS
  SELECT n.*, f.kind AS kind, f.name AS name, f.tclkind AS tclkind,
         f.module AS module
  FROM nodes n LEFT JOIN frames f ON f.id = n.frame WHERE n.shown;
CREATE VIEW top_self AS
  SELECT n.run, f.id AS frame, f.kind, f.name, f.tclkind, f.module,
         SUM(n.self) AS self, SUM(n.calls) AS calls
  FROM nodes n JOIN frames f ON f.id = n.frame
  WHERE n.tree = 0 AND n.shown
  GROUP BY n.run, f.id ORDER BY n.run, self DESC;
CREATE VIEW top_total AS
  SELECT n.run, f.id AS frame, f.kind, f.name, f.tclkind, f.module,
         SUM(n.total) AS total, SUM(n.calls) AS calls
  FROM nodes n JOIN frames f ON f.id = n.frame
  WHERE n.tree = 0 AND n.shown AND NOT n.recursive
  GROUP BY n.run, f.id ORDER BY n.run, total DESC;
CREATE VIEW edges AS
  SELECT c.run, c.tree, p.frame AS caller, c.frame AS callee,
         COUNT(*) AS paths, SUM(c.calls) AS calls, SUM(c.total) AS total,
         SUM(c.self) AS self, MAX(c.recursive) AS recursive
  FROM nodes c JOIN nodes p
    ON p.run = c.run AND p.tree = c.tree AND p.id = c.parent
  WHERE c.shown
  GROUP BY c.run, c.tree, p.frame, c.frame;
CREATE VIEW calls_between AS
  SELECT e.run, e.tree, coalesce(fc.name, '(top)') AS caller_name,
         fe.name AS callee_name, e.caller, e.callee, e.paths, e.calls,
         e.total, e.self, e.recursive
  FROM edges e LEFT JOIN frames fc ON fc.id = e.caller
  JOIN frames fe ON fe.id = e.callee;
CREATE VIEW never_called AS
  SELECT p.run, p.name FROM coverage_procs p
  WHERE NOT EXISTS (SELECT 1 FROM coverage_commands c
    JOIN frames f ON f.id = c.frame
    WHERE c.run = p.run AND f.name = p.name AND c.calls > 0);
CREATE VIEW stacks AS
  WITH RECURSIVE s(run, tree, id, stack, frame_ids) AS (
    SELECT n.run, n.tree, n.id, f.name, CAST(n.frame AS TEXT)
    FROM nodes n JOIN frames f ON f.id = n.frame
    WHERE n.parent = 0 AND n.shown
    UNION ALL
    SELECT n.run, n.tree, n.id, s.stack || ';' || f.name,
           s.frame_ids || ' ' || n.frame
    FROM s JOIN nodes n ON n.run = s.run AND n.tree = s.tree
      AND n.parent = s.id JOIN frames f ON f.id = n.frame
    WHERE n.shown)
  SELECT s.run, s.tree, s.id AS node, s.stack, s.frame_ids,
         n.self AS weight
  FROM s JOIN nodes n ON n.run = s.run AND n.tree = s.tree
    AND n.id = s.id
  WHERE n.self > 0;
CREATE INDEX nodes_parent ON nodes(run, tree, parent);
COMMIT;
PRAGMA application_id = 1952673894;
PRAGMA user_version = 2;
