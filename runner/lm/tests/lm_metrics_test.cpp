// Derived metrics, sanity checks, the cost model and the GPU table, on hand-made numbers.
#include <gtest/gtest.h>

#include <cmath>

#include "runner/lm/cost_model.h"
#include "runner/lm/gpu_table.h"
#include "runner/lm/metrics.h"

namespace pg::lm {
namespace {

CellKey key(int batch, int prompt, int gen) {
  return {"tiny", "fp32", batch, prompt, gen, true, "sdpa", false, "cpu"};
}

CellSamples three_reps() {
  CellSamples s;
  s.prefill_ms = {1, 2, 3};
  s.decode_ms = {{1, 1}, {2, 2}, {4, 4}};
  return s;
}

TEST(LmMetrics, DerivedFromSamplesAsTheSpecDefinesThem) {
  CellCost cost{1e9, 5e8, 1e8, 1e12};
  auto m = derive_metrics(key(2, 10, 3), three_reps(), cost, {1000.0, 1000.0});
  EXPECT_DOUBLE_EQ(m.at("prefill_ms"), 2);
  EXPECT_DOUBLE_EQ(m.at("tpot_ms"), 2);  // per-rep decode / 2 steps: 1, 2, 4
  EXPECT_DOUBLE_EQ(m.at("itl_p50_ms"), 2);
  EXPECT_DOUBLE_EQ(m.at("itl_p99_ms"), 4);
  EXPECT_DOUBLE_EQ(m.at("decode_tok_s"), 1000);           // 2 x 2 tokens / 4 ms
  EXPECT_NEAR(m.at("total_tok_s"), 2 * 13 / 6e-3, 1e-6);  // median rep: 2 + 4 ms
  EXPECT_NEAR(m.at("cv"), std::sqrt(7.0 / 3.0) / (7.0 / 3.0), 1e-12);
  EXPECT_DOUBLE_EQ(m.at("weight_bytes"), 1e9);
  EXPECT_DOUBLE_EQ(m.at("kv_bytes"), 5e8);
  EXPECT_DOUBLE_EQ(m.at("achieved_bw_gbps"), 550);  // 1.1 GB per step / 2 ms
  EXPECT_DOUBLE_EQ(m.at("mbu"), 0.55);
  EXPECT_DOUBLE_EQ(m.at("prefill_mfu"), 0.5);  // 1 TFLOP / 2 ms / 1000 TFLOP/s
}

TEST(LmMetrics, NoPeakFiguresNoUtilisation) {
  auto m = derive_metrics(key(2, 10, 3), three_reps(), CellCost{1e9, 0, 0, 1e12}, {});
  EXPECT_FALSE(m.count("mbu"));
  EXPECT_FALSE(m.count("prefill_mfu"));
  EXPECT_TRUE(m.count("achieved_bw_gbps"));
}

TEST(LmMetrics, OneGeneratedTokenHasNoDecodeMetrics) {
  CellSamples s{{1.5, 2.5}, {{}, {}}, {}};
  auto m = derive_metrics(key(1, 8, 1), s, CellCost{}, {});
  EXPECT_DOUBLE_EQ(m.at("prefill_ms"), 2);
  EXPECT_FALSE(m.count("tpot_ms"));
  EXPECT_FALSE(m.count("cv"));
  EXPECT_FALSE(sanity_failure(s, 2, 1));
}

// The itl percentiles interpolate linearly between order statistics (numpy's default).
TEST(LmMetrics, PercentileInterpolatesLinearly) {
  EXPECT_DOUBLE_EQ(quantile({3, 1, 2, 4}, 0.50), 2.5);
  EXPECT_DOUBLE_EQ(quantile({10}, 0.99), 10);
  EXPECT_DOUBLE_EQ(quantile({0, 100}, 0.99), 99);
  EXPECT_DOUBLE_EQ(median({5, 1, 9}), 5);
  EXPECT_DOUBLE_EQ(median({4, 1, 9, 2}), 3);
}

TEST(LmSanity, AcceptsPlausibleSamples) { EXPECT_FALSE(sanity_failure(three_reps(), 3, 3)); }

TEST(LmSanity, RejectsStepsOutsideLimitsAndNonFiniteTimes) {
  auto s = three_reps();
  s.decode_ms[1][0] = 0.0005;  // 0.5 microseconds
  auto why = sanity_failure(s, 3, 3);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("decode step 1 of repetition 2"), std::string::npos) << *why;
  s = three_reps();
  s.decode_ms[2][1] = 61'000;
  EXPECT_TRUE(sanity_failure(s, 3, 3));
  s = three_reps();
  s.decode_ms[0][1] = NAN;
  EXPECT_TRUE(sanity_failure(s, 3, 3));
  s = three_reps();
  s.prefill_ms[0] = INFINITY;
  why = sanity_failure(s, 3, 3);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("prefill of repetition 1"), std::string::npos) << *why;
}

TEST(LmSanity, RejectsWrongSampleCounts) {
  EXPECT_TRUE(sanity_failure(three_reps(), 4, 3));  // a repetition missing
  EXPECT_TRUE(sanity_failure(three_reps(), 3, 4));  // a step missing
}

TEST(LmCostModel, SizesAndFlopsOfACell) {
  const ModelConfig tiny{"t", Family::gpt2, 2, 4, 64, 256, 512, 1024};
  auto k = key(4, 100, 32);
  auto c = cell_cost(tiny, k);
  EXPECT_DOUBLE_EQ(c.weight_bytes, 4.0 * static_cast<double>(parameter_count(tiny)));
  EXPECT_DOUBLE_EQ(c.kv_bytes, 2.0 * 2 * 4 * 132 * 64 * 4);
  EXPECT_DOUBLE_EQ(c.kv_read_bytes_per_step, 2.0 * 2 * 4 * 116 * 64 * 4);  // mean of 101..131
  const double matmul = 2.0 * 4 * 100 * 2 * (4 * 64 * 64 + 2 * 64 * 256);
  const double attention = 2.0 * 4 * 2 * 64 * 100 * 101;
  EXPECT_DOUBLE_EQ(c.prefill_flops, matmul + attention + 2.0 * 4 * 64 * 512);
  k.kv_cache = false;
  k.dtype = "bf16";
  c = cell_cost(tiny, k);
  EXPECT_DOUBLE_EQ(c.kv_bytes, 0);
  EXPECT_DOUBLE_EQ(c.weight_bytes, 2.0 * static_cast<double>(parameter_count(tiny)));
}

TEST(LmGpuTable, MatchesDeviceNamesAsWholeWords) {
  EXPECT_DOUBLE_EQ(find_gpu_peaks("NVIDIA H200")->bw_gbps, 4800);
  EXPECT_DOUBLE_EQ(find_gpu_peaks("NVIDIA H200 NVL")->tflops_bf16, 835.5);
  EXPECT_DOUBLE_EQ(find_gpu_peaks("NVIDIA H100 80GB HBM3")->bw_gbps, 3350);
  EXPECT_DOUBLE_EQ(find_gpu_peaks("NVIDIA H100 PCIe")->bw_gbps, 2000);
  EXPECT_DOUBLE_EQ(find_gpu_peaks("NVIDIA A100-SXM4-80GB")->bw_gbps, 2039);
  EXPECT_DOUBLE_EQ(find_gpu_peaks("NVIDIA A100-SXM4-40GB")->bw_gbps, 1555);
  EXPECT_DOUBLE_EQ(find_gpu_peaks("NVIDIA L40S")->bw_gbps, 864);
  EXPECT_DOUBLE_EQ(find_gpu_peaks("NVIDIA L4")->bw_gbps, 300);
  EXPECT_DOUBLE_EQ(find_gpu_peaks("NVIDIA A10")->bw_gbps, 600);
  EXPECT_DOUBLE_EQ(find_gpu_peaks("NVIDIA GeForce RTX 4090")->tflops_fp32, 82.6);
  EXPECT_FALSE(find_gpu_peaks("NVIDIA GH200 480GB"));
  EXPECT_FALSE(find_gpu_peaks("cpu (Intel(R) Xeon(R) Processor)"));
}

TEST(LmGpuTable, PeaksPerDtypeAndOverrides) {
  auto p = peaks_for("NVIDIA H200", "fp32", std::nullopt, std::nullopt);
  EXPECT_DOUBLE_EQ(*p.tflops, 67);
  p = peaks_for("NVIDIA H200", "bf16", 4000.0, std::nullopt);
  EXPECT_DOUBLE_EQ(*p.bw_gbps, 4000);
  EXPECT_DOUBLE_EQ(*p.tflops, 989.5);
  p = peaks_for("cpu (x)", "fp32", std::nullopt, 2.0);
  EXPECT_FALSE(p.bw_gbps);
  EXPECT_DOUBLE_EQ(*p.tflops, 2);
}

}  // namespace
}  // namespace pg::lm
