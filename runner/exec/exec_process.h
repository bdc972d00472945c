// Runs one command of `perfgate run --exec` as a child process: /bin/sh -c CMD in a directory, in
// its own process group, with extra environment variables and a text on stdin. stdout is handed
// over line by line as it arrives; stderr is kept, bounded, for error messages. run_process runs
// a one-shot command to its end; ChildProcess keeps one interactive (a worker of protocol 3:
// stdin stays open for requests, stdout is read one line at a time). LibTorch-free.
#pragma once
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pg::exec {

struct ProcessSpec {
  std::string command;  // run as /bin/sh -c COMMAND
  std::string cwd;
  std::vector<std::pair<std::string, std::string>> env;  // added to (or replacing) perfgate's
  std::string stdin_text;                // written first (run_process: then stdin is closed)
  std::chrono::milliseconds timeout{0};  // run_process: wall-clock limit of the whole process
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

// One started command that stays interactive: lines written to its stdin whenever the caller
// likes, its stdout read one line at a time with a deadline, the tail of its stderr kept
// meanwhile. The same process rules as run_process (own process group, a supervisor that kills
// the group when perfgate dies, even of kill -9). Destroying it, or kill(), ends the whole group.
class ChildProcess {
 public:
  using Clock = std::chrono::steady_clock;

  // Starts spec.command in spec.cwd and writes spec.stdin_text; stdin stays open. spec.timeout
  // is not used: every read takes its own deadline.
  explicit ChildProcess(const ProcessSpec& spec);
  ~ChildProcess();  // kill(stopped) when it has not ended yet
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // False when nothing ran; outcome() says why (End::spawn_failed).
  bool started() const { return pid_ > 0; }

  // Writes to stdin; false when the command no longer reads it (closed, or gone).
  bool write(std::string_view text);
  void close_stdin();

  enum class Read {
    line,       // `line` holds the next stdout line, without its newline (a last unterminated
                // line too)
    eof,        // stdout is closed and every line was read
    timed_out,  // no complete line before the deadline (what arrived stays buffered)
    overflow,   // stdout broke kMaxLineBytes / kMaxStdoutBytes: overflow() says how
  };
  // A deadline already past still takes what has arrived without waiting.
  Read read_line(std::string& line, Clock::time_point deadline);
  const std::string& overflow() const { return overflow_; }

  // After stdout's end: waits for stderr's end and the exit until the deadline, then kills the
  // group (End::timed_out). Whatever the end, the group is killed before this returns.
  const ProcessOutcome& wait(Clock::time_point deadline);
  // Ends it now: SIGTERM to the group, SIGKILL two seconds later; `why` (timed_out or stopped)
  // is recorded as the end.
  const ProcessOutcome& kill(ProcessOutcome::End why);
  // Set once it has ended (wait, kill, or a spawn failure).
  const std::optional<ProcessOutcome>& outcome() const { return outcome_; }

 private:
  void read_stderr();
  void end_with(std::optional<ProcessOutcome::End> why, std::optional<int> exit_code);
  Clock::time_point t0_;
  int pid_ = -1;  // the supervisor: leader of the process group
  int in_ = -1, out_ = -1, err_ = -1;
  int status_ = -1;      // the supervisor reports the shell's exit code here
  std::string pending_;  // stdout read but not yet handed out, from pending_head_
  size_t pending_head_ = 0, scanned_ = 0;
  size_t stdout_total_ = 0;
  std::string overflow_;
  std::string err_buf_;
  std::optional<ProcessOutcome> outcome_;
};

}  // namespace pg::exec
