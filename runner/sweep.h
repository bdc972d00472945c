// The runner's public face, free of LibTorch: what a sweep is, and how to run one into a Store.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/run.h"

namespace pg {

class Store;

// Every flag of `perfgate run`, also a key of the TOML sweep file. Lists sweep their product.
struct SweepConfig {
  std::vector<std::string> models = {"tiny"};
  std::vector<std::string> dtypes;  // empty = default for the device (fp32 cpu, bf16 cuda)
  std::vector<int> batch_sizes = {1, 4, 8, 16};
  std::vector<int> seq_lens = {64, 256, 512};
  int gen_tokens = 32;
  int warmup = 3;
  int reps = 10;
  std::string device;  // empty = cuda when present, else cpu
  std::vector<bool> kv_cache = {true};
  std::vector<std::string> attention;  // empty = sdpa where available, else math
  std::vector<bool> cuda_graphs = {false};
  bool profile = true;  // one untimed profiled sequence per cell (ignored with --exec)
  int64_t seed = 0;
  std::string repo = ".";
  std::string db = "perfgate.db";
  std::string csv, json;  // extra outputs, empty = none
  std::string submit_url, token_file;
  bool quiet = false;
  std::optional<double> peak_bw_gbps;  // override of the device table, for MBU
  std::optional<double> peak_tflops;   // override of the device table, for MFU
  // --exec: the user's benchmark measures every cell (docs/PROTOCOL.md); models are then names.
  std::string exec;
  double exec_timeout_s = 900;  // per cell
};

// The Cartesian product, in the order cells are run: model, dtype, attention, kv-cache,
// cuda-graphs, batch size, prompt length (the last varies fastest), so consecutive cells share a
// loaded model. Empty dtype/attention/device lists mean the machine's defaults.
std::vector<CellKey> expand(const SweepConfig& cfg);

class Reporter;
class CellMeasurer;

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
SweepOutcome run_sweep(const SweepConfig& cfg, const std::vector<CellKey>& cells, Store& store,
                       CellMeasurer& runner, const GitInfo& git, const Environment& env,
                       Reporter& reporter, const std::function<bool()>& stop_requested,
                       const std::string& started_at = {});

// The whole of `perfgate run` for a validated config: up-front checks of every cell, fingerprint,
// store, progress, table, --csv/--json files, --submit. Returns the exit code: 0 when the run is
// complete, 4 when SIGINT/SIGTERM stopped it after the current cell (stored as incomplete).
// Throws UsageError (exit 2) before anything is stored, RuntimeFailure (exit 4) on failures.
// `started_at` as for run_sweep: the CLI takes it before resolving the config.
int perform_run(const SweepConfig& cfg, const std::string& started_at = {});

}  // namespace pg
