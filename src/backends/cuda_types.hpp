// How shapescope's dtypes map onto cuBLAS types. fp16/bf16 accumulate in fp32 (as PyTorch does);
// fp32 uses plain fp32 math (no TF32); tf32 asks for TF32 tensor cores; fp8 (e4m3) writes bf16.
#pragma once
#include <cublas_api.h>
#include <library_types.h>

#include <optional>
#include <string>

#include "core/device_context.hpp"
#include "core/problem.hpp"

namespace shapescope {

struct CudaTypes {
  cudaDataType_t ab;    // A and B
  cudaDataType_t c;     // C (and D)
  cublasComputeType_t compute;
  cudaDataType_t scale;  // alpha, beta
};

inline CudaTypes cuda_types(DType dtype) {
  switch (dtype) {
    case DType::kBf16: return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case DType::kFp16: return {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case DType::kFp32: return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case DType::kTf32: return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F};
    case DType::kFp8: return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F};
  }
  return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F};
}

// Why this GPU cannot run the dtype, or nullopt if it can.
std::optional<std::string> dtype_unsupported(DType dtype, const DeviceContext& device);

}  // namespace shapescope
