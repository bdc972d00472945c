#include "runner/lm/cuda_support.h"

#include <dlfcn.h>

#include <fstream>
#include <regex>

#include "common/errors.h"

#ifdef PERFGATE_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#endif

namespace pg::lm {

#ifdef PERFGATE_WITH_CUDA
namespace {

// 13000 -> "13.0", 12040 -> "12.4" (CUDA's major * 1000 + minor * 10).
std::string cuda_version_string(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// cuDNN 9 encodes major * 10000 + minor * 100 + patch; cuDNN 8 major * 1000 + minor * 100 + patch.
std::string cudnn_version_string(long v) {
  const long major = v >= 90000 ? v / 10000 : v / 1000;
  const long rest = v >= 90000 ? v % 10000 : v % 1000;
  return std::to_string(major) + "." + std::to_string(rest / 100) + "." +
         std::to_string(rest % 100);
}

// Some VMs (the Firecracker GPU machine) hide /proc/driver/nvidia; NVML still answers. Loaded at
// run time so that perfgate neither links nor needs libnvidia-ml where there is no GPU.
std::string nvml_driver_version() {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) return "";
  using Init = int (*)();
  using Version = int (*)(char*, unsigned);
  auto init = reinterpret_cast<Init>(dlsym(lib, "nvmlInit_v2"));
  auto version = reinterpret_cast<Version>(dlsym(lib, "nvmlSystemGetDriverVersion"));
  auto shutdown = reinterpret_cast<Init>(dlsym(lib, "nvmlShutdown"));
  char buf[96] = {0};
  std::string out;
  if (init && version && init() == 0) {
    if (version(buf, sizeof buf) == 0) out = buf;
    if (shutdown) shutdown();
  }
  dlclose(lib);
  return out;
}

// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.10  ..." -> "570.86.10".
std::string kernel_driver_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  std::smatch m;
  if (std::getline(in, line) && std::regex_search(line, m, std::regex(R"(Module\s+(\d+(\.\d+)+))")))
    return m[1].str();
  return nvml_driver_version();
}

}  // namespace

int cuda_device_count() {
  return at::detail::getCUDAHooks().hasCUDA() ? at::cuda::device_count() : 0;
}

int cuda_compute_major(int index) {
  return at::cuda::getDeviceProperties(static_cast<c10::DeviceIndex>(index))->major;
}

CudaDeviceInfo cuda_device_info(int index) {
  CudaDeviceInfo info;
  const auto* props = at::cuda::getDeviceProperties(static_cast<c10::DeviceIndex>(index));
  info.name = props->name;
  info.major = props->major;
  info.minor = props->minor;
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  const auto kernel = kernel_driver_version();
  info.driver = (kernel.empty() ? "" : kernel + " ") + "(CUDA " + cuda_version_string(driver) + ")";
  info.runtime = cuda_version_string(runtime);
  const auto& hooks = at::detail::getCUDAHooks();
  info.cudnn = hooks.hasCuDNN() ? cudnn_version_string(hooks.versionCuDNN()) : "none";
  return info;
}

namespace {
class CudaEventClock : public StepClock {
 public:
  CudaEventClock(int index, size_t max_marks) : index_(static_cast<c10::DeviceIndex>(index)) {
    for (size_t i = 0; i < max_marks; ++i) events_.emplace_back(cudaEventDefault);
  }
  void mark() override {
    if (used_ == events_.size()) throw RuntimeFailure("more step marks than preallocated events");
    events_[used_++].record(at::cuda::getCurrentCUDAStream(index_));
  }
  std::vector<double> intervals_ms() override {
    std::vector<double> out;
    if (used_ > 0) events_[used_ - 1].synchronize();
    for (size_t i = 1; i < used_; ++i) out.push_back(events_[i - 1].elapsed_time(events_[i]));
    used_ = 0;
    return out;
  }

 private:
  c10::DeviceIndex index_;
  std::vector<at::cuda::CUDAEvent> events_;
  size_t used_ = 0;
};
}  // namespace

std::unique_ptr<StepClock> make_cuda_step_clock(int index, size_t max_marks) {
  return std::make_unique<CudaEventClock>(index, max_marks);
}

namespace {
class PoolStreamScope : public CudaStreamScope {
 public:
  explicit PoolStreamScope(int index)
      : guard_(at::cuda::getStreamFromPool(false, static_cast<c10::DeviceIndex>(index))) {}

 private:
  c10::cuda::CUDAStreamGuard guard_;
};

class CapturedGraph : public CudaGraph {
 public:
  void replay() override { graph.replay(); }
  at::cuda::CUDAGraph graph;
};

// `waiter` waits (on the device) for everything queued so far on `done`.
void wait_stream(const at::cuda::CUDAStream& waiter, const at::cuda::CUDAStream& done) {
  at::cuda::CUDAEvent event;
  event.record(done);
  event.block(waiter);
}
}  // namespace

std::unique_ptr<CudaStreamScope> use_pool_stream(int index) {
  return std::make_unique<PoolStreamScope>(index);
}

std::unique_ptr<CudaGraph> capture_cuda_graph(int index, const std::function<void()>& step,
                                              int warmup) {
  const auto device = static_cast<c10::DeviceIndex>(index);
  const auto current = at::cuda::getCurrentCUDAStream(device);
  if (current == at::cuda::getDefaultCUDAStream(device))
    throw RuntimeFailure("a CUDA graph cannot be captured on the default stream");
  const auto side = at::cuda::getStreamFromPool(false, device);
  wait_stream(side, current);
  {
    c10::cuda::CUDAStreamGuard on_side(side);
    for (int i = 0; i < warmup; ++i) step();
  }
  wait_stream(current, side);
  auto g = std::make_unique<CapturedGraph>();
  g->graph.capture_begin();
  try {
    step();
  } catch (...) {
    try {
      g->graph.capture_end();  // leave capture mode before the error goes on
    } catch (...) {
    }
    throw;
  }
  g->graph.capture_end();
  return g;
}

void cuda_reset_peak_allocated(int index) {
  c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<c10::DeviceIndex>(index));
}

int64_t cuda_peak_allocated(int index) {
  const auto stats =
      c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(index));
  return stats.allocated_bytes[0].peak;  // StatType::AGGREGATE
}

int64_t cuda_allocated_now(int index) {
  const auto stats =
      c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(index));
  return stats.allocated_bytes[0].current;
}

void cuda_empty_cache() {
  if (cuda_device_count() > 0) c10::cuda::CUDACachingAllocator::emptyCache();
}

void cuda_release_blas_workspaces() {
  if (cuda_device_count() == 0) return;
  cudaDeviceSynchronize();  // no kernel of the last session still uses one
  at::cuda::clearCublasWorkspaces();
}

void cuda_profiler(bool on) { on ? cudaProfilerStart() : cudaProfilerStop(); }

void cuda_synchronize(int index) {
  c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(index));
  cudaDeviceSynchronize();
}

#else  // a CPU-only LibTorch

int cuda_device_count() { return 0; }
int cuda_compute_major(int) { return 0; }
CudaDeviceInfo cuda_device_info(int) { throw RuntimeFailure("this LibTorch has no CUDA"); }
std::unique_ptr<StepClock> make_cuda_step_clock(int, size_t) {
  throw RuntimeFailure("this LibTorch has no CUDA");
}
std::unique_ptr<CudaStreamScope> use_pool_stream(int) {
  throw RuntimeFailure("this LibTorch has no CUDA");
}
std::unique_ptr<CudaGraph> capture_cuda_graph(int, const std::function<void()>&, int) {
  throw RuntimeFailure("this LibTorch has no CUDA");
}
void cuda_reset_peak_allocated(int) {}
void cuda_release_blas_workspaces() {}
int64_t cuda_peak_allocated(int) { return 0; }
int64_t cuda_allocated_now(int) { return 0; }
void cuda_empty_cache() {}
void cuda_profiler(bool) {}
void cuda_synchronize(int) {}

#endif

}  // namespace pg::lm
