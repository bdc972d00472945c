// The gate's two levels (docs/STATISTICS.md "Two levels"): runs as the replication unit, the
// minimum detectable effect, sequential looks, timing fields and left-out samples.
#include <gtest/gtest.h>

#include <cmath>

#include "common/errors.h"
#include "gate/auto_min_effect.h"
#include "gate/gate.h"
#include "synthetic_runs.h"

namespace pg {
namespace {

using test::make_run;
using test::sweep;

bool has_warning(const gate::GateResult& r, const std::string& part) {
  for (const std::string& w : r.warnings)
    if (w.find(part) != std::string::npos) return true;
  return false;
}

// `runs` runs of one side, every cell of run i scaled by drift[i] (a whole run moving together).
std::vector<Run> side(int first_id, const std::vector<double>& drift, double slowdown,
                      uint64_t seed, int reps = 10, double cv = 0.01) {
  std::vector<Run> out;
  for (size_t i = 0; i < drift.size(); ++i)
    out.push_back(make_run(first_id + int(i),
                           sweep(reps, cv, seed + i, [&](int) { return drift[i] * slowdown; })));
  return out;
}

TEST(GateTwoLevel, DriftedHeadRunsFailThePooledTestButNotTheGate) {
  // No code change; two head runs of three are 7-8% slower as a whole (a busy neighbour). The
  // pooled Mann-Whitney sees 30 vs 30 repetitions and is sure; the run means say runs moved.
  const auto base = side(1, {1.0, 1.01, 0.99}, 1.0, 10);
  const auto head = side(4, {1.0, 1.08, 1.07}, 1.0, 20);
  gate::GateOptions earlier;
  earlier.run_level = false;
  earlier.min_effect = 0.02;
  const gate::GateResult pooled = gate::evaluate_gate("b", base, "h", head, earlier);
  EXPECT_EQ(pooled.verdict, gate::GateVerdict::regression);  // the false alarm of the earlier rule
  gate::GateOptions opt;
  opt.min_effect = 0.02;
  const gate::GateResult r = gate::evaluate_gate("b", base, "h", head, opt);
  EXPECT_NE(r.verdict, gate::GateVerdict::regression);
  EXPECT_TRUE(r.drift_estimated);
  for (const gate::CellComparison& c : r.cells) {
    EXPECT_EQ(c.ci_method, "runs-t");
    ASSERT_TRUE(c.runs_df && c.run_sd && c.rep_sd && c.runs_p_adjusted && c.mw_p_adjusted);
    EXPECT_EQ(*c.runs_df, 4.0);
    EXPECT_GT(*c.run_sd, 0.01);  // the drifted run shows as between-run variance
    EXPECT_LE(*c.ci_low, 1.0);   // the interval with drift holds "no change"
    EXPECT_GE(*c.p_adjusted, *c.mw_p_adjusted);
  }
}

TEST(GateTwoLevel, AConsistentSlowdownOfEveryRunIsARegression) {
  const auto base = side(1, {1.0, 1.003, 0.998}, 1.0, 10);
  const auto head = side(4, {1.0, 1.002, 0.999}, 1.10, 20);
  const gate::GateResult r = gate::evaluate_gate("b", base, "h", head, {});
  EXPECT_EQ(r.verdict, gate::GateVerdict::regression);
  for (const gate::CellComparison& c : r.cells) {
    EXPECT_EQ(c.verdict, gate::CellVerdict::regression);
    EXPECT_GT(*c.ci_low, 1.05);
    EXPECT_LT(*c.ci_high, 1.15);
    EXPECT_NEAR(*c.runs_ratio, 1.10, 0.01);
  }
  ASSERT_TRUE(r.mde && r.mde_all_cells);
  // 3 runs per side leave 4 degrees of freedom: at 1% repetition noise a lone cell's slowdown is
  // caught with 95% only from about 5% (t quantiles at 0.01/12 with df 4 are large).
  EXPECT_GT(*r.mde, 0.03);
  EXPECT_LT(*r.mde, 0.08);
  EXPECT_LE(*r.mde_all_cells, *r.mde);
  EXPECT_FALSE(has_warning(r, "ONE RUN PER SIDE"));
}

TEST(GateTwoLevel, NoisyRunsMakeTheGateUnderpoweredAndRequirePowerInconclusive) {
  const auto base = side(1, {1.0, 1.06, 0.95}, 1.0, 10);
  const auto head = side(4, {0.97, 1.05, 1.01}, 1.0, 20);
  gate::GateOptions opt;
  const gate::GateResult r = gate::evaluate_gate("b", base, "h", head, opt);
  ASSERT_TRUE(r.mde);
  EXPECT_GT(*r.mde, 0.05);
  EXPECT_TRUE(r.underpowered);
  EXPECT_TRUE(has_warning(r, "UNDERPOWERED"));
  EXPECT_EQ(r.verdict, gate::GateVerdict::pass);  // a warning, not a failure, unless asked
  opt.require_power = true;
  const gate::GateResult strict = gate::evaluate_gate("b", base, "h", head, opt);
  EXPECT_EQ(strict.verdict, gate::GateVerdict::inconclusive);
  EXPECT_EQ(gate::gate_exit_code(strict), 3);
}

TEST(GateTwoLevel, SequentialLooksContinueWhileTooWideAndSpendAlpha) {
  const auto base = side(1, {1.0, 1.06, 0.95}, 1.0, 10);
  const auto head = side(4, {0.97, 1.05, 1.01}, 1.0, 20);
  gate::GateOptions opt;
  opt.look = 1;
  opt.max_looks = 4;
  const gate::GateResult first = gate::evaluate_gate("b", base, "h", head, opt);
  EXPECT_EQ(first.next, gate::NextStep::more_rounds);
  EXPECT_EQ(to_string(first.next), "continue");
  EXPECT_EQ(first.verdict, gate::GateVerdict::inconclusive);
  EXPECT_DOUBLE_EQ(first.alpha_per_look, 0.0025);
  EXPECT_TRUE(has_warning(first, "CONTINUE: look 1 of 4"));
  opt.look = 4;  // the last look decides, underpowered or not
  const gate::GateResult last = gate::evaluate_gate("b", base, "h", head, opt);
  EXPECT_EQ(last.next, gate::NextStep::stop);
  EXPECT_EQ(last.verdict, gate::GateVerdict::pass);
  // A quiet gate stops at its first look.
  opt.look = 1;
  const gate::GateResult quiet =
      gate::evaluate_gate("b", side(1, {1, 1.0005, 0.9998}, 1, 10, 10, 0.001), "h",
                          side(4, {1, 1.0002, 1.0}, 1, 20, 10, 0.001), opt);
  EXPECT_FALSE(quiet.underpowered);
  EXPECT_EQ(quiet.next, gate::NextStep::stop);
  EXPECT_EQ(quiet.verdict, gate::GateVerdict::pass);
  opt.look = 5;
  EXPECT_THROW(gate::evaluate_gate("b", base, "h", head, opt), UsageError);
}

TEST(GateTwoLevel, ThreadCountAndTimingModeMustMatch) {
  auto env = test::cpu_env();
  const auto base = side(1, {1.0, 1.0}, 1.0, 10);
  auto head = side(4, {1.0, 1.0}, 1.0, 20);
  for (const auto& [field, value] : std::vector<std::pair<std::string, std::string>>{
           {"threads", "1"}, {"timing", "loop"}, {"decode_attention", "flash"}}) {
    auto h = head;
    h[1].env[field] = value;
    const gate::GateResult r = gate::evaluate_gate("b", base, "h", h, {});
    EXPECT_EQ(r.verdict, gate::GateVerdict::inconclusive) << field;
    EXPECT_TRUE(has_warning(r, field + ":")) << field;
    for (const gate::CellComparison& c : r.cells) {
      EXPECT_EQ(c.verdict, gate::CellVerdict::incomparable);
      EXPECT_NE(c.note.find(field), std::string::npos);
    }
  }
}

TEST(GateTwoLevel, ZeroDecodeRepetitionsAndFailedRunsAreNotedNotDropped) {
  auto base = side(1, {1.0, 1.0, 1.0}, 1.0, 10);
  auto head = side(4, {1.0, 1.0, 1.0}, 1.0, 20);
  // A repetition whose decode steps are all zero, and a head run where one cell ran out of memory.
  for (double& ms : head[0].cells[0].samples.decode_ms[3]) ms = 0.0;
  head[2].cells[1].status = CellStatus::oom;
  head[2].cells[1].reason = "CUDA out of memory";
  head[2].cells[1].samples = {};
  const gate::GateResult r = gate::evaluate_gate("b", base, "h", head, {});
  const gate::CellComparison& zero = r.cells[0];
  EXPECT_EQ(zero.head_n, 29);
  EXPECT_NE(zero.note.find("1 head repetitions with zero or invalid decode time left out"),
            std::string::npos)
      << zero.note;
  const gate::CellComparison& oom = r.cells[1];
  EXPECT_EQ(oom.head_runs, 2);
  EXPECT_NE(oom.note.find("1 of 3 head runs left out: oom (CUDA out of memory)"), std::string::npos)
      << oom.note;
  EXPECT_TRUE(has_warning(r, "left-out samples or runs"));
}

TEST(GateTwoLevel, GateCostCountsTimedRepetitionsAndRunWallTime) {
  auto base = side(1, {1.0}, 1.0, 10, 10);
  auto head = side(2, {1.0}, 1.0, 20, 10);
  base[0].started_at = "2026-01-01T00:00:00Z";
  base[0].finished_at = "2026-01-01T00:00:07Z";
  head[0].started_at = "2026-01-01T00:00:08Z";
  head[0].finished_at = "2026-01-01T00:00:13Z";
  const gate::GateResult r = gate::evaluate_gate("b", base, "h", head, {});
  EXPECT_DOUBLE_EQ(r.run_seconds, 12.0);
  double ms = 0.0;
  for (const auto& runs : {base, head})
    for (const CellResult& c : runs[0].cells) {
      for (double p : c.samples.prefill_ms) ms += p;
      for (const auto& steps : c.samples.decode_ms)
        for (double d : steps) ms += d;
    }
  EXPECT_NEAR(r.measured_seconds, ms / 1000.0, 1e-9);
}

TEST(AutoMinEffect, ThreeRunSpreadsOfTheNoisiestCellWithAFloorAndAFallback) {
  const CellKey quiet = test::cell_key(1, 64), noisy = test::cell_key(4, 64);
  std::map<CellKey, std::vector<gate::HistoryRun>> h;
  // Commit c1: run means exp(0), exp(0.02); commit c2: one run only (no spread information).
  h[quiet] = {{"c1", {1.0, 1.0}}, {"c1", {1.0, 1.0}}, {"c2", {2.0}}};
  h[noisy] = {{"c1", {1.0}}, {"c1", {std::exp(0.02)}}, {"c3", {1.0}}, {"c3", {std::exp(0.02)}}};
  const auto a = gate::auto_min_effect(h, 0.01, 0.05);
  // Pooled sd of run means around their commit: each commit contributes 2 * 0.01^2, df 1 each.
  EXPECT_NEAR(a.run_sd, 0.01 * std::sqrt(2.0), 1e-12);
  EXPECT_EQ(a.df, 2);
  EXPECT_NEAR(a.value, std::expm1(3 * 0.01 * std::sqrt(2.0)), 1e-12);
  EXPECT_NE(a.reason.find("B=4 P=64"), std::string::npos) << a.reason;
  EXPECT_DOUBLE_EQ(gate::auto_min_effect(h, 0.08, 0.05).value, 0.08);  // the floor
  std::map<CellKey, std::vector<gate::HistoryRun>> single{{quiet, {{"c1", {1.0}}}}};
  const auto none = gate::auto_min_effect(single, 0.01, 0.05);
  EXPECT_DOUBLE_EQ(none.value, 0.05);
  EXPECT_NE(none.reason.find("no commit"), std::string::npos);
}

}  // namespace
}  // namespace pg
