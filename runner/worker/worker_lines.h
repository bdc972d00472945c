// The lines perfgate's worker prints on stdout (docs/PROTOCOL.md, "Worker mode"): one JSON object
// each, with exactly the keys the protocol's reader accepts. LibTorch-free.
#pragma once
#include <optional>
#include <string>

#include "core/profile.h"
#include "core/run.h"
#include "runner/lm/measure.h"
#include "runner/worker/worker_facts.h"

namespace pg::worker {

// Every function returns one line, newline included.
std::string hello_line(const std::string& torch_version, const std::optional<HelloFacts>& facts);
std::string ready_line();
std::string rep_line(int rep, const lm::RepSample& sample);
// The profile line of protocol 2, fitted to the reader's bounds (fit_profile).
std::string profile_line(const CellProfile& profile);
std::string end_line(std::optional<int64_t> peak_alloc_bytes);
// `status` oom or error.
std::string failure_line(CellStatus status, const std::string& reason);

// What the protocol accepts of a profile (runner/exec/exec_profile.h): names cut to their byte
// limit at a character boundary (rows that then share a name merged), control characters as
// '?', and per step the rows with the most time, the note saying what was left out.
CellProfile fit_profile(CellProfile profile);

}  // namespace pg::worker
