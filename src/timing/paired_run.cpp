#include "timing/paired_run.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>

#include "common/check.hpp"
#include "timing/stats.hpp"

namespace shapescope {
namespace {

struct Events {
  std::vector<cudaEvent_t> start, stop;
  explicit Events(size_t n) : start(n), stop(n) {
    for (size_t i = 0; i < n; ++i) {
      CHECK_CUDA(cudaEventCreate(&start[i]));
      CHECK_CUDA(cudaEventCreate(&stop[i]));
    }
  }
  ~Events() {
    for (size_t i = 0; i < start.size(); ++i) {
      cudaEventDestroy(start[i]);
      cudaEventDestroy(stop[i]);
    }
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
};

// One pass, captured and run: the times (us) of each sample in `sequence` order.
std::vector<double> run_pass(const std::vector<GemmCall*>& calls, const std::vector<size_t>& sequence,
                             const MeasureOptions& options, cudaStream_t stream, Events& events) {
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  cudaGraph_t graph = nullptr;
  try {
    for (size_t s = 0; s < sequence.size(); ++s) {
      if (!options.hot)
        CHECK_CUDA(cudaMemsetAsync(options.flush_buffer, int(s & 0xff), size_t(options.flush_bytes), stream));
      CHECK_CUDA(cudaEventRecordWithFlags(events.start[s], stream, cudaEventRecordExternal));
      calls[sequence[s]]->enqueue(stream);
      CHECK_CUDA(cudaEventRecordWithFlags(events.stop[s], stream, cudaEventRecordExternal));
    }
  } catch (...) {
    cudaStreamEndCapture(stream, &graph);
    if (graph) cudaGraphDestroy(graph);
    throw;
  }
  CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t status = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  CHECK_CUDA(status);
  const cudaError_t launched = cudaGraphLaunch(exec, stream);
  const cudaError_t synced = launched == cudaSuccess ? cudaStreamSynchronize(stream) : launched;
  cudaGraphExecDestroy(exec);
  CHECK_CUDA(synced);
  std::vector<double> us(sequence.size());
  for (size_t s = 0; s < sequence.size(); ++s) {
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, events.start[s], events.stop[s]));
    us[s] = double(ms) * 1000.0;
  }
  return us;
}

// Whether the counted passes may start: not sustained, no clock to watch, or the warm-up ended
// (timing/settle.hpp); `facts` says how.
bool warmed(SettleFacts& facts, const MeasureOptions& options, const ClockSampler* clocks, double since, double now,
            double longest_us) {
  const SettleRule rule;
  if (options.clocks != ClockState::kSustained || !clocks || !clocks->available() || longest_us < rule.from_us)
    return true;
  facts = look_at_clock(*clocks, since, now, rule);
  return warm_up_ends(facts, rule);
}

}  // namespace

PairedOutcome run_paired(const std::vector<GemmCall*>& calls, const MeasureOptions& options, const PairedRule& rule,
                         const ClockSampler* clocks, const std::atomic<bool>* interrupted) {
  PairedOutcome out;
  const size_t k = calls.size();
  out.ratios.resize(k);
  out.median_us.resize(k);
  if (k == 0) return out;
  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  struct StreamGuard {
    cudaStream_t s;
    ~StreamGuard() { cudaStreamDestroy(s); }
  } guard{stream};
  Events events(4 * k);  // 2 (k - 1) samples of the others, 2 (k - 1) + 1 of the reference
  std::vector<std::vector<double>> ratios(k), times(k), sums(rule.sums.size());
  std::vector<double> pass_clocks, power;
  const double warm_from = options.warm_since > 0 ? options.warm_since : ClockSampler::now();
  const double warm_until = warm_from + options.warmup_ms / 1000.0;
  double counted_since = 0;
  bool counting = false;
  double longest_us = 0;  // the longest sample so far: is the work large enough to watch the clock?
  for (unsigned long long pass = 0;; ++pass) {
    if (interrupted && interrupted->load()) {
      out.interrupted = true;
      break;
    }
    const std::vector<size_t> sequence = pass_sequence(pass_order(k, options.seed + pass));
    const double began = ClockSampler::now();
    const std::vector<double> us = run_pass(calls, sequence, options, stream, events);
    const double ended = ClockSampler::now();
    ++out.passes;
    // The first pass loads; then the warm-up, and in the sustained state until the clock settles.
    longest_us = std::max(longest_us, *std::max_element(us.begin(), us.end()));
    counting = counting ||
               (pass > 0 && began >= warm_until && warmed(out.settle, options, clocks, warm_from, ended, longest_us));
    if (!counting) {
      ++out.warmup_passes;
      continue;
    }
    if (counted_since == 0) counted_since = began;
    const auto r = pass_ratios(sequence, us, k);
    for (size_t i = 0; i < k; ++i)
      if (r[i]) ratios[i].push_back(*r[i]);
    for (size_t s = 0; s < sequence.size(); ++s) times[sequence[s]].push_back(us[s]);
    const auto means = pass_means(sequence, us, k);
    for (size_t i = 0; i < sums.size(); ++i)
      if (const auto v = sum_ratio(rule.sums[i], means)) sums[i].push_back(*v);
    if (clocks && clocks->available()) {
      std::vector<double> mhz, watts;
      for (const ClockSample& c : clocks->between(began, ended)) {
        if (c.sm_clock_mhz > 0) mhz.push_back(c.sm_clock_mhz);
        if (c.power_w > 0) watts.push_back(c.power_w);
      }
      if (!mhz.empty()) pass_clocks.push_back(median(mhz));
      if (!watts.empty()) power.push_back(median(watts));
    }
    out.seconds = ended - counted_since;
    if (sums.empty() ? paired_done(ratios, rule, out.seconds) : sums_done(sums, rule, out.seconds)) break;
    // A call that never gives a ratio (a zero time) must not keep the passes going.
    if (out.seconds >= (kHardLimit + 1) * rule.max_seconds || out.passes - out.warmup_passes >= size_t(2 * rule.max_pairs + 2)) break;
  }
  for (size_t i = 0; i < k; ++i) {
    out.ratios[i] = paired_ratio(ratios[i]);
    out.median_us[i] = times[i].empty() ? 0 : median(times[i]);
  }
  for (auto& s : sums) out.sums.push_back(paired_ratio(std::move(s)));
  if (!pass_clocks.empty()) {
    const auto [low, high] = std::minmax_element(pass_clocks.begin(), pass_clocks.end());
    out.clock_low_mhz = *low;
    out.clock_median_mhz = median(pass_clocks);
    out.clock_high_mhz = *high;
  }
  if (!power.empty()) out.power_w = median(power);
  return out;
}

}  // namespace shapescope
