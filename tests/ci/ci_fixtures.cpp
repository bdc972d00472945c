#include "ci_fixtures.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace pg::test {

CommandResult run_command(const std::vector<std::string>& argv, const std::string& cwd) {
  int out_pipe[2], err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) throw std::runtime_error("pipe failed");
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    close(out_pipe[0]);
    close(err_pipe[0]);
    close(out_pipe[1]);
    close(err_pipe[1]);
    if (chdir(cwd.c_str()) != 0) _exit(127);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  CommandResult r;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string git(const std::string& repo, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"git", "-C", repo};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandResult r = run_command(argv);
  if (r.exit_code != 0) {
    std::string cmd;
    for (const auto& a : args) cmd += " " + a;
    throw std::runtime_error("git" + cmd + " failed: " + r.err);
  }
  while (!r.out.empty() && (r.out.back() == '\n' || r.out.back() == ' ')) r.out.pop_back();
  return r.out;
}

void git_init(const std::string& repo) {
  std::filesystem::create_directories(repo);
  git(repo, {"init", "-q", "-b", "main"});
  git(repo, {"config", "user.email", "ci@perfgate.test"});
  git(repo, {"config", "user.name", "perfgate ci"});
  git(repo, {"config", "commit.gpgsign", "false"});
}

std::string git_commit(const std::string& repo, const std::string& file, const std::string& content,
                       const std::string& message) {
  std::ofstream(repo + "/" + file) << content;
  git(repo, {"add", "-A"});
  git(repo, {"commit", "-q", "-m", message});
  return git(repo, {"rev-parse", "HEAD"});
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

CellKey cpu_key(int batch, int seq) {
  CellKey k;
  k.model = "tiny";
  k.dtype = "fp32";
  k.batch_size = batch;
  k.seq_len = seq;
  k.gen_tokens = 8;
  k.kv_cache = true;
  k.attention = "math";
  k.cuda_graphs = false;
  k.device = "cpu";
  return k;
}

Environment cpu_env() {
  return {{"device", "cpu"},   {"driver", ""},      {"cuda", ""},     {"cudnn", ""},
          {"torch", "2.11.0"}, {"cpu", "test cpu"}, {"threads", "2"}, {"hostname", "ci"}};
}

Run synthetic_run(const std::string& commit, const std::vector<CellKey>& keys,
                  const std::vector<double>& tpot, const Environment& env) {
  Run run;
  run.status = RunStatus::complete;
  run.started_at = "2025-01-01T00:00:00Z";
  run.finished_at = "2025-01-01T00:01:00Z";
  run.git.commit = commit;
  run.git.branch = "main";
  run.git.subject = "synthetic " + commit.substr(0, 7);
  run.git.time = "2025-01-01T00:00:00Z";
  run.git.repo_path = "/synthetic";
  run.env = env;
  for (const auto& key : keys) {
    CellResult cell;
    cell.key = key;
    for (double t : tpot) {
      cell.samples.prefill_ms.push_back(5 * t);
      cell.samples.decode_ms.push_back(std::vector<double>(key.gen_tokens - 1, t));
    }
    std::vector<double> sorted = tpot;
    std::sort(sorted.begin(), sorted.end());
    size_t n = sorted.size();
    cell.metrics["tpot_ms"] = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    cell.metrics["prefill_ms"] = 5 * cell.metrics["tpot_ms"];
    run.cells.push_back(cell);
  }
  return run;
}

}  // namespace pg::test
