// The start-up view cache (docs/WEB.md, "Start-up"): serve keeps each series' default view in the
// database; a restart uses it while the series is unchanged, and a series that gains a cell is
// computed again, never served from an older row. The change points are kept beside the view,
// apart from the gate settings: a start with other settings reuses them.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "seed_data.h"
#include "store/store.h"
#include "tests/common/sqlite_query.h"
#include "web/views/view_codec.h"
#include "web_test_util.h"

namespace pg::webtest {
namespace {

int64_t count(const std::string& db, const char* sql) {
  store::Store s(db);
  return pg::testing::query_int(s.handle(), sql);
}

std::string body(const std::string& db, const std::string& target) {
  web::ServeOptions opt;
  opt.db_path = db;
  LiveServer s(opt);
  auto r = s.client()->Get(target);
  EXPECT_TRUE(r && r->status == 200) << target;
  return r ? r->body : "";
}

// A store at `db` holding the runs of `spec`.
void seed(const std::string& db, const SeedSpec& spec) {
  store::Store s(db);
  s.import_runs(make_runs(spec));
}

TEST(ViewCache, KeptAtFirstStartUsedAtRestartRecomputedWhenTheSeriesGrows) {
  TempDir dir;
  const std::string db = dir.file("cache.db");
  SeedSpec spec;
  spec.commits = 12;
  spec.step_at = 8;
  seed(db, spec);
  const std::string first = body(db, "/api/v1/series");
  const int64_t series = count(db, "SELECT count(*) FROM series");
  ASSERT_GT(series, 0);
  EXPECT_EQ(count(db, "SELECT count(*) FROM view_cache WHERE view_key NOT LIKE 'changes %'"),
            series);
  EXPECT_EQ(count(db, "SELECT count(*) FROM view_cache WHERE view_key LIKE 'changes %'"), series);
  // Restart: the same answer, from the kept rows.
  EXPECT_EQ(body(db, "/api/v1/series"), first);
  // A new commit: every series gains a cell, so none of the rows may be used as it is.
  {
    store::Store s(db);
    SeedSpec more = spec;
    more.commits = 1;
    more.first_commit = 12;
    s.import_runs(make_runs(more));
  }
  const std::string grown = body(db, "/api/v1/series");
  const auto before = nlohmann::json::parse(first)["series"];
  const auto after = nlohmann::json::parse(grown)["series"];
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < after.size(); ++i)
    EXPECT_EQ(after[i]["latest"]["points"].get<int>(), before[i]["latest"]["points"].get<int>() + 1)
        << "series " << after[i]["id"];
  EXPECT_EQ(count(db,
                  "SELECT count(*) FROM view_cache v JOIN (SELECT series_id, count(*) n FROM "
                  "cells GROUP BY series_id) c USING (series_id) WHERE v.cells = c.n"),
            2 * series);
}

// Sets every kept change point's p-value to `p` (the rows of the change points, not the views).
void mark_kept_change_points(const std::string& db, double p) {
  store::Store s(db);
  sqlite3* h = s.handle();
  std::vector<std::pair<std::string, std::string>> rows;  // rowid as text, new body
  sqlite3_stmt* q = nullptr;
  sqlite3_prepare_v2(h, "SELECT rowid, body FROM view_cache WHERE view_key LIKE 'changes %'", -1,
                     &q, nullptr);
  while (sqlite3_step(q) == SQLITE_ROW) {
    const auto* b = static_cast<const uint8_t*>(sqlite3_column_blob(q, 1));
    auto j = nlohmann::json::from_msgpack(b, b + sqlite3_column_bytes(q, 1));
    for (auto& c : j[2]) c[3] = p;
    const auto bytes = nlohmann::json::to_msgpack(j);
    rows.push_back({std::to_string(sqlite3_column_int64(q, 0)), {bytes.begin(), bytes.end()}});
  }
  sqlite3_finalize(q);
  for (const auto& [rowid, body] : rows) {
    sqlite3_prepare_v2(h, ("UPDATE view_cache SET body = ?1 WHERE rowid = " + rowid).c_str(), -1,
                       &q, nullptr);
    sqlite3_bind_blob(q, 1, body.data(), static_cast<int>(body.size()), SQLITE_TRANSIENT);
    EXPECT_EQ(sqlite3_step(q), SQLITE_DONE);
    sqlite3_finalize(q);
  }
}

std::vector<double> p_values(const std::string& db, double min_effect) {
  web::ServeOptions opt;
  opt.db_path = db;
  opt.gate_settings.gate.min_effect = min_effect;
  LiveServer s(opt);
  std::vector<double> out;
  const auto list = get_json(s, "/api/v1/series");
  for (const auto& series : list["series"]) {
    const auto view = get_json(s, "/api/v1/series/" + std::to_string(series["id"].get<int64_t>()));
    for (const auto& c : view["change_points"]) out.push_back(c["p_value"]);
  }
  return out;
}

TEST(ViewCache, ChangePointsAreReusedUnderOtherGateSettingsWhileTheMediansAreTheSame) {
  TempDir dir;
  const std::string db = dir.file("settings.db");
  SeedSpec spec;
  spec.commits = 16;
  spec.step_at = 8;
  seed(db, spec);
  const auto computed = p_values(db, 0.05);
  ASSERT_FALSE(computed.empty());
  for (double p : computed) EXPECT_NE(p, 0.123);
  // The kept answer is what a start under other settings shows: no view of these settings is
  // kept, so only the change points' own rows can have carried the marked p-values.
  mark_kept_change_points(db, 0.123);
  const auto reused = p_values(db, 0.04);
  EXPECT_EQ(reused.size(), computed.size());
  for (double p : reused) EXPECT_EQ(p, 0.123);
  // New data moves the medians: the kept rows no longer apply.
  {
    store::Store s(db);
    SeedSpec more = spec;
    more.commits = 1;
    more.first_commit = 16;
    s.import_runs(make_runs(more));
  }
  for (double p : p_values(db, 0.04)) EXPECT_NE(p, 0.123);
}

// encode_view writes MessagePack itself: every size class of its arrays, strings and integers
// must read back as the same view.
TEST(ViewCache, AViewReadsBackTheSameAcrossEveryMessagePackSizeClass) {
  web::SeriesView v;
  v.info.id = 7;
  const size_t n = 70000;  // past 15 and 65,535 points: fixarray, array16, array32
  for (size_t i = 0; i < n; ++i) {
    web::SeriesPoint p;
    p.commit = std::string(i % 3 == 0 ? 40 : 20, static_cast<char>('a' + i % 26));
    p.subject = i == 1 ? std::string(70000, 'x') : i == 2 ? std::string(300, 'y') : "";
    p.time = "2026-12-01T00:00:00Z";
    p.run_ids = {static_cast<int64_t>(i), 5'000'000'000 + static_cast<int64_t>(i), 200, 70000};
    p.median = 0.1 * static_cast<double>(i) - 3.0;
    p.spread = {-1.5, 0.25, 1e300, 1e-300, i};
    p.flag = i == 5 ? "regression" : "";
    v.points.push_back(std::move(p));
  }
  v.changes.push_back({5, v.points[5].commit, 1.0, 1.3, 0.3, 0.005, "regression", true});
  v.last_compare = web::LastCompare{"a", "b", "regression", std::nullopt, 0.01};
  v.status = web::SeriesStatus::regressed;
  v.skipped_cells = 300;
  auto back = web::decode_view(web::encode_view(v), v.info, v.metric, v.rules);
  ASSERT_TRUE(back);
  EXPECT_EQ(web::series_view_json(*back), web::series_view_json(v));
}

// A small view with every optional part present.
web::SeriesView small_view() {
  web::SeriesView v;
  v.info.id = 3;
  for (size_t i = 0; i < 12; ++i) {
    web::SeriesPoint p;
    p.commit = std::string(40, static_cast<char>('a' + i));
    p.subject = "commit " + std::to_string(i);
    p.time = "2026-12-01T00:00:00Z";
    p.run_ids = {static_cast<int64_t>(10 + i)};
    p.median = 2.5 + (i >= 6 ? 1.0 : 0.0) + 0.001 * static_cast<double>(i);
    p.spread = {-1.5, 0.25, 3.0, 4.125, i};
    v.points.push_back(std::move(p));
  }
  v.changes.push_back({6, v.points[6].commit, 2.5, 3.5, 0.4, 0.005, "regression", true});
  v.last_compare = web::LastCompare{"a", "b", "unchanged", 1.001, std::nullopt};
  v.status = web::SeriesStatus::steady;
  return v;
}

// Stores may hold views that nlohmann's to_msgpack wrote (float32 where a double fits exactly,
// the smallest integers): they read back as the same view.
TEST(ViewCache, AViewWrittenByNlohmannReadsBackTheSame) {
  const web::SeriesView v = small_view();
  const std::string ours = web::encode_view(v);
  const auto theirs = nlohmann::json::to_msgpack(nlohmann::json::from_msgpack(ours));
  ASSERT_NE(std::string(theirs.begin(), theirs.end()), ours);  // float32 for 2.5, -1.5, ...
  auto back = web::decode_view({reinterpret_cast<const char*>(theirs.data()), theirs.size()},
                               v.info, v.metric, v.rules);
  ASSERT_TRUE(back);
  EXPECT_EQ(web::series_view_json(*back), web::series_view_json(v));
}

// A damaged body (cut short anywhere, or with bytes after its end) is no view: recomputed, never a
// crash or a half-read view.
TEST(ViewCache, ADamagedBodyIsNoView) {
  const web::SeriesView v = small_view();
  const std::string body = web::encode_view(v);
  for (size_t n = 0; n < body.size(); ++n)
    EXPECT_FALSE(web::decode_view(std::string_view(body).substr(0, n), v.info, v.metric, v.rules))
        << "cut at " << n << " of " << body.size();
  EXPECT_FALSE(web::decode_view(body + '\x00', v.info, v.metric, v.rules));
  const std::vector<double> medians = {1.0, 2.0, 3.0};
  const std::string cps = web::encode_change_points(medians, {{1, 1.0, 2.5, 0.01}});
  ASSERT_TRUE(web::decode_change_points(cps, medians));
  for (size_t n = 0; n < cps.size(); ++n)
    EXPECT_FALSE(web::decode_change_points(std::string_view(cps).substr(0, n), medians));
  EXPECT_FALSE(web::decode_change_points(cps, {1.0, 2.0, 3.5}));  // other medians: not these
}

}  // namespace
}  // namespace pg::webtest
