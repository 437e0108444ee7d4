// A replayed step (timing/replay.hpp) on work of known length (spin kernels on %globaltimer) and its
// stand-ins: each call's time, the terms' sums, a changed step's ratio; and a real trace-like step
// through measure()'s replay mode.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "common/check.hpp"
#include "gpu_test_util.hpp"
#include "store/store.hpp"
#include "model/workload.hpp"
#include "timing/replay.hpp"
#include "timing/standin_kernels.hpp"
#include "views/step_replay.hpp"

namespace shapescope {
namespace {

using Spin = testing::SpinCall;
using Flush = testing::FlushBuffer;
using R = ReplayItem::Kind;

ReplayResources resources_of(const Flush& flush) {
  ReplayResources r;
  r.buffer = flush.ptr;
  r.buffer_bytes = flush.bytes;
  r.sms = query_device(0).sm_count;
  return r;
}

ReplayItem call(size_t c, size_t term) { return {R::kCall, c, 0, 0, term}; }
ReplayItem standin(R kind, double us) { return {kind, 0, 0, us, 0}; }

TEST(Replay, TimesEachCallBetweenItsStandIns) {
  SKIP_WITHOUT_GPU();
  Flush flush;
  Spin a(100000), b(300000), c(50000);  // 100, 300 and 50 us
  ReplayRule rule;
  rule.terms = 2;
  rule.warmup_seconds = 0.2;
  rule.steps = {{call(0, 0), standin(R::kMemoryWork, 200), call(1, 1), standin(R::kComputeWork, 200),
                 standin(R::kIdle, 100), call(0, 0)},
                // The changed step: the second call of term 0 replaced by a shorter one.
                {call(0, 0), standin(R::kMemoryWork, 200), call(1, 1), standin(R::kComputeWork, 200),
                 standin(R::kIdle, 100), call(2, 0)}};
  const ReplayOutcome out = run_replay({&a, &b, &c}, rule, resources_of(flush), nullptr, nullptr);
  ASSERT_FALSE(out.interrupted);
  EXPECT_GE(out.replays, size_t(rule.min_replays));
  EXPECT_GE(out.warmup_replays, 1u);
  // Each call is its spin plus a few microseconds of events and timer ticks; the stand-ins are not timed.
  EXPECT_NEAR(out.term_us[0][0], 200, 12);
  EXPECT_NEAR(out.term_us[0][1], 300, 8);
  EXPECT_NEAR(out.step_us[0], 500, 16);
  EXPECT_NEAR(out.term_us[1][0], 150, 12);
  EXPECT_NEAR(out.ratios[1].median, (150.0 + 300) / 500, 0.02);
  EXPECT_EQ(judge(out.ratios[1]), PairedVerdict::kFaster);
  EXPECT_GE(out.ratios[1].pairs, size_t(rule.min_replays));
}

// The stand-ins last as long as they are asked to: a graph of one, timed with events around it.
TEST(Replay, StandInsLastTheirLength) {
  SKIP_WITHOUT_GPU();
  Flush flush;
  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreate(&stream));
  unsigned* sink = nullptr;
  CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&sink), sizeof(unsigned)));
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  const int sms = query_device(0).sm_count;
  for (int kind = 0; kind < 3; ++kind) {
    float ms = 0;
    for (int rep = 0; rep < 3; ++rep) {  // the first launches load the kernels
      CHECK_CUDA(cudaEventRecord(start, stream));
      if (kind == 0) launch_memory_work(flush.ptr, flush.bytes, 500000, 4 * sms, sink, stream);
      if (kind == 1) launch_compute_work(500000, 4 * sms, sink, stream);
      if (kind == 2) launch_idle(500000, stream);
      CHECK_CUDA(cudaEventRecord(stop, stream));
      CHECK_CUDA(cudaEventSynchronize(stop));
      CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    }
    EXPECT_GE(ms * 1000, 499) << "stand-in " << kind;
    EXPECT_LT(ms * 1000, 540) << "stand-in " << kind;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(sink);
  cudaStreamDestroy(stream);
}

// A step of real GEMMs through measure()'s replay mode: each GEMM's time per call, and the step with
// one GEMM made twice as large replayed against it.
TEST(Replay, AStepOfGemmsThroughMeasure) {
  SKIP_WITHOUT_GPU();
  const DeviceContext device = query_device(0);
  testing::TempStore db("replay");
  Store store(db.path);
  StepTimeline t;
  using S = TimelineSegment::Kind;
  t.segments = {{S::kGemm, 0, 50, 0}, {S::kOtherKernels, 0, 300, 100}, {S::kGemm, 1, 50, 0},
                {S::kIdle, 0, 100, 0}, {S::kGemm, 0, 50, 0}};
  const Problem small = packed_problem(2048, 2048, 2048, Layout::kNN, DType::kBf16);
  const Problem large = packed_problem(4096, 2048, 2048, Layout::kNN, DType::kBf16);
  const Problem other = packed_problem(1024, 4096, 1024, Layout::kNT, DType::kBf16);
  std::map<size_t, ReplayCall> call_of = {{0, {small, BackendSpec(BackendKind::kCublas), 0}},
                                           {1, {other, BackendSpec(BackendKind::kCublas), 0}}};
  StepChange doubled;
  doubled.per_call[0] = {{large, BackendSpec(BackendKind::kCublas), 0}};
  doubled.precise = true;  // its move (the large GEMM's extra time) wanted within +-5 %: within 10 s
  const StepReplay r = replay_step(t, call_of, {doubled}, 2, device, store, 10, nullptr);
  ASSERT_FALSE(r.interrupted);
  ASSERT_TRUE(r.per_call_us[0] && r.per_call_us[1]);
  EXPECT_GT(*r.per_call_us[0], 5);
  EXPECT_GT(*r.per_call_us[1], 2);
  EXPECT_NEAR(r.step_us, 2 * *r.per_call_us[0] + *r.per_call_us[1], 0.05 * r.step_us);
  EXPECT_EQ(r.facts.calls, 3u);
  EXPECT_NEAR(r.facts.memory_us, 200, 1e-9);
  EXPECT_NEAR(r.facts.compute_us, 100, 1e-9);
  EXPECT_NEAR(r.facts.idle_us, 100, 1e-9);
  ASSERT_TRUE(r.change_ratio[0]) << r.why_not[0];
  EXPECT_GT(r.change_ratio[0]->median, 1.3);
  EXPECT_LT(r.change_ratio[0]->median, 2.0);
  const PairedRatio& moved = *r.change_ratio[0];
  EXPECT_LE((moved.high - moved.low) / 2, 0.05 * (moved.median - 1) + 1e-12) << "the move is not known within 5 %";
}

}  // namespace
}  // namespace shapescope
