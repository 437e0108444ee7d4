// What running a GEMM in a lower precision costs in accuracy: its output against an fp64 reference
// computed from the same inputs, measured on the GPU (measure/precision_error.hpp). Plain C++: the
// model and the reports read it.
#pragma once
#include <cstdint>

#include "core/problem.hpp"

namespace shapescope {

struct NumericalError {
  DType dtype = DType::kFp32;  // the precision the GEMM ran in (its inputs rounded to it, its output in it)
  Problem problem;             // the problem measured: the target's, or fewer rows and columns (same K) to fit
  double max_abs = 0;          // max |C - C_ref| over the elements
  double relative = 0;         // ||C - C_ref||_F / ||C_ref||_F (normwise: elements near zero do not blow it up)
  double reference_max = 0;    // max |C_ref|: the scale of max_abs
  int64_t non_finite = 0;      // elements that came out NaN or infinite (an fp16 overflow); not in the sums
  int64_t elements = 0;        // elements compared
};

}  // namespace shapescope
