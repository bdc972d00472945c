// Two-level statistics of one cell (Kalibera & Jones, "Rigorous Benchmarking in Reasonable Time",
// ISMM 2013): runs are the replication unit, repetitions are nested in runs. On the log scale,
// log tpot[i][j] = mu_side + r_i + e_ij with a run effect r_i ~ (0, sigma_run^2) and a repetition
// effect e_ij ~ (0, sigma_rep^2). docs/STATISTICS.md "Two levels" derives every formula here.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace pg::stats {

// tpot of every repetition, grouped by run (one inner vector per run that gave samples).
using RunGroups = std::vector<std::vector<double>>;

// What trusted history says about one cell's runs (stats/run_history.h), on the log scale: the
// variance of one run mean (sigma_run^2 + sigma_rep^2 / reps) with its degrees of freedom, the
// within-run variance with its own, and what it was estimated from.
struct RunVariance {
  double run_mean_var = 0.0, df = 0.0;
  double rep_var = 0.0, rep_df = 0.0;
  int reps = 0;               // repetitions of every run it was estimated from
  int runs = 0, commits = 0;  // runs used, commits with 2 or more of them
};

// Below this one-sided p of the F check, a gate's own run variance is larger than its history's,
// and the gate keeps its own (docs/STATISTICS.md "Run variance from trusted history").
inline constexpr double kVarianceCheckAlpha = 0.05;

struct TwoLevelEstimate {
  int base_runs = 0, head_runs = 0;
  double log_ratio = 0.0;  // mean of head run means - mean of base run means (log tpot)
  double ratio = 1.0;      // exp(log_ratio): head/base ratio of geometric means of runs
  // The variance components (log scale, about the relative sd), ANOVA method of moments.
  double rep_sd = 0.0;  // within a run
  double run_sd = 0.0;  // between runs, beyond what repetitions explain; 0 if not estimable
  // Student t on run means with the run-mean variance pooled over both sides:
  // df = base_runs + head_runs - 2. Defined only when df >= 1 (see has_runs_test).
  double df = 0.0;
  double se = 0.0;  // standard error of log_ratio (run level when df >= 1, else within-run)
  std::optional<double> ci_low, ci_high;  // 95% (level) interval for the ratio, when df >= 1
  std::optional<double> p_slower, p_faster;
  bool has_runs_test() const { return df >= 1.0; }
  // Where the run-mean variance of the test came from: "runs" (this gate's runs, df = runs - 2),
  // "pooled" (with trusted history: df = the gate's + the history's) or "history" (one run a
  // side: the history's run-mean variance, raised by this gate's excess within-run variance,
  // df = the history's).
  // gate_df and history_df are the shares; variance_check_p the F check's one-sided p (runs of
  // its own only); variance_note says why history that was offered was not used.
  std::string variance = "runs";
  double gate_df = 0.0, history_df = 0.0;
  int history_runs = 0, history_commits = 0;
  std::optional<double> variance_check_p;
  std::string variance_note;
};

// Needs at least one run with at least one repetition on each side; all values > 0. With
// `history`, its run-mean variance joins this gate's unless an F check finds this gate's larger,
// and provided that
// every run of both sides has the history's number of repetitions (docs/STATISTICS.md "Run
// variance from trusted history").
std::optional<TwoLevelEstimate> two_level(const RunGroups& base, const RunGroups& head,
                                          double level = 0.95,
                                          const RunVariance* history = nullptr);

// Minimum detectable effect: the smallest relative slowdown (head/base - 1) that a one-sided test
// at level `alpha` detects with probability `power`, for an estimate with standard error `se` on
// the log scale and t degrees of freedom `df` (df < 1: a normal test with known variance).
// Exact for the t test, by the noncentral t distribution.
double minimum_detectable_effect(double se, double df, double alpha, double power = 0.95);

// Power of the one-sided t test at level `alpha` with `df` degrees of freedom when the true shift
// is `shift` standard errors (the noncentral t's upper tail beyond the critical value).
double t_test_power(double shift, double df, double alpha);

}  // namespace pg::stats
