#include "core/cell_key_query.h"

#include <charconv>

#include "common/errors.h"
#include "common/escape.h"

namespace pg {

std::string cell_key_query(const CellKey& key) {
  std::string q;
  for (const KeyField& f : kKeyFields)
    q +=
        (q.empty() ? "" : "&") + std::string(f.json_key) + "=" + url_encode(key_field_text(key, f));
  return q;
}

CellKey cell_key_from_query(
    const std::function<std::optional<std::string>(const std::string&)>& param) {
  CellKey key;
  for (const KeyField& f : kKeyFields) {
    const std::optional<std::string> v = param(f.json_key);
    if (!v) throw SettingError(f.json_key, "is missing (a cell is named by every key field)");
    switch (f.kind) {
      case KeyFieldKind::text:
        key.*f.text = *v;
        break;
      case KeyFieldKind::integer: {
        int n = 0;
        auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
        if (ec != std::errc() || p != v->data() + v->size() || v->empty())
          throw SettingError(f.json_key, "must be an integer, got '" + *v + "'");
        key.*f.integer = n;
        break;
      }
      case KeyFieldKind::flag:
        if (*v != "true" && *v != "false")
          throw SettingError(f.json_key, "must be true or false, got '" + *v + "'");
        key.*f.flag = *v == "true";
        break;
    }
  }
  return key;
}

}  // namespace pg
