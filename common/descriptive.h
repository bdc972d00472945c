// Descriptive statistics every layer needs -- the runner's derived metrics, the gate, change
// points, the trend's spread and `perfgate changes` -- defined once. Header-only and free of
// dependencies, so that runner/lm (LibTorch, no fmt), store/, stats/ and web/ may all include it.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace pg {

// Median: the middle value, or the mean of the two middle values for an even count. Empty: NaN.
inline double median(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  const double lower = *std::max_element(v.begin(), v.begin() + mid);
  return (lower + upper) / 2.0;
}

// Quantile of already-sorted values by linear interpolation between order statistics
// (Hyndman & Fan 1996 type 7, numpy's default). q in [0, 1], clamped. Empty: NaN.
inline double sorted_quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double h = (static_cast<double>(sorted.size()) - 1.0) * std::clamp(q, 0.0, 1.0);
  const size_t lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

// The same quantile of values in any order.
inline double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return sorted_quantile(v, q);
}

// Arithmetic mean of a non-empty list (empty: NaN), and the sum of squared deviations from
// `mean`: the two parts of a sample variance, as the t tests use them.
inline double mean_of(const std::vector<double>& v) {
  double m = 0.0;
  for (double x : v) m += x;
  return m / static_cast<double>(v.size());
}

inline double sum_sq_dev(const std::vector<double>& v, double mean) {
  double ss = 0.0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return ss;
}

}  // namespace pg
