// Holm and Benjamini-Hochberg adjusted p-values against hand-checked and published examples.
#include <gtest/gtest.h>

#include "common/errors.h"
#include "stats/multiple.h"

namespace pg::stats {
namespace {

TEST(Holm, HandCheckedExample) {
  // Holm (1979), step-down: sort 0.005 < 0.01 < 0.03 < 0.04, multiply by m - rank + 1 = 4 3 2 1:
  // 0.02 0.03 0.06 0.04, then the running maximum: 0.02 0.03 0.06 0.06. Back in input order:
  const auto adj = holm_adjust({0.01, 0.04, 0.03, 0.005});
  const std::vector<double> want = {0.03, 0.06, 0.06, 0.02};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(adj[i], want[i], 1e-15) << i;
}

TEST(Holm, CapsAtOneAndIsMonotone) {
  const auto adj = holm_adjust({0.9, 0.5, 0.001});
  EXPECT_DOUBLE_EQ(adj[0], 1.0);  // 3 * ... capped
  EXPECT_DOUBLE_EQ(adj[1], 1.0);  // 2 * 0.5
  EXPECT_NEAR(adj[2], 0.003, 1e-15);
  EXPECT_TRUE(holm_adjust({}).empty());
  EXPECT_DOUBLE_EQ(holm_adjust({0.2})[0], 0.2);  // one test: nothing to correct
}

TEST(BenjaminiHochberg, McDonaldHandbookExample) {
  // McDonald, Handbook of Biological Statistics, 3rd ed. (2014), "Multiple comparisons": 25
  // p-values of García-Arenal et al. (2004). At false discovery rate Q = 0.25 the five smallest
  // are significant (0.042 < 5/25 * 0.25 = 0.05) and the sixth is not (0.060 is not < 0.06).
  const std::vector<double> p = {0.001, 0.008, 0.039, 0.041, 0.042, 0.060, 0.074, 0.205, 0.212,
                                 0.216, 0.222, 0.251, 0.269, 0.275, 0.340, 0.341, 0.384, 0.569,
                                 0.594, 0.696, 0.762, 0.940, 0.942, 0.975, 0.986};
  const auto adj = bh_adjust(p);
  for (int i = 0; i < 5; ++i) EXPECT_LT(adj[i], 0.25) << i;
  for (size_t i = 5; i < p.size(); ++i) EXPECT_GE(adj[i], 0.25 - 1e-12) << i;
  EXPECT_NEAR(adj[0], 0.025, 1e-15);  // 25 * 0.001 / 1
  EXPECT_NEAR(adj[1], 0.1, 1e-15);    // 25 * 0.008 / 2
}

TEST(BenjaminiHochberg, IsNeverStricterThanHolm) {
  const std::vector<double> p = {0.003, 0.004, 0.0035, 0.2, 0.0031, 0.6};
  const auto holm = holm_adjust(p), bh = bh_adjust(p);
  for (size_t i = 0; i < p.size(); ++i) EXPECT_LE(bh[i], holm[i] + 1e-15);
  // Equal p-values adjust to equal values under both.
  EXPECT_EQ(bh_adjust({0.01, 0.01})[0], bh_adjust({0.01, 0.01})[1]);
  EXPECT_EQ(holm_adjust({0.01, 0.01})[0], holm_adjust({0.01, 0.01})[1]);
}

TEST(Correction, ParsesNamesAndRejectsOthersNamingTheSetting) {
  EXPECT_EQ(correction_from_string("holm"), Correction::holm);
  EXPECT_EQ(correction_from_string("bh"), Correction::bh);
  try {
    correction_from_string("bonferroni");
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("correction ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace pg::stats
