// Everything that needs the CUDA headers, behind plain functions. Built against a CPU-only
// LibTorch (PERFGATE_WITH_CUDA undefined) they report no GPU.
#pragma once
#include <cstdint>
#include <functional>
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
int cuda_compute_major(int index);  // 9 on Hopper; 0 without CUDA

// CUDA events (timing enabled) recorded on the current stream of `index`.
std::unique_ptr<StepClock> make_cuda_step_clock(int index, size_t max_marks);

// Makes a stream from the pool of device `index` current until destroyed: a CUDA graph cannot
// be captured on the default stream, and the events of a graph cell must be recorded on the
// stream that runs its prefill and replays.
class CudaStreamScope {
 public:
  virtual ~CudaStreamScope() = default;
};
std::unique_ptr<CudaStreamScope> use_pool_stream(int index);

// One captured CUDA graph; destroying it frees its memory pool.
class CudaGraph {
 public:
  virtual ~CudaGraph() = default;
  virtual void replay() = 0;  // on the current stream
};
// As PyTorch does: `warmup` calls of step on a side stream that waits for the current one,
// the current stream waits for them, then one call captured on the current stream (which must
// not be the default stream: see use_pool_stream). Throws on failure, c10::OutOfMemoryError
// included.
std::unique_ptr<CudaGraph> capture_cuda_graph(int index, const std::function<void()>& step,
                                              int warmup = 3);

void cuda_reset_peak_allocated(int index);
int64_t cuda_peak_allocated(int index);  // bytes since the last reset
int64_t cuda_allocated_now(int index);   // bytes the caching allocator has handed out now
void cuda_empty_cache();
// Frees the cuBLAS and cuBLASLt workspaces PyTorch keeps for every (handle, stream) pair that ran
// a matmul, after the device is idle. They are allocated through the caching allocator and never
// freed otherwise (about 33 MiB a stream on Hopper), and every graph cell takes new pool streams:
// without this a cell's peak carried the workspaces of every cell opened before it in the process.
void cuda_release_blas_workspaces();
// cudaProfilerStart / Stop: the window `ncu --profile-from-start off` profiles.
void cuda_profiler(bool on);
void cuda_synchronize(int index);

}  // namespace pg::lm
