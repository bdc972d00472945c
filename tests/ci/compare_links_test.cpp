// `perfgate compare --dashboard-url` end to end: the real binary on a real SQLite store writes the
// dashboard's links into the Markdown, the GitHub annotations and the JSON, and refuses a URL it
// could not splice safely, naming the flag.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "compare_cli_fixture.h"

namespace pg {
namespace {

TEST_F(CompareCli, DashboardUrlLinksEveryReportToThePairAndTheRegressedCells) {
  store_runs(base, 2, 1.0, 40);
  store_runs(head, 2, 1.25, 41);
  const std::string md = dir / "report.md", js = dir / "report.json";
  auto r =
      compare({"--base", base, "--head", "feature", "--format", "markdown", "--github", "--output",
               md, "--json", js, "--dashboard-url", "http://127.0.0.1:8080/pg/", "--alpha", "0.05",
               "--min-effect", "0.1,prefill_ms=0.2", "--metrics", "tpot_ms,prefill_ms"});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const std::string compare_url =
      "http://127.0.0.1:8080/pg/compare?base=" + base + "&head=" + head +
      "&alpha=0.05&min_effect=0.1%2Cprefill_ms%3D0.2&metrics=tpot_ms%2Cprefill_ms";
  std::ifstream mdin(md);
  const std::string report((std::istreambuf_iterator<char>(mdin)), {});
  EXPECT_NE(report.find("[This comparison on the dashboard](" + compare_url + ")"),
            std::string::npos)
      << report;
  const std::string trend = "http://127.0.0.1:8080/pg/series?model=tiny&dtype=fp32&batch_size=";
  EXPECT_NE(report.find("([trend](" + trend), std::string::npos) << report;
  EXPECT_NE(r.out.find(" · trend: " + trend), std::string::npos) << r.out;

  std::ifstream jin(js);
  const auto j = nlohmann::json::parse(jin);
  EXPECT_EQ(j["links"]["compare"], compare_url);
  EXPECT_EQ(j["links"]["dashboard"], "http://127.0.0.1:8080/pg");
  for (const auto& c : j["cells"])
    EXPECT_EQ(c["trend_url"].get<std::string>().rfind(trend, 0), 0u) << c.dump();

  // Without the flag, no links.
  auto plain = compare_json({"--base", base, "--head", head}, 1);
  EXPECT_FALSE(plain.contains("links"));
  EXPECT_FALSE(plain["cells"][0].contains("trend_url"));
}

TEST_F(CompareCli, ABadDashboardUrlExitsTwoNamingTheFlag) {
  store_runs(base, 1, 1.0, 42);
  store_runs(head, 1, 1.0, 43);
  for (const char* bad : {"perf.example.org", "ftp://perf.example.org", "https://x/?a=1",
                          "https://x/#top", "https://x/a b", "https://x/\"><script>"}) {
    auto r = compare({"--base", base, "--head", head, "--dashboard-url", bad});
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.out << r.err;
    EXPECT_NE(r.err.find("--dashboard-url must be http(s)://HOST[:PORT][/PREFIX]"),
              std::string::npos)
        << bad << ": " << r.err;
    EXPECT_EQ(r.err.find("dashboard_url"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;  // refused before any report
  }
}

}  // namespace
}  // namespace pg
