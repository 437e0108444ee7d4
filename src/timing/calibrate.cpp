#include "timing/calibrate.hpp"

#include <fmt/format.h>

#include <memory>

#include "backends/backend.hpp"
#include "backends/cuda_types.hpp"
#include "common/check.hpp"
#include "device/device.hpp"
#include "common/clock.hpp"
#include "device/nvml.hpp"
#include "timing/device_kernels.hpp"
#include "timing/engine.hpp"

namespace shapescope {
namespace {

constexpr int64_t kSize = 8192;                  // 8192^3: ~1.1 TFLOP, >1 ms even at peak
constexpr int kSamples = 20;

// A device-to-device copy posing as a call, so the engine can time it.
class CopyCall : public GemmCall {
 public:
  CopyCall(void* dst, const void* src, int64_t bytes) : dst_(dst), src_(src), bytes_(bytes) {}
  void enqueue(cudaStream_t stream) override {
    CHECK_CUDA(cudaMemcpyAsync(dst_, src_, size_t(bytes_), cudaMemcpyDeviceToDevice, stream));
  }

 private:
  void* dst_;
  const void* src_;
  int64_t bytes_;
};

// The clock matters here: a peak measured while power-capped is the sustained peak, and says so
// (TimingStats::sm_clock_mhz).
TimingStats time_call(GemmCall& call, const ClockSampler& clocks, const std::atomic<bool>* interrupted) {
  MeasureOptions options;
  options.hot = true;
  options.samples = kSamples;
  options.max_chunk_jobs = 1;
  Engine engine(options, &clocks, interrupted);
  TimingStats out;
  engine.run({TimedJob{&call, 1000}}, nullptr,
             [&](const std::vector<JobResult>& chunk) { out = chunk.front().timing; }, nullptr);
  return out;
}

std::string clock_text(const TimingStats& t) {
  return t.sm_clock_mhz ? fmt::format(", SM clock {:.0f} MHz", *t.sm_clock_mhz) : std::string();
}

}  // namespace

std::vector<Calibration> calibrate(const DeviceContext& device, const std::atomic<bool>* interrupted) {
  std::vector<Calibration> out;
  const int64_t elems = kSize * kSize;
  void *a = nullptr, *b = nullptr, *c = nullptr, *workspace = nullptr;
  const int64_t workspace_bytes = 32ll << 20;
  use_device(device);
  CHECK_CUDA(cudaMalloc(&a, size_t(elems * 4)));
  CHECK_CUDA(cudaMalloc(&b, size_t(elems * 4)));
  CHECK_CUDA(cudaMalloc(&c, size_t(elems * 4)));
  CHECK_CUDA(cudaMalloc(&workspace, size_t(workspace_bytes)));
  DeviceBuffers buffers{a, b, c, workspace, workspace_bytes};
  auto nvml = NvmlDevice::open(device.pci_bus_id);
  ClockSampler clocks(nvml.get(), std::chrono::milliseconds(20));
  try {
    for (DType dtype : {DType::kBf16, DType::kFp16, DType::kFp8, DType::kTf32, DType::kFp32}) {
      if (dtype_unsupported(dtype, device)) continue;
      if (interrupted && interrupted->load()) break;
      Problem p;
      p.m = p.n = p.k = kSize;
      p.dtype = dtype;
      // fp8 runs only as nt in cuBLASLt (see plan.cpp); the others as nn, PyTorch's torch.mm.
      p.layout = dtype == DType::kFp8 ? Layout::kNT : Layout::kNN;
      p.lda = p.ldb = p.ldc = kSize;
      fill_normal(a, elems, dtype, false, 11, nullptr);
      fill_normal(b, elems, dtype, false, 12, nullptr);
      CHECK_CUDA(cudaDeviceSynchronize());
      const BackendKind backend = dtype == DType::kFp8 ? BackendKind::kCublasLt : BackendKind::kCublas;
      auto be = make_backend(BackendSpec(backend), buffers, 1);
      std::string why;
      auto calls = be->prepare(p, be->algo_keys(), why);
      if (calls.empty()) continue;
      const TimingStats t = time_call(*calls.front().call, clocks, interrupted);
      if (t.median_us <= 0) continue;
      out.push_back({fmt::format("tflops:{}", to_string(dtype)), p.flops() / t.median_us / 1e6, now_utc(),
                     fmt::format("{}x{}x{} {} {} via {}, hot L2, median of {}{}", kSize, kSize, kSize,
                                 to_string(dtype), to_string(p.layout), to_string(backend), kSamples,
                                 clock_text(t))});
    }
    if (!(interrupted && interrupted->load())) {
      const int64_t copy = elems * 4;  // 256 MiB: five times an H100's L2
      CopyCall call(c, a, copy);
      const TimingStats t = time_call(call, clocks, interrupted);
      if (t.median_us > 0)
        out.push_back({"bandwidth", 2.0 * double(copy) / t.median_us / 1e3, now_utc(),
                       fmt::format("device-to-device copy of {} MiB, bytes read + written, median of {}{}",
                                   copy >> 20, kSamples, clock_text(t))});
    }
  } catch (...) {
    cudaFree(a); cudaFree(b); cudaFree(c); cudaFree(workspace);
    throw;
  }
  cudaFree(a); cudaFree(b); cudaFree(c); cudaFree(workspace);
  return out;
}

}  // namespace shapescope
