// Synthetic benchmark runs for the calibration simulation: a 12-cell sweep (batch 1,4,8,16 x
// prompt 64,256,512) whose per-repetition tpot is log-normal with a given coefficient of variation.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "gate/gate.h"

namespace pg::sim {

struct Scenario {
  double cv = 0.03;             // coefficient of variation of one repetition's tpot
  int reps = 10;                // repetitions per side
  double slowdown = 0.0;        // head / base - 1 on the slowed cells
  bool slow_all_cells = false;  // false: only the first cell is slowed
  double run_drift_sd = 0.0;    // log-sd of a per-run factor shared by all cells of a run
  int runs = 1;                 // runs per side, pooled by the gate (the shipped protocol: 3)
  double cell_drift_sd = 0.0;   // log-sd of a per-run, per-cell factor (drift cells do not share)
  // Trusted history beside each gate: this many other commits of 2 runs each, unslowed, from the
  // same noise (docs/STATISTICS.md "Run variance from trusted history"); 0: none.
  int history_commits = 0;
  // The history's drift sds relative to the gate's: below 1, the gate runs on a noisier day than
  // its history, the case the F check must catch.
  double history_drift_scale = 1.0;
};

inline constexpr int kCells = 12;

// One run of one side; `slowdown` is applied where the scenario says (head side only).
Run make_run(const Scenario& s, bool head, std::mt19937_64& gen);

// One simulated gate: fresh base and head runs from `seed` (s.runs per side, alternating base and
// head), through the real evaluate_gate.
gate::GateResult simulate_gate(const Scenario& s, const gate::GateOptions& opt, uint64_t seed);

// The runs of one simulated gate with up to `rounds` rounds per side, for sequential looks:
// look k judges the first runs of each side.
struct GateRuns {
  std::vector<Run> base, head;
  stats::TrustedHistory history;  // Scenario::history_commits > 0: each cell's, for tpot_ms
};
GateRuns simulate_runs(const Scenario& s, int rounds, uint64_t seed);

}  // namespace pg::sim
