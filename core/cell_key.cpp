#include "core/cell_key.h"

namespace pg {

std::strong_ordering compare_keys(const CellKey& a, const CellKey& b) {
  for (const KeyField& f : kKeyFields) {
    if (!f.identifies_cell) continue;
    std::strong_ordering c = std::strong_ordering::equal;
    switch (f.kind) {
      case KeyFieldKind::text:
        c = a.*f.text <=> b.*f.text;
        break;
      case KeyFieldKind::integer:
        c = a.*f.integer <=> b.*f.integer;
        break;
      case KeyFieldKind::flag:
        c = a.*f.flag <=> b.*f.flag;
        break;
    }
    if (c != 0) return c;
  }
  return std::strong_ordering::equal;
}

std::string key_field_text(const CellKey& key, const KeyField& field) {
  switch (field.kind) {
    case KeyFieldKind::text:
      return key.*field.text;
    case KeyFieldKind::integer:
      return std::to_string(key.*field.integer);
    case KeyFieldKind::flag:
      return key.*field.flag ? "true" : "false";
  }
  return {};
}

}  // namespace pg
