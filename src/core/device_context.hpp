// What identifies the machine a measurement was made on: part of every stored point's key.
// Plain C++ (no CUDA headers) so the store and the views can use it on machines without a GPU.
#pragma once
#include <cstdint>
#include <string>

namespace shapescope {

struct DeviceContext {
  int ordinal = 0;
  std::string gpu_name;      // "NVIDIA H100 80GB HBM3"
  std::string gpu_uuid;      // "GPU-1a2b3c4d-...."
  std::string pci_bus_id;    // "0000:18:00.0"
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  int64_t l2_bytes = 0;
  int64_t memory_bytes = 0;
  int max_smem_per_sm = 0, max_regs_per_sm = 0, max_threads_per_sm = 0;
  int max_sm_clock_mhz = 0;  // from the CUDA attribute (NVML's max where available)
  std::string driver;        // NVML's "580.159.04" where available, else the CUDA driver API version "13.0"
  std::string cuda_runtime;  // "13.0"
  std::string cublas;        // "13.1.0"
  std::string cublaslt;      // cublasLtGetVersion as "13.1.0"
};

// Two measurements the views may compare: the same GPU (by UUID) with the same driver and libraries.
inline bool same_setup(const DeviceContext& a, const DeviceContext& b) {
  return a.gpu_uuid == b.gpu_uuid && a.driver == b.driver && a.cublas == b.cublas && a.cublaslt == b.cublaslt;
}

}  // namespace shapescope
