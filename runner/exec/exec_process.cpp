#include "runner/exec/exec_process.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

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

// Waits for the shell itself, escalating to SIGKILL after the grace period.
int reap(pid_t pid, bool already_signalled) {
  int status = 0;
  const auto give_up = Clock::now() + std::chrono::seconds(2);
  while (true) {
    const pid_t r = ::waitpid(pid, &status, already_signalled ? WNOHANG : 0);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return status;
    if (r == 0) {
      if (Clock::now() >= give_up) {
        kill_group(pid, SIGKILL);
        already_signalled = false;  // now block until it is gone
        continue;
      }
      ::usleep(10'000);
    }
  }
}

void write_stdin(int fd, const std::string& text) {
  // SIGPIPE when the command never reads stdin and has exited already: ignored for the write.
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, &old);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EPIPE / EAGAIN: the command does not read its stdin, which is allowed
    done += static_cast<size_t>(n);
  }
  sigaction(SIGPIPE, &old, nullptr);
}

}  // namespace

ProcessOutcome run_process(const ProcessSpec& spec,
                           const std::function<bool(std::string_view line)>& on_line) {
  ProcessOutcome out;
  const auto t0 = Clock::now();
  Pipe in, stdout_pipe, stderr_pipe;
  if (!in.ok() || !stdout_pipe.ok() || !stderr_pipe.ok()) {
    out.end = ProcessOutcome::End::spawn_failed;
    out.spawn_error = std::string("cannot create pipes: ") + std::strerror(errno);
    return out;
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
    out.end = ProcessOutcome::End::spawn_failed;
    out.spawn_error = std::string("fork failed: ") + std::strerror(errno);
    return out;
  }
  if (pid == 0) {
    // The supervisor: leader of the command's process group, it outlives perfgate by nothing.
    // Only async-signal-safe calls from here on (perfgate may have had threads).
    // It inherited perfgate's SIGINT/SIGTERM handler (stop after the current cell, with its
    // message): the SIGTERM that stops the command reaches this process too, and must neither
    // look like the user interrupting perfgate nor end the supervisor before its shell.
    ::signal(SIGTERM, SIG_IGN);
    ::signal(SIGINT, SIG_IGN);
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
    // The supervisor holds no pipe end: EOF on stdin and stdout is the command's alone.
    for (int fd : {in.fd[0], in.fd[1], stdout_pipe.fd[0], stdout_pipe.fd[1], stderr_pipe.fd[0],
                   stderr_pipe.fd[1], exec_error.fd[0], exec_error.fd[1]})
      ::close(fd);
    int status = 0;
    while (::waitpid(shell, &status, 0) < 0 && errno == EINTR) {
    }
    // A shell killed by a signal is reported the way shells report a killed command, 128 + N
    // (re-raising it here could dump the core of this copy of perfgate).
    ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  ::setpgid(pid, pid);  // also here, so the group exists before any kill below
  in.close_end(0);
  stdout_pipe.close_end(1);
  stderr_pipe.close_end(1);
  exec_error.close_end(1);
  int child_errno = 0;
  if (::read(exec_error.fd[0], &child_errno, sizeof child_errno) == sizeof child_errno) {
    reap(pid, false);
    out.end = ProcessOutcome::End::spawn_failed;
    out.spawn_error = "cannot run /bin/sh in '" + spec.cwd + "': " + std::strerror(child_errno);
    return out;
  }
  write_stdin(in.fd[1], spec.stdin_text);
  in.close_end(1);

  const auto deadline = t0 + spec.timeout;
  std::string line, err_buf;
  size_t stdout_total = 0;
  bool out_open = true, err_open = true, stop = false, timed_out = false;
  char buf[65536];
  auto deliver = [&](std::string_view l) {
    if (!stop && !on_line(l)) stop = true;
  };
  while ((out_open || err_open) && !stop) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[2] = {{out_open ? stdout_pipe.fd[0] : -1, POLLIN, 0},
                     {err_open ? stderr_pipe.fd[0] : -1, POLLIN, 0}};
    const int wait_ms = static_cast<int>(std::min<int64_t>(left.count(), 1000));
    const int ready = ::poll(fds, 2, wait_ms);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    if (out_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      const ssize_t n = ::read(stdout_pipe.fd[0], buf, sizeof buf);
      if (n <= 0) {
        out_open = false;
        if (!line.empty()) deliver(line);
        line.clear();
      } else {
        stdout_total += static_cast<size_t>(n);
        for (ssize_t i = 0; i < n && !stop; ++i) {
          if (buf[i] == '\n') {
            deliver(line);
            line.clear();
          } else {
            line.push_back(buf[i]);
          }
        }
        if (line.size() > kMaxLineBytes) {
          out.overflow =
              "a stdout line is longer than " + std::to_string(kMaxLineBytes >> 20) + " MiB";
          stop = true;
        } else if (stdout_total > kMaxStdoutBytes) {
          out.overflow = "stdout is longer than " + std::to_string(kMaxStdoutBytes >> 20) + " MiB";
          stop = true;
        }
      }
    }
    if (err_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      const ssize_t n = ::read(stderr_pipe.fd[0], buf, sizeof buf);
      if (n <= 0) {
        err_open = false;
      } else {
        err_buf.append(buf, static_cast<size_t>(n));
        if (err_buf.size() > 2 * kStderrTailBytes)
          err_buf.erase(0, err_buf.size() - kStderrTailBytes);
      }
    }
  }
  // Both pipes closed: the shell normally exits at once, but one that closed them and hangs on is
  // held to the same deadline.
  int status = 0;
  bool reaped = false;
  while (!stop && !timed_out) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) {
      reaped = true;
      break;
    }
    if (Clock::now() >= deadline)
      timed_out = true;
    else
      ::usleep(10'000);
  }
  const bool killed = stop || timed_out;
  if (killed) kill_group(pid, SIGTERM);
  if (!reaped) status = reap(pid, killed);
  kill_group(pid, SIGKILL);  // anything the command left running in its group
  if (err_buf.size() > kStderrTailBytes) err_buf.erase(0, err_buf.size() - kStderrTailBytes);
  out.stderr_tail = std::move(err_buf);
  out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (timed_out) {
    out.end = ProcessOutcome::End::timed_out;
  } else if (stop) {
    out.end = ProcessOutcome::End::stopped;
  } else if (WIFSIGNALED(status)) {
    out.end = ProcessOutcome::End::signaled;
    out.term_signal = WTERMSIG(status);
  } else {
    out.end = ProcessOutcome::End::exited;
    out.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
  }
  return out;
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
