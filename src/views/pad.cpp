#include "views/pad.hpp"

#include <filesystem>
#include <unordered_set>

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
    a.step = {t, r.train, r.tp, r.dtype, r.fp8};
    a.gemms = step_gemms(config, a.step);
    a.choices = choices(config, a.step);
    analyses.push_back(std::move(a));
  }
  return analyses;
}

// measure_all's skip lines, as pad has always printed them.
void print_skipped(const std::vector<std::string>& skipped) {
  for (const std::string& why : skipped) fmt::print(stderr, "skipped: {}\n", why);
}

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

StepCalls step_calls(const std::vector<StepGemm>& gemms, BackendKind backend) {
  StepCalls out;
  for (const StepGemm& g : gemms) out.push_back({g.problem, backend, double(g.count)});
  return out;
}

// Every candidate of `a` measured again beside the step, in paired passes; each one paired gets
// its saving from the ratio, and each choice its recommendation anew.
void pair_analysis(PadAnalysis& a, const PadRequest& request, const DeviceContext& device, Store& store,
                   const std::atomic<bool>* interrupted, PadMeasurement& measured) {
  std::vector<StepCalls> after;
  std::vector<std::pair<size_t, size_t>> where;  // (choice, candidate) of each
  for (size_t i = 0; i < a.candidates.size(); ++i)
    for (size_t j = 0; j < a.candidates[i].size(); ++j) {
      const PadCandidate& c = a.candidates[i][j];
      after.push_back(step_calls(step_gemms(c.config, c.step), request.backend));
      where.emplace_back(i, j);
    }
  if (after.empty()) return;
  const PairedSteps paired = pair_steps(step_calls(a.gemms, request.backend), after, device, store,
                                        pad_paired_rule(request.pair_seconds), request.clocks, {}, interrupted);
  if (paired.interrupted) throw Error(ExitCode::kInterrupted, "pad: interrupted (measured points are saved; the same command resumes)");
  measured.paired.insert(measured.paired.end(), paired.runs.begin(), paired.runs.end());
  for (size_t k = 0; k < after.size(); ++k) {
    const auto [i, j] = where[k];
    if (paired.steps[k]) add_paired_saving(a.evaluations[i][j], paired.steps[k]->ratio, paired.steps[k]->before_us);
    else measured.not_paired.push_back(fmt::format("{} {}: {}", a.choices[i].name, a.candidates[i][j].value, paired.why_not[k]));
  }
  for (size_t i = 0; i < a.evaluations.size(); ++i) a.best[i] = recommend(a.evaluations[i]);
}

}  // namespace

PairedRule pad_paired_rule(double pair_seconds) {
  PairedRule rule;
  rule.target = 0.005;
  rule.max_seconds = pair_seconds;
  return rule;
}

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

// Pad measures a model's step with one backend: every problem it plans is an ordinary packed GEMM.
std::vector<BackendProblem> with_backend(const std::vector<Problem>& problems, BackendKind backend) {
  std::vector<BackendProblem> out;
  for (const Problem& p : problems) out.emplace_back(p, backend);
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

PadResult pad_from_times(const ModelConfig& config, const PadRequest& request, const AnnotationOf& annotation_of,
                         const GemmTimeOf& time_of) {
  PadResult result;
  result.analyses = analyses_of(config, request);
  for (PadAnalysis& a : result.analyses) add_candidates(a, config, annotation_of);
  result.time_of = time_of;
  // No calibrated copy bandwidth: the tokens' run-time copy stays unpriced.
  for (PadAnalysis& a : result.analyses) evaluate_all(a, config, time_of, 0);
  return result;
}

namespace {

// The step and its candidates through `m` (measuring, or reading a store), then each candidate
// evaluated.
PadResult pad_with(const ModelConfig& config, const PadRequest& request, const DeviceContext& device, Store& store,
                   const std::shared_ptr<MeasuredSet>& m, const ProgressFor& progress_for,
                   const std::atomic<bool>* interrupted, bool pair) {
  PadResult result;
  result.analyses = analyses_of(config, request);
  const BackendKind backend = request.backend;
  print_skipped(m->measure_all(with_backend(distinct_problems(result.analyses, false), backend), progress_for));
  for (PadAnalysis& a : result.analyses)
    add_candidates(a, config, [&](const Problem& p) { return m->annotation_of(p, backend); });
  print_skipped(m->measure_all(with_backend(distinct_problems(result.analyses, true), backend), progress_for));

  const Peak bandwidth = model_gpu(device, store.load_calibration(device)).peak_bandwidth();
  const double gbs = bandwidth.measured ? bandwidth.value : 0;
  result.time_of = [m, backend](const Problem& p) { return m->time_of(p, backend); };
  for (PadAnalysis& a : result.analyses) evaluate_all(a, config, result.time_of, gbs);
  result.measured = PadMeasurement{m->summary(), bandwidth, {}, {}};
  if (pair && request.pair_seconds > 0)
    for (PadAnalysis& a : result.analyses) pair_analysis(a, request, device, store, interrupted, *result.measured);
  return result;
}

}  // namespace

PadResult pad_measure(const ModelConfig& config, const PadRequest& request, const DeviceContext& device, Store& store,
                      const ProgressFor& progress_for, const std::atomic<bool>* interrupted) {
  auto m = std::make_shared<MeasuredSet>(device, store, request.samples, request.clocks, interrupted, "pad");
  return pad_with(config, request, device, store, m, progress_for, interrupted, true);
}

StoredSetup stored_setup(const PadRequest& request, const std::vector<BackendProblem>& step, const std::string& what) {
  const std::string again = "measure them on a GPU with the same command, or see the plan with --dry-run";
  if (!std::filesystem::exists(std::filesystem::symlink_status(request.db)))  // a dangling link: the store says so
    throw Error(ExitCode::kNoGpu, fmt::format("pad: no GPU here and no store '{}' to read the GEMMs from; {}",
                                              request.db, again));
  StoredSetup out;
  out.store = std::make_unique<Store>(request.db, Store::Access::kReadOnly);
  out.pool = out.store->load_all();
  std::unordered_set<Problem, ProblemHash> wanted;
  for (const auto& [problem, backend] : step) wanted.insert(problem);
  const auto backend_of = [&](const Problem& p) {
    return std::find_if(step.begin(), step.end(), [&](const BackendProblem& b) { return b.first == p; })->second;
  };
  // The setup (GPU, driver, libraries) that holds most of the step's GEMMs.
  std::vector<std::pair<DeviceContext, std::unordered_set<Problem, ProblemHash>>> setups;  // each one's GEMMs held
  for (const StoredPoint& p : out.pool) {
    if (p.key.hot || !wanted.count(p.key.problem)) continue;
    const BackendKind backend = backend_of(p.key.problem);
    if (p.key.backend != backend || p.key.algo != default_algo(backend)) continue;
    auto it = std::find_if(setups.begin(), setups.end(), [&](const auto& s) { return same_setup(s.first, p.device); });
    if (it == setups.end()) it = setups.insert(setups.end(), {p.device, {}});
    it->second.insert(p.key.problem);
  }
  size_t most = 0;
  for (const auto& [setup, held] : setups)
    if (held.size() > most) std::tie(most, out.device) = std::make_pair(held.size(), setup);
  if (most == 0)
    throw Error(ExitCode::kNoGpu, fmt::format("pad: no GPU here, and the store '{}' holds none of {}; {}", request.db,
                                              what, again));
  return out;
}

PadResult pad_from_store(const ModelConfig& config, const PadRequest& request) {
  const std::vector<Problem> step = distinct_problems(analyses_of(config, request), false);
  StoredSetup s = stored_setup(request, with_backend(step, request.backend), fmt::format("the step's {} GEMMs", step.size()));
  auto m = std::make_shared<MeasuredSet>(s.device, *s.store, request.samples, request.clocks, nullptr, "pad");
  m->read_only_from(std::move(s.pool));
  const ProgressFor silent = [](size_t) { return ProgressCallback(); };
  return pad_with(config, request, s.device, *s.store, m, silent, nullptr, false);
}

}  // namespace shapescope
