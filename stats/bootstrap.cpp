#include "stats/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "stats/descriptive.h"
#include "stats/random.h"

namespace pg::stats {
namespace {

double resampled_median(const std::vector<double>& v, std::vector<double>& scratch,
                        std::mt19937_64& gen) {
  scratch.resize(v.size());
  for (double& s : scratch) s = v[uniform_index(gen, v.size())];
  return median(scratch);
}

}  // namespace

std::optional<Interval> bootstrap_ratio_of_medians(const std::vector<double>& x,
                                                   const std::vector<double>& y,
                                                   const BootstrapOptions& opt) {
  if (x.empty() || y.empty() || opt.iterations < 1) return std::nullopt;
  if (!(opt.level > 0.0 && opt.level < 1.0))
    throw std::invalid_argument("bootstrap: level must be in (0, 1)");
  for (const auto* v : {&x, &y})
    for (double e : *v)
      if (!(e > 0.0) || !std::isfinite(e))
        throw std::invalid_argument("bootstrap_ratio_of_medians: values must be finite and > 0");
  std::mt19937_64 gen(opt.seed);
  std::vector<double> ratios, scratch;
  ratios.reserve(opt.iterations);
  for (int i = 0; i < opt.iterations; ++i) {
    const double mx = resampled_median(x, scratch, gen);  // x first, then y: part of the contract
    const double my = resampled_median(y, scratch, gen);
    ratios.push_back(my / mx);
  }
  std::sort(ratios.begin(), ratios.end());
  const double tail = (1.0 - opt.level) / 2.0;
  return Interval{sorted_quantile(ratios, tail), sorted_quantile(ratios, 1.0 - tail)};
}

}  // namespace pg::stats
