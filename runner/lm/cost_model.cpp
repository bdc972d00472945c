#include "runner/lm/cost_model.h"

namespace pg::lm {

int dtype_bytes(const std::string& dtype) {
  if (dtype == "fp32") return 4;
  if (dtype == "fp16" || dtype == "bf16") return 2;
  return 0;
}

int64_t matmul_params_per_layer(const ModelConfig& cfg) {
  const int64_t d = cfg.d_model, ff = cfg.d_ff;
  const int64_t mlp = cfg.family == Family::gpt2 ? 2 * d * ff : 3 * d * ff;  // SwiGLU: w1, w3, w2
  return 4 * d * d + mlp;
}

int64_t parameter_count(const ModelConfig& cfg) {
  const int64_t d = cfg.d_model, ff = cfg.d_ff;
  int64_t per_layer = matmul_params_per_layer(cfg);
  int64_t total = cfg.vocab * d;  // wte
  if (cfg.family == Family::gpt2) {
    per_layer += 4 * d + 3 * d + d + ff + d;  // two LayerNorms (weight, bias) and linear biases
    total += cfg.context * d + 2 * d;         // wpe, ln_f
  } else {
    per_layer += 2 * d;          // two RMSNorm weights
    total += d + cfg.vocab * d;  // final RMSNorm, untied lm_head
  }
  return total + cfg.n_layer * per_layer;
}

CellCost cell_cost(const ModelConfig& cfg, const CellKey& key) {
  const double elem = dtype_bytes(key.dtype);
  const double B = key.batch_size, P = key.seq_len, G = key.gen_tokens;
  const double L = static_cast<double>(cfg.n_layer), D = static_cast<double>(cfg.d_model);
  CellCost c;
  c.weight_bytes = static_cast<double>(parameter_count(cfg)) * elem;
  if (key.kv_cache) {
    c.kv_bytes = 2 * L * B * (P + G) * D * elem;
    // Decode step i (1..G-1) attends over P + i cached positions; their mean is P + G / 2.
    c.kv_read_bytes_per_step = 2 * L * B * (P + G / 2) * D * elem;
  }
  const double matmul = 2 * B * P * L * static_cast<double>(matmul_params_per_layer(cfg));
  const double attention = 2 * B * L * D * P * (P + 1);  // QK^T and AV over the causal half
  const double head = 2 * B * D * static_cast<double>(cfg.vocab);
  c.prefill_flops = matmul + attention + head;
  return c;
}

}  // namespace pg::lm
