// The start-up view cache (docs/WEB.md, "Start-up"): serve keeps each series' default view in the
// database; a restart uses it while the series is unchanged, and a series that gains a cell is
// computed again, never served from an older row.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "seed_data.h"
#include "store/store.h"
#include "tests/common/sqlite_query.h"
#include "web_test_util.h"

namespace pg::webtest {
namespace {

int64_t count(const std::string& db, const char* sql) {
  Store s(db);
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

TEST(ViewCache, KeptAtFirstStartUsedAtRestartRecomputedWhenTheSeriesGrows) {
  TempDir dir;
  const std::string db = dir.file("cache.db");
  SeedSpec spec;
  spec.commits = 12;
  spec.step_at = 8;
  {
    Store s(db);
    s.import_runs(make_runs(spec));
  }
  const std::string first = body(db, "/api/v1/series");
  const int64_t series = count(db, "SELECT count(*) FROM series");
  ASSERT_GT(series, 0);
  EXPECT_EQ(count(db, "SELECT count(*) FROM view_cache"), series);
  // Restart: the same answer, from the kept rows.
  EXPECT_EQ(body(db, "/api/v1/series"), first);
  // A new commit: every series gains a cell, so none of the rows may be used as it is.
  {
    Store s(db);
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
            series);
}

}  // namespace
}  // namespace pg::webtest
