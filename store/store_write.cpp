// The runner's incremental writes: the run row first, then one committed transaction per cell,
// so a runner killed half-way leaves an incomplete run that keeps every finished cell.
#include <numeric>

#include "common/errors.h"
#include "common/git_remote.h"
#include "core/cell_key_io.h"
#include "store/store_internal.h"
#include "store/validate.h"

namespace pg::store {
namespace detail {

int64_t insert_run_row(sqlite3* db, const Run& run) {
  const std::string started = run.started_at.empty() ? now_iso8601() : run.started_at;
  int64_t history = 0;
  if (!(run.git.commit && run.git.time && parse_iso8601(*run.git.time, &history)))
    parse_iso8601(started, &history);
  std::optional<std::string> commit = run.git.commit;
  if (commit)
    for (auto& ch : *commit) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const int64_t env_id = ensure_environment(db, run.env);
  sql::Stmt s(
      db,
      "INSERT INTO runs(status, started_at, finished_at, git_state, git_commit, git_branch, "
      "git_subject, git_time, git_dirty, git_repo_path, history_time, environment_id, "
      "config, uuid, git_remote, ab_uuid, ab_side, ab_design, ab_seed) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, "
      "?19)");
  s.bind(1, to_string(run.status)).bind(2, started);
  if (run.finished_at.empty())
    s.bind_null(3);
  else
    s.bind(3, run.finished_at);
  s.bind(4, run.git.state)
      .bind(5, commit)
      .bind(6, run.git.branch)
      .bind(7, run.git.subject)
      .bind(8, run.git.time)
      .bind(9, run.git.dirty)
      .bind(10, run.git.repo_path)
      .bind(11, history)
      .bind(12, env_id)
      .bind(13, run.config_json)
      .bind(14, run.uuid.empty() ? new_run_uuid(db) : run.uuid);
  // Redacted here too: an ingested document from any client never stores a credential.
  if (run.git.remote)
    s.bind(15, redact_remote_url(*run.git.remote));
  else
    s.bind_null(15);
  if (run.ab) {  // the seed as decimal text: SQLite's integers are signed
    s.bind(16, run.ab->uuid).bind(17, run.ab->side).bind(18, run.ab->design);
    s.bind(19, std::to_string(run.ab->seed));
  } else {
    for (int i = 16; i <= 19; ++i) s.bind_null(i);
  }
  s.run();
  return sqlite3_last_insert_rowid(db);
}

CellWriter::CellWriter(sqlite3* db)
    : db_(db),
      cell_(db, "INSERT INTO cells(run_id, ordinal, series_id, " + cell_key_sql_columns() +
                    ", status, reason) VALUES(?1, ?2, ?3, " + cell_key_sql_placeholders(4) + ", ?" +
                    std::to_string(4 + kKeyParams) + ", ?" + std::to_string(5 + kKeyParams) + ")"),
      metric_(db, "INSERT INTO metrics(cell_id, name, value) VALUES(?1, ?2, ?3)"),
      sample_(db, "INSERT INTO samples(cell_id, rep, step, value) VALUES(?1, ?2, ?3, ?4)"),
      rep_(db,
           "INSERT INTO repetitions(cell_id, rep, prefill_ms, decode_total_ms, decode_steps, "
           "ab_position) VALUES(?1, ?2, ?3, ?4, ?5, ?6)") {}

int64_t CellWriter::write(int64_t run_id, int ordinal, const std::string& comparable_env,
                          const CellResult& c) {
  const int64_t series_id = ensure_series(db_, c.key, comparable_env);
  cell_.reset();
  cell_.bind(1, run_id).bind(2, ordinal).bind(3, series_id);
  bind_key(cell_, 4, c.key);
  cell_.bind(4 + kKeyParams, to_string(c.status)).bind(5 + kKeyParams, c.reason);
  cell_.run();
  const int64_t cell_id = sqlite3_last_insert_rowid(db_);
  for (const auto& [name, value] : c.metrics) {
    metric_.reset();
    metric_.bind(1, cell_id).bind(2, name).bind(3, value).run();
  }
  const auto& s = c.samples;
  for (size_t r = 0; r < s.prefill_ms.size(); ++r) {
    const auto rep = static_cast<int64_t>(r);
    sample_.reset();
    sample_.bind(1, cell_id).bind(2, rep).bind(3, -1).bind(4, s.prefill_ms[r]).run();
    const auto& steps = s.decode_ms[r];
    for (size_t i = 0; i < steps.size(); ++i) {
      sample_.reset();
      sample_.bind(1, cell_id).bind(2, rep).bind(3, static_cast<int64_t>(i)).bind(4, steps[i]);
      sample_.run();
    }
    rep_.reset();
    rep_.bind(1, cell_id)
        .bind(2, rep)
        .bind(3, s.prefill_ms[r])
        .bind(4, std::accumulate(steps.begin(), steps.end(), 0.0))
        .bind(5, static_cast<int64_t>(steps.size()));
    if (r < s.ab_position.size())
      rep_.bind(6, static_cast<int64_t>(s.ab_position[r]));
    else
      rep_.bind_null(6);
    rep_.run();
  }
  if (c.profile) write_profile(db_, cell_id, *c.profile);
  return cell_id;
}

}  // namespace detail

int64_t Store::begin_run(const GitInfo& git, const Environment& env, const std::string& config_json,
                         const std::string& started_at, const std::optional<AbPairing>& ab) {
  Run run;
  run.ab = ab;
  run.started_at = started_at;
  run.status = RunStatus::incomplete;
  run.git = git;
  run.env = env;
  run.config_json = config_json;
  validate_run(run, "run");
  sql::Transaction tx(db_);
  const int64_t id = detail::insert_run_row(db_, run);  // with a new uuid
  tx.commit();
  return id;
}

void Store::add_cell(int64_t run_id, const CellResult& cell) {
  validate_cell(cell, "add_cell to run " + std::to_string(run_id) + ": cell");
  sql::Transaction tx(db_);
  sql::Stmt q(db_,
              "SELECT r.finished_at IS NOT NULL, e.comparable, "
              "(SELECT COALESCE(MAX(ordinal) + 1, 0) FROM cells WHERE run_id = r.id) "
              "FROM runs r JOIN environments e ON e.id = r.environment_id WHERE r.id = ?1");
  q.bind(1, run_id);
  if (!q.step()) throw UsageError("add_cell: no run with id " + std::to_string(run_id));
  if (q.int64(0)) throw UsageError("add_cell: run " + std::to_string(run_id) + " is finished");
  const std::string comparable = q.text(1);
  const int ordinal = q.integer(2);
  detail::CellWriter(db_).write(run_id, ordinal, comparable, cell);
  tx.commit();
}

void Store::finish_run(int64_t run_id, RunStatus status) {
  sql::Transaction tx(db_);
  sql::Stmt s(db_, "UPDATE runs SET status = ?1, finished_at = ?2 WHERE id = ?3");
  s.bind(1, to_string(status)).bind(2, detail::now_iso8601()).bind(3, run_id).run();
  if (sqlite3_changes(db_) == 0)
    throw UsageError("finish_run: no run with id " + std::to_string(run_id));
  tx.commit();
}

}  // namespace pg::store
