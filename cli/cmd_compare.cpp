// Temporary stub until the owning component lands; replaced, never shipped.
#include <CLI/CLI.hpp>
#include "cli/commands.h"
namespace pg::cli {
void add_compare_command(CLI::App& root, Action& a) { root.add_subcommand("compare", "the merge gate")->callback([&a] { a = [] { return 4; }; }); }
void add_changes_command(CLI::App& root, Action& a) { root.add_subcommand("changes", "change points per series")->callback([&a] { a = [] { return 4; }; }); }
}
