#include "model/explain_fp8.hpp"

#include <algorithm>

#include "core/fp8.hpp"
#include "model/fp8_steps.hpp"

namespace shapescope {
namespace {

bool timed(const ExplainPoint& p) { return p.time_us && *p.time_us > 0; }

int64_t round_up(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

// The measured neighbour of the target with `dim` at `size`, if any.
std::optional<size_t> neighbour_at(const std::vector<ExplainPoint>& points, Dim dim, int64_t size) {
  for (size_t i = 1; i < points.size(); ++i) {
    const ExplainPoint& p = points[i];
    if (p.role == Role::kNeighbour && timed(p) && p.candidate.dim == dim && p.candidate.value == size) return i;
  }
  return std::nullopt;
}

}  // namespace

std::vector<Problem> precision_problems(const Problem& target, int cc) {
  std::vector<Problem> out;
  for (DType d : precision_dtypes(target, cc)) {
    Problem p = target;
    p.dtype = d;
    if (d != DType::kFp8) {
      out.push_back(p);
      continue;
    }
    for (const Fp8Candidate& c : precision_candidates(target, linear_roles(target.layout), cc))
      if (!c.refused) out.push_back(c.gemm);
  }
  return out;
}

size_t limit_precision_error(Explanation& e, const std::vector<ExplainPoint>& points, double max_error) {
  const size_t before = e.fixes.size();
  e.fixes.erase(std::remove_if(e.fixes.begin(), e.fixes.end(),
                               [&](const Fix& f) {
                                 if (f.kind != FixKind::kPrecision || !f.point) return false;
                                 const ExplainPoint& p = points[*f.point];
                                 if (!p.error || !p.error_outliers) return true;
                                 return std::max(p.error->relative, p.error_outliers->relative) > max_error;
                               }),
                e.fixes.end());
  return before - e.fixes.size();
}

std::vector<Fp8Cause> fp8_causes(const std::vector<ExplainPoint>& points) {
  std::vector<Fp8Cause> out;
  if (points.empty()) return out;
  const ExplainPoint& t = points.front();
  const Problem& p = t.candidate.problem;
  const Fp8Scaling s = p.recipe.scaling;
  if (p.dtype != DType::kFp8 || p.cast != CastOperand::kNone || (s != Fp8Scaling::kBlock && s != Fp8Scaling::kBlock1x128))
    return out;
  const auto add = [&](Fp8CauseKind kind, Dim dim, int64_t value, int64_t block_size) {
    Fp8Cause c;
    c.kind = kind;
    c.dim = dim;
    c.value = value;
    c.block_size = block_size;
    if (kind != Fp8CauseKind::kScaleLayoutPad) c.evidence = neighbour_at(points, dim, block_size);
    if (c.evidence && timed(t)) {
      const ExplainPoint& n = points[*c.evidence];
      const double at_its_rate = *n.time_us * p.flops() / n.candidate.problem.flops();
      c.cost_us = std::max(0.0, *t.time_us - at_its_rate);
    }
    out.push_back(c);
  };
  if (p.m < kScaleBlock) add(Fp8CauseKind::kSmallM, Dim::kM, p.m, kScaleBlock);
  else if (p.m % kScaleBlock != 0) add(Fp8CauseKind::kPartialBlock, Dim::kM, p.m, round_up(p.m, kScaleBlock));
  // N is blocked by the weights' 128x128 scales; under 1x128 on both sides each row of B has its own.
  if (s == Fp8Scaling::kBlock && p.n % kScaleBlock != 0)
    add(Fp8CauseKind::kPartialBlock, Dim::kN, p.n, round_up(p.n, kScaleBlock));
  const int64_t k_blocks = (p.k + kScaleBlock - 1) / kScaleBlock;
  if (s == Fp8Scaling::kBlock && k_blocks % 4 != 0)
    add(Fp8CauseKind::kScaleLayoutPad, Dim::kK, k_blocks, round_up(k_blocks, 4));
  return out;
}

}  // namespace shapescope
