// Loading tensors from safetensors files into LibTorch.
#pragma once
#include <ATen/ATen.h>

#include <string>

#include "runner/lm/model.h"
#include "runner/lm/safetensors.h"

namespace pg::lm {

// One tensor's data as a CPU tensor of the file's dtype (F32, F16, BF16, I64 or I32).
at::Tensor read_tensor(const SafetensorsFile& file, const std::string& name);

// A Hugging Face GPT-2 checkpoint as our gpt2 model, weights cast to `dtype` on `device`.
// Throws UsageError (naming the file and tensor) for anything inspect_gpt2_checkpoint rejects.
Model load_gpt2_checkpoint(const std::string& path, at::ScalarType dtype, const at::Device& device);

}  // namespace pg::lm
