#include "views/explain_parts.hpp"

#include <fmt/format.h>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "measure/precision_error.hpp"

namespace shapescope {

Controls plan_controls(const ExplainRequest& o, const Problem& target, const DeviceContext& device) {
  Controls c;
  if (!o.controls) return c;
  const Problem a16 = aligned_layout(target, 16), a32 = aligned_layout(target, 32);
  if (!(a16 == target)) c.aligned16 = a16;
  if (!(a32 == target) && !(a32 == a16)) c.aligned32 = a32;
  c.copy = unaligned_operands(target, 16).any();
  c.precision = precision_controls(o, target, device.cc_major * 10 + device.cc_minor);
  c.floor.m = c.floor.n = c.floor.k = 1;
  c.floor.lda = c.floor.ldb = c.floor.ldc = 1;
  c.floor.dtype = target.dtype;
  c.floor.layout = target.layout;
  return c;
}

// Candidates as problems; those the planner refuses (an explicit --lda too small for a larger
// size) are listed as not measured, with the planner's reason.
std::vector<Candidate> plan_candidates(const ExplainRequest& o, const Problem& target,
                                       const Annotation& target_annotation, std::vector<NotMeasured>& missing) {
  std::vector<Candidate> planned;
  for (Candidate c : neighbours(target, o.shape.square, target_annotation)) {
    try {
      c.problem = form_problem(o.form, c.problem.m, c.problem.n, c.problem.k);
      planned.push_back(std::move(c));
    } catch (const Error& e) {
      missing.push_back({fmt::format("{} ({})", c.value, c.why), e.what()});
    }
  }
  return planned;
}

ExplainPoint make_point(const Wanted& w, const StoredPoint& stored, const Annotation& annotation) {
  ExplainPoint p;
  p.role = w.role;
  p.label = w.label;
  p.candidate = w.candidate;
  p.time_us = stored.result.timing.median_us;
  p.noise = stored.result.timing.noise;
  p.algo = stored.key.algo;
  p.per_call = w.per_call;
  if (annotation.main_kernel >= 0) p.kernel = short_kernel_name(stored.kernels[size_t(annotation.main_kernel)].name);
  p.annotation = annotation;
  return p;
}


MeasureRequest base_request(const ExplainRequest& o) {
  MeasureRequest r;
  r.backends = {o.backend};
  r.lt_algos = o.lt_algos;
  r.measure = o.measure;
  return r;
}

MeasureRequest again_request(const ExplainRequest& o) {
  MeasureRequest r = base_request(o);
  r.measure.warmup_ms = kWarmAgainMs;
  return r;
}

bool surveyed(const ExplainRequest& o) { return o.measure.samples == 0 && (o.pair_seconds > 0 || o.paired_later); }

namespace {
// A request of points that the pairing measures again: a few samples each where surveyed.
MeasureRequest survey_request(const ExplainRequest& o) {
  MeasureRequest r = again_request(o);
  if (surveyed(o)) {
    r.measure.samples = kSurveySamples;
    r.measure.settle = false;  // the pairing compares them at one clock, whatever it is
  }
  return r;
}
}  // namespace

MeasureRequest controls_request(const ExplainRequest& o, const Plan& plan) {
  MeasureRequest r = survey_request(o);
  const auto add_problem = [&](const Problem& p) {
    r.problems.push_back(p);
    return r.problems.size() - 1;
  };
  std::vector<size_t> library;  // problems the library and the fixed kernel both run
  for (const Candidate& c : plan.candidates) library.push_back(add_problem(c.problem));
  if (plan.controls.aligned16) library.push_back(add_problem(*plan.controls.aligned16));
  if (plan.controls.aligned32) library.push_back(add_problem(*plan.controls.aligned32));
  for (size_t p : library) r.pairs.emplace_back(p, 0);
  if (plan.fixed) {
    const size_t target = add_problem(plan.target);
    r.backends.push_back(*plan.fixed);
    for (size_t p : library) r.pairs.emplace_back(p, r.backends.size() - 1);
    r.pairs.emplace_back(target, r.backends.size() - 1);
  }
  return r;
}

std::optional<MeasureRequest> own_time_request(const ExplainRequest& o, const Plan& plan) {
  MeasureRequest r = again_request(o);
  r.backends.clear();
  if (plan.controls.copy) {
    r.problems.push_back(plan.target);
    r.backends.emplace_back(BackendKind::kCopy);
    r.pairs.emplace_back(r.problems.size() - 1, r.backends.size() - 1);
  }
  if (o.controls) {
    r.problems.push_back(plan.controls.floor);
    r.backends.emplace_back(BackendKind::kLaunchFloor);
    r.pairs.emplace_back(r.problems.size() - 1, r.backends.size() - 1);
  }
  if (r.pairs.empty()) return std::nullopt;
  return r;
}

void add_skipped(const MeasureOutcome::Skip& skip, ExplainReport& report) {
  report.missing.push_back(NotMeasured{skip.what, skip.why});
}

std::string measured_source(const ExplainRequest& o, const DeviceContext& device, const MeasureOutcome& total) {
  return fmt::format("measured on {} ({}), driver {}, cuBLAS {}: {} measured now, {} from the store '{}'; "
                     "{}{}, cold L2, {} clocks",
                     device.gpu_name, device.gpu_uuid, device.driver, device.cublas, total.measured, total.reused,
                     o.db, sampling_text(o.measure),
                     surveyed(o) ? fmt::format(" (neighbours, fixed kernel and alternatives: a survey of {} samples "
                                               "each, before the pairing)", kSurveySamples)
                                 : "",
                     to_string(o.measure.clocks));
}

MeasureRequest alternatives_request(const ExplainRequest& o, const Problem& target,
                                    const std::optional<Problem>& neighbour) {
  MeasureRequest r = survey_request(o);
  r.backends = {BackendSpec(BackendKind::kCublasLt)};
  r.lt_algos = o.alternatives;
  r.problems = {target};
  if (neighbour) r.problems.push_back(*neighbour);
  return r;
}

const StoredPoint* find_anchor(const std::vector<StoredPoint>& pool, const ExplainRequest& o, const Problem& target) {
  for (const StoredPoint& p : pool)
    if (!p.key.hot && p.key.clocks == o.measure.clocks && p.key.backend == o.backend.kind &&
        p.key.algo == o.backend.algo() && p.key.problem == target)
      return &p;
  return nullptr;
}

Plan make_plan(const ExplainRequest& o, const Problem& target, const StoredPoint& anchor,
               const DeviceContext& device, const Store& store, ExplainReport& report) {
  const std::vector<Annotation> own = annotate_points(store, {anchor});
  Plan plan{target, plan_candidates(o, target, own.front(), report.missing), plan_controls(o, target, device),
            fixed_spec(o, device)};
  if (plan.fixed) report.fixed_kernel = plan.fixed->algo();
  return plan;
}

void measure_into(const MeasureRequest& r, const DeviceContext& device, Store& store, const ProgressCallback& progress,
                  const std::atomic<bool>* interrupted, std::vector<StoredPoint>& pool, ExplainReport& report,
                  MeasureOutcome& total) {
  const MeasureOutcome got = measure(r, device, store, progress, interrupted);
  annotate_and_save(store, got.points);
  if (got.interrupted) throw Error(ExitCode::kInterrupted, "explain: interrupted (measured points are saved)");
  for (const MeasureOutcome::Skip& skip : got.skips) add_skipped(skip, report);
  pool.insert(pool.end(), got.points.begin(), got.points.end());
  add_outcome(got, total);
}

void add_outcome(const MeasureOutcome& got, MeasureOutcome& total) {
  total.measured += got.measured;
  total.reused += got.reused;
  PhaseTimes& t = total.phases;
  t.allocate += got.phases.allocate;
  t.prepare += got.phases.prepare;
  t.verify += got.phases.verify;
  t.trace += got.phases.trace;
  t.trace_cupti += got.phases.trace_cupti;
  t.timing += got.phases.timing;
  t.engine.warmup += got.phases.engine.warmup;
  t.engine.gpu_busy += got.phases.engine.gpu_busy;
  t.engine.cooldown += got.phases.engine.cooldown;
}

void PhaseClock::end(const char* phase) {
  if (done_) {
    const PhaseTimes& a = total_.phases;
    const PhaseTimes& b = before_.phases;
    done_(fmt::format("{} ({} points measured, {} reused; allocate {:.1f} s, prepare {:.1f}, verify {:.1f}, graphs "
                      "{:.1f}, CUPTI {:.1f}, timing {:.1f} [warm-up {:.1f}, GPU busy {:.1f}, cool-down {:.1f}])",
                      phase, total_.measured - before_.measured, total_.reused - before_.reused,
                      a.allocate - b.allocate, a.prepare - b.prepare, a.verify - b.verify, a.trace - b.trace,
                      a.trace_cupti - b.trace_cupti, a.timing - b.timing, a.engine.warmup - b.engine.warmup,
                      a.engine.gpu_busy - b.engine.gpu_busy, a.engine.cooldown - b.engine.cooldown),
          seconds_since(since_));
  }
  since_ = std::chrono::steady_clock::now();
  before_ = total_;
}

void explain_target_and_neighbours(const ExplainRequest& o, const Problem& target, ExplainReport& report,
                                   const PointOf& point) {
  const auto add = [&](Role role, Candidate c) {
    std::string label = size_label(o.shape, c.problem);
    std::optional<ExplainPoint> p = point(role, std::move(label), std::move(c));
    if (!p) return;
    report.points.push_back(std::move(*p));
    report.stored.emplace_back();
  };
  Candidate self;
  self.value = o.shape.square ? target.n : 0;
  self.problem = target;
  add(Role::kTarget, self);
  for (Candidate& c : plan_candidates(o, target, report.points.front().annotation, report.missing))
    add(Role::kNeighbour, std::move(c));
  report.explanation = explain(report.points);
}


}  // namespace shapescope
