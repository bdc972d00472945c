#include "runner/lm/aoti_model.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include "common/errors.h"
#include "runner/lm/cost_model.h"
#include "runner/lm/cuda_support.h"

namespace pg::lm {
namespace {

std::string package_label(const ArtifactFile& f) { return "package '" + f.path + "'"; }

}  // namespace

void check_aoti_cell(const CellKey& key, const ArtifactFile& file) {
  const ModelFacts& f = file.facts;
  const std::string what = package_label(file);
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
  // run_single_threaded: perfgate calls the package from one thread. The container's threaded
  // run() hands its one model instance back through a CUDA event that the next call queries
  // and waits for on the host: every decode step would wait for the previous one, and inside a
  // CUDA graph capture that query fails ("operation not permitted when stream is capturing").
  // The single-threaded run() records and waits for nothing (docs/OWN_MODEL_AOTI.md).
  constexpr bool kRunSingleThreaded = true;
  loader_ = std::make_unique<torch::inductor::AOTIModelPackageLoader>(
      file.path, "model", kRunSingleThreaded, /*num_runners=*/1, index);
}

AotiModel::~AotiModel() = default;

at::Tensor AotiModel::forward(const at::Tensor& tokens, const at::Tensor& positions) {
  auto out = loader_->run({tokens, positions});
  if (out.empty()) throw RuntimeFailure(package_label(file_) + " returned no outputs");
  return out[0];
}

void AotiModel::decode_step() {
  step_logits_ = forward(token_, position_);
  token_.copy_(step_logits_.select(1, -1).argmax(-1, true));
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
  if (!key.cuda_graphs) return;
  try {
    graph_ = capture_cuda_graph(device_.index(), [&] { decode_step(); });
  } catch (const c10::OutOfMemoryError&) {
    throw;
  } catch (const std::exception& e) {
    graph_.reset();
    std::string why = e.what();
    throw RuntimeFailure(
        "--cuda-graphs on: the decode call of " + package_label(file_) +
        " cannot be captured in a CUDA graph (docs/OWN_MODEL_AOTI.md, \"--cuda-graphs on\"): " +
        why.substr(0, why.find('\n')));
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
