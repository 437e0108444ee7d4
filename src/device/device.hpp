// The GPU: its identity and limits (CUDA runtime, cuBLAS, NVML). Plain C++ interface.
#pragma once
#include <string>

#include "core/device_context.hpp"

namespace shapescope {

// Number of CUDA devices; 0 when there is no GPU or no driver (never throws).
int device_count();
// Throws Error(ExitCode::kNoGpu) with one line when there is no GPU or the ordinal is out of range.
// The GPU described becomes the calling thread's current device (use_device).
DeviceContext query_device(int ordinal);

// Makes `device` the calling thread's current CUDA device (cudaSetDevice: describing a GPU does not
// move work there) and checks that it is the GPU described: the current device's UUID and NVML's
// (found by PCI bus id, never by index: NVML's order may differ from CUDA's, and
// CUDA_VISIBLE_DEVICES renumbers CUDA's) equal device.gpu_uuid. Error(kInternal) naming both when not.
// Every thread that touches CUDA calls it before its first CUDA call.
void use_device(const DeviceContext& device);
// The UUID of the GPU that holds a device allocation (cudaPointerGetAttributes); Error(kInternal)
// when it is not device.gpu_uuid.
std::string check_allocation(const void* ptr, const DeviceContext& device);

// Free and total device memory in bytes (cudaMemGetInfo) of the current device.
void memory_info(int64_t& free_bytes, int64_t& total_bytes);

}  // namespace shapescope
