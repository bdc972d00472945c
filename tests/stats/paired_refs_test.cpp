// The paired test of A/B runs (stats/paired.h) against scipy (tests/stats/gen_paired_refs.py): the
// committed fixture, and by ctest a fresh run of the script (stats.paired_refs_live).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "scipy_refs.h"
#include "stats/binomial.h"
#include "stats/paired.h"
#include "stats/two_level.h"

namespace pg::stats {
namespace {

std::string refs_path() {
  const char* env = std::getenv("PG_PAIRED_REFS");
  return env && *env ? env : PG_PAIRED_REFS_FIXTURE;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep)) out.push_back(item);
  return out;
}

void expect_p(double expected, double actual, const std::string& what) {
  EXPECT_NEAR(actual, expected, 1e-10) << what;
  if (expected > 0 && expected < 1e-3) {
    EXPECT_NEAR(actual / expected, 1.0, 1e-8) << what;
  }
}

TEST(PairedRefs, BlockTestAndRunUnitMatchScipy) {
  const auto refs = test::read_scipy_refs(refs_path());
  int one = 0, several = 0;
  for (const test::RefLine& r : refs) {
    if (r.kind == "clopper_pearson") continue;
    ASSERT_EQ(r.kind, "paired");
    ASSERT_EQ(r.fields.size(), 12u);
    const auto base = split(r.fields[0], ';'), head = split(r.fields[1], ';'),
               pos = split(r.fields[2], ';');
    std::vector<AbBlocks> runs;
    for (size_t k = 0; k < base.size(); ++k) {
      AbPairs p;
      p.base = test::parse_doubles(base[k]);
      p.head = test::parse_doubles(head[k]);
      for (double v : test::parse_doubles(pos[k])) p.head_position.push_back(static_cast<int>(v));
      const AbBlocks b = abba_blocks(p);
      EXPECT_EQ(b.unbalanced, 0);
      EXPECT_EQ(b.pairs_unpaired, static_cast<int>(p.base.size() % 2));
      runs.push_back(b);
    }
    (runs.size() == 1 ? one : several)++;
    const std::string what = r.fields[0].substr(0, 40);
    const auto e = paired_test(runs);
    ASSERT_TRUE(e && e->has_test()) << what;
    EXPECT_EQ(e->unit, runs.size() == 1 ? "block" : "ab-run");
    const double d = std::stod(r.fields[3]), se = std::stod(r.fields[4]),
                 df = std::stod(r.fields[5]);
    EXPECT_NEAR(e->log_ratio, d, 1e-13) << what;
    EXPECT_NEAR(e->se, se, 1e-13 + 1e-10 * se) << what;
    EXPECT_EQ(e->df, df) << what;
    expect_p(std::stod(r.fields[6]), *e->p_slower, what + " p_slower");
    expect_p(std::stod(r.fields[7]), *e->p_faster, what + " p_faster");
    EXPECT_NEAR(*e->ci_low, std::stod(r.fields[8]), 1e-10) << what;
    EXPECT_NEAR(*e->ci_high, std::stod(r.fields[9]), 1e-10) << what;
    EXPECT_NEAR(*e->upper_bound(0.95), std::stod(r.fields[10]), 1e-10) << what;
    const double mde = minimum_detectable_effect(e->se, e->df, 0.01 / 12, 0.95);
    EXPECT_NEAR(mde, std::stod(r.fields[11]), 1e-6 * std::stod(r.fields[11])) << what;
  }
  EXPECT_GE(one, 5);
  EXPECT_GE(several, 4);
}

TEST(PairedRefs, ClopperPearsonMatchesScipy) {
  int n_cases = 0;
  for (const test::RefLine& r : test::read_scipy_refs(refs_path())) {
    if (r.kind != "clopper_pearson") continue;
    ++n_cases;
    const int k = std::stoi(r.fields[0]), n = std::stoi(r.fields[1]);
    const auto [lo, hi] = clopper_pearson(k, n, std::stod(r.fields[2]));
    EXPECT_NEAR(lo, std::stod(r.fields[3]), 1e-12) << k << "/" << n;
    EXPECT_NEAR(hi, std::stod(r.fields[4]), 1e-12) << k << "/" << n;
  }
  EXPECT_GE(n_cases, 9);
}

TEST(PairedRefs, OddLastPairIsDroppedAndUnbalancedBlocksCounted) {
  AbPairs p{{1.0, 1.0, 1.0}, {1.1, 1.1, 5.0}, {0, 1, 0}};
  AbBlocks b = abba_blocks(p);
  EXPECT_EQ(b.log_ratios.size(), 1u);
  EXPECT_EQ(b.pairs_unpaired, 1);
  EXPECT_NEAR(b.log_ratios[0], std::log(1.1), 1e-15);
  p.head_position = {1, 1, 0};
  EXPECT_EQ(abba_blocks(p).unbalanced, 1);
  p = {{1.0, 1.0, 1.0, 1.0}, {1.1, 0.0, 1.1, 1.1}, {0, 1, 1, 0}};
  b = abba_blocks(p);
  EXPECT_EQ(b.log_ratios.size(), 1u);
  EXPECT_EQ(b.pairs_unusable, 2);
  const auto e = paired_test({b});
  ASSERT_TRUE(e);
  EXPECT_FALSE(e->has_test());  // one block: no variance
  EXPECT_FALSE(e->upper_bound(0.95));
}

}  // namespace
}  // namespace pg::stats
