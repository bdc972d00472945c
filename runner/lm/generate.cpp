#include "runner/lm/generate.h"

#include "common/errors.h"

namespace pg::lm {
namespace {

at::Tensor argmax_last(const at::Tensor& logits) { return logits.argmax(-1); }  // [B, 1]

}  // namespace

at::Tensor generate(const Model& m, const at::Tensor& prompt, const GenerateOptions& opt) {
  const int64_t B = prompt.size(0), P = prompt.size(1), G = opt.gen_tokens;
  auto* step = opt.static_step;
  KVCache* cache = step ? &step->cache() : opt.cache;
  if (step && (step->token().size(0) != B || P + G - 1 > cache->max_len()))
    throw RuntimeFailure("the static decode step's buffers do not fit this prompt");
  at::Tensor seq;  // without a cache: the whole sequence so far, re-read every step
  if (!cache) {
    seq = at::empty({B, P + G}, prompt.options());
    seq.narrow(1, 0, P).copy_(prompt);
  }
  at::Tensor out = opt.keep_tokens ? at::empty({B, G}, prompt.options()) : at::Tensor();
  auto mark = [&] {
    if (opt.clock) opt.clock->mark();
  };

  mark();
  auto next = argmax_last(forward(m, prompt, 0, cache, opt.attention, true));
  mark();
  for (int64_t i = 1; i < G; ++i) {
    if (opt.keep_tokens) out.narrow(1, i - 1, 1).copy_(next);
    const int64_t pos = P + i - 1;  // position of the token fed in
    if (step) {
      step->token().copy_(next);  // device to device; next may be out() itself
      step->set_position(pos);
      opt.run_step ? opt.run_step() : step->run();
      next = step->out();
    } else if (cache) {
      next = argmax_last(forward(m, next, pos, cache, opt.attention, true));
    } else {
      seq.narrow(1, pos, 1).copy_(next);
      next = argmax_last(forward(m, seq.narrow(1, 0, pos + 1), 0, nullptr, opt.attention, true));
    }
    if (opt.mark_each_step || i == G - 1) mark();
  }
  if (opt.keep_tokens) out.narrow(1, G - 1, 1).copy_(next);
  return out;
}

}  // namespace pg::lm
