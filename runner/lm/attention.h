// Causal self-attention over [B, H, T, Dh] queries and [B, H, S, Dh] keys/values, where the
// queries are the last T of the S positions (S == T for a prompt, T == 1 for a decode step).
#pragma once
#include <ATen/ATen.h>

#include <string>

namespace pg::lm {

enum class AttentionKind { math, sdpa };

AttentionKind parse_attention(const std::string& name);  // throws UsageError
bool sdpa_available();                                   // LibTorch 2.x

// The additive mask (0 or -inf, in the activations' dtype) a T x S attention needs, or an
// undefined tensor when none is needed: one query over the whole prefix, or (for sdpa) the
// plain causal square, which its is_causal flag covers without materialising a mask.
at::Tensor causal_mask(int64_t T, int64_t S, AttentionKind kind, const at::TensorOptions& opts);

// Which of the static cache's positions a decode step at `pos` (long [1], on the device) may
// read: positions <= pos, as an additive [1, 1, 1, max_len] mask of `dtype` (0 = attend,
// -inf = not yet written), computed on the device once per step. Additive rather than boolean
// because SDPA turns a boolean mask into this form inside every call, one extra kernel per layer.
// `positions` is arange(max_len) on the device.
at::Tensor decode_validity_mask(const at::Tensor& positions, const at::Tensor& pos,
                                at::ScalarType dtype);

// mask: undefined, additive (0 / -inf in the activations' dtype), or boolean (true = attend);
// math attention sets the scores outside a boolean mask to -inf.
at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                  const at::Tensor& mask, AttentionKind kind);

}  // namespace pg::lm
