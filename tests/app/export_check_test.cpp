// Base and head that differ only in their export, and tuned exports that did not replay the base's
// choices: what the gate says and refuses (app/export_check.h), from the fingerprint fields an
// AOTInductor package's run records (runner/lm/artifact.h).
#include <gtest/gtest.h>

#include "app/export_check.h"

namespace pg::app {
namespace {

const std::string kPackage = "aoti:m b1";
std::string sha(char c) { return std::string(64, c); }

// One side's fingerprint of package kPackage.
Environment side(char graph, char kernels, char tuning, bool tuned = false,
                 std::string replayed_from = "", int retuned = 0) {
  Environment env{
      {"device", "NVIDIA H200"},
      {"aoti_graph_sha256", "aoti:other b1=" + sha('f') + ", " + kPackage + "=" + sha(graph)},
      {"aoti_kernels_sha256", kPackage + "=" + sha(kernels)},
      {"aoti_tuning_sha256", kPackage + "=" + sha(tuning)}};
  if (tuned) env["aoti_tuned_kernels"] = kPackage + "=13";
  if (!replayed_from.empty()) {
    env["aoti_replayed_from"] = kPackage + "=" + replayed_from;
    env["aoti_retuned_kernels"] = kPackage + "=" + std::to_string(retuned);
  }
  return env;
}

bool says(const ExportCheck& c, const std::string& what) {
  for (const auto& w : c.warnings)
    if (w.find(what) != std::string::npos) return true;
  return false;
}

TEST(ExportCheck, FieldsAreReadPerPackage) {
  const auto graphs = per_package(side('1', '2', '3'), "aoti_graph_sha256");
  ASSERT_EQ(graphs.size(), 2u);
  EXPECT_EQ(graphs.at(kPackage), sha('1'));
  EXPECT_EQ(graphs.at("aoti:other b1"), sha('f'));
}

TEST(ExportCheck, TheSameGraphWithOtherTuningIsSaidToDifferOnlyInItsExport) {
  const ExportCheck c = check_exports(side('1', '2', '3'), side('1', '2', '4'), false);
  ASSERT_TRUE(says(c, "EXPORT ONLY: " + kPackage)) << c.warnings.size();
  EXPECT_TRUE(says(c, "the tuning choices"));
  EXPECT_FALSE(c.refuse);  // Inductor's defaults: nothing tuned, nothing to refuse
  EXPECT_TRUE(says(check_exports(side('1', '2', '3'), side('1', '5', '3'), false),
                   "the kernels generated"));
}

TEST(ExportCheck, IdenticalExportsAndChangedCodeSayNothing) {
  EXPECT_TRUE(check_exports(side('1', '2', '3'), side('1', '2', '3'), false).warnings.empty());
  EXPECT_TRUE(check_exports(side('1', '2', '3'), side('9', '8', '7'), false).warnings.empty());
  EXPECT_TRUE(check_exports({}, side('9', '8', '7', true), false).warnings.empty());
}

TEST(ExportCheck, ATunedGateWhoseHeadDidNotReplayTheBaseIsRefused) {
  const Environment base = side('1', '2', '3', true);
  // Tuned independently: two tuning results would decide the verdict.
  ExportCheck c = check_exports(base, side('9', '8', '7', true), false);
  EXPECT_TRUE(c.refuse);
  EXPECT_TRUE(says(c, "UNREPLAYED TUNING: " + kPackage));
  EXPECT_TRUE(says(c, "replayed no recorded choices"));
  // Replayed, but another file than the base's.
  c = check_exports(base, side('9', '8', '7', true, sha('c')), false);
  EXPECT_TRUE(c.refuse);
  EXPECT_TRUE(says(c, "not the base's (333333333333)"));
  // Replayed the base's, but tuned some of them again.
  c = check_exports(base, side('9', '8', '7', true, sha('3'), 5), false);
  EXPECT_TRUE(c.refuse);
  EXPECT_TRUE(says(c, "tuned again 5 of the base's choices"));
  // Replayed the base's and kept them: the code decides.
  c = check_exports(base, side('9', '8', '7', true, sha('3'), 0), false);
  EXPECT_FALSE(c.refuse);
  EXPECT_TRUE(c.warnings.empty());
}

TEST(ExportCheck, AllowingUnreplayedTuningWarnsInsteadOfRefusing) {
  const ExportCheck c = check_exports(side('1', '2', '3', true), side('1', '2', '4', true), true);
  EXPECT_FALSE(c.refuse);
  EXPECT_TRUE(says(c, "UNREPLAYED TUNING (allowed by"));
  EXPECT_TRUE(says(c, "EXPORT ONLY: " + kPackage));
}

}  // namespace
}  // namespace pg::app
