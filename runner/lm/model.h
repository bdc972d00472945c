// The decoder-only Transformer, written as plain tensors and one forward function (gpt-fast's
// model.py, in ATen). Both families share the block; `Family` picks the norm, the MLP and the
// positions.
#pragma once
#include <ATen/ATen.h>

#include <vector>

#include "runner/lm/attention.h"
#include "runner/lm/kv_cache.h"
#include "runner/lm/presets.h"

namespace pg::lm {

// Linear weights are stored as at::linear wants them, [out, in]. Biases and the norms' biases
// are undefined in the cs336 family. q, k and v share one matmul (qkv_w: [3D, D]); SwiGLU's w1
// and w3 likewise (fc_w: [2 d_ff, D], w1 first), so the two families run the same kernels.
struct LayerWeights {
  at::Tensor ln1_w, ln1_b, qkv_w, qkv_b, proj_w, proj_b;
  at::Tensor ln2_w, ln2_b, fc_w, fc_b, fc2_w, fc2_b;
};

struct Model {
  ModelConfig cfg;
  at::Tensor wte, wpe, lnf_w, lnf_b;
  at::Tensor lm_head;             // undefined when tied to wte
  at::Tensor rope_cos, rope_sin;  // [context, Dh / 2] (cs336)
  std::vector<LayerWeights> layers;

  const at::Tensor& head() const { return lm_head.defined() ? lm_head : wte; }
  at::TensorOptions options() const { return wte.options(); }
};

// Random weights from `seed` (normal, std 0.02; norms at one, biases at zero), made on `device`
// in fp32 and cast to `dtype` one tensor at a time.
Model random_model(const ModelConfig& cfg, at::ScalarType dtype, const at::Device& device,
                   int64_t seed);

// RoPE tables for the cs336 family (a no-op for gpt2); call after the weights are in place.
void init_rope(Model& m);

// Rotates adjacent pairs (x[2i], x[2i+1]) by position * theta^(-2i / Dh), as the CS336
// assignment's RoPE does. x: [B, H, T, Dh]; cos, sin: the model's tables at the T positions.
at::Tensor apply_rope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

// Logits for tokens [B, T] at absolute positions [pos, pos + T). With a cache, the new keys and
// values are written into it and attention reads the filled prefix; without one, pos must be 0
// and the whole sequence is computed. last_only keeps only the last position: [B, 1, V].
at::Tensor forward(const Model& m, const at::Tensor& tokens, int64_t pos, KVCache* cache,
                   AttentionKind attention, bool last_only);

// One decode step with fixed shapes, the graph-friendly form: token [B, 1] at the position held
// on the device (pos: long [1]); k and v are written into the cache at pos with index_copy_ and
// attention reads the cache through `window` (set for pos beforehand). Nothing here depends on
// pos on the host, waits for the device or changes shape: a CUDA graph can capture it. Returns
// the logits [B, 1, V].
at::Tensor forward_static_step(const Model& m, const at::Tensor& token, const at::Tensor& pos,
                               KVCache& cache, const DecodeWindow& window);

}  // namespace pg::lm
