// What running a step's GEMM in fp8 costs besides the fp8 GEMM: the casts (amax, scale, cast into
// the layout the GEMM reads; backend "cast", core/fp8.hpp's cast_problem) each call and each step
// pays, and the recipes a precision what-if offers. Pure C++: the views measure what it lists.
//
// Which operand is what follows PyTorch's Linear (model/config_workload.hpp): the forward x @ W^T is
// nt (A an activation, B the weight), the input gradient dY @ W nn (A a gradient, B the weight), the
// weight gradient dY^T @ X tn (A a gradient, B an activation). Activations and gradients are cast at
// every call; a weight once per step (its fp8 copy serves every call of the step); a weight kept in
// fp8 not at all. Each GEMM pays the casts of its own operands in the orientation it reads them: an
// activation read by the forward (K = hidden) and by the weight gradient (K = tokens) is cast twice,
// as two kernels (Transformer Engine writes both orientations in one kernel, a little cheaper): the
// casts counted here are an upper bound of what a framework pays.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/fp8.hpp"
#include "core/problem.hpp"

namespace shapescope {

enum class OperandRole { kActivation, kGradient, kWeight, kStoredFp8Weight };
std::string_view to_string(OperandRole role);  // "activation", "gradient", "weight", "fp8 weight"

struct OperandRoles {
  OperandRole a = OperandRole::kActivation, b = OperandRole::kWeight;
};
// The roles a Linear layer's GEMM of this layout has (nt forward, nn input gradient, tn weight
// gradient); tt: two activations.
OperandRoles linear_roles(Layout layout);

// One cast a GEMM's fp8 form needs.
struct CastTerm {
  Problem problem;        // cast_problem(): run on backend cast
  bool per_call = true;   // every call of the GEMM pays it; false: once per step (a weight)
};

// The fp8 recipe a training recipe gives one GEMM: tensor scaling in Transformer Engine's HYBRID
// format (gradients e5m2, the rest e4m3); row scaling in e4m3 (torchao's rowwise); block scaling in
// e4m3 with 128x128 weights (block) or, for a GEMM of two activations or gradients (the weight
// gradient), 1x128 on both sides (block-1x128).
Fp8Recipe gemm_recipe(Fp8Scaling training, OperandRoles roles);

// The casts of `source` (a GEMM in bf16, any layout, as the program runs it) run in fp8 under
// `recipe`: one per operand that is not a weight kept in fp8. A grouped call: none (fp8 grouped GEMMs
// are not measured here).
std::vector<CastTerm> fp8_casts(const Problem& source, const Fp8Recipe& recipe, OperandRoles roles);

// One recipe a precision what-if offers for a bf16 or fp16 GEMM: the fp8 GEMM that replaces it and
// the casts it adds, or why it cannot run on a GPU of compute capability `cc`.
struct Fp8Candidate {
  Fp8Scaling training = Fp8Scaling::kTensor;  // tensor, row or block (block-1x128 where the roles ask)
  Problem gemm;                 // fp8_problem(source, gemm_recipe(training, roles))
  std::vector<CastTerm> casts;
  std::optional<std::string> refused;  // recipe_unsupported(), in one line
};
// tensor, row and block for `source` (nothing for another dtype, a grouped call or an fp8 GEMM).
std::vector<Fp8Candidate> precision_candidates(const Problem& source, OperandRoles roles, int cc);

// The casts of a step's fp8 GEMMs (each already in its nt fp8 form, from a trace, a GEMM list or a
// model's fp8 step) with their calls per step: both operands of every call, merged where the same
// cast recurs. A trace does not say which operand is a weight nor how often a weight serves per
// step; in a step of one micro-batch each weight serves one call of each pass, so casting both
// operands at every call is what such a step pays (with micro-batches a weight's casts are fewer:
// this is then an upper bound). Grouped calls add none.
struct StepCast {
  Problem problem;       // cast_problem(), backend cast
  double per_step = 0;   // calls per step
};
std::vector<StepCast> step_fp8_casts(const std::vector<std::pair<Problem, double>>& gemms);

// A candidate priced: its GEMM's time per call, its casts' (per call, and per step), its error on
// outlier data (the worse of the kinds measured).
struct PricedCandidate {
  double gemm_us = 0;
  double casts_per_call_us = 0;
  double casts_per_step_us = 0;
  std::optional<double> error;
  bool runs = true;  // false: refused or not measured
  // Its time per step for a GEMM of `calls` calls per step.
  double step_us(double calls) const { return calls * (gemm_us + casts_per_call_us) + casts_per_step_us; }
};
// The fastest per step among those that run and whose error is measured and at most `max_error`
// (any error when nullopt); nullopt when none qualifies.
std::optional<size_t> fastest_within(const std::vector<PricedCandidate>& candidates, double calls,
                                     std::optional<double> max_error);

}  // namespace shapescope
