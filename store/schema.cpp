#include "store/schema.h"

#include <array>
#include <cstdio>
#include <cstring>
#include <vector>

#include "common/errors.h"
#include "store/sqlite_db.h"

namespace pg::store::schema {
namespace {

// Each step moves user_version from its index to index + 1. Never edit a released step: add one.
const std::vector<const char*>& migrations() {
  static const std::vector<const char*> steps = {
      // 1: the initial schema.
      R"sql(
CREATE TABLE environments (
  id INTEGER PRIMARY KEY,
  fingerprint TEXT NOT NULL UNIQUE,   -- canonical JSON of every field
  comparable TEXT NOT NULL            -- canonical JSON of the fields that change performance
);
CREATE INDEX environments_comparable ON environments(comparable);

CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  status TEXT NOT NULL CHECK (status IN ('complete', 'incomplete', 'failed')),
  started_at TEXT NOT NULL,
  finished_at TEXT,
  git_state TEXT NOT NULL,
  git_commit TEXT CHECK (git_commit IS NULL OR length(git_commit) = 40),
  git_branch TEXT,
  git_subject TEXT,
  git_time TEXT,
  git_dirty INTEGER NOT NULL CHECK (git_dirty IN (0, 1)),
  git_repo_path TEXT NOT NULL,
  history_time INTEGER NOT NULL,      -- unix seconds of the commit time, else of started_at
  environment_id INTEGER NOT NULL REFERENCES environments(id),
  config TEXT NOT NULL,
  content_hash TEXT                   -- set once a run is finished or imported; ingest dedupe
);
CREATE INDEX runs_commit ON runs(git_commit);
CREATE INDEX runs_content_hash ON runs(content_hash);
CREATE INDEX runs_history ON runs(history_time, id);

CREATE TABLE series (
  id INTEGER PRIMARY KEY,
  model TEXT NOT NULL,
  dtype TEXT NOT NULL,
  batch_size INTEGER NOT NULL,
  seq_len INTEGER NOT NULL,
  gen_tokens INTEGER NOT NULL,
  kv_cache INTEGER NOT NULL,
  attention TEXT NOT NULL,
  cuda_graphs INTEGER NOT NULL,
  device TEXT NOT NULL,
  comparable_env TEXT NOT NULL,
  UNIQUE (model, dtype, batch_size, seq_len, gen_tokens, kv_cache, attention, cuda_graphs, device,
          comparable_env)
);

CREATE TABLE cells (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  ordinal INTEGER NOT NULL,
  series_id INTEGER NOT NULL REFERENCES series(id),
  model TEXT NOT NULL,
  dtype TEXT NOT NULL,
  batch_size INTEGER NOT NULL,
  seq_len INTEGER NOT NULL,
  gen_tokens INTEGER NOT NULL,
  kv_cache INTEGER NOT NULL,
  attention TEXT NOT NULL,
  cuda_graphs INTEGER NOT NULL,
  device TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('ok', 'oom', 'invalid', 'error')),
  reason TEXT,
  UNIQUE (run_id, ordinal)
);
CREATE INDEX cells_series ON cells(series_id, run_id);

CREATE TABLE metrics (
  cell_id INTEGER NOT NULL REFERENCES cells(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  value REAL NOT NULL,
  PRIMARY KEY (cell_id, name)
) WITHOUT ROWID;

-- Raw samples, exactly as measured: step -1 is the prefill of a repetition, 0.. its decode steps.
CREATE TABLE samples (
  cell_id INTEGER NOT NULL REFERENCES cells(id) ON DELETE CASCADE,
  rep INTEGER NOT NULL,
  step INTEGER NOT NULL CHECK (step >= -1),
  value REAL NOT NULL,
  PRIMARY KEY (cell_id, rep, step)
) WITHOUT ROWID;

-- Derived per repetition, so trend queries need not read every decode step.
CREATE TABLE repetitions (
  cell_id INTEGER NOT NULL REFERENCES cells(id) ON DELETE CASCADE,
  rep INTEGER NOT NULL,
  prefill_ms REAL NOT NULL,
  decode_total_ms REAL NOT NULL,
  decode_steps INTEGER NOT NULL,
  PRIMARY KEY (cell_id, rep)
) WITHOUT ROWID;
)sql",
      // 2: triage of regressions (docs/WEB.md, "Regressions"). Append-only: every acknowledge,
      // dismiss, fix or reopen is one row with its author and time; the state of a regression is
      // its latest row. A regression is named by its series, metric and first bad commit.
      R"sql(
CREATE TABLE regression_events (
  id INTEGER PRIMARY KEY,
  series_id INTEGER NOT NULL REFERENCES series(id),
  metric TEXT NOT NULL,
  commit_sha TEXT NOT NULL CHECK (length(commit_sha) = 40),
  action TEXT NOT NULL CHECK (action IN ('acknowledge', 'dismiss', 'fix', 'reopen')),
  reason TEXT NOT NULL,
  author TEXT NOT NULL,
  at TEXT NOT NULL
);
CREATE INDEX regression_events_key ON regression_events(series_id, metric, commit_sha, id);
)sql",
      // 3: views computed by `perfgate serve` (docs/WEB.md, "Start-up"), kept so a restart does
      // not recompute every series. Derived data only: a row is replaced when its series gains
      // cells, never read by export, and deleting every row loses nothing.
      R"sql(
CREATE TABLE view_cache (
  series_id INTEGER NOT NULL REFERENCES series(id),
  view_key TEXT NOT NULL,          -- metric, branch, gate settings and format of the view
  cells INTEGER NOT NULL,          -- the series' version (Store::SeriesVersion) it was made from
  last_cell_id INTEGER NOT NULL,
  body BLOB NOT NULL,
  PRIMARY KEY (series_id, view_key)
);
)sql",
      // 4: the repository's remote URL at run time (credentials removed before it is stored), so
      // the dashboard links commits without being told the repository (docs/WEB.md).
      R"sql(
ALTER TABLE runs ADD COLUMN git_remote TEXT;
)sql",
      // 5: stored gate results, an alerts source beside the change points (docs/STORE.md, "Gate
      // results"). Append-only: a gate is one row with the settings it was decided under and its
      // whole compare JSON; its triage is a log like regression_events, whose latest row decides.
      R"sql(
CREATE TABLE gate_results (
  id INTEGER PRIMARY KEY,
  base_sha TEXT NOT NULL CHECK (length(base_sha) = 40),
  head_sha TEXT NOT NULL CHECK (length(head_sha) = 40),
  ref TEXT NOT NULL,                -- branch or pull-request ref when known, else ''
  verdict TEXT NOT NULL CHECK (verdict IN ('pass', 'regression', 'inconclusive')),
  exit_code INTEGER NOT NULL CHECK (exit_code IN (0, 1, 3)),
  settings TEXT NOT NULL,           -- JSON: alpha, min_effect and its source, correction, power...
  result TEXT NOT NULL,             -- the compare JSON (docs/FORMATS.md) as the gate wrote it
  submitted_by TEXT NOT NULL,
  source TEXT NOT NULL CHECK (source IN ('cli', 'api')),
  created_at TEXT NOT NULL
);
CREATE INDEX gate_results_pair ON gate_results(base_sha, head_sha, id);
CREATE INDEX gate_results_head ON gate_results(head_sha);

CREATE TABLE gate_result_events (
  id INTEGER PRIMARY KEY,
  gate_id INTEGER NOT NULL REFERENCES gate_results(id),
  action TEXT NOT NULL CHECK (action IN ('acknowledge', 'dismiss', 'fix', 'reopen')),
  reason TEXT NOT NULL,
  author TEXT NOT NULL,
  at TEXT NOT NULL
);
CREATE INDEX gate_result_events_gate ON gate_result_events(gate_id, id);
)sql",
      // 6: every run's own identity, 128 random bits as 32 lowercase hex digits (docs/STORE.md):
      // ingest is idempotent by it, never by content, since two runs may be byte-identical and
      // still be two measurements. Runs stored before get fresh ones. content_hash (step 1) is
      // no longer written or read.
      R"sql(
ALTER TABLE runs ADD COLUMN uuid TEXT
  CHECK (uuid IS NULL OR (length(uuid) = 32 AND uuid NOT GLOB '*[^0-9a-f]*'));
UPDATE runs SET uuid = lower(hex(randomblob(16)));
CREATE UNIQUE INDEX runs_uuid ON runs(uuid);
)sql",
      // 7: each cell's profile, one untimed prefill + decode sequence under the profiler
      // (docs/STORE.md, "Profiles"). Op and kernel names repeat in every step and cell, so they
      // are stored once in profile_names. Its own step: a later migration goes after it.
      R"sql(
CREATE TABLE profile_names (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE
);

CREATE TABLE profiles (
  cell_id INTEGER PRIMARY KEY REFERENCES cells(id) ON DELETE CASCADE,
  profiler TEXT NOT NULL,             -- kineto | none
  wall_ms REAL NOT NULL,              -- what the profiled sequence cost, set-up included
  note TEXT                           -- why kernels or counters are missing
);

-- step -1 is the prefill, 0.. the decode steps, as in samples.
CREATE TABLE profile_steps (
  cell_id INTEGER NOT NULL REFERENCES profiles(cell_id) ON DELETE CASCADE,
  step INTEGER NOT NULL CHECK (step >= -1),
  wall_ms REAL NOT NULL,
  ops INTEGER NOT NULL,
  kernels INTEGER NOT NULL,
  syncs INTEGER NOT NULL,
  d2h_copies INTEGER NOT NULL,
  alloc_bytes INTEGER NOT NULL,
  peak_bytes INTEGER,
  PRIMARY KEY (cell_id, step)
) WITHOUT ROWID;

CREATE TABLE profile_ops (
  cell_id INTEGER NOT NULL REFERENCES profiles(cell_id) ON DELETE CASCADE,
  step INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('op', 'kernel')),
  name_id INTEGER NOT NULL REFERENCES profile_names(id),
  count INTEGER NOT NULL,
  total_ms REAL NOT NULL,
  PRIMARY KEY (cell_id, step, kind, name_id)
) WITHOUT ROWID;
)sql",
      // 8: named credentials (`perfgate token`, docs/CLI.md): each a name, a role and the SHA-256
      // of its token, never the token itself; revoked ones stay, so a name in a triage log always
      // means one credential. Each triage event now records how its author was authenticated
      // (`via`): events stored before had a name the writer typed, 'typed'.
      R"sql(
CREATE TABLE credentials (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  role TEXT NOT NULL CHECK (role IN ('ingest', 'triage', 'admin')),
  token_sha256 TEXT NOT NULL UNIQUE CHECK (length(token_sha256) = 64),
  created_at TEXT NOT NULL,
  last_used_at TEXT,
  revoked_at TEXT
);
ALTER TABLE regression_events ADD COLUMN via TEXT NOT NULL DEFAULT 'typed'
  CHECK (via IN ('typed', 'token', 'header', 'legacy'));
ALTER TABLE gate_result_events ADD COLUMN via TEXT NOT NULL DEFAULT 'typed'
  CHECK (via IN ('typed', 'token', 'header', 'legacy'));
)sql",
      // 9: A/B runs (`perfgate ab`, docs/STORE.md "A/B runs"). The base and the head run of one
      // A/B run share ab_uuid, one side each; repetition i of a cell pairs with repetition i of
      // the same cell in the other side's run, and ab_position says which of the two ran first.
      // Ordinary runs leave every column NULL.
      R"sql(
ALTER TABLE runs ADD COLUMN ab_uuid TEXT CHECK (ab_uuid IS NULL OR length(ab_uuid) = 32);
ALTER TABLE runs ADD COLUMN ab_side TEXT CHECK (ab_side IS NULL OR ab_side IN ('base', 'head'));
ALTER TABLE runs ADD COLUMN ab_design TEXT;
ALTER TABLE runs ADD COLUMN ab_seed TEXT;
CREATE INDEX runs_ab ON runs(ab_uuid) WHERE ab_uuid IS NOT NULL;
ALTER TABLE repetitions ADD COLUMN ab_position INTEGER
  CHECK (ab_position IS NULL OR ab_position IN (0, 1));
)sql",
      // 10: accepted slowdowns (`perfgate accept`, docs/STORE.md "Accepted slowdowns").
      // Append-only: an acceptance names a ref (a pull request's), the stored gate whose
      // regressions it accepts, and each accepted cell with the head/base ratio accepted; a
      // revocation is a later row that names the acceptance it ends.
      R"sql(
CREATE TABLE acceptances (
  id INTEGER PRIMARY KEY,
  action TEXT NOT NULL CHECK (action IN ('accept', 'revoke')),
  ref TEXT NOT NULL CHECK (length(ref) > 0),
  gate_id INTEGER REFERENCES gate_results(id),
  revokes INTEGER REFERENCES acceptances(id),
  cells TEXT NOT NULL,            -- JSON array of {"key", "metric", "ratio"}; [] for a revocation
  reason TEXT NOT NULL CHECK (length(reason) > 0),
  author TEXT NOT NULL,
  via TEXT NOT NULL CHECK (via IN ('cli', 'token', 'header', 'legacy')),
  at TEXT NOT NULL,
  CHECK ((action = 'accept') = (revokes IS NULL))
);
CREATE INDEX acceptances_ref ON acceptances(ref, id);
)sql",
      // 11: regressions the server raised an alert for (docs/STORE.md, "Detected regressions"),
      // kept so that an alert stays until someone acts on it or the series returns, whether or
      // not the detector that found it still sees it. Insert-only, one row per first bad commit.
      R"sql(
CREATE TABLE detected_regressions (
  id INTEGER PRIMARY KEY,
  series_id INTEGER NOT NULL REFERENCES series(id),
  metric TEXT NOT NULL,
  commit_sha TEXT NOT NULL CHECK (length(commit_sha) = 40),
  source TEXT NOT NULL CHECK (source IN ('change point', 'last two commits')),
  before REAL NOT NULL,            -- the series' level before the first bad commit
  relative REAL NOT NULL,          -- the step's size when it was first detected
  detected_at TEXT NOT NULL,
  UNIQUE (series_id, metric, commit_sha)
);
)sql",
      // 12: each profiled step on its device's timeline (docs/STORE.md, "Profiles"): the span
      // from its first kernel (ATen op on a CPU) to the end of its last, and the time in it when
      // one ran; span - busy is the time between kernels. Steps stored before were not measured
      // so: NULL.
      R"sql(
ALTER TABLE profile_steps ADD COLUMN span_ms REAL CHECK (span_ms IS NULL OR span_ms >= 0);
ALTER TABLE profile_steps ADD COLUMN busy_ms REAL
  CHECK ((busy_ms IS NULL) = (span_ms IS NULL) AND (busy_ms IS NULL OR busy_ms >= 0));
)sql",
  };
  return steps;
}

uint32_t be32(const unsigned char* p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

}  // namespace

int current_version() { return static_cast<int>(migrations().size()); }

FileKind inspect_file(sqlite3* db, const std::string& path) {
  // SQLite's own descriptor of the main file: reading through it opens nothing, and nothing is
  // closed behind SQLite's back (closing any descriptor of the file would drop every POSIX lock
  // this process holds on it, which WAL mode relies on; see docs/STORE.md).
  sqlite3_file* file = nullptr;
  if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK || !file ||
      !file->pMethods)
    throw RuntimeFailure("cannot inspect '" + path + "': SQLite gave no file handle");
  sqlite3_int64 size = 0;
  if (file->pMethods->xFileSize(file, &size) != SQLITE_OK)
    throw RuntimeFailure("cannot read the size of '" + path + "'");
  if (size == 0) return FileKind::empty;
  static const char kMagic[] = "SQLite format 3";  // 16 bytes with its NUL
  std::array<unsigned char, 100> header{};
  const int rc = file->pMethods->xRead(file, header.data(), static_cast<int>(header.size()), 0);
  if (rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ)
    throw RuntimeFailure("cannot read '" + path + "'");
  if (size < 100 || std::memcmp(header.data(), kMagic, 16) != 0)
    throw UsageError("'" + path +
                     "' is not a perfgate database (not an SQLite file); left untouched");
  const uint32_t app_id = be32(header.data() + 68);
  if (app_id != static_cast<uint32_t>(kApplicationId)) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%08x", app_id);
    throw UsageError("'" + path +
                     "' is an SQLite database of another application (application_id " + hex +
                     "), not a perfgate database; left untouched");
  }
  return FileKind::perfgate;
}

void check_version(sqlite3* db, const std::string& path, bool exact) {
  const int64_t v = sql::query_int(db, "PRAGMA user_version");
  if (v > current_version())
    throw UsageError("'" + path + "' has schema version " + std::to_string(v) +
                     ", newer than this perfgate understands (" +
                     std::to_string(current_version()) + "); use a newer perfgate");
  if (exact && v < current_version())
    throw UsageError("'" + path + "' has an older schema (version " + std::to_string(v) +
                     "); open it once with a writing command (perfgate run or serve) to migrate");
}

void migrate(sqlite3* db, const std::string& path) {
  // Up to date: take no write lock, so opening never waits for a runner mid-cell.
  if (sql::query_int(db, "PRAGMA application_id") == kApplicationId &&
      sql::query_int(db, "PRAGMA user_version") == current_version())
    return;
  sql::Transaction tx(db);
  // Re-read inside the write lock: another process may have created or migrated it meanwhile.
  const int64_t app_id = sql::query_int(db, "PRAGMA application_id");
  if (app_id != 0 && app_id != kApplicationId)
    throw UsageError("'" + path + "' is not a perfgate database (application_id " +
                     std::to_string(app_id) + ")");
  check_version(db, path, false);
  const int64_t from = sql::query_int(db, "PRAGMA user_version");
  if (from == 0 && sql::query_int(db, "SELECT count(*) FROM sqlite_master") != 0)
    throw UsageError("'" + path + "' holds tables but no perfgate schema; left untouched");
  const auto& steps = migrations();
  for (size_t v = static_cast<size_t>(from); v < steps.size(); ++v) sql::exec(db, steps[v]);
  // PRAGMA takes no bound parameters; both values are our own integer constants.
  sql::exec(db, ("PRAGMA application_id = " + std::to_string(kApplicationId)).c_str());
  sql::exec(db, ("PRAGMA user_version = " + std::to_string(current_version())).c_str());
  tx.commit();
}

}  // namespace pg::store::schema
