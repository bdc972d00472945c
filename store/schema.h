// The on-disk format: how we recognise our files, and the migrations that build the schema.
#pragma once
#include <cstdint>
#include <string>

struct sqlite3;

namespace pg::store::schema {

// PRAGMA application_id of every perfgate database: "PGDB" in ASCII.
inline constexpr int32_t kApplicationId = 0x50474442;

int current_version();

enum class FileKind { absent, empty, perfgate };

// Looks at the first bytes of the file behind `db`, a connection that has not read anything yet,
// through SQLite's own descriptor: no second descriptor of the file is ever opened (closing one
// would drop this process's locks), no lock is taken and no -wal or -shm is created, so a file
// that is not ours is never touched. Returns empty for a 0-byte file (never absent). Throws
// UsageError naming `path` when it is not a perfgate database: not SQLite at all, or SQLite with
// another application_id.
FileKind inspect_file(sqlite3* db, const std::string& path);

// Applies the missing migrations in one IMMEDIATE transaction. Refuses (UsageError) a database
// whose user_version is newer than this build's or whose application_id is not ours.
void migrate(sqlite3* db, const std::string& path);

// Throws UsageError when the schema version is newer than ours (or, if `exact`, differs).
void check_version(sqlite3* db, const std::string& path, bool exact);

}  // namespace pg::store::schema
