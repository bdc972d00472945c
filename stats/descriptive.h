// Order statistics shared by the gate, the intervals and change-point summaries.
#pragma once
#include <vector>

namespace pg::stats {

// Median (mean of the two middle values for an even count). Empty input: NaN.
double median(std::vector<double> values);

// Quantile of already-sorted values by linear interpolation between order statistics
// (Hyndman & Fan 1996 type 7, numpy's default). q in [0, 1].
double sorted_quantile(const std::vector<double>& sorted, double q);

}  // namespace pg::stats
