#include "timing/settle.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "device/nvml.hpp"
#include "timing/stats.hpp"

namespace shapescope {

namespace {

// The known readings' (above 0) two halves' medians within `tolerance` of each other.
bool halves_agree(const std::vector<double>& window, double tolerance, size_t min_readings) {
  std::vector<double> known;
  for (double v : window)
    if (v > 0) known.push_back(v);
  if (known.size() < 2 * min_readings) return false;
  const auto middle = known.begin() + std::ptrdiff_t(known.size() / 2);
  const double first = median(std::vector<double>(known.begin(), middle));
  const double second = median(std::vector<double>(middle, known.end()));
  return first > 0 && std::abs(second - first) / first <= tolerance;
}

}  // namespace

bool clock_settled(const std::vector<double>& window_mhz, const SettleRule& rule) {
  return halves_agree(window_mhz, rule.tolerance, rule.min_readings);
}

bool power_settled(const std::vector<double>& window_w, const SettleRule& rule) {
  return halves_agree(window_w, rule.power_tolerance, rule.min_readings);
}

SettleFacts look_at_clock(const std::vector<double>& window_mhz, const std::vector<double>& window_w, double seconds,
                          const SettleRule& rule) {
  SettleFacts f;
  f.watched = true;
  f.settled = clock_settled(window_mhz, rule) && (rule.power_window_s <= 0 || power_settled(window_w, rule));
  f.seconds = seconds;
  std::vector<double> mhz, watts;
  for (double m : window_mhz)
    if (m > 0) mhz.push_back(m);
  for (double w : window_w)
    if (w > 0) watts.push_back(w);
  if (!mhz.empty()) f.clock_mhz = median(mhz);
  if (!watts.empty()) f.power_w = median(watts);
  return f;
}

SettleFacts look_at_clock(const ClockSampler& clocks, double since, double now, const SettleRule& rule) {
  std::vector<double> mhz, watts;
  const double power_from = now - (rule.power_window_s > 0 ? rule.power_window_s : rule.window_s);
  for (const ClockSample& c : clocks.between(std::max(since, now - settle_window_s(rule)), now)) {
    if (c.t >= now - rule.window_s) mhz.push_back(c.sm_clock_mhz);
    if (c.t >= power_from) watts.push_back(c.power_w);
  }
  return look_at_clock(mhz, watts, now - since, rule);
}

}  // namespace shapescope
