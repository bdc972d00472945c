#include "runner/exec/exec_runner.h"

#include <fmt/format.h>

#include "runner/exec/exec_process.h"

namespace pg::exec {
namespace {

std::string versions_text(const EngineInfo& e) {
  std::string out = e.name;
  for (const auto& [k, v] : e.versions) out += " " + k + "=" + v;
  return out;
}

}  // namespace

ExecMeasurer::ExecMeasurer(ExecSettings settings) : settings_(std::move(settings)) {
  settings_.repo_dir = checkout_dir(settings_.repo_dir);
}

CellResult ExecMeasurer::measure(const CellKey& key, const runner::MeasureOptions& opt) {
  ProcessSpec spec;
  spec.command = settings_.command;
  spec.cwd = settings_.repo_dir;
  for (const auto& kv : cell_environment(key, opt, settings_.repo_dir)) spec.env.push_back(kv);
  spec.stdin_text = cell_json(key, opt, settings_.repo_dir);
  spec.timeout = std::chrono::milliseconds(static_cast<int64_t>(settings_.timeout_s * 1000));

  ProtocolReader reader(opt.reps, key.gen_tokens, opt.profile);
  std::optional<ProtocolError> bad_line;
  const ProcessOutcome proc = run_process(spec, [&](std::string_view line) {
    try {
      reader.feed(line);
      return true;
    } catch (const ProtocolError& e) {
      bad_line = e;
      return false;  // no point in waiting for the rest: the cell is an error already
    } catch (const std::exception& e) {
      bad_line = ProtocolError(reader.lines(), e.what());
      return false;
    }
  });
  // The run's fingerprint takes the first engine that said hello, even in a cell that failed.
  if (reader.engine() && !engine_) engine_ = *reader.engine();
  const std::string err = stderr_summary(proc.stderr_tail);
  using End = ProcessOutcome::End;
  if (proc.end == End::spawn_failed)
    return failed_cell(CellStatus::error, "the command " + describe_end(proc));
  if (bad_line) return failed_cell(CellStatus::error, std::string(bad_line->what()) + err);
  if (!proc.overflow.empty())
    return failed_cell(CellStatus::error,
                       fmt::format("stdout line {}: {}", reader.lines() + 1, proc.overflow) + err);
  if (proc.end == End::timed_out)
    return failed_cell(
        CellStatus::error,
        fmt::format("no complete result within --exec-timeout {} s (after stdout line "
                    "{}, {} of {} repetitions); its process group was killed{}",
                    settings_.timeout_s, reader.lines(), reader.reps_seen(), opt.reps, err));
  if (reader.reported_failure()) {
    return failed_cell(*reader.reported_failure(), reported_reason(reader.reported_reason()) + err);
  }
  if (proc.end != End::exited || proc.exit_status != 0)
    return failed_cell(
        CellStatus::error,
        fmt::format("the command {} (after stdout line {}, {} of {} repetitions){}",
                    describe_end(proc), reader.lines(), reader.reps_seen(), opt.reps, err));
  if (reader.state() != ProtocolReader::State::done)
    return failed_cell(
        CellStatus::error,
        fmt::format("stdout line {}: output ended before the end line ({}; {} of {} "
                    "repetitions){}",
                    reader.lines() + 1, reader.engine() ? "after the hello line" : "no hello line",
                    reader.reps_seen(), opt.reps, err));

  const EngineInfo& engine = *reader.engine();
  if (!(*engine_ == engine)) {
    return failed_cell(CellStatus::error,
                       fmt::format("stdout line 1: the engine changed within the run: this cell "
                                   "reports {}, the run's first cell {}",
                                   versions_text(engine), versions_text(*engine_)));
  }
  return exec_cell_result(key, opt, engine, reader.samples(), reader.peak_alloc_bytes(),
                          reader.profile(), settings_.device_name);
}

Environment ExecMeasurer::fingerprint() const {
  Environment env;
  if (!engine_) return env;
  env["engine"] = engine_->name;
  for (const auto& [k, v] : engine_->versions) env["engine." + k] = v;
  if (engine_->model.display_name) env["engine.model"] = *engine_->model.display_name;
  return env;
}

}  // namespace pg::exec
