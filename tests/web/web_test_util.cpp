#include "web_test_util.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <regex>
#include <sstream>

extern char** environ;

namespace pg::webtest {

SeedSpec standard_spec() {
  SeedSpec s;
  s.commits = 16;
  s.step_at = 8;
  s.step_factor = 1.3;
  s.hostile = true;
  return s;
}

bool wait_for(const std::function<bool()>& cond, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return cond();
}

LiveServer::LiveServer(web::ServeOptions opt) {
  opt.port = 0;
  opt.host = "127.0.0.1";
  opt.log_requests = false;
  opt.threads = 4;
  server_ = std::make_unique<web::Server>(std::move(opt));
  port_ = server_->bind();
  thread_ = std::thread([this] { server_->serve(); });
  wait_for([this] { return server_->is_running(); });
}

LiveServer::~LiveServer() {
  server_->stop();
  thread_.join();
}

std::unique_ptr<httplib::Client> LiveServer::client() const {
  auto c = std::make_unique<httplib::Client>("127.0.0.1", port_);
  c->set_read_timeout(60);
  c->set_decompress(false);
  return c;
}

nlohmann::json get_json(const LiveServer& s, const std::string& target, int status) {
  auto r = s.client()->Get(target);
  EXPECT_TRUE(r) << target;
  if (!r) return {};
  EXPECT_EQ(r->status, status) << target << ": " << r->body;
  return nlohmann::json::parse(r->body, nullptr, false);
}

std::string get_page(const LiveServer& s, const std::string& target) {
  auto r = s.client()->Get(target);
  EXPECT_TRUE(r && r->status == 200) << target;
  return r ? r->body : "";
}

RawResponse raw_request(int port, const std::string& request, bool head_only) {
  RawResponse r;
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return r;
  }
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  std::string all;
  char buf[65536];
  timeval tv{30, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    all.append(buf, static_cast<size_t>(n));
    if (head_only && all.find("\r\n\r\n") != std::string::npos) break;
  }
  ::close(fd);
  const auto sep = all.find("\r\n\r\n");
  r.head = all.substr(0, sep);
  if (sep != std::string::npos) r.body = all.substr(sep + 4);
  std::smatch m;
  if (std::regex_search(r.head, m, std::regex(R"(^HTTP/1\.[01] (\d{3}))")))
    r.status = std::stoi(m[1]);
  return r;
}

RawResponse raw_get(int port, const std::string& target) {
  return raw_request(port,
                     "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
}

std::string perfgate_bin() { return PERFGATE_BIN; }

void write_token_file(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  std::filesystem::permissions(
      path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
      std::filesystem::perm_options::replace);
}

ServeProcess::ServeProcess(const std::vector<std::string>& args, const std::string& stderr_file)
    : stderr_file_(stderr_file) {
  std::vector<std::string> argv_s = {perfgate_bin(), "serve"};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  if (posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), environ) != 0) pid_ = -1;
  posix_spawn_file_actions_destroy(&fa);
}

ServeProcess::~ServeProcess() {
  if (pid_ > 0 && status_ < 0) {
    ::kill(pid_, SIGKILL);
    int st = 0;
    ::waitpid(pid_, &st, 0);
  }
}

std::string ServeProcess::stderr_text() const {
  std::ifstream in(stderr_file_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int ServeProcess::wait_listening(std::chrono::milliseconds timeout) {
  int port = -1;
  const std::regex re(R"(listening on http://[^ ]*:(\d+)/)");
  wait_for(
      [&] {
        std::smatch m;
        const std::string text = stderr_text();
        if (std::regex_search(text, m, re)) {
          port = std::stoi(m[1]);
          return true;
        }
        int st = 0;
        if (status_ < 0 && ::waitpid(pid_, &st, WNOHANG) == pid_)
          status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        return status_ >= 0;
      },
      timeout);
  return port;
}

int ServeProcess::wait_exit(std::chrono::milliseconds timeout) {
  wait_for(
      [&] {
        if (status_ >= 0) return true;
        int st = 0;
        if (::waitpid(pid_, &st, WNOHANG) == pid_)
          status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        return status_ >= 0;
      },
      timeout);
  return status_;
}

void ServeProcess::signal(int sig) {
  if (pid_ > 0 && status_ < 0) ::kill(pid_, sig);
}

int run_command(const std::vector<std::string>& args, std::string* out) {
  int pipefd[2];
  if (::pipe(pipefd) != 0) return -1;
  std::vector<std::string> a = args;
  std::vector<char*> argv;
  for (auto& s : a) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
  posix_spawn_file_actions_addclose(&fa, pipefd[0]);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(pipefd[1]);
  if (rc != 0) {
    ::close(pipefd[0]);
    return -1;
  }
  std::string data;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(pipefd[0], buf, sizeof buf);
    if (n <= 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  ::close(pipefd[0]);
  int st = 0;
  ::waitpid(pid, &st, 0);
  if (out) *out = data;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

}  // namespace pg::webtest
