// perfgate and perfgate-runner (cli/CMakeLists.txt): one CLI, one subcommand per job.
// Exit codes: docs/CLI.md.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string_view>

#include "cli/commands.h"
#include "cli/setting_flags.h"
#include "common/errors.h"
#include "common/program_name.h"
#include "common/version.h"

int main(int argc, char** argv) {
  // Past `ulimit -f` the kernel would kill us with SIGXFSZ mid-write; ignored, the write fails
  // with EFBIG instead, which becomes exit 4 with a message naming the file (docs/STORE.md).
  signal(SIGXFSZ, SIG_IGN);
  if (argc > 0) pg::set_program_name(argv[0]);
#ifndef PERFGATE_RUNNER_BINARY
  // This executable links no LibTorch; the runner beside it does (cli/runner_exec.cpp).
  if (argc > 1 && pg::cli::runs_in_runner(argv[1])) return pg::cli::run_in_runner(argv);
#endif
  CLI::App app{"perfgate: reproducible performance-regression CI for LM inference"};
  app.set_version_flag("--version", std::string("perfgate ") + pg::kVersion);
  app.require_subcommand(1);
  pg::cli::Action action;
  pg::cli::add_run_command(app, action);
  pg::cli::add_ab_command(app, action);
  pg::cli::add_compare_command(app, action);
  pg::cli::add_changes_command(app, action);
  pg::cli::add_serve_command(app, action);
  pg::cli::add_export_command(app, action);
  pg::cli::add_runs_command(app, action);
  pg::cli::add_import_command(app, action);
  pg::cli::add_init_command(app, action);
  pg::cli::add_token_command(app, action);
  pg::cli::add_accept_command(app, action);
#ifdef PERFGATE_RUNNER_BINARY
  pg::cli::add_worker_command(app, action);
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return pg::kExitUsage;
  }
  try {
    return action ? action() : pg::kExitUsage;
  } catch (const pg::SettingError& e) {  // every layer names settings; here they are flags
    std::fprintf(stderr, "perfgate: error: %s\n", e.spelled(pg::cli::flag_for_setting).c_str());
    return pg::kExitUsage;
  } catch (const pg::UsageError& e) {
    std::fprintf(stderr, "perfgate: error: %s\n", e.what());
    return pg::kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "perfgate: failure: %s\n", e.what());
    return pg::kExitRuntime;
  }
}
