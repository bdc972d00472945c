// The run-to-run variance of a cell from trusted history (docs/STATISTICS.md "Run variance from
// trusted history"). A gate's own 3 runs a side give its t test df = 4; replicated runs of other
// commits of the same cell, on the same environment, measured by jobs that ran no pull request's
// code, estimate the variance of one run mean with far more. Each commit's runs differ only by
// run-to-run noise, so their spread around that commit's mean is the variance the test needs.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/run.h"
#include "stats/two_level.h"

namespace pg::stats {

// History of one cell: for each commit, the repetition values of each of its runs (> 0). Only
// runs with exactly `reps` values count, since the variance of a run mean depends on its size;
// a commit with fewer than 2 such runs adds nothing. Empty unless df >= 1.
std::optional<RunVariance> history_run_variance(const std::vector<RunGroups>& commits, int reps);

// Trusted history per cell and metric, as evaluate_gate takes it.
using TrustedHistory = std::map<std::pair<CellKey, std::string>, RunVariance>;

}  // namespace pg::stats
