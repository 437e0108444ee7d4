// The stopping rule on synthetic sample streams: where it stops, and why.
#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <vector>

#include "timing/stopping.hpp"

namespace shapescope {
namespace {

// Feeds `stream` one sample at a time until the rule stops; returns the count and the reason.
std::pair<int, StopReason> run_rule(const std::vector<double>& stream, const StopRule& rule) {
  std::vector<double> taken;
  for (double sample : stream) {
    taken.push_back(sample);
    if (auto reason = stop_reason(taken, rule)) return {int(taken.size()), *reason};
  }
  ADD_FAILURE() << "the rule never stopped on a stream of " << stream.size();
  return {0, StopReason::kUnrecorded};
}

std::vector<double> one_to(int n) {
  std::vector<double> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 1.0);
  return v;
}

TEST(MedianInterval, BelowSixSamplesItIsTheRange) {
  const MedianInterval i = median_interval({5, 1, 4, 2, 3});
  EXPECT_EQ(i.low, 1);
  EXPECT_EQ(i.high, 5);
  EXPECT_NEAR(i.coverage, 0.9375, 1e-12);  // 1 - 2^-4
  EXPECT_NEAR(median_interval({1, 2, 3}).coverage, 0.75, 1e-12);
}

TEST(MedianInterval, OrderStatisticsWithBinomialCoverage) {
  // n = 6: [x1, x6] covers 1 - 2/64; n = 20: [x6, x15] (P(Bin(20, 1/2) <= 5) = 0.0207);
  // n = 100: [x40, x61] (P(Bin(100, 1/2) <= 39) = 0.0176, <= 40: 0.0284).
  EXPECT_NEAR(median_interval(one_to(6)).coverage, 1 - 2.0 / 64, 1e-12);
  const MedianInterval twenty = median_interval(one_to(20));
  EXPECT_EQ(twenty.low, 6);
  EXPECT_EQ(twenty.high, 15);
  EXPECT_NEAR(twenty.coverage, 1 - 2 * 0.020695, 1e-5);
  const MedianInterval hundred = median_interval(one_to(100));
  EXPECT_EQ(hundred.low, 40);
  EXPECT_EQ(hundred.high, 61);
  EXPECT_GE(hundred.coverage, 0.95);
}

TEST(MedianInterval, EmptyAndSingle) {
  EXPECT_EQ(median_interval({}).coverage, 0);
  const MedianInterval one = median_interval({7});
  EXPECT_EQ(one.low, 7);
  EXPECT_EQ(one.high, 7);
  EXPECT_EQ(relative_half_width({}), 0);
  EXPECT_EQ(relative_half_width({3, 3, 3, 3}), 0);
}

TEST(StopRule, SteadyKernelStopsAtTheMinimum) {
  // 1000 us +- 1 us: the range of four samples is 0.2 % of the median, half of it 0.1 %.
  std::vector<double> stream;
  for (int i = 0; i < 100; ++i) stream.push_back(1000 + (i % 3) - 1);
  const auto [n, reason] = run_rule(stream, StopRule{4, 40, 0.005});
  EXPECT_EQ(n, 4);
  EXPECT_EQ(reason, StopReason::kConverged);
}

TEST(StopRule, NoisyKernelGoesToTheCap) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> noisy(50, 150);
  std::vector<double> stream;
  for (int i = 0; i < 100; ++i) stream.push_back(noisy(rng));
  const auto [n, reason] = run_rule(stream, StopRule{4, 40, 0.005});
  EXPECT_EQ(n, 40);
  EXPECT_EQ(reason, StopReason::kCap);
}

TEST(StopRule, AnOutlierCostsSamplesUntilTheIntervalLeavesItOut) {
  // Up to eight samples the ~95 % interval is the range, which holds the outlier; from nine it is
  // [x(2), x(8)], which does not.
  const std::vector<double> stream = {100, 100.1, 150, 99.9, 100, 100.05, 99.95, 100.02, 100, 100, 100, 100};
  const auto [n, reason] = run_rule(stream, StopRule{4, 40, 0.005});
  EXPECT_EQ(n, 9);
  EXPECT_EQ(reason, StopReason::kConverged);
}

TEST(StopRule, TimerTicksConvergeOnceMostSamplesAgree) {
  // A 5 us kernel read with 0.5 us ticks: mostly 5.0, twice 5.5. The interval collapses onto 5.0
  // once it leaves both high ticks out: [x(3), x(10)] of twelve samples.
  const std::vector<double> stream = {5.0, 5.5, 5.0, 5.0, 5.0, 5.0, 5.5, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0};
  const auto [n, reason] = run_rule(stream, StopRule{4, 40, 0.005});
  EXPECT_EQ(reason, StopReason::kConverged);
  EXPECT_EQ(n, 12);
}

TEST(StopRule, FixedCountIgnoresTheInterval) {
  std::vector<double> stream(50, 42.0);
  const auto [n, reason] = run_rule(stream, StopRule{10, 10, 0.005});
  EXPECT_EQ(n, 10);
  EXPECT_EQ(reason, StopReason::kFixed);
}

TEST(StopRule, NeverConvergesOnFewerThanThreeSamples) {
  std::vector<double> stream(50, 42.0);
  const auto [n, reason] = run_rule(stream, StopRule{1, 40, 0.005});
  EXPECT_EQ(n, kMinAdaptiveSamples);
  EXPECT_EQ(reason, StopReason::kConverged);
}

TEST(StopRule, ConvergedAtTheCapCountsAsConverged) {
  std::vector<double> stream = {100, 120, 100, 100, 100, 100};
  const auto [n, reason] = run_rule(stream, StopRule{3, 5, 0.005});
  EXPECT_EQ(n, 5);  // [x1, x5] holds the 120 until the cap
  EXPECT_EQ(reason, StopReason::kCap);
}

}  // namespace
}  // namespace shapescope
