// Student's t distribution: upper tail and quantile, for the two-level test on run means
// (docs/STATISTICS.md "Two levels: runs and repetitions"). Accurate far into the tails, so that
// Holm-adjusted p-values of 1e-9 are still exact enough to compare.
#pragma once

namespace pg::stats {

// Regularized incomplete beta I_x(a, b), a, b > 0, 0 <= x <= 1.
double incomplete_beta(double a, double b, double x);

double student_t_sf(double t, double df);        // P(T > t), df > 0
double student_t_quantile(double p, double df);  // t with P(T <= t) = p, 0 < p < 1

// Snedecor's F with (d1, d2) degrees of freedom, P(F <= f), f >= 0, d1, d2 > 0: the check that a
// gate's run-to-run variance agrees with the one of its trusted history (stats/run_history.h).
double f_cdf(double f, double d1, double d2);

}  // namespace pg::stats
