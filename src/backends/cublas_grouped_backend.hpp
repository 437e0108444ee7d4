// cuBLAS's grouped GEMM, cublasGemmGroupedBatchedEx (cuBLAS 12.5 and later): the GEMMs of a grouped
// call (Problem::groups; an MoE layer's experts, each with its own M) in one library call, as
// torch._grouped_mm and grouped-GEMM MoE kernels run them. An ordinary problem runs as one group of
// `batch` GEMMs, so the same call can be compared with cublasGemmEx on equal terms.
//
// The call's arguments (cuBLAS documentation, "cublasGemmGroupedBatchedEx"): per group on the host
// transa/transb, m/n/k, lda/ldb/ldc, alpha/beta (host pointer mode only) and group_size; on the
// device one array each of A, B and C pointers, one per GEMM of every group. Types: A/B/C bf16,
// fp16 or fp32 with CUBLAS_COMPUTE_32F (fp32 scale), or fp32 with CUBLAS_COMPUTE_32F_FAST_TF32; no
// fp8. With 16-bit inputs each pointer must be aligned as the rows allow: 16 bytes when k x 2 bytes
// is a multiple of 16, 4 when it is a multiple of 4. Row-major to column-major as in backend.hpp:
// per group m = N, n = M, B's pointers first.
#pragma once
#include <cublas_v2.h>

#include "backends/backend.hpp"

namespace shapescope {

class CublasGroupedBackend : public Backend {
 public:
  explicit CublasGroupedBackend(const DeviceBuffers& buffers);
  ~CublasGroupedBackend() override;
  BackendKind kind() const override { return BackendKind::kCublasGrouped; }
  std::vector<std::string> algo_keys() const override {
    return {std::string(default_algo(BackendKind::kCublasGrouped))};
  }
  std::optional<std::string> unsupported(const Problem& problem, const DeviceContext& device) const override;
  std::vector<PreparedCall> prepare(const Problem& problem, const std::vector<std::string>& wanted,
                                    std::string& why_missing) override;

 private:
  const DeviceBuffers& buffers_;
  cublasHandle_t handle_ = nullptr;
};

}  // namespace shapescope
