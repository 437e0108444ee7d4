// What the engine reports besides the points: the sentinel's checks and where its time went. Plain
// C++ (no CUDA headers), so that measure.hpp and the report can carry them anywhere.
#pragma once
#include "timing/settle.hpp"
#include <cstddef>
#include <optional>

namespace shapescope {

// What the sentinel of one chunk showed, each time the chunk was checked.
struct SentinelCheck {
  size_t chunk = 0;        // in measurement order
  int attempt = 0;         // 0: the first measurement; 1.. the re-runs
  double sentinel_us = 0;  // its median in this chunk
  std::optional<double> reference_us;  // the run's reference (none for the first chunk finished)
  double drift = 0;        // sentinel / reference - 1
  double limit = 0;        // the |drift| beyond which the chunk goes again
  bool remeasured = false; // this measurement was thrown away and the chunk measured again
  bool kept_drifted = false;  // kept beyond the limit, its points flagged drifted: the shift
                              // persisted through a re-run (then `rebased`), or re-runs ran out
  bool rebased = false;    // the reference moved to this chunk's level (a persistent shift)
};

// Where the engine's wall time went (seconds), for the sweep's phase breakdown.
struct EngineTimes {
  double warmup = 0;     // GEMM load before the first sample (sustained)
  double capture = 0;    // stream capture and instantiation of the graphs (mostly while others run)
  double wait = 0;       // blocked on the GPU
  double callbacks = 0;  // the caller's work per finished chunk (store writes), while graphs run
  double cooldown = 0;   // idle between bursts (burst clocks)
  double launch = 0;     // in cudaGraphLaunch (it blocks while the GPU's queue is full)
  double gpu_busy = 0;   // GPU time of the graphs, first node to last (events in each graph)
  double gpu_gaps = 0;   // GPU idle between one graph's end and the next one's start
  size_t graphs = 0, chunks = 0, reruns = 0;
  SettleFacts settle;    // how the sustained warm-up ended (timing/settle.hpp)
};

}  // namespace shapescope
