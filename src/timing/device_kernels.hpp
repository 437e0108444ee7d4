// Small helper kernels the engine needs, behind a plain C++ interface.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/fp8.hpp"
#include "core/problem.hpp"

namespace shapescope {

// Fills `count` elements of `dtype`'s input type (or bf16 when as_output and dtype is fp8) with
// samples of a standard normal distribution, from a counter-based hash of (seed, index): the same
// seed gives the same data. Never zeros: zeros draw less power and run faster (MEASURE.md).
void fill_normal(void* data, int64_t count, DType dtype, bool as_output, uint64_t seed,
                 cudaStream_t stream);

// Fills `bytes` bytes so that every dtype reads them as finite numbers, none of them NaN or
// infinite: a request that mixes input types (explain's precision controls, paired against the
// target) shares one buffer. Each 16-bit word is a bf16 sample of a standard normal (so bf16 reads
// N(0,1), fp32 and tf32 read its upper words: N(0,1) with random low mantissa bits, fp16 reads
// magnitudes of 0.5..4) whose low byte is kept off e4m3's NaN and e5m2's infinity and NaN patterns
// (fp8 reads finite values in either format, the upper bytes 1..4 in magnitude). The same seed gives
// the same bytes.
void fill_for_every_dtype(void* data, int64_t bytes, uint64_t seed, cudaStream_t stream);

// A kernel that spins for `nanoseconds` of %globaltimer on one thread: a GPU task of known length,
// used to test the timer.
void launch_spin(uint64_t nanoseconds, cudaStream_t stream);

// A spin of nanoseconds + a jitter in [0, jitter_ns], drawn on the GPU from a hash of the count of
// launches so far (`*launches`, device memory, incremented by each run): a graph replayed draws anew.
// A noisy GPU task for the stopping rule's tests.
void launch_jittered_spin(uint64_t nanoseconds, uint64_t jitter_ns, unsigned* launches, cudaStream_t stream);

// The SM clock measured on the GPU: one thread counts clock64() cycles over `nanoseconds` of
// %globaltimer, both ends aligned on a timer tick, and writes cycles / ns * 1000 (MHz) to *out_mhz
// (device-visible memory, e.g. mapped pinned host memory). Graph-capturable; in a burst it also
// wakes the clocks up before the first sample.
void launch_clock_probe(double* out_mhz, uint64_t nanoseconds, cudaStream_t stream);

// What one comparison of an output with its reference found, written by the GPU (so it lives in
// device-visible memory; mapped pinned host memory lets the host read it after a sync).
struct CompareResult {
  unsigned long long bad = 0;             // elements off by more than the tolerance (NaN included)
  unsigned long long first = ~0ull;       // the first of them, row-major index (row * n + col)
  float worst = 0;                        // largest |got - want| / tolerance (inf for NaN)
  float got = 0, want = 0;                // the first bad element's values
};

// Compares `got` (m x n, leading dimension ld_got, elements of `output`'s type: fp32, fp16 or
// bf16) with `want` (ld_want) on the GPU: an element is bad unless
//   |got - want| <= relative * |want| + absolute.
// One grid-stride kernel (atomics only for bad elements and one per warp for the worst ratio) and
// one single-thread kernel that copies the first bad pair into *result: only the verdict and two
// numbers ever leave the GPU. *result must hold CompareResult{} before the first kernel runs.
void launch_compare(const void* got, int64_t ld_got, const void* want, int64_t ld_want, int64_t m, int64_t n,
                    DType output, double relative, double absolute, CompareResult* result, cudaStream_t stream);

// An fp8 GEMM (nt: A m x k and B n x k, K contiguous, in the recipe's formats, with its scales in
// core/fp8.hpp's layouts) and its bf16 output C (ldc), for fp8_check.
struct Fp8Check {
  const void* a = nullptr;
  const void* b = nullptr;
  int64_t lda = 0, ldb = 0;
  Fp8Format format_a = Fp8Format::kE4m3, format_b = Fp8Format::kE4m3;
  const float* scale_a = nullptr;
  const float* scale_b = nullptr;
  ScaleLayout layout_a, layout_b;
  const void* c = nullptr;
  int64_t ldc = 0;
  int64_t m = 0, n = 0, k = 0;
};
// At most this many rows and this many columns of C are checked whole (every one when fewer): the
// first, the last and the ones evenly between. A scale read from the wrong place is wrong in every
// row or column it covers, and the edges hold the partial tiles and blocks.
constexpr int64_t kFp8CheckedLines = 64;
// Compares C with the product of the dequantized operands, sum_k sa(i,k) sb(j,k) a[i,k] b[j,k], taken
// in double on the GPU, on kFp8CheckedLines rows and columns of C: an element is bad unless
//   |got - want| <= want_relative * |want| + sum_relative * sum_k |sa sb a b|
// (the second term bounds what accumulating in fp32 and fp8 tensor cores may lose; a wrong scale
// moves whole 128-element blocks, far beyond it). One warp per element; then one thread fills in
// the first bad element's values. `result` as for launch_compare, with `first` = row * n + col.
void launch_fp8_check(const Fp8Check& check, double want_relative, double sum_relative, CompareResult* result,
                      cudaStream_t stream);

// The numerical error of a GEMM (measure/precision_error.hpp), on the GPU.
// widen_to_f64: `count` elements of `dtype`'s input type (fp32 for tf32, e4m3 for fp8) as doubles,
// exactly. narrow_from_f64: doubles rounded to nearest in `dtype`'s input type (tf32 keeps fp32: the
// tensor cores round it).
void widen_to_f64(const void* from, DType dtype, double* to, int64_t count, cudaStream_t stream);
void narrow_from_f64(const double* from, DType dtype, void* to, int64_t count, cudaStream_t stream);

// ErrorData::kOutliers (core/numerics.hpp): A's outlier channels (the columns k of the logical
// M x K matrix with outlier_channel(k)) multiplied by `factor`, in A's fp64 copy laid out as
// `problem` says (its layout, lda, batch and offset).
void launch_outlier_channels(double* a, const Problem& problem, double factor, cudaStream_t stream);

// One block's part of an output's distance from its reference.
struct ErrorSums {
  double max_abs = 0;      // max |got - want| over the finite elements
  double sum_sq_diff = 0;  // sum of (got - want)^2
  double sum_sq_want = 0;  // sum of want^2
  double max_want = 0;     // max |want|
  unsigned long long non_finite = 0;  // elements of `got` that are NaN or infinite
};
// The partial sums of `got` (C in `dtype`'s output type: fp32, fp16 or bf16) against `want` (doubles),
// both `batch` matrices of m x n with leading dimension ld, `stride` elements apart: one ErrorSums per
// block into `partials` (device memory for kErrorBlocks of them), for the host to add up.
constexpr int kErrorBlocks = 512;
void launch_error_sums(const void* got, const double* want, int64_t m, int64_t n, int64_t ld, int64_t batch,
                       int64_t stride, DType dtype, ErrorSums* partials, cudaStream_t stream);

}  // namespace shapescope
