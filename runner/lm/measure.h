// The LibTorch side of the runner behind a LibTorch-free header: its measurer (runner/measurer.h),
// and what the sweep asks of the device before it runs. Everything that includes <torch/...>
// lives in runner/lm/*.cpp.
#pragma once
#include <memory>
#include <string>

#include "core/run.h"
#include "runner/measurer.h"

namespace pg {

namespace lm {

// perfgate's own models and AOTInductor packages, timed in this process. Keeps the last loaded
// model so that consecutive cells of one model/dtype/device reuse it.
class LibTorchMeasurer final : public Measurer {
 public:
  LibTorchMeasurer();
  ~LibTorchMeasurer() override;
  // check_cell_supported's refusals and bad options throw UsageError; an oom or a sanity failure
  // comes back as status oom / invalid / error.
  CellResult measure(const CellKey& key, const MeasureOptions& opt) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lm

// Throws UsageError when this build / device cannot run the cell (sdpa on LibTorch 1.x, a dtype
// the device can't run, cuda-graphs before it exists, a missing GPU, a bad model name or file).
void check_cell_supported(const CellKey& key);

bool cuda_available();
std::string default_attention();  // "sdpa" on LibTorch 2.x, "math" otherwise

// Device/software part of the fingerprint: device, compute_capability, driver, cuda, cudnn,
// torch, threads (+ peak figures used for MBU/MFU).
Environment device_environment(const std::string& device);

}  // namespace pg
