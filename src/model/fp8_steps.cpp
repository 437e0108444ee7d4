#include "model/fp8_steps.hpp"

#include <algorithm>

namespace shapescope {

std::string_view to_string(OperandRole role) {
  switch (role) {
    case OperandRole::kActivation: return "activation";
    case OperandRole::kGradient: return "gradient";
    case OperandRole::kWeight: return "weight";
    case OperandRole::kStoredFp8Weight: return "fp8 weight";
  }
  return "";
}

OperandRoles linear_roles(Layout layout) {
  switch (layout) {
    case Layout::kNT: return {OperandRole::kActivation, OperandRole::kWeight};
    case Layout::kNN: return {OperandRole::kGradient, OperandRole::kWeight};
    case Layout::kTN: return {OperandRole::kGradient, OperandRole::kActivation};
    case Layout::kTT: return {OperandRole::kActivation, OperandRole::kActivation};
  }
  return {};
}

namespace {

bool is_weight(OperandRole role) { return role == OperandRole::kWeight || role == OperandRole::kStoredFp8Weight; }

}  // namespace

Fp8Recipe gemm_recipe(Fp8Scaling training, OperandRoles roles) {
  Fp8Recipe r;
  switch (training) {
    case Fp8Scaling::kTensor:
      r.scaling = Fp8Scaling::kTensor;
      if (roles.a == OperandRole::kGradient) r.a = Fp8Format::kE5m2;
      // cuBLASLt has no e5m2 x e5m2: a second gradient stays e4m3.
      if (roles.b == OperandRole::kGradient && r.a != Fp8Format::kE5m2) r.b = Fp8Format::kE5m2;
      break;
    case Fp8Scaling::kRow: r.scaling = Fp8Scaling::kRow; break;
    case Fp8Scaling::kBlock:
    case Fp8Scaling::kBlock1x128:
      r.scaling = is_weight(roles.b) ? Fp8Scaling::kBlock : Fp8Scaling::kBlock1x128;
      break;
  }
  return r;
}

std::vector<CastTerm> fp8_casts(const Problem& source, const Fp8Recipe& recipe, OperandRoles roles) {
  std::vector<CastTerm> out;
  if (source.grouped()) return out;
  for (const auto& [operand, role] : {std::pair{CastOperand::kA, roles.a}, std::pair{CastOperand::kB, roles.b}}) {
    if (role == OperandRole::kStoredFp8Weight) continue;
    out.push_back({cast_problem(source, recipe, operand), role != OperandRole::kWeight});
  }
  return out;
}

std::vector<Fp8Candidate> precision_candidates(const Problem& source, OperandRoles roles, int cc) {
  std::vector<Fp8Candidate> out;
  if (source.grouped() || (source.dtype != DType::kBf16 && source.dtype != DType::kFp16)) return out;
  for (Fp8Scaling training : {Fp8Scaling::kTensor, Fp8Scaling::kRow, Fp8Scaling::kBlock}) {
    Fp8Candidate c;
    c.training = training;
    const Fp8Recipe recipe = gemm_recipe(training, roles);
    c.gemm = fp8_problem(source, recipe);
    c.casts = fp8_casts(source, recipe, roles);
    if (cc < min_compute_capability(DType::kFp8))
      c.refused = "fp8 needs compute capability 8.9 or newer";
    else
      c.refused = recipe_unsupported(c.gemm, cc);
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<StepCast> step_fp8_casts(const std::vector<std::pair<Problem, double>>& gemms) {
  std::vector<StepCast> out;
  for (const auto& [gemm, calls] : gemms) {
    if (gemm.dtype != DType::kFp8 || gemm.grouped() || gemm.cast != CastOperand::kNone) continue;
    for (CastOperand operand : {CastOperand::kA, CastOperand::kB}) {
      const Problem cast = cast_problem(gemm, gemm.recipe, operand);
      const auto same = std::find_if(out.begin(), out.end(), [&](const StepCast& c) { return c.problem == cast; });
      if (same != out.end()) same->per_step += calls;
      else out.push_back({cast, calls});
    }
  }
  return out;
}

std::optional<size_t> fastest_within(const std::vector<PricedCandidate>& candidates, double calls,
                                     std::optional<double> max_error) {
  std::optional<size_t> best;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const PricedCandidate& c = candidates[i];
    if (!c.runs) continue;
    if (max_error && (!c.error || *c.error > *max_error)) continue;
    if (!best || c.step_us(calls) < candidates[*best].step_us(calls)) best = i;
  }
  return best;
}

}  // namespace shapescope
