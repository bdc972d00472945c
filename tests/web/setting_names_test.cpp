// A gate's warnings name its settings as each front end does (common/errors.h): `perfgate compare`
// by its flags, the compare page and API by their query parameters, the settings' own names.
#include <gtest/gtest.h>

#include "store/store.h"
#include "web_fixture.h"

namespace pg::webtest {
namespace {

class SettingNames : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.file("names.db");
    store::Store s(db_);
    s.import_runs(make_runs(standard_spec()));
    // One more commit, with a cell (batch 8) the base never had: "no baseline".
    SeedSpec wider = standard_spec();
    wider.commits = 1;
    wider.first_commit = 100;
    wider.batch_sizes = {1, 4, 8};
    wider.step_at = -1;
    s.import_runs(make_runs(wider));
    web::ServeOptions opt;
    opt.db_path = db_;
    server_ = std::make_unique<LiveServer>(opt);
  }
  static std::string sha(int i) { return commit_sha(i, standard_spec().seed); }
  TempDir dir_;
  std::string db_;
  std::unique_ptr<LiveServer> server_;
};

TEST_F(SettingNames, TheCliSaysItsFlagsTheWebItsQueryParameters) {
  const std::string base = sha(7), head = sha(100);
  std::string table, json;
  EXPECT_EQ(
      run_command({perfgate_bin(), "compare", "--db", db_, "--base", base, "--head", head}, &table),
      3)
      << table;
  EXPECT_NE(table.find("pass --allow-missing-baseline to accept"), std::string::npos) << table;
  EXPECT_EQ(run_command({perfgate_bin(), "compare", "--db", db_, "--base", base, "--head", head,
                         "--format", "json"},
                        &json),
            3)
      << json;
  EXPECT_NE(json.find("pass --allow-missing-baseline to accept"), std::string::npos) << json;

  const nlohmann::json api = get_json(*server_, "/api/v1/compare?base=" + base + "&head=" + head);
  ASSERT_EQ(api["verdict"], "inconclusive") << api.dump(2);
  bool named = false;
  for (const auto& w : api["warnings"]) {
    const std::string text = w;
    named |= text.find("pass allow_missing_baseline to accept") != std::string::npos;
    EXPECT_EQ(text.find("--"), std::string::npos) << text;
    EXPECT_EQ(text.find('\x1f'), std::string::npos) << text;
  }
  EXPECT_TRUE(named) << api["warnings"].dump(2);
  const std::string page = get_page(*server_, "/compare?base=" + base + "&head=" + head);
  EXPECT_NE(page.find("pass allow_missing_baseline to accept"), std::string::npos) << page;
  EXPECT_EQ(page.find("--allow-missing-baseline"), std::string::npos);
}

}  // namespace
}  // namespace pg::webtest
