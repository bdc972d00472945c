// One cell of the merge gate, before the corrections across cells: the deciding test (the t test
// on run means, or the pooled Mann-Whitney without runs enough), its estimate and interval, the
// Mann-Whitney diagnostic, and the standard error behind the minimum detectable effect. Internal
// to gate/gate*.cpp; docs/STATISTICS.md explains each choice.
#pragma once
#include <optional>

#include "gate/gate.h"
#include "gate/gate_inputs.h"
#include "stats/format.h"
#include "stats/paired.h"
#include "stats/two_level.h"

namespace pg::gate {

struct TestedCell {
  size_t cell = 0;  // index into GateResult::cells
  double mw_slower = 1.0, mw_faster = 1.0;
  std::optional<stats::TwoLevelEstimate> two_level;  // its p-values exist when has_runs_test()
  // A/B runs: the paired t test decides (runs_decide is then true too: a run-level variance
  // exists); without a test (a single block) its p is 1 and the cell can never be significant.
  std::optional<stats::PairedEstimate> paired;
  bool runs_decide = false;  // a t test decides (on run means, or paired); else Mann-Whitney
  // No independent run-level variance: the rank test decides under the assumption of no drift
  // (one run a side, GateOptions::run_level on). Its power cannot be stated.
  bool drift_blind = false;
  double min_p = 0.0;  // smallest p the deciding test can reach (0: the t test, any p)
  // The deciding test's one-sided p-values.
  double p_slower() const {
    if (paired) return paired->p_slower.value_or(1.0);
    return runs_decide ? *two_level->p_slower : mw_slower;
  }
  double p_faster() const {
    if (paired) return paired->p_faster.value_or(1.0);
    return runs_decide ? *two_level->p_faster : mw_faster;
  }
  // The one-sided upper bound for the ratio at `level` of the deciding t test; empty without one.
  std::optional<double> upper_bound(double level) const;
};

// Fills ratio, interval, the two-level fields, the deciding test and the notes of a cell present
// on both sides. `run_level` false: the pooled Mann-Whitney decides every cell (GateOptions).
// `history`: the cell's run variance from trusted history, if any (stats/run_history.h).
TestedCell test_cell(CellComparison& c, size_t index, const CellPool& base, const CellPool& head,
                     bool run_level, const stats::RunVariance* history = nullptr);

// A/B runs: the paired t test on the cell's blocks decides instead (the unpaired fields stay, as
// diagnostics). Fills ratio, interval, the paired fields and the notes of what it left out.
void apply_paired(CellComparison& c, TestedCell& t, const std::vector<stats::AbBlocks>& runs);

// The cell's minimum detectable effect at one-sided level `alpha`, from the deciding test. Empty
// when the rank test can never reach `alpha` with these repetitions, and when the cell is
// drift-blind: any figure from the repetitions alone would be smaller than what the gate can see.
std::optional<double> cell_mde(const TestedCell& t, double alpha, double power);

}  // namespace pg::gate
