#include "stats/two_level.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <tuple>

#include "common/descriptive.h"
#include "stats/format.h"
#include "stats/normal.h"
#include "stats/student_t.h"

namespace pg::stats {
namespace {

struct Side {
  std::vector<double> run_means;  // mean of log tpot per run
  double within_ss = 0.0;         // sum over runs of squared deviations from the run mean
  int within_df = 0;
  double inv_n_sum = 0.0;  // sum over runs of 1/n_i (for the harmonic mean run size)
};

Side summarize(const RunGroups& runs) {
  Side s;
  for (const auto& reps : runs) {
    if (reps.empty()) continue;
    double mean = 0.0;
    for (double v : reps) mean += std::log(v);
    mean /= static_cast<double>(reps.size());
    for (double v : reps) s.within_ss += (std::log(v) - mean) * (std::log(v) - mean);
    s.within_df += static_cast<int>(reps.size()) - 1;
    s.inv_n_sum += 1.0 / static_cast<double>(reps.size());
    s.run_means.push_back(mean);
  }
  return s;
}

bool every_run_has(const RunGroups& runs, int reps) {
  for (const auto& r : runs)
    if (!r.empty() && static_cast<int>(r.size()) != reps) return false;
  return true;
}

// One-sided p of the F test that this gate's variance is no larger than the history's, from
// their ratio. Only a larger one makes borrowing unsafe (the pooled variance too small); a
// smaller one makes it conservative. A two-sided check would also fall back to the gate's own
// variance exactly when that is small by chance, and so raise false alarms (docs/STATISTICS.md).
double f_check_p(double ratio, double d1, double d2) { return 1.0 - f_cdf(ratio, d1, d2); }

// Joins the history's run-mean variance to this gate's (`s2` with `df`), or says in
// e.variance_note why not. With runs of its own the gate pools after a one-sided F check on the
// run-mean variances. With one run a side (df 0) nothing can check the run level: the history's
// run-mean variance s_h^2 (its runs have this gate's size, so it is Var(ybar) itself) is the
// variance, raised by what this gate's repetitions are noisier than the history's,
// max(msw - rep_var_h, 0) / n. Swapping the history's within-run part for the gate's instead
// (s_h^2 - rep_var_h / n + msw / n) trusted a difference of two noisy estimates: on a GPU whose
// first repetition of a run is often slower (a within-run effect that cancels in run means) it
// came out near 0, and quiet repetitions in the gate then made a 0.6% A/A difference
// "significant" (docs/STATISTICS.md). Falling back to the rank test, ignoring drift, raised false
// alarms too.
void join_history(TwoLevelEstimate& e, double& s2, double& df, const RunVariance& h, double msw,
                  bool sized) {
  if (!sized) {
    e.variance_note = "trusted history not used: its runs have " + std::to_string(h.reps) +
                      " repetitions, not every run of this gate does";
    return;
  }
  if (df >= 1.0) {
    if (s2 > 0.0 || h.run_mean_var > 0.0) {
      const double p = h.run_mean_var > 0.0 ? f_check_p(s2 / h.run_mean_var, df, h.df) : 0.0;
      e.variance_check_p = p;
      if (p < kVarianceCheckAlpha) {
        e.variance_note = "trusted history not used: this gate's run-to-run variance is " +
                          (h.run_mean_var > 0.0 ? fmt_g(s2 / h.run_mean_var) + " times" : "above") +
                          " the history's (F check p = " + fmt_g(p) + ")";
        return;
      }
    }
    s2 = (df * s2 + h.df * h.run_mean_var) / (df + h.df);
    e.variance = "pooled";
  } else {
    const double n = h.reps;
    s2 = h.run_mean_var + std::max(msw - h.rep_var, 0.0) / n;
    e.variance = "history";
  }
  df += h.df;
  e.history_df = h.df;
  e.history_runs = h.runs;
  e.history_commits = h.commits;
}

}  // namespace

std::optional<TwoLevelEstimate> two_level(const RunGroups& base, const RunGroups& head,
                                          double level, const RunVariance* history) {
  const Side b = summarize(base), h = summarize(head);
  if (b.run_means.empty() || h.run_means.empty()) return std::nullopt;
  TwoLevelEstimate e;
  e.base_runs = static_cast<int>(b.run_means.size());
  e.head_runs = static_cast<int>(h.run_means.size());
  const double mb = mean_of(b.run_means), mh = mean_of(h.run_means);
  e.log_ratio = mh - mb;
  e.ratio = std::exp(e.log_ratio);

  // Within-run variance, pooled over every run of both sides (mean square within).
  const int within_df = b.within_df + h.within_df;
  const double msw = within_df > 0 ? (b.within_ss + h.within_ss) / within_df : 0.0;
  e.rep_sd = std::sqrt(msw);
  const int runs = e.base_runs + e.head_runs;
  const double inv_n = (b.inv_n_sum + h.inv_n_sum) / runs;  // 1 / harmonic mean run size
  const double inv_k = 1.0 / e.base_runs + 1.0 / e.head_runs;

  // Variance of one run mean, sigma_run^2 + sigma_rep^2 / n, pooled over both sides; then, with
  // trusted history, pooled with the history's.
  double df = std::max(0, runs - 2), s2 = 0.0;
  if (df >= 1.0) s2 = (sum_sq_dev(b.run_means, mb) + sum_sq_dev(h.run_means, mh)) / df;
  e.gate_df = df;
  if (history)
    join_history(e, s2, df, *history, msw,
                 every_run_has(base, history->reps) && every_run_has(head, history->reps));
  e.df = df;
  if (e.has_runs_test()) {
    e.run_sd = std::sqrt(std::max(0.0, s2 - msw * inv_n));
    e.se = std::sqrt(s2 * inv_k);
    if (e.se > 0.0) {
      const double t = e.log_ratio / e.se;
      e.p_slower = student_t_sf(t, e.df);
      e.p_faster = student_t_sf(-t, e.df);
    } else {  // every run mean equal on both sides: no evidence either way unless they differ
      e.p_slower = e.log_ratio > 0 ? 0.0 : 1.0;
      e.p_faster = e.log_ratio < 0 ? 0.0 : 1.0;
    }
    const double q = student_t_quantile(0.5 + level / 2.0, e.df);
    e.ci_low = std::exp(e.log_ratio - q * e.se);
    e.ci_high = std::exp(e.log_ratio + q * e.se);
  } else {
    // One run per side: the run effect cannot be estimated. The standard error assumes it is 0,
    // i.e. that repetitions are independent (the gate says so in a warning).
    e.df = 0.0;
    e.se = std::sqrt(msw * inv_n * inv_k);
  }
  return e;
}

namespace {

double power_beyond(double crit, double shift, double df) {
  // T' = (Z + shift) / sqrt(V / df) with V ~ chi-square(df): power = E_V[P(Z > crit sqrt(V/df) -
  // shift)]. Integrated over u = sqrt(V), whose density 2u f(u^2) stays finite at 0 even for
  // df = 1, by Simpson's rule on a grid far into the tail. The normal tail steps from 1 to 0
  // around u* = shift sqrt(df) / crit over a width of about sqrt(df) / crit, which at df 1 and
  // alpha / 12 (crit 382) is far below one grid step: that window gets a grid of its own.
  const double u_max = std::sqrt(df + 40.0 * std::sqrt(2.0 * df) + 60.0);
  const double log_norm = -(df / 2.0) * std::log(2.0) - std::lgamma(df / 2.0);
  auto f = [&](double u) {
    // At u = 0 the density is 0 for df > 1 and its limit 2 exp(log_norm) for df = 1 (taking it
    // as 0 there cost 1e-3 of power at df 1 and alpha / 12).
    if (u <= 0.0) return df == 1.0 ? 2.0 * std::exp(log_norm) * normal_sf(-shift) : 0.0;
    const double v = u * u;
    const double density = 2.0 * u * std::exp(log_norm + (df / 2.0 - 1.0) * std::log(v) - v / 2.0);
    return density * normal_sf(crit * std::sqrt(v / df) - shift);
  };
  auto simpson = [&](double a, double b) {
    const int n = 600;  // even; the integrand is smooth, so Simpson's error is far below 1e-9
    if (!(b > a)) return 0.0;
    const double h = (b - a) / n;
    double sum = 0.0;
    for (int i = 0; i <= n; ++i)
      sum += f(a + i * h) * (i == 0 || i == n ? 1.0 : (i % 2 ? 4.0 : 2.0));
    return sum * h / 3.0;
  };
  const double step = std::sqrt(df) / std::max(crit, 1e-300);
  const double center = shift * step, half = 12.0 * step;
  const double a = std::clamp(center - half, 0.0, u_max), b = std::clamp(center + half, 0.0, u_max);
  return simpson(0.0, a) + simpson(a, b) + simpson(b, u_max);
}

// Shift, in standard errors, at which the one-sided t test has `power`: bracketed by the
// normal-quantile approximation, then bisected on the exact power. It depends on nothing else,
// so it is cached (a gate asks for a handful of distinct df).
double detectable_shift(double df, double alpha, double power) {
  thread_local std::map<std::tuple<double, double, double>, double> cache;
  const auto key = std::make_tuple(df, alpha, power);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  const double crit = student_t_quantile(1.0 - alpha, df);
  double lo = 0.0, hi = crit + student_t_quantile(power, df);
  while (power_beyond(crit, hi, df) < power) hi *= 2.0;
  for (int i = 0; i < 60 && hi - lo > 1e-10 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (power_beyond(crit, mid, df) < power ? lo : hi) = mid;
  }
  if (cache.size() > 4096) cache.clear();
  return cache[key] = 0.5 * (lo + hi);
}

}  // namespace

double t_test_power(double shift, double df, double alpha) {
  return power_beyond(student_t_quantile(1.0 - alpha, df), shift, df);
}

double minimum_detectable_effect(double se, double df, double alpha, double power) {
  if (!(se >= 0.0) || !std::isfinite(se)) return std::numeric_limits<double>::infinity();
  if (df < 1.0) return std::expm1((normal_quantile(1.0 - alpha) + normal_quantile(power)) * se);
  return std::expm1(detectable_shift(df, alpha, power) * se);
}

}  // namespace pg::stats
