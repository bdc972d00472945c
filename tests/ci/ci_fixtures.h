// Real temporary directories, real git repositories and real child processes for the ci suites.
#pragma once
#include <string>
#include <vector>

#include "core/run.h"
#include "tests/common/temp_dir.h"

namespace pg::test {

using TempDir = pg::testing::TempDir;

struct CommandResult {
  int exit_code = -1;  // -1 when killed by a signal
  std::string out;     // stdout
  std::string err;     // stderr
};

// Runs argv (no shell) in `cwd`, capturing stdout and stderr.
CommandResult run_command(const std::vector<std::string>& argv, const std::string& cwd = ".");

// git in `repo`; throws on failure. Returns trimmed stdout.
std::string git(const std::string& repo, const std::vector<std::string>& args);

// A fresh repository with identity configured and `main` as the initial branch.
void git_init(const std::string& repo);
// Writes `file` with `content`, commits everything, returns the new commit's SHA.
std::string git_commit(const std::string& repo, const std::string& file, const std::string& content,
                       const std::string& message);

std::string shell_quote(const std::string& s);

// A run of `commit` with one cell per key whose repetitions' tpot_ms are `tpot` (each repetition
// has gen_tokens - 1 decode steps of exactly that duration).
Run synthetic_run(const std::string& commit, const std::vector<CellKey>& keys,
                  const std::vector<double>& tpot, const Environment& env);

CellKey cpu_key(int batch, int seq);
Environment cpu_env();

}  // namespace pg::test
