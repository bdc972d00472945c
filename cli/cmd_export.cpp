// Temporary stub until the owning component lands; replaced, never shipped.
#include <CLI/CLI.hpp>
#include "cli/commands.h"
namespace pg::cli {
void add_export_command(CLI::App& root, Action& a) { root.add_subcommand("export", "print stored runs")->callback([&a] { a = [] { return 4; }; }); }
void add_runs_command(CLI::App& root, Action& a) { root.add_subcommand("runs", "list stored runs")->callback([&a] { a = [] { return 4; }; }); }
}
