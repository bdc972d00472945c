#include "app/history.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "common/descriptive.h"
#include "core/metrics.h"

namespace pg::app {

std::vector<double> point_values(const store::SeriesSample& s, const CellKey& key,
                                 const std::string& metric) {
  std::vector<double> out;
  if (metric == "prefill_ms") {
    out = s.rep_prefill_ms;
  } else if (metric == "tpot_ms") {
    out = s.rep_tpot_ms;
  } else if (const MetricDef* d = find_metric(metric);
             d && d->per_repetition == PerRepetition::decode_tok_s) {
    // core/metrics.h's definition, over each repetition's decode time: tpot x its decode steps.
    const int steps = key.gen_tokens > 1 ? key.gen_tokens - 1 : 1;
    for (double t : s.rep_tpot_ms) {
      if (!(t > 0)) continue;
      if (auto v = repetition_value(d->per_repetition, key, {0, t * steps, steps}))
        out.push_back(*v);
    }
  }
  if (out.empty()) {
    auto it = s.metrics.find(metric);
    if (it != s.metrics.end()) out.push_back(it->second);
  }
  return out;  // history() drops non-finite values
}

std::string main_branch(const std::map<std::string, int64_t>& runs, const std::string& configured) {
  if (!configured.empty()) return configured;
  for (const char* name : {"main", "master"})
    if (runs.count(name)) return name;
  std::string best;
  int64_t most = 0;
  for (const auto& [name, n] : runs)
    if (name != "detached" && n > most) best = name, most = n;
  return best;
}

History history(std::vector<store::SeriesSample> samples, const HistoryOptions& opt) {
  History h;
  h.samples = std::move(samples);
  // Branches are a filter, never mixed in: a commit is drawn when a run of it was made on the
  // chosen branch (its other runs, e.g. a detached re-run of the same commit, pool with it).
  std::set<std::string> on_branch;
  if (!opt.branch.empty())
    for (const store::SeriesSample& s : h.samples)
      if (s.branch == opt.branch && !s.commit.empty()) on_branch.insert(s.commit);

  std::map<std::string, size_t> by_commit;
  for (size_t i = 0; i < h.samples.size(); ++i) {
    const store::SeriesSample& s = h.samples[i];
    if (!opt.branch.empty() && !on_branch.count(s.commit)) continue;
    if (s.commit.empty() && !opt.runs_without_commit) continue;
    if (s.status != CellStatus::ok) {
      ++h.skipped_cells;
      continue;
    }
    std::vector<double> vals = opt.values(s);
    std::erase_if(vals, [](double v) { return !std::isfinite(v); });
    if (vals.empty()) {
      ++h.skipped_cells;
      continue;
    }
    auto it = s.commit.empty() ? by_commit.end() : by_commit.find(s.commit);
    if (it == by_commit.end()) {
      HistoryPoint p;
      p.commit = s.commit;
      p.subject = s.subject;
      p.time = s.commit_time.empty() ? s.started_at : s.commit_time;
      if (!s.commit.empty()) it = by_commit.emplace(s.commit, h.points.size()).first;
      h.points.push_back(std::move(p));
    }
    HistoryPoint& p = it == by_commit.end() ? h.points.back() : h.points[it->second];
    p.run_ids.push_back(s.run_id);
    p.samples.push_back(i);
    p.values.insert(p.values.end(), vals.begin(), vals.end());
  }

  std::vector<double> medians;
  for (HistoryPoint& p : h.points) {
    std::sort(p.values.begin(), p.values.end());
    p.median = sorted_quantile(p.values, 0.5);
    medians.push_back(p.median);
  }
  h.changes = opt.detect ? opt.detect(medians, opt.change_points)
                         : stats::detect_change_points(medians, opt.change_points);
  std::erase_if(h.changes,
                [&](const stats::ChangePoint& cp) { return cp.index >= h.points.size(); });
  return h;
}

History history(store::Store& store, int64_t series_id, const HistoryOptions& opt) {
  return history(store.series_samples(series_id, /*with_samples=*/false), opt);
}

}  // namespace pg::app
