// The store against real SQLite files: round trips, schema and pragmas, refusal of foreign files.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <filesystem>
#include <numeric>

#include "common/errors.h"
#include "store/schema.h"
#include "store/store.h"
#include "test_util.h"

namespace pg {
namespace {

using test::TempDir;

int64_t pragma_int(Store& s, const char* sql) {
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(s.handle(), sql, -1, &st, nullptr), SQLITE_OK);
  EXPECT_EQ(sqlite3_step(st), SQLITE_ROW);
  const int64_t v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

std::string pragma_text(sqlite3* db, const char* sql) {
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, nullptr), SQLITE_OK);
  EXPECT_EQ(sqlite3_step(st), SQLITE_ROW);
  std::string v = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  return v;
}

void raw_exec(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_close(db);
}

void expect_cells_equal(const CellResult& a, const CellResult& b) {
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.metrics, b.metrics);  // exact doubles
  EXPECT_EQ(a.samples.prefill_ms, b.samples.prefill_ms);
  EXPECT_EQ(a.samples.decode_ms, b.samples.decode_ms);
}

int64_t write_run(Store& s, const pg::Run& r, bool finish = true) {
  const int64_t id = s.begin_run(r.git, r.env, r.config_json);
  for (const auto& c : r.cells) s.add_cell(id, c);
  if (finish) s.finish_run(id, r.status);
  return id;
}

TEST(Store, RoundTripsEveryFieldIncludingRawSamples) {
  TempDir dir;
  const pg::Run in = test::sample_run();
  int64_t id = 0;
  {
    Store s(dir.file("pg.db"));
    id = write_run(s, in);
  }
  Store s(dir.file("pg.db"));  // reopened: everything came from disk
  auto out = s.load_run(id);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->id, id);
  EXPECT_EQ(out->status, RunStatus::complete);
  EXPECT_FALSE(out->started_at.empty());
  EXPECT_FALSE(out->finished_at.empty());
  EXPECT_EQ(out->git.state, in.git.state);
  EXPECT_EQ(out->git.commit, in.git.commit);
  EXPECT_EQ(out->git.branch, in.git.branch);
  EXPECT_EQ(out->git.subject, in.git.subject);
  EXPECT_EQ(out->git.time, in.git.time);
  EXPECT_EQ(out->git.dirty, in.git.dirty);
  EXPECT_EQ(out->git.repo_path, in.git.repo_path);
  EXPECT_EQ(out->env, in.env);
  EXPECT_EQ(out->config_json, in.config_json);
  ASSERT_EQ(out->cells.size(), in.cells.size());
  for (size_t i = 0; i < in.cells.size(); ++i) expect_cells_equal(out->cells[i], in.cells[i]);

  auto light = s.load_run(id, {true, false});
  ASSERT_TRUE(light);
  EXPECT_EQ(light->cells[0].metrics, in.cells[0].metrics);
  EXPECT_TRUE(light->cells[0].samples.prefill_ms.empty());
  EXPECT_TRUE(s.load_run(id, {false, false})->cells.empty());
  EXPECT_FALSE(s.load_run(id + 100));
}

TEST(Store, OutsideARepositoryStoresNullsNotGarbage) {
  TempDir dir;
  Store s(dir.file("pg.db"));
  GitInfo g;
  g.state = "not-a-repository";
  g.repo_path = "/tmp/nowhere";
  const int64_t id = s.begin_run(g, test::sample_env(), "{}");
  auto r = s.load_run(id);
  EXPECT_EQ(r->git.state, "not-a-repository");
  EXPECT_FALSE(r->git.commit);
  EXPECT_FALSE(r->git.branch);
  EXPECT_FALSE(r->git.subject);
  EXPECT_FALSE(r->git.time);
  EXPECT_EQ(r->status, RunStatus::incomplete);
  EXPECT_TRUE(r->finished_at.empty());
}

TEST(Store, SetsSchemaVersionApplicationIdWalAndForeignKeys) {
  TempDir dir;
  const std::string path = dir.file("pg.db");
  {
    Store s(path);
    EXPECT_EQ(pragma_int(s, "PRAGMA user_version"), Store::schema_version());
    EXPECT_GE(Store::schema_version(), 1);
    EXPECT_EQ(pragma_int(s, "PRAGMA application_id"), schema::kApplicationId);
    EXPECT_EQ(pragma_text(s.handle(), "PRAGMA journal_mode"), "wal");
    EXPECT_EQ(pragma_int(s, "PRAGMA foreign_keys"), 1);
    EXPECT_EQ(pragma_int(s, "PRAGMA synchronous"), 1);  // NORMAL
    EXPECT_GE(pragma_int(s, "PRAGMA busy_timeout"), 1000);
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
            static_cast<uint32_t>(schema::kApplicationId));
}

TEST(Store, MigratesAnEmptyFileToTheCurrentSchema) {
  TempDir dir;
  const std::string path = dir.file("empty.db");
  test::write_bytes(path, "");
  Store s(path);
  EXPECT_EQ(pragma_int(s, "PRAGMA user_version"), Store::schema_version());
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
  Store again(path);
  EXPECT_EQ(again.run_count(), 1);
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
      Store s(path, read_only);
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
  { Store s(path); }
  raw_exec(path, ("PRAGMA user_version = " + std::to_string(Store::schema_version() + 1)).c_str());
  for (bool read_only : {false, true}) {
    try {
      Store s(path, read_only);
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
  EXPECT_THROW(Store(path, true), UsageError);
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_THROW(Store(dir.file("no/such/dir/x.db")), UsageError);
}

TEST(Store, ReadOnlyOpenReadsAWalDatabase) {
  TempDir dir;
  const std::string path = dir.file("pg.db");
  int64_t id = 0;
  {
    Store w(path);
    id = write_run(w, test::sample_run());
  }
  Store r(path, true);
  EXPECT_EQ(r.run_count(), 1);
  EXPECT_EQ(r.load_run(id)->cells.size(), 3u);
  EXPECT_THROW(r.begin_run(test::sample_git(), test::sample_env(), "{}"), RuntimeFailure);
}

TEST(Store, AKilledRunKeepsItsFinishedCellsAndStaysIncomplete) {
  TempDir dir;
  const pg::Run in = test::sample_run();
  int64_t id = 0;
  {
    Store s(dir.file("pg.db"));
    id = s.begin_run(in.git, in.env, in.config_json);
    s.add_cell(id, in.cells[0]);
    s.add_cell(id, in.cells[1]);
  }
  Store s(dir.file("pg.db"));
  auto r = s.load_run(id);
  EXPECT_EQ(r->status, RunStatus::incomplete);
  EXPECT_TRUE(r->finished_at.empty());
  ASSERT_EQ(r->cells.size(), 2u);
  expect_cells_equal(r->cells[1], in.cells[1]);
}

TEST(Store, RejectsMalformedCellsAndStoresNothingOfThem) {
  TempDir dir;
  Store s(dir.file("pg.db"));
  const int64_t id = s.begin_run(test::sample_git(), test::sample_env(), "{}");
  CellResult short_decode = test::sample_cell(1, 16, 3, 5);
  short_decode.samples.decode_ms[1].pop_back();
  try {
    s.add_cell(id, short_decode);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("decode_ms/1"), std::string::npos) << e.what();
  }
  CellResult nan_metric = test::sample_cell(1, 16);
  nan_metric.metrics["tpot_ms"] = std::nan("");
  EXPECT_THROW(s.add_cell(id, nan_metric), UsageError);
  CellResult uneven = test::sample_cell(1, 16);
  uneven.samples.prefill_ms.push_back(1.0);
  EXPECT_THROW(s.add_cell(id, uneven), UsageError);
  CellResult bad_dtype = test::sample_cell(1, 16);
  bad_dtype.key.dtype = "fp8";
  EXPECT_THROW(s.add_cell(id, bad_dtype), UsageError);
  EXPECT_THROW(s.add_cell(id + 1, test::sample_cell(1, 16)), UsageError);
  EXPECT_TRUE(s.load_run(id)->cells.empty());
  s.finish_run(id, RunStatus::failed);
  EXPECT_THROW(s.add_cell(id, test::sample_cell(1, 16)), UsageError);
  EXPECT_EQ(s.load_run(id)->status, RunStatus::failed);
  EXPECT_THROW(s.finish_run(id + 1, RunStatus::complete), UsageError);
  GitInfo bad_git = test::sample_git();
  bad_git.commit = "not-a-sha";
  EXPECT_THROW(s.begin_run(bad_git, test::sample_env(), "{}"), UsageError);
  EXPECT_EQ(s.run_count(), 1);
}

TEST(Store, FindsRunsByCommitAndPrefix) {
  TempDir dir;
  Store s(dir.file("pg.db"));
  const int64_t a1 = write_run(s, test::sample_run(0));
  const int64_t b = write_run(s, test::sample_run(1));
  const int64_t a2 = write_run(s, test::sample_run(0));
  GitInfo none;
  none.state = "no-commit";
  s.begin_run(none, test::sample_env(), "{}");
  EXPECT_EQ(s.run_count(), 4);
  const auto all = s.list_runs();
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].id, a1);
  EXPECT_EQ(all[1].id, b);
  EXPECT_TRUE(all[0].cells.empty());  // the default filter leaves cells out
  EXPECT_EQ(s.list_runs({true, false})[0].cells.size(), 3u);

  const std::string sha_a = *test::sample_git(0).commit, sha_b = *test::sample_git(1).commit;
  EXPECT_EQ(s.commits_with_prefix("0123"), std::vector<std::string>{sha_a});
  EXPECT_EQ(s.commits_with_prefix("0123456789ABCDEF"), std::vector<std::string>{sha_a});
  EXPECT_EQ(s.commits_with_prefix(sha_b), std::vector<std::string>{sha_b});
  EXPECT_TRUE(s.commits_with_prefix("0124").empty());
  EXPECT_TRUE(s.commits_with_prefix("zz").empty());
  EXPECT_TRUE(s.commits_with_prefix("' OR 1=1 --").empty());
  EXPECT_EQ(s.commits_with_prefix("").size(), 2u);

  const auto runs = s.runs_for_commit(sha_a);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].id, a1);
  EXPECT_EQ(runs[1].id, a2);
  EXPECT_EQ(runs[0].cells[0].samples.decode_ms.size(), 3u);
  EXPECT_TRUE(s.runs_for_commit("ffffffffffffffffffffffffffffffffffffffff").empty());
}

TEST(Store, GroupsCellsIntoSeriesByKeyAndComparableEnvironment) {
  TempDir dir;
  Store s(dir.file("pg.db"));
  pg::Run later = test::sample_run(1);    // commit time 2024-05-02
  pg::Run earlier = test::sample_run(0);  // commit time 2024-05-01
  const int64_t id_later = write_run(s, later);
  const int64_t id_earlier = write_run(s, earlier);
  pg::Run other_gpu = test::sample_run(0);
  other_gpu.env = test::sample_env("NVIDIA A100");
  write_run(s, other_gpu);
  pg::Run other_host = test::sample_run(0);  // hostname is not a comparable field
  other_host.env["hostname"] = "gpu2";
  const int64_t id_other_host = write_run(s, other_host);

  // 2 keys that are ok + 1 oom key, on 2 comparable environments.
  EXPECT_EQ(s.list_series().size(), 6u);
  const CellKey key = earlier.cells[0].key;
  auto sid = s.find_series(key, test::sample_env());
  ASSERT_TRUE(sid);
  EXPECT_NE(sid, s.find_series(key, test::sample_env("NVIDIA A100")));
  EXPECT_FALSE(s.find_series(test::sample_cell(99, 1).key, test::sample_env()));
  auto info = s.get_series(*sid);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->key, key);
  EXPECT_EQ(info->env.count("hostname"), 0u);
  EXPECT_EQ(info->env.at("device"), "NVIDIA H200");
  EXPECT_FALSE(s.get_series(9999));

  const auto points = s.series_samples(*sid);
  ASSERT_EQ(points.size(), 3u);
  // History order: commit time first (the earlier commit was stored later), then run id.
  EXPECT_EQ(points[0].run_id, id_earlier);
  EXPECT_EQ(points[1].run_id, id_other_host);
  EXPECT_EQ(points[2].run_id, id_later);
  EXPECT_EQ(points[0].commit, *earlier.git.commit);
  EXPECT_EQ(points[0].subject, *earlier.git.subject);
  EXPECT_EQ(points[0].commit_time, *earlier.git.time);
  EXPECT_EQ(points[0].metrics, earlier.cells[0].metrics);
  EXPECT_EQ(points[0].samples.decode_ms, earlier.cells[0].samples.decode_ms);
  ASSERT_EQ(points[0].rep_tpot_ms.size(), 3u);
  const auto& steps = earlier.cells[0].samples.decode_ms[2];
  EXPECT_DOUBLE_EQ(points[0].rep_tpot_ms[2],
                   std::accumulate(steps.begin(), steps.end(), 0.0) / (key.gen_tokens - 1));
  EXPECT_EQ(points[0].rep_prefill_ms, earlier.cells[0].samples.prefill_ms);

  const auto light = s.series_samples(*sid, false);
  ASSERT_EQ(light.size(), 3u);
  EXPECT_TRUE(light[0].samples.decode_ms.empty());
  EXPECT_EQ(light[0].rep_tpot_ms, points[0].rep_tpot_ms);
}

TEST(Store, RunsWithoutACommitFollowTheirStartTimeInHistory) {
  TempDir dir;
  Store s(dir.file("pg.db"));
  pg::Run committed = test::sample_run(0);  // commit time 2024-05-01T10:00Z
  pg::Run loose = test::sample_run(0);
  loose.git = GitInfo{};
  loose.git.state = "not-a-repository";
  loose.started_at = "2024-04-30T00:00:00Z";  // before the commit: comes first
  const int64_t a = s.import_run(committed).id;
  const int64_t b = s.import_run(loose).id;
  auto sid = s.find_series(committed.cells[0].key, committed.env);
  const auto points = s.series_samples(*sid, false);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].run_id, b);
  EXPECT_EQ(points[0].commit, "");
  EXPECT_EQ(points[1].run_id, a);
}

}  // namespace
}  // namespace pg
