// Timestamps as the store keeps them: ISO 8601 UTC to the second ("2026-01-31T12:00:00Z"). The one
// place that writes and reads them (the store, the runner's git times, the server's log, the web).
#pragma once
#include <chrono>
#include <cstdint>
#include <ctime>
#include <string>

namespace pg {

inline std::string iso8601_utc(std::time_t seconds) {
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

inline std::string now_iso8601() {
  return iso8601_utc(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now()));
}

// Unix seconds of an ISO 8601 timestamp: YYYY-MM-DDTHH:MM:SS (or a space for the T), fractions
// allowed, then Z, +HH:MM, -HH:MM or nothing (UTC). False when `s` is not one.
inline bool parse_iso8601(const std::string& s, int64_t* unix_seconds) {
  const auto digits = [&s](size_t from, size_t n) {
    if (from + n > s.size()) return false;
    for (size_t i = from; i < from + n; ++i)
      if (s[i] < '0' || s[i] > '9') return false;
    return true;
  };
  const auto num = [&s](size_t from, size_t n) { return std::stoi(s.substr(from, n)); };
  if (!digits(0, 4) || s.size() < 19 || s[4] != '-' || !digits(5, 2) || s[7] != '-' ||
      !digits(8, 2) || (s[10] != 'T' && s[10] != ' ') || !digits(11, 2) || s[13] != ':' ||
      !digits(14, 2) || s[16] != ':' || !digits(17, 2))
    return false;
  const int y = num(0, 4), mo = num(5, 2), d = num(8, 2);
  const int h = num(11, 2), mi = num(14, 2), sec = num(17, 2);
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return false;
  size_t i = 19;
  if (i < s.size() && s[i] == '.') {
    ++i;
    const size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == start) return false;
  }
  int64_t offset = 0;
  if (i == s.size() || (s[i] == 'Z' && i + 1 == s.size())) {
  } else if ((s[i] == '+' || s[i] == '-') && s.size() == i + 6 && digits(i + 1, 2) &&
             s[i + 3] == ':' && digits(i + 4, 2)) {
    offset = (num(i + 1, 2) * 3600 + num(i + 4, 2) * 60) * (s[i] == '+' ? 1 : -1);
  } else {
    return false;
  }
  // Days since 1970-01-01 of the proleptic Gregorian date (Howard Hinnant's algorithm).
  const int64_t yy = y - (mo <= 2);
  const int64_t era = (yy >= 0 ? yy : yy - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(yy - era * 400);
  const unsigned m = static_cast<unsigned>(mo);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + static_cast<unsigned>(d) - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const int64_t days = era * 146097 + static_cast<int64_t>(doe) - 719468;
  *unix_seconds = days * 86400 + h * 3600 + mi * 60 + sec - offset;
  return true;
}

}  // namespace pg
