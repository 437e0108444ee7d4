// Paired comparisons (MEASURE.md: at the power limit a comparison must be paired). Several calls are
// measured together against a reference (call 0), interleaved in the same passes: each pass runs
// every other call twice, in a shuffled order and then in the reverse order, with the reference
// between any two of them (R B R C R C R B R). Each sample of a call is divided by the mean of the
// reference samples just before and after it (milliseconds apart: the clock has no time to move),
// and the two such ratios of a pass are averaged (symmetric about the pass's middle: a drift over the
// pass cancels). The comparison is the median of the passes' ratios with its 95 % interval (order
// statistics, median_interval) and the number of pairs; sampling stops when every interval is within
// `target` of its median, not when each call's own median is known. Decisions follow from the
// interval and a stated minimum effect, never from a point's noise. Pure C++ (CPU tests feed it
// recorded ratios).
#pragma once
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>
#include <utility>

#include "core/paired_ratio.hpp"
#include "timing/settle.hpp"

namespace shapescope {

// A ratio of two weighted sums of the calls' times in one pass: a candidate's step GEMM time over the
// step's (pad), each term a call (its index) and its count per step. Constants (us) are added to
// either side for terms measured outside the passes (another dtype's GEMMs that both sides share).
struct SumRatio {
  std::vector<std::pair<size_t, double>> numerator, denominator;
  double numerator_us = 0, denominator_us = 0;
  // Before measure() renames the terms to calls: which of a position's algorithms each term is
  // (cuBLASLt's h0, h1, ...: an index into the position's algos), parallel to the terms; empty: all 0.
  std::vector<size_t> numerator_algo, denominator_algo;
};

struct PairedRule {
  double target = 0.01;      // stop when every ratio's 95 % interval is within +-1 % of its median
  int min_pairs = 8;
  int max_pairs = 64;
  double max_seconds = 1.5;  // of passes, after the warm-up (explain stays near 3 s below 1 ms GEMMs)
  double min_effect = kMinPairedEffect;  // a smaller difference is "the same"
  // Stop early on a ratio whose interval is clear of the minimum effect on one side, however wide.
  // Off where the width itself is reported (explain's threshold grows with it).
  bool stop_on_verdict = true;
  // Set: the comparisons are these ratios of sums (pad's steps), and sampling stops when each of
  // their intervals is within `target` (never early on a verdict: a saving's size matters), whatever
  // the single calls' ratios say.
  std::vector<SumRatio> sums;
};

PairedRatio paired_ratio(std::vector<double> ratios);

// What one paired run gave (timing/paired_run.hpp runs it on the GPU).
struct PairedOutcome {
  std::vector<PairedRatio> ratios;  // per call, against call 0 (ratios[0] is 1)
  std::vector<double> median_us;    // per call: the median of its samples in the counted passes
  std::vector<PairedRatio> sums;    // per rule.sums: the median of the passes' sum ratios, its interval
  size_t passes = 0, warmup_passes = 0;
  double seconds = 0;               // of counted passes
  // The SM clock (NVML, median of each pass) and board power over the counted passes: both sides of
  // every comparison ran in the same passes, so they saw the same clock by construction.
  double clock_low_mhz = 0, clock_median_mhz = 0, clock_high_mhz = 0;
  std::optional<double> power_w;
  SettleFacts settle;  // how the sustained warm-up ended before the counted passes
  bool interrupted = false;
};

// The calls of one pass, in order: the reference, then each other call in `order` and again in the
// reverse order, each followed by the reference (`order` holds 1..calls-1: pass_order).
std::vector<size_t> pass_sequence(const std::vector<size_t>& order);
// One pass's ratio per call from its samples (`us[s]` is the time of sequence[s]): the mean over
// the call's samples of each over the mean of its two neighbouring reference samples; 1 for the
// reference. nullopt where a time is zero.
std::vector<std::optional<double>> pass_ratios(const std::vector<size_t>& sequence, const std::vector<double>& us,
                                               size_t calls);

// One pass's mean time per call (us) from its samples; nullopt where the call has none or a zero.
std::vector<std::optional<double>> pass_means(const std::vector<size_t>& sequence, const std::vector<double>& us,
                                              size_t calls);
// One pass's value of `sum` from its means; nullopt when a term's call has no time or a side is 0.
std::optional<double> sum_ratio(const SumRatio& sum, const std::vector<std::optional<double>>& means);

// Whether sampling stops, given every call's ratios so far (index 0, the reference, is ignored) and
// `seconds` of passes: after min_pairs, when every interval is within rule.target or clear of the
// minimum effect on one side (faster or slower whatever more pairs say); at max_pairs; at
// max_seconds once there are min_pairs; at kHardLimit x max_seconds once there are three (the
// fewest that make an interval: long GEMMs).
constexpr double kHardLimit = 4;
bool paired_done(const std::vector<std::vector<double>>& ratios, const PairedRule& rule, double seconds);
// The same for rule.sums' ratios (`sums[i]` the passes' values of the i-th): after min_pairs, when
// every interval is within rule.target; the pair and time limits as above.
bool sums_done(const std::vector<std::vector<double>>& sums, const PairedRule& rule, double seconds);

// A pass's shuffled order of the calls 1..calls-1 (the reference, 0, is not in it): a permutation
// from `seed` (the same seed gives the same order).
std::vector<size_t> pass_order(size_t calls, unsigned long long seed);

}  // namespace shapescope
