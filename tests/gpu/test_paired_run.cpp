// Paired passes against GPU work of known length (spin kernels on %globaltimer): the ratios, their
// intervals and the stopping rule; and a real GEMM against itself.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "common/check.hpp"
#include "gpu_test_util.hpp"
#include "timing/device_kernels.hpp"
#include "timing/paired_run.hpp"

namespace shapescope {
namespace {

using Spin = testing::SpinCall;
using Flush = testing::FlushBuffer;

MeasureOptions options_with(const Flush& flush) {
  MeasureOptions o;
  o.flush_buffer = flush.ptr;
  o.flush_bytes = flush.bytes;
  o.warmup_ms = 0;
  return o;
}

TEST(PairedRun, RatiosOfKnownDurationsWithNarrowIntervals) {
  SKIP_WITHOUT_GPU();
  Flush flush;
  Spin reference(200000), same(200000), half(100000), double_(400000);
  const PairedOutcome out =
      run_paired({&reference, &same, &half, &double_}, options_with(flush), PairedRule{}, nullptr, nullptr);
  ASSERT_EQ(out.ratios.size(), 4u);
  EXPECT_GE(out.ratios[1].pairs, size_t(PairedRule{}.min_pairs));
  EXPECT_EQ(out.warmup_passes, 1u) << "the first pass is not counted";
  // Each sample is the spin plus a few microseconds of the event pair and the globaltimer's tick:
  // the ratios are the spins' with that overhead on both sides.
  const double overhead = out.median_us[0] - 200;
  EXPECT_GE(overhead, 0);
  EXPECT_LT(overhead, 10);
  EXPECT_NEAR(out.ratios[1].median, 1.0, 0.005);
  EXPECT_NEAR(out.ratios[2].median, (100 + overhead) / (200 + overhead), 0.005);
  EXPECT_NEAR(out.ratios[3].median, (400 + overhead) / (200 + overhead), 0.01);
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_LE(out.ratios[i].low, out.ratios[i].median);
    EXPECT_GE(out.ratios[i].high, out.ratios[i].median);
    EXPECT_LE(out.ratios[i].relative_half_width(), PairedRule{}.target) << i;
  }
  EXPECT_EQ(judge(out.ratios[1]), PairedVerdict::kSame);
  EXPECT_EQ(judge(out.ratios[2]), PairedVerdict::kFaster);
  EXPECT_EQ(judge(out.ratios[3]), PairedVerdict::kSlower);
}

TEST(PairedRun, StopsAtItsTimeLimit) {
  SKIP_WITHOUT_GPU();
  Flush flush;
  Spin a(2000000), b(2000000);  // 2 ms each: a pass is about 8 ms
  PairedRule rule;
  rule.target = 1e-9;  // never narrow enough
  rule.max_seconds = 0.3;
  const PairedOutcome out = run_paired({&a, &b}, options_with(flush), rule, nullptr, nullptr);
  EXPECT_GE(out.seconds, 0.3);
  EXPECT_LT(out.seconds, 0.6);
  EXPECT_LT(out.ratios[1].pairs, size_t(rule.max_pairs));
}

}  // namespace
}  // namespace shapescope
