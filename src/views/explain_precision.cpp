#include "views/explain_precision.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "core/fp8.hpp"
#include "measure/precision_error.hpp"
#include "model/explain_fp8.hpp"
#include "model/fp8_steps.hpp"
#include "views/explain_names.hpp"
#include "views/explain_parts.hpp"

namespace shapescope {
namespace {

// The casts of `source` (the target, as the program holds its operands) into the fp8 GEMM `fp8`: an
// operand the source stores K x rows (B of an nn GEMM, A and B of a tn one) is transposed by its cast
// into the K-contiguous form the fp8 GEMM reads, and its label says so.
void add_casts(PrecisionControls& c, std::optional<size_t> precision, const Problem& source, const Problem& fp8) {
  for (const CastTerm& term : fp8_casts(source, fp8.recipe, linear_roles(source.layout))) {
    const char* operand = term.problem.cast == CastOperand::kA ? "A" : "B";
    c.casts.push_back({precision, term.problem, term.per_call,
                       fmt::format("cast {} ({}, {}{})", operand, precision_label(fp8),
                                   term.per_call ? "per call" : "per step",
                                   cast_transposes(term.problem) ? ", transposed" : "")});
  }
}

Precision precision_of(const Problem& p) { return Precision{p.dtype, p.recipe}; }

}  // namespace

std::string precision_label(const Problem& p) { return precision_name(precision_of(p)); }

PrecisionControls precision_controls(const ExplainRequest& o, const Problem& target, int cc) {
  PrecisionControls c;
  if (!o.controls || !o.precision || o.backend.kind == BackendKind::kCustom) return c;
  c.problems = precision_problems(target, cc);
  for (size_t i = 0; i < c.problems.size(); ++i)
    if (c.problems[i].dtype == DType::kFp8) add_casts(c, i, target, c.problems[i]);
  if (target.dtype == DType::kFp8 && !target.grouped()) add_casts(c, std::nullopt, target, target);
  return c;
}

std::vector<MeasureRequest> precision_requests(const ExplainRequest& o, const Problem& target,
                                               const PrecisionControls& controls) {
  const auto request = [&] {
    MeasureRequest r = again_request(o);
    r.backends.clear();  // not the target's backend: each request names its own
    r.lt_algos = 1;
    return r;
  };
  std::vector<MeasureRequest> out;
  MeasureRequest fp8 = request();
  for (const Problem& p : controls.problems) {
    if (p.dtype == DType::kFp8) {
      if (fp8.backends.empty()) fp8.backends = {BackendSpec(BackendKind::kCublasLt), BackendSpec(BackendKind::kCast)};
      fp8.problems.push_back(p);
      fp8.pairs.emplace_back(fp8.problems.size() - 1, 0);
      continue;
    }
    MeasureRequest r = request();
    r.backends = {precision_backend(o, p.dtype)};
    r.problems = {p};
    out.push_back(std::move(r));
  }
  for (const CastControl& c : controls.casts) {
    if (fp8.backends.empty()) fp8.backends = {BackendSpec(BackendKind::kCublasLt), BackendSpec(BackendKind::kCast)};
    fp8.problems.push_back(c.problem);
    fp8.pairs.emplace_back(fp8.problems.size() - 1, 1);
  }
  if (!fp8.problems.empty()) out.push_back(std::move(fp8));
  return out;
}

void add_numerical_errors(const ExplainRequest& o, const Problem& target, const PrecisionControls& controls,
                          const DeviceContext& device, ExplainReport& report) {
  if (controls.problems.empty() && target.dtype != DType::kFp8) return;
  std::vector<Precision> precisions = {precision_of(target)};
  for (const Problem& p : controls.problems) precisions.push_back(precision_of(p));
  NumericalErrors got;
  try {
    got = measure_numerical_errors(target, precisions, o.backend, device);
  } catch (const Error& e) {
    if (e.code() != ExitCode::kOutOfMemory) throw;
    report.missing.push_back({"numerical error", e.what()});  // the times stand without it
    return;
  }
  for (const std::string& why : got.skipped) report.missing.push_back({"numerical error", why});
  for (ExplainPoint& p : report.points) {
    if (p.role != Role::kTarget && p.role != Role::kPrecision) continue;
    for (const NumericalError& e : got.errors) {
      if (!(Precision{e.dtype, e.recipe} == precision_of(p.candidate.problem))) continue;
      (e.data == ErrorData::kOutliers ? p.error_outliers : p.error) = e;
    }
  }
}

Explanation explain_with_limits(const ExplainRequest& o, const std::vector<ExplainPoint>& points,
                                size_t& over_max_error) {
  Explanation e = explain(points);
  over_max_error = o.max_error ? limit_precision_error(e, points, *o.max_error) : 0;
  return e;
}

}  // namespace shapescope
