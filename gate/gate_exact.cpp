// The gate's exact metrics (docs/STATISTICS.md "More than one metric"): peak memory is
// deterministic for the same code, shapes and allocator, so it is compared as a number, with a
// relative and an absolute tolerance, and no test.
#include <algorithm>
#include <cmath>

#include "gate/gate_steps.h"

namespace pg::gate {

void compare_exact(CellComparison& c, const CellPool& base, const CellPool& head, double relative,
                   double absolute) {
  const auto [bmin, bmax] = std::minmax_element(base.values.begin(), base.values.end());
  const auto [hmin, hmax] = std::minmax_element(head.values.begin(), head.values.end());
  const double b = *bmax, h = *hmax;  // the peak a side needs
  c.base_median = b;
  c.head_median = h;
  if (b > 0.0)
    c.ratio = h / b;
  else if (h == 0.0)
    c.ratio = 1.0;
  c.test = "exact";
  c.ci_method = "exact";
  const double diff = h - b;
  if (diff > absolute && h > b * (1.0 + relative))
    c.verdict = CellVerdict::regression;
  else if (-diff > absolute && h < b / (1.0 + relative))
    c.verdict = CellVerdict::improvement;
  else
    c.verdict = CellVerdict::unchanged;
  // Deterministic is an assumption: say so when one side's runs disagree beyond the tolerance.
  for (const auto& [side, lo, hi, n] : {std::tuple{"base", *bmin, *bmax, base.values.size()},
                                        std::tuple{"head", *hmin, *hmax, head.values.size()}}) {
    if (hi - lo <= absolute && hi <= lo * (1.0 + relative)) continue;
    c.note = (c.note.empty() ? "" : c.note + "; ") + c.metric + " varies across the " +
             std::to_string(n) + " " + side + " runs (" + stats::fmt_g(lo) + " to " +
             stats::fmt_g(hi) + "); the largest is compared";
  }
}

}  // namespace pg::gate
