// Several explanations measured together (views/explain.hpp: explain_many): explain_measured's
// phases, each one measure() for every job.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "views/explain_parts.hpp"

namespace shapescope {
namespace {

// One job on its way: its report, and what its later phases need (kept in place: the builder holds
// references to the plan and the gatherer).
struct JobState {
  const ExplainJob* job = nullptr;
  ExplainReport report;
  std::string why_none;
  std::optional<StoredPoint> anchor;
  std::unique_ptr<Plan> plan;
  std::unique_ptr<Gatherer> gatherer;
  std::unique_ptr<ReportBuilder> builder;
  std::optional<Problem> neighbour;
  bool ok() const { return why_none.empty(); }
};

// The requests of several jobs as one: their problems, each (problem, backend) once, the backends
// joined; the measuring options of the first.
MeasureRequest merged(const std::vector<MeasureRequest>& parts) {
  MeasureRequest out = parts.front();
  out.problems.clear();
  out.backends.clear();
  out.pairs.clear();
  for (const MeasureRequest& part : parts) {
    std::vector<size_t> backend_at;
    for (const BackendSpec& b : part.backends) {
      auto it = std::find(out.backends.begin(), out.backends.end(), b);
      if (it == out.backends.end()) it = out.backends.insert(out.backends.end(), b);
      backend_at.push_back(size_t(it - out.backends.begin()));
    }
    std::vector<std::pair<size_t, size_t>> pairs = part.pairs;
    if (pairs.empty())
      for (size_t p = 0; p < part.problems.size(); ++p)
        for (size_t b = 0; b < part.backends.size(); ++b) pairs.emplace_back(p, b);
    for (const auto& [p, b] : pairs) {
      auto it = std::find(out.problems.begin(), out.problems.end(), part.problems[p]);
      if (it == out.problems.end()) it = out.problems.insert(out.problems.end(), part.problems[p]);
      const std::pair<size_t, size_t> pair(size_t(it - out.problems.begin()), backend_at[b]);
      if (std::find(out.pairs.begin(), out.pairs.end(), pair) == out.pairs.end()) out.pairs.push_back(pair);
    }
    out.lt_algos = std::max(out.lt_algos, part.lt_algos);
  }
  return out;
}

// Each job's request (nullopt: it has none in this phase) measured as one; the points go to the pool,
// each skip line to the jobs whose request held its problem.
void measure_phase(const std::vector<std::optional<MeasureRequest>>& requests, std::vector<JobState>& jobs,
                   const DeviceContext& device, Store& store, const std::atomic<bool>* interrupted,
                   std::vector<StoredPoint>& pool, MeasureOutcome& total) {
  std::vector<MeasureRequest> parts;
  for (const auto& r : requests)
    if (r) parts.push_back(*r);
  if (parts.empty()) return;
  const MeasureOutcome got = measure(merged(parts), device, store, ProgressCallback(), interrupted);
  annotate_and_save(store, got.points);
  if (got.interrupted) throw Error(ExitCode::kInterrupted, "explain: interrupted (measured points are saved)");
  for (const MeasureOutcome::Skip& skip : got.skips)
    for (size_t j = 0; j < jobs.size(); ++j) {
      const std::vector<Problem>* problems = requests[j] ? &requests[j]->problems : nullptr;
      if (problems && std::find(problems->begin(), problems->end(), skip.problem) != problems->end())
        add_skipped(skip, jobs[j].report);
    }
  pool.insert(pool.end(), got.points.begin(), got.points.end());
  add_outcome(got, total);
}

// A phase's request of each job that is still going.
template <class Make>
std::vector<std::optional<MeasureRequest>> requests_of(std::vector<JobState>& jobs, Make make) {
  std::vector<std::optional<MeasureRequest>> out;
  for (JobState& s : jobs) out.push_back(s.ok() ? make(s) : std::nullopt);
  return out;
}

// Each job's target found in the pool (or why it has none), and its plan.
void plan_jobs(std::vector<JobState>& states, const std::vector<StoredPoint>& pool, const DeviceContext& device,
               const Store& store) {
  for (JobState& s : states) {
    const ExplainRequest& o = s.job->request;
    const StoredPoint* anchor = find_anchor(pool, o, s.job->target);
    if (!anchor) {
      s.why_none = "explain: cannot measure " + (s.report.missing.empty() ? describe_problem(s.job->target, o.backend)
                                                                          : s.report.missing.front().what + ": " +
                                                                                s.report.missing.front().why);
      continue;
    }
    s.anchor = *anchor;
    s.plan = std::make_unique<Plan>(make_plan(o, s.job->target, *s.anchor, device, store, s.report));
  }
}

// Each other precision: a request per dtype (its operands hold that dtype's values), every job's at once.
void measure_precisions(std::vector<JobState>& states, const DeviceContext& device, Store& store,
                        const std::atomic<bool>* interrupted, std::vector<StoredPoint>& pool, MeasureOutcome& total) {
  std::map<DType, std::vector<std::optional<MeasureRequest>>> by_dtype;
  for (size_t j = 0; j < states.size(); ++j) {
    if (!states[j].ok()) continue;
    for (const MeasureRequest& r :
         precision_requests(states[j].job->request, states[j].job->target, states[j].plan->controls.precision)) {
      auto& list = by_dtype[r.problems.front().dtype];
      list.resize(states.size());
      list[j] = r;
    }
  }
  for (const auto& [dtype, requests] : by_dtype) measure_phase(requests, states, device, store, interrupted, pool, total);
}

}  // namespace

std::vector<ExplainJobResult> explain_many(const std::vector<ExplainJob>& jobs, const DeviceContext& device,
                                           Store& store, const std::atomic<bool>* interrupted,
                                           const PhaseDone& phase_done) {
  const auto started = std::chrono::steady_clock::now();
  MeasureOutcome total;
  PhaseClock clock(phase_done, total);
  const auto phase = [&](const char* name) { clock.end(name); };
  std::vector<JobState> states(jobs.size());
  for (size_t j = 0; j < jobs.size(); ++j) {
    states[j].job = &jobs[j];
    states[j].report.shape = jobs[j].request.shape_text;
    states[j].report.mode = "measured";
  }
  std::vector<StoredPoint> pool;
  // The targets first: their tiles and slots choose the wave neighbours.
  measure_phase(requests_of(states,
                            [](JobState& s) -> std::optional<MeasureRequest> {
                              MeasureRequest r = base_request(s.job->request);
                              r.problems = {s.job->target};
                              return r;
                            }),
                states, device, store, interrupted, pool, total);
  plan_jobs(states, pool, device, store);
  phase("verdicts: targets");
  // The neighbours and controls of every job; then each other precision.
  measure_phase(requests_of(states, [](JobState& s) { return std::optional(controls_request(s.job->request, *s.plan)); }),
                states, device, store, interrupted, pool, total);
  measure_phase(requests_of(states, [](JobState& s) { return own_time_request(s.job->request, *s.plan); }), states,
                device, store, interrupted, pool, total);
  phase("verdicts: neighbours and controls");
  measure_precisions(states, device, store, interrupted, pool, total);
  phase("verdicts: other precisions");
  // cuBLASLt's alternatives at each target and at the neighbour its verdict compares with.
  for (JobState& s : states) {
    if (!s.ok()) continue;
    s.gatherer = std::make_unique<Gatherer>(pool, *s.anchor);
    s.builder = std::make_unique<ReportBuilder>(s.job->request, *s.plan, *s.gatherer);
    ExplainReport draft = s.report;
    s.builder->build(store, std::nullopt, draft);
    s.neighbour = compared_problem(draft);
  }
  measure_phase(requests_of(states,
                            [](JobState& s) -> std::optional<MeasureRequest> {
                              if (!s.job->request.controls) return std::nullopt;
                              return alternatives_request(s.job->request, s.job->target, s.neighbour);
                            }),
                states, device, store, interrupted, pool, total);
  phase("verdicts: alternatives");
  std::vector<ExplainJobResult> out(states.size());
  for (size_t j = 0; j < states.size(); ++j) {
    JobState& s = states[j];
    if (!s.ok()) {
      out[j].why_none = s.why_none;
      continue;
    }
    s.builder->build(store, s.neighbour, s.report);
    add_numerical_errors(s.job->request, s.job->target, s.plan->controls.precision, device, s.report);
    s.report.wall_s = seconds_since(started);
    s.report.source = measured_source(s.job->request, device, total);
    out[j].report = std::move(s.report);
  }
  phase("verdicts: numerical errors");
  return out;
}

}  // namespace shapescope
