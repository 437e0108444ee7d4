// What a lower precision costs a GEMM in accuracy, measured on the GPU: the GEMM's inputs drawn once
// (random normal, rounded to the problem's own dtype: the values a program holds), an fp64 reference
// of them (cublasDgemm), and the same GEMM run in each asked precision with its output compared with
// the reference: max abs and normwise relative error. A 16- or 32-bit dtype gets its inputs rounded to
// it; fp8 gets them quantized by its recipe's own casts (backends/fp8_cast.hpp: amax, scale, cast from
// bf16, as a training step does) and runs cuBLASLt's scaled GEMM with those scales. Every precision is
// measured on two kinds of inputs (core/numerics.hpp's ErrorData): unit normal, and the same with
// outlier channels, where scaling per tensor and per block part. Plain C++ interface: the views call it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/backend_kind.hpp"
#include "core/device_context.hpp"
#include "core/numerics.hpp"
#include "core/problem.hpp"

namespace shapescope {

// One precision a GEMM can run in: a dtype and, for fp8, its recipe.
struct Precision {
  DType dtype = DType::kBf16;
  Fp8Recipe recipe;
  Precision() = default;
  Precision(DType d, Fp8Recipe r = {}) : dtype(d), recipe(r) {}  // a dtype alone is a precision (fp8: tensor)
  bool operator==(const Precision& o) const { return dtype == o.dtype && (dtype != DType::kFp8 || recipe == o.recipe); }
};
// "bf16", "fp8 block", "fp8 tensor:e5m2xe4m3"
std::string precision_name(const Precision& precision);

struct NumericalErrors {
  // Two per asked precision that ran (Gaussian, then outliers), in the order asked.
  std::vector<NumericalError> errors;
  std::vector<std::string> skipped;    // "fp8 block: why", each precision the library could not run here
};

// Device bytes one measurement of `problem` takes: its operands in fp64 (inputs and reference), in
// 4-byte elements (the widest dtype) and in fp8 with their scales, and the library's workspace.
int64_t numerical_error_bytes(const Problem& problem);
// The problem whose error is measured for `target` within `budget` bytes: the target itself when it
// fits; else one matrix (batch 1, packed, no offsets) with M and N halved, the larger first, until it
// fits. K is kept: the length of each dot product is what sets the error, not how many there are.
Problem numerical_error_problem(const Problem& target, int64_t budget);

// Measures `target` (or numerical_error_problem's reduction of it, within half the free memory and
// at most 2 GiB) in each of `precisions` on `device`, on both kinds of inputs: fp8 through cuBLASLt
// (the first matrix of a batch), the others through `backend` (cuBLAS or cuBLASLt). Throws
// Error(kInternal) for a failed CUDA or cuBLAS call, Error(kOutOfMemory) when even one row and column
// do not fit.
NumericalErrors measure_numerical_errors(const Problem& target, const std::vector<Precision>& precisions,
                                         const BackendSpec& backend, const DeviceContext& device);

}  // namespace shapescope
