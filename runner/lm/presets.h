// The model presets and their shapes. LibTorch-free, so the sweep can validate `--model` and the
// cost model can be computed without touching a tensor.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pg::lm {

// gpt2: learned positions, LayerNorm, tanh-GELU MLP, biases, lm_head tied to wte.
// cs336: pre-norm RMSNorm, SwiGLU, RoPE, no biases, untied lm_head (CS336 assignment 2 table).
enum class Family { gpt2, cs336 };

struct ModelConfig {
  std::string name;
  Family family = Family::gpt2;
  int64_t n_layer = 0;
  int64_t n_head = 0;
  int64_t d_model = 0;
  int64_t d_ff = 0;
  int64_t vocab = 0;
  int64_t context = 0;  // longest sequence (prompt + generated tokens) the model accepts
  double norm_eps = 1e-5;
  double rope_theta = 10000.0;

  int64_t head_dim() const { return d_model / n_head; }
  bool tied_head() const { return family == Family::gpt2; }
};

// Every preset name, in the order `--help` lists them.
const std::vector<std::string>& preset_names();
std::optional<ModelConfig> find_preset(std::string_view name);

// `file:PATH.safetensors` names a Hugging Face GPT-2 checkpoint instead of a preset.
inline constexpr std::string_view kFileModelPrefix = "file:";
bool is_file_model(std::string_view model);
std::string file_model_path(std::string_view model);  // the PATH part of `file:PATH`

}  // namespace pg::lm
