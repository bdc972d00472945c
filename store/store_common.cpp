#include <chrono>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "core/cell_key_io.h"
#include "store/store_internal.h"

namespace pg::store::detail {

std::string env_fingerprint_json(const Environment& env) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : env) j[k] = v;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string env_comparable_json(const Environment& env) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& field : comparable_env_fields()) {
    auto it = env.find(field);
    if (it != env.end()) j[field] = it->second;
  }
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Environment env_from_json(const std::string& text) {
  Environment env;
  const auto j = nlohmann::json::parse(text);
  for (const auto& [k, v] : j.items()) env[k] = v.get<std::string>();
  return env;
}

int64_t ensure_environment(sqlite3* db, const Environment& env) {
  const std::string fp = env_fingerprint_json(env);
  sql::Stmt ins(db,
                "INSERT INTO environments(fingerprint, comparable) VALUES(?1, ?2) "
                "ON CONFLICT(fingerprint) DO NOTHING");
  ins.bind(1, fp).bind(2, env_comparable_json(env)).run();
  sql::Stmt sel(db, "SELECT id FROM environments WHERE fingerprint = ?1");
  sel.bind(1, fp);
  if (!sel.step()) sql::fail(db, "environment row vanished");
  return sel.int64(0);
}

void bind_key(sql::Stmt& s, int first, const CellKey& k) {
  int i = first;
  for (const KeyField& f : kKeyFields) {
    switch (f.kind) {
      case KeyFieldKind::text:
        s.bind(i++, k.*f.text);
        break;
      case KeyFieldKind::integer:
        s.bind(i++, k.*f.integer);
        break;
      case KeyFieldKind::flag:
        s.bind(i++, k.*f.flag);
        break;
    }
  }
}

CellKey read_key(const sql::Stmt& s, int first) {
  CellKey k;
  int i = first;
  for (const KeyField& f : kKeyFields) {
    switch (f.kind) {
      case KeyFieldKind::text:
        k.*f.text = s.text(i++);
        break;
      case KeyFieldKind::integer:
        k.*f.integer = s.integer(i++);
        break;
      case KeyFieldKind::flag:
        k.*f.flag = s.int64(i++) != 0;
        break;
    }
  }
  return k;
}

int64_t ensure_series(sqlite3* db, const CellKey& key, const std::string& comparable_env) {
  static const std::string env_param = std::to_string(1 + kKeyParams);
  static const std::string insert = "INSERT INTO series(" + cell_key_sql_columns() +
                                    ", comparable_env) VALUES(" + cell_key_sql_placeholders(1) +
                                    ", ?" + env_param + ") ON CONFLICT DO NOTHING";
  static const std::string select = "SELECT id FROM series WHERE " + cell_key_sql_match(1) +
                                    " AND comparable_env = ?" + env_param;
  sql::Stmt ins(db, insert);
  bind_key(ins, 1, key);
  ins.bind(1 + kKeyParams, comparable_env).run();
  sql::Stmt sel(db, select);
  bind_key(sel, 1, key);
  sel.bind(1 + kKeyParams, comparable_env);
  if (!sel.step()) sql::fail(db, "series row vanished");
  return sel.int64(0);
}

std::string new_run_uuid(sqlite3* db) {
  // SQLite's randomness, seeded from the kernel (/dev/urandom) in every process: unpredictable,
  // so two stores, or two processes of one, never pick the same id in practice. The same source
  // gives the runs stored before schema step 6 theirs.
  sql::Stmt s(db, "SELECT lower(hex(randomblob(16)))");
  if (!s.step()) sql::fail(db, "randomblob");
  return s.text(0);
}

}  // namespace pg::store::detail
