// SQLite's WAL needs every connection's POSIX locks on the database file for as long as it is
// open. Closing ANY descriptor of that file in the process drops all of them, so opening a second
// Store must never read the file outside SQLite. Otherwise another process believes it is the last
// user, checkpoints, and deletes -wal/-shm under us: our later writes go to an unlinked file.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "store/store.h"
#include "test_util.h"

namespace pg {
namespace {

// Runs the sqlite3 shell in a separate process; returns its stdout (trimmed).
std::string sqlite3_cli(const std::string& db, const std::string& sql) {
  const std::string cmd = std::string(SQLITE3_BIN) + " '" + db + "' \"" + sql + "\" 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "popen failed";
  std::string out;
  char buf[256];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

TEST(FileLocks, ASecondStoreInTheProcessKeepsTheFirstOnesLocks) {
  test::TempDir dir;
  const std::string db = dir.file("pg.db");
  store::Store writer(db);
  test::write_run(writer, test::sample_run(0));
  // What a server does per worker thread, and `serve` + ingest do side by side.
  {
    store::Store reader(db, true);
    EXPECT_EQ(reader.run_count(), 1);
  }
  {
    store::Store other(db);
    EXPECT_EQ(other.run_count(), 1);
  }
  // Another process opens and closes the file. If it believed it was the last user it would
  // checkpoint and delete the -wal our connection still uses.
  EXPECT_EQ(sqlite3_cli(db, "SELECT count(*) FROM runs"), "1");
  EXPECT_TRUE(std::filesystem::exists(db + "-wal")) << "another process deleted our WAL";
  // A run acknowledged after that must be visible to every other process at once.
  test::write_run(writer, test::sample_run(1));
  EXPECT_EQ(sqlite3_cli(db, "SELECT count(*) FROM runs"), "2");
  EXPECT_EQ(sqlite3_cli(db, "PRAGMA integrity_check"), "ok");
}

}  // namespace
}  // namespace pg
