// The runner's public face, free of LibTorch: how a resolved sweep (runner/sweep_config.h) is run
// into a Store, cell by cell, by a measurer (runner/measurer.h).
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/run.h"
#include "runner/sweep_config.h"

namespace pg::store {
class Store;
}

namespace pg::runner {

// The Cartesian product, in the order cells are run: model, dtype, attention, kv-cache,
// cuda-graphs, batch size, prompt length (the last varies fastest), so consecutive cells share a
// loaded model. Empty dtype/attention/device lists mean the machine's defaults.
std::vector<CellKey> expand(const SweepConfig& cfg);

class Reporter;
class Measurer;

struct SweepOutcome {
  int64_t run_id = 0;
  RunStatus status = RunStatus::incomplete;
  size_t attempted = 0;  // cells stored
  size_t total = 0;
  bool interrupted = false;
};

// Runs the cells of an already validated sweep into `store`: the run row first (after the first
// cell when the measurer's fingerprint comes from it), then one committed transaction per cell,
// then the run's final status. `stop_requested` is polled between cells; when it says yes the run
// is finished as incomplete. A cell whose measurer throws is stored with status error and the
// sweep goes on; a store failure marks the run failed and propagates.
// `started_at` (UTC ISO 8601) is when the run began, for its wall time; empty means now.
SweepOutcome run_sweep(const SweepConfig& cfg, const std::vector<CellKey>& cells,
                       store::Store& store, Measurer& measurer, const GitInfo& git,
                       const Environment& env, Reporter& reporter,
                       const std::function<bool()>& stop_requested,
                       const std::string& started_at = {});

// The whole of `perfgate run` for a validated config: up-front checks of every cell, fingerprint,
// store, progress, table, --csv/--json files, --submit. Returns the exit code: 0 when the run is
// complete, 4 when SIGINT/SIGTERM stopped it after the current cell (stored as incomplete).
// Throws UsageError (exit 2) before anything is stored, RuntimeFailure (exit 4) on failures.
// `started_at` as for run_sweep: the CLI takes it before resolving the config.
int perform_run(const SweepConfig& cfg, const std::string& started_at = {});

}  // namespace pg::runner
