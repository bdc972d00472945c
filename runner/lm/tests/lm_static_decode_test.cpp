// The graph-friendly decode step (static buffers, position on the device, whole-cache attention
// under a validity mask), run eagerly on the CPU: what a CUDA graph captures must decode the
// same tokens as the eager cached and uncached paths.
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include "runner/lm/generate.h"
#include "runner/lm/model_spec.h"
#include "runner/lm/static_decode.h"

namespace pg::lm {
namespace {

struct Case {
  const char* model;
  int64_t batch, prompt;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.model << " B" << c.batch << " P" << c.prompt;
}

class LmStaticDecode : public ::testing::TestWithParam<Case> {};

// "cs336-tiny": the cs336 family (RMSNorm, SwiGLU, RoPE, untied head) at tiny's size, since
// building cs336-small takes seconds on a shared CPU.
ModelConfig config(const std::string& name) {
  if (name == "cs336-tiny") return {name, Family::cs336, 2, 4, 64, 172, 512, 128};
  return resolve_model(name);
}

at::Tensor decode_static(const Model& m, const at::Tensor& prompt, int64_t gen,
                         AttentionKind attention, KVCache& cache) {
  StaticDecodeStep step(m, cache, attention, prompt.size(0));
  GenerateOptions g{static_cast<int>(gen), attention, nullptr, nullptr, true};
  g.static_step = &step;
  return generate(m, prompt, g);
}

TEST_P(LmStaticDecode, TokensMatchTheEagerCachedAndUncachedPaths) {
  c10::InferenceMode guard;
  const auto& c = GetParam();
  const auto cfg = config(c.model);
  const auto m = random_model(cfg, at::kFloat, at::kCPU, 3);
  const int64_t G = 9;
  const auto prompt = at::randint(cfg.vocab, {c.batch, c.prompt}, at::kLong);
  for (auto attention : {AttentionKind::math, AttentionKind::sdpa}) {
    // A longer cache than needed: the step must ignore the positions never written.
    KVCache static_cache(cfg.n_layer, c.batch, cfg.n_head, c.prompt + G + 5, cfg.head_dim(),
                         m.options());
    KVCache cache(cfg.n_layer, c.batch, cfg.n_head, c.prompt + G, cfg.head_dim(), m.options());
    auto s = decode_static(m, prompt, G, attention, static_cache);
    auto e = generate(m, prompt, {static_cast<int>(G), attention, &cache, nullptr, true});
    auto n = generate(m, prompt, {static_cast<int>(G), attention, nullptr, nullptr, true});
    EXPECT_TRUE(at::equal(s, e)) << c.model << " B" << c.batch << " P" << c.prompt << "\n"
                                 << s << "\n"
                                 << e;
    EXPECT_TRUE(at::equal(s, n)) << c.model << " B" << c.batch << " P" << c.prompt;
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, LmStaticDecode,
                         ::testing::Values(Case{"tiny", 1, 1}, Case{"tiny", 1, 17},
                                           Case{"tiny", 3, 8}, Case{"tiny", 2, 40},
                                           Case{"cs336-tiny", 1, 5}, Case{"cs336-tiny", 2, 12},
                                           Case{"cs336-tiny", 3, 33}));

TEST(LmStaticDecodeMask, GarbagePastThePositionChangesNothing) {
  c10::InferenceMode guard;
  for (const char* name : {"tiny", "cs336-tiny"}) {
    const auto cfg = config(name);
    const auto m = random_model(cfg, at::kFloat, at::kCPU, 5);
    const auto prompt = at::randint(cfg.vocab, {2, 10}, at::kLong);
    for (auto attention : {AttentionKind::math, AttentionKind::sdpa}) {
      KVCache clean(cfg.n_layer, 2, cfg.n_head, 32, cfg.head_dim(), m.options());
      KVCache dirty(cfg.n_layer, 2, cfg.n_head, 32, cfg.head_dim(), m.options());
      dirty.buffer().normal_(0, 100);  // large finite values everywhere the prefill won't write
      auto a = decode_static(m, prompt, 8, attention, clean);
      auto b = decode_static(m, prompt, 8, attention, dirty);
      EXPECT_TRUE(at::equal(a, b)) << a << "\n" << b;
      // One step's logits with and without garbage past pos are the same to rounding.
      StaticDecodeStep sc(m, clean, attention, 2), sd(m, dirty, attention, 2);
      auto pos = at::full({1}, 10, at::kLong);
      auto token = at::randint(cfg.vocab, {2, 1}, at::kLong);
      DecodeWindow window(2, cfg.n_head, 32, cfg.head_dim(), m.options(), attention);
      ASSERT_FALSE(window.length_aware());  // the CPU takes the masked form
      window.set(pos);
      const auto& valid = window.mask();
      EXPECT_EQ(valid.sizes(), (at::IntArrayRef{1, 1, 1, 32}));
      EXPECT_EQ(valid.eq(0).sum().item<int64_t>(), 11);  // positions 0..10 attend
      EXPECT_EQ(valid.isneginf().sum().item<int64_t>(), 21);
      auto la = forward_static_step(m, token, pos, clean, window);
      auto lb = forward_static_step(m, token, pos, dirty, window);
      EXPECT_TRUE(at::allclose(la, lb, 1e-5, 1e-6)) << (la - lb).abs().max();
    }
  }
}

TEST(LmStaticDecodeMask, StepNeverResizesItsBuffers) {
  c10::InferenceMode guard;
  const auto cfg = config("cs336-tiny");
  const auto m = random_model(cfg, at::kFloat, at::kCPU, 2);
  KVCache cache(cfg.n_layer, 1, cfg.n_head, 16, cfg.head_dim(), m.options());
  StaticDecodeStep step(m, cache, AttentionKind::sdpa, 1);
  const auto* out_data = step.out().data_ptr();
  step.set_position(4);
  step.run();
  step.set_position(5);
  step.run();
  EXPECT_EQ(step.out().data_ptr(), out_data);
  EXPECT_EQ(step.pos().item<int64_t>(), 5);
  // The step wrote its keys at 4 and 5 and nowhere past them.
  EXPECT_GT(cache.buffer().narrow(-2, 4, 2).abs().sum().item<double>(), 0);
  EXPECT_EQ(cache.buffer().narrow(-2, 6, 10).abs().sum().item<double>(), 0);
}

}  // namespace
}  // namespace pg::lm
