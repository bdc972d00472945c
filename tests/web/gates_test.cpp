// Stored gate results as an alerts source, against a real database, a live server on loopback and
// the real `perfgate compare`: --record and --submit, POST /api/v1/gates (token, bad input) and its
// paginated GET, gate alerts on the regressions list with the triage lifecycle, the overview's
// count, the compare page's stored verdict with its settings, and the compare page's blind-gate
// box.
#include <gtest/gtest.h>

#include "store/store.h"
#include "web_fixture.h"

namespace pg::webtest {
namespace {

class Gates : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.file("gates.db");
    store::Store s(db_);
    s.import_runs(make_runs(standard_spec()));  // 30% slower from commit 8
    web::ServeOptions opt;
    opt.db_path = db_;
    opt.token = kToken;
    server_ = std::make_unique<LiveServer>(opt);
    token_file_ = dir_.file("token");
    write_token_file(token_file_, std::string(kToken) + "\n");
  }
  static std::string sha(int i) { return commit_sha(i, standard_spec().seed); }
  // `perfgate compare` on the fixture's database; returns its exit code, stdout and stderr in
  // *out (stdout alone with stdout_only).
  int compare(int base, int head, std::vector<std::string> extra, std::string* out,
              bool stdout_only = false) {
    std::vector<std::string> args = {"/bin/sh",
                                     "-c",
                                     "exec \"$0\" \"$@\" 2>&1",
                                     perfgate_bin(),
                                     "compare",
                                     "--db",
                                     db_,
                                     "--base",
                                     sha(base),
                                     "--head",
                                     sha(head)};
    if (stdout_only) args.erase(args.begin(), args.begin() + 3);
    args.insert(args.end(), extra.begin(), extra.end());
    return run_command(args, out);
  }
  nlohmann::json get_json(const std::string& target, int status = 200) {
    return webtest::get_json(*server_, target, status);
  }
  std::string get_page(const std::string& target) { return webtest::get_page(*server_, target); }
  httplib::Result post(const std::string& path, const std::string& body,
                       const std::string& token = kToken) {
    httplib::Headers h;
    if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
    return server_->client()->Post(path, h, body, "application/json");
  }
  // A valid gate document, as `perfgate compare --json` writes it.
  nlohmann::json gate_doc(int base, int head) {
    std::string out;
    EXPECT_EQ(compare(base, head, {"--format", "json"}, &out, true), 1) << out;
    auto j = nlohmann::json::parse(out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << out;
    return j;
  }
  TempDir dir_;
  std::string db_, token_file_;
  std::unique_ptr<LiveServer> server_;
};

TEST_F(Gates, ARecordedRegressionIsAnOpenAlertWithItsSettingsUntilTriaged) {
  const int change_points = get_json("/api/v1/overview")["open_regressions"];
  std::string out;
  ASSERT_EQ(compare(7, 8,
                    {"--record", "--ref", "refs/pull/3/merge", "--submitted-by", "ana",
                     "--min-effect", "0.1"},
                    &out),
            1)
      << out;
  EXPECT_NE(out.find("recorded gate result 1"), std::string::npos) << out;
  auto gates = get_json("/api/v1/gates")["gates"];
  ASSERT_EQ(gates.size(), 1u);
  EXPECT_EQ(gates[0]["verdict"], "regression");
  EXPECT_EQ(gates[0]["exit_code"], 1);
  EXPECT_EQ(gates[0]["ref"], "refs/pull/3/merge");
  EXPECT_EQ(gates[0]["source"], "cli");
  EXPECT_EQ(gates[0]["settings"]["min_effect"], 0.1);
  EXPECT_EQ(gates[0]["settings"]["alpha"], 0.01);
  EXPECT_EQ(gates[0]["settings"]["correction"], "holm");
  EXPECT_EQ(gates[0]["result"]["head"], sha(8));

  auto regs = get_json("/api/v1/regressions");
  ASSERT_EQ(regs["gate_regressions"].size(), 1u);
  const auto& alert = regs["gate_regressions"][0];
  EXPECT_EQ(alert["commit"], sha(8));  // the first bad commit is the gate's head
  EXPECT_EQ(alert["state"], "open");
  EXPECT_NEAR(alert["relative"].get<double>(), 0.3, 0.05);
  EXPECT_EQ(alert["regressed_cells"], 2);
  EXPECT_EQ(alert["submitted_by"], "ana");
  EXPECT_EQ(get_json("/api/v1/overview")["open_regressions"], change_points + 1);
  const std::string page = get_page("/regressions");
  EXPECT_NE(page.find("id=\"gate-regressions\""), std::string::npos);
  EXPECT_NE(page.find("min effect 10% (fixed)"), std::string::npos);

  const int64_t gate_id = alert["gate_id"];
  auto triage = [&](const char* action, const char* reason, const std::string& token = kToken) {
    nlohmann::json b = {{"gate_id", gate_id}, {"action", action}, {"author", "bo"}};
    if (reason) b["reason"] = reason;
    return post("/api/v1/regressions", b.dump(), token);
  };
  EXPECT_EQ(triage("acknowledge", nullptr, "")->status, 401);
  EXPECT_EQ(triage("dismiss", nullptr)->status, 400);
  nlohmann::json unknown = {{"gate_id", gate_id + 9}, {"action", "fix"}, {"author", "bo"}};
  EXPECT_EQ(post("/api/v1/regressions", unknown.dump())->status, 400);
  ASSERT_EQ(triage("acknowledge", nullptr)->status, 201);
  EXPECT_EQ(get_json("/api/v1/regressions")["gate_regressions"][0]["state"], "acknowledged");
  EXPECT_EQ(get_json("/api/v1/overview")["open_regressions"], change_points + 1);
  ASSERT_EQ(triage("fix", nullptr)->status, 201);
  regs = get_json("/api/v1/regressions");
  EXPECT_EQ(regs["gate_regressions"][0]["state"], "fixed");
  ASSERT_EQ(regs["gate_regressions"][0]["events"].size(), 2u);
  // Who the credential is (the legacy token here), never the body's "author".
  EXPECT_EQ(regs["gate_regressions"][0]["events"][1]["author"], "(ingest token)");
  EXPECT_EQ(regs["gate_regressions"][0]["events"][1]["via"], "legacy");
  EXPECT_EQ(get_json("/api/v1/overview")["open_regressions"], change_points);
}

TEST_F(Gates, ALaterPassingGateOnTheSameRefSupersedesTheAlert) {
  std::string out;
  ASSERT_EQ(compare(7, 8, {"--record", "--ref", "feature"}, &out), 1) << out;
  ASSERT_EQ(compare(8, 10, {"--record", "--ref", "other"}, &out), 0) << out;
  auto regs = get_json("/api/v1/regressions")["gate_regressions"];
  ASSERT_EQ(regs.size(), 1u);
  EXPECT_EQ(regs[0]["state"], "open");  // a pass on another ref changes nothing
  ASSERT_EQ(compare(8, 10, {"--record", "--ref", "feature"}, &out), 0) << out;
  regs = get_json("/api/v1/regressions")["gate_regressions"];
  EXPECT_EQ(regs[0]["state"], "superseded");
  EXPECT_EQ(regs[0]["superseded_by"], sha(10));
}

TEST_F(Gates, SubmitPostsTheGateWithTheTokenAndFailsLoudlyWithoutIt) {
  const std::string url = "http://127.0.0.1:" + std::to_string(server_->port());
  std::string out;
  ASSERT_EQ(
      compare(7, 8, {"--submit", url, "--token-file", token_file_, "--submitted-by", "ci"}, &out),
      1)
      << out;
  auto gates = get_json("/api/v1/gates")["gates"];
  ASSERT_EQ(gates.size(), 1u);
  EXPECT_EQ(gates[0]["source"], "api");
  EXPECT_EQ(gates[0]["submitted_by"], "ci");
  EXPECT_EQ(gates[0]["ref"], nullptr);

  const std::string wrong = dir_.file("wrong");
  write_token_file(wrong, "not-the-token\n");
  EXPECT_EQ(compare(7, 8, {"--submit", url, "--token-file", wrong}, &out), 4);
  EXPECT_NE(out.find("HTTP 401"), std::string::npos) << out;
  EXPECT_NE(out.find("regression"), std::string::npos) << "the verdict must still be shown";
  EXPECT_EQ(compare(7, 8, {"--submit", url}, &out), 2);
  EXPECT_NE(out.find("--token-file"), std::string::npos) << out;
  EXPECT_EQ(compare(7, 8, {"--submit", "ftp://x", "--token-file", token_file_}, &out), 2);
  EXPECT_NE(out.find("--submit"), std::string::npos) << out;
  EXPECT_EQ(compare(7, 8, {"--record", "--ref", "a\nb"}, &out), 2);
  EXPECT_NE(out.find("--ref contains control characters"), std::string::npos) << out;
  EXPECT_EQ(compare(7, 8, {"--ref", "main"}, &out), 2);  // a ref of nothing kept
  EXPECT_NE(out.find("--record"), std::string::npos) << out;
  EXPECT_EQ(get_json("/api/v1/gates")["gates"].size(), 1u);
}

TEST_F(Gates, PostNeedsTheTokenAndAValidGateDocument) {
  nlohmann::json good = gate_doc(7, 8);
  good["submitted_by"] = "ci";
  EXPECT_EQ(post("/api/v1/gates", good.dump(), "")->status, 401);
  EXPECT_EQ(post("/api/v1/gates", good.dump(), "wrong")->status, 401);
  auto refused = [&](const std::function<void(nlohmann::json&)>& spoil, const std::string& says) {
    nlohmann::json doc = good;
    spoil(doc);
    auto r = post("/api/v1/gates", doc.dump());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << says;
    EXPECT_NE(r->body.find(says), std::string::npos) << r->body;
  };
  refused([](auto& d) { d.erase("submitted_by"); }, "submitted_by");
  refused([](auto& d) { d["base"] = "abc"; }, "base");
  refused([](auto& d) { d["verdict"] = "maybe"; }, "verdict");
  refused([](auto& d) { d["alpha"] = 2; }, "alpha");
  refused([](auto& d) { d["cells"][0]["key"].erase("model"); }, "cells/0/key");
  refused([](auto& d) { d["ref"] = "a\nb"; }, "ref");
  refused([](auto& d) { d = nlohmann::json::array(); }, "JSON object");
  auto r = post("/api/v1/gates", "{not json");
  EXPECT_EQ(r->status, 400);
  EXPECT_TRUE(get_json("/api/v1/gates")["gates"].empty()) << "a refused post stored something";
  r = post("/api/v1/gates", good.dump());
  ASSERT_EQ(r->status, 201) << r->body;
  EXPECT_EQ(nlohmann::json::parse(r->body)["verdict"], "regression");

  web::ServeOptions no_token;
  no_token.db_path = db_;
  LiveServer closed(no_token);
  EXPECT_EQ(closed.client()->Post("/api/v1/gates", good.dump(), "application/json")->status, 403);
}

TEST_F(Gates, AreListedInPagesWithACursor) {
  nlohmann::json doc = gate_doc(7, 8);
  doc["submitted_by"] = "ci";
  for (int i = 0; i < 7; ++i) ASSERT_EQ(post("/api/v1/gates", doc.dump())->status, 201);
  std::vector<int64_t> ids;
  std::string target = "/api/v1/gates?limit=3";
  for (int page = 0; page < 10; ++page) {
    auto j = get_json(target);
    EXPECT_LE(j["gates"].size(), 3u);
    for (const auto& g : j["gates"]) ids.push_back(g["id"]);
    if (j["next"].is_null()) break;
    target = "/api/v1/gates?limit=3&after=" + std::to_string(j["next"].get<int64_t>());
  }
  ASSERT_EQ(ids.size(), 7u);
  for (size_t i = 1; i < ids.size(); ++i) EXPECT_LT(ids[i - 1], ids[i]);
  get_json("/api/v1/gates?limit=0", 400);
  get_json("/api/v1/gates?limit=501", 400);
  get_json("/api/v1/gates?after=x", 400);
  // Seven gates of one pair: the newest decides, so one alert, not seven.
  EXPECT_EQ(get_json("/api/v1/regressions")["gate_regressions"].size(), 1u);
}

TEST_F(Gates, TheComparePageShowsTheStoredVerdictAndWhyItsOwnMayDiffer) {
  const std::string target = "/compare?base=" + sha(7) + "&head=" + sha(8);
  EXPECT_EQ(get_page(target).find("id=\"stored-gate\""), std::string::npos);
  std::string out;
  ASSERT_EQ(compare(7, 8, {"--record", "--min-effect", "0.5"}, &out), 0) << out;  // 30% < 50%
  const std::string page = get_page(target);
  EXPECT_NE(page.find("id=\"stored-gate\""), std::string::npos);
  EXPECT_NE(page.find("id=\"stored-verdict\" class=\"badge pass\">pass"), std::string::npos);
  EXPECT_NE(page.find("id=\"settings-differ\""), std::string::npos);
  EXPECT_NE(page.find("min effect: 50% (stored gate, fixed) vs 5% (this page, fixed)"),
            std::string::npos)
      << page;
  // Under the gate's own settings the page agrees and has nothing to explain.
  const std::string same = get_page(target + "&min_effect=0.5");
  EXPECT_NE(same.find("id=\"stored-gate\""), std::string::npos);
  EXPECT_EQ(same.find("id=\"settings-differ\""), std::string::npos);
  EXPECT_NE(same.find("id=\"verdict\" class=\"badge big pass\""), std::string::npos);
}

TEST_F(Gates, TheComparePageSaysWhenTheGateWasBlindToItsMinEffect) {
  // Five repetitions of one run a side cannot see a 0.1% slowdown: the box must say so. With one
  // run a side no power can be stated at all (docs/STATISTICS.md "One run per side").
  const std::string target = "/compare?base=" + sha(2) + "&head=" + sha(3);
  const std::string blind = get_page(target + "&min_effect=0.001");
  EXPECT_NE(blind.find("id=\"gate-blind\""), std::string::npos);
  EXPECT_NE(blind.find("This gate was blind to its own min effect"), std::string::npos);
  const auto j =
      get_json("/api/v1/compare?base=" + sha(2) + "&head=" + sha(3) + "&min_effect=0.001");
  EXPECT_TRUE(j["underpowered"].get<bool>());
  EXPECT_TRUE(j["mde"].is_null());
  // Whatever the min effect: the box says why.
  const std::string seeing = get_page(target + "&min_effect=10");
  EXPECT_NE(seeing.find("id=\"gate-blind\""), std::string::npos);
  EXPECT_NE(seeing.find("one run a side"), std::string::npos);
}

// A gate that found a regression was not blind (issue 27): the page says the regressions stand
// and names the cells that could not have shown a slowdown, never "blind to its own min effect";
// it names the test that decided, as `perfgate compare` does.
TEST_F(Gates, AGateThatFoundARegressionNamesTheCellsItCouldNotSee) {
  SeedSpec spec;
  spec.commits = 4;
  spec.reps = 10;  // enough for the rank test over 4 cells
  spec.models = {"tiny", "small"};
  spec.step_at = 2;
  spec.step_factor = 1.3;
  spec.step_models = {"tiny"};  // "small" stays the same: unchanged, and unseen with one run
  const std::string db = dir_.file("found.db");
  {
    store::Store s(db);
    s.import_runs(make_runs(spec));
  }
  web::ServeOptions opt;
  opt.db_path = db;
  LiveServer server(opt);
  const std::string q = "?base=" + commit_sha(1, spec.seed) + "&head=" + commit_sha(2, spec.seed);
  const nlohmann::json j = webtest::get_json(server, "/api/v1/compare" + q);
  ASSERT_EQ(j["verdict"], "regression") << j.dump();
  EXPECT_TRUE(j["underpowered"].get<bool>());
  bool names_unseen = false;
  for (const auto& w : j["warnings"]) {
    const std::string text = w.get<std::string>();
    EXPECT_EQ(text.find("A pass does not rule out"), std::string::npos) << text;
    if (text.rfind("UNDERPOWERED: the regressions found stand, but 2 of 4 compared cells", 0) == 0)
      names_unseen = text.find("small bf16 B=4") != std::string::npos;
  }
  EXPECT_TRUE(names_unseen) << j["warnings"].dump();
  const std::string page = webtest::get_page(server, "/compare" + q);
  EXPECT_EQ(page.find("id=\"gate-blind\""), std::string::npos) << page;
  EXPECT_EQ(page.find("blind to its own min effect"), std::string::npos);
  const size_t box = page.find("id=\"gate-unseen\"");
  ASSERT_NE(box, std::string::npos) << page;
  const std::string unseen = page.substr(box, page.find("</div>", box) - box);
  EXPECT_NE(unseen.find("The regressions found stand."), std::string::npos) << unseen;
  EXPECT_NE(unseen.find("2 unchanged cells"), std::string::npos) << unseen;
  EXPECT_NE(unseen.find("small · bf16 B=1"), std::string::npos) << unseen;
  EXPECT_NE(unseen.find("small · bf16 B=4"), std::string::npos) << unseen;
  EXPECT_EQ(unseen.find("tiny ·"), std::string::npos) << unseen;  // the regressed cells
  EXPECT_NE(unseen.find("no MDE: one run a side"), std::string::npos) << unseen;
  EXPECT_NE(page.find("id=\"gate-rule\">decided by pooled Mann-Whitney on repetitions"),
            std::string::npos)
      << page;
}

}  // namespace
}  // namespace pg::webtest
