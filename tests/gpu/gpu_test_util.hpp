// Shared by the GPU tests: skip without a GPU, and host-side decoding of device numbers.
#pragma once
#include <cublas_v2.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <unistd.h>
#include <string>
#include <vector>

#include "common/check.hpp"
#include "device/device.hpp"
#include "backends/backend.hpp"
#include "measure/measure.hpp"
#include "timing/device_kernels.hpp"

#define SKIP_WITHOUT_GPU()                                                  \
  do {                                                                      \
    if (::shapescope::device_count() == 0) GTEST_SKIP() << "no CUDA GPU on this machine"; \
  } while (0)

// Row and block fp8 scaling (and these tests' fp8 GEMMs) run on compute capability 9.x only.
#define SKIP_WITHOUT_FP8_HOPPER()                                                                 \
  do {                                                                                            \
    SKIP_WITHOUT_GPU();                                                                           \
    const ::shapescope::DeviceContext d_ = ::shapescope::query_device(0);                         \
    if (d_.cc_major != 9)                                                                         \
      GTEST_SKIP() << "row and block fp8 scaling run on compute capability 9.x; " << d_.gpu_name; \
  } while (0)

namespace shapescope::testing {

// A store file of this test process in the temporary folder, removed with its SQLite sidecars.
struct TempStore {
  std::filesystem::path path;
  explicit TempStore(const std::string& name = "test")
      : path(std::filesystem::temp_directory_path() /
             ("shapescope_" + name + "_" + std::to_string(getpid()) + ".db")) {}
  ~TempStore() {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(path.string() + suffix);
  }
  TempStore(const TempStore&) = delete;
  TempStore& operator=(const TempStore&) = delete;
};

// A cuBLAS handle for the lifetime of a test.
class CublasHandle {
 public:
  CublasHandle() { CHECK_CUBLAS(cublasCreate(&handle_)); }
  ~CublasHandle() { cublasDestroy(handle_); }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

// GPU work of a known length: a kernel that spins on %globaltimer for `ns`.
class SpinCall : public GemmCall {
 public:
  explicit SpinCall(uint64_t ns) : ns_(ns) {}
  void enqueue(cudaStream_t stream) override { launch_spin(ns_, stream); }

 private:
  uint64_t ns_;
};

// An L2 flush buffer for the timing tests.
struct FlushBuffer {
  void* ptr = nullptr;
  int64_t bytes = 64ll << 20;
  FlushBuffer() { CHECK_CUDA(cudaMalloc(&ptr, size_t(bytes))); }
  ~FlushBuffer() { cudaFree(ptr); }
  FlushBuffer(const FlushBuffer&) = delete;
  FlushBuffer& operator=(const FlushBuffer&) = delete;
};

// The shared buffers for these problems (as measure() plans them, without an L2 flush): A and B
// random normal (seeds `seed` and `seed` + 1), C poisoned with NaN (seed + 2), so that an output a
// kernel skips fails its comparison.
struct FilledBuffers {
  DeviceBuffers buf;
  FilledBuffers(const std::vector<Problem>& problems, uint64_t seed) {
    DeviceContext none;
    none.l2_bytes = 0;
    const MemoryPlan plan = memory_plan(problems, none, true);
    CHECK_CUDA(cudaMalloc(&buf.a, size_t(plan.a)));
    CHECK_CUDA(cudaMalloc(&buf.b, size_t(plan.b)));
    CHECK_CUDA(cudaMalloc(&buf.c, size_t(plan.c)));
    buf.workspace_bytes = std::max<int64_t>(plan.workspace, 16);
    CHECK_CUDA(cudaMalloc(&buf.workspace, size_t(buf.workspace_bytes)));
    const DType dtype = problems.front().dtype;
    fill_normal(buf.a, plan.a / input_bytes(dtype), dtype, false, seed, nullptr);
    fill_normal(buf.b, plan.b / input_bytes(dtype), dtype, false, seed + 1, nullptr);
    fill_normal(buf.c, plan.c / output_bytes(dtype), dtype, true, seed + 2, nullptr);
    CHECK_CUDA(cudaDeviceSynchronize());
  }
  ~FilledBuffers() {
    cudaFree(buf.a);
    cudaFree(buf.b);
    cudaFree(buf.c);
    cudaFree(buf.workspace);
  }
  FilledBuffers(const FilledBuffers&) = delete;
  FilledBuffers& operator=(const FilledBuffers&) = delete;
};

inline float bf16_to_float(uint16_t bits) {
  const uint32_t word = uint32_t(bits) << 16;
  float value;
  std::memcpy(&value, &word, sizeof(value));
  return value;
}

inline float fp16_to_float(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  float value;
  if (exponent == 0) value = std::ldexp(float(mantissa), -24);
  else if (exponent == 31) value = mantissa ? NAN : INFINITY;
  else value = std::ldexp(float(mantissa | 0x400), int(exponent) - 25);
  return sign ? -value : value;
}

}  // namespace shapescope::testing
