// The environment fingerprint as a JSON object ({"device": "...", ...}), as the export, the
// compare JSON and the API carry it (docs/FORMATS.md). Text is repaired to valid UTF-8.
#pragma once
#include <nlohmann/json.hpp>

#include "core/run.h"

namespace pg {

nlohmann::json environment_to_json(const Environment& env);

}  // namespace pg
