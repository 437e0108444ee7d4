#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "common/check.hpp"
#include "common/error.hpp"
#include "core/numerics.hpp"
#include "timing/device_kernels.hpp"

namespace shapescope {
namespace {

// splitmix64: a good 64-bit mix, so that neighbouring indices give independent numbers.
__device__ uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Box-Muller on two 32-bit uniforms from one hash.
__device__ float normal_at(uint64_t seed, int64_t i) {
  const uint64_t h = mix(seed ^ mix(uint64_t(i)));
  const float u1 = (float((h >> 40) & 0xffffff) + 1.0f) / 16777217.0f;  // (0, 1]
  const float u2 = float((h >> 8) & 0xffffff) / 16777216.0f;           // [0, 1)
  return sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
}

template <typename T>
__device__ T convert(float x);
template <> __device__ float convert<float>(float x) { return x; }
template <> __device__ __half convert<__half>(float x) { return __float2half(x); }
template <> __device__ __nv_bfloat16 convert<__nv_bfloat16>(float x) { return __float2bfloat16(x); }
template <> __device__ __nv_fp8_e4m3 convert<__nv_fp8_e4m3>(float x) { return __nv_fp8_e4m3(x); }

template <typename T>
__global__ void fill_normal_kernel(T* data, int64_t count, uint64_t seed) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    data[i] = convert<T>(normal_at(seed, i));
}

template <typename T>
void fill(void* data, int64_t count, uint64_t seed, cudaStream_t stream) {
  if (count <= 0) return;
  const int threads = 256;
  const int64_t blocks = std::min<int64_t>((count + threads - 1) / threads, 65536);
  fill_normal_kernel<T><<<unsigned(blocks), threads, 0, stream>>>(static_cast<T*>(data), count, seed);
  CHECK_CUDA(cudaGetLastError());
}

__global__ void fill_for_every_dtype_kernel(uint16_t* words, int64_t count, uint64_t seed) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    uint16_t bits = __bfloat16_as_ushort(__float2bfloat16(normal_at(seed, i)));
    // e5m2's infinities and NaNs are s.11111.xx (e4m3's NaNs, s.1111.111, among them): where the low
    // byte's bits 6..2 are all set, clear bit 2 (a finite value in both formats).
    if ((bits & 0x7c) == 0x7c) bits &= uint16_t(~0x4u);
    words[i] = bits;
  }
}

__device__ uint64_t global_ns() {
  uint64_t now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

__global__ void clock_probe_kernel(double* out_mhz, uint64_t nanoseconds) {
  // %globaltimer moves in ticks (32 ns to 1 us, by GPU): start right after one, and stop at the
  // first read past the span, so that both ends sit on a tick edge and the span is exact.
  const uint64_t before = global_ns();
  uint64_t t0 = global_ns();
  while (t0 == before) t0 = global_ns();
  const long long c0 = clock64();
  uint64_t t1 = global_ns();
  while (t1 - t0 < nanoseconds) t1 = global_ns();
  const long long c1 = clock64();
  *out_mhz = double(c1 - c0) * 1000.0 / double(t1 - t0);
}

template <typename T>
__device__ float as_float(T x);
template <> __device__ float as_float<float>(float x) { return x; }
template <> __device__ float as_float<__half>(__half x) { return __half2float(x); }
template <> __device__ float as_float<__nv_bfloat16>(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T>
__global__ void compare_kernel(const T* got, int64_t ld_got, const T* want, int64_t ld_want, int64_t m, int64_t n,
                               float relative, float absolute, CompareResult* result) {
  float worst = 0;
  const int64_t count = m * n;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const int64_t row = i / n, col = i % n;
    const float g = as_float(got[row * ld_got + col]);
    const float w = as_float(want[row * ld_want + col]);
    const float tolerance = relative * fabsf(w) + absolute;
    const float off = fabsf(g - w);
    float ratio = off / tolerance;
    if (!(off <= tolerance)) {  // NaN fails too
      if (ratio != ratio) ratio = INFINITY;
      atomicAdd(&result->bad, 1ull);
      atomicMin(&result->first, static_cast<unsigned long long>(i));
    }
    worst = fmaxf(worst, ratio);
  }
  for (int offset = 16; offset > 0; offset /= 2) worst = fmaxf(worst, __shfl_down_sync(0xffffffffu, worst, offset));
  // Non-negative floats order like their bit patterns as ints.
  if (threadIdx.x % 32 == 0 && worst > 0) atomicMax(reinterpret_cast<int*>(&result->worst), __float_as_int(worst));
}

template <typename T>
__global__ void pick_first_kernel(const T* got, int64_t ld_got, const T* want, int64_t ld_want, int64_t n,
                                  CompareResult* result) {
  if (result->bad == 0) return;
  const int64_t row = int64_t(result->first) / n, col = int64_t(result->first) % n;
  result->got = as_float(got[row * ld_got + col]);
  result->want = as_float(want[row * ld_want + col]);
}

template <typename T>
void compare(const void* got, int64_t ld_got, const void* want, int64_t ld_want, int64_t m, int64_t n, double relative,
             double absolute, CompareResult* result, cudaStream_t stream) {
  if (m <= 0 || n <= 0) return;
  const int threads = 256;
  const int64_t blocks = std::min<int64_t>((m * n + threads - 1) / threads, 4096);
  const T* g = static_cast<const T*>(got);
  const T* w = static_cast<const T*>(want);
  compare_kernel<T><<<unsigned(blocks), threads, 0, stream>>>(g, ld_got, w, ld_want, m, n, float(relative),
                                                              float(absolute), result);
  CHECK_CUDA(cudaGetLastError());
  pick_first_kernel<T><<<1, 1, 0, stream>>>(g, ld_got, w, ld_want, n, result);
  CHECK_CUDA(cudaGetLastError());
}

template <typename T>
__device__ double widen(T x) { return double(as_float(x)); }
template <> __device__ double widen<__nv_fp8_e4m3>(__nv_fp8_e4m3 x) { return double(float(x)); }

template <typename T>
__device__ T narrow(double x);
template <> __device__ float narrow<float>(double x) { return float(x); }
template <> __device__ __half narrow<__half>(double x) { return __double2half(x); }
template <> __device__ __nv_bfloat16 narrow<__nv_bfloat16>(double x) { return __double2bfloat16(x); }
template <> __device__ __nv_fp8_e4m3 narrow<__nv_fp8_e4m3>(double x) { return __nv_fp8_e4m3(x); }

template <typename T>
__global__ void widen_kernel(const T* from, double* to, int64_t count) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) to[i] = widen(from[i]);
}

template <typename T>
__global__ void narrow_kernel(const double* from, T* to, int64_t count) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) to[i] = narrow<T>(from[i]);
}

unsigned elementwise_blocks(int64_t count) { return unsigned(std::min<int64_t>((count + 255) / 256, 65536)); }

template <typename T>
void widen_as(const void* from, double* to, int64_t count, cudaStream_t stream) {
  if (count <= 0) return;
  widen_kernel<T><<<elementwise_blocks(count), 256, 0, stream>>>(static_cast<const T*>(from), to, count);
  CHECK_CUDA(cudaGetLastError());
}

template <typename T>
void narrow_as(const double* from, void* to, int64_t count, cudaStream_t stream) {
  if (count <= 0) return;
  narrow_kernel<T><<<elementwise_blocks(count), 256, 0, stream>>>(from, static_cast<T*>(to), count);
  CHECK_CUDA(cudaGetLastError());
}

constexpr int kErrorThreads = 256;

// Grid-stride over every element of every matrix; each block reduces its threads' sums in shared
// memory and writes them to partials[blockIdx.x] (no atomics on doubles).
template <typename T>
__global__ void error_sums_kernel(const T* got, const double* want, int64_t m, int64_t n, int64_t ld, int64_t batch,
                                  int64_t stride, ErrorSums* partials) {
  ErrorSums mine;
  const int64_t count = m * n * batch;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
    const int64_t b = i / (m * n), row = (i / n) % m, col = i % n;
    const int64_t at = b * stride + row * ld + col;
    const double g = double(as_float(got[at])), w = want[at];
    mine.max_want = fmax(mine.max_want, fabs(w));
    mine.sum_sq_want += w * w;
    if (!isfinite(g)) {
      ++mine.non_finite;
      continue;
    }
    const double d = g - w;
    mine.max_abs = fmax(mine.max_abs, fabs(d));
    mine.sum_sq_diff += d * d;
  }
  // Shared memory cannot hold a type with initializers: one array per sum.
  __shared__ double max_abs[kErrorThreads], sum_sq_diff[kErrorThreads], sum_sq_want[kErrorThreads],
      max_want[kErrorThreads];
  __shared__ unsigned long long non_finite[kErrorThreads];
  const unsigned t = threadIdx.x;
  max_abs[t] = mine.max_abs;
  sum_sq_diff[t] = mine.sum_sq_diff;
  sum_sq_want[t] = mine.sum_sq_want;
  max_want[t] = mine.max_want;
  non_finite[t] = mine.non_finite;
  __syncthreads();
  for (unsigned half = kErrorThreads / 2; half > 0; half /= 2) {
    if (t < half) {
      max_abs[t] = fmax(max_abs[t], max_abs[t + half]);
      sum_sq_diff[t] += sum_sq_diff[t + half];
      sum_sq_want[t] += sum_sq_want[t + half];
      max_want[t] = fmax(max_want[t], max_want[t + half]);
      non_finite[t] += non_finite[t + half];
    }
    __syncthreads();
  }
  if (t == 0) {
    ErrorSums& out = partials[blockIdx.x];
    out.max_abs = max_abs[0];
    out.sum_sq_diff = sum_sq_diff[0];
    out.sum_sq_want = sum_sq_want[0];
    out.max_want = max_want[0];
    out.non_finite = non_finite[0];
  }
}

template <typename T>
void error_sums_as(const void* got, const double* want, int64_t m, int64_t n, int64_t ld, int64_t batch, int64_t stride,
                   ErrorSums* partials, cudaStream_t stream) {
  // Every partial is written (a block with no element writes zeros), so the host may add all of them.
  error_sums_kernel<T><<<kErrorBlocks, kErrorThreads, 0, stream>>>(static_cast<const T*>(got), want, m, n, ld, batch,
                                                                    stride, partials);
  CHECK_CUDA(cudaGetLastError());
}

__device__ void spin_for(uint64_t nanoseconds) {
  uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}

__global__ void spin_kernel(uint64_t nanoseconds) { spin_for(nanoseconds); }

// The jitter is drawn on the GPU, from the launch count: a graph replayed gives new draws.
__global__ void jittered_spin_kernel(uint64_t nanoseconds, uint64_t jitter_ns, unsigned* launches) {
  uint64_t x = atomicAdd(launches, 1u) + 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  spin_for(nanoseconds + x % (jitter_ns + 1));
}

}  // namespace

void fill_normal(void* data, int64_t count, DType dtype, bool as_output, uint64_t seed,
                 cudaStream_t stream) {
  switch (dtype) {
    case DType::kBf16: return fill<__nv_bfloat16>(data, count, seed, stream);
    case DType::kFp16: return fill<__half>(data, count, seed, stream);
    case DType::kFp32:
    case DType::kTf32: return fill<float>(data, count, seed, stream);
    case DType::kFp8:
      if (as_output) return fill<__nv_bfloat16>(data, count, seed, stream);
      return fill<__nv_fp8_e4m3>(data, count, seed, stream);
  }
}

__global__ void outlier_channels_kernel(double* a, int64_t begin, int64_t end, int64_t lda, int64_t rows,
                                        bool transposed, double factor) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = begin + int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < end; i += stride) {
    const int64_t at = i - begin;
    // A stored M x K: K is the column within a row; stored K x M: K is the row within a matrix.
    const int64_t k = transposed ? (at / lda) % rows : at % lda;
    if (outlier_channel(k)) a[i] *= factor;
  }
}

void launch_outlier_channels(double* a, const Problem& p, double factor, cudaStream_t stream) {
  const int64_t count = p.a_span() - p.off_a;
  if (count <= 0) return;
  outlier_channels_kernel<<<elementwise_blocks(count), 256, 0, stream>>>(a, p.off_a, p.a_span(), p.lda, p.a_rows(),
                                                                         p.a_transposed(), factor);
  CHECK_CUDA(cudaGetLastError());
}

void widen_to_f64(const void* from, DType dtype, double* to, int64_t count, cudaStream_t stream) {
  switch (dtype) {
    case DType::kBf16: return widen_as<__nv_bfloat16>(from, to, count, stream);
    case DType::kFp16: return widen_as<__half>(from, to, count, stream);
    case DType::kFp32:
    case DType::kTf32: return widen_as<float>(from, to, count, stream);
    case DType::kFp8: return widen_as<__nv_fp8_e4m3>(from, to, count, stream);
  }
  throw Error(ExitCode::kInternal, "widen_to_f64: no conversion for this dtype");
}

void narrow_from_f64(const double* from, DType dtype, void* to, int64_t count, cudaStream_t stream) {
  switch (dtype) {
    case DType::kBf16: return narrow_as<__nv_bfloat16>(from, to, count, stream);
    case DType::kFp16: return narrow_as<__half>(from, to, count, stream);
    case DType::kFp32:
    case DType::kTf32: return narrow_as<float>(from, to, count, stream);
    case DType::kFp8: return narrow_as<__nv_fp8_e4m3>(from, to, count, stream);
  }
  throw Error(ExitCode::kInternal, "narrow_from_f64: no conversion for this dtype");
}

void launch_error_sums(const void* got, const double* want, int64_t m, int64_t n, int64_t ld, int64_t batch,
                       int64_t stride, DType dtype, ErrorSums* partials, cudaStream_t stream) {
  // C's type: fp32 for fp32/tf32, the dtype for fp16/bf16, bf16 for fp8 (backends/cuda_types.hpp).
  switch (dtype) {
    case DType::kFp32:
    case DType::kTf32: return error_sums_as<float>(got, want, m, n, ld, batch, stride, partials, stream);
    case DType::kFp16: return error_sums_as<__half>(got, want, m, n, ld, batch, stride, partials, stream);
    case DType::kBf16:
    case DType::kFp8: return error_sums_as<__nv_bfloat16>(got, want, m, n, ld, batch, stride, partials, stream);
  }
  throw Error(ExitCode::kInternal, "launch_error_sums: no comparison for this dtype");
}

void fill_for_every_dtype(void* data, int64_t bytes, uint64_t seed, cudaStream_t stream) {
  const int64_t words = bytes / 2;
  if (words > 0) {
    fill_for_every_dtype_kernel<<<elementwise_blocks(words), 256, 0, stream>>>(static_cast<uint16_t*>(data), words, seed);
    CHECK_CUDA(cudaGetLastError());
  }
  // An odd last byte (an fp8 buffer): 0x38 is 1.0 in e4m3.
  if (bytes % 2 == 1) CHECK_CUDA(cudaMemsetAsync(static_cast<char*>(data) + bytes - 1, 0x38, 1, stream));
}

void launch_spin(uint64_t nanoseconds, cudaStream_t stream) {
  spin_kernel<<<1, 1, 0, stream>>>(nanoseconds);
  CHECK_CUDA(cudaGetLastError());
}

void launch_jittered_spin(uint64_t nanoseconds, uint64_t jitter_ns, unsigned* launches, cudaStream_t stream) {
  jittered_spin_kernel<<<1, 1, 0, stream>>>(nanoseconds, jitter_ns, launches);
  CHECK_CUDA(cudaGetLastError());
}

void launch_clock_probe(double* out_mhz, uint64_t nanoseconds, cudaStream_t stream) {
  clock_probe_kernel<<<1, 1, 0, stream>>>(out_mhz, nanoseconds);
  CHECK_CUDA(cudaGetLastError());
}

void launch_compare(const void* got, int64_t ld_got, const void* want, int64_t ld_want, int64_t m, int64_t n,
                    DType output, double relative, double absolute, CompareResult* result, cudaStream_t stream) {
  switch (output_bytes(output)) {
    case 4: return compare<float>(got, ld_got, want, ld_want, m, n, relative, absolute, result, stream);
    case 2:
      if (output == DType::kFp16) return compare<__half>(got, ld_got, want, ld_want, m, n, relative, absolute, result, stream);
      return compare<__nv_bfloat16>(got, ld_got, want, ld_want, m, n, relative, absolute, result, stream);
  }
  throw Error(ExitCode::kInternal, "launch_compare: no comparison for this output type");
}

}  // namespace shapescope
