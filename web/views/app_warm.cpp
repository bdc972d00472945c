// App::warm, the background warmer and the view cache: what `perfgate serve` does so that the
// overview of a large store answers at once, and says which series are still being computed
// (docs/WEB.md, "Start-up"; figures in docs/PERFORMANCE.md).

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <thread>

#include "web/views/app.h"
#include "web/views/view_codec.h"

namespace pg::web {

namespace {
// Set on the threads of a warm() pass: their views are written to the view cache at its end.
thread_local bool tl_batch_persist = false;
}  // namespace

namespace {
// Runs work(i) for i in [0, n) on up to `threads` threads; each thread has its own database
// connection (App::store()).
void parallel_for(size_t n, unsigned threads, const std::atomic<bool>& stop,
                  const std::function<void(size_t)>& work) {
  std::atomic<size_t> next{0};
  auto loop = [&] {
    tl_batch_persist = true;
    for (size_t i; !stop && (i = next.fetch_add(1)) < n;) work(i);
    tl_batch_persist = false;
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads && t < n; ++t) pool.emplace_back(loop);
  loop();
  for (auto& t : pool) t.join();
}
}  // namespace

void App::warm(const std::atomic<bool>& stop, unsigned threads, uint64_t gen) {
  const std::string branch = main_branch(gen);
  auto list = series_list(gen);
  // First look: views still valid, or kept in the store's view cache, cost no computation.
  std::vector<char> missing(list->size(), 0);
  parallel_for(list->size(), threads, stop, [&](size_t i) {
    if (view_for((*list)[i].id, Metric::tpot_ms, gen, branch, false, nullptr))
      progress_cv_.notify_all();
    else
      missing[i] = 1;
  });
  // The rest is computed, reading the series of one environment together: the same runs
  // measured them, so their cells share pages.
  std::map<Environment, std::vector<int64_t>> by_env;
  size_t n_missing = 0;
  for (size_t i = 0; i < list->size(); ++i)
    if (missing[i]) by_env[(*list)[i].env].push_back((*list)[i].id), ++n_missing;
  // At most a share of the work per group, so that every thread has some even when one
  // environment holds all the series.
  const size_t most = std::max<size_t>(1, (n_missing + 2 * threads - 1) / (2 * threads));
  std::vector<std::vector<int64_t>> groups;
  for (auto& [env, ids] : by_env)
    for (size_t at = 0; at < ids.size(); at += most)
      groups.emplace_back(ids.begin() + static_cast<ptrdiff_t>(at),
                          ids.begin() + static_cast<ptrdiff_t>(std::min(ids.size(), at + most)));
  parallel_for(groups.size(), threads, stop, [&](size_t g) {
    // Of the stored metrics, the tpot view reads tpot_ms only (cells without repetitions).
    auto samples = store().series_samples_of(groups[g], {metric_info(Metric::tpot_ms).name});
    for (int64_t id : groups[g]) {
      if (stop) return;
      if (opt_.before_warm_view) opt_.before_warm_view(id);
      view_for(id, Metric::tpot_ms, gen, branch, true, &samples[id]);
      samples.erase(id);
      progress_cv_.notify_all();
    }
  });
  flush_persist();
}

void App::warm_loop(const std::atomic<bool>& stop, unsigned threads,
                    const std::function<void()>& after_first_pass) {
  {
    std::lock_guard lk(warm_mutex_);
    warm_loop_running_ = true;
  }
  // However the loop ends (stop, or an exception the caller reports), pages stop counting on it
  // and compute what they need themselves.
  struct Ended {
    App& app;
    ~Ended() {
      std::lock_guard lk(app.warm_mutex_);
      app.warm_loop_running_ = false;
      app.warm_wanted_ = 0;
      app.progress_cv_.notify_all();
    }
  } ended{*this};
  uint64_t done = 0;
  while (!stop) {
    const uint64_t gen = generation();
    warm(stop, threads, gen);
    if (done == 0 && after_first_pass && !stop) after_first_pass();
    done = gen;
    std::unique_lock lk(warm_mutex_);
    warm_cv_.wait(lk, [&] { return stop || warm_wanted_ > done; });
  }
}

void App::request_warm(uint64_t gen) {
  std::lock_guard lk(warm_mutex_);
  warm_wanted_ = std::max(warm_wanted_, gen);
  warm_cv_.notify_all();
}

void App::wake_warmer() {
  std::lock_guard lk(warm_mutex_);
  warm_cv_.notify_all();
}

std::shared_ptr<const SeriesView> App::ready_view(int64_t id, uint64_t gen,
                                                  const std::string& branch) {
  std::shared_ptr<ViewSlot> slot;
  {
    std::lock_guard lk(slots_mutex_);
    auto it = view_slots_.find({id, Metric::tpot_ms, branch});
    if (it == view_slots_.end()) return nullptr;
    slot = it->second;
  }
  std::unique_lock lk(slot->m, std::try_to_lock);
  if (!lk.owns_lock() || !slot->view) return nullptr;  // being computed, or never was
  if (slot->generation >= gen) return slot->view;
  // Computed for an older generation: still this series' view only if no cell came since.
  auto known = versions(gen);
  auto it = known->find(id);
  if (it == known->end() || !(it->second == slot->version)) return nullptr;
  slot->generation = gen;
  return slot->view;
}

App::ViewsProgress App::default_views_by(uint64_t gen,
                                         std::chrono::steady_clock::time_point deadline) {
  // A warmer runs, or serve asked for one that has not started yet (request_warm before it).
  auto warmer = [this] {
    std::lock_guard lk(warm_mutex_);
    return warm_loop_running_ || warm_wanted_ > 0;
  };
  if (!warmer()) return {all_views(gen), {}};
  const std::string branch = main_branch(gen);
  auto list = series_list(gen);
  bool asked = false;
  for (;;) {
    ViewsProgress p;
    for (const store::SeriesInfo& s : *list)
      if (auto v = ready_view(s.id, gen, branch))
        p.ready.push_back(std::move(v));
      else
        p.pending.push_back(s);
    if (p.complete() || std::chrono::steady_clock::now() >= deadline) return p;
    if (!asked) request_warm(gen), asked = true;
    if (!warmer()) return {all_views(gen), {}};
    std::unique_lock lk(warm_mutex_);
    // Woken by each finished view; the cap re-checks a view a request (not the warmer) computed.
    progress_cv_.wait_until(
        lk, std::min(deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds(50)));
  }
}

std::shared_ptr<const SeriesView> App::cached_view(const store::SeriesInfo& info,
                                                   const store::Store::SeriesVersion& version,
                                                   const SeriesRules& rules) {
  auto row = store().cached_view(info.id, view_cache_key(Metric::tpot_ms, rules));
  if (!row || !(row->version == version)) return nullptr;
  auto view = decode_view(row->body, info, Metric::tpot_ms, rules);
  return view ? std::make_shared<const SeriesView>(std::move(*view)) : nullptr;
}

std::vector<stats::ChangePoint> App::kept_change_points(const store::SeriesInfo& info,
                                                        const store::Store::SeriesVersion& version,
                                                        const std::string& branch,
                                                        const std::vector<double>& medians,
                                                        const stats::ChangePointOptions& options) {
  const std::string key = change_points_cache_key(Metric::tpot_ms, branch, options);
  if (auto row = store().cached_view(info.id, key))
    if (auto kept = decode_change_points(row->body, medians)) return std::move(*kept);
  std::vector<stats::ChangePoint> found = stats::detect_change_points(medians, options);
  persist(key, {info.id, version, encode_change_points(medians, found)});
  return found;
}

void App::persist_view(const SeriesView& v, const store::Store::SeriesVersion& version) {
  // Written with the series' change points (queued while it was built) in one transaction.
  persist(view_cache_key(v.metric, v.rules), {v.info.id, version, encode_view(v)});
  if (!tl_batch_persist) flush_persist();
}

void App::persist(std::string key, store::Store::CachedView row) {
  std::lock_guard lk(persist_mutex_);
  if (!persist_failed_) persist_queue_.push_back({std::move(key), std::move(row)});
}

void App::flush_persist() {
  std::lock_guard lk(persist_mutex_);
  if (persist_failed_ || persist_queue_.empty()) return;
  auto rows = std::move(persist_queue_);
  persist_queue_.clear();
  try {
    if (!persist_store_) {
      persist_store_ = std::make_unique<store::Store>(opt_.db_path);
      // A runner or ingest holding the write lock wins: this write is only a convenience.
      persist_store_->set_busy_timeout(200);
    }
    persist_store_->put_cached_views(rows);
  } catch (const std::exception& e) {
    // Read-only file or mount, full disk: say it once, then stop trying.
    std::fprintf(stderr, "perfgate serve: not keeping computed views in the database (%s)\n",
                 e.what());
    persist_failed_ = true;
  }
}

}  // namespace pg::web
