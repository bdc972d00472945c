// The merge gate's decision rule; docs/STATISTICS.md explains each choice.
#include "gate/gate.h"

#include "common/utc_time.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <set>

#include "common/errors.h"
#include "common/utc_time.h"
#include "gate/gate_inputs.h"
#include "gate/gate_steps.h"
#include "stats/descriptive.h"

namespace pg::gate {

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
    case CellVerdict::accepted:
      return "accepted";
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

const std::vector<std::string>& tested_gate_metrics() {
  static const std::vector<std::string> m = {"tpot_ms", "prefill_ms"};
  return m;
}

const std::vector<std::string>& exact_gate_metrics() {
  static const std::vector<std::string> m = {"peak_alloc_bytes"};
  return m;
}

bool is_exact_gate_metric(const std::string& metric) {
  const auto& e = exact_gate_metrics();
  return std::find(e.begin(), e.end(), metric) != e.end();
}

double GateOptions::min_effect_for(const std::string& metric) const {
  auto it = metric_min_effect.find(metric);
  return it != metric_min_effect.end() ? it->second : min_effect;
}

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
    throw GateOptionError("look", "must be in [1, " + SettingError::setting("max_looks") + " " +
                                      std::to_string(o.max_looks) + "], got " +
                                      std::to_string(o.look));
  if (o.correction != "holm" && o.correction != "bh")
    throw GateOptionError("correction", "must be holm or bh, got '" + o.correction + "'");
  std::string known;
  for (const auto* list : {&tested_gate_metrics(), &exact_gate_metrics()})
    for (const std::string& m : *list) known += (known.empty() ? "" : ", ") + m;
  if (o.metrics.empty()) throw GateOptionError("metrics", "must name at least one of " + known);
  for (size_t i = 0; i < o.metrics.size(); ++i) {
    const std::string& m = o.metrics[i];
    const auto& t = tested_gate_metrics();
    if (std::find(t.begin(), t.end(), m) == t.end() && !is_exact_gate_metric(m))
      throw GateOptionError("metrics", "must be among " + known + ", got '" + m + "'");
    if (std::find(o.metrics.begin(), o.metrics.begin() + i, m) != o.metrics.begin() + i)
      throw GateOptionError("metrics", "names " + m + " twice");
  }
  for (const auto& [m, v] : o.metric_min_effect) {
    if (std::find(o.metrics.begin(), o.metrics.end(), m) == o.metrics.end())
      throw GateOptionError("min_effect", "is given for " + m + ", which is not among " +
                                              SettingError::setting("metrics"));
    if (!(v >= 0.0 && std::isfinite(v)))
      throw GateOptionError("min_effect",
                            "of " + m + " must be a finite number >= 0, got " + num(v));
  }
  for (const auto& [cell, ratio] : o.accepted_ratio)
    if (!(ratio > 0.0 && std::isfinite(ratio)))
      throw GateOptionError(
          "accepted_ratio",
          "of " + cell.second + " must be a finite number > 0, got " + num(ratio));
  if (!(o.memory_tolerance_bytes >= 0.0 && std::isfinite(o.memory_tolerance_bytes)))
    throw GateOptionError("memory_tolerance_bytes",
                          "must be a finite number >= 0, got " + num(o.memory_tolerance_bytes));
}

namespace {

// Seconds of an ISO 8601 time since the epoch (common/utc_time.h, the one parser); nullopt if
// malformed.
std::optional<double> epoch_seconds(const std::string& iso) {
  int64_t seconds = 0;
  if (!parse_iso8601(iso, &seconds)) return std::nullopt;
  return static_cast<double>(seconds);
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

// Notes of what a pool left out: repetitions without a usable value, runs where the cell failed
// beside runs where it did not. Nothing is dropped silently. `count` false: the note only (the
// same runs were already counted for the gate's first metric).
void note_left_out(CellComparison& c, const gate::CellPool& pool, const char* side, bool count,
                   std::vector<std::string>& left_out) {
  std::vector<std::string> parts;
  if (pool.unusable > 0)
    parts.push_back(std::to_string(pool.unusable) + " " + side + " repetitions with zero or " +
                    (c.metric == "tpot_ms" ? "invalid decode time" : "invalid " + c.metric) +
                    " left out");
  if (!pool.failed.empty() && pool.runs > 0)
    parts.push_back(std::to_string(pool.failed.size()) + " of " +
                    std::to_string(pool.failed.size() + pool.runs) + " " + side +
                    " runs left out: " + join(pool.failed));
  for (const std::string& p : parts) {
    c.note = (c.note.empty() ? "" : c.note + "; ") + p;
    if (count || p.find("repetitions") != std::string::npos) left_out.push_back(p);
  }
}

}  // namespace

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

void collect_cells(const std::vector<Run>& base_runs, const std::vector<Run>& head_runs,
                   const std::string& env_diff, const GateOptions& opt, GateResult& r,
                   GateWork& w) {
  for (size_t mi = 0; mi < opt.metrics.size(); ++mi) {
    const std::string& metric = opt.metrics[mi];
    const bool exact = is_exact_gate_metric(metric), first = mi == 0;
    auto base_pools = pool_cells(base_runs, metric);
    const auto head_pools = pool_cells(head_runs, metric);
    std::map<CellKey, std::vector<stats::AbBlocks>> blocks;
    if (w.pairing.paired && !exact) blocks = paired_blocks(base_runs, head_runs, w.pairing, metric);
    for (const auto& [key, head] : head_pools) {
      auto b = base_pools.find(key);
      const double* accepted = accepted_ratio(opt, key, metric);
      if (accepted && b != base_pools.end()) {
        scale_base_for_acceptance(*accepted, b->second);
        if (blocks.contains(key)) shift_blocks_for_acceptance(*accepted, blocks[key]);
      }
      const bool base_ok = b != base_pools.end() && !b->second.values.empty();
      if (exact && head.values.empty()) {
        // Not measured on the head (a CPU run has no peak_alloc_bytes, a failed cell none).
        w.exact_head_missing += base_ok;
        continue;
      }
      if (head.values.empty() && !base_ok) {
        w.skipped_both_failed += first;  // e.g. a cell that runs out of memory on both commits
        continue;
      }
      CellComparison c;
      c.key = key;
      c.metric = metric;
      c.head_n = static_cast<int>(head.values.size());
      c.head_runs = head.runs;
      if (!head.values.empty()) c.head_median = median(head.values);
      if (base_ok) {
        c.base_n = static_cast<int>(b->second.values.size());
        c.base_runs = b->second.runs;
        c.base_median = median(b->second.values);
      }
      if (head.values.empty()) {
        c.verdict = CellVerdict::incomparable;
        c.note = "head has no ok samples: " + join(head.failed);
        w.head_failed = true;
      } else if (!base_ok) {
        c.verdict = CellVerdict::no_baseline;
        c.note = b == base_pools.end() ? "no base run has this cell"
                 : exact               ? "no base run measured " + metric
                                       : "base has no ok samples: " + join(b->second.failed);
      } else if (!env_diff.empty()) {
        c.verdict = CellVerdict::incomparable;
        c.note = "environments differ: " + env_diff;
      } else if (exact) {
        compare_exact(c, b->second, head, opt.min_effect_for(metric), opt.memory_tolerance_bytes);
      } else {
        auto h = w.history->find({key, metric});
        TestedCell t = test_cell(c, r.cells.size(), b->second, head, opt.run_level,
                                 h == w.history->end() || w.pairing.paired ? nullptr : &h->second);
        if (w.pairing.paired) apply_paired(c, t, blocks[key]);
        w.tested.push_back(std::move(t));
      }
      if (!exact) {
        if (b != base_pools.end()) note_left_out(c, b->second, "base", first, w.left_out);
        note_left_out(c, head, "head", first, w.left_out);
      }
      r.cells.push_back(std::move(c));
    }
    if (first)
      for (const auto& [key, pool] : base_pools) w.base_only += !head_pools.contains(key);
  }
}

GateResult evaluate_gate(const std::string& base_sha, const std::vector<Run>& base_runs,
                         const std::string& head_sha, const std::vector<Run>& head_runs,
                         const GateOptions& opt, const stats::TrustedHistory& history) {
  validate_gate_options(opt);
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
                                   : gate::environment_difference(base_runs, head_runs);
  if (!env_diff.empty())
    r.warnings.push_back("environments differ (" + env_diff +
                         "): no cell is compared; benchmark base and head on the same machine");
  add_cost(base_runs, r);
  add_cost(head_runs, r);

  gate::GateWork w;
  w.history = &history;
  w.alpha = opt.alpha / opt.max_looks;  // Bonferroni over the sequential looks
  r.alpha_per_look = w.alpha;
  w.pairing = gate::pair_ab_runs(base_runs, head_runs);
  if (w.pairing.paired) {
    r.design = "paired";
    r.ab_runs = static_cast<int>(w.pairing.ab_runs.size());
    if (r.ab_runs == 1)
      r.warnings.push_back(
          "ONE A/B RUN: drift shared by base and head cancels in each pair, but the two worker "
          "processes (one a side) are not replicated, so a difference between them counts as "
          "the code's (perfgate-sim: a worker effect of half the run-to-run sd gives 25% A/A "
          "false alarms). 3 or more A/B runs make the A/B run the unit, which includes it.");
    else if (r.ab_runs == 2)
      r.warnings.push_back(
          "TWO A/B RUNS: the A/B run is the unit, so the paired test has df 1 and is nearly "
          "blind (its critical t is 382 at 0.01 over 12 cells); 3 or more A/B runs, or one judged "
          "alone, see more.");
  } else if (!w.pairing.why_not.empty()) {
    r.warnings.push_back("NOT PAIRED: the runs are not judged as A/B pairs (" + w.pairing.why_not +
                         "), so the unpaired rule decides, with the run-to-run drift that pairing "
                         "would have cancelled");
  }
  gate::collect_cells(base_runs, head_runs, env_diff, opt, r, w);
  gate::decide_tested(opt, r, w);
  gate::label_accepted(opt, r);
  gate::warn_too_few_repetitions(opt, r, w);
  gate::warn_coverage(opt, r, w);
  gate::decide_gate(opt, r, w);
  gate::describe_rule(r);
  return r;
}

}  // namespace pg::gate
