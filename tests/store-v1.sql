-- store-v1.sql --
--
--	A profile database of schema version 1, as tclcprof 0.1 wrote it
--	before version 2 (commit ff36776), dumped with the sqlite3 shell's
--	.dump (plus its application_id and user_version, which .dump leaves
--	out). tests/store.test loads it to check that such files are still
--	read, and upgraded when a run is written to them. Made by:
--
--	    namespace eval ::fx {}
--	    proc ::fx::b {} { return b }
--	    proc ::fx::a {} {
--	        ::fx::b
--	        ::fx::b
--	        ::fx::b
--	    }
--	    proc ::fx::spin {ms} { ...busy for ms milliseconds... }
--	    (those in /tmp/fx/work.tcl, sourced)
--	    tclcprof::profile -mode exact -lines 1 -events 1 -db $f -label exact { ::fx::a }
--	    tclcprof::profile -mode coverage -lines 1 -db $f -label coverage { ::fx::a; ::fx::a }
--	    tclcprof::profile -mode sample -db $f -label sample { ::fx::spin 60 }
--	    tclcprof::profile -mode both -db $f -label both { ::fx::a; ::fx::spin 30 }
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
INSERT INTO runs VALUES(1,'exact','complete','',1795551485.8748469353,1795551485.9267141819,0.00010132100000000000112,24686,NULL,'vm','gen.tcl','','/tmp/fx','8.6.13','0.1','exact','wall',NULL,NULL,NULL,NULL,NULL,NULL,4,0.14999999999999999444,NULL,NULL,1,1,'mode exact clock wall elapsed 0.000101321 label exact running 0 stopped_by {} subcommands .* calls 4 lines 1 include {} exclude {} compensate 1 exact {active 0 calls 4 nodes 3 truncated_nodes 0 compensation {inside_ns 0 call_ns 37} unfinished 0 suspended_ns 0 sites 3 site_keys 0 no_location 1 events {recorded 8 dropped 0} slow_calls 0}');
INSERT INTO runs VALUES(2,'coverage','complete','',1795551485.9278852939,1795551485.9313876628,7.1165000000000000501e-05,24686,NULL,'vm','gen.tcl','','/tmp/fx','8.6.13','0.1','coverage','wall',NULL,NULL,NULL,NULL,NULL,NULL,8,NULL,NULL,NULL,0,0,'mode coverage clock wall elapsed 7.1165e-5 label coverage running 0 stopped_by {} subcommands .* calls 8 lines 1 include {} exclude {}');
INSERT INTO runs VALUES(3,'sample','complete','',1795551485.932233572,1795551486.0094621181,0.068835559000000004492,24686,NULL,'vm','gen.tcl','','/tmp/fx','8.6.13','0.1','sample','cpu',250.0,246.69999999999998863,15,15,0,1.0,NULL,0.4500000000000000111,NULL,NULL,0,0,'mode sample clock cpu elapsed 0.068835559 label sample running 0 stopped_by {} subcommands .* rate_requested 250.0 rate_achieved 246.7 samples 15 weight 15 native user sampling {active 0 clock cpu signal SIGPROF rate_requested 250.0 rate_achieved 246.7 signals 15 samples 15 weight 15 aggregated 15 spooled 0 drops {ring_full 0 reentered 0 profiler 0 forking 0} truncated {native 0 tcl 0 no_signal_frame 0 tree_nodes 0} foreign_signals 0 splice_rate 1.0 unmatched_frames 0 short_native_stacks 0 handler {mean_ns 20485 median_ns 18432 p99_ns 36864} nodes 3}');
INSERT INTO runs VALUES(4,'both','complete','',1795551486.0122041702,1795551486.0479784011,0.030293641999999999098,24686,NULL,'vm','gen.tcl','','/tmp/fx','8.6.13','0.1','both','wall',250.0,229.90000000000000567,7,7,0,1.0,5,0.23000000000000000999,NULL,NULL,0,0,'mode both clock wall elapsed 0.030293642 label both running 0 stopped_by {} subcommands .* rate_requested 250.0 rate_achieved 229.9 samples 7 weight 7 native user sampling {active 0 clock wall signal SIGPROF rate_requested 250.0 rate_achieved 229.9 signals 7 samples 7 weight 7 aggregated 7 spooled 0 drops {ring_full 0 reentered 0 profiler 0 forking 0} truncated {native 0 tcl 0 no_signal_frame 0 tree_nodes 0} foreign_signals 0 splice_rate 1.0 unmatched_frames 0 short_native_stacks 0 handler {mean_ns 9876 median_ns 5632 p99_ns 26624} nodes 3} calls 5 lines 0 include {} exclude {} compensate 1 exact {active 0 calls 5 nodes 4 truncated_nodes 0 compensation {inside_ns 0 call_ns 65} unfinished 0 suspended_ns 0 sites 0 site_keys 0 no_location 0 events {recorded 0 dropped 0} slow_calls 0}');
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
INSERT INTO frames VALUES(3,'c','main','','tclsh8.6','',0);
INSERT INTO frames VALUES(4,'tcl','::fx::spin','proc','','',0);
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
INSERT INTO nodes VALUES(1,0,0,NULL,NULL,0,23183,0,23183,0,0,0,0,0,1);
INSERT INTO nodes VALUES(1,0,1,0,1,13188,23183,1,23183,13188,23183,23183,0,0,1);
INSERT INTO nodes VALUES(1,0,2,1,2,9995,9995,3,9995,9995,130,9684,0,0,1);
INSERT INTO nodes VALUES(3,0,0,NULL,NULL,0,15,NULL,NULL,NULL,NULL,NULL,NULL,0,1);
INSERT INTO nodes VALUES(3,0,1,0,3,0,15,NULL,NULL,NULL,NULL,NULL,NULL,0,1);
INSERT INTO nodes VALUES(3,0,2,1,4,15,15,NULL,NULL,NULL,NULL,NULL,NULL,0,1);
INSERT INTO nodes VALUES(4,0,0,NULL,NULL,0,7,NULL,NULL,NULL,NULL,NULL,NULL,0,1);
INSERT INTO nodes VALUES(4,0,1,0,3,0,7,NULL,NULL,NULL,NULL,NULL,NULL,0,1);
INSERT INTO nodes VALUES(4,0,2,1,4,7,7,1,30009704,30009704,30009704,30009704,0,0,1);
INSERT INTO nodes VALUES(4,1,0,NULL,NULL,0,30016579,0,30016579,0,0,0,0,0,1);
INSERT INTO nodes VALUES(4,1,1,0,1,4392,6875,1,6875,4392,6875,6875,0,0,1);
INSERT INTO nodes VALUES(4,1,2,1,2,2483,2483,3,2483,2483,120,2203,0,0,1);
INSERT INTO nodes VALUES(4,1,3,0,4,30009704,30009704,1,30009704,30009704,30009704,30009704,0,0,1);
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
INSERT INTO lines VALUES(1,0,'/tmp/fx/work.tcl',4,2,'::fx::a',1,9684,9684,9684,9684,1);
INSERT INTO lines VALUES(1,1,'/tmp/fx/work.tcl',5,2,'::fx::a',1,180,180,180,180,1);
INSERT INTO lines VALUES(1,2,'/tmp/fx/work.tcl',6,2,'::fx::a',1,130,130,130,130,1);
CREATE TABLE events (
  run INTEGER NOT NULL REFERENCES runs(id),
  seq INTEGER NOT NULL,
  ns INTEGER NOT NULL,
  type TEXT NOT NULL,
  frame INTEGER NOT NULL REFERENCES frames(id),
  PRIMARY KEY (run, seq)
) WITHOUT ROWID;
INSERT INTO events VALUES(1,0,219705,'E',1);
INSERT INTO events VALUES(1,1,231633,'E',2);
INSERT INTO events VALUES(1,2,241318,'L',2);
INSERT INTO events VALUES(1,3,242099,'E',2);
INSERT INTO events VALUES(1,4,242279,'L',2);
INSERT INTO events VALUES(1,5,242720,'E',2);
INSERT INTO events VALUES(1,6,242850,'L',2);
INSERT INTO events VALUES(1,7,243001,'L',1);
CREATE TABLE coverage_commands (
  run INTEGER NOT NULL REFERENCES runs(id),
  frame INTEGER NOT NULL REFERENCES frames(id),
  calls INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  PRIMARY KEY (run, seq)
) WITHOUT ROWID;
INSERT INTO coverage_commands VALUES(1,1,1,4);
INSERT INTO coverage_commands VALUES(1,2,3,5);
INSERT INTO coverage_commands VALUES(2,1,2,4);
INSERT INTO coverage_commands VALUES(2,2,6,5);
INSERT INTO coverage_commands VALUES(4,1,1,4);
INSERT INTO coverage_commands VALUES(4,2,3,5);
INSERT INTO coverage_commands VALUES(4,4,1,8);
CREATE TABLE coverage_lines (
  run INTEGER NOT NULL REFERENCES runs(id),
  file TEXT NOT NULL, line INTEGER NOT NULL,
  calls INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  PRIMARY KEY (run, file, line)
) WITHOUT ROWID;
INSERT INTO coverage_lines VALUES(1,'/tmp/fx/work.tcl',4,1,0);
INSERT INTO coverage_lines VALUES(1,'/tmp/fx/work.tcl',5,1,1);
INSERT INTO coverage_lines VALUES(1,'/tmp/fx/work.tcl',6,1,2);
INSERT INTO coverage_lines VALUES(2,'/tmp/fx/work.tcl',4,2,0);
INSERT INTO coverage_lines VALUES(2,'/tmp/fx/work.tcl',5,2,1);
INSERT INTO coverage_lines VALUES(2,'/tmp/fx/work.tcl',6,2,2);
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
INSERT INTO coverage_procs VALUES(1,4,'::pkg_mkIndex');
INSERT INTO coverage_procs VALUES(1,5,'::auto_qualify');
INSERT INTO coverage_procs VALUES(1,6,'::tclPkgUnknown');
INSERT INTO coverage_procs VALUES(1,7,'::auto_load');
INSERT INTO coverage_procs VALUES(1,8,'::tclPkgSetup');
INSERT INTO coverage_procs VALUES(1,9,'::tclLog');
INSERT INTO coverage_procs VALUES(1,10,'::fx::a');
INSERT INTO coverage_procs VALUES(1,11,'::fx::spin');
INSERT INTO coverage_procs VALUES(1,12,'::fx::b');
INSERT INTO coverage_procs VALUES(1,13,'::tcl::CopyDirectory');
INSERT INTO coverage_procs VALUES(1,14,'::tcl::MacOSXPkgUnknown');
INSERT INTO coverage_procs VALUES(1,15,'::tcl::tm::Defaults');
INSERT INTO coverage_procs VALUES(1,16,'::tcl::tm::list');
INSERT INTO coverage_procs VALUES(1,17,'::tcl::tm::add');
INSERT INTO coverage_procs VALUES(1,18,'::tcl::tm::UnknownHandler');
INSERT INTO coverage_procs VALUES(1,19,'::tcl::tm::remove');
INSERT INTO coverage_procs VALUES(1,20,'::tcl::tm::roots');
INSERT INTO coverage_procs VALUES(1,21,'::tcl::clock::format');
INSERT INTO coverage_procs VALUES(1,22,'::tcl::clock::scan');
INSERT INTO coverage_procs VALUES(1,23,'::tcl::clock::add');
INSERT INTO coverage_procs VALUES(1,24,'::tcl::Pkg::Create');
INSERT INTO coverage_procs VALUES(1,25,'::tcl::Pkg::CompareExtension');
INSERT INTO coverage_procs VALUES(1,26,'::tcl::mathfunc::min');
INSERT INTO coverage_procs VALUES(1,27,'::tcl::mathfunc::max');
INSERT INTO coverage_procs VALUES(2,0,'::auto_load_index');
INSERT INTO coverage_procs VALUES(2,1,'::unknown');
INSERT INTO coverage_procs VALUES(2,2,'::auto_import');
INSERT INTO coverage_procs VALUES(2,3,'::auto_execok');
INSERT INTO coverage_procs VALUES(2,4,'::pkg_mkIndex');
INSERT INTO coverage_procs VALUES(2,5,'::auto_qualify');
INSERT INTO coverage_procs VALUES(2,6,'::tclPkgUnknown');
INSERT INTO coverage_procs VALUES(2,7,'::auto_load');
INSERT INTO coverage_procs VALUES(2,8,'::tclPkgSetup');
INSERT INTO coverage_procs VALUES(2,9,'::tclLog');
INSERT INTO coverage_procs VALUES(2,10,'::fx::a');
INSERT INTO coverage_procs VALUES(2,11,'::fx::spin');
INSERT INTO coverage_procs VALUES(2,12,'::fx::b');
INSERT INTO coverage_procs VALUES(2,13,'::tcl::CopyDirectory');
INSERT INTO coverage_procs VALUES(2,14,'::tcl::MacOSXPkgUnknown');
INSERT INTO coverage_procs VALUES(2,15,'::tcl::tm::Defaults');
INSERT INTO coverage_procs VALUES(2,16,'::tcl::tm::list');
INSERT INTO coverage_procs VALUES(2,17,'::tcl::tm::add');
INSERT INTO coverage_procs VALUES(2,18,'::tcl::tm::UnknownHandler');
INSERT INTO coverage_procs VALUES(2,19,'::tcl::tm::remove');
INSERT INTO coverage_procs VALUES(2,20,'::tcl::tm::roots');
INSERT INTO coverage_procs VALUES(2,21,'::tcl::clock::format');
INSERT INTO coverage_procs VALUES(2,22,'::tcl::clock::scan');
INSERT INTO coverage_procs VALUES(2,23,'::tcl::clock::add');
INSERT INTO coverage_procs VALUES(2,24,'::tcl::Pkg::Create');
INSERT INTO coverage_procs VALUES(2,25,'::tcl::Pkg::CompareExtension');
INSERT INTO coverage_procs VALUES(2,26,'::tcl::mathfunc::min');
INSERT INTO coverage_procs VALUES(2,27,'::tcl::mathfunc::max');
INSERT INTO coverage_procs VALUES(4,0,'::auto_load_index');
INSERT INTO coverage_procs VALUES(4,1,'::unknown');
INSERT INTO coverage_procs VALUES(4,2,'::auto_import');
INSERT INTO coverage_procs VALUES(4,3,'::auto_execok');
INSERT INTO coverage_procs VALUES(4,4,'::pkg_mkIndex');
INSERT INTO coverage_procs VALUES(4,5,'::auto_qualify');
INSERT INTO coverage_procs VALUES(4,6,'::tclPkgUnknown');
INSERT INTO coverage_procs VALUES(4,7,'::auto_load');
INSERT INTO coverage_procs VALUES(4,8,'::tclPkgSetup');
INSERT INTO coverage_procs VALUES(4,9,'::tclLog');
INSERT INTO coverage_procs VALUES(4,10,'::fx::a');
INSERT INTO coverage_procs VALUES(4,11,'::fx::spin');
INSERT INTO coverage_procs VALUES(4,12,'::fx::b');
INSERT INTO coverage_procs VALUES(4,13,'::tcl::CopyDirectory');
INSERT INTO coverage_procs VALUES(4,14,'::tcl::MacOSXPkgUnknown');
INSERT INTO coverage_procs VALUES(4,15,'::tcl::tm::Defaults');
INSERT INTO coverage_procs VALUES(4,16,'::tcl::tm::list');
INSERT INTO coverage_procs VALUES(4,17,'::tcl::tm::add');
INSERT INTO coverage_procs VALUES(4,18,'::tcl::tm::UnknownHandler');
INSERT INTO coverage_procs VALUES(4,19,'::tcl::tm::remove');
INSERT INTO coverage_procs VALUES(4,20,'::tcl::tm::roots');
INSERT INTO coverage_procs VALUES(4,21,'::tcl::clock::format');
INSERT INTO coverage_procs VALUES(4,22,'::tcl::clock::scan');
INSERT INTO coverage_procs VALUES(4,23,'::tcl::clock::add');
INSERT INTO coverage_procs VALUES(4,24,'::tcl::Pkg::Create');
INSERT INTO coverage_procs VALUES(4,25,'::tcl::Pkg::CompareExtension');
INSERT INTO coverage_procs VALUES(4,26,'::tcl::mathfunc::min');
INSERT INTO coverage_procs VALUES(4,27,'::tcl::mathfunc::max');
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
PRAGMA user_version = 1;
