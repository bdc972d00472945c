// App::warm and the view cache: what `perfgate serve` does at start-up so that the overview of a
// large store answers at once (docs/WEB.md, "Start-up"; figures in docs/PERFORMANCE_WEB.md).
#include <sqlite3.h>

#include <cstdio>
#include <thread>

#include "web/app.h"
#include "web/view_codec.h"

namespace pg::web {

void App::warm(const std::atomic<bool>& stop, unsigned threads) {
  const uint64_t gen = generation();
  const std::string branch = main_branch(gen);
  auto list = series_list(gen);
  // Each thread has its own database connection (App::store()).
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; !stop && (i = next.fetch_add(1)) < list->size();)
      series_view((*list)[i].id, Metric::tpot_ms, gen, branch);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

std::shared_ptr<const SeriesView> App::cached_view(const SeriesInfo& info,
                                                   const Store::SeriesVersion& version,
                                                   const SeriesRules& rules) {
  auto row = store().cached_view(info.id, view_cache_key(Metric::tpot_ms, rules));
  if (!row || !(row->version == version)) return nullptr;
  auto view = decode_view(row->body, info, Metric::tpot_ms, rules);
  return view ? std::make_shared<const SeriesView>(std::move(*view)) : nullptr;
}

void App::persist_view(const SeriesView& v, const Store::SeriesVersion& version) {
  std::string body = encode_view(v);
  std::lock_guard lk(persist_mutex_);
  if (persist_failed_) return;
  try {
    if (!persist_store_) {
      persist_store_ = std::make_unique<Store>(opt_.db_path);
      // A runner or ingest holding the write lock wins: this write is only a convenience.
      sqlite3_busy_timeout(persist_store_->handle(), 200);
    }
    persist_store_->put_cached_views(view_cache_key(v.metric, v.rules),
                                     {{v.info.id, version, std::move(body)}});
  } catch (const std::exception& e) {
    // Read-only file or mount, full disk: say it once, then stop trying.
    std::fprintf(stderr, "perfgate serve: not keeping computed views in the database (%s)\n",
                 e.what());
    persist_failed_ = true;
  }
}

}  // namespace pg::web
