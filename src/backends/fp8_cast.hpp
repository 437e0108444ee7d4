// The quantization of one bf16 operand into the fp8 form an fp8 GEMM reads (fp8_cast.cu), behind a
// plain C++ interface: amax at the recipe's grain, the scale that maps it onto the format's largest
// value (448 for e4m3, 57344 for e5m2), and the cast into a rows x K matrix with K contiguous (the
// operand of cuBLASLt's "TN" form), transposing a source stored K x rows on the way; the
// dequantization scales (amax / 448) land where core/fp8.hpp's ScaleLayout says cuBLASLt reads them.
//
//   q[r, k] = saturate(x[r, k] * fmax / max(amax, 1e-12)),   scale = max(amax, 1e-12) / fmax
//
// What is launched, on the caller's stream (graph-capturable):
//   1x128, 128x128   one kernel: each block of 256 threads reads a 128 x 128 tile of the source into
//                    shared memory (coalesced in the source's own orientation), reduces the amax of each
//                    1x128 row piece (or of the whole tile), scales, converts and writes the tile and its
//                    scales: one read of the source, one write of the output.
//   tensor, row      a memset of the amax, a kernel of the same tiles that only reduces (atomicMax per
//                    row, or per tensor), then the cast kernel reading those amaxes: the source is read
//                    twice, as any scaling whose amax spans more than one tile must.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/fp8.hpp"

namespace shapescope {

struct CastArgs {
  const void* source = nullptr;  // bf16
  int64_t rows = 0, k = 0;       // the output: rows x k
  int64_t ld_source = 0;         // elements between the source's stored rows
  bool transposed = false;       // the source is stored k x rows
  Fp8Format format = Fp8Format::kE4m3;
  void* out = nullptr;           // fp8, rows x k
  int64_t ld_out = 0;            // elements between the output's rows (>= k)
  float* scales = nullptr;       // `layout.count` dequantization scales
  ScaleLayout layout;            // its grain says how the amax is taken
  float* amax = nullptr;         // tensor and row: scratch of layout.count floats
};

// Enqueues the cast (a memset and two kernels for tensor and row grains, one kernel for the block
// grains); throws Error(kInternal) for a launch that fails.
void enqueue_cast(const CastArgs& args, cudaStream_t stream);

// The argument checks, in plain C++: why these arguments cannot be cast, or "" when they can.
const char* cast_args_problem(const CastArgs& args);

}  // namespace shapescope
