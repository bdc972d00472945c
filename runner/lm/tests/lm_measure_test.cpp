// lm::LibTorchMeasurer on the tiny model on a CPU: sample counts, metrics, and the ok / invalid /
// oom / error paths; check_cell_supported's refusals; the device part of the fingerprint.
#include <c10/util/Exception.h>
#include <gtest/gtest.h>
#include <torch/version.h>

#include <cstdlib>
#include <fstream>
#include <numeric>

#include "common/errors.h"
#include "runner/lm/cost_model.h"
#include "runner/lm/measure.h"
#include "runner/lm/measure_testing.h"
#include "runner/lm/metrics.h"
#include "runner/lm/presets.h"

namespace pg {
namespace {

CellKey tiny_key(int batch = 2, int prompt = 16, int gen = 8) {
  return {"tiny", "fp32", batch, prompt, gen, true, "sdpa", false, "cpu"};
}

runner::MeasureOptions quick(int reps = 3) {
  runner::MeasureOptions o;
  o.warmup = 1;
  o.reps = reps;
  return o;
}

class LmMeasure : public ::testing::Test {
 protected:
  void TearDown() override { lm::testing::set_hooks({}); }
  lm::LibTorchMeasurer runner;
};

std::string usage_message(const CellKey& key) {
  try {
    lm::check_cell_supported(key);
  } catch (const SettingError& e) {
    return e.spelled("--");  // as the CLI prints it
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST_F(LmMeasure, TinyCellKeepsEverySampleAndDerivesTheMetrics) {
  auto r = runner.measure(tiny_key(), quick());
  ASSERT_EQ(r.status, CellStatus::ok) << r.reason.value_or("");
  EXPECT_FALSE(r.reason);
  ASSERT_EQ(r.samples.prefill_ms.size(), 3u);
  ASSERT_EQ(r.samples.decode_ms.size(), 3u);
  std::vector<double> tpot;
  for (const auto& rep : r.samples.decode_ms) {
    ASSERT_EQ(rep.size(), 7u);
    for (double step : rep) EXPECT_GT(step, lm::kMinStepMs);
    tpot.push_back(std::accumulate(rep.begin(), rep.end(), 0.0) / 7);
  }
  const auto& m = r.metrics;
  for (const char* name :
       {"prefill_ms", "tpot_ms", "itl_p50_ms", "itl_p99_ms", "decode_tok_s", "total_tok_s",
        "weight_bytes", "kv_bytes", "achieved_bw_gbps", "cv", "peak_rss_growth_bytes"})
    EXPECT_TRUE(m.count(name)) << name;
  EXPECT_FALSE(m.count("mbu"));  // a CPU has no table entry
  EXPECT_FALSE(m.count("prefill_mfu"));
  EXPECT_FALSE(m.count("peak_alloc_bytes"));
  EXPECT_DOUBLE_EQ(m.at("tpot_ms"), pg::median(tpot));
  EXPECT_LE(m.at("itl_p50_ms"), m.at("itl_p99_ms"));
  EXPECT_NEAR(m.at("decode_tok_s"), 2 / (m.at("tpot_ms") / 1e3), m.at("decode_tok_s") * 0.5);
  EXPECT_DOUBLE_EQ(m.at("weight_bytes"),
                   4.0 * static_cast<double>(lm::parameter_count(*lm::find_preset("tiny"))));
  EXPECT_GT(m.at("kv_bytes"), 0);
  EXPECT_GE(m.at("peak_rss_growth_bytes"), 0);
}

TEST_F(LmMeasure, OverridesGiveUtilisationOnACpu) {
  auto opt = quick(2);
  opt.peak_bw_gbps = 100;
  opt.peak_tflops = 1;
  auto r = runner.measure(tiny_key(1, 32, 4), opt);
  ASSERT_EQ(r.status, CellStatus::ok);
  EXPECT_DOUBLE_EQ(r.metrics.at("mbu"), r.metrics.at("achieved_bw_gbps") / 100);
  EXPECT_GT(r.metrics.at("prefill_mfu"), 0);
}

TEST_F(LmMeasure, EveryAxisValueRunsOnTheCpu) {
  for (const char* dtype : {"fp32", "fp16", "bf16"})
    for (bool kv : {true, false})
      for (const char* attention : {"sdpa", "math"}) {
        auto key = tiny_key(2, 8, 4);
        key.dtype = dtype;
        key.kv_cache = kv;
        key.attention = attention;
        auto r = runner.measure(key, quick(1));
        EXPECT_EQ(r.status, CellStatus::ok) << dtype << kv << attention << r.reason.value_or("");
        EXPECT_EQ(r.metrics.at("kv_bytes") > 0, kv);
      }
}

TEST_F(LmMeasure, ImplausibleSamplesMakeTheCellInvalid) {
  lm::testing::set_hooks({nullptr, [](CellSamples& s) { s.decode_ms[1][2] = 0.0; }});
  auto r = runner.measure(tiny_key(), quick());
  EXPECT_EQ(r.status, CellStatus::invalid);
  ASSERT_TRUE(r.reason);
  EXPECT_NE(r.reason->find("decode step 3 of repetition 2"), std::string::npos) << *r.reason;
  EXPECT_EQ(r.samples.decode_ms.size(), 3u);  // kept, for the post-mortem
  EXPECT_FALSE(r.metrics.count("tpot_ms"));
}

TEST_F(LmMeasure, OutOfMemoryMakesTheCellOomAndTheRunnerGoesOn) {
  lm::testing::set_hooks({[](int rep) {
                            if (rep == 2) TORCH_CHECK_WITH(OutOfMemoryError, false, "injected OOM");
                          },
                          nullptr});
  auto r = runner.measure(tiny_key(), quick());
  EXPECT_EQ(r.status, CellStatus::oom);
  ASSERT_TRUE(r.reason);
  EXPECT_NE(r.reason->find("injected OOM"), std::string::npos);
  EXPECT_TRUE(r.samples.prefill_ms.empty());
  lm::testing::set_hooks({});
  EXPECT_EQ(runner.measure(tiny_key(), quick()).status, CellStatus::ok);
}

TEST_F(LmMeasure, ARealCpuAllocationFailureIsOom) {
  std::ifstream policy("/proc/sys/vm/overcommit_memory");
  int mode = -1;
  policy >> mode;
  if (mode == 1) GTEST_SKIP() << "overcommit_memory=1 would let the allocation succeed";
  // The prompt alone, [2^30, 1000] int64, is 8 TB: the kernel refuses it outright.
  auto key = tiny_key(1 << 30, 1000, 2);
  auto r = runner.measure(key, quick(1));
  EXPECT_EQ(r.status, CellStatus::oom) << r.reason.value_or("");
  EXPECT_EQ(runner.measure(tiny_key(), quick(1)).status, CellStatus::ok);
}

TEST_F(LmMeasure, OtherFailuresMakeTheCellError) {
  lm::testing::set_hooks({[](int) { throw std::runtime_error("injected failure"); }, nullptr});
  auto r = runner.measure(tiny_key(), quick());
  EXPECT_EQ(r.status, CellStatus::error);
  EXPECT_EQ(r.reason.value_or(""), "injected failure");
}

// The worker's path: a cell held open, one timed repetition per call, then finish; measure() is
// the same path run through.
TEST_F(LmMeasure, AnOpenCellTimesOneRepetitionPerCallUntilFinished) {
  auto session = runner.open(tiny_key(), quick());
  for (int i = 0; i < 2; ++i) {
    const lm::RepSample s = session->repetition();
    EXPECT_GT(s.prefill_ms, 0);
    EXPECT_EQ(s.decode_ms.size(), 7u);
  }
  EXPECT_FALSE(session->invalid_reason());
  EXPECT_THROW(runner.open(tiny_key(), quick()), std::logic_error) << "one open cell at a time";
  EXPECT_FALSE(session->memory_peak());
  const CellResult r = session->finish();
  ASSERT_EQ(r.status, CellStatus::ok) << r.reason.value_or("");
  EXPECT_EQ(r.samples.prefill_ms.size(), 2u) << "the repetitions asked for, not opt.reps";
  EXPECT_TRUE(r.metrics.count("tpot_ms"));
  ASSERT_TRUE(session->memory_peak());
  EXPECT_EQ(r.metrics.at("peak_rss_growth_bytes"), static_cast<double>(*session->memory_peak()));
  EXPECT_TRUE(r.profile);
  session.reset();
  EXPECT_EQ(runner.measure(tiny_key(), quick(1)).status, CellStatus::ok);
}

TEST_F(LmMeasure, AnOpenCellReportsAnOutOfMemoryAsACellFailure) {
  lm::testing::set_hooks({[](int rep) {
                            if (rep == 1) TORCH_CHECK_WITH(OutOfMemoryError, false, "injected OOM");
                          },
                          nullptr});
  auto session = runner.open(tiny_key(), quick());  // the warm-up is repetition 0
  try {
    session->repetition();
    ADD_FAILURE() << "no CellFailure";
  } catch (const lm::CellFailure& e) {
    EXPECT_EQ(e.status, CellStatus::oom);
    EXPECT_NE(std::string(e.what()).find("injected OOM"), std::string::npos);
  }
}

TEST_F(LmMeasure, UnsupportedCellsAreUsageErrors) {
  auto key = tiny_key();
  key.cuda_graphs = true;  // a CPU cell: graphs need a GPU
  EXPECT_EQ(usage_message(key), "--cuda-graphs on needs --device cuda (got --device cpu)");
  try {  // below the CLI the message names the settings, not flags
    lm::check_cell_supported(key);
    ADD_FAILURE() << "a CPU cell with CUDA graphs passed the check";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "cuda-graphs on needs device cuda (got device cpu)");
  }
  EXPECT_THROW(runner.measure(key, quick()), UsageError);
  key.kv_cache = false;  // and the static KV cache, on any device
  EXPECT_NE(usage_message(key).find("--cuda-graphs on needs --kv-cache on"), std::string::npos);
  key.device = "cuda";
  if (lm::cuda_available()) {
    EXPECT_NE(usage_message(key).find("--kv-cache on"), std::string::npos);
  }

  key = tiny_key();
  key.dtype = "fp8";
  EXPECT_NE(usage_message(key).find("--dtype"), std::string::npos);
  key = tiny_key();
  key.attention = "flash";
  EXPECT_NE(usage_message(key).find("--attention"), std::string::npos);
  key = tiny_key();
  key.device = "tpu";
  EXPECT_NE(usage_message(key).find("--device"), std::string::npos);
  key = tiny_key();
  key.device = "cuda:99";
  EXPECT_NE(usage_message(key).find("--device cuda:99"), std::string::npos);
  key = tiny_key(1, 1000, 32);
  EXPECT_NE(usage_message(key).find("exceeds the context"), std::string::npos);
  key = tiny_key(0, 8, 4);
  EXPECT_NE(usage_message(key).find("--batch-sizes"), std::string::npos);
  key = tiny_key();
  key.model = "llama";
  EXPECT_NE(usage_message(key).find("--model"), std::string::npos);
  EXPECT_EQ(usage_message(tiny_key()), "");
  if (!lm::cuda_available()) {
    key = tiny_key();
    key.device = "cuda";
    EXPECT_NE(usage_message(key).find("no CUDA GPU"), std::string::npos);
  }
}

TEST(LmEnvironment, CpuFingerprintIsStable) {
  auto env = lm::device_environment("cpu");
  EXPECT_EQ(env.at("device").rfind("cpu (", 0), 0u) << env.at("device");
  EXPECT_EQ(env.at("torch"), TORCH_VERSION);
  for (const char* k : {"driver", "cuda", "cudnn", "compute_capability"})
    EXPECT_EQ(env.at(k), "none") << k;
  EXPECT_GT(std::stoi(env.at("threads")), 0);
  EXPECT_FALSE(env.at("cpu").empty());
  EXPECT_EQ(env, lm::device_environment("cpu"));
  EXPECT_THROW(lm::device_environment("gpu"), UsageError);
  EXPECT_EQ(lm::default_attention(), TORCH_VERSION_MAJOR >= 2 ? "sdpa" : "math");
}

TEST(LmEnvironment, CpuThreadsDefaultToOneAndFollowTheEnvironment) {
  unsetenv("PERFGATE_CPU_THREADS");
  EXPECT_EQ(lm::device_environment("cpu").at("threads"), "1");
  setenv("PERFGATE_CPU_THREADS", "2", 1);
  EXPECT_EQ(lm::device_environment("cpu").at("threads"), "2");
  setenv("PERFGATE_CPU_THREADS", "two", 1);
  EXPECT_THROW(lm::device_environment("cpu"), UsageError);
  EXPECT_THROW(lm::check_cell_supported(tiny_key()), UsageError);
  unsetenv("PERFGATE_CPU_THREADS");
  EXPECT_EQ(lm::device_environment("cpu").at("threads"), "1");
}

TEST(LmEnvironment, ChosenFlashDecodeAttentionIsRecordedAndBadValuesRejected) {
  EXPECT_EQ(lm::device_environment("cpu").count("decode_attention"), 0u);
  setenv("PERFGATE_DECODE_ATTENTION", "flash", 1);
  EXPECT_EQ(lm::device_environment("cpu").at("decode_attention"), "flash");
  setenv("PERFGATE_DECODE_ATTENTION", "flashy", 1);
  EXPECT_THROW(lm::check_cell_supported(tiny_key()), UsageError);
  unsetenv("PERFGATE_DECODE_ATTENTION");
  EXPECT_EQ(lm::device_environment("cpu").count("decode_attention"), 0u);
}

TEST(LmEnvironment, LoopTimingSpreadsOnePairOfMarksOverTheSteps) {
  lm::LibTorchMeasurer runner;
  EXPECT_EQ(lm::device_environment("cpu").at("timing"), "step");
  setenv("PERFGATE_TIMING", "loop", 1);
  EXPECT_EQ(lm::device_environment("cpu").at("timing"), "loop");
  auto r = runner.measure(tiny_key(1, 16, 6), quick(2));
  unsetenv("PERFGATE_TIMING");
  ASSERT_EQ(r.status, CellStatus::ok) << r.reason.value_or("");
  ASSERT_EQ(r.samples.decode_ms.size(), 2u);
  for (const auto& rep : r.samples.decode_ms) {
    ASSERT_EQ(rep.size(), 5u);
    for (double d : rep) EXPECT_EQ(d, rep[0]);  // total / (G - 1), the same for every step
    EXPECT_GT(rep[0], 0);
  }
  auto step = runner.measure(tiny_key(1, 16, 6), quick(2));  // per-step marks again: they differ
  EXPECT_EQ(step.samples.decode_ms.at(0).size(), 5u);
  setenv("PERFGATE_TIMING", "sometimes", 1);
  EXPECT_NE(usage_message(tiny_key()).find("PERFGATE_TIMING"), std::string::npos);
  EXPECT_THROW(lm::device_environment("cpu"), UsageError);
  unsetenv("PERFGATE_TIMING");
}

}  // namespace
}  // namespace pg
