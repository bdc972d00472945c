#include "runner/lm/model_spec.h"

#include "common/errors.h"
#include "runner/lm/artifact.h"
#include "runner/lm/gpt2_checkpoint.h"

namespace pg::lm {

ModelConfig resolve_model(const std::string& spec) {
  if (is_file_model(spec)) {
    const auto path = artifact_path(spec, 0);
    if (path.empty())
      throw SettingError(SettingError::setting("model") +
                         " file: needs a path, as in file:model.safetensors");
    return inspect_gpt2_checkpoint(path).config;
  }
  if (auto p = find_preset(spec)) return *p;
  std::string names;
  for (const auto& n : preset_names()) names += (names.empty() ? "" : ", ") + n;
  throw SettingError(SettingError::setting("model") + ": unknown model '" + spec +
                     "' (presets: " + names + ", file:PATH.safetensors or aoti:PATH.pt2)");
}

}  // namespace pg::lm
