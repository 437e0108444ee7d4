// Small helper kernels the engine needs, behind a plain C++ interface.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/problem.hpp"

namespace shapescope {

// Fills `count` elements of `dtype`'s input type (or bf16 when as_output and dtype is fp8) with
// samples of a standard normal distribution, from a counter-based hash of (seed, index): the same
// seed gives the same data. Never zeros: zeros draw less power and run faster (MEASURE.md).
void fill_normal(void* data, int64_t count, DType dtype, bool as_output, uint64_t seed,
                 cudaStream_t stream);

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

}  // namespace shapescope
