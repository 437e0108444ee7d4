#include "timing/engine.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>
#include <thread>

#include "common/check.hpp"
#include "timing/stats.hpp"

namespace shapescope {

// Two pools of events: the pass being read uses one while the next pass, already queued, uses the other.
struct Engine::Pool {
  std::vector<cudaEvent_t> start, stop;
  cudaEvent_t done = nullptr;
};

struct Engine::JobSamples {
  std::vector<double> us;
  std::vector<double> clock_mhz;  // the pass's median clock, one per sample (when known)
  uint64_t reasons = 0;
};

namespace {

// cudaEventElapsedTime resolves about 0.5 us: a spread below twice that is the timer, not the GPU.
constexpr double kTimerResolutionUs = 0.5;

}  // namespace

bool Engine::is_noisy(const SampleStats& s) const {
  return s.noise > options_.max_noise && (s.q3 - s.q1) > 2 * kTimerResolutionUs;
}

Engine::Engine(const MeasureOptions& options, const ClockSampler* clocks,
               const std::atomic<bool>* interrupted)
    : options_(options), clocks_(clocks), interrupted_(interrupted), pools_(2),
      rng_state_(options.seed) {
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&capture_stream_, cudaStreamNonBlocking));
  for (auto& pool : pools_) {
    pool.start.resize(size_t(options_.max_chunk_jobs));
    pool.stop.resize(size_t(options_.max_chunk_jobs));
    for (auto& e : pool.start) CHECK_CUDA(cudaEventCreate(&e));
    for (auto& e : pool.stop) CHECK_CUDA(cudaEventCreate(&e));
    CHECK_CUDA(cudaEventCreateWithFlags(&pool.done, cudaEventDisableTiming | cudaEventBlockingSync));
  }
}

Engine::~Engine() {
  if (stream_) cudaStreamSynchronize(stream_);
  for (auto& pool : pools_) {
    for (auto e : pool.start) if (e) cudaEventDestroy(e);
    for (auto e : pool.stop) if (e) cudaEventDestroy(e);
    if (pool.done) cudaEventDestroy(pool.done);
  }
  if (capture_stream_) cudaStreamDestroy(capture_stream_);
  if (stream_) cudaStreamDestroy(stream_);
}

double Engine::median_clock_mhz() const { return median(run_clocks_); }

cudaGraphExec_t Engine::capture(const std::vector<TimedJob>& jobs, const std::vector<size_t>& chunk,
                                const std::vector<size_t>& order, Pool& pool) {
  CHECK_CUDA(cudaStreamBeginCapture(capture_stream_, cudaStreamCaptureModeThreadLocal));
  try {
    for (size_t slot : order) {
      if (!options_.hot)
        CHECK_CUDA(cudaMemsetAsync(options_.flush_buffer, int(slot & 0xff),
                                   size_t(options_.flush_bytes), capture_stream_));
      CHECK_CUDA(cudaEventRecordWithFlags(pool.start[slot], capture_stream_, cudaEventRecordExternal));
      jobs[chunk[slot]].call->enqueue(capture_stream_);
      CHECK_CUDA(cudaEventRecordWithFlags(pool.stop[slot], capture_stream_, cudaEventRecordExternal));
    }
  } catch (...) {
    cudaGraph_t broken = nullptr;
    cudaStreamEndCapture(capture_stream_, &broken);
    if (broken) cudaGraphDestroy(broken);
    throw;
  }
  cudaGraph_t graph = nullptr;
  CHECK_CUDA(cudaStreamEndCapture(capture_stream_, &graph));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t status = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  CHECK_CUDA(status);
  return exec;
}

void Engine::warm_up(const std::vector<TimedJob>& jobs, const std::vector<size_t>& chunk) {
  std::vector<size_t> order(chunk.size());
  std::iota(order.begin(), order.end(), 0);
  cudaGraphExec_t exec = capture(jobs, chunk, order, pools_[0]);
  const auto start = std::chrono::steady_clock::now();
  // At least one replay: it also proves that every call of the chunk launches.
  do {
    CHECK_CUDA(cudaGraphLaunch(exec, stream_));
    CHECK_CUDA(cudaStreamSynchronize(stream_));
  } while (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() <
               options_.warmup_ms &&
           !(interrupted_ && interrupted_->load()));
  cudaGraphExecDestroy(exec);
}

bool Engine::run_round(const std::vector<TimedJob>& jobs, const std::vector<size_t>& chunk,
                       std::vector<JobSamples>& samples, double chunk_cost, double total_cost,
                       double& done_cost, const ProgressFn& progress) {
  std::mt19937_64 rng(rng_state_);
  rng_state_ = rng();
  auto shuffled = [&] {
    std::vector<size_t> order(chunk.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    return order;
  };
  const int passes = options_.samples;
  auto launch = [&](cudaGraphExec_t exec, Pool& pool) {
    CHECK_CUDA(cudaGraphLaunch(exec, stream_));
    CHECK_CUDA(cudaEventRecord(pool.done, stream_));
  };

  cudaGraphExec_t current = capture(jobs, chunk, shuffled(), pools_[0]);
  launch(current, pools_[0]);
  double pass_start = ClockSampler::now();
  for (int p = 0; p < passes; ++p) {
    Pool& pool = pools_[size_t(p % 2)];
    cudaGraphExec_t next = nullptr;
    if (p + 1 < passes) {
      // Captured while pass p runs; queued behind it so that the GPU never waits for the host.
      Pool& next_pool = pools_[size_t((p + 1) % 2)];
      next = capture(jobs, chunk, shuffled(), next_pool);
      launch(next, next_pool);
    }
    CHECK_CUDA(cudaEventSynchronize(pool.done));
    const double pass_end = ClockSampler::now();
    cudaGraphExecDestroy(current);
    current = next;

    double clock = 0;
    uint64_t reasons = 0;
    if (clocks_ && clocks_->available()) {
      std::vector<double> mhz;
      for (const auto& s : clocks_->between(pass_start, pass_end)) {
        if (s.sm_clock_mhz > 0) mhz.push_back(s.sm_clock_mhz);
        reasons |= s.reasons;
      }
      clock = median(mhz);
      if (clock > 0) run_clocks_.push_back(clock);
    }
    for (size_t slot = 0; slot < chunk.size(); ++slot) {
      float ms = 0;
      CHECK_CUDA(cudaEventElapsedTime(&ms, pool.start[slot], pool.stop[slot]));
      auto& s = samples[slot];
      s.us.push_back(double(ms) * 1000.0);
      if (clock > 0) s.clock_mhz.push_back(clock);
      s.reasons |= reasons;
    }
    pass_start = pass_end;
    done_cost += chunk_cost / passes;
    if (progress) progress(std::min(1.0, done_cost / total_cost));
    if (interrupted_ && interrupted_->load()) {
      if (current) {
        CHECK_CUDA(cudaStreamSynchronize(stream_));
        cudaGraphExecDestroy(current);
      }
      return false;
    }
  }
  return true;
}

TimingStats Engine::finish(const JobSamples& samples) {
  const SampleStats s = summarize(samples.us);
  TimingStats t;
  t.median_us = s.median;
  t.min_us = s.min;
  t.max_us = s.max;
  t.q1_us = s.q1;
  t.q3_us = s.q3;
  t.samples = s.n;
  t.noise = s.noise;
  t.noisy = is_noisy(s);
  t.throttle_reasons = samples.reasons;
  if (!samples.clock_mhz.empty()) {
    t.sm_clock_mhz = median(samples.clock_mhz);
    const double run_median = median_clock_mhz();
    const double lowest = *std::min_element(samples.clock_mhz.begin(), samples.clock_mhz.end());
    t.throttled = run_median > 0 && lowest < 0.9 * run_median;
  }
  // MEASURE.md: a power or thermal clock-event reason during the samples marks the point, even
  // when the clock matched the run's (a whole run can be power-capped).
  if (samples.reasons & throttle::kPowerOrThermal) t.throttled = true;
  return t;
}

bool Engine::run(const std::vector<TimedJob>& jobs, const DoneFn& done, const ProgressFn& progress) {
  if (jobs.empty()) return true;
  std::vector<size_t> order(jobs.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(rng_state_);
  std::shuffle(order.begin(), order.end(), rng);

  // Chunks of about chunk_ms of GPU time per pass (flush included), from the estimates.
  const double flush_us = options_.hot ? 0.0 : double(options_.flush_bytes) / 2.5e6;  // ~2.5 TB/s memset
  std::vector<std::vector<size_t>> chunks;
  std::vector<double> chunk_costs;
  double total_cost = 0;
  for (size_t job : order) {
    const double cost = jobs[job].estimate_us + flush_us;
    if (chunks.empty() || chunk_costs.back() + cost > options_.chunk_ms * 1000.0 ||
        chunks.back().size() >= size_t(options_.max_chunk_jobs)) {
      chunks.emplace_back();
      chunk_costs.push_back(0);
    }
    chunks.back().push_back(job);
    chunk_costs.back() += cost;
    total_cost += cost;
  }
  // Re-measured jobs add cost the estimate did not know about; the fraction is capped at 1.
  total_cost *= options_.samples;

  warm_up(jobs, chunks.front());
  double done_cost = 0;
  for (size_t c = 0; c < chunks.size(); ++c) {
    if (interrupted_ && interrupted_->load()) return false;
    const auto& chunk = chunks[c];
    std::vector<JobSamples> samples(chunk.size());
    if (!run_round(jobs, chunk, samples, chunk_costs[c] * options_.samples, total_cost, done_cost,
                   progress))
      return false;
    // Noisy jobs go again, together, until quiet or out of rounds.
    for (int round = 0; round < options_.max_extra_rounds; ++round) {
      std::vector<size_t> noisy_slots;
      for (size_t slot = 0; slot < chunk.size(); ++slot)
        if (is_noisy(summarize(samples[slot].us))) noisy_slots.push_back(slot);
      if (noisy_slots.empty()) break;
      std::vector<size_t> sub_chunk;
      std::vector<JobSamples> sub_samples(noisy_slots.size());
      double sub_cost = 0;
      for (size_t slot : noisy_slots) {
        sub_chunk.push_back(chunk[slot]);
        sub_cost += jobs[chunk[slot]].estimate_us + flush_us;
      }
      double ignored_cost = 0;
      if (!run_round(jobs, sub_chunk, sub_samples, sub_cost, total_cost, ignored_cost, nullptr))
        return false;
      for (size_t i = 0; i < noisy_slots.size(); ++i) {
        auto& into = samples[noisy_slots[i]];
        const auto& more = sub_samples[i];
        into.us.insert(into.us.end(), more.us.begin(), more.us.end());
        into.clock_mhz.insert(into.clock_mhz.end(), more.clock_mhz.begin(), more.clock_mhz.end());
        into.reasons |= more.reasons;
      }
    }
    for (size_t slot = 0; slot < chunk.size(); ++slot) done(chunk[slot], finish(samples[slot]));
  }
  return true;
}

}  // namespace shapescope
