#include "model/annotate.hpp"

#include "core/backend_kind.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>


namespace shapescope {

namespace {

std::string calibration_key(DType dtype) { return fmt::format("tflops:{}", to_string(dtype)); }

std::optional<Calibration> find_calibration(const std::vector<Calibration>& calibrations,
                                            const std::string& what) {
  for (const Calibration& c : calibrations) {
    if (c.what == what && c.value > 0) return c;
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(RoofBound bound) {
  switch (bound) {
    case RoofBound::kUnknown: return "";
    case RoofBound::kMemory: return "memory";
    case RoofBound::kCompute: return "compute";
  }
  return "";
}

namespace {

// The kernel that did the work: the longest one that is not a helper (split-K reduction).
int main_kernel_of(const std::vector<KernelRecord>& kernels, const std::vector<KernelTile>& parsed) {
  int best = -1;
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (parsed[i].auxiliary) continue;
    if (best < 0 || kernels[i].duration_us > kernels[size_t(best)].duration_us) best = int(i);
  }
  if (best < 0 && !kernels.empty()) best = 0;
  return best;
}

// Kernel families whose grids are persistent (a CTA loops over tiles) when the grid fits at once:
// cuBLAS's nvjet kernels launch at most one CTA per SM whatever the size (132 CTAs for 4096^3 on an
// H200), and CUTLASS 3 warp-specialized cooperative/ping-pong kernels use a persistent tile scheduler.
bool persistent_family(const KernelTile& tile) {
  if (tile.family == "nvjet") return true;
  if (tile.family == "shapescope") return tile.schedule == "persistent" || tile.schedule == "streamk";
  return tile.family == "cutlass3x" && tile.schedule.find("warpspecialized") != std::string::npos;
}

}  // namespace

// The SM clock a calibration recorded in its detail ("..., SM clock 1500 MHz").
std::optional<double> calibration_clock(const Calibration& c) {
  constexpr std::string_view kMarker = "SM clock ";
  const size_t at = c.detail.find(kMarker);
  if (at == std::string::npos) return std::nullopt;
  double mhz = 0;
  size_t i = at + kMarker.size();
  const size_t start = i;
  for (; i < c.detail.size() && std::isdigit(static_cast<unsigned char>(c.detail[i])); ++i)
    mhz = mhz * 10 + (c.detail[i] - '0');
  if (i == start || mhz <= 0) return std::nullopt;
  return mhz;
}

Peak ModelGpu::peak_tflops(DType dtype) const {
  if (auto c = find_calibration(calibrations, calibration_key(dtype))) {
    return {c->value, "measured " + c->measured_at, true, calibration_clock(*c)};
  }
  if (profile && profile->vendor_tflops(dtype) > 0) {
    return {profile->vendor_tflops(dtype), "vendor datasheet (" + profile->name + ")", false, std::nullopt};
  }
  return {};
}

Peak ModelGpu::peak_bandwidth() const {
  if (auto c = find_calibration(calibrations, "bandwidth")) {
    return {c->value, "measured " + c->measured_at, true, calibration_clock(*c)};
  }
  if (profile && profile->bandwidth_gbs > 0) {
    return {profile->bandwidth_gbs, "vendor datasheet (" + profile->name + ")", false, std::nullopt};
  }
  return {};
}

namespace {
ModelGpu model_gpu_of(std::string name, int sm_count, int cc_major, int cc_minor) {
  ModelGpu gpu;
  gpu.name = std::move(name);
  gpu.sm_count = sm_count;
  gpu.cc_major = cc_major;
  gpu.cc_minor = cc_minor;
  gpu.limits = sm_limits(cc_major, cc_minor);
  return gpu;
}
}  // namespace

ModelGpu model_gpu(const DeviceContext& device, std::vector<Calibration> calibrations) {
  ModelGpu gpu = model_gpu_of(device.gpu_name, device.sm_count, device.cc_major, device.cc_minor);
  // A live device reports its own limits; stored points do not carry them (the table fills in).
  if (gpu.limits && device.max_smem_per_sm > 0) gpu.limits->smem_per_sm = device.max_smem_per_sm;
  if (gpu.limits && device.max_regs_per_sm > 0) gpu.limits->regs_per_sm = device.max_regs_per_sm;
  if (gpu.limits && device.max_threads_per_sm > 0) gpu.limits->max_threads_per_sm = device.max_threads_per_sm;
  gpu.profile = profile_for_device_name(device.gpu_name);
  gpu.calibrations = std::move(calibrations);
  return gpu;
}

ModelGpu model_gpu(const GpuProfile& profile) {
  ModelGpu gpu = model_gpu_of(profile.name, profile.sm_count, profile.cc_major, profile.cc_minor);
  gpu.profile = &profile;
  return gpu;
}

double min_bytes(const Problem& p) {
  if (p.grouped()) {
    double total = 0;
    for (size_t g = 0; g < p.groups.size(); ++g) total += min_bytes(p.group(g));
    return total;
  }
  return double(p.batch) * (double(input_bytes(p.dtype)) * (double(p.m) * p.k + double(p.k) * p.n) +
                            double(output_bytes(p.dtype)) * double(p.m) * p.n);
}

TileGrid problem_tile_grid(const Problem& p, int tile_m, int tile_n, int64_t splits, std::vector<TileGrid>* groups) {
  if (!p.grouped()) return tile_grid(p.m, p.n, p.batch, tile_m, tile_n, splits);
  TileGrid sum;
  sum.tile_m = tile_m;
  sum.tile_n = tile_n;
  sum.splits = splits;
  double useful = 0, covered = 0;
  for (const GroupShape& s : p.groups) {
    const TileGrid g = tile_grid(s.m, s.n, 1, tile_m, tile_n, splits);
    sum.tiles += g.tiles;
    useful += double(s.m) * double(s.n);
    covered += double(g.tiles_m * tile_m) * double(g.tiles_n * tile_n);
    if (groups) groups->push_back(g);
  }
  sum.efficiency = covered > 0 ? useful / covered : 0;
  return sum;
}

Roofline roofline_of(const Problem& p, const ModelGpu& gpu, std::optional<double> median_us,
                     std::optional<double> sm_clock_mhz) {
  Roofline r;
  r.flops = p.flops();
  r.min_bytes = min_bytes(p);
  r.intensity = r.min_bytes > 0 ? r.flops / r.min_bytes : 0;
  r.peak_tflops = gpu.peak_tflops(p.dtype);
  r.bandwidth_gbs = gpu.peak_bandwidth();
  const std::optional<double> peak_clock = r.peak_tflops.clock_mhz;
  if (r.peak_tflops.value > 0 && peak_clock && sm_clock_mhz && *sm_clock_mhz > 0 &&
      std::fabs(*sm_clock_mhz - *peak_clock) > 1) {
    r.peak_tflops.value *= *sm_clock_mhz / *peak_clock;
    r.peak_tflops.source += fmt::format(" at {:.0f} MHz, scaled to this point's {:.0f} MHz", *peak_clock, *sm_clock_mhz);
    r.peak_tflops.clock_mhz = sm_clock_mhz;
  }
  if (r.peak_tflops.value > 0 && r.bandwidth_gbs.value > 0) {
    // TFLOP/s over GB/s is kFLOP per byte.
    r.ridge = r.peak_tflops.value * 1e3 / r.bandwidth_gbs.value;
    r.bound = r.intensity < r.ridge ? RoofBound::kMemory : RoofBound::kCompute;
    r.attainable_tflops = std::min(r.peak_tflops.value, r.intensity * r.bandwidth_gbs.value / 1e3);
  }
  if (median_us && *median_us > 0 && std::isfinite(*median_us)) {
    r.tflops = r.flops / *median_us / 1e6;
    if (r.peak_tflops.value > 0) r.pct_peak = *r.tflops / r.peak_tflops.value;
    if (r.attainable_tflops > 0) r.pct_roof = *r.tflops / r.attainable_tflops;
  }
  return r;
}

bool library_frame_is_column_major(BackendKind kind) {
  return kind == BackendKind::kCublas || kind == BackendKind::kCublasLt || kind == BackendKind::kCublasGrouped;
}

namespace {

// The tile, in the kernel's frame: our registry for our kernels (exact), cuBLASLt's own config,
// else what the name says; a.parsed and a.tile_source say which.
std::optional<std::pair<int, int>> tile_of(Annotation& a, const StoredPoint& point, const OwnKernelTiling* ours) {
  std::optional<std::pair<int, int>> tile;
  if (ours) {
    a.parsed.known = true;
    a.parsed.family = "shapescope";
    a.parsed.tile_m = ours->bm;
    a.parsed.tile_n = ours->bn;
    a.parsed.tile_k = ours->bk;
    a.parsed.schedule = ours->schedule;
    a.parsed.core = ours->key;
    tile = std::make_pair(ours->bm, ours->bn);
  }
  if (point.result.lt && !tile) tile = point.result.lt->tile_size;
  if (ours) {
    a.tile_source = "kernel registry";
  } else if (tile) {
    a.tile_source = "cuBLASLt config";
  } else if (a.parsed.known && a.parsed.tile_m > 0 && a.parsed.tile_n > 0) {
    tile = std::make_pair(a.parsed.tile_m, a.parsed.tile_n);
    a.tile_source = "kernel name";
  }
  return tile;
}

// Split-K: cuBLASLt says so; CUTLASS 2 kernels put the slices in grid z (batch shares it).
// Returns whether a split-K reduction kernel ran.
bool add_split_k(Annotation& a, const StoredPoint& point, const KernelRecord& kernel,
                 const std::vector<KernelTile>& names) {
  const Problem& p = point.key.problem;
  const bool has_reduction = std::any_of(names.begin(), names.end(),
                                         [](const KernelTile& k) { return k.family == "splitk_reduce"; });
  if (point.result.lt && point.result.lt->splitk > 1) {
    a.splits = point.result.lt->splitk;
    a.split_source = "cuBLASLt config";
  } else if (a.parsed.family == "cutlass2" && p.batch > 0 && kernel.grid_z > uint32_t(p.batch) &&
             kernel.grid_z % uint32_t(p.batch) == 0) {
    a.splits = kernel.grid_z / p.batch;
    a.split_source = "launched grid (z)";
  } else if (has_reduction || a.parsed.split_k) {
    a.split_source = has_reduction ? "reduction kernel (slices unknown)" : "kernel name (slices unknown)";
  }
  return has_reduction;
}

// The tile grid in the user's frame, and the slices of a split-K kernel that does not state them.
void add_tile_grid(Annotation& a, const StoredPoint& point, std::pair<int, int> tile, bool has_reduction) {
  const Problem& p = point.key.problem;
  // The library's kernels see the problem column-major (their m is the user's N). Some compute
  // the transposed problem instead (cuBLAS's nvjet "_TNT" kernel for 4096x1x4096 nn): the launch
  // grid tells, when it equals the tile count in one orientation only. Split-K kernels whose
  // slice count is not stated launch tiles x slices CTAs.
  const bool column_major = library_frame_is_column_major(point.key.backend);
  const TileGrid native = problem_tile_grid(p, column_major ? tile.second : tile.first,
                                            column_major ? tile.first : tile.second, a.splits);
  const TileGrid swapped = problem_tile_grid(p, column_major ? tile.first : tile.second,
                                             column_major ? tile.second : tile.first, a.splits);
  const bool unknown_slices = a.splits == 1 && (a.parsed.split_k || has_reduction);
  auto fits = [&](const TileGrid& g) {
    if (g.tiles <= 0) return false;
    return unknown_slices ? a.launched_ctas >= g.tiles && a.launched_ctas % g.tiles == 0 : a.launched_ctas == g.tiles;
  };
  a.grid = native;
  if (!fits(native) && fits(swapped)) {
    a.grid = swapped;
    a.tile_source += ", orientation from the launch grid";
  }
  if (unknown_slices && fits(a.grid) && a.launched_ctas > a.grid.tiles) {
    a.splits = a.launched_ctas / a.grid.tiles;
    a.split_source = "launch grid / tiles";
    a.grid = problem_tile_grid(p, a.grid.tile_m, a.grid.tile_n, a.splits);
  }
  if (p.grouped()) problem_tile_grid(p, a.grid.tile_m, a.grid.tile_n, a.splits, &a.group_grids);
}

// Slots (data-parallel, or a persistent grid's own CTAs) and the waves over tiles or CTAs.
void add_slots_and_waves(Annotation& a, const ModelGpu& gpu, const KernelRecord& kernel) {
  if (gpu.limits && gpu.sm_count > 0) {
    CtaResources cta;
    cta.threads = int(kernel.block_x * kernel.block_y * kernel.block_z);
    cta.registers_per_thread = kernel.registers;
    cta.smem_bytes = kernel.static_smem + kernel.dynamic_smem;
    cta.cluster_size = a.cluster_size;
    a.occupancy = occupancy(*gpu.limits, gpu.limits->regs_per_sm, gpu.limits->smem_per_sm, cta);
    a.data_parallel_slots = data_parallel_slots(gpu.sm_count, a.occupancy, a.cluster_size);
  }
  if (a.data_parallel_slots <= 0 || a.launched_ctas <= 0) return;

  const bool fits = a.launched_ctas <= a.data_parallel_slots;
  a.persistent = fits && (persistent_family(a.parsed) || (a.grid.tiles > 0 && a.launched_ctas < a.grid.tiles));
  const int64_t slots = a.persistent ? a.launched_ctas : a.data_parallel_slots;
  if (a.grid.tiles > 0) {
    a.waves = waves_of(a.grid.tiles, slots);
    a.waves_over = "tiles";
  } else if (!a.persistent) {
    a.waves = waves_of(a.launched_ctas, slots);
    a.waves_over = "CTAs";
  }
}

}  // namespace

Annotation annotate(const StoredPoint& point, const ModelGpu& gpu, const OwnKernelTiling* ours) {
  const Problem& p = point.key.problem;
  Annotation a;
  a.alignment = alignment_of(p);
  a.roofline = roofline_of(p, gpu, point.result.timing.median_us, point.result.timing.sm_clock_mhz);

  // Each launched kernel's name, read once: it picks the main kernel and shows a split-K reduction.
  std::vector<KernelTile> names;
  names.reserve(point.kernels.size());
  for (const KernelRecord& k : point.kernels) names.push_back(parse_kernel_name(k.name));
  a.main_kernel = main_kernel_of(point.kernels, names);
  if (a.main_kernel < 0) return a;
  a.main_kernels = std::count_if(names.begin(), names.end(), [](const KernelTile& k) { return !k.auxiliary; });
  const KernelRecord& kernel = point.kernels[size_t(a.main_kernel)];
  a.parsed = names[size_t(a.main_kernel)];

  const std::optional<std::pair<int, int>> tile = tile_of(a, point, ours);
  a.launched_ctas = int64_t(kernel.grid_x) * kernel.grid_y * kernel.grid_z;
  a.cluster_size = int(std::max(1u, kernel.cluster_x) * std::max(1u, kernel.cluster_y) *
                       std::max(1u, kernel.cluster_z));

  const bool has_reduction = add_split_k(a, point, kernel, names);
  if (tile) add_tile_grid(a, point, *tile, has_reduction);
  add_slots_and_waves(a, gpu, kernel);
  return a;
}

void add_regret(const std::vector<StoredPoint>& points, std::vector<Annotation>& annotations) {
  // Group cuBLASLt points by everything in the key except the algorithm.
  using GroupKey = std::tuple<std::string, std::string, BackendKind, bool>;
  std::map<GroupKey, std::vector<size_t>> groups;
  for (size_t i = 0; i < points.size() && i < annotations.size(); ++i) {
    const StoredPoint& point = points[i];
    if (point.key.backend != BackendKind::kCublasLt || !(point.result.timing.median_us > 0)) continue;
    const Problem& p = point.key.problem;
    const std::string problem_key =
        fmt::format("{} {} {} ld {} {} {} off {} {} {} {}", p.shape_string(), to_string(p.dtype), to_string(p.layout),
                    p.lda, p.ldb, p.ldc, p.off_a, p.off_b, p.off_c, p.dtype == DType::kFp8 ? recipe_text(p.recipe) : "");
    const std::string device_key = point.device.gpu_uuid + " " + point.device.driver + " " + point.device.cublaslt;
    groups[{device_key, problem_key, point.key.backend, point.key.hot}].push_back(i);
  }
  for (const auto& [key, members] : groups) {
    if (members.size() < 2) continue;
    size_t best = members.front();
    for (size_t i : members) {
      if (points[i].result.timing.median_us < points[best].result.timing.median_us) best = i;
    }
    for (size_t i : members) {
      annotations[i].regret = points[i].result.timing.median_us / points[best].result.timing.median_us - 1;
      annotations[i].best_algo = points[best].key.algo;
    }
  }
}

Annotation predict(const Problem& problem, const ModelGpu& gpu, int tile_m, int tile_n, int ctas_per_sm) {
  Annotation a;
  a.alignment = alignment_of(problem);
  a.roofline = roofline_of(problem, gpu, std::nullopt);
  a.tile_source = "--tile";
  a.grid = problem_tile_grid(problem, tile_m, tile_n, 1, &a.group_grids);
  a.occupancy.ctas_per_sm = ctas_per_sm;
  a.occupancy.limiter = "assumed";
  a.data_parallel_slots = int64_t(gpu.sm_count) * ctas_per_sm;
  a.waves = waves_of(a.grid.tiles, a.data_parallel_slots);
  a.waves_over = "tiles";
  return a;
}

}  // namespace shapescope
