// One-value SQL queries for tests that look inside a real store file.
#pragma once
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdint>

namespace pg::testing {

// The first column of the first row of `sql` as an integer (a count, a PRAGMA value).
inline int64_t query_int(sqlite3* db, const char* sql) {
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, nullptr), SQLITE_OK) << sql;
  EXPECT_EQ(sqlite3_step(st), SQLITE_ROW) << sql;
  const int64_t v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

}  // namespace pg::testing
