// The two-level statistics against scipy (tests/stats/gen_scipy_refs.py): Student's t, the t test
// on run means with its interval and variance components, and the exact minimum detectable
// effect by the noncentral t. Run on the committed fixture and, by ctest, on a live run.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <sstream>

#include "scipy_refs.h"
#include "stats/run_history.h"
#include "stats/student_t.h"
#include "stats/two_level.h"

namespace pg::stats {
namespace {

using test::parse_doubles;
using test::RefLine;

std::vector<RefLine> refs_of(const std::string& kind) {
  std::vector<RefLine> out;
  for (const RefLine& r : test::read_scipy_refs(test::scipy_refs_path()))
    if (r.kind == kind) out.push_back(r);
  return out;
}

RunGroups groups(const std::string& text) {
  RunGroups out;
  std::stringstream ss(text);
  std::string run;
  while (std::getline(ss, run, ';')) out.push_back(parse_doubles(run));
  return out;
}

void expect_rel(double expected, double actual, double tol, const std::string& what) {
  EXPECT_NEAR(actual, expected, tol * std::max(std::abs(expected), 1e-300)) << what;
}

TEST(ScipyRefs, StudentTTailAndQuantile) {
  const auto sf = refs_of("t_sf"), ppf = refs_of("t_ppf");
  ASSERT_GE(sf.size(), 6u);
  ASSERT_GE(ppf.size(), 6u);
  for (const RefLine& r : sf) {
    const double t = std::stod(r.fields[0]), df = std::stod(r.fields[1]);
    expect_rel(std::stod(r.fields[2]), student_t_sf(t, df), 1e-9, "t_sf " + r.fields[0]);
  }
  for (const RefLine& r : ppf) {
    const double p = std::stod(r.fields[0]), df = std::stod(r.fields[1]);
    const double expected = std::stod(r.fields[2]);
    EXPECT_NEAR(student_t_quantile(p, df), expected, 1e-9 * std::max(1.0, std::abs(expected)))
        << "t_ppf " << r.fields[0] << " df " << r.fields[1];
  }
}

TEST(ScipyRefs, TwoLevelTestOnRunMeans) {
  const auto refs = refs_of("twolevel");
  ASSERT_GE(refs.size(), 4u);
  for (const RefLine& r : refs) {
    const auto e = two_level(groups(r.fields[0]), groups(r.fields[1]), 0.95);
    ASSERT_TRUE(e);
    ASSERT_TRUE(e->has_runs_test());
    const std::string what = "case with log ratio " + r.fields[2];
    expect_rel(std::stod(r.fields[2]), e->log_ratio, 1e-10, what + ": log ratio");
    expect_rel(std::stod(r.fields[3]), e->se, 1e-9, what + ": se");
    EXPECT_EQ(std::stod(r.fields[4]), e->df) << what;
    expect_rel(std::stod(r.fields[5]), *e->p_slower, 1e-8, what + ": p slower");
    expect_rel(std::stod(r.fields[6]), *e->p_faster, 1e-8, what + ": p faster");
    expect_rel(std::stod(r.fields[7]), *e->ci_low, 1e-10, what + ": ci low");
    expect_rel(std::stod(r.fields[8]), *e->ci_high, 1e-10, what + ": ci high");
    expect_rel(std::stod(r.fields[9]), e->rep_sd, 1e-9, what + ": rep sd");
    expect_rel(std::stod(r.fields[10]), e->run_sd, 1e-8, what + ": run sd");
  }
}

TEST(ScipyRefs, SnedecorFDistribution) {
  const auto refs = refs_of("f_cdf");
  ASSERT_GE(refs.size(), 5u);
  for (const RefLine& r : refs) {
    const double f = std::stod(r.fields[0]), d1 = std::stod(r.fields[1]);
    expect_rel(std::stod(r.fields[3]), f_cdf(f, d1, std::stod(r.fields[2])), 1e-9,
               "f_cdf " + r.fields[0] + " (" + r.fields[1] + ", " + r.fields[2] + ")");
  }
}

// Trusted history's run variance pooled with the gate's (or alone, with one run a side), after
// the F check, against the rule written out in scipy: the variance used, the df, the test, the
// interval and the check's p. The cases include a gate far noisier than its history (history not
// used) and one run a side whose within-run noise is larger than the history's (its own counts).
TEST(ScipyRefs, TestOnRunMeansWithTrustedHistory) {
  const auto refs = refs_of("historyt");
  ASSERT_GE(refs.size(), 5u);
  std::set<std::string> sources;
  for (const RefLine& r : refs) {
    std::vector<RunGroups> commits;
    std::stringstream ss(r.fields[0]);
    std::string commit;
    while (std::getline(ss, commit, '/')) commits.push_back(groups(commit));
    const RunGroups base = groups(r.fields[1]), head = groups(r.fields[2]);
    const auto history = history_run_variance(commits, static_cast<int>(base[0].size()));
    ASSERT_TRUE(history);
    const auto e = two_level(base, head, 0.95, &*history);
    ASSERT_TRUE(e);
    const std::string what = "case with log ratio " + r.fields[5];
    EXPECT_EQ(e->variance, r.fields[3]) << what << ": " << e->variance_note;
    sources.insert(e->variance);
    EXPECT_EQ(e->df, std::stod(r.fields[4])) << what;
    expect_rel(std::stod(r.fields[5]), e->log_ratio, 1e-10, what + ": log ratio");
    if (r.fields[11] == "-") {  // one run a side: nothing to check
      EXPECT_FALSE(e->variance_check_p) << what;
    } else {
      ASSERT_TRUE(e->variance_check_p) << what;
      EXPECT_NEAR(*e->variance_check_p, std::stod(r.fields[11]), 1e-9) << what << ": F check p";
    }
    ASSERT_TRUE(e->has_runs_test()) << what;
    expect_rel(std::stod(r.fields[6]), e->se, 1e-9, what + ": se");
    expect_rel(std::stod(r.fields[7]), *e->p_slower, 1e-8, what + ": p slower");
    expect_rel(std::stod(r.fields[8]), *e->p_faster, 1e-8, what + ": p faster");
    expect_rel(std::stod(r.fields[9]), *e->ci_low, 1e-10, what + ": ci low");
    expect_rel(std::stod(r.fields[10]), *e->ci_high, 1e-10, what + ": ci high");
    if (e->variance == "runs") {
      EXPECT_NE(e->variance_note.find("F check"), std::string::npos);
    }
  }
  EXPECT_EQ(sources, (std::set<std::string>{"history", "pooled", "runs"}));
}

TEST(ScipyRefs, MinimumDetectableEffectByTheNoncentralT) {
  const auto refs = refs_of("mde");
  ASSERT_GE(refs.size(), 3u);
  for (const RefLine& r : refs) {
    const double se = std::stod(r.fields[0]), df = std::stod(r.fields[1]);
    const double alpha = std::stod(r.fields[2]), power = std::stod(r.fields[3]);
    expect_rel(std::stod(r.fields[4]), minimum_detectable_effect(se, df, alpha, power), 1e-6,
               "mde se " + r.fields[0] + " df " + r.fields[1]);
  }
}

}  // namespace
}  // namespace pg::stats
