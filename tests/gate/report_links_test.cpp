// The reports' links to a dashboard (ReportInfo::dashboard_url, gate/report_links.h) on a
// synthetic GateResult: the compare page of the pair with the gate's settings where they differ
// from the defaults, each regressed cell's trend by its key, every value URL-encoded, and the URL
// itself checked before anything is written.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "ci_fixtures.h"
#include "common/errors.h"
#include "gate/report.h"
#include "gate/report_links.h"

namespace pg {
namespace {

const std::string kBase = "1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const std::string kHead = "2222222bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
const std::string kDash = "https://perf.example.org/pg/";

gate::CellComparison cell(int batch, gate::CellVerdict v, double ratio) {
  gate::CellComparison c;
  c.key = test::cpu_key(batch, 16);
  c.verdict = v;
  c.base_median = 1.0;
  c.head_median = ratio;
  c.ratio = ratio;
  c.base_n = c.head_n = 10;
  c.base_runs = c.head_runs = 2;
  return c;
}

gate::GateResult result() {
  gate::GateResult r;
  r.base = kBase;
  r.head = kHead;
  r.verdict = gate::GateVerdict::regression;
  r.cells = {cell(1, gate::CellVerdict::regression, 1.3),
             cell(2, gate::CellVerdict::unchanged, 1.0)};
  // A model name with every character a URL must escape.
  r.cells[0].key.model = "file:/m y/a&b=c?d#e%f.safetensors";
  return r;
}

std::string render(const gate::GateReporter& rep, const gate::GateResult& r,
                   const std::string& dash) {
  gate::ReportInfo info;
  info.dashboard_url = dash;
  std::ostringstream s;
  rep.report(r, info, s);
  return s.str();
}

const std::string kTrend0 =
    "https://perf.example.org/pg/series?model=file%3A%2Fm%20y%2Fa%26b%3Dc%3Fd%23e%25f.safetensors"
    "&dtype=fp32&batch_size=1&seq_len=16&gen_tokens=8&kv_cache=true&attention=math"
    "&cuda_graphs=false&device=cpu&metric=tpot_ms";

TEST(ReportLinks, TheComparePageOfThePairCarriesOnlySettingsThatDifferFromTheDefaults) {
  gate::GateResult r = result();
  EXPECT_EQ(gate::report_links::compare_url(kDash, r),
            "https://perf.example.org/pg/compare?base=" + kBase + "&head=" + kHead);
  r.options.alpha = 0.05;
  r.options.min_effect = 0.1;
  r.options.metric_min_effect = {{"prefill_ms", 0.2}};
  r.options.metrics = {"tpot_ms", "prefill_ms"};
  r.options.correction = "bh";
  EXPECT_EQ(gate::report_links::compare_url("http://127.0.0.1:8080", r),
            "http://127.0.0.1:8080/compare?base=" + kBase + "&head=" + kHead +
                "&alpha=0.05&min_effect=0.1%2Cprefill_ms%3D0.2&metrics=tpot_ms%2Cprefill_ms"
                "&correction=bh");
  // min effect 'auto': the number it chose, so the page applies the gate's rule.
  r = result();
  r.options.min_effect = 0.031;
  r.options.min_effect_source = "auto (3 x run-to-run sd)";
  EXPECT_NE(gate::report_links::compare_url(kDash, r).find("&min_effect=0.031"), std::string::npos);
}

TEST(ReportLinks, ACellsTrendIsNamedByItsKeyEveryValueEncoded) {
  EXPECT_EQ(gate::report_links::trend_url(kDash, result().cells[0]), kTrend0);
}

TEST(ReportLinks, MarkdownLinksThePairAndEachRegressedCellOnly) {
  const std::string md = render(gate::GateMarkdownReporter{}, result(), kDash);
  EXPECT_NE(md.find("[This comparison on the dashboard](https://perf.example.org/pg/compare?base=" +
                    kBase + "&head=" + kHead + ")\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("` ([trend](" + kTrend0 + ")) |"), std::string::npos) << md;
  EXPECT_EQ(md.find("batch_size=2"), std::string::npos) << md;  // unchanged: no link
  EXPECT_EQ(render(gate::GateMarkdownReporter{}, result(), "").find("dashboard"),
            std::string::npos);
}

TEST(ReportLinks, EachErrorAnnotationEndsWithItsTrendEscapedAsCommandData) {
  const std::string gh = render(gate::GateGithubReporter{}, result(), kDash);
  std::string expect = kTrend0;
  for (size_t i = 0; (i = expect.find('%', i)) != std::string::npos; i += 3)
    expect.replace(i, 1, "%25");  // the runner reads %25 as %
  const size_t error = gh.find("::error ");
  ASSERT_NE(error, std::string::npos) << gh;
  const std::string line = gh.substr(error, gh.find('\n', error) - error);
  EXPECT_TRUE(line.ends_with(" · trend: " + expect)) << line;
  EXPECT_EQ(render(gate::GateGithubReporter{}, result(), "").find("trend:"), std::string::npos);
}

TEST(ReportLinks, JsonHasLinksAndATrendPerCellOnlyWhenGiven) {
  auto j = nlohmann::json::parse(render(gate::GateJsonReporter{}, result(), kDash));
  EXPECT_EQ(j["links"]["dashboard"], "https://perf.example.org/pg");
  EXPECT_EQ(j["links"]["compare"], gate::report_links::compare_url(kDash, result()));
  EXPECT_EQ(j["cells"][0]["trend_url"], kTrend0);
  EXPECT_NE(j["cells"][1]["trend_url"].get<std::string>().find("batch_size=2"), std::string::npos);
  auto plain = nlohmann::json::parse(render(gate::GateJsonReporter{}, result(), ""));
  EXPECT_FALSE(plain.contains("links"));
  EXPECT_FALSE(plain["cells"][0].contains("trend_url"));
}

TEST(ReportLinks, OnlyAPlainHttpUrlIsADashboard) {
  for (const char* good : {"http://127.0.0.1:8080", "https://perf.example.org/pg/",
                           "http://[::1]:8080/", "https://perf-1.internal/a/b_c/~d"})
    EXPECT_NO_THROW(gate::report_links::check_dashboard_url(good)) << good;
  for (const char* bad : {"", "perf.example.org", "ftp://perf.example.org", "https://",
                          "https://perf.example.org/?a=1", "https://perf.example.org/#x",
                          "https://perf example.org", "https://perf.example.org/\"><script>",
                          "https://perf.example.org/a)b", "https://perf.example.org/\n"}) {
    try {
      gate::report_links::check_dashboard_url(bad);
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const SettingError& e) {
      EXPECT_EQ(e.settings().front(), "dashboard_url") << e.what();
    }
  }
}

}  // namespace
}  // namespace pg
