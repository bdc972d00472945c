// Spellings of the profile's row kinds (docs/FORMATS.md, "The profile").
#include "core/profile.h"

namespace pg {

const char* to_string(ProfileOpKind kind) {
  return kind == ProfileOpKind::kernel ? "kernel" : "op";
}

std::optional<ProfileOpKind> profile_op_kind(const std::string& text) {
  if (text == "op") return ProfileOpKind::op;
  if (text == "kernel") return ProfileOpKind::kernel;
  return std::nullopt;
}

}  // namespace pg
