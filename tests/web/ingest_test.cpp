// POST /api/v1/runs: authentication, limits, validation, atomicity and idempotency by the run's
// uuid, each against its own database and live server.
#include <gtest/gtest.h>

#include "store/run_json.h"
#include "store/store.h"
#include "web_fixture.h"

namespace pg::webtest {
namespace {

class Ingest : public ::testing::Test {
 protected:
  void SetUp() override { start(kToken, 8u << 20); }
  void start(std::optional<std::string> token, size_t max_body) {
    server_.reset();
    db_ = dir_.file("ingest.db");
    if (!std::filesystem::exists(db_)) {
      store::Store s(db_);
      SeedSpec spec = standard_spec();
      spec.commits = 4;
      s.import_runs(make_runs(spec));
    }
    web::ServeOptions opt;
    opt.db_path = db_;
    opt.token = std::move(token);
    opt.max_body_bytes = max_body;
    server_ = std::make_unique<LiveServer>(opt);
  }
  int64_t stored_runs() { return store::Store(db_).run_count(); }
  httplib::Result post(const std::string& body,
                       const std::string& auth = std::string("Bearer ") + kToken) {
    auto c = server_->client();
    httplib::Headers h;
    if (!auth.empty()) h.emplace("Authorization", auth);
    auto r = c->Post("/api/v1/runs", h, body, "application/json");
    EXPECT_TRUE(r) << httplib::to_string(r.error());
    return r;
  }
  static std::string doc(const std::vector<pg::Run>& runs) {
    return store::runs_to_json(runs, true);
  }
  static pg::Run new_run(int commit) {
    SeedSpec spec = standard_spec();
    spec.first_commit = 1000;
    return make_run(spec, commit, 0, 0);
  }

  TempDir dir_;
  std::string db_;
  std::unique_ptr<LiveServer> server_;
};

TEST_F(Ingest, StoresANewRunAnd201ThenTheSameRunIsNotDuplicated) {
  const int64_t before = stored_runs();
  pg::Run sent = new_run(1);
  sent.uuid = "00112233445566778899aabbccddeeff";  // as perfgate run --submit sends it
  auto r = post(doc({sent}));
  ASSERT_EQ(r->status, 201) << r->body;
  auto j = nlohmann::json::parse(r->body);
  ASSERT_EQ(j["runs"].size(), 1u);
  EXPECT_TRUE(j["runs"][0]["inserted"]);
  const int64_t id = j["runs"][0]["id"];
  EXPECT_EQ(stored_runs(), before + 1);

  auto again = post(doc({sent}));  // a retry after a timeout
  ASSERT_EQ(again->status, 200) << again->body;
  auto j2 = nlohmann::json::parse(again->body);
  EXPECT_FALSE(j2["runs"][0]["inserted"]);
  EXPECT_EQ(j2["runs"][0]["id"], id);
  EXPECT_EQ(j2["inserted"], 0);
  EXPECT_EQ(j2["duplicates"], 1);
  EXPECT_EQ(stored_runs(), before + 1);

  // Round trip: what the API returns is what was sent (ids aside).
  auto c = server_->client();
  auto got = c->Get("/api/v1/runs/" + std::to_string(id));
  auto back = store::runs_from_json(got->body, "response");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].uuid, sent.uuid);
  EXPECT_EQ(back[0].git.commit, sent.git.commit);
  EXPECT_EQ(back[0].git.subject, sent.git.subject);
  ASSERT_EQ(back[0].cells.size(), sent.cells.size());
  EXPECT_EQ(back[0].cells[1].samples.decode_ms, sent.cells[1].samples.decode_ms);
  EXPECT_EQ(back[0].cells[1].metrics, sent.cells[1].metrics);
}

// Content equality is not identity: two byte-identical runs without a uuid are two runs (a
// constant synthetic benchmark, a deterministic one), each stored with a uuid of its own.
TEST_F(Ingest, IdenticalRunsWithoutAUuidAreTwoRuns) {
  const int64_t before = stored_runs();
  const std::string body = doc({new_run(1)});
  auto first = post(body);
  auto second = post(body);
  ASSERT_EQ(first->status, 201) << first->body;
  ASSERT_EQ(second->status, 201) << second->body;
  const auto a = nlohmann::json::parse(first->body)["runs"][0];
  const auto b = nlohmann::json::parse(second->body)["runs"][0];
  EXPECT_TRUE(a["inserted"]);
  EXPECT_TRUE(b["inserted"]);
  EXPECT_NE(a["id"], b["id"]);
  EXPECT_EQ(stored_runs(), before + 2);
  store::Store s(db_);
  EXPECT_NE(s.load_run(a["id"])->uuid, s.load_run(b["id"])->uuid);
}

TEST_F(Ingest, ABodyWithoutJsonContentTypeIsStillADocument) {
  // `curl --data-binary @run.json` sends application/x-www-form-urlencoded.
  auto c = server_->client();
  auto r = c->Post("/api/v1/runs", {{"Authorization", std::string("Bearer ") + kToken}},
                   doc({new_run(8)}), "application/x-www-form-urlencoded");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 201) << r->body;
}

TEST_F(Ingest, KeepAliveConnectionStaysUsableAfterARejectedBody) {
  auto c = server_->client();
  c->set_keep_alive(true);
  const std::string body = doc({new_run(9)});
  EXPECT_EQ(
      c->Post("/api/v1/runs", {{"Authorization", "Bearer nope"}}, body, "application/json")->status,
      401);
  auto ok = c->Post("/api/v1/runs", {{"Authorization", std::string("Bearer ") + kToken}}, body,
                    "application/json");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 201) << ok->body;
  EXPECT_EQ(c->Get("/healthz")->status, 200);
}

TEST_F(Ingest, ExportOfTheServerIsAcceptedBackAsDuplicates) {
  auto c = server_->client();
  auto one = c->Get("/api/v1/runs/1");
  ASSERT_EQ(one->status, 200);
  auto r = post(one->body);  // a single run object in the export shape
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_FALSE(nlohmann::json::parse(r->body)["runs"][0]["inserted"]);
}

TEST_F(Ingest, NewDataIsVisibleInSeriesRightAway) {
  auto c = server_->client();
  auto list = nlohmann::json::parse(c->Get("/api/v1/series")->body);
  const std::string target =
      "/api/v1/series/" + std::to_string(list["series"][0]["id"].get<int64_t>());
  const size_t before = nlohmann::json::parse(c->Get(target)->body)["points"].size();
  // Commits 2 and 3 of the standard spec are on main, the branch the trend shows.
  ASSERT_EQ(post(doc({new_run(2), new_run(3)}))->status, 201);
  EXPECT_EQ(nlohmann::json::parse(c->Get(target)->body)["points"].size(), before + 2);
}

TEST_F(Ingest, MissingOrWrongTokenIs401AndStoresNothing) {
  const int64_t before = stored_runs();
  const std::string body = doc({new_run(3)});
  for (const std::string& auth :
       {std::string(), std::string("Bearer"), std::string("Bearer "),
        std::string("Bearer wrong-token-0123456789abcd"), std::string("Basic ") + kToken,
        std::string("Bearer ") + kToken + "x",
        std::string("Bearer ") + std::string(kToken).substr(1)}) {
    auto r = post(body, auth);
    EXPECT_EQ(r->status, 401) << "'" << auth << "'";
    EXPECT_FALSE(r->get_header_value("WWW-Authenticate").empty());
    EXPECT_TRUE(nlohmann::json::parse(r->body).contains("error"));
  }
  EXPECT_EQ(stored_runs(), before);
}

TEST_F(Ingest, WithoutATokenFileIngestIsOff) {
  start(std::nullopt, 8u << 20);
  const int64_t before = stored_runs();
  auto r = post(doc({new_run(3)}));
  EXPECT_EQ(r->status, 403);
  EXPECT_NE(r->body.find("--token-file"), std::string::npos);
  EXPECT_EQ(stored_runs(), before);
}

TEST_F(Ingest, MalformedAndInvalidDocumentsAre400WithTheReason) {
  const int64_t before = stored_runs();
  auto malformed = post("{\"runs\": [");
  EXPECT_EQ(malformed->status, 400);
  EXPECT_NE(malformed->body.find("error"), std::string::npos);
  EXPECT_EQ(post("")->status, 400);
  EXPECT_EQ(post("[1,2,3]")->status, 400);
  EXPECT_EQ(post("{\"runs\": []}")->status, 400);

  nlohmann::json bad = nlohmann::json::parse(doc({new_run(3)}));
  bad["runs"][0]["git"]["commit"] = "not-a-sha'); DROP TABLE runs; --";
  auto r = post(bad.dump());
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("commit"), std::string::npos) << r->body;

  nlohmann::json nan_metric = nlohmann::json::parse(doc({new_run(3)}));
  nan_metric["runs"][0]["cells"][0]["metrics"]["tpot_ms"] = "fast";
  EXPECT_EQ(post(nan_metric.dump())->status, 400);
  EXPECT_EQ(stored_runs(), before);
}

TEST_F(Ingest, ABatchWithOneBadRunStoresNothing) {
  const int64_t before = stored_runs();
  nlohmann::json j = nlohmann::json::parse(doc({new_run(5), new_run(6), new_run(7)}));
  j["runs"][2]["cells"][0]["samples"]["decode_ms"][0].push_back(1.0);  // one step too many
  auto r = post(j.dump());
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(r->body.find("/runs/2"), std::string::npos) << r->body;
  EXPECT_EQ(stored_runs(), before);
}

TEST_F(Ingest, OversizedBodyIs413AndStoresNothing) {
  start(kToken, 64 * 1024);
  const int64_t before = stored_runs();
  std::vector<pg::Run> many;
  for (int i = 0; i < 40; ++i) many.push_back(new_run(i));
  const std::string body = doc(many);
  ASSERT_GT(body.size(), 64u * 1024);
  auto r = post(body);
  EXPECT_EQ(r->status, 413);
  EXPECT_EQ(stored_runs(), before);
  EXPECT_EQ(post(doc({new_run(1)}))->status, 201);  // still serving, under the limit
}

}  // namespace
}  // namespace pg::webtest
