// The run variance from trusted history end to end on real SQLite stores: a history store of
// replicated runs of other commits (and runs that must not count: the judged commits, a dirty
// work tree, another thread count, another number of repetitions, an A/B run), a gate store with
// base and head, and app::compare with and without the history (docs/STATISTICS.md "Run variance
// from trusted history").
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "app/compare.h"
#include "app/trusted_history.h"
#include "gate/gate_json.h"
#include "store/store.h"
#include "tests/common/temp_dir.h"
#include "tests/gate/synthetic_runs.h"

namespace pg {
namespace {

const std::string kBase(40, 'b'), kHead(40, 'd');
const CellKey kKey = test::cell_key(1, 64);
constexpr int kReps = 8;

std::string sha_of(int i) {
  char buf[41];
  std::snprintf(buf, sizeof buf, "%040x", 0xc0000 + i);
  return buf;
}

// One run of `sha`: kReps repetitions around `median` (0.2% within), the run's own level drawn
// with `seed`.
Run run_of(const std::string& sha, double median, uint64_t seed, int reps = kReps) {
  Run r = test::make_run(0, {{kKey, test::lognormal(reps, median, 0.002, seed)}});
  r.started_at = "2026-11-01T00:00:00Z";
  r.finished_at = "2026-11-01T00:01:00Z";
  r.git.commit = sha;
  r.git.branch = "main";
  r.git.time = "2026-11-01T00:00:00Z";
  r.git.repo_path = "/synthetic";
  return r;
}

// A run's level: the run-to-run drift, 0.3% sd, the same in history and in the gate.
double level(uint64_t seed) {
  std::mt19937_64 gen(seed);
  return 10.0 * (1.0 + 0.003 * stats::standard_normal(gen));
}

class TrustedHistory : public ::testing::Test {
 protected:
  void SetUp() override {
    store::Store h(history_db);
    for (int c = 0; c < 10; ++c)  // 10 commits of 2 runs each: df 10
      for (int k = 0; k < 2; ++k)
        h.import_run(
            run_of(sha_of(c), level(100 + 10 * c + k) * (1.0 + 0.01 * c), 1000 + c * 10 + k));
    // None of these may count: each is 30% away from its commit's other runs.
    pg::Run dirty = run_of(sha_of(0), 13.0, 7);
    dirty.git.dirty = true;
    h.import_run(dirty);
    pg::Run threads = run_of(sha_of(1), 13.0, 8);
    threads.env["threads"] = "7";
    h.import_run(threads);
    h.import_run(run_of(sha_of(2), 13.0, 9, kReps - 1));
    pg::Run ab = run_of(sha_of(3), 13.0, 10);
    ab.ab = AbPairing{std::string(32, 'a'), "base", "abba", 1};
    h.import_run(ab);
    for (int k = 0; k < 2; ++k) {  // the judged commits are never their own history
      h.import_run(run_of(kBase, 13.0 + k, 11 + k));
      h.import_run(run_of(kHead, 13.0 + k, 13 + k));
    }
    store::Store g(gate_db);
    for (int k = 0; k < gate_runs; ++k) {
      g.import_run(run_of(kBase, level(200 + k), 2000 + k));
      g.import_run(run_of(kHead, level(300 + k) * 1.004, 3000 + k));
    }
  }
  app::Comparison compare(bool with_history, app::GateSettings settings = {}) {
    store::Store g(gate_db, true), h(history_db, true);
    app::CompareScope scope;
    if (with_history) {
      scope.history = &h;
      scope.history_name = "history.db";
    }
    return app::compare(g, kBase, kHead, settings, scope);
  }
  const gate::CellComparison& tpot(const app::Comparison& c) {
    for (const gate::CellComparison& cell : c.result.cells)
      if (cell.metric == "tpot_ms") return cell;
    throw std::runtime_error("no tpot cell");
  }
  testing::TempDir dir;
  std::string history_db = (dir / "history.db").string(), gate_db = (dir / "gate.db").string();
  int gate_runs = 3;
};

TEST_F(TrustedHistory, CountsOnlyCleanComparableReplicatedRunsOfOtherCommits) {
  store::Store g(gate_db, true), h(history_db, true);
  const auto history =
      app::trusted_history(h, g.runs_for_commit(kHead), {"tpot_ms", "prefill_ms"}, {kBase, kHead});
  ASSERT_TRUE(history.contains({kKey, "tpot_ms"}));
  const stats::RunVariance& v = history.at({kKey, "tpot_ms"});
  EXPECT_EQ(v.commits, 10);
  EXPECT_EQ(v.runs, 20);
  EXPECT_EQ(v.df, 10.0);
  EXPECT_EQ(v.reps, kReps);
  // 0.3% drift between runs: a run mean's sd is about that, never the 30% of the runs left out.
  EXPECT_LT(std::sqrt(v.run_mean_var), 0.01);
  EXPECT_TRUE(history.contains({kKey, "prefill_ms"}));
}

TEST_F(TrustedHistory, PoolsWithTheGatesOwnVarianceAndSaysSo) {
  const app::Comparison own = compare(false), pooled = compare(true);
  const gate::CellComparison &a = tpot(own), &b = tpot(pooled);
  EXPECT_EQ(a.variance_source, "runs");
  EXPECT_EQ(*a.runs_df, 4.0);
  EXPECT_FALSE(a.history_df);
  ASSERT_EQ(b.variance_source, "pooled") << b.note;
  EXPECT_EQ(*b.runs_df, 14.0);
  EXPECT_EQ(*b.history_df, 10.0);
  EXPECT_EQ(b.history_commits, 10);
  EXPECT_EQ(b.history_runs, 20);
  EXPECT_EQ(a.ratio, b.ratio);  // the estimate is the gate's own; only its variance gains df
  ASSERT_TRUE(a.mde && b.mde);
  EXPECT_LT(*b.mde, *a.mde);  // df 14 instead of 4 at alpha / cells
  EXPECT_NE(pooled.result.rule.find("trusted history in 1 of 1 cells"), std::string::npos)
      << pooled.result.rule;
  const nlohmann::json j = gate::gate_to_json(pooled.result)["cells"][0];
  EXPECT_EQ(j["variance_source"], "pooled");
  EXPECT_EQ(j["runs_df"], 14.0);
  EXPECT_EQ(j["history_df"], 10.0);
  EXPECT_EQ(j["history_commits"], 10);
  EXPECT_TRUE(gate::gate_to_json(own.result)["cells"][0]["history_df"].is_null());
  bool noted = false;
  for (const std::string& n : pooled.notes) noted = noted || n.rfind("trusted history", 0) == 0;
  EXPECT_TRUE(noted);
}

// `--min-effect auto` learns the run-to-run spread from the trusted store when one is given,
// not from the gate's own database (whose base runs give it df 2).
TEST_F(TrustedHistory, AutoMinEffectLearnsFromTheTrustedStore) {
  app::GateSettings settings;
  settings.min_effect_auto = true;
  auto df_of = [](const std::string& reason) {
    const auto end = reason.find(" degrees of freedom");
    if (end == std::string::npos) return -1;
    const auto start = reason.rfind(' ', end - 1);
    return std::stoi(reason.substr(start + 1, end - start - 1));
  };
  const std::string own = compare(false, settings).result.options.min_effect_source;
  const std::string with = compare(true, settings).result.options.min_effect_source;
  EXPECT_EQ(df_of(own), 2) << own;
  EXPECT_GE(df_of(with), 10) << with;
}

class TrustedHistoryOneRun : public TrustedHistory {
 protected:
  TrustedHistoryOneRun() { gate_runs = 1; }
};

TEST_F(TrustedHistoryOneRun, GivesOneRunASideARunLevelTest) {
  app::GateSettings settings;
  settings.gate.require_power = true;
  const app::Comparison own = compare(false, settings), with = compare(true, settings);
  EXPECT_EQ(tpot(own).test, "mann-whitney");
  EXPECT_EQ(own.result.verdict,
            gate::GateVerdict::inconclusive);  // drift-blind under require_power
  const gate::CellComparison& c = tpot(with);
  EXPECT_EQ(c.test, "runs-t");
  ASSERT_EQ(c.variance_source, "history") << c.note;
  EXPECT_TRUE(with.result.drift_estimated);
  for (const std::string& w : with.result.warnings)
    EXPECT_EQ(w.find("ONE RUN PER SIDE"), std::string::npos) << w;
}

TEST(TrustedHistoryEmpty, SaysTheVarianceIsTheGatesOwn) {
  testing::TempDir dir;
  const std::string db = (dir / "gate.db").string(), empty = (dir / "empty.db").string();
  {
    store::Store g(db);
    for (int k = 0; k < 2; ++k) {
      g.import_run(run_of(kBase, 10.0, 1 + k));
      g.import_run(run_of(kHead, 10.0, 3 + k));
    }
    store::Store e(empty);
  }
  store::Store g(db, true), h(empty, true);
  app::CompareScope scope;
  scope.history = &h;
  scope.history_name = "empty.db";
  const app::Comparison c = app::compare(g, kBase, kHead, {}, scope);
  ASSERT_FALSE(c.notes.empty());
  EXPECT_NE(c.notes.back().find("the run variance is the gate's own"), std::string::npos);
  for (const gate::CellComparison& cell : c.result.cells) {
    if (cell.metric == "tpot_ms") {
      EXPECT_EQ(cell.variance_source, "runs");
    }
  }
}

}  // namespace
}  // namespace pg
