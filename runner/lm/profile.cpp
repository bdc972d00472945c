#include "runner/lm/profile.h"

#include <torch/csrc/autograd/profiler_kineto.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "runner/lm/cuda_support.h"

namespace pg::lm {
namespace {

namespace kprof = torch::autograd::profiler;
namespace pimpl = torch::profiler::impl;

// libkineto::ActivityType, as KinetoEvent::activityType() reports it (kineto/ActivityType.h).
enum Activity : uint8_t {
  kCpuOp = 0,
  kGpuMemcpy = 3,
  kGpuMemset = 4,
  kKernel = 5,
  kCudaRuntime = 7,
  kCpuInstant = 9,
};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

bool is_sync_call(const std::string& name) {
  return name == "cudaDeviceSynchronize" || name == "cudaStreamSynchronize" ||
         name == "cudaEventSynchronize" || name == "cudaMemcpy" || name == "cudaMemcpy2D";
}

// [start, end) intervals in ns -> the time at least one of them covers (their union), ms.
double covered_ms(std::vector<std::pair<uint64_t, uint64_t>> spans) {
  std::sort(spans.begin(), spans.end());
  uint64_t covered = 0, end = 0;
  for (const auto& [s, e] : spans) {
    if (e <= end) continue;
    covered += e - std::max(s, end);
    end = e;
  }
  return static_cast<double>(covered) / 1e6;
}

// The step on its device's timeline (core/profile.h): `rows` are the intervals of what the rows
// time (kernels on CUDA, ATen ops on a CPU), `others` device work outside the rows (copies).
void timeline(const std::vector<std::pair<uint64_t, uint64_t>>& rows,
              const std::vector<std::pair<uint64_t, uint64_t>>& others, ProfileStep& step) {
  if (rows.empty()) return;
  uint64_t first = UINT64_MAX, last = 0;
  for (const auto* v : {&rows, &others})
    for (const auto& [s, e] : *v) {
      first = std::min(first, s);
      last = std::max(last, e);
    }
  step.span_ms = static_cast<double>(last - first) / 1e6;
  step.busy_ms = std::min(*step.span_ms, covered_ms(rows));
}

// One step's events -> its rows and counters. Host ops get their self time (their own duration
// less that of the ops nested in them, per thread), so the rows add up to the step.
void summarise(const std::vector<kprof::KinetoEvent>& events, const at::Device& device,
               ProfileStep& step) {
  struct Span {
    uint64_t start, end;
    uint64_t thread;
    std::string name;
  };
  std::vector<Span> ops;
  std::map<std::pair<ProfileOpKind, std::string>, ProfileOp> rows;
  auto row = [&](ProfileOpKind kind, const std::string& name) -> ProfileOp& {
    ProfileOp& r = rows[{kind, name}];
    r.kind = kind;
    r.name = name;
    return r;
  };
  struct Alloc {
    uint64_t at;
    int64_t bytes;
  };
  std::vector<Alloc> allocs;
  std::vector<std::pair<uint64_t, uint64_t>> kernel_spans, copy_spans;
  for (const auto& e : events) {
    const uint8_t type = e.activityType();
    if (type == kCpuOp) {
      ops.push_back({e.startNs(), e.endNs(), e.startThreadId(), e.name()});
    } else if (type == kKernel) {
      ProfileOp& r = row(ProfileOpKind::kernel, e.name());
      ++r.count;
      r.total_ms += static_cast<double>(e.durationNs()) / 1e6;
      ++step.kernels;
      kernel_spans.push_back({e.startNs(), e.startNs() + e.durationNs()});
    } else if (type == kGpuMemcpy || type == kGpuMemset) {
      if (type == kGpuMemcpy && e.name().find("DtoH") != std::string::npos) ++step.d2h_copies;
      copy_spans.push_back({e.startNs(), e.startNs() + e.durationNs()});
    } else if (type == kCudaRuntime) {
      if (is_sync_call(e.name())) ++step.syncs;
    } else if (type == kCpuInstant && e.name() == "[memory]" && e.deviceType() == device.type()) {
      allocs.push_back({e.startNs(), e.nBytes()});
    }
  }
  std::sort(ops.begin(), ops.end(), [](const Span& a, const Span& b) {
    return a.thread != b.thread ? a.thread < b.thread
                                : (a.start != b.start ? a.start < b.start : a.end > b.end);
  });
  std::vector<std::pair<const Span*, uint64_t>> open;  // span, time of its children
  auto close = [&] {
    const auto [s, children] = open.back();
    open.pop_back();
    const uint64_t dur = s->end - s->start;
    ProfileOp& r = row(ProfileOpKind::op, s->name);
    ++r.count;
    r.total_ms += static_cast<double>(dur - std::min(dur, children)) / 1e6;
    if (!open.empty()) open.back().second += dur;
  };
  for (size_t i = 0; i < ops.size(); ++i) {
    const Span& s = ops[i];
    while (!open.empty() &&
           (open.back().first->thread != s.thread || open.back().first->end <= s.start))
      close();
    open.push_back({&s, 0});
    if (s.name == "aten::_local_scalar_dense" && device.is_cpu()) ++step.syncs;
  }
  while (!open.empty()) close();
  step.ops = static_cast<int64_t>(ops.size());
  if (device.is_cuda()) {
    timeline(kernel_spans, copy_spans, step);
  } else {
    std::vector<std::pair<uint64_t, uint64_t>> op_spans;
    for (const Span& s : ops) op_spans.push_back({s.start, std::max(s.start, s.end)});
    timeline(op_spans, {}, step);
  }
  std::sort(allocs.begin(), allocs.end(),
            [](const Alloc& a, const Alloc& b) { return a.at < b.at; });
  int64_t held = 0, peak = 0;
  for (const Alloc& a : allocs) {
    if (a.bytes > 0) step.alloc_bytes += a.bytes;
    held += a.bytes;
    peak = std::max(peak, held);
  }
  step.peak_bytes = peak;
  for (auto& [key, r] : rows) step.ops_by_name.push_back(std::move(r));
  std::sort(step.ops_by_name.begin(), step.ops_by_name.end(),
            [](const ProfileOp& a, const ProfileOp& b) { return a.total_ms > b.total_ms; });
}

// Each mark ends the running step's session (after waiting for the device, so its kernels are
// in it) and starts the next one.
class ProfilingClock : public StepClock {
 public:
  ProfilingClock(const at::Device& device, size_t marks, CellProfile& out)
      : device_(device), marks_(marks), out_(out) {
    activities_.insert(pimpl::ActivityType::CPU);
    if (device.is_cuda()) activities_.insert(pimpl::ActivityType::CUDA);
  }
  ~ProfilingClock() override {
    if (profiling_) {
      try {
        kprof::disableProfiler();
      } catch (...) {
      }
    }
  }

  void mark() override {
    if (done_ > 0) end_step();
    ++done_;
    if (done_ < marks_) begin_step();
  }
  std::vector<double> intervals_ms() override { return {}; }

 private:
  void begin_step() {
    start_ = std::chrono::steady_clock::now();
    if (!usable_) return;
    try {
      const pimpl::ProfilerConfig config(pimpl::ProfilerState::KINETO, false,
                                         /*profile_memory=*/true);
      kprof::prepareProfiler(config, activities_);
      kprof::enableProfiler(config, activities_);
      profiling_ = true;
      start_ = std::chrono::steady_clock::now();
    } catch (const std::exception& e) {
      usable_ = false;
      out_.profiler = "none";
      out_.note = std::string("the Kineto profiler could not start: ") + e.what();
      out_.note = out_.note->substr(0, out_.note->find('\n'));
    }
  }

  void end_step() {
    if (device_.is_cuda()) cuda_synchronize(device_.index());
    ProfileStep step;
    step.step = static_cast<int>(done_) - 2;  // the first step (-1) is the prefill
    step.wall_ms = ms_since(start_);
    if (profiling_) {
      profiling_ = false;
      auto result = kprof::disableProfiler();
      summarise(result->events(), device_, step);
      // The boundary's own wait for the device is one of the synchronisations counted.
      if (device_.is_cuda() && step.syncs > 0) --step.syncs;
    }
    out_.steps.push_back(std::move(step));
  }

  at::Device device_;
  size_t marks_, done_ = 0;
  CellProfile& out_;
  std::set<pimpl::ActivityType> activities_;
  std::chrono::steady_clock::time_point start_;
  bool usable_ = true, profiling_ = false;
};

}  // namespace

CellProfile profile_sequence(const at::Device& device, size_t marks,
                             const std::function<void(StepClock&)>& sequence) {
  const auto t0 = std::chrono::steady_clock::now();
  // Kineto probes for GPUs even when asked for CPU activity only, and logs an ERROR line on a
  // machine without a driver; on CPU that is noise (a level the user set is kept).
  if (device.is_cpu()) setenv("KINETO_LOG_LEVEL", "5", /*overwrite=*/0);
  CellProfile p;
  p.profiler = "kineto";
  try {
    ProfilingClock clock(device, marks, p);
    sequence(clock);
  } catch (const std::exception& e) {  // the timed samples stand; only the profile is lost
    const std::string what = e.what();
    p.note = "the profiled sequence failed: " + what.substr(0, what.find('\n'));
    p.steps.clear();
    p.profiler = "none";
  }
  if (device.is_cuda() && p.profiler == "kineto") {
    const bool any_kernel = std::any_of(p.steps.begin(), p.steps.end(),
                                        [](const ProfileStep& s) { return s.kernels > 0; });
    if (!any_kernel) p.note = "no CUDA kernel was recorded: CUPTI is unusable on this machine";
  }
  p.wall_ms = ms_since(t0);
  return p;
}

}  // namespace pg::lm
