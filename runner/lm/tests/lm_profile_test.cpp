// The cell profile (runner/lm/profile.h) around perfgate's real model step on a CPU: every step
// has its ATen ops and exact counters, the timed repetitions never run under the profiler, and
// work added to every layer through the test-only hook (runner/lm/model_testing.h) shows up
// exactly: an unfused elementwise op per layer, and one .item() sync per forward pass.
#include <gtest/gtest.h>
#include <torch/csrc/autograd/profiler_kineto.h>

#include <functional>
#include <map>

#include "runner/lm/measure.h"
#include "runner/lm/model_testing.h"

namespace {
std::function<void(const at::Tensor&)> g_after_layer;  // set by one test at a time
}  // namespace

// The definition that makes the weak hook real, in this test binary only.
void pg::lm::testing::after_layer(const at::Tensor& x) {
  if (g_after_layer) g_after_layer(x);
}

namespace pg {
namespace {

constexpr int kLayers = 2;  // the tiny preset
constexpr int kGen = 6;     // one prefill + 5 decode steps

CellKey tiny_key() { return {"tiny", "fp32", 2, 16, kGen, true, "sdpa", false, "cpu"}; }

runner::MeasureOptions quick() {
  runner::MeasureOptions o;
  o.warmup = 1;
  o.reps = 2;
  return o;
}

class LmProfile : public ::testing::Test {
 protected:
  void TearDown() override { g_after_layer = nullptr; }
  CellProfile profile_with(std::function<void(const at::Tensor&)> hook) {
    g_after_layer = std::move(hook);
    auto r = runner.measure(tiny_key(), quick());
    g_after_layer = nullptr;
    EXPECT_EQ(r.status, CellStatus::ok) << r.reason.value_or("");
    EXPECT_TRUE(r.profile);
    return r.profile.value_or(CellProfile{});
  }
  lm::LibTorchMeasurer runner;
};

int64_t count_of(const ProfileStep& s, const std::string& name) {
  for (const ProfileOp& o : s.ops_by_name)
    if (o.kind == ProfileOpKind::op && o.name == name) return o.count;
  return 0;
}

TEST_F(LmProfile, EveryStepHasItsOpsAndCountersFromKineto) {
  const CellProfile p = profile_with(nullptr);
  ASSERT_EQ(p.profiler, "kineto") << p.note.value_or("");
  EXPECT_FALSE(p.note) << *p.note;
  ASSERT_EQ(p.steps.size(), static_cast<size_t>(kGen));
  EXPECT_EQ(p.steps.front().step, -1);  // the prefill first
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const ProfileStep& s = p.steps[i];
    EXPECT_EQ(s.step, static_cast<int>(i) - 1);
    EXPECT_GT(s.ops, 0);
    EXPECT_EQ(s.kernels, 0);  // a CPU cell launches none
    EXPECT_EQ(s.syncs, 0);
    EXPECT_EQ(s.d2h_copies, 0);
    EXPECT_GT(s.alloc_bytes, 0);
    ASSERT_TRUE(s.peak_bytes);
    EXPECT_GT(s.wall_ms, 0);
    EXPECT_GT(count_of(s, "aten::addmm"), 0) << "step " << s.step;
    int64_t rows = 0;
    double self_ms = 0;
    for (const ProfileOp& o : s.ops_by_name) {
      rows += o.count;
      self_ms += o.total_ms;
    }
    EXPECT_EQ(rows, s.ops);  // every call is in exactly one row
    // The step on the host's timeline: the ops' span and the time one of them ran, which on one
    // thread is their self times once each; the rest of the span is time between ops.
    ASSERT_TRUE(s.span_ms && s.busy_ms) << "step " << s.step;
    EXPECT_GT(*s.busy_ms, 0);
    EXPECT_LE(*s.busy_ms, *s.span_ms);
    EXPECT_LE(*s.span_ms, s.wall_ms + 0.05);  // two clocks: Kineto's and the step's
    EXPECT_NEAR(self_ms, *s.busy_ms, 0.01 * *s.busy_ms) << "step " << s.step;
  }
  // Decode steps of a KV-cached model run the same ops.
  for (size_t i = 2; i < p.steps.size(); ++i) EXPECT_EQ(p.steps[i].ops, p.steps[1].ops);
  EXPECT_GT(p.wall_ms, 0);
}

TEST_F(LmProfile, TimedRepetitionsNeverRunUnderTheProfiler) {
  lm::check_cell_supported(tiny_key());  // its one-off probe of the dtype runs a model too
  int calls = 0, profiled = 0;
  auto r = [&] {
    g_after_layer = [&](const at::Tensor&) {
      ++calls;
      if (torch::profiler::impl::profilerEnabled()) ++profiled;
    };
    return runner.measure(tiny_key(), quick());
  }();
  ASSERT_EQ(r.status, CellStatus::ok);
  const int per_sequence = kGen * kLayers;  // one forward pass per token, every layer
  EXPECT_EQ(calls, (quick().warmup + quick().reps + 1) * per_sequence);
  EXPECT_EQ(profiled, per_sequence);  // only the one extra sequence
  EXPECT_EQ(r.samples.decode_ms.size(), 2u);
}

TEST_F(LmProfile, AnUnfusedOpPerLayerAddsExactlyItsOpsToEveryStep) {
  const CellProfile base = profile_with(nullptr);
  const CellProfile head =
      profile_with([](const at::Tensor& x) { (void)(x * at::sigmoid(x)); });  // an unfused SiLU
  ASSERT_EQ(base.steps.size(), head.steps.size());
  for (size_t i = 0; i < base.steps.size(); ++i) {
    const ProfileStep &b = base.steps[i], &h = head.steps[i];
    EXPECT_EQ(h.ops - b.ops, 2 * kLayers) << "step " << b.step;
    EXPECT_EQ(count_of(h, "aten::sigmoid") - count_of(b, "aten::sigmoid"), kLayers);
    EXPECT_EQ(count_of(h, "aten::mul") - count_of(b, "aten::mul"), kLayers);
    EXPECT_EQ(h.syncs, b.syncs);
    EXPECT_GT(h.alloc_bytes, b.alloc_bytes);  // two new activations per layer
  }
}

TEST_F(LmProfile, AnItemPerForwardPassIsOneSyncPerStep) {
  int layer = 0;
  const CellProfile head = profile_with([&](const at::Tensor& x) {
    if (layer++ % kLayers == 0) (void)x.sum().item<float>();  // once per forward pass
  });
  for (const ProfileStep& s : head.steps) {
    EXPECT_EQ(s.syncs, 1) << "step " << s.step;
    EXPECT_EQ(count_of(s, "aten::item"), 1);
    EXPECT_EQ(count_of(s, "aten::_local_scalar_dense"), 1);
  }
}

TEST_F(LmProfile, OffMeansNoProfileAndTheSameSamples) {
  runner::MeasureOptions o = quick();
  o.profile = false;
  auto r = runner.measure(tiny_key(), o);
  ASSERT_EQ(r.status, CellStatus::ok);
  EXPECT_FALSE(r.profile);
  EXPECT_EQ(r.samples.prefill_ms.size(), 2u);
}

}  // namespace
}  // namespace pg
