#include "timing/replay.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <memory>

#include "common/check.hpp"
#include "timing/paired.hpp"
#include "timing/standin_kernels.hpp"
#include "timing/stats.hpp"
#include "timing/stopping.hpp"

namespace shapescope {
namespace {

// One step captured: its graph and the events around each of its timed calls.
struct StepGraph {
  cudaGraphExec_t exec = nullptr;
  std::vector<cudaEvent_t> start, stop;
  StepGraph() = default;
  StepGraph(const StepGraph&) = delete;
  StepGraph& operator=(const StepGraph&) = delete;
  ~StepGraph() {
    if (exec) cudaGraphExecDestroy(exec);
    for (cudaEvent_t e : start) cudaEventDestroy(e);
    for (cudaEvent_t e : stop) cudaEventDestroy(e);
  }
};

void enqueue_item(const ReplayItem& item, const std::vector<GemmCall*>& calls, const ReplayResources& r,
                  unsigned* sink, StepGraph& g, cudaStream_t stream) {
  const auto ns = uint64_t(item.us * 1000.0);
  switch (item.kind) {
    case ReplayItem::Kind::kCall: {
      if (item.call >= calls.size() || !calls[item.call])
        throw Error(ExitCode::kInternal, "replay: an item names a call that is not there");
      cudaEvent_t start = nullptr, stop = nullptr;
      CHECK_CUDA(cudaEventCreate(&start));
      g.start.push_back(start);
      CHECK_CUDA(cudaEventCreate(&stop));
      g.stop.push_back(stop);
      CHECK_CUDA(cudaEventRecordWithFlags(start, stream, cudaEventRecordExternal));
      calls[item.call]->enqueue(stream);
      CHECK_CUDA(cudaEventRecordWithFlags(stop, stream, cudaEventRecordExternal));
      return;
    }
    case ReplayItem::Kind::kMemoryWork:
      launch_memory_work(r.buffer, r.buffer_bytes, ns, 4 * r.sms, sink, stream);
      return;
    case ReplayItem::Kind::kComputeWork: launch_compute_work(ns, 4 * r.sms, sink, stream); return;
    case ReplayItem::Kind::kIdle: launch_idle(ns, stream); return;
  }
}

std::unique_ptr<StepGraph> capture_step(const std::vector<ReplayItem>& items, const std::vector<GemmCall*>& calls,
                                        const ReplayResources& r, unsigned* sink, cudaStream_t stream) {
  auto g = std::make_unique<StepGraph>();
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  cudaGraph_t graph = nullptr;
  try {
    for (const ReplayItem& item : items) enqueue_item(item, calls, r, sink, *g, stream);
  } catch (...) {
    cudaStreamEndCapture(stream, &graph);
    if (graph) cudaGraphDestroy(graph);
    throw;
  }
  CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
  const cudaError_t status = cudaGraphInstantiate(&g->exec, graph, 0);
  cudaGraphDestroy(graph);
  CHECK_CUDA(status);
  return g;
}

// One replay of a step: launched, waited for, its timed calls' times (us) in item order.
std::vector<double> replay_once(const StepGraph& g, cudaStream_t stream) {
  CHECK_CUDA(cudaGraphLaunch(g.exec, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  std::vector<double> us(g.start.size());
  for (size_t i = 0; i < us.size(); ++i) {
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, g.start[i], g.stop[i]));
    us[i] = double(ms) * 1000.0;
  }
  return us;
}

double sum_of(const std::vector<double>& v) {
  double total = 0;
  for (double x : v) total += x;
  return total;
}

// The step's graph back to back (a few launches between synchronizations, so that the GPU never
// waits) until the clock and the board power have settled or the rule's warm-up time is spent. The
// power is watched over 2 s: NVML's reading is a second's average, and a short step whose clock had
// settled within half a second was measured at 551 W in one run and 691 W in the next (GPT-NeoX,
// 2 layers, 1.039 and 1.075 of its trace; H200, bench/workloads/results/step-truth-warm-h200-*).
void warm_up(const StepGraph& step, const ReplayRule& rule, const ClockSampler* clocks, cudaStream_t stream,
             const std::atomic<bool>* interrupted, ReplayOutcome& out) {
  const double since = ClockSampler::now();
  SettleRule settle;
  settle.max_s = rule.warmup_seconds;
  settle.power_window_s = kReplayPowerWindowS;
  double one = 0;  // seconds of one replay
  for (;;) {
    if (interrupted && interrupted->load()) {
      out.interrupted = true;
      return;
    }
    const double began = ClockSampler::now();
    const int launches = one > 0 ? std::clamp(int(0.05 / one), 1, 64) : 1;
    for (int i = 0; i < launches; ++i) CHECK_CUDA(cudaGraphLaunch(step.exec, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    const double now = ClockSampler::now();
    if (one == 0) one = std::max(1e-6, now - began);
    out.warmup_replays += size_t(launches);
    const double seconds = now - since;
    if (!clocks || !clocks->available()) {
      if (seconds >= std::min(0.5, rule.warmup_seconds)) return;
      continue;
    }
    if (seconds < settle_window_s(settle)) continue;
    out.settle = look_at_clock(*clocks, since, now, settle);
    if (warm_up_ends(out.settle, settle)) return;
  }
}

}  // namespace

ReplayOutcome run_replay(const std::vector<GemmCall*>& calls, const ReplayRule& rule, const ReplayResources& resources,
                         const ClockSampler* clocks, const std::atomic<bool>* interrupted) {
  ReplayOutcome out;
  const size_t k = rule.steps.size();
  out.term_us.assign(k, std::vector<double>(rule.terms, 0.0));
  out.step_us.assign(k, 0.0);
  out.ratios.assign(k, PairedRatio{});
  if (k == 0) return out;
  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  unsigned* sink = nullptr;
  CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&sink), sizeof(unsigned)));
  struct Guard {
    cudaStream_t s;
    unsigned* sink;
    ~Guard() {
      cudaStreamDestroy(s);
      cudaFree(sink);
    }
  } guard{stream, sink};
  std::vector<std::unique_ptr<StepGraph>> graphs;
  for (const auto& items : rule.steps) graphs.push_back(capture_step(items, calls, resources, sink, stream));
  warm_up(*graphs.front(), rule, clocks, stream, interrupted, out);

  std::vector<std::vector<double>> sums(k), ratios(k), pass_clocks(1), power(1);
  std::vector<std::vector<std::vector<double>>> terms(k, std::vector<std::vector<double>>(rule.terms));
  double max_power = 0;
  const double counted_since = ClockSampler::now();
  for (unsigned long long pass = 0; !out.interrupted; ++pass) {
    if (interrupted && interrupted->load()) {
      out.interrupted = true;
      break;
    }
    const std::vector<size_t> sequence = replay_pass(k, ratios, rule, resources.seed + pass);
    const double began = ClockSampler::now();
    std::vector<double> sample_sums;
    for (size_t s : sequence) {
      const std::vector<double> us = replay_once(*graphs[s], stream);
      sample_sums.push_back(sum_of(us));
      sums[s].push_back(sample_sums.back());
      const std::vector<double> per_term = term_sums(rule.steps[s], us, rule.terms);
      for (size_t t = 0; t < rule.terms; ++t) terms[s][t].push_back(per_term[t]);
    }
    const double ended = ClockSampler::now();
    const auto r = pass_ratios(sequence, sample_sums, k);
    for (size_t i = 1; i < k; ++i)
      if (r[i]) ratios[i].push_back(*r[i]);
    if (clocks && clocks->available()) {
      std::vector<double> mhz, watts;
      for (const ClockSample& c : clocks->between(began, ended)) {
        if (c.sm_clock_mhz > 0) mhz.push_back(c.sm_clock_mhz);
        if (c.power_w > 0) watts.push_back(c.power_w), max_power = std::max(max_power, c.power_w);
      }
      if (!mhz.empty()) pass_clocks[0].push_back(median(mhz));
      if (!watts.empty()) power[0].push_back(median(watts));
    }
    out.seconds = ended - counted_since;
    if (replay_done(sums[0], ratios, rule, out.seconds)) break;
  }
  out.replays = sums[0].size();
  for (size_t s = 0; s < k; ++s) {
    out.step_us[s] = sums[s].empty() ? 0 : median(sums[s]);
    for (size_t t = 0; t < rule.terms; ++t) out.term_us[s][t] = terms[s][t].empty() ? 0 : median(terms[s][t]);
    if (s > 0) out.ratios[s] = paired_ratio(ratios[s]);
  }
  out.ratios[0].pairs = sums[0].size();
  for (size_t t = 0; t < rule.terms; ++t) out.term_half_width.push_back(relative_half_width(terms[0][t]));
  if (!pass_clocks[0].empty()) {
    const auto [low, high] = std::minmax_element(pass_clocks[0].begin(), pass_clocks[0].end());
    out.clock_low_mhz = *low;
    out.clock_median_mhz = median(pass_clocks[0]);
    out.clock_high_mhz = *high;
  }
  if (!power[0].empty()) out.power_w = median(power[0]);
  if (max_power > 0) out.power_max_w = max_power;
  return out;
}

}  // namespace shapescope
