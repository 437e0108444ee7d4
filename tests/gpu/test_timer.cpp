// The engine against GPU work of known length: spin kernels that run for a set time on %globaltimer.
// The stopping rule, the sentinel's drift check and the burst state's clock probe are checked on
// jobs whose true times and noise are known.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <random>
#include <algorithm>

#include "common/check.hpp"
#include "gpu_test_util.hpp"
#include "timing/device_kernels.hpp"
#include "timing/engine.hpp"

namespace shapescope {
namespace {

using testing::FlushBuffer;
using testing::SpinCall;

// A noisy job: each sample spins 20 to 80 us, uniformly at random, drawn on the GPU at each run (as a
// kernel's noise is: not baked into the graph), so that its median is never known to 2 % (30
// samples leave a ~20 % interval).
class NoisySpinCall : public GemmCall {
 public:
  NoisySpinCall() {
    CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&launches_), sizeof(unsigned)));
    CHECK_CUDA(cudaMemset(launches_, 0, sizeof(unsigned)));
  }
  ~NoisySpinCall() override { cudaFree(launches_); }
  void enqueue(cudaStream_t stream) override { launch_jittered_spin(20000, 60000, launches_, stream); }

 private:
  unsigned* launches_ = nullptr;
};

// The sentinel with an injected slowdown: it spins `slow_ns` instead of `ns` in every sample of the
// `slow_capture`-th graph captured (counted by capture sequence id), and `ns` everywhere else.
class SlowOnceCall : public GemmCall {
 public:
  SlowOnceCall(uint64_t ns, uint64_t slow_ns, size_t slow_capture) : ns_(ns), slow_ns_(slow_ns), slow_(slow_capture) {}
  void enqueue(cudaStream_t stream) override {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    unsigned long long id = 0;
    CHECK_CUDA(cudaStreamGetCaptureInfo(stream, &status, &id));
    const bool capturing = status == cudaStreamCaptureStatusActive;
    if (capturing && std::find(seen_.begin(), seen_.end(), id) == seen_.end()) seen_.push_back(id);
    const bool slow = capturing && seen_.size() >= slow_ && id == seen_[slow_ - 1];
    launch_spin(slow ? slow_ns_ : ns_, stream);
  }

 private:
  uint64_t ns_, slow_ns_;
  size_t slow_;
  std::vector<unsigned long long> seen_;  // capture ids in the order they first appeared
};


std::map<size_t, TimingStats> run_all(Engine& engine, const std::vector<TimedJob>& jobs, const TimedJob* sentinel,
                                      std::vector<SentinelCheck>* checks = nullptr) {
  std::map<size_t, TimingStats> got;
  const bool finished = engine.run(
      jobs, sentinel,
      [&](const std::vector<JobResult>& chunk) {
        for (const JobResult& r : chunk) got[r.job] = r.timing;
      },
      nullptr,
      [&](const SentinelCheck& check) {
        if (checks) checks->push_back(check);
      });
  EXPECT_TRUE(finished);
  return got;
}

// The spin ends on the first globaltimer tick past the target (1 us ticks on recent GPUs), and the
// event pair adds a few microseconds of its own (slack_us: more where a time is one sample).
void expect_spin_time(const TimingStats& t, double us, const std::string& what, double slack_us = 8.0) {
  EXPECT_GE(t.median_us, us * 0.99) << what;
  EXPECT_LE(t.median_us, us + slack_us) << what;
  EXPECT_LE(t.min_us, t.median_us) << what;
}

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
  SpinCall sentinel_call(40000);
  const TimedJob sentinel{&sentinel_call, 40};
  const auto got = run_all(engine, jobs, &sentinel);
  ASSERT_EQ(got.size(), jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    expect_spin_time(got.at(i), double(durations_us[i]), "job " + std::to_string(i));
    EXPECT_EQ(got.at(i).samples, 10) << "job " << i;
    EXPECT_EQ(got.at(i).stop, StopReason::kFixed) << "job " << i;
  }
}

// Steady jobs stop at the minimum with "converged"; a job whose samples never agree goes to the cap.
TEST(Engine, StoppingRuleStopsSteadyJobsEarlyAndNoisyOnesAtTheCap) {
  SKIP_WITHOUT_GPU();
  MeasureOptions options;
  options.hot = true;
  options.warmup_ms = 0;
  // 2 %: a spin's samples agree to ~1 us (0.25 % of 400 us), so they stop at the minimum even if one
  // sample carries a few microseconds of graph start-up; the noisy job's interval stays ~20 % wide.
  options.rule = StopRule{4, 30, 0.02};
  std::vector<std::unique_ptr<GemmCall>> calls;
  std::vector<TimedJob> jobs;
  const std::vector<uint64_t> steady_us = {400, 800, 600};
  for (uint64_t us : steady_us) {
    calls.push_back(std::make_unique<SpinCall>(us * 1000));
    jobs.push_back({calls.back().get(), double(us)});
  }
  calls.push_back(std::make_unique<NoisySpinCall>());
  jobs.push_back({calls.back().get(), 45});
  Engine engine(options, nullptr, nullptr);
  const auto got = run_all(engine, jobs, nullptr);
  ASSERT_EQ(got.size(), jobs.size());
  for (size_t i = 0; i < steady_us.size(); ++i) {
    const TimingStats& t = got.at(i);
    expect_spin_time(t, double(steady_us[i]), "steady job " + std::to_string(i));
    EXPECT_EQ(t.stop, StopReason::kConverged) << "steady job " << i << ": " << t.samples << " samples";
    // At the minimum, or a few more where a sample caught a graph's start-up (seen once on an H100:
    // 12); far from the noisy job's cap either way.
    EXPECT_LE(t.samples, 15) << "steady job " << i;
    ASSERT_TRUE(t.median_ci.has_value());
    EXPECT_LE(*t.median_ci, 0.02);
  }
  const TimingStats& noisy = got.at(steady_us.size());
  EXPECT_EQ(noisy.stop, StopReason::kCap);
  EXPECT_EQ(noisy.samples, 30);
  ASSERT_TRUE(noisy.median_ci.has_value());
  EXPECT_GT(*noisy.median_ci, 0.02);
  EXPECT_GE(noisy.median_us, 20.0);
  EXPECT_LE(noisy.median_us, 88.0);
}

// A chunk whose sentinel reads 3x slower than the others' is measured again, once; its points are
// then right and say so (reruns 1), and the others were measured once.
TEST(Engine, SentinelDriftMeasuresTheChunkAgain) {
  SKIP_WITHOUT_GPU();
  MeasureOptions options;
  options.hot = true;
  options.warmup_ms = 0;  // no warm-up capture: the third graph captured is the third chunk's
  // One sample: a chunk below the minimum gets one graph per pass, so each chunk is one graph and
  // the third captured (the chunks open in order) is all of the third chunk's measurement.
  options.samples = 1;
  options.max_chunk_jobs = 2;  // 8 jobs: 4 chunks
  // Only the injected 3x counts: on a fresh H100 an untouched chunk's sentinel once read 7 % off
  // the reference (above the default 5 %) and went again too.
  options.drift_limit = 0.5;
  std::vector<std::unique_ptr<SpinCall>> calls;
  std::vector<TimedJob> jobs;
  for (int i = 0; i < 8; ++i) {
    calls.push_back(std::make_unique<SpinCall>(50000));
    jobs.push_back({calls.back().get(), 50});
  }
  SlowOnceCall sentinel_call(40000, 120000, 3);
  const TimedJob sentinel{&sentinel_call, 40};
  Engine engine(options, nullptr, nullptr);
  std::vector<SentinelCheck> checks;
  const auto got = run_all(engine, jobs, &sentinel, &checks);
  ASSERT_EQ(got.size(), jobs.size());
  size_t remeasured = 0;
  for (const SentinelCheck& c : checks) {
    if (!c.remeasured) continue;
    ++remeasured;
    EXPECT_GT(c.drift, 1.0) << "the injected slowdown is 3x";
    EXPECT_EQ(c.attempt, 0);
  }
  EXPECT_EQ(remeasured, 1u);
  EXPECT_EQ(engine.times().reruns, 1u);
  size_t rerun_points = 0;
  for (const auto& [job, t] : got) {
    // One sample each: a fresh H100 once read 58.9 us for the 50 us spin.
    expect_spin_time(t, 50, "job " + std::to_string(job), 12.0);
    rerun_points += t.reruns == 1;
    EXPECT_FALSE(t.drifted) << "job " << job;
    EXPECT_LE(t.reruns, 1) << "job " << job;
  }
  EXPECT_EQ(rerun_points, 2u) << "one chunk of two jobs went again";
}

TEST(Engine, BurstReadsTheClockOnTheGpu) {
  SKIP_WITHOUT_GPU();
  MeasureOptions options;
  options.hot = true;
  options.clocks = ClockState::kBurst;
  options.samples = 5;
  SpinCall call(200000);
  Engine engine(options, nullptr, nullptr);
  const auto got = run_all(engine, {TimedJob{&call, 200}}, nullptr);
  ASSERT_EQ(got.size(), 1u);
  expect_spin_time(got.at(0), 200, "burst");
  ASSERT_TRUE(got.at(0).sm_clock_mhz.has_value()) << "the probes give every burst its clock";
  EXPECT_GT(*got.at(0).sm_clock_mhz, 200.0);
  EXPECT_LT(*got.at(0).sm_clock_mhz, 4000.0);
  EXPECT_GT(engine.times().cooldown, 0.0);
}

TEST(ClockProbe, ReadsAPlausibleSmClock) {
  SKIP_WITHOUT_GPU();
  double* host = nullptr;
  double* device = nullptr;
  CHECK_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&host), sizeof(double), cudaHostAllocMapped));
  CHECK_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device), host, 0));
  *host = 0;
  launch_clock_probe(device, 1000000, nullptr);  // 1 ms
  CHECK_CUDA(cudaDeviceSynchronize());
  int khz = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  EXPECT_GT(*host, 100.0);
  // The attribute is the boost clock; a probe never runs faster than that (5 % for rounding).
  if (khz > 0) {
    EXPECT_LT(*host, khz / 1000.0 * 1.05) << "boost clock " << khz / 1000 << " MHz";
  }
  cudaFreeHost(host);
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
  EXPECT_FALSE(engine.run({TimedJob{&call, 10}}, nullptr,
                          [&](const std::vector<JobResult>& chunk) { reported += chunk.size(); }, nullptr));
  EXPECT_EQ(reported, 0u);
}

}  // namespace
}  // namespace shapescope
