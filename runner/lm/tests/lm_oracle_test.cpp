// Hugging Face transformers as the oracle: hf_oracle.py (run by ctest first, as a fixture)
// saves a tiny random GPT2LMHeadModel and its logits; our loader and model must reproduce them.
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include "runner/lm/checkpoint_load.h"
#include "runner/lm/generate.h"
#include "runner/lm/model_spec.h"

#ifndef LM_ORACLE_DIR
#error "LM_ORACLE_DIR must name the directory hf_oracle.py writes"
#endif

namespace pg::lm {
namespace {

class HfOracle : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    expected = read_safetensors_header(std::string(LM_ORACLE_DIR) + "/expected.safetensors");
    path = std::string(LM_ORACLE_DIR) + "/" + GetParam() + "/model.safetensors";
  }
  SafetensorsFile expected;
  std::string path;
};

TEST_P(HfOracle, ShapeIsInferredFromTheCheckpoint) {
  const auto cfg = resolve_model("file:" + path);
  EXPECT_EQ(cfg.n_layer, 2);
  EXPECT_EQ(cfg.n_head, 4);  // from config.json: d_model / 64 would say 1
  EXPECT_EQ(cfg.d_model, 64);
  EXPECT_EQ(cfg.vocab, 1000);
  EXPECT_EQ(cfg.context, 128);
}

TEST_P(HfOracle, LogitsMatchTransformers) {
  c10::InferenceMode guard;
  auto m = load_gpt2_checkpoint(path, at::kFloat, at::kCPU);
  const auto tokens = read_tensor(expected, "tokens");
  const auto want = read_tensor(expected, "logits");
  for (auto attention : {AttentionKind::math, AttentionKind::sdpa}) {
    auto got = forward(m, tokens, 0, nullptr, attention, false);
    ASSERT_EQ(got.sizes(), want.sizes());
    EXPECT_TRUE(at::allclose(got, want, 0, 1e-4)) << (got - want).abs().max();
  }
}

TEST_P(HfOracle, GreedyDecodeWithCacheMatchesTransformersGenerate) {
  c10::InferenceMode guard;
  auto m = load_gpt2_checkpoint(path, at::kFloat, at::kCPU);
  const auto want = read_tensor(expected, "greedy");
  const auto prompt = read_tensor(expected, "tokens").narrow(1, 0, 5);
  const int gen = static_cast<int>(want.size(1));
  KVCache cache(m.cfg.n_layer, 2, m.cfg.n_head, 5 + gen, m.cfg.head_dim(), m.options());
  for (auto* c : {&cache, static_cast<KVCache*>(nullptr)}) {
    auto got = generate(m, prompt, {gen, AttentionKind::sdpa, c, nullptr, true});
    EXPECT_TRUE(at::equal(got, want)) << got << "\n" << want;
  }
}

INSTANTIATE_TEST_SUITE_P(SavedLayouts, HfOracle, ::testing::Values("lm_head_model", "base_model"));

}  // namespace
}  // namespace pg::lm
