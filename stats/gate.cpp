// The merge gate's decision rule; docs/STATISTICS.md explains each choice.
#include "stats/gate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "common/errors.h"
#include "stats/descriptive.h"
#include "stats/gate_inputs.h"
#include "stats/hodges_lehmann.h"
#include "stats/mann_whitney.h"
#include "stats/multiple.h"

namespace pg {

std::string to_string(CellVerdict v) {
  switch (v) {
    case CellVerdict::regression:
      return "regression";
    case CellVerdict::improvement:
      return "improvement";
    case CellVerdict::unchanged:
      return "unchanged";
    case CellVerdict::no_baseline:
      return "no-baseline";
    case CellVerdict::incomparable:
      return "incomparable";
  }
  return "incomparable";
}

std::string to_string(GateVerdict v) {
  switch (v) {
    case GateVerdict::pass:
      return "pass";
    case GateVerdict::regression:
      return "regression";
    case GateVerdict::inconclusive:
      return "inconclusive";
  }
  return "inconclusive";
}

int gate_exit_code(const GateResult& r) {
  switch (r.verdict) {
    case GateVerdict::pass:
      return kExitOk;
    case GateVerdict::regression:
      return kExitRegression;
    case GateVerdict::inconclusive:
      return kExitInconclusive;
  }
  return kExitInconclusive;
}

namespace {

constexpr double kIntervalLevel = 0.95;

void validate(const GateOptions& o) {
  if (!(o.alpha > 0.0 && o.alpha < 1.0))
    throw UsageError("--alpha must be in (0, 1), got " + std::to_string(o.alpha));
  if (!(o.min_effect >= 0.0 && std::isfinite(o.min_effect)))
    throw UsageError("--min-effect must be >= 0, got " + std::to_string(o.min_effect));
  if (o.bootstrap_iters < 0) throw UsageError("bootstrap iterations must be >= 0");
  stats::correction_from_string(o.correction);  // throws naming --correction
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

std::string fmt_g(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// One tested cell's raw one-sided p-values, before correction.
struct Tested {
  size_t cell;  // index into GateResult::cells
  double p_slower, p_faster;
};

// Fills medians, ratio, interval and both one-sided p-values of a cell present on both sides.
Tested test_cell(CellComparison& c, size_t index, const stats::CellPool& base,
                 const stats::CellPool& head) {
  c.ratio = *c.head_median / *c.base_median;
  const stats::ShiftEstimate hl = stats::hodges_lehmann_ratio(base.tpot, head.tpot, kIntervalLevel);
  c.ci_low = hl.low;
  c.ci_high = hl.high;
  if (!hl.low || !hl.high) {
    // Too few repetitions for any 95% distribution-free interval (e.g. 3 vs 3, 4 vs 3): give the
    // range of all pairwise ratios, the widest such interval, and say what confidence it has.
    const auto [bmin, bmax] = std::minmax_element(base.tpot.begin(), base.tpot.end());
    const auto [hmin, hmax] = std::minmax_element(head.tpot.begin(), head.tpot.end());
    c.ci_low = *hmin / *bmax;
    c.ci_high = *hmax / *bmin;
    const double confidence = 1.0 - 2.0 * stats::mwu_min_p(c.base_n, c.head_n);
    c.note = "interval is the range of pairwise ratios, " + fmt_g(100.0 * confidence) +
             "% confidence: too few repetitions for 95%";
  }
  const auto slower = stats::mann_whitney(head.tpot, base.tpot, stats::Alternative::greater);
  const auto faster = stats::mann_whitney(head.tpot, base.tpot, stats::Alternative::less);
  return Tested{index, slower.p, faster.p};
}

// The "lone regression" rule: can a change in one cell alone, with every other cell unchanged,
// ever be significant? Its best adjusted p is m * (smallest possible p) for Holm and for BH alike.
int reps_needed(double alpha, size_t m) {
  for (int n = 2; n <= 1000; ++n)
    if (static_cast<double>(m) * stats::mwu_min_p(n, n) <= alpha) return n;
  return 1000;
}

}  // namespace

GateResult evaluate_gate(const std::string& base_sha, const std::vector<Run>& base_runs,
                         const std::string& head_sha, const std::vector<Run>& head_runs,
                         const GateOptions& opt) {
  validate(opt);
  const stats::Correction correction = stats::correction_from_string(opt.correction);
  GateResult r;
  r.base = base_sha;
  r.head = head_sha;
  r.options = opt;
  r.base_runs = static_cast<int>(base_runs.size());
  r.head_runs = static_cast<int>(head_runs.size());
  if (!base_runs.empty()) r.base_env = base_runs.front().env;
  if (!head_runs.empty()) r.head_env = head_runs.front().env;

  const std::string env_diff = base_runs.empty() || head_runs.empty()
                                   ? std::string()
                                   : stats::environment_difference(base_runs, head_runs);
  if (!env_diff.empty())
    r.warnings.push_back("environments differ (" + env_diff +
                         "): no cell is compared; benchmark base and head on the same machine");

  const auto base_pools = stats::pool_cells(base_runs);
  const auto head_pools = stats::pool_cells(head_runs);
  std::vector<Tested> tested;
  bool head_failed = false;
  int skipped_both_failed = 0;

  for (const auto& [key, head] : head_pools) {
    auto b = base_pools.find(key);
    const bool base_ok = b != base_pools.end() && !b->second.tpot.empty();
    if (head.tpot.empty() && !base_ok) {
      ++skipped_both_failed;  // e.g. a cell that runs out of memory on both commits
      continue;
    }
    CellComparison c;
    c.key = key;
    c.head_n = static_cast<int>(head.tpot.size());
    c.head_runs = head.runs;
    if (!head.tpot.empty()) c.head_median = stats::median(head.tpot);
    if (base_ok) {
      c.base_n = static_cast<int>(b->second.tpot.size());
      c.base_runs = b->second.runs;
      c.base_median = stats::median(b->second.tpot);
    }
    if (head.tpot.empty()) {
      c.verdict = CellVerdict::incomparable;
      c.note = "head has no ok samples: " + join(head.failed);
      head_failed = true;
    } else if (!base_ok) {
      c.verdict = CellVerdict::no_baseline;
      c.note = b == base_pools.end() ? "no base run has this cell"
                                     : "base has no ok samples: " + join(b->second.failed);
    } else if (!env_diff.empty()) {
      c.verdict = CellVerdict::incomparable;
      c.note = "environments differ: " + env_diff;
    } else {
      tested.push_back(test_cell(c, r.cells.size(), b->second, head));
    }
    r.cells.push_back(std::move(c));
  }

  // Two families, each corrected across the m tested cells: "head slower" decides the gate, so
  // its family-wise error (holm) or FDR (bh) is at alpha by itself; "head faster" is reported
  // with the same control. A cell reports the one-sided p of the direction it moved.
  std::vector<double> p_slower, p_faster;
  for (const Tested& t : tested) {
    p_slower.push_back(t.p_slower);
    p_faster.push_back(t.p_faster);
  }
  const std::vector<double> adj_slower = stats::adjust(p_slower, correction);
  const std::vector<double> adj_faster = stats::adjust(p_faster, correction);
  const double up = 1.0 + opt.min_effect, down = 1.0 / (1.0 + opt.min_effect);
  for (size_t i = 0; i < tested.size(); ++i) {
    CellComparison& c = r.cells[tested[i].cell];
    const bool moved_faster = p_faster[i] < p_slower[i];
    c.p_value = moved_faster ? p_faster[i] : p_slower[i];
    c.p_adjusted = moved_faster ? adj_faster[i] : adj_slower[i];
    if (adj_slower[i] <= opt.alpha && *c.ratio >= up)
      c.verdict = CellVerdict::regression;
    else if (adj_faster[i] <= opt.alpha && *c.ratio <= down)
      c.verdict = CellVerdict::improvement;
    else
      c.verdict = CellVerdict::unchanged;
  }

  // Too few repetitions: a cell whose smallest possible p, times the number of tested cells,
  // exceeds alpha can never be flagged, whatever the data. A pass would then be silent blindness.
  const size_t m = tested.size();
  int blind = 0;
  std::set<std::pair<int, int>> blind_sizes;
  double worst_min_p = 0.0;
  for (const Tested& t : tested) {
    CellComparison& c = r.cells[t.cell];
    const double min_p = stats::mwu_min_p(c.head_n, c.base_n);
    if (static_cast<double>(m) * min_p > opt.alpha) {
      ++blind;
      blind_sizes.insert({c.base_n, c.head_n});
      worst_min_p = std::max(worst_min_p, min_p);
      c.note = (c.note.empty() ? "" : c.note + "; ") +
               "too few repetitions to ever reach significance (smallest possible p " +
               fmt_g(min_p) + ", x " + std::to_string(m) + " cells > alpha " + fmt_g(opt.alpha) +
               ")";
    }
  }
  if (blind > 0) {
    std::string sizes;
    for (const auto& [nb, nh] : blind_sizes)
      sizes += (sizes.empty() ? "" : ", ") + std::to_string(nb) + " vs " + std::to_string(nh);
    r.warnings.push_back(
        "TOO FEW REPETITIONS: " + std::to_string(blind) + " of " + std::to_string(m) +
        " compared cells can never be significant at alpha " + fmt_g(opt.alpha) + " after " +
        stats::to_string(correction) + " correction over " + std::to_string(m) +
        " cells, whatever the data (base vs head repetitions: " + sizes + "; smallest possible p " +
        fmt_g(worst_min_p) + "). Use at least " + std::to_string(reps_needed(opt.alpha, m)) +
        " repetitions per side (Google Benchmark warns below 9). The gate is inconclusive.");
  }

  int no_baseline = 0, incomparable = 0, regressions = 0;
  for (const CellComparison& c : r.cells) {
    no_baseline += c.verdict == CellVerdict::no_baseline;
    incomparable += c.verdict == CellVerdict::incomparable;
    regressions += c.verdict == CellVerdict::regression;
  }
  if (head_failed)
    r.warnings.push_back("some cells ran on base but have no ok samples on head (see notes)");
  if (skipped_both_failed > 0)
    r.warnings.push_back(std::to_string(skipped_both_failed) +
                         " cells have no ok samples on either side and are not listed");
  int base_only = 0;
  for (const auto& [key, pool] : base_pools) base_only += !head_pools.contains(key);
  if (base_only > 0)
    r.warnings.push_back(std::to_string(base_only) +
                         " cells of the base are missing from the head and are not compared");
  if (no_baseline > 0 && !opt.allow_missing_baseline)
    r.warnings.push_back(std::to_string(no_baseline) +
                         " cells have no baseline (pass --allow-missing-baseline to accept)");
  if (r.cells.empty()) r.warnings.push_back("nothing to compare: the head has no cells");

  if (regressions > 0)
    r.verdict = GateVerdict::regression;
  else if (incomparable > 0 || blind > 0 || (no_baseline > 0 && !opt.allow_missing_baseline) ||
           r.cells.empty())
    r.verdict = GateVerdict::inconclusive;
  else
    r.verdict = GateVerdict::pass;
  return r;
}

}  // namespace pg
