// Greedy generation, the unit of work one repetition times.
#pragma once
#include <ATen/ATen.h>

#include <functional>

#include "runner/lm/model.h"
#include "runner/lm/static_decode.h"
#include "runner/lm/timing.h"

namespace pg::lm {

struct GenerateOptions {
  int gen_tokens = 32;
  AttentionKind attention = AttentionKind::sdpa;
  KVCache* cache = nullptr;    // null: every decode step recomputes the whole prefix
  StepClock* clock = nullptr;  // marks before the prefill, after it and after each decode step
  bool keep_tokens = false;    // return the generated tokens [B, gen_tokens]
  // Set: decode through the static step (its cache replaces `cache`; the prefill fills it
  // eagerly); each step copies the token into its buffer on the device, sets the position and
  // calls run_step, or the step's own run() when run_step is empty (a graph replay on CUDA).
  StaticDecodeStep* static_step = nullptr;
  std::function<void()> run_step = nullptr;
  // false: mark only before the prefill, after it and after the last step (loop timing).
  bool mark_each_step = true;
};

// Prefill over prompt [B, P] (argmax of the first token), then gen_tokens - 1 decode steps of
// one token each, all argmax on the device. Nothing here waits for the device.
at::Tensor generate(const Model& m, const at::Tensor& prompt, const GenerateOptions& opt);

}  // namespace pg::lm
