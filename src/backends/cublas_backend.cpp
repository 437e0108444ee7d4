#include "backends/cublas_backend.hpp"

#include <fmt/format.h>

#include "backends/cuda_types.hpp"
#include "common/check.hpp"

namespace shapescope {
namespace {

class CublasCall : public GemmCall {
 public:
  CublasCall(cublasHandle_t handle, const Problem& problem, const DeviceBuffers& buffers)
      : handle_(handle), p_(problem), ptr_(operand_pointers(problem, buffers)) {}

  void enqueue(cudaStream_t stream) override {
    // alpha/beta live on the host: a graph capture bakes their values in, which is what we want.
    const float alpha = 1.0f, beta = 0.0f;
    const CudaTypes t = cuda_types(p_.dtype);
    // C^T = B^T A^T in column-major (see backend.hpp): B's buffer first, m = N, n = M.
    const cublasOperation_t op_b = p_.b_transposed() ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_a = p_.a_transposed() ? CUBLAS_OP_T : CUBLAS_OP_N;
    CHECK_CUBLAS(cublasSetStream(handle_, stream));
    if (p_.batch == 1) {
      CHECK_CUBLAS(cublasGemmEx(handle_, op_b, op_a, int(p_.n), int(p_.m), int(p_.k), &alpha,
                                ptr_.b, t.ab, int(p_.ldb), ptr_.a, t.ab, int(p_.lda), &beta,
                                ptr_.c, t.c, int(p_.ldc), t.compute, CUBLAS_GEMM_DEFAULT));
    } else {
      CHECK_CUBLAS(cublasGemmStridedBatchedEx(
          handle_, op_b, op_a, int(p_.n), int(p_.m), int(p_.k), &alpha, ptr_.b, t.ab,
          int(p_.ldb), p_.stride_b(), ptr_.a, t.ab, int(p_.lda), p_.stride_a(), &beta, ptr_.c,
          t.c, int(p_.ldc), p_.stride_c(), int(p_.batch), t.compute, CUBLAS_GEMM_DEFAULT));
    }
  }

 private:
  cublasHandle_t handle_;
  Problem p_;
  OperandPointers ptr_;
};

}  // namespace

cublasHandle_t make_cublas_handle(const DeviceBuffers& buffers) {
  cublasHandle_t handle = nullptr;
  CHECK_CUBLAS(cublasCreate(&handle));
  // A workspace of our own keeps cuBLAS from allocating inside a graph capture.
  CHECK_CUBLAS(cublasSetWorkspace(handle, buffers.workspace, size_t(buffers.workspace_bytes)));
  // fp32 means fp32: TF32 only when the user asks for --dtype tf32.
  CHECK_CUBLAS(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
  return handle;
}

CublasBackend::CublasBackend(const DeviceBuffers& buffers) : buffers_(buffers) {}

void CublasBackend::ensure_handle() {
  if (!handle_) handle_ = make_cublas_handle(buffers_);
}

CublasBackend::~CublasBackend() {
  if (handle_) cublasDestroy(handle_);
}

std::optional<std::string> CublasBackend::unsupported(const Problem& problem,
                                                      const DeviceContext& device) const {
  if (problem.dtype == DType::kFp8)
    return std::string("cublasGemmEx has no fp8; use --backend cublaslt");
  return grouped_unsupported(problem);
}

std::vector<PreparedCall> CublasBackend::prepare(const Problem& problem,
                                                 const std::vector<std::string>& wanted,
                                                 std::string& why_missing) {
  ensure_handle();
  std::vector<PreparedCall> calls;
  for (const auto& key : wanted)
    if (key == default_algo(BackendKind::kCublas))
      calls.push_back({key, std::make_unique<CublasCall>(handle_, problem, buffers_)});
  return calls;
}

}  // namespace shapescope
