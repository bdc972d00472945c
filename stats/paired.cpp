#include "stats/paired.h"

#include <algorithm>
#include <cmath>

#include "common/descriptive.h"
#include "stats/student_t.h"

namespace pg::stats {
namespace {

bool usable(double v) { return std::isfinite(v) && v > 0.0; }

}  // namespace

AbBlocks abba_blocks(const AbPairs& p) {
  AbBlocks b;
  const size_t n = std::min({p.base.size(), p.head.size(), p.head_position.size()});
  b.pairs_unpaired = static_cast<int>(n % 2);
  for (size_t j = 0; j + 1 < n; j += 2) {
    if (p.head_position[j] == p.head_position[j + 1]) ++b.unbalanced;
    if (!usable(p.base[j]) || !usable(p.head[j]) || !usable(p.base[j + 1]) ||
        !usable(p.head[j + 1])) {
      b.pairs_unusable += 2;
      continue;
    }
    b.log_ratios.push_back(
        0.5 * (std::log(p.head[j] / p.base[j]) + std::log(p.head[j + 1] / p.base[j + 1])));
    b.pairs_used += 2;
  }
  return b;
}

std::optional<double> PairedEstimate::upper_bound(double level) const {
  if (!has_test()) return std::nullopt;
  return std::exp(log_ratio + student_t_quantile(level, df) * se);
}

std::optional<PairedEstimate> paired_test(const std::vector<AbBlocks>& runs, double level) {
  std::vector<double> run_means, all;
  double within_ss = 0.0, inv_blocks = 0.0;
  int within_df = 0;
  PairedEstimate e;
  for (const AbBlocks& r : runs) {
    if (r.log_ratios.empty()) continue;
    const double m = mean_of(r.log_ratios);
    run_means.push_back(m);
    within_ss += sum_sq_dev(r.log_ratios, m);
    within_df += static_cast<int>(r.log_ratios.size()) - 1;
    inv_blocks += 1.0 / static_cast<double>(r.log_ratios.size());
    all.insert(all.end(), r.log_ratios.begin(), r.log_ratios.end());
    e.pairs += r.pairs_used;
  }
  if (run_means.empty()) return std::nullopt;
  e.ab_runs = static_cast<int>(run_means.size());
  e.blocks = static_cast<int>(all.size());
  const double msw = within_df > 0 ? within_ss / within_df : 0.0;  // block variance within a run
  e.block_sd = std::sqrt(msw);
  double var_unit = 0.0;  // variance of one unit, estimated
  double units = 0.0;
  if (e.ab_runs == 1) {
    e.unit = "block";
    e.log_ratio = mean_of(all);
    e.df = e.blocks - 1;
    var_unit = msw;
    units = e.blocks;
  } else {
    e.unit = "ab-run";
    e.log_ratio = mean_of(run_means);
    e.df = e.ab_runs - 1;
    const double s2 = sum_sq_dev(run_means, e.log_ratio) / e.df;
    const double within_part = msw * inv_blocks / e.ab_runs;  // mean of msw / b_j
    e.ab_run_sd = std::sqrt(std::max(0.0, s2 - within_part));
    var_unit = s2;
    units = e.ab_runs;
  }
  e.ratio = std::exp(e.log_ratio);
  if (!e.has_test()) {
    e.df = 0.0;
    return e;
  }
  e.se = std::sqrt(var_unit / units);
  if (e.se > 0.0) {
    const double t = e.log_ratio / e.se;
    e.p_slower = student_t_sf(t, e.df);
    e.p_faster = student_t_sf(-t, e.df);
  } else {  // every unit equal: no evidence either way unless they differ from 0
    e.p_slower = e.log_ratio > 0 ? 0.0 : 1.0;
    e.p_faster = e.log_ratio < 0 ? 0.0 : 1.0;
  }
  const double q = student_t_quantile(0.5 + level / 2.0, e.df);
  e.ci_low = std::exp(e.log_ratio - q * e.se);
  e.ci_high = std::exp(e.log_ratio + q * e.se);
  return e;
}

}  // namespace pg::stats
