// Helpers shared by the store's translation units; not part of the public API.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/utc_time.h"
#include "store/sqlite_db.h"
#include "store/store.h"

namespace pg::store::detail {

using pg::now_iso8601;

// Throws UsageError unless `action` is a triage action: acknowledge, dismiss, fix or reopen.
void check_triage_action(const std::string& action);
// Throws UsageError unless `via` says how a triage event's author was authenticated: typed, token,
// header or legacy (Store::RegressionEvent).
void check_triage_via(const std::string& via);

// Canonical JSON (sorted keys) of the whole fingerprint, and of its comparable subset.
std::string env_fingerprint_json(const Environment& env);
std::string env_comparable_json(const Environment& env);
Environment env_from_json(const std::string& json);

// Find-or-create; return the row id.
int64_t ensure_environment(sqlite3* db, const Environment& env);
int64_t ensure_series(sqlite3* db, const CellKey& key, const std::string& comparable_env);

// Inserts the run row only (no cells); fills started_at if empty, and the uuid with a new one if
// the run has none. Returns its id.
int64_t insert_run_row(sqlite3* db, const Run& run);

// A fresh run uuid: 128 random bits as 32 lowercase hex digits.
std::string new_run_uuid(sqlite3* db);

// Writes one cell with its metrics and samples; statements prepared once per writer.
class CellWriter {
 public:
  explicit CellWriter(sqlite3* db);
  int64_t write(int64_t run_id, int ordinal, const std::string& comparable_env,
                const CellResult& cell);

 private:
  sqlite3* db_;
  sql::Stmt cell_, metric_, sample_, rep_;
};

// A cell's profile rows (store_profile.cpp); the loader fills the profiles of the cells in
// `cell_by_id` selected by `where` (load_runs' fragment over alias r), its parameters bound by
// `bind`.
void write_profile(sqlite3* db, int64_t cell_id, const CellProfile& profile);
void load_profiles(sqlite3* db, const std::string& where,
                   const std::function<void(sql::Stmt&)>& bind,
                   const std::unordered_map<int64_t, CellResult*>& cell_by_id);

// Bulk loader: every run matching one fixed WHERE fragment over alias `r` with its bound
// parameters (?1; id_range also ?2, from "LO:HI"). The fragment is a constant of ours, never
// built from input.
enum class RunSelect { all, by_id, by_commit, id_range };
std::vector<Run> load_runs(sqlite3* db, RunSelect sel, const std::string& param,
                           const RunFilter& f);

// The key's columns in core/cell_key.h's field order (core/cell_key_io.h writes the SQL text).
inline constexpr int kKeyParams = static_cast<int>(kKeyFields.size());
void bind_key(sql::Stmt& s, int first, const CellKey& k);  // kKeyParams parameters from `first`
CellKey read_key(const sql::Stmt& s, int first);           // kKeyParams columns from `first`

}  // namespace pg::store::detail
