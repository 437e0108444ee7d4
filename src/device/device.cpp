#include "device/device.hpp"

#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <filesystem>

#include "common/check.hpp"
#include "common/error.hpp"
#include "device/nvml.hpp"

namespace shapescope {
namespace {

// CUDA encodes driver and runtime versions as major * 1000 + minor * 10: 13000 -> "13.0".
std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

// nvidia-smi's form: "GPU-" then the 16 bytes as hex in 8-4-4-4-12 groups.
std::string uuid_text(const cudaUUID_t& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  char text[64];
  std::snprintf(text, sizeof text,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return text;
}

std::string cublas_version_text() {
  int major = 0, minor = 0, patch = 0;
  CHECK_CUBLAS(cublasGetProperty(MAJOR_VERSION, &major));
  CHECK_CUBLAS(cublasGetProperty(MINOR_VERSION, &minor));
  CHECK_CUBLAS(cublasGetProperty(PATCH_LEVEL, &patch));
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

// cublasLtGetVersion() uses CUBLAS_VERSION's encoding, major * 10000 + minor * 100 + patch
// (130100 -> "13.1.0"), as cublas_api.h defines it.
std::string cublaslt_version_text() {
  const size_t version = cublasLtGetVersion();
  return std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
         std::to_string(version % 100);
}

std::string uuid_of(int ordinal) {
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, ordinal));
  return uuid_text(prop.uuid);
}

[[noreturn]] void wrong_device(const DeviceContext& device, const std::string& what, const std::string& uuid) {
  throw Error(ExitCode::kInternal, "GPU " + std::to_string(device.ordinal) + " (" + device.gpu_uuid + ") was chosen, but " +
                                       what + " is " + uuid + ": refusing to measure one GPU and label it another");
}

}  // namespace

void use_device(const DeviceContext& device) {
  CHECK_CUDA(cudaSetDevice(device.ordinal));
  int current = -1;
  CHECK_CUDA(cudaGetDevice(&current));
  const std::string uuid = uuid_of(current);
  if (current != device.ordinal || uuid != device.gpu_uuid)
    wrong_device(device, "the current CUDA device (" + std::to_string(current) + ")", uuid);
  if (const auto nvml = NvmlDevice::open(device.pci_bus_id))
    if (const auto nvml_uuid = nvml->uuid(); nvml_uuid && *nvml_uuid != device.gpu_uuid)
      wrong_device(device, "NVML's GPU at PCI bus " + device.pci_bus_id, *nvml_uuid);
}

std::string check_allocation(const void* ptr, const DeviceContext& device) {
  cudaPointerAttributes attributes{};
  CHECK_CUDA(cudaPointerGetAttributes(&attributes, ptr));
  const std::string uuid = uuid_of(attributes.device);
  if (uuid != device.gpu_uuid) wrong_device(device, "the GPU holding the operands (" + std::to_string(attributes.device) + ")", uuid);
  return uuid;
}

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    // Clear the error so that it does not surface from an unrelated later call.
    cudaGetLastError();
    return 0;
  }
  return count;
}

DeviceContext query_device(int ordinal) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    cudaGetLastError();
    // Without any NVIDIA driver the runtime says "CUDA driver version is insufficient", which reads
    // as "upgrade the driver" on a machine that has no GPU at all: say what is missing instead.
    std::error_code ec;
    if (status == cudaErrorInsufficientDriver && !std::filesystem::exists("/proc/driver/nvidia/version", ec))
      throw Error(ExitCode::kNoGpu, "no NVIDIA GPU here: no NVIDIA driver is loaded (no /proc/driver/nvidia/version)");
    const std::string why =
        status != cudaSuccess ? cudaGetErrorString(status) : std::string("no devices");
    throw Error(ExitCode::kNoGpu, "no CUDA GPU found (cudaGetDeviceCount: " + why + ")");
  }
  if (ordinal < 0 || ordinal >= count) {
    throw Error(ExitCode::kNoGpu, "--device: " + std::to_string(ordinal) + " is out of range (" +
                                      std::to_string(count) + (count == 1 ? " GPU)" : " GPUs)"));
  }

  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, ordinal));
  char pci_bus_id[32] = {};
  CHECK_CUDA(cudaDeviceGetPCIBusId(pci_bus_id, sizeof pci_bus_id, ordinal));
  // CUDA 13 dropped cudaDeviceProp::clockRate; the attribute remains (kHz).
  int clock_khz = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, ordinal));

  DeviceContext context;
  context.ordinal = ordinal;
  context.gpu_name = prop.name;
  context.gpu_uuid = uuid_text(prop.uuid);
  context.pci_bus_id = pci_bus_id;
  context.sm_count = prop.multiProcessorCount;
  context.cc_major = prop.major;
  context.cc_minor = prop.minor;
  context.l2_bytes = prop.l2CacheSize;
  context.memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
  context.max_smem_per_sm = static_cast<int>(prop.sharedMemPerMultiprocessor);
  context.max_regs_per_sm = prop.regsPerMultiprocessor;
  context.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  context.max_sm_clock_mhz = clock_khz / 1000;
  // NVML knows the board's actual maximum, which can differ from the CUDA attribute.
  if (const auto nvml = NvmlDevice::open(context.pci_bus_id)) {
    const unsigned nvml_max = nvml->read().max_sm_clock_mhz;
    if (nvml_max > 0) context.max_sm_clock_mhz = static_cast<int>(nvml_max);
  }

  if (auto driver = NvmlDevice::driver_version()) {
    context.driver = *driver;
  } else {
    int driver_version = 0;
    CHECK_CUDA(cudaDriverGetVersion(&driver_version));
    context.driver = cuda_version_text(driver_version);
  }
  int runtime_version = 0;
  CHECK_CUDA(cudaRuntimeGetVersion(&runtime_version));
  context.cuda_runtime = cuda_version_text(runtime_version);
  context.cublas = cublas_version_text();
  context.cublaslt = cublaslt_version_text();
  use_device(context);
  return context;
}

void memory_info(int64_t& free_bytes, int64_t& total_bytes) {
  size_t free_now = 0, total = 0;
  CHECK_CUDA(cudaMemGetInfo(&free_now, &total));
  free_bytes = static_cast<int64_t>(free_now);
  total_bytes = static_cast<int64_t>(total);
}

}  // namespace shapescope
