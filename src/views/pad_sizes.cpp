#include "views/pad_sizes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <unordered_set>

#include "common/error.hpp"
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

// Adds each call's (problem, backend) that `out` does not hold yet (`seen` holds out's).
void add_calls(const std::vector<WorkloadGemm>& calls, BackendKind backend, std::vector<BackendProblem>& out,
               std::unordered_set<Problem, ProblemHash>& seen) {
  for (const WorkloadGemm& g : calls) {
    if (g.usually_fused) continue;
    const Problem p = grouped_problem(g.problems);
    if (seen.insert(p).second) out.push_back({p, profile_backend(p, backend)});
  }
}

void evaluate_all(SizePadResult& r) {
  const StepTimeTerms terms = step_time_terms(r.workload, r.time_of);
  r.before = step_time(terms);
  r.evaluations.clear();
  r.best.clear();
  for (size_t i = 0; i < r.knobs.size(); ++i) {
    std::vector<Evaluation> ev;
    for (const PadCandidate& c : r.candidates[i])
      ev.push_back(evaluate_size(r.workload, r.knobs[i], c, r.before,
                                 step_time_with_dimension(r.workload, terms, r.knobs[i], c.value, r.time_of)));
    r.best.push_back(recommend(ev));
    r.evaluations.push_back(std::move(ev));
  }
}

StepCalls workload_calls(const Workload& w, BackendKind backend) {
  StepCalls out;
  for (const WorkloadGemm& g : w.gemms) {
    if (g.usually_fused) continue;
    const Problem p = grouped_problem(g.problems);
    out.push_back({p, profile_backend(p, backend), double(g.count) / double(std::max<int64_t>(w.steps, 1))});
  }
  return out;
}

// Every candidate measured again beside the workload, in paired passes (views/paired_steps.hpp); a
// GEMM of another dtype that a candidate keeps counts with its time from `m` on both sides.
void pair_sizes(SizePadResult& r, const PadRequest& request, const DeviceContext& device, Store& store,
                const MeasuredSet& m, const std::atomic<bool>* interrupted) {
  std::vector<StepCalls> after;
  std::vector<std::pair<size_t, size_t>> where;
  for (size_t i = 0; i < r.knobs.size(); ++i)
    for (size_t j = 0; j < r.candidates[i].size(); ++j) {
      after.push_back(workload_calls(with_dimension(r.workload, r.knobs[i].value, r.candidates[i][j].value), request.backend));
      where.emplace_back(i, j);
    }
  if (after.empty()) return;
  const TermTime stored = [&m](const StepTerm& t) -> std::optional<double> {
    const std::optional<GemmTime> g = m.time_of(t.problem, t.backend);
    return g ? std::optional<double>(g->median_us) : std::nullopt;
  };
  const PairedSteps paired = pair_steps(workload_calls(r.workload, request.backend), after, device, store,
                                        pad_paired_rule(request.pair_seconds), request.clocks, stored, interrupted);
  if (paired.interrupted) throw Error(ExitCode::kInterrupted, "pad: interrupted (measured points are saved; the same command resumes)");
  r.measured->paired = paired.runs;
  for (size_t k = 0; k < after.size(); ++k) {
    const auto [i, j] = where[k];
    if (paired.steps[k]) add_paired_saving(r.evaluations[i][j], paired.steps[k]->ratio, paired.steps[k]->before_us);
    else r.measured->not_paired.push_back(fmt::format("{} {}: {}", r.choices[i].name, r.candidates[i][j].value, paired.why_not[k]));
  }
  for (size_t i = 0; i < r.evaluations.size(); ++i) r.best[i] = recommend(r.evaluations[i]);
}

}  // namespace

std::vector<BackendProblem> size_pad_problems(const SizePadResult& r, BackendKind backend, bool candidates) {
  // A problem's backend follows from the problem (profile_backend), so the problem alone says which
  // are held already. A candidate changes only the calls its size appears in: the others are the
  // workload's, already added.
  std::vector<BackendProblem> out;
  std::unordered_set<Problem, ProblemHash> seen;
  add_calls(r.workload.gemms, backend, out, seen);
  if (!candidates) return out;
  for (size_t i = 0; i < r.knobs.size(); ++i) {
    const std::vector<size_t> calls = knob_calls(r.knobs[i]);
    for (const PadCandidate& c : r.candidates[i]) {
      std::vector<WorkloadGemm> changed;
      for (const size_t g : calls) changed.push_back(with_dimension(r.workload.gemms[g], r.knobs[i].value, c.value));
      add_calls(changed, backend, out, seen);
    }
  }
  return out;
}

SizePadResult pad_sizes_plan(const Workload& workload, const PadRequest& request) {
  SizePadResult r = sizes_of(workload);
  add_candidates(r, [](const Problem&) { return std::optional<Annotation>(); });
  r.time_of = [](const Problem&) { return std::optional<GemmTime>(); };
  return r;
}

SizePadResult pad_sizes_from_times(const Workload& workload, const AnnotationOf& annotation_of, const GemmTimeOf& time_of) {
  SizePadResult r = sizes_of(workload);
  add_candidates(r, annotation_of);
  r.time_of = time_of;
  evaluate_all(r);
  return r;
}

namespace {

// The workload and its candidates through `m` (measuring, or reading a store), then each candidate
// evaluated; paired with `pair` (a measuring run).
SizePadResult pad_sizes_with(const Workload& workload, const PadRequest& request, const DeviceContext& device,
                             Store& store, const std::shared_ptr<MeasuredSet>& m, const ProgressFor& progress_for,
                             const std::atomic<bool>* interrupted, bool pair) {
  SizePadResult r = sizes_of(workload);
  const BackendKind backend = request.backend;
  std::vector<std::string> skipped = m->measure_all(size_pad_problems(r, backend, false), progress_for);
  add_candidates(r, [&](const Problem& p) { return m->annotation_of(p, profile_backend(p, backend)); });
  const std::vector<std::string> more = m->measure_all(size_pad_problems(r, backend, true), progress_for);
  skipped.insert(skipped.end(), more.begin(), more.end());
  for (const std::string& why : skipped) fmt::print(stderr, "skipped: {}\n", why);
  r.time_of = [m, backend](const Problem& p) { return m->time_of(p, profile_backend(p, backend)); };
  evaluate_all(r);
  const Peak bandwidth = model_gpu(device, store.load_calibration(device)).peak_bandwidth();
  r.measured = PadMeasurement{m->summary(), bandwidth, {}, {}};
  if (pair && request.pair_seconds > 0) pair_sizes(r, request, device, store, *m, interrupted);
  return r;
}

}  // namespace

SizePadResult pad_sizes_measure(const Workload& workload, const PadRequest& request, const DeviceContext& device,
                                Store& store, const ProgressFor& progress_for, const std::atomic<bool>* interrupted) {
  auto m = std::make_shared<MeasuredSet>(device, store, request.samples, request.clocks, interrupted, "pad");
  return pad_sizes_with(workload, request, device, store, m, progress_for, interrupted, true);
}

SizePadResult pad_sizes_from_store(const Workload& workload, const PadRequest& request) {
  const std::vector<BackendProblem> calls = size_pad_problems(sizes_of(workload), request.backend, false);
  StoredSetup s = stored_setup(request, calls, fmt::format("the {} GEMMs of {}", calls.size(), workload.source));
  auto m = std::make_shared<MeasuredSet>(s.device, *s.store, request.samples, request.clocks, nullptr, "pad");
  m->read_only_from(std::move(s.pool));
  const ProgressFor silent = [](size_t) { return ProgressCallback(); };
  return pad_sizes_with(workload, request, s.device, *s.store, m, silent, nullptr, false);
}

}  // namespace shapescope
