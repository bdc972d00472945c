// Hodges-Lehmann estimate and interval, bootstrap interval, and the reproducible random draws.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "stats/bootstrap.h"
#include "stats/hodges_lehmann.h"
#include "stats/mann_whitney.h"
#include "stats/random.h"

namespace pg::stats {
namespace {

TEST(HodgesLehmann, HandComputedShiftAndInterval) {
  // y - x for x = {1,2,3}, y = {4,6,8}: 3 2 1 5 4 3 7 6 5 -> sorted 1 2 3 3 4 5 5 6 7, median 4.
  // 90% interval (Hollander & Wolfe 1999, sec. 4.3): C = N + 1 - u with u the upper 0.05
  // critical value of U for (3,3); P(U >= 9) = 1/20 = 0.05 (Mann & Whitney 1947, Table I), so
  // u = 9, C = 1 and the interval is [D(1), D(9)] = [1, 7].
  const ShiftEstimate s = hodges_lehmann_shift({1, 2, 3}, {4, 6, 8}, 0.90);
  EXPECT_DOUBLE_EQ(s.estimate, 4.0);
  ASSERT_TRUE(s.low && s.high);
  EXPECT_DOUBLE_EQ(*s.low, 1.0);
  EXPECT_DOUBLE_EQ(*s.high, 7.0);
  // At 95% no u has P(U >= u) <= 0.025 for 3 vs 3: no distribution-free interval exists.
  const ShiftEstimate none = hodges_lehmann_shift({1, 2, 3}, {4, 6, 8}, 0.95);
  EXPECT_FALSE(none.low.has_value());
  EXPECT_FALSE(none.high.has_value());
}

TEST(HodgesLehmann, RatioIsTheShiftOnTheLogScale) {
  // y/x for x = {1,2,4}, y = {2,4,8}: .5 1 1 2 2 2 4 4 8 -> median 2.
  const ShiftEstimate r = hodges_lehmann_ratio({1, 2, 4}, {2, 4, 8}, 0.90);
  EXPECT_NEAR(r.estimate, 2.0, 1e-12);
  ASSERT_TRUE(r.low && r.high);
  EXPECT_NEAR(*r.low, 0.5, 1e-12);
  EXPECT_NEAR(*r.high, 8.0, 1e-12);
  EXPECT_THROW(hodges_lehmann_ratio({1, 0}, {2, 3}), std::invalid_argument);
}

TEST(HodgesLehmann, IntervalExcludesZeroExactlyWhenTheTestRejects) {
  // Duality: the lower bound of the (1 - 2a) interval is > 0 iff the one-sided exact test of
  // "y greater" has p <= a (Bauer 1972). Checked over shifted samples of 8 vs 8.
  std::mt19937_64 gen(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<double> x(8), y(8);
    const double shift = 0.1 * (trial % 20);
    for (double& v : x) v = standard_normal(gen);
    for (double& v : y) v = standard_normal(gen) + shift;
    const ShiftEstimate s = hodges_lehmann_shift(x, y, 0.90);
    ASSERT_TRUE(s.low);
    int above = 0;  // U = #{y_j > x_i} = #{differences > 0}
    for (double xi : x)
      for (double yj : y) above += yj > xi;
    const bool rejects = mwu_exact_sf(8, 8, above) <= 0.05;
    EXPECT_EQ(*s.low > 0.0, rejects) << "trial " << trial;
  }
}

TEST(Random, EngineOutputIsFixedByTheStandard) {
  // C++ standard [rand.predef]: the 10000th invocation of a default-constructed mt19937_64
  // shall produce 9981545732273789042. Everything seeded here is derived from this engine.
  std::mt19937_64 gen;
  gen.discard(9999);
  EXPECT_EQ(gen(), 9981545732273789042ULL);
}

TEST(Random, UniformIndexIsInRangeAndUnbiased) {
  std::mt19937_64 gen(42);
  std::vector<int> counts(7, 0);
  for (int i = 0; i < 70000; ++i) ++counts[uniform_index(gen, 7)];
  for (int c : counts) EXPECT_NEAR(c, 10000, 550);  // 6 sigma of a binomial(70000, 1/7)
  EXPECT_EQ(uniform_index(gen, 1), 0u);
  // Pinned values: seeded intervals are reproducible across platforms only while these hold.
  std::mt19937_64 pinned(2024);
  const uint64_t a = uniform_index(pinned, 10), b = uniform_index(pinned, 1000);
  std::mt19937_64 raw(2024);
  EXPECT_EQ(a, raw() % 10);  // the rejection branch is taken with probability ~5e-19
  EXPECT_EQ(b, raw() % 1000);
}

TEST(Random, StandardNormalHasUnitMoments) {
  std::mt19937_64 gen(3);
  double sum = 0, sq = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double z = standard_normal(gen);
    sum += z;
    sq += z * z;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sq / n, 1.0, 0.01);
}

TEST(Bootstrap, SameSeedSameIntervalOtherSeedOther) {
  const std::vector<double> base = {10.1, 9.8, 10.3, 10.0, 9.9, 10.2, 10.4, 9.7, 10.05, 10.15};
  std::vector<double> head;
  for (double v : base) head.push_back(1.1 * v + 0.03);
  const auto a = bootstrap_ratio_of_medians(base, head, {2000, 99, 0.95});
  const auto b = bootstrap_ratio_of_medians(base, head, {2000, 99, 0.95});
  const auto c = bootstrap_ratio_of_medians(base, head, {2000, 100, 0.95});
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->low, b->low);
  EXPECT_EQ(a->high, b->high);
  EXPECT_TRUE(a->low != c->low || a->high != c->high);
  const double observed = 1.1 * 10.075 + 0.03;  // head median (10.075 scaled) ...
  EXPECT_LT(a->low, observed / 10.075);         // ... over base median 10.075
  EXPECT_GT(a->high, observed / 10.075);
  EXPECT_GT(a->low, 1.05);
  EXPECT_LT(a->high, 1.15);
}

TEST(Bootstrap, DegenerateSamplesGiveAPointInterval) {
  // Every resample of constant data has the same medians: the interval is the ratio itself.
  const auto r = bootstrap_ratio_of_medians({2, 2, 2}, {3, 3, 3, 3}, {500, 1, 0.95});
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(r->low, 1.5);
  EXPECT_DOUBLE_EQ(r->high, 1.5);
  EXPECT_FALSE(bootstrap_ratio_of_medians({}, {1}, {}));
  EXPECT_THROW(bootstrap_ratio_of_medians({-1, 2}, {1, 2}, {}), std::invalid_argument);
}

}  // namespace
}  // namespace pg::stats
