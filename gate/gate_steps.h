// The named steps of evaluate_gate (gate/gate.cpp), in the order they run: collect the cells and
// their structural verdicts, decide the tested cells (one family of the deciding tests, corrected
// across every tested cell), then the warnings, the gate's verdict and the sequential advice.
// Internal to stats/; docs/STATISTICS.md gives the rule each step implements.
#pragma once
#include <string>
#include <vector>

#include "gate/gate.h"
#include "gate/gate_cell.h"
#include "gate/gate_paired.h"

namespace pg::gate {

// What the steps hand on to each other beside the GateResult they fill.
struct GateWork {
  double alpha = 0.01;             // per look
  std::vector<TestedCell> tested;  // cells present on both sides and comparable
  std::vector<std::string> left_out;
  bool head_failed = false;
  int skipped_both_failed = 0, base_only = 0;
  int exact_head_missing = 0;  // exact-metric cells the base measured and the head did not
  int blind = 0;               // tested cells whose deciding test can never reach significance
  int without_runs = 0;        // tested cells without a run-level test
  bool structural = false;     // incomparable, missing baseline or nothing to compare
  PairingCheck pairing;        // the runs are A/B runs: the paired test decides
  const stats::TrustedHistory* history = nullptr;  // run variances of trusted history, per cell
};

// Every cell of the head, with no-baseline / incomparable verdicts; the others tested.
void collect_cells(const std::vector<Run>& base_runs, const std::vector<Run>& head_runs,
                   const std::string& env_diff, const GateOptions& opt, GateResult& r, GateWork& w);

// An exact metric's cell: the largest value of each side (one per run), a regression when the
// head exceeds the base by more than `relative` and by more than `absolute` units.
void compare_exact(CellComparison& c, const CellPool& base, const CellPool& head, double relative,
                   double absolute);

// p-values adjusted across the tested cells, each cell's verdict and minimum detectable effect,
// the gate's MDE and whether it is underpowered.
void decide_tested(const GateOptions& opt, GateResult& r, GateWork& w);

// The too-few-repetitions rule of the deciding test, with its notes and warning.
void warn_too_few_repetitions(const GateOptions& opt, GateResult& r, GateWork& w);

// Warnings about power, drift, left-out samples and cells not compared.
void warn_coverage(const GateOptions& opt, GateResult& r, const GateWork& w);

// The design that decided, its counts and the rule in words (GateResult::design, rule).
void describe_rule(GateResult& r);

// The gate's verdict, then the sequential rule's next step.
void decide_gate(const GateOptions& opt, GateResult& r, GateWork& w);

// Accepted slowdowns (gate/gate_accept.cpp): the accepted ratio of a cell's metric (nullptr:
// none); the base scaled by it, or the paired blocks' log ratios shifted by it, before the cell is
// tested; after the decision, the cell's figures put back to head against base and its verdict
// `accepted` where it is slower than the base within what was accepted.
const double* accepted_ratio(const GateOptions& opt, const CellKey& key, const std::string& metric);
void scale_base_for_acceptance(double ratio, CellPool& base);
void shift_blocks_for_acceptance(double ratio, std::vector<stats::AbBlocks>& runs);
void label_accepted(const GateOptions& opt, GateResult& r);

std::string join(const std::vector<std::string>& parts);  // "a, b, c"

}  // namespace pg::gate
