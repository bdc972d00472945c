// The implementation against scipy (tests/stats/gen_scipy_refs.py). Run once on the committed
// fixture, and once more by ctest on a fresh run of the script (stats.scipy_refs_live).
#include <gtest/gtest.h>

#include <cmath>

#include "scipy_refs.h"
#include "stats/hodges_lehmann.h"
#include "stats/mann_whitney.h"
#include "stats/multiple.h"
#include "stats/normal.h"

namespace pg::stats {
namespace {

using test::parse_doubles;
using test::RefLine;

std::vector<RefLine> refs_of(const std::string& prefix) {
  std::vector<RefLine> out;
  for (const RefLine& r : test::read_scipy_refs(test::scipy_refs_path()))
    if (r.kind.rfind(prefix, 0) == 0) out.push_back(r);
  return out;
}

// Relative tolerance: both sides compute in double; the exact pmf is summed differently.
void expect_close(double expected, double actual, const std::string& what) {
  EXPECT_NEAR(actual, expected, 1e-9 * std::max(1.0, std::abs(expected)) + 1e-15) << what;
  if (expected > 0 && expected < 1e-3) {
    EXPECT_NEAR(actual / expected, 1.0, 1e-7) << what << " (relative, small p)";
  }
}

TEST(ScipyRefs, MannWhitneyExactAndAsymptotic) {
  const auto refs = refs_of("mwu ");
  ASSERT_GE(refs.size(), 30u) << test::scipy_refs_path();
  int exact = 0, normal = 0;
  for (const RefLine& r : refs) {
    const bool greater = r.kind.find("greater") != std::string::npos;
    const bool is_exact = r.kind.find("exact") != std::string::npos;
    const auto x = parse_doubles(r.fields[0]), y = parse_doubles(r.fields[1]);
    const MwuResult got = mann_whitney(x, y, greater ? Alternative::greater : Alternative::less,
                                       is_exact ? MwuMethodChoice::exact : MwuMethodChoice::normal);
    const std::string what = r.kind + " n=" + std::to_string(x.size()) + "," +
                             std::to_string(y.size()) + " U=" + r.fields[2];
    EXPECT_DOUBLE_EQ(got.u, std::stod(r.fields[2])) << what;
    expect_close(std::stod(r.fields[3]), got.p, what);
    (is_exact ? exact : normal)++;
  }
  EXPECT_GE(exact, 10);
  EXPECT_GE(normal, 10);
}

TEST(ScipyRefs, HodgesLehmannByTestInversion) {
  const auto refs = refs_of("hl ");
  ASSERT_GE(refs.size(), 4u);
  for (const RefLine& r : refs) {
    const double level = std::stod(r.kind.substr(3));
    const auto x = parse_doubles(r.fields[0]), y = parse_doubles(r.fields[1]);
    const ShiftEstimate got = hodges_lehmann_shift(x, y, level);
    EXPECT_NEAR(got.estimate, std::stod(r.fields[2]), 1e-12) << r.kind;
    ASSERT_TRUE(got.low && got.high) << r.kind;
    EXPECT_NEAR(*got.low, std::stod(r.fields[3]), 1e-12) << r.kind;
    EXPECT_NEAR(*got.high, std::stod(r.fields[4]), 1e-12) << r.kind;
  }
}

TEST(ScipyRefs, HolmAndBenjaminiHochberg) {
  int n = 0;
  for (const char* kind : {"holm", "bh"}) {
    for (const RefLine& r : refs_of(kind)) {
      if (r.kind != kind) continue;
      const auto p = parse_doubles(r.fields[0]), want = parse_doubles(r.fields[1]);
      const auto got = std::string(kind) == "holm" ? holm_adjust(p) : bh_adjust(p);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < p.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << kind << " " << i;
      ++n;
    }
  }
  EXPECT_GE(n, 10);
}

TEST(ScipyRefs, NormalTailAndQuantile) {
  for (const RefLine& r : refs_of("norm_sf"))
    expect_close(std::stod(r.fields[1]), normal_sf(std::stod(r.fields[0])), "sf " + r.fields[0]);
  for (const RefLine& r : refs_of("norm_ppf"))
    EXPECT_NEAR(normal_quantile(std::stod(r.fields[0])), std::stod(r.fields[1]), 1e-9)
        << "ppf " << r.fields[0];
}

TEST(ScipyRefs, SmallestAchievablePValue) {
  const auto refs = refs_of("mwu_min_p");
  ASSERT_GE(refs.size(), 5u);
  for (const RefLine& r : refs)
    expect_close(std::stod(r.fields[2]), mwu_min_p(std::stoi(r.fields[0]), std::stoi(r.fields[1])),
                 "min p " + r.fields[0] + "," + r.fields[1]);
}

}  // namespace
}  // namespace pg::stats
