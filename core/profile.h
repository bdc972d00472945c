// One cell's profile: an extra prefill + decode sequence run under LibTorch's profiler after the
// timed repetitions (docs/METRICS.md, "The profile"). Per step, what ran (ATen ops on the host,
// kernels on the device) and the step's exact counters. Plain structs, like core/run.h.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pg {

// What a profile row counts: an ATen operator on the host (its self time) or a device kernel
// (its device time).
enum class ProfileOpKind { op, kernel };
const char* to_string(ProfileOpKind kind);  // "op" | "kernel"
std::optional<ProfileOpKind> profile_op_kind(const std::string& text);

struct ProfileOp {
  ProfileOpKind kind = ProfileOpKind::op;
  std::string name;  // from the model's own code: print it inert
  int64_t count = 0;
  double total_ms = 0;  // op: host self time; kernel: device time
};

// One step of the profiled sequence: step -1 is the prefill, 0.. the decode steps (as samples).
struct ProfileStep {
  int step = -1;
  double wall_ms = 0;       // host wall time of the step under the profiler
  int64_t ops = 0;          // ATen operator calls (nested calls included)
  int64_t kernels = 0;      // device kernels launched (graph nodes replayed included)
  int64_t syncs = 0;        // host-device synchronisations (CPU: aten::_local_scalar_dense)
  int64_t d2h_copies = 0;   // device-to-host copies (CPU: 0)
  int64_t alloc_bytes = 0;  // bytes the allocator handed out during the step
  std::optional<int64_t> peak_bytes;  // peak allocator growth over the step's start
  // The step on its device's timeline (kernels on a GPU, ATen ops on a CPU): from the start of
  // its first kernel (or copy) to the end of its last (`span_ms`), and the time in that span
  // when at least one kernel ran (`busy_ms`, the union of their intervals). span - busy is the
  // time between kernels: launch gaps, copies, idle. Both or neither; absent where not measured.
  std::optional<double> span_ms, busy_ms;
  std::vector<ProfileOp> ops_by_name;
};

struct CellProfile {
  std::string profiler;  // "kineto", "none" when unusable; an --exec benchmark names its own
  double wall_ms = 0;    // what the whole profiled sequence cost, set-up included
  std::optional<std::string> note;  // why kernels or counters are missing
  std::vector<ProfileStep> steps;   // prefill first, then the decode steps in order
};

}  // namespace pg
