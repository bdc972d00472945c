// `perfgate serve` and `perfgate run --submit` as child processes: token files are checked like
// ssh keys, and SIGTERM ends the server at any moment, start-up and slow clients included.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <fstream>

#include "raw_client.h"
#include "store/store.h"
#include "web_fixture.h"

namespace pg::webtest {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class ServeProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.file("p.db");
    store::Store s(db_);
    SeedSpec spec = standard_spec();
    spec.commits = 3;
    s.import_runs(make_runs(spec));
  }
  // `perfgate run --submit ... --token-file path`: exit code and output (the token file is
  // checked while the flags are, before anything runs).
  int run_with_token(const std::string& path, std::string* out) {
    return run_command({"/bin/sh", "-c",
                        "exec \"$0\" run --model tiny --device cpu --db \"$1\" --submit "
                        "http://127.0.0.1:9 --token-file \"$2\" 2>&1",
                        perfgate_bin(), dir_.file("local.db"), path},
                       out);
  }
  TempDir dir_;
  std::string db_;
};

TEST_F(ServeProcessTest, ATokenFileOthersMayReadIsRefusedByServeAndRunNamingIt) {
  const std::string tf = dir_.file("open-token");
  write_token_file(tf, std::string(kToken) + "\n");
  ::chmod(tf.c_str(), 0644);
  ServeProcess p({"--db", db_, "--port", "0", "--token-file", tf}, dir_.file("open.log"));
  EXPECT_EQ(p.wait_exit(), 2);
  const std::string err = p.stderr_text();
  EXPECT_NE(err.find(tf), std::string::npos) << err;
  EXPECT_NE(err.find("permissions 0644 are too open"), std::string::npos) << err;
  EXPECT_NE(err.find("chmod 600"), std::string::npos) << err;

  std::string out;
  EXPECT_EQ(run_with_token(tf, &out), 2) << out;
  EXPECT_NE(out.find(tf), std::string::npos) << out;
  EXPECT_NE(out.find("too open"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(dir_.file("local.db")));  // nothing ran, nothing stored

  ::chmod(tf.c_str(), 0600);  // the fix the message names
  ServeProcess ok({"--db", db_, "--port", "0", "--token-file", tf}, dir_.file("ok.log"));
  EXPECT_GT(ok.wait_listening(), 0) << ok.stderr_text();
}

TEST_F(ServeProcessTest, DevicesAndOversizedTokenFilesAreRefusedAtOnce) {
  const std::string big = dir_.file("big-token");
  write_token_file(big, std::string(8192, 'a'));
  for (const std::string& path : {std::string("/dev/zero"), big}) {
    const auto t0 = Clock::now();
    ServeProcess p({"--db", db_, "--port", "0", "--token-file", path}, dir_.file("dev.log"));
    EXPECT_EQ(p.wait_exit(10s), 2) << path;
    EXPECT_LT(Clock::now() - t0, 10s);
    EXPECT_NE(p.stderr_text().find(path), std::string::npos) << p.stderr_text();
    std::string out;
    EXPECT_EQ(run_with_token(path, &out), 2) << out;
    EXPECT_NE(out.find(path), std::string::npos) << out;
  }
  ServeProcess p({"--db", db_, "--port", "0", "--token-file", "/dev/zero"}, dir_.file("z.log"));
  EXPECT_EQ(p.wait_exit(10s), 2);
  EXPECT_NE(p.stderr_text().find("not a regular file"), std::string::npos) << p.stderr_text();
}

// Exit status of a stopped server: 0 when it handled the signal, 128+15 when the signal came
// before it could (the default action); either way it must be gone within a second.
bool stopped(int status) { return status == 0 || status == 128 + SIGTERM; }

// Whether process `pid` blocks SIGTERM, i.e. serve's signal watcher took over (SigBlk in /proc).
bool blocks_sigterm(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("SigBlk:", 0) == 0)
      return (std::stoull(line.substr(7), nullptr, 16) >> (SIGTERM - 1)) & 1;
  return false;
}

TEST_F(ServeProcessTest, SigtermAtAnyMomentOfStartUpStopsTheServerWithinASecond) {
  const std::string tf = dir_.file("token");
  write_token_file(tf, std::string(kToken) + "\n");
  const std::vector<std::string> args = {"--db", db_, "--port", "0", "--token-file", tf};
  // At once: the signal lands while the binary is still loading (its default action ends it).
  {
    ServeProcess p(args, dir_.file("early.log"));
    p.signal(SIGTERM);
    EXPECT_TRUE(stopped(p.wait_exit(1s))) << p.stderr_text();
  }
  // As soon as the watcher blocks SIGTERM: the database and assets are still being prepared
  // (the server logged no "listening" line yet). Before, such a signal was taken and the server
  // went on serving.
  int in_start_up = 0;
  for (int trial = 0; trial < 3; ++trial) {
    ServeProcess p(args, dir_.file("start.log"));
    ASSERT_TRUE(wait_for([&] { return blocks_sigterm(p.pid()); }, 30s)) << p.stderr_text();
    if (p.stderr_text().find("listening") == std::string::npos) ++in_start_up;
    p.signal(SIGTERM);
    const auto t0 = Clock::now();
    EXPECT_EQ(p.wait_exit(5s), 0) << p.stderr_text();
    EXPECT_LT(Clock::now() - t0, 1s) << "trial " << trial;
  }
  EXPECT_GT(in_start_up, 0) << "no trial caught the start-up window";
  // Once listening.
  ServeProcess p(args, dir_.file("listening.log"));
  ASSERT_GT(p.wait_listening(), 0) << p.stderr_text();
  p.signal(SIGTERM);
  const auto t0 = Clock::now();
  EXPECT_EQ(p.wait_exit(5s), 0) << p.stderr_text();
  EXPECT_LT(Clock::now() - t0, 1s);
}

TEST_F(ServeProcessTest, SigtermWithSlowAndKeptAliveClientsStopsWithinASecond) {
  ServeProcess p({"--db", db_, "--port", "0", "--quiet"}, dir_.file("slow.log"));
  const int port = p.wait_listening();
  ASSERT_GT(port, 0) << p.stderr_text();
  std::vector<std::unique_ptr<RawConn>> clients;
  for (int i = 0; i < 12; ++i) {  // heads that never finish
    clients.push_back(std::make_unique<RawConn>(port, "127.0.0.4"));
    clients.back()->send("GET / HTTP/1.1\r\nHost: x\r\n");
  }
  auto kept = std::make_unique<RawConn>(port);
  kept->send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_EQ(kept->read_response().status, 200);  // and the connection stays open
  p.signal(SIGTERM);
  const auto t0 = Clock::now();
  EXPECT_EQ(p.wait_exit(5s), 0) << p.stderr_text();
  EXPECT_LT(Clock::now() - t0, 1s);
}

}  // namespace
}  // namespace pg::webtest
