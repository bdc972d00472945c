#include "runner/lm/measure.h"

#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/InferenceMode.h>
#include <sys/resource.h>
#include <torch/version.h>

#include <algorithm>

#include "common/errors.h"
#include "runner/lm/aoti_model.h"
#include "runner/lm/artifact.h"
#include "runner/lm/checkpoint_load.h"
#include "runner/lm/cuda_support.h"
#include "runner/lm/device_info.h"
#include "runner/lm/generate.h"
#include "runner/lm/gpu_table.h"
#include "runner/lm/measure_testing.h"
#include "runner/lm/metrics.h"
#include "runner/lm/model_spec.h"
#include "runner/lm/profile.h"
#include "runner/lm/static_decode.h"

namespace pg {

namespace lm::testing {
namespace {
Hooks& hooks() {
  static Hooks h;
  return h;
}
}  // namespace
void set_hooks(Hooks h) { hooks() = std::move(h); }
}  // namespace lm::testing

namespace {

using namespace lm;

// Messages name the run's settings (docs/RUN.md); the CLI spells them as its flags.
std::string setting(const char* name) { return SettingError::setting(name); }

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

}  // namespace

struct CellRunner::Impl {
  std::string loaded_key;
  std::optional<Model> model;
  std::unique_ptr<AotiModel> aoti;

  // Frees whatever model is loaded when `want` names another; true if it must be loaded.
  bool switch_model(const std::string& want) {
    if ((model || aoti) && loaded_key == want) return false;
    model.reset();  // free the old weights before allocating the new ones
    aoti.reset();
    cuda_empty_cache();
    loaded_key = want;
    return true;
  }

  const Model& ensure_model(const CellKey& key, const at::Device& device, int64_t seed) {
    if (!switch_model(key.model + "|" + key.dtype + "|" + device.str() + "|" +
                      std::to_string(seed)))
      return *model;
    try {
      const auto dtype = parse_dtype(key.dtype);
      if (is_file_model(key.model))
        model = load_gpt2_checkpoint(artifact_path(key.model, 0), dtype, device);
      else
        model = random_model(resolve_model(key.model), dtype, device, seed);
    } catch (...) {
      loaded_key.clear();
      throw;
    }
    return *model;
  }

  AotiModel& ensure_aoti(const ArtifactFile& file, const at::Device& device) {
    if (switch_model(file.path + "|" + file.sha256 + "|" + device.str())) {
      try {
        aoti = std::make_unique<AotiModel>(file, device);
      } catch (...) {
        loaded_key.clear();
        throw;
      }
    }
    return *aoti;
  }

  // Appends one repetition's intervals (prefill, then decode) to the samples.
  static void record(const std::vector<double>& intervals, bool per_step, int64_t G,
                     CellSamples& samples) {
    samples.prefill_ms.push_back(intervals.at(0));
    if (per_step || G < 2) {
      samples.decode_ms.emplace_back(intervals.begin() + 1, intervals.end());
    } else {  // one interval around the loop, spread evenly so the schema stays the same
      const double each = intervals.at(1) / static_cast<double>(G - 1);
      samples.decode_ms.emplace_back(static_cast<size_t>(G - 1), each);
    }
  }

  // The built-in models: timed repetitions into r.samples; returns the cell's cost.
  CellCost time_builtin(const CellKey& key, const MeasureOptions& opt, const at::Device& device,
                        CellResult& r) {
    const Model& m = ensure_model(key, device, opt.seed);
    const int64_t B = key.batch_size, P = key.seq_len, G = key.gen_tokens;
    reset_memory_peak(device);

    auto gen = at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(opt.seed));
    const auto prompt =
        at::randint(m.cfg.vocab, {B, P}, gen, at::TensorOptions().dtype(at::kLong)).to(device);
    std::optional<KVCache> cache;
    if (key.kv_cache)
      cache.emplace(m.cfg.n_layer, B, m.cfg.n_head, P + G, m.cfg.head_dim(), m.options());
    const auto attention = parse_attention(key.attention);
    const bool per_step = timing_mode() == TimingMode::step;
    auto clock = make_step_clock(device, static_cast<size_t>(G) + 1);
    GenerateOptions g{key.gen_tokens, attention, cache ? &*cache : nullptr, clock.get(), false};
    g.mark_each_step = per_step;

    // A graph cell runs wholly on a pool stream (capture needs a non-default stream, and the
    // events must be on the stream that does the work); its graph is freed with the cell.
    std::unique_ptr<CudaStreamScope> stream;
    std::optional<StaticDecodeStep> step;
    std::unique_ptr<CudaGraph> graph;
    if (key.cuda_graphs) {
      stream = use_pool_stream(device.index());
      step.emplace(m, *cache, attention, B);
      step->set_position(P);
      graph = capture_cuda_graph(device.index(), [&] { step->run(); });
      g.static_step = &*step;
      g.run_step = [&] { graph->replay(); };
    }

    for (int rep = 0; rep < opt.warmup + opt.reps; ++rep) {
      if (lm::testing::hooks().before_rep) lm::testing::hooks().before_rep(rep);
      generate(m, prompt, g);
      auto intervals = clock->intervals_ms();  // the repetition's only wait for the device
      if (rep >= opt.warmup) record(intervals, per_step, G, r.samples);
    }
    capture_memory_peak(device);
    if (opt.profile)
      r.profile = profile_sequence(device, static_cast<size_t>(G) + 1, [&](StepClock& c) {
        GenerateOptions profiled = g;
        profiled.clock = &c;
        profiled.mark_each_step = true;
        generate(m, prompt, profiled);
      });
    return cell_cost(m.cfg, key);
  }

  // An AOTInductor package, through the same repetitions; the sanity of its logits too.
  CellCost time_aoti(const CellKey& key, const MeasureOptions& opt, const at::Device& device,
                     CellResult& r) {
    AotiModel& m = ensure_aoti(find_artifact(key.model)->file_for_batch(key.batch_size), device);
    reset_memory_peak(device);
    const bool per_step = timing_mode() == TimingMode::step;
    auto clock = make_step_clock(device, static_cast<size_t>(key.gen_tokens) + 1);
    std::unique_ptr<CudaStreamScope> stream;  // as for the built-in models' graph cells
    if (key.cuda_graphs) stream = use_pool_stream(device.index());
    m.prepare(key, opt.seed);
    for (int rep = 0; rep < opt.warmup + opt.reps; ++rep) {
      if (lm::testing::hooks().before_rep) lm::testing::hooks().before_rep(rep);
      m.run_repetition(*clock, per_step);
      auto intervals = clock->intervals_ms();
      if (rep >= opt.warmup) record(intervals, per_step, key.gen_tokens, r.samples);
      if (auto why = m.output_failure()) {
        r.status = CellStatus::invalid;
        r.reason = *why;
      }
    }
    capture_memory_peak(device);
    if (opt.profile && r.status != CellStatus::invalid)
      r.profile = profile_sequence(device, static_cast<size_t>(key.gen_tokens) + 1,
                                   [&](StepClock& c) { m.run_repetition(c, true); });
    return m.cost(key);
  }

  // After the model is loaded: the memory metric is what the cell itself adds.
  void reset_memory_peak(const at::Device& device) {
    if (device.is_cuda())
      cuda_reset_peak_allocated(device.index());
    else
      rss_before = max_rss_bytes();
  }
  int64_t rss_before = 0;
  // Read right after the timed repetitions, so that the profile's own allocations never count.
  void capture_memory_peak(const at::Device& device) {
    memory_peak = device.is_cuda() ? cuda_peak_allocated(device.index())
                                   : std::max<int64_t>(0, max_rss_bytes() - rss_before);
  }
  int64_t memory_peak = 0;

  void measure(const CellKey& key, const MeasureOptions& opt, CellResult& r) {
    c10::InferenceMode inference;
    const auto device = parse_device(key.device);
    c10::DeviceGuard device_guard(device);
    if (device.is_cpu()) use_cpu_threads();
    const bool packaged = is_aoti_model(key.model);
    const CellCost cost =
        packaged ? time_aoti(key, opt, device, r) : time_builtin(key, opt, device, r);
    if (lm::testing::hooks().after_samples) lm::testing::hooks().after_samples(r.samples);
    if (r.status == CellStatus::invalid) return;  // the package's logits failed their check
    if (auto why = sanity_failure(r.samples, opt.reps, key.gen_tokens)) {
      r.status = CellStatus::invalid;
      r.reason = *why;
      return;
    }
    const auto peaks = device.is_cuda() ? peaks_for(device_name(device), key.dtype,
                                                    opt.peak_bw_gbps, opt.peak_tflops)
                                        : PeakFigures{opt.peak_bw_gbps, opt.peak_tflops};
    r.metrics = derive_metrics(key, r.samples, cost, peaks);
    if (packaged)
      for (const auto& name : aoti->metrics_to_drop()) r.metrics.erase(name);
    r.metrics[device.is_cuda() ? "peak_alloc_bytes" : "peak_rss_growth_bytes"] =
        static_cast<double>(memory_peak);
  }
};

CellRunner::CellRunner() : impl_(std::make_unique<Impl>()) {}
CellRunner::~CellRunner() = default;

CellResult CellRunner::run(const CellKey& key, const MeasureOptions& opt) {
  check_cell_supported(key);
  if (opt.reps < 1) throw SettingError(setting("reps") + " must be at least 1");
  if (opt.warmup < 0) throw SettingError(setting("warmup") + " must not be negative");
  CellResult r;
  r.key = key;
  auto fail = [&](CellStatus status, const std::string& reason) {
    r.status = status;
    r.reason = reason;
    r.metrics.clear();
    r.samples = {};
    r.profile.reset();
  };
  try {
    impl_->measure(key, opt, r);
  } catch (const c10::OutOfMemoryError& e) {
    fail(CellStatus::oom, first_line(e.what_without_backtrace()));
    cuda_empty_cache();
  } catch (const UsageError&) {
    throw;
  } catch (const c10::Error& e) {
    if (is_allocation_failure(e)) {
      fail(CellStatus::oom, first_line(e.what_without_backtrace()));
    } else {
      fail(CellStatus::error, first_line(e.what_without_backtrace()));
    }
    cuda_empty_cache();
  } catch (const std::exception& e) {
    fail(CellStatus::error, e.what());
  }
  return r;
}

void check_cell_supported(const CellKey& key) {
  if (is_aoti_model(key.model)) {
    const Artifact* a = find_artifact(key.model);
    if (!a)
      throw SettingError(setting("model") + " " + key.model + ": package not resolved (internal)");
    parse_dtype(key.dtype);
    check_aoti_cell(key, a->file_for_batch(key.batch_size));
    const auto device = parse_device(key.device);
    if (key.cuda_graphs && !device.is_cuda())
      throw SettingError(setting("cuda-graphs") + " on needs " + setting("device") + " cuda (got " +
                         setting("device") + " " + key.device + ")");
    if (device.is_cpu()) cpu_threads();
    timing_mode();
    return;
  }
  const auto cfg = resolve_model(key.model);
  parse_dtype(key.dtype);
  const auto attention = parse_attention(key.attention);
  if (attention == AttentionKind::sdpa && !sdpa_available())
    throw SettingError(setting("attention") +
                       " sdpa: LibTorch " TORCH_VERSION
                       " has no scaled_dot_product_attention (it came with 2.0); use math");
  if (key.cuda_graphs && !key.kv_cache)
    throw SettingError(setting("cuda-graphs") + " on needs " + setting("kv-cache") +
                       " on (the graph decodes into the static KV cache)");
  if (key.batch_size < 1)
    throw SettingError(setting("batch-sizes") + ": " + std::to_string(key.batch_size) +
                       " is not positive");
  if (key.seq_len < 1)
    throw SettingError(setting("seq-lens") + ": " + std::to_string(key.seq_len) +
                       " is not positive");
  if (key.gen_tokens < 1)
    throw SettingError(setting("gen-tokens") + ": " + std::to_string(key.gen_tokens) +
                       " is not positive");
  if (int64_t{key.seq_len} + key.gen_tokens > cfg.context)
    throw SettingError(setting("seq-lens") + " " + std::to_string(key.seq_len) + " plus " +
                       setting("gen-tokens") + " " + std::to_string(key.gen_tokens) +
                       " exceeds the context of model '" + key.model + "' (" +
                       std::to_string(cfg.context) + " tokens)");
  const auto device = parse_device(key.device);
  if (key.cuda_graphs && !device.is_cuda())
    throw SettingError(setting("cuda-graphs") + " on needs " + setting("device") + " cuda (got " +
                       setting("device") + " " + key.device + ")");
  if (device.is_cpu()) cpu_threads();  // a malformed PERFGATE_CPU_THREADS fails here, early
  timing_mode();                       // likewise PERFGATE_TIMING
  decode_flash_chosen();               // and PERFGATE_DECODE_ATTENTION
  check_dtype_runs(device, key.dtype, attention);
}

}  // namespace pg
