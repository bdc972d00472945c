// `perfgate run`'s command line and sweep file: the flags (one per setting of config.cpp's table),
// and reading --config.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/errors.h"
#include "runner/config.h"
#include "runner/config_detail.h"

namespace fs = std::filesystem;

namespace pg {

const std::vector<SettingInfo>& run_settings() {
  static const std::vector<SettingInfo> infos = [] {
    std::vector<SettingInfo> v;
    for (const auto& d : detail::setting_defs()) v.push_back(d.info);
    return v;
  }();
  return infos;
}

void add_run_flags(CLI::App& cmd, RunFlags& flags) {
  cmd.add_option("--config", flags.config_path,
                 "TOML sweep file; its keys are these flag names, flags given here override it")
      ->type_name("FILE");
  for (const auto& d : detail::setting_defs()) {
    const SettingInfo& s = d.info;
    if (d.kind == detail::ValueKind::flag) {
      cmd.add_flag("--" + s.name, flags.quiet, s.help);
      continue;
    }
    // Bound through a callback so that "given" and "not given" stay distinguishable.
    auto* opt = cmd.add_option_function<std::string>(
        "--" + s.name, [&flags, name = s.name](const std::string& v) { flags.values[name] = v; },
        s.help);
    opt->type_name(s.value_hint);
    // A literal default shows as CLI11's "=VALUE"; one that depends on the machine as prose.
    if (s.default_text.find(' ') == std::string::npos)
      opt->default_str(s.default_text);
    else
      opt->description(s.help + " (default: " + s.default_text + ")");
  }
}

SweepConfig sweep_config_from_toml(const std::string& toml_text, const std::string& source_name,
                                   const RunFlags& overrides) {
  detail::RawSettings settings = detail::read_toml_settings(toml_text, source_name);
  for (const auto& [name, text] : overrides.values) {
    if (!detail::is_setting(name)) throw UsageError("unknown flag --" + name);
    settings[name] = detail::raw_from_flag(name, text);
  }
  if (overrides.quiet) settings["quiet"] = {"--quiet", {{"true", "--quiet"}}};
  return detail::validate_settings(settings);
}

SweepConfig resolve_sweep_config(const RunFlags& flags) {
  std::string text;
  if (!flags.config_path.empty()) {
    std::error_code ec;
    if (fs::is_directory(flags.config_path, ec))
      throw UsageError(fmt::format("--config: '{}' is a directory", flags.config_path));
    std::ifstream in(flags.config_path, std::ios::binary);
    if (!in) throw UsageError(fmt::format("--config: cannot read '{}'", flags.config_path));
    std::ostringstream buf;
    buf << in.rdbuf();
    text = buf.str();
  }
  return sweep_config_from_toml(text, flags.config_path.empty() ? "(none)" : flags.config_path,
                                flags);
}

}  // namespace pg
