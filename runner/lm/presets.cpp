#include "runner/lm/presets.h"

namespace pg::lm {
namespace {

ModelConfig gpt2(std::string name, int64_t layers, int64_t heads, int64_t d) {
  return {std::move(name), Family::gpt2, layers, heads, d, 4 * d, 50257, 1024};
}

// CS336 assignment 2, table of model sizes. The assignment leaves the context length to the
// benchmark; 1024 matches GPT-2 and covers the default sweep (512 + 32 tokens).
ModelConfig cs336(std::string name, int64_t d, int64_t d_ff, int64_t layers, int64_t heads) {
  return {std::move(name), Family::cs336, layers, heads, d, d_ff, 10000, 1024};
}

const std::vector<ModelConfig>& presets() {
  static const std::vector<ModelConfig> all = {
      // Small enough that the default 12-cell sweep finishes on a laptop CPU in seconds.
      {"tiny", Family::gpt2, 2, 4, 64, 256, 512, 1024},
      gpt2("gpt2", 12, 12, 768),
      gpt2("gpt2-medium", 24, 16, 1024),
      gpt2("gpt2-large", 36, 20, 1280),
      gpt2("gpt2-xl", 48, 25, 1600),
      cs336("cs336-small", 768, 3072, 12, 12),
      cs336("cs336-medium", 1024, 4096, 24, 16),
      cs336("cs336-large", 1280, 5120, 36, 20),
      cs336("cs336-xl", 1600, 6400, 48, 25),
      cs336("cs336-2.7b", 2560, 10240, 32, 32),
  };
  return all;
}

}  // namespace

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& p : presets()) n.push_back(p.name);
    return n;
  }();
  return names;
}

std::optional<ModelConfig> find_preset(std::string_view name) {
  for (const auto& p : presets())
    if (p.name == name) return p;
  return std::nullopt;
}

bool is_file_model(std::string_view model) { return model.starts_with(kFileModelPrefix); }

std::string file_model_path(std::string_view model) {
  return std::string(model.substr(kFileModelPrefix.size()));
}

}  // namespace pg::lm
