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
};

// One GPU seen through NVML, found by its PCI bus id (cudaDeviceGetPCIBusId).
class NvmlDevice {
 public:
  // nullptr when NVML is absent, fails to initialize, or has no device with that bus id.
  static std::unique_ptr<NvmlDevice> open(const std::string& pci_bus_id);
  static std::optional<std::string> driver_version();  // "580.159.04"

  NvmlReading read() const;  // fields NVML could not give are 0 / nullopt

 private:
  explicit NvmlDevice(void* handle) : handle_(handle) {}
  void* handle_;
};

struct ClockSample {
  double t = 0;  // seconds on std::chrono::steady_clock since its epoch
  unsigned sm_clock_mhz = 0;
  uint64_t reasons = 0;
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

 private:
  void loop();
  const NvmlDevice* device_;
  std::chrono::milliseconds period_;
  mutable std::mutex mutex_;
  std::vector<ClockSample> samples_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace shapescope
