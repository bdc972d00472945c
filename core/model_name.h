// The name a user gives their own model: an --exec model (the series key as is) and an AOTI
// sidecar's `name` (the key is "aoti:" + name). Both come from the user's repository, and the
// sidecar from code the gate measures, so one rule holds them: a name that is safe in a key, a
// log line, a file name and a URL. docs/OWN_MODEL.md and docs/OWN_MODEL_AOTI.md state it.
#pragma once
#include <string_view>

namespace pg {

// How the rule reads in a message: "a model name (1-64 letters, digits, ...)".
inline constexpr std::string_view kModelNameRule =
    "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit";

// 1-64 of [A-Za-z0-9._-], starting with a letter or digit.
bool is_model_name(std::string_view name);

}  // namespace pg
