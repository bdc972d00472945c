#include <chrono>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "store/store_internal.h"

namespace pg::detail {

std::string now_iso8601() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

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

void bind_key(sql::Stmt& s, int i, const CellKey& k) {
  s.bind(i, k.model)
      .bind(i + 1, k.dtype)
      .bind(i + 2, k.batch_size)
      .bind(i + 3, k.seq_len)
      .bind(i + 4, k.gen_tokens)
      .bind(i + 5, k.kv_cache)
      .bind(i + 6, k.attention)
      .bind(i + 7, k.cuda_graphs)
      .bind(i + 8, k.device);
}

CellKey read_key(const sql::Stmt& s, int i) {
  CellKey k;
  k.model = s.text(i);
  k.dtype = s.text(i + 1);
  k.batch_size = s.integer(i + 2);
  k.seq_len = s.integer(i + 3);
  k.gen_tokens = s.integer(i + 4);
  k.kv_cache = s.int64(i + 5) != 0;
  k.attention = s.text(i + 6);
  k.cuda_graphs = s.int64(i + 7) != 0;
  k.device = s.text(i + 8);
  return k;
}

int64_t ensure_series(sqlite3* db, const CellKey& key, const std::string& comparable_env) {
  static constexpr const char* kKeyMatch =
      "model = ?1 AND dtype = ?2 AND batch_size = ?3 AND seq_len = ?4 AND gen_tokens = ?5 AND "
      "kv_cache = ?6 AND attention = ?7 AND cuda_graphs = ?8 AND device = ?9 AND "
      "comparable_env = ?10";
  sql::Stmt ins(db,
                "INSERT INTO series(model, dtype, batch_size, seq_len, gen_tokens, kv_cache, "
                "attention, cuda_graphs, device, comparable_env) "
                "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) ON CONFLICT DO NOTHING");
  bind_key(ins, 1, key);
  ins.bind(10, comparable_env).run();
  sql::Stmt sel(db, std::string("SELECT id FROM series WHERE ") + kKeyMatch);
  bind_key(sel, 1, key);
  sel.bind(10, comparable_env);
  if (!sel.step()) sql::fail(db, "series row vanished");
  return sel.int64(0);
}

std::string content_canonical(const Run& run) {
  using nlohmann::json;
  json cells = json::array();
  for (const auto& c : run.cells) {
    const auto& k = c.key;
    json metrics = json::object();
    for (const auto& [n, v] : c.metrics) metrics[n] = v;
    cells.push_back({{"key",
                      {k.model, k.dtype, k.batch_size, k.seq_len, k.gen_tokens, k.kv_cache,
                       k.attention, k.cuda_graphs, k.device}},
                     {"status", to_string(c.status)},
                     {"reason", c.reason ? json(*c.reason) : json(nullptr)},
                     {"metrics", metrics},
                     {"prefill", c.samples.prefill_ms},
                     {"decode", c.samples.decode_ms}});
  }
  json env = json::object();
  for (const auto& [k, v] : run.env) env[k] = v;
  json j = {{"commit", run.git.commit ? json(*run.git.commit) : json(nullptr)},
            {"env", env},
            {"cells", cells}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string content_hash(const std::string& canonical) {
  // FNV-1a, 64 bit: an index key only; candidates are confirmed by comparing canonical forms.
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : canonical) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace pg::detail
