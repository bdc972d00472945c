// The store's file: schema version, application id and pragmas, migrations, refusal of foreign or
// newer files, read-only opens.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>

#include "common/errors.h"
#include "store/schema.h"
#include "store/store.h"
#include "test_util.h"

namespace pg {
namespace {

using test::TempDir;
using test::write_run;

std::string pragma_text(sqlite3* db, const char* sql) {
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, nullptr), SQLITE_OK);
  EXPECT_EQ(sqlite3_step(st), SQLITE_ROW);
  std::string v = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  return v;
}

void raw_exec(const std::string& path, const std::string& sql_text) {
  const char* sql = sql_text.c_str();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_close(db);
}

TEST(Store, SetsSchemaVersionApplicationIdWalAndForeignKeys) {
  TempDir dir;
  const std::string path = dir.file("pg.db");
  {
    store::Store s(path);
    EXPECT_EQ(test::query_int(s, "PRAGMA user_version"), store::Store::schema_version());
    EXPECT_GE(store::Store::schema_version(), 1);
    EXPECT_EQ(test::query_int(s, "PRAGMA application_id"), store::schema::kApplicationId);
    EXPECT_EQ(pragma_text(s.handle(), "PRAGMA journal_mode"), "wal");
    EXPECT_EQ(test::query_int(s, "PRAGMA foreign_keys"), 1);
    EXPECT_EQ(test::query_int(s, "PRAGMA synchronous"), 1);  // NORMAL
    EXPECT_GE(test::query_int(s, "PRAGMA busy_timeout"), 1000);
    // Foreign keys are enforced, not just declared.
    EXPECT_NE(
        sqlite3_exec(s.handle(),
                     "INSERT INTO cells(run_id, ordinal, series_id, model, dtype, batch_size, "
                     "seq_len, gen_tokens, kv_cache, attention, cuda_graphs, device, status) "
                     "VALUES(999, 0, 999, 'm', 'fp32', 1, 1, 1, 1, 'math', 0, 'cpu', 'ok')",
                     nullptr, nullptr, nullptr),
        SQLITE_OK);
  }
  // The identifying header is in the main file itself, not only in the WAL.
  const std::string bytes = test::read_bytes(path);
  ASSERT_GE(bytes.size(), 100u);
  const auto b = [&](size_t i) {
    return static_cast<uint32_t>(static_cast<unsigned char>(bytes[i]));
  };
  EXPECT_EQ((b(68) << 24) | (b(69) << 16) | (b(70) << 8) | b(71),
            static_cast<uint32_t>(store::schema::kApplicationId));
}

TEST(Store, MigratesAnEmptyFileToTheCurrentSchema) {
  TempDir dir;
  const std::string path = dir.file("empty.db");
  test::write_bytes(path, "");
  store::Store s(path);
  EXPECT_EQ(test::query_int(s, "PRAGMA user_version"), store::Store::schema_version());
  for (const char* table :
       {"runs", "environments", "cells", "metrics", "samples", "series", "repetitions"}) {
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(s.handle(), "SELECT count(*) FROM sqlite_master WHERE name = ?1", -1, &st,
                       nullptr);
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    EXPECT_EQ(sqlite3_column_int(st, 0), 1) << table;
    sqlite3_finalize(st);
  }
  EXPECT_EQ(s.run_count(), 0);
  // Reopening a current database migrates nothing and keeps the data.
  write_run(s, test::sample_run());
  store::Store again(path);
  EXPECT_EQ(again.run_count(), 1);
}

TEST(Store, MigratesAnOlderDatabaseThatHoldsRuns) {
  // A database as perfgate wrote it before schema step 3 (view cache), 4 (git remote) and later
  // ones: the migration must run on an existing WAL database with runs, not only on a fresh file.
  TempDir dir;
  const std::string path = dir.file("old.db");
  {
    store::Store s(path);
    write_run(s, test::sample_run());
  }
  raw_exec(path,
           std::string(test::kUndoStepsSince9) +
               "DROP TABLE credentials; ALTER TABLE regression_events DROP COLUMN via; "
               "DROP TABLE profile_ops; DROP TABLE profile_steps; DROP TABLE profiles; "
               "DROP TABLE profile_names; "
               "DROP TABLE gate_result_events; DROP TABLE gate_results; DROP TABLE view_cache; "
               "DROP INDEX runs_uuid; ALTER TABLE runs DROP COLUMN uuid; "
               "ALTER TABLE runs DROP COLUMN git_remote; PRAGMA user_version = 2");
  store::Store s(path);
  EXPECT_EQ(test::query_int(s, "PRAGMA user_version"), store::Store::schema_version());
  EXPECT_EQ(s.run_count(), 1);
  EXPECT_EQ(test::query_int(s, "SELECT count(*) FROM view_cache"), 0);
  EXPECT_EQ(test::query_int(s, "SELECT count(*) FROM runs WHERE git_remote IS NULL"), 1);
  EXPECT_EQ(test::query_int(s, "SELECT count(*) FROM gate_results"), 0);
  EXPECT_EQ(test::query_int(s, "SELECT count(*) FROM runs WHERE length(uuid) = 32"), 1);
}

// Step 6 gives every run a uuid, its identity on ingest: runs stored before it get fresh ones,
// each its own, and keep everything else.
TEST(Store, MigratesAVersion5StoreGivingEveryRunItsOwnUuid) {
  TempDir dir;
  const std::string path = dir.file("v5.db");
  {
    store::Store s(path);
    write_run(s, test::sample_run());
    write_run(s, test::sample_run());  // byte-identical: two runs all the same
  }
  raw_exec(path,
           std::string(test::kUndoStepsSince9) +
               "DROP TABLE credentials; ALTER TABLE regression_events DROP COLUMN via; "
               "ALTER TABLE gate_result_events DROP COLUMN via; "
               "DROP TABLE profile_ops; DROP TABLE profile_steps; DROP TABLE profiles; "
               "DROP TABLE profile_names; "
               "DROP INDEX runs_uuid; ALTER TABLE runs DROP COLUMN uuid; PRAGMA user_version = 5");
  store::Store s(path);
  EXPECT_EQ(test::query_int(s, "PRAGMA user_version"), store::Store::schema_version());
  EXPECT_EQ(s.run_count(), 2);
  EXPECT_EQ(test::query_int(s, "SELECT count(DISTINCT uuid) FROM runs"), 2);
  EXPECT_EQ(test::query_int(s,
                            "SELECT count(*) FROM runs WHERE length(uuid) = 32 AND uuid NOT "
                            "GLOB '*[^0-9a-f]*'"),
            2);
  EXPECT_EQ(s.load_run(1)->cells.size(), 3u);
  // A uuid is unique in the store.
  sqlite3* db = s.handle();
  EXPECT_NE(sqlite3_exec(db, "UPDATE runs SET uuid = (SELECT uuid FROM runs WHERE id = 1)", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
}

struct ForeignFile {
  const char* name;
  void (*make)(const std::string& path);
};

class ForeignFileTest : public ::testing::TestWithParam<ForeignFile> {};

TEST_P(ForeignFileTest, IsRefusedAndLeftByteForByteUntouched) {
  TempDir dir;
  const std::string path = dir.file("foreign.db");
  GetParam().make(path);
  const std::string before = test::read_bytes(path);
  ASSERT_FALSE(before.empty());
  const auto mtime = std::filesystem::last_write_time(path);
  const auto entries = [&] {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir.path()))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  };
  const auto files_before = entries();
  for (bool read_only : {false, true}) {
    try {
      store::Store s(path, read_only);
      FAIL() << "opened a foreign file";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(test::read_bytes(path), before);
  EXPECT_EQ(std::filesystem::last_write_time(path), mtime);
  EXPECT_EQ(entries(), files_before);  // no -wal, -shm or -journal left behind either
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, ForeignFileTest,
    ::testing::Values(
        ForeignFile{"random_bytes",
                    [](const std::string& p) {
                      std::string bytes;
                      for (int i = 0; i < 4096; ++i) bytes += static_cast<char>((i * 7919) % 251);
                      test::write_bytes(p, bytes);
                    }},
        ForeignFile{"text_file",
                    [](const std::string& p) { test::write_bytes(p, "name,value\nx,1\n"); }},
        ForeignFile{"short_text", [](const std::string& p) { test::write_bytes(p, "hi\n"); }},
        ForeignFile{"other_app_sqlite",
                    [](const std::string& p) {
                      raw_exec(p,
                               "CREATE TABLE runs(id INTEGER PRIMARY KEY, x TEXT);"
                               "INSERT INTO runs(x) VALUES('theirs');");
                    }},
        ForeignFile{"other_app_sqlite_wal_with_app_id",
                    [](const std::string& p) {
                      raw_exec(p,
                               "PRAGMA application_id = 1234;"
                               "CREATE TABLE notes(body TEXT); INSERT INTO notes VALUES('x');"
                               "PRAGMA journal_mode = WAL;");
                    }}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Store, RefusesADatabaseFromANewerPerfgate) {
  TempDir dir;
  const std::string path = dir.file("pg.db");
  { store::Store s(path); }
  raw_exec(path,
           ("PRAGMA user_version = " + std::to_string(store::Store::schema_version() + 1)).c_str());
  for (bool read_only : {false, true}) {
    try {
      store::Store s(path, read_only);
      FAIL() << "opened a newer database";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
}

TEST(Store, ReadOnlyNeverCreates) {
  TempDir dir;
  const std::string path = dir.file("absent.db");
  EXPECT_THROW(store::Store(path, true), UsageError);
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_THROW(store::Store(dir.file("no/such/dir/x.db")), UsageError);
}

TEST(Store, ReadOnlyOpenReadsAWalDatabase) {
  TempDir dir;
  const std::string path = dir.file("pg.db");
  int64_t id = 0;
  {
    store::Store w(path);
    id = write_run(w, test::sample_run());
  }
  store::Store r(path, true);
  EXPECT_EQ(r.run_count(), 1);
  EXPECT_EQ(r.load_run(id)->cells.size(), 3u);
  EXPECT_THROW(r.begin_run(test::sample_git(), test::sample_env(), "{}"), RuntimeFailure);
}

}  // namespace
}  // namespace pg
