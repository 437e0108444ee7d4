// The measurement engine (MEASURE.md "The method"):
//   - jobs are shuffled and cut into chunks of about `chunk_ms` of GPU time per pass;
//   - a chunk is measured in passes, each pass in its own shuffled order, every sample as
//       L2 flush (memset) -> event -> GEMM -> event
//     with event-record nodes inside a CUDA graph, so no host gap is timed; a graph holds one pass
//     while the chunk's jobs are below the minimum, later a few tiny passes packed; every graph is
//     captured anew, in its own order, and uploaded before its launch;
//   - the next chunk's first graph is captured ahead while the GPU has work queued;
//   - the stopping rule (timing/stopping.hpp) runs on every job after each graph: a pass holds only
//     the jobs that have not stopped, so steady kernels stop at the minimum and noisy ones get more;
//   - sustained clocks: four chunks are open at once and their graphs take turns, so that while the
//     others' graphs run the host reads one graph's samples, decides and captures that chunk's next
//     graph, and saves finished chunks: the GPU does not wait for the host, and no decision lags a
//     pass behind; the warm-up's replays are queued at once, so the first captures overlap them;
//     burst clocks: one short graph (<= kBurstGraphUs of GPU work) at a time, each followed by an idle
//     cool-down, its SM clock read on the GPU by a probe kernel at its start and end;
//   - a sentinel job (a fixed shape) is measured in every pass of every chunk; a chunk whose
//     sentinel median drifts from the run's reference by more than the noise is measured again
//     (timing/sentinel.hpp: a transient drift costs one re-run, a persistent shift moves the
//     reference);
//   - the SM clock and clock-event reasons come from a side thread (NVML), matched to each graph by
//     host time; samples taken below 90 % of the run's median clock (and in the burst state, with a
//     power or thermal clock-event reason) mark the job throttled;
//   - a chunk's jobs are reported (and stored) as soon as the chunk is done, so an interrupted
//     sweep loses at most the chunks in flight.
#pragma once
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "backends/backend.hpp"
#include "device/nvml.hpp"
#include "core/records.hpp"
#include "timing/engine_facts.hpp"
#include "timing/measure_options.hpp"
#include "timing/sentinel.hpp"
#include "timing/stats.hpp"

namespace shapescope {

struct TimedJob {
  GemmCall* call = nullptr;
  double estimate_us = 0;  // for chunking, graph sizes and the ETA
};

struct JobResult {
  size_t job = 0;
  TimingStats timing;
};

class Engine {
 public:
  Engine(const MeasureOptions& options, const ClockSampler* clocks, const std::atomic<bool>* interrupted);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // The jobs of one chunk, when the chunk is final (caller saves them, in one transaction).
  using DoneFn = std::function<void(const std::vector<JobResult>& chunk)>;
  using ProgressFn = std::function<void(double fraction)>;
  using SentinelFn = std::function<void(const SentinelCheck& check)>;
  // Measures every job; `sentinel` (may be null) is measured in every pass of every chunk and never
  // reported as a job. Returns false when interrupted (finished chunks were reported; the chunks in
  // flight are dropped).
  bool run(const std::vector<TimedJob>& jobs, const TimedJob* sentinel, const DoneFn& done,
           const ProgressFn& progress, const SentinelFn& on_sentinel = {});

  // Median SM clock over the whole run so far (0 when unknown).
  double median_clock_mhz() const;
  const EngineTimes& times() const { return times_; }

 private:
  struct Samples;
  struct Chunk;
  struct Graph;
  void plan_chunks(const std::vector<TimedJob>& jobs);
  void warm_up(const std::vector<TimedJob>& jobs);
  // More replays of the warm-up graph until the SM clock has settled (timing/settle.hpp).
  void settle(double since, double replay_s);
  std::unique_ptr<Graph> build_graph(Chunk& chunk);
  void capture(Graph& graph, const std::vector<std::vector<int>>& passes, const Chunk& chunk);
  void launch(std::unique_ptr<Graph> graph);
  void retire(std::unique_ptr<Graph> graph);
  void read(Graph& graph);
  // After a chunk's last graph: false when the sentinel sent it round again.
  bool accept(Chunk& chunk, const SentinelFn& on_sentinel);
  void report(Chunk& chunk, const DoneFn& done);
  TimingStats finish(const Chunk& chunk, size_t slot) const;
  bool is_noisy(const SampleStats& stats) const;
  bool is_active(const Chunk& chunk, size_t slot) const;
  void drain();
  cudaEvent_t take_event();

  MeasureOptions options_;
  StopRule rule_;
  const ClockSampler* clocks_;
  const std::atomic<bool>* interrupted_;
  const std::vector<TimedJob>* jobs_ = nullptr;
  const TimedJob* sentinel_ = nullptr;
  double flush_us_ = 0;
  cudaStream_t stream_ = nullptr;
  cudaStream_t capture_stream_ = nullptr;
  std::vector<cudaEvent_t> free_events_;
  cudaEvent_t last_ended_ = nullptr;  // the last graph read: its `ended` event (for the gap to the next)
  std::vector<cudaEvent_t> all_events_;
  double* probes_ = nullptr;         // mapped pinned: two clock probes per graph slot (burst)
  double* probes_device_ = nullptr;
  size_t next_probe_ = 0;
  std::vector<Chunk> chunks_;
  std::deque<std::unique_ptr<Graph>> flight_;
  std::unique_ptr<Graph> ahead_;
  cudaGraphExec_t warm_exec_ = nullptr;  // the warm-up's replays (queued; freed at the end)     // the next chunk's first graph, captured ahead
  double last_done_ = 0;             // host time the previous graph was seen finished
  std::vector<double> run_clocks_;   // every clock reading matched to a graph
  SentinelReference reference_;      // the sentinel's verdicts (timing/sentinel.hpp)
  double total_cost_ = 0, done_cost_ = 0;
  EngineTimes times_;
  uint64_t rng_state_;
};

}  // namespace shapescope
