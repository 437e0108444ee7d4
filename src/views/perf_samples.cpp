#include "views/perf_samples.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "common/error.hpp"
#include "timing/stats.hpp"
#include "views/annotated.hpp"

namespace shapescope {

namespace {

// The call a user gets without choosing: cuBLAS's default algorithm; for fp8, which cuBLAS has no call
// for, cuBLASLt's heuristic's first choice under the tensor recipe (one scale per operand; the model
// and its samples file name no recipe).
bool default_call(const PointKey& key) {
  if (key.problem.dtype == DType::kFp8)
    return key.backend == BackendKind::kCublasLt && key.algo == default_algo(BackendKind::kCublasLt) &&
           key.problem.recipe == Fp8Recipe{};
  return key.backend == BackendKind::kCublas && key.algo == default_algo(BackendKind::kCublas);
}

bool fits(const StoredPoint& p) {
  return default_call(p.key) && !p.key.hot && !p.key.problem.grouped() && p.key.problem.cast == CastOperand::kNone &&
         p.result.timing.median_us > 0;
}

}  // namespace

PerfSamples perf_samples(const Store& store, const std::string& db) {
  const std::vector<StoredPoint> all = store.load_all();
  std::set<std::string> gpus;
  for (const StoredPoint& p : all) gpus.insert(p.device.gpu_name);
  if (gpus.size() > 1)
    throw usage_error(fmt::format("calibrate-model: the store '{}' holds points of {} GPUs ({}): a model is one GPU's; "
                                  "export one GPU's points into a store of its own",
                                  db, gpus.size(), fmt::join(gpus, ", ")));
  std::vector<StoredPoint> points;
  PerfSamples out;
  for (const StoredPoint& p : all) (fits(p) ? points.push_back(p) : void(++out.skipped));
  if (points.empty())
    throw usage_error(fmt::format("calibrate-model: the store '{}' holds no cold-L2 point of cuBLAS's default "
                                  "algorithm, nor an fp8 one of cuBLASLt's (what the model is fitted on)",
                                  db));
  const std::vector<Annotation> notes = annotate_points(store, points);
  std::vector<double> clocks;
  for (size_t i = 0; i < points.size(); ++i) {
    const Annotation& a = notes[i];
    PerfSample s{points[i].key.problem, points[i].result.timing.median_us};
    if (a.waves_over == "tiles" && a.grid.tile_m > 0) {
      s.tile_m = a.grid.tile_m, s.tile_n = a.grid.tile_n, s.splits = std::max<int64_t>(a.splits, 1);
      s.slots = a.waves.slots;
    }
    out.set.samples.push_back(s);
    if (points[i].result.timing.sm_clock_mhz) clocks.push_back(*points[i].result.timing.sm_clock_mhz);
  }
  const DeviceContext& d = points.front().device;
  out.set.gpu = d.gpu_name;
  out.set.sm_count = d.sm_count;
  out.set.driver = d.driver;
  out.set.cublas = d.cublas;
  out.set.clock_mhz = middle_value(clocks);
  return out;
}

}  // namespace shapescope
