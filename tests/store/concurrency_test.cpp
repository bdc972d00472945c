// A real second process writes while we read, and is killed with SIGKILL mid-run.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "store/store.h"
#include "test_util.h"

namespace pg {
namespace {

using Clock = std::chrono::steady_clock;

// The writer process, with a pipe to its stdin and one from its stdout.
class Writer {
 public:
  Writer(const std::string& db, int cells) {
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) throw std::runtime_error("pipe");
    pid_ = fork();
    if (pid_ == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      close(in[0]), close(in[1]), close(out[0]), close(out[1]);
      const std::string n = std::to_string(cells);
      execl(STORE_WRITER_BIN, STORE_WRITER_BIN, db.c_str(), n.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    to_ = in[1];
    from_ = out[0];
  }
  ~Writer() {
    if (to_ >= 0) close(to_);
    close(from_);
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  // Next line of its stdout, waiting at most `limit`; "" on timeout or end of output.
  std::string line(std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    const auto deadline = Clock::now() + limit;
    for (;;) {
      if (auto nl = buf_.find('\n'); nl != std::string::npos) {
        std::string l = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return l;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return "";
      pollfd p{from_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left)) <= 0) return "";
      char chunk[256];
      const ssize_t n = read(from_, chunk, sizeof chunk);
      if (n <= 0) return "";
      buf_.append(chunk, static_cast<size_t>(n));
    }
  }
  void say(const std::string& s) {
    ASSERT_EQ(write(to_, (s + "\n").data(), s.size() + 1), ssize_t(s.size() + 1));
  }
  void kill9() {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
    reaped_ = true;
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  }
  int wait_exit() {
    int status = 0;
    waitpid(pid_, &status, 0);
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  bool reaped_ = false;
  std::string buf_;
};

int64_t run_id_from(const std::string& line) {
  EXPECT_EQ(line.rfind("run ", 0), 0u) << line;
  return line.size() > 4 ? std::stoll(line.substr(4)) : 0;
}

TEST(Concurrency, ReadersNeverWaitForAWriterHoldingItsTransaction) {
  test::TempDir dir;
  const std::string db = dir.file("pg.db");
  { store::Store create(db); }  // so the read-only reader below has a file to open
  Writer w(db, 4);
  const int64_t id = run_id_from(w.line());
  store::Store reader(db);        // the way `serve` opens it
  store::Store viewer(db, true);  // the way `export` opens it
  for (int k = 0; k < 4; ++k) {
    ASSERT_EQ(w.line(), "holding " + std::to_string(k));
    // The writer now holds the write lock with cell k uncommitted. Reads must neither block
    // (the busy timeout is 5 s) nor see the uncommitted cell.
    for (store::Store* s : {&reader, &viewer}) {
      const auto t0 = Clock::now();
      auto run = s->load_run(id);
      const auto runs = s->list_runs({true, false});
      const auto series = s->list_series();
      const auto elapsed = Clock::now() - t0;
      EXPECT_LT(elapsed, std::chrono::milliseconds(500));
      ASSERT_TRUE(run);
      EXPECT_EQ(run->status, RunStatus::incomplete);
      EXPECT_EQ(run->cells.size(), static_cast<size_t>(k));
      EXPECT_EQ(series.size(), static_cast<size_t>(k));
      for (int c = 0; c < k; ++c) EXPECT_EQ(run->cells[c].key.batch_size, c + 1);
    }
    w.say("commit");
    ASSERT_EQ(w.line(), "committed " + std::to_string(k));
    EXPECT_EQ(reader.load_run(id)->cells.size(), static_cast<size_t>(k + 1));
    EXPECT_EQ(viewer.load_run(id)->cells.size(), static_cast<size_t>(k + 1));
  }
  ASSERT_EQ(w.line(), "finished");
  EXPECT_EQ(w.wait_exit(), 0);
  auto done = viewer.load_run(id);
  EXPECT_EQ(done->status, RunStatus::complete);
  EXPECT_EQ(done->cells[3].samples.decode_ms.size(), 3u);
  EXPECT_EQ(done->cells[3].samples.decode_ms[0].size(), 8u);
}

TEST(Concurrency, AWriterKilledMidRunLeavesAnIntactIncompleteRun) {
  test::TempDir dir;
  const std::string db = dir.file("pg.db");
  Writer w(db, 10);
  const int64_t id = run_id_from(w.line());
  for (int k = 0; k < 3; ++k) {
    ASSERT_EQ(w.line(), "holding " + std::to_string(k));
    w.say("commit");
    ASSERT_EQ(w.line(), "committed " + std::to_string(k));
  }
  ASSERT_EQ(w.line(), "holding 3");  // mid-transaction, with the write lock held
  w.kill9();

  store::Store s(db);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(s.handle(), "PRAGMA integrity_check", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "ok");
  sqlite3_finalize(st);
  auto run = s.load_run(id);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->status, RunStatus::incomplete);
  EXPECT_TRUE(run->finished_at.empty());
  ASSERT_EQ(run->cells.size(), 3u);
  for (int c = 0; c < 3; ++c) {
    const CellResult expect = test::sample_cell(c + 1, 16, 3, 9, 1.0 + c);
    EXPECT_EQ(run->cells[c].key, expect.key);
    EXPECT_EQ(run->cells[c].samples.decode_ms, expect.samples.decode_ms);
    EXPECT_EQ(run->cells[c].metrics, expect.metrics);
  }
  // The lock died with the writer: the next runner writes at once.
  const auto t0 = Clock::now();
  const int64_t next = s.begin_run(test::sample_git(), test::sample_env(), "{}");
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(1));
  EXPECT_GT(next, id);
}

}  // namespace
}  // namespace pg
