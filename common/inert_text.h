// Text that perfgate did not write itself (a cell or model name from an --exec benchmark or an
// AOTI sidecar, a reason, a benchmark's stderr, a commit subject, an environment value), made
// inert for a log line, a terminal or a report: one line, nothing a terminal or GitHub's runner
// acts on, and a bounded length. Every human-readable output passes such strings through
// inert_text; the stored value and the JSON and CSV documents keep it exact. The rules are
// docs/FORMATS.md's "Text from measured code".
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "common/utf8.h"

namespace pg {

// Caps, in characters (code points) of the inert text, the ellipsis included.
inline constexpr size_t kInertNameChars = 200;      // a name, label, subject or environment value
inline constexpr size_t kInertMessageChars = 2000;  // a reason, note, warning or stderr excerpt

namespace inert_detail {

inline uint32_t decode(const std::string& s, size_t i, size_t* len) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return *len = 1, c;
  const size_t n = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
  uint32_t cp = c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  *len = n;
  return cp;
}

// Code points shown as an escape: C0 and C1 controls and DEL (line breaks, ESC, the 8-bit CSI),
// the Unicode line and paragraph separators, and the invisible formatting characters that
// reorder or hide text (bidirectional overrides and isolates, zero-width characters, BOM).
inline bool shown_escaped(uint32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp < 0xA0) || (cp >= 0x200B && cp <= 0x200F) ||
         (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2069) || cp == 0xFEFF;
}

// White space that .NET's TrimStart removes (GitHub's runner trims a line before it looks for
// "::") and that stays in the text as it is.
inline bool leading_blank(uint32_t cp) {
  return cp == ' ' || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
         cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

}  // namespace inert_detail

// `s` as one inert line of at most `max_chars` characters (max_chars >= 1):
// - invalid UTF-8 becomes U+FFFD (common/utf8.h);
// - \n, \r and \t are shown as those two characters; other C0 controls and DEL as \xHH; C1
//   controls, U+2028/U+2029 and invisible formatting characters as \uHHHH (so ESC is \x1B: no
//   escape sequence reaches a terminal);
// - "##[", which GitHub's runner reads as a legacy command anywhere in a line, becomes "##\[";
// - "::" at the start (after blanks), a workflow command if the text begins a line, becomes
//   "\::";
// - longer text is cut, and ends in "…" (U+2026).
// A backslash is kept as it is, so inert_text(inert_text(s)) == inert_text(s).
inline std::string inert_text(std::string_view s, size_t max_chars = kInertNameChars) {
  using namespace inert_detail;
  const std::string text = valid_utf8(std::string(s));
  std::string out;
  out.reserve(text.size() < 256 ? text.size() + 8 : 256);
  size_t chars = 0, fits_with_ellipsis = 0;  // out's length while it leaves room for "…"
  bool at_start = true;
  for (size_t i = 0, len = 0; i < text.size(); i += len) {
    const uint32_t cp = decode(text, i, &len);
    std::string piece;  // an ASCII escape, or the code point itself
    bool literal = false;
    if (cp == '\n') {
      piece = "\\n";
    } else if (cp == '\r') {
      piece = "\\r";
    } else if (cp == '\t') {
      piece = "\\t";
    } else if (shown_escaped(cp)) {
      char buf[8];
      std::snprintf(buf, sizeof buf, cp < 0x80 ? "\\x%02X" : "\\u%04X", static_cast<unsigned>(cp));
      piece = buf;
    } else if (cp == '[' && out.ends_with("##")) {
      piece = "\\[";
    } else if (cp == ':' && at_start && text.compare(i, 2, "::") == 0) {
      piece = "\\:";
    } else {
      piece.assign(text, i, len);
      literal = true;
    }
    at_start = at_start && leading_blank(cp);
    const size_t piece_chars = literal ? 1 : piece.size();  // an escape is ASCII
    if (chars + piece_chars > max_chars) {
      out.resize(fits_with_ellipsis);
      return out + "\u2026";
    }
    out += piece;
    chars += piece_chars;
    if (chars < max_chars) fits_with_ellipsis = out.size();
  }
  return out;
}

}  // namespace pg
