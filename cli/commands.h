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
class Store;
}

namespace pg::cli {

using Action = std::function<int()>;  // returns the exit code

void add_run_command(CLI::App& root, Action& action);      // cli/cmd_run.cpp
void add_compare_command(CLI::App& root, Action& action);  // cli/cmd_compare.cpp
void add_changes_command(CLI::App& root, Action& action);  // cli/cmd_changes.cpp
void add_serve_command(CLI::App& root, Action& action);    // cli/cmd_serve.cpp
void add_export_command(CLI::App& root, Action& action);   // cli/cmd_export.cpp
void add_runs_command(CLI::App& root, Action& action);     // cli/cmd_export.cpp
void add_init_command(CLI::App& root, Action& action);     // cli/cmd_init.cpp

// Opens --db read-only; a path that does not exist is a usage error (exit 2), never a new empty
// store: a mistyped --db must not look like an empty history. cli/open_db.cpp.
std::unique_ptr<Store> open_existing_db(const std::string& path);

}  // namespace pg::cli
