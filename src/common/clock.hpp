// Wall-clock timestamps for stored results.
#pragma once
#include <ctime>
#include <string>

namespace shapescope {

// "2026-11-21T05:35:04Z"
inline std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace shapescope
