// The compare JSON of docs/FORMATS.md, shared by `perfgate compare --format json` and
// web/'s GET /api/v1/compare so the two can never drift apart.
#pragma once
#include <nlohmann/json.hpp>

#include "core/run.h"
#include "gate/gate.h"

namespace pg::gate {

// Its keys (base, head, verdict, alpha, min_effect, correction, cells[...]) with null where a
// number is absent, plus extras: per cell base_n, head_n, base_runs, head_runs, note; at the top
// warnings, base_runs, head_runs, counts per verdict, and env {base, head}.
nlohmann::json gate_to_json(const GateResult& result);

}  // namespace pg::gate
