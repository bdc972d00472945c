// lm::LibTorchMeasurer: loads (and keeps) a cell's model, opens its session
// (runner/lm/cell_session.h) and, for `perfgate run`, times it through; and what a cell needs of
// this build and device before it runs.
#include "runner/lm/measure.h"

#include <c10/core/DeviceGuard.h>
#include <c10/core/InferenceMode.h>
#include <torch/version.h>

#include "common/errors.h"
#include "runner/lm/aoti_model.h"
#include "runner/lm/artifact.h"
#include "runner/lm/cell_session.h"
#include "runner/lm/checkpoint_load.h"
#include "runner/lm/cuda_support.h"
#include "runner/lm/device_info.h"
#include "runner/lm/model_spec.h"
#include "runner/lm/placement.h"

namespace pg::lm {

namespace {

// Messages name the run's settings (docs/RUN.md); the CLI spells them as its flags.
std::string setting(const char* name) { return SettingError::setting(name); }

}  // namespace

struct lm::LibTorchMeasurer::Impl {
  std::string loaded_key;
  std::optional<Model> model;
  std::unique_ptr<AotiModel> aoti;
  bool session_open = false;  // a session borrows the loaded model (LibTorchMeasurer::open)
  DevicePlacement placement;  // the last cell's, held while its session is open

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
};

namespace {

// Ends the measurer's one open session with the session itself; its memory peak without the
// placement's spacer (`spacer_bytes`, held through the whole session).
class OwnedSession final : public lm::CellSession {
 public:
  OwnedSession(std::unique_ptr<lm::CellSession> s, bool& open, int64_t spacer_bytes)
      : s_(std::move(s)), open_(open), spacer_bytes_(spacer_bytes) {
    open_ = true;
  }
  ~OwnedSession() override {
    s_.reset();
    open_ = false;
  }
  lm::RepSample repetition() override { return s_->repetition(); }
  std::optional<std::string> invalid_reason() const override { return s_->invalid_reason(); }
  CellResult finish() override {
    CellResult r = s_->finish();
    auto peak = r.metrics.find("peak_alloc_bytes");
    if (peak != r.metrics.end()) peak->second -= static_cast<double>(spacer_bytes_);
    return r;
  }
  std::optional<int64_t> memory_peak() const override {
    auto peak = s_->memory_peak();
    if (peak) *peak -= spacer_bytes_;
    return peak;
  }

 private:
  std::unique_ptr<lm::CellSession> s_;
  bool& open_;
  int64_t spacer_bytes_;
};

}  // namespace

lm::LibTorchMeasurer::LibTorchMeasurer() : impl_(std::make_unique<Impl>()) {}
lm::LibTorchMeasurer::~LibTorchMeasurer() = default;

std::unique_ptr<lm::CellSession> lm::LibTorchMeasurer::open(const CellKey& key,
                                                            const runner::MeasureOptions& opt) {
  check_cell_supported(key);
  if (opt.reps < 1) throw SettingError(setting("reps") + " must be at least 1");
  if (opt.warmup < 0) throw SettingError(setting("warmup") + " must not be negative");
  if (impl_->session_open) throw std::logic_error("LibTorchMeasurer: a cell is still open");
  std::unique_ptr<CellSession> s;
  as_cell_failure([&] {
    c10::InferenceMode inference;
    const auto device = parse_device(key.device);
    c10::DeviceGuard device_guard(device);
    if (device.is_cpu()) use_cpu_threads();
    impl_->placement.release();
    // Before the session resets the peak: the last cells' cuBLAS workspaces are not this cell's.
    if (device.is_cuda()) cuda_release_blas_workspaces();
    if (is_aoti_model(key.model)) {
      AotiModel& m =
          impl_->ensure_aoti(find_artifact(key.model)->file_for_batch(key.batch_size), device);
      s = open_aoti_session(m, key, opt, device);
    } else {
      impl_->ensure_model(key, device, opt.seed);
      if (opt.placement_seed) impl_->placement.place(*opt.placement_seed, device, &*impl_->model);
      s = open_builtin_session(*impl_->model, key, opt, device);
    }
  });
  return std::make_unique<OwnedSession>(std::move(s), impl_->session_open,
                                        opt.placement_seed ? impl_->placement.spacer_bytes() : 0);
}

// Open, the timed repetitions, finish: the same path as the worker's (docs/PROTOCOL.md).
CellResult lm::LibTorchMeasurer::measure(const CellKey& key, const runner::MeasureOptions& opt) {
  CellResult r;
  std::optional<CellFailure> failure;
  try {
    std::unique_ptr<CellSession> session = open(key, opt);
    for (int rep = 0; rep < opt.reps; ++rep) session->repetition();
    r = session->finish();
  } catch (const CellFailure& e) {
    failure = e;  // reported once the session has freed its buffers
  }
  r.key = key;
  if (failure) {
    r = CellResult{};
    r.key = key;
    r.status = failure->status;
    r.reason = failure->what();
    if (failure->libtorch) cuda_empty_cache();
  }
  return r;
}

std::string torch_version() { return TORCH_VERSION; }

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

}  // namespace pg::lm
