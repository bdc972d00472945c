// Two-level statistics of one cell (Kalibera & Jones, "Rigorous Benchmarking in Reasonable Time",
// ISMM 2013): runs are the replication unit, repetitions are nested in runs. On the log scale,
// log tpot[i][j] = mu_side + r_i + e_ij with a run effect r_i ~ (0, sigma_run^2) and a repetition
// effect e_ij ~ (0, sigma_rep^2). docs/STATISTICS.md "Two levels" derives every formula here.
#pragma once
#include <optional>
#include <vector>

namespace pg::stats {

// tpot of every repetition, grouped by run (one inner vector per run that gave samples).
using RunGroups = std::vector<std::vector<double>>;

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
};

// Needs at least one run with at least one repetition on each side; all values > 0.
std::optional<TwoLevelEstimate> two_level(const RunGroups& base, const RunGroups& head,
                                          double level = 0.95);

// Minimum detectable effect: the smallest relative slowdown (head/base - 1) that a one-sided test
// at level `alpha` detects with probability `power`, for an estimate with standard error `se` on
// the log scale and t degrees of freedom `df` (df < 1: a normal test with known variance).
// Exact for the t test, by the noncentral t distribution.
double minimum_detectable_effect(double se, double df, double alpha, double power = 0.95);

// Power of the one-sided t test at level `alpha` with `df` degrees of freedom when the true shift
// is `shift` standard errors (the noncentral t's upper tail beyond the critical value).
double t_test_power(double shift, double df, double alpha);

}  // namespace pg::stats
