// The store against real SQLite files: round trips, killed runs, malformed cells, lookups and
// series. The file itself (schema, pragmas, migrations, foreign and read-only files):
// store_file_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "common/errors.h"
#include "store/store.h"
#include "test_util.h"

namespace pg {
namespace {

using test::TempDir;
using test::write_run;

void expect_cells_equal(const CellResult& a, const CellResult& b) {
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.metrics, b.metrics);  // exact doubles
  EXPECT_EQ(a.samples.prefill_ms, b.samples.prefill_ms);
  EXPECT_EQ(a.samples.decode_ms, b.samples.decode_ms);
}

TEST(Store, RoundTripsEveryFieldIncludingRawSamples) {
  TempDir dir;
  const pg::Run in = test::sample_run();
  int64_t id = 0;
  {
    store::Store s(dir.file("pg.db"));
    id = write_run(s, in);
  }
  store::Store s(dir.file("pg.db"));  // reopened: everything came from disk
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
  store::Store s(dir.file("pg.db"));
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

TEST(Store, AKilledRunKeepsItsFinishedCellsAndStaysIncomplete) {
  TempDir dir;
  const pg::Run in = test::sample_run();
  int64_t id = 0;
  {
    store::Store s(dir.file("pg.db"));
    id = s.begin_run(in.git, in.env, in.config_json);
    s.add_cell(id, in.cells[0]);
    s.add_cell(id, in.cells[1]);
  }
  store::Store s(dir.file("pg.db"));
  auto r = s.load_run(id);
  EXPECT_EQ(r->status, RunStatus::incomplete);
  EXPECT_TRUE(r->finished_at.empty());
  ASSERT_EQ(r->cells.size(), 2u);
  expect_cells_equal(r->cells[1], in.cells[1]);
}

TEST(Store, RejectsMalformedCellsAndStoresNothingOfThem) {
  TempDir dir;
  store::Store s(dir.file("pg.db"));
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
  store::Store s(dir.file("pg.db"));
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
  store::Store s(dir.file("pg.db"));
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
  store::Store s(dir.file("pg.db"));
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
