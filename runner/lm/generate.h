// Greedy generation, the unit of work one repetition times.
#pragma once
#include <ATen/ATen.h>

#include "runner/lm/model.h"
#include "runner/lm/timing.h"

namespace pg::lm {

struct GenerateOptions {
  int gen_tokens = 32;
  AttentionKind attention = AttentionKind::sdpa;
  KVCache* cache = nullptr;    // null: every decode step recomputes the whole prefix
  StepClock* clock = nullptr;  // marks before the prefill, after it and after each decode step
  bool keep_tokens = false;    // return the generated tokens [B, gen_tokens]
};

// Prefill over prompt [B, P] (argmax of the first token), then gen_tokens - 1 decode steps of
// one token each, all argmax on the device. Nothing here waits for the device.
at::Tensor generate(const Model& m, const at::Tensor& prompt, const GenerateOptions& opt);

}  // namespace pg::lm
