// Correct first: one of our kernels is compared with cuBLAS on the same operands before it is
// timed, and a kernel that fails is reported, never timed.
#pragma once
#include <optional>
#include <string>

#include "backends/backend.hpp"

namespace shapescope {

// Relative and absolute tolerance of one element: bf16 output rounding (2^-8 relative) on both
// sides, plus fp32 accumulation-order differences that grow with K (random normal operands make
// |C| ~ sqrt(K); the absolute term covers elements that cancel to near zero).
double verify_tolerance(double want, int64_t k, DType dtype);

// Runs `reference` then `call` on the shared buffers and compares C (M x N, batch 0). Returns
// nullopt when every element is within verify_tolerance, else one line: how many are off and the
// first few (row, col, got, want).
std::optional<std::string> verify_against(GemmCall& call, GemmCall& reference, const Problem& problem,
                                          const DeviceBuffers& buffers);

}  // namespace shapescope
