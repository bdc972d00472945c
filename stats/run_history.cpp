#include "stats/run_history.h"

#include <cmath>

#include "common/descriptive.h"

namespace pg::stats {

std::optional<RunVariance> history_run_variance(const std::vector<RunGroups>& commits, int reps) {
  RunVariance v;
  v.reps = reps;
  double between_ss = 0.0, within_ss = 0.0;
  for (const RunGroups& runs : commits) {
    std::vector<double> means;
    double ss = 0.0;
    for (const auto& values : runs) {
      if (reps < 1 || static_cast<int>(values.size()) != reps) continue;
      bool usable = true;
      double mean = 0.0;
      for (double x : values) {
        usable = usable && x > 0.0 && std::isfinite(x);
        if (usable) mean += std::log(x);
      }
      if (!usable) continue;
      mean /= reps;
      for (double x : values) ss += (std::log(x) - mean) * (std::log(x) - mean);
      means.push_back(mean);
    }
    if (means.size() < 2) continue;
    between_ss += sum_sq_dev(means, mean_of(means));
    within_ss += ss;
    v.df += static_cast<double>(means.size()) - 1.0;
    v.rep_df += static_cast<double>(means.size()) * (reps - 1);
    v.runs += static_cast<int>(means.size());
    ++v.commits;
  }
  if (v.df < 1.0) return std::nullopt;
  v.run_mean_var = between_ss / v.df;
  v.rep_var = v.rep_df > 0.0 ? within_ss / v.rep_df : 0.0;
  return v;
}

}  // namespace pg::stats
