#include "views/pad.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>

#include "common/error.hpp"
#include "core/backend_kind.hpp"
#include "measure/measure.hpp"
#include "timing/stats.hpp"
#include "views/annotated.hpp"

namespace shapescope {

namespace {

void add_candidates(PadAnalysis& a, const ModelConfig& config,
                    const std::function<std::optional<Annotation>(const Problem&)>& annotation_of) {
  a.candidates.clear();
  a.probes.clear();
  for (const ChoiceInfo& c : a.choices) {
    const std::optional<Annotation> probe = annotation_of(c.probe);
    a.candidates.push_back(pad_candidates(config, a.step, c, probe.value_or(Annotation{})));
    a.probes.push_back(probe);
  }
}

std::vector<PadAnalysis> analyses_of(const ModelConfig& config, const PadRequest& r) {
  std::vector<PadAnalysis> analyses;
  for (int64_t t : r.tokens) {
    PadAnalysis a;
    a.step = {t, r.train, r.tp, r.dtype};
    a.gemms = step_gemms(config, a.step);
    a.choices = choices(config, a.step);
    analyses.push_back(std::move(a));
  }
  return analyses;
}

// The points pad measured or found, by problem.
class Measurements {
 public:
  Measurements(const PadRequest& r, const DeviceContext& device, Store& store, const ProgressFor& progress_for,
               const std::atomic<bool>* interrupted)
      : r_(r),
        device_(device),
        store_(store),
        progress_for_(progress_for),
        interrupted_(interrupted),
        algo_(default_algo(r.backend)) {}

  void measure_all(const std::vector<Problem>& problems) {
    MeasureRequest request;
    request.backends = {r_.backend};
    request.measure.samples = r_.samples;
    request.measure.clocks = r_.clocks;
    for (const Problem& p : problems)
      if (!find(p)) request.problems.push_back(p);
    if (request.problems.empty()) return;
    const MeasureOutcome outcome =
        measure(request, device_, store_, progress_for_(request.problems.size()), interrupted_);
    annotate_and_save(store_, outcome.points);
    if (outcome.interrupted)
      throw Error(ExitCode::kInterrupted, "pad: interrupted (measured points are saved; the same command resumes)");
    for (const std::string& why : outcome.skipped) fmt::print(stderr, "skipped: {}\n", why);
    measured_ += outcome.measured;
    reused_ += outcome.reused;
    // Only points of the requested clock state are compared (a burst time beside a sustained one
    // would make a padding look better or worse than it is).
    for (const StoredPoint& p : with_clock_state(outcome.points, r_.clocks)) {
      if (p.key.backend == r_.backend && p.key.algo == algo_ && !p.key.hot) points_.emplace(key_of(p.key.problem), p);
    }
  }

  const StoredPoint* find(const Problem& problem) const {
    const auto found = points_.find(key_of(problem));
    return found != points_.end() && found->second.key.problem == problem ? &found->second : nullptr;
  }

  std::optional<GemmTime> time_of(const Problem& problem) const {
    const StoredPoint* p = find(problem);
    if (!p) return std::nullopt;
    return GemmTime{p->result.timing.median_us, p->result.timing.noise};
  }

  std::optional<Annotation> annotation_of(const Problem& problem) const {
    const StoredPoint* p = find(problem);
    if (!p) return std::nullopt;
    return annotate_points(store_, {*p}).front();
  }

  // Big GEMMs timed back to back run into the power cap: the reader must know the clock.
  PadMeasurement summary() const {
    PadMeasurement m;
    m.device = device_;
    m.measured = measured_;
    m.reused = reused_;
    std::vector<double> clocks;
    for (const auto& [key, p] : points_) {
      if (p.result.timing.sm_clock_mhz) clocks.push_back(*p.result.timing.sm_clock_mhz);
      m.throttled += p.result.timing.throttled;
    }
    m.gemms = points_.size();
    if (!clocks.empty()) m.median_clock_mhz = middle_value(clocks);
    return m;
  }

 private:
  const PadRequest& r_;
  const DeviceContext& device_;
  Store& store_;
  const ProgressFor& progress_for_;
  const std::atomic<bool>* interrupted_;
  std::string algo_;
  // Every problem pad plans is packed and unbatched: its sizes, layout and dtype identify it.
  using Key = std::tuple<int64_t, int64_t, int64_t, Layout, DType>;
  static Key key_of(const Problem& p) { return {p.m, p.n, p.k, p.layout, p.dtype}; }
  std::map<Key, StoredPoint> points_;
  size_t measured_ = 0, reused_ = 0;
};

void evaluate_all(PadAnalysis& a, const ModelConfig& config, const GemmTimeOf& time_of, double gbs) {
  a.before = step_time(a.gemms, time_of);
  a.evaluations.clear();
  a.best.clear();
  for (const auto& list : a.candidates) {
    std::vector<Evaluation> ev;
    for (const PadCandidate& c : list)
      ev.push_back(
          evaluate(config, a.step, a.gemms, a.before, c, step_time(step_gemms(c.config, c.step), time_of), gbs));
    a.best.push_back(recommend(ev));
    a.evaluations.push_back(std::move(ev));
  }
}

}  // namespace

std::vector<Problem> distinct_problems(const std::vector<PadAnalysis>& analyses, bool candidates) {
  std::vector<Problem> out;
  auto add = [&](const Problem& p) {
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  for (const PadAnalysis& a : analyses) {
    for (const StepGemm& g : a.gemms) add(g.problem);
    if (!candidates) continue;
    for (const auto& list : a.candidates)
      for (const PadCandidate& c : list)
        for (const StepGemm& g : step_gemms(c.config, c.step)) add(g.problem);
  }
  return out;
}

PadResult pad_plan(const ModelConfig& config, const PadRequest& request) {
  PadResult result;
  result.analyses = analyses_of(config, request);
  for (PadAnalysis& a : result.analyses)
    add_candidates(a, config, [](const Problem&) { return std::optional<Annotation>(); });
  result.time_of = [](const Problem&) { return std::optional<GemmTime>(); };
  return result;
}

PadResult pad_measure(const ModelConfig& config, const PadRequest& request, const DeviceContext& device, Store& store,
                      const ProgressFor& progress_for, const std::atomic<bool>* interrupted) {
  PadResult result;
  result.analyses = analyses_of(config, request);
  auto m = std::make_shared<Measurements>(request, device, store, progress_for, interrupted);
  m->measure_all(distinct_problems(result.analyses, false));
  for (PadAnalysis& a : result.analyses)
    add_candidates(a, config, [&](const Problem& p) { return m->annotation_of(p); });
  m->measure_all(distinct_problems(result.analyses, true));

  const Peak bandwidth = model_gpu(device, store.load_calibration(device)).peak_bandwidth();
  const double gbs = bandwidth.measured ? bandwidth.value : 0;
  result.time_of = [m](const Problem& p) { return m->time_of(p); };
  for (PadAnalysis& a : result.analyses) evaluate_all(a, config, result.time_of, gbs);
  result.measured = m->summary();
  result.measured->bandwidth = bandwidth;
  return result;
}

}  // namespace shapescope
