// The state the request handlers share: options, the per-thread database connection, the
// generation counter and the caches of computed views.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "store/store.h"
#include "web/http/serve_options.h"
#include "web/http/trusted_proxy.h"
#include "web/views/cache.h"
#include "web/views/series_view.h"

namespace pg::web {

struct CommitCatalog;
struct CompareView;
struct RegressionsModel;

class App {
 public:
  explicit App(ServeOptions opt);
  ~App();
  App(const App&) = delete;
  App& operator=(const App&) = delete;
  const ServeOptions& options() const { return opt_; }
  // Where serve takes the auth header from (ServeOptions::trusted_proxy, parsed once).
  const TrustedProxies& trusted_proxies() const { return proxies_; }

  // This thread's connection to the database: the one its StoreLease lent it, else one of its own
  // (a Store is not thread-safe, and WAL lets all of them read while one writer -- a runner, or
  // ingest -- commits).
  store::Store& store();
  // Lends the calling thread a connection from a pool for the lease's lifetime. Connection threads
  // come and go with their clients; the database connections stay open in the pool, at most one
  // per request handled at a time.
  class StoreLease {
   public:
    explicit StoreLease(App& app);
    ~StoreLease();
    StoreLease(const StoreLease&) = delete;
    StoreLease& operator=(const StoreLease&) = delete;

   private:
    App& app_;
    std::unique_ptr<store::Store> store_;
  };
  // The current data generation: moves whenever anything -- a runner in another process, or this
  // server's own ingest -- committed to the database since the last look.
  uint64_t generation();
  // After a write through one of this process's connections (the watcher would notice it on the
  // next request anyway; this makes it certain before the response goes out).
  void note_write() { generation_.fetch_add(1); }

  std::shared_ptr<const std::vector<store::SeriesInfo>> series_list(uint64_t gen);
  // nullptr when there is no such series. After new data, only the series whose cells changed are
  // recomputed (Store::series_versions); the others keep their view.
  // `branch`: the commits drawn (SeriesRules::branch), the main branch when not given; the gate
  // settings come from the options.
  std::shared_ptr<const SeriesView> series_view(int64_t id, Metric m, uint64_t gen,
                                                std::optional<std::string> branch = {});
  // Makes every series' default view (tpot_ms, main branch) ready for `gen`, on up to `threads`
  // threads: from the store's view cache where the series has not changed since the view was
  // kept, else computed (and kept for the next start, in one write at the end). Stops early when
  // `stop` is set.
  void warm(const std::atomic<bool>& stop, unsigned threads, uint64_t gen);
  // serve's background warmer (app_warm.cpp): warms at once, then again whenever a page asked
  // for views of a newer generation (request_warm), until `stop` is set and wake_warmer called.
  // `after_first_pass` runs once the first pass is done (serve: the chart bundle's gzip).
  void warm_loop(const std::atomic<bool>& stop, unsigned threads,
                 const std::function<void()>& after_first_pass = {});
  void request_warm(uint64_t gen);
  void wake_warmer();
  // The default views as far as they are computed for `gen` by `deadline`: what the overview
  // shows at once on a store whose views are still being computed (docs/WEB.md, "Start-up"). A
  // series whose view is not ready -- never computed, or computed before its latest cells -- is in
  // `pending`, never shown from an older computation. Without a background warmer (no warm_loop
  // running) it computes every view before it returns, like all_views.
  struct ViewsProgress {
    std::vector<std::shared_ptr<const SeriesView>> ready;  // series id order
    std::vector<store::SeriesInfo> pending;                // series id order
    bool complete() const { return pending.empty(); }
  };
  ViewsProgress default_views_by(uint64_t gen, std::chrono::steady_clock::time_point deadline);
  // Every series' tpot view, in series id order.
  std::vector<std::shared_ptr<const SeriesView>> all_views(uint64_t gen,
                                                           std::optional<std::string> branch = {});
  // --main-branch, else "main", else "master", else the branch with the most runs; empty when no
  // run names a branch (then nothing is filtered).
  std::string main_branch(uint64_t gen);
  // The repository's web URL for commit links: --repo-url when given, else the one the latest
  // run's git remote names (common/git_remote.h); empty when neither is known.
  std::string repo_url(uint64_t gen);
  // Branch name -> runs, for the branch filter.
  std::shared_ptr<const std::map<std::string, int64_t>> branches(uint64_t gen);

  GenerationCache<CachedBody>& body_cache() { return bodies_; }
  GenerationCache<CommitCatalog>& catalog_cache() { return catalogs_; }
  GenerationCache<CompareView>& compare_cache() { return compares_; }
  GenerationCache<RegressionsModel>& regressions_cache() { return regressions_; }

 private:
  ServeOptions opt_;
  TrustedProxies proxies_;
  uint64_t serial_;  // tells this App's thread-local connections from an earlier App's
  std::atomic<uint64_t> generation_{1};
  std::mutex pool_mutex_;
  std::vector<std::unique_ptr<store::Store>> idle_stores_;
  // One connection that only asks its data version (Store::data_version), which changes whenever
  // another connection (any thread's, any process's) commits. A single watcher gives every thread
  // the same answer.
  std::mutex watch_mutex_;
  std::unique_ptr<store::Store> watcher_;
  int64_t last_data_version_ = -1;
  GenerationCache<std::vector<store::SeriesInfo>> series_list_{4};
  GenerationCache<std::map<std::string, int64_t>> branches_{4};
  GenerationCache<std::string> repo_url_{4};
  GenerationCache<std::map<int64_t, store::Store::SeriesVersion>> versions_{4};
  struct ViewSlot {
    std::mutex m;
    uint64_t generation = 0;
    store::Store::SeriesVersion version;
    std::shared_ptr<const SeriesView> view;
  };
  std::shared_ptr<ViewSlot> slot_for(int64_t id, Metric m, const std::string& branch);
  // series_view's work. compute = false: nullptr where it would have to compute (warm's first
  // look); `samples`: the series' samples, already read (warm reads several series at once).
  std::shared_ptr<const SeriesView> view_for(int64_t id, Metric m, uint64_t gen,
                                             const std::string& branch, bool compute,
                                             std::vector<store::SeriesSample>* samples);
  // The series' default view when it is ready for `gen`; nullptr (never blocks) when it is not,
  // or is being computed right now.
  std::shared_ptr<const SeriesView> ready_view(int64_t id, uint64_t gen, const std::string& branch);
  std::shared_ptr<const std::map<int64_t, store::Store::SeriesVersion>> versions(uint64_t gen);
  // Keeps a freshly computed default view in the store's view cache; best effort (a busy or
  // read-only database just means the next start computes it again).
  // Inside warm() the views are queued and written in one transaction at the end of the pass
  // (flush_persist): each write moves the data generation, and one move per pass is enough.
  void persist_view(const SeriesView& v, const store::Store::SeriesVersion& version);
  void persist(std::string key, store::Store::CachedView row);  // queued for the next flush_persist
  void flush_persist();
  // The series' change points of these medians: kept in the view cache under a key of their own
  // that the gate settings are not part of (view_codec.h), else computed and kept.
  std::vector<stats::ChangePoint> kept_change_points(const store::SeriesInfo& info,
                                                     const store::Store::SeriesVersion& version,
                                                     const std::string& branch,
                                                     const std::vector<double>& medians,
                                                     const stats::ChangePointOptions& options);
  // The kept view when it was made from `version` of the series; else nullptr.
  std::shared_ptr<const SeriesView> cached_view(const store::SeriesInfo& info,
                                                const store::Store::SeriesVersion& version,
                                                const SeriesRules& rules);
  std::mutex persist_mutex_;
  std::unique_ptr<store::Store> persist_store_;
  bool persist_failed_ = false;
  std::vector<std::pair<std::string, store::Store::CachedView>> persist_queue_;  // key, row
  // The background warmer: the newest generation a page wanted, whether a loop runs, and a
  // notification each time a view is ready (default_views_by waits on it).
  std::mutex warm_mutex_;
  std::condition_variable warm_cv_, progress_cv_;
  uint64_t warm_wanted_ = 0;
  bool warm_loop_running_ = false;
  std::mutex slots_mutex_;
  std::map<std::tuple<int64_t, Metric, std::string>, std::shared_ptr<ViewSlot>> view_slots_;
  GenerationCache<CachedBody> bodies_{2048};
  GenerationCache<CommitCatalog> catalogs_{4};
  GenerationCache<CompareView> compares_{256};
  GenerationCache<RegressionsModel> regressions_{4};
};

}  // namespace pg::web
