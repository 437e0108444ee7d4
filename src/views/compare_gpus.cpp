#include "views/compare_gpus.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "common/error.hpp"
#include "core/backend_kind.hpp"
#include "store/store.hpp"
#include "timing/stats.hpp"
#include "views/annotated.hpp"

namespace shapescope {
namespace {

// A GPU as the store keys it: the card and its software stack.
std::string identity(const DeviceContext& d) {
  return d.gpu_uuid + " " + d.driver + " " + d.cuda_runtime + " " + d.cublas + " " + d.cublaslt;
}

// Names for the GPUs shown: the GPU's name, with the start of its UUID (and the cuBLAS version)
// where names repeat.
template <typename Row, typename Device>
void label_gpus(std::vector<Row>& rows, const Device& device_of) {
  std::map<std::string, size_t> count;
  for (const Row& r : rows) count[device_of(r).gpu_name]++;
  for (Row& r : rows) {
    const DeviceContext& d = device_of(r);
    r.gpu = d.gpu_name;
    if (count[d.gpu_name] > 1) r.gpu += fmt::format(" ({}, cuBLAS {})", d.gpu_uuid.substr(0, 12), d.cublas);
  }
}

std::map<std::string, std::vector<StoredPoint>> by_gpu(std::vector<StoredPoint> points) {
  std::map<std::string, std::vector<StoredPoint>> groups;
  for (StoredPoint& p : points) groups[identity(p.device)].push_back(std::move(p));
  return groups;
}

}  // namespace

GpuComparison compare_gpus(const std::vector<std::string>& stores, const Problem& target, const BackendSpec& spec) {
  GpuComparison c;
  c.target = target;
  // The store's backend and algo: our kernels' one variant, cuBLASLt's first heuristic choice.
  c.backend = spec.kind;
  c.algo = spec.algo();
  const BackendKind backend = c.backend;
  const std::string& algo = c.algo;
  for (const std::string& path : stores) {
    const Store store(path, Store::Access::kReadOnly);
    std::map<std::string, StoredPoint> newest;  // by GPU
    for (StoredPoint& p : store.load_all()) {
      if (p.key.hot || p.key.backend != backend || p.key.algo != algo || !(p.key.problem == target)) continue;
      auto [at, inserted] = newest.emplace(identity(p.device), p);
      if (!inserted && p.result.measured_at > at->second.result.measured_at) at->second = std::move(p);
    }
    if (newest.empty()) {
      c.missing.push_back(path);
      continue;
    }
    std::vector<StoredPoint> points;
    for (auto& [gpu, point] : newest) points.push_back(std::move(point));
    std::vector<Annotation> annotations = annotate_points(store, points);
    std::vector<GpuRow> rows;
    for (size_t i = 0; i < points.size(); ++i) rows.push_back({"", path, std::move(points[i]), std::move(annotations[i])});
    std::stable_sort(rows.begin(), rows.end(), [](const GpuRow& a, const GpuRow& b) {
      return a.point.result.timing.median_us < b.point.result.timing.median_us;
    });
    for (GpuRow& r : rows) c.rows.push_back(std::move(r));
  }
  if (c.rows.empty())
    throw Error(ExitCode::kNoGpu, fmt::format("--db: no store holds {} {} {} ({} {}): {}", target.shape_string(),
                                              to_string(target.dtype), to_string(target.layout), to_string(backend), algo,
                                              fmt::join(stores, ", ")));
  label_gpus(c.rows, [](const GpuRow& r) -> const DeviceContext& { return r.point.device; });
  return c;
}

std::vector<GpuSeries> gpu_series(const std::vector<std::string>& stores, const PlotFilter& filter,
                                  const std::string& command) {
  std::vector<GpuSeries> series;
  std::optional<Error> first_refusal;
  for (const std::string& path : stores) {
    const Store store(path, Store::Access::kReadOnly);
    for (auto& [gpu, points] : by_gpu(store.load_all())) {
      GpuSeries s;
      s.store = path;
      // A GPU none of whose points match is left out; its refusal is said when no GPU matches.
      try {
        s.selection = select_points(points, path, filter, Algos::kOne, command, store);
      } catch (const Error& e) {
        if (e.code() != ExitCode::kUsage) throw;
        if (!first_refusal) first_refusal = e;
        continue;
      }
      std::vector<double> clocks;
      for (const StoredPoint& p : s.selection.points)
        if (p.result.timing.sm_clock_mhz) clocks.push_back(*p.result.timing.sm_clock_mhz);
      if (!clocks.empty()) s.clock_mhz = median(clocks);
      series.push_back(std::move(s));
    }
  }
  if (series.empty() && first_refusal) throw *first_refusal;
  // One picture compares GPUs on the same kind of point.
  for (const GpuSeries& s : series) {
    const PlotContext& a = series.front().selection.context;
    const PlotContext& b = s.selection.context;
    if (a.dtype != b.dtype || a.layout != b.layout)
      throw usage_error(fmt::format("--dtype/--layout: the GPUs' points differ ({} {} in '{}', {} {} in '{}'); choose one "
                                    "with --dtype and --layout",
                                    to_string(a.dtype), to_string(a.layout), series.front().store, to_string(b.dtype),
                                    to_string(b.layout), s.store));
  }
  if (series.size() < 2)
    throw usage_error(fmt::format("--db: {} with several stores draws their GPUs side by side, and the selection ({}) "
                                  "finds one GPU ({}); give stores of other GPUs, or one --db to compare backends",
                                  command, filter.given(), series.empty() ? "none" : series.front().selection.context.gpu_name));
  label_gpus(series, [](const GpuSeries& s) -> const DeviceContext& { return s.selection.points.front().device; });
  return series;
}

}  // namespace shapescope
