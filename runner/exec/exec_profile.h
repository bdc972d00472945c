// The `profile` line of protocol 2 (docs/PROTOCOL.md, "The profile line"): the benchmark's own
// profile of one untimed prefill + decode sequence, in the fields of perfgate's built-in profile
// (core/profile.h), so that the store, the export and compare's explanations take it unchanged.
// Validated strictly and bounded: its names come from the measured code.
#pragma once
#include <cstddef>
#include <nlohmann/json_fwd.hpp>

#include "core/profile.h"

namespace pg::exec {

inline constexpr size_t kMaxProfileRowsPerStep = 4096;  // by_name rows in one step
inline constexpr size_t kMaxProfileNameBytes = 1024;    // an op's or kernel's name, UTF-8
inline constexpr size_t kMaxProfilerNameBytes = 64;     // `profiler`
inline constexpr size_t kMaxProfileNoteChars = 400;     // `note`, stored inert

// `j` is the whole line (its `type` is "profile"); `line` numbers it for the ProtocolError;
// `gen_tokens` fixes the steps: none, or the prefill (-1) and the gen_tokens - 1 decode steps.
CellProfile read_profile_line(const nlohmann::json& j, int line, int gen_tokens);

}  // namespace pg::exec
