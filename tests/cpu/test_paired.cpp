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

// The point of pairing: a clock that wanders by 20 % between passes, and drifts within each, moves
// both sides alike, so their ratio stays put while each side's own times spread.
TEST(Paired, AWanderingClockMovesBothSidesAndLeavesTheRatio) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> clock(1300, 1900);
  std::vector<double> ratios, alone;
  for (int pass = 0; pass < 24; ++pass) {
    const std::vector<size_t> sequence = pass_sequence(pass_order(3, unsigned(pass)));
    const double start = clock(rng), end = clock(rng);  // the clock moves linearly over the pass
    std::vector<double> us;
    for (size_t s = 0; s < sequence.size(); ++s) {
      const double mhz = start + (end - start) * double(s) / double(sequence.size() - 1);
      const double work = sequence[s] == 0 ? 1000 : sequence[s] == 1 ? 800 : 1200;
      us.push_back(work * 1980 / mhz);
      if (sequence[s] == 1) alone.push_back(us.back());
    }
    ratios.push_back(*pass_ratios(sequence, us, 3)[1]);
  }
  const PairedRatio r = paired_ratio(ratios);
  EXPECT_NEAR(r.median, 0.8, 0.01);
  EXPECT_LT(r.relative_half_width(), 0.01);
  const PairedRatio spread = paired_ratio(alone);  // the same passes read one side at a time
  EXPECT_GT(spread.relative_half_width(), 0.02);
  EXPECT_GT(spread.relative_half_width(), 10 * r.relative_half_width());
}

TEST(Paired, ThePassPutsTheReferenceBetweenAnyTwoOthers) {
  EXPECT_EQ(pass_sequence({2, 1}), (std::vector<size_t>{0, 2, 0, 1, 0, 1, 0, 2, 0}));
  EXPECT_EQ(pass_sequence({}), (std::vector<size_t>{0}));
}

TEST(Paired, PassRatiosDivideEachSampleByItsNeighbouringReferences) {
  const std::vector<size_t> sequence = {0, 1, 0, 2, 0, 2, 0, 1, 0};
  const std::vector<double> us = {100, 50, 102, 0, 104, 30, 106, 60, 108};
  const auto r = pass_ratios(sequence, us, 3);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_DOUBLE_EQ(*r[0], 1.0);
  EXPECT_DOUBLE_EQ(*r[1], (50.0 / 101.0 + 60.0 / 107.0) / 2);
  EXPECT_FALSE(r[2]) << "a zero time gives no ratio";
  EXPECT_FALSE(pass_ratios(sequence, {1, 2}, 3)[1]) << "mismatched samples";
}

TEST(Paired, StopsWhenEveryIntervalIsNarrowOrAtTheCaps) {
  PairedRule rule;
  std::vector<std::vector<double>> ratios = {around(1, 0, 8, 1), around(0.8, 0.001, 8, 2), around(1.2, 0.002, 8, 3)};
  EXPECT_TRUE(paired_done(ratios, rule, 0.5));
  ratios[2] = around(1.0, 0.05, 8, 4);  // one wide interval across the minimum effect keeps it going
  EXPECT_FALSE(paired_done(ratios, rule, 0.5));
  std::vector<std::vector<double>> decided = ratios;
  decided[2] = around(1.3, 0.05, 8, 4);  // wide, but slower whatever more pairs say
  EXPECT_TRUE(paired_done(decided, rule, 0.5));
  EXPECT_TRUE(paired_done(ratios, rule, rule.max_seconds)) << "time is up";
  std::vector<std::vector<double>> two = {around(1, 0, 2, 5), around(0.8, 0.1, 2, 6)};
  EXPECT_FALSE(paired_done(two, rule, kHardLimit * rule.max_seconds)) << "two pairs make no interval";
  std::vector<std::vector<double>> three = {around(1, 0, 3, 5), around(1.0, 0.1, 3, 6)};
  EXPECT_FALSE(paired_done(three, rule, rule.max_seconds)) << "below min_pairs at max_seconds";
  EXPECT_TRUE(paired_done(three, rule, kHardLimit * rule.max_seconds)) << "the hard limit";
  std::vector<std::vector<double>> few = {around(1, 0, 5, 5), around(0.8, 0.0001, 5, 6)};
  EXPECT_FALSE(paired_done(few, rule, 0.1)) << "below min_pairs";
  std::vector<std::vector<double>> many = {around(1, 0, 64, 5), around(0.8, 0.2, 64, 6)};
  EXPECT_TRUE(paired_done(many, rule, 0.1)) << "max_pairs";
}

TEST(Paired, PassOrderIsAPermutationOfTheOthersFixedByItsSeed) {
  const std::vector<size_t> a = pass_order(9, 42), b = pass_order(9, 42), c = pass_order(9, 43);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  std::vector<size_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  ASSERT_EQ(sorted.size(), 8u);
  for (size_t i = 0; i < sorted.size(); ++i) EXPECT_EQ(sorted[i], i + 1);
}

}  // namespace
}  // namespace shapescope
