// Why a cell changed, from the profiles of both sides (app/explain.h computes it; the reports
// render it: gate/report_explain.h). Plain structs. docs/FORMATS.md, "The explain object".
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/cell_key.h"
#include "core/profile.h"

namespace pg::gate {

// One op or kernel name, per step of one phase, averaged over each side's profiles.
struct OpDelta {
  std::string name;  // from the model's code: rendered inert
  double base_count = 0, head_count = 0;
  double base_ms = 0, head_ms = 0;  // profiled time per step
  std::optional<double> share;      // (head_ms - base_ms) / the tpot change (decode only)
  double delta_ms() const { return head_ms - base_ms; }
};

// An exact counter of the phase's steps (ops, kernels, syncs, d2h_copies, alloc_bytes,
// peak_bytes) that differs between the sides; for ops and kernels, the names whose count moved.
struct CounterChange {
  std::string counter;
  double base = 0, head = 0;
  std::vector<OpDelta> by_name;  // largest count change first
};

// The phase's steps on their device's timeline (core/profile.h, span_ms and busy_ms), per step,
// where every profiled step of both sides has them. With the rows' time it splits the span:
// span = rows - overlap + gaps, where gaps (span - busy) is the time between kernels and overlap
// (rows - busy) the time two rows ran at once, counted in both (0 on one stream or thread).
struct StepTimeline {
  double base_span_ms = 0, head_span_ms = 0;
  double base_busy_ms = 0, head_busy_ms = 0;
  double base_gap_ms() const { return base_span_ms - base_busy_ms; }
  double head_gap_ms() const { return head_span_ms - head_busy_ms; }
  double gap_delta_ms() const { return head_gap_ms() - base_gap_ms(); }
  double span_delta_ms() const { return head_span_ms - base_span_ms; }
};

// The decode step's time between kernels (or host ops) in the timed runs: each side's tpot (the
// median of its timed repetitions) less its profiled kernel time (busy on the device's timeline,
// or the rows' sum without one). The profiler's own cost stretches the gaps of the profiled
// sequence (0.15 ms of a 1.75 ms step become 0.6 ms on an H200) but not the kernels' durations,
// so the gaps come from the timed runs and the kernels from the profile. Their change splits
// into the launch gaps of the kernels the head added or removed, at the base's mean gap per
// kernel (a prediction from the counts, not a fit to the change), and the rest.
struct TimedGaps {
  double base_tpot_ms = 0, head_tpot_ms = 0;
  double base_kernel_ms = 0, head_kernel_ms = 0;  // per step, overlap removed where known
  double base_launches = 0, head_launches = 0;    // kernels (or ops) per step
  double base_gap_ms() const { return base_tpot_ms - base_kernel_ms; }
  double head_gap_ms() const { return head_tpot_ms - head_kernel_ms; }
  double gap_delta_ms() const { return head_gap_ms() - base_gap_ms(); }
  double kernel_delta_ms() const { return head_kernel_ms - base_kernel_ms; }
  double per_launch_ms() const { return base_launches > 0 ? base_gap_ms() / base_launches : 0; }
  double launch_delta() const { return head_launches - base_launches; }
  double launch_gaps_delta_ms() const { return per_launch_ms() * launch_delta(); }
  double rest_ms() const { return gap_delta_ms() - launch_gaps_delta_ms(); }
  // What the profile and the counts account for: the kernels' time and the added launch gaps.
  double listed_delta_ms() const { return kernel_delta_ms() + launch_gaps_delta_ms(); }
};

struct PhaseExplanation {
  std::string phase;                // "decode step" | "prefill"
  double base_ms = 0, head_ms = 0;  // profiled time per step, all rows of `kind`
  std::vector<OpDelta> grew;        // time per step grew most, largest first
  int other_rows = 0;               // names of `kind` not in `grew`
  double other_delta_ms = 0;        // their time's change per step: the rows' change less grew's
  std::vector<OpDelta> appeared, disappeared;
  std::vector<CounterChange> counters;
  std::optional<StepTimeline> timeline;
  std::optional<TimedGaps> timed;  // decode only, where both sides have timed medians
  double rows_delta_ms() const { return head_ms - base_ms; }
  // The rows' time that overlapped (rows - busy), head less base; only with a timeline.
  double overlap_delta_ms() const {
    return timeline ? (head_ms - timeline->head_busy_ms) - (base_ms - timeline->base_busy_ms) : 0;
  }
};

struct CellExplanation {
  CellKey key;
  bool regressed = false;  // the timing verdict was regression
  std::string missing;     // why there is no explanation (no profile on a side), else empty
  ProfileOpKind kind = ProfileOpKind::op;  // rows compared: kernels where both sides have them
  int base_profiles = 0, head_profiles = 0;
  std::optional<double> tpot_change_ms;  // head median - base median
  PhaseExplanation decode, prefill;
  bool counters_changed() const { return !decode.counters.empty() || !prefill.counters.empty(); }
};

}  // namespace pg::gate
