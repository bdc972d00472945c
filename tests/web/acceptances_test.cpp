// Accepted slowdowns end to end, with the real `perfgate compare` and `perfgate accept` on a real
// database and a live server on loopback: a recorded gate of a ref that regressed is accepted
// (from the command line and through POST /api/v1/acceptances), the next gate of that ref passes
// with exit 0 saying who accepted what and why, a head slower than what was accepted fails again,
// another ref is not covered, a revocation ends it, and a server that cannot answer fails safe.
#include <gtest/gtest.h>

#include "store/store.h"
#include "web_fixture.h"

namespace pg::webtest {
namespace {

constexpr int kSlowerStill = 16;  // a commit 1.6x the base: slower than the accepted 1.3x

class Acceptances : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.file("accept.db");
    store::Store s(db_);
    s.import_runs(make_runs(standard_spec()));  // 30% slower from commit 8
    SeedSpec slower = standard_spec();
    slower.step_factor = 1.6;
    s.import_runs({make_run(slower, kSlowerStill, 0, 0)});
    web::ServeOptions opt;
    opt.db_path = db_;
    opt.token = kToken;
    server_ = std::make_unique<LiveServer>(opt);
    url_ = "http://127.0.0.1:" + std::to_string(server_->port());
  }
  static std::string sha(int i) { return commit_sha(i, standard_spec().seed); }
  // `perfgate ARGS...` with stderr folded into *out; returns the exit code.
  int perfgate(std::vector<std::string> args, std::string* out) {
    std::vector<std::string> argv = {"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>&1", perfgate_bin()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv, out);
  }
  int compare(int base, int head, std::vector<std::string> extra, std::string* out) {
    std::vector<std::string> args = {"compare", "--db",   db_,      "--base",
                                     sha(base), "--head", sha(head)};
    args.insert(args.end(), extra.begin(), extra.end());
    return perfgate(args, out);
  }
  httplib::Result post(const nlohmann::json& body, const std::string& token = kToken) {
    httplib::Headers h;
    if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
    return server_->client()->Post("/api/v1/acceptances", h, body.dump(), "application/json");
  }
  TempDir dir_;
  std::string db_, url_;
  std::unique_ptr<LiveServer> server_;
};

TEST_F(Acceptances, AnAcceptedSlowdownPassesTheNextGateOfItsRefAndASlowerHeadFailsAgain) {
  std::string out;
  ASSERT_EQ(compare(7, 8, {"--record", "--ref", "refs/pull/9/merge"}, &out), 1) << out;
  ASSERT_EQ(perfgate({"accept", "add", "1", "--reason", "the new sampler is worth 30%", "--as",
                      "ana", "--db", db_},
                     &out),
            0)
      << out;
  EXPECT_NE(out.find("accepted 2 cells of gate 1 for refs/pull/9/merge"), std::string::npos) << out;

  // The same change, judged again for that ref: a pass, saying who accepted what and why.
  ASSERT_EQ(
      compare(7, 8, {"--acceptances", db_, "--ref", "refs/pull/9/merge", "--format", "markdown"},
              &out),
      0)
      << out;
  EXPECT_NE(out.find("Accepted slowdown 1 of refs/pull/9/merge"), std::string::npos) << out;
  EXPECT_NE(out.find("by ana (cli)"), std::string::npos) << out;
  EXPECT_NE(out.find("the new sampler is worth 30%"), std::string::npos) << out;
  ASSERT_EQ(
      compare(7, 8, {"--acceptances", db_, "--ref", "refs/pull/9/merge", "--format", "json"}, &out),
      0)
      << out;
  const auto doc = nlohmann::json::parse(out.substr(out.find('{')), nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << out;
  int accepted = 0;
  for (const auto& c : doc["cells"]) {
    if (c["metric"] != "tpot_ms") continue;  // the peaks did not change and were not accepted
    ++accepted;
    EXPECT_EQ(c["verdict"], "accepted") << c.dump();
    EXPECT_NEAR(c["ratio"].get<double>(), 1.3, 0.05) << c.dump();  // as measured, not rescaled
    EXPECT_NEAR(c["accepted_ratio"].get<double>(), 1.3, 0.05) << c.dump();
  }
  EXPECT_EQ(accepted, 2);

  // Slower than what was accepted: a regression again. Another ref is not covered at all.
  ASSERT_EQ(compare(7, kSlowerStill,
                    {"--acceptances", db_, "--ref", "refs/pull/9/merge", "--format", "json"}, &out),
            1)
      << out;
  for (const auto& c : nlohmann::json::parse(out.substr(out.find('{')))["cells"])
    if (c["metric"] == "tpot_ms") {
      EXPECT_EQ(c["verdict"], "regression") << c.dump();
      EXPECT_NE(c["note"].get<std::string>().find("slower than the accepted +"), std::string::npos)
          << c.dump();
    }
  EXPECT_EQ(compare(7, 8, {"--acceptances", db_, "--ref", "refs/pull/10/merge"}, &out), 1) << out;

  // Through the server, as the trusted job reads them; revoked, the regression fails again.
  EXPECT_EQ(compare(7, 8, {"--acceptances", url_, "--ref", "refs/pull/9/merge"}, &out), 0) << out;
  ASSERT_EQ(perfgate({"accept", "revoke", "1", "--reason", "sampler reverted", "--db", db_}, &out),
            0)
      << out;
  EXPECT_EQ(compare(7, 8, {"--acceptances", url_, "--ref", "refs/pull/9/merge"}, &out), 1) << out;
  ASSERT_EQ(perfgate({"accept", "list", "--db", db_}, &out), 0) << out;
  EXPECT_NE(out.find("sampler reverted"), std::string::npos) << out;
}

TEST_F(Acceptances, TheServerRecordsWhoAcceptedAndAServerThatCannotAnswerFailsSafe) {
  std::string out;
  ASSERT_EQ(compare(7, 8, {"--record", "--ref", "feature"}, &out), 1) << out;
  ASSERT_EQ(compare(9, 10, {"--record", "--ref", "feature"}, &out), 0) << out;  // a pass: gate 2
  EXPECT_EQ(post({{"gate_id", 1}, {"reason", "worth it"}}, "")->status, 401);
  EXPECT_EQ(post({{"gate_id", 1}})->status, 400);  // no reason
  EXPECT_EQ(post({{"gate_id", 2}, {"reason", "nothing to accept"}})->status, 400);
  EXPECT_EQ(post({{"gate_id", 99}, {"reason", "no such gate"}})->status, 400);
  auto r = post({{"gate_id", 1}, {"reason", "worth it"}, {"author", "mallory"}});
  ASSERT_EQ(r->status, 201) << r->body;
  const auto a = nlohmann::json::parse(r->body);
  EXPECT_EQ(a["author"], "(ingest token)");  // the credential's name, never the body's
  EXPECT_EQ(a["via"], "legacy");
  EXPECT_EQ(a["ref"], "feature");
  EXPECT_EQ(a["cells"].size(), 2u);

  const auto listed = get_json(*server_, "/api/v1/acceptances?ref=feature");
  ASSERT_EQ(listed["acceptances"].size(), 1u);
  EXPECT_TRUE(get_json(*server_, "/api/v1/acceptances?ref=other")["acceptances"].empty());
  // The compare page of the pair judges it as the next gate of its ref: accepted, with the list.
  const std::string page = get_page(*server_, "/compare?base=" + sha(7) + "&head=" + sha(8));
  EXPECT_NE(page.find("id=\"acceptances\""), std::string::npos);
  EXPECT_NE(page.find("worth it"), std::string::npos);
  EXPECT_NE(page.find("data-revoke=\"1\""), std::string::npos);
  EXPECT_NE(page.find("badge accepted"), std::string::npos);

  // Unreachable: judged against the base alone (the regression fails), and the report says so.
  ASSERT_EQ(compare(7, 8, {"--acceptances", "http://127.0.0.1:1", "--ref", "feature"}, &out), 1)
      << out;
  EXPECT_NE(out.find("Accepted slowdowns not read"), std::string::npos) << out;

  r = post({{"revoke", a["id"]}, {"reason", "changed our mind"}});
  ASSERT_EQ(r->status, 201) << r->body;
  EXPECT_EQ(post({{"revoke", a["id"]}, {"reason", "twice"}})->status, 400);
  EXPECT_EQ(compare(7, 8, {"--acceptances", url_, "--ref", "feature"}, &out), 1) << out;
}

TEST_F(Acceptances, BadUseIsAUsageErrorThatSaysWhy) {
  std::string out;
  ASSERT_EQ(compare(7, 8, {"--record"}, &out), 1) << out;  // gate 1, without a ref
  EXPECT_EQ(perfgate({"accept", "add", "1", "--reason", "x", "--db", db_}, &out), 2);
  EXPECT_NE(out.find("has no ref"), std::string::npos) << out;
  EXPECT_EQ(perfgate({"accept", "add", "7", "--reason", "x", "--db", db_}, &out), 2);
  EXPECT_NE(out.find("no such stored gate"), std::string::npos) << out;
  EXPECT_EQ(perfgate({"accept", "add", "1", "--reason", "x", "--db", dir_.file("no.db")}, &out), 2);
  EXPECT_NE(out.find("no such database file"), std::string::npos) << out;
  EXPECT_EQ(compare(7, 8, {"--acceptances", db_}, &out), 2);
  EXPECT_NE(out.find("--acceptances needs --ref"), std::string::npos) << out;
  EXPECT_EQ(compare(7, 8, {"--acceptances", dir_.file("none.db"), "--ref", "x"}, &out), 2);
  EXPECT_NE(out.find("--acceptances"), std::string::npos) << out;
  EXPECT_EQ(perfgate({"accept", "revoke", "5", "--reason", "x", "--db", db_}, &out), 2);
  EXPECT_NE(out.find("no acceptance with id 5"), std::string::npos) << out;
}

}  // namespace
}  // namespace pg::webtest
