// Stored gate results as the pages show them: their settings in words, and where they differ from
// the settings a page decided under ("one rule everywhere": the compare page says why a stored
// verdict and its own may differ).
#include <cmath>

#include "web/pages/pages.h"

namespace pg::web {
namespace {

std::optional<double> num(const nlohmann::json& s, const char* key) {
  if (!s.is_object() || !s.contains(key) || !s[key].is_number()) return std::nullopt;
  return s[key].get<double>();
}

std::string str(const nlohmann::json& s, const char* key, const std::string& dflt = "") {
  if (!s.is_object() || !s.contains(key) || !s[key].is_string()) return dflt;
  return s[key].get<std::string>();
}

bool differs(double a, double b) { return std::fabs(a - b) > 1e-12 * std::max(1.0, std::fabs(b)); }

}  // namespace

std::string gate_settings_text(const nlohmann::json& s) {
  std::string t;
  auto add = [&](const std::string& part) { t += (t.empty() ? "" : " · ") + part; };
  if (auto a = num(s, "alpha")) add("alpha " + pct_setting(*a, false));
  if (auto m = num(s, "min_effect"))
    add("min effect " + pct_setting(*m) + " (" + str(s, "min_effect_source", "fixed") + ")");
  if (auto c = str(s, "correction"); !c.empty()) add(c + " correction");
  if (auto p = num(s, "power")) add("power " + pct_setting(*p));
  auto look = num(s, "look"), max_looks = num(s, "max_looks");
  if (look && max_looks && *max_looks > 1)
    add("look " + pct_setting(*look, false) + " of " + pct_setting(*max_looks, false));
  if (s.is_object() && s.value("require_power", false)) add("power required");
  return t.empty() ? "settings not recorded" : t;
}

std::vector<std::string> gate_settings_differences(const nlohmann::json& stored,
                                                   const gate::GateOptions& page) {
  std::vector<std::string> out;
  auto compare_num = [&](const char* key, const char* label, double mine, bool percent) {
    auto theirs = num(stored, key);
    if (theirs && differs(*theirs, mine))
      out.push_back(std::string(label) + ": " + pct_setting(*theirs, percent) +
                    " (stored gate) vs " + pct_setting(mine, percent) + " (this page)");
  };
  compare_num("alpha", "alpha", page.alpha, false);
  if (auto m = num(stored, "min_effect"); m && differs(*m, page.min_effect))
    out.push_back("min effect: " + pct_setting(*m) + " (stored gate, " +
                  str(stored, "min_effect_source", "fixed") + ") vs " +
                  pct_setting(page.min_effect) + " (this page, " + page.min_effect_source + ")");
  if (auto c = str(stored, "correction"); !c.empty() && c != page.correction)
    out.push_back("correction: " + c + " (stored gate) vs " + page.correction + " (this page)");
  compare_num("power", "power", page.power, true);
  compare_num("max_looks", "sequential looks", page.max_looks, false);
  return out;
}

}  // namespace pg::web
