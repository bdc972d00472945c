#pragma once
// Character escaping shared by the HTML pages, the Markdown report and their links: each output
// format is one table of replacements, so a character that needs care is added in one place.

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace pg {

using Replacements = std::initializer_list<std::pair<char, std::string_view>>;

inline std::string replace_chars(std::string_view s, Replacements table) {
  std::string out;
  out.reserve(s.size() + 16);
  for (char c : s) {
    bool replaced = false;
    for (const auto& [from, to] : table)
      if (c == from) {
        out += to;
        replaced = true;
        break;
      }
    if (!replaced) out += c;
  }
  return out;
}

// Text and attribute values inside HTML.
inline std::string html_escape(std::string_view s) {
  return replace_chars(
      s, {{'&', "&amp;"}, {'<', "&lt;"}, {'>', "&gt;"}, {'"', "&quot;"}, {'\'', "&#39;"}});
}

// Text inside a Markdown table cell: no pipes, no HTML, no code spans, no line breaks.
inline std::string markdown_cell(std::string_view s) {
  return replace_chars(s, {{'|', "\\|"},
                           {'<', "&lt;"},
                           {'>', "&gt;"},
                           {'&', "&amp;"},
                           {'`', "'"},
                           {'\n', " "},
                           {'\r', " "}});
}

// Percent-encoding of one query-string component (RFC 3986 unreserved characters stay): commit
// SHAs, branch names and key values in the links the web and the gate's reports write.
inline std::string url_encode(std::string_view s) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

}  // namespace pg
