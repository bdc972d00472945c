#include "runner/lm/generate.h"

namespace pg::lm {
namespace {

at::Tensor argmax_last(const at::Tensor& logits) { return logits.argmax(-1); }  // [B, 1]

}  // namespace

at::Tensor generate(const Model& m, const at::Tensor& prompt, const GenerateOptions& opt) {
  const int64_t B = prompt.size(0), P = prompt.size(1), G = opt.gen_tokens;
  at::Tensor seq;  // without a cache: the whole sequence so far, re-read every step
  if (!opt.cache) {
    seq = at::empty({B, P + G}, prompt.options());
    seq.narrow(1, 0, P).copy_(prompt);
  }
  at::Tensor out = opt.keep_tokens ? at::empty({B, G}, prompt.options()) : at::Tensor();
  auto mark = [&] {
    if (opt.clock) opt.clock->mark();
  };

  mark();
  auto next = argmax_last(forward(m, prompt, 0, opt.cache, opt.attention, true));
  mark();
  for (int64_t i = 1; i < G; ++i) {
    if (opt.keep_tokens) out.narrow(1, i - 1, 1).copy_(next);
    const int64_t pos = P + i - 1;  // position of the token fed in
    at::Tensor logits;
    if (opt.cache) {
      logits = forward(m, next, pos, opt.cache, opt.attention, true);
    } else {
      seq.narrow(1, pos, 1).copy_(next);
      logits = forward(m, seq.narrow(1, 0, pos + 1), 0, nullptr, opt.attention, true);
    }
    next = argmax_last(logits);
    mark();
  }
  if (opt.keep_tokens) out.narrow(1, G - 1, 1).copy_(next);
  return out;
}

}  // namespace pg::lm
