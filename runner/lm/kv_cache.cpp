#include "runner/lm/kv_cache.h"

#include "common/errors.h"

namespace pg::lm {

KVCache::KVCache(int64_t n_layer, int64_t batch, int64_t n_head, int64_t max_len, int64_t head_dim,
                 const at::TensorOptions& options)
    : buffer_(at::zeros({n_layer, 2, batch, n_head, max_len, head_dim}, options)),
      max_len_(max_len) {
  for (int64_t l = 0; l < n_layer; ++l) {
    kv_.push_back(buffer_[l]);
    k_.push_back(buffer_[l][0]);
    v_.push_back(buffer_[l][1]);
  }
}

std::pair<at::Tensor, at::Tensor> KVCache::update(int64_t layer, int64_t pos,
                                                  const at::Tensor& kv) {
  const int64_t T = kv.size(3);
  if (pos + T > max_len_)
    throw RuntimeFailure("KV cache overflow: position " + std::to_string(pos + T) +
                         " past its length " + std::to_string(max_len_));
  kv_[layer].narrow(3, pos, T).copy_(kv);
  return {k_[layer].narrow(2, 0, pos + T), v_[layer].narrow(2, 0, pos + T)};
}

std::pair<at::Tensor, at::Tensor> KVCache::update_at(int64_t layer, const at::Tensor& pos,
                                                     const at::Tensor& kv) {
  kv_[layer].index_copy_(3, pos, kv);
  return {k_[layer], v_[layer]};
}

}  // namespace pg::lm
