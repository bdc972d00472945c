// The explanation of each compared cell (gate/explanation.h): which ops or kernels grew, appeared
// or disappeared, and which exact counters changed between the base's and the head's stored
// profiles. Counters need no statistics, so they are reported whatever the timing verdict.
#pragma once
#include <vector>

#include "core/run.h"
#include "gate/explanation.h"
#include "gate/gate.h"

namespace pg::app {

// One explanation per compared cell of `result` with a baseline, in its order.
std::vector<gate::CellExplanation> explain(const gate::GateResult& result,
                                           const std::vector<Run>& base_runs,
                                           const std::vector<Run>& head_runs);

// How many rows the reports list per phase (time growth, names of a counter change).
inline constexpr size_t kExplainTopRows = 5;

}  // namespace pg::app
