#include "cli/setting_flags.h"

#include <map>

namespace pg::cli {

std::string flag_for_setting(const std::string& setting) {
  // Explicit, so a flag can be renamed without renaming the setting (and the other way round).
  static const std::map<std::string, std::string> flags = {
      {"alpha", "--alpha"},
      {"min_effect", "--min-effect"},
      {"min_effect_floor", "--min-effect-floor"},
      {"power", "--power"},
      {"require_power", "--require-power"},
      {"look", "--look"},
      {"max_looks", "--max-looks"},
      {"correction", "--correction"},
      {"seed", "--seed"},
      {"allow_missing_baseline", "--allow-missing-baseline"},
      {"fail_on_counter_change", "--fail-on-counter-change"},
      {"metrics", "--metrics"},
      {"memory_tolerance_bytes", "--memory-tolerance-bytes"},
  };
  auto it = flags.find(setting);
  return it != flags.end() ? it->second : setting;
}

UsageError as_flag_error(const app::SettingError& e) {
  std::string problem = e.problem;
  // A message may name another setting ("must be in [1, max_looks 3]"): name its flag too.
  for (const std::string& other : app::gate_setting_names()) {
    const std::string flag = flag_for_setting(other);
    for (size_t at = problem.find(other); at != std::string::npos;
         at = problem.find(other, at + flag.size())) {
      const bool word_start = at == 0 || problem[at - 1] == ' ' || problem[at - 1] == '[';
      const size_t end = at + other.size();
      const bool word_end = end == problem.size() || problem[end] == ' ' || problem[end] == ',';
      if (word_start && word_end) problem.replace(at, other.size(), flag);
    }
  }
  return UsageError(flag_for_setting(e.setting) + " " + problem);
}

}  // namespace pg::cli
