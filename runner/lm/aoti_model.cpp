#include "runner/lm/aoti_model.h"

#include <ATen/CPUGeneratorImpl.h>

#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/version.h>
#include <algorithm>
#include <sstream>

#include "common/errors.h"
#include "runner/lm/cost_model.h"
#include "runner/lm/cuda_support.h"

namespace pg::lm {
namespace {

std::string package_label(const ArtifactFile& f) { return "package '" + f.path + "'"; }

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// run_single_threaded: perfgate calls the package from one thread. The container's threaded
// run() hands its one model instance back through a CUDA event that the next call queries
// and waits for on the host: every decode step would wait for the previous one, and inside a
// CUDA graph capture that query fails ("operation not permitted when stream is capturing").
// The single-threaded run() records and waits for nothing (docs/OWN_MODEL_AOTI.md).
constexpr bool kRunSingleThreaded = true;

// `what` names the program in an error only: built then, not on every (timed) call.
template <typename What>
at::Tensor first_output(torch::inductor::AOTIModelPackageLoader& loader, const at::Tensor& tokens,
                        const at::Tensor& positions, What what) {
  auto out = loader.run({tokens, positions});
  if (out.empty()) throw RuntimeFailure(what() + " returned no outputs");
  return out[0];
}

}  // namespace

std::optional<std::string> decode_program_disagreement(const at::Tensor& via_model,
                                                       const at::Tensor& via_decode_program) {
  if (via_model.sizes() != via_decode_program.sizes())
    return "the decode program's logits have shape " + c10::str(via_decode_program.sizes()) +
           ", the model program's " + c10::str(via_model.sizes());
  const at::Tensor a = via_model.to(at::kFloat), b = via_decode_program.to(at::kFloat);
  const double scale = std::max(1.0, a.abs().max().item<double>());
  const double diff = (a - b).abs().max().item<double>();
  // Two compilations of the same math differ in summation order only: within a few units of
  // the dtype's precision, relative to the logits' size. A program on other weights, or on a
  // cache of its own that the prefill never filled, differs by the logits' own size.
  const bool single =
      via_model.scalar_type() == at::kFloat || via_model.scalar_type() == at::kDouble;
  const double allowed = (single ? 1e-3 : 5e-2) * scale;
  if (diff <= allowed) return std::nullopt;
  std::ostringstream why;
  why << "the decode program disagrees with the model program on the same step (largest logit "
         "difference "
      << diff << ", allowed " << allowed
      << "): it does not run on the model program's weights and KV cache (docs/OWN_MODEL_AOTI.md, "
         "\"The decode program\")";
  return why.str();
}

void check_aoti_cell(const CellKey& key, const ArtifactFile& file) {
  const ModelFacts& f = file.facts;
  const std::string what = package_label(file);
  // Checked before anything loads it: another release's package fails to load, or crashes.
  if (auto torch = f.exporter.find("torch"); torch != f.exporter.end())
    if (auto why = torch_release_mismatch(torch->second, TORCH_VERSION))
      throw UsageError(what + ": " + *why + " (exporter.torch in " + sidecar_path_of(file.path) +
                       ")");
  if (!key.kv_cache)
    throw UsageError("--kv-cache off: " + what + " carries its own KV cache (use --kv-cache on)");
  if (f.dtype && *f.dtype != key.dtype)
    throw UsageError("--dtype " + key.dtype + ": " + what + " was exported in " + *f.dtype);
  const bool cuda = key.device.starts_with("cuda");
  if (f.device && (*f.device == "cuda") != cuda)
    throw UsageError("--device " + key.device + ": " + what + " was compiled for " + *f.device);
  if (f.context && int64_t{key.seq_len} + key.gen_tokens > *f.context)
    throw UsageError("--seq-lens " + std::to_string(key.seq_len) + " plus --gen-tokens " +
                     std::to_string(key.gen_tokens) + " exceeds the context of " + what + " (" +
                     std::to_string(*f.context) + " tokens, its KV cache)");
}

AotiModel::AotiModel(const ArtifactFile& file, const at::Device& device)
    : file_(file), device_(device) {
  const c10::DeviceIndex index = device.is_cuda() ? device.index() : -1;
  loader_ = std::make_unique<torch::inductor::AOTIModelPackageLoader>(
      file.path, "model", kRunSingleThreaded, /*num_runners=*/1, index);
  if (file.facts.decode_program) load_decode_program(index);
}

AotiModel::~AotiModel() = default;

// The decode program is compiled without weights (python/perfgate_export.py): it is handed the
// model program's constants as they live on the device, so the two programs share one copy of
// the weights and, the cache being a buffer the programs write in place, one KV cache.
void AotiModel::load_decode_program(c10::DeviceIndex index) {
  const std::string& name = *file_.facts.decode_program;
  const std::string what = package_label(file_) + ": its decode program '" + name + "'";
  try {
    decode_loader_ = std::make_unique<torch::inductor::AOTIModelPackageLoader>(
        file_.path, name, kRunSingleThreaded, /*num_runners=*/1, index);
  } catch (const std::exception& e) {
    throw RuntimeFailure(what + " cannot be loaded: " + first_line(e.what()));
  }
  const auto model_constants = loader_->get_runner()->extract_constants_map(false);
  std::unordered_map<std::string, at::Tensor> shared;
  std::string missing;
  for (const std::string& fqn : decode_loader_->get_constant_fqns()) {
    if (auto it = model_constants.find(fqn); it != model_constants.end())
      shared.emplace(fqn, it->second);
    else
      missing += (missing.empty() ? "" : ", ") + fqn;
  }
  if (!missing.empty())
    throw RuntimeFailure(
        what + " needs constants the model program does not have: " + missing.substr(0, 300));
  try {
    decode_loader_->load_constants(shared, /*use_inactive=*/false, /*check_full_update=*/true,
                                   /*user_managed=*/true);
  } catch (const std::exception& e) {
    throw RuntimeFailure(what +
                         " cannot take the model program's weights: " + first_line(e.what()));
  }
}

at::Tensor AotiModel::forward(const at::Tensor& tokens, const at::Tensor& positions) {
  return first_output(*loader_, tokens, positions, [&] { return package_label(file_); });
}

at::Tensor AotiModel::decode_forward(const at::Tensor& tokens, const at::Tensor& positions) {
  if (!decode_loader_) return forward(tokens, positions);
  return first_output(*decode_loader_, tokens, positions,
                      [&] { return package_label(file_) + "'s decode program"; });
}

void AotiModel::decode_step() {
  step_logits_ = decode_forward(token_, position_);
  token_.copy_(step_logits_.select(1, -1).argmax(-1, true));
}

// One step at position P through both programs, after a prefill through the model program:
// the decode program's answer must be the model program's (same weights, same filled cache).
std::optional<std::string> AotiModel::check_decode_program() {
  const at::Tensor prefill = forward(prompt_, prompt_positions_);
  token_.copy_(prefill.select(1, -1).argmax(-1, true));
  const at::Tensor via_model = forward(token_, position_).clone();
  return decode_program_disagreement(via_model, decode_forward(token_, position_));
}

void AotiModel::prepare(const CellKey& key, int64_t seed) {
  key_ = key;
  graph_.reset();
  const auto longs = at::TensorOptions().dtype(at::kLong);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(seed));
  // Without a vocabulary in the sidecar the prompt is token 0 throughout: still a valid input.
  const int64_t vocab = file_.facts.vocab.value_or(1);
  prompt_ = at::randint(vocab, {key.batch_size, key.seq_len}, gen, longs).to(device_);
  prompt_positions_ = at::arange(key.seq_len, longs).to(device_);
  token_ = at::zeros({key.batch_size, 1}, longs.device(device_));
  position_ = at::full({1}, key.seq_len, longs.device(device_));
  decode_disagreement_ = decode_loader_ ? check_decode_program() : std::nullopt;
  if (!key.cuda_graphs) return;
  try {
    graph_ = capture_cuda_graph(device_.index(), [&] { decode_step(); });
  } catch (const c10::OutOfMemoryError&) {
    throw;
  } catch (const std::exception& e) {
    graph_.reset();
    throw RuntimeFailure(
        "--cuda-graphs on: the decode call of " + package_label(file_) +
        " cannot be captured in a CUDA graph (docs/OWN_MODEL_AOTI.md, \"--cuda-graphs on\"): " +
        first_line(e.what()));
  }
}

void AotiModel::run_repetition(StepClock& clock, bool mark_each_step) {
  const int64_t P = key_.seq_len, G = key_.gen_tokens;
  clock.mark();
  prefill_logits_ = forward(prompt_, prompt_positions_);
  token_.copy_(prefill_logits_.select(1, -1).argmax(-1, true));
  clock.mark();
  for (int64_t i = 1; i < G; ++i) {
    position_.fill_(P + i - 1);  // a device-side fill: no wait, and what the graph reads
    if (graph_)
      graph_->replay();
    else
      decode_step();
    if (mark_each_step || i == G - 1) clock.mark();
  }
}

std::optional<std::string> AotiModel::output_failure() const {
  if (decode_disagreement_) return decode_disagreement_;
  const int64_t B = key_.batch_size, P = key_.seq_len;
  auto check = [&](const at::Tensor& logits, int64_t T,
                   const char* call) -> std::optional<std::string> {
    if (!logits.defined()) return std::nullopt;
    const auto s = logits.sizes();
    const bool vocab_ok = !file_.facts.vocab || (s.size() == 3 && s[2] == *file_.facts.vocab);
    if (s.size() != 3 || s[0] != B || s[1] != T || !vocab_ok)
      return std::string(call) + " logits have shape " + c10::str(s) + ", expected [" +
             std::to_string(B) + ", " + std::to_string(T) + ", " +
             (file_.facts.vocab ? std::to_string(*file_.facts.vocab) : std::string("V")) + "]";
    if (!at::isfinite(logits).all().item<bool>())
      return std::string(call) + " logits are not all finite";
    return std::nullopt;
  };
  if (auto why = check(prefill_logits_, P, "prefill")) return why;
  return check(step_logits_, 1, "decode");
}

CellCost AotiModel::cost(const CellKey& key) const {
  const ModelFacts& f = file_.facts;
  const double B = key.batch_size, P = key.seq_len, G = key.gen_tokens;
  CellCost c;
  c.weight_bytes = f.param_bytes.value_or(0);
  if (f.kv_bytes_per_token) {
    c.kv_bytes = *f.kv_bytes_per_token * B * f.context.value_or(static_cast<int64_t>(P + G));
    c.kv_read_bytes_per_step = *f.kv_bytes_per_token * B * (P + G / 2);
  }
  if (f.flops_per_token) c.prefill_flops = *f.flops_per_token * B * P;
  return c;
}

std::vector<std::string> AotiModel::metrics_to_drop() const {
  const ModelFacts& f = file_.facts;
  std::vector<std::string> drop;
  if (!f.param_bytes) drop.push_back("weight_bytes");
  if (!f.kv_bytes_per_token) drop.push_back("kv_bytes");
  if (!f.param_bytes || !f.kv_bytes_per_token) drop.insert(drop.end(), {"achieved_bw_gbps", "mbu"});
  if (!f.flops_per_token) drop.push_back("prefill_mfu");
  return drop;
}

}  // namespace pg::lm
