// The CUDA paths (events, allocator peak, device queries, OOM). Skipped where no GPU is present:
// the build machines have none; run on the GPU machine.
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include "common/errors.h"
#include "runner/lm/cuda_support.h"
#include "runner/lm/generate.h"
#include "runner/lm/measure.h"
#include "runner/lm/model_spec.h"
#include "runner/lm/static_decode.h"

namespace pg {
namespace {

class LmCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!lm::cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine";
  }
};

CellKey cuda_key(const char* dtype, int batch = 2, int prompt = 64, int gen = 8) {
  return {"tiny", dtype, batch, prompt, gen, true, "sdpa", false, "cuda"};
}

TEST_F(LmCuda, CellsRunWithEventTimingAndAllocatorPeak) {
  lm::LibTorchMeasurer runner;
  runner::MeasureOptions opt;
  opt.warmup = 1;
  opt.reps = 3;
  for (const char* dtype : {"fp32", "fp16", "bf16"}) {
    auto r = runner.measure(cuda_key(dtype), opt);
    ASSERT_EQ(r.status, CellStatus::ok) << dtype << ": " << r.reason.value_or("");
    ASSERT_EQ(r.samples.decode_ms.size(), 3u);
    EXPECT_EQ(r.samples.decode_ms[0].size(), 7u);
    EXPECT_GT(r.metrics.at("peak_alloc_bytes"), r.metrics.at("weight_bytes"));
    EXPECT_FALSE(r.metrics.count("peak_rss_growth_bytes"));
    const auto env = lm::device_environment("cuda");
    if (env.count("peak_bw_gbps")) {  // a GPU of the table: utilisation is reported
      EXPECT_GT(r.metrics.at("mbu"), 0);
      EXPECT_GT(r.metrics.at("prefill_mfu"), 0);
    }
  }
}

TEST_F(LmCuda, FingerprintNamesTheGpuAndItsSoftware) {
  const auto env = lm::device_environment("cuda:0");
  EXPECT_EQ(env.at("device"), lm::cuda_device_info(0).name);
  for (const char* k : {"compute_capability", "driver", "cuda", "cudnn"}) {
    EXPECT_NE(env.at(k), "none") << k;
    EXPECT_FALSE(env.at(k).empty()) << k;
  }
  std::cout << "device " << env.at("device") << ", cc " << env.at("compute_capability")
            << ", driver " << env.at("driver") << ", cuda " << env.at("cuda") << ", cudnn "
            << env.at("cudnn") << std::endl;
}

TEST_F(LmCuda, KvCacheOnAndOffGiveIdenticalTokensOnTheGpu) {
  c10::InferenceMode guard;
  const at::Device gpu(at::kCUDA, 0);
  for (const char* name : {"tiny", "cs336-small"}) {
    const auto cfg = lm::resolve_model(name);
    auto m = lm::random_model(cfg, at::kFloat, gpu, 1);
    auto prompt = at::randint(cfg.vocab, {2, 33}, at::kLong).to(gpu);
    lm::KVCache cache(cfg.n_layer, 2, cfg.n_head, 33 + 10, cfg.head_dim(), m.options());
    for (auto attention : {lm::AttentionKind::math, lm::AttentionKind::sdpa}) {
      auto a = lm::generate(m, prompt, {10, attention, &cache, nullptr, true});
      auto b = lm::generate(m, prompt, {10, attention, nullptr, nullptr, true});
      EXPECT_TRUE(at::equal(a, b)) << name << "\n" << a << "\n" << b;
    }
    // The GPU computes what the CPU computes with the same weights (the CPU and CUDA generators
    // differ, so the weights are copied rather than drawn again).
    auto gpu_logits = lm::forward(m, prompt, 0, nullptr, lm::AttentionKind::sdpa, false).cpu();
    auto m_on_cpu = m;
    for (auto* t : {&m_on_cpu.wte, &m_on_cpu.wpe, &m_on_cpu.lnf_w, &m_on_cpu.lnf_b,
                    &m_on_cpu.lm_head, &m_on_cpu.rope_cos, &m_on_cpu.rope_sin})
      if (t->defined()) *t = t->cpu();
    for (auto& l : m_on_cpu.layers)
      for (auto* t : {&l.ln1_w, &l.ln1_b, &l.qkv_w, &l.qkv_b, &l.proj_w, &l.proj_b, &l.ln2_w,
                      &l.ln2_b, &l.fc_w, &l.fc_b, &l.fc2_w, &l.fc2_b})
        if (t->defined()) *t = t->cpu();
    auto ref = lm::forward(m_on_cpu, prompt.cpu(), 0, nullptr, lm::AttentionKind::math, false);
    EXPECT_TRUE(at::allclose(gpu_logits, ref, 1e-3, 1e-4)) << (gpu_logits - ref).abs().max();
  }
}

TEST_F(LmCuda, OutOfMemoryIsOomAndTheMemoryIsGivenBack) {
  lm::LibTorchMeasurer runner;
  runner::MeasureOptions opt;
  opt.warmup = 0;
  opt.reps = 1;
  // 2^16 x 512 tokens of cs336-small: 100 GB of embeddings, then 300 GB for q, k and v.
  auto key = cuda_key("fp32", 1 << 16, 512, 2);
  key.model = "cs336-small";
  auto r = runner.measure(key, opt);
  EXPECT_EQ(r.status, CellStatus::oom) << r.reason.value_or("");
  EXPECT_EQ(runner.measure(cuda_key("fp32"), opt).status, CellStatus::ok);
}

// The captured graph, replayed on the pool stream, decodes what eager decode decodes: the same
// static step run eagerly, the eager cached path, and (fp32) the uncached path.
TEST_F(LmCuda, GraphDecodeGivesTheTokensOfEagerDecode) {
  c10::InferenceMode guard;
  const at::Device gpu(at::kCUDA, 0);
  for (const char* form : {"masked", "flash"})
    for (const char* name : {"tiny", "cs336-small"})
      for (auto dtype : {at::kFloat, at::kBFloat16})
        for (auto attention : {lm::AttentionKind::math, lm::AttentionKind::sdpa}) {
          setenv("PERFGATE_DECODE_ATTENTION", form, 1);
          const auto cfg = lm::resolve_model(name);
          auto m = lm::random_model(cfg, dtype, gpu, 1);
          const int64_t B = 2, P = 37, G = 12;
          auto prompt = at::randint(cfg.vocab, {B, P}, at::kLong).to(gpu);
          auto stream = lm::use_pool_stream(0);
          lm::KVCache eager_cache(cfg.n_layer, B, cfg.n_head, P + G, cfg.head_dim(), m.options());
          auto eager = lm::generate(m, prompt, {12, attention, &eager_cache, nullptr, true});
          lm::KVCache cache(cfg.n_layer, B, cfg.n_head, P + G, cfg.head_dim(), m.options());
          lm::StaticDecodeStep step(m, cache, attention, B);
          lm::GenerateOptions g{12, attention, nullptr, nullptr, true};
          g.static_step = &step;
          auto unrolled = lm::generate(m, prompt, g);
          step.set_position(P);
          auto graph = lm::capture_cuda_graph(0, [&] { step.run(); });
          g.run_step = [&] { graph->replay(); };
          auto replayed = lm::generate(m, prompt, g);
          auto again = lm::generate(m, prompt, g);  // replays reuse the buffers across repetitions
          unsetenv("PERFGATE_DECODE_ATTENTION");
          const std::string what = std::string(form) + " " + name + " " + c10::toString(dtype) +
                                   (attention == lm::AttentionKind::sdpa ? " sdpa" : " math");
          EXPECT_TRUE(at::equal(replayed, unrolled)) << what << "\n"
                                                     << replayed << "\n"
                                                     << unrolled;
          EXPECT_TRUE(at::equal(replayed, again)) << what;
          // bf16 may round differently over the longer masked cache: exact against the same
          // step run eagerly (above), against the narrow-prefix eager path in fp32.
          if (dtype == at::kFloat) {
            EXPECT_TRUE(at::equal(replayed, eager)) << what << "\n" << replayed << "\n" << eager;
            auto uncached = lm::generate(m, prompt, {12, attention, nullptr, nullptr, true});
            EXPECT_TRUE(at::equal(replayed, uncached)) << what;
          } else {  // informative only: near-ties of random weights may flip in bf16
            std::cout << what << ": graph and eager cached decode agree on "
                      << replayed.eq(eager).sum().item<int64_t>() << " of " << replayed.numel()
                      << " tokens" << std::endl;
          }
        }
}

// The length-aware window (flash's varlen kernel over the cache seen as rows) reads keys 0..pos
// of every sequence and nothing past them: against SDPA over the narrowed prefix in fp32, with
// huge values written past pos.
TEST_F(LmCuda, LengthAwareDecodeAttentionReadsOnlyTheFilledPrefix) {
  c10::InferenceMode guard;
  setenv("PERFGATE_DECODE_ATTENTION", "flash", 1);
  const auto bf16 = at::TensorOptions().dtype(at::kBFloat16).device(at::kCUDA, 0);
  const int64_t H = 5, L = 40, Dh = 64;
  EXPECT_FALSE(lm::DecodeWindow(1, H, L, Dh, bf16.dtype(at::kFloat), lm::AttentionKind::sdpa)
                   .length_aware());
  EXPECT_FALSE(lm::DecodeWindow(1, H, L, Dh, bf16, lm::AttentionKind::math).length_aware());
  for (int64_t B : {int64_t{1}, int64_t{3}})
    for (int64_t pos : {int64_t{0}, int64_t{17}, L - 1}) {
      auto k = at::randn({B, H, L, Dh}, bf16), v = at::randn({B, H, L, Dh}, bf16);
      if (pos + 1 < L) {
        k.narrow(2, pos + 1, L - pos - 1).fill_(1e4);
        v.narrow(2, pos + 1, L - pos - 1).fill_(-1e4);
      }
      auto q = at::randn({B, H, 1, Dh}, bf16);
      lm::DecodeWindow window(B, H, L, Dh, bf16, lm::AttentionKind::sdpa);
      ASSERT_TRUE(window.length_aware());
      window.set(at::full({1}, pos, bf16.dtype(at::kLong)));
      auto got = window.attend(q, k, v).to(at::kFloat);
      auto kp = k.narrow(2, 0, pos + 1).to(at::kFloat), vp = v.narrow(2, 0, pos + 1).to(at::kFloat);
      auto want = at::scaled_dot_product_attention(q.to(at::kFloat), kp, vp);
      ASSERT_EQ(got.sizes(), want.sizes());
      EXPECT_LT((got - want).abs().max().item<double>(), 2e-2) << "B " << B << " pos " << pos;
    }
  unsetenv("PERFGATE_DECODE_ATTENTION");
  EXPECT_FALSE(lm::DecodeWindow(1, H, L, Dh, bf16, lm::AttentionKind::sdpa).length_aware());
}

// Graph cells through lm::LibTorchMeasurer: every sample there, replays timed by events on the pool
// stream, steadier than eager.
TEST_F(LmCuda, GraphCellsTimeTheirReplays) {
  lm::LibTorchMeasurer runner;
  runner::MeasureOptions opt;
  opt.warmup = 3;
  opt.reps = 10;
  for (const char* dtype : {"fp32", "bf16"})
    for (const char* model : {"tiny", "gpt2"}) {
      auto key = cuda_key(dtype, 1, 512, 32);
      key.model = model;
      key.cuda_graphs = true;
      auto r = runner.measure(key, opt);
      ASSERT_EQ(r.status, CellStatus::ok) << model << " " << dtype << ": " << r.reason.value_or("");
      ASSERT_EQ(r.samples.decode_ms.size(), 10u);
      for (const auto& rep : r.samples.decode_ms) EXPECT_EQ(rep.size(), 31u);
      EXPECT_GT(r.metrics.at("tpot_ms"), 0);
      EXPECT_LT(r.metrics.at("cv"), 0.05) << model << " " << dtype;
      key.cuda_graphs = false;
      auto eager = runner.measure(key, opt);
      ASSERT_EQ(eager.status, CellStatus::ok);
      std::cout << model << " " << dtype << ": tpot graph " << r.metrics.at("tpot_ms") << " ms (cv "
                << r.metrics.at("cv") << "), eager " << eager.metrics.at("tpot_ms") << " ms (cv "
                << eager.metrics.at("cv") << ")" << std::endl;
    }
  auto key = cuda_key("fp32");
  key.cuda_graphs = true;
  key.kv_cache = false;
  EXPECT_THROW(runner.measure(key, opt), UsageError);
}


// A graph cell's peak memory is its own: the same whether it is the first cell of the process or
// follows many others (each graph cell takes new pool streams, and PyTorch's cuBLAS workspace of
// each stream used to stay allocated into every later cell's peak: +66 MiB a cell on Hopper), and
// also with a placement.
TEST_F(LmCuda, AGraphCellsPeakMemoryDoesNotDependOnTheCellsBeforeIt) {
  lm::LibTorchMeasurer runner;
  runner::MeasureOptions opt;
  opt.warmup = 1;
  opt.reps = 2;
  auto key = cuda_key("bf16", 1, 64, 8);
  key.model = "gpt2";
  key.cuda_graphs = true;
  auto other = key;
  other.batch_size = 4;
  other.seq_len = 256;
  const auto peak = [&](const CellKey& k) {
    auto r = runner.measure(k, opt);
    EXPECT_EQ(r.status, CellStatus::ok) << r.reason.value_or("");
    return r.status == CellStatus::ok ? r.metrics.at("peak_alloc_bytes") : 0.0;
  };
  const double first = peak(key);
  for (int i = 0; i < 20; ++i) peak(i % 2 ? key : other);
  const double later = peak(key);
  opt.placement_seed = 12345;
  const double placed = peak(key);
  std::cout << "peak of gpt2 bf16 1x64: first " << first << ", after 20 cells " << later
            << ", with a placement " << placed << std::endl;
  EXPECT_NEAR(later, first, 1 << 20);
  EXPECT_NEAR(placed, first, 1 << 20);
}
}  // namespace
}  // namespace pg
