// Helpers shared by the lm_* suites: a temporary directory and GPT-2 checkpoints in memory.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>

#include "runner/lm/gpt2_checkpoint.h"
#include "runner/lm/safetensors.h"
#include "tests/common/temp_dir.h"

namespace pg::lm::test {

using TempDir = pg::testing::TempDir;

inline SafetensorsBlob random_f32(const std::vector<int64_t>& shape, std::mt19937& rng) {
  size_t n = 1;
  for (auto d : shape) n *= static_cast<size_t>(d);
  std::normal_distribution<float> dist(0.f, 0.1f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  SafetensorsBlob b{"F32", shape, std::string(n * sizeof(float), '\0')};
  std::memcpy(b.data.data(), v.data(), b.data.size());
  return b;
}

// Every tensor of a GPT-2 checkpoint of this shape, Hugging Face names, random F32 data.
inline std::map<std::string, SafetensorsBlob> gpt2_blobs(const ModelConfig& cfg,
                                                         const std::string& prefix = "") {
  std::mt19937 rng(7);
  std::map<std::string, SafetensorsBlob> t;
  for (const auto& [name, shape] : gpt2_expected_tensors(cfg))
    t[prefix + name] = random_f32(shape, rng);
  return t;
}

// 2 layers, 4 heads, d 64, vocab 100, context 32.
inline ModelConfig small_gpt2() { return {"small", Family::gpt2, 2, 4, 64, 256, 100, 32}; }

}  // namespace pg::lm::test
