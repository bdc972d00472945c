#include "web/http/json_limits.h"

#include <nlohmann/json.hpp>

namespace pg::web {

std::optional<size_t> json_too_deep_at(std::string_view json, size_t max_depth) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\')
        ++i;  // the escaped character, whatever it is
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

std::string json_for_display(const std::string& stored, size_t max_bytes) {
  std::string note;
  if (json_too_deep_at(stored))
    note = "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
  else if (stored.size() > max_bytes)
    note = std::to_string(stored.size()) + " bytes";
  if (note.empty()) {
    const auto doc = nlohmann::json::parse(stored, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return stored;
    std::string pretty = doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    // Indentation grows a shallow but wide document by up to 2 * depth bytes per value.
    if (pretty.size() <= 4 * max_bytes) return pretty;
    note = std::to_string(pretty.size()) + " bytes when indented";
  }
  std::string shown = stored.substr(0, max_bytes);
  if (stored.size() > max_bytes) shown += "\n...";
  return "(shown as stored: " + note + ")\n" + shown;
}

std::string config_for_api(const std::string& stored, size_t max_bytes) {
  if (json_too_deep_at(stored))
    return nlohmann::json("(config left out: nested deeper than " + std::to_string(kMaxJsonDepth) +
                          " levels)")
        .dump();
  if (stored.size() > max_bytes)
    return nlohmann::json("(config left out: " + std::to_string(stored.size()) + " bytes)").dump();
  return stored;
}

}  // namespace pg::web
