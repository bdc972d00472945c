#include "app/gate_settings.h"

#include <fmt/format.h>
#include <cmath>

namespace pg::app {

const std::vector<std::string>& gate_setting_names() {
  static const std::vector<std::string> names = {"alpha",
                                                 "min_effect",
                                                 "min_effect_floor",
                                                 "power",
                                                 "require_power",
                                                 "look",
                                                 "max_looks",
                                                 "correction",
                                                 "seed",
                                                 "allow_missing_baseline",
                                                 "fail_on_counter_change"};
  return names;
}

void validate(const GateSettings& s) {
  if (!(s.min_effect_floor >= 0.0 && s.min_effect_floor < 1.0))
    throw SettingError("min_effect_floor",
                       fmt::format("must be in [0, 1), got {}", s.min_effect_floor));
  validate_gate_options(s.gate);
}

void set_min_effect(GateSettings& s, const std::string& text) {
  if (text == "auto") {
    s.min_effect_auto = true;
    return;
  }
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size())
    throw SettingError("min_effect", "must be a number >= 0 or 'auto', got '" + text + "'");
  s.min_effect_auto = false;
  s.gate.min_effect = v;
}

std::string min_effect_text(const GateSettings& s) {
  return s.min_effect_auto ? "auto" : fmt::format("{}", s.gate.min_effect);
}

}  // namespace pg::app
