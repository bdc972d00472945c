// The false-alarm bound of sequential rounds (docs/STATISTICS.md "Enough rounds";
// ci/scripts/pr_more_rounds.sh): A/A gates that look again after every extra round, through the
// real evaluate_gate on simulated runs with run-to-run drift. Every look at alpha / N keeps the
// chance of any false alarm over all looks at alpha; looking N times at the full alpha does not.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "gate/sim/experiments.h"
#include "stats/random.h"

namespace pg {
namespace {

constexpr double kAlpha = 0.05;  // large, so that a few hundred gates resolve the rate
constexpr int kGates = 500, kFirstRounds = 3, kLooks = 4;

// Drift as this project's CPU runners show it (docs/STATISTICS.md, "Calibration on real runs"),
// no code change.
sim::Scenario drifting_aa() {
  return sim::Scenario{0.03, 10, 0.0, true, 0.03, kFirstRounds, 0.015};
}

gate::GateOptions always_too_wide() {
  gate::GateOptions opt;
  opt.alpha = kAlpha;
  opt.min_effect = 0.0;  // no gate is powered for a 0% slowdown: every look asks for another
  opt.bootstrap_iters = 200;
  return opt;
}

// Binomial upper tolerance for a rate whose truth is at most p: 3 standard errors.
double upper(double p, int n) { return p + 3.0 * std::sqrt(p * (1.0 - p) / n); }

TEST(SequentialLooks, EveryLookAtAlphaOverNHoldsAlphaOverAllLooks) {
  const auto t =
      sim::run_sequential(drifting_aa(), always_too_wide(), kFirstRounds, kLooks, kGates, 11);
  EXPECT_EQ(t.gates, kGates);
  // Every gate without a (false) regression used all its looks: the worst case for false alarms.
  EXPECT_GT(t.rounds, kFirstRounds + kLooks - 1 - 0.2);
  EXPECT_LE(t.rate(), upper(kAlpha, kGates)) << t.regression << " of " << t.gates;
  std::printf("alpha / N at every look: %d false alarms in %d gates\n", t.regression, t.gates);
}

TEST(SequentialLooks, TheSecondsBudgetSpendsOnlyWhatTheLooksNotTakenLeft) {
  // The budget ends the rounds after 2 of 4 looks: look 1 at alpha/4, the last at alpha/2.
  const auto t =
      sim::run_sequential(drifting_aa(), always_too_wide(), kFirstRounds, kLooks, kGates, 11, 2);
  EXPECT_GT(t.rounds, kFirstRounds + 1 - 0.1);
  EXPECT_LE(t.rounds, kFirstRounds + 1);
  EXPECT_LE(t.rate(), upper(kAlpha, kGates)) << t.regression << " of " << t.gates;
  std::printf("budget after 2 of 4 looks: %d false alarms in %d gates\n", t.regression, t.gates);
  // The bound the script relies on: (K - 1) / N + 1 / K <= 1 for every K <= N.
  for (int n = 1; n <= 50; ++n)
    for (int k = 1; k <= n; ++k) EXPECT_LE((k - 1.0) / n + 1.0 / k, 1.0 + 1e-12);
}

TEST(SequentialLooks, LookingAgainAtTheFullAlphaRaisesFalseAlarms) {
  // The control: the same gates, every look at the full alpha (as if each look were the only
  // one). Its rate must be well above the Bonferroni rule's, or the first test proves nothing.
  const auto s = drifting_aa();
  gate::GateOptions opt = always_too_wide();
  int naive = 0;
  for (int i = 0; i < kGates; ++i) {
    const auto runs = sim::simulate_runs(s, kFirstRounds + kLooks - 1, stats::derive_seed(11, i));
    for (int look = 1; look <= kLooks; ++look) {
      const int rounds = kFirstRounds + look - 1;
      const std::vector<pg::Run> base(runs.base.begin(), runs.base.begin() + rounds);
      const std::vector<pg::Run> head(runs.head.begin(), runs.head.begin() + rounds);
      if (gate::evaluate_gate("base", base, "head", head, opt).verdict ==
          gate::GateVerdict::regression) {
        ++naive;
        break;
      }
    }
  }
  const auto bonferroni =
      sim::run_sequential(s, always_too_wide(), kFirstRounds, kLooks, kGates, 11);
  std::printf("full alpha at every look: %d false alarms in %d gates\n", naive, kGates);
  EXPECT_GT(naive, 2 * bonferroni.regression + 5)
      << "naive " << naive << ", alpha / N " << bonferroni.regression << " of " << kGates;
}

}  // namespace
}  // namespace pg
