// A gate result as the store keeps it (Store::GateRecord), made from the compare JSON of
// docs/FORMATS.md. One path for both ways a gate is stored: `perfgate compare --record` /
// `--submit` and POST /api/v1/gates, so a submitted gate and a recorded one hold the same fields.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "store/store.h"

namespace pg::app {

// The keys a stored gate's settings object holds, copied from the compare JSON: alpha, min_effect,
// min_effect_source, correction, power, require_power, look, max_looks, alpha_per_look.
nlohmann::json gate_settings_json(const nlohmann::json& gate);

// Validates `gate` (a compare JSON, optionally with top-level "ref" and "submitted_by" strings)
// and returns the record to store: SHAs lowercased, verdict and its exit code, the settings, the
// document itself (without ref and submitted_by) as the result. `ref` / `submitted_by` given here
// win over the document's. UsageError starting with `context` and naming the key otherwise
// ("request body: 'alpha' must be a number in (0, 1)").
store::Store::GateRecord gate_record_from_json(nlohmann::json gate, const std::string& context,
                                               const std::string& source, std::string ref = "",
                                               std::string submitted_by = "");

// The longest ref and submitted_by a stored gate may carry.
inline constexpr size_t kMaxGateRef = 256, kMaxGateSubmitter = 200;
// Throws UsageError "<name> ..." unless `value` is at most `max` bytes without control characters.
void check_gate_label(const std::string& value, const std::string& name, size_t max);

// The worst regressed cell of a stored result: its head/base ratio - 1 and its label
// ("tiny · b1 s64"); nullopt when no cell regressed.
struct WorstCell {
  double relative = 0.0;
  std::string label;
};
std::optional<WorstCell> worst_regressed_cell(const nlohmann::json& result);

}  // namespace pg::app
