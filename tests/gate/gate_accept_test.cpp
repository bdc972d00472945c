// Accepted slowdowns (docs/STATISTICS.md "Accepted slowdowns"): a cell is tested against the base
// times the ratio someone accepted, so the accepted change passes and a head that gets slower
// again fails again, with every design (runs, A/B runs, exact memory).
#include <gtest/gtest.h>

#include "ab_runs.h"
#include "common/errors.h"
#include "gate/gate.h"
#include "synthetic_runs.h"

namespace pg {
namespace {

using test::make_run;
using test::sweep;
using test::sweep_keys;

// 3 runs a side, every cell at 0.3% noise; cell 0 scaled by `slow0` and cell 1 by `slow1`.
std::vector<Run> side(int first_id, uint64_t seed, double slow0 = 1.0, double slow1 = 1.0) {
  std::vector<Run> out;
  for (int i = 0; i < 3; ++i)
    out.push_back(make_run(first_id + i, sweep(10, 0.003, seed + i, [&](int c) {
                             return c == 0 ? slow0 : c == 1 ? slow1 : 1.0;
                           })));
  return out;
}

gate::GateOptions accepting(double ratio, const std::string& metric = "tpot_ms") {
  gate::GateOptions o;
  o.metrics = {"tpot_ms"};
  if (metric != "tpot_ms") o.metrics.push_back(metric);
  o.accepted_ratio[{sweep_keys()[0], metric}] = ratio;
  return o;
}

const gate::CellComparison& cell(const gate::GateResult& r, const CellKey& key,
                                 const std::string& metric = "tpot_ms") {
  for (const gate::CellComparison& c : r.cells)
    if (c.key == key && c.metric == metric) return c;
  throw std::runtime_error("no such cell");
}

TEST(GateAccept, TheAcceptedSlowdownPassesAndKeepsItsMeasuredFigures) {
  gate::GateOptions plain;
  plain.metrics = {"tpot_ms"};
  const auto base = side(1, 10), head = side(4, 20, 1.10);
  const gate::GateResult before = gate::evaluate_gate("b", base, "h", head, plain);
  ASSERT_EQ(before.verdict, gate::GateVerdict::regression);
  const gate::CellComparison& slow = cell(before, sweep_keys()[0]);
  ASSERT_EQ(slow.verdict, gate::CellVerdict::regression);

  // Accepting exactly what was measured: the same runs now pass.
  const gate::GateResult after = gate::evaluate_gate("b", base, "h", head, accepting(*slow.ratio));
  EXPECT_EQ(after.verdict, gate::GateVerdict::pass);
  EXPECT_EQ(gate::gate_exit_code(after), 0);
  const gate::CellComparison& c = cell(after, sweep_keys()[0]);
  EXPECT_EQ(c.verdict, gate::CellVerdict::accepted);
  EXPECT_EQ(to_string(c.verdict), "accepted");
  ASSERT_TRUE(c.accepted_ratio);
  EXPECT_DOUBLE_EQ(*c.accepted_ratio, *slow.ratio);
  // The figures stay head against base, as measured, not against the accepted level.
  EXPECT_NEAR(*c.ratio, *slow.ratio, 1e-12);
  EXPECT_NEAR(*c.ci_low, *slow.ci_low, 1e-12);
  EXPECT_NEAR(*c.ci_high, *slow.ci_high, 1e-12);
  EXPECT_NEAR(*c.base_median, *slow.base_median, 1e-12);
  EXPECT_NEAR(*c.runs_ratio, *slow.runs_ratio, 1e-12);
  EXPECT_GT(*c.p_adjusted, 0.01);  // tested against the accepted level, not the base
  // The other cells are judged as before.
  for (size_t i = 1; i < sweep_keys().size(); ++i)
    EXPECT_EQ(cell(after, sweep_keys()[i]).verdict, cell(before, sweep_keys()[i]).verdict);
}

TEST(GateAccept, AHeadThatGetsSlowerAgainFailsAgain) {
  const gate::GateResult r =
      gate::evaluate_gate("b", side(1, 10), "h", side(4, 20, 1.25), accepting(1.10));
  EXPECT_EQ(r.verdict, gate::GateVerdict::regression);
  const gate::CellComparison& c = cell(r, sweep_keys()[0]);
  EXPECT_EQ(c.verdict, gate::CellVerdict::regression);
  EXPECT_NEAR(*c.ratio, 1.25, 0.01);  // the change against the base
  EXPECT_NE(c.note.find("slower than the accepted +10%"), std::string::npos) << c.note;
}

TEST(GateAccept, ASlowerHeadWithinTheMinEffectOfTheAcceptedLevelPasses) {
  // Accepted +10%, measured +12%: 1.12 / 1.10 is +1.8%, under the default min effect of 5%.
  const gate::GateResult r =
      gate::evaluate_gate("b", side(1, 10), "h", side(4, 20, 1.12), accepting(1.10));
  EXPECT_EQ(r.verdict, gate::GateVerdict::pass);
  EXPECT_EQ(cell(r, sweep_keys()[0]).verdict, gate::CellVerdict::accepted);
}

TEST(GateAccept, AnAcceptanceCoversItsCellOnly) {
  const gate::GateResult r =
      gate::evaluate_gate("b", side(1, 10), "h", side(4, 20, 1.10, 1.10), accepting(1.10));
  EXPECT_EQ(r.verdict, gate::GateVerdict::regression);
  EXPECT_EQ(cell(r, sweep_keys()[0]).verdict, gate::CellVerdict::accepted);
  EXPECT_EQ(cell(r, sweep_keys()[1]).verdict, gate::CellVerdict::regression);
}

TEST(GateAccept, AHeadNoLongerSlowerIsUnchanged) {
  const gate::GateResult r =
      gate::evaluate_gate("b", side(1, 10), "h", side(4, 20), accepting(1.10));
  EXPECT_EQ(r.verdict, gate::GateVerdict::pass);
  EXPECT_EQ(cell(r, sweep_keys()[0]).verdict, gate::CellVerdict::unchanged);
  EXPECT_NEAR(*cell(r, sweep_keys()[0]).ratio, 1.0, 0.01);
}

TEST(GateAccept, PairedRunsAreTestedAgainstTheAcceptedLevelToo) {
  // One A/B run of 20 pairs a cell; the head's cell 0 is 10% slower, then 25%.
  auto ab = [](double slow) {
    std::map<CellKey, std::pair<std::vector<double>, std::vector<double>>> cells;
    uint64_t seed = 1;
    for (const CellKey& k : sweep_keys()) {
      auto b = test::lognormal(20, 1.0, 0.003, seed++);
      auto h = test::lognormal(20, k == sweep_keys()[0] ? slow : 1.0, 0.003, seed++);
      cells[k] = {b, h};
    }
    return test::make_ab_run(1, "ab-1", cells);
  };
  const auto accepted = ab(1.10), slower = ab(1.25);
  const gate::GateResult ok =
      gate::evaluate_gate("b", {accepted.base}, "h", {accepted.head}, accepting(1.10));
  EXPECT_EQ(ok.design, "paired");
  EXPECT_EQ(ok.verdict, gate::GateVerdict::pass);
  EXPECT_EQ(cell(ok, sweep_keys()[0]).verdict, gate::CellVerdict::accepted);
  EXPECT_NEAR(*cell(ok, sweep_keys()[0]).ratio, 1.10, 0.01);
  const gate::GateResult bad =
      gate::evaluate_gate("b", {slower.base}, "h", {slower.head}, accepting(1.10));
  EXPECT_EQ(bad.verdict, gate::GateVerdict::regression);
  EXPECT_EQ(cell(bad, sweep_keys()[0]).verdict, gate::CellVerdict::regression);
}

TEST(GateAccept, AcceptedPeakMemoryIsComparedAgainstTheAcceptedPeak) {
  const double gib = 1024.0 * 1024 * 1024;
  auto with_memory = [&](std::vector<pg::Run> runs, double bytes) {
    for (pg::Run& r : runs)
      for (CellResult& c : r.cells) c.metrics["peak_alloc_bytes"] = bytes;
    return runs;
  };
  const auto base = with_memory(side(1, 10), gib);
  const gate::GateResult ok = gate::evaluate_gate("b", base, "h", with_memory(side(4, 20), 2 * gib),
                                                  accepting(2.0, "peak_alloc_bytes"));
  const gate::CellComparison& accepted = cell(ok, sweep_keys()[0], "peak_alloc_bytes");
  EXPECT_EQ(accepted.verdict, gate::CellVerdict::accepted);
  EXPECT_DOUBLE_EQ(*accepted.ratio, 2.0);
  EXPECT_DOUBLE_EQ(*accepted.base_median, gib);
  EXPECT_EQ(cell(ok, sweep_keys()[1], "peak_alloc_bytes").verdict, gate::CellVerdict::regression);
  const gate::GateResult more = gate::evaluate_gate(
      "b", base, "h", with_memory(side(4, 20), 3 * gib), accepting(2.0, "peak_alloc_bytes"));
  EXPECT_EQ(cell(more, sweep_keys()[0], "peak_alloc_bytes").verdict, gate::CellVerdict::regression);
}

TEST(GateAccept, AnAcceptedRatioMustBePositive) {
  for (double bad : {0.0, -1.0, std::nan("")}) {
    try {
      gate::evaluate_gate("b", side(1, 10), "h", side(4, 20), accepting(bad));
      FAIL() << "accepted ratio " << bad;
    } catch (const SettingError& e) {
      EXPECT_NE(std::string(e.what()).find("accepted_ratio"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace pg
