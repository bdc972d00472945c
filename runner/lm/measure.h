// The LibTorch side of the runner behind a LibTorch-free header: run one sweep cell, and
// describe the device. Everything that includes <torch/...> lives in runner/lm/*.cpp.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "core/run.h"

namespace pg {

struct MeasureOptions {
  int warmup = 3;
  int reps = 10;
  int64_t seed = 0;
  std::optional<double> peak_bw_gbps;  // overrides the known-GPU table (MBU)
  std::optional<double> peak_tflops;   // overrides the known-GPU table (MFU)
  // One untimed prefill + decode sequence under the profiler after the timed repetitions
  // (CellResult::profile; docs/METRICS.md, "The profile").
  bool profile = true;
};

// Keeps the last loaded model so that consecutive cells of one model/dtype/device reuse it.
class CellRunner {
 public:
  CellRunner();
  ~CellRunner();
  // Never throws for oom / sanity failures: those come back as status oom / invalid / error.
  CellResult run(const CellKey& key, const MeasureOptions& opt);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Throws UsageError when this build / device cannot run the cell (sdpa on LibTorch 1.x, a dtype
// the device can't run, cuda-graphs before it exists, a missing GPU, a bad model name or file).
void check_cell_supported(const CellKey& key);

bool cuda_available();
std::string default_attention();  // "sdpa" on LibTorch 2.x, "math" otherwise

// Device/software part of the fingerprint: device, compute_capability, driver, cuda, cudnn,
// torch, threads (+ peak figures used for MBU/MFU).
Environment device_environment(const std::string& device);

}  // namespace pg
