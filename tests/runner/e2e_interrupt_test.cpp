// A real `perfgate run` interrupted half-way (kill -9, SIGINT), read while it writes, and drawn
// on a real pseudo-terminal.
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <sqlite3.h>

#include <nlohmann/json.hpp>

#include "e2e_process.h"
#include "store/store.h"

namespace {

using nlohmann::json;
using pgtest::TempDir;
using namespace std::chrono_literals;

const std::string kPerfgate = PERFGATE_BIN;

// The first cell is tiny; the last one is far bigger (tens of seconds on a laptop CPU), so once
// the first cell is committed the runner is certain to be busy for a good while longer. The tests
// stop it before it gets there, so its cost is never paid.
std::vector<std::string> slow_sweep(const std::string& db) {
  return {kPerfgate,    "run",   "--model",      "tiny", "--device", "cpu", "--batch-sizes", "1,32",
          "--seq-lens", "8,960", "--gen-tokens", "32",   "--warmup", "1",   "--reps",        "30",
          "--db",       db,      "--repo",       "."};
}

// Cells of run 1 committed so far, read the way any reader would (read-only, never waiting).
size_t committed_cells(const std::string& db) {
  if (!std::filesystem::exists(db)) return 0;
  try {
    pg::store::Store store(db, /*read_only=*/true);
    auto run = store.load_run(1, {true, false});
    return run ? run->cells.size() : 0;
  } catch (const std::exception&) {
    return 0;  // the file exists but the schema is not written yet
  }
}

std::string integrity(const std::string& db) {
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return "open";
  std::string result;
  sqlite3_exec(
      h, "PRAGMA integrity_check",
      [](void* out, int, char** values, char**) {
        *static_cast<std::string*>(out) += values[0] ? values[0] : "";
        return 0;
      },
      &result, nullptr);
  sqlite3_close(h);
  return result;
}

json export_all(const std::string& cwd, const std::string& db) {
  const auto r = pgtest::run({kPerfgate, "export", "--db", db, "--format", "json"},
                             {cwd, {}, "/dev/null"}, 30s);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

TEST(RunInterrupted, KillNineKeepsFinishedCellsAndAnIncompleteRun) {
  TempDir dir;
  const std::string db = (dir / "k.db").string();
  pgtest::Child runner(slow_sweep(db), {dir.str(), {}, "/dev/null"});
  ASSERT_TRUE(pgtest::eventually([&] { return committed_cells(db) >= 1; }, 120s));

  // A reader while the runner is writing: answers promptly, and sees the incomplete run.
  const auto t0 = std::chrono::steady_clock::now();
  const json during = export_all(dir.str(), db);
  const double read_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(read_seconds, 5.0);
  ASSERT_TRUE(runner.running()) << "the sweep finished before the test could interrupt it";
  ASSERT_EQ(during["runs"].size(), 1u);
  EXPECT_EQ(during["runs"][0]["status"], "incomplete");
  EXPECT_GE(during["runs"][0]["cells"].size(), 1u);

  runner.signal(SIGKILL);
  const int st = runner.wait(30s);
  ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

  EXPECT_EQ(integrity(db), "ok");
  const json after = export_all(dir.str(), db);
  ASSERT_EQ(after["runs"].size(), 1u);
  const json& run = after["runs"][0];
  EXPECT_EQ(run["status"], "incomplete");
  ASSERT_GE(run["cells"].size(), 1u);
  EXPECT_LT(run["cells"].size(), 4u);
  // The finished cells are whole: every repetition's samples are there.
  for (const json& cell : run["cells"]) {
    EXPECT_EQ(cell["status"], "ok");
    EXPECT_EQ(cell["samples"]["prefill_ms"].size(), 30u);
    EXPECT_EQ(cell["samples"]["decode_ms"].size(), 30u);
  }
  EXPECT_EQ(run["cells"][0]["key"]["batch_size"], 1);
  EXPECT_EQ(run["cells"][0]["key"]["seq_len"], 8);
}

TEST(RunInterrupted, SigintStopsAfterTheCurrentCellAndExitsFour) {
  TempDir dir;
  const std::string db = (dir / "i.db").string();
  pgtest::Child runner(slow_sweep(db), {dir.str(), {}, "/dev/null"});
  ASSERT_TRUE(pgtest::eventually([&] { return committed_cells(db) >= 1; }, 120s));
  ASSERT_TRUE(runner.running());
  runner.signal(SIGINT);
  const int st = runner.wait(120s);
  ASSERT_TRUE(WIFEXITED(st)) << "a signal must not kill the runner: " << runner.err();
  EXPECT_EQ(WEXITSTATUS(st), 4) << runner.err();
  EXPECT_NE(runner.err().find("stopping after the current cell"), std::string::npos);
  EXPECT_NE(runner.err().find("run 1 stored as incomplete"), std::string::npos) << runner.err();
  EXPECT_NE(runner.out().find("Stored run 1 in"), std::string::npos);
  EXPECT_EQ(integrity(db), "ok");
  const json run = export_all(dir.str(), db)["runs"][0];
  EXPECT_EQ(run["status"], "incomplete");
  EXPECT_GE(run["cells"].size(), 1u);
  EXPECT_LT(run["cells"].size(), 4u);
}

// stderr on a terminal: a single line redrawn with \r, with the bar, the count and an ETA.
TEST(RunProgress, BarOnATerminal) {
  TempDir dir;
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (chdir(dir.str().c_str()) != 0) _exit(127);
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, STDOUT_FILENO);  // only stderr stays on the terminal
    execl(kPerfgate.c_str(), kPerfgate.c_str(), "run", "--model", "tiny", "--device", "cpu",
          "--batch-sizes", "1,2", "--seq-lens", "8", "--gen-tokens", "3", "--warmup", "0", "--reps",
          "2", "--db", "t.db", "--repo", ".", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::string screen;
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{master, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    const ssize_t n = read(master, buf, sizeof buf);
    if (n <= 0) break;  // EIO once the child has exited and the terminal closed
    screen.append(buf, static_cast<size_t>(n));
  }
  int st = 0;
  waitpid(pid, &st, 0);
  close(master);
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << screen;
  EXPECT_NE(screen.find("\r[....................] 0/2  ETA --  tiny fp32"), std::string::npos)
      << screen;
  EXPECT_NE(screen.find("] 1/2  ETA "), std::string::npos) << screen;
  EXPECT_NE(screen.find("2 of 2 cells in"), std::string::npos) << screen;
  EXPECT_EQ(screen.find("[1/2] tiny"), std::string::npos) << "no plain lines on a terminal";
}

}  // namespace
