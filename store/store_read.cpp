// Reading whole runs. Every read runs in one transaction, so it sees one consistent snapshot
// even while a runner commits cells (WAL: readers never wait for the writer).
#include <algorithm>
#include <cctype>
#include <unordered_map>

#include "common/errors.h"
#include "core/cell_key_io.h"
#include "store/store_internal.h"

namespace pg::store {
namespace detail {
namespace {

const char* where_clause(RunSelect sel) {
  switch (sel) {
    case RunSelect::all:
      return " WHERE ?1 IS NULL";  // ?1 is bound to NULL: every run
    case RunSelect::by_id:
      return " WHERE r.id = ?1";
    case RunSelect::by_commit:
      return " WHERE r.git_commit = ?1";
    case RunSelect::id_range:
      return " WHERE r.id > ?1 AND r.id <= ?2";
  }
  return " WHERE 0";
}

void bind_param(sql::Stmt& s, RunSelect sel, const std::string& param) {
  if (sel == RunSelect::by_id)
    s.bind(1, static_cast<int64_t>(std::stoll(param)));
  else if (sel == RunSelect::by_commit)
    s.bind(1, param);
  else if (sel == RunSelect::id_range) {  // "LO:HI", both our own integers
    const size_t colon = param.find(':');
    s.bind(1, static_cast<int64_t>(std::stoll(param.substr(0, colon))));
    s.bind(2, static_cast<int64_t>(std::stoll(param.substr(colon + 1))));
  } else
    s.bind_null(1);
}

}  // namespace

std::vector<Run> load_runs(sqlite3* db, RunSelect sel, const std::string& param,
                           const RunFilter& f) {
  const std::string where = where_clause(sel);
  sql::Transaction snapshot(db, /*immediate=*/false);
  std::vector<Run> runs;
  std::unordered_map<int64_t, size_t> run_index;
  {
    sql::Stmt s(db,
                "SELECT r.id, r.status, r.started_at, r.finished_at, r.git_state, r.git_commit, "
                "r.git_branch, r.git_subject, r.git_time, r.git_dirty, r.git_repo_path, "
                "e.fingerprint, r.config, r.git_remote, r.uuid, r.ab_uuid, r.ab_side, r.ab_design, "
                "r.ab_seed FROM runs r "
                "JOIN environments e ON e.id = r.environment_id" +
                    where + " ORDER BY r.id");
    bind_param(s, sel, param);
    while (s.step()) {
      Run r;
      r.id = s.int64(0);
      r.status = run_status_from_string(s.text(1));
      r.started_at = s.text(2);
      r.finished_at = s.opt_text(3).value_or("");
      r.git.state = s.text(4);
      r.git.commit = s.opt_text(5);
      r.git.branch = s.opt_text(6);
      r.git.subject = s.opt_text(7);
      r.git.time = s.opt_text(8);
      r.git.dirty = s.int64(9) != 0;
      r.git.repo_path = s.text(10);
      r.env = env_from_json(s.text(11));
      r.config_json = s.text(12);
      r.git.remote = s.opt_text(13);
      r.uuid = s.opt_text(14).value_or("");
      if (auto ab_uuid = s.opt_text(15)) {
        r.ab = AbPairing{*ab_uuid, s.text(16), s.opt_text(17).value_or(""),
                         std::stoull(s.opt_text(18).value_or("0"))};
      }
      run_index[r.id] = runs.size();
      runs.push_back(std::move(r));
    }
  }
  if (!f.with_cells || runs.empty()) {
    snapshot.commit();
    return runs;
  }
  std::unordered_map<int64_t, CellResult*> cell_by_id;
  {
    sql::Stmt s(db, "SELECT c.id, c.run_id, " + cell_key_sql_columns("c.") +
                        ", c.status, c.reason FROM cells c JOIN runs r ON r.id = c.run_id" + where +
                        " ORDER BY c.run_id, c.ordinal");
    bind_param(s, sel, param);
    std::vector<std::pair<int64_t, int64_t>> order;  // (cell id, run id), in cell order
    while (s.step()) {
      CellResult c;
      c.key = read_key(s, 2);
      c.status = cell_status_from_string(s.text(2 + kKeyParams));
      c.reason = s.opt_text(3 + kKeyParams);
      auto& cells = runs[run_index.at(s.int64(1))].cells;
      cells.push_back(std::move(c));
      order.emplace_back(s.int64(0), s.int64(1));
    }
    // Pointers only after every vector stopped growing.
    std::unordered_map<int64_t, size_t> next;
    for (const auto& [cell_id, run_id] : order)
      cell_by_id[cell_id] = &runs[run_index.at(run_id)].cells[next[run_id]++];
  }
  {
    sql::Stmt s(db,
                "SELECT m.cell_id, m.name, m.value FROM metrics m "
                "JOIN cells c ON c.id = m.cell_id JOIN runs r ON r.id = c.run_id" +
                    where);
    bind_param(s, sel, param);
    while (s.step()) cell_by_id.at(s.int64(0))->metrics[s.text(1)] = s.real(2);
  }
  if (f.with_samples) {
    sql::Stmt s(db,
                "SELECT s.cell_id, s.rep, s.step, s.value FROM samples s "
                "JOIN cells c ON c.id = s.cell_id JOIN runs r ON r.id = c.run_id" +
                    where + " ORDER BY s.cell_id, s.rep, s.step");
    bind_param(s, sel, param);
    while (s.step()) {
      auto& samples = cell_by_id.at(s.int64(0))->samples;
      const int64_t step = s.int64(2);
      if (step < 0) {
        samples.prefill_ms.push_back(s.real(3));
        samples.decode_ms.emplace_back();
      } else {
        samples.decode_ms.back().push_back(s.real(3));
      }
    }
    sql::Stmt p(db,
                "SELECT p.cell_id, p.ab_position FROM repetitions p "
                "JOIN cells c ON c.id = p.cell_id JOIN runs r ON r.id = c.run_id" +
                    where + " AND p.ab_position IS NOT NULL ORDER BY p.cell_id, p.rep");
    bind_param(p, sel, param);
    while (p.step()) cell_by_id.at(p.int64(0))->samples.ab_position.push_back(p.integer(1));
    load_profiles(
        db, where, [&](sql::Stmt& q) { bind_param(q, sel, param); }, cell_by_id);
  }
  snapshot.commit();
  return runs;
}

}  // namespace detail

std::vector<Run> Store::list_runs(const RunFilter& f) {
  return detail::load_runs(db_, detail::RunSelect::all, "", f);
}

std::vector<Run> Store::list_runs_page(int64_t after_id, int64_t limit, const RunFilter& f) {
  // The page's last id first, so the bulk loader reads exactly one id range (ids only grow).
  sql::Stmt s(db_, "SELECT max(id) FROM (SELECT id FROM runs WHERE id > ?1 ORDER BY id LIMIT ?2)");
  s.bind(1, after_id);
  s.bind(2, limit);
  if (!s.step() || s.is_null(0)) return {};
  const int64_t last = s.int64(0);
  return detail::load_runs(db_, detail::RunSelect::id_range,
                           std::to_string(after_id) + ":" + std::to_string(last), f);
}

std::optional<Run> Store::load_run(int64_t id, const RunFilter& f) {
  auto runs = detail::load_runs(db_, detail::RunSelect::by_id, std::to_string(id), f);
  if (runs.empty()) return std::nullopt;
  return std::move(runs.front());
}

int64_t Store::run_count() { return sql::query_int(db_, "SELECT count(*) FROM runs"); }

std::vector<std::string> Store::commits_with_prefix(const std::string& prefix) {
  std::string p = prefix;
  for (auto& ch : p) {
    if (!std::isxdigit(static_cast<unsigned char>(ch)) || p.size() > 40) return {};
    ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  // A range over the index: every lowercase hex SHA with this prefix sorts in [p, p + "~").
  sql::Stmt s(db_,
              "SELECT DISTINCT git_commit FROM runs WHERE git_commit >= ?1 AND git_commit < ?2 "
              "ORDER BY git_commit");
  s.bind(1, p).bind(2, p + "~");
  std::vector<std::string> out;
  while (s.step()) out.push_back(s.text(0));
  return out;
}

std::vector<Run> Store::runs_for_commit(const std::string& sha, const RunFilter& f) {
  std::string lower = sha;
  for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return detail::load_runs(db_, detail::RunSelect::by_commit, lower, f);
}

}  // namespace pg::store
