// Ingest: a batch is stored whole or not at all, and a run is never stored twice.
#include <gtest/gtest.h>

#include "common/errors.h"
#include "store/run_json.h"
#include "store/store.h"
#include "test_util.h"

namespace pg {
namespace {

TEST(Import, StoresAWholeRunWithItsOwnFields) {
  test::TempDir dir;
  Store s(dir.file("pg.db"));
  pg::Run in = test::sample_run();
  in.status = RunStatus::incomplete;
  const auto res = s.import_run(in);
  EXPECT_TRUE(res.inserted);
  auto out = s.load_run(res.id);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->status, RunStatus::incomplete);
  EXPECT_EQ(out->started_at, in.started_at);
  EXPECT_EQ(out->finished_at, in.finished_at);
  EXPECT_EQ(out->cells.size(), 3u);
  EXPECT_EQ(out->cells[2].samples.decode_ms, in.cells[2].samples.decode_ms);
}

TEST(Import, ABatchWithOneInvalidRunStoresNothing) {
  test::TempDir dir;
  Store s(dir.file("pg.db"));
  const int64_t before_id = s.import_run(test::sample_run(0)).id;
  pg::Run good = test::sample_run(1);
  pg::Run bad = test::sample_run(1);
  bad.cells[2].samples.decode_ms[0].push_back(0.1);  // one step too many
  try {
    s.import_runs({good, test::sample_run(0), bad});
    FAIL() << "accepted an invalid run";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("/runs/2/cells/2/samples/decode_ms/0"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(s.run_count(), 1);
  EXPECT_EQ(s.list_runs().back().id, before_id);
  EXPECT_EQ(s.list_series().size(), 3u);  // no series left behind by the rolled-back runs
  // The store still takes writes afterwards.
  EXPECT_TRUE(s.import_runs({good}).front().inserted);
}

TEST(Import, AnIdenticalRunIsNotStoredTwice) {
  test::TempDir dir;
  Store s(dir.file("pg.db"));
  const pg::Run run = test::sample_run();
  const auto first = s.import_run(run);
  ASSERT_TRUE(first.inserted);
  const auto again = s.import_run(run);
  EXPECT_FALSE(again.inserted);
  EXPECT_EQ(again.id, first.id);
  // Within one batch too, and alongside a new run.
  const auto batch = s.import_runs({test::sample_run(1), run, test::sample_run(1)});
  EXPECT_TRUE(batch[0].inserted);
  EXPECT_FALSE(batch[1].inserted);
  EXPECT_EQ(batch[1].id, first.id);
  EXPECT_FALSE(batch[2].inserted);
  EXPECT_EQ(batch[2].id, batch[0].id);
  EXPECT_EQ(s.run_count(), 2);
}

TEST(Import, RunsThatDifferInOneSampleOrTheEnvironmentAreBothKept) {
  test::TempDir dir;
  Store s(dir.file("pg.db"));
  const pg::Run run = test::sample_run();
  pg::Run one_sample = run;
  one_sample.cells[0].samples.decode_ms[2][3] += 1e-9;
  pg::Run other_env = run;
  other_env.env["hostname"] = "gpu9";
  pg::Run other_commit = run;
  other_commit.git = test::sample_git(1);
  for (const auto& r : {run, one_sample, other_env, other_commit})
    EXPECT_TRUE(s.import_run(r).inserted);
  EXPECT_EQ(s.run_count(), 4);
}

TEST(Import, AFinishedLocalRunIsRecognisedWhenItsExportIsPosted) {
  test::TempDir dir;
  Store s(dir.file("pg.db"));
  const pg::Run run = test::sample_run();
  const int64_t id = s.begin_run(run.git, run.env, run.config_json);
  for (const auto& c : run.cells) s.add_cell(id, c);
  s.finish_run(id, RunStatus::complete);
  const auto exported = runs_to_json({*s.load_run(id)}, true);
  const auto res = s.import_runs(runs_from_json(exported, "export.json"));
  EXPECT_FALSE(res[0].inserted);
  EXPECT_EQ(res[0].id, id);
  EXPECT_EQ(s.run_count(), 1);
  // An unfinished run has no identity yet, so it never swallows a later upload.
  const int64_t open_id = s.begin_run(run.git, run.env, run.config_json);
  s.add_cell(open_id, run.cells[0]);
  pg::Run partial = run;
  partial.cells.resize(1);
  EXPECT_TRUE(s.import_run(partial).inserted);
}

TEST(Import, UppercaseCommitsAreStoredLowercase) {
  test::TempDir dir;
  Store s(dir.file("pg.db"));
  pg::Run run = test::sample_run();
  run.git.commit = "0123456789ABCDEF0123456789ABCDEF01234567";
  const int64_t id = s.import_run(run).id;
  EXPECT_EQ(*s.load_run(id)->git.commit, "0123456789abcdef0123456789abcdef01234567");
  EXPECT_FALSE(s.import_run(test::sample_run()).inserted);
}

}  // namespace
}  // namespace pg
