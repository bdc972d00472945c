// `perfgate run`: a benchmark sweep into SQLite. The settings and their validation live in
// runner/config (shared with the TOML sweep file); this file wires them to the command line
// (cli/run_flags.h) and names them in its messages as they were given.
#include <CLI/CLI.hpp>
#include <memory>

#include "cli/commands.h"
#include "cli/run_flags.h"
#include "common/utc_time.h"
#include "runner/config.h"
#include "runner/sweep.h"

namespace pg::cli {

void add_run_command(CLI::App& root, Action& action) {
  auto* cmd = root.add_subcommand("run", kRunDescription);
  auto flags = std::make_shared<runner::RunFlags>();
  add_run_flags(*cmd, *flags);
  cmd->callback([&action, flags] {
    action = [flags] {
      // Before the config is resolved: resolving hashes model artifacts (a 2 GB package takes
      // seconds), and a gate's reported cost is the whole of each run.
      const std::string started_at = now_iso8601();
      const runner::SweepConfig cfg = runner::resolve_sweep_config(*flags);
      try {
        return perform_run(cfg, started_at);
      } catch (const SettingError& e) {  // a cell's settings, as the file or the flags gave them
        throw UsageError(run_error_message(e, cfg));
      }
    };
  });
}

}  // namespace pg::cli
