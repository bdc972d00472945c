// `--exec`: the protocol reader on hand-written lines and the child process (timeout,
// process-group kill, stderr, exit status). exec_runner_test.cpp runs whole cells.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
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
  EXPECT_EQ(protocol_error({R"({"type":"hello","protocol":4,"engine":"x"})"}),
            "stdout line 1: protocol 4 is not one this perfgate speaks (it speaks 1 to 3)");
  EXPECT_EQ(protocol_error({R"({"type":"hello","protocol":0,"engine":"x"})"}),
            "stdout line 1: protocol 0 is not one this perfgate speaks (it speaks 1 to 3)");
  EXPECT_EQ(protocol_error({kHello, R"({"type":"ready"})"}),
            "stdout line 2: a ready line, which only a worker prints (protocol 3, `perfgate ab`)");
  EXPECT_EQ(protocol_error({R"({"type":"hello","protocol":1})"}),
            "stdout line 1: \"engine\" is missing");
  EXPECT_EQ(
      protocol_error({R"({"type":"hello","protocol":1,"engine":"x","model":{"param_bytes":-1}})"}),
      "stdout line 1: model.param_bytes must be a positive finite number, got -1");
  EXPECT_EQ(protocol_error({kHello, kHello}), "stdout line 2: a second hello line");
  EXPECT_EQ(protocol_error({kHello, R"({"type":"done"})"}),
            "stdout line 2: unknown line type \"done\" (expected hello, rep, profile, end, oom or "
            "error)");
}

// ---- worker mode (protocol 3): a ready line, then one answer per request ----------------------

const char* kHello3 = R"({"type":"hello","protocol":3,"engine":"demo"})";
const char* kReady = R"({"type":"ready"})";

TEST(ExecProtocol, AWorkerAnswersEachRequestWithOneLine) {
  ProtocolReader r(10, 3, false, ProtocolMode::worker);
  r.feed(kHello3);
  EXPECT_EQ(r.state(), ProtocolReader::State::want_ready);
  r.feed("");
  r.feed(kReady);
  EXPECT_EQ(r.state(), ProtocolReader::State::want_rep);
  for (int i = 0; i < 2; ++i) {
    r.asked_rep();
    r.feed(rep(i));
  }
  r.asked_end();  // 2 of at most 10: the end comes when perfgate says so
  r.feed(R"({"type":"end","peak_alloc_bytes":2048})");
  EXPECT_EQ(r.state(), ProtocolReader::State::done);
  EXPECT_EQ(r.samples().prefill_ms.size(), 2u);
  EXPECT_EQ(*r.peak_alloc_bytes(), 2048);
}

// The ProtocolError of a worker's `lines` (reps at most 2, gen_tokens 3), perfgate asking for the
// next repetition before each line after the ready line ("end" asks for the end), or "".
std::string worker_error(const std::vector<std::string>& lines) {
  ProtocolReader r(2, 3, false, ProtocolMode::worker);
  try {
    for (const auto& l : lines) {
      if (l == "end") {
        r.asked_end();
        continue;
      }
      if (l == "rep") {
        r.asked_rep();
        continue;
      }
      r.feed(l);
    }
  } catch (const ProtocolError& e) {
    return e.what();
  }
  return "";
}

TEST(ExecProtocol, AWorkersLinesFollowTheSameRulesAndAnswerOnlyWhatWasAsked) {
  EXPECT_EQ(
      worker_error({kHello3, kReady, "rep", rep(0), "rep", rep(1), "end", R"({"type":"end"})"}),
      "");
  EXPECT_EQ(worker_error({kHello}),
            "stdout line 1: the benchmark speaks protocol 1, which has no worker mode: `perfgate "
            "ab` needs protocol 3 (python/perfgate_bench.py of this perfgate speaks it)");
  EXPECT_EQ(worker_error({kHello3, R"({"type":"ready","warm":1})"}),
            "stdout line 2: unknown key \"warm\" in a ready line");
  EXPECT_EQ(worker_error({kHello3, "rep", rep(0)}),
            "stdout line 2: the line after the hello line must be the ready line (once the "
            "warm-up ran), got a rep line");
  EXPECT_EQ(worker_error({kHello3, kReady, kReady}), "stdout line 3: a second ready line");
  EXPECT_EQ(worker_error({kHello3, kReady, rep(0)}),
            "stdout line 3: a rep line perfgate did not ask for (a worker prints one in answer to "
            "each rep request)");
  EXPECT_EQ(worker_error({kHello3, kReady, "rep", rep(0), rep(1)}),
            "stdout line 4: a rep line perfgate did not ask for (a worker prints one in answer to "
            "each rep request)");
  EXPECT_EQ(worker_error({kHello3, kReady, "rep", rep(1)}),
            "stdout line 3: \"rep\" must be 0 (repetitions are numbered from 0, in order), got 1");
  EXPECT_EQ(worker_error({kHello3, kReady, "rep", rep(0, "[1]")}),
            "stdout line 3: decode_ms has 1 entries, expected 2 (gen-tokens 3 = 1 + 2 decode "
            "steps)");
  EXPECT_EQ(worker_error({kHello3, kReady, "rep", rep(0), R"({"type":"end"})"}),
            "stdout line 4: an end line before perfgate asked for the end (a worker prints it in "
            "answer to the end request)");
  EXPECT_EQ(worker_error({kHello3, kReady, "end", R"({"type":"end","peak":1})"}),
            "stdout line 3: unknown key \"peak\" in a end line");
  // The profile line needs the cell to ask for one, as in a one-shot run.
  EXPECT_EQ(worker_error({kHello3, kReady, "end", R"({"type":"profile"})"}),
            "stdout line 3: a profile line, but perfgate asked for none (the cell's profile is "
            "off)");
  EXPECT_EQ(worker_error({kHello3, kReady, "rep", rep(0), "end", R"({"type":"end"})", kReady}),
            "stdout line 5: output after the last (end) line");
  // oom and error may come instead of any answer, the warm-up's included.
  EXPECT_EQ(worker_error({kHello3, R"({"type":"oom","reason":"warm-up"})"}), "");
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

// ---- ChildProcess: an interactive command (a worker of protocol 3) ---------------------------

TEST(ExecProcess, AChildAnswersLineByLineWhileItsStdinStaysOpen) {
  ChildProcess child(shell("while read l; do echo \"got $l\"; echo \"to stderr $l\" >&2; done"));
  ASSERT_TRUE(child.started());
  const auto deadline = ChildProcess::Clock::now() + 20s;
  std::string line;
  for (const char* word : {"a", "b"}) {
    ASSERT_TRUE(child.write(std::string(word) + "\n"));
    ASSERT_EQ(child.read_line(line, deadline), ChildProcess::Read::line);
    EXPECT_EQ(line, std::string("got ") + word);
  }
  child.close_stdin();
  EXPECT_EQ(child.read_line(line, deadline), ChildProcess::Read::eof);
  const ProcessOutcome& out = child.wait(deadline);
  EXPECT_EQ(out.end, ProcessOutcome::End::exited);
  EXPECT_EQ(out.exit_status, 0);
  EXPECT_EQ(out.stderr_tail, "to stderr a\nto stderr b\n");
}

TEST(ExecProcess, AReadPastItsDeadlineKeepsWhatArrivedForTheNextRead) {
  ChildProcess child(shell("printf 'half'; read x; echo ' and the rest'"));
  std::string line;
  EXPECT_EQ(child.read_line(line, ChildProcess::Clock::now() + 200ms),
            ChildProcess::Read::timed_out);
  ASSERT_TRUE(child.write("go\n"));
  ASSERT_EQ(child.read_line(line, ChildProcess::Clock::now() + 20s), ChildProcess::Read::line);
  EXPECT_EQ(line, "half and the rest");
  EXPECT_EQ(child.kill(ProcessOutcome::End::stopped).end, ProcessOutcome::End::stopped);
}

// Two commands at once (the two sides of `perfgate ab`): the second one's supervisor must not
// hold the first one's stdin open, or closing it would never reach the first command.
TEST(ExecProcess, ClosingStdinReachesTheCommandWhileAnotherRuns) {
  ChildProcess first(shell("cat > /dev/null; echo done"));
  ChildProcess second(shell("cat > /dev/null"));
  ASSERT_TRUE(first.started() && second.started());
  first.close_stdin();
  std::string line;
  const auto deadline = ChildProcess::Clock::now() + 10s;
  ASSERT_EQ(first.read_line(line, deadline), ChildProcess::Read::line);
  EXPECT_EQ(line, "done");
  EXPECT_EQ(first.read_line(line, deadline), ChildProcess::Read::eof);
  EXPECT_EQ(first.wait(deadline).end, ProcessOutcome::End::exited);
}

TEST(ExecProcess, AMissingDirectoryIsASpawnFailure) {
  ProcessSpec s = shell("true");
  s.cwd = "/nonexistent/perfgate-dir";
  const auto out = run_process(s, [](std::string_view) { return true; });
  EXPECT_EQ(out.end, ProcessOutcome::End::spawn_failed);
  EXPECT_NE(out.spawn_error.find("/nonexistent/perfgate-dir"), std::string::npos);
}

}  // namespace
}  // namespace pg::exec
