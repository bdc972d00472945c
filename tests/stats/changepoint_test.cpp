// E-Divisive change points on synthetic series with known steps, spikes, drift and pure noise.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <random>

#include "stats/changepoint.h"
#include "stats/random.h"

namespace pg {
namespace {

// Gaussian noise of sd `sd` around the piecewise-constant levels (level i for `len` points).
std::vector<double> steps(const std::vector<std::pair<double, int>>& levels, double sd,
                          uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::vector<double> v;
  for (const auto& [level, len] : levels)
    for (int i = 0; i < len; ++i) v.push_back(level + sd * stats::standard_normal(gen));
  return v;
}

TEST(ChangePoint, CleanStepIsFoundAtItsIndex) {
  int with_extra = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const auto v = steps({{10.0, 30}, {11.0, 30}}, 0.2, seed);
    const auto cps = stats::detect_change_points(v, {.seed = seed});
    const stats::ChangePoint* at_step = nullptr;
    for (const stats::ChangePoint& cp : cps)
      if (cp.index + 1 >= 30 && cp.index <= 31) at_step = &cp;
    ASSERT_NE(at_step, nullptr) << "seed " << seed;
    EXPECT_NEAR(at_step->before, 10.0, 0.2);
    EXPECT_NEAR(at_step->after, 11.0, 0.2);
    EXPECT_LE(at_step->p_value, 0.01);
    // Each half is tested again at 1%: an extra (false) split in ~2% of series is expected.
    with_extra += cps.size() > 1;
  }
  EXPECT_LE(with_extra, 2);
}

// Regression (web report): a 30% step at index 18 of 24 points at ~1% CV was reported at 15. On
// ranks a perfectly separated step carries no magnitude, so a split a few points earlier, where
// the low segment's last values happen to be its largest, scored as high or higher. Every clean
// step, at every index min_segment allows and in series of 12..60 points, must land exactly.
TEST(ChangePoint, CleanStepIsLocatedExactlyAtAnyIndexAndLength) {
  int cases = 0, found = 0;
  for (int n = 12; n <= 60; n += 6) {
    for (int at = 3; at <= n - 3; ++at) {
      for (uint64_t seed = 1; seed <= 4; ++seed) {
        const auto v = steps({{100.0, at}, {130.0, n - at}}, 1.0, seed * 104729 + n * 61 + at);
        const auto cps = stats::detect_change_points(v, {.min_segment = 3, .seed = seed});
        ++cases;
        if (cps.empty()) continue;  // too short to be significant; never a wrong place, below
        ++found;
        const stats::ChangePoint* nearest = &cps[0];
        for (const stats::ChangePoint& cp : cps)
          if (std::abs(int(cp.index) - at) < std::abs(int(nearest->index) - at)) nearest = &cp;
        EXPECT_EQ(nearest->index, size_t(at)) << "n " << n << " step at " << at << " seed " << seed;
        EXPECT_NEAR(nearest->before, 100.0, 3.0);
        EXPECT_NEAR(nearest->after, 130.0, 3.0);
      }
    }
  }
  // 3 vs 9 points cannot reach p <= 0.01 by permutation, longer series always should.
  EXPECT_GE(found, cases * 9 / 10) << "of " << cases;
}

TEST(ChangePoint, ReportedStepAt18Of24) {  // the exact report, at several noise seeds
  int extra = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const auto v = steps({{50.0, 18}, {65.0, 6}}, 0.5, seed);
    const auto cps = stats::detect_change_points(v, {.min_segment = 3, .seed = seed});
    ASSERT_FALSE(cps.empty()) << "seed " << seed;
    bool at_step = false;
    for (const stats::ChangePoint& cp : cps) {
      at_step |= cp.index == 18;
      EXPECT_FALSE(cp.index >= 14 && cp.index <= 21 && cp.index != 18) << "seed " << seed;
    }
    EXPECT_TRUE(at_step) << "seed " << seed;
    // The 18 low points are tested again at 1% (p 0.01 is the least significant with 199
    // permutations): an extra, far split in one of 30 series is that test's false positive rate.
    extra += cps.size() > 1;
  }
  EXPECT_LE(extra, 2);
}

TEST(ChangePoint, SpikeBesideAStepDoesNotMoveIt) {
  // The split is located on raw values; a 100-sigma spike must not pull it (energy distance with
  // exponent 1 counts an outlier equally in the between and within sums).
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    // Within two points before an upward step an upward spike reads as "already high" (so would
    // any point above the new level) and may start the segment early: documented, not tested.
    for (int spike : {0, 15, 16, 17, 20, 39}) {
      auto v = steps({{10.0, 18}, {12.0, 22}}, 0.2, seed);
      v[spike] += spike == 16 || spike == 17 ? -20.0 : 20.0;
      const auto cps = stats::detect_change_points(v, {.seed = seed});
      ASSERT_FALSE(cps.empty()) << "seed " << seed << " spike " << spike;
      bool at_step = false;
      for (const stats::ChangePoint& cp : cps) at_step |= cp.index == 18;
      EXPECT_TRUE(at_step) << "seed " << seed << " spike " << spike;
    }
  }
}

TEST(ChangePoint, TwoStepsAreBothFound) {
  const auto v = steps({{10.0, 40}, {12.0, 40}, {9.0, 40}}, 0.3, 11);
  const auto cps = stats::detect_change_points(v, {.seed = 3});
  ASSERT_EQ(cps.size(), 2u);
  EXPECT_NEAR(double(cps[0].index), 40.0, 1.0);
  EXPECT_NEAR(double(cps[1].index), 80.0, 1.0);
  EXPECT_NEAR(cps[1].before, 12.0, 0.3);  // segment medians between neighbouring change points
  EXPECT_NEAR(cps[1].after, 9.0, 0.3);
}

TEST(ChangePoint, SingleSpikeIsNeverAChangePoint) {
  // 700 noise series, each with one 100-sigma outlier at the start, middle or end. Noise alone
  // gives a false change point in ~1% of series (the permutation test's alpha); the spike must
  // neither add to that nor attract the split. Measured: 1.0-1.5% of series, ~0.1% at the spike.
  int series = 0, with_change = 0, at_spike = 0;
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    for (size_t at : {0, 1, 2, 30, 57, 58, 59}) {
      auto v = steps({{10.0, 60}}, 0.2, seed * 7919);
      v[at] = 30.0;
      const auto cps = stats::detect_change_points(v, {.seed = seed});
      ++series;
      with_change += !cps.empty();
      for (const stats::ChangePoint& cp : cps) at_spike += cp.index == at || cp.index == at + 1;
    }
  }
  EXPECT_LE(with_change, 17) << "of " << series;  // 2.5%
  EXPECT_LE(at_spike, 3) << "of " << series;
}

TEST(ChangePoint, MinimumSegmentKeepsShortEdgesOut) {
  // A shift of the last two points only: with min_segment 3 no split may isolate them.
  auto v = steps({{10.0, 40}, {14.0, 2}}, 0.1, 5);
  for (const stats::ChangePoint& cp :
       stats::detect_change_points(v, {.min_segment = 3, .seed = 1})) {
    EXPECT_GE(cp.index, 3u);
    EXPECT_LE(cp.index, v.size() - 3);
  }
}

TEST(ChangePoint, LinearDriftBecomesAStaircaseOnlyWhenItOutgrowsTheNoise) {
  // Documented behaviour (docs/STATISTICS.md): a drift is a real change, so E-Divisive cuts it
  // into steps, one about every time the accumulated drift reaches 2-3 noise sd. 10 -> 12 over
  // 100 commits at sd 0.1 (20 sd in all) gave 5-9 change points over 200 seeds, every one upward;
  // a drift of 1 sd in all gave 0 (65%) or 1 (35%).
  auto drift = [](double total, uint64_t seed) {
    std::mt19937_64 gen(seed);
    std::vector<double> v;
    for (int i = 0; i < 100; ++i)
      v.push_back(10.0 + total * i / 100.0 + 0.1 * stats::standard_normal(gen));
    return v;
  };
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    const auto cps = stats::detect_change_points(drift(2.0, seed), {.seed = seed});
    EXPECT_GE(cps.size(), 4u);
    EXPECT_LE(cps.size(), 10u);
    for (const stats::ChangePoint& cp : cps) EXPECT_LT(cp.before, cp.after);  // every step goes up
    EXPECT_LE(stats::detect_change_points(drift(0.1, seed), {.seed = seed}).size(), 1u);
  }
}

TEST(ChangePoint, PureNoiseRarelyGivesAnyChangePoint) {
  int with_change = 0;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const auto v = steps({{5.0, 100}}, 1.0, 1000 + seed);
    with_change += !stats::detect_change_points(v, {.alpha = 0.01, .seed = seed}).empty();
  }
  // Each series is one test at 1% (further splits only after a first rejection): expect ~0.5.
  EXPECT_LE(with_change, 3) << "series with a false change point out of 50";
}

TEST(ChangePoint, ConstantAndShortSeriesHaveNone) {
  EXPECT_TRUE(stats::detect_change_points(std::vector<double>(50, 3.0)).empty());
  EXPECT_TRUE(
      stats::detect_change_points({1.0, 2.0, 10.0, 11.0, 12.0}).empty());  // < 2 * min_segment
  EXPECT_TRUE(stats::detect_change_points({}).empty());
  EXPECT_THROW(stats::detect_change_points({1.0, NAN, 2.0}), std::invalid_argument);
}

TEST(ChangePoint, SameSeedSameAnswer) {
  const auto v = steps({{1.0, 25}, {1.3, 25}, {1.1, 25}}, 0.1, 9);
  const auto a = stats::detect_change_points(v, {.seed = 17});
  const auto b = stats::detect_change_points(v, {.seed = 17});
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].index, b[i].index);
    EXPECT_EQ(a[i].p_value, b[i].p_value);
  }
}

TEST(ChangePoint, ThousandPointsStayFast) {
  const auto v = steps({{10.0, 400}, {10.5, 300}, {10.2, 300}}, 0.2, 2);
  const auto start = std::chrono::steady_clock::now();
  const auto cps = stats::detect_change_points(v, {.seed = 2});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(cps.size(), 2u);
  // Well under a second on one core; the bound leaves room for a loaded CI machine.
  EXPECT_LT(s, 2.0) << s << " s";
  RecordProperty("seconds", std::to_string(s));
}

}  // namespace
}  // namespace pg
