// Store::series_versions (added for web/'s per-series caches): one pass over the cells_series
// index.
#include "store/store_internal.h"

namespace pg {

std::map<int64_t, Store::SeriesVersion> Store::series_versions() {
  std::map<int64_t, SeriesVersion> out;
  sql::Stmt s(db_, "SELECT series_id, count(*), max(id) FROM cells GROUP BY series_id");
  while (s.step()) out[s.int64(0)] = SeriesVersion{s.int64(1), s.int64(2)};
  return out;
}

}  // namespace pg
