// `perfgate run` from a validated config to the exit code.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <optional>

#include "common/errors.h"
#include "common/inert_text.h"
#include "common/program_name.h"
#include "core/cell_label.h"
#include "remote/submit.h"
#include "runner/exec/exec_runner.h"
#include "runner/export_files.h"
#include "runner/fingerprint.h"
#include "runner/lm/measure.h"
#include "runner/measurer.h"
#include "runner/progress.h"
#include "runner/stop_signals.h"
#include "runner/sweep.h"
#include "runner/table.h"
#include "store/run_json.h"
#include "store/store.h"

namespace pg::runner {
namespace {

void check_cells_supported(const std::vector<CellKey>& cells) {
  for (const auto& key : cells) {
    try {
      lm::check_cell_supported(key);
    } catch (const SettingError& e) {
      throw e.with_context(fmt::format("cell {}: ", cell_label(key)));
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("cell {}: {}", cell_label(key), e.what()));
    }
  }
}

void warn_about_failed_cells(const Run& run) {
  size_t failed = 0;
  for (const auto& c : run.cells) failed += c.status != CellStatus::ok;
  if (failed == 0) return;
  fmt::print(stderr, "perfgate: warning: {} of {} cells have no numbers:\n", failed,
             run.cells.size());
  for (const auto& c : run.cells)
    if (c.status != CellStatus::ok)
      fmt::print(stderr, "  {}: {}{}\n", inert_text(cell_label(c.key), kInertNameChars),
                 to_string(c.status),
                 c.reason ? " (" + inert_text(*c.reason, kInertMessageChars) + ")" : std::string());
}

}  // namespace

int perform_run(const SweepConfig& cfg, const std::string& started_at) {
  // Everything that can be refused is refused before the run row is written.
  const std::vector<CellKey> cells = expand(cfg);
  if (cfg.exec.empty()) check_cells_supported(cells);  // an --exec benchmark judges its own cells
  std::optional<remote::SubmitTarget> target;
  std::string token;
  if (!cfg.submit_url.empty()) {
    target = remote::parse_submit_url(cfg.submit_url);
    token = read_token_file(cfg.token_file);
  }
  const GitInfo git = read_git_info(cfg.repo);
  const Environment env = run_environment(cfg.device);
  store::Store store(cfg.db);

  ReporterList console;
  if (!cfg.quiet) {
    console.add(std::make_unique<ProgressReporter>(stderr, ::isatty(STDERR_FILENO) == 1));
    console.add(std::make_unique<TableReporter>(stdout));
  }
  ReporterList files;
  if (!cfg.csv.empty()) files.add(std::make_unique<ExportFileReporter>(cfg.csv, ExportFormat::csv));
  if (!cfg.json.empty())
    files.add(std::make_unique<ExportFileReporter>(cfg.json, ExportFormat::json));

  std::unique_ptr<Measurer> measurer;
  if (cfg.exec.empty()) {
    measurer = std::make_unique<lm::LibTorchMeasurer>();
  } else {
    const auto device = env.find("device");
    measurer = std::make_unique<exec::ExecMeasurer>(exec::ExecSettings{
        cfg.exec, cfg.repo, cfg.exec_timeout_s, device == env.end() ? "" : device->second});
  }
  SweepOutcome outcome;
  {
    StopSignals signals;
    outcome = run_sweep(
        cfg, cells, store, *measurer, git, env, console, [] { return stop_requested(); },
        started_at);
  }
  const std::optional<Run> run = store.load_run(outcome.run_id);
  if (!run) throw RuntimeFailure(fmt::format("run {} is missing from {}", outcome.run_id, cfg.db));
  console.sweep_finished(*run);
  warn_about_failed_cells(*run);
  fmt::print("Stored run {} in {} ({}, {} of {} cells)\n", run->id, cfg.db, to_string(run->status),
             outcome.attempted, outcome.total);
  // The command to type next, as it works from here: the binary as it was started, and the store.
  if (!cfg.quiet)
    fmt::print("View: {} serve --db {}  ->  http://127.0.0.1:8080/\n", shell_word(program_name()),
               shell_word(cfg.db));
  std::fflush(stdout);

  // What follows only copies the stored run elsewhere; a failure says that the run is safe.
  auto copy_step = [&](auto&& step) {
    try {
      step();
    } catch (const std::exception& e) {
      throw RuntimeFailure(fmt::format("{} (run {} is stored in {})", e.what(), run->id, cfg.db));
    }
  };
  copy_step([&] { files.sweep_finished(*run); });
  if (outcome.interrupted) {
    fmt::print(stderr, "perfgate: interrupted: run {} stored as incomplete{}\n", run->id,
               target ? "; not submitted" : "");
    return kExitRuntime;
  }
  if (target) {
    copy_step([&] { remote::submit_run_json(*target, token, store::runs_to_json({*run}, true)); });
    fmt::print("Submitted run {} to {}{}\n", run->id, target->scheme_host_port, target->path);
  }
  return kExitOk;
}

}  // namespace pg::runner
