// The calibration experiments of docs/STATISTICS.md, each a count over simulated gates.
#pragma once
#include <cstdint>

#include "gate/sim/scenario.h"

namespace pg::sim {

struct Tally {
  int gates = 0;
  int regression = 0;        // gate verdict regression (exit 1)
  int inconclusive = 0;      // gate verdict inconclusive (exit 3)
  int ci_rule = 0;           // would be regression if the effect rule were ci_low >= 1 + min_effect
  int unslowed_flagged = 0;  // gates that flagged a cell whose true change is zero
  double rate() const { return gates ? double(regression) / gates : 0.0; }
  double ci_rule_rate() const { return gates ? double(ci_rule) / gates : 0.0; }
};

// `gates` independent gates; gate i uses seed derive_seed(seed, i), so two scenarios that differ
// only in the slowdown see the same noise (common random numbers).
Tally run_gates(const Scenario& s, const gate::GateOptions& opt, int gates, uint64_t seed);

// Sequential gates (GateOptions::look / max_looks): look k judges the first first_rounds + k - 1
// rounds of each side and stops at a regression or when the gate says stop. budget_looks > 0
// models ci/scripts/pr_more_rounds.sh's seconds budget ending the rounds after that many looks:
// a gate still asking for more is then judged as look K of K (alpha / K, the alpha the looks not
// taken left over).
struct SequentialTally {
  int gates = 0, regression = 0, inconclusive = 0;
  double rounds = 0.0;  // mean rounds per side measured
  // Mean rounds per side by outcome: gates that ended in a regression, and the others.
  double rounds_regression = 0.0, rounds_other = 0.0;
  int futility = 0;  // gates that stopped for futility before the last look
  double rate() const { return gates ? double(regression) / gates : 0.0; }
};
SequentialTally run_sequential(const Scenario& s, gate::GateOptions opt, int first_rounds,
                               int max_looks, int gates, uint64_t seed, int budget_looks = 0);

// Smallest slowdown detected in >= target of the gates, by bisection over [0, 1] with common
// random numbers (detection is then monotone in the slowdown). Returns > 1 if even 100% is not.
double smallest_detected(Scenario s, const gate::GateOptions& opt, int gates, uint64_t seed,
                         double target = 0.95);

struct Coverage {
  double hl = 0.0, bootstrap = 0.0;              // fraction of intervals holding the true ratio
  double hl_width = 0.0, bootstrap_width = 0.0;  // mean (high - low)
  double point_outside_hl = 0.0;  // median(head)/median(base) outside the HL interval
  int trials = 0;
};

// 95% intervals for head/base from `reps` vs `reps` log-normal repetitions whose true ratio is
// `ratio` (a scale shift, so median ratio and Hodges-Lehmann ratio are both exactly `ratio`).
Coverage interval_coverage(double cv, int reps, double ratio, int trials, int bootstrap_iters,
                           uint64_t seed);

}  // namespace pg::sim
