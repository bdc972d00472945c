#include "app/gate_settings.h"

#include <fmt/format.h>
#include <cmath>
#include <map>
#include <optional>

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
                                                 "fail_on_counter_change",
                                                 "allow_unreplayed_tuning",
                                                 "metrics",
                                                 "memory_tolerance_bytes"};
  return names;
}

void validate(const GateSettings& s) {
  if (!(s.min_effect_floor >= 0.0 && s.min_effect_floor < 1.0))
    throw SettingError("min_effect_floor",
                       fmt::format("must be in [0, 1), got {}", s.min_effect_floor));
  gate::validate_gate_options(s.gate);
}

namespace {

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    out.push_back(
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

std::optional<double> number(const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) return std::nullopt;
  return v;
}

}  // namespace

void set_min_effect(GateSettings& s, const std::string& text) {
  const auto bad = [&] {
    return SettingError("min_effect",
                        "must be a number >= 0 or 'auto', optionally followed by METRIC=NUMBER "
                        "items separated by commas, got '" +
                            text + "'");
  };
  bool is_auto = s.min_effect_auto;
  double all = s.gate.min_effect;
  std::map<std::string, double> per_metric;
  for (const std::string& item : split_commas(text)) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      if (item == "auto") {
        is_auto = true;
      } else if (auto v = number(item)) {
        is_auto = false;
        all = *v;
      } else {
        throw bad();
      }
      continue;
    }
    const auto v = number(item.substr(eq + 1));
    if (eq == 0 || !v) throw bad();
    per_metric[item.substr(0, eq)] = *v;
  }
  s.min_effect_auto = is_auto;
  s.gate.min_effect = all;
  s.gate.metric_min_effect = per_metric;
}

std::string min_effect_text(const GateSettings& s) {
  std::string out = s.min_effect_auto ? "auto" : fmt::format("{}", s.gate.min_effect);
  for (const auto& [metric, v] : s.gate.metric_min_effect) out += fmt::format(",{}={}", metric, v);
  return out;
}

void set_metrics(GateSettings& s, const std::string& text) {
  std::vector<std::string> names = split_commas(text);
  for (const std::string& n : names)
    if (n.empty())
      throw SettingError("metrics", "must be metric names separated by commas, got '" + text + "'");
  s.gate.metrics = names;
}

std::string metrics_text(const GateSettings& s) {
  std::string out;
  for (const std::string& m : s.gate.metrics) out += (out.empty() ? "" : ",") + m;
  return out;
}

}  // namespace pg::app
