// What a lower precision costs a GEMM in accuracy, measured on the GPU: the GEMM's inputs drawn once
// (random normal, rounded to the problem's own dtype: the values a program holds), an fp64 reference
// of them (cublasDgemm), and the same GEMM run in each asked dtype (its inputs rounded to it, by the
// library that times it) with its output compared with the reference: max abs and normwise relative
// error. Plain C++ interface: the views call it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/backend_kind.hpp"
#include "core/device_context.hpp"
#include "core/numerics.hpp"
#include "core/problem.hpp"

namespace shapescope {

struct NumericalErrors {
  std::vector<NumericalError> errors;  // one per asked dtype that ran, in the order asked
  std::vector<std::string> skipped;    // "fp8: why", each dtype the library could not run here
};

// Device bytes one measurement of `problem` takes: its operands in fp64 (inputs and reference) and in
// 4-byte elements (the widest dtype), and the library's workspace.
int64_t numerical_error_bytes(const Problem& problem);
// The problem whose error is measured for `target` within `budget` bytes: the target itself when it
// fits; else one matrix (batch 1, packed, no offsets) with M and N halved, the larger first, until it
// fits. K is kept: the length of each dot product is what sets the error, not how many there are.
Problem numerical_error_problem(const Problem& target, int64_t budget);

// Measures `target` (or numerical_error_problem's reduction of it, within half the free memory and
// at most 2 GiB) in each of `dtypes` on `device`: fp8 through cuBLASLt, the others through `backend`
// (cuBLAS or cuBLASLt). Throws Error(kInternal) for a failed CUDA or cuBLAS call,
// Error(kOutOfMemory) when even one row and column do not fit.
NumericalErrors measure_numerical_errors(const Problem& target, const std::vector<DType>& dtypes,
                                         const BackendSpec& backend, const DeviceContext& device);

}  // namespace shapescope
