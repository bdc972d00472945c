// Store::series_samples_of: several series read in one pass (serve's start-up) give each series
// exactly what series_samples gives it alone -- same cells, order, metrics and repetitions.
#include <gtest/gtest.h>

#include "store/store.h"
#include "test_util.h"

namespace pg {
namespace {

using test::TempDir;

void expect_same(const std::vector<store::SeriesSample>& a,
                 const std::vector<store::SeriesSample>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].run_id, b[i].run_id) << i;
    EXPECT_EQ(a[i].cell_id, b[i].cell_id) << i;
    EXPECT_EQ(a[i].commit, b[i].commit) << i;
    EXPECT_EQ(a[i].branch, b[i].branch) << i;
    EXPECT_EQ(a[i].subject, b[i].subject) << i;
    EXPECT_EQ(a[i].commit_time, b[i].commit_time) << i;
    EXPECT_EQ(a[i].started_at, b[i].started_at) << i;
    EXPECT_EQ(a[i].status, b[i].status) << i;
    EXPECT_EQ(a[i].metrics, b[i].metrics) << i;
    EXPECT_EQ(a[i].rep_prefill_ms, b[i].rep_prefill_ms) << i;
    EXPECT_EQ(a[i].rep_tpot_ms, b[i].rep_tpot_ms) << i;
  }
}

TEST(Store, SeriesReadTogetherMatchEachReadAlone) {
  TempDir dir;
  store::Store s(dir.file("pg.db"));
  // Interleaved runs of two environments and three commits, one of them run twice; runs are
  // imported out of history order, so the order comes from the query, not from insertion.
  int n = 0;
  for (int variant : {2, 0, 1, 0})
    for (const char* device : {"NVIDIA H200", "NVIDIA A100"}) {
      pg::Run r = test::sample_run(variant);
      r.env = test::sample_env(device);
      r.started_at = "2024-05-01T10:0" + std::to_string(n) + ":00Z";
      r.cells[0].samples.prefill_ms[0] += n++;  // a distinct run, not a duplicate import
      s.import_run(r);
    }
  std::vector<int64_t> ids;
  for (const store::SeriesInfo& info : s.list_series()) ids.push_back(info.id);
  ASSERT_EQ(ids.size(), 6u);  // 3 cells x 2 devices
  ids.push_back(9999);        // unknown: present, empty
  const auto together = s.series_samples_of(ids);
  ASSERT_EQ(together.size(), ids.size());
  EXPECT_TRUE(together.at(9999).empty());
  for (int64_t id : ids) {
    if (id == 9999) continue;
    const auto alone = s.series_samples(id, /*with_samples=*/false);
    EXPECT_EQ(alone.size(), 4u) << id;  // commit 0 twice
    expect_same(together.at(id), alone);
  }
  // Only the metrics asked for (serve's tpot views read tpot_ms alone); the rest as before.
  const auto tpot_only = s.series_samples_of(ids, {"tpot_ms", "no_such_metric"});
  size_t with_tpot = 0, with_others = 0;
  for (const auto& [id, samples] : together)
    for (const store::SeriesSample& e : samples)
      with_tpot += e.metrics.count("tpot_ms"), with_others += e.metrics.size() > 1;
  ASSERT_GT(with_tpot, 0u);  // the filter has something to keep and something to drop
  ASSERT_GT(with_others, 0u);
  for (int64_t id : ids) {
    if (id == 9999) continue;
    auto expected = together.at(id);
    for (store::SeriesSample& e : expected)
      std::erase_if(e.metrics, [](const auto& m) { return m.first != "tpot_ms"; });
    expect_same(tpot_only.at(id), expected);
  }
}

}  // namespace
}  // namespace pg
