// Stored gate results and their triage log (schema step 5). Append-only: a record is never
// updated or deleted; its alert state is the latest gate_result_events row.
#include <sqlite3.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "store/store_internal.h"

namespace pg::store {
namespace {

bool is_full_sha(const std::string& s) {
  return s.size() == 40 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

int exit_code_of(const std::string& verdict) {
  if (verdict == "pass") return 0;
  if (verdict == "regression") return 1;
  if (verdict == "inconclusive") return 3;
  throw UsageError("verdict '" + verdict + "': expected pass, regression or inconclusive");
}

void check_json_object(const std::string& text, const char* field) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw UsageError(std::string(field) + ": a JSON object is required");
}

constexpr const char* kGateColumns =
    "id, base_sha, head_sha, ref, verdict, exit_code, settings, result, submitted_by, source, "
    "created_at";

Store::GateRecord read_gate(const sql::Stmt& s) {
  return {s.int64(0), s.text(1), s.text(2), s.text(3), s.text(4), s.integer(5),
          s.text(6),  s.text(7), s.text(8), s.text(9), s.text(10)};
}

}  // namespace

Store::GateRecord Store::add_gate_result(GateRecord r) {
  if (!is_full_sha(r.base)) throw UsageError("base: a full 40-digit lowercase SHA is required");
  if (!is_full_sha(r.head)) throw UsageError("head: a full 40-digit lowercase SHA is required");
  if (exit_code_of(r.verdict) != r.exit_code)
    throw UsageError("exit_code " + std::to_string(r.exit_code) + " does not match verdict '" +
                     r.verdict + "' (expected " + std::to_string(exit_code_of(r.verdict)) + ")");
  if (r.source != "cli" && r.source != "api")
    throw UsageError("source '" + r.source + "': expected cli or api");
  if (r.submitted_by.empty()) throw UsageError("submitted_by must not be empty");
  check_json_object(r.settings, "settings");
  check_json_object(r.result, "result");
  r.created_at = detail::now_iso8601();
  sql::Transaction tx(db_);
  sql::Stmt s(db_,
              "INSERT INTO gate_results (base_sha, head_sha, ref, verdict, exit_code, settings, "
              "result, submitted_by, source, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
              "?9, ?10)");
  s.bind(1, r.base).bind(2, r.head).bind(3, r.ref).bind(4, r.verdict).bind(5, r.exit_code);
  s.bind(6, r.settings).bind(7, r.result).bind(8, r.submitted_by).bind(9, r.source);
  s.bind(10, r.created_at);
  s.run();
  r.id = sqlite3_last_insert_rowid(db_);
  tx.commit();
  return r;
}

std::vector<Store::GateRecord> Store::gate_results(int64_t after_id, int64_t limit) {
  sql::Stmt s(db_, std::string("SELECT ") + kGateColumns +
                       " FROM gate_results WHERE id > ?1 ORDER BY id LIMIT ?2");
  s.bind(1, after_id).bind(2, limit);
  std::vector<GateRecord> out;
  while (s.step()) out.push_back(read_gate(s));
  return out;
}

std::optional<Store::GateRecord> Store::latest_gate_result(const std::string& base,
                                                           const std::string& head) {
  sql::Stmt s(db_, std::string("SELECT ") + kGateColumns +
                       " FROM gate_results WHERE base_sha = ?1 AND head_sha = ?2 "
                       "ORDER BY id DESC LIMIT 1");
  s.bind(1, base).bind(2, head);
  if (!s.step()) return std::nullopt;
  return read_gate(s);
}

Store::GateEvent Store::add_gate_event(int64_t gate_id, const std::string& action,
                                       const std::string& reason, const std::string& author,
                                       const std::string& via) {
  detail::check_triage_action(action);
  detail::check_triage_via(via);
  if (author.empty()) throw UsageError("author must not be empty");
  if (action == "dismiss" && reason.empty()) throw UsageError("dismissing needs a reason");
  GateEvent e{0, gate_id, action, reason, author, detail::now_iso8601(), via};
  sql::Transaction tx(db_);
  sql::Stmt exists(db_, "SELECT count(*) FROM gate_results WHERE id = ?1");
  exists.bind(1, gate_id);
  if (!exists.step() || exists.int64(0) == 0)
    throw UsageError("no gate result with id " + std::to_string(gate_id));
  sql::Stmt s(db_,
              "INSERT INTO gate_result_events (gate_id, action, reason, author, at, via) "
              "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  s.bind(1, gate_id).bind(2, action).bind(3, reason).bind(4, author).bind(5, e.at).bind(6, via);
  s.run();
  e.id = sqlite3_last_insert_rowid(db_);
  tx.commit();
  return e;
}

std::vector<Store::GateEvent> Store::gate_events() {
  sql::Stmt s(db_,
              "SELECT id, gate_id, action, reason, author, at, via FROM gate_result_events "
              "ORDER BY id");
  std::vector<GateEvent> out;
  while (s.step())
    out.push_back({s.int64(0), s.int64(1), s.text(2), s.text(3), s.text(4), s.text(5), s.text(6)});
  return out;
}

}  // namespace pg::store
