#include "views/explain.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "backends/variants.hpp"
#include "common/error.hpp"
#include "core/backend_kind.hpp"
#include "measure/measure.hpp"
#include "model/kernel_name.hpp"
#include "shape/plan.hpp"
#include "views/annotated.hpp"

namespace shapescope {
namespace {

// The store's backend for a --backend value: our kernels are all "custom".
std::string backend_key(const std::string& spec) {
  return is_custom_backend(spec) ? std::string(to_string(BackendKind::kCustom)) : spec;
}
// The algo explain reads: cuBLAS's only one, cuBLASLt's first choice, or the one selected variant.
std::string algo_of(const std::string& spec) {
  if (is_custom_backend(spec)) return select_variants(spec).front()->key();
  return default_algo(spec);
}

std::string size_label(const ShapeArg& shape, const Problem& p) {
  return shape.square ? std::to_string(p.n) : fmt::format("{}x{}x{}", p.m, p.n, p.k);
}

std::string describe_problem(const Problem& p, const std::string& backend) {
  return fmt::format("{} {} {} ({})", p.shape_string(), to_string(p.dtype), to_string(p.layout), backend);
}

// Candidates as problems; those the planner refuses (an explicit --lda too small for a larger
// size) are listed as not measured, with the planner's reason.
std::vector<Candidate> plan_candidates(const ExplainRequest& o, const ShapeArg& shape, const Problem& target,
                                       const Annotation& target_annotation, std::vector<std::string>& missing) {
  std::vector<Candidate> planned;
  for (Candidate c : neighbours(target, shape.square, target_annotation)) {
    try {
      c.problem = plan_one(o, c.problem.m, c.problem.n, c.problem.k);
      planned.push_back(std::move(c));
    } catch (const Error& e) {
      missing.push_back(fmt::format("{} ({}): {}", c.value, c.why, e.what()));
    }
  }
  return planned;
}

bool same_point(const StoredPoint& p, const Problem& problem, const std::string& backend, const std::string& algo) {
  return !p.key.hot && p.key.backend == backend && p.key.algo == algo && p.key.problem == problem;
}

bool same_device(const StoredPoint& a, const StoredPoint& b) {
  return a.device.gpu_uuid == b.device.gpu_uuid && a.device.driver == b.device.driver &&
         a.device.cublas == b.device.cublas && a.device.cublaslt == b.device.cublaslt;
}

ExplainPoint make_point(std::string label, Candidate candidate, const StoredPoint& stored, const Annotation& annotation) {
  ExplainPoint p;
  p.label = std::move(label);
  p.candidate = std::move(candidate);
  p.time_us = stored.result.timing.median_us;
  p.noise = stored.result.timing.noise;
  if (annotation.main_kernel >= 0) p.kernel = short_kernel_name(stored.kernels[size_t(annotation.main_kernel)].name);
  p.annotation = annotation;
  return p;
}

// Points of the target (every timed algorithm, for regret) and of each candidate, as stored.
struct Gathered {
  std::vector<StoredPoint> points;   // all of them, annotated together
  std::optional<size_t> target;      // index of the target's default-algorithm point
  std::vector<std::optional<size_t>> candidates;
};

Gathered gather(const std::vector<StoredPoint>& pool, const StoredPoint& anchor, const Problem& target,
                const std::vector<Candidate>& candidates, const std::string& backend) {
  Gathered g;
  const std::string algo = algo_of(backend);
  auto take = [&](const StoredPoint& p) {
    g.points.push_back(p);
    return g.points.size() - 1;
  };
  for (const StoredPoint& p : pool) {
    if (!same_device(p, anchor) || p.key.hot || p.key.backend != backend_key(backend) || !(p.key.problem == target))
      continue;
    const size_t at = take(p);
    if (p.key.algo == algo) g.target = at;
  }
  for (const Candidate& c : candidates) {
    std::optional<size_t> found;
    for (const StoredPoint& p : pool) {
      if (same_device(p, anchor) && same_point(p, c.problem, backend_key(backend), algo)) {
        found = take(p);
        break;
      }
    }
    g.candidates.push_back(found);
  }
  return g;
}

// Builds the report from stored points: the target, then each candidate that is measured.
void report_from(const ExplainRequest& o, const ShapeArg& shape, const Store& store, const std::vector<StoredPoint>& pool,
                 const StoredPoint& anchor, const Problem& target, std::vector<Candidate> candidates,
                 ExplainReport& report) {
  Gathered g = gather(pool, anchor, target, candidates, o.backend);
  const std::vector<Annotation> annotations = annotate_points(store, g.points);
  Candidate self;
  self.value = shape.square ? target.n : 0;
  self.problem = target;
  report.points.push_back(make_point(size_label(shape, target), self, g.points[*g.target], annotations[*g.target]));
  report.stored.push_back(g.points[*g.target]);
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::string label = fmt::format("{} ({})", size_label(shape, candidates[i].problem), candidates[i].why);
    if (!g.candidates[i]) {
      report.missing.push_back(fmt::format("{}: not in the store", label));
      continue;
    }
    report.points.push_back(make_point(size_label(shape, candidates[i].problem), candidates[i],
                                       g.points[*g.candidates[i]], annotations[*g.candidates[i]]));
    report.stored.push_back(g.points[*g.candidates[i]]);
  }
}

}  // namespace

// The problem for one set of dimensions, planned like the sweep plans it (strides, offsets, checks).
Problem plan_one(const ExplainRequest& o, int64_t m, int64_t n, int64_t k) {
  ShapeOptions s = o.plan;
  s.m = std::to_string(m);
  s.n = std::to_string(n);
  s.k = std::to_string(k);
  const std::vector<Problem> problems = plan_problems(s);
  if (problems.size() != 1) throw usage_error(fmt::format("--batch: '{}' must be one value for explain", o.plan.batch));
  return problems.front();
}

ExplainReport explain_model(const ExplainRequest& o, const ShapeArg& shape, const GpuProfile& profile, const Problem& target,
               const std::string& why_not_store) {
  const auto tile = parse_tile(o.tile);
  if (o.tile.empty())
    throw usage_error(fmt::format("--tile: needed for a model prediction on {} ({}); e.g. --tile 256x128",
                                  profile.key, why_not_store));
  if (!tile) throw usage_error(fmt::format("--tile: '{}' is not BMxBN (e.g. 256x128, each 1..1024)", o.tile));
  const ModelGpu gpu = model_gpu(profile);
  ExplainReport report;
  report.shape = o.shape;
  report.mode = "model";
  report.source = fmt::format(
      "model prediction for {} ({} SMs) with a {}x{} tile, one CTA per SM, data-parallel; nothing measured ({})",
      profile.name, profile.sm_count, tile->first, tile->second, why_not_store);
  auto predicted = [&](std::string label, Candidate c) {
    ExplainPoint p;
    p.label = std::move(label);
    p.annotation = predict(c.problem, gpu, tile->first, tile->second);
    p.candidate = std::move(c);
    return p;
  };
  Candidate self;
  self.value = shape.square ? target.n : 0;
  self.problem = target;
  report.points.push_back(predicted(size_label(shape, target), self));
  report.stored.emplace_back();
  std::vector<Candidate> candidates = plan_candidates(o, shape, target, report.points.front().annotation, report.missing);
  for (Candidate& c : candidates) {
    std::string label = size_label(shape, c.problem);
    report.points.push_back(predicted(std::move(label), std::move(c)));
    report.stored.emplace_back();
  }
  report.explanation = explain(report.points);
  return report;
}

ExplainReport explain_without_gpu(const ExplainRequest& o, const ShapeArg& shape, const GpuProfile* profile,
                                  const Problem& target) {
  const std::string what = describe_problem(target, o.backend);
  std::vector<StoredPoint> pool;
  std::string why_not;
  if (!std::filesystem::exists(o.db)) {
    why_not = fmt::format("no store '{}'", o.db);
  } else if (!o.tile.empty()) {
    why_not = "--tile given";
  } else {
    Store store(o.db, Store::Access::kReadOnly);
    pool = store.load_all();
    // The newest measurement of the target, on the named GPU when one is named.
    const StoredPoint* anchor = nullptr;
    for (const StoredPoint& p : pool) {
      if (!same_point(p, target, backend_key(o.backend), algo_of(o.backend))) continue;
      if (profile && profile_for_device_name(p.device.gpu_name) != profile) continue;
      if (!anchor || p.result.measured_at > anchor->result.measured_at) anchor = &p;
    }
    if (anchor) {
      ExplainReport report;
      report.shape = o.shape;
      report.mode = "store";
      report.source = fmt::format("from the store '{}' (no GPU measured now): {} ({}), driver {}, cuBLAS {}, measured {}, "
                                  "{} samples, cold L2",
                                  o.db, anchor->device.gpu_name, anchor->device.gpu_uuid, anchor->device.driver,
                                  anchor->device.cublas, anchor->result.measured_at, anchor->result.timing.samples);
      const std::vector<Annotation> own = annotate_points(store, {*anchor});
      std::vector<Candidate> candidates = plan_candidates(o, shape, target, own.front(), report.missing);
      const StoredPoint anchor_copy = *anchor;
      report_from(o, shape, store, pool, anchor_copy, target, std::move(candidates), report);
      report.explanation = explain(report.points);
      return report;
    }
    why_not = fmt::format("the store '{}' holds no measurement of {}{}", o.db, what,
                          profile ? " on " + profile->key : "");
  }
  if (profile) return explain_model(o, shape, *profile, target, why_not);
  throw Error(ExitCode::kNoGpu,
              fmt::format("explain: no GPU here and {}; measure it on a GPU (shapescope explain {}), or pass "
                          "--gpu NAME --tile BMxBN for a model prediction",
                          why_not, o.shape));
}

ExplainReport explain_measured(const ExplainRequest& o, const ShapeArg& shape, const Problem& target,
                               const DeviceContext& device, Store& store, const ProgressFor& progress_for,
                               const std::atomic<bool>* interrupted) {
  // The target first: its tile and slots choose the wave neighbours.
  MeasureRequest request;
  request.backends = {o.backend};
  request.lt_algos = o.lt_algos;
  request.measure.samples = o.samples;
  request.problems = {target};
  MeasureOutcome first = measure(request, device, store, ProgressCallback(), interrupted);
  annotate_and_save(store, first.points);
  if (first.interrupted) throw Error(ExitCode::kInterrupted, "explain: interrupted");
  if (!first.skipped.empty()) throw Error(ExitCode::kNoGpu, "explain: cannot measure " + first.skipped.front());
  std::vector<StoredPoint> pool = first.points;
  const auto anchor = std::find_if(pool.begin(), pool.end(), [&](const StoredPoint& p) {
    return same_point(p, target, backend_key(o.backend), algo_of(o.backend));
  });
  if (anchor == pool.end()) throw Error(ExitCode::kInternal, "explain: the target was measured but is not in the store");
  const StoredPoint anchor_point = *anchor;

  ExplainReport report;
  report.shape = o.shape;
  report.mode = "measured";
  const std::vector<Annotation> own = annotate_points(store, {anchor_point});
  std::vector<Candidate> candidates = plan_candidates(o, shape, target, own.front(), report.missing);
  request.problems.clear();
  for (const Candidate& c : candidates) request.problems.push_back(c.problem);
  const MeasureOutcome rest = measure(
      request, device, store, progress_for(request.problems.size() *
                   size_t(parse_backend_kind(o.backend) == BackendKind::kCublasLt ? o.lt_algos : 1)),
      interrupted);
  annotate_and_save(store, rest.points);
  if (rest.interrupted) throw Error(ExitCode::kInterrupted, "explain: interrupted (measured points are saved)");
  for (const std::string& why : rest.skipped) report.missing.push_back(why);
  pool.insert(pool.end(), rest.points.begin(), rest.points.end());
  report.source = fmt::format("measured on {} ({}), driver {}, cuBLAS {}: {} measured now, {} from the store '{}'; "
                              "{} samples, cold L2",
                              device.gpu_name, device.gpu_uuid, device.driver, device.cublas,
                              first.measured + rest.measured, first.reused + rest.reused, o.db, o.samples);
  report_from(o, shape, store, pool, anchor_point, target, std::move(candidates), report);
  report.explanation = explain(report.points);
  return report;
}

}  // namespace shapescope
