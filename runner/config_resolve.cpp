// `perfgate run`'s settings as given: the values of the command line over those of the sweep
// file (the `config` setting), turned into one raw form for config.cpp's validation.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/errors.h"
#include "runner/config.h"
#include "runner/config_detail.h"

namespace fs = std::filesystem;

namespace pg::runner {

const std::vector<SettingInfo>& run_settings() {
  static const std::vector<SettingInfo> infos = [] {
    std::vector<SettingInfo> v;
    for (const auto& d : detail::setting_defs()) {
      v.push_back(d.info);
      v.back().takes_value = d.kind != detail::ValueKind::flag;
    }
    return v;
  }();
  return infos;
}

SweepConfig sweep_config_from_toml(const std::string& toml_text, const std::string& source_name,
                                   const RunFlags& overrides) {
  detail::RawSettings settings = detail::read_toml_settings(toml_text, source_name);
  for (const auto& [name, text] : overrides.values) {
    if (!detail::is_setting(name))
      throw SettingError("unknown setting " + SettingError::setting(name));
    settings[name] = detail::raw_from_command_line(name, text);
  }
  if (overrides.quiet) {
    const std::string quiet = SettingError::setting("quiet");
    settings["quiet"] = {quiet, {{"true", quiet}}, ""};
  }
  return detail::validate_settings(settings);
}

SweepConfig resolve_sweep_config(const RunFlags& flags) {
  std::string text;
  if (!flags.config_path.empty()) {
    const std::string config = SettingError::setting("config");
    std::error_code ec;
    if (fs::is_directory(flags.config_path, ec))
      throw SettingError(fmt::format("{}: '{}' is a directory", config, flags.config_path));
    std::ifstream in(flags.config_path, std::ios::binary);
    if (!in) throw SettingError(fmt::format("{}: cannot read '{}'", config, flags.config_path));
    std::ostringstream buf;
    buf << in.rdbuf();
    text = buf.str();
  }
  return sweep_config_from_toml(text, flags.config_path.empty() ? "(none)" : flags.config_path,
                                flags);
}

}  // namespace pg::runner
