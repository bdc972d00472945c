// `perfgate run --submit URL --token-file F` end to end: a real tiny sweep on the CPU, sent to a
// real `perfgate serve`, compared with the runner's own local copy.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>

#include "store/store.h"
#include "web_fixture.h"

namespace pg::webtest {
namespace {

bool runner_can_submit() {
  std::string help;
  run_command({perfgate_bin(), "run", "--help"}, &help);
  return help.find("--submit") != std::string::npos;
}

class Submit : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!runner_can_submit()) GTEST_SKIP() << "perfgate run has no --submit in this build";
    server_db_ = dir_.file("server.db");
    { store::Store s(server_db_); }
    token_file_ = dir_.file("token");
    write_token_file(token_file_, kToken + std::string("\n"));
    server_ = std::make_unique<ServeProcess>(
        std::vector<std::string>{"--db", server_db_, "--port", "0", "--token-file", token_file_},
        dir_.file("serve.log"));
    port_ = server_->wait_listening();
    ASSERT_GT(port_, 0) << server_->stderr_text();
  }
  void TearDown() override {
    if (server_) {
      server_->signal(SIGTERM);
      EXPECT_EQ(server_->wait_exit(), 0);
    }
  }
  int run_sweep(const std::string& local_db, const std::string& token_file, std::string* out) {
    return run_command(
        {perfgate_bin(),  "run",      "--model",    "tiny",
         "--device",      "cpu",      "--dtype",    "fp32",
         "--batch-sizes", "1,2",      "--seq-lens", "8",
         "--gen-tokens",  "4",        "--warmup",   "1",
         "--reps",        "3",        "--repo",     dir_.path().string(),
         "--db",          local_db,   "--submit",   "http://127.0.0.1:" + std::to_string(port_),
         "--token-file",  token_file, "--quiet"},
        out);
  }
  TempDir dir_;
  std::string server_db_, token_file_;
  std::unique_ptr<ServeProcess> server_;
  int port_ = 0;
};

TEST_F(Submit, TheSubmittedRunIsTheLocalRun) {
  std::string out;
  const std::string local = dir_.file("local.db");
  ASSERT_EQ(run_sweep(local, token_file_, &out), 0) << out << server_->stderr_text();
  httplib::Client c("127.0.0.1", port_);
  auto list = nlohmann::json::parse(c.Get("/api/v1/runs")->body);
  ASSERT_EQ(list["runs"].size(), 1u);
  const int64_t id = list["runs"][0]["id"];
  auto remote = nlohmann::json::parse(c.Get("/api/v1/runs/" + std::to_string(id))->body);
  std::string exported;
  ASSERT_EQ(run_command({perfgate_bin(), "export", "--db", local, "--format", "json"}, &exported),
            0);
  auto local_doc = nlohmann::json::parse(exported);
  ASSERT_EQ(local_doc["runs"].size(), 1u);
  const auto& mine = local_doc["runs"][0];
  EXPECT_EQ(remote["git"], mine["git"]);
  EXPECT_EQ(remote["env"], mine["env"]);
  ASSERT_EQ(remote["cells"].size(), 2u);
  EXPECT_EQ(remote["cells"], mine["cells"]);
  // The server's views see it at once.
  EXPECT_EQ(nlohmann::json::parse(c.Get("/api/v1/series")->body)["series"].size(), 2u);
}

TEST_F(Submit, AWrongTokenFailsTheSubmitButKeepsTheLocalRun) {
  const std::string wrong = dir_.file("wrong-token");
  write_token_file(wrong, "not-the-token-0123456789\n");
  std::string out;
  const std::string local = dir_.file("local.db");
  EXPECT_NE(run_sweep(local, wrong, &out), 0) << out;
  EXPECT_EQ(store::Store(local).run_count(), 1);
  httplib::Client c("127.0.0.1", port_);
  EXPECT_EQ(nlohmann::json::parse(c.Get("/api/v1/runs")->body)["runs"].size(), 0u);
}

}  // namespace
}  // namespace pg::webtest
