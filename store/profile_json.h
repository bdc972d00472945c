// A cell's profile <-> the export JSON's `profile` object (docs/FORMATS.md, "The profile").
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "core/profile.h"

namespace pg::store {

nlohmann::json profile_to_json(const CellProfile& profile);

// Throws UsageError "<where>/<pointer>: <what is wrong>" (where: the document and the cell's
// pointer, e.g. "request body: /runs/0/cells/3/profile").
CellProfile profile_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace pg::store
