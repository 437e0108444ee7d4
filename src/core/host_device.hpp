// SHAPESCOPE_HD marks a small inline function of the plain C++ vocabulary that CUDA kernels call too
// (a scale's index, an outlier channel): __host__ __device__ under nvcc, nothing elsewhere, so that
// the arithmetic exists once and the CPU tests hold it.
#pragma once

#if defined(__CUDACC__)
#define SHAPESCOPE_HD __host__ __device__
#else
#define SHAPESCOPE_HD
#endif
