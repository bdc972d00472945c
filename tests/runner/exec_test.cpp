// `--exec`: the protocol reader on hand-written lines, the child process (timeout, process-group
// kill, stderr, exit status) and ExecCellRunner on real shell commands.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>

#include "common/errors.h"
#include "e2e_process.h"
#include "runner/config.h"
#include "runner/exec/exec_process.h"
#include "runner/exec/exec_protocol.h"
#include "runner/exec/exec_runner.h"
#include "runner/reporter.h"
#include "runner/sweep.h"
#include "store/store.h"

namespace pg::exec {
namespace {

using pgtest::TempDir;
using namespace std::chrono_literals;

const char* kHello = R"({"type":"hello","protocol":1,"engine":"demo","versions":{"lib":"1.2"}})";

std::string rep(int i, const std::string& decode = "[1.5,1.25]", const std::string& prefill = "3") {
  return R"({"type":"rep","rep":)" + std::to_string(i) + R"(,"prefill_ms":)" + prefill +
         R"(,"decode_ms":)" + decode + "}";
}

// The ProtocolError of feeding `lines` (reps 2, gen_tokens 3), or "" when all were accepted.
std::string protocol_error(const std::vector<std::string>& lines, int reps = 2) {
  ProtocolReader r(reps, 3);
  try {
    for (const auto& l : lines) r.feed(l);
  } catch (const ProtocolError& e) {
    return e.what();
  }
  return "";
}

TEST(ExecProtocol, ReadsACompleteOutput) {
  ProtocolReader r(2, 3);
  r.feed(kHello);
  r.feed("");
  r.feed(rep(0));
  r.feed(rep(1, "[2, 2.5]", "4"));
  r.feed(R"({"type":"end","peak_alloc_bytes":1048576})");
  EXPECT_EQ(r.state(), ProtocolReader::State::done);
  EXPECT_FALSE(r.reported_failure());
  ASSERT_TRUE(r.engine());
  EXPECT_EQ(r.engine()->name, "demo");
  EXPECT_EQ(r.engine()->versions.at("lib"), "1.2");
  EXPECT_EQ(r.samples().prefill_ms, (std::vector<double>{3, 4}));
  EXPECT_EQ(r.samples().decode_ms[1], (std::vector<double>{2, 2.5}));
  EXPECT_EQ(*r.peak_alloc_bytes(), 1048576);
}

TEST(ExecProtocol, NamesTheLineAndTheReasonOfEveryViolation) {
  EXPECT_EQ(protocol_error({rep(0)}),
            "stdout line 1: the first line must be the hello line, got a rep line");
  EXPECT_EQ(protocol_error({"Loading model..."}),
            "stdout line 1: not valid JSON (at byte 1): Loading model...");
  EXPECT_EQ(protocol_error({kHello, rep(1)}),
            "stdout line 2: \"rep\" must be 0 (repetitions are numbered from 0, in order), got 1");
  EXPECT_EQ(protocol_error({kHello, rep(0, "[1.5]")}),
            "stdout line 2: decode_ms has 1 entries, expected 2 (gen-tokens 3 = 1 + 2 decode "
            "steps)");
  EXPECT_EQ(protocol_error({kHello, rep(0, "[1.5, 0]")}),
            "stdout line 2: decode_ms[1] must be a positive finite number, got 0");
  EXPECT_EQ(protocol_error({kHello, rep(0, "[1.5, -2]")}),
            "stdout line 2: decode_ms[1] must be a positive finite number, got -2");
  EXPECT_EQ(protocol_error({kHello, rep(0, "[1.5, \"2\"]")}),
            "stdout line 2: decode_ms[1] must be a number, got \"2\"");
  // NaN is not JSON (Python's json.dumps writes it unless allow_nan=False).
  EXPECT_EQ(protocol_error({kHello, rep(0, "[1.5, NaN]")}).substr(0, 37),
            "stdout line 2: not valid JSON (at byt");
  EXPECT_EQ(protocol_error({kHello, rep(0, "[1.5, 2]", "1e999")}).substr(0, 47),
            "stdout line 2: a number out of range (JSON numb");
  EXPECT_EQ(protocol_error({kHello, rep(0), R"({"type":"end"})"}),
            "stdout line 3: end after 1 of 2 repetitions");
  EXPECT_EQ(protocol_error({kHello, rep(0), rep(1), rep(2)}),
            "stdout line 4: more than the 2 repetitions asked for (PERFGATE_REPS)");
  EXPECT_EQ(protocol_error({kHello, rep(0), rep(1), R"({"type":"end"})", rep(2)}),
            "stdout line 5: output after the last (end) line");
  EXPECT_EQ(protocol_error({kHello, R"({"type":"rep","rep":0,"prefill_ms":1,"decode_ms":[1,1],)"
                                    R"("peak_mem":5})"}),
            "stdout line 2: unknown key \"peak_mem\" in a rep line");
  EXPECT_EQ(protocol_error({R"({"type":"hello","protocol":2,"engine":"x"})"}),
            "stdout line 1: protocol 2 is not one this perfgate speaks (it speaks 1)");
  EXPECT_EQ(protocol_error({R"({"type":"hello","protocol":1})"}),
            "stdout line 1: \"engine\" is missing");
  EXPECT_EQ(
      protocol_error({R"({"type":"hello","protocol":1,"engine":"x","model":{"param_bytes":-1}})"}),
      "stdout line 1: model.param_bytes must be a positive finite number, got -1");
  EXPECT_EQ(protocol_error({kHello, kHello}), "stdout line 2: a second hello line");
  EXPECT_EQ(protocol_error({kHello, R"({"type":"done"})"}),
            "stdout line 2: unknown line type \"done\" (expected hello, rep, end, oom or error)");
}

TEST(ExecProtocol, TheBenchmarkMayReportItsOwnOutOfMemory) {
  ProtocolReader r(2, 3);
  r.feed(kHello);
  r.feed(R"({"type":"oom","reason":"CUDA out of memory"})");
  EXPECT_EQ(r.state(), ProtocolReader::State::done);
  EXPECT_EQ(r.reported_failure(), CellStatus::oom);
  EXPECT_EQ(r.reported_reason(), "CUDA out of memory");
}

ProcessSpec shell(const std::string& cmd, std::chrono::milliseconds timeout = 20s) {
  ProcessSpec s;
  s.command = cmd;
  s.cwd = ".";
  s.timeout = timeout;
  return s;
}

TEST(ExecProcess, PassesStdinEnvironmentAndDirectoryAndReadsLines) {
  TempDir dir;
  ProcessSpec s = shell("pwd; echo \"$PG_TEST_VAR\"; cat; printf 'last-without-newline'");
  s.cwd = dir.str();
  s.env = {{"PG_TEST_VAR", "hello there"}};
  s.stdin_text = "{\"from\":\"stdin\"}\n";
  std::vector<std::string> lines;
  const auto out = run_process(s, [&](std::string_view l) {
    lines.emplace_back(l);
    return true;
  });
  EXPECT_EQ(out.end, ProcessOutcome::End::exited);
  EXPECT_EQ(out.exit_status, 0);
  EXPECT_EQ(lines, (std::vector<std::string>{dir.str(), "hello there", "{\"from\":\"stdin\"}",
                                             "last-without-newline"}));
}

TEST(ExecProcess, ReportsExitStatusSignalAndTheTailOfStderr) {
  auto noop = [](std::string_view) { return true; };
  auto out = run_process(shell("echo 'Traceback: boom' >&2; exit 3"), noop);
  EXPECT_EQ(out.end, ProcessOutcome::End::exited);
  EXPECT_EQ(out.exit_status, 3);
  EXPECT_EQ(out.stderr_tail, "Traceback: boom\n");
  out = run_process(shell("kill -SEGV $$"), noop);
  EXPECT_EQ(describe_end(out), "exited with status 139 (killed by signal 11, Segmentation fault)");
  // Megabytes of stderr keep only the tail.
  out = run_process(shell("head -c 3000000 /dev/zero | tr '\\0' x >&2; echo END >&2"), noop);
  EXPECT_EQ(out.stderr_tail.size(), kStderrTailBytes);
  EXPECT_EQ(out.stderr_tail.substr(out.stderr_tail.size() - 4), "END\n");
}

TEST(ExecProcess, AHangIsKilledWithItsWholeProcessGroupAtTheTimeout) {
  TempDir dir;
  const std::string pidfile = dir.file("grandchild.pid");
  // A grandchild in the background (holding stdout open) and a shell that never ends.
  const auto t0 = std::chrono::steady_clock::now();
  const auto out =
      run_process(shell("sleep 300 & echo $! > " + pidfile + "; echo started; sleep 300", 1500ms),
                  [](std::string_view) { return true; });
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(out.end, ProcessOutcome::End::timed_out);
  EXPECT_LT(took, 10s);
  std::ifstream in(pidfile);
  pid_t grandchild = 0;
  in >> grandchild;
  ASSERT_GT(grandchild, 0);
  // Gone (or a zombie of init for a moment): kill(pid, 0) fails once it is reaped.
  EXPECT_TRUE(pgtest::eventually([&] { return ::kill(grandchild, 0) != 0; }, 5s))
      << "the background child of the command survived the timeout";
}

TEST(ExecProcess, KillingPerfgateKillsTheCommandItStarted) {
  // A forked stand-in for perfgate runs a command, then dies of SIGKILL: the command's
  // background child and its foreground one must not outlive it.
  TempDir dir;
  const std::string pids = dir.file("pids");
  const pid_t perfgate = ::fork();
  ASSERT_GE(perfgate, 0);
  if (perfgate == 0) {
    run_process(
        shell("sleep 300 & echo $! > " + pids + "; sleep 301 & echo $! >> " + pids + "; wait", 60s),
        [](std::string_view) { return true; });
    ::_exit(0);
  }
  ASSERT_TRUE(pgtest::eventually(
      [&] { return pgtest::read_file(pids).find('\n') != pgtest::read_file(pids).rfind('\n'); },
      10s));
  ::kill(perfgate, SIGKILL);
  ::waitpid(perfgate, nullptr, 0);
  std::ifstream in(pids);
  pid_t a = 0, b = 0;
  in >> a >> b;
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  EXPECT_TRUE(pgtest::eventually([&] { return ::kill(a, 0) != 0 && ::kill(b, 0) != 0; }, 5s))
      << "the command outlived perfgate";
}

TEST(ExecProcess, AHangAfterClosingStdoutAndStderrStillTimesOut) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto out =
      run_process(shell("exec >&- 2>&-; sleep 300", 1000ms), [](std::string_view) { return true; });
  EXPECT_EQ(out.end, ProcessOutcome::End::timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
}

TEST(ExecProcess, StopsTheCommandWhenTheReaderSaysSo) {
  int seen = 0;
  const auto out = run_process(shell("while true; do echo x; sleep 0.01; done"),
                               [&](std::string_view) { return ++seen < 3; });
  EXPECT_EQ(out.end, ProcessOutcome::End::stopped);
  EXPECT_EQ(seen, 3);
}

TEST(ExecProcess, AMissingDirectoryIsASpawnFailure) {
  ProcessSpec s = shell("true");
  s.cwd = "/nonexistent/perfgate-dir";
  const auto out = run_process(s, [](std::string_view) { return true; });
  EXPECT_EQ(out.end, ProcessOutcome::End::spawn_failed);
  EXPECT_NE(out.spawn_error.find("/nonexistent/perfgate-dir"), std::string::npos);
}

// ---- ExecCellRunner: a cell measured by a shell script ----------------------------------------

CellKey key(int batch = 2, int prompt = 8, int gen = 3) {
  CellKey k;
  k.model = "mine";
  k.dtype = "fp32";
  k.batch_size = batch;
  k.seq_len = prompt;
  k.gen_tokens = gen;
  k.attention = "sdpa";
  k.device = "cpu";
  return k;
}

MeasureOptions options(int reps = 2) {
  MeasureOptions o;
  o.warmup = 1;
  o.reps = reps;
  o.seed = 7;
  return o;
}

CellResult run_script(const std::string& script, double timeout_s = 20) {
  TempDir dir;
  pgtest::write_file(dir / "bench.sh", script);
  ExecCellRunner runner({"sh bench.sh", dir.str(), timeout_s, ""});
  return runner.measure(key(), options());
}

std::string good_output(const std::string& hello = kHello) {
  return "echo '" + hello + "'; echo '" + rep(0) + "'; echo '" + rep(1) +
         "'; echo '{\"type\":\"end\"}'\n";
}

TEST(ExecRunner, StoresTheSamplesAndDerivesTheMetrics) {
  const auto r = run_script(good_output(
      R"({"type":"hello","protocol":1,"engine":"demo","model":{"param_bytes":1e6,"kv_bytes_per_token":100}})"));
  ASSERT_EQ(r.status, CellStatus::ok) << r.reason.value_or("");
  EXPECT_EQ(r.samples.prefill_ms, (std::vector<double>{3, 3}));
  EXPECT_DOUBLE_EQ(r.metrics.at("tpot_ms"), 1.375);
  EXPECT_DOUBLE_EQ(r.metrics.at("weight_bytes"), 1e6);
  EXPECT_DOUBLE_EQ(r.metrics.at("kv_bytes"), 100.0 * 2 * (8 + 3));
  EXPECT_TRUE(r.metrics.count("achieved_bw_gbps"));
  EXPECT_FALSE(r.metrics.count("prefill_mfu"));  // no flops_per_token: null, never guessed
}

TEST(ExecRunner, WithoutModelFactsTheSizeMetricsAreNull) {
  const auto r = run_script(good_output());
  ASSERT_EQ(r.status, CellStatus::ok) << r.reason.value_or("");
  for (const char* m : {"weight_bytes", "kv_bytes", "achieved_bw_gbps", "mbu", "prefill_mfu"})
    EXPECT_FALSE(r.metrics.count(m)) << m;
}

TEST(ExecRunner, TheCommandSeesTheCellInItsEnvironmentAndOnStdin) {
  TempDir dir;
  pgtest::write_file(
      dir / "bench.sh",
      "env | grep '^PERFGATE_' | sort > env.txt; cat > stdin.json\n" + good_output());
  ExecCellRunner runner({"sh bench.sh", dir.str(), 20, ""});
  ASSERT_EQ(runner.measure(key(4, 16, 3), options()).status, CellStatus::ok);
  const std::string env = pgtest::read_file(dir / "env.txt");
  for (const char* want :
       {"PERFGATE_BATCH=4\n", "PERFGATE_PROMPT_LEN=16\n", "PERFGATE_GEN_TOKENS=3\n",
        "PERFGATE_WARMUP=1\n", "PERFGATE_REPS=2\n", "PERFGATE_DEVICE=cpu\n",
        "PERFGATE_DTYPE=fp32\n", "PERFGATE_SEED=7\n", "PERFGATE_MODEL=mine\n",
        "PERFGATE_PROTOCOL=1\n", "PERFGATE_KV_CACHE=on\n", "PERFGATE_CUDA_GRAPHS=off\n",
        "PERFGATE_ATTENTION=sdpa\n"})
    EXPECT_NE(env.find(want), std::string::npos) << want << " not in\n" << env;
  EXPECT_NE(env.find("PERFGATE_REPO=" + dir.str() + "\n"), std::string::npos) << env;
  EXPECT_EQ(pgtest::read_file(dir / "stdin.json"), cell_json(key(4, 16, 3), options(), dir.str()));
  EXPECT_NE(pgtest::read_file(dir / "stdin.json").find("\"batch_size\":4"), std::string::npos);
}

TEST(ExecRunner, BadOutputIsAnErrorNamingTheLineAndKeepingStderr) {
  const auto r = run_script("echo 'warming up' >&2; echo '" + std::string(kHello) + "'; echo '" +
                            rep(0, "[1, 1, 1]") + "'; sleep 30\n");
  EXPECT_EQ(r.status, CellStatus::error);
  EXPECT_EQ(r.reason.value_or(""),
            "stdout line 2: decode_ms has 3 entries, expected 2 (gen-tokens 3 = 1 + 2 decode "
            "steps); stderr: warming up");
}

TEST(ExecRunner, ACrashIsAnErrorWithTheExitStatusAndTheTraceback) {
  const auto r = run_script("echo '" + std::string(kHello) + "'; echo '" + rep(0) +
                            "'; echo 'Traceback (most recent call last):' >&2; echo "
                            "'RuntimeError: CUDA error' >&2; exit 1\n");
  EXPECT_EQ(r.status, CellStatus::error);
  EXPECT_EQ(r.reason.value_or(""),
            "the command exited with status 1 (after stdout line 2, 1 of 2 repetitions); stderr: "
            "Traceback (most recent call last): | RuntimeError: CUDA error");
  EXPECT_TRUE(r.samples.prefill_ms.empty());
}

TEST(ExecRunner, AHangPastTheTimeoutIsAnError) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = run_script("echo '" + std::string(kHello) + "'; sleep 300\n", 1.0);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  EXPECT_EQ(r.status, CellStatus::error);
  EXPECT_EQ(r.reason.value_or(""),
            "no complete result within --exec-timeout 1 s (after stdout line 1, 0 of 2 "
            "repetitions); its process group was killed");
}

TEST(ExecRunner, OutputThatStopsEarlyIsAnError) {
  const auto r = run_script("echo '" + std::string(kHello) + "'; echo '" + rep(0) + "'\n");
  EXPECT_EQ(r.status, CellStatus::error);
  EXPECT_EQ(r.reason.value_or(""),
            "stdout line 3: output ended before the end line (after the hello line; 1 of 2 "
            "repetitions)");
}

TEST(ExecRunner, AnOomLineMakesAnOomCell) {
  const auto r = run_script("echo '" + std::string(kHello) +
                            "'; echo '{\"type\":\"oom\",\"reason\":\"CUDA out of memory\"}'\n");
  EXPECT_EQ(r.status, CellStatus::oom);
  EXPECT_EQ(r.reason.value_or(""), "the benchmark reported: CUDA out of memory");
}

TEST(ExecRunner, StepsOutsideTheSanityLimitsAreInvalid) {
  const auto r =
      run_script("echo '" + std::string(kHello) + "'; echo '" + rep(0, "[1, 0.0000001]") +
                 "'; echo '" + rep(1) + "'; echo '{\"type\":\"end\"}'\n");
  EXPECT_EQ(r.status, CellStatus::invalid);
}

TEST(ExecRunner, TheEngineIsPartOfTheFingerprintAndMustNotChangeWithinARun) {
  TempDir dir;
  // The first call reports lib 1.2, every later one lib 1.3.
  pgtest::write_file(dir / "bench.sh",
                     "if [ -f seen ]; then v=1.3; else v=1.2; touch seen; fi\n"
                     "echo '{\"type\":\"hello\",\"protocol\":1,\"engine\":\"demo\",\"versions\":"
                     "{\"lib\":\"'$v'\"},\"model\":{\"display_name\":\"My Model\"}}'\n"
                     "echo '" +
                         rep(0) + "'; echo '" + rep(1) + "'; echo '{\"type\":\"end\"}'\n");
  ExecCellRunner runner({"sh bench.sh", dir.str(), 20, ""});
  EXPECT_TRUE(runner.fingerprint().empty());
  ASSERT_EQ(runner.measure(key(), options()).status, CellStatus::ok);
  const Environment env = runner.fingerprint();
  EXPECT_EQ(env.at("engine"), "demo");
  EXPECT_EQ(env.at("engine.lib"), "1.2");
  EXPECT_EQ(env.at("engine.model"), "My Model");
  const auto second = runner.measure(key(), options());
  EXPECT_EQ(second.status, CellStatus::error);
  EXPECT_EQ(second.reason.value_or(""),
            "stdout line 1: the engine changed within the run: this cell reports demo lib=1.3, "
            "the run's first cell demo lib=1.2");
}

// ---- a whole sweep: one crashing cell among good ones ----------------------------------------

TEST(ExecSweep, ACrashingCellIsStoredAsErrorAndTheSweepGoesOn) {
  TempDir dir;
  // Batch 2 crashes; batches 1 and 4 are measured.
  pgtest::write_file(
      dir / "bench.sh",
      "[ \"$PERFGATE_BATCH\" = 2 ] && { echo 'Segfault in kernel' >&2; kill -SEGV $$; }\n" +
          good_output(R"({"type":"hello","protocol":1,"engine":"demo",)"
                      R"("versions":{"lib":"1.2"}})"));
  SweepConfig cfg;
  cfg.models = {"mine"};
  cfg.dtypes = {"fp32"};
  cfg.attention = {"sdpa"};
  cfg.device = "cpu";
  cfg.batch_sizes = {1, 2, 4};
  cfg.seq_lens = {8};
  cfg.gen_tokens = 3;
  cfg.warmup = 0;
  cfg.reps = 2;
  cfg.exec = "sh bench.sh";
  Store store(dir.file("runs.db"));
  ExecCellRunner runner({cfg.exec, dir.str(), 20, ""});
  Reporter quiet;
  GitInfo git;
  git.state = "not-a-repository";
  const auto out =
      run_sweep(cfg, expand(cfg), store, runner, git, {{"host", "test"}}, quiet, nullptr);
  EXPECT_EQ(out.status, RunStatus::complete);
  const auto run = store.load_run(out.run_id);
  ASSERT_TRUE(run);
  ASSERT_EQ(run->cells.size(), 3u);
  EXPECT_EQ(run->cells[0].status, CellStatus::ok);
  EXPECT_EQ(run->cells[1].status, CellStatus::error);
  EXPECT_NE(run->cells[1].reason.value_or("").find("killed by signal 11"), std::string::npos);
  EXPECT_NE(run->cells[1].reason.value_or("").find("stderr: Segfault in kernel"),
            std::string::npos);
  EXPECT_EQ(run->cells[2].status, CellStatus::ok);
  EXPECT_EQ(run->cells[2].samples.decode_ms.size(), 2u);
  // The engine's fingerprint, learned from the first cell, is the run's.
  EXPECT_EQ(run->env.at("engine"), "demo");
  EXPECT_EQ(run->env.at("engine.lib"), "1.2");
  EXPECT_EQ(run->env.at("host"), "test");
}

// ---- the --exec settings --------------------------------------------------------------------

std::string config_error(const std::string& toml, std::map<std::string, std::string> flags = {}) {
  RunFlags f;
  f.values = std::move(flags);
  try {
    sweep_config_from_toml(toml, "sweep.toml", f);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(ExecSettings, TheSweepFileNamesTheCommandTheModelAndTheTimeout) {
  const SweepConfig cfg = sweep_config_from_toml(
      "exec = \"python3 bench.py --fast\"\nexec-timeout = 120\nmodel = [\"my-llama_1b.v2\"]\n"
      "device = \"cpu\"\n",
      "sweep.toml");
  EXPECT_EQ(cfg.exec, "python3 bench.py --fast");
  EXPECT_EQ(cfg.exec_timeout_s, 120);
  EXPECT_EQ(cfg.models, (std::vector<std::string>{"my-llama_1b.v2"}));
  EXPECT_NE(sweep_config_json(cfg).find("\"exec\":\"python3 bench.py --fast\""), std::string::npos);
}

TEST(ExecSettings, RefusesWhatCannotKeyASeries) {
  EXPECT_EQ(config_error("exec = \"sh b.sh\"\n"),
            "sweep.toml:1: exec: needs --model NAME, your model's name (it keys the series)");
  EXPECT_EQ(config_error("exec = \"sh b.sh\"\nmodel = \"gpt2\"\n"),
            "sweep.toml:2: model: 'gpt2' is one of perfgate's own model presets; give your model a "
            "name of its own");
  EXPECT_EQ(config_error("exec = \"sh b.sh\"\nmodel = \"models/llama.pt\"\n"),
            "sweep.toml:2: model: 'models/llama.pt' is not a model name for --exec (1-64 letters, "
            "digits, '.', '_' or '-', starting with a letter or digit; not a path)");
  EXPECT_EQ(config_error("", {{"exec", " "}, {"model", "m"}}), "--exec: ' ' is empty");
  EXPECT_EQ(config_error("", {{"exec-timeout", "5"}}),
            "--exec-timeout: only makes sense with --exec");
  EXPECT_EQ(config_error("", {{"exec", "x"}, {"model", "m"}, {"exec-timeout", "0"}}),
            "--exec-timeout: '0' is not a positive number");
}

}  // namespace
}  // namespace pg::exec
