// An alert stays until someone acts on it, or the series comes back (docs/WEB.md, "Regressions
// (alerts)"): a regression that a later, larger one stands in front of stays open, and one that a
// later change point returned to its old level is fixed, detected, unless a person reopened it --
// against a real database and a live server.
#include <gtest/gtest.h>

#include "store/store.h"
#include "web_fixture.h"

namespace pg::webtest {
namespace {

// 22 commits on main: tpot 30% slower from commit 8; from commit 15 `then` times the first level.
std::vector<Run> two_steps(double then) {
  SeedSpec first;
  first.commits = 22;
  first.step_at = 8;
  first.step_factor = 1.3;
  SeedSpec second = first;
  second.step_at = 15;
  second.step_factor = then;
  std::vector<Run> runs;
  for (int c = 0; c < first.commits; ++c)
    runs.push_back(make_run(c < 15 ? first : second, c, 0, 0));
  return runs;
}

class AlertLifecycle : public ::testing::Test {
 protected:
  // Serves the first `first` commits; add_up_to() brings more, as a runner would.
  void serve(double then, size_t first = 22) {
    runs_ = two_steps(then);
    db_ = dir_.file("alerts.db");
    store::Store(db_).import_runs(std::vector<pg::Run>(runs_.begin(), runs_.begin() + first));
    imported_ = first;
    web::ServeOptions opt;
    opt.db_path = db_;
    opt.token = kToken;
    server_ = std::make_unique<LiveServer>(opt);
  }
  // The alerts of the batch-1 series, oldest first bad commit first.
  std::vector<nlohmann::json> alerts() {
    std::vector<nlohmann::json> out;
    nlohmann::json list;
    EXPECT_TRUE(wait_for([&] {  // until every series view is computed
      list = get_json(*server_, "/api/v1/regressions");
      return list["complete"].get<bool>();
    }));
    for (const auto& a : list["regressions"])
      if (a["key"]["batch_size"] == 1) out.push_back(a);
    std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) {
      return x["commits_since"].template get<int>() > y["commits_since"].template get<int>();
    });
    return out;
  }
  void add_up_to(size_t commits) {
    store::Store(db_).import_runs(
        std::vector<pg::Run>(runs_.begin() + imported_, runs_.begin() + commits));
    imported_ = commits;
  }
  static std::string sha(int i) { return commit_sha(i, SeedSpec{}.seed); }
  TempDir dir_;
  std::string db_;
  std::vector<pg::Run> runs_;
  size_t imported_ = 0;
  std::unique_ptr<LiveServer> server_;
};

TEST_F(AlertLifecycle, ARegressionStaysOpenWhenALaterOneStandsInFrontOfIt) {
  serve(1.3 * 1.3);  // slower again from commit 15
  const auto a = alerts();
  ASSERT_EQ(a.size(), 2u) << nlohmann::json(a).dump();
  EXPECT_EQ(a[0]["commit"], sha(8));
  EXPECT_EQ(a[0]["state"], "open");
  EXPECT_EQ(a[0]["current"], false);
  EXPECT_EQ(a[1]["commit"], sha(15));
  EXPECT_EQ(a[1]["state"], "open");
  EXPECT_EQ(a[1]["current"], true);
}

// The "alerts vanish untriaged": the slowdown's first commit is flagged by the last two
// commits' compare; the next commits are neither a change point yet nor a regression against
// their parent, and the alert stays open until the change point takes it over.
TEST_F(AlertLifecycle, ALastTwoCommitsAlertStaysOpenUntilTheChangePointIsFound) {
  serve(1.3, 9);  // 30% slower from commit 8 on; the server sees commits 0-8
  auto a = alerts();
  ASSERT_EQ(a.size(), 1u) << nlohmann::json(a).dump();
  EXPECT_EQ(a[0]["commit"], sha(8));
  EXPECT_EQ(a[0]["source"], "last two commits");
  EXPECT_EQ(a[0]["current"], true);

  add_up_to(12);  // four slow commits: no change point yet, and no step between the last two
  a = alerts();
  ASSERT_EQ(a.size(), 1u) << nlohmann::json(a).dump();
  EXPECT_EQ(a[0]["commit"], sha(8));
  EXPECT_EQ(a[0]["state"], "open");
  EXPECT_EQ(a[0]["current"], false);
  EXPECT_EQ(get_json(*server_, "/api/v1/regressions")["open"], 2);  // and batch 4's
  // The series' own history is steady now; its badge and its document still show the alert.
  const auto series_id = a[0]["series_id"].get<int64_t>();
  std::string badge;
  const auto overview = get_json(*server_, "/api/v1/overview");
  for (const auto& g : overview["groups"])
    for (const auto& s : g["series"])
      if (s["id"] == series_id) badge = s["shown_status"];
  EXPECT_EQ(badge, "regressed");
  const auto doc = get_json(*server_, "/api/v1/series/" + std::to_string(series_id));
  ASSERT_EQ(doc["alerts"].size(), 1u);
  EXPECT_EQ(doc["alerts"][0]["state"], "open");

  add_up_to(22);  // the change point is found at the same commit: still one alert
  a = alerts();
  ASSERT_EQ(a.size(), 1u) << nlohmann::json(a).dump();
  EXPECT_EQ(a[0]["commit"], sha(8));
  EXPECT_EQ(a[0]["source"], "change point");
  EXPECT_EQ(a[0]["current"], true);
}

TEST_F(AlertLifecycle, ASeriesBackAtItsOldLevelIsFixedDetectedUnlessSomeoneReopensIt) {
  serve(1.0, 14);  // back to the old level from commit 15; the server sees commits 0-13 first
  auto a = alerts();
  ASSERT_EQ(a.size(), 1u) << nlohmann::json(a).dump();
  EXPECT_EQ(a[0]["commit"], sha(8));
  EXPECT_EQ(a[0]["state"], "open");
  EXPECT_EQ(a[0]["current"], true);

  // The slowdown ends: the whole series' change points no longer resolve it, the alert stays.
  add_up_to(runs_.size());
  a = alerts();
  ASSERT_EQ(a.size(), 1u) << nlohmann::json(a).dump();
  EXPECT_EQ(a[0]["commit"], sha(8));
  EXPECT_EQ(a[0]["state"], "fixed");
  EXPECT_EQ(a[0]["fixed_by"], sha(15));
  EXPECT_TRUE(a[0]["events"].empty());  // nobody acted
  const std::string page = get_page(*server_, "/regressions");
  EXPECT_NE(page.find("back to its old level from " + sha(15).substr(0, 10)), std::string::npos);

  // A person who knows better reopens it: it stays open.
  nlohmann::json body = {
      {"series_id", a[0]["series_id"]}, {"commit", sha(8)}, {"action", "reopen"}};
  httplib::Headers h = {{"Authorization", std::string("Bearer ") + kToken}};
  ASSERT_EQ(
      server_->client()->Post("/api/v1/regressions", h, body.dump(), "application/json")->status,
      201);
  a = alerts();
  EXPECT_EQ(a[0]["state"], "open");
  EXPECT_TRUE(a[0]["fixed_by"].is_null());
}

}  // namespace
}  // namespace pg::webtest
