// A thin RAII layer over the SQLite C API: prepared statements with bound values, and transactions
// that roll back unless committed. Internal to store/; nothing outside store/ sees SQLite.
#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pg::store::sql {

// Throws RuntimeFailure with SQLite's message and what we were doing.
[[noreturn]] void fail(sqlite3* db, std::string_view what);

void exec(sqlite3* db, const char* sql);

class Stmt {
 public:
  Stmt(sqlite3* db, std::string_view sql);
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  // Parameters are 1-based, as in SQLite.
  Stmt& bind(int i, int64_t v);
  Stmt& bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
  Stmt& bind(int i, bool v) { return bind(i, static_cast<int64_t>(v ? 1 : 0)); }
  Stmt& bind(int i, double v);
  Stmt& bind(int i, std::string_view v);
  Stmt& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, const std::optional<std::string>& v);
  Stmt& bind_null(int i);
  Stmt& bind_blob(int i, std::string_view bytes);

  // True while a row is available; false when done.
  bool step();
  // Runs a statement that returns no rows.
  void run();
  void reset();  // rewinds and clears bindings, for reuse in a loop

  bool is_null(int col) const;
  int64_t int64(int col) const;
  int integer(int col) const { return static_cast<int>(int64(col)); }
  double real(int col) const;
  std::string text(int col) const;
  std::optional<std::string> opt_text(int col) const;
  std::string blob(int col) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// BEGIN IMMEDIATE takes the write lock up front, so a writer never fails half-way on a lock
// upgrade. Inside a transaction the caller already holds, it nests as a SAVEPOINT instead.
class Transaction {
 public:
  explicit Transaction(sqlite3* db, bool immediate = true);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  sqlite3* db_;
  bool nested_;
  bool open_ = true;
};

// Runs `sql` and returns the first column of its first row (a PRAGMA, a COUNT).
int64_t query_int(sqlite3* db, const char* sql);

}  // namespace pg::store::sql
