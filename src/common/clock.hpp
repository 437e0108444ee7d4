// Wall-clock timestamps for stored results, and elapsed time.
#pragma once
#include <chrono>
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

// Seconds of the steady clock since `start`.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace shapescope
