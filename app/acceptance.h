// Accepted slowdowns as a use case (docs/CLI.md "perfgate accept", docs/STATISTICS.md "Accepted
// slowdowns"): accepting a stored gate's regressions for its ref, the acceptances in force for a
// later gate of that ref, and their JSON (GET /api/v1/acceptances, and what a gate reads back).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gate/gate.h"
#include "store/store.h"

namespace pg::app {

// Accepts every regressed cell of stored gate `gate_id` at the ratio that gate measured, for the
// gate's ref. UsageError naming the gate when there is none, it has no ref, or it found no
// regression.
store::Store::Acceptance accept_gate(store::Store& store, int64_t gate_id,
                                     const std::string& reason, const std::string& author,
                                     const std::string& via);

// For a gate of `ref`: per cell and metric, the newest acceptance not revoked, its ratio put into
// `options.accepted_ratio`. Returns the acceptances that gave a ratio.
std::vector<store::Store::Acceptance> apply_acceptances(
    const std::vector<store::Store::Acceptance>& all, const std::string& ref,
    gate::GateOptions& options);

// The notes a report shows for the acceptances a gate used: who accepted which cells, when and why
// (only those whose cells the result tested against an accepted ratio).
std::vector<std::string> acceptance_notes(const std::vector<store::Store::Acceptance>& used,
                                          const gate::GateResult& result);

nlohmann::json acceptance_json(const store::Store::Acceptance& a);
nlohmann::json acceptances_json(const std::vector<store::Store::Acceptance>& all);
// The inverse of acceptances_json (a server's reply), strict: UsageError naming `source` and the
// JSON path of what is malformed.
std::vector<store::Store::Acceptance> acceptances_from_json(const std::string& text,
                                                            const std::string& source);

}  // namespace pg::app
