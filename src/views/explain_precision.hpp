// explain's precision controls (views/explain.cpp): the target in each other precision (fp8 once per
// recipe), an fp8 point's casts measured beside it (backend cast: the price of fp8 a GEMM alone does
// not show), the requests that measure them, their numerical errors on both kinds of inputs, and the
// explanation with the user's limit on error applied. Used by views/explain.cpp only.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/device_context.hpp"
#include "core/problem.hpp"
#include "measure/measure.hpp"
#include "views/explain.hpp"

namespace shapescope {

// One cast an fp8 point of the explanation pays: of the target (an fp8 target) or of precision
// control `precision`.
struct CastControl {
  std::optional<size_t> precision;  // index into PrecisionControls::problems; nullopt: the target's
  Problem problem;                  // cast_problem()
  bool per_call = true;             // an activation's; false: a weight's, once per step
  std::string label;                // "cast A (fp8 block, per call)", "cast B (fp8 block, per step, transposed)"
};

struct PrecisionControls {
  std::vector<Problem> problems;   // the target in each other precision (model/explain_fp8.hpp)
  std::vector<CastControl> casts;  // every fp8 point's, the target's too
};

// Nothing for our kernels (a shape's control, not a program's choice of precision) or without
// --precision; an fp8 target gets its own casts.
PrecisionControls precision_controls(const ExplainRequest& o, const Problem& target, int cc);
// "bf16", "fp8 block"
std::string precision_label(const Problem& p);
// The requests that measure them: one per dtype (a request fills its operands for one dtype); the
// fp8 one holds every recipe's GEMM and every cast.
std::vector<MeasureRequest> precision_requests(const ExplainRequest& o, const Problem& target,
                                               const PrecisionControls& controls);
// The target's and each precision point's output against an fp64 reference (measure/precision_error)
// on both kinds of inputs, set on the points; what could not be measured goes to the missing lines.
void add_numerical_errors(const ExplainRequest& o, const Problem& target, const PrecisionControls& controls,
                          const DeviceContext& device, ExplainReport& report);
// explain() of the points with --max-error applied (its dropped fixes counted in the report).
Explanation explain_with_limits(const ExplainRequest& o, const std::vector<ExplainPoint>& points,
                                size_t& over_max_error);

}  // namespace shapescope
