// One cell of the merge gate, before the corrections across cells: the deciding test (the t test
// on run means, or the pooled Mann-Whitney without runs enough), its estimate and interval, the
// Mann-Whitney diagnostic, and the standard error behind the minimum detectable effect. Internal
// to stats/gate*.cpp; docs/STATISTICS.md explains each choice.
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
  bool runs_decide = false;  // the run-level t test decides; else the pooled Mann-Whitney
  // No independent run-level variance: the rank test decides under the assumption of no drift
  // (one run a side, GateOptions::run_level on). Its power cannot be stated.
  bool drift_blind = false;
  double min_p = 0.0;  // smallest p the deciding test can reach (0: the t test, any p)
  // The deciding test's one-sided p-values.
  double p_slower() const { return runs_decide ? *two_level->p_slower : mw_slower; }
  double p_faster() const { return runs_decide ? *two_level->p_faster : mw_faster; }
};

// Fills ratio, interval, the two-level fields, the deciding test and the notes of a cell present
// on both sides. `run_level` false: the pooled Mann-Whitney decides every cell (GateOptions).
TestedCell test_cell(CellComparison& c, size_t index, const CellPool& base, const CellPool& head,
                     bool run_level);

// The cell's minimum detectable effect at one-sided level `alpha`, from the deciding test. Empty
// when the rank test can never reach `alpha` with these repetitions, and when the cell is
// drift-blind: any figure from the repetitions alone would be smaller than what the gate can see.
std::optional<double> cell_mde(const TestedCell& t, double alpha, double power);

// "%.3g" of v, for notes and warnings.
std::string fmt_g(double v);

}  // namespace pg::stats
