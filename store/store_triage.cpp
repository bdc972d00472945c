// Triage of regressions: an append-only log of acknowledge / dismiss / fix / reopen events, and
// the regressions alerts were raised for.
#include <sqlite3.h>
#include <algorithm>
#include <array>

#include "common/errors.h"
#include "store/store_internal.h"

namespace pg::store {

void detail::check_triage_via(const std::string& via) {
  if (via != "typed" && via != "token" && via != "header" && via != "legacy")
    throw UsageError("via '" + via + "': expected typed, token, header or legacy");
}

void detail::check_triage_action(const std::string& action) {
  static const std::array<std::string, 4> kActions = {"acknowledge", "dismiss", "fix", "reopen"};
  if (std::find(kActions.begin(), kActions.end(), action) == kActions.end())
    throw UsageError("action '" + action + "': expected acknowledge, dismiss, fix or reopen");
}

Store::RegressionEvent Store::add_regression_event(int64_t series_id, const std::string& metric,
                                                   const std::string& commit,
                                                   const std::string& action,
                                                   const std::string& reason,
                                                   const std::string& author,
                                                   const std::string& via) {
  detail::check_triage_action(action);
  detail::check_triage_via(via);
  if (commit.size() != 40) throw UsageError("commit: a full 40-digit SHA is required");
  if (!get_series(series_id)) throw UsageError("no series with id " + std::to_string(series_id));
  RegressionEvent e{0,  series_id, metric, commit, action, reason, author, detail::now_iso8601(),
                    via};
  sql::Transaction tx(db_);
  sql::Stmt s(
      db_,
      "INSERT INTO regression_events (series_id, metric, commit_sha, action, reason, author, "
      "at, via) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  s.bind(1, series_id);
  s.bind(2, metric);
  s.bind(3, commit);
  s.bind(4, action);
  s.bind(5, reason);
  s.bind(6, author);
  s.bind(7, e.at);
  s.bind(8, via);
  s.step();
  e.id = sqlite3_last_insert_rowid(db_);
  tx.commit();
  return e;
}

std::vector<Store::RegressionEvent> Store::regression_events() {
  sql::Stmt s(db_,
              "SELECT id, series_id, metric, commit_sha, action, reason, author, at, via "
              "FROM regression_events ORDER BY id");
  std::vector<RegressionEvent> out;
  while (s.step())
    out.push_back({s.int64(0), s.int64(1), s.text(2), s.text(3), s.text(4), s.text(5), s.text(6),
                   s.text(7), s.text(8)});
  return out;
}

size_t Store::record_detected_regressions(const std::vector<DetectedRegression>& found) {
  for (const DetectedRegression& r : found) {
    if (r.commit.size() != 40) throw UsageError("commit: a full 40-digit SHA is required");
    if (r.source != "change point" && r.source != "last two commits")
      throw UsageError("source '" + r.source + "': expected change point or last two commits");
  }
  if (found.empty()) return 0;
  const std::string at = detail::now_iso8601();
  sql::Transaction tx(db_);
  sql::Stmt s(db_,
              "INSERT OR IGNORE INTO detected_regressions (series_id, metric, commit_sha, source, "
              "before, relative, detected_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  size_t added = 0;
  for (const DetectedRegression& r : found) {
    s.bind(1, r.series_id);
    s.bind(2, r.metric);
    s.bind(3, r.commit);
    s.bind(4, r.source);
    s.bind(5, r.before);
    s.bind(6, r.relative);
    s.bind(7, at);
    s.step();
    added += static_cast<size_t>(sqlite3_changes(db_));
    s.reset();
  }
  tx.commit();
  return added;
}

std::vector<Store::DetectedRegression> Store::detected_regressions() {
  sql::Stmt s(db_,
              "SELECT id, series_id, metric, commit_sha, source, before, relative, detected_at "
              "FROM detected_regressions ORDER BY id");
  std::vector<DetectedRegression> out;
  while (s.step())
    out.push_back(
        {s.int64(0), s.int64(1), s.text(2), s.text(3), s.text(4), s.real(5), s.real(6), s.text(7)});
  return out;
}

std::map<std::string, int64_t> Store::branch_run_counts() {
  sql::Stmt s(
      db_,
      "SELECT git_branch, count(*) FROM runs WHERE git_branch IS NOT NULL AND git_branch != "
      "'' GROUP BY git_branch");
  std::map<std::string, int64_t> out;
  while (s.step()) out[s.text(0)] = s.int64(1);
  return out;
}

}  // namespace pg::store
