// explain's measured and stored paths, in pieces (views/explain.cpp and views/explain_many.cpp put
// them together): what explain asks for besides the target (its neighbours, the same-work controls,
// the fixed kernel), the requests that measure them, the pool of points they end in, and the report
// built from that pool. Internal to the views: the commands call views/explain.hpp.
#pragma once
#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "measure/measure.hpp"
#include "model/kernel_name.hpp"
#include "views/annotated.hpp"
#include "views/explain.hpp"
#include "views/explain_names.hpp"
#include "views/explain_precision.hpp"
#include "views/point_index.hpp"

namespace shapescope {

// The GPU is warm after the target's measurement: the later batches need no long warm-up.
constexpr double kWarmAgainMs = 30;

// The problems of the same-work controls, and of the target in other precisions.
struct Controls {
  std::optional<Problem> aligned16, aligned32;
  bool copy = false;
  Problem floor;
  PrecisionControls precision;  // the target in other precisions, and every fp8 point's casts
};

Controls plan_controls(const ExplainRequest& o, const Problem& target, const DeviceContext& device);

// Candidates as problems; those the planner refuses (an explicit --lda too small for a larger
// size) are listed as not measured, with the planner's reason.
std::vector<Candidate> plan_candidates(const ExplainRequest& o, const Problem& target,
                                       const Annotation& target_annotation, std::vector<NotMeasured>& missing);

// What explain needs from the pool of stored points, each with its role.
struct Wanted {
  Role role;
  std::string label;
  Candidate candidate;
  BackendKind backend = BackendKind::kCublas;  // the store key's
  std::string algo;
  std::optional<size_t> of;   // kFixedKernel: the index (into the wanted list) of its library point; kCast: its fp8 point's
  bool per_call = true;       // kCast: an activation's cast
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

ExplainPoint make_point(const Wanted& w, const StoredPoint& stored, const Annotation& annotation);

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
  ReportBuilder(const ExplainRequest& o, const Plan& plan, const Gatherer& g) : o_(o), plan_(plan), g_(g) {}

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
    report.explanation = explain_with_limits(o_, report.points, report.over_max_error);
  }

 private:
  Candidate self() const {
    Candidate c;
    c.value = o_.shape.square ? plan_.target.n : 0;
    c.problem = plan_.target;
    return c;
  }
  Candidate with_problem(const Problem& p) const {
    Candidate c = self();
    c.problem = p;
    return c;
  }
  void want(Role role, std::string label, Candidate c, BackendKind backend, std::string algo,
            std::optional<size_t> of = std::nullopt, bool per_call = true) {
    wanted_.push_back({role, std::move(label), std::move(c), backend, std::move(algo), of, per_call});
  }
  void library_points() {
    const BackendKind backend = o_.backend.kind;
    const std::string algo = o_.backend.algo();
    want(Role::kTarget, size_label(o_.shape, plan_.target), self(), backend, algo);
    for (const Candidate& c : plan_.candidates) want(Role::kNeighbour, size_label(o_.shape, c.problem), c, backend, algo);
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
    const size_t first_precision = wanted_.size();
    for (const Problem& p : plan_.controls.precision.problems) {
      const BackendSpec spec = precision_backend(o_, p.dtype);
      want(Role::kPrecision, precision_label(p), with_problem(p), spec.kind, spec.algo());
    }
    for (const CastControl& c : plan_.controls.precision.casts)
      want(Role::kCast, c.label, with_problem(c.problem), BackendKind::kCast, "default",
           c.precision ? first_precision + *c.precision : 0, c.per_call);
  }
  void alternatives(const Problem& p, Role role, const Candidate& c) {
    const bool library_is_lt = o_.backend.kind == BackendKind::kCublasLt;
    for (const StoredPoint* s : g_.alternatives(p)) {
      if (role == Role::kNeighbourAlternative && library_is_lt && s->key.algo == o_.backend.algo()) continue;
      want(role, role == Role::kAlternative ? s->key.algo : size_label(o_.shape, p) + " " + s->key.algo, c,
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
                            w.role == Role::kPrecision || w.role == Role::kCast;
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
  const Plan& plan_;
  const Gatherer& g_;
  std::vector<Wanted> wanted_;
};


MeasureRequest base_request(const ExplainRequest& o);
// The same for a batch after the target's: the GPU is warm, kWarmAgainMs of warm-up.
MeasureRequest again_request(const ExplainRequest& o);

// Whether the points that are paired later (the neighbours, the fixed kernel's, the alternatives) are
// first measured with kSurveySamples samples: paired later, and no --samples given.
bool surveyed(const ExplainRequest& o);

// The neighbours, the layout controls and the fixed kernel in one request ((problem, backend) pairs):
// the points the pairing measures again, surveyed where they will be.
MeasureRequest controls_request(const ExplainRequest& o, const Plan& plan);
// The controls whose own times place the target (the run-time copy, the launch floor), timed by the
// request's rule: nullopt where there are none.
std::optional<MeasureRequest> own_time_request(const ExplainRequest& o, const Plan& plan);


// cuBLASLt's alternatives at the target and at the neighbour the verdict compares with.
MeasureRequest alternatives_request(const ExplainRequest& o, const Problem& target,
                                    const std::optional<Problem>& neighbour);
// The target's point in the pool: cold, of the request's clock state, backend and algo.
const StoredPoint* find_anchor(const std::vector<StoredPoint>& pool, const ExplainRequest& o, const Problem& target);
// Everything explain asks for besides the target, from the target's own point (its tile and slots
// choose the wave neighbours); candidates the planner refuses go to report.missing.
Plan make_plan(const ExplainRequest& o, const Problem& target, const StoredPoint& anchor,
               const DeviceContext& device, const Store& store, ExplainReport& report);
// A point measure() skipped, as a point explain wanted and has not (what, why).
void add_skipped(const MeasureOutcome::Skip& skip, ExplainReport& report);
// The source line of a measured explanation: the GPU, what was measured now and reused, how.
std::string measured_source(const ExplainRequest& o, const DeviceContext& device, const MeasureOutcome& total);

// Runs one request, annotates and saves what it measured, and adds it to the pool.
void measure_into(const MeasureRequest& r, const DeviceContext& device, Store& store, const ProgressCallback& progress,
                  const std::atomic<bool>* interrupted, std::vector<StoredPoint>& pool, ExplainReport& report,
                  MeasureOutcome& total);
// A measure() call's counts and phase times added to the running total of an explanation's calls.
void add_outcome(const MeasureOutcome& got, MeasureOutcome& total);

// Tells `done` (if set) each phase of an explanation as it ends: its wall time, and from `total` (the
// running sum of its measure() calls, add_outcome) the points it measured and reused and where the
// measurements' seconds went, so that a slow phase names its cost.
class PhaseClock {
 public:
  PhaseClock(const PhaseDone& done, const MeasureOutcome& total) : done_(done), total_(total) {}
  void end(const char* phase);

 private:
  const PhaseDone& done_;
  const MeasureOutcome& total_;
  MeasureOutcome before_;  // total_ when the phase began
  std::chrono::steady_clock::time_point since_ = std::chrono::steady_clock::now();
};

// An explanation without a measurement: the target and its size neighbours, each made a point by
// `point` (nullopt: none; `point` says why where it matters), the target first (its annotation
// chooses the wave neighbours), then explained.
using PointOf = std::function<std::optional<ExplainPoint>(Role role, std::string label, Candidate c)>;
void explain_target_and_neighbours(const ExplainRequest& o, const Problem& target, ExplainReport& report,
                                   const PointOf& point);


}  // namespace shapescope
