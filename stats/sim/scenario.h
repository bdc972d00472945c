// Synthetic benchmark runs for the calibration simulation: a 12-cell sweep (batch 1,4,8,16 x
// prompt 64,256,512) whose per-repetition tpot is log-normal with a given coefficient of variation.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "stats/gate.h"

namespace pg::sim {

struct Scenario {
  double cv = 0.03;             // coefficient of variation of one repetition's tpot
  int reps = 10;                // repetitions per side
  double slowdown = 0.0;        // head / base - 1 on the slowed cells
  bool slow_all_cells = false;  // false: only the first cell is slowed
  double run_drift_sd = 0.0;    // log-sd of a per-run factor shared by all cells of a run
};

inline constexpr int kCells = 12;

// One run of one side; `slowdown` is applied where the scenario says (head side only).
Run make_run(const Scenario& s, bool head, std::mt19937_64& gen);

// One simulated gate: fresh base and head runs from `seed`, through the real evaluate_gate.
GateResult simulate_gate(const Scenario& s, const GateOptions& opt, uint64_t seed);

}  // namespace pg::sim
