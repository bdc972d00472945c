// The steps of the merge gate after the cells are collected (gate/gate_steps.h): one family of
// the deciding tests corrected across the tested cells, the verdicts, the power, the warnings and
// the sequential advice. docs/STATISTICS.md explains each rule.
#include <algorithm>
#include <cmath>
#include <set>

#include "common/errors.h"
#include "core/cell_label.h"
#include "gate/gate_steps.h"
#include "stats/mann_whitney.h"
#include "stats/multiple.h"
#include "stats/student_t.h"

namespace pg::gate {
namespace {

std::string pct(double v) { return stats::fmt_g(100.0 * v) + "%"; }

// The "lone regression" rule of the rank test: can a change in one cell alone, with every other
// cell unchanged, ever be significant? Its best adjusted p is m * (smallest possible p) for Holm
// and for BH alike.
int reps_needed(double alpha, size_t m) {
  for (int n = 2; n <= 1000; ++n)
    if (static_cast<double>(m) * stats::mwu_min_p(n, n) <= alpha) return n;
  return 1000;
}

// Per metric: its cells, its min effect, and for a tested metric its power (the largest and the
// smallest cell MDE, empty when a cell has none). The gate's MDE is the first tested metric's.
void summarize_metrics(const GateOptions& opt, GateResult& r) {
  bool primary_set = false;
  for (const std::string& metric : opt.metrics) {
    MetricSummary sum;
    sum.metric = metric;
    sum.exact = is_exact_gate_metric(metric);
    sum.min_effect = opt.min_effect_for(metric);
    std::vector<double> mdes;
    bool blind = false;
    for (const CellComparison& c : r.cells) {
      if (c.metric != metric || c.test.empty()) continue;
      ++sum.cells;
      if (sum.exact) continue;
      if (c.mde)
        mdes.push_back(*c.mde);
      else
        blind = true;
    }
    if (!sum.exact && sum.cells > 0) {
      if (!blind) {
        sum.mde = *std::max_element(mdes.begin(), mdes.end());
        sum.mde_all_cells = *std::min_element(mdes.begin(), mdes.end());
      }
      sum.underpowered = !sum.mde || *sum.mde > sum.min_effect;
      r.underpowered = r.underpowered || sum.underpowered;
      if (!primary_set) {
        r.mde = sum.mde;
        r.mde_all_cells = sum.mde_all_cells;
        primary_set = true;
      }
    }
    r.metrics.push_back(sum);
  }
}

}  // namespace

void decide_tested(const GateOptions& opt, GateResult& r, GateWork& w) {
  // Two families, each corrected across every tested cell of every tested metric together:
  // "head slower" decides the gate, "head faster" is reported with the same control. Each cell
  // contributes its deciding test: the t test on run means, or the pooled Mann-Whitney where a
  // side has a single run. The pooled Mann-Whitney of every cell is adjusted in a family of its
  // own, as a diagnostic.
  const stats::Correction correction = stats::correction_from_string(opt.correction);
  const size_t m = w.tested.size();
  std::vector<double> slower, faster, mw_slower, mw_faster;
  for (const TestedCell& t : w.tested) {
    slower.push_back(t.p_slower());
    faster.push_back(t.p_faster());
    mw_slower.push_back(t.mw_slower);
    mw_faster.push_back(t.mw_faster);
  }
  const auto adj_slower = stats::adjust(slower, correction),
             adj_faster = stats::adjust(faster, correction);
  const auto adj_mw_slower = stats::adjust(mw_slower, correction);
  const auto adj_mw_faster = stats::adjust(mw_faster, correction);
  r.rules_out_min_effect = m > 0;
  for (size_t i = 0; i < m; ++i) {
    const TestedCell& t = w.tested[i];
    CellComparison& c = r.cells[t.cell];
    const double up = 1.0 + opt.min_effect_for(c.metric), down = 1.0 / up;
    const bool moved_faster = faster[i] < slower[i];
    c.p_value = moved_faster ? faster[i] : slower[i];
    c.p_adjusted = moved_faster ? adj_faster[i] : adj_slower[i];
    c.mann_whitney_p = moved_faster ? mw_faster[i] : mw_slower[i];
    c.mw_p_adjusted = moved_faster ? adj_mw_faster[i] : adj_mw_slower[i];
    if (t.runs_decide && !t.paired) c.runs_p_adjusted = c.p_adjusted;
    c.upper_bound = t.upper_bound(opt.power);
    w.without_runs += !t.runs_decide;
    if (c.ratio && adj_slower[i] <= w.alpha && *c.ratio >= up)
      c.verdict = CellVerdict::regression;
    else if (c.ratio && adj_faster[i] <= w.alpha && *c.ratio <= down)
      c.verdict = CellVerdict::improvement;
    else
      c.verdict = CellVerdict::unchanged;
    // Power against a regression of this cell alone: Holm's and BH's first step is alpha / m.
    c.mde = cell_mde(t, w.alpha / static_cast<double>(m), opt.power);
    r.rules_out_min_effect = r.rules_out_min_effect && c.upper_bound && *c.upper_bound < up;
  }
  r.drift_estimated = m > 0 && w.without_runs == 0;
  summarize_metrics(opt, r);
  if (w.without_runs > 0)
    r.warnings.push_back(
        "ONE RUN PER SIDE: " + std::to_string(w.without_runs) + " of " + std::to_string(m) +
        " compared cells have a single run on each side, so run-to-run drift cannot be "
        "estimated: their p-values and intervals ignore it (every repetition taken as "
        "independent), a machine that drifts between runs can fail the gate falsely, and no "
        "minimum detectable effect can be stated for them (none). " +
        SettingError::setting("require_power") +
        " makes such a gate inconclusive. Measure 2 or more runs per side (alternating rounds) for "
        "an interval that includes drift.");
}

void warn_too_few_repetitions(const GateOptions& opt, GateResult& r, GateWork& w) {
  // A cell whose deciding test's smallest possible p, times the number of tested cells, exceeds
  // alpha can never be flagged, whatever the data: a pass would be silent blindness. Only the
  // rank test has such a floor; the t test on run means reaches any p from df 1 on.
  const size_t m = w.tested.size();
  std::set<std::pair<int, int>> blind_sizes;
  double worst_min_p = 0.0;
  int blind_paired = 0;
  for (const TestedCell& t : w.tested) {
    CellComparison& c = r.cells[t.cell];
    if (static_cast<double>(m) * t.min_p <= w.alpha) continue;
    if (t.paired || c.test == "paired-t") {  // its note says why: fewer than 2 blocks
      ++w.blind;
      ++blind_paired;
      continue;
    }
    ++w.blind;
    blind_sizes.insert({c.base_n, c.head_n});
    worst_min_p = std::max(worst_min_p, t.min_p);
    c.note = (c.note.empty() ? "" : c.note + "; ") +
             "too few repetitions to ever reach significance (smallest possible p " +
             stats::fmt_g(t.min_p) + ", x " + std::to_string(m) + " cells > alpha " +
             stats::fmt_g(w.alpha) + ")";
  }
  if (blind_paired > 0)
    r.warnings.push_back("TOO FEW PAIRS: " + std::to_string(blind_paired) + " of " +
                         std::to_string(m) +
                         " compared cells have fewer than 2 complete ABBA blocks (4 pairs) in "
                         "their A/B run, so the paired test has no variance and can never be "
                         "significant. Measure at least 4 pairs a cell, better 20 or more. The "
                         "gate is inconclusive.");
  if (w.blind == blind_paired) return;
  std::string sizes;
  for (const auto& [nb, nh] : blind_sizes)
    sizes += (sizes.empty() ? "" : ", ") + std::to_string(nb) + " vs " + std::to_string(nh);
  r.warnings.push_back(
      "TOO FEW REPETITIONS: " + std::to_string(w.blind) + " of " + std::to_string(m) +
      " compared cells can never be significant at alpha " + stats::fmt_g(w.alpha) + " after " +
      opt.correction + " correction over " + std::to_string(m) +
      " cells, whatever the data (base vs head repetitions: " + sizes + "; smallest possible p " +
      stats::fmt_g(worst_min_p) + "). Use at least " + std::to_string(reps_needed(w.alpha, m)) +
      " repetitions per side (Google Benchmark warns below 9), or 2 or more runs per side. The "
      "gate is inconclusive.");
}

void warn_coverage(const GateOptions& opt, GateResult& r, const GateWork& w) {
  const size_t m = w.tested.size();
  // One clause per underpowered tested metric, named when the gate tests more than one.
  std::vector<const MetricSummary*> tested;
  for (const MetricSummary& sum : r.metrics)
    if (!sum.exact && sum.cells > 0) tested.push_back(&sum);
  const std::string min_effect = SettingError::setting("min_effect");
  std::string clauses;
  for (const MetricSummary* sum : tested) {
    if (!sum->underpowered) continue;
    const std::string named = tested.size() > 1 ? " of " + sum->metric : "";
    clauses += std::string(clauses.empty() ? "" : "; ") + "a slowdown of one cell" + named +
               " only from " +
               (sum->mde             ? pct(*sum->mde)
                : w.without_runs > 0 ? std::string("(none: no run-level variance, one run a side)")
                                     : std::string("(never)")) +
               ", above " + min_effect + " " + pct(sum->min_effect) +
               " (a slowdown of every cell from " +
               (sum->mde_all_cells ? pct(*sum->mde_all_cells) : "-") + ")";
  }
  const bool found = std::any_of(r.cells.begin(), r.cells.end(), [](const CellComparison& c) {
    return c.verdict == CellVerdict::regression && !is_exact_gate_metric(c.metric);
  });
  if (found && r.underpowered && w.blind == 0 && m > 0) {
    // A regression found is not contradicted: the warning names the cells the gate could not
    // have seen, if any are left.
    const std::vector<const CellComparison*> unseen = unseen_cells(r);
    if (!unseen.empty()) {
      constexpr size_t kNamed = 5;
      std::string cells;
      for (size_t i = 0; i < unseen.size() && i < kNamed; ++i) {
        const CellComparison& c = *unseen[i];
        cells += std::string(i ? "; " : "") + cell_label(c.key) +
                 (tested.size() > 1 ? " " + c.metric : "") + " (" +
                 (c.mde ? "MDE " + pct(*c.mde) + " > " + pct(opt.min_effect_for(c.metric))
                        : std::string("no MDE")) +
                 ")";
      }
      if (unseen.size() > kNamed)
        cells += "; and " + std::to_string(unseen.size() - kNamed) + " more";
      r.warnings.push_back(
          "UNDERPOWERED: the regressions found stand, but " + std::to_string(unseen.size()) +
          " of " + std::to_string(m) +
          " compared cells did not regress and could not have shown a slowdown of " + min_effect +
          " (their minimum detectable effect at " + pct(opt.power) + " power is above it): " +
          cells + ". Measure more rounds or repetitions to see a slowdown there.");
    }
  } else if (r.underpowered && w.blind == 0 && m > 0)
    r.warnings.push_back(
        "UNDERPOWERED: this gate detects with " + pct(opt.power) + " probability " + clauses +
        (r.rules_out_min_effect
             ? ". But every cell's one-sided " + pct(opt.power) +
                   " upper bound is below 1 + its min effect, so the data rule out a slowdown of " +
                   min_effect + " in any cell."
             : ". A pass does not rule out a regression of " + min_effect +
                   "; measure more rounds or repetitions" +
                   (opt.require_power ? ". " + SettingError::setting("require_power") +
                                            " makes the gate inconclusive."
                                      : std::string("."))));
  if (w.exact_head_missing > 0)
    r.warnings.push_back(std::to_string(w.exact_head_missing) +
                         " cells have an exact metric (peak memory) measured on the base but not "
                         "on the head, and it is not compared for them");
  if (w.head_failed)
    r.warnings.push_back("some cells ran on base but have no ok samples on head (see notes)");
  if (!w.left_out.empty())
    r.warnings.push_back(std::to_string(w.left_out.size()) +
                         " left-out samples or runs are listed in the cell notes: " +
                         w.left_out.front() + (w.left_out.size() > 1 ? ", ..." : ""));
  if (w.skipped_both_failed > 0)
    r.warnings.push_back(std::to_string(w.skipped_both_failed) +
                         " cells have no ok samples on either side and are not listed");
  if (w.base_only > 0)
    r.warnings.push_back(std::to_string(w.base_only) +
                         " cells of the base are missing from the head and are not compared");
  int no_baseline = 0;
  for (const CellComparison& c : r.cells) no_baseline += c.verdict == CellVerdict::no_baseline;
  if (no_baseline > 0 && !opt.allow_missing_baseline)
    r.warnings.push_back(std::to_string(no_baseline) + " cells have no baseline (pass " +
                         SettingError::setting("allow_missing_baseline") + " to accept)");
  if (r.cells.empty()) r.warnings.push_back("nothing to compare: the head has no cells");
}

}  // namespace pg::gate

namespace pg::gate {

std::vector<const CellComparison*> unseen_cells(const GateResult& r) {
  std::vector<const CellComparison*> out;
  for (const CellComparison& c : r.cells) {
    if (c.test.empty() || is_exact_gate_metric(c.metric) || c.verdict != CellVerdict::unchanged)
      continue;
    if (!c.mde || *c.mde > r.options.min_effect_for(c.metric)) out.push_back(&c);
  }
  return out;
}

}  // namespace pg::gate

namespace pg::gate {

void decide_gate(const GateOptions& opt, GateResult& r, GateWork& w) {
  // --require-power asks for a verdict whose error rates are stated: a cell decided without a
  // run-level variance (one run a side) has neither a valid alpha under drift nor a power, so
  // its regression does not count and the gate is inconclusive.
  const bool drift_blind_counts = !opt.require_power;
  int no_baseline = 0, incomparable = 0, regressions = 0;
  for (const CellComparison& c : r.cells) {
    no_baseline += c.verdict == CellVerdict::no_baseline;
    incomparable += c.verdict == CellVerdict::incomparable;
    regressions += c.verdict == CellVerdict::regression &&
                   (drift_blind_counts || c.test != "mann-whitney" || !opt.run_level);
  }
  w.structural =
      incomparable > 0 || (no_baseline > 0 && !opt.allow_missing_baseline) || r.cells.empty();
  const bool unstated = opt.require_power && opt.run_level && w.without_runs > 0;
  if (regressions > 0)
    r.verdict = GateVerdict::regression;
  else if (w.structural || w.blind > 0 || unstated ||
           (opt.require_power && r.underpowered && !(opt.futility && r.rules_out_min_effect)))
    r.verdict = GateVerdict::inconclusive;
  else
    r.verdict = GateVerdict::pass;

  // Sequential rule: stop at a regression; stop for a pass once every cell's upper bound is below
  // 1 + min_effect (futility: non-binding, it never rejects, so alpha is untouched) or once the
  // gate is powered for min_effect; else, while a later look could still decide, ask for another
  // round. Each look's alpha is alpha / max_looks.
  if (opt.max_looks > 1) {
    bool futile = opt.futility && r.rules_out_min_effect;
    for (const MetricSummary& sum : r.metrics)
      futile = futile && (sum.exact || sum.cells == 0 || sum.min_effect > 0.0);
    if (r.verdict == GateVerdict::regression)
      r.next_reason = "regression";
    else if (w.structural)
      r.next_reason = "not comparable";
    else if (opt.look == opt.max_looks)
      r.next_reason = "last look";
    else if (!(r.underpowered || w.blind > 0))
      r.next_reason = "powered";
    else
      r.next_reason = futile ? "futility" : "too wide";
  }
  if (r.next_reason == "too wide") {
    r.next = NextStep::more_rounds;
    r.verdict = GateVerdict::inconclusive;
    r.warnings.push_back("CONTINUE: look " + std::to_string(opt.look) + " of " +
                         std::to_string(opt.max_looks) +
                         " is too wide to decide; measure another round and compare again");
  }
}

}  // namespace pg::gate
