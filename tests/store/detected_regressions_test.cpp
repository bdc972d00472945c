// Detected regressions (schema step 11): every regression an alert was raised for, stored once
// per series, metric and first bad commit, so the alert outlives the detector that found it.
#include <gtest/gtest.h>

#include "common/errors.h"
#include "store/store.h"
#include "test_util.h"

namespace pg {
namespace {

using test::TempDir;

store::Store::DetectedRegression detected(int64_t series, char commit, double relative) {
  return {0, series, "tpot_ms", std::string(40, commit), "change point", 1.5, relative, ""};
}

TEST(DetectedRegressions, AreKeptOncePerFirstBadCommitWithTheirFirstFigures) {
  TempDir dir;
  const std::string path = dir.file("d.db");
  {
    store::Store s(path);
    test::write_run(s, test::sample_run());
    const int64_t id = s.list_series()[0].id;
    EXPECT_EQ(s.record_detected_regressions({detected(id, 'a', 0.3), detected(id, 'b', 0.2)}), 2u);
    // Seen again, with a later estimate: nothing changes, the first detection stands.
    EXPECT_EQ(s.record_detected_regressions({detected(id, 'a', 0.4)}), 0u);
  }
  store::Store s(path);  // and they survive a reopen
  const auto all = s.detected_regressions();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].commit, std::string(40, 'a'));
  EXPECT_DOUBLE_EQ(all[0].relative, 0.3);
  EXPECT_DOUBLE_EQ(all[0].before, 1.5);
  EXPECT_EQ(all[0].source, "change point");
  EXPECT_FALSE(all[0].detected_at.empty());
  EXPECT_EQ(all[1].commit, std::string(40, 'b'));
}

TEST(DetectedRegressions, AMalformedOneIsRefusedAndNothingOfItsBatchIsStored) {
  TempDir dir;
  store::Store s(dir.file("d.db"));
  test::write_run(s, test::sample_run());
  const int64_t id = s.list_series()[0].id;
  auto short_sha = detected(id, 'a', 0.3);
  short_sha.commit = "abc";
  EXPECT_THROW(s.record_detected_regressions({detected(id, 'b', 0.2), short_sha}), UsageError);
  auto unknown_source = detected(id, 'c', 0.3);
  unknown_source.source = "a hunch";
  EXPECT_THROW(s.record_detected_regressions({unknown_source}), UsageError);
  EXPECT_TRUE(s.detected_regressions().empty());
}

}  // namespace
}  // namespace pg
