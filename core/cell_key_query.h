// A cell key as URL query parameters, named by its JSON keys (core/cell_key.h's field table):
// how a link outside the dashboard names a cell's trend (`/series?model=...&dtype=...`,
// docs/WEB.md). Series ids are numbered by each store, so a report written from one store (the
// action's job database) names the cell by its key, and the dashboard finds its own series.
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "core/cell_key.h"

namespace pg {

// "model=gpt2&dtype=bf16&batch_size=1&...": every field in table order, values percent-encoded,
// flags as true / false.
std::string cell_key_query(const CellKey& key);

// The inverse: `param(json_key)` gives a parameter's value, or nullopt when it is absent. Every
// field is required. Throws SettingError naming the field for a missing or malformed value.
CellKey cell_key_from_query(
    const std::function<std::optional<std::string>(const std::string&)>& param);

}  // namespace pg
