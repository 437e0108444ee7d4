// What an fp8 recipe (core/fp8_recipe.hpp) means for one GEMM: where each operand's fp32 scales sit
// (the layouts cuBLASLt reads), which problems cuBLASLt refuses and why, and the casts that quantize
// a bf16 operand into the form the GEMM reads. Plain C++: the backends, the kernels (through
// SHAPESCOPE_HD) and the model share the one arithmetic, and the CPU tests hold it.
//
// cuBLASLt (cuBLAS 12.9+, compute capability 9.0) multiplies C[i,j] = sum_k sa(i,k) sb(j,k) a[i,k] b[j,k]
// with fp8 operands a (A, M x K) and b (B stored N x K: the only fp8 form on Hopper, cuBLASLt's "TN")
// and fp32 scales sa, sb: the dequantization scales, amax / 448 for e4m3 (57344 for e5m2). Their
// layouts, as PyTorch's _scaled_mm hands them over (pytorch#166752, the cuBLAS docs' "scaling
// factors layouts"):
//   tensor      one float
//   row         M floats for A, N for B (CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F)
//   1x128       rows x ceil(K/128) floats, rows fastest: scale(r, kb) at kb * rows + r
//               (CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F)
//   128x128     ceil(rows/128) x L4 floats with L4 = ceil(K/128) rounded up to a multiple of 4, K
//               blocks fastest: scale(rb, kb) at rb * L4 + kb (CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F).
//               Without the round-up cuBLASLt reads the wrong blocks and answers silently wrong.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "core/fp8_recipe.hpp"
#include "core/host_device.hpp"
#include "core/problem.hpp"

namespace shapescope {

// The largest finite value of a format: the quantization maps an operand's amax onto it.
constexpr float kE4m3Max = 448.0f;
constexpr float kE5m2Max = 57344.0f;
SHAPESCOPE_HD inline float fp8_max(Fp8Format format) { return format == Fp8Format::kE5m2 ? kE5m2Max : kE4m3Max; }
// An amax below this is taken as this (an all-zero block quantizes to zeros with a finite scale), as
// PyTorch's float8 recipes clamp it.
constexpr float kAmaxFloor = 1e-12f;

// How finely one operand is scaled.
enum class ScaleGrain { kTensor, kRow, kVec128, kBlock128 };
std::string_view to_string(ScaleGrain grain);  // "tensor", "row", "1x128", "128x128"
// The grain of operand A or B (kA, kB) under a scaling: block is 1x128 for A and 128x128 for B.
ScaleGrain scale_grain(Fp8Scaling scaling, CastOperand operand);

constexpr int64_t kScaleBlock = 128;

// One operand's scales as cuBLASLt reads them: `rows` is the operand's outer dimension (M for A, N
// for B), `k_blocks` ceil(K/128) (1 for tensor and row), `ld` the elements between consecutive row
// blocks of a 128x128 layout (L4), `count` the floats of the buffer.
struct ScaleLayout {
  ScaleGrain grain = ScaleGrain::kTensor;
  int64_t rows = 1, k_blocks = 1, ld = 1, count = 1;

  // Where the scale of element (row, k) of the operand sits.
  SHAPESCOPE_HD int64_t index(int64_t row, int64_t k) const {
    switch (grain) {
      case ScaleGrain::kTensor: return 0;
      case ScaleGrain::kRow: return row;
      case ScaleGrain::kVec128: return (k / kScaleBlock) * rows + row;
      case ScaleGrain::kBlock128: return (row / kScaleBlock) * ld + k / kScaleBlock;
    }
    return 0;
  }
};
ScaleLayout scale_layout(ScaleGrain grain, int64_t rows, int64_t k);
// Operand A's (rows M) or B's (rows N) scales under the problem's recipe.
ScaleLayout scale_layout(const Problem& fp8_gemm, CastOperand operand);

// Why cuBLASLt cannot run this fp8 GEMM on a GPU of compute capability `cc` (major*10+minor), in one
// line, or nullopt: a layout other than nt, e5m2 on both sides, row or block scaling before 9.0, block
// scaling off Hopper, K not a multiple of 128 for block scaling, a batched or grouped call with
// scales other than one per tensor. A problem of another dtype: nullopt.
std::optional<std::string> recipe_unsupported(const Problem& problem, int cc);

// The fp8 GEMM a program runs in place of `source` (its GEMM in bf16, any layout): the same M, N, K
// and batch, in the nt form with packed operands, under `recipe`. Operands stored otherwise are
// transposed by their casts (cast_problem), as Transformer Engine's casts write both orientations.
Problem fp8_problem(const Problem& source, const Fp8Recipe& recipe);

// The quantization of operand `operand` of the GEMM `source` (its bf16 operands, laid out as the
// program holds them) under `recipe`: amax at the operand's grain, scale, and the cast into the
// K-contiguous fp8 form with its scales in cuBLASLt's layout. As a Problem (backend "cast"):
// dtype fp8, the recipe, cast = the operand, and for A m = M, k = K, n = 0 (for B n = N, m = 0); its
// layout is kNT when the source is already K-contiguous, kTT for an A stored K x M and kNN for a B
// stored K x N (the cast transposes them); lda or ldb is the source's leading dimension.
Problem cast_problem(const Problem& source, const Fp8Recipe& recipe, CastOperand operand);

// Why no cast can run this problem, or nullopt: not a cast, not fp8, empty, a source leading
// dimension shorter than its rows, more rows than the cast kernels' grid holds (65535 x 128).
std::optional<std::string> cast_unsupported(const Problem& problem);

// A cast problem's output rows (M for A, N for B) and whether its source is stored K x rows.
int64_t cast_rows(const Problem& cast);
bool cast_transposes(const Problem& cast);
// The source's leading dimension (elements between its stored rows).
int64_t cast_source_ld(const Problem& cast);
// The format the cast writes: the recipe's format of its operand.
Fp8Format cast_format(const Problem& cast);
// Device bytes one cast call holds of its own: the bf16 source, the fp8 output, the scales and the
// amax scratch.
int64_t cast_bytes(const Problem& cast);

}  // namespace shapescope
