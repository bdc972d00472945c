// Temporary stub until the owning component lands; replaced, never shipped.
#include <CLI/CLI.hpp>
#include "cli/commands.h"
namespace pg::cli {
void add_serve_command(CLI::App& root, Action& a) { root.add_subcommand("serve", "dashboard and API")->callback([&a] { a = [] { return 4; }; }); }
}
