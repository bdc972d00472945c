// One run a side judged with trusted history's run variance (docs/STATISTICS.md "Run variance
// from trusted history"): the shape of runs a GPU gives, where a run's first repetition is often
// slower (a within-run effect that every run has, so it cancels in run means) and whole runs move
// by a few tenths of a percent.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "stats/run_history.h"
#include "stats/two_level.h"

namespace pg::stats {
namespace {

// Three repetitions of a run whose level is `m`: the first 0.8% slow, the others within 0.01%.
std::vector<double> slow_first(double m) { return {m * 1.008, m, m * 1.0001}; }
std::vector<double> quiet(double m) { return {m, m * 1.0001, m * 0.9999}; }

// Six commits, two runs each, whose run means differ by 0.15-0.3% (the run-to-run noise).
std::vector<RunGroups> gpu_like_history() {
  std::vector<RunGroups> commits;
  const double shifts[] = {0.003, -0.002, 0.0025, -0.003, 0.0015, -0.0025};
  for (int c = 0; c < 6; ++c) {
    const double m = 0.6 * (1.0 + 0.01 * c);
    commits.push_back({slow_first(m), slow_first(m * (1.0 + shifts[c]))});
  }
  return commits;
}

// The bug this pins: the gate used max(s_h^2 - rep_var_h / n, 0) + msw / n, i.e. the history's
// run-mean variance minus its within-run part, plus the gate's own. Here the history's within-run
// part (the slow first repetitions) exceeds its whole run-mean variance, so the history lent
// nothing, the gate's quiet repetitions gave a standard error of 0.008%, and a 0.3% difference
// between two runs, the size of the history's own run-to-run differences, had p = 1e-8.
TEST(RunHistory, OneRunASideIsJudgedByTheHistorysRunToRunSpread) {
  const auto history = history_run_variance(gpu_like_history(), 3);
  ASSERT_TRUE(history);
  EXPECT_EQ(history->df, 6.0);
  EXPECT_GT(history->rep_var / 3, history->run_mean_var);  // the trap: within-run part dominates

  const RunGroups base = {quiet(0.6)}, head = {quiet(0.6 * 1.003)};
  const auto e = two_level(base, head, 0.95, &*history);
  ASSERT_TRUE(e && e->has_runs_test());
  EXPECT_EQ(e->variance, "history");
  EXPECT_EQ(e->df, 6.0);
  EXPECT_NEAR(e->ratio, 1.003, 1e-9);
  // The variance of a difference of two run means is at least twice the history's.
  EXPECT_GE(e->se * e->se, 2.0 * history->run_mean_var * (1.0 - 1e-12));
  ASSERT_TRUE(e->p_slower);
  EXPECT_GT(*e->p_slower, 0.05) << "se " << e->se;
  EXPECT_LT(e->ci_low, 1.0);
}

// A head whose repetitions are noisier than the history's still pays for its own noise.
TEST(RunHistory, OneRunASideAddsTheGatesExcessRepetitionNoise) {
  const auto history = history_run_variance(gpu_like_history(), 3);
  ASSERT_TRUE(history);
  const RunGroups base = {quiet(0.6)}, head = {{0.6 * 1.003, 0.6 * 1.06, 0.6 * 0.95}};
  const auto e = two_level(base, head, 0.95, &*history);
  ASSERT_TRUE(e && e->has_runs_test());
  EXPECT_GT(e->rep_sd * e->rep_sd, history->rep_var);
  const double expected = history->run_mean_var + (e->rep_sd * e->rep_sd - history->rep_var) / 3;
  EXPECT_NEAR(e->se * e->se, 2.0 * expected, 1e-12);
}

}  // namespace
}  // namespace pg::stats
