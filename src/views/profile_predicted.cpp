// profile --predict (views/profile.hpp, profile_predict): a step's GEMMs, verdicts and what-ifs from a
// GPU's performance model, nothing measured. The what-ifs the model prices are the changes to a GEMM's
// shape it predicts like any other GEMM: explain's predicted size fixes (padding, size), the same GEMM
// with 16-byte rows (layout) and in another dtype it has a class for (precision). What it cannot price
// is listed with why, never dropped.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "common/error.hpp"
#include "model/explain_fp8.hpp"
#include "views/profile.hpp"

namespace shapescope {
namespace {

std::optional<WhatIfKind> predicted_kind(FixKind kind) {
  switch (kind) {
    case FixKind::kPadUp: return WhatIfKind::kPadding;
    case FixKind::kShrink: return WhatIfKind::kSize;
    default: return std::nullopt;
  }
}

// The predicted verdict of each GEMM with a time: explain_predicted of the job profile_verdict_job plans.
void add_predicted_verdicts(ProfileResult& result, const std::shared_ptr<const GpuPerfModel>& model,
                            const std::atomic<bool>* interrupted) {
  if (!result.request.verdicts) return;
  for (ProfileEntry& e : result.entries) {
    // Nothing is measured, so nothing is lost: ^C ends it at once (a list of thousands takes seconds).
    if (interrupted && interrupted->load()) throw Error(ExitCode::kInterrupted, "profile: interrupted (nothing was measured)");
    if (!e.row.time) continue;
    auto job = profile_verdict_job(e.row.problem, e.row.backend, result.request);
    if (const std::string* why = std::get_if<std::string>(&job)) {
      e.no_verdict = *why;
      continue;
    }
    const ExplainJob& j = std::get<ExplainJob>(job);
    try {
      e.explanation = explain_predicted(j.request, model, j.target, "--predict");
    } catch (const Error& err) {
      e.no_verdict = err.what();
    }
  }
}

// A candidate that runs `changed` in place of each of entry i's calls, at its predicted time.
WhatIfCandidate predicted_candidate(const ProfileEntry& e, size_t i, WhatIfKind kind, const Problem& changed,
                                    const PerfPrediction& after) {
  WhatIfCandidate c;
  c.kind = kind;
  c.entry = i;
  c.per_call.emplace_back(changed, BackendKind::kCublas, e.row.calls_per_step);
  c.predicted_us = after.us;
  c.predicted_error = std::max(e.predicted->cls->accuracy.median, after.cls->accuracy.median);
  c.predicted_outside = !after.outside.empty();
  return c;
}

// Explain's predicted size fixes of entry i: the fastest of each kind.
void size_candidates(const ProfileEntry& e, size_t i, std::vector<WhatIfCandidate>& out) {
  if (!e.explanation || !e.explanation->prediction) return;
  const ExplainReport& r = *e.explanation;
  std::map<WhatIfKind, WhatIfCandidate> fastest;
  for (size_t f = 0; f < r.explanation.fixes.size(); ++f) {
    const Fix& fix = r.explanation.fixes[f];
    const std::optional<WhatIfKind> kind = predicted_kind(fix.kind);
    if (!kind || !fix.point || *fix.point >= r.prediction->points.size()) continue;
    WhatIfCandidate c = predicted_candidate(e, i, *kind, r.points[*fix.point].candidate.problem,
                                            r.prediction->points[*fix.point]);
    c.fix = f;
    if (!fastest.count(*kind) || *c.predicted_us < *fastest[*kind].predicted_us) fastest[*kind] = c;
  }
  for (auto& [kind, c] : fastest) out.push_back(std::move(c));
}

// Where the model cannot price a kind of change: one entry per kind, what and why, with its GEMMs.
struct NotPriced {
  std::vector<ProfileNotPredicted>& list;
  void add(WhatIfKind kind, const std::string& what, const std::string& why, std::optional<size_t> entry) {
    auto it = std::find_if(list.begin(), list.end(), [&](const ProfileNotPredicted& n) {
      return n.kind == kind && n.what == what && n.why == why;
    });
    if (it == list.end()) it = list.insert(list.end(), ProfileNotPredicted{kind, what, why, {}});
    if (entry && std::find(it->entries.begin(), it->entries.end(), *entry) == it->entries.end())
      it->entries.push_back(*entry);
  }
};

// The same GEMM with 16-byte rows (and bases), where its own are not: the aligned class's prediction.
void layout_candidate(const PerfModel& m, const ProfileEntry& e, size_t i, std::vector<WhatIfCandidate>& out,
                      NotPriced& not_priced) {
  const Problem aligned = aligned_layout(e.row.problem, 16);
  if (aligned == e.row.problem) return;
  std::string why;
  const std::optional<PerfPrediction> after = predict(m, aligned, why);
  if (!after) return not_priced.add(WhatIfKind::kLayout, "16-byte rows", why, i);
  WhatIfCandidate c = predicted_candidate(e, i, WhatIfKind::kLayout, aligned, *after);
  c.change = fmt::format("give the operands 16-byte rows (lda {}, ldb {}, ldc {}: storage padded by the program; "
                         "a copy into such rows at run time is not priced)",
                         aligned.lda, aligned.ldb, aligned.ldc);
  out.push_back(std::move(c));
}

// The GEMM in each dtype explain would try: predicted where the model has the dtype's class and the
// change adds nothing the model cannot price (fp8 adds its operands' casts, which are no GEMMs).
void precision_candidates(const PerfModel& m, const ModelGpu& gpu, const ProfileEntry& e, size_t i,
                          std::vector<WhatIfCandidate>& out, NotPriced& not_priced) {
  for (const Problem& p : precision_problems(e.row.problem, gpu.cc_major * 10 + gpu.cc_minor)) {
    const std::string what = std::string(to_string(p.dtype));
    std::string why;
    const std::optional<PerfPrediction> after = predict(m, p, why);
    if (!after) {
      // A dtype the model has no class of at all is said once, whatever the layouts and alignments.
      const bool any =
          std::any_of(m.classes.begin(), m.classes.end(), [&](const PerfClass& c) { return c.dtype == p.dtype; });
      if (!any) why = fmt::format("the model of {} has no {} GEMMs: none were measured", m.gpu, what);
      not_priced.add(WhatIfKind::kPrecision, what, why, i);
      continue;
    }
    if (p.dtype == DType::kFp8) {
      not_priced.add(WhatIfKind::kPrecision, what,
                     "its casts (amax, scale and cast of each operand) are no GEMMs the model predicts", i);
      continue;
    }
    WhatIfCandidate c = predicted_candidate(e, i, WhatIfKind::kPrecision, p, *after);
    c.change = fmt::format("run it in {} (its numerical error is measured on a GPU: not here)", what);
    out.push_back(std::move(c));
  }
}

// The candidates the model prices, and what it cannot.
void predicted_candidates(ProfileResult& result, const PerfModel& m) {
  const ModelGpu gpu = perf_model_gpu(m);
  NotPriced not_priced{result.predicted->not_predicted};
  not_priced.add(WhatIfKind::kAlgorithm, "cuBLASLt's other algorithms, our fixed kernel, batching",
                 "the model predicts the kernel cuBLAS chooses for a shape, not the others a GPU measures",
                 std::nullopt);
  for (size_t i = 0; i < result.entries.size(); ++i) {
    const ProfileEntry& e = result.entries[i];
    if (!e.row.in_total) continue;
    if (e.row.problem.grouped()) {
      not_priced.add(WhatIfKind::kGrouping, "one grouped call against the loop of its groups",
                     "the model has no class of grouped calls", i);
      continue;
    }
    if (!e.predicted) continue;
    size_candidates(e, i, result.candidates);
    layout_candidate(m, e, i, result.candidates, not_priced);
    precision_candidates(m, gpu, e, i, result.candidates, not_priced);
  }
}

// Each list's best change per GEMM at once: the model's sum, as the model has no interaction to price.
void predicted_changed_steps(ProfileResult& result) {
  const WhatIfs w = what_ifs(result);
  for (const auto& [name, list] : {std::pair{kEverySameDtypeChange, &w.same_dtype.ranked},
                                   std::pair{kEveryPrecisionChange, &w.precision.ranked}}) {
    ChangedStep s;
    s.name = name;
    s.predicted = true;
    s.before_us = w.step_us;
    double saved = 0;
    std::map<size_t, bool> taken;  // entries already changed (ranked: the largest saving first)
    for (const WhatIf& x : *list) {
      if (taken[x.entry]) continue;
      taken[x.entry] = true;
      s.candidates.push_back(x.candidate);
      saved += x.saving_us;
    }
    s.after_us = w.step_us - saved;
    if (!s.candidates.empty()) result.changed_steps.push_back(std::move(s));
  }
}

// The total's error: the rows' errors weighted by their predicted time per step (ProfilePrediction).
void total_error(ProfileResult& result) {
  ProfilePrediction& p = *result.predicted;
  double weight = 0;
  for (const ProfileEntry& e : result.entries) {
    if (!e.row.in_total || !e.predicted || !e.row.step_us) continue;
    const double us = *e.row.step_us;
    weight += us;
    p.error_median += us * e.predicted->cls->accuracy.median;
    p.error_p95 += us * e.predicted->cls->accuracy.p95;
    if (e.predicted->outside.empty()) continue;
    ++p.outside_rows;
    p.outside_us += us;
  }
  if (weight > 0) p.error_median /= weight, p.error_p95 /= weight;
}

// A grouped call's groups as a loop of GEMMs, where the model predicts every group.
std::optional<double> predicted_loop(const PerfModel& m, const Problem& call) {
  return groups_loop_us(call, [&](const Problem& group) -> std::optional<double> {
    std::string why;
    const std::optional<PerfPrediction> got = predict(m, group, why);
    return got ? std::optional<double>(got->us) : std::nullopt;
  });
}

}  // namespace

ProfileResult profile_predict(const Workload& workload, const ProfileRequest& request,
                              const std::shared_ptr<const GpuPerfModel>& model, const std::atomic<bool>* interrupted) {
  ProfileResult result;
  result.workload = workload;
  result.request = request;
  const PerfModel& m = model->model;
  std::vector<ProfileRow> rows = profile_rows(workload, request.backend, request.fused_in_total);
  std::map<size_t, std::optional<PerfPrediction>> of_gemm;
  std::map<size_t, std::string> why_of_gemm;
  for (const ProfileRow& r : rows) of_gemm[r.gemm] = predict(m, r.problem, why_of_gemm[r.gemm]);
  rank_rows(rows, [&](const ProfileRow& r) -> std::optional<GemmTime> {
    const std::optional<PerfPrediction>& got = of_gemm.at(r.gemm);
    return got ? std::optional<GemmTime>(predicted_gemm_time(*got)) : std::nullopt;
  });
  result.totals = profile_totals(workload, rows);
  const ModelGpu gpu = perf_model_gpu(m);
  for (ProfileRow& r : rows) {
    ProfileEntry e;
    e.way = BackendSpec(r.backend);
    e.predicted = of_gemm.at(r.gemm);
    if (e.predicted) e.annotation = predicted_annotation(r.problem, *e.predicted, gpu);
    else e.not_predicted = why_of_gemm.at(r.gemm);
    if (r.problem.grouped()) e.loop_us = predicted_loop(m, r.problem);
    e.row = std::move(r);
    result.entries.push_back(std::move(e));
  }
  result.predicted = ProfilePrediction{model, 0, 0, 0, 0, {}};
  total_error(result);
  add_predicted_verdicts(result, model, interrupted);
  // The size what-ifs are explain's fixes: with --no-verdict none is asked for, as when measuring.
  if (!request.verdicts) return result;
  predicted_candidates(result, m);
  predicted_changed_steps(result);
  return result;
}

}  // namespace shapescope
