// What the gate compares: per-repetition tpot samples pooled across the stored runs of one commit,
// and whether two sets of runs ran on comparable environments.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "store/types.h"

namespace pg::stats {

// tpot of each repetition = sum(decode_ms[rep]) / (gen_tokens - 1) (docs/METRICS.md "Derived
// metrics"). Computed from the raw samples so that pooling runs is exact; a cell stored without
// samples falls back to its tpot_ms metric, which is one value (the run's median), not one per
// repetition. Non-finite or non-positive values are dropped.
std::vector<double> repetition_tpot(const CellResult& cell);

struct CellPool {
  std::vector<double> tpot;         // pooled over every run whose cell is ok
  int runs = 0;                     // runs that contributed samples
  std::vector<std::string> failed;  // "oom (reason)" for each run where the cell was not ok
};

// Every cell key seen in `runs`, with its pooled samples.
std::map<CellKey, CellPool> pool_cells(const std::vector<Run>& runs);

// Empty when every run of both sides agrees on comparable_env_fields(); otherwise a sentence that
// names each differing field with its values, e.g. "device: base 'A' vs head 'B'".
std::string environment_difference(const std::vector<Run>& base, const std::vector<Run>& head);

}  // namespace pg::stats
