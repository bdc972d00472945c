// The trusted history behind a gate's run variance (docs/STATISTICS.md "Run variance from trusted
// history"): replicated runs of other commits in a store that only trusted jobs write (the
// runner's persistent store, which pushes to main fill), cell by cell on the head's environment.
#pragma once
#include <string>
#include <vector>

#include "core/run.h"
#include "stats/run_history.h"
#include "store/store.h"

namespace pg::app {

// For each tested metric of `metrics` and each cell of the head: the variance of one run mean
// from `history`'s runs of the same cell, comparable environment and number of repetitions,
// measured on a clean work tree and not as an A/B run. The runs of `exclude` (the commits being
// judged) never count: the gate's own runs are not history.
stats::TrustedHistory trusted_history(store::Store& history, const std::vector<Run>& head_runs,
                                      const std::vector<std::string>& metrics,
                                      const std::vector<std::string>& exclude);

}  // namespace pg::app
