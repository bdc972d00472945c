// compare()'s explanation end to end on a real SQLite store: runs with profiles written through
// the Store API, the gate judged by app::compare, the explanation rendered by every report. The
// head adds an unfused op per layer to one cell (timing regressed) and one .item() sync per step
// to another (timing unchanged): both are named, the second labelled as counters only.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "app/compare.h"
#include "gate/report.h"
#include "store/store.h"
#include "tests/common/profiled_runs.h"
#include "tests/common/temp_dir.h"

namespace pg {
namespace {

const std::string kBase(40, 'b'), kHead(40, 'd');
using namespace pg::testing::profiled;  // NOLINT: the runs every explanation suite seeds

class Explain : public ::testing::Test {
 protected:
  void SetUp() override {
    store::Store s(db);
    for (uint32_t i = 0; i < 3; ++i) {
      s.import_run(run(kBase, false, i));
      s.import_run(run(kHead, true, 10 + i));
    }
  }
  std::string render(const gate::GateReporter& r, const app::Comparison& c) {
    gate::ReportInfo info;
    info.explanations = c.explanations;
    std::ostringstream out;
    r.report(c.result, info, out);
    return out.str();
  }
  testing::TempDir dir;
  std::string db = (dir / "perfgate.db").string();
};

TEST_F(Explain, ProfilesSurviveTheStoreExactly) {
  store::Store s(db, /*read_only=*/true);
  const auto runs = s.runs_for_commit(kHead);
  ASSERT_EQ(runs.size(), 3u);
  const CellResult& c = runs[0].cells[0];
  ASSERT_TRUE(c.profile);
  EXPECT_EQ(c.profile->profiler, "kineto");
  ASSERT_EQ(c.profile->steps.size(), static_cast<size_t>(kGen));
  const ProfileStep& st = c.profile->steps[1];
  EXPECT_EQ(st.step, 0);
  EXPECT_EQ(st.ops, step(0, true, false).ops);
  EXPECT_EQ(st.peak_bytes, 65536);
  EXPECT_EQ(st.ops_by_name.size(), 5u);
}

TEST_F(Explain, NamesTheNewOpsAndEveryChangedCounter) {
  store::Store s(db, true);
  const app::Comparison c = app::compare(s, kBase, kHead, {});
  ASSERT_EQ(c.explanations.size(), 2u);
  const gate::CellExplanation& silu = c.explanations[0];
  EXPECT_TRUE(silu.regressed);
  ASSERT_EQ(silu.decode.counters.size(), 2u);  // ops and alloc_bytes
  EXPECT_EQ(silu.decode.counters[0].counter, "ops");
  EXPECT_EQ(silu.decode.counters[0].head - silu.decode.counters[0].base, 2 * kLayers);
  ASSERT_EQ(silu.decode.appeared.size(), 1u);
  EXPECT_EQ(silu.decode.appeared[0].name, "aten::sigmoid");
  ASSERT_FALSE(silu.decode.grew.empty());
  EXPECT_EQ(silu.decode.grew[0].name, "aten::sigmoid");
  ASSERT_TRUE(silu.decode.grew[0].share);
  EXPECT_NEAR(*silu.decode.grew[0].share, 0.07 / 0.5, 0.02);

  const gate::CellExplanation& sync = c.explanations[1];
  EXPECT_FALSE(sync.regressed);
  EXPECT_TRUE(sync.counters_changed());

  const std::string table = render(gate::GateTableReporter(false), c);
  EXPECT_NE(table.find("decode step: 108 -> 132 ops (+24: aten::mul x12, aten::sigmoid x12)"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("decode step: 0 -> 1 host-device sync (aten::_local_scalar_dense)"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("exact counters changed; timing verdict unchanged"), std::string::npos);
  EXPECT_NE(table.find("decode step: appeared aten::sigmoid x12"), std::string::npos);
  // Where the step went: 0.13 ms of host op self time per step grew, and the time between the
  // ops in the timed runs (tpot less the ops' time) 0.38 ms, of which the 24 new ops' share of the
  // base's gaps accounts for 0.10 ms.
  EXPECT_NE(table.find("decode step: the other 3 host ops +0.0000 ms"), std::string::npos) << table;
  EXPECT_NE(table.find("decode step: time between host ops in the timed runs (tpot less the "
                       "profiled host op time) 0.4600 -> 0.8400 ms (+0.3800 ms, 75% of the tpot "
                       "change)"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("decode step: of that, the gaps that come with 24 more host ops at the "
                       "base's 4.26 µs per host op: +0.1022 ms; the rest +0.2778 ms"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("decode step: the host ops' time (+0.1300 ms) and the gaps of the added or "
                       "removed ones (+0.1022 ms) add up to +0.2322 ms per step: 46% of the "
                       "+0.5100 ms tpot change"),
            std::string::npos)
      << table;
  EXPECT_EQ(table.find("counted twice"), std::string::npos) << table;  // one thread: no overlap

  const std::string md = render(gate::GateMarkdownReporter(), c);
  EXPECT_NE(md.find("<details><summary>❌ Why <code>"), std::string::npos) << md;
  EXPECT_NE(md.find("aten::sigmoid x12"), std::string::npos);
  EXPECT_NE(md.find("<b>exact counters changed; timing verdict unchanged"), std::string::npos);

  const auto j = nlohmann::json::parse(render(gate::GateJsonReporter(), c));
  const auto& e = j["cells"][0]["explain"];
  EXPECT_EQ(e["available"], true);
  EXPECT_EQ(e["kind"], "op");
  EXPECT_EQ(e["decode"]["appeared"][0]["name"], "aten::sigmoid");
  EXPECT_EQ(e["decode"]["counters"][0]["counter"], "ops");
  const auto& t = e["decode"]["timeline"];
  EXPECT_NEAR(t["gap_delta_ms"].get<double>(), 0.3, 1e-9);
  EXPECT_NEAR(t["span_delta_ms"].get<double>(), 0.43, 1e-9);
  EXPECT_NEAR(t["overlap_delta_ms"].get<double>(), 0, 1e-9);
  // The listed deltas (rows that grew, the other rows, the time between) are the span's change.
  double listed = e["decode"]["other_delta_ms"].get<double>() + t["gap_delta_ms"].get<double>() -
                  t["overlap_delta_ms"].get<double>();
  for (const auto& g : e["decode"]["grew"]) listed += g["delta_ms"].get<double>();
  EXPECT_NEAR(listed, t["span_delta_ms"].get<double>(), 1e-9);
  EXPECT_NEAR(t["gap_share_of_tpot_change"].get<double>() * e["tpot_change_ms"].get<double>(), 0.3,
              1e-9);
  EXPECT_TRUE(j["cells"][1]["explain"]["decode"]["timeline"]["gap_share_of_tpot_change"].is_null());
  EXPECT_EQ(j["cells"][1]["explain"]["counters_changed"], true);
  EXPECT_EQ(j["verdict"], "regression");
}

// Inductor numbers the kernels it generates in order ("triton_poi_fused_mul_silu_8"): the head's
// one new kernel early in each layer shifts every later index (seen on the H200, where the diff
// listed every shifted kernel as disappeared and appeared, and their time as growth 2.6x the tpot
// change). Matched without the index, only the new kernel appears.
TEST(ExplainKernels, InductorKernelsAreMatchedWithoutTheirIndex) {
  auto kernels = [](bool head) {
    ProfileStep s;
    s.step = 0;
    auto add = [&](const std::string& name, int64_t count, double ms) {
      s.ops_by_name.push_back({ProfileOpKind::kernel, name, count, ms});
      s.kernels += count;
    };
    add("nvjet_gemm_bf16", 88, 1.2);
    if (head) add("triton_poi_fused_mul_sigmoid_transpose_view_7", 22, 0.030);
    add(head ? "triton_poi_fused_mul_silu_9" : "triton_poi_fused_mul_silu_8", 22, 0.050);
    add(head ? "triton_poi_fused_add_select_17" : "triton_poi_fused_add_select_16", 22, 0.040);
    add("triton_kernel_without_index", 1, 0.001);
    return s;
  };
  auto cell_run = [&](const std::string& sha, bool head) {
    pg::Run r = run(sha, head, 1);
    r.cells.resize(1);
    CellResult& c = r.cells[0];
    c.profile->steps = {kernels(head)};
    return r;
  };
  testing::TempDir dir;
  const std::string db = (dir / "k.db").string();
  {
    store::Store s(db);
    for (int i = 0; i < 3; ++i) {
      s.import_run(cell_run(kBase, false));
      s.import_run(cell_run(kHead, true));
    }
  }
  store::Store s(db, true);
  const app::Comparison c = app::compare(s, kBase, kHead, {});
  ASSERT_EQ(c.explanations.size(), 1u);
  const gate::PhaseExplanation& d = c.explanations[0].decode;
  ASSERT_EQ(c.explanations[0].kind, ProfileOpKind::kernel);
  ASSERT_EQ(d.appeared.size(), 1u);
  EXPECT_EQ(d.appeared[0].name, "triton_poi_fused_mul_sigmoid_transpose_view");
  EXPECT_TRUE(d.disappeared.empty());
  ASSERT_EQ(d.grew.size(), 1u);  // the shifted kernels take as long as before
  EXPECT_NEAR(d.grew[0].delta_ms(), 0.030, 1e-9);
  EXPECT_NEAR(d.head_ms - d.base_ms, 0.030, 1e-9);
}

// A GPU step as the H200 showed it: the head's 22 new kernels take 0.030 ms, and each brings the
// gap a kernel has in the graph's replay. The time between kernels is the timed tpot less the
// profiled busy time (the profiler stretches the profiled sequence's own gaps: here 0.100 ms
// against 0.0536 ms in the timed runs), the added kernels' gaps are predicted from the base's gap
// per kernel, and kernels that ran at once on two streams are counted once.
TEST(ExplainKernels, TheTimeBetweenKernelsComesFromTheTimedRunsAndTheAddedKernelsBringTheirGaps) {
  auto step = [](bool head) {
    ProfileStep s;
    s.step = 0;
    auto add = [&](const std::string& name, int64_t count, double ms) {
      s.ops_by_name.push_back({ProfileOpKind::kernel, name, count, ms});
      s.kernels += count;
    };
    add("nvjet_gemm_bf16", 88, 1.2);
    add("side_stream_copy_kernel", 1, 0.010);  // runs beside the gemms, on another stream
    if (head) add("triton_poi_fused_mul_sigmoid_7", 22, 0.030);
    add("triton_red_fused_rms_norm_3", 45, head ? 0.0449 : 0.045);  // a little faster
    double rows = 0;
    for (const ProfileOp& o : s.ops_by_name) rows += o.total_ms;
    s.busy_ms = rows - 0.010;  // the side stream's kernel hides under a gemm
    s.span_ms = *s.busy_ms + (head ? 0.111 : 0.100);
    s.wall_ms = *s.span_ms + 0.02;
    return s;
  };
  auto cell_run = [&](const std::string& sha, bool head, uint32_t seed) {
    pg::Run r = run(sha, head, seed);
    r.cells.resize(1);
    CellResult& c = r.cells[0];
    c.profile->steps = {step(head)};
    // tpot: 1.25 ms -> 1.30 ms, a regression
    // tpot (medians 1.2986 -> 1.3383 ms): the kernels' busy time (1.245 -> 1.2749 ms), 0.0536 ms
    // between the base's 134 kernels (0.40 µs each), 22 more of those gaps and 0.0010 ms more.
    for (auto& rep : c.samples.decode_ms)
      for (double& v : rep) v = (head ? 1.3373 : 1.2976) + 0.001 * (seed % 3);
    return r;
  };
  testing::TempDir dir;
  const std::string db = (dir / "k.db").string();
  {
    store::Store s(db);
    for (uint32_t i = 0; i < 3; ++i) {
      s.import_run(cell_run(kBase, false, i));
      s.import_run(cell_run(kHead, true, i));
    }
  }
  store::Store s(db, true);
  app::GateSettings settings;
  app::set_min_effect(settings, "0.01");
  const app::Comparison c = app::compare(s, kBase, kHead, settings);
  ASSERT_EQ(c.explanations.size(), 1u);
  const gate::CellExplanation& e = c.explanations[0];
  ASSERT_TRUE(e.regressed);
  ASSERT_TRUE(e.decode.timeline);
  EXPECT_NEAR(e.decode.timeline->gap_delta_ms(), 0.011, 1e-9);
  EXPECT_NEAR(e.decode.overlap_delta_ms(), 0, 1e-9);
  ASSERT_EQ(e.decode.grew.size(), 1u);
  EXPECT_EQ(e.decode.other_rows, 3);
  EXPECT_NEAR(e.decode.other_delta_ms, -0.0001, 1e-9);
  EXPECT_NEAR(e.decode.grew[0].delta_ms() + e.decode.other_delta_ms +
                  e.decode.timeline->gap_delta_ms() - e.decode.overlap_delta_ms(),
              e.decode.timeline->span_delta_ms(), 1e-12);
  gate::ReportInfo info;
  info.explanations = c.explanations;
  std::ostringstream out;
  gate::GateTableReporter(false).report(c.result, info, out);
  const std::string table = out.str();
  ASSERT_TRUE(e.decode.timed);
  const gate::TimedGaps& g = *e.decode.timed;
  EXPECT_NEAR(g.base_gap_ms(), 0.0536, 1e-9);
  EXPECT_NEAR(g.head_gap_ms(), 0.0634, 1e-9);
  EXPECT_NEAR(g.per_launch_ms(), 0.0004, 1e-12);
  EXPECT_NEAR(g.launch_gaps_delta_ms(), 0.0088, 1e-9);
  EXPECT_NEAR(g.rest_ms(), 0.0010, 1e-9);
  EXPECT_NEAR(g.listed_delta_ms(), 0.0387, 1e-9);
  EXPECT_NEAR(g.kernel_delta_ms() + g.gap_delta_ms(), *e.tpot_change_ms, 1e-9);
  EXPECT_NE(table.find("decode step: the other 3 kernels -0.0001 ms"), std::string::npos) << table;
  EXPECT_NE(
      table.find("decode step: time between kernels in the timed runs (tpot less the profiled "
                 "kernel time) 0.0536 -> 0.0634 ms (+0.0098 ms, 25% of the tpot change)"),
      std::string::npos)
      << table;
  EXPECT_NE(table.find("decode step: of that, the gaps that come with 22 more kernels at the "
                       "base's 0.40 µs per kernel: +0.0088 ms; the rest +0.0010 ms"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("decode step: the kernels' time (+0.0299 ms) and the gaps of the added or "
                       "removed ones (+0.0088 ms) add up to +0.0387 ms per step: 97% of the "
                       "+0.0397 ms tpot change"),
            std::string::npos)
      << table;
  EXPECT_EQ(table.find("counted twice"), std::string::npos) << table;  // the same overlap

  const auto j = nlohmann::json::parse([&] {
    std::ostringstream o;
    gate::GateJsonReporter().report(c.result, info, o);
    return o.str();
  }());
  const auto& timed = j["cells"][0]["explain"]["decode"]["timed"];
  EXPECT_NEAR(timed["listed_delta_ms"].get<double>(), 0.0387, 1e-9);
  EXPECT_NEAR(timed["per_launch_gap_ms"].get<double>(), 0.0004, 1e-12);
  EXPECT_NEAR(timed["listed_share_of_tpot_change"].get<double>(), 0.0387 / 0.0397, 1e-6);
  EXPECT_EQ(timed["base_launches"].get<double>(), 134);
  EXPECT_EQ(timed["head_launches"].get<double>(), 156);
}

// Profiles stored before steps had a timeline (or an --exec benchmark's without one): the rows'
// sum stands for the busy time, and the report says that overlap could not be removed.
TEST_F(Explain, WithoutATimelineTheRowsSumStandsForTheBusyTime) {
  store::Store s(db);
  const std::string old(40, 'c');
  for (uint32_t i = 0; i < 3; ++i) {
    pg::Run r = run(old, true, 40 + i);
    for (auto& c : r.cells)
      for (ProfileStep& st : c.profile->steps) st.span_ms = st.busy_ms = std::nullopt;
    s.import_run(r);
  }
  const auto c = app::compare(s, kBase, old, {});
  ASSERT_EQ(c.explanations.size(), 2u);
  EXPECT_FALSE(c.explanations[0].decode.timeline);
  ASSERT_TRUE(c.explanations[0].decode.timed);
  EXPECT_NEAR(c.explanations[0].decode.timed->kernel_delta_ms(), 0.13, 1e-9);
  const std::string table = render(gate::GateTableReporter(false), c);
  EXPECT_NE(table.find("decode step: time between host ops in the timed runs (tpot less the "
                       "profiled host op time, the rows' sum: no timeline to remove overlap) "),
            std::string::npos)
      << table;
}

TEST_F(Explain, CounterChangesFailTheGateOnlyWhenAsked) {
  store::Store s(db);
  // A head whose timing is the base's but with one sync more per step.
  const std::string other(40, 'e');
  for (uint32_t i = 0; i < 3; ++i) {
    pg::Run r = run(other, false, 20 + i);
    r.cells[1] = cell(32, 1.0, 21 + i, false, true);
    s.import_run(r);
  }
  app::GateSettings settings;
  EXPECT_EQ(app::compare(s, kBase, other, settings).result.verdict, gate::GateVerdict::pass);
  settings.fail_on_counter_change = true;
  const auto c = app::compare(s, kBase, other, settings);
  EXPECT_EQ(c.result.verdict, gate::GateVerdict::regression);
  ASSERT_FALSE(c.result.warnings.empty());
  EXPECT_NE(c.result.warnings.back().find("fail_on_counter_change"), std::string::npos);
}

TEST_F(Explain, ACellWithoutAProfileSaysSo) {
  store::Store s(db);
  const std::string bare(40, 'f');
  for (uint32_t i = 0; i < 3; ++i) {
    pg::Run r = run(bare, true, 30 + i);
    for (auto& c : r.cells) c.profile.reset();
    s.import_run(r);
  }
  const auto c = app::compare(s, kBase, bare, {});
  ASSERT_EQ(c.explanations.size(), 2u);
  EXPECT_EQ(c.explanations[0].missing, "the head has no profile of this cell");
  EXPECT_NE(
      render(gate::GateTableReporter(false), c).find("no explanation: the head has no profile"),
      std::string::npos);
}

}  // namespace
}  // namespace pg
