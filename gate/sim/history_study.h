// The study of a run variance from trusted history (`perfgate-sim --history-study`,
// docs/STATISTICS.md "Run variance from trusted history"): A/A false alarms with exact intervals,
// detection of small slowdowns of every cell and of one, and the gate's minimum detectable effect,
// by runs per side, commits of history and how much noisier today is than the history, through
// the real evaluate_gate.
#pragma once
#include <cstdint>

#include "gate/gate.h"

namespace pg::sim {

// H200-like noise (0.1% a repetition, 0.1% a run, 0.05% a cell's run), 10 repetitions a run.
// `opt.min_effect` is the min effect of the detection columns; the A/A validity column uses 0.
void print_history_study(const gate::GateOptions& opt, int gates, uint64_t seed);

}  // namespace pg::sim
