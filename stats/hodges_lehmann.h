// Hodges-Lehmann two-sample shift estimate and its distribution-free confidence interval.
//
// The shift of y relative to x is the median of the n1 * n2 differences y_j - x_i (Hodges &
// Lehmann 1963). Its interval is bounded by order statistics of the same differences, chosen from
// the Mann-Whitney null distribution (Bauer 1972; Hollander & Wolfe, Nonparametric Statistical
// Methods, 2nd ed., sec. 4.3): [D_(C), D_(N+1-C)] with N = n1 n2 and C = N + 1 - u, u the upper
// (1-level)/2 critical value of U. The interval therefore excludes 0 exactly when the matching
// one-sided Mann-Whitney test rejects at (1-level)/2, and its coverage is at least `level` for
// any continuous distribution under the shift model.
#pragma once
#include <optional>
#include <vector>

namespace pg::stats {

struct ShiftEstimate {
  double estimate = 0.0;
  std::optional<double> low, high;  // absent when the samples are too small for `level`
  double level = 0.95;
};

// Shift of y relative to x (y - x).
ShiftEstimate hodges_lehmann_shift(const std::vector<double>& x, const std::vector<double>& y,
                                   double level = 0.95);

// The same on the log scale, exponentiated: the ratio y / x under a scale model (what a slowdown
// by a factor is). All values must be > 0 (std::invalid_argument otherwise).
ShiftEstimate hodges_lehmann_ratio(const std::vector<double>& x, const std::vector<double>& y,
                                   double level = 0.95);

}  // namespace pg::stats
