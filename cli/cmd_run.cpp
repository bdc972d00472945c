// Temporary stub until the owning component lands; replaced, never shipped.
#include <CLI/CLI.hpp>
#include "cli/commands.h"
namespace pg::cli {
void add_run_command(CLI::App& root, Action& a) { root.add_subcommand("run", "benchmark sweep -> SQLite")->callback([&a] { a = [] { return 4; }; }); }
}
