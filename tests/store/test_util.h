// Fixtures for the store tests: temporary directories and runs with every field filled in.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>

#include "core/run.h"
#include "tests/common/temp_dir.h"

namespace pg {
namespace store {
class Store;
}
}  // namespace pg

namespace pg::test {

using TempDir = pg::testing::TempDir;

std::string read_bytes(const std::string& path);
void write_bytes(const std::string& path, const std::string& bytes);

GitInfo sample_git(int variant = 0);
Environment sample_env(const std::string& device = "NVIDIA H200");
// A cell with metrics and `reps` repetitions of gen_tokens - 1 decode steps; values derived from
// `seed` so different seeds give different samples.
CellResult sample_cell(int batch_size, int seq_len, int reps = 3, int gen_tokens = 5,
                       double seed = 1.0);
// A complete run with three cells (ok, oom with reason, ok) and every field set.
Run sample_run(int variant = 0);

// The first column of the first row of `sql` on the store's connection (a PRAGMA, a count);
// throws std::runtime_error when the query fails or returns no row.
int64_t query_int(store::Store& s, const char* sql);

// Stores r as a runner would: begin, its cells one by one, then finish (unless `finish` is false).
int64_t write_run(store::Store& s, const Run& r, bool finish = true);

// Undoes schema steps 11 (detected regressions), 10 (accepted slowdowns) and 9 (A/B runs), for the
// tests that rebuild what an older perfgate wrote: put it first in their SQL, then undo their own
// steps.
inline constexpr const char* kUndoStepsSince9 =
    "ALTER TABLE profile_steps DROP COLUMN busy_ms; ALTER TABLE profile_steps DROP COLUMN span_ms; "
    "DROP TABLE detected_regressions; DROP TABLE acceptances; DROP INDEX runs_ab; ALTER TABLE runs "
    "DROP COLUMN ab_uuid; ALTER TABLE runs DROP COLUMN "
    "ab_side; "
    "ALTER TABLE runs DROP COLUMN ab_design; ALTER TABLE runs DROP COLUMN ab_seed; "
    "ALTER TABLE repetitions DROP COLUMN ab_position; ";

}  // namespace pg::test
