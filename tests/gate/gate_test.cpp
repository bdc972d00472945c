// evaluate_gate on synthetic runs: the merge gate's decisions (docs/STATISTICS.md).
#include <gtest/gtest.h>

#include <limits>

#include "common/errors.h"
#include "gate/gate.h"
#include "synthetic_runs.h"

namespace pg {
namespace {

using test::make_run;
using test::sweep;

const auto kSame = [](int) { return 1.0; };

const gate::CellComparison& cell_of(const gate::GateResult& r, const CellKey& k) {
  for (const gate::CellComparison& c : r.cells)
    if (c.key == k) return c;
  throw std::runtime_error("cell not in result");
}

bool has_warning(const gate::GateResult& r, const std::string& part) {
  for (const std::string& w : r.warnings)
    if (w.find(part) != std::string::npos) return true;
  return false;
}

TEST(Gate, IdenticalDataPasses) {
  const auto data = sweep(10, 0.03, 1, kSame);
  const gate::GateResult r =
      gate::evaluate_gate("b", {make_run(1, data)}, "h", {make_run(2, data)}, {});
  EXPECT_EQ(r.verdict, gate::GateVerdict::pass);
  EXPECT_EQ(gate::gate_exit_code(r), 0);
  ASSERT_EQ(r.cells.size(), 12u);
  for (const gate::CellComparison& c : r.cells) {
    EXPECT_EQ(c.verdict, gate::CellVerdict::unchanged);
    EXPECT_DOUBLE_EQ(*c.ratio, 1.0);
    EXPECT_GT(*c.p_value, 0.4);
    EXPECT_LE(*c.ci_low, 1.0);
    EXPECT_GE(*c.ci_high, 1.0);
    EXPECT_EQ(c.metric, "tpot_ms");
  }
  // One run per side: drift could not be estimated, so no minimum detectable effect can be
  // stated (docs/STATISTICS.md "One run per side") and the gate counts as underpowered.
  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_TRUE(has_warning(r, "ONE RUN PER SIDE: 12 of 12"));
  EXPECT_TRUE(has_warning(r, "UNDERPOWERED"));
  EXPECT_TRUE(r.underpowered);
  EXPECT_FALSE(r.mde.has_value());
  for (const gate::CellComparison& c : r.cells) EXPECT_FALSE(c.mde.has_value());
  EXPECT_FALSE(r.drift_estimated);
}

TEST(Gate, IndependentNoiseAtThreePercentPasses) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    const gate::GateResult r =
        gate::evaluate_gate("b", {make_run(1, sweep(10, 0.03, seed, kSame))}, "h",
                            {make_run(2, sweep(10, 0.03, seed + 50, kSame))}, {});
    EXPECT_EQ(r.verdict, gate::GateVerdict::pass) << "seed " << seed;
  }
}

TEST(Gate, TwentyPercentSlowdownOfOneCellIsARegression) {
  const auto base = sweep(10, 0.01, 1, kSame);
  const auto head = sweep(10, 0.01, 2, [](int i) { return i == 4 ? 1.2 : 1.0; });
  const gate::GateResult r =
      gate::evaluate_gate("b", {make_run(1, base)}, "h", {make_run(2, head)}, {});
  EXPECT_EQ(r.verdict, gate::GateVerdict::regression);
  EXPECT_EQ(gate::gate_exit_code(r), 1);
  int regressions = 0;
  for (size_t i = 0; i < r.cells.size(); ++i) {
    const gate::CellComparison& c = r.cells[i];
    if (c.verdict != gate::CellVerdict::regression) continue;
    ++regressions;
    EXPECT_EQ(c.key, test::sweep_keys()[4]);
    EXPECT_NEAR(*c.ratio, 1.2, 0.03);
    EXPECT_GT(*c.ci_low, 1.1);  // the interval sits well above 1 + min_effect
    EXPECT_LT(*c.ci_high, 1.3);
    EXPECT_LE(*c.p_adjusted, 0.01);
    EXPECT_NEAR(*c.p_value, 1.0 / 184756.0, 1e-12);      // complete separation, exact 10 vs 10
    EXPECT_NEAR(*c.p_adjusted, 12.0 / 184756.0, 1e-12);  // Holm over 12 cells
  }
  EXPECT_EQ(regressions, 1);
}

TEST(Gate, SpeedupIsAnImprovementAndPasses) {
  const auto base = sweep(10, 0.01, 1, kSame);
  const auto head = sweep(10, 0.01, 2, [](int i) { return i == 0 ? 0.8 : 1.0; });
  const gate::GateResult r =
      gate::evaluate_gate("b", {make_run(1, base)}, "h", {make_run(2, head)}, {});
  EXPECT_EQ(r.verdict, gate::GateVerdict::pass);
  const gate::CellComparison& c = cell_of(r, test::sweep_keys()[0]);
  EXPECT_EQ(c.verdict, gate::CellVerdict::improvement);
  EXPECT_NEAR(*c.ratio, 0.8, 0.02);
  // The reported p is the one-sided "head faster" p of the direction the cell moved.
  EXPECT_NEAR(*c.p_value, 1.0 / 184756.0, 1e-12);
}

TEST(Gate, SignificantButSmallerThanMinEffectIsUnchanged) {
  // 3% slower at CV 0.2%: overwhelmingly significant, but below the 5% that matters.
  const auto base = sweep(10, 0.002, 1, kSame);
  const auto head = sweep(10, 0.002, 2, [](int i) { return i == 0 ? 1.03 : 1.0; });
  gate::GateOptions opt;
  const gate::GateResult r =
      gate::evaluate_gate("b", {make_run(1, base)}, "h", {make_run(2, head)}, opt);
  EXPECT_EQ(r.verdict, gate::GateVerdict::pass);
  EXPECT_EQ(cell_of(r, test::sweep_keys()[0]).verdict, gate::CellVerdict::unchanged);
  EXPECT_LE(*cell_of(r, test::sweep_keys()[0]).p_adjusted, 0.01);
  opt.min_effect = 0.02;  // --min-effect 0.02 makes the same data a regression
  const gate::GateResult strict =
      gate::evaluate_gate("b", {make_run(1, base)}, "h", {make_run(2, head)}, opt);
  EXPECT_EQ(strict.verdict, gate::GateVerdict::regression);
}

TEST(Gate, DifferentEnvironmentsAreIncomparable) {
  const auto data = sweep(10, 0.01, 1, kSame);
  Environment other = test::cpu_env();
  other["torch"] = "2.10.0";
  other["hostname"] = "b";  // not a performance field: alone it would not matter
  const auto slow = sweep(10, 0.01, 2, [](int) { return 1.5; });
  const gate::GateResult r =
      gate::evaluate_gate("b", {make_run(1, data)}, "h", {make_run(2, slow, other)}, {});
  EXPECT_EQ(r.verdict,
            gate::GateVerdict::inconclusive);  // never a silent comparison, even if slower
  EXPECT_EQ(gate::gate_exit_code(r), 3);
  for (const gate::CellComparison& c : r.cells) {
    EXPECT_EQ(c.verdict, gate::CellVerdict::incomparable);
    EXPECT_NE(c.note.find("torch: base '2.11.0' vs head '2.10.0'"), std::string::npos) << c.note;
    EXPECT_EQ(c.note.find("hostname"), std::string::npos);
    EXPECT_FALSE(c.p_value.has_value());
  }
  EXPECT_TRUE(has_warning(r, "environments differ"));

  Environment host_only = test::cpu_env();
  host_only["hostname"] = "other-machine";
  EXPECT_EQ(gate::evaluate_gate("b", {make_run(1, data)}, "h", {make_run(2, data, host_only)}, {})
                .verdict,
            gate::GateVerdict::pass);
}

TEST(Gate, PooledBaseRunsOnDifferentDevicesAreIncomparable) {
  const auto data = sweep(10, 0.01, 1, kSame);
  Environment gpu = test::cpu_env();
  gpu["device"] = "NVIDIA H200";
  const gate::GateResult r = gate::evaluate_gate("b", {make_run(1, data), make_run(2, data, gpu)},
                                                 "h", {make_run(3, data)}, {});
  EXPECT_EQ(r.verdict, gate::GateVerdict::inconclusive);
  EXPECT_NE(r.cells[0].note.find("device: base 'NVIDIA H200', 'cpu' vs head 'cpu'"),
            std::string::npos)
      << r.cells[0].note;
}

TEST(Gate, MissingBaselineIsInconclusiveUnlessAllowed) {
  auto base = sweep(10, 0.01, 1, kSame);
  const auto head = sweep(10, 0.01, 2, kSame);
  base.erase(test::sweep_keys()[3]);
  gate::GateOptions opt;
  const gate::GateResult r =
      gate::evaluate_gate("b", {make_run(1, base)}, "h", {make_run(2, head)}, opt);
  EXPECT_EQ(r.verdict, gate::GateVerdict::inconclusive);
  const gate::CellComparison& c = cell_of(r, test::sweep_keys()[3]);
  EXPECT_EQ(c.verdict, gate::CellVerdict::no_baseline);
  EXPECT_EQ(to_string(c.verdict), "no-baseline");
  EXPECT_EQ(c.head_n, 10);
  EXPECT_EQ(c.base_n, 0);
  EXPECT_FALSE(c.ratio.has_value());
  opt.allow_missing_baseline = true;
  EXPECT_EQ(gate::evaluate_gate("b", {make_run(1, base)}, "h", {make_run(2, head)}, opt).verdict,
            gate::GateVerdict::pass);
  // No base run at all: every cell has no baseline.
  const gate::GateResult none = gate::evaluate_gate("b", {}, "h", {make_run(2, head)}, {});
  EXPECT_EQ(none.verdict, gate::GateVerdict::inconclusive);
  for (const gate::CellComparison& cc : none.cells)
    EXPECT_EQ(cc.verdict, gate::CellVerdict::no_baseline);
}

TEST(Gate, BaseOnlyCellsAreReportedAsAWarningNotACell) {
  const auto base = sweep(10, 0.01, 1, kSame);
  auto head = sweep(10, 0.01, 2, kSame);
  head.erase(test::sweep_keys()[0]);
  const gate::GateResult r =
      gate::evaluate_gate("b", {make_run(1, base)}, "h", {make_run(2, head)}, {});
  EXPECT_EQ(r.cells.size(), 11u);
  EXPECT_EQ(r.verdict, gate::GateVerdict::pass);
  EXPECT_TRUE(has_warning(r, "1 cells of the base are missing from the head"));
}

TEST(Gate, TooFewRepetitionsIsInconclusiveAndSaysSoLoudly) {
  // 6 vs 6: smallest p 1/924 = 0.00108; x 12 cells = 0.013 > 0.01. Even a 50% slowdown of every
  // cell cannot be flagged, so passing would be blind.
  const auto base = sweep(6, 0.01, 1, kSame);
  const auto head = sweep(6, 0.01, 2, [](int) { return 1.5; });
  const gate::GateResult r =
      gate::evaluate_gate("b", {make_run(1, base)}, "h", {make_run(2, head)}, {});
  EXPECT_EQ(r.verdict, gate::GateVerdict::inconclusive);
  EXPECT_EQ(gate::gate_exit_code(r), 3);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_TRUE(has_warning(r, "TOO FEW REPETITIONS: 12 of 12"));
  EXPECT_TRUE(has_warning(r, "at least 7 repetitions per side"));
  for (const gate::CellComparison& c : r.cells)
    EXPECT_NE(c.note.find("too few repetitions"), std::string::npos);
  // 7 vs 7 (1/3432 x 12 = 0.0035) can reach significance: the same slowdown is caught.
  const gate::GateResult seven =
      gate::evaluate_gate("b", {make_run(1, sweep(7, 0.01, 1, kSame))}, "h",
                          {make_run(2, sweep(7, 0.01, 2, [](int) { return 1.5; }))}, {});
  EXPECT_EQ(seven.verdict, gate::GateVerdict::regression);
  EXPECT_FALSE(has_warning(seven, "TOO FEW REPETITIONS"));
  // With one cell, 5 vs 5 (1/252 = 0.004 <= 0.01) is enough.
  std::map<CellKey, std::vector<double>> one_b{{test::cell_key(1, 64), {1, 1.01, 1.02, 0.99, 1.0}}};
  std::map<CellKey, std::vector<double>> one_h{
      {test::cell_key(1, 64), {1.01, 1.0, 0.98, 1.02, 1.0}}};
  EXPECT_EQ(gate::evaluate_gate("b", {make_run(1, one_b)}, "h", {make_run(2, one_h)}, {}).verdict,
            gate::GateVerdict::pass);
}

TEST(Gate, RunsOfOneCommitPoolTheirRepetitions) {
  const CellKey k = test::cell_key(1, 64);
  // Base: two runs of 5 repetitions; head: three runs of 4, one more run where the cell ran out
  // of memory (not counted), per-repetition tpot computed from the decode samples.
  std::vector<pg::Run> base = {make_run(1, {{k, test::lognormal(5, 1.0, 0.01, 1)}}),
                               make_run(2, {{k, test::lognormal(5, 1.0, 0.01, 2)}})};
  std::vector<pg::Run> head = {make_run(3, {{k, {1.0, 1.01, 0.99, 1.02}}}),
                               make_run(4, {{k, {1.0, 1.005, 0.995, 1.015}}}),
                               make_run(5, {{k, {0.98, 1.03, 1.0, 1.0}}}), make_run(6, {})};
  CellResult oom;
  oom.key = k;
  oom.status = CellStatus::oom;
  oom.reason = "CUDA out of memory";
  head[3].cells.push_back(oom);
  const gate::GateResult r = gate::evaluate_gate("b", base, "h", head, {});
  ASSERT_EQ(r.cells.size(), 1u);
  const gate::CellComparison& c = r.cells[0];
  EXPECT_EQ(c.base_runs, 2);
  EXPECT_EQ(c.base_n, 10);
  EXPECT_EQ(c.head_runs, 3);
  EXPECT_EQ(c.head_n, 12);
  EXPECT_EQ(r.base_runs, 2);
  EXPECT_EQ(r.head_runs, 4);
  // Median of the 12 pooled head values: sorted ... 1.0 1.0 1.0 | 1.0 1.005 ... -> 1.0.
  EXPECT_NEAR(*c.head_median, 1.0, 1e-12);
  EXPECT_EQ(r.verdict, gate::GateVerdict::pass);
}

TEST(Gate, TpotComesFromDecodeSamplesElseFromTheStoredMetric) {
  const CellKey k = test::cell_key(1, 64, 9);  // 8 decode steps per repetition
  pg::Run base = make_run(1, {});
  CellResult c;
  c.key = k;
  c.samples.decode_ms = {
      {1, 1, 1, 1, 1, 1, 1, 1}, {2, 2, 2, 2, 2, 2, 2, 2}, {1, 2, 3, 4, 1, 2, 3, 8}};
  base.cells.push_back(c);  // tpot per repetition: 1, 2, 24/8 = 3
  pg::Run head = make_run(2, {});
  CellResult m;
  m.key = k;
  m.metrics["tpot_ms"] = 2.5;  // no samples: one value, the run's median
  head.cells.push_back(m);
  gate::GateOptions opt;
  const gate::GateResult r = gate::evaluate_gate("b", {base}, "h", {head}, opt);
  ASSERT_EQ(r.cells.size(), 1u);
  EXPECT_EQ(r.cells[0].base_n, 3);
  EXPECT_DOUBLE_EQ(*r.cells[0].base_median, 2.0);
  EXPECT_EQ(r.cells[0].head_n, 1);
  EXPECT_DOUBLE_EQ(*r.cells[0].head_median, 2.5);
  // 3 vs 1 has no 95% distribution-free interval: the range of pairwise ratios, 2.5/3 .. 2.5/1,
  // whose confidence is 1 - 2 / C(4, 1) = 50%, and the note says so.
  EXPECT_DOUBLE_EQ(*r.cells[0].ci_low, 2.5 / 3.0);
  EXPECT_DOUBLE_EQ(*r.cells[0].ci_high, 2.5);
  EXPECT_NE(r.cells[0].note.find("50% confidence"), std::string::npos) << r.cells[0].note;
  EXPECT_EQ(r.verdict, gate::GateVerdict::inconclusive);  // 3 vs 1 can never be significant
}

TEST(Gate, HeadFailureWhereBaseRanIsIncomparableBothFailedIsSkipped) {
  auto base = make_run(1, sweep(10, 0.01, 1, kSame));
  auto head = make_run(2, sweep(10, 0.01, 2, kSame));
  head.cells[0].status = CellStatus::oom;
  head.cells[0].reason = "out of memory";
  head.cells[0].samples = {};
  gate::GateResult r = gate::evaluate_gate("b", {base}, "h", {head}, {});
  EXPECT_EQ(r.verdict, gate::GateVerdict::inconclusive);
  EXPECT_EQ(r.cells[0].verdict, gate::CellVerdict::incomparable);
  EXPECT_NE(r.cells[0].note.find("oom (out of memory)"), std::string::npos) << r.cells[0].note;
  base.cells[0].status = CellStatus::oom;
  base.cells[0].samples = {};
  r = gate::evaluate_gate("b", {base}, "h", {head}, {});
  EXPECT_EQ(r.verdict, gate::GateVerdict::pass);
  EXPECT_EQ(r.cells.size(), 11u);
  EXPECT_TRUE(has_warning(r, "no ok samples on either side"));
}

// Head = base shifted by 4.5 grid steps in every cell: U = 85 of 100, exact one-sided
// p = P(U >= 85) = 0.0034207 (scipy.stats.mannwhitneyu, method='exact'), ratio 1.083.
std::map<CellKey, std::vector<double>> grid(double offset) {
  std::map<CellKey, std::vector<double>> out;
  for (const CellKey& k : test::sweep_keys()) {
    std::vector<double> v;
    for (int i = 0; i < 10; ++i) v.push_back(1.0 + 0.02 * i + offset);
    out[k] = v;
  }
  return out;
}

TEST(Gate, HolmControlsFamilyWiseErrorBenjaminiHochbergTheFalseDiscoveryRate) {
  const auto base = grid(0.0), head = grid(0.09);
  gate::GateOptions holm;
  const gate::GateResult h =
      gate::evaluate_gate("b", {make_run(1, base)}, "h", {make_run(2, head)}, holm);
  // Holm: smallest p x 12 = 0.041 > 0.01, nothing is flagged.
  EXPECT_NEAR(*h.cells[0].p_value, 0.0034207278789322136, 1e-12);
  EXPECT_NEAR(*h.cells[0].p_adjusted, 12 * 0.0034207278789322136, 1e-12);
  EXPECT_EQ(h.verdict, gate::GateVerdict::pass);
  // BH: twelve equal p-values adjust to themselves (12 p / 12): every cell is flagged.
  gate::GateOptions bh;
  bh.correction = "bh";
  const gate::GateResult b =
      gate::evaluate_gate("b", {make_run(1, base)}, "h", {make_run(2, head)}, bh);
  EXPECT_NEAR(*b.cells[0].p_adjusted, 0.0034207278789322136, 1e-12);
  EXPECT_EQ(b.verdict, gate::GateVerdict::regression);
  for (const gate::CellComparison& c : b.cells) EXPECT_EQ(c.verdict, gate::CellVerdict::regression);
}

TEST(Gate, BadOptionsAreUsageErrorsNamingTheSettingNotAFlag) {
  const auto data = sweep(10, 0.01, 1, kSame);
  auto expect_flag = [&](gate::GateOptions o, const std::string& flag) {
    try {
      gate::evaluate_gate("b", {make_run(1, data)}, "h", {make_run(2, data)}, o);
      ADD_FAILURE() << "no error for " << flag;
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(flag + " ", 0), 0u) << e.what();
      EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << e.what();
    }
  };
  gate::GateOptions o;
  o.alpha = 0.0;
  expect_flag(o, "alpha");
  o = {};
  o.min_effect = -0.1;
  expect_flag(o, "min_effect");
  o = {};
  o.correction = "fdr";
  expect_flag(o, "correction");
  o = {};
  o.min_effect = std::numeric_limits<double>::infinity();
  expect_flag(o, "min_effect");
  o = {};
  o.max_looks = 2;
  o.look = 3;
  expect_flag(o, "look");
}

TEST(Gate, VerdictNamesAndExitCodes) {
  EXPECT_EQ(to_string(gate::CellVerdict::regression), "regression");
  EXPECT_EQ(to_string(gate::CellVerdict::improvement), "improvement");
  EXPECT_EQ(to_string(gate::CellVerdict::unchanged), "unchanged");
  EXPECT_EQ(to_string(gate::CellVerdict::no_baseline), "no-baseline");
  EXPECT_EQ(to_string(gate::CellVerdict::incomparable), "incomparable");
  EXPECT_EQ(to_string(gate::GateVerdict::pass), "pass");
  EXPECT_EQ(to_string(gate::GateVerdict::regression), "regression");
  EXPECT_EQ(to_string(gate::GateVerdict::inconclusive), "inconclusive");
  gate::GateResult r;
  r.verdict = gate::GateVerdict::inconclusive;
  EXPECT_EQ(gate::gate_exit_code(r), 3);
}

}  // namespace
}  // namespace pg
