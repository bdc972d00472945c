// Accepted slowdowns (schema step 10, docs/STORE.md "Accepted slowdowns"). Append-only: an
// acceptance is never updated or deleted; a revocation is a later row naming it.
#include <sqlite3.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "core/cell_key_io.h"
#include "store/store_internal.h"

namespace pg::store {
namespace {

void check_acceptance_via(const std::string& via) {
  if (via != "cli" && via != "token" && via != "header" && via != "legacy")
    throw UsageError("via '" + via + "': expected cli, token, header or legacy");
}

std::string cells_json(const std::vector<Store::AcceptedCell>& cells) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : cells)
    out.push_back({{"key", cell_key_to_json(c.key)}, {"metric", c.metric}, {"ratio", c.ratio}});
  return out.dump();
}

std::vector<Store::AcceptedCell> cells_from_json(const std::string& text) {
  std::vector<Store::AcceptedCell> out;
  for (const auto& c : nlohmann::json::parse(text))
    out.push_back({cell_key_from_json(c.at("key"), "/cells/key"), c.at("metric").get<std::string>(),
                   c.at("ratio").get<double>()});
  return out;
}

int64_t insert(sqlite3* db, const std::string& action, const std::string& ref,
               std::optional<int64_t> gate_id, std::optional<int64_t> revokes,
               const std::string& cells, const std::string& reason, const std::string& author,
               const std::string& via, const std::string& at) {
  sql::Stmt s(db,
              "INSERT INTO acceptances (action, ref, gate_id, revokes, cells, reason, author, via, "
              "at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  s.bind(1, action);
  s.bind(2, ref);
  if (gate_id) s.bind(3, *gate_id);
  if (revokes) s.bind(4, *revokes);
  s.bind(5, cells);
  s.bind(6, reason);
  s.bind(7, author);
  s.bind(8, via);
  s.bind(9, at);
  s.step();
  return sqlite3_last_insert_rowid(db);
}

}  // namespace

Store::Acceptance Store::add_acceptance(Acceptance a) {
  if (a.ref.empty()) throw UsageError("ref: an acceptance names the ref it is for");
  if (a.reason.empty()) throw UsageError("reason: an acceptance says why the slowdown is accepted");
  if (a.author.empty()) throw UsageError("author must not be empty");
  if (a.cells.empty()) throw UsageError("cells: an acceptance accepts at least one cell");
  for (const AcceptedCell& c : a.cells)
    if (!(c.ratio > 0.0 && std::isfinite(c.ratio)))
      throw UsageError("cells: ratio must be a finite number > 0");
  check_acceptance_via(a.via);
  if (a.gate_id && gate_results(*a.gate_id - 1, 1).empty())
    throw UsageError("gate_id: no stored gate result " + std::to_string(*a.gate_id));
  a.at = detail::now_iso8601();
  a.revoked_by.reset();
  sql::Transaction tx(db_);
  a.id = insert(db_, "accept", a.ref, a.gate_id, std::nullopt, cells_json(a.cells), a.reason,
                a.author, a.via, a.at);
  tx.commit();
  return a;
}

Store::Acceptance Store::revoke_acceptance(int64_t id, const std::string& reason,
                                           const std::string& author, const std::string& via) {
  if (reason.empty()) throw UsageError("reason: a revocation says why");
  check_acceptance_via(via);
  for (Acceptance& a : acceptances()) {
    if (a.id != id) continue;
    if (a.revoked_by)
      throw UsageError("acceptance " + std::to_string(id) + " was already revoked (by " +
                       a.revoked_author + " at " + a.revoked_at + ")");
    sql::Transaction tx(db_);
    a.revoked_at = detail::now_iso8601();
    a.revoked_by =
        insert(db_, "revoke", a.ref, std::nullopt, id, "[]", reason, author, via, a.revoked_at);
    tx.commit();
    a.revoked_reason = reason;
    a.revoked_author = author;
    return a;
  }
  throw UsageError("no acceptance with id " + std::to_string(id));
}

std::vector<Store::Acceptance> Store::acceptances(const std::string& ref) {
  sql::Stmt s(db_,
              "SELECT id, action, ref, gate_id, revokes, cells, reason, author, via, at FROM "
              "acceptances WHERE (?1 = '' OR ref = ?1) ORDER BY id");
  s.bind(1, ref);
  std::vector<Acceptance> out;
  std::map<int64_t, size_t> index;
  while (s.step()) {
    if (s.text(1) == "revoke") {
      auto it = index.find(s.int64(4));
      if (it == index.end()) continue;
      Acceptance& a = out[it->second];
      a.revoked_by = s.int64(0);
      a.revoked_reason = s.text(6);
      a.revoked_author = s.text(7);
      a.revoked_at = s.text(9);
      continue;
    }
    Acceptance a;
    a.id = s.int64(0);
    a.ref = s.text(2);
    if (!s.is_null(3)) a.gate_id = s.int64(3);
    a.cells = cells_from_json(s.text(5));
    a.reason = s.text(6);
    a.author = s.text(7);
    a.via = s.text(8);
    a.at = s.text(9);
    index[a.id] = out.size();
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace pg::store
