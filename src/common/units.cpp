#include "common/units.hpp"

#include <cmath>

#include <fmt/format.h>

namespace shapescope {

std::string fixed(double value, int decimals) {
  if (!std::isfinite(value)) return "-";
  return fmt::format("{:.{}f}", value, decimals);
}

std::string gib(double bytes, int decimals) { return fmt::format("{:.{}f} GiB", bytes / kGiB, decimals); }
std::string mib(double bytes, int decimals) { return fmt::format("{:.{}f} MiB", bytes / kMiB, decimals); }
std::string in_mib(double bytes, int decimals) { return fmt::format("{:.{}f}", bytes / kMiB, decimals); }

std::string us_or_ms(double us) {
  if (std::abs(us) >= 1e4) return fmt::format("{:.2f} ms", us / 1e3);
  return fmt::format("{:.1f} us", us);
}

std::string tflops_text(double tflops, int decimals) { return fmt::format("{:.{}f} TFLOP/s", tflops, decimals); }

std::string percent(double fraction, int decimals) { return fmt::format("{:.{}f} %", fraction * 100, decimals); }
std::string percent_tight(double fraction, int decimals) {
  return fmt::format("{:.{}f}%", fraction * 100, decimals);
}

std::string signed_percent(double fraction) {
  const double p = fraction * 100;
  return std::abs(p) < 0.1 && p != 0 ? fmt::format("{:+.3f} %", p) : fmt::format("{:+.2f} %", p);
}

std::string signed_si(double value) {
  const double a = std::abs(value);
  if (a >= 1e9) return fmt::format("{:+.2f} G", value / 1e9);
  if (a >= 1e6) return fmt::format("{:+.2f} M", value / 1e6);
  if (a >= 1e3) return fmt::format("{:+.1f} k", value / 1e3);
  return fmt::format("{:+.0f}", value);
}

std::string scientific(double value) {
  if (!std::isfinite(value)) return "-";
  if (value == 0) return "0";
  // fmt's "{:.1e}" writes "4.1e-03"; the exponent without its padding reads shorter in a sentence.
  const std::string text = fmt::format("{:.1e}", value);
  const size_t e = text.find('e');
  const int exponent = std::stoi(text.substr(e + 1));
  return fmt::format("{}e{}", text.substr(0, e), exponent);
}

}  // namespace shapescope
