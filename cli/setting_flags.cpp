#include "cli/setting_flags.h"

#include <map>

namespace pg::cli {

std::string flag_for_setting(const std::string& setting) {
  // The gate's, explicit, so a flag can be renamed without renaming the setting (and the other
  // way round); `perfgate run`'s settings are its flag names (docs/RUN.md).
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
      {"allow_unreplayed_tuning", "--allow-unreplayed-tuning"},
      {"metrics", "--metrics"},
      {"memory_tolerance_bytes", "--memory-tolerance-bytes"},
  };
  if (auto it = flags.find(setting); it != flags.end()) return it->second;
  std::string flag = "--" + setting;
  for (char& c : flag)
    if (c == '_') c = '-';
  return flag;
}

}  // namespace pg::cli
