// The plain C++ half of measure/precision_error.hpp: what one error measurement takes in memory, and
// the problem measured when the target's is too large.
#include "measure/precision_error.hpp"

namespace shapescope {
namespace {

constexpr int64_t kWorkspaceBytes = 32ll << 20;  // as measure()'s: cuBLASLt's recommendation for Hopper

Problem packed(Problem p) {
  p.lda = p.a_cols();
  p.ldb = p.b_cols();
  p.ldc = p.n;
  p.off_a = p.off_b = p.off_c = 0;
  return p;
}

}  // namespace

int64_t numerical_error_bytes(const Problem& p) {
  // A, B and C as doubles, and once more as the widest dtype's (4 bytes) for the GEMM under test; A
  // and B quantized to fp8 with their scales and amax (well under a byte more per element).
  return (p.a_span() + p.b_span() + p.c_span()) * (8 + 4) + (p.a_span() + p.b_span()) * 2 + kWorkspaceBytes;
}

std::string precision_name(const Precision& precision) {
  std::string name(to_string(precision.dtype));
  if (precision.dtype == DType::kFp8) name += " " + recipe_text(precision.recipe);
  return name;
}

Problem numerical_error_problem(const Problem& target, int64_t budget) {
  if (numerical_error_bytes(target) <= budget) return target;
  Problem p = target;
  p.batch = 1;
  p = packed(p);
  while (numerical_error_bytes(p) > budget && (p.m > 1 || p.n > 1)) {
    if (p.m >= p.n) p.m = (p.m + 1) / 2;
    else p.n = (p.n + 1) / 2;
    p = packed(p);
  }
  return p;
}

}  // namespace shapescope
