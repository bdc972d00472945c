// The SQLite store: schema, migrations, writes and queries. Not thread-safe: use one Store per
// thread (WAL lets many readers and one writer work at once, across processes too).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/run.h"

struct sqlite3;

namespace pg::store {

// Why `name` cannot name a credential, empty when it can: 1 to 64 characters of A-Z a-z 0-9 . _ -,
// starting with a letter or digit (docs/CLI.md, "perfgate token").
std::string credential_name_problem(const std::string& name);

// One series = one sweep-cell key measured on one comparable environment.
struct SeriesInfo {
  int64_t id = 0;
  CellKey key;
  Environment env;  // the comparable_env_fields() only
};

// One stored cell of one run, as a point of a series (several runs of one commit give several).
struct SeriesSample {
  int64_t run_id = 0;
  int64_t cell_id = 0;
  std::string commit;  // empty outside a repository
  std::string branch;  // the run's branch ("detached", or empty outside a repository)
  std::string subject;
  std::string commit_time;
  std::string started_at;
  CellStatus status = CellStatus::ok;
  std::map<std::string, double> metrics;
  CellSamples samples;  // only with_samples
  // Per repetition, filled even without samples (cheap: read from a derived table):
  std::vector<double> rep_prefill_ms;
  std::vector<double> rep_tpot_ms;  // decode time of the repetition / (gen_tokens - 1)
};

struct RunFilter {
  bool with_cells = true;
  bool with_samples = true;
};

class Store {
 public:
  // Opens (creating if absent) and migrates to the current schema. A file that exists but is not
  // a perfgate database throws UsageError naming the path, and is left byte-for-byte untouched.
  // A database from a newer perfgate throws UsageError too. read_only never creates or migrates.
  explicit Store(const std::string& path, bool read_only = false);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  static int schema_version();  // what this build writes (PRAGMA user_version)

  // --- the runner's incremental writes: run row first (with a new uuid), then one committed
  // transaction per cell.
  // started_at: when the run began (ISO 8601 UTC); empty: now. The runner passes the time before
  // its first cell, so a run's wall time includes loading the model or starting an --exec engine.
  int64_t begin_run(const GitInfo& git, const Environment& env, const std::string& config_json,
                    const std::string& started_at = "",
                    const std::optional<AbPairing>& ab = std::nullopt);  // an A/B run's side
  void add_cell(int64_t run_id, const CellResult& cell);
  void finish_run(int64_t run_id, RunStatus status);

  // --- ingest of whole runs (POST /api/v1/runs, perfgate import): all or nothing. A run whose
  // uuid is already stored is not stored again: its stored id and inserted=false. A run without
  // a uuid is always inserted, with a new one (content equality is not identity: two runs may
  // be byte-identical and still be two measurements).
  struct Imported {
    int64_t id;
    bool inserted;
  };
  Imported import_run(const Run& run);
  // Several runs in one transaction (one POST may carry many).
  std::vector<Imported> import_runs(const std::vector<Run>& runs);

  // --- reads
  std::vector<Run> list_runs(const RunFilter& f = {false, false});  // id order
  std::optional<Run> load_run(int64_t id, const RunFilter& f = {});
  int64_t run_count();
  // Distinct stored commits whose SHA starts with `prefix` (case-insensitive hex).
  std::vector<std::string> commits_with_prefix(const std::string& prefix);
  // Every run of one commit (full SHA), id order.
  std::vector<Run> runs_for_commit(const std::string& sha, const RunFilter& f = {});

  // --- series
  std::vector<SeriesInfo> list_series();
  std::optional<SeriesInfo> get_series(int64_t id);
  std::optional<int64_t> find_series(const CellKey& key, const Environment& env);
  // Every stored cell of the series, ordered by commit time, then run id ("history order").
  std::vector<SeriesSample> series_samples(int64_t series_id, bool with_samples = true);
  // The same for several series in one pass (without raw samples): series measured by the same
  // runs share the pages that hold their cells, so serve's start-up reads those pages once
  // instead of once per series. Every id is in the answer, an unknown one with no samples.
  // `metric_names`: only these of each cell's stored metrics (empty: all of them).
  std::map<int64_t, std::vector<SeriesSample>> series_samples_of(
      const std::vector<int64_t>& ids, const std::vector<std::string>& metric_names = {});
  // Changes whenever a cell is added to a series (cells are append-only), so a reader can tell
  // which series changed since it last looked and recompute only those (web/ caches per series).
  struct SeriesVersion {
    int64_t cells = 0;
    int64_t last_cell_id = 0;
    bool operator==(const SeriesVersion&) const = default;
  };
  std::map<int64_t, SeriesVersion> series_versions();  // series id -> version

  // --- views a reader computed from a series (web/'s series views), cached in the database so a
  // restart need not recompute them (store_view_cache.cpp). Derived data: a row holds the series
  // version it was computed from, and a reader uses it only while that version is current.
  struct CachedView {
    int64_t series_id = 0;
    SeriesVersion version;
    std::string body;
  };
  // The series' row under one key (what the view is: metric, branch, settings, format).
  std::optional<CachedView> cached_view(int64_t series_id, const std::string& view_key);
  // Replaces these rows (view key, row), in one transaction.
  void put_cached_views(const std::vector<std::pair<std::string, CachedView>>& rows);

  // git.remote of the latest run that recorded one (runs made in a clone of a hosted repository).
  std::optional<std::string> latest_git_remote();

  // Branch name -> number of runs made on it ("detached" included; runs without a branch left out).
  std::map<std::string, int64_t> branch_run_counts();

  // --- triage of regressions (store_triage.cpp): an append-only log; a regression's state is
  // its latest event.
  struct RegressionEvent {
    int64_t id = 0;
    int64_t series_id = 0;
    std::string metric, commit, action, reason, author, at;  // action: acknowledge | dismiss |
                                                             // fix | reopen; at: ISO 8601 UTC
    // How `author` was authenticated: token (a named credential's name), header (the user a
    // trusted proxy named), legacy (serve's --token-file token), typed (what the writer typed:
    // every event stored before schema step 8).
    std::string via = "typed";
  };
  // Stores one event (at = now); returns it with its id. UsageError for an unknown series,
  // action or `via`.
  RegressionEvent add_regression_event(int64_t series_id, const std::string& metric,
                                       const std::string& commit, const std::string& action,
                                       const std::string& reason, const std::string& author,
                                       const std::string& via = "typed");
  std::vector<RegressionEvent> regression_events();  // id order
  // Every regression an alert was raised for (schema step 11): the alert stays whether or not its
  // detector still sees it. source: change point | last two commits.
  struct DetectedRegression {
    int64_t id = 0;
    int64_t series_id = 0;
    std::string metric, commit, source;
    double before = 0.0;    // the level before the first bad commit
    double relative = 0.0;  // the step's size (after / before - 1) when first detected
    std::string detected_at;
  };
  // Stores the ones not stored yet (series, metric and commit name one); returns how many were.
  size_t record_detected_regressions(const std::vector<DetectedRegression>& found);
  std::vector<DetectedRegression> detected_regressions();  // id order

  // --- stored gate results (store_gates.cpp): append-only; an alerts source beside the change
  // points, with the settings each gate was decided under (docs/STORE.md, "Gate results").
  struct GateRecord {
    int64_t id = 0;
    std::string base, head;            // full lowercase SHAs
    std::string ref;                   // branch or pull-request ref when known, else empty
    std::string verdict;               // pass | regression | inconclusive
    int exit_code = 0;                 // 0, 1, 3: `perfgate compare`'s for the verdict
    std::string settings;              // JSON object: the settings the verdict was decided under
    std::string result;                // the compare JSON (docs/FORMATS.md)
    std::string submitted_by, source;  // source: cli (--record) | api (POST /api/v1/gates)
    std::string created_at;            // ISO 8601 UTC, set by the store
  };
  // Stores one (id and created_at are set); UsageError naming the field for a malformed record.
  GateRecord add_gate_result(GateRecord r);
  // ids > after_id, ascending, at most `limit` (GET /api/v1/gates); every one with limit < 0.
  std::vector<GateRecord> gate_results(int64_t after_id = 0, int64_t limit = -1);
  // The newest stored gate of this base/head pair, if any.
  std::optional<GateRecord> latest_gate_result(const std::string& base, const std::string& head);
  struct GateEvent {
    int64_t id = 0, gate_id = 0;
    std::string action, reason, author, at;  // as RegressionEvent
    std::string via = "typed";               // as RegressionEvent
  };
  GateEvent add_gate_event(int64_t gate_id, const std::string& action, const std::string& reason,
                           const std::string& author, const std::string& via = "typed");
  std::vector<GateEvent> gate_events();  // id order

  // --- accepted slowdowns (store_acceptances.cpp; `perfgate accept`, docs/STORE.md "Accepted
  // slowdowns"): append-only. An acceptance of a ref accepts cells at a head/base ratio; a later
  // gate of that ref tests them against it. A revocation ends one.
  struct AcceptedCell {
    CellKey key;
    std::string metric;  // tpot_ms, prefill_ms, peak_alloc_bytes
    double ratio = 1.0;  // head/base, as the accepted gate measured it
  };
  struct Acceptance {
    int64_t id = 0;
    std::string ref;                 // the pull request's (or branch's) ref
    std::optional<int64_t> gate_id;  // the stored gate whose regressions were accepted
    std::vector<AcceptedCell> cells;
    std::string reason, author, at;
    std::string via = "cli";  // cli (written to the file), token, header, legacy (the server's)
    // Filled when a later row revoked it.
    std::optional<int64_t> revoked_by;
    std::string revoked_reason, revoked_author, revoked_at;
  };
  // Stores one (id and at set); UsageError naming the field for an empty ref, reason or cell list,
  // a ratio that is not a finite number > 0, or an unknown gate.
  Acceptance add_acceptance(Acceptance a);
  // Ends acceptance `id`; UsageError when there is none or it is already revoked.
  Acceptance revoke_acceptance(int64_t id, const std::string& reason, const std::string& author,
                               const std::string& via = "cli");
  // Every acceptance (of `ref` when not empty), oldest first, revoked ones included.
  std::vector<Acceptance> acceptances(const std::string& ref = "");

  // --- named credentials (store_credentials.cpp; `perfgate token`, docs/CLI.md): a name, a
  // role and the SHA-256 of a random token. The token itself is never stored: add_credential
  // returns it once.
  struct Credential {
    int64_t id = 0;
    std::string name, role;  // role: ingest | triage | admin
    std::string created_at;  // ISO 8601 UTC
    std::optional<std::string> last_used_at, revoked_at;
    bool revoked() const { return revoked_at.has_value(); }
  };
  struct NewCredential {
    Credential credential;
    std::string token;  // the only copy: show it once
  };
  // UsageError for a name outside the charset (credential_name_problem), a role other than
  // ingest, triage or admin (naming the setting "role"), or a name already used, revoked or not
  // (a name in a triage log means one credential forever).
  NewCredential add_credential(const std::string& name, const std::string& role);
  std::vector<Credential> credentials();  // id order, revoked ones included
  // Revokes the named credential (revoked_at = now); UsageError when there is none. Returns it
  // and whether this call revoked it (false: it already was, and stays as it was).
  std::pair<Credential, bool> revoke_credential(const std::string& name);
  // The credential whose token this is, revoked or not (the caller tells "revoked" from
  // "unknown"); nullopt when none. The token's hash is compared with every stored hash in
  // constant time, without an early exit and without an index lookup on the secret's hash.
  std::optional<Credential> find_credential(const std::string& token);
  // Records a use: last_used_at = now. Throws like any write (serve ignores a failure).
  void note_credential_use(int64_t id);

  // --- a page of runs for the paginated GET /api/v1/runs: ids > after_id, ascending, at most
  // `limit`.
  std::vector<Run> list_runs_page(int64_t after_id, int64_t limit, const RunFilter& f);

  // --- what a long-lived reader (serve) asks of its connection.
  // SQLite's PRAGMA data_version on this connection: it changes whenever another connection (any
  // thread's, any process's) commits to the file; -1 when the query fails (e.g. the file is gone).
  // Never throws.
  int64_t data_version();
  // How long a statement waits for another connection's lock before it fails (5 s as opened).
  void set_busy_timeout(int milliseconds);

  sqlite3* handle() { return db_; }  // for tests (integrity_check) only

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace pg::store
