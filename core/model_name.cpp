#include "core/model_name.h"

namespace pg {
namespace {

bool ascii_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

}  // namespace

bool is_model_name(std::string_view name) {
  if (name.empty() || name.size() > 64 || !ascii_alnum(name.front())) return false;
  for (char c : name)
    if (!ascii_alnum(c) && c != '.' && c != '_' && c != '-') return false;
  return true;
}

}  // namespace pg
