#include <gtest/gtest.h>

#include <vector>

#include "timing/stats.hpp"

namespace shapescope {
namespace {

TEST(Summarize, OddCountQuartiles) {
  SampleStats stats = summarize({1, 2, 3, 4, 5});
  EXPECT_EQ(stats.n, 5);
  EXPECT_DOUBLE_EQ(stats.min, 1);
  EXPECT_DOUBLE_EQ(stats.max, 5);
  EXPECT_DOUBLE_EQ(stats.median, 3);
  EXPECT_DOUBLE_EQ(stats.q1, 2);
  EXPECT_DOUBLE_EQ(stats.q3, 4);
  EXPECT_DOUBLE_EQ(stats.noise, 2.0 / 3.0);
}

TEST(Summarize, EvenCountInterpolates) {
  // numpy.quantile([1, 2, 3, 4], [0.25, 0.5, 0.75]) == [1.75, 2.5, 3.25]
  SampleStats stats = summarize({1, 2, 3, 4});
  EXPECT_DOUBLE_EQ(stats.median, 2.5);
  EXPECT_DOUBLE_EQ(stats.q1, 1.75);
  EXPECT_DOUBLE_EQ(stats.q3, 3.25);
  EXPECT_DOUBLE_EQ(stats.noise, 1.5 / 2.5);
}

TEST(Summarize, UnsortedInput) {
  SampleStats stats = summarize({5, 1, 4, 2, 3});
  EXPECT_DOUBLE_EQ(stats.min, 1);
  EXPECT_DOUBLE_EQ(stats.max, 5);
  EXPECT_DOUBLE_EQ(stats.median, 3);
  EXPECT_DOUBLE_EQ(stats.q1, 2);
  EXPECT_DOUBLE_EQ(stats.q3, 4);
}

TEST(Summarize, NonUniformSamples) {
  // numpy.quantile([10, 20, 40, 80, 160, 320], [0.25, 0.5, 0.75]) == [25, 60, 140]
  SampleStats stats = summarize({320, 10, 80, 20, 160, 40});
  EXPECT_DOUBLE_EQ(stats.q1, 25);
  EXPECT_DOUBLE_EQ(stats.median, 60);
  EXPECT_DOUBLE_EQ(stats.q3, 140);
  EXPECT_DOUBLE_EQ(stats.noise, 115.0 / 60.0);
}

TEST(Summarize, TwoSamples) {
  SampleStats stats = summarize({2, 4});
  EXPECT_EQ(stats.n, 2);
  EXPECT_DOUBLE_EQ(stats.median, 3);
  EXPECT_DOUBLE_EQ(stats.q1, 2.5);
  EXPECT_DOUBLE_EQ(stats.q3, 3.5);
  EXPECT_DOUBLE_EQ(stats.noise, 1.0 / 3.0);
}

TEST(Summarize, SingleSample) {
  SampleStats stats = summarize({7.5});
  EXPECT_EQ(stats.n, 1);
  EXPECT_DOUBLE_EQ(stats.min, 7.5);
  EXPECT_DOUBLE_EQ(stats.max, 7.5);
  EXPECT_DOUBLE_EQ(stats.median, 7.5);
  EXPECT_DOUBLE_EQ(stats.q1, 7.5);
  EXPECT_DOUBLE_EQ(stats.q3, 7.5);
  EXPECT_DOUBLE_EQ(stats.noise, 0);
}

TEST(Summarize, Empty) {
  SampleStats stats = summarize({});
  EXPECT_EQ(stats.n, 0);
  EXPECT_DOUBLE_EQ(stats.median, 0);
  EXPECT_DOUBLE_EQ(stats.min, 0);
  EXPECT_DOUBLE_EQ(stats.max, 0);
  EXPECT_DOUBLE_EQ(stats.q1, 0);
  EXPECT_DOUBLE_EQ(stats.q3, 0);
  EXPECT_DOUBLE_EQ(stats.noise, 0);
}

TEST(Summarize, ZeroMedianHasNoNoise) {
  SampleStats stats = summarize({0, 0, 0, 1});
  EXPECT_DOUBLE_EQ(stats.median, 0);
  EXPECT_DOUBLE_EQ(stats.q3, 0.25);
  EXPECT_DOUBLE_EQ(stats.noise, 0);
}

TEST(Summarize, IdenticalSamplesHaveNoNoise) {
  SampleStats stats = summarize({3, 3, 3, 3});
  EXPECT_DOUBLE_EQ(stats.median, 3);
  EXPECT_DOUBLE_EQ(stats.noise, 0);
}

// The two medians kept apart on purpose: median() interpolates (the clocks), middle_value() takes
// the upper middle value (the flush time, plotted peaks, pad's clock summary).
TEST(Median, InterpolatesForAnEvenCount) {
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({5, 1, 3}), 3);
  EXPECT_DOUBLE_EQ(median({}), 0);
}

TEST(Median, MiddleValueTakesTheUpperMiddle) {
  EXPECT_DOUBLE_EQ(middle_value({4, 1, 3, 2}), 3);
  EXPECT_DOUBLE_EQ(middle_value({5, 1, 3}), 3);
  EXPECT_DOUBLE_EQ(middle_value({}), 0);
}

}  // namespace
}  // namespace shapescope
