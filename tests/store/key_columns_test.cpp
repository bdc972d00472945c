// The store's half of core/cell_key.h's field table: every field is a column of the series and
// cells tables (the on-disk schema, docs/STORE.md), and a key that differs in any one field is
// written, read back and found as its own series.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <map>
#include <set>

#include "core/cell_key_io.h"
#include "store/store.h"
#include "test_util.h"
#include "tests/core/core_test_util.h"

namespace pg {
namespace {

using test::TempDir;

std::set<std::string> columns_of(sqlite3* db, const std::string& table) {
  std::set<std::string> out;
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, ("PRAGMA table_info(" + table + ")").c_str(), -1, &st, nullptr),
            SQLITE_OK);
  while (sqlite3_step(st) == SQLITE_ROW)
    out.insert(reinterpret_cast<const char*>(sqlite3_column_text(st, 1)));
  sqlite3_finalize(st);
  return out;
}

// Another value the store's validation accepts (docs/FORMATS.md), for the text fields it checks.
CellKey valid_other_value(const KeyField& f) {
  static const std::map<std::string, std::string> accepted = {
      {"dtype", "fp16"}, {"attention", "math"}, {"device", "cpu"}};
  CellKey k = test::with_other_value(test::base_key(), f);
  if (auto it = accepted.find(f.name); it != accepted.end()) k.*f.text = it->second;
  return k;
}

TEST(KeyColumns, EveryFieldIsAColumnOfSeriesAndCells) {
  TempDir dir;
  store::Store s(dir.file("pg.db"));
  const auto series = columns_of(s.handle(), "series");
  const auto cells = columns_of(s.handle(), "cells");
  for (const KeyField& f : kKeyFields) {
    EXPECT_TRUE(series.count(f.sql_column)) << f.sql_column;
    EXPECT_TRUE(cells.count(f.sql_column)) << f.sql_column;
  }
}

TEST(KeyColumns, EveryFieldRoundTripsAndSplitsTheSeries) {
  TempDir dir;
  store::Store s(dir.file("pg.db"));
  pg::Run run = test::sample_run();
  run.cells.resize(1);
  run.cells[0] = test::sample_cell(4, 256, 3, 32);
  run.cells[0].key = test::base_key();
  for (const KeyField& f : kKeyFields) {
    const CellKey k = valid_other_value(f);
    CellResult c = test::sample_cell(k.batch_size, k.seq_len, 3, k.gen_tokens);
    c.key = k;
    ASSERT_NE(c.key, test::base_key()) << f.name;
    run.cells.push_back(c);
  }
  const int64_t id = test::write_run(s, run);
  const auto back = s.load_run(id);
  ASSERT_TRUE(back);
  ASSERT_EQ(back->cells.size(), run.cells.size());
  for (size_t i = 0; i < run.cells.size(); ++i) {
    EXPECT_EQ(cell_key_to_json(back->cells[i].key), cell_key_to_json(run.cells[i].key));
    const auto series = s.find_series(run.cells[i].key, run.env);
    ASSERT_TRUE(series) << i;
    EXPECT_EQ(s.get_series(*series)->key, run.cells[i].key);
    const auto points = s.series_samples(*series, /*with_samples=*/false);
    ASSERT_EQ(points.size(), 1u);
    EXPECT_EQ(points[0].rep_tpot_ms.size(), 3u);  // one per repetition
  }
  EXPECT_EQ(s.list_series().size(), run.cells.size());  // each key its own series
}

}  // namespace
}  // namespace pg
