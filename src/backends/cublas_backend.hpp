// cuBLAS's general entry point, as PyTorch calls it: cublasGemmEx (cublasGemmStridedBatchedEx for
// batch > 1) with CUBLAS_GEMM_DEFAULT, so cuBLAS picks the kernel.
#pragma once
#include <cublas_v2.h>

#include "backends/backend.hpp"

namespace shapescope {

// A cuBLAS handle as shapescope's backends use one: our workspace (no allocation inside a graph
// capture) and the default math mode (fp32 is fp32; TF32 only when the dtype asks for it).
cublasHandle_t make_cublas_handle(const DeviceBuffers& buffers);

class CublasBackend : public Backend {
 public:
  explicit CublasBackend(const DeviceBuffers& buffers);
  ~CublasBackend() override;
  BackendKind kind() const override { return BackendKind::kCublas; }
  std::vector<std::string> algo_keys() const override { return {std::string(default_algo(BackendKind::kCublas))}; }
  std::optional<std::string> unsupported(const Problem& problem,
                                         const DeviceContext& device) const override;
  std::vector<PreparedCall> prepare(const Problem& problem, const std::vector<std::string>& wanted,
                                    std::string& why_missing) override;

 private:
  void ensure_handle();  // the handle is made on first use, once the buffers exist
  const DeviceBuffers& buffers_;
  cublasHandle_t handle_ = nullptr;
};

}  // namespace shapescope
