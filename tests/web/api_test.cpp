// The JSON API against a live server on loopback: docs/API.md's shapes, and hostile input.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <set>

#include "app/gate_settings.h"
#include "web_fixture.h"

namespace pg::webtest {
namespace {

class Api : public WebFixture {};

TEST_F(Api, HealthzReportsOkAndRunCount) {
  auto j = get_json("/healthz");
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["runs"], runs_.size() + 3);
}

TEST_F(Api, RunsListIsTheExportShapeWithoutSamples) {
  auto j = get_json("/api/v1/runs");
  ASSERT_TRUE(j["runs"].is_array());
  ASSERT_EQ(j["runs"].size(), runs_.size() + 3);
  const auto& first = j["runs"][0];
  EXPECT_EQ(first["git"]["commit"], shas_[0]);
  EXPECT_EQ(first["status"], "complete");
  ASSERT_EQ(first["cells"].size(), 2u);
  EXPECT_TRUE(first["cells"][0]["metrics"].contains("tpot_ms"));
  for (const auto& run : j["runs"])
    for (const auto& cell : run["cells"]) EXPECT_FALSE(cell.contains("samples"));
}

TEST_F(Api, OneRunCarriesItsSamples) {
  auto list = get_json("/api/v1/runs");
  const int64_t id = list["runs"][3]["id"];
  auto j = get_json("/api/v1/runs/" + std::to_string(id));
  EXPECT_EQ(j["id"], id);
  EXPECT_EQ(j["git"]["commit"], shas_[3]);
  const auto& cell = j["cells"][0];
  ASSERT_TRUE(cell.contains("samples"));
  EXPECT_EQ(cell["samples"]["prefill_ms"].size(), 5u);
  ASSERT_EQ(cell["samples"]["decode_ms"].size(), 5u);
  EXPECT_EQ(cell["samples"]["decode_ms"][0].size(), 7u);  // gen_tokens 8 -> 7 decode steps
  EXPECT_DOUBLE_EQ(cell["samples"]["prefill_ms"][0].get<double>(),
                   runs_[3].cells[0].samples.prefill_ms[0]);
}

TEST_F(Api, SeriesListHasKeyEnvAndLatest) {
  auto j = get_json("/api/v1/series");
  ASSERT_TRUE(j["series"].is_array());
  ASSERT_EQ(j["series"].size(), 4u);  // 2 cells x (standard env + the other env)
  for (const auto& s : j["series"]) {
    EXPECT_TRUE(s["id"].is_number_integer());
    EXPECT_EQ(s["key"]["model"], "tiny");
    EXPECT_TRUE(s["env"].contains("device"));
    EXPECT_TRUE(s["latest"].contains("tpot_ms"));
    EXPECT_TRUE(s["latest"].contains("status"));
  }
}

int64_t standard_series_id(const nlohmann::json& list, int batch) {
  for (const auto& s : list["series"])
    if (s["env"]["device"] == "Seed GPU 0" && s["key"]["batch_size"] == batch) return s["id"];
  return -1;
}

TEST_F(Api, SeriesHasOnePointPerCommitInHistoryOrderWithSpreadAndChangePoint) {
  const int64_t id = standard_series_id(get_json("/api/v1/series"), 1);
  ASSERT_GT(id, 0);
  auto j = get_json("/api/v1/series/" + std::to_string(id));
  EXPECT_EQ(j["key"]["batch_size"], 1);
  EXPECT_EQ(j["env"]["device"], "Seed GPU 0");
  // The trend shows the main branch only: the standard history's feature-branch commits
  // (standard_spec: every fourth, from commit 1) are a filter, never mixed in.
  std::vector<size_t> main;
  for (size_t i = 0; i < shas_.size(); ++i)
    if (runs_[i].git.branch == "main") main.push_back(i);
  ASSERT_LT(main.size(), shas_.size());
  ASSERT_EQ(j["points"].size(), main.size());
  EXPECT_EQ(j["branch"], "main");
  for (size_t k = 0; k < main.size(); ++k) {
    const size_t i = main[k];
    const auto& p = j["points"][k];
    EXPECT_EQ(p["commit"], shas_[i]);
    EXPECT_TRUE(p["run_id"].is_number_integer());
    EXPECT_EQ(p["time"], *runs_[i].git.time);
    const auto& s = p["spread"];
    EXPECT_EQ(s["n"], 5);
    EXPECT_LE(s["min"].get<double>(), s["q1"].get<double>());
    EXPECT_LE(s["q1"].get<double>(), p["median"].get<double>());
    EXPECT_LE(p["median"].get<double>(), s["q3"].get<double>());
    EXPECT_LE(s["q3"].get<double>(), s["max"].get<double>());
  }
  const size_t at2 = std::find(main.begin(), main.end(), 2) - main.begin();
  const size_t at8 = std::find(main.begin(), main.end(), 8) - main.begin();
  ASSERT_LT(at8, main.size());
  EXPECT_EQ(j["points"][at2]["subject"], "<script>alert(1)</script>");  // JSON keeps the text
  // The 30% step at commit 8 is the one change point, flagged as a regression.
  ASSERT_EQ(j["change_points"].size(), 1u) << j["change_points"].dump();
  EXPECT_EQ(j["change_points"][0]["index"], at8);
  EXPECT_EQ(j["change_points"][0]["commit"], shas_[8]);
  EXPECT_EQ(j["change_points"][0]["direction"], "regression");
  EXPECT_NEAR(j["change_points"][0]["relative"].get<double>(), 0.3, 0.05);
  EXPECT_EQ(j["points"][at8]["flag"], "regression");
  EXPECT_EQ(j["status"], "regressed");
}

TEST_F(Api, SeriesMetricSwitch) {
  const int64_t id = standard_series_id(get_json("/api/v1/series"), 4);
  const std::string base = "/api/v1/series/" + std::to_string(id);
  auto tpot = get_json(base);
  auto thr = get_json(base + "?metric=decode_tok_s");
  auto mem = get_json(base + "?metric=peak_alloc_bytes");
  auto pre = get_json(base + "?metric=prefill_ms");
  EXPECT_EQ(thr["metric"], "decode_tok_s");
  // Throughput of batch 4 = 4 * 1000 / tpot per repetition: the medians agree.
  EXPECT_NEAR(thr["points"][0]["median"].get<double>(),
              4000.0 / tpot["points"][0]["median"].get<double>(), 1.0);
  EXPECT_EQ(mem["points"][0]["spread"]["n"], 1);
  EXPECT_EQ(pre["points"].size(), tpot["points"].size());
  // A slower decode is a drop in throughput, still called a regression.
  ASSERT_EQ(thr["change_points"].size(), 1u);
  EXPECT_EQ(thr["change_points"][0]["direction"], "regression");
  get_json(base + "?metric=bogus", 400);
  get_json(base + "?metric=tpot_ms%27%20OR%201=1", 400);
}

TEST_F(Api, TrendTwinOverlaysSeriesOnOneCommitAxis) {
  auto list = get_json("/api/v1/series");
  std::vector<int64_t> ids;
  for (const auto& s : list["series"]) ids.push_back(s["id"]);
  auto j = get_json("/api/v1/trend?ids=" + std::to_string(ids[0]) + "," + std::to_string(ids[3]));
  ASSERT_EQ(j["series"].size(), 2u);
  std::set<std::string> labels;
  for (const auto& a : j["axis"]) labels.insert(a["label"].get<std::string>());
  EXPECT_EQ(labels.size(), j["axis"].size()) << "axis labels must be unique";
  for (const auto& s : j["series"]) ASSERT_EQ(s["x"].size(), s["points"].size());
  get_json("/api/v1/trend", 400);
  get_json("/api/v1/trend?ids=1,x", 400);
  get_json("/api/v1/trend?ids=999999", 404);
}

TEST_F(Api, OverviewTwinGroupsAndFilters) {
  auto all = get_json("/api/v1/overview");
  EXPECT_EQ(all["total_series"], 4);
  ASSERT_EQ(all["groups"].size(), 2u);  // tiny on Seed GPU 0 and on Seed GPU 5
  auto b4 = get_json("/api/v1/overview?batch=4&model=tiny");
  EXPECT_EQ(b4["shown_series"], 2);
  for (const auto& g : b4["groups"])
    for (const auto& s : g["series"]) EXPECT_EQ(s["key"]["batch_size"], 4);
  auto none = get_json("/api/v1/overview?model=%3Cscript%3E");
  EXPECT_EQ(none["shown_series"], 0);
  get_json("/api/v1/overview?batch=four", 400);
  get_json("/api/v1/overview?prompt=99999999999999999999", 400);
}

TEST_F(Api, CompareFindsTheRegressionAndNamesRevisions) {
  auto j = get_json("/api/v1/compare?base=" + shas_[7] + "&head=" + shas_[8]);
  EXPECT_EQ(j["base"], shas_[7]);
  EXPECT_EQ(j["head"], shas_[8]);
  EXPECT_EQ(j["verdict"], "regression");
  // Decode latency's cells first, then those of peak memory (the default metrics), which the
  // seeds' runs record and which did not change.
  ASSERT_EQ(j["cells"].size(), 4u);
  for (const auto& c : j["cells"]) {
    if (c["metric"] == "peak_alloc_bytes") {
      EXPECT_EQ(c["verdict"], "unchanged");
      EXPECT_EQ(c["test"], "exact");
      continue;
    }
    EXPECT_EQ(c["metric"], "tpot_ms");
    EXPECT_EQ(c["verdict"], "regression");
    EXPECT_NEAR(c["ratio"].get<double>(), 1.3, 0.05);
  }
  EXPECT_EQ(j["cells"][0]["metric"], "tpot_ms");
  // Short prefixes and stored branch names resolve too.
  auto short_prefix =
      get_json("/api/v1/compare?base=" + shas_[6].substr(0, 8) + "&head=" + shas_[7].substr(0, 12));
  EXPECT_EQ(short_prefix["verdict"], "pass");
  auto by_branch = get_json("/api/v1/compare?base=" + shas_[0] + "&head=main");
  EXPECT_EQ(by_branch["head"], shas_[15]);
  auto quoted = get_json("/api/v1/compare?base=main&head=" +
                         httplib::detail::encode_query_param("feat/\"quoted\"&'branch'<b>"));
  EXPECT_EQ(quoted["head"], shas_[13]);
}

TEST_F(Api, CompareCanKeepTheRunsOfOneDevice) {
  // Both "abcd" commits were measured on Seed GPU 5 only.
  auto j = get_json("/api/v1/compare?base=" + prefix_a_ + "&head=" + prefix_b_ +
                    "&device=Seed%20GPU%205");
  EXPECT_EQ(j["notes"][0], "runs filtered to device 'Seed GPU 5'");
  get_json("/api/v1/compare?base=" + prefix_a_ + "&head=" + prefix_b_ + "&device=Seed%20GPU%200",
           404);
}

// The CLI writes a setting named in a warning as its flag ("--min-effect"), the API as its query
// parameter ("min_effect", common/errors.h); everything else in the two documents is identical.
nlohmann::json with_query_spelling(nlohmann::json compare) {
  for (auto& warning : compare["warnings"]) {
    std::string text = warning.get<std::string>();
    for (const std::string& name : app::gate_setting_names()) {
      std::string flag = "--" + name;
      std::replace(flag.begin() + 2, flag.end(), '_', '-');
      for (size_t at = text.find(flag); at != std::string::npos; at = text.find(flag, at))
        text.replace(at, flag.size(), name);
    }
    warning = text;
  }
  return compare;
}

TEST_F(Api, CompareJsonIsTheCliJson) {
  std::string out;
  const int rc = run_command({perfgate_bin(), "compare", "--db", db_, "--base", shas_[7], "--head",
                              shas_[8], "--format", "json"},
                             &out);
  EXPECT_EQ(rc, 1) << out;  // regression
  auto cli = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(cli.is_discarded()) << out;
  cli = with_query_spelling(cli);
  auto web = get_json("/api/v1/compare?base=" + shas_[7] + "&head=" + shas_[8]);
  EXPECT_EQ(web, cli) << "web:\n" << web.dump(2) << "\ncli:\n" << cli.dump(2);
}

// One use case (app::compare) behind both: under any settings the CLI and the API agree on the
// verdict, the exit code and every byte of the JSON.
TEST_F(Api, CompareUnderUserSettingsIsTheCliVerdict) {
  struct Case {
    std::vector<std::string> flags;
    std::string query;
  };
  const std::vector<Case> cases = {
      {{}, ""},
      {{"--min-effect", "0.5"}, "&min_effect=0.5"},
      {{"--min-effect", "auto"}, "&min_effect=auto"},
      {{"--alpha", "0.2", "--correction", "bh"}, "&alpha=0.2&correction=bh"},
  };
  for (const auto& [base, head] : {std::pair{shas_[7], shas_[8]}, std::pair{shas_[5], shas_[6]}}) {
    for (const Case& c : cases) {
      std::vector<std::string> argv = {perfgate_bin(), "compare", "--db", db_,        "--base",
                                       base,           "--head",  head,   "--format", "json"};
      argv.insert(argv.end(), c.flags.begin(), c.flags.end());
      std::string out;
      const int rc = run_command(argv, &out);
      auto cli = nlohmann::json::parse(out, nullptr, false);
      ASSERT_FALSE(cli.is_discarded()) << out;
      cli = with_query_spelling(cli);
      auto web = get_json("/api/v1/compare?base=" + base + "&head=" + head + c.query);
      EXPECT_EQ(web["verdict"], cli["verdict"]) << c.query;
      const std::string verdict = web["verdict"];
      EXPECT_EQ(rc, verdict == "pass" ? 0 : verdict == "regression" ? 1 : 3) << c.query;
      EXPECT_EQ(web, cli) << c.query << "\nweb:\n" << web.dump(2) << "\ncli:\n" << cli.dump(2);
    }
  }
  // A large enough min_effect turns the regression into a pass, in both.
  EXPECT_EQ(get_json("/api/v1/compare?base=" + shas_[7] + "&head=" + shas_[8] +
                     "&min_effect=0.5")["verdict"],
            "pass");
}

// serve's gate settings are the badges' and the compare page's: a server told min_effect 0.9 calls
// nothing regressed, and compares under that rule unless the request says otherwise.
TEST_F(Api, ServeGateSettingsDriveBadgesAndCompareDefaults) {
  auto regressed = [](const nlohmann::json& overview) {
    return overview["status_counts"].value("regressed", 0);
  };
  ASSERT_GT(regressed(get_json("/api/v1/overview")), 0) << "the standard history has a regression";
  web::ServeOptions opt;
  opt.db_path = db_;
  opt.gate_settings.gate.min_effect = 0.9;
  LiveServer lenient(opt);
  auto c = lenient.client();
  auto get_lenient = [&](const std::string& target) {
    auto r = c->Get(target);
    EXPECT_TRUE(r && r->status == 200) << target;
    return r ? nlohmann::json::parse(r->body, nullptr, false) : nlohmann::json();
  };
  EXPECT_EQ(regressed(get_lenient("/api/v1/overview")), 0);
  auto cmp = get_lenient("/api/v1/compare?base=" + shas_[7] + "&head=" + shas_[8]);
  EXPECT_EQ(cmp["verdict"], "pass");
  EXPECT_DOUBLE_EQ(cmp["min_effect"].get<double>(), 0.9);
  auto strict =
      get_lenient("/api/v1/compare?base=" + shas_[7] + "&head=" + shas_[8] + "&min_effect=0.05");
  EXPECT_EQ(strict["verdict"], "regression");
  auto series = get_lenient("/api/v1/series");
  ASSERT_FALSE(series["series"].empty());
  const int64_t id = series["series"][0]["id"];
  EXPECT_DOUBLE_EQ(
      get_lenient("/api/v1/series/" + std::to_string(id))["rules"]["min_effect"].get<double>(),
      0.9);
}

TEST_F(Api, CompareRejectsBadSettingsNamingTheSetting) {
  const std::string q = "/api/v1/compare?base=" + shas_[7] + "&head=" + shas_[8];
  for (const auto& [param, value] :
       std::vector<std::pair<std::string, std::string>>{{"min_effect", "-1"},
                                                        {"min_effect", "inf"},
                                                        {"min_effect", "lots"},
                                                        {"alpha", "0"},
                                                        {"correction", "fdr"}}) {
    auto j = get_json(q + "&" + param + "=" + value, 400);
    EXPECT_EQ(j["error"].get<std::string>().rfind(param + " ", 0), 0u) << j.dump();
  }
}

TEST_F(Api, CompareRejectsBadAndUnknownRevisionsWithoutA500) {
  get_json("/api/v1/compare", 400);
  get_json("/api/v1/compare?base=" + shas_[0], 400);
  get_json("/api/v1/compare?base=" + shas_[0] + "&head=deadbeef", 404);
  get_json("/api/v1/compare?base=" + std::string(40, 'f') + "&head=" + shas_[1], 404);
  get_json("/api/v1/compare?base=x%27%3B%20DROP%20TABLE%20runs%3B--&head=" + shas_[1], 404);
  get_json("/api/v1/compare?base=abcd&head=" + shas_[1], 400);  // two stored commits: ambiguous
  get_json("/api/v1/compare?base=%00&head=" + shas_[1], 400);
  get_json("/api/v1/compare?base=" + std::string(5000, 'a') + "&head=" + shas_[1], 400);
  get_json("/api/v1/compare?base=" + shas_[0] + "&head=" + shas_[1] + "&alpha=2", 400);
  get_json("/api/v1/compare?base=" + shas_[0] + "&head=" + shas_[1] + "&alpha=nan", 400);
  // The tables survived.
  EXPECT_EQ(get_json("/healthz")["runs"], runs_.size() + 3);
}

TEST_F(Api, HostileIdsAreClientErrors) {
  for (const char* t : {"/api/v1/runs/abc", "/api/v1/runs/-1", "/api/v1/runs/0", "/api/v1/runs/1.5",
                        "/api/v1/runs/99999999999999999999999", "/api/v1/runs/1%20OR%201=1",
                        "/api/v1/runs/1%00", "/api/v1/series/0x10", "/api/v1/series/%27--"}) {
    auto r = get(t);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << t;
    auto j = nlohmann::json::parse(r->body, nullptr, false);
    EXPECT_TRUE(j.contains("error")) << t << ": " << r->body;
  }
  for (const char* t :
       {"/api/v1/runs/999999", "/api/v1/series/999999", "/api/v1/nope", "/api/v1/runs/1/extra"}) {
    auto r = get(t);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 404) << t;
  }
}

TEST_F(Api, RawHostileTargetsNeverReachTheFileSystemOrA500) {
  const int port = server_->port();
  for (const std::string t : {"/static/../../etc/passwd", "/static/..%2f..%2fetc%2fpasswd",
                              "/static/%2e%2e/%2e%2e/etc/passwd", "/static/style.css%00.js",
                              "/static//etc/passwd", "/../../etc/passwd", "/static/", "/%00",
                              "/api/v1/runs/%ff%fe", "/series/1%0d%0aSet-Cookie:%20x=1"}) {
    RawResponse r = raw_get(port, t);
    EXPECT_GE(r.status, 400) << t;
    EXPECT_LT(r.status, 500) << t;
    EXPECT_EQ(r.body.find("root:"), std::string::npos) << t;
    EXPECT_EQ(r.head.find("Set-Cookie"), std::string::npos) << t;
  }
  // A request line httplib cannot parse is a 400, and the server keeps serving.
  EXPECT_EQ(raw_request(port, "BOGUS\r\n\r\n", true).status, 400);
  EXPECT_EQ(raw_get(port, "/healthz").status, 200);
}

TEST_F(Api, StaticAssetsComeFromTheBinaryWithCachingAndGzip) {
  auto r = get("/static/plotly.min.js");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_GT(r->body.size(), 1'000'000u);
  EXPECT_NE(r->get_header_value("Content-Type").find("javascript"), std::string::npos);
  const std::string etag = r->get_header_value("ETag");
  EXPECT_FALSE(etag.empty());
  auto cached = get("/static/plotly.min.js", {{"If-None-Match", etag}});
  EXPECT_EQ(cached->status, 304);
  auto gz = get("/static/plotly.min.js", {{"Accept-Encoding", "gzip, deflate, br"}});
  EXPECT_EQ(gz->get_header_value("Content-Encoding"), "gzip");
  EXPECT_LT(gz->body.size(), r->body.size() / 2);
  // The versioned URL the pages use is cacheable for a year.
  auto page = get("/");
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(page->body, m, std::regex(R"re(/static/style\.css\?v=([0-9a-f]+))re")));
  auto css = get(m[0].str());
  EXPECT_EQ(css->status, 200);
  EXPECT_NE(css->get_header_value("Cache-Control").find("immutable"), std::string::npos);
  EXPECT_EQ(get("/static/nope.js")->status, 404);
}

TEST_F(Api, ApiErrorsAreJsonAndPagesErrorsAreHtml) {
  auto api = get("/api/v1/runs/999999");
  EXPECT_NE(api->get_header_value("Content-Type").find("json"), std::string::npos);
  auto page = get("/runs/999999");
  EXPECT_EQ(page->status, 404);
  EXPECT_NE(page->get_header_value("Content-Type").find("text/html"), std::string::npos);
}

}  // namespace
}  // namespace pg::webtest
