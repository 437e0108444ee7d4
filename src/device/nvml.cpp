#include "device/nvml.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "common/clock.hpp"
#include "device/gpu_processes.hpp"

namespace shapescope {
namespace {

// NVML's C types as the library defines them; declared here because the build machine has no
// nvml.h. nvmlReturn_t is an int enum (0 = NVML_SUCCESS), nvmlDevice_t an opaque pointer.
using NvmlReturn = int;
using NvmlDeviceHandle = void*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;              // NVML_CLOCK_SM
constexpr int kNvmlTemperatureGpu = 0;       // NVML_TEMPERATURE_GPU
constexpr unsigned kDriverVersionSize = 80;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE

using InitFn = NvmlReturn (*)();
using HandleByPciBusIdFn = NvmlReturn (*)(const char*, NvmlDeviceHandle*);
using DriverVersionFn = NvmlReturn (*)(char*, unsigned);
using ClockInfoFn = NvmlReturn (*)(NvmlDeviceHandle, int, unsigned*);
using ReasonsFn = NvmlReturn (*)(NvmlDeviceHandle, unsigned long long*);
using TemperatureFn = NvmlReturn (*)(NvmlDeviceHandle, int, unsigned*);
using PowerUsageFn = NvmlReturn (*)(NvmlDeviceHandle, unsigned*);
using UuidFn = NvmlReturn (*)(NvmlDeviceHandle, char*, unsigned);
// nvmlProcessInfo_v2_t, which nvmlDeviceGetComputeRunningProcesses_v3 fills.
struct NvmlProcessInfo {
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
};
using ProcessesFn = NvmlReturn (*)(NvmlDeviceHandle, unsigned*, NvmlProcessInfo*);
using MinorNumberFn = NvmlReturn (*)(NvmlDeviceHandle, unsigned*);
constexpr unsigned kUuidSize = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE is 96

// The entry points we use. Any of them may be null when the installed NVML lacks it; `ready`
// says whether the library loaded, initialized and can find devices at all.
struct NvmlApi {
  bool ready = false;
  HandleByPciBusIdFn handle_by_pci_bus_id = nullptr;
  DriverVersionFn driver_version = nullptr;
  ClockInfoFn clock_info = nullptr;
  ClockInfoFn max_clock_info = nullptr;
  ReasonsFn clock_event_reasons = nullptr;
  TemperatureFn temperature = nullptr;
  PowerUsageFn power_usage = nullptr;
  PowerUsageFn power_limit = nullptr;  // the enforced limit, in milliwatts like the usage
  UuidFn uuid = nullptr;
  ProcessesFn compute_processes = nullptr;
  MinorNumberFn minor_number = nullptr;
};

template <typename Fn>
Fn symbol(void* library, const char* name) {
  return reinterpret_cast<Fn>(dlsym(library, name));
}

NvmlApi load_nvml() {
  NvmlApi api;
  void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) return api;
  // The library stays loaded (no dlclose) and initialized (no nvmlShutdown) for the life of the
  // process: a ClockSampler thread may still be calling into it while static objects are
  // destroyed at exit, and the driver releases NVML's state when the process ends.
  auto init = symbol<InitFn>(library, "nvmlInit_v2");
  if (init == nullptr || init() != kNvmlSuccess) return api;
  api.handle_by_pci_bus_id =
      symbol<HandleByPciBusIdFn>(library, "nvmlDeviceGetHandleByPciBusId_v2");
  api.driver_version = symbol<DriverVersionFn>(library, "nvmlSystemGetDriverVersion");
  api.clock_info = symbol<ClockInfoFn>(library, "nvmlDeviceGetClockInfo");
  api.max_clock_info = symbol<ClockInfoFn>(library, "nvmlDeviceGetMaxClockInfo");
  // Renamed from "throttle" to "clocks event" reasons in newer drivers; the old name remains as a
  // deprecated alias, so take whichever this driver has.
  api.clock_event_reasons = symbol<ReasonsFn>(library, "nvmlDeviceGetCurrentClocksEventReasons");
  if (api.clock_event_reasons == nullptr) {
    api.clock_event_reasons =
        symbol<ReasonsFn>(library, "nvmlDeviceGetCurrentClocksThrottleReasons");
  }
  api.temperature = symbol<TemperatureFn>(library, "nvmlDeviceGetTemperature");
  api.power_usage = symbol<PowerUsageFn>(library, "nvmlDeviceGetPowerUsage");
  api.power_limit = symbol<PowerUsageFn>(library, "nvmlDeviceGetEnforcedPowerLimit");
  api.uuid = symbol<UuidFn>(library, "nvmlDeviceGetUUID");
  api.compute_processes = symbol<ProcessesFn>(library, "nvmlDeviceGetComputeRunningProcesses_v3");
  api.minor_number = symbol<MinorNumberFn>(library, "nvmlDeviceGetMinorNumber");
  api.ready = true;
  return api;
}

// Loaded on first use; C++ makes the initialization of a function-local static thread-safe.
const NvmlApi& nvml() {
  static const NvmlApi api = load_nvml();
  return api;
}

struct ReasonName {
  uint64_t bit;
  const char* name;
};

constexpr ReasonName kReasonNames[] = {
    {throttle::kGpuIdle, "gpu_idle"},
    {throttle::kApplicationsClocksSetting, "applications_clocks_setting"},
    {throttle::kSwPowerCap, "sw_power_cap"},
    {throttle::kHwSlowdown, "hw_slowdown"},
    {throttle::kSyncBoost, "sync_boost"},
    {throttle::kSwThermalSlowdown, "sw_thermal_slowdown"},
    {throttle::kHwThermalSlowdown, "hw_thermal_slowdown"},
    {throttle::kHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
    {throttle::kDisplayClockSetting, "display_clock_setting"},
    {throttle::kSharedGpu, "shared_gpu"},
    {throttle::kLowClock, "below_70pct_of_max_clock"},
};

}  // namespace

std::string throttle_names(uint64_t reasons) {
  std::string names;
  uint64_t unnamed = reasons;
  for (const ReasonName& reason : kReasonNames) {
    if ((reasons & reason.bit) == 0) continue;
    if (!names.empty()) names += '|';
    names += reason.name;
    unnamed &= ~reason.bit;
  }
  // Bits that newer drivers may add are shown in hex rather than dropped.
  if (unnamed != 0) {
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(unnamed));
    if (!names.empty()) names += '|';
    names += hex;
  }
  return names;
}

std::unique_ptr<NvmlDevice> NvmlDevice::open(const std::string& pci_bus_id) {
  const NvmlApi& api = nvml();
  if (!api.ready || api.handle_by_pci_bus_id == nullptr) return nullptr;
  NvmlDeviceHandle handle = nullptr;
  if (api.handle_by_pci_bus_id(pci_bus_id.c_str(), &handle) != kNvmlSuccess || handle == nullptr) {
    return nullptr;
  }
  return std::unique_ptr<NvmlDevice>(new NvmlDevice(handle));
}

std::optional<std::string> NvmlDevice::driver_version() {
  const NvmlApi& api = nvml();
  if (!api.ready || api.driver_version == nullptr) return std::nullopt;
  char version[kDriverVersionSize] = {};
  if (api.driver_version(version, kDriverVersionSize) != kNvmlSuccess || version[0] == '\0') {
    return std::nullopt;
  }
  return std::string(version);
}

NvmlReading NvmlDevice::read() const {
  const NvmlApi& api = nvml();
  NvmlReading reading;
  if (!api.ready) return reading;
  unsigned value = 0;
  if (api.clock_info != nullptr && api.clock_info(handle_, kNvmlClockSm, &value) == kNvmlSuccess) {
    reading.sm_clock_mhz = value;
  }
  if (api.max_clock_info != nullptr &&
      api.max_clock_info(handle_, kNvmlClockSm, &value) == kNvmlSuccess) {
    reading.max_sm_clock_mhz = value;
  }
  unsigned long long reasons = 0;
  if (api.clock_event_reasons != nullptr &&
      api.clock_event_reasons(handle_, &reasons) == kNvmlSuccess) {
    reading.reasons = reasons;
  }
  if (api.temperature != nullptr &&
      api.temperature(handle_, kNvmlTemperatureGpu, &value) == kNvmlSuccess) {
    reading.temperature_c = value;
  }
  if (api.power_usage != nullptr && api.power_usage(handle_, &value) == kNvmlSuccess) {
    reading.power_w = value / 1000.0;  // NVML reports milliwatts
  }
  if (api.power_limit != nullptr && api.power_limit(handle_, &value) == kNvmlSuccess) {
    reading.power_limit_w = value / 1000.0;
  }
  return reading;
}

std::optional<std::string> NvmlDevice::uuid() const {
  const NvmlApi& api = nvml();
  if (!api.ready || api.uuid == nullptr) return std::nullopt;
  char text[kUuidSize] = {};
  if (api.uuid(handle_, text, kUuidSize) != kNvmlSuccess || text[0] == '\0') return std::nullopt;
  return std::string(text);
}

std::optional<std::vector<GpuProcess>> NvmlDevice::compute_processes() const {
  const NvmlApi& api = nvml();
  if (!api.ready || api.compute_processes == nullptr) return std::nullopt;
  constexpr unsigned kMost = 64;
  NvmlProcessInfo infos[kMost] = {};
  unsigned count = kMost;
  if (api.compute_processes(handle_, &count, infos) != kNvmlSuccess) return std::nullopt;
  std::vector<GpuProcess> processes;
  for (unsigned i = 0; i < std::min(count, kMost); ++i)
    processes.push_back(GpuProcess{infos[i].pid, infos[i].used_gpu_memory});
  return processes;
}

std::optional<unsigned> NvmlDevice::minor_number() const {
  const NvmlApi& api = nvml();
  unsigned minor = 0;
  if (!api.ready || api.minor_number == nullptr || api.minor_number(handle_, &minor) != kNvmlSuccess) return std::nullopt;
  return minor;
}

std::optional<size_t> NvmlDevice::other_processes() const {
  const auto processes = compute_processes();
  if (!processes) return std::nullopt;
  std::vector<unsigned> listed;
  for (const GpuProcess& p : *processes) listed.push_back(p.pid);
  // This process and the ones that started it (they wait on it) are not others: gpu_processes.hpp.
  const std::vector<unsigned> ancestors = ancestor_pids();
  const auto ancestors_holding = [&]() -> size_t {
    const std::optional<unsigned> minor = minor_number();
    return minor ? holding_device(ancestors, *minor) : 0;
  };
  return other_processes_on_gpu(listed, unsigned(getpid()), ancestors, ancestors_holding);
}

ClockSampler::ClockSampler(const NvmlDevice* device, std::chrono::milliseconds period)
    : device_(device), period_(std::max(period, std::chrono::milliseconds(1))) {
  if (device_ != nullptr) thread_ = std::thread([this] { loop(); });
}

ClockSampler::~ClockSampler() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void ClockSampler::loop() {
  // Sleeping in short slices instead of a whole period keeps the destructor from waiting up to
  // a full period for the thread to notice stop_.
  constexpr auto kSlice = std::chrono::milliseconds(2);
  auto next = std::chrono::steady_clock::now();
  auto next_processes = next;
  while (!stop_) {
    if (std::chrono::steady_clock::now() >= next_processes) {
      if (const auto others = device_->other_processes()) others_ = std::max(others_.load(), long(*others));
      next_processes = std::chrono::steady_clock::now() + kProcessPeriod;
    }
    const NvmlReading reading = device_->read();
    const double t = now();
    // A zero clock means NVML could not read it; such a sample would only drag medians down.
    if (reading.sm_clock_mhz != 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      samples_.push_back(ClockSample{t, reading.sm_clock_mhz, reading.reasons, reading.power_w.value_or(0)});
    }
    next += period_;
    for (auto current = std::chrono::steady_clock::now(); !stop_ && current < next;
         current = std::chrono::steady_clock::now()) {
      std::this_thread::sleep_for(
          std::min<std::chrono::steady_clock::duration>(next - current, kSlice));
    }
    // After a stall (a slow NVML call, a descheduled thread) resume the cadence from now rather
    // than firing a burst of catch-up samples.
    next = std::max(next, std::chrono::steady_clock::now());
  }
}

std::vector<ClockSample> ClockSampler::between(double t0, double t1) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (samples_.empty()) return {};
  // samples_ is in time order: the thread appends with a monotonic clock.
  const auto by_time = [](const ClockSample& sample, double t) { return sample.t < t; };
  const auto first = std::lower_bound(samples_.begin(), samples_.end(), t0, by_time);
  auto last = first;
  while (last != samples_.end() && last->t <= t1) ++last;
  if (first != last) return std::vector<ClockSample>(first, last);
  // Nothing inside [t0, t1]: the window fell between two samples (or outside all of them).
  // `first` is the first sample after the window, first - 1 the last one before it.
  if (first == samples_.end()) return {samples_.back()};
  if (first == samples_.begin()) return {samples_.front()};
  const ClockSample& before = *(first - 1);
  const ClockSample& after = *first;
  return {t0 - before.t <= after.t - t1 ? before : after};
}

std::optional<size_t> ClockSampler::other_processes() const {
  const long others = others_.load();
  if (others < 0) return std::nullopt;
  return size_t(others);
}

double ClockSampler::now() { return steady_seconds(); }

}  // namespace shapescope
