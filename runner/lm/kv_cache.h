// A static KV cache: one preallocated [B, H, max_len, Dh] buffer per layer for keys and values,
// written in place at the token's position, so that a decode step never allocates or reshapes
// (what a captured CUDA graph will need). Keys and values of a layer sit side by side
// ([2, B, H, max_len, Dh]) so that one copy writes both.
#pragma once
#include <ATen/ATen.h>

#include <utility>
#include <vector>

namespace pg::lm {

class KVCache {
 public:
  KVCache(int64_t n_layer, int64_t batch, int64_t n_head, int64_t max_len, int64_t head_dim,
          const at::TensorOptions& options);

  // Writes kv [2, B, H, T, Dh] (keys, then values) at positions [pos, pos + T) of `layer` and
  // returns views of the filled prefix [0, pos + T) of the keys and the values, which attention
  // reads.
  std::pair<at::Tensor, at::Tensor> update(int64_t layer, int64_t pos, const at::Tensor& kv);
  // Writes kv [2, B, H, 1, Dh] at the position held on the device (pos: long [1]) with one
  // index_copy_, and returns the whole per-layer buffers [B, H, max_len, Dh]: no host-side use
  // of the position, so that a CUDA graph can capture it. Positions past pos hold stale values;
  // attention must not read them (DecodeWindow).
  std::pair<at::Tensor, at::Tensor> update_at(int64_t layer, const at::Tensor& pos,
                                              const at::Tensor& kv);
  int64_t max_len() const { return max_len_; }
  const at::Tensor& buffer() const { return buffer_; }  // tests write garbage past the prefix

 private:
  at::Tensor buffer_;                   // [n_layer, 2, B, H, max_len, Dh], one allocation
  std::vector<at::Tensor> kv_, k_, v_;  // per-layer views into buffer_
  int64_t max_len_;
};

}  // namespace pg::lm
