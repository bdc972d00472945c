// The model: preset shapes, output shapes, KV cache on/off equivalence, math vs sdpa, RoPE.
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include "common/errors.h"
#include "runner/lm/cost_model.h"
#include "runner/lm/generate.h"
#include "runner/lm/model.h"
#include "runner/lm/model_spec.h"

namespace pg::lm {
namespace {

int64_t stored_parameters(const Model& m) {
  int64_t n = 0;
  auto add = [&](const at::Tensor& t) { n += t.defined() ? t.numel() : 0; };
  for (const auto* t : {&m.wte, &m.wpe, &m.lnf_w, &m.lnf_b, &m.lm_head}) add(*t);
  for (const auto& l : m.layers)
    for (const auto* t : {&l.ln1_w, &l.ln1_b, &l.qkv_w, &l.qkv_b, &l.proj_w, &l.proj_b, &l.ln2_w,
                          &l.ln2_b, &l.fc_w, &l.fc_b, &l.fc2_w, &l.fc2_b})
      add(*t);
  return n;
}

ModelConfig small_cs336() { return {"small-cs336", Family::cs336, 2, 4, 64, 176, 512, 64}; }

TEST(LmPresets, Gpt2ParameterCountsMatchHuggingFace) {
  // GPT2LMHeadModel.num_parameters() of the four Hub checkpoints (tied head counted once).
  EXPECT_EQ(parameter_count(*find_preset("gpt2")), 124'439'808);
  EXPECT_EQ(parameter_count(*find_preset("gpt2-medium")), 354'823'168);
  EXPECT_EQ(parameter_count(*find_preset("gpt2-large")), 774'030'080);
  EXPECT_EQ(parameter_count(*find_preset("gpt2-xl")), 1'557'611'200);
}

TEST(LmPresets, EveryPresetResolvesWithAValidShape) {
  ASSERT_EQ(preset_names().size(), 10u);
  for (const auto& name : preset_names()) {
    const auto cfg = resolve_model(name);
    EXPECT_EQ(cfg.name, name);
    EXPECT_EQ(cfg.d_model % cfg.n_head, 0) << name;
    EXPECT_EQ(cfg.head_dim() % 2, 0) << name;  // RoPE rotates pairs
    EXPECT_GE(cfg.context, 512 + 32) << name;  // the default sweep fits
    EXPECT_EQ(cfg.vocab, cfg.family == Family::gpt2 ? (name == "tiny" ? 512 : 50257) : 10000);
  }
  const auto xl = *find_preset("cs336-2.7b");
  EXPECT_EQ(xl.d_model, 2560);
  EXPECT_EQ(xl.d_ff, 10240);
  EXPECT_EQ(xl.n_layer, 32);
  EXPECT_EQ(xl.n_head, 32);
}

TEST(LmPresets, UnknownModelIsAUsageErrorListingPresets) {
  try {
    resolve_model("gpt3");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'gpt3'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("cs336-2.7b"), std::string::npos);
  }
}

TEST(LmModel, Gpt2PresetShapes) {
  c10::InferenceMode guard;
  const auto cfg = *find_preset("gpt2");
  auto m = random_model(cfg, at::kFloat, at::kCPU, 0);
  EXPECT_EQ(stored_parameters(m), parameter_count(cfg));
  EXPECT_FALSE(m.lm_head.defined());  // tied to wte
  auto tokens = at::randint(cfg.vocab, {2, 5}, at::kLong);
  auto logits = forward(m, tokens, 0, nullptr, AttentionKind::sdpa, false);
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{2, 5, 50257}));
  auto last = forward(m, tokens, 0, nullptr, AttentionKind::sdpa, true);
  EXPECT_EQ(last.sizes(), (std::vector<int64_t>{2, 1, 50257}));
  EXPECT_TRUE(at::allclose(last.squeeze(1), logits.select(1, 4), 1e-5, 1e-5));
}

TEST(LmModel, Cs336SmallPresetShapes) {
  c10::InferenceMode guard;
  const auto cfg = *find_preset("cs336-small");
  auto m = random_model(cfg, at::kFloat, at::kCPU, 0);
  EXPECT_EQ(stored_parameters(m), parameter_count(cfg));
  EXPECT_TRUE(m.lm_head.defined());  // untied
  EXPECT_FALSE(m.layers[0].qkv_b.defined());
  EXPECT_EQ(m.layers[0].fc_w.sizes(), (std::vector<int64_t>{2 * 3072, 768}));  // w1 and w3
  auto logits =
      forward(m, at::randint(cfg.vocab, {3, 4}, at::kLong), 0, nullptr, AttentionKind::math, false);
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{3, 4, 10000}));
  EXPECT_TRUE(logits.isfinite().all().item<bool>());
}

TEST(LmModel, ReducedPrecisionWeightsAreCastUpFront) {
  c10::InferenceMode guard;
  auto m = random_model(*find_preset("tiny"), at::kBFloat16, at::kCPU, 3);
  EXPECT_EQ(m.wte.scalar_type(), at::kBFloat16);
  EXPECT_EQ(m.layers[1].fc2_w.scalar_type(), at::kBFloat16);
  auto logits = forward(m, at::zeros({1, 3}, at::kLong), 0, nullptr, AttentionKind::sdpa, true);
  EXPECT_EQ(logits.scalar_type(), at::kBFloat16);
}

TEST(LmModel, SameSeedSameWeightsOtherSeedOthers) {
  c10::InferenceMode guard;
  const auto cfg = *find_preset("tiny");
  auto a = random_model(cfg, at::kFloat, at::kCPU, 5),
       b = random_model(cfg, at::kFloat, at::kCPU, 5);
  auto c = random_model(cfg, at::kFloat, at::kCPU, 6);
  EXPECT_TRUE(at::equal(a.layers[0].qkv_w, b.layers[0].qkv_w));
  EXPECT_FALSE(at::equal(a.layers[0].qkv_w, c.layers[0].qkv_w));
}

TEST(LmModel, RopeDotProductsDependOnlyOnRelativePosition) {
  c10::InferenceMode guard;
  auto m = random_model(small_cs336(), at::kFloat, at::kCPU, 0);
  auto q = at::randn({1, 1, 1, 16}, at::kDouble).to(at::kFloat);
  auto k = at::randn({1, 1, 1, 16}, at::kDouble).to(at::kFloat);
  auto rot = [&](const at::Tensor& x, int64_t pos) {
    return apply_rope(x, m.rope_cos.narrow(0, pos, 1), m.rope_sin.narrow(0, pos, 1));
  };
  const double d1 = (rot(q, 9) * rot(k, 4)).sum().item<double>();
  const double d2 = (rot(q, 30) * rot(k, 25)).sum().item<double>();
  const double d3 = (rot(q, 30) * rot(k, 24)).sum().item<double>();
  EXPECT_NEAR(d1, d2, 1e-4);
  EXPECT_GT(std::abs(d1 - d3), 1e-3);
  EXPECT_NEAR(rot(q, 17).norm().item<double>(), q.norm().item<double>(), 1e-5);
}

struct FamilyAttention {
  Family family;
  AttentionKind attention;
};

class LmDecode : public ::testing::TestWithParam<FamilyAttention> {
 protected:
  ModelConfig config() const {
    return GetParam().family == Family::gpt2 ? *find_preset("tiny") : small_cs336();
  }
};

TEST_P(LmDecode, KvCacheOnAndOffGiveIdenticalGreedyTokens) {
  c10::InferenceMode guard;
  const auto cfg = config();
  auto m = random_model(cfg, at::kFloat, at::kCPU, 11);
  auto prompt = at::randint(cfg.vocab, {3, 7}, at::kLong);
  const int gen = 12;
  KVCache cache(cfg.n_layer, 3, cfg.n_head, 7 + gen, cfg.head_dim(), m.options());
  auto with_cache = generate(m, prompt, {gen, GetParam().attention, &cache, nullptr, true});
  auto without = generate(m, prompt, {gen, GetParam().attention, nullptr, nullptr, true});
  ASSERT_EQ(with_cache.sizes(), (std::vector<int64_t>{3, gen}));
  EXPECT_TRUE(at::equal(with_cache, without)) << with_cache << "\n" << without;
  // Not a degenerate model that repeats one token.
  EXPECT_GT(std::get<0>(at::_unique(with_cache.flatten())).numel(), 3);
  // A second run over the same (now dirty) cache gives the same tokens again.
  auto again = generate(m, prompt, {gen, GetParam().attention, &cache, nullptr, true});
  EXPECT_TRUE(at::equal(with_cache, again));
}

TEST_P(LmDecode, CachedDecodeStepMatchesFullRecompute) {
  c10::InferenceMode guard;
  const auto cfg = config();
  auto m = random_model(cfg, at::kFloat, at::kCPU, 2);
  auto seq = at::randint(cfg.vocab, {2, 10}, at::kLong);
  KVCache cache(cfg.n_layer, 2, cfg.n_head, 10, cfg.head_dim(), m.options());
  forward(m, seq.narrow(1, 0, 9), 0, &cache, GetParam().attention, true);
  auto step = forward(m, seq.narrow(1, 9, 1), 9, &cache, GetParam().attention, true);
  auto full = forward(m, seq, 0, nullptr, GetParam().attention, false);
  EXPECT_TRUE(at::allclose(step.squeeze(1), full.select(1, 9), 1e-4, 1e-5));
}

TEST_P(LmDecode, MathAndSdpaAgree) {
  c10::InferenceMode guard;
  const auto cfg = config();
  auto m = random_model(cfg, at::kFloat, at::kCPU, 4);
  auto seq = at::randint(cfg.vocab, {2, 13}, at::kLong);
  auto math = forward(m, seq, 0, nullptr, AttentionKind::math, false);
  auto sdpa = forward(m, seq, 0, nullptr, AttentionKind::sdpa, false);
  EXPECT_TRUE(at::allclose(math, sdpa, 1e-4, 1e-5)) << (math - sdpa).abs().max();
  // A chunk after a cached prefix needs the offset causal mask (T > 1, S > T).
  KVCache c1(cfg.n_layer, 2, cfg.n_head, 13, cfg.head_dim(), m.options());
  KVCache c2(cfg.n_layer, 2, cfg.n_head, 13, cfg.head_dim(), m.options());
  forward(m, seq.narrow(1, 0, 8), 0, &c1, AttentionKind::math, false);
  forward(m, seq.narrow(1, 0, 8), 0, &c2, AttentionKind::sdpa, false);
  auto chunk_math = forward(m, seq.narrow(1, 8, 5), 8, &c1, AttentionKind::math, false);
  auto chunk_sdpa = forward(m, seq.narrow(1, 8, 5), 8, &c2, AttentionKind::sdpa, false);
  EXPECT_TRUE(at::allclose(chunk_math, math.narrow(1, 8, 5), 1e-4, 1e-5));
  EXPECT_TRUE(at::allclose(chunk_sdpa, math.narrow(1, 8, 5), 1e-4, 1e-5));
}

INSTANTIATE_TEST_SUITE_P(FamiliesAndAttentions, LmDecode,
                         ::testing::Values(FamilyAttention{Family::gpt2, AttentionKind::math},
                                           FamilyAttention{Family::gpt2, AttentionKind::sdpa},
                                           FamilyAttention{Family::cs336, AttentionKind::math},
                                           FamilyAttention{Family::cs336, AttentionKind::sdpa}),
                         [](const auto& info) {
                           return std::string(info.param.family == Family::gpt2 ? "gpt2"
                                                                                : "cs336") +
                                  "_" +
                                  (info.param.attention == AttentionKind::math ? "math" : "sdpa");
                         });

TEST(LmModel, SequencePastContextIsRefused) {
  c10::InferenceMode guard;
  auto m = random_model(small_cs336(), at::kFloat, at::kCPU, 0);
  EXPECT_THROW(forward(m, at::zeros({1, 65}, at::kLong), 0, nullptr, AttentionKind::math, true),
               RuntimeFailure);
}

}  // namespace
}  // namespace pg::lm
