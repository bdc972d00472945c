// Runs one command of `perfgate run --exec` as a child process: /bin/sh -c CMD in a directory, in
// its own process group, with extra environment variables and a text on stdin. stdout is handed
// over line by line as it arrives; stderr is kept, bounded, for error messages. LibTorch-free.
#pragma once
#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pg::exec {

struct ProcessSpec {
  std::string command;  // run as /bin/sh -c COMMAND
  std::string cwd;
  std::vector<std::pair<std::string, std::string>> env;  // added to (or replacing) perfgate's
  std::string stdin_text;                                // written, then stdin is closed
  std::chrono::milliseconds timeout{0};                  // wall-clock limit of the whole process
};

// Bounds on what a child may print: a longer line or more output is a protocol violation.
inline constexpr size_t kMaxLineBytes = 8u << 20;
inline constexpr size_t kMaxStdoutBytes = 256u << 20;
inline constexpr size_t kStderrTailBytes = 8u << 10;

struct ProcessOutcome {
  enum class End {
    exited,        // exit_status holds the status
    signaled,      // term_signal holds the signal
    timed_out,     // the timeout passed; the process group was killed
    stopped,       // on_line said stop (or stdout broke a bound); the process group was killed
    spawn_failed,  // nothing ran; spawn_error says why
  };
  End end = End::exited;
  int exit_status = 0;
  int term_signal = 0;
  std::string spawn_error;
  std::string overflow;     // set when stdout broke kMaxLineBytes / kMaxStdoutBytes
  std::string stderr_tail;  // the last kStderrTailBytes of stderr
  double seconds = 0;
};

// on_line gets every stdout line without its newline (a last unterminated line too); returning
// false stops the process (SIGTERM to its group, SIGKILL two seconds later). Whatever the end,
// the whole process group is killed before this returns, so nothing the command started lingers.
ProcessOutcome run_process(const ProcessSpec& spec,
                           const std::function<bool(std::string_view line)>& on_line);

// "exited with status 3", "killed by signal 11 (Segmentation fault)", ...
std::string describe_end(const ProcessOutcome& o);

}  // namespace pg::exec
