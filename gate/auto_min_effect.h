// `--min-effect auto`: the gate's threshold from the run-to-run spread that the store's history
// measured for these very cells (docs/STATISTICS.md "Noise-aware threshold").
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/run.h"

namespace pg::gate {

struct HistoryRun {
  std::string commit;
  std::vector<double> tpot;  // per repetition
};

struct AutoMinEffect {
  double value = 0.0;
  std::string reason;   // the rule and the numbers it used, for the report
  double run_sd = 0.0;  // largest per-cell sd of a run mean around its commit's mean (log scale)
  int df = 0;           // degrees of freedom behind that sd
};

inline constexpr double kAutoMinEffectSpreads = 3.0;  // threshold = 3 sd of a run mean
inline constexpr double kAutoMinEffectCap = 0.5;

// The spread of a run's mean log tpot around the mean of its commit's runs, pooled over every
// commit with 2+ runs in a cell's history; the threshold is kAutoMinEffectSpreads times the
// largest cell's spread, at least `floor`, at most kAutoMinEffectCap. Without any commit of 2+
// runs, `fallback` with a reason that says so.
AutoMinEffect auto_min_effect(const std::map<CellKey, std::vector<HistoryRun>>& history,
                              double floor, double fallback);

}  // namespace pg::gate
