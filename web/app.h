// The state the request handlers share: options, the per-thread database connection, the
// generation counter and the caches of computed views.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "store/store.h"
#include "web/cache.h"
#include "web/series_view.h"
#include "web/server.h"

namespace pg::web {

struct CommitCatalog;
struct CompareView;

class App {
 public:
  explicit App(ServeOptions opt);
  const ServeOptions& options() const { return opt_; }

  // This thread's connection to the database (one per worker thread: a Store is not thread-safe,
  // and WAL lets all of them read while one writer -- a runner, or ingest -- commits).
  Store& store();
  // The current data generation, after checking whether another connection committed since this
  // thread last looked.
  uint64_t generation();
  // After a write through this process's own connection (which data_version does not report).
  void note_write() { generation_.fetch_add(1); }

  std::shared_ptr<const std::vector<SeriesInfo>> series_list(uint64_t gen);
  // nullptr when there is no such series.
  std::shared_ptr<const SeriesView> series_view(int64_t id, Metric m, uint64_t gen);
  // Every series' tpot view, in series id order.
  std::vector<std::shared_ptr<const SeriesView>> all_views(uint64_t gen);

  GenerationCache<CachedBody>& body_cache() { return bodies_; }
  GenerationCache<CommitCatalog>& catalog_cache() { return catalogs_; }
  GenerationCache<CompareView>& compare_cache() { return compares_; }

 private:
  ServeOptions opt_;
  uint64_t serial_;  // tells this App's thread-local connections from an earlier App's
  std::atomic<uint64_t> generation_{1};
  GenerationCache<std::vector<SeriesInfo>> series_list_{4};
  GenerationCache<SeriesView> views_{8192};
  GenerationCache<CachedBody> bodies_{2048};
  GenerationCache<CommitCatalog> catalogs_{4};
  GenerationCache<CompareView> compares_{256};
};

}  // namespace pg::web
