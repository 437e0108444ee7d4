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

// The steady clock in seconds: the time base of the NVML sampler's readings and of
// MeasureOptions::warm_since.
inline double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace shapescope
