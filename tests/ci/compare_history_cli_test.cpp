// `perfgate compare --history`: the real binary with a trusted store beside the gate's, both real
// SQLite files (docs/STATISTICS.md "Run variance from trusted history").
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "compare_cli_fixture.h"
#include "store/store.h"

namespace pg {
namespace {

class CompareHistoryCli : public CompareCli {
 protected:
  // Two runs each of `commits` other commits, in a store of their own.
  void store_history(int commits) {
    store::Store s(history);
    for (int c = 0; c < commits; ++c) {
      const std::string sha = test::git_commit(repo, "h.txt", std::to_string(c), "history");
      for (int r = 0; r < 2; ++r)
        s.import_run(
            test::synthetic_run(sha, keys, noisy(1.0, 10, 500 + 10 * c + r), test::cpu_env()));
    }
  }
  std::string history = dir / "history.db";
};

TEST_F(CompareHistoryCli, PoolsTheTrustedRunVarianceIntoEveryCellAndSaysSo) {
  store_runs(base, 2, 1.0, 1);
  store_runs(head, 2, 1.0, 2);
  store_history(8);
  auto own = compare_json({"--base", base, "--head", head}, 0);
  auto with = compare_json({"--base", base, "--head", head, "--history", history}, 0);
  ASSERT_EQ(with["cells"].size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(own["cells"][i]["variance_source"], "runs");
    EXPECT_EQ(own["cells"][i]["runs_df"], 2.0);
    const auto& c = with["cells"][i];
    ASSERT_EQ(c["variance_source"], "pooled") << c.dump();
    EXPECT_EQ(c["runs_df"], 10.0);
    EXPECT_EQ(c["history_df"], 8.0);
    EXPECT_EQ(c["history_runs"], 16);
    EXPECT_EQ(c["history_commits"], 8);
    EXPECT_LT(c["mde"].get<double>(), own["cells"][i]["mde"].get<double>());
  }
  EXPECT_NE(with["rule"].get<std::string>().find("trusted history in 3 of 3 cells"),
            std::string::npos)
      << with["rule"];
  auto table = compare({"--base", base, "--head", head, "--history", history});
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("trusted history " + history), std::string::npos) << table.out;
}

TEST_F(CompareHistoryCli, AMissingHistoryIsAUsageErrorNamingTheFlag) {
  store_runs(base, 2, 1.0, 1);
  store_runs(head, 2, 1.0, 2);
  auto r = compare({"--base", base, "--head", head, "--history", dir / "none.db"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--history"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "none.db"));
}

}  // namespace
}  // namespace pg
