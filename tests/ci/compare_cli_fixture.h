// The fixture of the `perfgate compare` end-to-end suites: a real git repository with a base, a
// head on a feature branch and main moving on, and a real SQLite store the runs go into.
#pragma once
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "ci_fixtures.h"
#include "store/store.h"

namespace pg {

inline std::vector<double> noisy(double median, int n, uint32_t seed, double cv = 0.01) {
  std::mt19937 rng(seed);
  std::lognormal_distribution<double> d(0.0, cv);
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(median * d(rng));
  return v;
}

class CompareCli : public ::testing::Test {
 protected:
  void SetUp() override {
    repo = dir / "repo";
    test::git_init(repo);
    base = test::git_commit(repo, "a.txt", "1", "base");
    test::git(repo, {"checkout", "-q", "-b", "feature"});
    head = test::git_commit(repo, "b.txt", "2", "head");
    test::git(repo, {"checkout", "-q", "main"});
    other = test::git_commit(repo, "a.txt", "3", "main moves on");
    db = dir / "perfgate.db";
  }

  void store_runs(const std::string& sha, int runs, double median, uint32_t seed, int reps = 10,
                  const Environment& env = test::cpu_env()) {
    store::Store s(db);
    for (int r = 0; r < runs; ++r) {
      s.import_run(test::synthetic_run(sha, keys, noisy(median, reps, seed + 97 * r), env));
    }
  }

  test::CommandResult compare(std::vector<std::string> args) {
    std::vector<std::string> argv = {PERFGATE_BIN, "compare", "--db", db, "--repo", repo};
    argv.insert(argv.end(), args.begin(), args.end());
    return test::run_command(argv);
  }

  nlohmann::json compare_json(std::vector<std::string> args, int expect_exit) {
    args.insert(args.end(), {"--format", "json"});
    auto r = compare(args);
    EXPECT_EQ(r.exit_code, expect_exit) << r.out << r.err;
    return nlohmann::json::parse(r.out);
  }

  test::TempDir dir;
  std::string repo, base, head, other, db;
  std::vector<CellKey> keys = {test::cpu_key(1, 16), test::cpu_key(1, 32), test::cpu_key(4, 16)};
};

}  // namespace pg
