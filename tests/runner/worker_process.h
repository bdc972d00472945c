// Test helper: perfgate's worker (`perfgate-runner worker`) as a real child process on pipes,
// for the worker-mode suites: lines written to its stdin, its stdout read line by line with a
// deadline, its stdin closed at will. Header-only.
#pragma once
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "e2e_process.h"

namespace pgtest {

class WorkerProcess {
 public:
  // argv[0] is run with stdin and stdout on pipes and stderr into a file, in `cwd`.
  WorkerProcess(const std::vector<std::string>& argv, const std::string& cwd,
                const std::vector<std::string>& env = {}) {
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0)
      throw std::runtime_error("pipe failed");
    err_path_ = tmp_.path() / "stderr";
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      const int e = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (e < 0 || ::chdir(cwd.c_str()) != 0) ::_exit(127);
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::dup2(e, 2);
      for (const auto& kv : env) ::putenv(const_cast<char*>(kv.c_str()));
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    stdin_ = in[1];
    stdout_ = out[0];
  }
  ~WorkerProcess() {
    close_stdin();
    if (stdout_ >= 0) ::close(stdout_);
    if (!reaped_) {
      ::kill(pid_, SIGKILL);
      int st;
      ::waitpid(pid_, &st, 0);
    }
  }
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  void send(const std::string& line) {
    const std::string text = line + "\n";
    if (::write(stdin_, text.data(), text.size()) != static_cast<ssize_t>(text.size()))
      throw std::runtime_error("cannot write to the worker's stdin");
  }
  void close_stdin() {
    if (stdin_ >= 0) ::close(stdin_);
    stdin_ = -1;
  }

  // The next stdout line, or nullopt at the end of its stdout; throws past the deadline.
  std::optional<std::string> read_line(std::chrono::seconds timeout = std::chrono::seconds(120)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      const size_t nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      if (eof_) {
        if (buffer_.empty()) return std::nullopt;
        std::string rest;
        rest.swap(buffer_);
        return rest;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) throw std::runtime_error("no line from the worker in time: " + err());
      pollfd p{stdout_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buf[65536];
      const ssize_t n = ::read(stdout_, buf, sizeof buf);
      if (n <= 0)
        eof_ = true;
      else
        buffer_.append(buf, static_cast<size_t>(n));
    }
  }

  // The exit code (-1 after a signal), waiting up to `timeout`; throws past it.
  int wait(std::chrono::seconds timeout = std::chrono::seconds(120)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!reaped_) {
      int st = 0;
      if (::waitpid(pid_, &st, WNOHANG) == pid_) {
        reaped_ = true;
        exit_code_ = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        break;
      }
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error("the worker did not exit in time");
      // Polls the exit as pgtest::Child::wait does; the deadline is the test's bound.
      ::poll(nullptr, 0, 20);
    }
    return exit_code_;
  }

  std::string err() const { return read_file(err_path_); }

 private:
  TempDir tmp_;
  fs::path err_path_;
  pid_t pid_ = -1;
  int stdin_ = -1, stdout_ = -1;
  std::string buffer_;
  bool eof_ = false, reaped_ = false;
  int exit_code_ = -1;
};

}  // namespace pgtest
