// Mann-Whitney U against published tables and hand counts (scipy comparisons: test_scipy_refs).
#include <gtest/gtest.h>

#include <stdexcept>

#include "stats/mann_whitney.h"

namespace pg::stats {
namespace {

// Lower critical value: largest u with P(U <= u) <= tail, i.e. n1 n2 - upper critical value.
int64_t lower_critical(int n1, int n2, double tail) {
  return int64_t{n1} * n2 - mwu_upper_critical_value(n1, n2, tail);
}

TEST(MannWhitney, NullDistributionMatchesMannWhitney1947TableI) {
  // Mann & Whitney (1947), Ann. Math. Statist. 18(1), Table I, n = m = 3:
  // P(U <= u) = .050 .100 .200 .350 .500 for u = 0..4. By symmetry P(U <= u) = P(U >= 9 - u).
  const double table[] = {0.05, 0.10, 0.20, 0.35, 0.50};
  for (int u = 0; u <= 4; ++u) EXPECT_NEAR(mwu_exact_sf(3, 3, 9 - u), table[u], 1e-15) << u;
  EXPECT_DOUBLE_EQ(mwu_exact_sf(3, 3, 0), 1.0);
  EXPECT_DOUBLE_EQ(mwu_exact_sf(3, 3, 10), 0.0);
}

TEST(MannWhitney, CriticalValuesMatchPublishedTables) {
  // The classic table of critical values of U (e.g. Siegel & Castellan, Nonparametric Statistics
  // for the Behavioral Sciences, 2nd ed. 1988, Table J; reproduced in most introductory texts):
  // n1 = n2 = 10: one-tailed .05 -> 27, .01 -> 19; two-tailed .05 -> 23, .01 -> 16.
  // n1 = n2 = 5: one-tailed .05 -> 4, two-tailed .05 -> 2. n1 = n2 = 20: two-tailed .05 -> 127.
  // n1 = 8, n2 = 12: two-tailed .05 -> 22. (Re-derived with scipy's exact _MWU distribution.)
  EXPECT_EQ(lower_critical(10, 10, 0.05), 27);
  EXPECT_EQ(lower_critical(10, 10, 0.01), 19);
  EXPECT_EQ(lower_critical(10, 10, 0.025), 23);
  EXPECT_EQ(lower_critical(10, 10, 0.005), 16);
  EXPECT_EQ(lower_critical(5, 5, 0.05), 4);
  EXPECT_EQ(lower_critical(5, 5, 0.025), 2);
  EXPECT_EQ(lower_critical(20, 20, 0.025), 127);
  EXPECT_EQ(lower_critical(8, 12, 0.025), 22);
}

TEST(MannWhitney, StatisticCountsPairsHeadAboveBase) {
  // Hand count: x = {3, 5, 7}, y = {1, 4, 6, 8}. Pairs x > y: 3>1; 5>1,4; 7>1,4,6 -> U = 6.
  const MwuResult r = mann_whitney({3, 5, 7}, {1, 4, 6, 8}, Alternative::greater);
  EXPECT_DOUBLE_EQ(r.u, 6.0);
  EXPECT_EQ(r.method, MwuMethod::exact);
  EXPECT_FALSE(r.ties);
  // P(U >= 6) for (3, 4): arrangements with U >= 6 among C(7,3) = 35. The U-frequencies for
  // (3,4) are 1 1 2 3 4 4 5 4 4 3 2 1 1 (u = 0..12; Mann & Whitney 1947 recurrence), so
  // P(U >= 6) = (5+4+4+3+2+1+1)/35 = 20/35.
  EXPECT_NEAR(r.p, 20.0 / 35.0, 1e-15);
  // The opposite alternative uses U2 = 12 - 6 = 6: the same tail by symmetry.
  EXPECT_NEAR(mann_whitney({3, 5, 7}, {1, 4, 6, 8}, Alternative::less).p, 20.0 / 35.0, 1e-15);
}

TEST(MannWhitney, CompleteSeparationGivesTheSmallestPossibleP) {
  std::vector<double> base, head;
  for (int i = 0; i < 10; ++i) {
    base.push_back(1.0 + i * 0.01);
    head.push_back(2.0 + i * 0.01);
  }
  const MwuResult r = mann_whitney(head, base, Alternative::greater);
  EXPECT_DOUBLE_EQ(r.u, 100.0);
  EXPECT_NEAR(r.p, 1.0 / 184756.0, 1e-18);  // 1 / C(20, 10)
  EXPECT_NEAR(r.p, mwu_min_p(10, 10), 1e-18);
  EXPECT_NEAR(mann_whitney(head, base, Alternative::less).p, 1.0, 1e-12);
}

TEST(MannWhitney, AutomaticChoiceUsesNormalWithTiesOrLargeSamples) {
  EXPECT_EQ(mann_whitney({1, 2, 2}, {2, 3}, Alternative::greater).method, MwuMethod::normal);
  std::vector<double> big_x(60), big_y(60);
  for (int i = 0; i < 60; ++i) {
    big_x[i] = i + 0.25;
    big_y[i] = i;
  }
  EXPECT_EQ(mann_whitney(big_x, big_y, Alternative::greater).method, MwuMethod::normal);
  EXPECT_THROW(mann_whitney({1, 2, 2}, {2, 3}, Alternative::greater, MwuMethodChoice::exact),
               std::invalid_argument);
  EXPECT_THROW(mann_whitney({}, {1.0}, Alternative::greater), std::invalid_argument);
}

TEST(MannWhitney, AllTiedGivesNoEvidence) {
  const MwuResult r = mann_whitney({5, 5, 5, 5}, {5, 5, 5}, Alternative::greater);
  EXPECT_DOUBLE_EQ(r.u, 6.0);
  EXPECT_DOUBLE_EQ(r.p, 1.0);
}

TEST(MannWhitney, MinimumPValueDecidesWhetherFewRepetitionsCanEverBeSignificant) {
  // 3 vs 3: 1/C(6,3) = 0.05 -- never significant at alpha 0.01, whatever the data.
  EXPECT_NEAR(mwu_min_p(3, 3), 0.05, 1e-15);
  EXPECT_NEAR(mwu_min_p(5, 5), 1.0 / 252.0, 1e-15);
  EXPECT_NEAR(mwu_min_p(7, 7), 1.0 / 3432.0, 1e-15);
  EXPECT_DOUBLE_EQ(mwu_min_p(0, 5), 1.0);
  // Beyond the exact bound the normal approximation's value is used: far from exact in the
  // extreme tail (1.8e-21 against an exact 1e-35), but all the gate asks is "below alpha / m?".
  EXPECT_LT(mwu_min_p(60, 60), 1e-15);
  EXPECT_GT(mwu_min_p(60, 60), 0.0);
}

}  // namespace
}  // namespace pg::stats
