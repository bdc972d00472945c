// Repairing text before it reaches a JSON document: nlohmann::json refuses to dump invalid UTF-8,
// and a model path or a git subject is whatever bytes the file system or the author gave us.
#pragma once
#include <cstdint>
#include <string>

namespace pg {

// Replaces every byte that does not start a well-formed UTF-8 sequence with U+FFFD.
inline std::string valid_utf8(const std::string& s) {
  auto seq_len = [&](size_t i) -> size_t {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    uint32_t min = 0;
    if (c < 0x80) return 1;
    if ((c & 0xE0) == 0xC0)
      n = 2, min = 0x80;
    else if ((c & 0xF0) == 0xE0)
      n = 3, min = 0x800;
    else if ((c & 0xF8) == 0xF0)
      n = 4, min = 0x10000;
    else
      return 0;
    if (i + n > s.size()) return 0;
    uint32_t cp = c & (0x7F >> n);
    for (size_t k = 1; k < n; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return 0;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
  };
  std::string out;
  bool repaired = false;
  for (size_t i = 0; i < s.size();) {
    const size_t n = seq_len(i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      repaired = true;
      ++i;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  return repaired ? out : s;
}

}  // namespace pg
