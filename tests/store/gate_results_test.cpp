// Stored gate results (schema step 5): append-only records with their settings, pages by id, the
// newest of a pair, the triage log, refusal of malformed records, and the migration of a database
// written before the step.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "common/errors.h"
#include "store/store.h"
#include "test_util.h"

namespace pg {
namespace {

using test::TempDir;

const std::string kBase(40, 'a');
const std::string kHead(40, 'b');

store::Store::GateRecord gate(const std::string& verdict, int exit_code,
                              const std::string& ref = "") {
  store::Store::GateRecord r;
  r.base = kBase;
  r.head = kHead;
  r.ref = ref;
  r.verdict = verdict;
  r.exit_code = exit_code;
  r.settings = R"({"alpha":0.01,"min_effect":0.05,"min_effect_source":"fixed"})";
  r.result = R"({"verdict":")" + verdict + R"(","cells":[]})";
  r.submitted_by = "ana";
  r.source = "cli";
  return r;
}

TEST(GateResults, AreStoredWithTheirSettingsAndReadBackInIdOrder) {
  TempDir dir;
  store::Store s(dir.file("g.db"));
  auto a = s.add_gate_result(gate("regression", 1, "refs/pull/7/merge"));
  auto b = s.add_gate_result(gate("pass", 0));
  EXPECT_GT(b.id, a.id);
  EXPECT_FALSE(a.created_at.empty());
  store::Store again(dir.file("g.db"));
  auto all = again.gate_results();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].ref, "refs/pull/7/merge");
  EXPECT_EQ(all[0].verdict, "regression");
  EXPECT_EQ(all[0].exit_code, 1);
  EXPECT_EQ(all[0].settings, gate("x", 0).settings);
  EXPECT_EQ(all[0].submitted_by, "ana");
  EXPECT_EQ(all[0].created_at, a.created_at);
  // Pages by id, and the newest of a pair.
  auto page = again.gate_results(a.id, 1);
  ASSERT_EQ(page.size(), 1u);
  EXPECT_EQ(page[0].id, b.id);
  EXPECT_TRUE(again.gate_results(b.id, 10).empty());
  ASSERT_TRUE(again.latest_gate_result(kBase, kHead));
  EXPECT_EQ(again.latest_gate_result(kBase, kHead)->id, b.id);
  EXPECT_FALSE(again.latest_gate_result(kHead, kBase));
}

TEST(GateResults, AMalformedRecordIsRefusedNamingTheFieldAndNothingIsStored) {
  TempDir dir;
  store::Store s(dir.file("g.db"));
  auto expect_refused = [&](store::Store::GateRecord r, const std::string& field) {
    try {
      s.add_gate_result(r);
      ADD_FAILURE() << "stored a record with a bad " << field;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  auto r = gate("pass", 0);
  r.base = "abc";
  expect_refused(r, "base");
  r = gate("pass", 0);
  r.head = std::string(40, 'B');  // stored SHAs are lowercase
  expect_refused(r, "head");
  expect_refused(gate("pass", 1), "exit_code");
  expect_refused(gate("maybe", 0), "verdict");
  r = gate("pass", 0);
  r.settings = "[1]";
  expect_refused(r, "settings");
  r = gate("pass", 0);
  r.result = "{not json";
  expect_refused(r, "result");
  r = gate("pass", 0);
  r.submitted_by = "";
  expect_refused(r, "submitted_by");
  EXPECT_TRUE(s.gate_results().empty());
}

TEST(GateResults, TriageIsAnAppendOnlyLogWithAuthorAndTime) {
  TempDir dir;
  store::Store s(dir.file("g.db"));
  const auto g = s.add_gate_result(gate("regression", 1));
  EXPECT_THROW(s.add_gate_event(g.id + 1, "acknowledge", "", "ana"), UsageError);
  EXPECT_THROW(s.add_gate_event(g.id, "snooze", "", "ana"), UsageError);
  EXPECT_THROW(s.add_gate_event(g.id, "dismiss", "", "ana"), UsageError);  // needs a reason
  EXPECT_THROW(s.add_gate_event(g.id, "acknowledge", "", ""), UsageError);
  EXPECT_TRUE(s.gate_events().empty());
  s.add_gate_event(g.id, "acknowledge", "", "ana");
  s.add_gate_event(g.id, "dismiss", "noise: the runner was shared", "bo");
  auto events = s.gate_events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].gate_id, g.id);
  EXPECT_EQ(events[1].author, "bo");
  EXPECT_EQ(events[1].reason, "noise: the runner was shared");
  EXPECT_FALSE(events[1].at.empty());
  EXPECT_EQ(s.gate_results().size(), 1u);  // triage never changes the record
}

TEST(GateResults, ADatabaseFromBeforeTheStepMigratesAndKeepsItsData) {
  TempDir dir;
  const std::string path = dir.file("v4.db");
  {
    store::Store s(path);
    test::write_run(s, test::sample_run());
  }
  {  // make it what perfgate wrote at schema version 4
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           (std::string(test::kUndoStepsSince9) +
                            "DROP TABLE credentials; "
                            "ALTER TABLE regression_events DROP COLUMN via; "
                            "DROP TABLE profile_ops; DROP TABLE profile_steps; "
                            "DROP TABLE profiles; DROP TABLE profile_names; "
                            "DROP TABLE gate_result_events; DROP TABLE gate_results; "
                            "DROP INDEX runs_uuid; ALTER TABLE runs DROP COLUMN uuid; "
                            "PRAGMA user_version = 4")
                               .c_str(),
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  store::Store s(path);
  EXPECT_EQ(test::query_int(s, "PRAGMA user_version"), store::Store::schema_version());
  EXPECT_EQ(store::Store::schema_version(), 12);
  EXPECT_EQ(s.run_count(), 1);
  EXPECT_TRUE(s.gate_results().empty());
  EXPECT_EQ(s.add_gate_result(gate("pass", 0)).id, 1);
}

}  // namespace
}  // namespace pg
