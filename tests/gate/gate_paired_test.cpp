// The gate on A/B runs (docs/STATISTICS.md "Paired A/B runs"): the paired t test decides when the
// runs are the two sides of A/B runs, drift shared by both sides cancels, and anything else falls
// back to the unpaired rule with a warning that says why.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "ab_runs.h"
#include "gate/gate.h"
#include "stats/multiple.h"
#include "stats/paired.h"

namespace pg {
namespace {

using Cells = std::map<CellKey, std::pair<std::vector<double>, std::vector<double>>>;

// Every sweep cell: `pairs` pairs scaled by a run factor and a linear drift over the pairs (both
// shared by base and head of a pair), log-normal noise of sd `noise`, the head slowed by
// `slowdown`.
Cells ab_cells(int pairs, double run_factor, double drift, double noise, double slowdown,
               uint64_t seed) {
  Cells out;
  std::mt19937_64 gen(seed);
  int c = 0;
  for (const CellKey& k : test::sweep_keys()) {
    auto& [base, head] = out[k];
    for (int i = 0; i < pairs; ++i) {
      const double level = (1.0 + 0.1 * c) * run_factor * (1.0 + drift * i / pairs);
      base.push_back(level * std::exp(noise * stats::standard_normal(gen)));
      head.push_back(level * (1.0 + slowdown) * std::exp(noise * stats::standard_normal(gen)));
    }
    ++c;
  }
  return out;
}

struct Sides {
  std::vector<Run> base, head;
};

// k A/B runs whose run factors differ by about 10% (the drift between runs), tiny noise.
Sides ab_runs(int k, int pairs, double slowdown, double noise = 0.0005) {
  Sides s;
  const double factors[] = {1.0, 1.12, 0.91, 1.05, 0.95};
  for (int i = 0; i < k; ++i) {
    const auto ab =
        test::make_ab_run(10 * i, "ab" + std::to_string(i),
                          ab_cells(pairs, factors[i % 5], 0.1, noise, slowdown, 100 + i), 3 + i);
    s.base.push_back(ab.base);
    s.head.push_back(ab.head);
  }
  return s;
}

gate::GateOptions options() {
  gate::GateOptions o;
  o.min_effect = 0.005;
  o.bootstrap_iters = 0;
  return o;
}

void strip_pairing(Sides& s) {
  for (auto* runs : {&s.base, &s.head})
    for (Run& r : *runs) r.ab.reset();
}

TEST(PairedGate, AaPassesUnderLargeDriftBetweenRuns) {
  const Sides s = ab_runs(3, 20, 0.0);
  const gate::GateResult r = gate::evaluate_gate("b", s.base, "h", s.head, options());
  EXPECT_EQ(r.verdict, gate::GateVerdict::pass);
  EXPECT_EQ(r.design, "paired");
  EXPECT_EQ(r.ab_runs, 3);
  EXPECT_EQ(r.blocks, 30);
  EXPECT_EQ(r.pairs, 60);
  EXPECT_NE(r.rule.find("means of 3 A/B runs"), std::string::npos) << r.rule;
  for (const gate::CellComparison& c : r.cells) {
    if (c.metric != "tpot_ms") continue;
    EXPECT_EQ(c.test, "paired-t");
    EXPECT_EQ(c.paired_unit, "ab-run");
    EXPECT_EQ(*c.paired_df, 2.0);
    EXPECT_NEAR(*c.ratio, 1.0, 0.002);
  }
}

TEST(PairedGate, OnePercentSlowerHeadIsCaughtWhereUnpairedIsNot) {
  Sides s = ab_runs(3, 20, 0.01);
  const gate::GateResult paired = gate::evaluate_gate("b", s.base, "h", s.head, options());
  EXPECT_EQ(paired.verdict, gate::GateVerdict::regression);
  int caught = 0;
  for (const gate::CellComparison& c : paired.cells)
    caught += c.verdict == gate::CellVerdict::regression;
  EXPECT_EQ(caught, 12);
  strip_pairing(s);  // the same repetitions judged as ordinary runs: drift swamps 1%
  const gate::GateResult unpaired = gate::evaluate_gate("b", s.base, "h", s.head, options());
  EXPECT_EQ(unpaired.design, "unpaired");
  EXPECT_NE(unpaired.verdict, gate::GateVerdict::regression);
  // Ordinary runs are not A/B runs: no warning about pairing.
  for (const std::string& w : unpaired.warnings) EXPECT_EQ(w.find("NOT PAIRED"), std::string::npos);
}

TEST(PairedGate, OneAbRunTestsBlocksAndStatesItsPower) {
  Sides s = ab_runs(1, 20, 0.0);
  gate::GateResult r = gate::evaluate_gate("b", s.base, "h", s.head, options());
  EXPECT_EQ(r.verdict, gate::GateVerdict::pass);
  EXPECT_EQ(r.blocks, 10);
  EXPECT_NE(r.rule.find("10 ABBA blocks"), std::string::npos) << r.rule;
  EXPECT_NE(r.rule.find("1 A/B run"), std::string::npos) << r.rule;
  ASSERT_TRUE(r.mde);
  EXPECT_LT(*r.mde, 0.005);
  EXPECT_FALSE(r.underpowered);
  EXPECT_TRUE(r.drift_estimated);
  EXPECT_TRUE(r.rules_out_min_effect);
  for (const std::string& w : r.warnings) EXPECT_EQ(w.find("ONE RUN PER SIDE"), std::string::npos);
  for (const gate::CellComparison& c : r.cells) {
    if (c.metric != "tpot_ms") continue;
    EXPECT_EQ(c.paired_unit, "block");
    EXPECT_EQ(c.blocks, 10);
    EXPECT_EQ(c.pairs, 20);
    EXPECT_EQ(*c.paired_df, 9.0);
    ASSERT_TRUE(c.upper_bound && c.ci_high);
    EXPECT_LT(*c.upper_bound, *c.ci_high);  // the one-sided 95% bound inside the two-sided one
  }
  s = ab_runs(1, 20, 0.01);
  r = gate::evaluate_gate("b", s.base, "h", s.head, options());
  EXPECT_EQ(r.verdict, gate::GateVerdict::regression);
}

double tpot(const CellKey& key, const std::vector<double>& steps) {
  return std::accumulate(steps.begin(), steps.end(), 0.0) / (key.gen_tokens - 1);
}

TEST(PairedGate, PValuesAreThePairedTestsAdjustedByHolm) {
  const Sides s = ab_runs(1, 24, 0.0005, 0.002);
  gate::GateOptions o = options();
  o.metrics = {"tpot_ms"};
  const gate::GateResult r = gate::evaluate_gate("b", s.base, "h", s.head, o);
  std::vector<double> slower, faster;
  for (const gate::CellComparison& c : r.cells) {
    stats::AbPairs p;
    for (const CellResult& b : s.base[0].cells)
      if (b.key == c.key) {
        for (const auto& steps : b.samples.decode_ms) p.base.push_back(tpot(b.key, steps));
      }
    for (const CellResult& h : s.head[0].cells)
      if (h.key == c.key) {
        for (const auto& steps : h.samples.decode_ms) p.head.push_back(tpot(h.key, steps));
        p.head_position = h.samples.ab_position;
      }
    const auto e = stats::paired_test({stats::abba_blocks(p)});
    ASSERT_TRUE(e && e->has_test());
    EXPECT_NEAR(*c.ratio, e->ratio, 1e-12);
    slower.push_back(*e->p_slower);
    faster.push_back(*e->p_faster);
  }
  const auto adj_s = stats::holm_adjust(slower), adj_f = stats::holm_adjust(faster);
  for (size_t i = 0; i < r.cells.size(); ++i) {
    const bool moved_faster = faster[i] < slower[i];
    EXPECT_NEAR(*r.cells[i].p_value, moved_faster ? faster[i] : slower[i], 1e-12);
    EXPECT_NEAR(*r.cells[i].p_adjusted, moved_faster ? adj_f[i] : adj_s[i], 1e-12);
  }
}

TEST(PairedGate, MixedPairedAndOrdinaryRunsFallBackWithAWarning) {
  Sides s = ab_runs(2, 20, 0.0);
  s.base[1].ab.reset();
  s.head[1].ab.reset();
  const gate::GateResult r = gate::evaluate_gate("b", s.base, "h", s.head, options());
  EXPECT_EQ(r.design, "unpaired");
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_EQ(r.warnings[0].find("NOT PAIRED"), 0u) << r.warnings[0];
  EXPECT_NE(r.warnings[0].find("2 of the 4 runs"), std::string::npos) << r.warnings[0];
  for (const gate::CellComparison& c : r.cells)
    if (c.metric == "tpot_ms") {
      EXPECT_EQ(c.test, "runs-t");
    }
}

TEST(PairedGate, BrokenPairsFallBackAndSayWhere) {
  Sides s = ab_runs(1, 20, 0.0);
  s.head[0].cells[3].samples.decode_ms.pop_back();
  s.head[0].cells[3].samples.prefill_ms.pop_back();
  s.head[0].cells[3].samples.ab_position.pop_back();
  gate::GateResult r = gate::evaluate_gate("b", s.base, "h", s.head, options());
  EXPECT_EQ(r.design, "unpaired");
  EXPECT_NE(r.warnings[0].find("20 base and 19 head repetitions"), std::string::npos)
      << r.warnings[0];
  s = ab_runs(1, 20, 0.0);
  s.head[0].ab->uuid = "other";
  r = gate::evaluate_gate("b", s.base, "h", s.head, options());
  EXPECT_EQ(r.design, "unpaired");
  EXPECT_NE(r.warnings[0].find("is not among the head runs"), std::string::npos) << r.warnings[0];
  s = ab_runs(1, 20, 0.0);
  s.base[0].cells[0].samples.ab_position[0] = s.head[0].cells[0].samples.ab_position[0];
  r = gate::evaluate_gate("b", s.base, "h", s.head, options());
  EXPECT_NE(r.warnings[0].find("same position"), std::string::npos) << r.warnings[0];
}

TEST(PairedGate, OddPairsDropTheIncompleteBlockAndSaySo) {
  const Sides s = ab_runs(1, 21, 0.0);
  const gate::GateResult r = gate::evaluate_gate("b", s.base, "h", s.head, options());
  EXPECT_EQ(r.blocks, 10);
  EXPECT_EQ(r.pairs, 20);
  EXPECT_NE(r.cells[0].note.find("incomplete last ABBA block"), std::string::npos)
      << r.cells[0].note;
}

TEST(PairedGate, TooFewPairsIsInconclusive) {
  const Sides s = ab_runs(1, 3, 0.5);
  const gate::GateResult r = gate::evaluate_gate("b", s.base, "h", s.head, options());
  EXPECT_EQ(r.verdict, gate::GateVerdict::inconclusive);
  bool warned = false;
  for (const std::string& w : r.warnings) warned = warned || w.find("TOO FEW PAIRS") == 0;
  EXPECT_TRUE(warned);
}

TEST(PairedGate, PrefillIsPairedAndMemoryStaysExact) {
  const Sides s = ab_runs(1, 20, 0.01);
  gate::GateOptions o = options();
  o.metrics = {"tpot_ms", "prefill_ms"};
  const gate::GateResult r = gate::evaluate_gate("b", s.base, "h", s.head, o);
  int prefill = 0;
  for (const gate::CellComparison& c : r.cells)
    if (c.metric == "prefill_ms") {
      ++prefill;
      EXPECT_EQ(c.test, "paired-t");
      EXPECT_EQ(c.verdict, gate::CellVerdict::regression);
    }
  EXPECT_EQ(prefill, 12);
}

}  // namespace
}  // namespace pg
