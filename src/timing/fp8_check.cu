// launch_fp8_check (timing/device_kernels.hpp): an fp8 GEMM's output against the product of its
// dequantized operands, on a fixed set of rows and columns of C.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cstdint>

#include "common/check.hpp"
#include "timing/device_kernels.hpp"

namespace shapescope {
namespace {

__device__ float fp8_value(uint8_t bits, Fp8Format format) {
  if (format == Fp8Format::kE5m2) {
    __nv_fp8_e5m2 x;
    x.__x = bits;
    return float(x);
  }
  __nv_fp8_e4m3 x;
  x.__x = bits;
  return float(x);
}

// Line i of `lines` spread over [0, extent): all of them when extent <= lines.
__device__ int64_t line_at(int64_t i, int64_t lines, int64_t extent) {
  return lines >= extent ? i : (lines == 1 ? 0 : i * (extent - 1) / (lines - 1));
}

struct Element {
  int64_t row, col;
};

// Element e of the checked set: the checked rows whole, then the checked columns whole.
__device__ Element element_at(const Fp8Check& p, int64_t e) {
  const int64_t rows = min(p.m, kFp8CheckedLines);
  if (e < rows * p.n) return {line_at(e / p.n, rows, p.m), e % p.n};
  e -= rows * p.n;
  const int64_t cols = min(p.n, kFp8CheckedLines);
  return {e % p.m, line_at(e / p.m, cols, p.n)};
}

__device__ int64_t checked_count(const Fp8Check& p) {
  return min(p.m, kFp8CheckedLines) * p.n + min(p.n, kFp8CheckedLines) * p.m;
}

// The lane's share of sum_k sa sb a b and of sum_k |sa sb a b| for one element.
__device__ void partial_sums(const Fp8Check& p, Element x, int lane, int lanes, double& sum, double& abs_sum) {
  const auto* a = static_cast<const uint8_t*>(p.a) + x.row * p.lda;
  const auto* b = static_cast<const uint8_t*>(p.b) + x.col * p.ldb;
  for (int64_t k = lane; k < p.k; k += lanes) {
    const double product = double(fp8_value(a[k], p.format_a)) * double(fp8_value(b[k], p.format_b)) *
                           double(p.scale_a[p.layout_a.index(x.row, k)]) *
                           double(p.scale_b[p.layout_b.index(x.col, k)]);
    sum += product;
    abs_sum += fabs(product);
  }
}

__global__ void fp8_check_kernel(Fp8Check p, double want_relative, double sum_relative, CompareResult* result) {
  const int lane = int(threadIdx.x) % 32;
  const int64_t warps = int64_t(gridDim.x) * blockDim.x / 32;
  float worst = 0;
  for (int64_t e = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; e < checked_count(p); e += warps) {
    const Element x = element_at(p, e);
    double sum = 0, abs_sum = 0;
    partial_sums(p, x, lane, 32, sum, abs_sum);
    for (int offset = 16; offset > 0; offset /= 2) {
      sum += __shfl_down_sync(0xffffffffu, sum, offset);
      abs_sum += __shfl_down_sync(0xffffffffu, abs_sum, offset);
    }
    if (lane != 0) continue;
    const double got = double(__bfloat162float(static_cast<const __nv_bfloat16*>(p.c)[x.row * p.ldc + x.col]));
    const double tolerance = want_relative * fabs(sum) + sum_relative * abs_sum;
    const double off = fabs(got - sum);
    float ratio = tolerance > 0 ? float(off / tolerance) : (off == 0 ? 0.0f : INFINITY);
    if (!(off <= tolerance)) {  // NaN fails too
      if (ratio != ratio) ratio = INFINITY;
      atomicAdd(&result->bad, 1ull);
      atomicMin(&result->first, static_cast<unsigned long long>(x.row * p.n + x.col));
    }
    worst = fmaxf(worst, ratio);
  }
  if (lane == 0 && worst > 0) atomicMax(reinterpret_cast<int*>(&result->worst), __float_as_int(worst));
}

// The first bad element's values, recomputed by one thread.
__global__ void fp8_first_kernel(Fp8Check p, CompareResult* result) {
  if (result->bad == 0) return;
  const Element x{int64_t(result->first / uint64_t(p.n)), int64_t(result->first % uint64_t(p.n))};
  double sum = 0, abs_sum = 0;
  partial_sums(p, x, 0, 1, sum, abs_sum);
  result->want = float(sum);
  result->got = __bfloat162float(static_cast<const __nv_bfloat16*>(p.c)[x.row * p.ldc + x.col]);
}

}  // namespace

void launch_fp8_check(const Fp8Check& check, double want_relative, double sum_relative, CompareResult* result,
                      cudaStream_t stream) {
  if (check.m < 1 || check.n < 1 || check.k < 1) return;
  const int threads = 256;
  const int64_t elements = std::min(check.m, kFp8CheckedLines) * check.n + std::min(check.n, kFp8CheckedLines) * check.m;
  const int64_t blocks = std::min<int64_t>((elements * 32 + threads - 1) / threads, 4096);
  fp8_check_kernel<<<unsigned(blocks), threads, 0, stream>>>(check, want_relative, sum_relative, result);
  CHECK_CUDA(cudaGetLastError());
  fp8_first_kernel<<<1, 1, 0, stream>>>(check, result);
  CHECK_CUDA(cudaGetLastError());
}

}  // namespace shapescope
