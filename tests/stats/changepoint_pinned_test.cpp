// Pins detect_change_points' answers (index, medians, p-value) on a fixed set of series, so a
// speed-up of the search (serve computes it for every series at start) cannot change a single one.
// The digest was taken from the implementation before its buffers were reused across permutations.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>

#include "stats/changepoint.h"
#include "stats/random.h"

namespace pg {
namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}
uint64_t bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

// 300 series: noise, one or two steps, spikes, ties (rounded values), lengths 6..400.
uint64_t digest_of_answers(size_t* found) {
  uint64_t h = 0;
  *found = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    std::mt19937_64 gen(seed);
    const size_t n = 6 + stats::uniform_index(gen, 395);
    const size_t at = stats::uniform_index(gen, n);
    const double step = (seed % 3) * 0.15;
    std::vector<double> v;
    for (size_t i = 0; i < n; ++i) {
      double x = 10.0 * (1.0 + (i >= at ? step : 0.0)) + stats::standard_normal(gen) * 0.3;
      if (seed % 7 == 0 && i % 50 == 17) x += 40.0;                // spikes
      if (seed % 5 == 0) x = static_cast<double>(std::lround(x));  // ties
      if (seed % 11 == 0 && i > n / 2) x *= 0.8;                   // a second step
      v.push_back(x);
    }
    for (const stats::ChangePoint& cp : stats::detect_change_points(v, {.seed = seed})) {
      ++*found;
      h = mix(mix(mix(mix(h, cp.index), bits(cp.before)), bits(cp.after)), bits(cp.p_value));
    }
    h = mix(h, n);
  }
  return h;
}

TEST(ChangePoint, AnswersArePinned) {
  size_t found = 0;
  const uint64_t h = digest_of_answers(&found);
  EXPECT_EQ(found, 216u);
  EXPECT_EQ(h, 5830077566610000089ull) << std::hex << h;
}

}  // namespace
}  // namespace pg
