// Timestamps as the store keeps them: ISO 8601 UTC to the second ("2026-01-31T12:00:00Z").
#pragma once
#include <chrono>
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

}  // namespace pg
