#include "backends/cublas_grouped_backend.hpp"

#include <fmt/format.h>

#include <tuple>

#include "backends/cublas_backend.hpp"
#include "backends/cuda_types.hpp"
#include "common/check.hpp"

namespace shapescope {
namespace {

// The per-group arguments on the host, in cuBLAS's column-major frame, and the per-GEMM pointers.
struct GroupArgs {
  std::vector<cublasOperation_t> op_b, op_a;  // cuBLAS's transa, transb (B is its first operand)
  std::vector<int> m, n, k, ldb, lda, ldc, size;
  std::vector<float> alpha, beta;
  std::vector<const void*> b, a;
  std::vector<void*> c;
};

void add_group(GroupArgs& g, const Problem& q, int64_t batch, const DeviceBuffers& buffers, int64_t a_at,
               int64_t b_at, int64_t c_at) {
  g.op_b.push_back(q.b_transposed() ? CUBLAS_OP_T : CUBLAS_OP_N);
  g.op_a.push_back(q.a_transposed() ? CUBLAS_OP_T : CUBLAS_OP_N);
  g.m.push_back(int(q.n));
  g.n.push_back(int(q.m));
  g.k.push_back(int(q.k));
  g.ldb.push_back(int(q.ldb));
  g.lda.push_back(int(q.lda));
  g.ldc.push_back(int(q.ldc));
  g.size.push_back(int(batch));
  g.alpha.push_back(1.0f);
  g.beta.push_back(0.0f);
  const int in = input_bytes(q.dtype), out = output_bytes(q.dtype);
  for (int64_t i = 0; i < batch; ++i) {
    g.b.push_back(static_cast<const char*>(buffers.b) + (b_at + i * q.stride_b()) * in);
    g.a.push_back(static_cast<const char*>(buffers.a) + (a_at + i * q.stride_a()) * in);
    g.c.push_back(static_cast<char*>(buffers.c) + (c_at + i * q.stride_c()) * out);
  }
}

GroupArgs group_args(const Problem& p, const DeviceBuffers& buffers) {
  GroupArgs g;
  if (!p.grouped()) {
    add_group(g, p, p.batch, buffers, p.off_a, p.off_b, p.off_c);
    return g;
  }
  for (size_t i = 0; i < p.groups.size(); ++i)
    add_group(g, p.group(i), 1, buffers, p.group_a_start(i), p.group_b_start(i), p.group_c_start(i));
  return g;
}

class GroupedCall : public GemmCall {
 public:
  GroupedCall(cublasHandle_t handle, const Problem& problem, const DeviceBuffers& buffers)
      : handle_(handle), types_(cuda_types(problem.dtype)), args_(group_args(problem, buffers)) {
    // The pointer arrays live on the device, written once here (never inside a graph capture).
    const size_t gemms = args_.a.size();
    CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&pointers_), 3 * gemms * sizeof(void*)));
    CHECK_CUDA(cudaMemcpy(pointers_, args_.b.data(), gemms * sizeof(void*), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(pointers_ + gemms, args_.a.data(), gemms * sizeof(void*), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(pointers_ + 2 * gemms, args_.c.data(), gemms * sizeof(void*), cudaMemcpyHostToDevice));
  }
  ~GroupedCall() override { cudaFree(pointers_); }
  GroupedCall(const GroupedCall&) = delete;
  GroupedCall& operator=(const GroupedCall&) = delete;

  void enqueue(cudaStream_t stream) override {
    const size_t gemms = args_.a.size();
    const GroupArgs& g = args_;
    // alpha and beta are host arrays (host pointer mode): a graph capture bakes their values in.
    CHECK_CUBLAS(cublasSetStream(handle_, stream));
    CHECK_CUBLAS(cublasGemmGroupedBatchedEx(
        handle_, g.op_b.data(), g.op_a.data(), g.m.data(), g.n.data(), g.k.data(), g.alpha.data(),
        const_cast<const void* const*>(pointers_), types_.ab, g.ldb.data(),
        const_cast<const void* const*>(pointers_ + gemms), types_.ab, g.lda.data(), g.beta.data(),
        pointers_ + 2 * gemms, types_.c, g.ldc.data(), int(g.size.size()), g.size.data(), types_.compute));
  }

 private:
  cublasHandle_t handle_;
  CudaTypes types_;
  GroupArgs args_;
  void** pointers_ = nullptr;  // B's, then A's, then C's
};

// The documented pointer rule for 16-bit inputs: a row length (K elements) that is a multiple of 16
// bytes needs 16-byte pointers, one that is a multiple of 4 needs 4-byte pointers.
std::optional<std::string> pointer_rule(const Problem& p) {
  if (input_bytes(p.dtype) != 2) return std::nullopt;
  const int64_t row = p.k * 2;
  const int64_t need = row % 16 == 0 ? 16 : row % 4 == 0 ? 4 : 1;
  for (const auto& [name, offset, bytes] : {std::tuple{"A", p.off_a, 2}, std::tuple{"B", p.off_b, 2},
                                            std::tuple{"C", p.off_c, output_bytes(p.dtype)}}) {
    if ((offset * bytes) % need != 0)
      return fmt::format("cublasGemmGroupedBatchedEx needs {}-byte aligned pointers when K x 2 bytes ({}) is a multiple "
                         "of {}; {}'s offset of {} elements is {} bytes",
                         need, row, need, name, offset, offset * bytes);
  }
  return std::nullopt;
}

}  // namespace

CublasGroupedBackend::CublasGroupedBackend(const DeviceBuffers& buffers) : buffers_(buffers) {}

CublasGroupedBackend::~CublasGroupedBackend() {
  if (handle_) cublasDestroy(handle_);
}

std::optional<std::string> CublasGroupedBackend::unsupported(const Problem& problem, const DeviceContext& device) const {
  if (problem.dtype == DType::kFp8) return std::string("cublasGemmGroupedBatchedEx has no fp8");
  return pointer_rule(problem);
}

std::vector<PreparedCall> CublasGroupedBackend::prepare(const Problem& problem, const std::vector<std::string>& wanted,
                                                        std::string& why_missing) {
  if (!handle_) handle_ = make_cublas_handle(buffers_);
  std::vector<PreparedCall> calls;
  for (const auto& key : wanted)
    if (key == default_algo(BackendKind::kCublasGrouped))
      calls.push_back({key, std::make_unique<GroupedCall>(handle_, problem, buffers_)});
  return calls;
}

}  // namespace shapescope
