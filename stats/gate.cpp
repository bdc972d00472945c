// The merge gate's decision rule; docs/STATISTICS.md explains each choice.
#include "stats/gate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <set>

#include "common/errors.h"
#include "stats/descriptive.h"
#include "stats/gate_cell.h"
#include "stats/gate_inputs.h"
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

std::string to_string(NextStep n) { return n == NextStep::stop ? "stop" : "continue"; }

namespace {

std::string num(double v) { return stats::fmt_g(v); }

}  // namespace

void validate_gate_options(const GateOptions& o) {
  if (!(o.alpha > 0.0 && o.alpha < 1.0))
    throw GateOptionError("alpha", "must be in (0, 1), got " + num(o.alpha));
  if (!(o.min_effect >= 0.0 && std::isfinite(o.min_effect)))
    throw GateOptionError("min_effect", "must be a finite number >= 0, got " + num(o.min_effect));
  if (o.bootstrap_iters < 0) throw GateOptionError("bootstrap_iters", "must be >= 0");
  if (!(o.power > 0.0 && o.power < 1.0))
    throw GateOptionError("power", "must be in (0, 1), got " + num(o.power));
  if (o.max_looks < 1)
    throw GateOptionError("max_looks", "must be >= 1, got " + std::to_string(o.max_looks));
  if (o.look < 1 || o.look > o.max_looks)
    throw GateOptionError("look", "must be in [1, max_looks " + std::to_string(o.max_looks) +
                                      "], got " + std::to_string(o.look));
  if (o.correction != "holm" && o.correction != "bh")
    throw GateOptionError("correction", "must be holm or bh, got '" + o.correction + "'");
}

namespace {

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

std::string pct(double v) { return stats::fmt_g(100.0 * v) + "%"; }

// The "lone regression" rule: can a change in one cell alone, with every other cell unchanged,
// ever be significant? Its best adjusted p is m * (smallest possible p) for Holm and for BH alike.
int reps_needed(double alpha, size_t m) {
  for (int n = 2; n <= 1000; ++n)
    if (static_cast<double>(m) * stats::mwu_min_p(n, n) <= alpha) return n;
  return 1000;
}

// Seconds of an ISO 8601 UTC time "YYYY-MM-DDTHH:MM:SSZ" since the epoch; nullopt if malformed.
std::optional<double> epoch_seconds(const std::string& iso) {
  std::tm tm{};
  if (std::sscanf(iso.c_str(), "%d-%d-%dT%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6)
    return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(timegm(&tm));
}

// What measuring the runs cost: timed repetitions (every cell, ok or not) and wall time.
void add_cost(const std::vector<Run>& runs, GateResult& r) {
  for (const Run& run : runs) {
    for (const CellResult& cell : run.cells) {
      for (double ms : cell.samples.prefill_ms) r.measured_seconds += ms / 1000.0;
      for (const auto& steps : cell.samples.decode_ms)
        for (double ms : steps) r.measured_seconds += ms / 1000.0;
    }
    const auto start = epoch_seconds(run.started_at), end = epoch_seconds(run.finished_at);
    if (start && end && *end >= *start) r.run_seconds += *end - *start;
  }
}

// Notes of what a pool left out: repetitions without a usable time, runs where the cell failed
// beside runs where it did not. Nothing is dropped silently.
void note_left_out(CellComparison& c, const stats::CellPool& pool, const char* side,
                   std::vector<std::string>& left_out) {
  std::vector<std::string> parts;
  if (pool.unusable > 0)
    parts.push_back(std::to_string(pool.unusable) + " " + side +
                    " repetitions with zero or invalid decode time left out");
  if (!pool.failed.empty() && pool.runs > 0)
    parts.push_back(std::to_string(pool.failed.size()) + " of " +
                    std::to_string(pool.failed.size() + pool.runs) + " " + side +
                    " runs left out: " + join(pool.failed));
  for (const std::string& p : parts) {
    c.note = (c.note.empty() ? "" : c.note + "; ") + p;
    left_out.push_back(p);
  }
}

}  // namespace

GateResult evaluate_gate(const std::string& base_sha, const std::vector<Run>& base_runs,
                         const std::string& head_sha, const std::vector<Run>& head_runs,
                         const GateOptions& opt) {
  validate_gate_options(opt);
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

  add_cost(base_runs, r);
  add_cost(head_runs, r);
  const double alpha = opt.alpha / opt.max_looks;  // Bonferroni over the sequential looks
  r.alpha_per_look = alpha;

  const auto base_pools = stats::pool_cells(base_runs);
  const auto head_pools = stats::pool_cells(head_runs);
  std::vector<stats::TestedCell> tested;
  std::vector<std::string> left_out;
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
      tested.push_back(stats::test_cell(c, r.cells.size(), b->second, head));
    }
    if (b != base_pools.end()) note_left_out(c, b->second, "base", left_out);
    note_left_out(c, head, "head", left_out);
    r.cells.push_back(std::move(c));
  }

  // Two families per level, each corrected across the tested cells: "head slower" decides the
  // gate, "head faster" is reported with the same control. At the repetition level the pooled
  // Mann-Whitney test (all tested cells); at the run level the t test on run means (the cells
  // with 2+ runs in all). A cell is significant only if both levels say so, so each level's
  // family-wise error bounds the gate's: under drift the run level holds it at alpha, without
  // drift both do.
  const size_t m = tested.size();
  std::vector<double> mw_slower, mw_faster, t_slower, t_faster;
  std::vector<size_t> t_index(m, SIZE_MAX);
  for (size_t i = 0; i < m; ++i) {
    mw_slower.push_back(tested[i].mw_slower);
    mw_faster.push_back(tested[i].mw_faster);
    const auto& e = tested[i].two_level;
    if (opt.run_level && e && e->has_runs_test()) {
      t_index[i] = t_slower.size();
      t_slower.push_back(*e->p_slower);
      t_faster.push_back(*e->p_faster);
    }
  }
  const auto adj_mw_slower = stats::adjust(mw_slower, correction);
  const auto adj_mw_faster = stats::adjust(mw_faster, correction);
  const auto adj_t_slower = stats::adjust(t_slower, correction);
  const auto adj_t_faster = stats::adjust(t_faster, correction);
  const double up = 1.0 + opt.min_effect, down = 1.0 / (1.0 + opt.min_effect);
  int without_runs_test = 0;
  std::vector<double> mdes;
  bool some_cell_blind = false;
  for (size_t i = 0; i < m; ++i) {
    CellComparison& c = r.cells[tested[i].cell];
    double p_slow = mw_slower[i], p_fast = mw_faster[i];
    double adj_slow = adj_mw_slower[i], adj_fast = adj_mw_faster[i];
    if (t_index[i] != SIZE_MAX) {
      const size_t j = t_index[i];
      p_slow = std::max(p_slow, t_slower[j]);
      p_fast = std::max(p_fast, t_faster[j]);
      adj_slow = std::max(adj_slow, adj_t_slower[j]);
      adj_fast = std::max(adj_fast, adj_t_faster[j]);
    } else {
      ++without_runs_test;
    }
    const bool moved_faster = p_fast < p_slow;
    c.p_value = moved_faster ? p_fast : p_slow;
    c.p_adjusted = moved_faster ? adj_fast : adj_slow;
    c.mw_p_adjusted = moved_faster ? adj_mw_faster[i] : adj_mw_slower[i];
    if (t_index[i] != SIZE_MAX)
      c.runs_p_adjusted = moved_faster ? adj_t_faster[t_index[i]] : adj_t_slower[t_index[i]];
    if (adj_slow <= alpha && *c.ratio >= up)
      c.verdict = CellVerdict::regression;
    else if (adj_fast <= alpha && *c.ratio <= down)
      c.verdict = CellVerdict::improvement;
    else
      c.verdict = CellVerdict::unchanged;
    // Power against a regression of this cell alone: Holm's and BH's first step is alpha / m.
    c.mde = stats::cell_mde(tested[i], alpha / static_cast<double>(m), opt.power);
    if (c.mde)
      mdes.push_back(*c.mde);
    else
      some_cell_blind = true;
  }
  r.drift_estimated = m > 0 && without_runs_test == 0;
  if (m > 0 && !some_cell_blind) {
    r.mde = *std::max_element(mdes.begin(), mdes.end());
    r.mde_all_cells = *std::min_element(mdes.begin(), mdes.end());
  }
  r.underpowered = m > 0 && (!r.mde || *r.mde > opt.min_effect);
  if (without_runs_test > 0)
    r.warnings.push_back(
        "ONE RUN PER SIDE: " + std::to_string(without_runs_test) + " of " + std::to_string(m) +
        " compared cells have a single run on each side, so run-to-run drift cannot be "
        "estimated. For them the gate assumes there is none (every repetition independent), and "
        "a machine that drifts between runs can fail it falsely. Measure 2 or more runs per "
        "side (alternating rounds) for an interval that includes drift.");

  // Too few repetitions: a cell whose smallest possible p, times the number of tested cells,
  // exceeds alpha can never be flagged, whatever the data. A pass would then be silent blindness.
  int blind = 0;
  std::set<std::pair<int, int>> blind_sizes;
  double worst_min_p = 0.0;
  for (const stats::TestedCell& t : tested) {
    CellComparison& c = r.cells[t.cell];
    if (static_cast<double>(m) * t.min_p > alpha) {
      ++blind;
      blind_sizes.insert({c.base_n, c.head_n});
      worst_min_p = std::max(worst_min_p, t.min_p);
      c.note = (c.note.empty() ? "" : c.note + "; ") +
               "too few repetitions to ever reach significance (smallest possible p " +
               stats::fmt_g(t.min_p) + ", x " + std::to_string(m) + " cells > alpha " +
               stats::fmt_g(alpha) + ")";
    }
  }
  if (blind > 0) {
    std::string sizes;
    for (const auto& [nb, nh] : blind_sizes)
      sizes += (sizes.empty() ? "" : ", ") + std::to_string(nb) + " vs " + std::to_string(nh);
    r.warnings.push_back(
        "TOO FEW REPETITIONS: " + std::to_string(blind) + " of " + std::to_string(m) +
        " compared cells can never be significant at alpha " + stats::fmt_g(alpha) + " after " +
        stats::to_string(correction) + " correction over " + std::to_string(m) +
        " cells, whatever the data (base vs head repetitions: " + sizes + "; smallest possible p " +
        stats::fmt_g(worst_min_p) + "). Use at least " + std::to_string(reps_needed(alpha, m)) +
        " repetitions per side (Google Benchmark warns below 9). The gate is inconclusive.");
  }

  int no_baseline = 0, incomparable = 0, regressions = 0;
  for (const CellComparison& c : r.cells) {
    no_baseline += c.verdict == CellVerdict::no_baseline;
    incomparable += c.verdict == CellVerdict::incomparable;
    regressions += c.verdict == CellVerdict::regression;
  }
  if (r.underpowered && blind == 0 && m > 0)
    r.warnings.push_back(
        "UNDERPOWERED: this gate detects a slowdown of one cell with " + pct(opt.power) +
        " probability only from " + (r.mde ? pct(*r.mde) : std::string("(never)")) +
        ", above --min-effect " + pct(opt.min_effect) + " (a slowdown of every cell from " +
        (r.mde_all_cells ? pct(*r.mde_all_cells) : "-") +
        "). A pass does not rule out a regression of --min-effect; measure more rounds or "
        "repetitions" +
        (opt.require_power ? ". --require-power makes the gate inconclusive." : "."));
  if (head_failed)
    r.warnings.push_back("some cells ran on base but have no ok samples on head (see notes)");
  if (!left_out.empty())
    r.warnings.push_back(std::to_string(left_out.size()) +
                         " left-out samples or runs are listed in the cell notes: " +
                         left_out.front() + (left_out.size() > 1 ? ", ..." : ""));
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

  const bool structural =
      incomparable > 0 || (no_baseline > 0 && !opt.allow_missing_baseline) || r.cells.empty();
  if (regressions > 0)
    r.verdict = GateVerdict::regression;
  else if (structural || blind > 0 || (opt.require_power && r.underpowered))
    r.verdict = GateVerdict::inconclusive;
  else
    r.verdict = GateVerdict::pass;

  // Sequential rule: while a later look could still decide (no regression yet, the interval too
  // wide for min_effect, nothing structurally wrong), ask for another round. Stopping early for a
  // pass never adds false alarms; each look's alpha is alpha / max_looks.
  if (r.verdict != GateVerdict::regression && !structural && opt.look < opt.max_looks &&
      (r.underpowered || blind > 0)) {
    r.next = NextStep::more_rounds;
    r.verdict = GateVerdict::inconclusive;
    r.warnings.push_back("CONTINUE: look " + std::to_string(opt.look) + " of " +
                         std::to_string(opt.max_looks) +
                         " is too wide to decide; measure another round and compare again");
  }
  return r;
}

}  // namespace pg
