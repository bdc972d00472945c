#include "web/views/app.h"

#include "app/history.h"
#include "common/errors.h"
#include "common/git_remote.h"

namespace pg::web {

namespace {

std::atomic<uint64_t> next_app_serial{1};

struct ThreadConnection {
  uint64_t app_serial = 0;
  std::unique_ptr<store::Store> store;
};
thread_local ThreadConnection tl_conn;
// The connection a StoreLease lent this thread, and the App it belongs to.
thread_local const App* tl_lease_app = nullptr;
thread_local store::Store* tl_leased = nullptr;

// A connection of serve's. Not through a memory map (PRAGMA mmap_size), though that saves
// about 1 s of CPU at a first start on a 1 GB store: with a map, a disk read error kills the
// process (SIGBUS) instead of failing one request, and serve does not crash on bad storage.
std::unique_ptr<store::Store> open_connection(const std::string& path) {
  return std::make_unique<store::Store>(path);
}

}  // namespace

App::App(ServeOptions opt)
    : opt_(std::move(opt)),
      proxies_(opt_.trusted_proxy.empty() ? TrustedProxies{}
                                          : TrustedProxies::parse(opt_.trusted_proxy)),
      serial_(next_app_serial.fetch_add(1)) {
  // The server checked that the file is a perfgate database (Server::Server) before it made this.
  watcher_ = open_connection(opt_.db_path);
}

App::~App() = default;

App::StoreLease::StoreLease(App& app) : app_(app) {
  {
    std::lock_guard lk(app.pool_mutex_);
    if (!app.idle_stores_.empty()) {
      store_ = std::move(app.idle_stores_.back());
      app.idle_stores_.pop_back();
    }
  }
  if (!store_) store_ = open_connection(app.opt_.db_path);
  tl_lease_app = &app;
  tl_leased = store_.get();
}

App::StoreLease::~StoreLease() {
  tl_lease_app = nullptr;
  tl_leased = nullptr;
  std::lock_guard lk(app_.pool_mutex_);
  app_.idle_stores_.push_back(std::move(store_));
}

store::Store& App::store() {
  if (tl_lease_app == this) return *tl_leased;
  if (tl_conn.app_serial != serial_ || !tl_conn.store) {
    tl_conn.store.reset();
    tl_conn.store = open_connection(opt_.db_path);
    tl_conn.app_serial = serial_;
  }
  return *tl_conn.store;
}

uint64_t App::generation() {
  std::lock_guard lk(watch_mutex_);
  const int64_t v = watcher_->data_version();
  // -1 (the query failed, e.g. the file is gone): never trust the caches.
  if (v != last_data_version_ || v < 0) {
    last_data_version_ = v;
    generation_.fetch_add(1);
  }
  return generation_.load();
}

std::shared_ptr<const std::vector<store::SeriesInfo>> App::series_list(uint64_t gen) {
  return series_list_.get("all", gen, [this] {
    return std::make_shared<const std::vector<store::SeriesInfo>>(store().list_series());
  });
}

std::shared_ptr<const std::map<std::string, int64_t>> App::branches(uint64_t gen) {
  return branches_.get("all", gen, [this] {
    return std::make_shared<const std::map<std::string, int64_t>>(store().branch_run_counts());
  });
}

std::string App::repo_url(uint64_t gen) {
  if (!opt_.repo_url.empty()) return opt_.repo_url;
  return *repo_url_.get("all", gen, [this] {
    auto remote = store().latest_git_remote();
    auto web = remote ? remote_web_url(*remote) : std::nullopt;
    return std::make_shared<const std::string>(web.value_or(""));
  });
}

std::string App::main_branch(uint64_t gen) {
  if (!opt_.main_branch.empty()) return opt_.main_branch;  // without reading the branches
  return app::main_branch(*branches(gen));
}

std::shared_ptr<const SeriesView> App::series_view(int64_t id, Metric m, uint64_t gen,
                                                   std::optional<std::string> branch_opt) {
  return view_for(id, m, gen, branch_opt ? *branch_opt : main_branch(gen), true, nullptr);
}

std::shared_ptr<const SeriesView> App::view_for(int64_t id, Metric m, uint64_t gen,
                                                const std::string& branch, bool compute,
                                                std::vector<store::SeriesSample>* samples) {
  std::shared_ptr<ViewSlot> slot = slot_for(id, m, branch);
  std::lock_guard lk(slot->m);
  if (slot->view && slot->generation >= gen) return slot->view;
  auto known = versions(gen);
  auto it = known->find(id);
  const store::Store::SeriesVersion current =
      it == known->end() ? store::Store::SeriesVersion{} : it->second;
  if (slot->view && slot->version == current) {
    slot->generation = gen;
    return slot->view;
  }
  auto info = store().get_series(id);
  if (!info) {
    std::lock_guard lk2(slots_mutex_);
    view_slots_.erase({id, m, branch});
    return nullptr;
  }
  // The version is read before the samples (warm() reads them after its first look, which read
  // the versions): a cell committed in between makes the view newer than its version, and the
  // next look recomputes once more -- never the other way round.
  const SeriesRules rules{opt_.gate_settings.gate.alpha, opt_.gate_settings.gate.min_effect,
                          branch};
  // The default view (what the overview and the regressions need of every series) is kept in
  // the store's view cache: a restart reads it instead of recomputing (app_warm.cpp).
  const bool cached_kind = m == Metric::tpot_ms && branch == main_branch(gen);
  std::shared_ptr<const SeriesView> view =
      cached_kind ? cached_view(*info, current, rules) : nullptr;
  if (!view && !compute) return nullptr;
  if (!view) {
    decltype(app::HistoryOptions::detect) detect;
    if (cached_kind)
      detect = [&](const std::vector<double>& medians, const stats::ChangePointOptions& o) {
        return kept_change_points(*info, current, branch, medians, o);
      };
    view = std::make_shared<const SeriesView>(build_series_view(
        *info, samples ? std::move(*samples) : store().series_samples(id, /*with_samples=*/false),
        m, rules, std::move(detect)));
    if (cached_kind) persist_view(*view, current);
  }
  slot->view = std::move(view);
  slot->version = current;
  slot->generation = gen;
  return slot->view;
}

std::shared_ptr<const std::map<int64_t, store::Store::SeriesVersion>> App::versions(uint64_t gen) {
  return versions_.get("all", gen, [this] {
    return std::make_shared<const std::map<int64_t, store::Store::SeriesVersion>>(
        store().series_versions());
  });
}

std::shared_ptr<App::ViewSlot> App::slot_for(int64_t id, Metric m, const std::string& branch) {
  std::lock_guard lk(slots_mutex_);
  auto& s = view_slots_[{id, m, branch}];
  // Ids a client made up get no slot once they prove unknown (series_view), so this stays bounded
  // by the real series times the metrics.
  if (!s) s = std::make_shared<ViewSlot>();
  return s;
}

std::vector<std::shared_ptr<const SeriesView>> App::all_views(uint64_t gen,
                                                              std::optional<std::string> branch) {
  if (!branch) branch = main_branch(gen);
  std::vector<std::shared_ptr<const SeriesView>> out;
  for (const store::SeriesInfo& s : *series_list(gen))
    if (auto v = series_view(s.id, Metric::tpot_ms, gen, branch)) out.push_back(std::move(v));
  return out;
}

}  // namespace pg::web
