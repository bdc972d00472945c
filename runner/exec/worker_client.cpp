#include "runner/exec/worker_client.h"

#include <fmt/format.h>

#include <stdexcept>

#include "common/inert_text.h"
#include "runner/exec/exec_cell.h"
#include "runner/exec/exec_process.h"

namespace pg::exec {
namespace {

using Clock = ChildProcess::Clock;
using Read = ChildProcess::Read;

// A worker that reported its own failure (an oom or error line) has this long to exit, and to
// print its traceback to stderr, before its group is killed.
constexpr std::chrono::seconds kReportedExitGrace{5};

}  // namespace

WorkerClient::WorkerClient(const WorkerSpec& spec, const CellKey& key,
                           const runner::MeasureOptions& opt)
    : spec_(spec),
      max_reps_(opt.reps),
      reader_(opt.reps, key.gen_tokens, opt.profile, ProtocolMode::worker) {
  spec_.cwd = checkout_dir(spec_.cwd);
  ProcessSpec ps;
  ps.command = spec_.command;
  ps.cwd = spec_.cwd;
  for (const auto& kv : cell_environment(key, opt, spec_.cwd, ProtocolMode::worker))
    ps.env.push_back(kv);
  for (const auto& kv : spec_.env) ps.env.push_back(kv);
  ps.stdin_text = cell_json(key, opt, spec_.cwd, ProtocolMode::worker);
  child_ = std::make_unique<ChildProcess>(ps);
  if (!child_->started()) {
    fail(CellStatus::error, "the command " + describe_end(*child_->outcome()));
    return;
  }
  await_ready();
}

WorkerClient::WorkerClient(std::unique_ptr<ChildProcess> worker, const WorkerSpec& spec,
                           const CellKey& key, const runner::MeasureOptions& opt)
    : spec_(spec),
      max_reps_(opt.reps),
      reader_(opt.reps, key.gen_tokens, opt.profile, ProtocolMode::worker),
      child_(std::move(worker)) {
  spec_.cwd = checkout_dir(spec_.cwd);
  // Its next cell line; a worker that is gone says so when its answer is read.
  child_->write(cell_json(key, opt, spec_.cwd, ProtocolMode::worker));
  await_ready();
}

void WorkerClient::await_ready() {
  ready_ = await([this] { return reader_.state() == ProtocolReader::State::want_rep; },
                 "the ready line");
}

std::unique_ptr<ChildProcess> WorkerClient::release() {
  if (!finished_ || failure_ || !reader_.engine() || !reader_.engine()->many_cells) return nullptr;
  return std::move(child_);
}

WorkerClient::~WorkerClient() = default;  // ~ChildProcess kills the group if it still runs

bool WorkerClient::ok() const { return ready_ && !failure_ && !finished_; }

const std::optional<EngineInfo>& WorkerClient::engine() const { return reader_.engine(); }

const CellSamples& WorkerClient::samples() const { return reader_.samples(); }

std::optional<std::pair<CellStatus, std::string>> WorkerClient::failure() const { return failure_; }

std::optional<RepSample> WorkerClient::repetition() {
  if (!ok()) return std::nullopt;
  const size_t i = reader_.reps_seen();
  if (i >= static_cast<size_t>(max_reps_))
    throw std::logic_error("WorkerClient: more repetitions asked for than the cell's reps");
  drain_unasked();
  if (failure_) return std::nullopt;
  reader_.asked_rep();
  // A worker that is gone cannot take the request; reading its stdout says how it ended.
  child_->write(fmt::format("{{\"op\":\"rep\",\"rep\":{}}}\n", i));
  if (!await([this, i] { return reader_.reps_seen() > i; },
             fmt::format("the answer to repetition {}", i)))
    return std::nullopt;
  const CellSamples& s = reader_.samples();
  return RepSample{s.prefill_ms.back(), s.decode_ms.back()};
}

std::optional<WorkerClient::End> WorkerClient::finish() {
  if (!ok()) return std::nullopt;
  drain_unasked();
  if (failure_) return std::nullopt;
  reader_.asked_end();
  child_->write("{\"op\":\"end\"}\n");
  if (!await([this] { return reader_.state() == ProtocolReader::State::done; }, "the end line"))
    return std::nullopt;
  finished_ = true;
  // A worker that takes more cells stays running for the next one (release()); any other must
  // exit with status 0 after its end line.
  if (!reader_.engine()->many_cells) {
    child_->close_stdin();
    if (!await([] { return false; }, "the exit after the end line", true)) return std::nullopt;
  }
  return End{reader_.peak_alloc_bytes(), reader_.profile()};
}

// Reads and checks the worker's lines until `answered()` (until_exit: until its stdout ends and
// it exits with status 0), within one timeout. false: the worker failed, failure_ says why.
bool WorkerClient::await(const std::function<bool()>& answered, const std::string& waiting_for,
                         bool until_exit) {
  const auto deadline = Clock::now() + spec_.timeout;
  auto where = [&] {
    return fmt::format("after stdout line {}, {} of {} repetitions", reader_.lines(),
                       reader_.reps_seen(), max_reps_);
  };
  auto timed_out = [&] {
    child_->kill(ProcessOutcome::End::timed_out);
    fail(CellStatus::error,
         fmt::format("exec-timeout {} s passed while perfgate waited for {} ({}); its process "
                     "group was killed",
                     static_cast<double>(spec_.timeout.count()) / 1000, waiting_for, where()));
    return false;
  };
  std::string line;
  while (true) {
    switch (child_->read_line(line, deadline)) {
      case Read::line:
        try {
          reader_.feed(line);
        } catch (const ProtocolError& e) {
          fail(CellStatus::error, e.what());
          return false;
        }
        if (reader_.reported_failure()) {
          child_->close_stdin();
          child_->wait(std::min(deadline, Clock::now() + kReportedExitGrace));
          fail(*reader_.reported_failure(), reported_reason(reader_.reported_reason()));
          return false;
        }
        if (!until_exit && answered()) return true;
        if (Clock::now() >= deadline) return timed_out();  // a worker that never stops printing
        break;
      case Read::eof: {
        const ProcessOutcome& o = child_->wait(deadline);
        if (o.end == ProcessOutcome::End::timed_out) return timed_out();
        if (o.end != ProcessOutcome::End::exited || o.exit_status != 0) {
          fail(CellStatus::error, fmt::format("the command {} while perfgate waited for {} ({})",
                                              describe_end(o), waiting_for, where()));
          return false;
        }
        if (until_exit) return true;
        fail(CellStatus::error,
             fmt::format("stdout line {}: output ended while perfgate waited for {} ({} of {} "
                         "repetitions)",
                         reader_.lines() + 1, waiting_for, reader_.reps_seen(), max_reps_));
        return false;
      }
      case Read::timed_out:
        return timed_out();
      case Read::overflow:
        fail(CellStatus::error,
             fmt::format("stdout line {}: {}", reader_.lines() + 1, child_->overflow()));
        return false;
    }
  }
}

// Between two requests a worker prints nothing: a line already waiting is checked now (a rep line
// nobody asked for is refused, an oom or error line ends the cell), without waiting for more.
void WorkerClient::drain_unasked() {
  std::string line;
  while (!failure_ && child_->read_line(line, Clock::now()) == Read::line) {
    try {
      reader_.feed(line);
    } catch (const ProtocolError& e) {
      fail(CellStatus::error, e.what());
      return;
    }
    if (reader_.reported_failure()) {
      child_->close_stdin();
      child_->wait(Clock::now() + kReportedExitGrace);
      fail(*reader_.reported_failure(), reported_reason(reader_.reported_reason()));
    }
  }
}

// Ends the worker (its group is killed if it still runs) and keeps the reason, with the tail of
// its stderr, as one inert line.
void WorkerClient::fail(CellStatus status, const std::string& reason) {
  const ProcessOutcome& o =
      child_->outcome() ? *child_->outcome() : child_->kill(ProcessOutcome::End::stopped);
  failure_ = {status, inert_text(reason + stderr_summary(o.stderr_tail), kInertMessageChars)};
}

}  // namespace pg::exec
