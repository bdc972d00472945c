#include "runner/sweep.h"

#include <chrono>
#include <new>

#include "common/utc_time.h"
#include "runner/measurer.h"
#include "runner/reporter.h"
#include "store/store.h"

namespace pg::runner {

namespace {

// A measurer reports oom / invalid / error as results; anything that still escapes it becomes a
// stored `error` (or `oom` for host memory) cell rather than the end of the sweep.
CellResult run_cell(Measurer& measurer, const CellKey& key, const MeasureOptions& opt) {
  CellResult r;
  try {
    r = measurer.measure(key, opt);
  } catch (const std::bad_alloc&) {
    r = {};
    r.status = CellStatus::oom;
    r.reason = "out of host memory";
  } catch (const std::exception& e) {
    r = {};
    r.status = CellStatus::error;
    r.reason = e.what();
  }
  r.key = key;
  return r;
}

}  // namespace

SweepOutcome run_sweep(const SweepConfig& cfg, const std::vector<CellKey>& cells,
                       store::Store& store, Measurer& measurer, const GitInfo& git,
                       const Environment& env, Reporter& reporter,
                       const std::function<bool()>& stop_requested, const std::string& started_at) {
  SweepOutcome out;
  out.total = cells.size();
  // The run row comes first, unless the measurer learns part of the fingerprint from the first
  // cell (an --exec engine's versions): then it is written right after that cell is measured.
  bool begun = false;
  // Taken before any cell: the run's wall time (what a gate reports it cost) includes loading the
  // model and starting an --exec engine, not only what follows the run row.
  const std::string start = started_at.empty() ? now_iso8601() : started_at;
  auto begin = [&] {
    Environment full = env;
    for (const auto& [k, v] : measurer.fingerprint()) full[k] = v;
    out.run_id = store.begin_run(git, full, sweep_config_json(cfg), start);
    begun = true;
  };
  if (!measurer.fingerprint_after_first_cell()) begin();
  MeasureOptions opt;
  opt.warmup = cfg.warmup;
  opt.reps = cfg.reps;
  opt.seed = cfg.seed;
  opt.peak_bw_gbps = cfg.peak_bw_gbps;
  opt.peak_tflops = cfg.peak_tflops;
  opt.profile = cfg.profile;
  reporter.sweep_started(cells);
  try {
    for (size_t i = 0; i < cells.size(); ++i) {
      if (stop_requested && stop_requested()) {
        out.interrupted = true;
        break;
      }
      reporter.cell_started(i, cells[i]);
      const auto t0 = std::chrono::steady_clock::now();
      CellResult result = run_cell(measurer, cells[i], opt);
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!begun) begin();
      store.add_cell(out.run_id, result);
      ++out.attempted;
      reporter.cell_finished(i, result, seconds);
    }
    if (!begun) begin();  // stopped before the first cell, or no cells
  } catch (...) {
    // The cells stored so far stay; the run says it did not finish normally.
    try {
      if (begun) store.finish_run(out.run_id, RunStatus::failed);
    } catch (...) {
    }
    throw;
  }
  out.status = out.attempted == out.total ? RunStatus::complete : RunStatus::incomplete;
  store.finish_run(out.run_id, out.status);
  return out;
}

}  // namespace pg::runner
