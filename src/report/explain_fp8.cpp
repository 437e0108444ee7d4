#include "report/explain_fp8.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "common/units.hpp"
#include "core/fp8.hpp"
#include "model/fp8_steps.hpp"

namespace shapescope {
namespace {

std::string us(double value) { return fmt::format(value >= 100 ? "{:.1f} us" : "{:.2f} us", value); }
std::string times(double ratio) { return ratio >= 10 ? fmt::format("{:.0f}x", ratio) : fmt::format("{:.1f}x", ratio); }

// An fp8 point's casts, measured: per call (activations) and per step (weights).
struct Casts {
  double per_call = 0, per_step = 0;
  size_t measured = 0, wanted = 0;
};
Casts casts_of(const ExplainReport& r, size_t of) {
  Casts c;
  for (const ExplainPoint& p : r.points) {
    if (p.role != Role::kCast || p.of != of) continue;
    ++c.wanted;
    if (!p.time_us) continue;
    ++c.measured;
    (p.per_call ? c.per_call : c.per_step) += *p.time_us;
  }
  return c;
}

std::string name_of(const ExplainPoint& p) {
  if (p.role == Role::kPrecision) return p.label;
  const Problem& q = p.candidate.problem;
  std::string name(to_string(q.dtype));
  if (q.dtype == DType::kFp8) name += " " + recipe_text(q.recipe);
  return name;
}

std::string error_cell(const std::optional<NumericalError>& e) {
  if (!e) return "-";
  return e->non_finite > 0 ? fmt::format("{} ({} inf/nan)", scientific(e->relative), e->non_finite)
                           : scientific(e->relative);
}

std::string dim_text(Dim d) { return std::string(dim_name(d)); }

// "activation's", "gradient's and activation's"
std::string owners(const std::vector<std::string>& roles) {
  std::string out;
  for (size_t i = 0; i < roles.size(); ++i) out += (i == 0 ? "" : " and ") + roles[i] + "'s";
  return out;
}

// What an fp8 fix pays besides its GEMM, named by the operands' roles in a Linear layer's GEMM of the
// target's layout (model/fp8_steps.hpp): " + its activation's cast 3.10 us per call; the weight's cast
// 2.00 us once per step", and for an nn or tn target which cast transposes its operand into the nt
// form fp8 runs.
std::string casts_text(const ExplainReport& r, const Fix& f) {
  const OperandRoles roles = linear_roles(r.points.front().candidate.problem.layout);
  std::vector<std::string> per_call, per_step, transposing;
  for (const ExplainPoint& c : r.points) {
    if (c.role != Role::kCast || c.of != f.point) continue;
    const bool a = c.candidate.problem.cast == CastOperand::kA;
    const std::string role(to_string(a ? roles.a : roles.b));
    (c.per_call ? per_call : per_step).push_back(role);
    if (cast_transposes(c.candidate.problem)) transposing.push_back(fmt::format("the {}'s cast transposing {}", role, a ? "A" : "B"));
  }
  std::string line;
  if (!per_call.empty())
    line += fmt::format(" + its {} cast{} {} per call", owners(per_call), per_call.size() > 1 ? "s" : "", us(f.casts_us));
  if (!per_step.empty())
    line += fmt::format("; the {} cast{} {} once per step", owners(per_step), per_step.size() > 1 ? "s" : "", us(f.per_step_us));
  if (!transposing.empty()) line += "; fp8 runs it as nt, " + fmt::format("{}", fmt::join(transposing, ", "));
  return line;
}

}  // namespace

std::vector<std::vector<std::string>> explain_precision_rows(const ExplainReport& r) {
  const ExplainPoint& t = r.points.front();
  std::vector<std::vector<std::string>> rows = {{"precision", "GEMM [us]", "TFLOP/s", "casts/call [us]",
                                                 "casts/step [us]", "vs target", "error (gaussian)",
                                                 "error (outliers)", "kernel"}};
  for (size_t i = 0; i < r.points.size(); ++i) {
    const ExplainPoint& p = r.points[i];
    if (p.role != Role::kTarget && p.role != Role::kPrecision) continue;
    const Casts c = casts_of(r, i);
    const bool fp8 = c.wanted > 0;
    const std::string per_call = fp8 ? (c.measured == c.wanted ? fmt::format("{:.2f}", c.per_call) : "not measured") : "-";
    const std::string per_step = fp8 && c.measured == c.wanted ? fmt::format("{:.2f}", c.per_step) : "-";
    // Against the target, an fp8 point with its per-call casts (a weight's once-per-step cast aside).
    std::string versus = "-";
    if (p.time_us && t.time_us && (!fp8 || c.measured == c.wanted))
      versus = fmt::format("{:.2f}x", *t.time_us / (*p.time_us + (p.role == Role::kPrecision ? c.per_call : 0)));
    rows.push_back({name_of(p) + (p.role == Role::kTarget ? " (target)" : ""),
                    p.time_us ? fmt::format("{:.2f}", *p.time_us) : "-",
                    p.tflops() ? fmt::format("{:.1f}", *p.tflops()) : "-", per_call, per_step, versus,
                    error_cell(p.error), error_cell(p.error_outliers), p.kernel.empty() ? "-" : p.kernel});
  }
  return rows;
}

std::string explain_precision_fix_text(const ExplainReport& r, const Fix& f) {
  const ExplainPoint& t = r.points.front();
  const ExplainPoint& p = r.points[*f.point];
  std::string line = fmt::format("run it in {}: {} -> {}", p.label, us(*t.time_us), us(f.time_us.value_or(0)));
  if (p.candidate.problem.dtype == DType::kFp8) line += fmt::format(" (the GEMM {}{})", us(*p.time_us), casts_text(r, f));
  line += fmt::format(", {} faster, {:+.0f} % operand memory", times(f.speedup), f.extra_bytes * 100);
  if (!p.error) return line + ", its error not measured (no GPU here)";
  line += ", relative error " + scientific(p.error->relative);
  if (p.error_outliers) line += fmt::format(" ({} with outlier channels)", scientific(p.error_outliers->relative));
  if (p.error->non_finite > 0) line += fmt::format(" ({} elements overflowed)", p.error->non_finite);
  return line;
}

std::vector<std::string> explain_fp8_lines(const ExplainReport& r) {
  std::vector<std::string> lines;
  const ExplainPoint& t = r.points.front();
  const std::string recipe = recipe_text(t.candidate.problem.recipe);
  for (const Fp8Cause& c : r.explanation.fp8) {
    std::string line;
    switch (c.kind) {
      case Fp8CauseKind::kSmallM:
        line = fmt::format("fp8 {}: M = {} is below the 128 rows of the block-scaled kernels' tiles (the small-M cliff): "
                           "most of each tile computes nothing",
                           recipe, c.value);
        break;
      case Fp8CauseKind::kPartialBlock:
        line = fmt::format("fp8 {}: {} = {} is not a multiple of 128: its last tile and scale block are partial",
                           recipe, dim_text(c.dim), c.value);
        break;
      case Fp8CauseKind::kScaleLayoutPad:
        line = fmt::format("fp8 {}: K / 128 = {} blocks is not a multiple of 4: cuBLASLt reads the 128x128 scales with "
                           "their K blocks padded to {} (computed: a layout rule, no time of its own)",
                           recipe, c.value, c.block_size);
        break;
    }
    if (c.evidence) {
      const ExplainPoint& n = r.points[*c.evidence];
      line += fmt::format("; measured: {} = {} takes {} against {} at {} = {} for {} the work, {} lost to it",
                          dim_text(c.dim), c.value, t.time_us ? us(*t.time_us) : "-", us(*n.time_us), dim_text(c.dim),
                          c.block_size, times(n.candidate.problem.flops() / t.candidate.problem.flops()), us(c.cost_us));
    } else if (c.kind != Fp8CauseKind::kScaleLayoutPad) {
      line += fmt::format(" (computed; {} = {} was not measured)", dim_text(c.dim), c.block_size);
    }
    lines.push_back(line);
  }
  if (r.over_max_error > 0)
    lines.push_back(fmt::format("{} precision fix{} left out: {} error is above --max-error (or not measured)",
                                r.over_max_error, r.over_max_error == 1 ? "" : "es", r.over_max_error == 1 ? "its" : "their"));
  return lines;
}

nlohmann::ordered_json numerical_error_json(const NumericalError& e) {
  return {{"dtype", std::string(to_string(e.dtype))},
          {"recipe", e.dtype == DType::kFp8 ? recipe_text(e.recipe) : std::string()},
          {"data", std::string(to_string(e.data))},
          {"relative", e.relative},
          {"max_abs", e.max_abs},
          {"reference_max", e.reference_max},
          {"non_finite", e.non_finite},
          {"elements", e.elements},
          {"measured_at", e.problem.shape_string()}};
}

nlohmann::ordered_json explain_fp8_json(const ExplainReport& r) {
  using Json = nlohmann::ordered_json;
  const std::vector<std::string> lines = explain_fp8_lines(r);
  Json causes = Json::array();
  for (size_t i = 0; i < r.explanation.fp8.size(); ++i) {
    const Fp8Cause& c = r.explanation.fp8[i];
    const char* kind = c.kind == Fp8CauseKind::kSmallM ? "small M"
                       : c.kind == Fp8CauseKind::kPartialBlock ? "partial block" : "scale layout padding";
    causes.push_back({{"cause", kind}, {"dim", dim_text(c.dim)}, {"value", c.value}, {"block_size", c.block_size},
                      {"evidence", c.evidence ? Json(*c.evidence) : Json(nullptr)}, {"cost_us", c.cost_us},
                      {"text", lines[i]}});
  }
  return {{"causes", causes}, {"over_max_error", r.over_max_error}};
}

}  // namespace shapescope
