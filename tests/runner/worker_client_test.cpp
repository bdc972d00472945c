// `perfgate ab`'s worker mode of the --exec protocol (protocol 3, docs/PROTOCOL.md "Version 3:
// worker mode"): WorkerClient driving real worker processes, tiny ones in sh that answer the
// requests by hand and python/perfgate_bench.py itself; failures (a crash, a hang, a bad line)
// end the worker with the cell's reason, and no worker outlives its client or perfgate.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

#include "e2e_process.h"
#include "runner/exec/exec_cell.h"
#include "runner/exec/worker_client.h"

namespace pg::exec {
namespace {

using pgtest::TempDir;
using namespace std::chrono_literals;

CellKey key(int gen = 3) {
  CellKey k;
  k.model = "mine";
  k.dtype = "fp32";
  k.batch_size = 2;
  k.seq_len = 8;
  k.gen_tokens = gen;
  k.attention = "sdpa";
  k.device = "cpu";
  return k;
}

runner::MeasureOptions options(int reps = 4, bool profile = false) {
  runner::MeasureOptions o;
  o.warmup = 1;
  o.reps = reps;
  o.seed = 7;
  o.profile = profile;
  return o;
}

// A worker in sh: `before` runs first (after reading the cell), then hello and ready; a rep
// request runs `on_rep` (with $n the repetition) and prints a rep line; end prints the end line.
std::string sh_worker(
    const std::string& on_rep = "", const std::string& before = "",
    const std::string& hello =
        R"({"type":"hello","protocol":3,"engine":"demo","versions":{"lib":"1.2"},)"
        R"("model":{"param_bytes":1e6}})",
    const std::string& ready = R"({"type":"ready"})") {
  return "read cell; printf '%s\\n' \"$cell\" > cell.json; env | grep '^PERFGATE_' | sort > "
         "env.txt\n" +
         before + "\necho '" + hello + "'\necho '" + ready +
         "'\n"
         "while read req; do\n"
         "  case \"$req\" in\n"
         "    *'\"op\":\"rep\"'*) n=${req##*:}; n=${n%\\}}\n" +
         on_rep +
         "\n      echo \"{\\\"type\\\":\\\"rep\\\",\\\"rep\\\":$n,\\\"prefill_ms\\\":3,"
         "\\\"decode_ms\\\":[1.5,1.25]}\";;\n"
         "    *'\"op\":\"end\"'*) echo '{\"type\":\"end\",\"peak_alloc_bytes\":1024}'; exit 0;;\n"
         "  esac\n"
         "done\n"
         "echo 'stdin ended' >&2; exit 0\n";
}

WorkerSpec spec(const TempDir& dir, const std::string& script,
                std::chrono::milliseconds timeout = 20s) {
  pgtest::write_file(dir / "worker.sh", script);
  return {"sh worker.sh", dir.str(), timeout, {}};
}

// Gone (or a zombie of init for a moment): kill(pid, 0) fails once it is reaped.
bool gone(pid_t pid) {
  return pgtest::eventually([&] { return ::kill(pid, 0) != 0; }, 5s);
}

std::string reason(const WorkerClient& w) { return w.failure() ? w.failure()->second : ""; }

TEST(ExecWorker, AnswersRepetitionsOneAtATimeThenTheEnd) {
  TempDir dir;
  WorkerClient w(spec(dir, sh_worker()), key(), options());
  ASSERT_TRUE(w.ok()) << reason(w);
  ASSERT_TRUE(w.engine());
  EXPECT_EQ(w.engine()->name, "demo");
  EXPECT_EQ(w.engine()->protocol, 3);
  EXPECT_EQ(w.engine()->model.param_bytes, 1e6);
  for (int i = 0; i < 3; ++i) {
    const auto rep = w.repetition();
    ASSERT_TRUE(rep) << reason(w);
    EXPECT_EQ(rep->prefill_ms, 3);
    EXPECT_EQ(rep->decode_ms, (std::vector<double>{1.5, 1.25}));
  }
  EXPECT_EQ(w.samples().prefill_ms.size(), 3u);  // fewer than reps: the driver decides
  const auto end = w.finish();
  ASSERT_TRUE(end) << reason(w);
  EXPECT_EQ(end->peak_alloc_bytes, 1024);
  EXPECT_FALSE(end->profile);
  EXPECT_FALSE(w.failure());
  EXPECT_FALSE(w.ok());  // finished
  EXPECT_FALSE(w.repetition());
  // The cell as a worker receives it: protocol 3 and worker, in the checkout's directory.
  EXPECT_EQ(pgtest::read_file(dir / "cell.json"),
            cell_json(key(), options(), dir.str(), ProtocolMode::worker));
  EXPECT_NE(pgtest::read_file(dir / "cell.json").find("\"protocol\":3,"), std::string::npos);
  EXPECT_NE(pgtest::read_file(dir / "cell.json").find("\"worker\":true}"), std::string::npos);
  const std::string env = pgtest::read_file(dir / "env.txt");
  for (const char* want : {"PERFGATE_PROTOCOL=3\n", "PERFGATE_WORKER=on\n", "PERFGATE_REPS=4\n",
                           "PERFGATE_WARMUP=1\n"})
    EXPECT_NE(env.find(want), std::string::npos) << want << " not in\n" << env;
  EXPECT_NE(env.find("PERFGATE_REPO=" + dir.str() + "\n"), std::string::npos) << env;
}

TEST(ExecWorker, TheMetricsComeFromTheSamplesAsForAOneShotCell) {
  TempDir dir;
  WorkerClient w(spec(dir, sh_worker()), key(), options(2));
  ASSERT_TRUE(w.repetition());
  ASSERT_TRUE(w.repetition());
  const auto end = w.finish();
  ASSERT_TRUE(end) << reason(w);
  const CellResult r = exec_cell_result(key(), options(2), *w.engine(), w.samples(),
                                        end->peak_alloc_bytes, end->profile, "");
  ASSERT_EQ(r.status, CellStatus::ok) << r.reason.value_or("");
  EXPECT_DOUBLE_EQ(r.metrics.at("tpot_ms"), 1.375);
  EXPECT_DOUBLE_EQ(r.metrics.at("weight_bytes"), 1e6);
  EXPECT_DOUBLE_EQ(r.metrics.at("peak_alloc_bytes"), 1024);
  EXPECT_FALSE(r.metrics.count("kv_bytes"));  // no kv_bytes_per_token: null, never guessed
}

TEST(ExecWorker, AReadyLineWithAnUnknownKeyIsRefused) {
  TempDir dir;
  WorkerClient w(spec(dir, sh_worker("", "echo 'loading' >&2",
                                     R"({"type":"hello","protocol":3,"engine":"demo"})",
                                     R"({"type":"ready","warm":true})")),
                 key(), options());
  EXPECT_FALSE(w.ok());
  ASSERT_TRUE(w.failure());
  EXPECT_EQ(w.failure()->first, CellStatus::error);
  EXPECT_EQ(reason(w), "stdout line 2: unknown key \"warm\" in a ready line; stderr: loading");
  EXPECT_FALSE(w.repetition());
  EXPECT_FALSE(w.finish());
}

TEST(ExecWorker, AVersion2HelloIsRefusedWithTheReason) {
  TempDir dir;
  WorkerClient w(spec(dir, sh_worker("", "", R"({"type":"hello","protocol":2,"engine":"demo"})")),
                 key(), options());
  EXPECT_FALSE(w.ok());
  EXPECT_EQ(reason(w),
            "stdout line 1: the benchmark speaks protocol 2, which has no worker mode: `perfgate "
            "ab` needs protocol 3 (python/perfgate_bench.py of this perfgate speaks it)");
}

TEST(ExecWorker, ACrashMidCellKeepsTheRepetitionsAlreadyReceived) {
  TempDir dir;
  WorkerClient w(spec(dir, sh_worker("      [ \"$n\" = 2 ] && { echo 'Segfault in kernel' >&2; "
                                     "exit 3; }")),
                 key(), options());
  ASSERT_TRUE(w.repetition()) << reason(w);
  ASSERT_TRUE(w.repetition()) << reason(w);
  EXPECT_FALSE(w.repetition());
  EXPECT_FALSE(w.ok());
  ASSERT_TRUE(w.failure());
  EXPECT_EQ(w.failure()->first, CellStatus::error);
  EXPECT_EQ(reason(w),
            "the command exited with status 3 while perfgate waited for the answer to repetition "
            "2 (after stdout line 4, 2 of 4 repetitions); stderr: Segfault in kernel");
  EXPECT_EQ(w.samples().prefill_ms.size(), 2u);
  EXPECT_FALSE(w.finish());
}

TEST(ExecWorker, AHangOnARepetitionTimesOutAndKillsTheGroup) {
  TempDir dir;
  const std::string pids = dir.file("pids");
  const auto t0 = std::chrono::steady_clock::now();
  WorkerClient w(spec(dir,
                      sh_worker("      [ \"$n\" = 1 ] && { echo $$ > " + pids +
                                "; sleep 300 & echo $! >> " + pids + "; wait; }"),
                      1500ms),
                 key(), options());
  ASSERT_TRUE(w.repetition()) << reason(w);
  EXPECT_FALSE(w.repetition());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  EXPECT_EQ(reason(w),
            "exec-timeout 1.5 s passed while perfgate waited for the answer to repetition 1 "
            "(after stdout line 3, 1 of 4 repetitions); its process group was killed");
  std::ifstream in(pids);
  pid_t shell = 0, child = 0;
  in >> shell >> child;
  ASSERT_GT(shell, 0);
  ASSERT_GT(child, 0);
  EXPECT_TRUE(gone(shell)) << "the worker survived its timeout";
  EXPECT_TRUE(gone(child)) << "the worker's child survived its timeout";
}

TEST(ExecWorker, AStartThatNeverGetsReadyTimesOut) {
  TempDir dir;
  WorkerClient w(spec(dir, sh_worker("", "sleep 300"), 1000ms), key(), options());
  EXPECT_FALSE(w.ok());
  EXPECT_EQ(reason(w),
            "exec-timeout 1 s passed while perfgate waited for the ready line (after stdout line "
            "0, 0 of 4 repetitions); its process group was killed");
}

TEST(ExecWorker, ALineNobodyAskedForIsRefused) {
  TempDir dir;
  // The first request is answered twice: the second rep line comes before perfgate asked for it.
  WorkerClient w(spec(dir,
                      "read cell\n"
                      "echo '{\"type\":\"hello\",\"protocol\":3,\"engine\":\"demo\"}'\n"
                      "echo '{\"type\":\"ready\"}'\n"
                      "read req\n"
                      "echo '{\"type\":\"rep\",\"rep\":0,\"prefill_ms\":3,\"decode_ms\":[1,1]}'\n"
                      "echo '{\"type\":\"rep\",\"rep\":1,\"prefill_ms\":3,\"decode_ms\":[1,1]}'\n"
                      "touch printed; read req\n"),
                 key(), options());
  ASSERT_TRUE(w.repetition()) << reason(w);
  ASSERT_TRUE(pgtest::eventually([&] { return std::filesystem::exists(dir / "printed"); }, 10s));
  EXPECT_FALSE(w.repetition());
  EXPECT_EQ(w.samples().prefill_ms.size(), 1u);
  EXPECT_EQ(reason(w),
            "stdout line 4: a rep line perfgate did not ask for (a worker prints one in answer to "
            "each rep request)");
}

TEST(ExecWorker, TheBenchmarksOwnOomEndsTheCellAsOom) {
  TempDir dir;
  WorkerClient w(spec(dir, sh_worker("      [ \"$n\" = 1 ] && { echo '{\"type\":\"oom\",\"reason\":"
                                     "\"CUDA out of memory\"}'; echo 'Traceback: OOM' >&2; exit "
                                     "0; }")),
                 key(), options());
  ASSERT_TRUE(w.repetition());
  EXPECT_FALSE(w.repetition());
  ASSERT_TRUE(w.failure());
  EXPECT_EQ(w.failure()->first, CellStatus::oom);
  EXPECT_EQ(reason(w), "the benchmark reported: CUDA out of memory; stderr: Traceback: OOM");
}

TEST(ExecWorker, ANonZeroExitAfterTheEndLineIsAnError) {
  TempDir dir;
  std::string script = sh_worker();
  script.replace(script.find("exit 0;;"), 8, "exit 5;;");
  WorkerClient w(spec(dir, script), key(), options());
  ASSERT_TRUE(w.repetition());
  EXPECT_FALSE(w.finish());
  EXPECT_EQ(reason(w),
            "the command exited with status 5 while perfgate waited for the exit after the end "
            "line (after stdout line 4, 1 of 4 repetitions)");
}

TEST(ExecWorker, DestroyingTheClientKillsAWorkerThatIgnoresEndOfInputAndSigterm) {
  TempDir dir;
  const std::string pids = dir.file("pids");
  {
    // Once ready it reads nothing more and ignores SIGTERM (so does its child): only the SIGKILL
    // that follows two seconds later ends them.
    WorkerClient w(
        spec(dir, "trap '' TERM; read cell; echo $$ > " + pids +
                      "; (sleep 300; echo never) & echo $! >> " + pids +
                      "\necho '{\"type\":\"hello\",\"protocol\":3,\"engine\":\"demo\"}'\n"
                      "echo '{\"type\":\"ready\"}'\nwait\n"),
        key(), options());
    ASSERT_TRUE(w.ok()) << reason(w);
  }
  std::ifstream in(pids);
  pid_t shell = 0, child = 0;
  in >> shell >> child;
  ASSERT_GT(shell, 0);
  ASSERT_GT(child, 0);
  EXPECT_TRUE(gone(shell)) << "the worker outlived its client";
  EXPECT_TRUE(gone(child)) << "the worker's child outlived its client";
}

TEST(ExecWorker, KillingPerfgateKillsBothWorkers) {
  // A forked stand-in for perfgate starts two workers (base and head of `perfgate ab`), each
  // with a child of its own, and dies of SIGKILL while they wait for requests.
  TempDir dir, base, head;
  const std::string pids = dir.file("pids");
  const std::string idle = "echo $$ >> " + pids + "; sleep 300 & echo $! >> " + pids;
  const WorkerSpec sides[] = {spec(base, sh_worker("", idle)), spec(head, sh_worker("", idle))};
  const pid_t perfgate = ::fork();
  ASSERT_GE(perfgate, 0);
  if (perfgate == 0) {
    WorkerClient a(sides[0], key(), options());
    WorkerClient b(sides[1], key(), options());
    if (a.ok() && b.ok()) pgtest::write_file(dir / "ready", "");
    ::pause();
    ::_exit(0);
  }
  ASSERT_TRUE(pgtest::eventually([&] { return std::filesystem::exists(dir / "ready"); }, 20s));
  ::kill(perfgate, SIGKILL);
  ::waitpid(perfgate, nullptr, 0);
  std::ifstream in(pids);
  std::vector<pid_t> all;
  for (pid_t p; in >> p;) all.push_back(p);
  ASSERT_EQ(all.size(), 4u);
  for (pid_t p : all) EXPECT_TRUE(gone(p)) << p << " outlived perfgate";
}

// ---- python/perfgate_bench.py as a worker -----------------------------------------------------

// A benchmark on the helper that needs no torch (a CPU cell, profile off): the same script a
// one-shot `perfgate run --exec` runs.
constexpr const char* kHelperBench = R"(import sys
sys.path.insert(0, sys.argv[1])
import perfgate_bench as pb

cell = pb.cell()
calls = []

def prefill():
    calls.append("p")
    sum(range(2000))

def decode_step(i):
    calls.append(i)
    sum(range(500))

pb.run(cell, prefill, decode_step, engine="toy", versions={"toy": "0.1"},
       model_info={"param_bytes": 4096})
print("calls", len(calls), file=sys.stderr)
)";

TEST(ExecWorker, DrivesThePythonHelper) {
  TempDir dir;
  pgtest::write_file(dir / "bench.py", kHelperBench);
  const WorkerSpec s{std::string(PG_PYTHON) + " bench.py " + PG_SOURCE_DIR + "/python", dir.str(),
                     60s, {}};
  WorkerClient w(s, key(5), options(4));
  ASSERT_TRUE(w.ok()) << reason(w);
  EXPECT_EQ(w.engine()->name, "toy");
  EXPECT_EQ(w.engine()->protocol, 3);
  EXPECT_EQ(w.engine()->versions.at("toy"), "0.1");
  for (int i = 0; i < 3; ++i) {
    const auto rep = w.repetition();
    ASSERT_TRUE(rep) << reason(w);
    EXPECT_EQ(rep->decode_ms.size(), 4u);
    EXPECT_GT(rep->prefill_ms, 0);
  }
  const auto end = w.finish();
  ASSERT_TRUE(end) << reason(w);
  EXPECT_FALSE(end->profile);
  EXPECT_EQ(w.samples().prefill_ms.size(), 3u);
  const CellResult r = exec_cell_result(key(5), options(3), *w.engine(), w.samples(), std::nullopt,
                                        std::nullopt, "");
  EXPECT_EQ(r.status, CellStatus::ok) << r.reason.value_or("");
}

}  // namespace
}  // namespace pg::exec
