// One-value SQL queries for tests that look inside a real store file.
#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace pg::testing {

// The first column of the first row of `sql` as an integer (a count, a PRAGMA value); throws
// when the statement fails or returns no row, so a broken query fails the test that made it.
inline int64_t query_int(sqlite3* db, const char* sql) {
  sqlite3_stmt* st = nullptr;
  const bool ok = sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK &&
                  sqlite3_step(st) == SQLITE_ROW;
  const int64_t v = ok ? sqlite3_column_int64(st, 0) : 0;
  sqlite3_finalize(st);
  if (!ok) throw std::runtime_error(std::string("query failed: ") + sql);
  return v;
}

}  // namespace pg::testing
