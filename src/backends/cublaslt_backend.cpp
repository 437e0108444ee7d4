#include "backends/cublaslt_backend.hpp"


#include <fmt/format.h>

#include <cstring>

#include "backends/cuda_types.hpp"
#include "backends/lt_names.hpp"
#include "common/check.hpp"

namespace shapescope {
namespace {

// The descriptors of one matmul; cuBLASLt reads them at each call, so they live with the call.
struct LtDescriptors {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  LtDescriptors() = default;
  LtDescriptors(const LtDescriptors&) = delete;
  LtDescriptors& operator=(const LtDescriptors&) = delete;
  ~LtDescriptors() {
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

template <typename T>
void set_desc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, T value) {
  CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof(value)));
}
template <typename T>
void set_layout(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr, T value) {
  CHECK_CUBLAS(cublasLtMatrixLayoutSetAttribute(layout, attr, &value, sizeof(value)));
}
template <typename T>
void set_pref(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, T value) {
  CHECK_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, attr, &value, sizeof(value)));
}

// Algorithm config attributes differ in width (int32, uint32, uint16): ask the size, then read.
uint64_t algo_attribute(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  size_t size = 0;
  CHECK_CUBLAS(cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, nullptr, 0, &size));
  uint64_t value = 0;
  if (size > sizeof(value)) return 0;
  CHECK_CUBLAS(cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &value, size, &size));
  return value;
}

LtAlgoConfig describe(const cublasLtMatmulHeuristicResult_t& result) {
  const auto& algo = result.algo;
  LtAlgoConfig cfg;
  cfg.algo_id = int(int32_t(algo_attribute(algo, CUBLASLT_ALGO_CONFIG_ID)));
  cfg.tile_id = int(algo_attribute(algo, CUBLASLT_ALGO_CONFIG_TILE_ID));
  cfg.tile = lt_tile_name(cfg.tile_id);
  cfg.stages_id = int(algo_attribute(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID));
  cfg.stages = lt_stages_name(cfg.stages_id);
  cfg.splitk = int(algo_attribute(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM));
  cfg.reduction_scheme = int(algo_attribute(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME));
  cfg.reduction = lt_reduction_name(cfg.reduction_scheme);
  cfg.swizzle = int(algo_attribute(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING));
  cfg.custom_option = int(algo_attribute(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION));
  cfg.inner_shape_id = int(algo_attribute(algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID));
  cfg.cluster_shape_id = int(algo_attribute(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID));
  cfg.cluster = lt_cluster_name(cfg.cluster_shape_id);
  cfg.waves_count = result.wavesCount;
  cfg.workspace_bytes = int64_t(result.workspaceSize);
  return cfg;
}

class LtCall : public GemmCall {
 public:
  LtCall(cublasLtHandle_t handle, std::shared_ptr<LtDescriptors> desc,
         const cublasLtMatmulHeuristicResult_t& result, OperandPointers ptr,
         const DeviceBuffers& buffers)
      : handle_(handle), desc_(std::move(desc)), algo_(result.algo), config_(describe(result)),
        ptr_(ptr), buffers_(buffers) {}

  void enqueue(cudaStream_t stream) override {
    const float alpha = 1.0f, beta = 0.0f;
    // Column-major C^T = B^T A^T: B's buffer is cuBLASLt's "A".
    CHECK_CUBLAS(cublasLtMatmul(handle_, desc_->op, &alpha, ptr_.b, desc_->a, ptr_.a, desc_->b,
                                &beta, ptr_.c, desc_->c, ptr_.c, desc_->c, &algo_,
                                buffers_.workspace, size_t(buffers_.workspace_bytes), stream));
  }
  std::optional<LtAlgoConfig> lt_config() const override { return config_; }

 private:
  cublasLtHandle_t handle_;
  std::shared_ptr<LtDescriptors> desc_;
  cublasLtMatmulAlgo_t algo_;
  LtAlgoConfig config_;
  OperandPointers ptr_;
  DeviceBuffers buffers_;
};

cublasLtMatrixLayout_t make_layout(cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld,
                                   int64_t batch, int64_t stride) {
  cublasLtMatrixLayout_t layout = nullptr;
  CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&layout, type, uint64_t(rows), uint64_t(cols), ld));
  if (batch > 1) {
    set_layout(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32_t(batch));
    set_layout(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, stride);
  }
  return layout;
}

}  // namespace

CublasLtBackend::CublasLtBackend(const DeviceBuffers& buffers, int algo_count)
    : buffers_(buffers), algo_count_(algo_count) {
  CHECK_CUBLAS(cublasLtCreate(&handle_));
}

CublasLtBackend::~CublasLtBackend() {
  if (handle_) cublasLtDestroy(handle_);
}

std::vector<std::string> CublasLtBackend::algo_keys() const {
  std::vector<std::string> keys;
  for (int i = 0; i < algo_count_; ++i) keys.push_back(fmt::format("h{}", i));
  return keys;
}

std::optional<std::string> CublasLtBackend::unsupported(const Problem& problem,
                                                        const DeviceContext& device) const {
  return grouped_unsupported(problem);
}

std::vector<PreparedCall> CublasLtBackend::prepare(const Problem& p,
                                                   const std::vector<std::string>& wanted,
                                                   std::string& why_missing) {
  const CudaTypes t = cuda_types(p.dtype);
  const cublasOperation_t op_b = p.b_transposed() ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = p.a_transposed() ? CUBLAS_OP_T : CUBLAS_OP_N;
  auto desc = std::make_shared<LtDescriptors>();
  CHECK_CUBLAS(cublasLtMatmulDescCreate(&desc->op, t.compute, t.scale));
  set_desc(desc->op, CUBLASLT_MATMUL_DESC_TRANSA, op_b);
  set_desc(desc->op, CUBLASLT_MATMUL_DESC_TRANSB, op_a);
  // Column-major shapes as stored: B's buffer is N x K (op N) or K x N (op T), ld = ldb.
  desc->a = op_b == CUBLAS_OP_N ? make_layout(t.ab, p.n, p.k, p.ldb, p.batch, p.stride_b())
                                : make_layout(t.ab, p.k, p.n, p.ldb, p.batch, p.stride_b());
  desc->b = op_a == CUBLAS_OP_N ? make_layout(t.ab, p.k, p.m, p.lda, p.batch, p.stride_a())
                                : make_layout(t.ab, p.m, p.k, p.lda, p.batch, p.stride_a());
  desc->c = make_layout(t.c, p.n, p.m, p.ldc, p.batch, p.stride_c());

  const OperandPointers ptr = operand_pointers(p, buffers_);
  cublasLtMatmulPreference_t pref = nullptr;
  CHECK_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(algo_count_));
  int returned = 0;
  cublasStatus_t status;
  try {
    set_pref(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t(buffers_.workspace_bytes));
    set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, uint32_t(pointer_alignment(ptr.b)));
    set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, uint32_t(pointer_alignment(ptr.a)));
    set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, uint32_t(pointer_alignment(ptr.c)));
    set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, uint32_t(pointer_alignment(ptr.c)));
    status = cublasLtMatmulAlgoGetHeuristic(handle_, desc->op, desc->a, desc->b, desc->c, desc->c,
                                            pref, algo_count_, results.data(), &returned);
  } catch (...) {
    cublasLtMatmulPreferenceDestroy(pref);
    throw;
  }
  cublasLtMatmulPreferenceDestroy(pref);
  // NOT_SUPPORTED means no algorithm fits (e.g. an fp8 layout cuBLASLt lacks): a skip, not a crash.
  if (status == CUBLAS_STATUS_NOT_SUPPORTED || (status == CUBLAS_STATUS_SUCCESS && returned == 0)) {
    why_missing = "cuBLASLt's heuristic found no algorithm for this problem";
    return {};
  }
  CHECK_CUBLAS(status);

  std::vector<PreparedCall> calls;
  for (const auto& key : wanted) {
    const int rank = std::stoi(key.substr(1));
    if (rank < returned) {
      calls.push_back({key, std::make_unique<LtCall>(handle_, desc, results[size_t(rank)], ptr,
                                                     buffers_)});
    } else {
      why_missing = fmt::format("cuBLASLt's heuristic offered {} algorithm(s)", returned);
    }
  }
  return calls;
}

}  // namespace shapescope
