// `perfgate-runner worker`: perfgate's own worker of the --exec protocol's worker mode
// (docs/PROTOCOL.md, "Worker mode"), which `perfgate ab` starts once per cell and side. Internal:
// hidden from --help. stdout carries the protocol only, so the process's own stdout (anything a
// library prints) goes to stderr and the protocol to a copy of the original descriptor.
#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>

#include "cli/commands.h"
#include "cli/setting_flags.h"
#include "common/errors.h"
#include "runner/worker/worker.h"

namespace pg::cli {

void add_worker_command(CLI::App& root, Action& action) {
  auto* cmd = root.add_subcommand(
      "worker",
      "internal: serve one cell in the worker mode of the --exec protocol (stdin/stdout)");
  cmd->group("");  // not listed: perfgate ab starts it, a user never types it
  cmd->callback([&action] {
    action = [] {
      const int protocol_fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
      if (protocol_fd < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
        throw RuntimeFailure("worker: cannot set up stdout");
      return worker::serve_worker(STDIN_FILENO, protocol_fd,
                                  std::filesystem::current_path().string(), flag_for_setting);
    };
  });
}

}  // namespace pg::cli
