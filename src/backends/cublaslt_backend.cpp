#include "backends/cublaslt_backend.hpp"


#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/cuda_types.hpp"
#include "backends/lt_names.hpp"
#include "common/check.hpp"
#include "core/fp8.hpp"

namespace shapescope {
namespace {

// The descriptors of one matmul; cuBLASLt reads them at each call, so they live with the call. An
// fp8 matmul's own scales (device memory) live here too.
struct LtDescriptors {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  float* own_scales = nullptr;
  const float* scale_a = nullptr;  // our A's scales (cuBLASLt's B: row-major A is its column-major B)
  const float* scale_b = nullptr;
  LtDescriptors() = default;
  LtDescriptors(const LtDescriptors&) = delete;
  LtDescriptors& operator=(const LtDescriptors&) = delete;
  ~LtDescriptors() {
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (op) cublasLtMatmulDescDestroy(op);
    if (own_scales) cudaFree(own_scales);
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
  cfg.tile_size = lt_tile_size(cfg.tile);
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
         const DeviceBuffers& buffers, const Problem& problem)
      : handle_(handle), desc_(std::move(desc)), algo_(result.algo), config_(describe(result)),
        ptr_(ptr), buffers_(buffers), problem_(problem) {}

  std::optional<Fp8Operands> fp8_operands() const override {
    if (!desc_->scale_a) return std::nullopt;
    return Fp8Operands{problem_, ptr_.a, ptr_.b, desc_->scale_a, desc_->scale_b, ptr_.c};
  }
  void enqueue(cudaStream_t stream) override { CHECK_CUBLAS(launch(stream)); }
  // One call, its status returned: some fp8 scale modes pass the heuristic and are refused only by
  // the call itself (CUBLAS_STATUS_NOT_SUPPORTED), which prepare() tries once so that the point is a
  // skip with its reason rather than a failure in the middle of a measurement.
  cublasStatus_t launch(cudaStream_t stream) {
    const float alpha = 1.0f, beta = 0.0f;
    // Column-major C^T = B^T A^T: B's buffer is cuBLASLt's "A".
    return cublasLtMatmul(handle_, desc_->op, &alpha, ptr_.b, desc_->a, ptr_.a, desc_->b, &beta, ptr_.c, desc_->c,
                          ptr_.c, desc_->c, &algo_, buffers_.workspace, size_t(buffers_.workspace_bytes), stream);
  }
  std::optional<LtAlgoConfig> lt_config() const override { return config_; }

 private:
  cublasLtHandle_t handle_;
  std::shared_ptr<LtDescriptors> desc_;
  cublasLtMatmulAlgo_t algo_;
  LtAlgoConfig config_;
  OperandPointers ptr_;
  DeviceBuffers buffers_;
  Problem problem_;
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

cudaDataType_t fp8_type(Fp8Format format) { return format == Fp8Format::kE5m2 ? CUDA_R_8F_E5M2 : CUDA_R_8F_E4M3; }

cublasLtMatmulMatrixScale_t scale_mode(ScaleGrain grain) {
  switch (grain) {
    case ScaleGrain::kTensor: return CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
    case ScaleGrain::kRow: return CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    case ScaleGrain::kVec128: return CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
    case ScaleGrain::kBlock128: return CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
  }
  return CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
}

// Powers of two from 1/4 to 4, a different one for neighbouring entries: a product that reads a
// scale from the wrong entry comes out wrong by a factor, which the check before timing sees.
std::vector<float> test_scales(int64_t count, uint32_t salt) {
  std::vector<float> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const uint32_t h = (uint32_t(i) + salt) * 2654435761u;
    out[size_t(i)] = std::ldexp(1.0f, int((h >> 16) % 5) - 2);
  }
  return out;
}

// An fp8 GEMM's scale modes and pointers: the caller's scales, or the call's own test scales. In
// cuBLASLt's column-major view our B is its A and our A its B (backend.hpp).
constexpr int64_t kScaleAlignFloats = 64;  // 256 bytes, cudaMalloc's own alignment

void set_fp8_scales(LtDescriptors& d, const Problem& p, const float* scale_a, const float* scale_b) {
  const ScaleLayout la = scale_layout(p, CastOperand::kA), lb = scale_layout(p, CastOperand::kB);
  if (!scale_a || !scale_b) {
    // B's scales start on a 256-byte boundary after A's: cuBLASLt refuses a scale pointer that is not
    // 16-byte aligned when the matmul is called (CUBLAS_STATUS_NOT_SUPPORTED), not in its heuristic,
    // and A's count is 1 (tensor) or M (row).
    const int64_t b_at = (la.count + kScaleAlignFloats - 1) / kScaleAlignFloats * kScaleAlignFloats;
    CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&d.own_scales), sizeof(float) * size_t(b_at + lb.count)));
    const std::vector<float> a = test_scales(la.count, 1), b = test_scales(lb.count, 2);
    CHECK_CUDA(cudaMemcpy(d.own_scales, a.data(), sizeof(float) * a.size(), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(d.own_scales + b_at, b.data(), sizeof(float) * b.size(), cudaMemcpyHostToDevice));
    scale_a = d.own_scales;
    scale_b = d.own_scales + b_at;
  }
  for (const float* scales : {scale_a, scale_b})
    if (reinterpret_cast<uintptr_t>(scales) % 16 != 0)
      throw Error(ExitCode::kInternal, "an fp8 GEMM's scales must start on a 16-byte boundary (cuBLASLt refuses others)");
  d.scale_a = scale_a;
  d.scale_b = scale_b;
  set_desc(d.op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, int32_t(scale_mode(lb.grain)));
  set_desc(d.op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, int32_t(scale_mode(la.grain)));
  set_desc(d.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(scale_b));
  set_desc(d.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(scale_a));
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
  if (problem.cast != CastOperand::kNone) return std::string("a cast is no GEMM (it runs on backend cast)");
  if (auto why = grouped_unsupported(problem)) return why;
  return recipe_unsupported(problem, device.cc_major * 10 + device.cc_minor);
}

std::vector<PreparedCall> CublasLtBackend::prepare(const Problem& p,
                                                   const std::vector<std::string>& wanted,
                                                   std::string& why_missing) {
  const CudaTypes t = cuda_types(p.dtype);
  const bool fp8 = p.dtype == DType::kFp8;
  const cudaDataType_t type_a = fp8 ? fp8_type(p.recipe.a) : t.ab, type_b = fp8 ? fp8_type(p.recipe.b) : t.ab;
  const cublasOperation_t op_b = p.b_transposed() ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = p.a_transposed() ? CUBLAS_OP_T : CUBLAS_OP_N;
  auto desc = std::make_shared<LtDescriptors>();
  CHECK_CUBLAS(cublasLtMatmulDescCreate(&desc->op, t.compute, t.scale));
  set_desc(desc->op, CUBLASLT_MATMUL_DESC_TRANSA, op_b);
  set_desc(desc->op, CUBLASLT_MATMUL_DESC_TRANSB, op_a);
  // Column-major shapes as stored: B's buffer is N x K (op N) or K x N (op T), ld = ldb.
  desc->a = op_b == CUBLAS_OP_N ? make_layout(type_b, p.n, p.k, p.ldb, p.batch, p.stride_b())
                                : make_layout(type_b, p.k, p.n, p.ldb, p.batch, p.stride_b());
  desc->b = op_a == CUBLAS_OP_N ? make_layout(type_a, p.k, p.m, p.lda, p.batch, p.stride_a())
                                : make_layout(type_a, p.m, p.k, p.lda, p.batch, p.stride_a());
  if (fp8) set_fp8_scales(*desc, p, scale_a_, scale_b_);
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
  // INVALID_VALUE for an fp8 problem is a recipe (scale modes, formats) this cuBLASLt does not take.
  const bool refused_recipe = fp8 && status == CUBLAS_STATUS_INVALID_VALUE;
  if (status == CUBLAS_STATUS_NOT_SUPPORTED || refused_recipe || (status == CUBLAS_STATUS_SUCCESS && returned == 0)) {
    why_missing = fp8 ? fmt::format("cuBLASLt {} has no algorithm for fp8 recipe {} at this shape",
                                    cublasLtGetVersion(), recipe_text(p.recipe))
                      : "cuBLASLt's heuristic found no algorithm for this problem";
    return {};
  }
  CHECK_CUBLAS(status);

  std::vector<PreparedCall> calls;
  for (const auto& key : wanted) {
    const int rank = std::stoi(key.substr(1));
    if (rank < returned) {
      auto call = std::make_unique<LtCall>(handle_, desc, results[size_t(rank)], ptr, buffers_, p);
      const cublasStatus_t tried = fp8 ? call->launch(nullptr) : CUBLAS_STATUS_SUCCESS;
      if (tried == CUBLAS_STATUS_NOT_SUPPORTED || tried == CUBLAS_STATUS_INVALID_VALUE) {
        why_missing = fmt::format("cuBLASLt {} has no algorithm for fp8 recipe {} at this shape (its {} is refused "
                                  "when called: {})",
                                  cublasLtGetVersion(), recipe_text(p.recipe), key, cublasGetStatusName(tried));
        continue;
      }
      CHECK_CUBLAS(tried);
      if (fp8) CHECK_CUDA(cudaDeviceSynchronize());
      calls.push_back({key, std::move(call)});
    } else {
      why_missing = fmt::format("cuBLASLt's heuristic offered {} algorithm(s)", returned);
    }
  }
  return calls;
}

}  // namespace shapescope
