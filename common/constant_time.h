// Comparing secrets (a bearer token, a token's hash) without an early exit, so the time a
// comparison takes does not tell an attacker how much of a guess was right. Header-only, standard
// library only.
#pragma once
#include <cstddef>
#include <string_view>

namespace pg {

// Whether a and b hold the same bytes, in time that depends only on the longer length.
inline bool constant_time_equal(std::string_view a, std::string_view b) {
  const size_t n = a.size() > b.size() ? a.size() : b.size();
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

}  // namespace pg
