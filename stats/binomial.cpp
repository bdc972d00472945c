#include "stats/binomial.h"

#include "common/errors.h"
#include "stats/student_t.h"

namespace pg::stats {

double beta_quantile(double p, double a, double b) {
  if (!(p > 0.0 && p < 1.0) || !(a > 0.0 && b > 0.0))
    throw UsageError("beta_quantile: p must be in (0, 1) and a, b > 0");
  double lo = 0.0, hi = 1.0;
  // Bisection on the regularized incomplete beta, monotone in x: 200 halvings reach the double's
  // resolution (and below 1e-300 near 0, where a tiny k / n quantile lives).
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (mid == lo || mid == hi) break;
    (incomplete_beta(a, b, mid) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

std::pair<double, double> clopper_pearson(int k, int n, double level) {
  if (n <= 0 || k < 0 || k > n || !(level > 0.0 && level < 1.0))
    throw UsageError("clopper_pearson: needs 0 <= k <= n, n > 0 and level in (0, 1)");
  const double tail = (1.0 - level) / 2.0;
  const double lo = k == 0 ? 0.0 : beta_quantile(tail, k, n - k + 1);
  const double hi = k == n ? 1.0 : beta_quantile(1.0 - tail, k + 1, n - k);
  return {lo, hi};
}

}  // namespace pg::stats
