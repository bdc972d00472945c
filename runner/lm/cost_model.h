// Analytic sizes and FLOPs of a cell: what MBU and MFU divide by. LibTorch-free.
#pragma once
#include <cstdint>
#include <string>

#include "core/run.h"
#include "runner/lm/presets.h"

namespace pg::lm {

int dtype_bytes(const std::string& dtype);  // fp32 4, fp16/bf16 2; 0 if unknown

// Every stored parameter once (a tied lm_head is wte, counted once).
int64_t parameter_count(const ModelConfig& cfg);
// Weights of one layer that enter a matmul (q, k, v, o and the MLP), per token.
int64_t matmul_params_per_layer(const ModelConfig& cfg);

struct CellCost {
  double weight_bytes = 0;            // parameter_count x dtype size
  double kv_bytes = 0;                // the static cache [2, L, B, H, P + gen, Dh]; 0 when off
  double kv_read_bytes_per_step = 0;  // mean over decode steps of the cache bytes attention reads
  double prefill_flops = 0;           // matmuls + causal attention + lm_head at the last position
};

CellCost cell_cost(const ModelConfig& cfg, const CellKey& key);

}  // namespace pg::lm
