#include "stats/student_t.h"

#include <cmath>
#include <limits>

#include "common/errors.h"

namespace pg::stats {
namespace {

// Continued fraction of I_x(a, b) by the modified Lentz method (Numerical Recipes 6.4).
double beta_continued_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300, kEps = 1e-16;
  const double qab = a + b, qap = a + 1.0, qam = a - 1.0;
  double c = 1.0, d = 1.0 - qab * x / qap;
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m <= 10000; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1.0 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1.0 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1.0) < kEps) break;
  }
  return h;
}

}  // namespace

double incomplete_beta(double a, double b, double x) {
  if (!(a > 0 && b > 0) || !(x >= 0 && x <= 1)) throw UsageError("incomplete_beta: bad argument");
  if (x == 0.0 || x == 1.0) return x;
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  // The continued fraction converges fast for x < (a+1)/(a+b+2); use the symmetry otherwise.
  if (x < (a + 1.0) / (a + b + 2.0))
    return std::exp(log_front) * beta_continued_fraction(a, b, x) / a;
  return 1.0 - std::exp(log_front) * beta_continued_fraction(b, a, 1.0 - x) / b;
}

double student_t_sf(double t, double df) {
  if (!(df > 0)) throw UsageError("student_t_sf: df must be > 0");
  if (std::isnan(t)) return std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(t)) return t > 0 ? 0.0 : 1.0;
  // P(|T| > |t|) = I_{df/(df+t^2)}(df/2, 1/2); written with t^2/(df+t^2) near 0 for accuracy.
  const double t2 = t * t;
  const double tail2 = t2 < df ? 1.0 - incomplete_beta(0.5, df / 2.0, t2 / (df + t2))
                               : incomplete_beta(df / 2.0, 0.5, df / (df + t2));
  return t > 0 ? 0.5 * tail2 : 1.0 - 0.5 * tail2;
}

double f_cdf(double f, double d1, double d2) {
  if (!(d1 > 0 && d2 > 0)) throw UsageError("f_cdf: degrees of freedom must be > 0");
  if (std::isnan(f)) return std::numeric_limits<double>::quiet_NaN();
  if (f <= 0.0) return 0.0;
  if (std::isinf(f)) return 1.0;
  // P(F <= f) = I_{d1 f / (d1 f + d2)}(d1/2, d2/2); the complement's form where x is near 1.
  const double x = d1 * f / (d1 * f + d2);
  return x < 0.5 ? incomplete_beta(d1 / 2.0, d2 / 2.0, x)
                 : 1.0 - incomplete_beta(d2 / 2.0, d1 / 2.0, d2 / (d1 * f + d2));
}

double student_t_quantile(double p, double df) {
  if (!(p > 0 && p < 1)) throw UsageError("student_t_quantile: p must be in (0, 1)");
  if (p < 0.5) return -student_t_quantile(1.0 - p, df);
  if (p == 0.5) return 0.0;
  const double tail = 1.0 - p;
  double lo = 0.0, hi = 1.0;
  while (student_t_sf(hi, df) > tail) hi *= 2.0;
  // Bisection in t: the tail is monotone, and 200 halvings reach the double's resolution.
  for (int i = 0; i < 200 && hi - lo > 1e-15 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_sf(mid, df) > tail ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace pg::stats
