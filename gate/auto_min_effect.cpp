#include "gate/auto_min_effect.h"

#include <algorithm>
#include <cmath>

#include "core/cell_label.h"
#include "gate/gate_cell.h"

namespace pg::gate {

AutoMinEffect auto_min_effect(const std::map<CellKey, std::vector<HistoryRun>>& history,
                              double floor, double fallback) {
  AutoMinEffect out;
  std::string worst_cell;
  int cells_used = 0;
  for (const auto& [key, runs] : history) {
    std::map<std::string, std::vector<double>> by_commit;  // commit -> run means of log tpot
    for (const HistoryRun& run : runs) {
      double sum = 0.0;
      int n = 0;
      for (double t : run.tpot) {
        if (!(t > 0.0) || !std::isfinite(t)) continue;
        sum += std::log(t);
        ++n;
      }
      if (n > 0) by_commit[run.commit].push_back(sum / n);
    }
    double ss = 0.0;
    int df = 0;
    for (const auto& [commit, means] : by_commit) {
      if (means.size() < 2) continue;
      double m = 0.0;
      for (double v : means) m += v;
      m /= static_cast<double>(means.size());
      for (double v : means) ss += (v - m) * (v - m);
      df += static_cast<int>(means.size()) - 1;
    }
    if (df == 0) continue;
    ++cells_used;
    const double sd = std::sqrt(ss / df);
    if (sd >= out.run_sd) {
      out.run_sd = sd;
      out.df = df;
      worst_cell = cell_label(key);
    }
  }
  if (cells_used == 0) {
    out.value = fallback;
    out.reason =
        "auto: no commit in the store's history has 2 or more runs of these cells, so "
        "the run-to-run spread is unknown; using the fixed " +
        stats::fmt_g(100.0 * fallback) + "%";
    return out;
  }
  const double spread = std::expm1(kAutoMinEffectSpreads * out.run_sd);
  out.value = std::clamp(spread, floor, std::max(floor, kAutoMinEffectCap));
  out.reason =
      "auto: " + stats::fmt_g(kAutoMinEffectSpreads) + " x the run-to-run sd " +
      stats::fmt_g(100.0 * out.run_sd) + "% measured in the history of " + worst_cell +
      " (the noisiest of " + std::to_string(cells_used) + " cells, " + std::to_string(out.df) +
      " degrees of freedom) = " + stats::fmt_g(100.0 * spread) + "%, floor " +
      stats::fmt_g(100.0 * floor) + "%" +
      (spread > kAutoMinEffectCap ? ", capped at " + stats::fmt_g(100.0 * kAutoMinEffectCap) + "%"
                                  : "");
  return out;
}

}  // namespace pg::gate
