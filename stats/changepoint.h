// Change-point detection over one series (one value per commit, in history order).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace pg::stats {

struct ChangePointOptions {
  size_t min_segment = 3;  // a change needs this many points on each side: no single spikes
  double alpha = 0.01;     // significance of each split (permutation test)
  int permutations = 199;
  uint64_t seed = 0;
};

struct ChangePoint {
  size_t index = 0;     // first point of the new segment
  double before = 0.0;  // median of the segment before
  double after = 0.0;   // median of the segment after
  double p_value = 1.0;
};

std::vector<ChangePoint> detect_change_points(const std::vector<double>& values,
                                              const ChangePointOptions& opt = {});

}  // namespace pg::stats
