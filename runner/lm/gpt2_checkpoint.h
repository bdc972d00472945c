// Maps a Hugging Face GPT-2 safetensors checkpoint onto our gpt2 model: which tensors must be
// there, with which shapes, and the model shape they imply. LibTorch-free so that
// check_cell_supported can validate `file:` models before any cell runs.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "runner/lm/presets.h"
#include "runner/lm/safetensors.h"

namespace pg::lm {

struct Gpt2Checkpoint {
  SafetensorsFile file;
  ModelConfig config;
  // Our canonical name ("h.0.attn.c_attn.weight", no "transformer." prefix) -> the name in file.
  std::map<std::string, std::string> names;
};

// Tensor names (canonical) and shapes a GPT-2 checkpoint of this shape holds. Weights of
// c_attn/c_proj/c_fc are in Hugging Face's Conv1D layout [in, out].
std::map<std::string, std::vector<int64_t>> gpt2_expected_tensors(const ModelConfig& cfg);

// Reads the header, infers n_layer, d_model, d_ff, vocab and context from the shapes and
// n_head from (in order) the header's "__metadata__" entry "n_head", a config.json beside the
// file (as Hugging Face saves it), or d_model / 64. Throws UsageError naming the file and the
// tensor for an unknown, missing, mis-shaped or non-float tensor.
Gpt2Checkpoint inspect_gpt2_checkpoint(const std::string& path);

}  // namespace pg::lm
