// Each subcommand registers itself on the root CLI11 app and sets `action` when chosen.
// main.cpp owns parsing and the mapping of exceptions to exit codes (docs/CLI.md).
#pragma once
#include <functional>
#include <memory>
#include <string>

namespace CLI {
class App;
}

namespace pg {
namespace store {
class Store;
}
}  // namespace pg

namespace pg::cli {

using Action = std::function<int()>;  // returns the exit code

inline constexpr const char* kRunDescription =
    "Benchmark sweep -> SQLite. Every flag is also a key of the --config TOML file; list flags "
    "take comma-separated values and sweep their Cartesian product.";
inline constexpr const char* kAbDescription =
    "Base and head measured side by side: every cell's repetitions alternate between two workers, "
    "one per checkout, in a seeded ABBA order; stored as two paired runs that `perfgate compare` "
    "judges with the paired test.";
// The executable that runs `perfgate run` (LibTorch): beside `perfgate` (cli/CMakeLists.txt).
inline constexpr const char* kRunnerExecutable = "perfgate-runner";

// cli/cmd_run.cpp in perfgate-runner; in perfgate, cli/runner_exec.cpp lists it for --help.
void add_run_command(CLI::App& root, Action& action);
// cli/cmd_ab.cpp in perfgate-runner; in perfgate, cli/runner_exec.cpp lists it for --help.
void add_ab_command(CLI::App& root, Action& action);
void add_compare_command(CLI::App& root, Action& action);  // cli/cmd_compare.cpp
void add_changes_command(CLI::App& root, Action& action);  // cli/cmd_changes.cpp
void add_serve_command(CLI::App& root, Action& action);    // cli/cmd_serve.cpp
void add_export_command(CLI::App& root, Action& action);   // cli/cmd_export.cpp
void add_runs_command(CLI::App& root, Action& action);     // cli/cmd_export.cpp
void add_init_command(CLI::App& root, Action& action);     // cli/cmd_init.cpp
void add_import_command(CLI::App& root, Action& action);   // cli/cmd_import.cpp
void add_token_command(CLI::App& root, Action& action);    // cli/cmd_token.cpp
void add_accept_command(CLI::App& root, Action& action);   // cli/cmd_accept.cpp
// perfgate-runner only (cli/cmd_worker.cpp): the hidden `worker` that `perfgate ab` starts.
void add_worker_command(CLI::App& root, Action& action);

// Commands the `perfgate` executable hands to perfgate-runner (cli/runner_exec.cpp).
bool runs_in_runner(const char* subcommand);

// perfgate only (cli/runner_exec.cpp): replaces this process with perfgate-runner and the same
// arguments (`run`, `worker`); returns (exit 4, with a message) only if it cannot be started.
int run_in_runner(char** argv);
std::string runner_path();

// Opens --db read-only; a path that does not exist is a usage error (exit 2), never a new empty
// store: a mistyped --db must not look like an empty history. cli/open_db.cpp.
std::unique_ptr<store::Store> open_existing_db(const std::string& path,
                                               const std::string& flag = "--db");
// Who a record this command writes names when no flag says: $GITHUB_ACTOR, $USER or $LOGNAME
// (cli/open_db.cpp). Whoever may write the store is trusted to say.
std::string default_user_name();

// Opens --db for writing, only if it exists: a mistyped --db must not become a new database that
// holds the only copy of a record (a credential, an acceptance).
std::unique_ptr<store::Store> open_existing_db_for_write(const std::string& path,
                                                         const std::string& flag = "--db");

}  // namespace pg::cli
