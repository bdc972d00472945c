// Runs <-> JSON in the export shape of docs/FORMATS.md (also what POST /api/v1/runs accepts).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/run.h"

namespace pg::store {

// One run in the export shape. Strings that are not valid UTF-8 (a latin-1 commit subject) are
// repaired with U+FFFD, so dumping the result never throws. Without samples, cells carry no
// "samples" member.
nlohmann::json run_to_json(const Run& run, bool with_samples);
// {"runs": [...]}, dumped compactly.
std::string runs_to_json(const std::vector<Run>& runs, bool with_samples);

// Parses and validates an export document ({"runs": [...]}, or a single run object). Throws
// UsageError "<source_name>: <json pointer>: <what is wrong>" for malformed JSON, wrong types,
// missing fields, unknown status values, non-finite numbers, a commit that is not 40 hex digits,
// or samples inconsistent with the key's gen_tokens or with each other. Ids in the document are
// ignored (the store assigns its own).
std::vector<Run> runs_from_json(const std::string& text, const std::string& source_name);

}  // namespace pg::store
