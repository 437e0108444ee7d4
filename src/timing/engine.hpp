// The measurement engine (MEASURE.md "The method"):
//   - jobs are shuffled and cut into chunks of about `chunk_ms` of GPU time per pass;
//   - each pass over a chunk is one CUDA graph, every job in it as
//       L2 flush (memset) -> event -> GEMM -> event
//     with event-record nodes inside the graph, so no host gap is timed;
//   - each pass has its own shuffled order, so drift and neighbour effects do not line up with N;
//     while one pass runs the host captures the next;
//   - after `samples` passes a job whose relative IQR is above `max_noise` (and whose IQR is above
//     1 us, twice the event timer's resolution) is measured again with
//     the other noisy jobs of its chunk (up to `max_extra_rounds` more rounds), then kept and flagged;
//   - the SM clock and clock-event reasons come from a side thread (NVML), matched to each pass by
//     host time; samples taken below 90 % of the run's median clock, or with a power or thermal
//     clock-event reason (software power cap included), mark the job throttled;
//   - a chunk's jobs are reported (and stored) as soon as the chunk is done, so an interrupted
//     sweep loses at most one chunk.
#pragma once
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "backends/backend.hpp"
#include "device/nvml.hpp"
#include "core/records.hpp"
#include "timing/measure_options.hpp"
#include "timing/stats.hpp"

namespace shapescope {


struct TimedJob {
  GemmCall* call = nullptr;
  double estimate_us = 0;  // for chunking and the ETA
};

class Engine {
 public:
  Engine(const MeasureOptions& options, const ClockSampler* clocks,
         const std::atomic<bool>* interrupted);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  using DoneFn = std::function<void(size_t job, const TimingStats& timing)>;
  using ProgressFn = std::function<void(double fraction)>;
  // Measures every job; `done` is called for each job of a chunk when the chunk is finished.
  // Returns false when interrupted (finished chunks were reported; the chunk in flight is dropped).
  bool run(const std::vector<TimedJob>& jobs, const DoneFn& done, const ProgressFn& progress);

  // Median SM clock over the whole run so far (0 when unknown).
  double median_clock_mhz() const;

 private:
  struct Pool;
  struct Pass;
  struct JobSamples;
  cudaGraphExec_t capture(const std::vector<TimedJob>& jobs, const std::vector<size_t>& chunk,
                          const std::vector<size_t>& order, Pool& pool);
  bool run_round(const std::vector<TimedJob>& jobs, const std::vector<size_t>& chunk,
                 std::vector<JobSamples>& samples, double chunk_cost, double total_cost,
                 double& done_cost, const ProgressFn& progress);
  void warm_up(const std::vector<TimedJob>& jobs, const std::vector<size_t>& chunk);
  TimingStats finish(const JobSamples& samples);
  // Relative IQR above max_noise, and an absolute spread above the event timer's resolution.
  bool is_noisy(const SampleStats& stats) const;

  MeasureOptions options_;
  const ClockSampler* clocks_;
  const std::atomic<bool>* interrupted_;
  cudaStream_t stream_ = nullptr;
  cudaStream_t capture_stream_ = nullptr;
  std::vector<Pool> pools_;
  std::vector<double> run_clocks_;  // every clock reading matched to a pass
  uint64_t rng_state_;
};

}  // namespace shapescope
