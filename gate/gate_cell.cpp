#include "gate/gate_cell.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>

#include "stats/hodges_lehmann.h"
#include "stats/mann_whitney.h"
#include "stats/student_t.h"

namespace pg::gate {
namespace {

constexpr double kIntervalLevel = 0.95;

// The pooled Mann-Whitney decides: its estimate is the Hodges-Lehmann ratio (the shift the rank
// test is about), its interval Bauer's, or the range of pairwise ratios below 95%'s sizes.
void rank_estimate(CellComparison& c, const CellPool& base, const CellPool& head) {
  const stats::ShiftEstimate hl =
      stats::hodges_lehmann_ratio(base.values, head.values, kIntervalLevel);
  c.ratio = hl.estimate;
  c.ci_low = hl.low;
  c.ci_high = hl.high;
  c.ci_method = "hodges-lehmann";
  if (hl.low && hl.high) return;
  // Too few repetitions for any 95% distribution-free interval (e.g. 3 vs 3): give the range of
  // all pairwise ratios, the widest such interval, and say what confidence it has.
  const auto [bmin, bmax] = std::minmax_element(base.values.begin(), base.values.end());
  const auto [hmin, hmax] = std::minmax_element(head.values.begin(), head.values.end());
  c.ci_low = *hmin / *bmax;
  c.ci_high = *hmax / *bmin;
  c.ci_method = "pairwise-range";
  const double confidence = 1.0 - 2.0 * stats::mwu_min_p(c.base_n, c.head_n);
  c.note = "interval is the range of pairwise ratios, " + stats::fmt_g(100.0 * confidence) +
           "% confidence: too few repetitions for 95%";
}

}  // namespace

TestedCell test_cell(CellComparison& c, size_t index, const CellPool& base, const CellPool& head,
                     bool run_level, const stats::RunVariance* history) {
  TestedCell t;
  t.cell = index;
  t.two_level =
      stats::two_level(base.by_run, head.by_run, kIntervalLevel, run_level ? history : nullptr);
  if (t.two_level) {
    const stats::TwoLevelEstimate& e = *t.two_level;
    c.runs_ratio = e.ratio;
    c.rep_sd = e.rep_sd;
    if (e.has_runs_test()) {
      c.runs_df = e.df;
      c.run_sd = e.run_sd;
      c.variance_source = e.variance;
      if (e.variance != "runs") {
        c.history_df = e.history_df;
        c.history_runs = e.history_runs;
        c.history_commits = e.history_commits;
      }
    }
    if (!e.variance_note.empty()) c.note = (c.note.empty() ? "" : c.note + "; ") + e.variance_note;
  }
  t.runs_decide = run_level && t.two_level && t.two_level->has_runs_test();
  t.drift_blind = run_level && !t.runs_decide;
  if (!t.runs_decide) c.variance_source.clear();
  t.mw_slower = stats::mann_whitney(head.values, base.values, stats::Alternative::greater).p;
  t.mw_faster = stats::mann_whitney(head.values, base.values, stats::Alternative::less).p;
  if (t.runs_decide) {
    // The t test on run means decides: one estimate, the ratio of geometric means of run means,
    // with its interval. Its p can be any value in (0, 1], so no number of repetitions is blind.
    c.ratio = t.two_level->ratio;
    c.ci_low = t.two_level->ci_low;
    c.ci_high = t.two_level->ci_high;
    c.ci_method = "runs-t";
    c.test = "runs-t";
    t.min_p = 0.0;
  } else {
    rank_estimate(c, base, head);
    c.test = "mann-whitney";
    t.min_p = stats::mwu_min_p(c.head_n, c.base_n);
  }
  return t;
}

std::optional<double> TestedCell::upper_bound(double level) const {
  if (paired) return paired->upper_bound(level);
  if (!runs_decide) return std::nullopt;
  return std::exp(two_level->log_ratio +
                  stats::student_t_quantile(level, two_level->df) * two_level->se);
}

void apply_paired(CellComparison& c, TestedCell& t, const std::vector<stats::AbBlocks>& runs) {
  int unpaired = 0, unusable = 0;
  for (const stats::AbBlocks& b : runs) {
    unpaired += b.pairs_unpaired;
    unusable += b.pairs_unusable;
  }
  t.paired = stats::paired_test(runs, kIntervalLevel);
  t.runs_decide = true;
  t.drift_blind = false;
  c.variance_source.clear();  // the paired test's variance is its blocks'
  c.test = "paired-t";
  c.ci_method = "paired-t";
  std::vector<std::string> notes;
  if (unpaired > 0)
    notes.push_back(std::to_string(unpaired) +
                    " pairs of an incomplete last ABBA block left out (a lone pair keeps its "
                    "position effect)");
  if (unusable > 0)
    notes.push_back(std::to_string(unusable) +
                    " pairs left out with their block (no usable value)");
  if (!t.paired || !t.paired->has_test()) {
    // A single block (or none): no variance, no test. The cell can never be significant.
    t.min_p = 1.0;
    c.ci_low.reset();
    c.ci_high.reset();
    c.ratio = t.paired ? std::optional<double>(t.paired->ratio) : std::nullopt;
    notes.push_back("fewer than 2 complete ABBA blocks: no paired test");
  } else {
    const stats::PairedEstimate& e = *t.paired;
    t.min_p = 0.0;
    c.ratio = e.ratio;
    c.ci_low = e.ci_low;
    c.ci_high = e.ci_high;
    c.paired_df = e.df;
    c.block_sd = e.block_sd;
    c.ab_run_sd = e.ab_run_sd;
  }
  if (t.paired) {
    c.ab_runs = t.paired->ab_runs;
    c.blocks = t.paired->blocks;
    c.pairs = t.paired->pairs;
    c.paired_unit = t.paired->unit;
  }
  for (const std::string& n : notes) c.note = (c.note.empty() ? "" : c.note + "; ") + n;
}

std::optional<double> cell_mde(const TestedCell& t, double alpha, double power) {
  if (t.paired) {
    if (t.min_p > alpha) return std::nullopt;
    return stats::minimum_detectable_effect(t.paired->se, t.paired->df, alpha, power);
  }
  if (t.min_p > alpha || !t.two_level || t.drift_blind) return std::nullopt;
  const stats::TwoLevelEstimate& e = *t.two_level;
  if (t.runs_decide) return stats::minimum_detectable_effect(e.se, e.df, alpha, power);
  // Repetitions only, without drift (the earlier rule of perfgate-sim): the rank test's efficiency
  // against the t test is 3/pi under normal noise, so it needs pi/3 times the samples, a standard
  // error sqrt(pi/3) times larger.
  return stats::minimum_detectable_effect(e.se * std::sqrt(std::numbers::pi / 3.0), 0.0, alpha,
                                          power);
}

}  // namespace pg::gate
