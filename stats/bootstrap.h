// Percentile bootstrap interval for the ratio of medians, median(y) / median(x).
//
// Each iteration resamples x and y independently with replacement (Efron & Tibshirani 1993,
// ch. 13). The draws come from std::mt19937_64 through our own uniform_index, so one seed gives
// the same interval on every platform and standard library.
#pragma once
#include <cstdint>
#include <optional>

#include <vector>

namespace pg::stats {

struct BootstrapOptions {
  int iterations = 2000;
  uint64_t seed = 0;
  double level = 0.95;
};

struct Interval {
  double low = 0.0, high = 0.0;
};

// Absent when either sample is empty or iterations < 1. Values must be > 0 for a ratio to mean
// anything (std::invalid_argument otherwise).
std::optional<Interval> bootstrap_ratio_of_medians(const std::vector<double>& x,
                                                   const std::vector<double>& y,
                                                   const BootstrapOptions& opt = {});

}  // namespace pg::stats
