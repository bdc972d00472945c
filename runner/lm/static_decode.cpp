#include "runner/lm/static_decode.h"

namespace pg::lm {

StaticDecodeStep::StaticDecodeStep(const Model& m, KVCache& cache, AttentionKind attention,
                                   int64_t batch)
    : m_(m),
      cache_(cache),
      window_(batch, m.cfg.n_head, cache.max_len(), m.cfg.head_dim(), m.options(), attention) {
  const auto longs = at::TensorOptions().dtype(at::kLong).device(m.wte.device());
  token_ = at::zeros({batch, 1}, longs);
  pos_ = at::zeros({1}, longs);
  out_ = at::zeros({batch, 1}, longs);
}

void StaticDecodeStep::run() {
  window_.set(pos_);  // once per step, on the device
  const auto logits = forward_static_step(m_, token_, pos_, cache_, window_);
  at::argmax_out(out_, logits, -1);
}

}  // namespace pg::lm
