// A series' history as a use case: its stored runs grouped into one point per commit, in history
// order, and the change points over the points' medians. `perfgate changes` and the web's trend
// page and overview (web/views/series_view.h) both build it here, so they find the same changes.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "stats/changepoint.h"
#include "store/store.h"

namespace pg::app {

struct HistoryOptions {
  // The values one stored cell contributes to its commit's point (per repetition for the chart,
  // the run's stored metric for `perfgate changes`); non-finite values are dropped, and a cell
  // with none is skipped.
  std::function<std::vector<double>(const store::SeriesSample&)> values;
  std::string branch;  // only commits with a run on this branch (their other runs pool in); "": all
  bool runs_without_commit = true;  // a run made outside a repository is a point of its own
  stats::ChangePointOptions change_points;
  // Finds the change points of the points' medians; detect_change_points when empty. A caller
  // that keeps earlier answers (perfgate serve's view cache) returns a kept one for the same
  // medians and options: the answer depends on nothing else.
  std::function<std::vector<stats::ChangePoint>(const std::vector<double>& medians,
                                                const stats::ChangePointOptions& options)>
      detect;
};

struct HistoryPoint {
  std::string commit;  // full SHA; empty for a run made outside a git repository
  std::string subject;
  std::string time;  // commit time, or the run's start when there is no commit
  std::vector<int64_t> run_ids;
  std::vector<size_t> samples;  // indices into History::samples
  std::vector<double> values;   // every value pooled, sorted
  double median = 0;
};

struct History {
  std::vector<store::SeriesSample> samples;  // as stored, in history order
  std::vector<HistoryPoint> points;
  std::vector<stats::ChangePoint> changes;  // over the points' medians; index = first point after
  size_t skipped_cells = 0;                 // not ok, or without a value: stored, not drawn
};

// The values a stored cell gives its commit's point for `metric`: one per repetition for the
// metrics measured per repetition (tpot_ms, prefill_ms, decode_tok_s = B x 1000 / tpot_ms), so
// a point's median is the median of every repetition of the commit; the cell's stored metric
// where it is measured once per cell (peak memory) or the repetitions are unknown. The trend page
// and `perfgate changes` take the same values, so a change point has the same size in both
// (docs/WEB.md, "The size of a change").
std::vector<double> point_values(const store::SeriesSample& s, const CellKey& key,
                                 const std::string& metric);

// The branch a history follows unless told otherwise: `configured` when not empty, else "main",
// else "master", else the branch with the most runs ("detached" never); empty when no run names a
// branch (then nothing is filtered). `runs`: Store::branch_run_counts().
std::string main_branch(const std::map<std::string, int64_t>& runs,
                        const std::string& configured = "");

// From samples already read (series_samples' order: commit time, then run id).
History history(std::vector<store::SeriesSample> samples, const HistoryOptions& opt);
// Reads the series' samples (without raw timings) from the store.
History history(store::Store& store, int64_t series_id, const HistoryOptions& opt);

}  // namespace pg::app
