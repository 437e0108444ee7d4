#include "views/explain.hpp"
#include "views/explain_parts.hpp"

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
#include "model/explain_pairing.hpp"
#include "views/annotated.hpp"

namespace shapescope {
namespace {

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

// The paired passes' request: the chosen points (indices into report.points, the target first),
// each (problem, backend) once with the algos of it that were chosen (cuBLASLt's alternatives at a
// problem are one backend's algos).
MeasureRequest paired_request(const ExplainRequest& o, const Plan& plan, const ExplainReport& report,
                              const std::vector<size_t>& chosen) {
  MeasureRequest r = again_request(o);
  r.backends.clear();
  r.lt_algos = std::max(o.lt_algos, o.alternatives);
  for (size_t i : chosen) {
    if (!report.stored[i]) continue;
    const BackendSpec spec = backend_spec(o, plan, report.points[i]);
    auto at = std::find(r.backends.begin(), r.backends.end(), spec);
    if (at == r.backends.end()) at = r.backends.insert(r.backends.end(), spec);
    const PointKey& key = report.stored[i]->key;
    const size_t backend = size_t(at - r.backends.begin());
    const auto pair = std::find_if(r.pairs.begin(), r.pairs.end(), [&](const auto& p) {
      return p.second == backend && r.problems[p.first] == key.problem;
    });
    if (pair == r.pairs.end()) {
      r.problems.push_back(key.problem);
      r.pairs.emplace_back(r.problems.size() - 1, backend);
      r.pair_algos.push_back({key.algo});
    } else if (auto& algos = r.pair_algos[size_t(pair - r.pairs.begin())];
               std::find(algos.begin(), algos.end(), key.algo) == algos.end()) {
      algos.push_back(key.algo);
    }
  }
  return r;
}

// The points of the explanation measured again, together, in paired passes against the target (a
// stored point is a fact of its moment, not a reference for a later one): those the survey's
// explanation rests on, then others as the budget allows (model/explain_pairing.hpp); explained anew
// from the paired times and intervals, the points left out compared with nothing.
// `total`: the explanation's measurements so far, whose GEMM load counts towards the warm-up.
void pair_points(const ExplainRequest& o, const Plan& plan, const DeviceContext& device, Store& store,
                 const std::atomic<bool>* interrupted, ExplainReport& report, MeasureOutcome& total) {
  PairedRule rule;
  rule.max_seconds = o.pair_seconds;
  // The verdict's threshold is the minimum effect plus the interval's half-width: narrow every one.
  rule.stop_on_verdict = false;
  // A pass holds every point twice with the target after each: the budget holds the fewest pairs and
  // the warm-up pass of what it chooses.
  const PairingBudget budget{rule.max_seconds, rule.min_pairs + 1};
  const PairingChoice choice = choose_paired(report.points, report.explanation, budget);
  // What the verdict rests on gets its pairs whatever the budget (a GEMM of tens of milliseconds
  // would stop at the hard limit, 4x the budget, with 3).
  rule.max_seconds = std::max(rule.max_seconds, choice.pass_us * rule.min_pairs / 1e6);
  MeasureRequest r = paired_request(o, plan, report, choice.paired);
  // The GPU has run the explanation's GEMMs up to now: their load is the pairing's warm-up so far (at
  // the power limit the clock never settles, and the warm-up would wait its whole limit again).
  const double loaded_s = total.phases.engine.warmup + total.phases.engine.gpu_busy;
  if (loaded_s > 0) r.measure.warm_since = steady_seconds() - loaded_s;
  r.paired = rule;
  PairingFacts facts;
  facts.budget_s = budget.seconds;
  facts.pair_all_s = choice.all_pass_us * budget.passes / 1e6;
  const MeasureOutcome got = measure(r, device, store, ProgressCallback(), interrupted);
  add_outcome(got, total);
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
  for (const ExplainPoint& p : report.points) {
    if (p.role == Role::kTarget || !paired_role(p.role) || !p.time_us) continue;
    ++(p.paired ? facts.paired : facts.survey_only);
  }
  report.paired = c.outcome;
  report.pairing = facts;
  report.explanation = explain_with_limits(o, report.points, report.over_max_error);
}


}  // namespace

ExplainReport explain_model(const ExplainRequest& o, const GpuProfile& profile, const Problem& target,
                            const std::string& why_not_store) {
  const auto& tile = o.tile;
  if (!tile)
    throw usage_error(fmt::format("--tile: needed for a model prediction on {} ({}); e.g. --tile 256x128",
                                  profile.key, why_not_store));
  const ModelGpu gpu = model_gpu(profile);
  ExplainReport report;
  report.shape = o.shape_text;
  report.mode = "model";
  report.source = fmt::format(
      "model prediction for {} ({} SMs) with a {}x{} tile, one CTA per SM, data-parallel; nothing measured ({})",
      profile.name, profile.sm_count, tile->first, tile->second, why_not_store);
  explain_target_and_neighbours(o, target, report, [&](Role role, std::string label, Candidate c) {
    ExplainPoint p;
    p.role = role;
    p.label = std::move(label);
    p.annotation = predict(c.problem, gpu, tile->first, tile->second);
    p.candidate = std::move(c);
    return std::optional<ExplainPoint>(std::move(p));
  });
  return report;
}

ExplainReport explain_without_gpu(const ExplainRequest& o, const GpuProfile* profile, const Problem& target,
                                  const StoreRead* read) {
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
      report.shape = o.shape_text;
      report.mode = "store";
      report.source = fmt::format("from the store '{}' (no GPU measured now): {} ({}), driver {}, cuBLAS {}, measured {}, "
                                  "{} samples, cold L2, {} clocks",
                                  o.db, anchor->device.gpu_name, anchor->device.gpu_uuid, anchor->device.driver,
                                  anchor->device.cublas, anchor->result.measured_at, anchor->result.timing.samples,
                                  to_string(anchor->key.clocks));
      const std::vector<Annotation> own = annotate_points(store, {*anchor});
      Plan plan{target, plan_candidates(o, target, own.front(), report.missing),
                plan_controls(o, target, anchor->device), fixed_spec(o, anchor->device)};
      if (plan.fixed) report.fixed_kernel = plan.fixed->algo();
      const Gatherer g(pool, *anchor, read ? &read->index : nullptr);
      ReportBuilder builder(o, plan, g);
      ExplainReport first = report;
      builder.build(store, std::nullopt, first);
      builder.build(store, compared_problem(first), report);
      return report;
    }
    why_not = fmt::format("the store '{}' holds no measurement of {}{}{}", o.db, what,
                          profile ? " on " + profile->key : "",
                          o.clocks_given ? fmt::format(" at {} clocks", to_string(o.measure.clocks)) : "");
  }
  if (profile && o.perf_model && !o.tile) return explain_predicted(o, o.perf_model, target, "no GPU here and " + why_not);
  if (profile) return explain_model(o, *profile, target, why_not);
  throw Error(ExitCode::kNoGpu,
              fmt::format("explain: no GPU here and {}; measure it on a GPU (shapescope explain {}), or pass "
                          "--gpu KEY --tile BMxBN for a model prediction",
                          why_not, o.shape_text));
}

ExplainReport explain_measured(const ExplainRequest& o, const Problem& target, const DeviceContext& device,
                               Store& store, const ProgressFor& progress_for, const std::atomic<bool>* interrupted,
                               const PhaseDone& phase_done) {
  const auto started = std::chrono::steady_clock::now();
  ExplainReport report;
  report.shape = o.shape_text;
  report.mode = "measured";
  MeasureOutcome total;
  PhaseClock clock(phase_done, total);
  const auto phase = [&](const char* name) { clock.end(name); };
  std::vector<StoredPoint> pool;
  // The target first: its tile and slots choose the wave neighbours.
  MeasureRequest first = base_request(o);
  first.problems = {target};
  measure_into(first, device, store, ProgressCallback(), interrupted, pool, report, total);
  const StoredPoint* anchor = find_anchor(pool, o, target);
  if (!anchor)
    throw Error(ExitCode::kNoGpu, "explain: cannot measure " +
                                      (report.missing.empty() ? describe_problem(target, o.backend)
                                                              : report.missing.front().what + ": " +
                                                                    report.missing.front().why));
  const StoredPoint anchor_point = *anchor;
  const Plan plan = make_plan(o, target, anchor_point, device, store, report);
  phase("target");

  // The neighbours and the controls, then cuBLASLt's alternatives at the target and at the
  // neighbour the verdict compares with (known only once the neighbours are measured).
  const MeasureRequest rest = controls_request(o, plan);
  measure_into(rest, device, store, progress_for(rest.pairs.size()), interrupted, pool, report, total);
  if (const std::optional<MeasureRequest> own = own_time_request(o, plan))
    measure_into(*own, device, store, ProgressCallback(), interrupted, pool, report, total);
  phase("neighbours and controls");
  for (const MeasureRequest& r : precision_requests(o, target, plan.controls.precision))
    measure_into(r, device, store, ProgressCallback(), interrupted, pool, report, total);
  phase("other precisions");
  const Gatherer g(pool, anchor_point);
  ReportBuilder builder(o, plan, g);
  ExplainReport draft = report;
  builder.build(store, std::nullopt, draft);
  const std::optional<Problem> neighbour = compared_problem(draft);
  if (o.controls) {
    const MeasureRequest alternatives = alternatives_request(o, target, neighbour);
    measure_into(alternatives, device, store, progress_for(alternatives.problems.size() * size_t(o.alternatives)),
                 interrupted, pool, report, total);
  }
  phase("alternatives");
  builder.build(store, neighbour, report);
  add_numerical_errors(o, target, plan.controls.precision, device, report);
  phase("numerical errors");
  if (o.pair_seconds > 0) {
    pair_points(o, plan, device, store, interrupted, report, total);
    phase("paired");
  }
  report.wall_s = seconds_since(started);
  report.source = measured_source(o, device, total);
  return report;
}

}  // namespace shapescope
