// `perfgate run` (and the internal `perfgate worker`) in the `perfgate` executable, which links no
// LibTorch (cli/CMakeLists.txt): the sweep runs in `perfgate-runner`, the executable beside this
// one that holds LibTorch, started in this process's place with the same arguments, so its output,
// exit code and signals are the run's own.
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "common/errors.h"

namespace pg::cli {

namespace {
// The directory of this executable (symlinks resolved: an installed symlink to perfgate still
// finds the runner beside the real file).
std::string own_directory() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  const std::string path(buf, static_cast<size_t>(n));
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}
}  // namespace

std::string runner_path() { return own_directory() + "/" + kRunnerExecutable; }

bool runs_in_runner(const char* subcommand) {
  const std::string s = subcommand;
  return s == "run" || s == "ab" || s == "worker";
}

int run_in_runner(char** argv) {
  const std::string runner = runner_path();
  execv(runner.c_str(), argv);  // returns only on failure
  std::fprintf(stderr,
               "perfgate: failure: `perfgate %s` runs in %s (the part of perfgate that links "
               "LibTorch), which cannot be started: %s. Install it beside perfgate "
               "(docs/INSTALL.md).\n",
               argv[1], runner.c_str(), strerror(errno));
  return kExitRuntime;
}

void add_run_command(CLI::App& root, Action&) {
  // Listed for --help only: main() hands every `perfgate run ...` to the runner before parsing.
  root.add_subcommand("run", kRunDescription)->allow_extras()->prefix_command();
}

void add_ab_command(CLI::App& root, Action&) {
  // Likewise `perfgate ab ...`.
  root.add_subcommand("ab", kAbDescription)->allow_extras()->prefix_command();
}

}  // namespace pg::cli
