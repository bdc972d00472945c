// Opening a database: recognise it (or refuse, untouched), configure the connection, migrate.
#include <filesystem>

#include "common/errors.h"
#include "store/schema.h"
#include "store/store_internal.h"

namespace pg {

Store::Store(const std::string& path, bool read_only) : path_(path) {
  const schema::FileKind kind = schema::inspect_file(path);  // throws for a foreign file
  const bool fresh = kind != schema::FileKind::perfgate;
  if (read_only && fresh)
    throw UsageError("no perfgate database at '" + path + "'" +
                     (kind == schema::FileKind::empty ? " (the file is empty)" : ""));
  if (fresh) {
    const auto dir = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!dir.empty() && !std::filesystem::is_directory(dir, ec))
      throw UsageError("cannot create database '" + path + "': directory '" + dir.string() +
                       "' does not exist");
  }
  const int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (sqlite3_open_v2(path.c_str(), &db_, flags | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw UsageError("cannot open database '" + path + "': " + msg);
  }
  try {
    sqlite3_busy_timeout(db_, 5000);
    sql::exec(db_, "PRAGMA foreign_keys = ON");
    if (read_only) {
      schema::check_version(db_, path, /*exact=*/true);
    } else {
      schema::check_version(db_, path, /*exact=*/false);  // before anything is written
      // A new file gets its application_id and schema with a rollback journal, straight into the
      // main file, so its header identifies it before WAL mode is switched on.
      if (fresh) schema::migrate(db_, path);
      sql::Stmt wal(db_, "PRAGMA journal_mode = WAL");
      if (!wal.step() || wal.text(0) != "wal")
        throw RuntimeFailure("cannot switch '" + path + "' to WAL mode");
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

}  // namespace pg
