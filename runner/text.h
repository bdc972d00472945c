// Small text helpers of the runner: nothing that git, a host or a user hands us may reach the
// store, a terminal or a JSON document as raw invalid bytes.
#pragma once
#include <cstdint>
#include <string>

namespace pg::runner {

// Valid UTF-8 out: invalid sequences and control characters (except tab) become U+FFFD.
std::string to_valid_utf8(const std::string& s);

// 1536 -> "1.5 KiB"; 0 -> "0 B".
std::string format_bytes(double bytes);

// 75.2 -> "1:15"; 3700 -> "1:01:40".
std::string format_duration(double seconds);

}  // namespace pg::runner
