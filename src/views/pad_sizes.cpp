#include "views/pad_sizes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "model/profile.hpp"

namespace shapescope {
namespace {

// The step a size's candidates are proposed for: only its dtype matters (the alignment to keep).
StepOptions probe_step(const ChoiceInfo& c) { return {0, false, 1, c.probe.dtype}; }

void add_candidates(SizePadResult& r, const std::function<std::optional<Annotation>(const Problem&)>& annotation_of) {
  r.candidates.clear();
  r.probes.clear();
  for (const ChoiceInfo& c : r.choices) {
    const std::optional<Annotation> probe = annotation_of(c.probe);
    r.candidates.push_back(pad_candidates(ModelConfig{}, probe_step(c), c, probe.value_or(Annotation{})));
    r.probes.push_back(probe);
  }
}

SizePadResult sizes_of(const Workload& w) {
  SizePadResult r;
  r.workload = w;
  r.knobs = dimension_knobs(w);
  for (const DimensionKnob& k : r.knobs) r.choices.push_back(knob_choice(w, k));
  return r;
}

void add_calls(const Workload& w, BackendKind backend, std::vector<BackendProblem>& out) {
  for (const WorkloadGemm& g : w.gemms) {
    if (g.usually_fused) continue;
    const Problem p = grouped_problem(g.problems);
    const BackendProblem bp{p, profile_backend(p, backend)};
    if (std::find(out.begin(), out.end(), bp) == out.end()) out.push_back(bp);
  }
}

void evaluate_all(SizePadResult& r) {
  r.before = workload_step_time(r.workload, r.time_of);
  r.evaluations.clear();
  r.best.clear();
  for (size_t i = 0; i < r.knobs.size(); ++i) {
    std::vector<Evaluation> ev;
    for (const PadCandidate& c : r.candidates[i]) {
      const Workload after = with_dimension(r.workload, r.knobs[i].value, c.value);
      ev.push_back(evaluate_size(r.workload, r.knobs[i], c, r.before, workload_step_time(after, r.time_of)));
    }
    r.best.push_back(recommend(ev));
    r.evaluations.push_back(std::move(ev));
  }
}

}  // namespace

std::vector<BackendProblem> size_pad_problems(const SizePadResult& r, BackendKind backend, bool candidates) {
  std::vector<BackendProblem> out;
  add_calls(r.workload, backend, out);
  if (!candidates) return out;
  for (size_t i = 0; i < r.knobs.size(); ++i)
    for (const PadCandidate& c : r.candidates[i]) add_calls(with_dimension(r.workload, r.knobs[i].value, c.value), backend, out);
  return out;
}

SizePadResult pad_sizes_plan(const Workload& workload, const PadRequest& request) {
  SizePadResult r = sizes_of(workload);
  add_candidates(r, [](const Problem&) { return std::optional<Annotation>(); });
  r.time_of = [](const Problem&) { return std::optional<GemmTime>(); };
  return r;
}

SizePadResult pad_sizes_measure(const Workload& workload, const PadRequest& request, const DeviceContext& device,
                                Store& store, const ProgressFor& progress_for, const std::atomic<bool>* interrupted) {
  SizePadResult r = sizes_of(workload);
  auto m = std::make_shared<MeasuredSet>(device, store, request.samples, request.clocks, interrupted, "pad");
  const BackendKind backend = request.backend;
  std::vector<std::string> skipped = m->measure_all(size_pad_problems(r, backend, false), progress_for);
  add_candidates(r, [&](const Problem& p) { return m->annotation_of(p, profile_backend(p, backend)); });
  const std::vector<std::string> more = m->measure_all(size_pad_problems(r, backend, true), progress_for);
  skipped.insert(skipped.end(), more.begin(), more.end());
  for (const std::string& why : skipped) fmt::print(stderr, "skipped: {}\n", why);
  r.time_of = [m, backend](const Problem& p) { return m->time_of(p, profile_backend(p, backend)); };
  evaluate_all(r);
  const Peak bandwidth = model_gpu(device, store.load_calibration(device)).peak_bandwidth();
  r.measured = PadMeasurement{m->summary(), bandwidth};
  return r;
}

}  // namespace shapescope
