// Cell profiles in the store (schema steps 7 and 12): written with their cell, read back exactly,
// carried by the export JSON and accepted (and validated) by ingest; an older database migrates.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "store/run_json.h"
#include "store/store.h"
#include "test_util.h"

namespace pg {
namespace {

using test::TempDir;

CellProfile sample_profile() {
  CellProfile p;
  p.profiler = "kineto";
  p.wall_ms = 12.5;
  for (int step = -1; step < 4; ++step) {
    ProfileStep s;
    s.step = step;
    s.wall_ms = 0.5;
    s.ops = 30;
    s.kernels = 2;
    s.syncs = step == 2 ? 1 : 0;
    s.d2h_copies = 1;
    s.alloc_bytes = 4096;
    if (step >= 0) s.peak_bytes = 2048;
    if (step != 1) {  // one step without a timeline: an --exec benchmark may leave it out
      s.span_ms = 0.375;
      s.busy_ms = 0.0625;
    }
    s.ops_by_name = {{ProfileOpKind::op, "aten::addmm", 8, 0.25},
                     {ProfileOpKind::op, "aten::mul", 22, 0.125},
                     {ProfileOpKind::kernel, "void gemv<float>(...)", 2, 0.0625}};
    p.steps.push_back(s);
  }
  return p;
}

Run profiled_run() {
  Run r = test::sample_run();
  r.cells[0].profile = sample_profile();
  r.cells[2].profile = sample_profile();
  r.cells[2].profile->note = "no CUDA kernel was recorded";
  return r;
}

void expect_same(const CellProfile& a, const CellProfile& b) {
  EXPECT_EQ(a.profiler, b.profiler);
  EXPECT_EQ(a.wall_ms, b.wall_ms);
  EXPECT_EQ(a.note, b.note);
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    const ProfileStep &x = a.steps[i], &y = b.steps[i];
    EXPECT_EQ(x.step, y.step);
    EXPECT_EQ(x.ops, y.ops);
    EXPECT_EQ(x.kernels, y.kernels);
    EXPECT_EQ(x.syncs, y.syncs);
    EXPECT_EQ(x.d2h_copies, y.d2h_copies);
    EXPECT_EQ(x.alloc_bytes, y.alloc_bytes);
    EXPECT_EQ(x.peak_bytes, y.peak_bytes);
    EXPECT_EQ(x.span_ms, y.span_ms);
    EXPECT_EQ(x.busy_ms, y.busy_ms);
    ASSERT_EQ(x.ops_by_name.size(), y.ops_by_name.size());
    for (size_t k = 0; k < x.ops_by_name.size(); ++k) {
      EXPECT_EQ(x.ops_by_name[k].kind, y.ops_by_name[k].kind);
      EXPECT_EQ(x.ops_by_name[k].name, y.ops_by_name[k].name);
      EXPECT_EQ(x.ops_by_name[k].count, y.ops_by_name[k].count);
      EXPECT_EQ(x.ops_by_name[k].total_ms, y.ops_by_name[k].total_ms);
    }
  }
}

TEST(Profiles, ARunnersProfileIsReadBackExactly) {
  TempDir dir;
  store::Store s(dir.file("p.db"));
  const pg::Run r = profiled_run();
  const int64_t id = test::write_run(s, r);
  const auto back = s.load_run(id);
  ASSERT_TRUE(back);
  ASSERT_TRUE(back->cells[0].profile);
  expect_same(*back->cells[0].profile, *r.cells[0].profile);
  expect_same(*back->cells[2].profile, *r.cells[2].profile);
  EXPECT_FALSE(back->cells[1].profile);                           // the oom cell has none
  EXPECT_FALSE(s.load_run(id, {true, false})->cells[0].profile);  // only with the samples
  // Names are stored once for every step and cell.
  EXPECT_EQ(test::query_int(s, "SELECT count(*) FROM profile_names"), 3);
}

TEST(Profiles, ExportAndImportCarryTheProfile) {
  TempDir dir;
  store::Store a(dir.file("a.db")), b(dir.file("b.db"));
  const int64_t id = test::write_run(a, profiled_run());
  const std::string doc = store::runs_to_json({*a.load_run(id)}, true);
  const auto j = nlohmann::json::parse(doc);
  EXPECT_EQ(j["runs"][0]["cells"][0]["profile"]["steps"][0]["step"], -1);
  EXPECT_TRUE(j["runs"][0]["cells"][0]["profile"]["steps"][0]["peak_bytes"].is_null());
  const auto imported = b.import_runs(store::runs_from_json(doc, "doc"));
  const auto back = b.load_run(imported.at(0).id);
  expect_same(*back->cells[0].profile, *profiled_run().cells[0].profile);
}

TEST(Profiles, IngestRefusesAMalformedProfileWithItsPointer) {
  TempDir dir;
  store::Store a(dir.file("a.db"));
  const int64_t id = test::write_run(a, profiled_run());
  auto j = nlohmann::json::parse(store::runs_to_json({*a.load_run(id)}, true));
  j["runs"][0]["cells"][0]["profile"]["steps"][1]["ops"] = -3;
  try {
    store::runs_from_json(j.dump(), "request body");
    FAIL() << "accepted a negative count";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "request body: /runs/0/cells/0/profile/steps/1/ops: expected an integer >= 0");
  }
  j["runs"][0]["cells"][0]["profile"]["steps"][1]["ops"] = 3;
  j["runs"][0]["cells"][0]["profile"]["steps"][1]["by_name"][0]["kind"] = "python";
  EXPECT_THROW(store::runs_from_json(j.dump(), "request body"), UsageError);
}

TEST(Profiles, IngestTakesTheTimelineAsAPairWithBusyWithinSpan) {
  TempDir dir;
  store::Store a(dir.file("a.db"));
  const int64_t id = test::write_run(a, profiled_run());
  auto j = nlohmann::json::parse(store::runs_to_json({*a.load_run(id)}, true));
  auto& st = j["runs"][0]["cells"][0]["profile"]["steps"][0];
  EXPECT_EQ(st["span_ms"], 0.375);
  EXPECT_TRUE(j["runs"][0]["cells"][0]["profile"]["steps"][2]["span_ms"].is_null());
  auto refused = [&](const char* what) {
    try {
      store::runs_from_json(j.dump(), "request body");
      ADD_FAILURE() << "accepted: " << what;
      return std::string();
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
  };
  st["busy_ms"] = 0.5;  // more busy time than the step spans
  EXPECT_EQ(refused("busy > span"),
            "request body: /runs/0/cells/0/profile/steps/0/busy_ms: must not exceed span_ms (the "
            "time a kernel ran within the step's span)");
  st.erase("busy_ms");
  EXPECT_EQ(refused("span alone"),
            "request body: /runs/0/cells/0/profile/steps/0/busy_ms: span_ms and busy_ms go "
            "together");
  st.erase("span_ms");  // a document from before the timeline: neither
  const auto runs = store::runs_from_json(j.dump(), "request body");
  EXPECT_FALSE(runs[0].cells[0].profile->steps[0].span_ms);
  EXPECT_TRUE(runs[0].cells[0].profile->steps[1].span_ms);
}

// Step 12 adds the timeline to the steps already stored, as not measured.
TEST(Profiles, AVersion11StoreKeepsItsProfilesWithoutATimeline) {
  TempDir dir;
  const std::string path = dir.file("v11.db");
  {
    store::Store s(path);
    test::write_run(s, profiled_run());
  }
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "ALTER TABLE profile_steps DROP COLUMN busy_ms; ALTER TABLE "
                           "profile_steps DROP COLUMN span_ms; PRAGMA user_version = 11",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  store::Store s(path);
  EXPECT_EQ(test::query_int(s, "PRAGMA user_version"), store::Store::schema_version());
  const auto back = s.load_run(1);
  ASSERT_TRUE(back && back->cells[0].profile);
  ASSERT_EQ(back->cells[0].profile->steps.size(), 5u);
  for (const ProfileStep& st : back->cells[0].profile->steps) {
    EXPECT_FALSE(st.span_ms);
    EXPECT_FALSE(st.busy_ms);
  }
  EXPECT_EQ(back->cells[0].profile->steps[2].ops, 30);
  // The schema holds the pair together and busy non-negative.
  EXPECT_NE(
      sqlite3_exec(s.handle(), "UPDATE profile_steps SET span_ms = 1", nullptr, nullptr, nullptr),
      SQLITE_OK);
}

TEST(Profiles, ADatabaseFromBeforeTheStepMigratesAndKeepsItsRuns) {
  TempDir dir;
  const std::string path = dir.file("v5.db");
  {
    store::Store s(path);
    test::write_run(s, test::sample_run());
  }
  {  // what perfgate wrote at schema version 6
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(
        sqlite3_exec(db,
                     (std::string(test::kUndoStepsSince9) +
                      "DROP TABLE credentials; "
                      "ALTER TABLE regression_events DROP COLUMN via; "
                      "ALTER TABLE gate_result_events DROP COLUMN via; "
                      "DROP TABLE profile_ops; DROP TABLE profile_steps; DROP TABLE profiles; "
                      "DROP TABLE profile_names; PRAGMA user_version = 6")
                         .c_str(),
                     nullptr, nullptr, nullptr),
        SQLITE_OK);
    sqlite3_close(db);
  }
  store::Store s(path);
  EXPECT_EQ(test::query_int(s, "PRAGMA user_version"), store::Store::schema_version());
  EXPECT_EQ(s.run_count(), 1);
  EXPECT_FALSE(s.load_run(1)->cells[0].profile);
  const int64_t id = test::write_run(s, profiled_run());
  EXPECT_TRUE(s.load_run(id)->cells[0].profile);
}

}  // namespace
}  // namespace pg
