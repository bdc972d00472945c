#include "runner/lm/static_decode.h"

namespace pg::lm {

StaticDecodeStep::StaticDecodeStep(const Model& m, KVCache& cache, AttentionKind attention,
                                   int64_t batch)
    : m_(m), cache_(cache), attention_(attention) {
  const auto longs = at::TensorOptions().dtype(at::kLong).device(m.wte.device());
  token_ = at::zeros({batch, 1}, longs);
  pos_ = at::zeros({1}, longs);
  out_ = at::zeros({batch, 1}, longs);
  positions_ = at::arange(cache.max_len(), longs);
}

void StaticDecodeStep::run() {
  const auto valid = decode_validity_mask(positions_, pos_, m_.wte.scalar_type());  // once per step, on the device
  const auto logits = forward_static_step(m_, token_, pos_, cache_, valid, attention_);
  at::argmax_out(out_, logits, -1);
}

}  // namespace pg::lm
