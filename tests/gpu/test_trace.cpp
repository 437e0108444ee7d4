// The device query, NVML sampling and CUPTI kernel tracing against a real GPU. Each test that
// needs a GPU skips, with the reason, where there is none.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "common/check.hpp"
#include "common/error.hpp"
#include "device/device.hpp"
#include "gpu_test_util.hpp"
#include "device/nvml.hpp"
#include "trace/kernel_trace.hpp"

namespace shapescope {
namespace {

using testing::CublasHandle;

// Why there is no usable GPU, or nullopt when there is one.
std::optional<std::string> no_gpu_reason() {
  if (device_count() > 0) return std::nullopt;
  try {
    query_device(0);
  } catch (const Error& error) {
    return std::string(error.what());
  }
  return std::string("device_count() is 0");
}

#define SKIP_UNLESS_GPU_WORKS()                                                               \
  do {                                                                                   \
    if (const auto reason = no_gpu_reason()) GTEST_SKIP() << "no CUDA GPU: " << *reason; \
  } while (0)

class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) {
    CHECK_CUDA(cudaMalloc(&data_, bytes));
    // A non-zero byte pattern (0x3c3c3c3c is about 0.0115f) so that the GEMM works on real values.
    CHECK_CUDA(cudaMemset(data_, 0x3c, bytes));
  }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  float* get() const { return static_cast<float*>(data_); }

 private:
  void* data_ = nullptr;
};

void sgemm(cublasHandle_t handle, int m, int n, int k, const DeviceBuffer& a, const DeviceBuffer& b,
           const DeviceBuffer& c) {
  const float alpha = 1.0f, beta = 0.0f;
  CHECK_CUBLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a.get(), m, b.get(),
                           k, &beta, c.get(), m));
}

void expect_plausible(const std::vector<KernelRecord>& kernels) {
  ASSERT_FALSE(kernels.empty());
  for (const KernelRecord& kernel : kernels) {
    EXPECT_FALSE(kernel.name.empty());
    EXPECT_GE(kernel.grid_x, 1u) << kernel.name;
    EXPECT_GE(kernel.block_x, 1u) << kernel.name;
    EXPECT_GT(kernel.duration_us, 0.0) << kernel.name;
  }
}

// Without a GPU: one line, exit 3, saying that no driver is loaded where none is (rather than
// CUDA's "driver version is insufficient"), else CUDA's own error.
TEST(Device, NoGpuIsReportedInOneLine) {
  if (device_count() > 0) GTEST_SKIP() << "a GPU is present";
  try {
    query_device(0);
    FAIL() << "query_device(0) returned without a GPU";
  } catch (const Error& error) {
    const std::string what = error.what();
    EXPECT_EQ(error.code(), ExitCode::kNoGpu);
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    const bool no_driver = access("/proc/driver/nvidia/version", F_OK) != 0;
    EXPECT_EQ(what.rfind(no_driver ? "no NVIDIA GPU here: no NVIDIA driver is loaded" : "no CUDA GPU found (cudaGetDeviceCount: ",
                         0),
              0u)
        << what;
  }
}

TEST(Device, QueryDevice) {
  SKIP_UNLESS_GPU_WORKS();
  const DeviceContext context = query_device(0);
  EXPECT_FALSE(context.gpu_name.empty());
  EXPECT_GT(context.sm_count, 0);
  EXPECT_EQ(context.gpu_uuid.rfind("GPU-", 0), 0u) << context.gpu_uuid;
  EXPECT_EQ(context.gpu_uuid.size(), 40u) << context.gpu_uuid;
  EXPECT_FALSE(context.pci_bus_id.empty());
  EXPECT_GT(context.cc_major, 0);
  EXPECT_GT(context.l2_bytes, 0);
  EXPECT_GT(context.memory_bytes, 0);
  EXPECT_GT(context.max_sm_clock_mhz, 0);
  EXPECT_FALSE(context.driver.empty());
  EXPECT_FALSE(context.cuda_runtime.empty());
  EXPECT_FALSE(context.cublas.empty());
  EXPECT_FALSE(context.cublaslt.empty());

  int64_t free_bytes = 0, total_bytes = 0;
  memory_info(free_bytes, total_bytes);
  EXPECT_GT(free_bytes, 0);
  EXPECT_GE(total_bytes, free_bytes);
}

TEST(Device, OrdinalOutOfRange) {
  SKIP_UNLESS_GPU_WORKS();
  const int count = device_count();
  try {
    query_device(count);
    FAIL() << "query_device(" << count << ") returned";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kNoGpu);
    EXPECT_NE(std::string(error.what()).find("is out of range"), std::string::npos) << error.what();
  }
}

TEST(Nvml, ThrottleNames) {
  EXPECT_EQ(throttle_names(0), "");
  EXPECT_EQ(throttle_names(throttle::kSwPowerCap | throttle::kHwSlowdown),
            "sw_power_cap|hw_slowdown");
  EXPECT_EQ(throttle_names(throttle::kGpuIdle | 0x10000), "gpu_idle|0x10000");
}

TEST(Nvml, SamplerWithoutDeviceHasNoSamples) {
  ClockSampler sampler(nullptr, std::chrono::milliseconds(5));
  EXPECT_FALSE(sampler.available());
  EXPECT_TRUE(sampler.between(0, ClockSampler::now()).empty());
}

TEST(Nvml, SamplerSeesTheClock) {
  SKIP_UNLESS_GPU_WORKS();
  const DeviceContext context = query_device(0);
  const auto nvml = NvmlDevice::open(context.pci_bus_id);
  if (!nvml) GTEST_SKIP() << "NVML not available";
  ClockSampler sampler(nvml.get(), std::chrono::milliseconds(10));
  ASSERT_TRUE(sampler.available());
  const double t0 = ClockSampler::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const double t1 = ClockSampler::now();
  const std::vector<ClockSample> samples = sampler.between(t0, t1);
  EXPECT_GE(samples.size(), 5u);
  for (const ClockSample& sample : samples) {
    EXPECT_GT(sample.sm_clock_mhz, 0u);
    EXPECT_GE(sample.t, t0);
    EXPECT_LE(sample.t, t1);
  }
}

TEST(KernelTrace, TagsKernelsOfEachCall) {
  SKIP_UNLESS_GPU_WORKS();
  CHECK_CUDA(cudaSetDevice(0));
  KernelTrace trace;
  CublasHandle handle;
  constexpr int kSize = 256;
  const DeviceBuffer a(kSize * kSize * sizeof(float));
  const DeviceBuffer b(kSize * kSize * sizeof(float));
  const DeviceBuffer c(kSize * kSize * sizeof(float));

  // Untagged: its kernels must not show up under any tag.
  sgemm(handle.get(), kSize, kSize, kSize, a, b, c);
  trace.push(7);
  sgemm(handle.get(), kSize, kSize, kSize, a, b, c);
  trace.pop();
  trace.push(8);
  sgemm(handle.get(), 64, 32, 128, a, b, c);
  trace.pop();
  // cuBLAS launches some kernels through the runtime API and others (nvjet, on Hopper) through the
  // driver API; a half-precision GEMM makes sure the second path is tagged too.
  trace.push(9);
  const float alpha = 1.0f, beta = 0.0f;
  CHECK_CUBLAS(cublasGemmEx(handle.get(), CUBLAS_OP_N, CUBLAS_OP_N, kSize, kSize, kSize, &alpha,
                            a.get(), CUDA_R_16F, kSize, b.get(), CUDA_R_16F, kSize, &beta, c.get(),
                            CUDA_R_16F, kSize, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  trace.pop();

  const auto kernels = trace.collect();
  ASSERT_EQ(kernels.size(), 3u);
  for (const uint64_t tag : {7, 8, 9}) {
    ASSERT_EQ(kernels.count(tag), 1u) << "tag " << tag;
    expect_plausible(kernels.at(tag));
  }

  // collect() hands each kernel back once.
  EXPECT_TRUE(trace.collect().empty());
}

TEST(KernelTrace, OnlyOneAtATime) {
  SKIP_UNLESS_GPU_WORKS();
  {
    KernelTrace first;
    try {
      KernelTrace second;
      FAIL() << "a second KernelTrace was created";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ExitCode::kInternal);
    }
  }
  // Once the first is gone, a new one may be created and still sees kernels.
  KernelTrace again;
  CublasHandle handle;
  const DeviceBuffer a(64 * 64 * sizeof(float));
  const DeviceBuffer c(64 * 64 * sizeof(float));
  again.push(1);
  sgemm(handle.get(), 64, 64, 64, a, a, c);
  again.pop();
  const auto kernels = again.collect();
  ASSERT_EQ(kernels.count(1), 1u);
  expect_plausible(kernels.at(1));
}

}  // namespace
}  // namespace shapescope
