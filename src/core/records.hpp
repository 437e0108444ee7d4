// What one measured point carries: its key (what changes the answer) and its results.
// Plain C++: shared by the sweep (writer) and every view (readers).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/backend_kind.hpp"
#include "core/device_context.hpp"
#include "core/problem.hpp"
#include "core/states.hpp"

namespace shapescope {

// Everything that selects a measurement besides the device: which backend, which algorithm of it,
// the problem, whether L2 was flushed before each sample (cold, the default) or not (hot), and the
// clock state the GPU was held in.
struct PointKey {
  BackendKind backend = BackendKind::kCublas;  // the store's backend column (to_string)
  std::string algo;     // "default" (cublas), "h0" = heuristic's first choice, "h1".. the next ones;
                        // our kernels: the variant's key ("05_wgmma_tma:128x256:dp")
  Problem problem;
  bool hot = false;
  ClockState clocks = ClockState::kSustained;
};

struct TimingStats {
  double median_us = 0, min_us = 0, max_us = 0, q1_us = 0, q3_us = 0;
  int samples = 0;
  double noise = 0;          // relative interquartile range: (q3 - q1) / median
  bool noisy = false;        // noise above --max-noise when sampling stopped
  std::optional<double> sm_clock_mhz;  // median SM clock seen while the samples ran (NVML)
  uint64_t throttle_reasons = 0;       // OR of NVML clock-event reasons seen during the samples
  bool throttled = false;    // clock < 90 % of the run's median (and, in the burst state, a
                             // power/thermal reason set)
  StopReason stop = StopReason::kUnrecorded;  // why sampling stopped (timing/stopping.hpp)
  std::optional<double> median_ci;  // relative half-width of the median's confidence interval
  // The sentinel of the point's chunk (MEASURE.md step 6): its median against the run's reference,
  // relative (+0.02: 2 % slower); nullopt where the chunk had no reference to compare with.
  std::optional<double> sentinel_drift;
  int reruns = 0;            // times the point's chunk was measured again because its sentinel drifted
  bool drifted = false;      // still beyond the drift limit after the last re-run (kept, flagged)
};

// cuBLASLt's description of the algorithm it ran (cublasLtMatmulAlgoConfigGetAttribute).
struct LtAlgoConfig {
  int algo_id = -1;
  int tile_id = 0;          std::string tile;     // "256x128", "undefined"
  std::optional<std::pair<int, int>> tile_size;   // M x N where the tile's name gives it (lt_tile_size)
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

// A cuBLASLt tile's name ("256x128") as its M x N; nullopt for "undefined", "id<N>" and anything else.
// Read once where a config comes in: from cuBLASLt (backends/cublaslt_backend.cpp) and from the store.
std::optional<std::pair<int, int>> lt_tile_size(const std::string& name);

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

// The predicate the views use before they compare two measurements: only points of the same clock
// state are compared (a burst point of a large GEMM runs at boost clock, a sustained one at the
// power limit: 10-20 % apart on an H100).
bool same_clock_state(const PointKey& a, const PointKey& b);
// The points measured in `state`, in their order.
std::vector<StoredPoint> with_clock_state(const std::vector<StoredPoint>& points, ClockState state);

// Peak rates measured by `shapescope info --calibrate`.
struct Calibration {
  std::string what;    // "tflops:bf16", "tflops:fp16", ..., "bandwidth"
  double value = 0;    // TFLOP/s, or GB/s (bytes read + written)
  std::string measured_at;
  std::string detail;  // how: "8192x8192x8192 cublas, median of 20"
};

}  // namespace shapescope
