// More than one metric (docs/STATISTICS.md "More than one metric"): decode latency and prefill
// tested in one family, peak memory compared exactly against its tolerances, per-metric min
// effects, and the defaults (decode latency and memory).
#include <gtest/gtest.h>

#include "common/errors.h"
#include "gate/gate.h"
#include "synthetic_runs.h"

namespace pg {
namespace {

using test::make_run;
using test::sweep;

// 3 runs a side; every cell's prefill scaled by `prefill`, its peak memory set to `bytes`.
std::vector<Run> side(int first_id, uint64_t seed, double prefill = 1.0,
                      std::optional<double> bytes = std::nullopt, double memory_step = 0.0) {
  std::vector<Run> out;
  for (int i = 0; i < 3; ++i) {
    Run r = make_run(first_id + i, sweep(10, 0.003, seed + i, [](int) { return 1.0; }));
    for (CellResult& c : r.cells) {
      for (double& p : c.samples.prefill_ms) p *= prefill;
      if (bytes) c.metrics["peak_alloc_bytes"] = *bytes + memory_step * i;
    }
    out.push_back(r);
  }
  return out;
}

std::vector<const gate::CellComparison*> cells_of(const gate::GateResult& r,
                                                  const std::string& metric) {
  std::vector<const gate::CellComparison*> out;
  for (const gate::CellComparison& c : r.cells)
    if (c.metric == metric) out.push_back(&c);
  return out;
}

TEST(GateMetrics, DoubledPeakMemoryIsARegressionWithoutAnyTest) {
  const double gib = 1024.0 * 1024 * 1024;
  const gate::GateResult r =
      gate::evaluate_gate("b", side(1, 10, 1.0, gib), "h", side(4, 20, 1.0, 2 * gib), {});
  EXPECT_EQ(r.verdict, gate::GateVerdict::regression);
  const auto memory = cells_of(r, "peak_alloc_bytes");
  ASSERT_EQ(memory.size(), 12u);
  for (const gate::CellComparison* c : memory) {
    EXPECT_EQ(c->verdict, gate::CellVerdict::regression);
    EXPECT_EQ(c->test, "exact");
    EXPECT_DOUBLE_EQ(*c->ratio, 2.0);
    EXPECT_FALSE(c->p_value.has_value());
    EXPECT_FALSE(c->mde.has_value());
  }
  for (const gate::CellComparison* c : cells_of(r, "tpot_ms"))
    EXPECT_NE(c->verdict, gate::CellVerdict::regression);
  ASSERT_EQ(r.metrics.size(), 2u);  // the default: decode latency and memory
  EXPECT_EQ(r.metrics[0].metric, "tpot_ms");
  EXPECT_EQ(r.metrics[1].metric, "peak_alloc_bytes");
  EXPECT_TRUE(r.metrics[1].exact);
  EXPECT_EQ(r.metrics[1].cells, 12);
  // The memory cells neither enter the tests' family nor the power: the gate's MDE is tpot's.
  EXPECT_TRUE(r.mde.has_value());
}

TEST(GateMetrics, PeakMemoryWithinItsTolerancesIsUnchanged) {
  const double base = 4e9;
  // +0.9 MiB: under the absolute tolerance (1 MiB), whatever the ratio.
  gate::GateResult r = gate::evaluate_gate("b", side(1, 10, 1.0, 1e6), "h",
                                           side(4, 20, 1.0, 1e6 + 0.9 * 1048576), {});
  for (const gate::CellComparison* c : cells_of(r, "peak_alloc_bytes"))
    EXPECT_EQ(c->verdict, gate::CellVerdict::unchanged);
  // +4%: above 1 MiB but under the relative tolerance, the min effect 5%.
  r = gate::evaluate_gate("b", side(1, 10, 1.0, base), "h", side(4, 20, 1.0, base * 1.04), {});
  for (const gate::CellComparison* c : cells_of(r, "peak_alloc_bytes"))
    EXPECT_EQ(c->verdict, gate::CellVerdict::unchanged);
  EXPECT_EQ(r.verdict, gate::GateVerdict::pass);
  // The same +4% with a memory tolerance of 1%: a regression; -4% an improvement.
  gate::GateOptions strict;
  strict.metric_min_effect["peak_alloc_bytes"] = 0.01;
  r = gate::evaluate_gate("b", side(1, 10, 1.0, base), "h", side(4, 20, 1.0, base * 1.04), strict);
  EXPECT_EQ(r.verdict, gate::GateVerdict::regression);
  r = gate::evaluate_gate("b", side(1, 10, 1.0, base), "h", side(4, 20, 1.0, base * 0.96), strict);
  for (const gate::CellComparison* c : cells_of(r, "peak_alloc_bytes"))
    EXPECT_EQ(c->verdict, gate::CellVerdict::improvement);
  // Runs of one side that disagree are compared by their largest value, and the note says so.
  r = gate::evaluate_gate("b", side(1, 10, 1.0, base), "h", side(4, 20, 1.0, base, 5e7), {});
  const gate::CellComparison* c = cells_of(r, "peak_alloc_bytes").front();
  EXPECT_DOUBLE_EQ(*c->head_median, base + 1e8);
  EXPECT_NE(c->note.find("peak_alloc_bytes varies across the 3 head runs"), std::string::npos)
      << c->note;
}

TEST(GateMetrics, RunsWithoutPeakMemoryGiveNoMemoryCellsAndNoWarning) {
  // CPU runs have no peak_alloc_bytes: the default metrics gate decode latency alone, silently.
  const gate::GateResult r = gate::evaluate_gate("b", side(1, 10), "h", side(4, 20), {});
  EXPECT_EQ(r.cells.size(), 12u);
  EXPECT_TRUE(cells_of(r, "peak_alloc_bytes").empty());
  EXPECT_EQ(r.metrics[1].cells, 0);
  for (const std::string& w : r.warnings) EXPECT_EQ(w.find("memory"), std::string::npos) << w;
  // A head that measured it against a base that did not: no baseline for those cells.
  const gate::GateResult half =
      gate::evaluate_gate("b", side(1, 10), "h", side(4, 20, 1.0, 1e9), {});
  EXPECT_EQ(half.verdict, gate::GateVerdict::inconclusive);
  EXPECT_EQ(cells_of(half, "peak_alloc_bytes").front()->verdict, gate::CellVerdict::no_baseline);
}

TEST(GateMetrics, PrefillIsTestedInTheSameFamilyWithItsOwnMinEffect) {
  gate::GateOptions opt;
  opt.metrics = {"tpot_ms", "prefill_ms"};
  const auto base = side(1, 10), head = side(4, 20, 1.08);  // prefill 8% slower, tpot the same
  gate::GateResult r = gate::evaluate_gate("b", base, "h", head, opt);
  EXPECT_EQ(r.verdict, gate::GateVerdict::regression);
  const auto prefill = cells_of(r, "prefill_ms");
  ASSERT_EQ(prefill.size(), 12u);
  for (const gate::CellComparison* c : prefill) {
    EXPECT_EQ(c->verdict, gate::CellVerdict::regression);
    EXPECT_EQ(c->test, "runs-t");
    EXPECT_NEAR(*c->ratio, 1.08, 0.01);
  }
  for (const gate::CellComparison* c : cells_of(r, "tpot_ms"))
    EXPECT_EQ(c->verdict, gate::CellVerdict::unchanged);
  EXPECT_EQ(r.metrics.size(), 2u);
  EXPECT_EQ(r.metrics[1].cells, 12);
  // Holm over 24 tests: a cell's MDE is at alpha / 24, not alpha / 12.
  gate::GateOptions one = opt;
  one.metrics = {"tpot_ms"};
  const gate::GateResult alone = gate::evaluate_gate("b", base, "h", head, one);
  EXPECT_GT(*r.cells[0].mde, *alone.cells[0].mde);
  // --min-effect prefill_ms=0.1: the same 8% is below prefill's min effect.
  opt.metric_min_effect["prefill_ms"] = 0.1;
  r = gate::evaluate_gate("b", base, "h", head, opt);
  EXPECT_EQ(r.verdict, gate::GateVerdict::pass);
  EXPECT_DOUBLE_EQ(r.metrics[1].min_effect, 0.1);
}

TEST(GateMetrics, BadMetricSettingsNameTheSetting) {
  gate::GateOptions opt;
  opt.metrics = {"tpot_ms", "peak_rss_growth_bytes"};
  try {
    gate::validate_gate_options(opt);
    FAIL() << "accepted an ungated metric";
  } catch (const gate::GateOptionError& e) {
    EXPECT_EQ(e.settings().front(), "metrics");
    EXPECT_NE(std::string(e.what()).find("peak_alloc_bytes"), std::string::npos) << e.what();
  }
  opt.metrics = {"tpot_ms", "tpot_ms"};
  EXPECT_THROW(gate::validate_gate_options(opt), gate::GateOptionError);
  opt.metrics = {};
  EXPECT_THROW(gate::validate_gate_options(opt), gate::GateOptionError);
  opt.metrics = {"tpot_ms"};
  opt.metric_min_effect["prefill_ms"] = 0.1;  // not among the metrics
  EXPECT_THROW(gate::validate_gate_options(opt), gate::GateOptionError);
  opt.metric_min_effect = {{"tpot_ms", -1.0}};
  EXPECT_THROW(gate::validate_gate_options(opt), gate::GateOptionError);
  opt.metric_min_effect = {};
  opt.memory_tolerance_bytes = -1;
  EXPECT_THROW(gate::validate_gate_options(opt), gate::GateOptionError);
}

}  // namespace
}  // namespace pg
