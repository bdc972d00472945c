// `--model` values: a preset name or `file:PATH.safetensors`. LibTorch-free.
#pragma once
#include <string>

#include "runner/lm/presets.h"

namespace pg::lm {

// The shape of the model `spec` names; reads a file model's header (not its data). Throws
// UsageError for an unknown preset or a bad file.
ModelConfig resolve_model(const std::string& spec);

}  // namespace pg::lm
