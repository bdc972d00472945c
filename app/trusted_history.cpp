#include "app/trusted_history.h"

#include <algorithm>
#include <map>
#include <set>

#include "gate/gate.h"
#include "gate/gate_inputs.h"

namespace pg::app {
namespace {

// Runs of `history` that may stand beside the head's: finished, clean, not one side of an A/B
// run, not of a judged commit, on an environment the gate would compare with the head's.
std::set<int64_t> usable_runs(store::Store& history, const Run& head,
                              const std::vector<std::string>& exclude) {
  Run head_env;
  head_env.env = head.env;
  const std::vector<Run> head_side{head_env};
  std::set<int64_t> ids;
  for (const Run& r : history.list_runs()) {
    if (r.finished_at.empty() || r.git.dirty || r.ab || !r.git.commit) continue;
    if (std::find(exclude.begin(), exclude.end(), *r.git.commit) != exclude.end()) continue;
    Run env_only;
    env_only.env = r.env;
    if (gate::environment_difference({env_only}, head_side).empty()) ids.insert(r.id);
  }
  return ids;
}

}  // namespace

stats::TrustedHistory trusted_history(store::Store& history, const std::vector<Run>& head_runs,
                                      const std::vector<std::string>& metrics,
                                      const std::vector<std::string>& exclude) {
  stats::TrustedHistory out;
  if (head_runs.empty()) return out;
  const std::set<int64_t> usable = usable_runs(history, head_runs.front(), exclude);
  if (usable.empty()) return out;
  std::map<CellKey, std::vector<store::SeriesSample>> samples;  // per cell key, read once
  for (const std::string& metric : metrics) {
    if (gate::is_exact_gate_metric(metric)) continue;
    for (const auto& [key, pool] : gate::pool_cells(head_runs, metric)) {
      if (pool.by_run.empty()) continue;
      if (!samples.contains(key)) {
        auto series = history.find_series(key, head_runs.front().env);
        samples[key] = series ? history.series_samples(*series, /*with_samples=*/false)
                              : std::vector<store::SeriesSample>{};
      }
      std::map<std::string, stats::RunGroups> by_commit;
      for (const store::SeriesSample& s : samples[key]) {
        if (s.status != CellStatus::ok || !usable.contains(s.run_id)) continue;
        by_commit[s.commit].push_back(metric == "prefill_ms" ? s.rep_prefill_ms : s.rep_tpot_ms);
      }
      std::vector<stats::RunGroups> commits;
      for (auto& [sha, runs] : by_commit) commits.push_back(std::move(runs));
      const int reps = static_cast<int>(pool.by_run.front().size());
      if (auto v = stats::history_run_variance(commits, reps)) out[{key, metric}] = *v;
    }
  }
  return out;
}

}  // namespace pg::app
