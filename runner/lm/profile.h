// The profile of a cell (core/profile.h): one extra prefill + decode sequence, after the timed
// repetitions, under LibTorch's Kineto profiler (ATen ops on the host; CUDA kernels, copies and
// synchronisations through CUPTI), each step in its own profiler session so that every event
// belongs to exactly one step. Never used for a timed repetition.
#pragma once
#include <ATen/ATen.h>

#include <functional>

#include "core/profile.h"
#include "runner/lm/timing.h"

namespace pg::lm {

// Runs `sequence` once with a clock whose marks (before the prefill, after it and after each
// decode step, as the timed repetitions mark them) cut the profiler's sessions. `marks`: the
// number of marks the sequence makes (gen_tokens + 1). Where the profiler cannot start, the
// profile says why in its note and keeps the steps' wall times.
CellProfile profile_sequence(const at::Device& device, size_t marks,
                             const std::function<void(StepClock&)>& sequence);

}  // namespace pg::lm
