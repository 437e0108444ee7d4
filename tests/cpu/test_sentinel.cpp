// The sentinel's verdicts on sequences of chunk medians (timing/sentinel.hpp).
#include "timing/sentinel.hpp"

#include <gtest/gtest.h>

namespace shapescope {
namespace {

using Action = SentinelReference::Action;

TEST(Sentinel, TheFirstChunkSetsTheReferenceAndSteadyOnesPass) {
  SentinelReference ref(0.05, 2);
  const auto first = ref.judge(25.0, 0.01, 0, std::nullopt);
  EXPECT_EQ(first.action, Action::kAccept);
  EXPECT_FALSE(first.reference);
  const auto second = ref.judge(25.5, 0.01, 0, std::nullopt);
  EXPECT_EQ(second.action, Action::kAccept);
  ASSERT_TRUE(second.reference);
  EXPECT_DOUBLE_EQ(*second.reference, 25.0);
  EXPECT_NEAR(second.drift, 0.02, 1e-12);
  EXPECT_DOUBLE_EQ(second.limit, 0.05);
}

TEST(Sentinel, ATransientDriftCostsOneReRun) {
  SentinelReference ref(0.05, 2);
  ref.judge(25.0, 0.01, 0, std::nullopt);
  const auto drifted = ref.judge(40.0, 0.01, 0, std::nullopt);  // another process, for a while
  EXPECT_EQ(drifted.action, Action::kMeasureAgain);
  EXPECT_NEAR(drifted.drift, 0.6, 1e-12);
  const auto again = ref.judge(25.2, 0.01, 1, 40.0);
  EXPECT_EQ(again.action, Action::kAccept);
  EXPECT_FALSE(again.rebased);
}

TEST(Sentinel, APersistentShiftMovesTheReferenceAfterOneReRun) {
  SentinelReference ref(0.05, 2);
  ref.judge(25.0, 0.01, 0, std::nullopt);
  ref.judge(25.1, 0.01, 0, std::nullopt);
  EXPECT_EQ(ref.judge(28.0, 0.01, 0, std::nullopt).action, Action::kMeasureAgain);  // clocks dropped 11 %
  const auto held = ref.judge(28.1, 0.01, 1, 28.0);
  EXPECT_EQ(held.action, Action::kKeepDrifted);
  EXPECT_TRUE(held.rebased);
  // The next chunks at the new level pass without a re-run.
  const auto next = ref.judge(28.05, 0.01, 0, std::nullopt);
  EXPECT_EQ(next.action, Action::kAccept);
  ASSERT_TRUE(next.reference);
  EXPECT_DOUBLE_EQ(*next.reference, 28.1);
}

TEST(Sentinel, ReRunsThatAgreeWithNothingEndKeptDrifted) {
  SentinelReference ref(0.05, 2);
  ref.judge(25.0, 0.01, 0, std::nullopt);
  EXPECT_EQ(ref.judge(40.0, 0.01, 0, std::nullopt).action, Action::kMeasureAgain);
  EXPECT_EQ(ref.judge(32.0, 0.01, 1, 40.0).action, Action::kMeasureAgain);
  const auto last = ref.judge(36.0, 0.01, 2, 32.0);
  EXPECT_EQ(last.action, Action::kKeepDrifted);
  EXPECT_FALSE(last.rebased);
  EXPECT_EQ(ref.judge(25.3, 0.01, 0, std::nullopt).action, Action::kAccept) << "the reference stayed";
}

TEST(Sentinel, ANoisySentinelWidensTheLimit) {
  SentinelReference ref(0.05, 2);
  ref.judge(25.0, 0.04, 0, std::nullopt);  // relative IQR 4 %: limit 12 %
  const auto v = ref.judge(27.5, 0.04, 0, std::nullopt);
  EXPECT_NEAR(v.limit, 0.12, 1e-12);
  EXPECT_EQ(v.action, Action::kAccept);
}

TEST(Sentinel, NoReRunsMeansKeptAtOnce) {
  SentinelReference ref(0.05, 0);
  ref.judge(25.0, 0.01, 0, std::nullopt);
  EXPECT_EQ(ref.judge(40.0, 0.01, 0, std::nullopt).action, Action::kKeepDrifted);
}

}  // namespace
}  // namespace shapescope
