// JSON for the domain types the web layer shows on its own (series keys, environments), in the same
// shape as the export document (docs/FORMATS.md).
#pragma once
#include <nlohmann/json.hpp>

#include "store/types.h"

namespace pg::web {

nlohmann::json key_json(const CellKey& k);
nlohmann::json env_json(const Environment& env);
// The cell label (store/cell_label.h) without the model, which the pages show beside it.
std::string key_label(const CellKey& k);

}  // namespace pg::web
