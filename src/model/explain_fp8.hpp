// explain's fp8 part (model/explain.hpp): the precision controls of a 16-bit GEMM, one per fp8
// recipe, the limit a user puts on their error, and what an fp8 target's shape does to its recipe's
// blocks. Pure C++: typed causes, no English (report/explain_fp8.cpp words them).
#pragma once
#include <cstddef>
#include <vector>

#include "model/explain.hpp"

namespace shapescope {

// The problems of the precision controls of precision_dtypes(): the target in each dtype, fp8 once
// per recipe a training step would run it in (model/fp8_steps.hpp: tensor, row, block) that a GPU of
// compute capability `cc` runs. An fp8 control is the GEMM in the nt form cuBLASLt's fp8 takes, with
// packed operands (fp8_problem: what the casts write), whatever the target's layout and strides: the
// same C = A @ B, its casts transposing an operand the target stores K x rows (cast_problem).
std::vector<Problem> precision_problems(const Problem& target, int cc);

// Drops the precision fixes whose error (the worse of the two kinds of inputs measured) is above
// `max_error`, or not measured; returns how many it dropped.
size_t limit_precision_error(Explanation& e, const std::vector<ExplainPoint>& points, double max_error);

// An fp8 target under block scaling against its blocks: M below 128 (the small-M cliff of the
// block-scaled kernels), M or N (N under 128x128 weights) not a multiple of 128, K/128 not a multiple
// of 4 (the 128x128 scales' padded K blocks). Each with the neighbour at the block's size as its
// evidence where that neighbour was measured, and then the time it costs: the target's time over what
// it would take at the neighbour's throughput. Nothing for other targets or recipes.
std::vector<Fp8Cause> fp8_causes(const std::vector<ExplainPoint>& points);

}  // namespace shapescope
