#include "core/environment_json.h"

#include "common/utf8.h"

namespace pg {

nlohmann::json environment_to_json(const Environment& env) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : env) j[valid_utf8(k)] = valid_utf8(v);
  return j;
}

}  // namespace pg
