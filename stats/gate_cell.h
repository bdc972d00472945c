// One cell of the merge gate, before the corrections across cells: its interval, its raw one-sided
// p-values at both levels, and its standard error for the minimum detectable effect. Internal to
// stats/gate.cpp; docs/STATISTICS.md explains each choice.
#pragma once
#include <optional>

#include "stats/gate.h"
#include "stats/gate_inputs.h"
#include "stats/two_level.h"

namespace pg::stats {

struct TestedCell {
  size_t cell = 0;  // index into GateResult::cells
  double mw_slower = 1.0, mw_faster = 1.0;
  std::optional<TwoLevelEstimate> two_level;  // its p-values exist when has_runs_test()
  double min_p = 0.0;                         // smallest p the Mann-Whitney test can reach
};

// Fills ratio, interval, the two-level fields and the notes of a cell present on both sides.
TestedCell test_cell(CellComparison& c, size_t index, const CellPool& base, const CellPool& head);

// The cell's minimum detectable effect at one-sided level `alpha`: from the two-level standard
// error when runs allow it, else from the repetitions alone (no drift assumed), widened by the
// Mann-Whitney test's efficiency against the t test. Empty if the rank test can never reach
// `alpha` with these repetitions.
std::optional<double> cell_mde(const TestedCell& t, double alpha, double power);

// "%.3g" of v, for notes and warnings.
std::string fmt_g(double v);

}  // namespace pg::stats
