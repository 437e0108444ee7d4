#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "common/check.hpp"
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

__global__ void spin_kernel(uint64_t nanoseconds) {
  uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
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

void launch_spin(uint64_t nanoseconds, cudaStream_t stream) {
  spin_kernel<<<1, 1, 0, stream>>>(nanoseconds);
  CHECK_CUDA(cudaGetLastError());
}

}  // namespace shapescope
