// The engine against GPU work of known length: spin kernels that run for a set time on %globaltimer.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <atomic>
#include <map>

#include "common/check.hpp"
#include "gpu_test_util.hpp"
#include "timing/device_kernels.hpp"
#include "timing/engine.hpp"

namespace shapescope {
namespace {

class SpinCall : public GemmCall {
 public:
  explicit SpinCall(uint64_t ns) : ns_(ns) {}
  void enqueue(cudaStream_t stream) override { launch_spin(ns_, stream); }

 private:
  uint64_t ns_;
};

struct FlushBuffer {
  void* ptr = nullptr;
  int64_t bytes = 64ll << 20;
  FlushBuffer() { CHECK_CUDA(cudaMalloc(&ptr, size_t(bytes))); }
  ~FlushBuffer() { cudaFree(ptr); }
};

TEST(Engine, TimesKnownDurationsInEverySlot) {
  SKIP_WITHOUT_GPU();
  FlushBuffer flush;
  MeasureOptions options;
  options.samples = 10;
  options.flush_buffer = flush.ptr;
  options.flush_bytes = flush.bytes;
  options.warmup_ms = 10;
  options.max_chunk_jobs = 8;  // several chunks, to exercise the chunking and the event pools
  options.chunk_ms = 0.5;
  std::vector<std::unique_ptr<SpinCall>> calls;
  std::vector<TimedJob> jobs;
  const std::vector<uint64_t> durations_us = {20, 50, 100, 200, 20, 400, 75, 150, 30, 60, 90, 10};
  for (uint64_t us : durations_us) {
    calls.push_back(std::make_unique<SpinCall>(us * 1000));
    jobs.push_back({calls.back().get(), double(us)});
  }
  Engine engine(options, nullptr, nullptr);
  std::map<size_t, TimingStats> got;
  ASSERT_TRUE(engine.run(jobs, [&](size_t job, const TimingStats& t) { got[job] = t; }, nullptr));
  ASSERT_EQ(got.size(), jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    const double expected = double(durations_us[i]);
    // The spin ends on the first globaltimer tick past the target (1 us ticks on recent GPUs),
    // and the event pair adds a few microseconds of its own.
    EXPECT_GE(got[i].median_us, expected * 0.99) << "job " << i;
    EXPECT_LE(got[i].median_us, expected + 8.0) << "job " << i;
    EXPECT_GE(got[i].samples, 10);
    EXPECT_LE(got[i].min_us, got[i].median_us);
  }
}

TEST(Engine, StopsWhenInterruptedAndReportsNothingHalfDone) {
  SKIP_WITHOUT_GPU();
  MeasureOptions options;
  options.hot = true;
  options.warmup_ms = 0;
  SpinCall call(10000);
  std::atomic<bool> interrupted{true};
  Engine engine(options, nullptr, &interrupted);
  size_t reported = 0;
  EXPECT_FALSE(engine.run({TimedJob{&call, 10}}, [&](size_t, const TimingStats&) { ++reported; }, nullptr));
  EXPECT_EQ(reported, 0u);
}

}  // namespace
}  // namespace shapescope
