#include "views/paired_steps.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "measure/measure.hpp"

namespace shapescope {
namespace {

bool same_call(const StepTerm& a, const StepTerm& b) {
  return a.problem == b.problem && a.backend == b.backend && a.variants == b.variants && a.lt_rank == b.lt_rank;
}

double term_flops(const StepTerm& t) { return t.count * t.problem.flops(); }

// The dtype a comparison runs in: its changed GEMMs', when they share one; the step's largest GEMM's
// when nothing changes. nullopt when the changed GEMMs span dtypes.
std::optional<DType> comparison_dtype(const StepCalls& before, const StepCalls& after) {
  const std::vector<StepTerm> changed = changed_terms(before, after);
  if (changed.empty()) {
    if (before.empty()) return std::nullopt;
    return std::max_element(before.begin(), before.end(),
                            [](const StepTerm& a, const StepTerm& b) { return term_flops(a) < term_flops(b); })
        ->problem.dtype;
  }
  for (const StepTerm& t : changed)
    if (t.problem.dtype != changed.front().problem.dtype) return std::nullopt;
  return changed.front().problem.dtype;
}

// One dtype's paired request under construction: its calls as (problem, backend) pairs.
struct GroupRequest {
  MeasureRequest request;
  std::vector<size_t> comparisons;  // indices into `after`

  size_t position_of(const StepTerm& t) {
    const BackendSpec spec = t.spec();
    request.lt_algos = std::max(request.lt_algos, t.lt_rank + 1);
    auto b = std::find(request.backends.begin(), request.backends.end(), spec);
    if (b == request.backends.end()) b = request.backends.insert(request.backends.end(), spec);
    const size_t backend = size_t(b - request.backends.begin());
    for (size_t i = 0; i < request.pairs.size(); ++i)
      if (request.pairs[i].second == backend && request.problems[request.pairs[i].first] == t.problem) return i;
    request.problems.push_back(t.problem);
    request.pairs.emplace_back(request.problems.size() - 1, backend);
    return request.pairs.size() - 1;
  }
  // One side of a sum: the group's dtype's terms as calls, the others' as constants (nullopt when one
  // has no time).
  bool add_side(const StepCalls& calls, std::optional<DType> dtype, const TermTime& other,
                std::vector<std::pair<size_t, double>>& terms, std::vector<size_t>& algos, double& constant_us) {
    for (const StepTerm& t : calls) {
      if (!dtype || t.problem.dtype == *dtype) {
        terms.emplace_back(position_of(t), t.count);
        algos.push_back(size_t(t.backend == BackendKind::kCublasLt ? t.lt_rank : 0));
        continue;
      }
      const std::optional<double> us = other ? other(t) : std::nullopt;
      if (!us) return false;
      constant_us += t.count * *us;
    }
    return true;
  }
};

// The group's cheapest GEMM first: the reference runs between any two samples of a pass, so the
// cheapest costs the passes least (the sums use every call's own time, not its ratio to it).
void put_reference_first(GroupRequest& g, const StepCalls& before, const std::vector<StepCalls>& after,
                         std::optional<DType> dtype) {
  const StepTerm* cheapest = nullptr;
  auto consider = [&](const StepCalls& calls) {
    for (const StepTerm& t : calls)
      if ((!dtype || t.problem.dtype == *dtype) && t.lt_rank == 0 &&
          (!cheapest || t.problem.flops() < cheapest->problem.flops()))
        cheapest = &t;
  };
  consider(before);
  for (size_t c : g.comparisons) consider(after[c]);
  if (cheapest) g.position_of(*cheapest);
}

// The step's GEMM time in the passes: count x the median of each of its calls' samples.
std::optional<double> before_us(const StepCalls& before, const MeasureOutcome& got, const TermTime& other) {
  double total = 0;
  for (const StepTerm& t : before) {
    const auto& keys = got.paired->keys;
    const auto at = std::find_if(keys.begin(), keys.end(), [&](const PointKey& k) {
      return k.problem == t.problem && k.backend == t.backend && k.algo == t.algo();
    });
    std::optional<double> us;
    if (at != keys.end()) us = got.paired->outcome.median_us[size_t(at - keys.begin())];
    else if (other) us = other(t);
    if (!us || *us <= 0) return std::nullopt;
    total += t.count * *us;
  }
  return total;
}

PairedStepsRun run_facts(std::optional<DType> dtype, const GroupRequest& g, const PairedOutcome& o) {
  PairedStepsRun run;
  run.dtype = dtype.value_or(DType::kBf16);
  run.mixed = !dtype;
  run.calls = o.median_us.size();
  run.comparisons = g.comparisons.size();
  run.passes = o.passes - o.warmup_passes;
  run.seconds = o.seconds;
  run.clock_low_mhz = o.clock_low_mhz;
  run.clock_median_mhz = o.clock_median_mhz;
  run.clock_high_mhz = o.clock_high_mhz;
  run.power_w = o.power_w;
  run.settle = o.settle;
  return run;
}

}  // namespace

std::vector<StepTerm> changed_terms(const StepCalls& before, const StepCalls& after) {
  std::vector<StepTerm> out;
  auto add_missing = [&](const StepCalls& from, const StepCalls& in) {
    for (const StepTerm& t : from) {
      const auto same = std::find_if(in.begin(), in.end(), [&](const StepTerm& u) { return same_call(t, u); });
      if (same == in.end() || same->count != t.count) out.push_back(t);
    }
  };
  add_missing(before, after);
  add_missing(after, before);
  return out;
}

PairedSteps pair_steps(const StepCalls& before, const std::vector<StepCalls>& after, const DeviceContext& device,
                       Store& store, const PairedRule& rule, ClockState clocks, const TermTime& other_dtype,
                       const std::atomic<bool>* interrupted, bool one_run) {
  PairedSteps out;
  out.steps.resize(after.size());
  out.why_not.resize(after.size());
  // By dtype (nullopt: every dtype, one run).
  std::map<std::optional<DType>, GroupRequest> groups;
  for (size_t c = 0; c < after.size(); ++c) {
    const std::optional<DType> dtype = comparison_dtype(before, after[c]);
    if (one_run) groups[std::nullopt].comparisons.push_back(c);
    else if (!dtype) out.why_not[c] = "the GEMMs it changes run in several dtypes: not paired";
    else groups[*dtype].comparisons.push_back(c);
  }
  for (auto& [dtype, g] : groups) {
    put_reference_first(g, before, after, dtype);
    g.request.paired = rule;
    g.request.paired->sums.clear();
    g.request.measure.clocks = clocks;
    std::vector<size_t> summed;  // the comparisons with a sum, in the order of the rule's sums
    for (size_t c : g.comparisons) {
      SumRatio sum;
      if (!g.add_side(after[c], dtype, other_dtype, sum.numerator, sum.numerator_algo, sum.numerator_us) ||
          !g.add_side(before, dtype, other_dtype, sum.denominator, sum.denominator_algo, sum.denominator_us)) {
        out.why_not[c] = "a GEMM of another dtype it keeps has no time";
        continue;
      }
      g.request.paired->sums.push_back(std::move(sum));
      summed.push_back(c);
    }
    if (summed.empty()) continue;
    const MeasureOutcome got = measure(g.request, device, store, ProgressCallback(), interrupted);
    if (got.interrupted || !got.paired) {
      out.interrupted = out.interrupted || got.interrupted;
      for (size_t c : summed) out.why_not[c] = got.interrupted ? "interrupted" : "nothing could run";
      if (got.interrupted) break;
      continue;
    }
    out.runs.push_back(run_facts(dtype, g, got.paired->outcome));
    const std::optional<double> step_us = before_us(before, got, other_dtype);
    for (size_t i = 0; i < summed.size(); ++i) {
      const PairedRatio& r = got.paired->outcome.sums[i];
      if (r.pairs == 0 || !step_us) out.why_not[summed[i]] = "a GEMM it needs cannot run here";
      else out.steps[summed[i]] = PairedStep{r, *step_us};
    }
  }
  return out;
}

}  // namespace shapescope
