// The model facts of the worker's hello line (docs/PROTOCOL.md, "What the program prints"), from
// perfgate's cost model for its own models and from the sidecar for an AOTInductor package, so
// that the metrics the driver derives from them are those `perfgate run` derives for the cell.
// LibTorch-free.
#pragma once
#include <optional>

#include "core/run.h"

namespace pg::worker {

// Absent facts are left out of the hello line (the metrics that need them are then null).
struct HelloFacts {
  std::optional<double> param_bytes;
  std::optional<double> flops_per_token;  // the cell's prefill FLOPs per prompt token
  std::optional<double> kv_bytes_per_token;
  std::optional<double> vocab;
  std::optional<double> context;
};

// For a cell that check_cell_supported accepted: `key.model` a preset, a file: model or the key
// of a registered aoti: package (lm::register_model_artifact).
HelloFacts hello_facts(const CellKey& key);

}  // namespace pg::worker
