// The dashboard as a triage tool: `perfgate init` for a fresh central server, regressions as
// alerts with a lifecycle (written with the legacy ingest token; named credentials:
// credentials_test.cpp), branches as a filter, the paginated run list, and the compare page's
// answer -- each against a real database and a live server.
#include <gtest/gtest.h>

#include <fstream>

#include "store/store.h"
#include "web_fixture.h"

namespace pg::webtest {
namespace {

TEST(Init, CreatesADatabaseThatServeThenServes) {
  TempDir dir;
  const std::string db = dir.file("central.db");
  std::string out;
  ASSERT_EQ(run_command({perfgate_bin(), "init", "--db", db}, &out), 0) << out;
  EXPECT_NE(out.find("created"), std::string::npos) << out;
  // Again: nothing to do, nothing lost.
  ASSERT_EQ(run_command({perfgate_bin(), "init", "--db", db}, &out), 0) << out;
  EXPECT_NE(out.find("already"), std::string::npos) << out;
  ServeProcess p({"--db", db, "--port", "0"}, dir.file("serve.log"));
  const int port = p.wait_listening();
  ASSERT_GT(port, 0) << p.stderr_text();
  httplib::Client c("127.0.0.1", port);
  auto r = c.Get("/healthz");
  ASSERT_TRUE(r);
  EXPECT_EQ(nlohmann::json::parse(r->body)["runs"], 0);
  EXPECT_EQ(c.Get("/")->status, 200);
  p.signal(SIGTERM);
  EXPECT_EQ(p.wait_exit(), 0);
}

TEST(Init, RefusesAFileThatIsNotADatabaseAndLeavesItAlone) {
  TempDir dir;
  const std::string path = dir.file("notes.txt");
  std::ofstream(path) << "my notes\n";
  std::string out;
  EXPECT_EQ(run_command({perfgate_bin(), "init", "--db", path}, &out), 2);
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "my notes\n");
  EXPECT_EQ(run_command({perfgate_bin(), "init", "--db", dir.file("no/such/dir.db")}, &out), 2);
}

class Triage : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.file("triage.db");
    store::Store s(db_);
    SeedSpec spec = standard_spec();  // 30% slower from commit 8; every fourth commit on a branch
    spec.envs = 2;
    s.import_runs(make_runs(spec));
    web::ServeOptions opt;
    opt.db_path = db_;
    opt.token = kToken;
    opt.repo_url = "https://example.com/org/repo/";
    server_ = std::make_unique<LiveServer>(opt);
  }
  nlohmann::json get_json(const std::string& target, int status = 200) {
    return webtest::get_json(*server_, target, status);
  }
  std::string get_page(const std::string& target) { return webtest::get_page(*server_, target); }
  httplib::Result post(const nlohmann::json& body, const std::string& token = kToken) {
    httplib::Headers h;
    if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
    return server_->client()->Post("/api/v1/regressions", h, body.dump(), "application/json");
  }
  TempDir dir_;
  std::string db_;
  std::unique_ptr<LiveServer> server_;
};

TEST_F(Triage, OpenRegressionsAreListedWithSizeFirstBadCommitAndAge) {
  auto j = get_json("/api/v1/regressions");
  // tiny, batch 1 and 4, on two devices: four series stand in the step at commit 8.
  ASSERT_EQ(j["regressions"].size(), 4u) << j.dump();
  EXPECT_EQ(j["open"], 4);
  EXPECT_EQ(j["branch"], "main");
  const std::string first_bad = commit_sha(8, standard_spec().seed);
  for (const auto& r : j["regressions"]) {
    EXPECT_EQ(r["commit"], first_bad);
    EXPECT_EQ(r["parent"], commit_sha(7, standard_spec().seed));
    EXPECT_NEAR(r["relative"].get<double>(), 0.3, 0.05);
    EXPECT_EQ(r["state"], "open");
    EXPECT_EQ(r["commits_since"], 5);  // main-branch commits 10, 11, 12, 14, 15 come after
  }
  EXPECT_EQ(get_json("/api/v1/overview")["open_regressions"], 4);
  const std::string page = get_page("/regressions");
  EXPECT_NE(page.find("https://example.com/org/repo/commit/" + first_bad), std::string::npos);
}

TEST_F(Triage, WritesNeedTheTokenAndADismissalNeedsAReason) {
  auto j = get_json("/api/v1/regressions");
  const nlohmann::json target = {{"series_id", j["regressions"][0]["series_id"]},
                                 {"commit", j["regressions"][0]["commit"]}};
  auto body = [&](const char* action, const char* reason) {
    nlohmann::json b = target;
    b["action"] = action;
    b["author"] = "ana";
    if (reason) b["reason"] = reason;
    return b;
  };
  EXPECT_EQ(post(body("acknowledge", nullptr), "")->status, 401);
  EXPECT_EQ(post(body("acknowledge", nullptr), "wrong")->status, 401);
  EXPECT_EQ(post(body("dismiss", nullptr))->status, 400);
  EXPECT_EQ(post(body("snooze", nullptr))->status, 400);
  EXPECT_TRUE(store::Store(db_).regression_events().empty()) << "a refused write stored something";

  auto ack = post(body("acknowledge", nullptr));
  ASSERT_EQ(ack->status, 201) << ack->body;
  auto after = get_json("/api/v1/regressions");
  EXPECT_EQ(after["acknowledged"], 1);
  EXPECT_EQ(get_json("/api/v1/overview")["open_regressions"], 4);  // acknowledged is still open

  ASSERT_EQ(post(body("dismiss", "expected: the new kernel trades latency for memory"))->status,
            201);
  after = get_json("/api/v1/regressions");
  EXPECT_EQ(after["open"], 3);
  EXPECT_EQ(after["closed"], 1);
  EXPECT_EQ(get_json("/api/v1/overview")["open_regressions"], 3);
  const auto& closed = after["regressions"].back();  // open ones first
  EXPECT_EQ(closed["state"], "dismissed");
  ASSERT_EQ(closed["events"].size(), 2u);
  // The author is who the credential is (here the legacy token), never the body's "author".
  EXPECT_EQ(closed["events"][1]["author"], "(ingest token)");
  EXPECT_EQ(closed["events"][1]["via"], "legacy");
  EXPECT_EQ(closed["events"][1]["reason"], "expected: the new kernel trades latency for memory");
  EXPECT_FALSE(closed["events"][1]["at"].get<std::string>().empty());

  ASSERT_EQ(post(body("reopen", nullptr))->status, 201);
  EXPECT_EQ(get_json("/api/v1/regressions")["open"], 4);
  ASSERT_EQ(post(body("fix", nullptr))->status, 201);
  EXPECT_EQ(get_json("/api/v1/regressions")["closed"], 1);
  EXPECT_EQ(store::Store(db_).regression_events().size(), 4u);  // the whole history is kept
}

TEST_F(Triage, BranchesAreAFilterNeverMixedIn) {
  const int64_t id = get_json("/api/v1/series")["series"][0]["id"];
  const std::string base = "/api/v1/series/" + std::to_string(id);
  const auto main = get_json(base);
  const std::string feature = "feat/\"quoted\"&'branch'<b>";
  const auto branch = get_json(base + "?branch=" + httplib::detail::encode_query_param(feature));
  EXPECT_EQ(main["branch"], "main");
  EXPECT_EQ(branch["branch"], feature);
  EXPECT_EQ(main["points"].size() + branch["points"].size(), size_t(standard_spec().commits));
  for (const auto& p : branch["points"]) {
    const std::string sha = p["commit"];
    for (const auto& q : main["points"]) EXPECT_NE(q["commit"], sha);
  }
  get_json(base + "?branch=no-such-branch", 404);
}

TEST_F(Triage, RunsArePaginatedWithACursor) {
  const int64_t total = store::Store(db_).run_count();
  std::vector<int64_t> ids;
  std::string target = "/api/v1/runs?limit=5";
  for (int page = 0; page < 100; ++page) {
    auto j = get_json(target);
    EXPECT_LE(j["runs"].size(), 5u);
    for (const auto& r : j["runs"]) {
      ids.push_back(r["id"]);
      for (const auto& c : r["cells"]) EXPECT_FALSE(c.contains("samples"));
    }
    if (j["next"].is_null()) break;
    target = "/api/v1/runs?limit=5&after=" + std::to_string(j["next"].get<int64_t>());
  }
  ASSERT_EQ(static_cast<int64_t>(ids.size()), total);
  for (size_t i = 1; i < ids.size(); ++i) EXPECT_LT(ids[i - 1], ids[i]);
  EXPECT_EQ(get_json("/api/v1/runs")["runs"].size(), static_cast<size_t>(total));  // one page
  get_json("/api/v1/runs?limit=0", 400);
  get_json("/api/v1/runs?limit=1001", 400);
  get_json("/api/v1/runs?after=-1", 400);
}

TEST_F(Triage, CompareSaysWhichFieldDiffersAndOffersEachDevice) {
  const std::string base = commit_sha(7, standard_spec().seed);
  const std::string head = commit_sha(8, standard_spec().seed);
  const std::string page = get_page("/compare?base=" + base + "&head=" + head);
  EXPECT_NE(page.find("The environments differ"), std::string::npos);
  EXPECT_NE(page.find("device: Seed GPU 0, Seed GPU 1 (base)"), std::string::npos);
  EXPECT_NE(page.find("&amp;device=Seed%20GPU%200"), std::string::npos);
  EXPECT_NE(page.find("&amp;device=Seed%20GPU%201"), std::string::npos);
  const std::string one =
      get_page("/compare?base=" + base + "&head=" + head + "&device=Seed%20GPU%200");
  EXPECT_NE(one.find("2 of 2 cells regressed"), std::string::npos);
  EXPECT_NE(one.find("href=\"/series/"), std::string::npos);  // cells link to their trend
}

}  // namespace
}  // namespace pg::webtest
