// The GPU: its identity and limits (CUDA runtime, cuBLAS, NVML). Plain C++ interface.
#pragma once
#include <string>

#include "core/device_context.hpp"

namespace shapescope {

// Number of CUDA devices; 0 when there is no GPU or no driver (never throws).
int device_count();
// Throws Error(ExitCode::kNoGpu) with one line when there is no GPU or the ordinal is out of range.
DeviceContext query_device(int ordinal);
// Free and total device memory in bytes (cudaMemGetInfo) of the current device.
void memory_info(int64_t& free_bytes, int64_t& total_bytes);

}  // namespace shapescope
