// Store::cached_views / put_cached_views: the view_cache table (schema step 3), derived data that
// `perfgate serve` keeps so a restart on a large store answers at once (docs/WEB.md, "Start-up").
#include "store/store_internal.h"

namespace pg::store {

std::optional<Store::CachedView> Store::cached_view(int64_t series_id,
                                                    const std::string& view_key) {
  sql::Stmt s(db_,
              "SELECT cells, last_cell_id, body FROM view_cache WHERE series_id = ?1 AND "
              "view_key = ?2");
  s.bind(1, series_id);
  s.bind(2, view_key);
  if (!s.step()) return std::nullopt;
  return CachedView{series_id, {s.int64(0), s.int64(1)}, s.blob(2)};
}

void Store::put_cached_views(const std::vector<std::pair<std::string, CachedView>>& rows) {
  if (rows.empty()) return;
  sql::Transaction tx(db_);
  sql::Stmt s(db_,
              "INSERT OR REPLACE INTO view_cache (series_id, view_key, cells, last_cell_id, body) "
              "VALUES (?1, ?2, ?3, ?4, ?5)");
  for (const auto& [key, v] : rows) {
    s.reset();
    s.bind(1, v.series_id);
    s.bind(2, key);
    s.bind(3, v.version.cells);
    s.bind(4, v.version.last_cell_id);
    s.bind_blob(5, v.body);
    s.run();
  }
  tx.commit();
}

}  // namespace pg::store
