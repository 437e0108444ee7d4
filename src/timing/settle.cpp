#include "timing/settle.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "device/nvml.hpp"
#include "timing/stats.hpp"

namespace shapescope {

bool clock_settled(const std::vector<double>& window_mhz, const SettleRule& rule) {
  std::vector<double> known;
  for (double mhz : window_mhz)
    if (mhz > 0) known.push_back(mhz);
  if (known.size() < 2 * rule.min_readings) return false;
  const auto middle = known.begin() + std::ptrdiff_t(known.size() / 2);
  const double first = median(std::vector<double>(known.begin(), middle));
  const double second = median(std::vector<double>(middle, known.end()));
  return first > 0 && std::abs(second - first) / first <= rule.tolerance;
}

SettleFacts look_at_clock(const std::vector<double>& window_mhz, const std::vector<double>& window_w, double seconds,
                          const SettleRule& rule) {
  SettleFacts f;
  f.watched = true;
  f.settled = clock_settled(window_mhz, rule);
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
  for (const ClockSample& c : clocks.between(std::max(since, now - rule.window_s), now)) {
    mhz.push_back(c.sm_clock_mhz);
    watts.push_back(c.power_w);
  }
  return look_at_clock(mhz, watts, now - since, rule);
}

}  // namespace shapescope
