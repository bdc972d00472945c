// Semantic checks of runs and cells, shared by the store's writes, ingest and the JSON parser, so
// that nothing malformed is ever stored. Errors are UsageError whose message starts with `where`
// (a JSON-pointer-like path such as "/runs/0/cells/3") and names the offending field.
#pragma once
#include <string>

#include "core/run.h"

namespace pg::store {

void validate_key(const CellKey& key, const std::string& where);
// Finite metrics; samples finite and >= 0; as many decode lists as prefill samples, each with
// gen_tokens - 1 steps (or no samples at all).
void validate_cell(const CellResult& cell, const std::string& where);
// Commit is 40 hex digits or absent, uuid 32 or absent; git state and timestamps well formed;
// every cell valid.
void validate_run(const Run& run, const std::string& where);

bool is_commit_sha(const std::string& s);  // 40 hex digits
bool is_run_uuid(const std::string& s);    // 32 hex digits (Run::uuid)

}  // namespace pg::store
