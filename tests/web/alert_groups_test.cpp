// Alert groups (docs/WEB.md, "Alert groups"): every alert that names one first bad commit is one
// group, and POST /api/v1/regression-groups triages all of its members in one request -- against
// a real database and a live server.
#include <gtest/gtest.h>

#include "store/store.h"
#include "web_fixture.h"

namespace pg::webtest {
namespace {

class AlertGroups : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.file("groups.db");
    SeedSpec spec;  // every series 30% slower from commit 8 on
    spec.commits = 16;
    spec.step_at = 8;
    spec.step_factor = 1.3;
    spec.batch_sizes = {1, 2, 4};
    std::vector<pg::Run> runs;
    for (int c = 0; c < spec.commits; ++c) runs.push_back(make_run(spec, c, 0, 0));
    store::Store(db_).import_runs(runs);
    web::ServeOptions opt;
    opt.db_path = db_;
    opt.token = kToken;
    server_ = std::make_unique<LiveServer>(opt);
  }
  nlohmann::json regressions() {
    nlohmann::json list;
    EXPECT_TRUE(wait_for([&] {
      list = get_json(*server_, "/api/v1/regressions");
      return list["complete"].get<bool>();
    }));
    return list;
  }
  httplib::Result post(const nlohmann::json& body, const std::string& token = kToken) {
    httplib::Headers h;
    if (!token.empty()) h = {{"Authorization", "Bearer " + token}};
    return server_->client()->Post("/api/v1/regression-groups", h, body.dump(), "application/json");
  }
  TempDir dir_;
  std::string db_;
  std::unique_ptr<LiveServer> server_;
};

TEST_F(AlertGroups, OneCommitThatSlowedEverySeriesIsOneGroup) {
  const auto list = regressions();
  ASSERT_EQ(list["groups"].size(), 1u) << list["groups"].dump();
  const auto& g = list["groups"][0];
  EXPECT_EQ(g["commit"], commit_sha(8, SeedSpec{}.seed));
  EXPECT_EQ(g["cells"], 3);
  EXPECT_EQ(g["series"].size(), 3u);
  EXPECT_EQ(g["state"], "open");
  EXPECT_NEAR(g["typical"].get<double>(), 0.3, 0.02);
  EXPECT_GE(g["worst"].get<double>(), g["typical"].get<double>());
}

TEST_F(AlertGroups, OneRequestTriagesEveryMemberThatTheActionAppliesTo) {
  const std::string commit = regressions()["groups"][0]["commit"];
  auto r = post({{"commits", {commit}}, {"action", "acknowledge"}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 201) << r->body;
  EXPECT_EQ(nlohmann::json::parse(r->body)["events"], 3);
  auto list = regressions();
  EXPECT_EQ(list["acknowledged"], 3);
  EXPECT_EQ(list["groups"][0]["state"], "acknowledged");
  // Acknowledging again changes nothing: every member already is.
  r = post({{"commits", {commit}}, {"action", "acknowledge"}});
  EXPECT_EQ(nlohmann::json::parse(r->body)["events"], 0);
  // One member dismissed by hand; "fix" on the group closes the other two only.
  const auto& member = list["regressions"][0];
  httplib::Headers h = {{"Authorization", std::string("Bearer ") + kToken}};
  nlohmann::json one = {{"series_id", member["series_id"]},
                        {"commit", commit},
                        {"action", "dismiss"},
                        {"reason", "noise"}};
  ASSERT_EQ(
      server_->client()->Post("/api/v1/regressions", h, one.dump(), "application/json")->status,
      201);
  r = post({{"commits", {commit}}, {"action", "fix"}});
  EXPECT_EQ(nlohmann::json::parse(r->body)["events"], 2);
  list = regressions();
  EXPECT_EQ(list["closed"], 3);
  EXPECT_EQ(list["groups"][0]["state"], "closed");  // dismissed and fixed members
}

TEST_F(AlertGroups, BadRequestsAreRefusedAndStoreNothing) {
  const std::string commit = regressions()["groups"][0]["commit"];
  EXPECT_EQ(post({{"commits", {commit}}, {"action", "acknowledge"}}, "")->status, 401);
  EXPECT_EQ(post({{"commits", {commit}}, {"action", "dismiss"}})->status, 400);  // no reason
  EXPECT_EQ(post({{"commits", nlohmann::json::array()}, {"action", "fix"}})->status, 400);
  EXPECT_EQ(post({{"commits", {1, 2}}, {"action", "fix"}})->status, 400);
  auto r = post({{"commits", {commit, std::string(40, 'f')}}, {"action", "acknowledge"}});
  EXPECT_EQ(r->status, 404);
  EXPECT_NE(r->body.find(std::string(40, 'f')), std::string::npos) << r->body;
  EXPECT_EQ(regressions()["acknowledged"], 0);  // the known commit was not triaged either
}

}  // namespace
}  // namespace pg::webtest
