// One populated database and one live server shared by the read-only suites.
#pragma once
#include <gtest/gtest.h>

#include "store/store.h"
#include "web_test_util.h"

namespace pg::webtest {

inline constexpr const char* kToken = "test-token-0123456789abcdef";

class WebFixture : public ::testing::Test {
 protected:
  static void SetUpTestSuite();
  static void TearDownTestSuite();

  // GET; fails the test on a transport error.
  static httplib::Result get(const std::string& target, const httplib::Headers& headers = {});
  static nlohmann::json get_json(const std::string& target, int expect_status = 200);

  static TempDir* dir_;
  static std::string db_;
  static LiveServer* server_;
  static std::vector<pg::Run> runs_;        // the standard history, as stored
  static std::vector<std::string> shas_;    // its commits, history order
  static std::string prefix_a_, prefix_b_;  // two stored commits sharing a 4-hex prefix
};

}  // namespace pg::webtest
