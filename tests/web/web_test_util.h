// Shared by the web suites: temporary databases, a real server on a loopback port (in-process or
// as a `perfgate serve` child), and raw HTTP for requests a well-behaved client would never send.
#pragma once
#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "seed_data.h"
#include "tests/common/temp_dir.h"
#include "web/server.h"

namespace pg::webtest {

using TempDir = pg::testing::TempDir;

// The suites' standard history: 16 commits on one environment, tpot 30% slower from commit 8,
// hostile subjects and branch names, two cells per run (batch 1 and 4).
SeedSpec standard_spec();

// Polls `cond` until it holds or `timeout` passes; returns whether it held.
bool wait_for(const std::function<bool()>& cond,
              std::chrono::milliseconds timeout = std::chrono::seconds(20));

// A server in this process on an ephemeral loopback port, stopped and joined on destruction.
class LiveServer {
 public:
  explicit LiveServer(web::ServeOptions opt);
  ~LiveServer();
  int port() const { return port_; }
  std::unique_ptr<httplib::Client> client() const;

 private:
  std::unique_ptr<web::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

// GET `target` from a live server; a transport error or another status is a test failure.
// The JSON answer (expecting `status`), or the body of a page (expecting 200).
nlohmann::json get_json(const LiveServer& s, const std::string& target, int status = 200);
std::string get_page(const LiveServer& s, const std::string& target);

struct RawResponse {
  int status = 0;
  std::string head, body;
};
// Sends `request` bytes as they are and reads until the server closes (or, with head_only, until
// the end of the response head: a server keeps a connection open after a request it could not
// parse).
RawResponse raw_request(int port, const std::string& request, bool head_only = false);
// "GET <target> HTTP/1.1" with Host and Connection: close.
RawResponse raw_get(int port, const std::string& target);

// A `perfgate serve` child process; stderr goes to a file the test can read.
class ServeProcess {
 public:
  ServeProcess(const std::vector<std::string>& args, const std::string& stderr_file);
  ~ServeProcess();  // SIGKILL if still running
  // Waits for the "listening on" line; returns the port, or -1 if the process exited first.
  int wait_listening(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // Waits for exit; returns the exit code, 128+signal when killed, -1 on timeout.
  int wait_exit(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  void signal(int sig);
  int pid() const { return pid_; }
  std::string stderr_text() const;

 private:
  int pid_ = -1;
  int status_ = -1;
  std::string stderr_file_;
};

// Runs a command; returns its exit code and stdout.
int run_command(const std::vector<std::string>& args, std::string* out);

std::string perfgate_bin();

// Writes a token file as an operator should: mode 0600 (serve and run refuse one others may read).
void write_token_file(const std::string& path, const std::string& text);

}  // namespace pg::webtest
