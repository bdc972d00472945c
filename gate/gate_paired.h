// The gate's paired design (docs/STATISTICS.md "Paired A/B runs"): whether the base and head runs
// are the two sides of A/B runs (`perfgate ab`), and each cell's pairs of one metric in them.
// Internal to gate/gate*.cpp.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/run.h"
#include "stats/paired.h"

namespace pg::gate {

struct PairingCheck {
  bool paired = false;
  // Why the runs are not judged as paired, for a warning; empty when none of them is an A/B run
  // (ordinary runs: the unpaired rule, quietly).
  std::string why_not;
  // The A/B runs: index into base_runs and into head_runs of the two runs sharing an ab uuid.
  std::vector<std::pair<size_t, size_t>> ab_runs;
};

// Paired when every base run and every head run is one side of an A/B run, every base run has
// the head run of its uuid and the other way round, the design is "abba", and in every cell that
// both runs of an A/B run measured ok, both have the same number of repetitions, one position
// each (ab_position), opposite in every pair and balanced in every block.
PairingCheck pair_ab_runs(const std::vector<Run>& base_runs, const std::vector<Run>& head_runs);

// A cell's blocks of `metric` in each A/B run where both sides measured it ok (per repetition:
// core/metrics.h's repetition_value), keyed by cell.
std::map<CellKey, std::vector<stats::AbBlocks>> paired_blocks(const std::vector<Run>& base_runs,
                                                              const std::vector<Run>& head_runs,
                                                              const PairingCheck& pairing,
                                                              const std::string& metric);

}  // namespace pg::gate
