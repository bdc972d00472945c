// `perfgate compare` end to end: the real binary on real SQLite files (and
// a real git repository for revisions), runs written through the Store API.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "ci_fixtures.h"
#include "compare_cli_fixture.h"
#include "store/store.h"

namespace pg {
namespace {

using test::run_command;

TEST_F(CompareCli, IdenticalWorkloadPasses) {
  store_runs(base, 2, 1.0, 1);
  store_runs(head, 2, 1.0, 2);
  auto j = compare_json({"--base", base, "--head", head}, 0);
  EXPECT_EQ(j["verdict"], "pass");
  EXPECT_EQ(j["base"], base);
  EXPECT_EQ(j["head"], head);
  ASSERT_EQ(j["cells"].size(), 3u);
  for (const auto& c : j["cells"]) EXPECT_EQ(c["verdict"], "unchanged") << c.dump();
}

TEST_F(CompareCli, DefaultTableFormatPrintsTheCellsAndTheVerdict) {
  // Guards against a silent ODR clash too: runner/ has a pg::TableReporter of its own.
  store_runs(base, 1, 1.0, 20);
  store_runs(head, 1, 1.3, 21);
  auto r = compare({"--base", base, "--head", head});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out.rfind("perfgate compare: base " + base.substr(0, 7), 0), 0u) << r.out;
  EXPECT_NE(r.out.find("tiny fp32 B=4 P=16"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("REGRESSION: 3 regressions"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\033'), std::string::npos) << "no colour into a pipe";
}

TEST_F(CompareCli, CsvFormatHasOneRowPerCellAndTheSameExitCode) {
  store_runs(base, 1, 1.0, 20);
  store_runs(head, 1, 1.3, 21);
  auto r = compare({"--base", base, "--head", head, "--format", "csv"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  std::vector<std::string> rows;
  while (std::getline(lines, line)) rows.push_back(line);
  ASSERT_EQ(rows.size(), 1 + keys.size()) << r.out;
  EXPECT_EQ(rows[0].rfind("base,head,model,dtype,batch_size,seq_len,", 0), 0u) << rows[0];
  for (size_t i = 1; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].rfind(base + "," + head + ",tiny,fp32,", 0), 0u) << rows[i];
    EXPECT_NE(rows[i].find(",tpot_ms,regression,"), std::string::npos) << rows[i];
  }
}

TEST_F(CompareCli, SlowerHeadIsARegressionWithPooledCounts) {
  store_runs(base, 2, 1.0, 3);
  store_runs(head, 3, 1.2, 4);
  auto j = compare_json({"--base", "main~1", "--head", "feature"}, 1);
  EXPECT_EQ(j["verdict"], "regression");
  for (const auto& c : j["cells"]) {
    EXPECT_EQ(c["verdict"], "regression") << c.dump();
    EXPECT_NEAR(c["ratio"].get<double>(), 1.2, 0.03);
    EXPECT_LE(c["ci_low"].get<double>(), c["ratio"].get<double>());
    EXPECT_GE(c["ci_high"].get<double>(), c["ratio"].get<double>());
    EXPECT_LT(c["p_adjusted"].get<double>(), 0.01);
    EXPECT_EQ(c["base_runs"], 2);
    EXPECT_EQ(c["head_runs"], 3);
    EXPECT_EQ(c["base_n"], 20);
    EXPECT_EQ(c["head_n"], 30);
  }
  // A faster head is an improvement, and passes.
  auto back = compare_json({"--base", head, "--head", base}, 0);
  for (const auto& c : back["cells"]) EXPECT_EQ(c["verdict"], "improvement");
}

TEST_F(CompareCli, SmallSignificantChangeBelowMinEffectIsUnchanged) {
  // 5 runs per side: the run-level test has 8 degrees of freedom, enough to call 3% significant
  // (with 2 runs per side, 2 degrees of freedom, it is not, and the gate says it is underpowered).
  store_runs(base, 5, 1.0, 5, 10);
  store_runs(head, 5, 1.03, 6, 10);
  auto j = compare_json({"--base", base, "--head", head}, 0);
  for (const auto& c : j["cells"]) EXPECT_EQ(c["verdict"], "unchanged") << c.dump();
  auto strict = compare_json({"--base", base, "--head", head, "--min-effect", "0.01"}, 1);
  EXPECT_EQ(strict["verdict"], "regression");
}

TEST_F(CompareCli, TwoLevelFieldsAutoMinEffectAndSequentialLooksInTheJson) {
  store_runs(base, 3, 1.0, 31, 10);
  store_runs(head, 3, 1.0, 32, 10);
  auto j = compare_json({"--base", base, "--head", head, "--min-effect", "auto"}, 0);
  // The base's 3 runs are the history: the threshold is 3 run spreads, with the rule shown.
  EXPECT_NE(j["min_effect_source"].get<std::string>().find("auto: 3 x the run-to-run sd"),
            std::string::npos)
      << j["min_effect_source"];
  EXPECT_GE(j["min_effect"].get<double>(), 0.005);
  EXPECT_TRUE(j["drift_estimated"].get<bool>());
  ASSERT_TRUE(j["mde"].is_number());
  ASSERT_TRUE(j["mde_all_cells"].is_number());
  EXPECT_LE(j["mde_all_cells"].get<double>(), j["mde"].get<double>());
  EXPECT_GT(j["measured_seconds"].get<double>(), 0.0);
  EXPECT_EQ(j["sequential"]["max_looks"], 1);
  EXPECT_EQ(j["sequential"]["next"], "stop");
  for (const auto& c : j["cells"]) {
    EXPECT_EQ(c["ci_method"], "runs-t");
    EXPECT_EQ(c["runs_df"], 4.0);
    EXPECT_TRUE(c["mde"].is_number());
    EXPECT_TRUE(c["run_sd"].is_number());
    EXPECT_TRUE(c["rep_sd"].is_number());
    EXPECT_EQ(c["test"], "runs-t");  // the t test decides; the pooled Mann-Whitney is reported
    EXPECT_EQ(c["p_adjusted"], c["runs_p_adjusted"]);
    EXPECT_TRUE(c["mann_whitney_p"].is_number());
    EXPECT_TRUE(c["mw_p_adjusted"].is_number());
    EXPECT_EQ(c["ratio"], c["runs_ratio"]);
  }
  // An impossible power demand: look 1 of 3 asks for another round (exit 3), the last look decides.
  auto first = compare_json(
      {"--base", base, "--head", head, "--min-effect", "0.0001", "--look", "1", "--max-looks", "3"},
      3);
  EXPECT_EQ(first["sequential"]["next"], "continue");
  EXPECT_TRUE(first["underpowered"].get<bool>());
  EXPECT_NEAR(first["sequential"]["alpha_per_look"].get<double>(), 0.01 / 3, 1e-12);
  auto last = compare_json(
      {"--base", base, "--head", head, "--min-effect", "0.0001", "--look", "3", "--max-looks", "3"},
      0);
  EXPECT_EQ(last["sequential"]["next"], "stop");
  compare_json({"--base", base, "--head", head, "--min-effect", "0.0001", "--require-power"}, 3);
}

TEST_F(CompareCli, MetricsFlagGatesPrefillAndMemoryEachNamedInTheReport) {
  // Peak memory doubled on the head, tpot and prefill unchanged: the default metrics (decode
  // latency and memory) fail the gate on memory, and the report names the metric.
  auto store_with_memory = [&](const std::string& sha, double bytes, uint32_t seed) {
    store::Store s(db);
    for (int r = 0; r < 3; ++r) {
      pg::Run run = test::synthetic_run(sha, keys, noisy(1.0, 10, seed + 97 * r), test::cpu_env());
      for (CellResult& c : run.cells) c.metrics["peak_alloc_bytes"] = bytes;
      s.import_run(run);
    }
  };
  store_with_memory(base, 1e9, 41);
  store_with_memory(head, 2e9, 42);
  auto j = compare_json({"--base", base, "--head", head}, 1);
  ASSERT_EQ(j["cells"].size(), 2 * keys.size());
  EXPECT_EQ(j["cells"][0]["metric"], "tpot_ms");  // decode latency's cells first, as before
  int memory_regressions = 0;
  for (const auto& c : j["cells"])
    memory_regressions +=
        c["metric"] == "peak_alloc_bytes" && c["verdict"] == "regression" && c["test"] == "exact";
  EXPECT_EQ(memory_regressions, int(keys.size()));
  ASSERT_EQ(j["metrics"].size(), 2u);
  EXPECT_EQ(j["metrics"][1]["kind"], "exact");
  EXPECT_EQ(j["metrics"][1]["tolerance_bytes"], 1048576.0);
  auto table = compare({"--base", base, "--head", head});
  EXPECT_NE(table.out.find("in peak memory (peak_alloc_bytes)"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("[peak_alloc_bytes]"), std::string::npos) << table.out;
  // Decode latency and prefill only, prefill with its own min effect: a pass.
  auto tested = compare_json({"--base", base, "--head", head, "--metrics", "tpot_ms,prefill_ms",
                              "--min-effect", "0.05,prefill_ms=0.1"},
                             0);
  ASSERT_EQ(tested["metrics"].size(), 2u);
  EXPECT_EQ(tested["metrics"][1]["metric"], "prefill_ms");
  EXPECT_EQ(tested["metrics"][1]["min_effect"], 0.1);
  EXPECT_EQ(tested["cells"].back()["metric"], "prefill_ms");
  // Bad settings are usage errors that name the flag.
  auto bad = compare({"--base", base, "--head", head, "--metrics", "tpot_ms,bogus"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--metrics must be among"), std::string::npos) << bad.err;
  bad = compare({"--base", base, "--head", head, "--min-effect", "0.05,prefill_ms=0.1"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("which is not among --metrics"), std::string::npos) << bad.err;
}

TEST_F(CompareCli, MergeBaseIsResolvedWithGit) {
  store_runs(base, 1, 1.0, 7);
  store_runs(head, 1, 1.0, 8);
  auto j = compare_json({"--base", "merge-base", "--head", "feature", "--main", "main"}, 0);
  EXPECT_EQ(j["base"], base);
  EXPECT_EQ(j["head"], head);
}

TEST_F(CompareCli, MissingBaselineIsInconclusiveUnlessAllowed) {
  store_runs(head, 2, 1.0, 9);
  auto r = compare({"--base", other, "--head", head});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("no baseline"), std::string::npos) << r.out;
  auto allowed = compare({"--base", other, "--head", head, "--allow-missing-baseline"});
  EXPECT_EQ(allowed.exit_code, 0) << allowed.out << allowed.err;
}

TEST_F(CompareCli, DifferentEnvironmentsAreIncomparable) {
  Environment gpu_like = test::cpu_env();
  gpu_like["torch"] = "2.10.0";
  store_runs(base, 2, 1.0, 10, 10, gpu_like);
  store_runs(head, 2, 1.5, 11);
  auto j = compare_json({"--base", base, "--head", head}, 3);
  EXPECT_EQ(j["verdict"], "inconclusive");
  for (const auto& c : j["cells"]) EXPECT_EQ(c["verdict"], "incomparable") << c.dump();
}

TEST_F(CompareCli, TooFewRepetitionsSaySoAndAreInconclusive) {
  store_runs(base, 1, 1.0, 12, 2);
  store_runs(head, 1, 1.5, 13, 2);
  auto r = compare({"--base", base, "--head", head});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("WARNING"), std::string::npos) << r.out;
}

TEST_F(CompareCli, OutputFilesAndGithubCommands) {
  store_runs(base, 2, 1.0, 14);
  store_runs(head, 2, 1.25, 15);
  std::string md = dir / "report.md", js = dir / "report.json";
  auto r = compare({"--base", base, "--head", head, "--format", "markdown", "--github", "--output",
                    md, "--json", js});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("::error title=perfgate regression"), std::string::npos) << r.out;
  std::ifstream in(md);
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first.rfind("### ❌ perfgate: 3 regressions", 0), 0u) << first;
  std::ifstream jin(js);
  auto j = nlohmann::json::parse(jin);
  EXPECT_EQ(j["verdict"], "regression");
  EXPECT_FALSE(std::filesystem::exists(md + ".tmp"));
}

TEST_F(CompareCli, JsonOnStdoutStaysParseableWithGithub) {
  store_runs(base, 2, 1.0, 16);
  store_runs(head, 2, 1.25, 17);
  auto r = compare({"--base", base, "--head", head, "--format", "json", "--github"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(nlohmann::json::accept(r.out)) << r.out;
  EXPECT_NE(r.err.find("::error"), std::string::npos);
}

TEST_F(CompareCli, BadUsageExitsTwoNamingTheFlag) {
  store_runs(base, 1, 1.0, 18);
  store_runs(head, 1, 1.0, 19);
  struct Case {
    std::vector<std::string> args;
    std::string mention;
  };
  const std::vector<Case> cases = {
      {{"--base", base, "--head", head, "--alpha", "0"}, "--alpha"},
      {{"--base", base, "--head", head, "--alpha", "1"}, "--alpha"},
      {{"--base", base, "--head", head, "--alpha", "x"}, "--alpha"},
      {{"--base", base, "--head", head, "--min-effect", "-0.1"}, "--min-effect"},
      {{"--base", base, "--head", head, "--min-effect", "automatic"}, "--min-effect"},
      {{"--base", base, "--head", head, "--min-effect", "0.05x"}, "--min-effect"},
      {{"--base", base, "--head", head, "--min-effect", "inf"}, "--min-effect"},
      {{"--base", base, "--head", head, "--min-effect", "nan"}, "--min-effect"},
      {{"--base", base, "--head", head, "--min-effect-floor", "1"}, "--min-effect-floor"},
      {{"--base", base, "--head", head, "--power", "0"}, "--power"},
      {{"--base", base, "--head", head, "--look", "0"}, "--look"},
      {{"--base", base, "--head", head, "--look", "3", "--max-looks", "2"}, "--look"},
      {{"--base", base, "--head", head, "--max-looks", "0"}, "--max-looks"},
      {{"--base", base, "--head", head, "--power", "1"}, "--power"},
      {{"--base", base, "--head", head, "--correction", "bonferroni"}, "--correction"},
      {{"--base", base, "--head", head, "--format", "xml"}, "--format"},
      {{"--base", "no-such-rev", "--head", head}, "no-such-rev"},
      {{"--base", base, "--head", other}, "--head"},  // no stored run of head
      {{"--base", base, "--head", "merge-base"}, "--head"},
      {{"--head", head}, "--base"},
  };
  for (const auto& c : cases) {
    auto r = compare(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.mention << ": " << r.out << r.err;
    EXPECT_NE(r.err.find(c.mention), std::string::npos) << c.mention << ": " << r.err;
    // The settings' own names (min_effect, max_looks) are the API's; the CLI says its flags.
    for (const char* setting : {"min_effect", "max_looks", "error: alpha", "error: look"})
      EXPECT_EQ(r.err.find(setting), std::string::npos) << c.mention << ": " << r.err;
  }
  auto missing = run_command(
      {PERFGATE_BIN, "compare", "--db", dir / "nope.db", "--base", base, "--head", head});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("nope.db"), std::string::npos) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "nope.db"));
}

}  // namespace
}  // namespace pg
