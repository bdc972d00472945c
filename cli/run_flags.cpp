#include "cli/run_flags.h"

#include <CLI/CLI.hpp>

#include "cli/setting_flags.h"

namespace pg::cli {

void add_run_flags(CLI::App& cmd, runner::RunFlags& flags) {
  cmd.add_option("--config", flags.config_path,
                 "TOML sweep file; its keys are these flag names, flags given here override it")
      ->type_name("FILE");
  for (const runner::SettingInfo& s : runner::run_settings()) {
    const std::string flag = flag_for_setting(s.name);
    const std::string help = SettingError::spell_settings(s.help, flag_for_setting);
    if (!s.takes_value) {
      cmd.add_flag(flag, flags.quiet, help);
      continue;
    }
    // Bound through a callback so that "given" and "not given" stay distinguishable.
    auto* opt = cmd.add_option_function<std::string>(
        flag, [&flags, name = s.name](const std::string& v) { flags.values[name] = v; }, help);
    opt->type_name(s.value_hint);
    // A literal default shows as CLI11's "=VALUE"; one that depends on the machine as prose.
    if (s.default_text.find(' ') == std::string::npos)
      opt->default_str(s.default_text);
    else
      opt->description(help + " (default: " + s.default_text + ")");
  }
}

std::string run_error_message(const SettingError& e, const runner::SweepConfig& cfg) {
  const std::vector<std::string> named = e.settings();
  const auto about = named.empty() ? cfg.given_in_file.end() : cfg.given_in_file.find(named[0]);
  const std::string message = e.spelled([&cfg](const std::string& name) {
    return cfg.given_in_file.contains(name) ? name : flag_for_setting(name);
  });
  return about == cfg.given_in_file.end() ? message : about->second + ": " + message;
}

}  // namespace pg::cli
