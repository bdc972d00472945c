#include "stats/hodges_lehmann.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "stats/descriptive.h"
#include "stats/mann_whitney.h"

namespace pg::stats {

ShiftEstimate hodges_lehmann_shift(const std::vector<double>& x, const std::vector<double>& y,
                                   double level) {
  if (x.empty() || y.empty()) throw std::invalid_argument("hodges_lehmann: empty sample");
  if (!(level > 0.0 && level < 1.0)) throw std::invalid_argument("hodges_lehmann: level in (0,1)");
  std::vector<double> d;
  d.reserve(x.size() * y.size());
  for (double xi : x)
    for (double yj : y) d.push_back(yj - xi);
  std::sort(d.begin(), d.end());
  ShiftEstimate r;
  r.level = level;
  r.estimate = sorted_quantile(d, 0.5);  // median of the differences
  const int64_t n = static_cast<int64_t>(d.size());
  const int64_t u = mwu_upper_critical_value(static_cast<int>(x.size()), static_cast<int>(y.size()),
                                             (1.0 - level) / 2.0);
  const int64_t c = n + 1 - u;  // 1-based rank of the lower bound
  if (c >= 1 && c <= n + 1 - c) {
    r.low = d[c - 1];
    r.high = d[n - c];  // rank N + 1 - C
  }
  return r;
}

ShiftEstimate hodges_lehmann_ratio(const std::vector<double>& x, const std::vector<double>& y,
                                   double level) {
  auto logs = [](const std::vector<double>& v) {
    std::vector<double> out;
    out.reserve(v.size());
    for (double e : v) {
      if (!(e > 0.0) || !std::isfinite(e))
        throw std::invalid_argument("hodges_lehmann_ratio: values must be finite and > 0");
      out.push_back(std::log(e));
    }
    return out;
  };
  ShiftEstimate r = hodges_lehmann_shift(logs(x), logs(y), level);
  r.estimate = std::exp(r.estimate);
  if (r.low) r.low = std::exp(*r.low);
  if (r.high) r.high = std::exp(*r.high);
  return r;
}

}  // namespace pg::stats
