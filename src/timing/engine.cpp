#include "timing/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>
#include <thread>

#include "common/check.hpp"
#include "common/error.hpp"
#include "timing/device_kernels.hpp"
#include "timing/stopping.hpp"

namespace shapescope {

namespace {

// cudaEventElapsedTime resolves about 0.5 us: a spread below twice that is the timer, not the GPU.
constexpr double kTimerResolutionUs = 0.5;
// Sustained: chunks open at once, their graphs taking turns on the stream, so that while the host
// reads one graph and captures that chunk's next, the others' graphs keep the GPU busy.
constexpr int kOpenChunks = 4;
// Warm-up: the sentinel's GEMM (with its flush) this many times per graph.
constexpr size_t kWarmUpSentinels = 16;
// Passes over the few jobs still sampling are packed into one graph up to this much GPU work (a
// graph of a handful of 10 us samples would cost more host time than GPU time).
constexpr double kTailGraphUs = 6000;
constexpr int kMaxTailPasses = 8;
// Burst: at most this much GPU work per graph, then idle for MeasureOptions::burst_idle times as long
// (at least kMinCooldownMs), so that the GPU never reaches its power limit (mamf-finder's MAMF, the
// boost clock).
constexpr double kBurstGraphUs = 10000;
constexpr double kMinCooldownMs = 2;
constexpr uint64_t kProbeNs = 100000;  // 100 us: the clock to ~0.1 % even with 1 us timer ticks
constexpr size_t kProbeSlots = 64;     // pairs of probes; at most two graphs are ever in flight

double now() { return ClockSampler::now(); }

// GEMM load queued between two looks at the clock while it settles.
constexpr double kSettleStepS = 0.1;

}  // namespace

struct Engine::Samples {
  std::vector<double> us;
  std::vector<double> clock_mhz;  // the graph's clock, one per sample (when known)
  uint64_t reasons = 0;
};

struct Engine::Chunk {
  size_t index = 0;
  std::vector<size_t> jobs;
  std::vector<Samples> samples;                    // per slot (position in `jobs`)
  std::vector<std::optional<StopReason>> stopped;  // per slot
  Samples sentinel;
  double pass_us = 0;  // estimated GPU time of one pass over every job, flushes and sentinel included
  int attempt = 0;     // re-runs so far
  std::optional<double> previous_sentinel;  // its sentinel's median at the attempt before
  std::optional<double> drift;
  bool drifted = false;
};

// A captured graph: events from the engine's pool (returned by retire()), its own exec and done
// event (freed with it).
struct Engine::Graph {
  size_t chunk = 0;
  cudaGraphExec_t exec = nullptr;
  std::vector<int> slot;  // per sample: the chunk's slot, or -1 for the sentinel
  std::vector<cudaEvent_t> start, stop;
  cudaEvent_t begin = nullptr, end = nullptr;  // the graph's first and last node: its GPU time
  cudaEvent_t ended = nullptr;  // recorded on the stream after each launch: the gap to the next graph
  cudaEvent_t done = nullptr;
  double launched = 0;
  double cost_us = 0;  // estimated GPU time
  std::optional<size_t> probe;

  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph() {
    if (exec) cudaGraphExecDestroy(exec);
    if (done) cudaEventDestroy(done);
  }
};

bool Engine::is_noisy(const SampleStats& s) const {
  return s.noise > options_.max_noise && (s.q3 - s.q1) > 2 * kTimerResolutionUs;
}

bool Engine::is_active(const Chunk& chunk, size_t slot) const { return !chunk.stopped[slot].has_value(); }

Engine::Engine(const MeasureOptions& options, const ClockSampler* clocks, const std::atomic<bool>* interrupted)
    : options_(options), rule_(options.stop_rule()), clocks_(clocks), interrupted_(interrupted),
      reference_(options.drift_limit, options.max_reruns), rng_state_(options.seed) {
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&capture_stream_, cudaStreamNonBlocking));
  if (options_.clocks == ClockState::kBurst) {
    CHECK_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&probes_), 2 * kProbeSlots * sizeof(double),
                             cudaHostAllocMapped));
    CHECK_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&probes_device_), probes_, 0));
  }
  flush_us_ = options_.hot ? 0.0 : double(options_.flush_bytes) / 2.5e6;  // ~2.5 TB/s memset
}

Engine::~Engine() {
  if (stream_) cudaStreamSynchronize(stream_);
  flight_.clear();
  ahead_.reset();
  if (warm_exec_) cudaGraphExecDestroy(warm_exec_);
  for (cudaEvent_t e : all_events_) cudaEventDestroy(e);
  if (probes_) cudaFreeHost(probes_);
  if (capture_stream_) cudaStreamDestroy(capture_stream_);
  if (stream_) cudaStreamDestroy(stream_);
}

double Engine::median_clock_mhz() const { return median(run_clocks_); }

cudaEvent_t Engine::take_event() {
  if (free_events_.empty()) {
    cudaEvent_t e = nullptr;
    CHECK_CUDA(cudaEventCreate(&e));
    all_events_.push_back(e);
    return e;
  }
  cudaEvent_t e = free_events_.back();
  free_events_.pop_back();
  return e;
}

void Engine::plan_chunks(const std::vector<TimedJob>& jobs) {
  std::vector<size_t> order(jobs.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(rng_state_);
  rng_state_ = rng();
  std::shuffle(order.begin(), order.end(), rng);
  const bool burst = options_.clocks == ClockState::kBurst;
  const double budget_us = burst ? std::min(options_.chunk_ms * 1000.0, kBurstGraphUs) : options_.chunk_ms * 1000.0;
  const double sentinel_us = sentinel_ ? sentinel_->estimate_us + flush_us_ : 0;
  chunks_.clear();
  for (size_t job : order) {
    const double cost = jobs[job].estimate_us + flush_us_;
    if (chunks_.empty() || (chunks_.back().pass_us + cost > budget_us && !chunks_.back().jobs.empty()) ||
        chunks_.back().jobs.size() >= size_t(options_.max_chunk_jobs)) {
      chunks_.emplace_back();
      chunks_.back().index = chunks_.size() - 1;
      chunks_.back().pass_us = sentinel_us;
    }
    chunks_.back().jobs.push_back(job);
    chunks_.back().pass_us += cost;
  }
  total_cost_ = 0;
  for (Chunk& c : chunks_) {
    c.samples.resize(c.jobs.size());
    c.stopped.resize(c.jobs.size());
    total_cost_ += c.pass_us * std::max(rule_.min_samples, 1);
  }
}

// GEMM load until warmup_ms have passed since options_.warm_since (the verification before the
// engine counts): replays of a graph of the sentinel's call (cheap to capture; else, and where the
// clock is watched until it settles (timing/settle.hpp), the first
// chunk's calls) with their flushes, all queued at once, so that the host captures the first
// chunks' graphs while the GPU warms up.
void Engine::warm_up(const std::vector<TimedJob>& jobs) {
  const double started = now();
  const double since = options_.warm_since > 0 ? options_.warm_since : started;
  const double until = since + options_.warmup_ms / 1000.0;
  const bool watch = options_.settle && clocks_ && clocks_->available() &&
                     std::any_of(jobs.begin(), jobs.end(), [](const TimedJob& j) { return j.estimate_us >= SettleRule{}.from_us; });
  if ((started >= until && !watch) || chunks_.empty()) return;
  std::vector<GemmCall*> calls;
  // Watching the clock settle, the load must be the GEMMs that reach the power limit: the first
  // chunk's own (the sentinel is a mid-sized GEMM that stays below it).
  if (sentinel_ && !watch)
    calls.assign(kWarmUpSentinels, sentinel_->call);
  else
    for (size_t job : chunks_.front().jobs) calls.push_back(jobs[job].call);
  CHECK_CUDA(cudaStreamBeginCapture(capture_stream_, cudaStreamCaptureModeThreadLocal));
  cudaGraph_t graph = nullptr;
  try {
    for (size_t i = 0; i < calls.size(); ++i) {
      if (!options_.hot)
        CHECK_CUDA(cudaMemsetAsync(options_.flush_buffer, int(i & 0xff), size_t(options_.flush_bytes), capture_stream_));
      calls[i]->enqueue(capture_stream_);
    }
  } catch (...) {
    cudaStreamEndCapture(capture_stream_, &graph);
    if (graph) cudaGraphDestroy(graph);
    throw;
  }
  CHECK_CUDA(cudaStreamEndCapture(capture_stream_, &graph));
  const cudaError_t status = cudaGraphInstantiate(&warm_exec_, graph, 0);
  cudaGraphDestroy(graph);
  CHECK_CUDA(status);
  // One replay to learn its length, then the rest queued.
  const double first = now();
  CHECK_CUDA(cudaGraphLaunch(warm_exec_, stream_));
  CHECK_CUDA(cudaStreamSynchronize(stream_));
  const double replay_s = std::max(now() - first, 1e-4);
  const int replays = int(std::ceil(std::max(until - now(), 0.0) / replay_s));
  for (int i = 0; i < replays; ++i) CHECK_CUDA(cudaGraphLaunch(warm_exec_, stream_));
  if (watch) settle(since, replay_s);
  times_.warmup = watch ? now() - started : now() - started + replays * replay_s;
}

void Engine::settle(double since, double replay_s) {
  const SettleRule rule;
  for (;;) {
    CHECK_CUDA(cudaStreamSynchronize(stream_));
    times_.settle = look_at_clock(*clocks_, since, now(), rule);
    if (warm_up_ends(times_.settle, rule) || (interrupted_ && interrupted_->load())) return;
    const int replays = std::max(1, int(std::ceil(kSettleStepS / replay_s)));
    for (int i = 0; i < replays; ++i) CHECK_CUDA(cudaGraphLaunch(warm_exec_, stream_));
  }
}

// The chunk's next graph: while its jobs are below the minimum, one pass over all of them; after
// that, one pass over the jobs still sampling (a few tiny ones packed).
std::unique_ptr<Engine::Graph> Engine::build_graph(Chunk& chunk) {
  const bool burst = options_.clocks == ClockState::kBurst;
  std::vector<size_t> active;
  int below_min = 0;
  double pass_us = sentinel_ ? sentinel_->estimate_us + flush_us_ : 0;
  for (size_t slot = 0; slot < chunk.jobs.size(); ++slot) {
    if (!is_active(chunk, slot)) continue;
    active.push_back(slot);
    below_min = std::max(below_min, rule_.min_samples - int(chunk.samples[slot].us.size()));
    pass_us += (*jobs_)[chunk.jobs[slot]].estimate_us + flush_us_;
  }
  pass_us = std::max(pass_us, 1.0);
  // Below the minimum: one pass per graph, each in its own order (smaller graphs keep the pipeline
  // of open chunks moving); after it, a few tiny passes packed.
  int passes = 1;
  if (below_min == 0) {
    passes = std::clamp(int((burst ? kBurstGraphUs : kTailGraphUs) / pass_us), 1, kMaxTailPasses);
  }
  std::mt19937_64 rng(rng_state_);
  rng_state_ = rng();
  std::vector<std::vector<int>> orders;
  auto graph = std::make_unique<Graph>();
  graph->chunk = chunk.index;
  for (int p = 0; p < passes; ++p) {
    std::vector<int> order;
    for (size_t slot : active)
      if (int(chunk.samples[slot].us.size()) + p < rule_.max_samples) {
        order.push_back(int(slot));
        graph->cost_us += (*jobs_)[chunk.jobs[slot]].estimate_us + flush_us_;
      }
    if (order.empty()) break;
    if (sentinel_) {
      order.push_back(-1);
      graph->cost_us += sentinel_->estimate_us + flush_us_;
    }
    std::shuffle(order.begin(), order.end(), rng);
    orders.push_back(std::move(order));
  }
  // A job still sampling is below max_samples, so the first pass always holds one; a graph with no
  // sample would never let the chunk finish.
  if (orders.empty()) throw Error(ExitCode::kInternal, "engine: a chunk still sampling got an empty pass");
  capture(*graph, orders, chunk);
  return graph;
}

void Engine::capture(Graph& graph, const std::vector<std::vector<int>>& passes, const Chunk& chunk) {
  const double started = now();
  const bool burst = options_.clocks == ClockState::kBurst;
  if (burst) graph.probe = next_probe_++ % kProbeSlots;
  CHECK_CUDA(cudaStreamBeginCapture(capture_stream_, cudaStreamCaptureModeThreadLocal));
  cudaGraph_t captured = nullptr;
  try {
    graph.begin = take_event();
    CHECK_CUDA(cudaEventRecordWithFlags(graph.begin, capture_stream_, cudaEventRecordExternal));
    // In a burst the first probe also wakes the clocks up before the first sample.
    if (burst) launch_clock_probe(probes_device_ + 2 * *graph.probe, kProbeNs, capture_stream_);
    for (const auto& pass : passes) {
      for (int slot : pass) {
        GemmCall* call = slot < 0 ? sentinel_->call : (*jobs_)[chunk.jobs[size_t(slot)]].call;
        if (!options_.hot)
          CHECK_CUDA(cudaMemsetAsync(options_.flush_buffer, int(graph.slot.size() & 0xff),
                                     size_t(options_.flush_bytes), capture_stream_));
        graph.start.push_back(take_event());
        graph.stop.push_back(take_event());
        graph.slot.push_back(slot);
        CHECK_CUDA(cudaEventRecordWithFlags(graph.start.back(), capture_stream_, cudaEventRecordExternal));
        call->enqueue(capture_stream_);
        CHECK_CUDA(cudaEventRecordWithFlags(graph.stop.back(), capture_stream_, cudaEventRecordExternal));
      }
    }
    if (burst) launch_clock_probe(probes_device_ + 2 * *graph.probe + 1, kProbeNs, capture_stream_);
    graph.end = take_event();
    CHECK_CUDA(cudaEventRecordWithFlags(graph.end, capture_stream_, cudaEventRecordExternal));
  } catch (...) {
    cudaStreamEndCapture(capture_stream_, &captured);
    if (captured) cudaGraphDestroy(captured);
    throw;
  }
  CHECK_CUDA(cudaStreamEndCapture(capture_stream_, &captured));
  const cudaError_t status = cudaGraphInstantiate(&graph.exec, captured, 0);
  cudaGraphDestroy(captured);
  CHECK_CUDA(status);
  // Uploaded now, off the launch path (the capture stream holds no work to wait for).
  CHECK_CUDA(cudaGraphUpload(graph.exec, capture_stream_));
  CHECK_CUDA(cudaEventCreateWithFlags(&graph.done, cudaEventDisableTiming | cudaEventBlockingSync));
  times_.capture += now() - started;
}

// A graph that will not be launched again: its pooled events go back (its exec goes with it).
void Engine::retire(std::unique_ptr<Graph> graph) {
  free_events_.push_back(graph->begin);
  free_events_.push_back(graph->end);
  free_events_.insert(free_events_.end(), graph->start.begin(), graph->start.end());
  free_events_.insert(free_events_.end(), graph->stop.begin(), graph->stop.end());
}

void Engine::launch(std::unique_ptr<Graph> graph) {
  const double started = now();
  CHECK_CUDA(cudaGraphLaunch(graph->exec, stream_));
  graph->ended = take_event();
  CHECK_CUDA(cudaEventRecord(graph->ended, stream_));
  CHECK_CUDA(cudaEventRecord(graph->done, stream_));
  graph->launched = now();
  times_.launch += graph->launched - started;
  ++times_.graphs;
  flight_.push_back(std::move(graph));
}

// Waits for the graph, files its samples with the clock seen while it ran, and runs the stopping
// rule on the jobs it sampled.
void Engine::read(Graph& graph) {
  const double waited = now();
  CHECK_CUDA(cudaEventSynchronize(graph.done));
  const double end = now();
  times_.wait += end - waited;
  const double begin = std::max(graph.launched, last_done_);  // it started when the one before ended
  last_done_ = end;
  double clock = 0;
  uint64_t reasons = 0;
  if (clocks_ && clocks_->available()) {
    std::vector<double> mhz;
    for (const auto& s : clocks_->between(begin, end)) {
      if (s.sm_clock_mhz > 0) mhz.push_back(s.sm_clock_mhz);
      reasons |= s.reasons;
    }
    clock = median(mhz);
  }
  // A burst is shorter than NVML's sampling period and mostly surrounded by idle time: its clock
  // is the probes'.
  if (graph.probe) clock = (probes_[2 * *graph.probe] + probes_[2 * *graph.probe + 1]) / 2;
  if (clock > 0) run_clocks_.push_back(clock);
  Chunk& chunk = chunks_[graph.chunk];
  for (size_t i = 0; i < graph.slot.size(); ++i) {
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, graph.start[i], graph.stop[i]));
    Samples& s = graph.slot[i] < 0 ? chunk.sentinel : chunk.samples[size_t(graph.slot[i])];
    s.us.push_back(double(ms) * 1000.0);
    if (clock > 0) s.clock_mhz.push_back(clock);
    s.reasons |= reasons;
  }
  float span_ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&span_ms, graph.begin, graph.end));
  times_.gpu_busy += double(span_ms) / 1000.0;
  if (last_ended_) {  // graphs run one after the other on stream_: the GPU idled in between
    float gap_ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&gap_ms, last_ended_, graph.begin));
    times_.gpu_gaps += double(gap_ms) / 1000.0;
    free_events_.push_back(last_ended_);
  }
  last_ended_ = graph.ended;
  graph.ended = nullptr;
  for (size_t slot = 0; slot < chunk.jobs.size(); ++slot)
    if (is_active(chunk, slot)) chunk.stopped[slot] = stop_reason(chunk.samples[slot].us, rule_);
  done_cost_ += graph.cost_us;
}

bool Engine::accept(Chunk& chunk, const SentinelFn& on_sentinel) {
  if (!sentinel_ || chunk.sentinel.us.empty()) return true;
  const SampleStats s = summarize(chunk.sentinel.us);
  const SentinelReference::Verdict v = reference_.judge(s.median, s.noise, chunk.attempt, chunk.previous_sentinel);
  SentinelCheck check;
  check.chunk = chunk.index;
  check.attempt = chunk.attempt;
  check.sentinel_us = s.median;
  check.reference_us = v.reference;
  check.drift = v.drift;
  check.limit = v.limit;
  check.remeasured = v.action == SentinelReference::Action::kMeasureAgain;
  check.kept_drifted = v.action == SentinelReference::Action::kKeepDrifted;
  check.rebased = v.rebased;
  if (on_sentinel) on_sentinel(check);
  if (v.reference) chunk.drift = v.drift;
  if (check.remeasured) {
    ++chunk.attempt;
    ++times_.reruns;
    chunk.previous_sentinel = s.median;
    for (size_t slot = 0; slot < chunk.jobs.size(); ++slot) {
      chunk.samples[slot] = Samples{};
      chunk.stopped[slot].reset();
    }
    chunk.sentinel = Samples{};
    total_cost_ += chunk.pass_us * std::max(rule_.min_samples, 1);
    return false;
  }
  chunk.drifted = check.kept_drifted;
  return true;
}

TimingStats Engine::finish(const Chunk& chunk, size_t slot) const {
  const Samples& samples = chunk.samples[slot];
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
  t.stop = chunk.stopped[slot].value_or(rule_.fixed() ? StopReason::kFixed : StopReason::kCap);
  if (s.n >= 2) t.median_ci = relative_half_width(samples.us);
  t.sentinel_drift = chunk.drift;
  t.reruns = chunk.attempt;
  t.drifted = chunk.drifted;
  t.throttle_reasons = samples.reasons;
  if (!samples.clock_mhz.empty()) {
    t.sm_clock_mhz = median(samples.clock_mhz);
    const double run_median = median_clock_mhz();
    const double lowest = *std::min_element(samples.clock_mhz.begin(), samples.clock_mhz.end());
    t.throttled = run_median > 0 && lowest < 0.9 * run_median;
  }
  // Heat and hardware slowdowns mark a point in either state. The software power cap is what the
  // sustained state means (MEASURE.md: 1380-1770 MHz under sustained GEMMs), so it marks only a
  // burst point: that burst ran into the power limit.
  uint64_t marking = throttle::kPowerOrThermal & ~throttle::kSwPowerCap;
  if (options_.clocks == ClockState::kBurst) marking |= throttle::kSwPowerCap;
  if (samples.reasons & marking) t.throttled = true;
  return t;
}

void Engine::report(Chunk& chunk, const DoneFn& done) {
  const double started = now();
  std::vector<JobResult> results;
  for (size_t slot = 0; slot < chunk.jobs.size(); ++slot) results.push_back({chunk.jobs[slot], finish(chunk, slot)});
  if (done) done(results);
  chunk.samples.clear();
  ++times_.chunks;
  times_.callbacks += now() - started;
}

void Engine::drain() {
  if (stream_) cudaStreamSynchronize(stream_);
  flight_.clear();
  ahead_.reset();
}

bool Engine::run(const std::vector<TimedJob>& jobs, const TimedJob* sentinel, const DoneFn& done,
                 const ProgressFn& progress, const SentinelFn& on_sentinel) {
  if (jobs.empty()) return true;
  jobs_ = &jobs;
  sentinel_ = sentinel;
  plan_chunks(jobs);
  const bool burst = options_.clocks == ClockState::kBurst;
  if (!burst) warm_up(jobs);
  if (interrupted_ && interrupted_->load()) return false;
  size_t next = 0;
  // The next chunk's first graph is captured ahead, while the GPU has work queued, so that opening
  // a chunk never leaves the GPU idle for a capture (the other chunk may be down to tiny passes).
  auto open_next = [&] {
    if (next >= chunks_.size()) return;
    std::unique_ptr<Graph> graph = ahead_ && ahead_->chunk == next ? std::move(ahead_) : build_graph(chunks_[next]);
    ++next;
    launch(std::move(graph));
  };
  auto capture_ahead = [&] {
    if (!ahead_ && next < chunks_.size()) ahead_ = build_graph(chunks_[next]);
  };
  try {
    // Sustained: kOpenChunks chunks in flight, their graphs taking turns; burst: one graph at a time.
    for (int i = 0; i < (burst ? 1 : kOpenChunks); ++i) open_next();
    while (!flight_.empty()) {
      std::unique_ptr<Graph> graph = std::move(flight_.front());
      flight_.pop_front();
      read(*graph);
      if (interrupted_ && interrupted_->load()) {
        drain();
        return false;
      }
      if (burst) {
        const double busy_ms = (last_done_ - std::max(graph->launched, 0.0)) * 1000.0;
        const double idle_ms = std::max(kMinCooldownMs, options_.burst_idle * busy_ms);
        std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(idle_ms));
        times_.cooldown += idle_ms / 1000.0;
      }
      Chunk& chunk = chunks_[graph->chunk];
      const bool sampling = std::any_of(chunk.stopped.begin(), chunk.stopped.end(),
                                        [](const std::optional<StopReason>& r) { return !r.has_value(); });
      if (sampling || !accept(chunk, on_sentinel)) {
        retire(std::move(graph));
        launch(build_graph(chunk));
      } else {
        retire(std::move(graph));
        open_next();
        report(chunk, done);  // the store writes happen while the next graphs run
      }
      capture_ahead();
      if (progress) progress(std::min(1.0, done_cost_ / std::max(total_cost_, 1.0)));
    }
  } catch (...) {
    drain();
    throw;
  }
  return true;
}

}  // namespace shapescope
