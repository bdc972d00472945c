// Everything that needs the CUDA headers, behind plain functions. Built against a CPU-only
// LibTorch (PERFGATE_WITH_CUDA undefined) they report no GPU.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "runner/lm/timing.h"

namespace pg::lm {

int cuda_device_count();

struct CudaDeviceInfo {
  std::string name;
  int major = 0, minor = 0;  // compute capability
  std::string driver;        // kernel driver version, e.g. "570.86.10", and its CUDA version
  std::string runtime;       // CUDA runtime, e.g. "13.0"
  std::string cudnn;         // e.g. "9.10.2", or "none"
};
CudaDeviceInfo cuda_device_info(int index);

// CUDA events (timing enabled) recorded on the current stream of `index`.
std::unique_ptr<StepClock> make_cuda_step_clock(int index, size_t max_marks);

void cuda_reset_peak_allocated(int index);
int64_t cuda_peak_allocated(int index);  // bytes since the last reset
void cuda_empty_cache();

}  // namespace pg::lm
