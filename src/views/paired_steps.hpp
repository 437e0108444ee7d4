// Steps compared in paired passes (pad): the step's GEMMs and every candidate's are measured in the
// same passes (timing/paired.hpp), and each candidate's GEMM time per step over the step's is a
// ratio per pass, so the clock, wherever the power limit takes it, is the same on both sides of
// every comparison. The comparison is the median of the passes' ratios with its 95 % interval. A
// stored point is never one side of it.
#pragma once
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/backend_kind.hpp"
#include "core/device_context.hpp"
#include "core/paired_ratio.hpp"
#include "core/problem.hpp"
#include "store/store.hpp"
#include "timing/paired.hpp"

namespace shapescope {

// One call of a step: the problem, the backend that runs it, its calls per step; for our kernels the
// variant, for cuBLASLt the heuristic's choice (h0, h1, ...) it runs. A term may also be what a change
// adds that is not a GEMM (a copy into aligned rows, a cast to fp8): its backend runs it.
struct StepTerm {
  StepTerm() = default;
  StepTerm(Problem p, BackendKind b, double c, VariantSelection v = {}, int rank = 0)
      : problem(std::move(p)), backend(b), count(c), variants(std::move(v)), lt_rank(rank) {}
  Problem problem;
  BackendKind backend = BackendKind::kCublas;
  double count = 1;
  VariantSelection variants;
  int lt_rank = 0;
  BackendSpec spec() const { return BackendSpec(backend, variants); }
  // The algo of its point: cuBLASLt's "h<rank>", else the spec's.
  std::string algo() const { return backend == BackendKind::kCublasLt ? "h" + std::to_string(lt_rank) : spec().algo(); }
};
using StepCalls = std::vector<StepTerm>;

// One paired run (one dtype's GEMMs: measure() fills its operands in one dtype).
struct PairedStepsRun {
  DType dtype = DType::kBf16;
  bool mixed = false;  // every dtype in one run (dtype is then not the run's)
  size_t calls = 0, comparisons = 0, passes = 0;
  double seconds = 0;  // of counted passes
  double clock_low_mhz = 0, clock_median_mhz = 0, clock_high_mhz = 0;
  std::optional<double> power_w;
  SettleFacts settle;  // how the warm-up before the counted passes ended
};

// A candidate's step against the step as it is.
struct PairedStep {
  PairedRatio ratio;     // after / before: the candidate's GEMM time per step over the step's
  double before_us = 0;  // the step's GEMM time per step in these passes (count x median)
};

struct PairedSteps {
  std::vector<std::optional<PairedStep>> steps;  // per candidate; nullopt: not paired (`why_not`)
  std::vector<std::string> why_not;              // per candidate: "" when paired
  std::vector<PairedStepsRun> runs;
  bool interrupted = false;
};

// The time (us) of a GEMM measured outside the passes (measure_all's point), for the GEMMs of another
// dtype that a candidate leaves as they are: they count the same on both sides.
using TermTime = std::function<std::optional<double>(const StepTerm&)>;

// Measures `before` and every `after` together: per dtype, one paired run of the GEMMs of the
// candidates whose changed GEMMs are all of that dtype. `rule` says when to stop (its sums are filled
// here). A candidate whose changed GEMMs span dtypes, or a GEMM that cannot run, gets no ratio and a
// reason.
// `one_run`: every candidate in one paired run whatever its dtypes (their operands filled so that each
// dtype reads finite values), the GEMMs of every dtype measured in the passes (profile's what-ifs,
// precision changes among them); `other_dtype` is then not asked.
PairedSteps pair_steps(const StepCalls& before, const std::vector<StepCalls>& after, const DeviceContext& device,
                       Store& store, const PairedRule& rule, ClockState clocks, const TermTime& other_dtype,
                       const std::atomic<bool>* interrupted, bool one_run = false);

// The GEMMs a candidate changes: the terms of `after` not in `before` and of `before` not in `after`
// (a term changed in count counts as changed). Plain arithmetic, for the dtype grouping and tests.
std::vector<StepTerm> changed_terms(const StepCalls& before, const StepCalls& after);

}  // namespace shapescope
