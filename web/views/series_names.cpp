// The names and small texts of a series that the view models share (web/views/series_names.h).
#include "web/views/series_names.h"

#include "common/utc_time.h"
#include "core/cell_key_io.h"
#include "core/cell_label.h"
#include "core/environment_json.h"

namespace pg::web {

std::string group_device(const store::SeriesInfo& s) {
  auto it = s.env.find("device");
  return it != s.env.end() && !it->second.empty() ? it->second : s.key.device;
}

std::string series_name(const store::SeriesInfo& s) {
  return s.key.model + " · " + cell_label(s.key, false) + " · " + group_device(s);
}

std::string env_text(const Environment& env) {
  std::string out;
  for (const auto& field : comparable_env_fields()) {
    auto it = env.find(field);
    if (it == env.end() || it->second.empty()) continue;
    if (!out.empty()) out += " · ";
    out += field == "device" ? it->second : field + " " + it->second;
  }
  return out;
}

nlohmann::json computing_json(const std::vector<store::SeriesInfo>& series) {
  nlohmann::json out = nlohmann::json::array();
  for (const store::SeriesInfo& s : series)
    out.push_back(
        {{"id", s.id}, {"key", cell_key_to_json(s.key)}, {"env", environment_to_json(s.env)}});
  return out;
}

int64_t time_key(const std::string& iso) {
  int64_t t = 0;
  return parse_iso8601(iso, &t) ? t : 0;
}

}  // namespace pg::web
