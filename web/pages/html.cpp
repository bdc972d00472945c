#include "web/pages/html.h"

#include <nlohmann/json.hpp>

namespace pg::web {

std::string json_for_script(const nlohmann::json& j) {
  // error_handler::replace: invalid UTF-8 from a client becomes U+FFFD instead of an exception.
  const std::string s = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(s.size() + 16);
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (c == '\xE2' && i + 2 < s.size() && s[i + 1] == '\x80' &&
               (s[i + 2] == '\xA8' || s[i + 2] == '\xA9')) {
      out += s[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace pg::web
