#include "web/app.h"

#include <sqlite3.h>

namespace pg::web {

namespace {

std::atomic<uint64_t> next_app_serial{1};

struct ThreadConnection {
  uint64_t app_serial = 0;
  std::unique_ptr<Store> store;
  int64_t data_version = -1;
};
thread_local ThreadConnection tl_conn;

int64_t data_version(Store& s) {
  sqlite3_stmt* st = nullptr;
  int64_t v = -1;
  if (sqlite3_prepare_v2(s.handle(), "PRAGMA data_version", -1, &st, nullptr) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

}  // namespace

App::App(ServeOptions opt) : opt_(std::move(opt)), serial_(next_app_serial.fetch_add(1)) {}

Store& App::store() {
  if (tl_conn.app_serial != serial_ || !tl_conn.store) {
    tl_conn.store.reset();
    tl_conn.store = std::make_unique<Store>(opt_.db_path);
    tl_conn.app_serial = serial_;
    tl_conn.data_version = data_version(*tl_conn.store);
    // A connection opened now may see commits no other thread has noticed yet.
    generation_.fetch_add(1);
  }
  return *tl_conn.store;
}

uint64_t App::generation() {
  Store& s = store();
  const int64_t v = data_version(s);
  if (v != tl_conn.data_version) {
    tl_conn.data_version = v;
    generation_.fetch_add(1);
  }
  return generation_.load();
}

std::shared_ptr<const std::vector<SeriesInfo>> App::series_list(uint64_t gen) {
  return series_list_.get("all", gen, [this] {
    return std::make_shared<const std::vector<SeriesInfo>>(store().list_series());
  });
}

std::shared_ptr<const SeriesView> App::series_view(int64_t id, Metric m, uint64_t gen) {
  const std::string key = std::to_string(id) + "/" + metric_info(m).name;
  auto v = views_.get(key, gen, [&]() -> std::shared_ptr<const SeriesView> {
    auto info = store().get_series(id);
    if (!info) return nullptr;
    return std::make_shared<const SeriesView>(
        build_series_view(*info, store().series_samples(id, /*with_samples=*/false), m));
  });
  return v;
}

std::vector<std::shared_ptr<const SeriesView>> App::all_views(uint64_t gen) {
  std::vector<std::shared_ptr<const SeriesView>> out;
  for (const SeriesInfo& s : *series_list(gen))
    if (auto v = series_view(s.id, Metric::tpot_ms, gen)) out.push_back(std::move(v));
  return out;
}

}  // namespace pg::web
