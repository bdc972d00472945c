// The seam between a sweep and what measures its cells: one interface, one implementation per
// folder, each named for what it measures with: lm::LibTorchMeasurer (perfgate's own models and
// AOTInductor packages, timed in-process; runner/lm/measure.h) and exec::ExecMeasurer (the user's
// benchmark program, `exec`; runner/exec/exec_runner.h). LibTorch-free: it includes core/ only.
#pragma once
#include <cstdint>
#include <optional>

#include "core/run.h"

namespace pg::runner {

// How every cell of a sweep is measured, whatever measures it.
struct MeasureOptions {
  int warmup = 3;
  int reps = 10;
  int64_t seed = 0;
  std::optional<double> peak_bw_gbps;  // overrides the known-GPU table (MBU)
  std::optional<double> peak_tflops;   // overrides the known-GPU table (MFU)
  // One untimed prefill + decode sequence under the profiler after the timed repetitions
  // (CellResult::profile; docs/METRICS.md, "The profile").
  bool profile = true;
  // A/B runs (docs/AB.md, "Placement"): on CUDA, the cell's memory is placed at random from this
  // seed (runner/lm/placement.h) instead of where the allocator's history would put it.
  std::optional<uint64_t> placement_seed;
};

class Measurer {
 public:
  virtual ~Measurer() = default;
  // Reports oom / invalid / error as results; what still throws is stored as an `error` cell.
  virtual CellResult measure(const CellKey& key, const MeasureOptions& opt) = 0;
  // Fingerprint entries only the cells can tell (an external engine's name and versions). When
  // true, run_sweep writes the run row after the first cell, with fingerprint() merged in.
  virtual bool fingerprint_after_first_cell() const { return false; }
  virtual Environment fingerprint() const { return {}; }
};

}  // namespace pg::runner
