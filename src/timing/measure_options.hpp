// How points are timed: samples and the stopping rule, the noise flag, cold or hot L2, the clock
// state, warm-up, chunking and the sentinel. Plain C++ (no CUDA headers), so that requests can be
// built where there is no GPU.
#pragma once
#include <cstdint>

#include "core/states.hpp"
#include "timing/stopping.hpp"

namespace shapescope {

struct MeasureOptions {
  // > 0: exactly this many samples per point (--samples N; explain and pad's --samples), which
  // overrides `rule`; 0: the stopping rule decides.
  int samples = 0;
  StopRule rule;              // --min-samples, --max-samples, --target-noise
  double max_noise = 0.05;    // relative IQR above which a point is flagged noisy (kept, flagged)
  bool hot = false;           // no L2 flush (throughput-like, labelled)
  ClockState clocks = ClockState::kSustained;
  void* flush_buffer = nullptr;
  int64_t flush_bytes = 0;
  double warmup_ms = 300;     // GEMM load before the first sample (sustained state), to settle clocks
  // Sustained state: the warm-up waits for the clock to settle (timing/settle.hpp) where the work is
  // large enough to reach the power limit. Off for a survey whose points are measured again, paired.
  bool settle = true;
  // Burst state: after each graph (at most 10 ms of GPU work) the GPU idles this many times the graph's
  // GPU time (at least 2 ms), so that it never reaches its power limit (--burst-idle): at 1, 12 big GEMMs
  // read the same medians (within 0.2 %) at the same boost clock as at 4 on an H100.
  double burst_idle = 1;
  // Steady-clock seconds (ClockSampler::now()) at which the GPU work that counts as warm-up began
  // (verification and CUPTI traces of stored points run GEMMs too); 0: the warm-up starts with the engine.
  double warm_since = 0;
  double chunk_ms = 100;      // GPU time of one pass over a chunk (estimated)
  int max_chunk_jobs = 512;
  // Sentinel (MEASURE.md step 6, timing/sentinel.hpp): a chunk whose sentinel's median is off the
  // run's reference by more than max(drift_limit, 3 x the sentinel's noise) is measured again, at
  // most max_reruns times; a shift that a re-run confirms moves the reference.
  double drift_limit = 0.05;
  int max_reruns = 2;
  uint64_t seed = 0x5eed;

  // The rule in force: `samples` > 0 makes it fixed.
  StopRule stop_rule() const {
    if (samples <= 0) return rule;
    StopRule fixed = rule;
    fixed.min_samples = fixed.max_samples = samples;
    return fixed;
  }
};

}  // namespace shapescope
