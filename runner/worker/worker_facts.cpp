// Hello facts from the cost model (runner/lm/cost_model.h) and an AOTInductor package's sidecar.
#include "runner/worker/worker_facts.h"

#include "runner/lm/artifact.h"
#include "runner/lm/cost_model.h"
#include "runner/lm/model_spec.h"

namespace pg::worker {
namespace {

// The protocol takes positive facts only; anything else is left out.
std::optional<double> positive(double v) { return v > 0 ? std::optional<double>(v) : std::nullopt; }
template <typename T>
std::optional<double> positive(const std::optional<T>& v) {
  return v ? positive(static_cast<double>(*v)) : std::nullopt;
}

}  // namespace

HelloFacts hello_facts(const CellKey& key) {
  HelloFacts f;
  if (lm::is_aoti_model(key.model)) {
    // The sidecar's own facts; the driver's derivation from them is that of the package's cost
    // (lm::AotiModel::cost) except kv_bytes, which `perfgate run` sizes by the package's context.
    const lm::ModelFacts& s = lm::find_artifact(key.model)->file_for_batch(key.batch_size).facts;
    f.param_bytes = positive(s.param_bytes);
    f.flops_per_token = positive(s.flops_per_token);
    f.kv_bytes_per_token = positive(s.kv_bytes_per_token);
    f.vocab = positive(s.vocab);
    f.context = positive(s.context);
    return f;
  }
  const lm::ModelConfig cfg = lm::resolve_model(key.model);
  const lm::CellCost cost = lm::cell_cost(cfg, key);
  const double B = key.batch_size, P = key.seq_len, G = key.gen_tokens;
  // The driver computes weight_bytes = param_bytes, prefill FLOPs = flops_per_token x B x P and
  // the cache as kv_bytes_per_token x B x (P + G) (its reads per step x B x (P + G / 2)): the
  // cost model's own figures, divided back.
  f.param_bytes = positive(cost.weight_bytes);
  f.flops_per_token = positive(cost.prefill_flops / (B * P));
  if (key.kv_cache) f.kv_bytes_per_token = positive(cost.kv_bytes / (B * (P + G)));
  f.vocab = positive(cfg.vocab);
  f.context = positive(cfg.context);
  return f;
}

}  // namespace pg::worker
