#include "runner/lm/timing.h"

#include <chrono>
#include <cstdlib>
#include <string>

#include "common/errors.h"
#include "runner/lm/cuda_support.h"

namespace pg::lm {
namespace {

class SteadyClock : public StepClock {
 public:
  explicit SteadyClock(size_t max_marks) { marks_.reserve(max_marks); }
  void mark() override { marks_.push_back(std::chrono::steady_clock::now()); }
  std::vector<double> intervals_ms() override {
    std::vector<double> out;
    for (size_t i = 1; i < marks_.size(); ++i)
      out.push_back(std::chrono::duration<double, std::milli>(marks_[i] - marks_[i - 1]).count());
    marks_.clear();
    return out;
  }

 private:
  std::vector<std::chrono::steady_clock::time_point> marks_;
};

}  // namespace

TimingMode timing_mode() {
  const char* v = std::getenv("PERFGATE_TIMING");
  if (!v || std::string(v).empty() || std::string(v) == "step") return TimingMode::step;
  if (std::string(v) == "loop") return TimingMode::loop;
  throw UsageError("PERFGATE_TIMING: unknown value '" + std::string(v) +
                   "' (expected step or loop)");
}

const char* timing_mode_name(TimingMode mode) { return mode == TimingMode::loop ? "loop" : "step"; }

std::unique_ptr<StepClock> make_step_clock(const at::Device& device, size_t max_marks) {
  if (device.is_cuda()) return make_cuda_step_clock(device.index(), max_marks);
  if (!device.is_cpu()) throw RuntimeFailure("no step clock for device " + device.str());
  return std::make_unique<SteadyClock>(max_marks);
}

}  // namespace pg::lm
