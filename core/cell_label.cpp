#include "core/cell_label.h"

namespace pg {

std::string cell_label(const CellKey& key, bool with_model) {
  std::string s;
  for (const KeyField& f : kKeyFields) {
    if (!with_model && !f.in_short_label) continue;
    if (!s.empty()) s += ' ';
    s += f.label_prefix;
    if (f.kind == KeyFieldKind::flag)
      s += key.*f.flag ? "on" : "off";
    else
      s += key_field_text(key, f);
  }
  return s;
}

}  // namespace pg
