#include "views/explain.hpp"
#include "views/explain_names.hpp"
#include "views/point_index.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "core/backend_kind.hpp"
#include "measure/measure.hpp"
#include "measure/precision_error.hpp"
#include "model/kernel_name.hpp"
#include "shape/plan.hpp"
#include "views/annotated.hpp"

namespace shapescope {
namespace {

// The GPU is warm after the target's measurement: the later batches need no long warm-up.
constexpr double kWarmAgainMs = 30;

// The problems of the same-work controls, and of the target in other precisions.
struct Controls {
  std::optional<Problem> aligned16, aligned32;
  bool copy = false;
  Problem floor;
  std::vector<Problem> precisions;
};

Controls plan_controls(const ExplainRequest& o, const Problem& target, const DeviceContext& device) {
  Controls c;
  if (!o.controls) return c;
  const Problem a16 = aligned_layout(target, 16), a32 = aligned_layout(target, 32);
  if (!(a16 == target)) c.aligned16 = a16;
  if (!(a32 == target) && !(a32 == a16)) c.aligned32 = a32;
  c.copy = unaligned_operands(target, 16).any();
  // Our kernels are the shape's controls, not a program's choice of precision.
  if (o.precision && o.backend.kind != BackendKind::kCustom) {
    for (DType d : precision_dtypes(target, device.cc_major * 10 + device.cc_minor)) {
      Problem p = target;
      p.dtype = d;
      c.precisions.push_back(p);
    }
  }
  c.floor.m = c.floor.n = c.floor.k = 1;
  c.floor.lda = c.floor.ldb = c.floor.ldc = 1;
  c.floor.dtype = target.dtype;
  c.floor.layout = target.layout;
  return c;
}

// Candidates as problems; those the planner refuses (an explicit --lda too small for a larger
// size) are listed as not measured, with the planner's reason.
std::vector<Candidate> plan_candidates(const ExplainRequest& o, const ShapeArg& shape, const Problem& target,
                                       const Annotation& target_annotation, std::vector<NotMeasured>& missing) {
  std::vector<Candidate> planned;
  for (Candidate c : neighbours(target, shape.square, target_annotation)) {
    try {
      c.problem = plan_one(o, c.problem.m, c.problem.n, c.problem.k);
      planned.push_back(std::move(c));
    } catch (const Error& e) {
      missing.push_back({fmt::format("{} ({})", c.value, c.why), e.what()});
    }
  }
  return planned;
}

// What explain needs from the pool of stored points, each with its role.
struct Wanted {
  Role role;
  std::string label;
  Candidate candidate;
  BackendKind backend = BackendKind::kCublas;  // the store key's
  std::string algo;
  std::optional<size_t> of;   // kFixedKernel: the index (into the wanted list) of its library point
};

class Gatherer {
 public:
  // The pool may grow after this is made (explain_measured adds cuBLASLt's alternatives); `index`:
  // one of the pool made by the caller (StoreRead), else its own, made again when the pool changed.
  Gatherer(const std::vector<StoredPoint>& pool, const StoredPoint& anchor, const PointIndex* index = nullptr)
      : pool_(pool), anchor_(anchor), given_(index) {}
  // The stored point of this key on the anchor's device (cold), if any: the first in the store's order.
  const StoredPoint* find(const Problem& p, BackendKind backend, const std::string& algo) const {
    for (const StoredPoint* s : of(p))
      if (s->key.backend == backend && s->key.algo == algo) return s;
    return nullptr;
  }
  // Every cuBLASLt algorithm stored for this problem.
  std::vector<const StoredPoint*> alternatives(const Problem& p) const {
    std::vector<const StoredPoint*> out;
    for (const StoredPoint* s : of(p))
      if (s->key.backend == BackendKind::kCublasLt) out.push_back(s);
    std::sort(out.begin(), out.end(), [](const StoredPoint* a, const StoredPoint* b) { return a->key.algo < b->key.algo; });
    return out;
  }

 private:
  // The problem's points of the anchor's device and clock state, cold.
  std::vector<const StoredPoint*> of(const Problem& p) const {
    if (!given_ && (indexed_.first != pool_.data() || indexed_.second != pool_.size())) {
      own_ = PointIndex(pool_);
      indexed_ = {pool_.data(), pool_.size()};
    }
    std::vector<const StoredPoint*> out;
    for (const StoredPoint* s : (given_ ? *given_ : own_).of(p))
      if (same_setup(s->device, anchor_.device) && same_clock_state(s->key, anchor_.key) && !s->key.hot) out.push_back(s);
    return out;
  }
  const std::vector<StoredPoint>& pool_;
  const StoredPoint& anchor_;
  const PointIndex* given_;
  mutable PointIndex own_;                                            // of the pool as it was at
  mutable std::pair<const StoredPoint*, size_t> indexed_{nullptr, 0};  // (its data, its size)
};

ExplainPoint make_point(const Wanted& w, const StoredPoint& stored, const Annotation& annotation) {
  ExplainPoint p;
  p.role = w.role;
  p.label = w.label;
  p.candidate = w.candidate;
  p.time_us = stored.result.timing.median_us;
  p.noise = stored.result.timing.noise;
  p.algo = stored.key.algo;
  if (annotation.main_kernel >= 0) p.kernel = short_kernel_name(stored.kernels[size_t(annotation.main_kernel)].name);
  p.annotation = annotation;
  return p;
}

}  // namespace

namespace {

// Everything explain asks for besides the target: its neighbours, the same-work controls and the
// fixed kernel's variant.
struct Plan {
  Problem target;
  std::vector<Candidate> candidates;
  Controls controls;
  std::optional<BackendSpec> fixed;  // custom:<kernel>:<BMxBN>:<schedule>
};

class ReportBuilder {
 public:
  ReportBuilder(const ExplainRequest& o, const ShapeArg& shape, const Plan& plan, const Gatherer& g)
      : o_(o), shape_(shape), plan_(plan), g_(g) {}

  // The wanted points found in the pool, annotated together, explained. `neighbour`: the problem of
  // the compared neighbour, whose cuBLASLt alternatives are looked for too.
  void build(const Store& store, std::optional<Problem> neighbour, ExplainReport& report) {
    wanted_.clear();
    library_points();
    control_points();
    alternatives(plan_.target, Role::kAlternative, self());
    if (neighbour) {
      for (const Candidate& c : plan_.candidates)
        if (c.problem == *neighbour) alternatives(*neighbour, Role::kNeighbourAlternative, c);
    }
    collect(store, report);
    report.explanation = explain(report.points);
  }

 private:
  Candidate self() const {
    Candidate c;
    c.value = shape_.square ? plan_.target.n : 0;
    c.problem = plan_.target;
    return c;
  }
  Candidate with_problem(const Problem& p) const {
    Candidate c = self();
    c.problem = p;
    return c;
  }
  void want(Role role, std::string label, Candidate c, BackendKind backend, std::string algo,
            std::optional<size_t> of = std::nullopt) {
    wanted_.push_back({role, std::move(label), std::move(c), backend, std::move(algo), of});
  }
  void library_points() {
    const BackendKind backend = o_.backend.kind;
    const std::string algo = o_.backend.algo();
    want(Role::kTarget, size_label(shape_, plan_.target), self(), backend, algo);
    for (const Candidate& c : plan_.candidates) want(Role::kNeighbour, size_label(shape_, c.problem), c, backend, algo);
    if (plan_.controls.aligned16)
      want(Role::kAligned16, ld_label(*plan_.controls.aligned16), with_problem(*plan_.controls.aligned16), backend, algo);
    if (plan_.controls.aligned32)
      want(Role::kAligned32, ld_label(*plan_.controls.aligned32), with_problem(*plan_.controls.aligned32), backend, algo);
  }
  void control_points() {
    if (plan_.fixed) {
      const std::string key = plan_.fixed->algo();
      const size_t library = wanted_.size();
      for (size_t i = 0; i < library; ++i)
        want(Role::kFixedKernel, wanted_[i].label, wanted_[i].candidate, BackendKind::kCustom, key, i);
    }
    if (plan_.controls.copy)
      want(Role::kCopy, "copy to 16-byte rows", self(), BackendKind::kCopy,
           std::string(default_algo(BackendKind::kCopy)));
    if (o_.controls)
      want(Role::kLaunchFloor, "empty kernel", with_problem(plan_.controls.floor), BackendKind::kLaunchFloor,
           std::string(default_algo(BackendKind::kLaunchFloor)));
    for (const Problem& p : plan_.controls.precisions) {
      const BackendSpec spec = precision_backend(o_, p.dtype);
      want(Role::kPrecision, std::string(to_string(p.dtype)), with_problem(p), spec.kind, spec.algo());
    }
  }
  void alternatives(const Problem& p, Role role, const Candidate& c) {
    const bool library_is_lt = o_.backend.kind == BackendKind::kCublasLt;
    for (const StoredPoint* s : g_.alternatives(p)) {
      if (role == Role::kNeighbourAlternative && library_is_lt && s->key.algo == o_.backend.algo()) continue;
      want(role, role == Role::kAlternative ? s->key.algo : size_label(shape_, p) + " " + s->key.algo, c,
           s->key.backend, s->key.algo);
    }
  }
  void collect(const Store& store, ExplainReport& report) {
    std::vector<StoredPoint> found;
    std::vector<size_t> from;  // wanted index of each found point
    std::map<size_t, size_t> index_of;
    for (size_t i = 0; i < wanted_.size(); ++i) {
      const Wanted& w = wanted_[i];
      const StoredPoint* s = g_.find(w.candidate.problem, w.backend, w.algo);
      if (!s) {
        // Measuring, a point missing here was skipped by measure(), which said why (measure_into).
        const bool listed = w.role == Role::kNeighbour || w.role == Role::kAligned16 || w.role == Role::kAligned32 ||
                            w.role == Role::kPrecision;
        if (listed && report.mode == "store")
          report.missing.push_back({w.label + (w.candidate.why.empty() ? "" : " (" + w.candidate.why + ")"),
                                    "the store has no point of it"});
        continue;
      }
      index_of[i] = found.size();
      found.push_back(*s);
      from.push_back(i);
    }
    const std::vector<Annotation> annotations = annotate_points(store, found);
    for (size_t j = 0; j < found.size(); ++j) {
      ExplainPoint p = make_point(wanted_[from[j]], found[j], annotations[j]);
      if (const auto of = wanted_[from[j]].of) {
        if (!index_of.count(*of)) continue;  // the fixed kernel without its library point compares with nothing
        p.of = index_of[*of];
      }
      report.points.push_back(std::move(p));
      report.stored.push_back(found[j]);
    }
  }

  const ExplainRequest& o_;
  const ShapeArg& shape_;
  const Plan& plan_;
  const Gatherer& g_;
  std::vector<Wanted> wanted_;
};

// The problem of the neighbour the verdict compares with, if it is one.
MeasureRequest base_request(const ExplainRequest& o) {
  MeasureRequest r;
  r.backends = {o.backend};
  r.lt_algos = o.lt_algos;
  r.measure = o.measure;
  return r;
}

// The neighbours and every control in one request: (problem, backend) pairs.
MeasureRequest controls_request(const ExplainRequest& o, const Plan& plan) {
  MeasureRequest r = base_request(o);
  r.measure.warmup_ms = kWarmAgainMs;
  const auto add_problem = [&](const Problem& p) {
    r.problems.push_back(p);
    return r.problems.size() - 1;
  };
  std::vector<size_t> library;  // problems the library and the fixed kernel both run
  for (const Candidate& c : plan.candidates) library.push_back(add_problem(c.problem));
  if (plan.controls.aligned16) library.push_back(add_problem(*plan.controls.aligned16));
  if (plan.controls.aligned32) library.push_back(add_problem(*plan.controls.aligned32));
  for (size_t p : library) r.pairs.emplace_back(p, 0);
  const size_t target = add_problem(plan.target);
  if (plan.fixed) {
    r.backends.push_back(*plan.fixed);
    for (size_t p : library) r.pairs.emplace_back(p, r.backends.size() - 1);
    r.pairs.emplace_back(target, r.backends.size() - 1);
  }
  if (plan.controls.copy) {
    r.backends.emplace_back(BackendKind::kCopy);
    r.pairs.emplace_back(target, r.backends.size() - 1);
  }
  if (o.controls) {
    r.backends.emplace_back(BackendKind::kLaunchFloor);
    r.pairs.emplace_back(add_problem(plan.controls.floor), r.backends.size() - 1);
  }
  return r;
}

// The target in each other precision: a request of its own per dtype, so that its operands hold that
// dtype's random normal values (a request fills its buffers for one dtype) and its stored point is
// what a sweep of that dtype would store.
std::vector<MeasureRequest> precision_requests(const ExplainRequest& o, const Plan& plan) {
  std::vector<MeasureRequest> out;
  for (const Problem& p : plan.controls.precisions) {
    MeasureRequest r = base_request(o);
    r.measure.warmup_ms = kWarmAgainMs;
    r.backends = {precision_backend(o, p.dtype)};
    r.lt_algos = 1;
    r.problems = {p};
    out.push_back(std::move(r));
  }
  return out;
}

// Runs one request, annotates and saves what it measured, and adds it to the pool.
void measure_into(const MeasureRequest& r, const DeviceContext& device, Store& store, const ProgressCallback& progress,
                  const std::atomic<bool>* interrupted, std::vector<StoredPoint>& pool, ExplainReport& report,
                  MeasureOutcome& total) {
  const MeasureOutcome got = measure(r, device, store, progress, interrupted);
  annotate_and_save(store, got.points);
  if (got.interrupted) throw Error(ExitCode::kInterrupted, "explain: interrupted (measured points are saved)");
  // measure()'s skip lines read "BACKEND ALGO SHAPE DTYPE: why".
  for (const std::string& line : got.skipped) {
    const size_t colon = line.find(": ");
    report.missing.push_back(colon == std::string::npos ? NotMeasured{line, "skipped"}
                                                        : NotMeasured{line.substr(0, colon), line.substr(colon + 2)});
  }
  pool.insert(pool.end(), got.points.begin(), got.points.end());
  total.measured += got.measured;
  total.reused += got.reused;
}

// The backend that runs a point of the explanation, as a request names it.
BackendSpec backend_spec(const ExplainRequest& o, const Plan& plan, const ExplainPoint& p) {
  switch (p.role) {
    case Role::kFixedKernel:
      if (!plan.fixed) throw Error(ExitCode::kInternal, "explain: a fixed-kernel point without a fixed kernel");
      return *plan.fixed;
    case Role::kAlternative:
    case Role::kNeighbourAlternative: return BackendSpec(BackendKind::kCublasLt);
    case Role::kPrecision: return precision_backend(o, p.candidate.problem.dtype);
    default: return o.backend;
  }
}

// A point's time taken from the paired run, and what follows from it.
void retime(ExplainPoint& p, double us) {
  Roofline& r = p.annotation.roofline;
  p.time_us = us;
  r.tflops = r.flops / us / 1e6;
  if (r.pct_peak && r.peak_tflops.value > 0) r.pct_peak = *r.tflops / r.peak_tflops.value;
  if (r.pct_roof && r.attainable_tflops > 0) r.pct_roof = *r.tflops / r.attainable_tflops;
}

// Every point of the explanation measured again, together, in paired passes against the target
// (a stored point is a fact of its moment, not a reference for a later one), and explained anew from
// the paired times and intervals.
void pair_points(const ExplainRequest& o, const Plan& plan, const DeviceContext& device, Store& store,
                 const std::atomic<bool>* interrupted, ExplainReport& report) {
  MeasureRequest r = base_request(o);
  r.backends.clear();
  r.lt_algos = std::max(o.lt_algos, o.alternatives);
  r.measure.warmup_ms = kWarmAgainMs;
  r.paired = PairedRule{};
  r.paired->max_seconds = o.pair_seconds;
  // The verdict's threshold is the minimum effect plus the interval's half-width: narrow every one.
  r.paired->stop_on_verdict = false;
  // A pass holds every point twice with the target between: long GEMMs get a longer budget.
  const auto target = std::find_if(report.points.begin(), report.points.end(),
                                   [](const ExplainPoint& p) { return p.role == Role::kTarget; });
  if (target != report.points.end() && target->time_us && *target->time_us >= kLongPairedUs)
    r.paired->max_seconds = o.pair_seconds * kLongPairedBudget;
  for (size_t i = 0; i < report.points.size(); ++i) {
    // The launch floor and the copy place the target (bound, a run-time copy): their stored times do.
    const Role role = report.points[i].role;
    if (!report.stored[i] || role == Role::kLaunchFloor || role == Role::kCopy) continue;
    const BackendSpec spec = backend_spec(o, plan, report.points[i]);
    auto at = std::find(r.backends.begin(), r.backends.end(), spec);
    if (at == r.backends.end()) at = r.backends.insert(r.backends.end(), spec);
    // One (problem, backend) once: cuBLASLt's alternatives at a problem are one request's algos.
    const Problem& problem = report.stored[i]->key.problem;
    const size_t backend = size_t(at - r.backends.begin());
    if (std::any_of(r.pairs.begin(), r.pairs.end(),
                    [&](const auto& pair) { return pair.second == backend && r.problems[pair.first] == problem; }))
      continue;
    r.problems.push_back(problem);
    r.pairs.emplace_back(r.problems.size() - 1, backend);
  }
  const MeasureOutcome got = measure(r, device, store, ProgressCallback(), interrupted);
  if (got.interrupted) throw Error(ExitCode::kInterrupted, "explain: interrupted (measured points are saved)");
  if (!got.paired) return;
  const PairedComparison& c = *got.paired;
  const double reference_us = c.outcome.median_us.front();
  for (size_t i = 0; i < report.points.size(); ++i) {
    if (!report.stored[i]) continue;
    const PointKey& key = report.stored[i]->key;
    for (size_t j = 0; j < c.keys.size(); ++j) {
      if (c.keys[j].backend != key.backend || c.keys[j].algo != key.algo || !(c.keys[j].problem == key.problem)) continue;
      report.points[i].paired = c.outcome.ratios[j];
      retime(report.points[i], j == 0 ? reference_us : reference_us * c.outcome.ratios[j].median);
      break;
    }
  }
  if (report.points.front().paired) report.points.front().paired->low = report.points.front().paired->high = 1;
  report.paired = c.outcome;
  report.explanation = explain(report.points);
}

// The target's output in its own precision and in each other one measured, against an fp64
// reference of the same inputs (measure/precision_error.hpp), set on the target and its precision
// points. A precision the GPU or the library cannot run is said in the missing lines.
void add_numerical_errors(const ExplainRequest& o, const Plan& plan, const DeviceContext& device, ExplainReport& report) {
  if (plan.controls.precisions.empty()) return;
  std::vector<DType> dtypes = {plan.target.dtype};
  for (const Problem& p : plan.controls.precisions) dtypes.push_back(p.dtype);
  NumericalErrors got;
  try {
    got = measure_numerical_errors(plan.target, dtypes, o.backend, device);
  } catch (const Error& e) {
    if (e.code() != ExitCode::kOutOfMemory) throw;
    report.missing.push_back({"numerical error", e.what()});  // the times stand without it
    return;
  }
  for (const std::string& why : got.skipped) report.missing.push_back({"numerical error", why});
  for (ExplainPoint& p : report.points) {
    if (p.role != Role::kTarget && p.role != Role::kPrecision) continue;
    for (const NumericalError& e : got.errors)
      if (e.dtype == p.candidate.problem.dtype) p.error = e;
  }
}

}  // namespace

// The problem for one set of dimensions, planned like the sweep plans it (strides, offsets, checks).
Problem plan_one(const ExplainRequest& o, int64_t m, int64_t n, int64_t k) {
  ShapeOptions s = o.plan;
  s.m = std::to_string(m);
  s.n = std::to_string(n);
  s.k = std::to_string(k);
  s.sizes_from = "SHAPE";
  const std::vector<Problem> problems = plan_problems(s);
  if (problems.size() != 1) throw usage_error(fmt::format("--batch: '{}' must be one value for explain", o.plan.batch));
  return problems.front();
}

ExplainReport explain_model(const ExplainRequest& o, const ShapeArg& shape, const GpuProfile& profile, const Problem& target,
                            const std::string& why_not_store) {
  const auto& tile = o.tile;
  if (!tile)
    throw usage_error(fmt::format("--tile: needed for a model prediction on {} ({}); e.g. --tile 256x128",
                                  profile.key, why_not_store));
  const ModelGpu gpu = model_gpu(profile);
  ExplainReport report;
  report.shape = o.shape;
  report.mode = "model";
  report.source = fmt::format(
      "model prediction for {} ({} SMs) with a {}x{} tile, one CTA per SM, data-parallel; nothing measured ({})",
      profile.name, profile.sm_count, tile->first, tile->second, why_not_store);
  const auto predicted = [&](Role role, std::string label, Candidate c) {
    ExplainPoint p;
    p.role = role;
    p.label = std::move(label);
    p.annotation = predict(c.problem, gpu, tile->first, tile->second);
    p.candidate = std::move(c);
    return p;
  };
  Candidate self;
  self.value = shape.square ? target.n : 0;
  self.problem = target;
  report.points.push_back(predicted(Role::kTarget, size_label(shape, target), self));
  report.stored.emplace_back();
  for (Candidate& c : plan_candidates(o, shape, target, report.points.front().annotation, report.missing)) {
    std::string label = size_label(shape, c.problem);
    report.points.push_back(predicted(Role::kNeighbour, std::move(label), std::move(c)));
    report.stored.emplace_back();
  }
  report.explanation = explain(report.points);
  return report;
}

ExplainReport explain_without_gpu(const ExplainRequest& o, const ShapeArg& shape, const GpuProfile* profile,
                                  const Problem& target, const StoreRead* read) {
  const std::string what = describe_problem(target, o.backend);
  std::string why_not;
  if (!std::filesystem::exists(std::filesystem::symlink_status(o.db))) {  // a dangling link: the store says so
    why_not = fmt::format("no store '{}'", o.db);
  } else if (o.tile) {
    why_not = "--tile given";
  } else {
    std::optional<Store> opened;
    if (!read) opened.emplace(o.db, Store::Access::kReadOnly);
    const Store& store = read ? read->store : *opened;
    const std::vector<StoredPoint> loaded = read ? std::vector<StoredPoint>() : store.load_all();
    const std::vector<StoredPoint>& pool = read ? read->pool : loaded;
    // The newest measurement of the target, on the named GPU when one is named.
    const StoredPoint* anchor = nullptr;
    for (const StoredPoint& p : pool) {
      if (p.key.hot || p.key.backend != o.backend.kind || p.key.algo != o.backend.algo() ||
          !(p.key.problem == target))
        continue;
      if (profile && profile_for_device_name(p.device.gpu_name) != profile) continue;
      if (o.clocks_given && p.key.clocks != o.measure.clocks) continue;
      if (!anchor || p.result.measured_at > anchor->result.measured_at) anchor = &p;
    }
    if (anchor) {
      ExplainReport report;
      report.shape = o.shape;
      report.mode = "store";
      report.source = fmt::format("from the store '{}' (no GPU measured now): {} ({}), driver {}, cuBLAS {}, measured {}, "
                                  "{} samples, cold L2, {} clocks",
                                  o.db, anchor->device.gpu_name, anchor->device.gpu_uuid, anchor->device.driver,
                                  anchor->device.cublas, anchor->result.measured_at, anchor->result.timing.samples,
                                  to_string(anchor->key.clocks));
      const std::vector<Annotation> own = annotate_points(store, {*anchor});
      Plan plan{target, plan_candidates(o, shape, target, own.front(), report.missing),
                plan_controls(o, target, anchor->device), fixed_spec(o, anchor->device)};
      if (plan.fixed) report.fixed_kernel = plan.fixed->algo();
      const Gatherer g(pool, *anchor, read ? &read->index : nullptr);
      ReportBuilder builder(o, shape, plan, g);
      ExplainReport first = report;
      builder.build(store, std::nullopt, first);
      builder.build(store, compared_problem(first), report);
      return report;
    }
    why_not = fmt::format("the store '{}' holds no measurement of {}{}{}", o.db, what,
                          profile ? " on " + profile->key : "",
                          o.clocks_given ? fmt::format(" at {} clocks", to_string(o.measure.clocks)) : "");
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
  const auto started = std::chrono::steady_clock::now();
  ExplainReport report;
  report.shape = o.shape;
  report.mode = "measured";
  MeasureOutcome total;
  std::vector<StoredPoint> pool;
  // The target first: its tile and slots choose the wave neighbours.
  MeasureRequest first = base_request(o);
  first.problems = {target};
  measure_into(first, device, store, ProgressCallback(), interrupted, pool, report, total);
  const auto anchor = std::find_if(pool.begin(), pool.end(), [&](const StoredPoint& p) {
    return !p.key.hot && p.key.clocks == o.measure.clocks && p.key.backend == o.backend.kind &&
           p.key.algo == o.backend.algo() && p.key.problem == target;
  });
  if (anchor == pool.end())
    throw Error(ExitCode::kNoGpu, "explain: cannot measure " +
                                      (report.missing.empty() ? describe_problem(target, o.backend)
                                                              : report.missing.front().what + ": " +
                                                                    report.missing.front().why));
  const StoredPoint anchor_point = *anchor;
  const std::vector<Annotation> own = annotate_points(store, {anchor_point});
  Plan plan{target, plan_candidates(o, shape, target, own.front(), report.missing), plan_controls(o, target, device),
            fixed_spec(o, device)};
  if (plan.fixed) report.fixed_kernel = plan.fixed->algo();

  // The neighbours and the controls, then cuBLASLt's alternatives at the target and at the
  // neighbour the verdict compares with (known only once the neighbours are measured).
  const MeasureRequest rest = controls_request(o, plan);
  measure_into(rest, device, store, progress_for(rest.pairs.size()), interrupted, pool, report, total);
  for (const MeasureRequest& r : precision_requests(o, plan))
    measure_into(r, device, store, ProgressCallback(), interrupted, pool, report, total);
  const Gatherer g(pool, anchor_point);
  ReportBuilder builder(o, shape, plan, g);
  ExplainReport draft = report;
  builder.build(store, std::nullopt, draft);
  const std::optional<Problem> neighbour = compared_problem(draft);
  if (o.controls) {
    MeasureRequest alternatives = base_request(o);
    alternatives.measure.warmup_ms = kWarmAgainMs;
    alternatives.backends = {BackendSpec(BackendKind::kCublasLt)};
    alternatives.lt_algos = o.alternatives;
    alternatives.problems = {target};
    if (neighbour) alternatives.problems.push_back(*neighbour);
    measure_into(alternatives, device, store, progress_for(alternatives.problems.size() * size_t(o.alternatives)),
                 interrupted, pool, report, total);
  }
  builder.build(store, neighbour, report);
  add_numerical_errors(o, plan, device, report);
  if (o.pair_seconds > 0) pair_points(o, plan, device, store, interrupted, report);
  report.wall_s = seconds_since(started);
  report.source = fmt::format("measured on {} ({}), driver {}, cuBLAS {}: {} measured now, {} from the store '{}'; "
                              "{}, cold L2, {} clocks",
                              device.gpu_name, device.gpu_uuid, device.driver, device.cublas, total.measured,
                              total.reused, o.db, sampling_text(o.measure), to_string(o.measure.clocks));
  return report;
}

}  // namespace shapescope
