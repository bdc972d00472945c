// The one-shot use of ChildProcess (runner/exec/exec_process.h): a command run to its end with
// stdin closed after its text, each stdout line handed over as it arrives; and how a process's end
// reads in a cell's reason.
#include "runner/exec/exec_process.h"

#include <csignal>
#include <cstring>

namespace pg::exec {

ProcessOutcome run_process(const ProcessSpec& spec,
                           const std::function<bool(std::string_view line)>& on_line) {
  const auto deadline = ChildProcess::Clock::now() + spec.timeout;
  ChildProcess child(spec);
  if (!child.started()) return *child.outcome();
  child.close_stdin();
  std::string line;
  while (true) {
    switch (child.read_line(line, deadline)) {
      case ChildProcess::Read::line:
        if (!on_line(line)) return child.kill(ProcessOutcome::End::stopped);
        // A command that never stops printing is held to the deadline too.
        if (ChildProcess::Clock::now() >= deadline)
          return child.kill(ProcessOutcome::End::timed_out);
        break;
      case ChildProcess::Read::eof:
        return child.wait(deadline);
      case ChildProcess::Read::timed_out:
        return child.kill(ProcessOutcome::End::timed_out);
      case ChildProcess::Read::overflow:
        return child.kill(ProcessOutcome::End::stopped);
    }
  }
}

std::string describe_end(const ProcessOutcome& o) {
  switch (o.end) {
    case ProcessOutcome::End::exited:
      // A command the shell ran as a child and that died of a signal shows as 128 + signal.
      if (o.exit_status > 128 && o.exit_status < 128 + NSIG)
        return "exited with status " + std::to_string(o.exit_status) + " (killed by signal " +
               std::to_string(o.exit_status - 128) + ", " + ::strsignal(o.exit_status - 128) + ")";
      return "exited with status " + std::to_string(o.exit_status);
    case ProcessOutcome::End::signaled:
      return "killed by signal " + std::to_string(o.term_signal) + " (" +
             ::strsignal(o.term_signal) + ")";
    case ProcessOutcome::End::timed_out:
      return "timed out";
    case ProcessOutcome::End::stopped:
      return "stopped by perfgate";
    case ProcessOutcome::End::spawn_failed:
      return "could not be started: " + o.spawn_error;
  }
  return "ended";
}

}  // namespace pg::exec
