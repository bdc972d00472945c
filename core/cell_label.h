// How a cell is named to people, the same in the run's progress and warnings, the gate's reports,
// `perfgate changes` and the dashboard: "gpt2 bf16 B=4 P=256 gen=32 kv=on sdpa graphs=off cuda".
// Built from core/cell_key.h's field table: every field appears, in the key's order, so two labels
// are equal exactly when the keys are.
#pragma once
#include <string>

#include "core/cell_key.h"

namespace pg {

// with_model = false leaves out the fields marked !in_short_label (the model), for views that
// show it beside the label: "bf16 B=4 P=256 gen=32 kv=on sdpa graphs=off cuda".
std::string cell_label(const CellKey& key, bool with_model = true);

}  // namespace pg
