// Accepted slowdowns (docs/STATISTICS.md "Accepted slowdowns"): a cell whose slowdown someone
// accepted is tested against the base times the accepted ratio. The tests are ratio tests (t on
// log run means, paired t on block log ratios, Mann-Whitney on repetitions, the exact comparison
// of peaks), so scaling the base is exactly "is the head slower than what was accepted?", with the
// same correction, min effect and power; afterwards the cell's figures are put back to head
// against base, as measured, and it is labelled.
#include <cmath>

#include "gate/gate_steps.h"

namespace pg::gate {

const double* accepted_ratio(const GateOptions& opt, const CellKey& key,
                             const std::string& metric) {
  auto it = opt.accepted_ratio.find({key, metric});
  return it == opt.accepted_ratio.end() ? nullptr : &it->second;
}

void scale_base_for_acceptance(double ratio, CellPool& base) {
  for (double& v : base.values) v *= ratio;
  for (auto& run : base.by_run)
    for (double& v : run) v *= ratio;
}

void shift_blocks_for_acceptance(double ratio, std::vector<stats::AbBlocks>& runs) {
  const double shift = std::log(ratio);
  for (stats::AbBlocks& b : runs)
    for (double& lr : b.log_ratios) lr -= shift;
}

void label_accepted(const GateOptions& opt, GateResult& r) {
  for (CellComparison& c : r.cells) {
    const double* a = accepted_ratio(opt, c.key, c.metric);
    if (!a || c.test.empty()) continue;  // not tested: no baseline, incomparable
    c.accepted_ratio = *a;
    for (std::optional<double>* f :
         {&c.ratio, &c.ci_low, &c.ci_high, &c.runs_ratio, &c.upper_bound})
      if (*f) **f *= *a;
    if (c.base_median) *c.base_median /= *a;
    const std::string accepted = stats::fmt_g(100.0 * (*a - 1.0)) + "%";
    if (c.verdict == CellVerdict::regression) {
      c.note = (c.note.empty() ? "" : c.note + "; ") + "slower than the accepted " +
               (*a >= 1.0 ? "+" : "") + accepted;
      continue;
    }
    // Slower than the base by the min effect, within what was accepted: accepted. A head that is
    // no longer slower is simply unchanged (the acceptance was not needed).
    // The verdict says it; the report's notes name the acceptance.
    const bool slower = c.ratio && *c.ratio >= 1.0 + opt.min_effect_for(c.metric);
    c.verdict = slower ? CellVerdict::accepted : CellVerdict::unchanged;
  }
}

}  // namespace pg::gate
