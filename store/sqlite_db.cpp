#include "store/sqlite_db.h"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>

#include "common/errors.h"

namespace pg::store::sql {

namespace {

// Disk full, `ulimit -f` and I/O errors: what the operating system said, e.g.
// " [No space left on device]"; empty otherwise. SQLite reports ENOSPC as SQLITE_FULL and EFBIG as
// SQLITE_IOERR_WRITE, and its saved errno is not always kept, so the size limit is named from
// getrlimit when one is set.
std::string os_detail(sqlite3* db) {
  const int code = sqlite3_extended_errcode(db);
  if ((code & 0xff) != SQLITE_FULL && (code & 0xff) != SQLITE_IOERR) return "";
  rlimit fsize{};
  if (code == SQLITE_IOERR_WRITE && ::getrlimit(RLIMIT_FSIZE, &fsize) == 0 &&
      fsize.rlim_cur != RLIM_INFINITY)
    return " [" + std::string(std::strerror(EFBIG)) + ": the file size limit (ulimit -f) is " +
           std::to_string(fsize.rlim_cur) + " bytes]";
  if ((code & 0xff) == SQLITE_FULL) return " [" + std::string(std::strerror(ENOSPC)) + "]";
  const int err = sqlite3_system_errno(db);
  return err ? " [" + std::string(std::strerror(err)) + "]" : "";
}

// " (path)" of the main database, or "".
std::string file_of(sqlite3* db) {
  const char* file = sqlite3_db_filename(db, "main");
  return file && *file ? " (" + std::string(file) + ")" : "";
}

}  // namespace

void fail(sqlite3* db, std::string_view what) {
  std::string msg = "sqlite: " + std::string(what) + ": " + (db ? sqlite3_errmsg(db) : "no handle");
  if (db) msg += os_detail(db) + file_of(db);
  throw RuntimeFailure(msg);
}

void exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = (err ? err : "unknown error") + os_detail(db);
    sqlite3_free(err);
    throw RuntimeFailure("sqlite: " + msg + " (running: " + std::string(sql).substr(0, 60) + ")" +
                         file_of(db));
  }
}

Stmt::Stmt(sqlite3* db, std::string_view sql) : db_(db) {
  if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) !=
      SQLITE_OK)
    fail(db, "prepare '" + std::string(sql.substr(0, 60)) + "'");
}

Stmt::~Stmt() { sqlite3_finalize(stmt_); }

Stmt& Stmt::bind(int i, int64_t v) {
  if (sqlite3_bind_int64(stmt_, i, v) != SQLITE_OK) fail(db_, "bind");
  return *this;
}

Stmt& Stmt::bind(int i, double v) {
  if (sqlite3_bind_double(stmt_, i, v) != SQLITE_OK) fail(db_, "bind");
  return *this;
}

Stmt& Stmt::bind(int i, std::string_view v) {
  if (sqlite3_bind_text64(stmt_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8) != SQLITE_OK)
    fail(db_, "bind");
  return *this;
}

Stmt& Stmt::bind(int i, const std::optional<std::string>& v) {
  return v ? bind(i, std::string_view(*v)) : bind_null(i);
}

Stmt& Stmt::bind_null(int i) {
  if (sqlite3_bind_null(stmt_, i) != SQLITE_OK) fail(db_, "bind");
  return *this;
}

Stmt& Stmt::bind_blob(int i, std::string_view bytes) {
  if (sqlite3_bind_blob64(stmt_, i, bytes.data(), bytes.size(), SQLITE_TRANSIENT) != SQLITE_OK)
    fail(db_, "bind");
  return *this;
}

std::string Stmt::blob(int col) const {
  const void* p = sqlite3_column_blob(stmt_, col);
  if (!p) return {};
  return std::string(static_cast<const char*>(p),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

bool Stmt::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(db_, "step");
}

void Stmt::run() {
  while (step()) {
  }
}

void Stmt::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Stmt::is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
int64_t Stmt::int64(int col) const { return sqlite3_column_int64(stmt_, col); }
double Stmt::real(int col) const { return sqlite3_column_double(stmt_, col); }

std::string Stmt::text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (!p) return {};
  return std::string(reinterpret_cast<const char*>(p),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

std::optional<std::string> Stmt::opt_text(int col) const {
  if (is_null(col)) return std::nullopt;
  return text(col);
}

Transaction::Transaction(sqlite3* db, bool immediate)
    : db_(db), nested_(sqlite3_get_autocommit(db) == 0) {
  if (nested_)
    exec(db, "SAVEPOINT pg_nested");
  else
    exec(db, immediate ? "BEGIN IMMEDIATE" : "BEGIN");
}

Transaction::~Transaction() {
  if (!open_) return;
  if (nested_)
    sqlite3_exec(db_, "ROLLBACK TO pg_nested; RELEASE pg_nested", nullptr, nullptr, nullptr);
  else
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  exec(db_, nested_ ? "RELEASE pg_nested" : "COMMIT");
  open_ = false;
}

int64_t query_int(sqlite3* db, const char* sql) {
  Stmt s(db, sql);
  if (!s.step()) fail(db, std::string("no row from ") + sql);
  return s.int64(0);
}

}  // namespace pg::store::sql
