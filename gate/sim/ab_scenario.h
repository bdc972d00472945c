// Synthetic runs for the paired-design study (docs/STATISTICS.md "Paired A/B runs"): the same
// repetition budget measured as ordinary runs (base and head in runs of their own, alternating)
// or as A/B runs (base and head alternating in ABBA blocks inside one run), with the drift models
// that separate them. All effects are multiplicative (log scale).
#pragma once
#include <cstdint>
#include <string>

#include "gate/sim/scenario.h"

namespace pg::sim {

struct AbScenario {
  bool paired = true;
  int cells = kCells;
  int reps = 30;          // repetitions of a cell per run and side (paired: pairs per A/B run)
  int runs = 1;           // runs per side (paired: A/B runs)
  double rep_sd = 0.001;  // within a run: one repetition's noise
  double run_sd = 0.001;  // between runs: a factor of each run, common to its cells; in an A/B
                          // run shared by both sides (what pairing cancels)
  // Within a run, a slow drift over the run's time (every measurement of every cell in order):
  // "linear" (a slope, the change from start to end ~ N(0, slow_sd)) or "ar1" (a stationary AR(1)
  // of sd slow_sd and lag-one correlation ar1_phi per measurement).
  double slow_sd = 0.0;
  std::string drift_model = "linear";
  double ar1_phi = 0.99;
  // A/B runs only: a factor of each side's worker process in each A/B run (sd), which pairing
  // does not cancel: the assumption the one-A/B-run test makes, broken on purpose.
  double worker_sd = 0.0;
  double slowdown = 0.0;        // head / base - 1 on the slowed cells
  bool slow_all_cells = false;  // false: only the first cell
};

// The base and head runs of one simulated gate (seeded), ready for evaluate_gate.
GateRuns simulate_ab_runs(const AbScenario& s, uint64_t seed);

// "paired 1 A/B run x 30 pairs" / "unpaired 3 runs x 10 reps a side", for tables.
std::string design_label(const AbScenario& s);

}  // namespace pg::sim
