// What running a GEMM in a lower precision costs in accuracy: its output against an fp64 reference
// computed from the same inputs, measured on the GPU (measure/precision_error.hpp). Plain C++: the
// model and the reports read it.
#pragma once
#include <cstdint>
#include <string_view>

#include "core/host_device.hpp"
#include "core/problem.hpp"

namespace shapescope {

// The inputs an error is measured on: unit normal, or the same with a few outlier channels (columns of
// A, the K dimension: about one in 509, 100x the rest), as LLM activations have. Scaling per tensor
// spends the fp8 range on the outliers; scaling per row or per 1x128 block keeps it for the rest.
enum class ErrorData { kGaussian, kOutliers };
std::string_view to_string(ErrorData data);  // "gaussian", "outliers"
constexpr double kOutlierFactor = 100;
// Whether column (K index) k of A is an outlier channel in kOutliers data.
SHAPESCOPE_HD inline bool outlier_channel(int64_t k) { return k % 509 == 17; }

struct NumericalError {
  DType dtype = DType::kFp32;  // the precision the GEMM ran in (its inputs rounded to it, its output in it)
  Fp8Recipe recipe;            // fp8: its operands quantized by the recipe's casts (amax, scale, cast)
  ErrorData data = ErrorData::kGaussian;
  Problem problem;             // the problem measured: the target's, or fewer rows and columns (same K) to fit
  double max_abs = 0;          // max |C - C_ref| over the elements
  double relative = 0;         // ||C - C_ref||_F / ||C_ref||_F (normwise: elements near zero do not blow it up)
  double reference_max = 0;    // max |C_ref|: the scale of max_abs
  int64_t non_finite = 0;      // elements that came out NaN or infinite (an fp16 overflow); not in the sums
  int64_t elements = 0;        // elements compared
};

}  // namespace shapescope
