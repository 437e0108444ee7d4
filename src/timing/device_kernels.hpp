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

}  // namespace shapescope
