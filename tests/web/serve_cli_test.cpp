// `perfgate serve` as a child process: exit codes, request log, clean shutdown on signals, and
// serving while another process writes the same database.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>

#include "store/run_json.h"
#include "store/store.h"
#include "web_fixture.h"

namespace pg::webtest {
namespace {

class ServeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.file("serve.db");
    store::Store s(db_);
    SeedSpec spec = standard_spec();
    spec.commits = 6;
    s.import_runs(make_runs(spec));
  }
  std::string log_file(const std::string& name) { return dir_.file(name + ".log"); }
  TempDir dir_;
  std::string db_;
};

TEST_F(ServeCli, ServesLogsOneLinePerRequestAndStopsCleanlyOnSigterm) {
  ServeProcess p({"--db", db_, "--port", "0"}, log_file("term"));
  const int port = p.wait_listening();
  ASSERT_GT(port, 0) << p.stderr_text();
  httplib::Client c("127.0.0.1", port);
  auto r = c.Get("/healthz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(nlohmann::json::parse(r->body)["runs"], 6) << r->body;
  EXPECT_EQ(c.Get("/api/v1/runs/nope")->status, 400);
  // Each line is written once its response is out, so the two may land in either order.
  EXPECT_TRUE(wait_for([&] {
    const std::string log = p.stderr_text();
    return log.find("GET /api/v1/runs/nope 400") != std::string::npos &&
           log.find("GET /healthz 200") != std::string::npos;
  })) << p.stderr_text();
  p.signal(SIGTERM);
  EXPECT_EQ(p.wait_exit(), 0) << p.stderr_text();
  EXPECT_NE(p.stderr_text().find("SIGTERM received"), std::string::npos) << p.stderr_text();
}

// A client's path reaches the request log as one inert line (docs/FORMATS.md, "Text from
// measured code"): the log may be a CI job's, read for workflow commands.
TEST_F(ServeCli, TheRequestLogPrintsAClientsPathInert) {
  ServeProcess p({"--db", db_, "--port", "0"}, log_file("inert"));
  const int port = p.wait_listening();
  ASSERT_GT(port, 0) << p.stderr_text();
  httplib::Client c("127.0.0.1", port);
  // "#" and "[" percent-encoded: a raw "#" would start the URL's fragment, never sent.
  ASSERT_TRUE(c.Get("/api/v1/runs/x%0A::error::pwned%1B%5B2J%20%23%23%5Berror%5Dy"));
  ASSERT_TRUE(wait_for([&] { return p.stderr_text().find("pwned") != std::string::npos; }))
      << p.stderr_text();
  p.signal(SIGTERM);
  EXPECT_EQ(p.wait_exit(), 0) << p.stderr_text();
  const std::string log = p.stderr_text();
  EXPECT_EQ(log.find('\x1b'), std::string::npos) << log;
  EXPECT_EQ(log.find("##["), std::string::npos) << log;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) EXPECT_NE(line.rfind("::", 0), 0u) << line;
}

TEST_F(ServeCli, StopsCleanlyOnSigintWithAKeepAliveConnectionOpen) {
  ServeProcess p({"--db", db_, "--port", "0", "--quiet"}, log_file("int"));
  const int port = p.wait_listening();
  ASSERT_GT(port, 0) << p.stderr_text();
  httplib::Client c("127.0.0.1", port);
  c.set_keep_alive(true);
  ASSERT_EQ(c.Get("/api/v1/series")->status, 200);  // the connection stays open
  p.signal(SIGINT);
  EXPECT_EQ(p.wait_exit(std::chrono::seconds(15)), 0) << p.stderr_text();
  EXPECT_EQ(p.stderr_text().find("GET /api/v1/series"), std::string::npos);  // --quiet
}

TEST_F(ServeCli, MissingDatabaseIsUsageError) {
  ServeProcess p({"--db", dir_.file("nope.db"), "--port", "0"}, log_file("missing"));
  EXPECT_EQ(p.wait_exit(), 2);
  EXPECT_NE(p.stderr_text().find("nope.db"), std::string::npos) << p.stderr_text();
  EXPECT_FALSE(std::filesystem::exists(dir_.file("nope.db")));  // never created
}

TEST_F(ServeCli, NotAPerfgateDatabaseIsUsageErrorAndUntouched) {
  const std::string path = dir_.file("notes.txt");
  std::ofstream(path) << "just some text\n";
  ServeProcess p({"--db", path, "--port", "0"}, log_file("foreign"));
  EXPECT_EQ(p.wait_exit(), 2) << p.stderr_text();
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "just some text");
}

TEST_F(ServeCli, PortInUseIsRuntimeFailure) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const int port = ntohs(addr.sin_port);
  ServeProcess p({"--db", db_, "--port", std::to_string(port)}, log_file("inuse"));
  EXPECT_EQ(p.wait_exit(), 4);
  EXPECT_NE(p.stderr_text().find("in use"), std::string::npos) << p.stderr_text();
  ::close(fd);
}

TEST_F(ServeCli, UnknownHostIsRuntimeFailure) {
  ServeProcess p({"--db", db_, "--host", "no-such-host.invalid", "--port", "0"}, log_file("host"));
  EXPECT_EQ(p.wait_exit(), 4);
  EXPECT_NE(p.stderr_text().find("no-such-host.invalid"), std::string::npos) << p.stderr_text();
}

TEST_F(ServeCli, BadFlagsAreUsageErrors) {
  ServeProcess port({"--db", db_, "--port", "70000"}, log_file("port"));
  EXPECT_EQ(port.wait_exit(), 2);
  ServeProcess token({"--db", db_, "--token-file", dir_.file("absent")}, log_file("token"));
  EXPECT_EQ(token.wait_exit(), 2);
  EXPECT_NE(token.stderr_text().find("--token-file"), std::string::npos) << token.stderr_text();
  const std::string empty = dir_.file("empty-token");
  write_token_file(empty, "\n");
  ServeProcess empty_token({"--db", db_, "--token-file", empty}, log_file("empty"));
  EXPECT_EQ(empty_token.wait_exit(), 2);
  // The gate settings follow compare's rules (app/gate_settings.h) and name serve's flags.
  for (const auto& [flag, value] :
       std::vector<std::pair<std::string, std::string>>{{"--alpha", "0"},
                                                        {"--alpha", "1.5"},
                                                        {"--min-effect", "-0.1"},
                                                        {"--min-effect", "inf"}}) {
    ServeProcess bad({"--db", db_, "--port", "0", flag, value}, log_file("gate"));
    EXPECT_EQ(bad.wait_exit(), 2) << flag << " " << value;
    EXPECT_NE(bad.stderr_text().find(flag + " must"), std::string::npos) << bad.stderr_text();
  }
}

TEST_F(ServeCli, TokenFileEnablesIngest) {
  const std::string tf = dir_.file("token");
  write_token_file(tf, kToken + std::string("\n"));
  ServeProcess p({"--db", db_, "--port", "0", "--token-file", tf}, log_file("ingest"));
  const int port = p.wait_listening();
  ASSERT_GT(port, 0) << p.stderr_text();
  SeedSpec spec = standard_spec();
  spec.first_commit = 500;
  httplib::Client c("127.0.0.1", port);
  auto r = c.Post("/api/v1/runs", {{"Authorization", std::string("Bearer ") + kToken}},
                  store::runs_to_json({make_run(spec, 0, 0, 0)}, true), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 201) << r->body;
  p.signal(SIGTERM);
  EXPECT_EQ(p.wait_exit(), 0);
}

// A runner in another connection keeps committing cells while clients read: every read succeeds
// and the new data shows up.
TEST_F(ServeCli, ServesWhileAnotherProcessWrites) {
  ServeProcess p({"--db", db_, "--port", "0", "--quiet"}, log_file("concurrent"));
  const int port = p.wait_listening();
  ASSERT_GT(port, 0) << p.stderr_text();
  httplib::Client c("127.0.0.1", port);
  auto list = nlohmann::json::parse(c.Get("/api/v1/series")->body);
  const std::string target =
      "/api/v1/series/" + std::to_string(list["series"][0]["id"].get<int64_t>());
  const size_t before = nlohmann::json::parse(c.Get(target)->body)["points"].size();

  std::atomic<bool> done{false};
  std::thread writer([&] {
    store::Store s(db_);
    SeedSpec spec = standard_spec();
    spec.first_commit = 100;
    for (int i = 0; i < 20; ++i) {
      pg::Run run = make_run(spec, i, 0, 0);
      const int64_t id = s.begin_run(run.git, run.env, run.config_json);
      for (const auto& cell : run.cells) s.add_cell(id, cell);
      s.finish_run(id, RunStatus::complete);
    }
    done = true;
  });
  int requests = 0, failures = 0;
  while (!done.load() || requests < 20) {
    for (const char* t : {"/api/v1/series", "/", "/api/v1/runs"}) {
      auto r = c.Get(t);
      ++requests;
      if (!r || r->status != 200) ++failures;
    }
    auto r = c.Get(target);
    if (!r || r->status != 200) ++failures;
  }
  writer.join();
  EXPECT_EQ(failures, 0) << "of " << requests;
  // 15 of the 20 commits are on main (standard_spec puts every fourth, from 1, on a feature
  // branch, which the trend leaves out).
  EXPECT_EQ(nlohmann::json::parse(c.Get(target)->body)["points"].size(), before + 15);
  p.signal(SIGTERM);
  EXPECT_EQ(p.wait_exit(), 0) << p.stderr_text();
}

}  // namespace
}  // namespace pg::webtest
