// Ingest: a batch is stored whole or not at all; a run is stored once per uuid (its identity),
// and a run without one is always stored (content equality is not identity).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "store/run_json.h"
#include "store/store.h"
#include "test_util.h"

namespace pg {
namespace {

TEST(Import, StoresAWholeRunWithItsOwnFields) {
  test::TempDir dir;
  store::Store s(dir.file("pg.db"));
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
  store::Store s(dir.file("pg.db"));
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

// Two constant synthetic runs, or two runs of a deterministic benchmark, are byte-identical and
// still two measurements: ingest once merged them and the second was silently lost.
TEST(Import, TwoByteIdenticalRunsWithoutAUuidAreBothStored) {
  test::TempDir dir;
  store::Store s(dir.file("pg.db"));
  const pg::Run run = test::sample_run();
  const auto first = s.import_run(run);
  const auto second = s.import_run(run);
  EXPECT_TRUE(first.inserted);
  EXPECT_TRUE(second.inserted);
  EXPECT_NE(first.id, second.id);
  // Within one batch too.
  const auto batch = s.import_runs({run, run});
  EXPECT_TRUE(batch[0].inserted);
  EXPECT_TRUE(batch[1].inserted);
  EXPECT_EQ(s.run_count(), 4);
  EXPECT_EQ(test::query_int(s, "SELECT count(DISTINCT uuid) FROM runs"), 4);
}

// A document that carries a run's uuid is that run: posting it again (a retry, an import of the
// same file) stores nothing and answers with the stored id, in any store.
TEST(Import, TheSameExportedRunPostedTwiceIsStoredOnce) {
  test::TempDir dir;
  store::Store local(dir.file("local.db"));
  const pg::Run run = test::sample_run();
  const int64_t id = local.begin_run(run.git, run.env, run.config_json);
  for (const auto& c : run.cells) local.add_cell(id, c);
  local.finish_run(id, RunStatus::complete);
  const std::string exported = store::runs_to_json({*local.load_run(id)}, true);
  const std::string uuid = nlohmann::json::parse(exported)["runs"][0]["uuid"];
  EXPECT_EQ(uuid.size(), 32u);
  EXPECT_EQ(uuid.find_first_not_of("0123456789abcdef"), std::string::npos) << uuid;

  store::Store server(dir.file("server.db"));
  server.import_run(test::sample_run(1));
  const auto first = server.import_runs(store::runs_from_json(exported, "export.json"));
  ASSERT_TRUE(first[0].inserted);
  const auto again = server.import_runs(store::runs_from_json(exported, "export.json"));
  EXPECT_FALSE(again[0].inserted);
  EXPECT_EQ(again[0].id, first[0].id);
  EXPECT_EQ(server.run_count(), 2);
  // The stored copy keeps the uuid, so its own export is recognised too.
  const std::string reexported = store::runs_to_json({*server.load_run(first[0].id)}, true);
  EXPECT_EQ(nlohmann::json::parse(reexported)["runs"][0]["uuid"], uuid);
  EXPECT_FALSE(server.import_runs(store::runs_from_json(reexported, "again.json"))[0].inserted);
  // And the local store recognises its own run; twice in one batch is one run.
  const auto back = local.import_runs(store::runs_from_json(exported, "export.json"));
  EXPECT_FALSE(back[0].inserted);
  EXPECT_EQ(back[0].id, id);
  const auto doubled =
      server.import_runs({store::runs_from_json(exported, "a")[0], test::sample_run(2),
                          store::runs_from_json(exported, "b")[0]});
  EXPECT_FALSE(doubled[0].inserted);
  EXPECT_TRUE(doubled[1].inserted);
  EXPECT_FALSE(doubled[2].inserted);
  EXPECT_EQ(server.run_count(), 3);
}

// The uuid is the identity, not the content: a different run under a stored uuid is not stored.
TEST(Import, AStoredUuidIsAlreadyStoredWhateverTheContent) {
  test::TempDir dir;
  store::Store s(dir.file("pg.db"));
  const int64_t id = s.import_run(test::sample_run()).id;
  nlohmann::json doc = nlohmann::json::parse(store::runs_to_json({*s.load_run(id)}, true));
  doc["runs"][0]["env"]["hostname"] = "elsewhere";
  const auto res = s.import_runs(store::runs_from_json(doc.dump(), "changed.json"));
  EXPECT_FALSE(res[0].inserted);
  EXPECT_EQ(res[0].id, id);
  EXPECT_EQ(s.run_count(), 1);
}

TEST(Import, AMalformedUuidIsRefusedWithItsPath) {
  test::TempDir dir;
  store::Store s(dir.file("pg.db"));
  nlohmann::json doc = nlohmann::json::parse(store::runs_to_json({test::sample_run()}, true));
  for (const nlohmann::json& bad : {nlohmann::json("abc"), nlohmann::json(std::string(32, 'g')),
                                    nlohmann::json(std::string(33, 'a')), nlohmann::json(7)}) {
    doc["runs"][0]["uuid"] = bad;
    try {
      store::runs_from_json(doc.dump(), "doc.json");
      ADD_FAILURE() << "accepted uuid " << bad.dump();
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("/runs/0/uuid"), std::string::npos) << e.what();
    }
  }
  // Upper-case hex is the same uuid, stored lower-case.
  doc["runs"][0]["uuid"] = "0123456789ABCDEF0123456789ABCDEF";
  const int64_t id = s.import_runs(store::runs_from_json(doc.dump(), "doc.json"))[0].id;
  doc["runs"][0]["uuid"] = "0123456789abcdef0123456789abcdef";
  EXPECT_FALSE(s.import_runs(store::runs_from_json(doc.dump(), "doc.json"))[0].inserted);
  EXPECT_EQ(nlohmann::json::parse(store::runs_to_json({*s.load_run(id)}, false))["runs"][0]["uuid"],
            "0123456789abcdef0123456789abcdef");
}

TEST(Import, RunsThatDifferInOneSampleOrTheEnvironmentAreBothKept) {
  test::TempDir dir;
  store::Store s(dir.file("pg.db"));
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

TEST(Import, UppercaseCommitsAreStoredLowercase) {
  test::TempDir dir;
  store::Store s(dir.file("pg.db"));
  pg::Run run = test::sample_run();
  run.git.commit = "0123456789ABCDEF0123456789ABCDEF01234567";
  const int64_t id = s.import_run(run).id;
  EXPECT_EQ(*s.load_run(id)->git.commit, "0123456789abcdef0123456789abcdef01234567");
}

}  // namespace
}  // namespace pg
