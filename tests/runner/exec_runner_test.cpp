// `--exec`: ExecMeasurer on real shell commands, a whole sweep with a crashing cell, and the
// --exec settings. exec_protocol_test.cpp covers the protocol reader and the child process.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>

#include "common/errors.h"
#include "e2e_process.h"
#include "exec_lines.h"
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

using namespace testlines;

// ---- ExecMeasurer: a cell measured by a shell script ----------------------------------------

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

runner::MeasureOptions options(int reps = 2) {
  runner::MeasureOptions o;
  o.warmup = 1;
  o.reps = reps;
  o.seed = 7;
  return o;
}

CellResult run_script(const std::string& script, double timeout_s = 20) {
  TempDir dir;
  pgtest::write_file(dir / "bench.sh", script);
  ExecMeasurer runner({"sh bench.sh", dir.str(), timeout_s, ""});
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
  ExecMeasurer runner({"sh bench.sh", dir.str(), 20, ""});
  ASSERT_EQ(runner.measure(key(4, 16, 3), options()).status, CellStatus::ok);
  const std::string env = pgtest::read_file(dir / "env.txt");
  for (const char* want :
       {"PERFGATE_BATCH=4\n", "PERFGATE_PROMPT_LEN=16\n", "PERFGATE_GEN_TOKENS=3\n",
        "PERFGATE_WARMUP=1\n", "PERFGATE_REPS=2\n", "PERFGATE_DEVICE=cpu\n",
        "PERFGATE_DTYPE=fp32\n", "PERFGATE_SEED=7\n", "PERFGATE_MODEL=mine\n",
        "PERFGATE_PROTOCOL=2\n", "PERFGATE_KV_CACHE=on\n", "PERFGATE_CUDA_GRAPHS=off\n",
        "PERFGATE_ATTENTION=sdpa\n", "PERFGATE_PROFILE=on\n"})
    EXPECT_NE(env.find(want), std::string::npos) << want << " not in\n" << env;
  EXPECT_NE(env.find("PERFGATE_REPO=" + dir.str() + "\n"), std::string::npos) << env;
  EXPECT_EQ(pgtest::read_file(dir / "stdin.json"), cell_json(key(4, 16, 3), options(), dir.str()));
  EXPECT_NE(pgtest::read_file(dir / "stdin.json").find("\"batch_size\":4"), std::string::npos);
  EXPECT_NE(pgtest::read_file(dir / "stdin.json").find("\"profile\":true"), std::string::npos);
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

// The benchmark's own text (stderr, a reported reason) is stored as one inert line: a bare CR
// would let it print its own workflow command in a GitHub job log (docs/FORMATS.md, "Text from
// measured code").
TEST(ExecRunner, StderrAndReportedReasonsAreStoredAsOneInertLine) {
  const auto crash = run_script(
      "printf 'loading 10%%\\rloading 99%%\\r::warning::pwned\\033[2J\\n##[error]x\\n' >&2; "
      "exit 1\n");
  ASSERT_EQ(crash.status, CellStatus::error);
  const auto reported = run_script(
      "echo '" + std::string(kHello) +
      "'; printf '%s\\n' "
      "'{\"type\":\"error\",\"reason\":\"bad\\r::error::x\\n::notice::y \\u001b[31m\"}'\n");
  ASSERT_EQ(reported.status, CellStatus::error);
  for (const auto& r : {crash, reported}) {
    const std::string reason = r.reason.value_or("");
    for (char c : {'\r', '\n', '\x1b'})
      EXPECT_EQ(reason.find(c), std::string::npos) << int(c) << " in " << reason;
    EXPECT_EQ(reason.find("##["), std::string::npos) << reason;
  }
  EXPECT_EQ(crash.reason.value_or(""),
            "the command exited with status 1 (after stdout line 0, 0 of 2 repetitions); stderr: "
            "loading 10%\\rloading 99%\\r::warning::pwned\\x1B[2J | ##\\[error]x");
  EXPECT_EQ(reported.reason.value_or(""),
            "the benchmark reported: bad\\r::error::x\\n::notice::y \\x1B[31m");
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
  ExecMeasurer runner({"sh bench.sh", dir.str(), 20, ""});
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

// A CPU sweep of model "mine" whose cells `sh bench.sh` measures, one per batch size.
runner::SweepConfig exec_sweep(std::vector<int> batch_sizes) {
  runner::SweepConfig cfg;
  cfg.models = {"mine"};
  cfg.dtypes = {"fp32"};
  cfg.attention = {"sdpa"};
  cfg.device = "cpu";
  cfg.batch_sizes = std::move(batch_sizes);
  cfg.seq_lens = {8};
  cfg.gen_tokens = 3;
  cfg.warmup = 0;
  cfg.reps = 2;
  cfg.exec = "sh bench.sh";
  return cfg;
}

TEST(ExecSweep, ACrashingCellIsStoredAsErrorAndTheSweepGoesOn) {
  TempDir dir;
  // Batch 2 crashes; batches 1 and 4 are measured.
  pgtest::write_file(
      dir / "bench.sh",
      "[ \"$PERFGATE_BATCH\" = 2 ] && { echo 'Segfault in kernel' >&2; kill -SEGV $$; }\n" +
          good_output(R"({"type":"hello","protocol":1,"engine":"demo",)"
                      R"("versions":{"lib":"1.2"}})"));
  const runner::SweepConfig cfg = exec_sweep({1, 2, 4});
  store::Store store(dir.file("runs.db"));
  ExecMeasurer runner({cfg.exec, dir.str(), 20, ""});
  runner::Reporter quiet;
  GitInfo git;
  git.state = "not-a-repository";
  const auto out =
      run_sweep(cfg, runner::expand(cfg), store, runner, git, {{"host", "test"}}, quiet, nullptr);
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

// One --exec sweep of one cell whose benchmark is `script`, stored in dir/runs.db; `began` as
// run_sweep's started_at.
std::optional<Run> exec_run(const TempDir& dir, const std::string& script,
                            const std::string& began = {}) {
  pgtest::write_file(dir / "bench.sh", script);
  const runner::SweepConfig cfg = exec_sweep({2});
  store::Store store(dir.file("runs.db"));
  ExecMeasurer runner({cfg.exec, dir.str(), 20, ""});
  runner::Reporter quiet;
  GitInfo git;
  git.state = "not-a-repository";
  const auto out =
      run_sweep(cfg, runner::expand(cfg), store, runner, git, {}, quiet, nullptr, began);
  return store.load_run(out.run_id);
}

// The run's wall time is what a gate reports it cost: it must include the first cell, during which
// an --exec engine starts (and a model loads), even though the run row is written after that cell.
TEST(ExecSweep, TheRunsWallTimeIncludesItsFirstCell) {
  TempDir dir;
  const auto run = exec_run(dir, "sleep 2\n" + good_output());
  ASSERT_TRUE(run);
  ASSERT_EQ(run->cells.size(), 1u);
  auto epoch = [](const std::string& iso) {
    std::tm tm{};
    EXPECT_EQ(std::sscanf(iso.c_str(), "%d-%d-%dT%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                          &tm.tm_hour, &tm.tm_min, &tm.tm_sec),
              6)
        << iso;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return timegm(&tm);
  };
  EXPECT_GE(epoch(run->finished_at) - epoch(run->started_at), 2)
      << run->started_at << " .. " << run->finished_at;
}

// What came before the sweep (resolving the config hashes model artifacts) is part of the run's
// wall time when the caller says when it began.
TEST(ExecSweep, TheRunStartsWhenTheCallerSays) {
  TempDir dir;
  const std::string began = "2026-01-02T03:04:05Z";
  const auto run = exec_run(dir, good_output(), began);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->started_at, began);
}

// ---- the --exec settings --------------------------------------------------------------------

std::string config_error(const std::string& toml, std::map<std::string, std::string> flags = {}) {
  runner::RunFlags f;
  f.values = std::move(flags);
  try {
    runner::sweep_config_from_toml(toml, "sweep.toml", f);
  } catch (const SettingError& e) {
    return e.spelled("--");  // as the CLI prints it
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(ExecSettings, TheSweepFileNamesTheCommandTheModelAndTheTimeout) {
  const runner::SweepConfig cfg = runner::sweep_config_from_toml(
      "exec = \"python3 bench.py --fast\"\nexec-timeout = 120\nmodel = [\"my-llama_1b.v2\"]\n"
      "device = \"cpu\"\n",
      "sweep.toml");
  EXPECT_EQ(cfg.exec, "python3 bench.py --fast");
  EXPECT_EQ(cfg.exec_timeout_s, 120);
  EXPECT_EQ(cfg.models, (std::vector<std::string>{"my-llama_1b.v2"}));
  EXPECT_NE(runner::sweep_config_json(cfg).find("\"exec\":\"python3 bench.py --fast\""),
            std::string::npos);
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
