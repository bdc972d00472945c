// Walks core/cell_key.h's field table for the table-driven tests of every layer: a key that differs
// from a base key in one field only, whatever the field's kind.
#pragma once
#include <string>

#include "core/cell_key.h"

namespace pg::test {

inline CellKey base_key() { return {"gpt2", "bf16", 4, 256, 32, true, "sdpa", false, "cuda"}; }

// `key` with field `f` set to a value no other field of the base key holds.
inline CellKey with_other_value(CellKey key, const KeyField& f) {
  switch (f.kind) {
    case KeyFieldKind::text:
      key.*f.text = std::string("other-") + f.name;
      break;
    case KeyFieldKind::integer:
      key.*f.integer += 1000;
      break;
    case KeyFieldKind::flag:
      key.*f.flag = !(key.*f.flag);
      break;
  }
  return key;
}

}  // namespace pg::test
