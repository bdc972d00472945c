// Test helpers: real child processes (git, perfgate) and real temporary directories.
// Header-only; used by the fingerprint and end-to-end suites of tests/runner.
#pragma once
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>
#include "tests/common/temp_dir.h"

namespace pgtest {

namespace fs = std::filesystem;

// A fresh directory removed with everything in it when the test ends.
using TempDir = pg::testing::TempDir;

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_file(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

struct ProcessOptions {
  std::string cwd;               // empty = inherit
  std::vector<std::string> env;  // extra NAME=VALUE entries
  std::string stdin_file = "/dev/null";
};

// A child process whose stdout/stderr go to files; wait() or kill it.
class Child {
 public:
  Child(const std::vector<std::string>& argv, const ProcessOptions& opt = {}) {
    out_path_ = tmp_.path() / "stdout";
    err_path_ = tmp_.path() / "stderr";
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      if (!opt.cwd.empty() && ::chdir(opt.cwd.c_str()) != 0) ::_exit(127);
      int in = ::open(opt.stdin_file.c_str(), O_RDONLY);
      int o = ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int e = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (in < 0 || o < 0 || e < 0) ::_exit(127);
      ::dup2(in, 0);
      ::dup2(o, 1);
      ::dup2(e, 2);
      for (const auto& kv : opt.env) ::putenv(const_cast<char*>(kv.c_str()));
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execvp(args[0], args.data());
      ::_exit(127);
    }
  }
  ~Child() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      int st;
      ::waitpid(pid_, &st, 0);
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }

  // Waits up to `timeout`; returns the raw wait status, or throws on timeout (after killing).
  int wait(std::chrono::seconds timeout = std::chrono::seconds(120)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      int st = 0;
      pid_t r = ::waitpid(pid_, &st, WNOHANG);
      if (r == pid_) {
        reaped_ = true;
        status_ = st;
        return st;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &st, 0);
        reaped_ = true;
        throw std::runtime_error("child did not finish in time");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  bool running() {
    if (reaped_) return false;
    int st = 0;
    if (::waitpid(pid_, &st, WNOHANG) == pid_) {
      reaped_ = true;
      status_ = st;
      return false;
    }
    return true;
  }
  void signal(int sig) { ::kill(pid_, sig); }
  int status() const { return status_; }
  std::string out() const { return read_file(out_path_); }
  std::string err() const { return read_file(err_path_); }

 private:
  TempDir tmp_;
  fs::path out_path_, err_path_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
};

struct Result {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string out, err;
};

inline Result run(const std::vector<std::string>& argv, const ProcessOptions& opt = {},
                  std::chrono::seconds timeout = std::chrono::seconds(120)) {
  Child c(argv, opt);
  const int st = c.wait(timeout);
  Result r;
  if (WIFEXITED(st)) r.exit_code = WEXITSTATUS(st);
  if (WIFSIGNALED(st)) r.signal = WTERMSIG(st);
  r.out = c.out();
  r.err = c.err();
  return r;
}

// git with a fixed identity and no user/system configuration, so tests do not depend on the host.
inline Result git(const fs::path& dir, std::vector<std::string> args,
                  std::vector<std::string> env = {}) {
  std::vector<std::string> argv = {"git",
                                   "-c",
                                   "user.name=perfgate test",
                                   "-c",
                                   "user.email=test@perfgate.invalid",
                                   "-c",
                                   "commit.gpgsign=false",
                                   "-c",
                                   "init.defaultBranch=main"};
  argv.insert(argv.end(), args.begin(), args.end());
  env.push_back("GIT_CONFIG_NOSYSTEM=1");
  env.push_back("GIT_CONFIG_GLOBAL=/dev/null");
  Result r = run(argv, {dir.string(), env, "/dev/null"});
  if (r.exit_code != 0)
    throw std::runtime_error("git failed: " + r.err + " (args: " + args.front() + ")");
  return r;
}

inline std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// Polls `cond` every 20 ms until it holds or `timeout` passes; returns whether it held.
template <typename F>
bool eventually(F cond, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return cond();
}

}  // namespace pgtest
