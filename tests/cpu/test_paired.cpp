// Paired comparisons on recorded ratios: the interval, the decisions, the stopping rule, the ratios
// of one pass and its order.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "model/pad.hpp"
#include "timing/paired.hpp"
#include "timing/replay_plan.hpp"
#include "timing/settle.hpp"
#include "views/paired_steps.hpp"

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
  PairedRule narrow = rule;
  narrow.stop_on_verdict = false;  // explain: the width is reported, so a decided wide one goes on
  EXPECT_FALSE(paired_done(decided, narrow, 0.5));
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


TEST(Paired, PassMeansAverageEachCallsSamples) {
  const std::vector<size_t> sequence = {0, 1, 0, 2, 0, 2, 0, 1, 0};
  const std::vector<double> us = {100, 50, 102, 0, 104, 30, 106, 60, 108};
  const auto m = pass_means(sequence, us, 3);
  EXPECT_DOUBLE_EQ(*m[0], (100 + 102 + 104 + 106 + 108) / 5.0);
  EXPECT_DOUBLE_EQ(*m[1], 55.0);
  EXPECT_FALSE(m[2]) << "a zero sample gives the call no time";
  EXPECT_FALSE(pass_means(sequence, {1, 2}, 3)[0]) << "mismatched samples";
}

TEST(Paired, ASumRatioWeighsEachCallByItsCountAndAddsTheConstants) {
  const std::vector<std::optional<double>> means = {10.0, 20.0, 40.0, std::nullopt};
  SumRatio s;
  s.numerator = {{1, 2}, {2, 1}};   // 2 x 20 + 40 = 80
  s.denominator = {{0, 3}, {2, 1}};  // 3 x 10 + 40 = 70
  EXPECT_DOUBLE_EQ(*sum_ratio(s, means), 80.0 / 70.0);
  s.numerator_us = 20;
  s.denominator_us = 30;
  EXPECT_DOUBLE_EQ(*sum_ratio(s, means), 100.0 / 100.0);
  s.numerator.push_back({3, 1});
  EXPECT_FALSE(sum_ratio(s, means)) << "a call without a time";
  EXPECT_FALSE(sum_ratio(SumRatio{}, means)) << "an empty sum (a call that could not run)";
}

// A step of three GEMMs against a candidate that makes one of them 10 % faster, at a clock that
// wanders between passes and drifts within each: the ratio of the sums stays put, where the step
// times of different passes (a stored "before", a later "after") disagree by far more.
TEST(Paired, AStepRatioHoldsWhereTheClockWanders) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> clock(1300, 1900);
  const std::vector<double> work = {5, 900, 300, 270};  // call 0 the reference; 3 is 2's padded size
  SumRatio s;
  s.denominator = {{1, 12}, {2, 12}};
  s.numerator = {{1, 12}, {3, 12}};
  std::vector<double> ratios, before, after;
  for (int pass = 0; pass < 16; ++pass) {
    const std::vector<size_t> sequence = pass_sequence(pass_order(4, unsigned(pass)));
    const double start = clock(rng), end = clock(rng);
    std::vector<double> us;
    for (size_t t = 0; t < sequence.size(); ++t) {
      const double mhz = start + (end - start) * double(t) / double(sequence.size() - 1);
      us.push_back(work[sequence[t]] * 1980 / mhz);
    }
    const auto means = pass_means(sequence, us, 4);
    ratios.push_back(*sum_ratio(s, means));
    before.push_back(12 * (*means[1] + *means[2]));
    after.push_back(12 * (*means[1] + *means[3]));
  }
  const PairedRatio r = paired_ratio(ratios);
  const double expected = (900.0 + 270.0) / (900.0 + 300.0);
  // A linear drift of the clock cancels to first order: each call's two samples straddle the middle of
  // the pass (time goes as 1 / clock, so a trace of curvature is left).
  EXPECT_NEAR(r.median, expected, 1e-3 * expected);
  EXPECT_LT(r.relative_half_width(), 0.002);
  // Unpaired: a "before" of one pass beside an "after" of another gives savings all over the place.
  double lowest = 1e9, highest = -1e9;
  for (size_t i = 0; i + 1 < before.size(); ++i) {
    lowest = std::min(lowest, 1 - after[i + 1] / before[i]);
    highest = std::max(highest, 1 - after[i + 1] / before[i]);
  }
  EXPECT_GT(highest - lowest, 0.2);
}

TEST(Paired, SumsStopOnlyWhenEveryIntervalIsNarrow) {
  PairedRule rule;
  rule.target = 0.005;
  std::vector<std::vector<double>> sums = {around(0.97, 0.001, 8, 1), around(0.90, 0.001, 8, 2)};
  EXPECT_TRUE(sums_done(sums, rule, 0.5));
  sums[1] = around(0.80, 0.05, 8, 3);  // far from "the same", but its size is not known to +-0.5 %
  EXPECT_FALSE(sums_done(sums, rule, 0.5)) << "a saving's size matters: no early stop on a verdict";
  EXPECT_TRUE(sums_done(sums, rule, rule.max_seconds)) << "time is up";
  std::vector<std::vector<double>> none = {{}};
  EXPECT_FALSE(sums_done(none, rule, rule.max_seconds)) << "no pairs yet";
}

TEST(Paired, ChangedTermsAreTheGemmsOnOneSideOnly) {
  Problem a, b, c;
  a.m = 1, b.m = 2, c.m = 3;
  const StepCalls before = {{a, BackendKind::kCublas, 12}, {b, BackendKind::kCublas, 12}};
  EXPECT_TRUE(changed_terms(before, before).empty());
  const std::vector<StepTerm> changed = changed_terms(before, {{a, BackendKind::kCublas, 12}, {c, BackendKind::kCublas, 12}});
  ASSERT_EQ(changed.size(), 2u);
  EXPECT_EQ(changed[0].problem.m, 2);
  EXPECT_EQ(changed[1].problem.m, 3);
  EXPECT_EQ(changed_terms(before, {{a, BackendKind::kCublas, 13}, {b, BackendKind::kCublas, 12}}).size(), 2u) << "a count changed";
  EXPECT_EQ(changed_terms(before, {{a, BackendKind::kCublasLt, 12}, {b, BackendKind::kCublas, 12}}).size(), 2u) << "another backend";
}

// Pad's decisions from a paired saving's interval: pad (the whole interval above 2 %), cannot tell
// (it straddles 2 %), leave it (below); of several that pad, the cheapest whose interval reaches
// the largest one's.
TEST(Paired, PadDecidesFromTheSavingsInterval) {
  auto paired = [](double low, double median, double high, double extra_flops) {
    Evaluation e;
    e.extra_flops = extra_flops;
    PairedRatio r;
    r.low = low, r.median = median, r.high = high, r.pairs = 20;
    add_paired_saving(e, r, 1000);
    return e;
  };
  const Evaluation clear = paired(0.94, 0.95, 0.96, 2);
  EXPECT_TRUE(clear.significant);
  EXPECT_FALSE(clear.cannot_tell);
  EXPECT_NEAR(*clear.saving_us, 50, 1e-9);
  EXPECT_NEAR(clear.saving_low_us, 40, 1e-9);
  EXPECT_NEAR(clear.saving_high_us, 60, 1e-9);
  const Evaluation straddles = paired(0.96, 0.975, 0.99, 1);
  EXPECT_FALSE(straddles.significant);
  EXPECT_TRUE(straddles.cannot_tell);
  const Evaluation none = paired(0.99, 1.0, 1.01, 1);
  EXPECT_FALSE(none.significant || none.cannot_tell);
  EXPECT_FALSE(recommend({straddles, none})) << "nothing whose whole interval saves 2 %";
  // 6 % (5-7 %) for 3 extra FLOPs and 5 % (4-6 %) for 2: their intervals overlap, take the cheaper.
  const Evaluation more = paired(0.93, 0.94, 0.95, 3);
  EXPECT_EQ(recommend({more, clear, none}), 1u);
  const Evaluation much_more = paired(0.88, 0.89, 0.90, 3);
  EXPECT_EQ(recommend({much_more, clear, none}), 0u) << "intervals apart: the larger saving";
  // The tokens' copy counts against the saving and its interval.
  Evaluation copied;
  copied.copy_us = 30;
  PairedRatio r;
  r.low = 0.94, r.median = 0.95, r.high = 0.96, r.pairs = 20;
  add_paired_saving(copied, r, 1000);
  EXPECT_NEAR(*copied.saving_us, 20, 1e-9);
  EXPECT_FALSE(copied.significant);
  EXPECT_TRUE(copied.cannot_tell);
}


// The warm-up ends when the clock's level stops moving, not when it stops wandering: at the power
// limit it keeps moving by +-3 % around a level, while it falls from boost it moves by much more.
TEST(Settle, TheLevelOfTheClockDecidesNotItsWandering) {
  const SettleRule rule;
  std::vector<double> falling, wandering, flat;
  for (int i = 0; i < 30; ++i) {
    falling.push_back(1980 - 15.0 * i);                        // 20 ms apart: -750 MHz/s
    wandering.push_back(1500 + ((i * 7) % 5 - 2) * 22.0);       // +-3 % around 1500 MHz
    flat.push_back(1980);
  }
  EXPECT_FALSE(clock_settled(falling, rule));
  EXPECT_TRUE(clock_settled(wandering, rule));
  EXPECT_TRUE(clock_settled(flat, rule));
  EXPECT_FALSE(clock_settled({1980, 1980, 1980}, rule)) << "too few readings";
  std::vector<double> unknown(30, 0);
  EXPECT_FALSE(clock_settled(unknown, rule)) << "no clock known";
  const SettleFacts f = look_at_clock(wandering, std::vector<double>(30, 690), 1.2, rule);
  EXPECT_TRUE(f.watched && f.settled);
  EXPECT_NEAR(f.clock_mhz, 1500, 50);
  EXPECT_DOUBLE_EQ(*f.power_w, 690);
  EXPECT_TRUE(warm_up_ends(f, rule));
  SettleFacts late = look_at_clock(falling, {}, rule.max_s, rule);
  EXPECT_FALSE(late.settled);
  EXPECT_FALSE(late.power_w);
  EXPECT_TRUE(warm_up_ends(late, rule)) << "watched for the longest";
}

// A replay's warm-up watches the board power too: NVML's reading is a second's average, still
// climbing from idle after the clock has settled (run 39 on an H200: 200 -> 690 W over 2 s while the
// clock sat at its level). The clock settled and the power climbing is not settled; both, it is.
TEST(Settle, AWatchedPowerStillClimbingKeepsTheWarmUpGoing) {
  SettleRule rule;
  rule.power_window_s = kReplayPowerWindowS;
  std::vector<double> clock(20, 1650), climbing, level;
  for (int i = 0; i < 100; ++i) {                    // 2 s of readings, 20 ms apart
    climbing.push_back(450 + 240.0 * i / 100);       // 450 -> 690 W
    level.push_back(690 + ((i * 7) % 5 - 2) * 5.0);  // +-10 W around 690 W
  }
  EXPECT_FALSE(power_settled(climbing, rule));
  EXPECT_TRUE(power_settled(level, rule));
  const SettleFacts still = look_at_clock(clock, climbing, 2.0, rule);
  EXPECT_FALSE(still.settled) << "the clock alone has settled";
  EXPECT_FALSE(warm_up_ends(still, rule));
  const SettleFacts both = look_at_clock(clock, level, 2.5, rule);
  EXPECT_TRUE(both.settled);
  EXPECT_TRUE(warm_up_ends(both, rule));
  EXPECT_TRUE(warm_up_ends(look_at_clock(clock, climbing, rule.max_s, rule), rule)) << "or its longest";
  EXPECT_DOUBLE_EQ(settle_window_s(rule), kReplayPowerWindowS);
  // Unwatched (the sweep's sustained warm-up), the power decides nothing.
  EXPECT_TRUE(look_at_clock(clock, climbing, 2.0, SettleRule{}).settled);
}

}  // namespace
}  // namespace shapescope
