// Checks for CUDA runtime, cuBLAS/cuBLASLt and CUPTI calls: a failed call becomes
// Error(ExitCode::kInternal) that names the call, where it was made and why it failed.
#pragma once
#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#include <string>

#include "common/error.hpp"

namespace shapescope::detail {

[[noreturn]] inline void throw_call_failed(const char* file, int line, const char* call,
                                           const std::string& why) {
  throw Error(ExitCode::kInternal,
              std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " + why);
}

inline std::string cuda_error_text(cudaError_t status) {
  // Reset the runtime's last-error slot so a later cudaGetLastError() after a kernel launch does
  // not report this, already reported, failure again (sticky errors stay regardless).
  cudaGetLastError();
  return std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")";
}

inline std::string cublas_error_text(cublasStatus_t status) {
  return std::string(cublasGetStatusName(status)) + " (" + cublasGetStatusString(status) + ")";
}

inline std::string cupti_error_text(CUptiResult status) {
  const char* name = nullptr;
  std::string text = cuptiGetResultString(status, &name) == CUPTI_SUCCESS && name != nullptr
                         ? name
                         : "CUptiResult " + std::to_string(static_cast<int>(status));
  const char* message = nullptr;
  if (cuptiGetErrorMessage(status, &message) == CUPTI_SUCCESS && message != nullptr &&
      text != message) {
    text += std::string(" (") + message + ")";
  }
  return text;
}

}  // namespace shapescope::detail

#define CHECK_CUDA(call)                                                                    \
  do {                                                                                      \
    const cudaError_t check_status_ = (call);                                               \
    if (check_status_ != cudaSuccess) {                                                     \
      ::shapescope::detail::throw_call_failed(                                              \
          __FILE__, __LINE__, #call, ::shapescope::detail::cuda_error_text(check_status_)); \
    }                                                                                       \
  } while (0)

// cuBLASLt calls return cublasStatus_t too, so this covers both libraries.
#define CHECK_CUBLAS(call)                                                                    \
  do {                                                                                        \
    const cublasStatus_t check_status_ = (call);                                              \
    if (check_status_ != CUBLAS_STATUS_SUCCESS) {                                             \
      ::shapescope::detail::throw_call_failed(                                                \
          __FILE__, __LINE__, #call, ::shapescope::detail::cublas_error_text(check_status_)); \
    }                                                                                         \
  } while (0)

#define CHECK_CUPTI(call)                                                                    \
  do {                                                                                       \
    const CUptiResult check_status_ = (call);                                                \
    if (check_status_ != CUPTI_SUCCESS) {                                                    \
      ::shapescope::detail::throw_call_failed(                                               \
          __FILE__, __LINE__, #call, ::shapescope::detail::cupti_error_text(check_status_)); \
    }                                                                                        \
  } while (0)
