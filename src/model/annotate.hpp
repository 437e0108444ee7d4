// The annotations of DESIGN.md "Definitions", computed from what a point recorded: its problem, the
// kernels CUPTI saw, cuBLASLt's config, its time; plus the GPU's limits and peak rates. Pure
// functions of stored facts, so a view on a machine without a GPU computes the same as the sweep
// that measured the point. Pure C++.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/alignment.hpp"
#include "model/device_profile.hpp"
#include "model/kernel_name.hpp"
#include "model/tiles.hpp"
#include "core/records.hpp"

namespace shapescope {

// Bumped whenever a definition below changes, so that stored annotations are recomputed.
constexpr int kModelVersion = 1;

// A peak rate with where it came from.
struct Peak {
  double value = 0;     // TFLOP/s or GB/s; 0 when unknown
  std::string source;   // "measured 2026-11-21T05:35:04Z" or "vendor datasheet (NVIDIA H200 SXM 141GB)"
  bool measured = false;
  std::optional<double> clock_mhz;  // SM clock the calibration ran at, where it recorded one
};

// The SM clock a calibration ran at, as its detail records it ("..., SM clock 1500 MHz"); a point's
// % of peak scales the peak to the point's own clock.
std::optional<double> calibration_clock(const Calibration& calibration);

// The GPU as the model sees it: counts and limits, and peak rates (measured where calibrated).
struct ModelGpu {
  std::string name;
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  std::optional<SmLimits> limits;
  const GpuProfile* profile = nullptr;    // vendor figures; nullptr for a GPU the table lacks
  std::vector<Calibration> calibrations;  // from `info --calibrate`

  Peak peak_tflops(DType dtype) const;
  Peak peak_bandwidth() const;
};
// The GPU a stored point ran on (limits from its compute capability), with its calibrations.
ModelGpu model_gpu(const DeviceContext& device, std::vector<Calibration> calibrations = {});
ModelGpu model_gpu(const GpuProfile& profile);

// The roof that bounds a GEMM at its intensity: bandwidth below the ridge, compute above it; unknown
// without both peaks.
enum class RoofBound { kUnknown, kMemory, kCompute };
std::string_view to_string(RoofBound bound);  // "", "memory", "compute": the annotations' bound column

struct Roofline {
  double flops = 0;
  double min_bytes = 0;       // (M*K + K*N) * input size + M*N * output size, times batch
  double intensity = 0;       // FLOP per byte
  Peak peak_tflops, bandwidth_gbs;
  double ridge = 0;           // intensity where the roofs meet; 0 when a peak is unknown
  RoofBound bound = RoofBound::kUnknown;
  double attainable_tflops = 0;  // min(peak, intensity x bandwidth)
  std::optional<double> tflops;  // measured
  std::optional<double> pct_peak;  // measured / peak compute
  std::optional<double> pct_roof;  // measured / attainable
};
// With the point's SM clock and a calibration's, the compute peak is scaled to the point's clock:
// tensor-core throughput is proportional to it, and a long calibration GEMM runs power-capped
// (1500 MHz on an H200) while a short sweep point runs at up to 1980 MHz.
Roofline roofline_of(const Problem& problem, const ModelGpu& gpu, std::optional<double> median_us,
                     std::optional<double> sm_clock_mhz = std::nullopt);

// Whether a backend's kernels see the problem column-major (cuBLAS computes C^T = B^T A^T, so its
// kernels' "m" is the user's N): their tiles are swapped into the user's frame.
bool library_frame_is_column_major(BackendKind kind);

struct Annotation {
  Alignment alignment;

  // The kernel that did the work: the longest non-auxiliary one (index into the point's kernels).
  int main_kernel = -1;
  KernelTile parsed;          // what its name says
  std::string tile_source;    // "cuBLASLt config", "kernel name"; "" when the tile is unknown
  int64_t splits = 1;         // split-K slices
  std::string split_source;   // "cuBLASLt config", "launched grid (z)", "reduction kernel (slices unknown)", ""

  TileGrid grid;              // in the user's frame; tiles == 0 when the tile is unknown
  // A grouped call: each group's tile grid, in group order; `grid` is then their sum (tiles over
  // every group, tiles_m = tiles_n = 0, efficiency over all of them), and the waves are the whole
  // group's tiles over the slots. Empty for an ordinary problem.
  std::vector<TileGrid> group_grids;
  int64_t main_kernels = 0;   // kernels the call launched that are not helpers (a library may run a group per kernel)
  int64_t launched_ctas = 0;  // the main kernel's grid
  int cluster_size = 1;
  Occupancy occupancy;
  int64_t data_parallel_slots = 0;
  bool persistent = false;    // the grid loops over the tiles: slots = its grid
  Waves waves;                // over tiles, or over CTAs when the tile is unknown
  std::string waves_over;     // "tiles", "CTAs", "" (not known)

  Roofline roofline;

  // Among cuBLASLt algorithms timed for the same problem: this one's time over the best's, minus 1
  // (for h0, the heuristic's regret); nullopt when fewer than two were timed.
  std::optional<double> regret;
  std::string best_algo;
};

// `ours`: the tiling of the "custom" point's variant (nullptr for the libraries' points).
Annotation annotate(const StoredPoint& point, const ModelGpu& gpu, const OwnKernelTiling* ours = nullptr);
// Fills regret and best_algo over every group of points with the same device, problem and mode.
void add_regret(const std::vector<StoredPoint>& points, std::vector<Annotation>& annotations);

// The tile grid of a problem for a tile along the user's M x N; a grouped call's is the sum of its
// groups' (each group's in `groups` when given).
TileGrid problem_tile_grid(const Problem& problem, int tile_m, int tile_n, int64_t splits = 1,
                           std::vector<TileGrid>* groups = nullptr);
// Minimum bytes moved: (M*K + K*N) x input size + M*N x output size, times batch; summed over groups.
double min_bytes(const Problem& problem);

// A prediction for a GPU the user may not have: the model's tile grid, waves and roofline for a
// given tile, with a data-parallel grid of `ctas_per_sm` CTAs per SM.
Annotation predict(const Problem& problem, const ModelGpu& gpu, int tile_m, int tile_n,
                   int ctas_per_sm = 1);

}  // namespace shapescope
