// Accepted slowdowns (schema step 10): acceptances of a ref with their cells and ratios, read
// back by ref, revoked by a later row (never updated), and refused when malformed.
#include <gtest/gtest.h>

#include "common/errors.h"
#include "store/store.h"
#include "test_util.h"

namespace pg {
namespace {

using test::TempDir;

store::Store::Acceptance acceptance(const std::string& ref, double ratio) {
  store::Store::Acceptance a;
  a.ref = ref;
  a.cells = {{CellKey{"tiny", "fp32", 4, 64, 8, true, "sdpa", false, "cpu"}, "tpot_ms", ratio}};
  a.reason = "the new sampler costs 10%";
  a.author = "ana";
  return a;
}

TEST(Acceptances, AreStoredAndReadBackByRefWithTheirCells) {
  TempDir dir;
  store::Store s(dir.file("a.db"));
  const auto a = s.add_acceptance(acceptance("refs/pull/7/merge", 1.1));
  s.add_acceptance(acceptance("refs/pull/8/merge", 1.2));
  EXPECT_GT(a.id, 0);
  EXPECT_FALSE(a.at.empty());
  const auto of7 = s.acceptances("refs/pull/7/merge");
  ASSERT_EQ(of7.size(), 1u);
  EXPECT_EQ(of7[0].reason, "the new sampler costs 10%");
  EXPECT_EQ(of7[0].via, "cli");
  ASSERT_EQ(of7[0].cells.size(), 1u);
  EXPECT_EQ(of7[0].cells[0].key.batch_size, 4);
  EXPECT_EQ(of7[0].cells[0].metric, "tpot_ms");
  EXPECT_DOUBLE_EQ(of7[0].cells[0].ratio, 1.1);
  EXPECT_FALSE(of7[0].revoked_by);
  EXPECT_EQ(s.acceptances().size(), 2u);
}

TEST(Acceptances, ARevocationIsALaterRowThatEndsOne) {
  TempDir dir;
  const std::string path = dir.file("a.db");
  int64_t id = 0;
  {
    store::Store s(path);
    id = s.add_acceptance(acceptance("refs/pull/7/merge", 1.1)).id;
    const auto r = s.revoke_acceptance(id, "the sampler was reverted", "bo", "token");
    EXPECT_TRUE(r.revoked_by);
    EXPECT_THROW(s.revoke_acceptance(id, "again", "bo"), UsageError);
    EXPECT_THROW(s.revoke_acceptance(id + 100, "none", "bo"), UsageError);
  }
  store::Store s(path);  // as stored
  const auto all = s.acceptances("refs/pull/7/merge");
  ASSERT_EQ(all.size(), 1u);
  ASSERT_TRUE(all[0].revoked_by);
  EXPECT_EQ(all[0].revoked_author, "bo");
  EXPECT_EQ(all[0].revoked_reason, "the sampler was reverted");
  EXPECT_EQ(all[0].reason, "the new sampler costs 10%");  // the acceptance itself is kept
}

TEST(Acceptances, MalformedOnesAreRefusedNamingTheField) {
  TempDir dir;
  store::Store s(dir.file("a.db"));
  auto expect_refused = [&](store::Store::Acceptance a, const std::string& field) {
    try {
      s.add_acceptance(a);
      FAIL() << "accepted: " << field;
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(field, 0), 0u) << e.what();
    }
  };
  auto a = acceptance("", 1.1);
  expect_refused(a, "ref");
  a = acceptance("r", 1.1);
  a.reason.clear();
  expect_refused(a, "reason");
  a = acceptance("r", 1.1);
  a.cells.clear();
  expect_refused(a, "cells");
  expect_refused(acceptance("r", 0.0), "cells");
  a = acceptance("r", 1.1);
  a.gate_id = 42;
  expect_refused(a, "gate_id");
  a = acceptance("r", 1.1);
  a.via = "typed";
  expect_refused(a, "via");
  EXPECT_TRUE(s.acceptances().empty());
}

}  // namespace
}  // namespace pg
