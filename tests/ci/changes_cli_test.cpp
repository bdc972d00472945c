// `perfgate changes` end to end: the real binary on real SQLite files and a real git repository,
// runs written through the Store API (the fixture of the compare suites).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ci_fixtures.h"
#include "compare_cli_fixture.h"
#include "store/store.h"

namespace pg {
namespace {

using test::run_command;
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// A made-up commit SHA: 40 hex digits, one per n.
std::string fake_sha(int n) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%040d", n);
  return buf;
}

// A commit time `minute` minutes into 2025, for history order.
std::string fmt_minute(int minute) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "2025-01-01T%02d:%02d:00Z", minute / 60, minute % 60);
  return buf;
}

TEST_F(CompareCli, ChangesFindsAStepInHistory) {
  {
    store::Store s(db);
    for (int i = 0; i < 12; ++i) {
      std::string sha = test::git_commit(repo, "h.txt", std::to_string(i), "h" + std::to_string(i));
      double level = i < 6 ? 1.0 : 1.3;
      pg::Run run = test::synthetic_run(sha, {keys[0]}, noisy(level, 10, 100 + i), test::cpu_env());
      run.git.time = "2025-01-01T00:" + std::string(i < 10 ? "0" : "") + std::to_string(i) + ":00Z";
      s.import_run(run);
    }
  }
  auto r = run_command({PERFGATE_BIN, "changes", "--db", db, "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["series"].size(), 1u) << r.out;
  const auto& cps = j["series"][0]["change_points"];
  ASSERT_EQ(cps.size(), 1u) << r.out;
  EXPECT_EQ(cps[0]["index"], 6);
  EXPECT_NEAR(cps[0]["ratio"].get<double>(), 1.3, 0.05);
  auto text = run_command({PERFGATE_BIN, "changes", "--db", db});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("1 change point"), std::string::npos) << text.out;
  auto bad = run_command({PERFGATE_BIN, "changes", "--db", db, "--metric", "nonsense"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--metric"), std::string::npos);
}

// `perfgate changes` follows one branch and takes the trend's values (docs/WEB.md, "The size of a
// change"): a commit's point is the median of every repetition of its runs, not the median of
// its runs' medians, and another branch's commits are never mixed into main's history.
TEST_F(CompareCli, ChangesFollowsTheMainBranchWithTheTrendsSizeOfAChange) {
  std::vector<double> point_medians;  // main's commits, as the trend pools them
  {
    store::Store s(db);
    auto store_commit = [&](const std::string& sha, const std::string& branch, int minute,
                            double level, uint32_t seed) {
      std::vector<double> pooled;
      for (int r = 0; r < 2; ++r) {
        // Two runs of unequal level: the median of their medians is not the pooled median.
        std::vector<double> reps = noisy(level * (r == 0 ? 1.0 : 1.04), 9, seed + 31 * r);
        pg::Run run = test::synthetic_run(sha, {keys[0]}, reps, test::cpu_env());
        run.git.branch = branch;
        run.git.time = fmt_minute(minute);
        s.import_run(run);
        pooled.insert(pooled.end(), reps.begin(), reps.end());
      }
      return median(pooled);
    };
    for (int i = 0; i < 12; ++i)
      point_medians.push_back(
          store_commit(fake_sha(i + 1), "main", 2 * i, i < 6 ? 1.0 : 1.3, 500 + i));
    // Five commits of a branch, between main's, three times slower: none is main's history.
    for (int j = 0; j < 5; ++j)
      store_commit(fake_sha(100 + j), "feature", 2 * (6 + j) + 1, 3.0, 700 + j);
  }
  auto r = run_command({PERFGATE_BIN, "changes", "--db", db, "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["branch"], "main");
  ASSERT_EQ(j["series"].size(), 1u) << r.out;
  EXPECT_EQ(j["series"][0]["commits"], 12) << r.out;
  const auto& cps = j["series"][0]["change_points"];
  ASSERT_EQ(cps.size(), 1u) << r.out;
  EXPECT_EQ(cps[0]["index"], 6);
  const double before = median({point_medians.begin(), point_medians.begin() + 6});
  const double after = median({point_medians.begin() + 6, point_medians.end()});
  EXPECT_NEAR(cps[0]["before"].get<double>(), before, 1e-9 * before);
  EXPECT_NEAR(cps[0]["after"].get<double>(), after, 1e-9 * after);
  EXPECT_NEAR(cps[0]["relative"].get<double>(), after / before - 1.0, 1e-9);
  // The text shows the size as the trend page and the regressions page do: "+30.4%".
  char size[32];
  std::snprintf(size, sizeof size, "%+.1f%%", 100.0 * (after / before - 1.0));
  auto text = run_command({PERFGATE_BIN, "changes", "--db", db});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("change points of tpot_ms on branch main"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find(std::string("  ") + size + "  p="), std::string::npos) << size << "\n"
                                                                                 << text.out;
  // Another branch is a choice, never mixed in; an unknown one is refused by its flag.
  auto feature =
      run_command({PERFGATE_BIN, "changes", "--db", db, "--format", "json", "--branch", "feature"});
  ASSERT_EQ(feature.exit_code, 0) << feature.err;
  EXPECT_EQ(nlohmann::json::parse(feature.out)["series"][0]["commits"], 5) << feature.out;
  auto unknown = run_command({PERFGATE_BIN, "changes", "--db", db, "--branch", "nope"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("--branch"), std::string::npos) << unknown.err;
}

// A commit subject and a model name come from the measured repository: `perfgate changes` prints
// them as one inert line each (docs/FORMATS.md, "Text from measured code").
TEST_F(CompareCli, ChangesPrintsTextFromTheRepositoryOnOneInertLine) {
  {
    store::Store s(db);
    CellKey key = keys[0];
    key.model = "m\n::error::model";
    for (int i = 0; i < 12; ++i) {
      std::string sha = test::git_commit(repo, "h.txt", std::to_string(i), "h" + std::to_string(i));
      pg::Run run =
          test::synthetic_run(sha, {key}, noisy(i < 6 ? 1.0 : 1.3, 10, 100 + i), test::cpu_env());
      run.git.time = "2025-01-01T00:" + std::string(i < 10 ? "0" : "") + std::to_string(i) + ":00Z";
      run.git.subject = "step\r::warning::subject \x1b[2J##[error]x";
      s.import_run(run);
    }
  }
  auto text = run_command({PERFGATE_BIN, "changes", "--db", db});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("1 change point"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find('\r'), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find('\x1b'), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("##["), std::string::npos) << text.out;
  std::istringstream lines(text.out);
  for (std::string line; std::getline(lines, line);)
    EXPECT_NE(
        line.substr(line.find_first_not_of(' ') == std::string::npos ? 0
                                                                     : line.find_first_not_of(' '))
            .rfind("::", 0),
        0u)
        << line;
  EXPECT_NE(text.out.find("step\\r::warning::subject \\x1B[2J##\\[error]x"), std::string::npos)
      << text.out;
}

}  // namespace
}  // namespace pg
