// What one measured point carries: its key (what changes the answer) and its results.
// Plain C++: shared by the sweep (writer) and every view (readers).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/device_context.hpp"
#include "core/problem.hpp"

namespace shapescope {

// Everything that selects a measurement besides the device: which backend, which algorithm of it,
// the problem, and whether L2 was flushed before each sample (cold, the default) or not (hot).
struct PointKey {
  std::string backend;  // "cublas", "cublaslt"
  std::string algo;     // "default" (cublas), "h0" = heuristic's first choice, "h1".. the next ones
  Problem problem;
  bool hot = false;
};

struct TimingStats {
  double median_us = 0, min_us = 0, max_us = 0, q1_us = 0, q3_us = 0;
  int samples = 0;
  double noise = 0;          // relative interquartile range: (q3 - q1) / median
  bool noisy = false;        // noise stayed above --max-noise after the re-measurement cap
  std::optional<double> sm_clock_mhz;  // median SM clock seen while the samples ran (NVML)
  uint64_t throttle_reasons = 0;       // OR of NVML clock-event reasons seen during the samples
  bool throttled = false;    // clock < 90 % of the run's median, or a power/thermal reason set
};

// cuBLASLt's description of the algorithm it ran (cublasLtMatmulAlgoConfigGetAttribute).
struct LtAlgoConfig {
  int algo_id = -1;
  int tile_id = 0;          std::string tile;     // "256x128", "undefined"
  int stages_id = 0;        std::string stages;   // "64x4", "undefined"
  int splitk = 1;
  int reduction_scheme = 0; std::string reduction;  // "none", "inplace", "compute", "output"
  int swizzle = 0;
  int custom_option = 0;
  int cluster_shape_id = 0; std::string cluster;  // "1x2x1", "auto"
  int inner_shape_id = 0;
  float waves_count = 0;    // the heuristic's own wave estimate
  int64_t workspace_bytes = 0;
};

// One kernel that a point's call launched, as CUPTI saw it.
struct KernelRecord {
  std::string name;     // demangled
  uint32_t grid_x = 0, grid_y = 0, grid_z = 0;
  uint32_t block_x = 0, block_y = 0, block_z = 0;
  uint32_t cluster_x = 0, cluster_y = 0, cluster_z = 0;
  int registers = 0;
  int64_t static_smem = 0, dynamic_smem = 0;
  double duration_us = 0;
};

// One of our own kernels' tiling, as kernels/registry.hpp describes the variant: a "custom" point's
// algo is the variant's key, and the model takes its tile from here rather than from a kernel name.
// The views look it up, so that the model (pure C++) does not include the kernel registry.
struct OwnKernelTiling {
  int bm = 0, bn = 0, bk = 0;
  std::string schedule;  // "dp", "persistent", "streamk"
  std::string key;       // "04_mma_pipelined:128x128:dp"
};

struct PointResult {
  TimingStats timing;
  std::optional<LtAlgoConfig> lt;
  std::string measured_at;  // ISO 8601 UTC
  std::string command;      // the command line that re-measures this point
};

struct StoredPoint {
  int64_t id = 0;
  DeviceContext device;
  PointKey key;
  PointResult result;
  bool annotated = false;
  std::vector<KernelRecord> kernels;  // in launch order
};

// Peak rates measured by `shapescope info --calibrate`.
struct Calibration {
  std::string what;    // "tflops:bf16", "tflops:fp16", ..., "bandwidth"
  double value = 0;    // TFLOP/s, or GB/s (bytes read + written)
  std::string measured_at;
  std::string detail;  // how: "8192x8192x8192 cublas, median of 20"
};

}  // namespace shapescope
