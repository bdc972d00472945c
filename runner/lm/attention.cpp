#include "runner/lm/attention.h"

#include <torch/version.h>

#include <cmath>
#include <cstdlib>

#include "common/errors.h"
#include "runner/lm/cuda_support.h"

namespace pg::lm {

AttentionKind parse_attention(const std::string& name) {
  if (name == "math") return AttentionKind::math;
  if (name == "sdpa") return AttentionKind::sdpa;
  throw SettingError(SettingError::setting("attention") + ": unknown value '" + name +
                     "' (expected sdpa or math)");
}

bool sdpa_available() {
#if TORCH_VERSION_MAJOR >= 2
  return true;
#else
  return false;
#endif
}

at::Tensor causal_mask(int64_t T, int64_t S, AttentionKind kind, const at::TensorOptions& opts) {
  if (T == 1) return {};                                 // a decode step sees every position
  if (T == S && kind == AttentionKind::sdpa) return {};  // sdpa's is_causal covers it
  // Query i sits at absolute position S - T + i and may attend to keys 0..S - T + i.
  return at::full({T, S}, -INFINITY, opts).triu(S - T + 1);
}

at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                  const at::Tensor& mask, AttentionKind kind) {
  const int64_t T = q.size(2), S = k.size(2);
  if (kind == AttentionKind::sdpa) {
#if TORCH_VERSION_MAJOR >= 2
    const bool is_causal = !mask.defined() && T > 1 && T == S;
    return at::scaled_dot_product_attention(
        q, k, v, mask.defined() ? std::optional(mask) : std::nullopt, 0.0, is_causal);
#else
    throw SettingError(SettingError::setting("attention") + " sdpa needs LibTorch 2.x");
#endif
  }
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  auto scores = at::matmul(q * scale, k.transpose(-2, -1));  // [B, H, T, S]
  if (mask.defined() && mask.scalar_type() == at::kBool)
    scores = at::where(mask, scores, -INFINITY);
  else if (mask.defined())
    scores.add_(mask);
  return at::matmul(at::softmax(scores, -1), v);
}

bool decode_flash_chosen() {
  const char* v = std::getenv("PERFGATE_DECODE_ATTENTION");
  if (!v || std::string(v).empty() || std::string(v) == "masked") return false;
  if (std::string(v) == "flash") return true;
  throw UsageError("PERFGATE_DECODE_ATTENTION: unknown value '" + std::string(v) +
                   "' (expected masked or flash)");
}

namespace {

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 6)
constexpr bool kHasFlashVarlen = true;
#else
constexpr bool kHasFlashVarlen = false;
#endif

// Whether the flash kernel can serve a decode step of these activations.
bool flash_decode_supported(const at::TensorOptions& activations, int64_t head_dim,
                            AttentionKind kind) {
  const auto dtype = activations.dtype().toScalarType();
  return kHasFlashVarlen && kind == AttentionKind::sdpa && activations.device().is_cuda() &&
         (dtype == at::kBFloat16 || dtype == at::kHalf) && head_dim % 8 == 0 && head_dim <= 256 &&
         cuda_compute_major(activations.device().index()) >= 8;
}

}  // namespace

DecodeWindow::DecodeWindow(int64_t batch, int64_t n_head, int64_t max_len, int64_t head_dim,
                           const at::TensorOptions& activations, AttentionKind kind)
    : kind_(kind),
      length_aware_(decode_flash_chosen() && flash_decode_supported(activations, head_dim, kind)),
      max_len_(max_len) {
  const auto device = activations.device();
  if (length_aware_) {
    const auto i32 = at::TensorOptions().dtype(at::kInt).device(device);
    cu_seqlens_q_ = at::arange(batch + 1, i32);  // one query per sequence
    // Sequence b's keys start at row b * H * max_len of the cache seen as rows (see attend).
    cu_seqlens_k_ = at::arange(batch + 1, i32).mul_(n_head * max_len);
    seqused_k_ = at::zeros({batch}, i32);
  } else {
    positions_ = at::arange(max_len, at::TensorOptions().dtype(at::kLong).device(device));
    mask_ = at::zeros({1, 1, 1, max_len}, activations);
  }
}

void DecodeWindow::set(const at::Tensor& pos) {
  if (length_aware_) {
    seqused_k_.copy_(pos.add(1).expand_as(seqused_k_));
  } else {
    mask_.zero_().masked_fill_(positions_.gt(pos).view({1, 1, 1, -1}), -INFINITY);
  }
}

at::Tensor DecodeWindow::attend(const at::Tensor& q, const at::Tensor& k,
                                const at::Tensor& v) const {
  if (!length_aware_) return pg::lm::attend(q, k, v, mask_, kind_);
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 6)
  // The varlen kernel reads key j of sequence b, head h at row cu_seqlens_k[b] + j, that is at
  // (cu_seqlens_k[b] + j) * row_stride + h * head_stride. A [B, H, L, Dh] cache gives that with
  // row_stride Dh, head_stride L * Dh and cu_seqlens_k[b] = b * H * L: a view of the cache as
  // rows, without copying it or changing its layout. Its row count is the last row it may
  // touch plus one, so the view stays inside the buffer.
  const int64_t B = q.size(0), H = q.size(1), Dh = q.size(3), L = max_len_;
  auto rows = [&](const at::Tensor& cache) {
    return cache.as_strided({(B - 1) * H * L + L, H, Dh}, {Dh, L * Dh, 1});
  };
  auto out = std::get<0>(at::_flash_attention_forward(
      q.squeeze(2), rows(k), rows(v), cu_seqlens_q_, cu_seqlens_k_, 1, L, 0.0,
      /*is_causal=*/false, /*return_debug_mask=*/false, std::nullopt, std::nullopt, std::nullopt,
      seqused_k_));
  return out.unsqueeze(2);  // [B, H, Dh] -> [B, H, 1, Dh]
#else
  throw RuntimeFailure("length-aware decode attention needs LibTorch 2.6 or later");
#endif
}

}  // namespace pg::lm
