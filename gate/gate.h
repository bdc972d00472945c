// The merge gate's decision: compare per-repetition tpot_ms of base and head runs, cell by cell.
// Pure computation over stored data: no I/O, no SQLite, no LibTorch.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/errors.h"
#include "core/run.h"
#include "stats/run_history.h"

namespace pg::gate {

// The metrics a gate can judge (docs/STATISTICS.md "More than one metric"): tested ones have a
// value per repetition and go through the t test; exact ones are deterministic, one value per
// run, compared with a tolerance.
const std::vector<std::string>& tested_gate_metrics();  // tpot_ms, prefill_ms
const std::vector<std::string>& exact_gate_metrics();   // peak_alloc_bytes
bool is_exact_gate_metric(const std::string& metric);

// Below this many bytes a change of peak memory is not compared (allocator rounding).
inline constexpr double kDefaultMemoryToleranceBytes = 1048576.0;

struct GateOptions {
  double alpha = 0.01;       // family-wise (holm) or FDR (bh) level after correction
  double min_effect = 0.05;  // relative change a verdict needs, besides significance
  // The metrics judged, in report order: every tested cell of every tested metric is one test of
  // the same families (Holm / BH across cells and metrics together); exact metrics add cells
  // compared against their tolerance. Default: decode latency and memory.
  std::vector<std::string> metrics = {"tpot_ms", "peak_alloc_bytes"};
  // min_effect of one metric, where it differs from `min_effect` (for an exact metric: its
  // relative tolerance).
  std::map<std::string, double> metric_min_effect;
  // An exact metric's change must exceed this many units (bytes) besides its relative tolerance.
  double memory_tolerance_bytes = kDefaultMemoryToleranceBytes;
  double min_effect_for(const std::string& metric) const;
  std::string correction = "holm";  // "holm" | "bh"
  uint64_t seed = 0;                // bootstrap seed: same data, same interval
  int bootstrap_iters = 2000;
  bool allow_missing_baseline = false;
  // Where min_effect came from ("fixed" or the history rule of --min-effect auto), for reports.
  std::string min_effect_source = "fixed";
  // The power a gate must have against a slowdown of min_effect (the minimum detectable effect).
  double power = 0.95;
  bool require_power = false;  // an underpowered gate is inconclusive (exit 3), not a pass
  // Sequential looks (docs/STATISTICS.md "Enough rounds"): this is look `look` of at most
  // `max_looks`; each look tests at alpha / max_looks (Bonferroni alpha spending), so the chance
  // of any false alarm over all looks stays at alpha.
  int look = 1, max_looks = 1;
  // The run-level t test decides wherever both sides have runs enough. Off only to simulate the
  // earlier rule (perfgate-sim), which pooled repetitions as if independent.
  bool run_level = true;
  // The sequential rule's futility stop (a pass once every cell's upper bound is below
  // 1 + min_effect). Off only to simulate the earlier rule (perfgate-sim --no-futility).
  bool futility = true;
  // Accepted slowdowns (docs/STATISTICS.md "Accepted slowdowns"): per cell and metric, the
  // head/base ratio someone accepted for this change. Such a cell is tested against the base
  // times that ratio, so only a head slower than what was accepted (by the min effect, with the
  // same test and correction) is a regression; otherwise the cell is `accepted`.
  std::map<std::pair<CellKey, std::string>, double> accepted_ratio;
};

// accepted: slower than the base, but not beyond the slowdown accepted for it
// (GateOptions::accepted_ratio); it does not fail the gate.
enum class CellVerdict { regression, improvement, unchanged, no_baseline, incomparable, accepted };
enum class GateVerdict { pass, regression, inconclusive };
std::string to_string(CellVerdict);  // "regression", ..., "no-baseline", "incomparable", "accepted"
std::string to_string(GateVerdict);  // "pass" | "regression" | "inconclusive"

struct CellComparison {
  CellKey key;
  std::string metric = "tpot_ms";  // one cell per key and metric
  CellVerdict verdict = CellVerdict::unchanged;
  // One estimate everywhere (docs/STATISTICS.md "The estimate"): `ratio` is the head/base ratio
  // the deciding test is about, the one the effect rule, the reports and the dashboard use, and
  // ci_low/ci_high its 95% interval. When the run-level t test decides (test "runs-t"): the ratio
  // of the geometric means of run means (= runs_ratio) and its t interval. When the pooled
  // Mann-Whitney decides (one run per side): the Hodges-Lehmann ratio, with its interval
  // ("hodges-lehmann") or the range of pairwise ratios ("pairwise-range"). The medians are
  // descriptive only.
  // p_value/p_adjusted: the deciding test's one-sided p of the direction the cell moved, and that
  // p adjusted across every tested cell (Holm or BH).
  std::optional<double> base_median, head_median, ratio, ci_low, ci_high, p_value, p_adjusted;
  int base_n = 0, head_n = 0;        // pooled repetitions
  int base_runs = 0, head_runs = 0;  // runs pooled
  std::string note;                  // why no-baseline / incomparable, env differences
  std::string ci_method;
  // The two levels (docs/STATISTICS.md "Two levels"): ratio of the geometric means of run means,
  // the run-level t test's adjusted p, its degrees of freedom, and the variance components
  // (log scale, about relative sd): between runs and within a run.
  std::optional<double> runs_ratio, runs_p_adjusted, runs_df, run_sd, rep_sd;
  // Where the run t test's run-to-run variance came from (docs/STATISTICS.md "Run variance from
  // trusted history"): "runs" (this gate's runs), "pooled" (with trusted history) or "history"
  // (one run a side: the history's alone); empty when no t test on run means decided. runs_df is
  // the test's df, history_df the history's share of it, from history_runs runs of
  // history_commits commits.
  std::string variance_source;
  std::optional<double> history_df;
  int history_runs = 0, history_commits = 0;
  // The pooled Mann-Whitney on repetitions, a diagnostic beside the t test (it decides only
  // without a run-level test): its one-sided p of the direction the cell moved, and that p
  // adjusted across the cells in its own family.
  std::optional<double> mann_whitney_p, mw_p_adjusted;
  std::string test;  // the deciding test: "runs-t", "paired-t" or "mann-whitney"
  // The paired test (test "paired-t", docs/STATISTICS.md "Paired A/B runs"): the A/B runs, ABBA
  // blocks and pairs it used, its unit ("block" with one A/B run, "ab-run" with several), its
  // degrees of freedom, and the spread of block log ratios within an A/B run (log scale) and
  // between A/B runs beyond it (2+ A/B runs).
  int ab_runs = 0, blocks = 0, pairs = 0;
  std::string paired_unit;
  std::optional<double> paired_df, block_sd, ab_run_sd;
  // One-sided upper confidence bound for the ratio at level GateOptions::power, from the t test
  // on run means (exp(d + t_{power, df} se)); empty without a run-level test.
  std::optional<double> upper_bound;
  // Minimum detectable effect: the smallest slowdown of this cell alone (head/base - 1) that the
  // gate's test detects with probability GateOptions::power, given the variances just measured.
  // Empty when none can be stated: too few repetitions for the rank test, or no run-level
  // variance (one run a side), where drift bounds what the gate sees and nothing measures it.
  std::optional<double> mde;
  // The accepted head/base ratio this cell was tested against (GateOptions::accepted_ratio); the
  // fields above (ratio, interval, upper bound, medians) stay head against base, as measured.
  std::optional<double> accepted_ratio;
};

// What the gate did with one metric.
struct MetricSummary {
  std::string metric;
  bool exact = false;       // compared exactly (a deterministic metric), not tested
  double min_effect = 0.0;  // for an exact metric, its relative tolerance
  int cells = 0;            // cells tested or compared
  std::optional<double> mde, mde_all_cells;  // tested metrics: as GateResult's, for this metric
  bool underpowered = false;
};

// The sequential rule's advice to the caller that measures rounds.
enum class NextStep { stop, more_rounds };
std::string to_string(NextStep);  // "stop" | "continue"

struct GateResult {
  std::string base, head;  // full SHAs
  GateVerdict verdict = GateVerdict::pass;
  GateOptions options;
  std::vector<CellComparison> cells;
  std::vector<std::string> warnings;  // e.g. too few repetitions to ever reach significance
  Environment base_env, head_env;
  int base_runs = 0, head_runs = 0;
  std::vector<MetricSummary> metrics;  // one per GateOptions::metrics entry, in that order
  // Which design decided the tested cells: "paired" (the runs are the two sides of A/B runs,
  // `perfgate ab`: the paired t test) or "unpaired" (the t test on run means, or the pooled
  // Mann-Whitney with one run a side). With "paired": the A/B runs, and the most blocks and pairs
  // of a tested cell (each cell has its own counts). `rule` says the same in words for reports
  // ("paired t on 15 ABBA blocks (30 pairs) of 1 A/B run"; empty without a tested cell).
  std::string design = "unpaired";
  int ab_runs = 0, blocks = 0, pairs = 0;
  std::string rule;
  // Minimum detectable effect of the gate: any single cell slowed by `mde` is caught with the
  // requested power (the largest cell MDE); `mde_all_cells`: a slowdown of every cell alike is
  // caught from this size (the smallest cell MDE). Empty when a cell can detect nothing. With
  // several tested metrics, those of the first one (`metrics` has each); `underpowered` is true
  // when any metric is.
  std::optional<double> mde, mde_all_cells;
  bool underpowered = false;     // mde > min_effect: a pass could hide a slowdown of that size
  bool drift_estimated = false;  // every tested cell had the two-level test (2+ runs in all)
  // Every tested cell's upper_bound is below 1 + min_effect: the data rule out a slowdown of
  // min_effect in any cell (the futility stop of the sequential rule, which needs min_effect > 0;
  // docs/STATISTICS.md).
  bool rules_out_min_effect = false;
  double alpha_per_look = 0.01;
  NextStep next = NextStep::stop;
  // Why the looks stop or go on: "regression", "futility", "powered", "last look",
  // "not comparable", "too wide" (continue) or "" for a single look.
  std::string next_reason;
  // What this gate cost: the timed repetitions of every run of both sides (prefill + decode),
  // and the runs' wall time from start to finish, in seconds.
  double measured_seconds = 0.0, run_seconds = 0.0;
};

// base_runs / head_runs: every stored run of each commit (pooled per cell key). `history`: the
// run variance of cells from trusted history (app/trusted_history.h), used by the unpaired t test
// where it agrees with the gate's own.
GateResult evaluate_gate(const std::string& base_sha, const std::vector<Run>& base_runs,
                         const std::string& head_sha, const std::vector<Run>& head_runs,
                         const GateOptions& opt, const stats::TrustedHistory& history = {});

// A GateOptions field out of range is a SettingError (common/errors.h) naming the field ("alpha
// must be in (0, 1), got 0"); front ends spell it their own way. GateOptionError is the same type
// under the name gate/gate.cpp throws it by (kept while issue 25 rewrites that file).
using GateOptionError = SettingError;
// Throws SettingError for the first field out of range; evaluate_gate calls it first.
void validate_gate_options(const GateOptions& o);

// The tested cells that stayed unchanged yet could not have shown a slowdown of their metric's
// min effect: their MDE is above it, or none can be stated. Where the gate found a regression,
// its blindness is only these cells' (docs/STATISTICS.md, "Minimum detectable effect").
std::vector<const CellComparison*> unseen_cells(const GateResult& r);

// Exit code of `perfgate compare` for a result (docs/CLI.md: 0 pass, 1 regression, 3 inconclusive).
int gate_exit_code(const GateResult& r);

}  // namespace pg::gate
