// Timestamps at the boundaries of one repetition: before the prefill, after it, and after each
// decode step. On CUDA they are events recorded on the stream that runs the work, read after a
// single synchronisation at the end of the repetition; on CPU a steady clock.
#pragma once
#include <ATen/ATen.h>

#include <memory>
#include <vector>

namespace pg::lm {

class StepClock {
 public:
  virtual ~StepClock() = default;
  virtual void mark() = 0;
  // Waits for the device once, returns the intervals between consecutive marks (ms) and
  // forgets the marks.
  virtual std::vector<double> intervals_ms() = 0;
};

// PERFGATE_TIMING: "step" (the default) marks every decode step; "loop" marks only around the
// whole decode loop, to measure what per-step events cost (the harness overhead). A loop
// cell reports decode_ms as G - 1 equal entries of total / (G - 1). Anything else: UsageError.
enum class TimingMode { step, loop };
TimingMode timing_mode();
const char* timing_mode_name(TimingMode mode);

// max_marks: marks per repetition (gen_tokens + 1), preallocated so marking never allocates.
std::unique_ptr<StepClock> make_step_clock(const at::Device& device, size_t max_marks);

}  // namespace pg::lm
