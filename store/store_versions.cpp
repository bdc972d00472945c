// Small reads for web/: Store::series_versions (its per-series caches: one pass over the
// cells_series index) and the latest run's git remote (commit links).
#include "store/store_internal.h"

namespace pg::store {

std::map<int64_t, Store::SeriesVersion> Store::series_versions() {
  std::map<int64_t, SeriesVersion> out;
  sql::Stmt s(db_, "SELECT series_id, count(*), max(id) FROM cells GROUP BY series_id");
  while (s.step()) out[s.int64(0)] = SeriesVersion{s.int64(1), s.int64(2)};
  return out;
}

std::optional<std::string> Store::latest_git_remote() {
  sql::Stmt s(db_,
              "SELECT git_remote FROM runs WHERE git_remote IS NOT NULL ORDER BY id DESC LIMIT 1");
  if (!s.step()) return std::nullopt;
  return s.opt_text(0);
}

}  // namespace pg::store
