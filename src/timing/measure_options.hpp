// How points are timed: samples, the noise rule, cold or hot L2, warm-up, chunking. Plain C++ (no
// CUDA headers), so that requests can be built where there is no GPU.
#pragma once
#include <cstdint>

namespace shapescope {

struct MeasureOptions {
  int samples = 10;           // passes per job (samples per job) in the first round
  double max_noise = 0.05;    // relative IQR above which a job is measured again
  int max_extra_rounds = 2;   // re-measurement rounds for noisy jobs before they are flagged
  bool hot = false;           // no L2 flush (throughput-like, labelled)
  void* flush_buffer = nullptr;
  int64_t flush_bytes = 0;
  double warmup_ms = 300;     // GEMMs run before the first sample, to settle clocks
  double chunk_ms = 100;      // GPU time of one pass over a chunk (estimated)
  int max_chunk_jobs = 512;
  uint64_t seed = 0x5eed;
};

}  // namespace shapescope
