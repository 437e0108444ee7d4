// Paired comparisons on recorded ratios: the interval, the decisions, the stopping rule, the ratios
// of one pass and its order.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "timing/paired.hpp"

namespace shapescope {
namespace {

std::vector<double> around(double center, double spread, int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0, spread);
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(center * (1 + noise(rng)));
  return v;
}

TEST(Paired, RatioIsTheMedianWithAnOrderStatisticInterval) {
  const PairedRatio r = paired_ratio({0.80, 0.79, 0.81, 0.78, 0.82, 0.80, 0.79, 0.81, 0.80, 0.80});
  EXPECT_DOUBLE_EQ(r.median, 0.80);
  EXPECT_EQ(r.pairs, 10u);
  EXPECT_GE(r.coverage, 0.95);
  EXPECT_LE(r.low, 0.80);
  EXPECT_GE(r.high, 0.80);
  EXPECT_NEAR(r.speedup(), 1.25, 1e-12);
  EXPECT_NEAR(r.speedup_low(), 1 / r.high, 1e-12);
  EXPECT_NEAR(r.speedup_high(), 1 / r.low, 1e-12);
  EXPECT_EQ(paired_ratio({}).pairs, 0u);
}

TEST(Paired, DecisionsFollowTheIntervalAndTheMinimumEffect) {
  const auto ratio = [](double low, double median, double high) {
    PairedRatio r;
    r.low = low, r.median = median, r.high = high, r.pairs = 24;
    return r;
  };
  EXPECT_EQ(judge(ratio(0.77, 0.79, 0.80), 0.02), PairedVerdict::kFaster);
  EXPECT_EQ(judge(ratio(1.03, 1.05, 1.06), 0.02), PairedVerdict::kSlower);
  EXPECT_EQ(judge(ratio(0.99, 1.00, 1.01), 0.02), PairedVerdict::kSame);
  // A 2.5 % gain whose interval reaches into "the same": it cannot tell.
  EXPECT_EQ(judge(ratio(0.95, 0.975, 0.99), 0.02), PairedVerdict::kCannotTell);
  EXPECT_EQ(judge(PairedRatio{}, 0.02), PairedVerdict::kCannotTell) << "no pairs";
  EXPECT_EQ(paired_verdict_name(PairedVerdict::kCannotTell), "cannot tell");
}

// The point of pairing: a clock that wanders by 20 % between passes moves both sides alike, so
// their ratio stays put while each side's own times spread.
TEST(Paired, AWanderingClockMovesBothSidesAndLeavesTheRatio) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> clock(1300, 1900);
  std::vector<double> ratios, alone;
  for (int pass = 0; pass < 24; ++pass) {
    const double scale = 1980 / clock(rng);
    const std::vector<double> forward = {1000 * scale, 800 * scale}, backward = {1001 * scale, 799 * scale};
    ratios.push_back(*pass_ratios(forward, backward)[1]);
    alone.push_back(800 * scale);
  }
  const PairedRatio r = paired_ratio(ratios);
  EXPECT_NEAR(r.median, 0.7995, 1e-3);
  EXPECT_LT(r.relative_half_width(), 0.001);
  const PairedRatio spread = paired_ratio(alone);  // the same passes read one side at a time
  EXPECT_GT(spread.relative_half_width(), 0.05);
}

TEST(Paired, PassRatiosAverageTheTwoSamplesOfEachCall) {
  const auto r = pass_ratios({100, 50, 0}, {102, 52, 3});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_DOUBLE_EQ(*r[0], 1.0);
  EXPECT_DOUBLE_EQ(*r[1], 51.0 / 101.0);
  EXPECT_NEAR(*r[2], 1.5 / 101.0, 1e-12);
  EXPECT_FALSE(pass_ratios({0, 5}, {0, 5})[1]) << "no reference time, no ratio";
  EXPECT_TRUE(pass_ratios({1}, {1, 2}).front() == std::nullopt) << "mismatched passes";
}

TEST(Paired, StopsWhenEveryIntervalIsNarrowOrAtTheCaps) {
  PairedRule rule;
  std::vector<std::vector<double>> ratios = {around(1, 0, 8, 1), around(0.8, 0.001, 8, 2), around(1.2, 0.002, 8, 3)};
  EXPECT_TRUE(paired_done(ratios, rule, 0.5));
  ratios[2] = around(1.2, 0.05, 8, 4);  // one wide interval keeps it going
  EXPECT_FALSE(paired_done(ratios, rule, 0.5));
  EXPECT_TRUE(paired_done(ratios, rule, rule.max_seconds)) << "time is up";
  std::vector<std::vector<double>> two = {around(1, 0, 2, 5), around(0.8, 0.1, 2, 6)};
  EXPECT_FALSE(paired_done(two, rule, rule.max_seconds)) << "two pairs make no interval";
  std::vector<std::vector<double>> few = {around(1, 0, 5, 5), around(0.8, 0.0001, 5, 6)};
  EXPECT_FALSE(paired_done(few, rule, 0.1)) << "below min_pairs";
  std::vector<std::vector<double>> many = {around(1, 0, 64, 5), around(0.8, 0.2, 64, 6)};
  EXPECT_TRUE(paired_done(many, rule, 0.1)) << "max_pairs";
}

TEST(Paired, PassOrderIsAPermutationFixedByItsSeed) {
  const std::vector<size_t> a = pass_order(9, 42), b = pass_order(9, 42), c = pass_order(9, 43);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  std::vector<size_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) EXPECT_EQ(sorted[i], i);
}

}  // namespace
}  // namespace shapescope
