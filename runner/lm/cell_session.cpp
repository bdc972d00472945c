// A cell held open between repetitions: the one repetition path of perfgate's own models and
// AOTInductor packages, for `perfgate run` (LibTorchMeasurer::measure) and the worker alike.
#include "runner/lm/cell_session.h"

#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/InferenceMode.h>
#include <sys/resource.h>

#include <algorithm>

#include "common/errors.h"
#include "runner/lm/cuda_support.h"
#include "runner/lm/device_info.h"
#include "runner/lm/generate.h"
#include "runner/lm/gpu_table.h"
#include "runner/lm/measure_testing.h"
#include "runner/lm/metrics.h"
#include "runner/lm/profile.h"
#include "runner/lm/static_decode.h"

namespace pg::lm {

namespace testing {
namespace {
Hooks& hooks() {
  static Hooks h;
  return h;
}
}  // namespace
void set_hooks(Hooks h) { hooks() = std::move(h); }
}  // namespace testing

namespace {

int64_t max_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<int64_t>(u.ru_maxrss) * 1024;  // Linux reports KiB
}

// LibTorch's CPU allocator reports failure as a plain c10::Error.
bool is_allocation_failure(const c10::Error& e) {
  const std::string what = e.what_without_backtrace();
  return what.find("can't allocate memory") != std::string::npos ||
         what.find("not enough memory") != std::string::npos;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// What every call into a session runs under: no autograd, the cell's device current.
struct DeviceScope {
  explicit DeviceScope(const at::Device& device) : guard(device) {}
  c10::InferenceMode inference;
  c10::DeviceGuard guard;
};

// What both kinds of cell share: the clock, the repetitions, the memory peak and the end.
class SessionBase : public CellSession {
 public:
  SessionBase(const CellKey& key, const runner::MeasureOptions& opt, const at::Device& device)
      : key_(key), opt_(opt), device_(device), per_step_(timing_mode() == TimingMode::step) {
    reset_memory_peak();  // after the model is loaded: the memory metric is what the cell adds
  }

  void warm_up() {
    for (int i = 0; i < opt_.warmup; ++i) one_repetition();
  }

  RepSample repetition() override {
    RepSample s;
    as_cell_failure([&] {
      DeviceScope scope(device_);
      s = one_repetition();
    });
    samples_.prefill_ms.push_back(s.prefill_ms);
    samples_.decode_ms.push_back(s.decode_ms);
    ++timed_reps_;
    return s;
  }

  std::optional<std::string> invalid_reason() const override { return invalid_; }
  std::optional<int64_t> memory_peak() const override { return memory_peak_; }

  CellResult finish() override {
    CellResult r;
    r.key = key_;
    as_cell_failure([&] {
      DeviceScope scope(device_);
      capture_memory_peak();  // before the profile, whose own allocations never count
      if (opt_.profile && !invalid_) r.profile = profile();
      r.samples = samples_;
      if (testing::hooks().after_samples) testing::hooks().after_samples(r.samples);
      if (invalid_) {  // the package's logits failed their check
        r.status = CellStatus::invalid;
        r.reason = *invalid_;
        return;
      }
      if (auto why = sanity_failure(r.samples, timed_reps_, key_.gen_tokens)) {
        r.status = CellStatus::invalid;
        r.reason = *why;
        return;
      }
      const auto peaks = device_.is_cuda() ? peaks_for(device_name(device_), key_.dtype,
                                                       opt_.peak_bw_gbps, opt_.peak_tflops)
                                           : PeakFigures{opt_.peak_bw_gbps, opt_.peak_tflops};
      r.metrics = derive_metrics(key_, r.samples, cost(), peaks);
      for (const auto& name : metrics_to_drop()) r.metrics.erase(name);
      r.metrics[device_.is_cuda() ? "peak_alloc_bytes" : "peak_rss_growth_bytes"] =
          static_cast<double>(*memory_peak_);
    });
    return r;
  }

 protected:
  // One repetition, marking the clock before the prefill, after it and after each decode step
  // (or only around the loop: per_step() false). Never waits for the device.
  virtual void run_once() = 0;
  // Looks at what the repetition left (an AOTInductor package's logits); may call set_invalid.
  virtual void check_output() {}
  // The untimed profiled sequence (docs/METRICS.md, "The profile").
  virtual CellProfile profile() = 0;
  virtual CellCost cost() const = 0;
  virtual std::vector<std::string> metrics_to_drop() const { return {}; }

  // How the repetitions are timed: at every decode step or around the loop (PERFGATE_TIMING),
  // on a clock with a mark for the prefill and one per decode step.
  void start_clock() {
    clock_ = make_step_clock(device_, static_cast<size_t>(key_.gen_tokens) + 1);
  }
  StepClock& clock() { return *clock_; }
  bool per_step() const { return per_step_; }
  void set_invalid(const std::string& why) { invalid_ = why; }
  const CellKey& key() const { return key_; }
  const runner::MeasureOptions& options() const { return opt_; }
  const at::Device& device() const { return device_; }

 private:
  // The one repetition of every model, timed or warm-up: run_once, then the clock's intervals
  // (the repetition's only wait for the device) become the sample, then check_output.
  RepSample one_repetition() {
    if (testing::hooks().before_rep) testing::hooks().before_rep(rep_index_);
    ++rep_index_;
    run_once();
    const auto intervals = clock_->intervals_ms();
    RepSample s;
    s.prefill_ms = intervals.at(0);
    const int64_t G = key_.gen_tokens;
    if (per_step_ || G < 2) {
      s.decode_ms.assign(intervals.begin() + 1, intervals.end());
    } else {  // one interval around the loop, spread evenly so the schema stays the same
      s.decode_ms.assign(static_cast<size_t>(G - 1), intervals.at(1) / static_cast<double>(G - 1));
    }
    check_output();
    return s;
  }

  void reset_memory_peak() {
    if (device_.is_cuda())
      cuda_reset_peak_allocated(device_.index());
    else
      rss_before_ = max_rss_bytes();
  }
  void capture_memory_peak() {
    memory_peak_ = device_.is_cuda() ? cuda_peak_allocated(device_.index())
                                     : std::max<int64_t>(0, max_rss_bytes() - rss_before_);
  }

  CellKey key_;
  runner::MeasureOptions opt_;
  at::Device device_;
  bool per_step_;
  std::unique_ptr<StepClock> clock_;
  int rep_index_ = 0;   // warm-up and timed, for the test hooks
  int timed_reps_ = 0;  // repetition() calls
  CellSamples samples_;
  std::optional<std::string> invalid_;
  int64_t rss_before_ = 0;
  std::optional<int64_t> memory_peak_;
};

// The built-in models: a random prompt from the seed, the KV cache, and for a graph cell its
// pool stream and captured decode step, alive as long as the session.
class BuiltinSession final : public SessionBase {
 public:
  BuiltinSession(const Model& m, const CellKey& key, const runner::MeasureOptions& opt,
                 const at::Device& device)
      : SessionBase(key, opt, device), m_(m) {
    const int64_t B = key.batch_size, P = key.seq_len, G = key.gen_tokens;
    auto gen = at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(opt.seed));
    prompt_ =
        at::randint(m.cfg.vocab, {B, P}, gen, at::TensorOptions().dtype(at::kLong)).to(device);
    if (key.kv_cache)
      cache_.emplace(m.cfg.n_layer, B, m.cfg.n_head, P + G, m.cfg.head_dim(), m.options());
    const auto attention = parse_attention(key.attention);
    start_clock();
    g_ = GenerateOptions{key.gen_tokens, attention, cache_ ? &*cache_ : nullptr, &clock(), false};
    g_.mark_each_step = per_step();

    // A graph cell runs wholly on a pool stream (capture needs a non-default stream, and the
    // events must be on the stream that does the work); its graph is freed with the session.
    if (key.cuda_graphs) {
      stream_ = use_pool_stream(device.index());
      step_.emplace(m, *cache_, attention, B);
      step_->set_position(P);
      graph_ = capture_cuda_graph(device.index(), [this] { step_->run(); });
      g_.static_step = &*step_;
      g_.run_step = [this] { graph_->replay(); };
    }
  }

 private:
  void run_once() override { generate(m_, prompt_, g_); }
  CellProfile profile() override {
    return profile_sequence(device(), static_cast<size_t>(key().gen_tokens) + 1, [&](StepClock& c) {
      GenerateOptions profiled = g_;
      profiled.clock = &c;
      profiled.mark_each_step = true;
      generate(m_, prompt_, profiled);
    });
  }
  CellCost cost() const override { return cell_cost(m_.cfg, key()); }

  const Model& m_;
  at::Tensor prompt_;
  std::optional<KVCache> cache_;
  GenerateOptions g_;
  std::unique_ptr<CudaStreamScope> stream_;
  std::optional<StaticDecodeStep> step_;
  std::unique_ptr<CudaGraph> graph_;
};

// An AOTInductor package, through the same repetitions; the sanity of its logits too.
class AotiSession final : public SessionBase {
 public:
  AotiSession(AotiModel& m, const CellKey& key, const runner::MeasureOptions& opt,
              const at::Device& device)
      : SessionBase(key, opt, device), m_(m) {
    start_clock();
    if (key.cuda_graphs) stream_ = use_pool_stream(device.index());  // as for the built-in models
    m_.prepare(key, opt.seed);
  }

 private:
  void run_once() override { m_.run_repetition(clock(), per_step()); }
  void check_output() override {
    if (auto why = m_.output_failure()) set_invalid(*why);
  }
  CellProfile profile() override {
    return profile_sequence(device(), static_cast<size_t>(key().gen_tokens) + 1,
                            [&](StepClock& c) { m_.run_repetition(c, true); });
  }
  CellCost cost() const override { return m_.cost(key()); }
  std::vector<std::string> metrics_to_drop() const override { return m_.metrics_to_drop(); }

  AotiModel& m_;
  std::unique_ptr<CudaStreamScope> stream_;
};

template <typename Session, typename ModelT>
std::unique_ptr<CellSession> open_session(ModelT& m, const CellKey& key,
                                          const runner::MeasureOptions& opt,
                                          const at::Device& device) {
  std::unique_ptr<Session> s;
  as_cell_failure([&] {
    DeviceScope scope(device);
    s = std::make_unique<Session>(m, key, opt, device);
    s->warm_up();
  });
  return s;
}

}  // namespace

void as_cell_failure(const std::function<void()>& body) {
  try {
    body();
  } catch (const c10::OutOfMemoryError& e) {
    throw CellFailure(CellStatus::oom, first_line(e.what_without_backtrace()), true);
  } catch (const UsageError&) {
    throw;
  } catch (const CellFailure&) {
    throw;
  } catch (const c10::Error& e) {
    throw CellFailure(is_allocation_failure(e) ? CellStatus::oom : CellStatus::error,
                      first_line(e.what_without_backtrace()), true);
  } catch (const std::exception& e) {
    throw CellFailure(CellStatus::error, e.what(), false);
  }
}

std::unique_ptr<CellSession> open_builtin_session(const Model& m, const CellKey& key,
                                                  const runner::MeasureOptions& opt,
                                                  const at::Device& device) {
  return open_session<BuiltinSession>(m, key, opt, device);
}

std::unique_ptr<CellSession> open_aoti_session(AotiModel& m, const CellKey& key,
                                               const runner::MeasureOptions& opt,
                                               const at::Device& device) {
  return open_session<AotiSession>(m, key, opt, device);
}

}  // namespace pg::lm
