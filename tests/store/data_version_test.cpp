// What a long-lived reader asks of its connection (Store::data_version, Store::set_busy_timeout):
// serve's generation counter moves on another connection's commit, and its best-effort view
// cache write gives up quickly on a locked database.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <stdexcept>

#include "store/store.h"
#include "test_util.h"

namespace pg {
namespace {

using test::TempDir;

TEST(Store, DataVersionMovesOnAnotherConnectionsCommitOnly) {
  TempDir dir;
  const std::string path = dir.file("pg.db");
  store::Store watcher(path);
  store::Store writer(path);
  const int64_t before = watcher.data_version();
  ASSERT_GE(before, 0);
  EXPECT_EQ(watcher.data_version(), before);  // nothing committed since
  test::write_run(writer, test::sample_run());
  const int64_t after = watcher.data_version();
  EXPECT_NE(after, before);
  EXPECT_EQ(watcher.data_version(), after);
}

TEST(Store, ShortBusyTimeoutGivesUpOnALockedDatabaseBeforeTheDefault) {
  TempDir dir;
  const std::string path = dir.file("pg.db");
  store::Store holder(path);
  store::Store waiter(path);
  ASSERT_EQ(sqlite3_exec(holder.handle(), "BEGIN IMMEDIATE", nullptr, nullptr, nullptr),
            SQLITE_OK);  // the write lock, held to the end of the test
  waiter.set_busy_timeout(50);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(test::write_run(waiter, test::sample_run(1)), std::exception);
  // The default is 5 s; 50 ms (plus scheduling) is far below it.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(4));
}

}  // namespace
}  // namespace pg
