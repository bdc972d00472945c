// Why a cell changed, from the profiles of both sides (app/explain.h computes it; the reports
// render it: gate/report_explain.h). Plain structs. docs/FORMATS.md, "The explain object".
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/cell_key.h"
#include "core/profile.h"

namespace pg {

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

struct PhaseExplanation {
  std::string phase;                // "decode step" | "prefill"
  double base_ms = 0, head_ms = 0;  // profiled time per step, all rows of `kind`
  std::vector<OpDelta> grew;        // time per step grew most, largest first
  std::vector<OpDelta> appeared, disappeared;
  std::vector<CounterChange> counters;
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

}  // namespace pg
