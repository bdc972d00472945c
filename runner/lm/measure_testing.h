// Test hooks into lm::LibTorchMeasurer::measure, so that the oom / invalid / error paths can be
// exercised on a CPU. Process-wide; production code never sets them.
#pragma once
#include <functional>

#include "core/run.h"

namespace pg::lm::testing {

struct Hooks {
  std::function<void(int rep)> before_rep;          // may throw, e.g. c10::OutOfMemoryError
  std::function<void(CellSamples&)> after_samples;  // may rewrite the samples before checks
};

void set_hooks(Hooks hooks);  // Hooks{} removes them

}  // namespace pg::lm::testing
