// NVML, loaded at run time (dlopen "libnvidia-ml.so.1"; there is no NVML header on the build
// machine). Everything here degrades to "unknown" when the library or a symbol is missing.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>
#include <atomic>

namespace shapescope {

// Clock-event (throttle) reason bits as NVML defines them.
namespace throttle {
constexpr uint64_t kGpuIdle = 0x1;
constexpr uint64_t kApplicationsClocksSetting = 0x2;
constexpr uint64_t kSwPowerCap = 0x4;
constexpr uint64_t kHwSlowdown = 0x8;
constexpr uint64_t kSyncBoost = 0x10;
constexpr uint64_t kSwThermalSlowdown = 0x20;
constexpr uint64_t kHwThermalSlowdown = 0x40;
constexpr uint64_t kHwPowerBrakeSlowdown = 0x80;
constexpr uint64_t kDisplayClockSetting = 0x100;
// shapescope's own marks, kept beside NVML's reasons in the same bits (NVML uses the low ones):
// the GPU was shared with another process while the point was measured, or it ran under load below
// kLowClockShare of its maximum SM clock.
constexpr uint64_t kSharedGpu = 1ull << 62;
constexpr uint64_t kLowClock = 1ull << 61;
constexpr double kLowClockShare = 0.70;
// Reasons that mean the clock was held down by power or heat.
constexpr uint64_t kPowerOrThermal =
    kSwPowerCap | kHwSlowdown | kSwThermalSlowdown | kHwThermalSlowdown | kHwPowerBrakeSlowdown;
}  // namespace throttle

// "sw_power_cap|hw_slowdown" (empty for 0).
std::string throttle_names(uint64_t reasons);

struct NvmlReading {
  unsigned sm_clock_mhz = 0;
  unsigned max_sm_clock_mhz = 0;
  uint64_t reasons = 0;
  std::optional<unsigned> temperature_c;
  std::optional<double> power_w;
  std::optional<double> power_limit_w;  // the enforced power limit
};

// A process with a compute context on the GPU (NVML's process id: the host's, not a container's).
struct GpuProcess {
  unsigned pid = 0;
  unsigned long long used_bytes = 0;
};

// One GPU seen through NVML, found by its PCI bus id (cudaDeviceGetPCIBusId).
class NvmlDevice {
 public:
  // nullptr when NVML is absent, fails to initialize, or has no device with that bus id.
  static std::unique_ptr<NvmlDevice> open(const std::string& pci_bus_id);
  static std::optional<std::string> driver_version();  // "580.159.04"

  NvmlReading read() const;  // fields NVML could not give are 0 / nullopt
  std::optional<std::string> uuid() const;  // "GPU-1a2b..." as CUDA's UUID is written
  // The processes holding a compute context on the GPU; nullopt where NVML cannot say.
  std::optional<std::vector<GpuProcess>> compute_processes() const;
  // Of those, how many are neither this process (which is to hold a context on the GPU when asked)
  // nor one of the processes that started it (device/gpu_processes.hpp says why and how).
  std::optional<size_t> other_processes() const;
  std::optional<unsigned> minor_number() const;  // N of the GPU's device file /dev/nvidiaN

 private:
  explicit NvmlDevice(void* handle) : handle_(handle) {}
  void* handle_;
};

struct ClockSample {
  double t = 0;  // seconds on std::chrono::steady_clock since its epoch
  unsigned sm_clock_mhz = 0;
  uint64_t reasons = 0;
  double power_w = 0;  // 0: unknown
};

// Samples the SM clock and clock-event reasons from a side thread every `period`, so that no NVML
// call ever sits inside a timed region.
class ClockSampler {
 public:
  ClockSampler(const NvmlDevice* device, std::chrono::milliseconds period);  // device may be null
  ~ClockSampler();
  bool available() const { return device_ != nullptr; }
  // Samples with t in [t0, t1]; when none falls inside, the one nearest to the window.
  std::vector<ClockSample> between(double t0, double t1) const;
  static double now();  // steady_clock seconds, the same time base as ClockSample::t
  // The most processes other than this one seen on the GPU so far (polled every kProcessPeriod);
  // nullopt where NVML cannot list them.
  std::optional<size_t> other_processes() const;
  static constexpr std::chrono::milliseconds kProcessPeriod{500};

 private:
  void loop();
  const NvmlDevice* device_;
  std::chrono::milliseconds period_;
  mutable std::mutex mutex_;
  std::vector<ClockSample> samples_;
  std::atomic<bool> stop_{false};
  std::atomic<long> others_{-1};  // -1: unknown
  std::thread thread_;
};

}  // namespace shapescope
