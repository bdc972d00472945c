// The paired-design study of perfgate-sim (docs/STATISTICS.md "Paired A/B runs"): A/A false
// alarms under drift with exact Clopper-Pearson intervals, and power against the unpaired design
// at the same repetition budget, through the real evaluate_gate.
#pragma once
#include <cstdint>
#include <vector>

#include "gate/gate.h"
#include "gate/sim/ab_scenario.h"

namespace pg::sim {

struct AbTally {
  int gates = 0, regression = 0, inconclusive = 0;
  double median_mde = -1.0;  // median of the gates' reported MDE (-1: none stated)
  double rate() const { return gates ? double(regression) / gates : 0.0; }
};

// `gates` gates, gate i from derive_seed(seed, i) (common random numbers across slowdowns).
AbTally run_ab_gates(const AbScenario& s, const gate::GateOptions& opt, int gates, uint64_t seed);

// Smallest slowdown of the scenario's slowed cells caught in >= target of the gates (bisection
// to 0.01% over [0, 1]); > 1 when not even 100% is.
double ab_smallest_detected(AbScenario s, const gate::GateOptions& opt, int gates, uint64_t seed,
                            double target = 0.95);

// One scenario (`perfgate-sim --design ...`): A/A false alarms, detection at each slowdown, the
// reported MDE and the smallest slowdown caught, as a markdown table.
void print_ab_scenario(const AbScenario& s, const gate::GateOptions& opt, int gates,
                       int bisect_gates, uint64_t seed, const std::vector<double>& slowdowns);

// The whole study (`perfgate-sim --ab-study`): the tables of bench/results/ab-sim-2026-12-02.
void print_ab_study(const gate::GateOptions& opt, int gates, int bisect_gates, uint64_t seed);

}  // namespace pg::sim
