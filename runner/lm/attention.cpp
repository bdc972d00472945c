#include "runner/lm/attention.h"

#include <torch/version.h>

#include <cmath>

#include "common/errors.h"

namespace pg::lm {

AttentionKind parse_attention(const std::string& name) {
  if (name == "math") return AttentionKind::math;
  if (name == "sdpa") return AttentionKind::sdpa;
  throw UsageError("--attention: unknown value '" + name + "' (expected sdpa or math)");
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

at::Tensor decode_validity_mask(const at::Tensor& positions, const at::Tensor& pos,
                                at::ScalarType dtype) {
  return at::zeros({1, 1, 1, positions.size(0)}, positions.options().dtype(dtype))
      .masked_fill_(positions.gt(pos).view({1, 1, 1, -1}), -INFINITY);
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
    throw UsageError("--attention sdpa needs LibTorch 2.x");
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

}  // namespace pg::lm
