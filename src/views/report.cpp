#include "views/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "backends/variants.hpp"
#include "common/error.hpp"
#include "core/backend_kind.hpp"
#include "model/explain.hpp"
#include "store/store.hpp"
#include "timing/stats.hpp"
#include "views/explain.hpp"

namespace shapescope {
namespace {

// explain's one-line answer for a stored point, from the store alone. The one place the report
// calls explain: when explain's view changes, only this adapter follows.
struct ExplainLine {
  std::optional<ExplainReport> report;
  std::string error;
};

ExplainLine explain_line(const std::string& db, const StoredPoint& point, const StoreRead& read) {
  const Problem& p = point.key.problem;
  ExplainRequest request;
  const bool square = p.m == p.n && p.n == p.k;
  request.shape = ShapeArg{p.m, p.n, p.k, square};
  request.shape_text = square ? std::to_string(p.n) : fmt::format("{}x{}x{}", p.m, p.n, p.k);
  request.form.dtype = p.dtype;
  request.form.layout = p.layout;
  request.form.batch = p.batch;
  request.form.ld_pad = p.lda - p.a_cols();
  request.form.offset = p.off_a;
  request.db = db;
  ExplainLine line;
  // Our kernels: the point's variant (its algo is the variant's key) is the selection.
  request.backend = BackendSpec(point.key.backend);
  if (point.key.backend == BackendKind::kCustom) {
    const std::optional<BackendSpec> ours = stored_variant_spec(point.key.algo);
    if (!ours) {
      line.error = fmt::format("our kernel variant '{}' is not in this build's registry", point.key.algo);
      return line;
    }
    request.backend = *ours;
  }
  try {
    check_form(request.form);
    const Problem target = form_problem(request.form, p.m, p.n, p.k);
    line.report = explain_without_gpu(request, profile_for_device_name(point.device.gpu_name), target, &read);
  } catch (const Error& e) {
    line.error = e.what();
  }
  return line;
}

std::string main_kernel_of(const StoredPoint& p, const Annotation& a) {
  return a.main_kernel >= 0 ? short_kernel_name(p.kernels[size_t(a.main_kernel)].name) : std::string("?");
}

double time_of(const StoredPoint& p) { return p.result.timing.median_us; }

// Problems as map keys (Problem has no order of its own).
using ProblemKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int, int, int64_t, int64_t, int64_t, int64_t,
                              int64_t, int64_t>;
ProblemKey key_of(const Problem& p) {
  return {p.m, p.n, p.k, p.batch, int(p.dtype), int(p.layout), p.lda, p.ldb, p.ldc, p.off_a, p.off_b, p.off_c};
}

// The points of one (backend, algo) pair, with their annotations and the selection's context.
Selection series_of(const Selection& all, BackendKind backend, const std::string& algo) {
  Selection s;
  s.context = all.context;
  for (size_t i = 0; i < all.points.size(); ++i) {
    if (all.points[i].key.backend != backend || all.points[i].key.algo != algo) continue;
    s.points.push_back(all.points[i]);
    s.annotations.push_back(all.annotations[i]);
  }
  return s;
}

// cuBLAS's default, else cuBLASLt's first choice, else the pair with the most points (of equal
// counts, the first by the backend's name).
std::pair<BackendKind, std::string> main_pair(const Selection& all) {
  std::map<std::pair<std::string, std::string>, std::pair<size_t, BackendKind>> counts;  // by name: count, kind
  for (const StoredPoint& p : all.points) {
    auto& [count, kind] = counts[{std::string(to_string(p.key.backend)), p.key.algo}];
    ++count;
    kind = p.key.backend;
  }
  for (BackendKind kind : {BackendKind::kCublas, BackendKind::kCublasLt})
    if (counts.count({std::string(to_string(kind)), std::string(default_algo(kind))}))
      return {kind, std::string(default_algo(kind))};
  const auto most = std::max_element(counts.begin(), counts.end(),
                                     [](const auto& a, const auto& b) { return a.second.first < b.second.first; });
  return {most->second.second, most->first.second};
}

std::optional<double> quantile(std::vector<double> values, double q) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  return values[size_t(std::lround(q * double(values.size() - 1)))];
}

MeasuredHow measured_how(const Selection& all, const Store& store) {
  MeasuredHow h;
  h.points = all.points.size();
  h.hot = all.context.hot;
  std::vector<double> samples, clocks, noise;
  std::map<std::string, std::set<std::string>> algos;  // by the backend's name, as the page lists them
  std::map<std::string, std::pair<BackendKind, size_t>> points;
  for (const StoredPoint& p : all.points) {
    const TimingStats& t = p.result.timing;
    samples.push_back(double(t.samples));
    noise.push_back(t.noise);
    if (t.sm_clock_mhz) clocks.push_back(*t.sm_clock_mhz);
    h.throttled += t.throttled ? 1 : 0;
    h.noisy += t.noisy ? 1 : 0;
    const std::string backend(to_string(p.key.backend));
    algos[backend].insert(p.key.algo);
    auto& [kind, count] = points[backend];
    kind = p.key.backend;
    ++count;
    if (h.first.empty() || p.result.measured_at < h.first) h.first = p.result.measured_at;
    if (h.last.empty() || p.result.measured_at > h.last) h.last = p.result.measured_at;
  }
  h.samples_min = int(*quantile(samples, 0));
  h.samples_max = int(*quantile(samples, 1));
  h.samples_median = median(samples);
  h.with_clock = clocks.size();
  h.clock_min = quantile(clocks, 0);
  h.clock_max = quantile(clocks, 1);
  if (!clocks.empty()) h.clock_median = median(clocks);
  h.noise_median = median(noise);
  h.noise_p95 = *quantile(noise, 0.95);
  for (const auto& [name, counted] : points) h.backends.push_back({counted.first, algos[name].size(), counted.second});
  h.calibrations = store.load_calibration(all.points.back().device);
  return h;
}

}  // namespace

std::vector<SlowShape> slow_shapes(const Selection& s, const SweptAxis& axis, size_t count, size_t per_kernel,
                                   size_t& slow_count) {
  std::vector<size_t> order(s.points.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return axis.of(s.points[a].key.problem) < axis.of(s.points[b].key.problem);
  });
  std::vector<SlowShape> slow;
  for (size_t at = 0; at < order.size(); ++at) {
    const size_t i = order[at];
    std::optional<size_t> best;
    for (size_t next = at + 1; next < order.size() && next <= at + kNeighbourSteps; ++next) {
      const size_t j = order[next];
      if (s.points[j].key.problem.flops() < s.points[i].key.problem.flops()) continue;
      if (!best || time_of(s.points[j]) < time_of(s.points[*best])) best = j;
    }
    if (!best || !(time_of(s.points[*best]) > 0)) continue;
    const double speedup = time_of(s.points[i]) / time_of(s.points[*best]);
    if (speedup < kSlowSpeedup) continue;
    SlowShape shape;
    shape.index = i;
    shape.neighbour = *best;
    shape.speedup = speedup;
    slow.push_back(shape);
  }
  slow_count = slow.size();
  std::map<std::string, size_t> per_name;
  for (const SlowShape& shape : slow) per_name[main_kernel_of(s.points[shape.index], s.annotations[shape.index])]++;
  std::stable_sort(slow.begin(), slow.end(), [](const SlowShape& a, const SlowShape& b) { return a.speedup > b.speedup; });
  // The worst of each kernel: a page of twelve odd sizes that all say "alignment" tells less than
  // one per kernel that went wrong, with how many shapes share it.
  std::vector<SlowShape> picked;
  std::map<std::string, size_t> taken;
  for (SlowShape& shape : slow) {
    if (picked.size() == count) break;
    const std::string name = main_kernel_of(s.points[shape.index], s.annotations[shape.index]);
    if (taken[name]++ >= per_kernel) continue;
    shape.same_kernel = per_name[name];
    picked.push_back(shape);
  }
  return picked;
}

Selection lt_selection(const Selection& all) {
  std::map<std::pair<std::string, ProblemKey>, size_t> algos;
  for (const StoredPoint& p : all.points)
    if (p.key.backend == BackendKind::kCublasLt) algos[{p.device.gpu_uuid, key_of(p.key.problem)}]++;
  Selection s;
  s.context = all.context;
  for (size_t i = 0; i < all.points.size(); ++i) {
    const StoredPoint& p = all.points[i];
    if (p.key.backend != BackendKind::kCublasLt || algos[{p.device.gpu_uuid, key_of(p.key.problem)}] < 2) continue;
    s.points.push_back(p);
    s.annotations.push_back(all.annotations[i]);
  }
  return s;
}

std::vector<RegretRow> regret_rows(const Selection& lt) {
  // The fastest algorithm of each problem (on each GPU), then h0 against it.
  std::map<std::pair<std::string, ProblemKey>, size_t> fastest;
  for (size_t i = 0; i < lt.points.size(); ++i) {
    const auto [at, inserted] = fastest.emplace(std::make_pair(lt.points[i].device.gpu_uuid, key_of(lt.points[i].key.problem)), i);
    if (!inserted && time_of(lt.points[i]) < time_of(lt.points[at->second])) at->second = i;
  }
  std::vector<RegretRow> rows;
  const std::string first(default_algo(BackendKind::kCublasLt));
  for (size_t i = 0; i < lt.points.size(); ++i) {
    if (lt.points[i].key.algo != first || !lt.annotations[i].regret) continue;
    RegretRow row;
    row.h0 = i;
    row.best = fastest.at({lt.points[i].device.gpu_uuid, key_of(lt.points[i].key.problem)});
    row.regret = *lt.annotations[i].regret;
    rows.push_back(row);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const RegretRow& a, const RegretRow& b) { return a.regret > b.regret; });
  return rows;
}

std::vector<OursRow> ours_rows(const Selection& all) {
  std::map<ProblemKey, double> cublas_us;
  for (const StoredPoint& p : all.points)
    if (p.key.backend == BackendKind::kCublas && p.key.algo == default_algo(BackendKind::kCublas)) cublas_us[key_of(p.key.problem)] = time_of(p);
  std::map<std::string, std::vector<std::pair<Problem, double>>> shares;  // variant -> (problem, share)
  for (const StoredPoint& p : all.points) {
    const auto library = cublas_us.find(key_of(p.key.problem));
    if (p.key.backend != BackendKind::kCustom || library == cublas_us.end() || !(time_of(p) > 0)) continue;
    shares[p.key.algo].emplace_back(p.key.problem, library->second / time_of(p));
  }
  std::vector<OursRow> rows;
  for (const auto& [variant, list] : shares) {
    OursRow row;
    row.variant = variant;
    row.shapes = list.size();
    std::vector<double> values;
    for (const auto& entry : list) values.push_back(entry.second);
    row.median_share = median(values);
    const auto [worst, best] = std::minmax_element(list.begin(), list.end(),
                                                   [](const auto& a, const auto& b) { return a.second < b.second; });
    std::tie(row.best_problem, row.best_share) = *best;
    std::tie(row.worst_problem, row.worst_share) = *worst;
    const auto largest = std::max_element(list.begin(), list.end(), [](const auto& a, const auto& b) {
      return a.first.flops() < b.first.flops();
    });
    std::tie(row.largest_problem, row.largest_share) = *largest;
    rows.push_back(row);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const OursRow& a, const OursRow& b) { return a.median_share > b.median_share; });
  return rows;
}

ReportView report_view(const ReportRequest& r) {
  const Store store(r.db, Store::Access::kReadOnly);
  const std::vector<StoredPoint> pool = store.load_all();  // read once: every slow shape is explained from it
  const Selection all = select_points(pool, r.db, r.filter, Algos::kAll, "report", store);
  ReportView v;
  v.db = r.db;
  v.filters = r.filter.given();
  v.context = all.context;
  v.device = std::max_element(all.points.begin(), all.points.end(), [](const StoredPoint& a, const StoredPoint& b) {
               return a.result.measured_at < b.result.measured_at;
             })->device;
  v.how = measured_how(all, store);
  const auto [backend, algo] = main_pair(all);
  v.main = series_of(all, backend, algo);
  try {
    v.axis = swept_axis(v.main.points, "report");
  } catch (const Error& e) {
    v.axis_note = e.what();
  }
  if (v.axis) {
    v.slowest = slow_shapes(v.main, *v.axis, r.slowest, 1, v.slow_count);
    const PointIndex index(pool);
    for (SlowShape& shape : v.slowest) {
      ExplainLine line = explain_line(r.db, v.main.points[shape.index], StoreRead{store, pool, index});
      shape.explanation = std::move(line.report);
      shape.explain_error = std::move(line.error);
    }
  }
  v.lt_points = lt_selection(all);
  v.regret = regret_rows(v.lt_points);
  v.ours = ours_rows(all);
  return v;
}

}  // namespace shapescope
