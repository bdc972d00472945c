// The standard normal distribution: tail probability and quantile, accurate far into the tails
// (p-values of 1e-12 must not round to 0).
#pragma once

namespace pg::stats {

double normal_sf(double z);        // P(Z > z)
double normal_quantile(double p);  // z with P(Z <= z) = p, 0 < p < 1

}  // namespace pg::stats
