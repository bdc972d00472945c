// Opening a database: recognise it (or refuse, untouched), configure the connection, migrate.
// The file is only ever opened by SQLite (see schema::inspect_file and docs/STORE.md).
#include <sys/statvfs.h>

#include <cstdio>
#include <filesystem>

#include "common/errors.h"
#include "store/schema.h"
#include "store/store_internal.h"

namespace pg::store {
namespace {
namespace fs = std::filesystem;

// "file:" URI of a path, for the query parameters only URIs can carry.
std::string file_uri(const std::string& path) {
  std::string uri = "file:";
  for (char c : fs::absolute(path).lexically_normal().string()) {
    if (c == '%' || c == '?' || c == '#') {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", static_cast<unsigned char>(c));
      uri += hex;
    } else {
      uri += c;
    }
  }
  return uri;
}

// A reader opens with mode=ro. On a read-only mount nobody can change the file, and SQLite cannot
// create the -shm a WAL reader needs, so there it is opened immutable (no locks, no -shm) unless a
// -wal was left beside it (then SQLite reads that WAL as a read-only connection may).
bool on_read_only_mount(const std::string& path) {
  struct statvfs vfs {};
  const fs::path dir = fs::absolute(path).parent_path();
  return ::statvfs(fs::exists(path) ? path.c_str() : dir.c_str(), &vfs) == 0 &&
         (vfs.f_flag & ST_RDONLY);
}

std::string reader_uri(const std::string& path) {
  std::string uri = file_uri(path) + "?mode=ro";
  std::error_code ec;
  if (on_read_only_mount(path) && !fs::exists(path + "-wal", ec)) uri += "&immutable=1";
  return uri;
}

}  // namespace

Store::Store(const std::string& path, bool read_only) : path_(path) {
  std::error_code ec;
  const auto st = fs::status(path, ec);
  const bool absent = ec || !fs::exists(st);
  if (absent && read_only) throw UsageError("no perfgate database at '" + path + "'");
  if (!absent && !fs::is_regular_file(st))
    throw UsageError("'" + path + "' is not a perfgate database (not a regular file)");
  if (absent) {
    const auto dir = fs::path(path).parent_path();
    if (!dir.empty() && !fs::is_directory(dir, ec))
      throw UsageError("cannot create database '" + path + "': directory '" + dir.string() +
                       "' does not exist");
  }
  if (!read_only && on_read_only_mount(path))
    throw UsageError("cannot write database '" + path +
                     "': it is on a read-only file system (readers such as export, runs and "
                     "compare can use it there)");
  const int flags = read_only ? (SQLITE_OPEN_READONLY | SQLITE_OPEN_URI)
                              : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  const std::string name = read_only ? reader_uri(path) : path;
  if (sqlite3_open_v2(name.c_str(), &db_, flags | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw UsageError("cannot open database '" + path + "': " + msg);
  }
  try {
    const schema::FileKind kind = schema::inspect_file(db_, path);  // throws for a foreign file
    const bool fresh = kind != schema::FileKind::perfgate;
    if (read_only && fresh)
      throw UsageError("no perfgate database at '" + path + "' (the file is empty)");
    sqlite3_busy_timeout(db_, 5000);
    sql::exec(db_, "PRAGMA foreign_keys = ON");
    if (read_only) {
      schema::check_version(db_, path, /*exact=*/true);
    } else {
      schema::check_version(db_, path, /*exact=*/false);  // before anything is written
      // A new file gets its application_id and schema with a rollback journal, straight into the
      // main file, so its header identifies it before WAL mode is switched on.
      if (fresh) schema::migrate(db_, path);
      {
        // Scoped: a statement left mid-row would make the migration's COMMIT below fail.
        sql::Stmt wal(db_, "PRAGMA journal_mode = WAL");
        if (!wal.step() || wal.text(0) != "wal")
          throw RuntimeFailure("cannot switch '" + path + "' to WAL mode");
      }
      sql::exec(db_, "PRAGMA synchronous = NORMAL");
      if (!fresh) schema::migrate(db_, path);
    }
  } catch (...) {
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw;
  }
}

Store::~Store() { sqlite3_close_v2(db_); }

int Store::schema_version() { return schema::current_version(); }

int64_t Store::data_version() {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, "PRAGMA data_version", -1, &st, nullptr) != SQLITE_OK) return -1;
  int64_t v = -1;
  if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

void Store::set_busy_timeout(int milliseconds) { sqlite3_busy_timeout(db_, milliseconds); }

}  // namespace pg::store
