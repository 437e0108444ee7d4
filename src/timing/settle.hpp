// Sustained clocks, settled (MEASURE.md): large GEMMs take an H100 to its 700 W limit within
// seconds, and the SM clock falls as power and temperature rise; at the limit it keeps wandering by a
// few percent around a level. The warm-up of the sustained state therefore watches the clock (NVML,
// every 20 ms) where the work is large enough to reach the limit, and ends when the level has
// stopped moving: the median of the last half window within `tolerance` of the half before it, or
// after `max_s`. The state is then described by the clock and power it ran at, so that two runs a
// minute apart say whether they compare. Plain C++.
#pragma once
#include <algorithm>
#include <cstddef>
#include <optional>
#include <vector>

namespace shapescope {

class ClockSampler;

struct SettleRule {
  double window_s = 0.4;     // two halves of 0.2 s (10 readings each)
  double tolerance = 0.015;  // |median(second half) - median(first half)| / median(first half)
  double max_s = 3;          // of GEMM load, counted from the warm-up's start
  size_t min_readings = 5;   // per half
  double from_us = 500;      // watched only where a call takes at least this long (smaller GEMMs
                             // stay below the power limit, at their boost clock)
  // The board power too, where power_window_s > 0: settled as the clock is (its halves' medians within
  // power_tolerance) over this longer window. NVML's power is an average over about a second,
  // refreshed every 100 ms: a state reached from idle shows in it a second or more after the clock,
  // and a step measured before it has run short of the draw it keeps (a replay, timing/replay.cpp).
  double power_window_s = 0;
  double power_tolerance = 0.03;
};

// Whether the window's SM clock readings (MHz, in time order; 0 = unknown, ignored) have settled:
// the median of its second half within the tolerance of its first half's.
bool clock_settled(const std::vector<double>& window_mhz, const SettleRule& rule);
// The same of board power readings (W) over the power window, within rule.power_tolerance.
bool power_settled(const std::vector<double>& window_w, const SettleRule& rule);

// How the warm-up of one run ended.
struct SettleFacts {
  bool watched = false;   // NVML gave clocks to watch (else the fixed warm-up alone)
  bool settled = false;   // within the tolerance before max_s (the clock, and the power where watched)
  double seconds = 0;     // of GEMM load, from the warm-up's start
  double clock_mhz = 0;   // the window's median when it ended (0: unknown)
  std::optional<double> power_w;  // the window's median board power
};

// The facts of one look at the clock: the window's readings (MHz, W; 0 = unknown) `seconds` into
// the warm-up, the power's over the power window where it is watched. `settled` as clock_settled
// says, and power_settled too where rule.power_window_s > 0.
SettleFacts look_at_clock(const std::vector<double>& window_mhz, const std::vector<double>& window_w, double seconds,
                          const SettleRule& rule);
// The same from the sampler: its readings of the last rule.window_s (the power's: of the last
// rule.power_window_s, where watched) before `now` (none before `since`, the warm-up's start).
SettleFacts look_at_clock(const ClockSampler& clocks, double since, double now, const SettleRule& rule);
// Whether the warm-up ends with these facts: settled, or watched for rule.max_s.
inline bool warm_up_ends(const SettleFacts& f, const SettleRule& rule) { return f.settled || f.seconds >= rule.max_s; }
// The warm-up's shortest look: the clock's window, or the power's where it is watched.
inline double settle_window_s(const SettleRule& rule) { return std::max(rule.window_s, rule.power_window_s); }

}  // namespace shapescope
