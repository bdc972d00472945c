// Exact (Clopper-Pearson) confidence intervals for a binomial proportion, for the false-alarm and
// detection rates of simulated and real gates (perfgate-sim, docs/STATISTICS.md).
#pragma once
#include <utility>

namespace pg::stats {

// The quantile of the Beta(a, b) distribution: x with I_x(a, b) = p (a, b > 0, 0 < p < 1).
double beta_quantile(double p, double a, double b);

// Two-sided interval at `level` for k successes in n trials: the Beta quantiles of Clopper and
// Pearson (1934); 0 and 1 at k = 0 and k = n. It covers with at least `level` for every p.
std::pair<double, double> clopper_pearson(int k, int n, double level = 0.95);

}  // namespace pg::stats
