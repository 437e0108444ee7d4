// Paired comparisons (MEASURE.md: at the power limit a comparison must be paired). Several calls are
// measured together, interleaved in the same passes: each pass runs every call once in a shuffled
// order and once in the reverse order (A B C C B A), so a drift of the clock within a pass weighs on
// every call alike, and gives one ratio per call: its two samples' mean over the reference's (call
// 0). The comparison is the median of those ratios with its 95 % interval (order statistics,
// median_interval) and the number of pairs; sampling stops when every interval is within `target`
// of its median, not when each call's own median is known. Decisions follow from the interval and a
// stated minimum effect, never from a point's noise. Pure C++ (CPU tests feed it recorded ratios).
#pragma once
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "core/paired_ratio.hpp"

namespace shapescope {

struct PairedRule {
  double target = 0.01;      // stop when every ratio's 95 % interval is within +-1 % of its median
  int min_pairs = 8;
  int max_pairs = 64;
  double max_seconds = 3.0;  // of passes, after the warm-up
  double min_effect = kMinPairedEffect;  // a smaller difference is "the same"
};

PairedRatio paired_ratio(std::vector<double> ratios);

// What one paired run gave (timing/paired_run.hpp runs it on the GPU).
struct PairedOutcome {
  std::vector<PairedRatio> ratios;  // per call, against call 0 (ratios[0] is 1)
  std::vector<double> median_us;    // per call: the median over the counted passes of its two samples' mean
  size_t passes = 0, warmup_passes = 0;
  double seconds = 0;               // of counted passes
  // The SM clock (NVML, median of each pass) and board power over the counted passes: both sides of
  // every comparison ran in the same passes, so they saw the same clock by construction.
  double clock_low_mhz = 0, clock_median_mhz = 0, clock_high_mhz = 0;
  std::optional<double> power_w;
  bool interrupted = false;
};

// One pass's ratios from its samples: `forward[i]` and `backward[i]` are call i's two times (us).
// Calls with a zero time give no ratio (nullopt).
std::vector<std::optional<double>> pass_ratios(const std::vector<double>& forward, const std::vector<double>& backward);

// Whether sampling stops, given every call's ratios so far (index 0, the reference, is ignored) and
// `seconds` of passes: every interval within rule.target (after min_pairs), or max_pairs, or
// max_seconds once there are three pairs (the fewest that make an interval).
bool paired_done(const std::vector<std::vector<double>>& ratios, const PairedRule& rule, double seconds);

// Where a shuffled forward order of `calls` starts a pass: a permutation from `seed` (the same seed
// gives the same order). The backward order is its reverse.
std::vector<size_t> pass_order(size_t calls, unsigned long long seed);

}  // namespace shapescope
