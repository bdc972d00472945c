#include "runner/exec/exec_process.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <map>

extern char** environ;  // POSIX: the process's environment

namespace pg::exec {
namespace {

using Clock = std::chrono::steady_clock;

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (::pipe2(fd, O_CLOEXEC) != 0) fd[0] = fd[1] = -1;
  }
  ~Pipe() {
    close_end(0);
    close_end(1);
  }
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
  bool ok() const { return fd[0] >= 0; }
};

// The child's environment: perfgate's own with spec.env added or replaced, built before fork.
std::vector<std::string> child_environment(const ProcessSpec& spec) {
  std::map<std::string, std::string> vars;
  for (char** e = ::environ; e && *e; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    if (eq != std::string::npos) vars[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : spec.env) vars[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : vars) out.push_back(k + "=" + v);
  return out;
}

// The supervisor's SIGUSR1 handler (perfgate died): everything in its group, itself included.
void kill_own_group(int) {
  ::kill(0, SIGKILL);
  ::_exit(137);
}

void kill_group(pid_t pgid, int sig) {
  if (pgid > 0) ::kill(-pgid, sig);
}

// The whole group, supervisor included, killed; the supervisor reaped. Its wait status.
int kill_and_reap(pid_t pid) {
  kill_group(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// What the status pipe says by the deadline: the shell's exit code, nothing yet, or that the
// supervisor is gone without saying it (killed by someone else).
enum class ShellEnd { exited, running, unknown };

ShellEnd read_exit_code(int fd, Clock::time_point deadline, int& code) {
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd p = {fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::clamp<int64_t>(left, 0, 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return ShellEnd::unknown;
    if (ready == 0) {
      if (left <= 0) return ShellEnd::running;
      continue;
    }
    const ssize_t n = ::read(fd, &code, sizeof code);
    if (n < 0 && errno == EINTR) continue;
    return n == sizeof code ? ShellEnd::exited : ShellEnd::unknown;
  }
}

// Writes all of `text`; false when the command does not read its stdin (EPIPE: it closed it or
// is gone). SIGPIPE is ignored for the write, so that a command that exited cannot kill perfgate.
bool write_all(int fd, std::string_view text) {
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, &old);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  sigaction(SIGPIPE, &old, nullptr);
  return done == text.size();
}

int take_fd(int& fd) {
  const int out = fd;
  fd = -1;
  return out;
}

}  // namespace

ChildProcess::ChildProcess(const ProcessSpec& spec) : t0_(Clock::now()) {
  auto spawn_failed = [&](const std::string& why) {
    ProcessOutcome o;
    o.end = ProcessOutcome::End::spawn_failed;
    o.spawn_error = why;
    outcome_ = std::move(o);
  };
  // status_pipe: the supervisor tells the shell's exit code on it, then waits to be killed with
  // its group, so that it never ends without the group (see below).
  Pipe in, stdout_pipe, stderr_pipe, status_pipe;
  if (!in.ok() || !stdout_pipe.ok() || !stderr_pipe.ok() || !status_pipe.ok()) {
    spawn_failed(std::string("cannot create pipes: ") + std::strerror(errno));
    return;
  }
  const std::vector<std::string> env_strings = child_environment(spec);
  std::vector<char*> envp;
  for (const auto& s : env_strings) envp.push_back(const_cast<char*>(s.c_str()));
  envp.push_back(nullptr);
  const char* argv[] = {"/bin/sh", "-c", spec.command.c_str(), nullptr};
  const pid_t parent = ::getpid();
  // A pipe that tells the parent why exec failed (CLOEXEC: it closes silently on success).
  Pipe exec_error;

  const pid_t pid = ::fork();
  if (pid < 0) {
    spawn_failed(std::string("fork failed: ") + std::strerror(errno));
    return;
  }
  if (pid == 0) {
    // The supervisor: leader of the command's process group, it outlives perfgate by nothing.
    // Only async-signal-safe calls from here on (perfgate may have had threads).
    // It inherited perfgate's SIGINT/SIGTERM handler (stop after the current cell, with its
    // message): the SIGTERM that stops the command reaches this process too, and must neither
    // look like the user interrupting perfgate nor end the supervisor before its shell.
    ::signal(SIGTERM, SIG_IGN);
    ::signal(SIGINT, SIG_IGN);
    ::signal(SIGPIPE, SIG_IGN);  // a write to the status pipe after perfgate died must not kill it
    ::setpgid(0, 0);
    struct sigaction die {};
    die.sa_handler = kill_own_group;
    sigemptyset(&die.sa_mask);
    ::sigaction(SIGUSR1, &die, nullptr);
    ::prctl(PR_SET_PDEATHSIG, SIGUSR1);  // perfgate gone (even kill -9): the group goes too
    if (::getppid() != parent) kill_own_group(0);
    const pid_t shell = ::fork();
    if (shell < 0) ::_exit(127);
    if (shell == 0) {
      // The shell: stdin/stdout/stderr on the pipes, default signal dispositions, in --repo.
      ::signal(SIGUSR1, SIG_DFL);
      // Ignored by perfgate or by the supervisor; an ignored signal survives execve.
      ::signal(SIGPIPE, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
      ::signal(SIGINT, SIG_DFL);
      ::prctl(PR_SET_PDEATHSIG, 0);
      ::dup2(in.fd[0], 0);
      ::dup2(stdout_pipe.fd[1], 1);
      ::dup2(stderr_pipe.fd[1], 2);
      int err = 0;
      if (::chdir(spec.cwd.c_str()) != 0) {
        err = errno;
      } else {
        ::execve("/bin/sh", const_cast<char* const*>(argv), envp.data());
        err = errno;
      }
      [[maybe_unused]] ssize_t n = ::write(exec_error.fd[1], &err, sizeof err);
      ::_exit(127);
    }
    // The supervisor holds no pipe end: EOF on stdin and stdout is the command's alone. Nor one
    // of another command perfgate runs at the same time (the other side's worker of `perfgate
    // ab`), whose stdin would otherwise never reach its end: every descriptor above stderr goes
    // but its end of the status pipe.
    const int status_fd = status_pipe.fd[1];
    for (int fd : {in.fd[0], in.fd[1], stdout_pipe.fd[0], stdout_pipe.fd[1], stderr_pipe.fd[0],
                   stderr_pipe.fd[1], exec_error.fd[0], exec_error.fd[1], status_pipe.fd[0]})
      ::close(fd);
    if (status_fd > 3) ::close_range(3, static_cast<unsigned>(status_fd) - 1, 0);
    ::close_range(static_cast<unsigned>(status_fd) + 1, ~0U, 0);
    int status = 0;
    while (::waitpid(shell, &status, 0) < 0 && errno == EINTR) {
    }
    // A shell killed by a signal is reported the way shells report a killed command, 128 + N.
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    // perfgate gone (the status pipe has no reader: EPIPE, SIGPIPE being ignored here): the
    // group goes now, whether or not the parent-death signal has arrived yet.
    if (::write(status_fd, &code, sizeof code) != sizeof code) kill_own_group(0);
    // Then it waits to be killed with its group: by perfgate, which kills the group after every
    // command, or by its own handler when perfgate dies. Exiting here would leave whatever the
    // command started running if perfgate died at the same moment (a worker's shell ends when
    // its stdin does, which is when perfgate dies), with nobody left to kill it.
    while (true) ::pause();
  }
  ::setpgid(pid, pid);  // also here, so the group exists before any kill below
  in.close_end(0);
  stdout_pipe.close_end(1);
  stderr_pipe.close_end(1);
  exec_error.close_end(1);
  status_pipe.close_end(1);
  int child_errno = 0;
  if (::read(exec_error.fd[0], &child_errno, sizeof child_errno) == sizeof child_errno) {
    kill_and_reap(pid);
    spawn_failed("cannot run /bin/sh in '" + spec.cwd + "': " + std::strerror(child_errno));
    return;
  }
  pid_ = pid;
  in_ = take_fd(in.fd[1]);
  out_ = take_fd(stdout_pipe.fd[0]);
  err_ = take_fd(stderr_pipe.fd[0]);
  status_ = take_fd(status_pipe.fd[0]);
  // A command that never reads its stdin is allowed (a one-shot benchmark need not read it).
  write(spec.stdin_text);
}

ChildProcess::~ChildProcess() {
  if (started() && !outcome_) kill(ProcessOutcome::End::stopped);
}

bool ChildProcess::write(std::string_view text) {
  if (in_ < 0) return false;
  return write_all(in_, text);
}

void ChildProcess::close_stdin() {
  if (in_ >= 0) ::close(take_fd(in_));
}

void ChildProcess::read_stderr() {
  char buf[65536];
  const ssize_t n = ::read(err_, buf, sizeof buf);
  if (n < 0 && errno == EINTR) return;
  if (n <= 0) {
    ::close(take_fd(err_));
    return;
  }
  err_buf_.append(buf, static_cast<size_t>(n));
  if (err_buf_.size() > 2 * kStderrTailBytes) err_buf_.erase(0, err_buf_.size() - kStderrTailBytes);
}

ChildProcess::Read ChildProcess::read_line(std::string& line, Clock::time_point deadline) {
  bool polled = false;
  while (true) {
    // Lines already read are handed out first, even after an overflow was noticed.
    const size_t nl = pending_.find('\n', pending_head_ + scanned_);
    if (nl != std::string::npos) {
      line.assign(pending_, pending_head_, nl - pending_head_);
      pending_head_ = nl + 1;
      scanned_ = 0;
      if (pending_head_ > (1u << 16) && pending_head_ * 2 > pending_.size()) {
        pending_.erase(0, pending_head_);
        pending_head_ = 0;
      }
      return Read::line;
    }
    scanned_ = pending_.size() - pending_head_;
    if (!overflow_.empty()) return Read::overflow;
    if (scanned_ > kMaxLineBytes) {
      overflow_ = "a stdout line is longer than " + std::to_string(kMaxLineBytes >> 20) + " MiB";
      return Read::overflow;
    }
    if (out_ < 0) {
      if (scanned_ == 0) return Read::eof;
      line.assign(pending_, pending_head_, std::string::npos);
      pending_.clear();
      pending_head_ = scanned_ = 0;
      return Read::line;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0 && polled) return Read::timed_out;
    pollfd fds[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
    const int ready = ::poll(fds, 2, static_cast<int>(std::clamp<int64_t>(left, 0, 1000)));
    polled = true;
    if (ready < 0 && errno != EINTR) {
      ::close(take_fd(out_));  // cannot happen with valid descriptors; read it as the end
      continue;
    }
    if (ready <= 0) {
      if (left <= 0) return Read::timed_out;
      continue;
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char buf[65536];
      const ssize_t n = ::read(out_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(take_fd(out_));
      } else {
        pending_.append(buf, static_cast<size_t>(n));
        stdout_total_ += static_cast<size_t>(n);
        if (stdout_total_ > kMaxStdoutBytes)
          overflow_ = "stdout is longer than " + std::to_string(kMaxStdoutBytes >> 20) + " MiB";
      }
    }
    if (err_ >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) read_stderr();
  }
}

const ProcessOutcome& ChildProcess::wait(Clock::time_point deadline) {
  if (outcome_) return *outcome_;
  // Both pipes closed: the shell normally exits at once, but one that closed them (or left a
  // child holding them) and hangs on is held to the same deadline.
  while (err_ >= 0 || out_ >= 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return kill(ProcessOutcome::End::timed_out);
    pollfd fds[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
    const int ready = ::poll(fds, 2, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    if (out_ >= 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      char buf[65536];  // the caller has read every line it wanted: the rest is dropped
      const ssize_t n = ::read(out_, buf, sizeof buf);
      if (n == 0 || (n < 0 && errno != EINTR)) ::close(take_fd(out_));
    }
    if (err_ >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) read_stderr();
  }
  int code = 0;
  switch (read_exit_code(status_, deadline, code)) {
    case ShellEnd::exited:
      end_with(std::nullopt, code);
      break;
    case ShellEnd::running:
      return kill(ProcessOutcome::End::timed_out);
    case ShellEnd::unknown:
      end_with(std::nullopt, std::nullopt);
      break;
  }
  return *outcome_;
}

const ProcessOutcome& ChildProcess::kill(ProcessOutcome::End why) {
  if (outcome_) return *outcome_;
  kill_group(pid_, SIGTERM);
  int code = 0;  // the shell's end within two seconds, else SIGKILL
  read_exit_code(status_, Clock::now() + std::chrono::seconds(2), code);
  end_with(why, std::nullopt);
  return *outcome_;
}

void ChildProcess::end_with(std::optional<ProcessOutcome::End> why, std::optional<int> exit_code) {
  // The supervisor and anything the command left running in its group.
  const int status = kill_and_reap(pid_);
  // What it wrote to stderr before it ended belongs to the reason; nothing more is waited for.
  for (int chunks = 0; err_ >= 0 && chunks < 64; ++chunks) {
    pollfd fd = {err_, POLLIN, 0};
    if (::poll(&fd, 1, 0) <= 0) break;
    read_stderr();
  }
  for (int* fd : {&in_, &out_, &err_, &status_})
    if (*fd >= 0) ::close(take_fd(*fd));
  ProcessOutcome o;
  if (err_buf_.size() > kStderrTailBytes) err_buf_.erase(0, err_buf_.size() - kStderrTailBytes);
  o.stderr_tail = std::move(err_buf_);
  o.overflow = overflow_;
  o.seconds = std::chrono::duration<double>(Clock::now() - t0_).count();
  if (why) {
    o.end = *why;
  } else if (exit_code) {
    o.end = ProcessOutcome::End::exited;
    o.exit_status = *exit_code;
  } else if (WIFSIGNALED(status)) {  // the supervisor itself was killed before it could tell
    o.end = ProcessOutcome::End::signaled;
    o.term_signal = WTERMSIG(status);
  } else {
    o.end = ProcessOutcome::End::exited;
    o.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
  }
  outcome_ = std::move(o);
}

}  // namespace pg::exec
