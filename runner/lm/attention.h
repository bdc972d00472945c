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

// What a decode step over the static cache [B, H, max_len, Dh] may read: the positions up to
// the step's own, `pos` (long [1], on the device). set() recomputes it on the device once per
// step, so that a CUDA graph can capture the step. Two forms:
//  - masked (the default): SDPA or math attention over the whole cache under an additive
//    [1, 1, 1, max_len] mask (0 = attend, -inf = not yet written), built once per step rather
//    than per layer. Additive rather than boolean because SDPA turns a boolean mask into this
//    form inside every call, one extra kernel per layer.
//  - length-aware (PERFGATE_DECODE_ATTENTION=flash, where flash applies: CUDA, bf16/fp16, sdpa,
//    head_dim a multiple of 8 up to 256): flash attention's variable-length kernel, told each
//    sequence's key count (pos + 1), reads the filled prefix and nothing else, with no mask.
//    Measured 1.15-1.26x slower per step than the masked form on the H200 (docs/PERFORMANCE.md),
//    so it is the benchmark's contrast, not the default.
class DecodeWindow {
 public:
  DecodeWindow(int64_t batch, int64_t n_head, int64_t max_len, int64_t head_dim,
               const at::TensorOptions& activations, AttentionKind kind);
  void set(const at::Tensor& pos);
  // q [B, H, 1, Dh]; k, v: one layer's whole cache [B, H, max_len, Dh]. Returns [B, H, 1, Dh].
  at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) const;
  bool length_aware() const { return length_aware_; }
  const at::Tensor& mask() const { return mask_; }  // the masked form's mask, after set()

 private:
  AttentionKind kind_;
  bool length_aware_;
  int64_t max_len_;
  at::Tensor positions_, mask_;                         // masked form
  at::Tensor cu_seqlens_q_, cu_seqlens_k_, seqused_k_;  // length-aware form (int32)
};

// PERFGATE_DECODE_ATTENTION: false when unset or "masked", true for "flash"; throws UsageError
// on anything else.
bool decode_flash_chosen();

// mask: undefined, additive (0 / -inf in the activations' dtype), or boolean (true = attend);
// math attention sets the scores outside a boolean mask to -inf.
at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                  const at::Tensor& mask, AttentionKind kind);

}  // namespace pg::lm
