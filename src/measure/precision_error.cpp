// A GEMM's output in several precisions against one fp64 reference of the same inputs
// (precision_error.hpp). The napkin math of what to expect, for unit-normal inputs: rounding an
// input to a format of unit roundoff u moves each product by ~u, and the K products' errors add up
// like their values do (random signs), so the normwise relative error is ~u: fp32 6e-8 (plus
// accumulation, still ~1e-7..1e-6), tf32 and fp16 2^-11 = 4.9e-4, bf16 2^-8 = 3.9e-3, e4m3 2^-4.
#include "measure/precision_error.hpp"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "backends/backend.hpp"
#include "backends/cublas_backend.hpp"
#include "backends/cublaslt_backend.hpp"
#include "backends/fp8_cast.hpp"
#include "common/check.hpp"
#include "common/error.hpp"
#include "common/units.hpp"
#include "core/backend_kind.hpp"
#include "core/fp8.hpp"
#include "device/device.hpp"
#include "timing/device_kernels.hpp"

namespace shapescope {
namespace {

constexpr int64_t kMaxBudget = 2ll << 30;
// Fixed seeds: the same problem gets the same inputs in every run.
constexpr uint64_t kSeedA = 0x9e1a5eed0000000aull, kSeedB = 0x9e1a5eed0000000bull;

// One device allocation, freed when it goes out of scope.
class Allocation {
 public:
  explicit Allocation(int64_t bytes) { CHECK_CUDA(cudaMalloc(&ptr_, size_t(std::max<int64_t>(bytes, 1)))); }
  ~Allocation() {
    if (ptr_) cudaFree(ptr_);
  }
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;
  void* get() const { return ptr_; }
  double* f64() const { return static_cast<double*>(ptr_); }

 private:
  void* ptr_ = nullptr;
};

class Stream {
 public:
  Stream() { CHECK_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() {
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// Everything one measurement holds on the GPU: the inputs and the reference in fp64, the operands of
// the GEMM under test (4 bytes an element: room for every dtype), its workspace and the partial sums.
struct Operands {
  explicit Operands(const Problem& p)
      : a64(p.a_span() * 8), b64(p.b_span() * 8), c64(p.c_span() * 8), a(p.a_span() * 4), b(p.b_span() * 4),
        c(p.c_span() * 4), workspace(32ll << 20), partials(int64_t(kErrorBlocks * sizeof(ErrorSums))) {
    buffers.a = a.get();
    buffers.b = b.get();
    buffers.c = c.get();
    buffers.workspace = workspace.get();
    buffers.workspace_bytes = 32ll << 20;
  }
  Allocation a64, b64, c64, a, b, c, workspace, partials;
  DeviceBuffers buffers;
};

// The inputs, drawn once in the problem's own dtype (the values the program holds) and widened to
// fp64 exactly; the GEMM buffers serve as scratch for the draw. Outlier data: A's outlier channels
// scaled up, then held in the problem's dtype again.
void draw_inputs(const Problem& p, ErrorData data, Operands& o, cudaStream_t stream) {
  fill_normal(o.a.get(), p.a_span(), p.dtype, false, kSeedA, stream);
  widen_to_f64(o.a.get(), p.dtype, o.a64.f64(), p.a_span(), stream);
  if (data == ErrorData::kOutliers) {
    launch_outlier_channels(o.a64.f64(), p, kOutlierFactor, stream);
    narrow_from_f64(o.a64.f64(), p.dtype, o.a.get(), p.a_span(), stream);
    widen_to_f64(o.a.get(), p.dtype, o.a64.f64(), p.a_span(), stream);
  }
  fill_normal(o.b.get(), p.b_span(), p.dtype, false, kSeedB, stream);
  widen_to_f64(o.b.get(), p.dtype, o.b64.f64(), p.b_span(), stream);
}

// C = A @ B in fp64 with the problem's layout, leading dimensions and offsets: column-major cuBLAS
// computes C^T = B^T A^T (backends/backend.hpp), B's buffer first, m = N, n = M.
void reference_gemm(const Problem& p, Operands& o, cudaStream_t stream) {
  const std::unique_ptr<cublasContext, decltype(&cublasDestroy)> handle(make_cublas_handle(o.buffers), &cublasDestroy);
  CHECK_CUBLAS(cublasSetStream(handle.get(), stream));
  const double alpha = 1, beta = 0;
  const cublasOperation_t op_b = p.b_transposed() ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = p.a_transposed() ? CUBLAS_OP_T : CUBLAS_OP_N;
  const double* a = o.a64.f64() + p.off_a;
  const double* b = o.b64.f64() + p.off_b;
  double* c = o.c64.f64() + p.off_c;
  if (p.batch == 1) {
    CHECK_CUBLAS(cublasDgemm(handle.get(), op_b, op_a, int(p.n), int(p.m), int(p.k), &alpha, b, int(p.ldb), a,
                             int(p.lda), &beta, c, int(p.ldc)));
  } else {
    CHECK_CUBLAS(cublasDgemmStridedBatched(handle.get(), op_b, op_a, int(p.n), int(p.m), int(p.k), &alpha, b,
                                           int(p.ldb), p.stride_b(), a, int(p.lda), p.stride_a(), &beta, c, int(p.ldc),
                                           p.stride_c(), int(p.batch)));
  }
  // The handle goes at the end of this scope: its work must be done first.
  CHECK_CUDA(cudaStreamSynchronize(stream));
}

NumericalError add_up(const std::vector<ErrorSums>& partials, const Problem& q, ErrorData data) {
  NumericalError e;
  e.dtype = q.dtype;
  e.recipe = q.recipe;
  e.data = data;
  e.problem = q;
  e.elements = q.m * q.n * q.batch;
  double sum_sq_diff = 0, sum_sq_want = 0;
  for (const ErrorSums& s : partials) {
    e.max_abs = std::max(e.max_abs, s.max_abs);
    e.reference_max = std::max(e.reference_max, s.max_want);
    sum_sq_diff += s.sum_sq_diff;
    sum_sq_want += s.sum_sq_want;
    e.non_finite += int64_t(s.non_finite);
  }
  e.relative = sum_sq_want > 0 ? std::sqrt(sum_sq_diff / sum_sq_want) : 0;
  return e;
}

// C's distance from the reference, read back.
NumericalError compare_output(const Problem& q, ErrorData data, Operands& o, cudaStream_t stream) {
  auto* partials = static_cast<ErrorSums*>(o.partials.get());
  launch_error_sums(operand_pointers(q, o.buffers).c, o.c64.f64() + q.off_c, q.m, q.n, q.ldc, q.batch, q.stride_c(),
                    q.dtype, partials, stream);
  std::vector<ErrorSums> host(kErrorBlocks);
  CHECK_CUDA(cudaMemcpyAsync(host.data(), partials, host.size() * sizeof(ErrorSums), cudaMemcpyDeviceToHost, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  return add_up(host, q, data);
}

// The GEMM in a 16- or 32-bit dtype on the inputs rounded to it, compared with the reference; nullopt
// (and why) when the library cannot run it.
std::optional<NumericalError> error_in(DType dtype, const Problem& p, ErrorData data, const BackendSpec& backend,
                                       Operands& o, const DeviceContext& device, cudaStream_t stream, std::string& why) {
  Problem q = p;
  q.dtype = dtype;
  const std::unique_ptr<Backend> library = make_backend(backend, o.buffers, 1);
  if (auto no = library->unsupported(q, device)) {
    why = *no;
    return std::nullopt;
  }
  std::vector<PreparedCall> calls = library->prepare(q, {library->algo_keys().front()}, why);
  if (calls.empty()) return std::nullopt;
  narrow_from_f64(o.a64.f64(), dtype, o.a.get(), q.a_span(), stream);
  narrow_from_f64(o.b64.f64(), dtype, o.b.get(), q.b_span(), stream);
  CHECK_CUDA(cudaMemsetAsync(o.c.get(), 0, size_t(q.c_span() * output_bytes(dtype)), stream));
  calls.front().call->enqueue(stream);
  CHECK_CUDA(cudaGetLastError());
  return compare_output(q, data, o, stream);
}

// One operand quantized by the recipe's cast into `out` (K contiguous) and `scales`: its inputs in
// bf16 (the source a training step casts from), laid out as the target holds them.
void quantize(const Problem& p, const Fp8Recipe& recipe, CastOperand operand, const double* input64, void* bf16,
              Allocation& out, Allocation& scales, Allocation& amax, cudaStream_t stream) {
  const Problem c = cast_problem(p, recipe, operand);
  narrow_from_f64(input64, DType::kBf16, bf16, operand == CastOperand::kA ? p.a_span() : p.b_span(), stream);
  CastArgs args;
  args.source = static_cast<const char*>(bf16) + 2 * (operand == CastOperand::kA ? p.off_a : p.off_b);
  args.rows = cast_rows(c);
  args.k = c.k;
  args.ld_source = cast_source_ld(c);
  args.transposed = cast_transposes(c);
  args.format = cast_format(c);
  args.out = out.get();
  args.ld_out = c.k;
  args.layout = scale_layout(c, operand);
  args.scales = static_cast<float*>(scales.get());
  args.amax = static_cast<float*>(amax.get());
  enqueue_cast(args, stream);
}

// The GEMM in fp8 under `recipe`: both operands (batch 0) quantized by the recipe's casts, cuBLASLt's
// scaled GEMM on them with those scales, its C against the reference's first matrix.
std::optional<NumericalError> fp8_error(const Fp8Recipe& recipe, const Problem& p, ErrorData data, Operands& o,
                                        const DeviceContext& device, cudaStream_t stream, std::string& why) {
  Problem q = fp8_problem(p, recipe);
  q.batch = 1;
  q.ldc = p.ldc;
  q.off_c = p.off_c;
  const int64_t rows_a = q.m, rows_b = q.n;
  Allocation qa(rows_a * q.k), qb(rows_b * q.k);
  const ScaleLayout la = scale_layout(q, CastOperand::kA), lb = scale_layout(q, CastOperand::kB);
  Allocation sa(la.count * 4), sb(lb.count * 4), amax_a(std::max(rows_a, rows_b) * 4), amax_b(rows_b * 4);
  CHECK_CUDA(cudaMemsetAsync(sa.get(), 0, size_t(la.count * 4), stream));
  CHECK_CUDA(cudaMemsetAsync(sb.get(), 0, size_t(lb.count * 4), stream));
  DeviceBuffers buffers = o.buffers;
  buffers.a = qa.get();
  buffers.b = qb.get();
  CublasLtBackend library(buffers, 1);
  if (auto no = library.unsupported(q, device)) {
    why = *no;
    return std::nullopt;
  }
  library.use_scales(static_cast<const float*>(sa.get()), static_cast<const float*>(sb.get()));
  std::vector<PreparedCall> calls = library.prepare(q, {"h0"}, why);
  if (calls.empty()) return std::nullopt;
  quantize(p, recipe, CastOperand::kA, o.a64.f64(), o.a.get(), qa, sa, amax_a, stream);
  quantize(p, recipe, CastOperand::kB, o.b64.f64(), o.b.get(), qb, sb, amax_b, stream);
  CHECK_CUDA(cudaMemsetAsync(o.c.get(), 0, size_t(q.c_span() * output_bytes(q.dtype)), stream));
  calls.front().call->enqueue(stream);
  CHECK_CUDA(cudaGetLastError());
  return compare_output(q, data, o, stream);
}

}  // namespace

NumericalErrors measure_numerical_errors(const Problem& target, const std::vector<Precision>& precisions,
                                         const BackendSpec& backend, const DeviceContext& device) {
  if (target.grouped())
    throw Error(ExitCode::kInternal, "numerical error: a grouped call has no single output to compare");
  use_device(device);
  int64_t free_bytes = 0, total_bytes = 0;
  memory_info(free_bytes, total_bytes);
  const int64_t budget = std::min(free_bytes / 2, kMaxBudget);
  const Problem p = numerical_error_problem(target, budget);
  if (numerical_error_bytes(p) > budget)
    throw Error(ExitCode::kOutOfMemory,
                fmt::format("numerical error of {}: even one row and column (K = {}) need {} of GPU memory; {} is free",
                            target.shape_string(), p.k, gib(double(numerical_error_bytes(p)), 2),
                            gib(double(free_bytes), 2)));
  const Stream stream;
  Operands o(p);
  NumericalErrors out;
  std::vector<bool> refused(precisions.size(), false);
  for (ErrorData data : {ErrorData::kGaussian, ErrorData::kOutliers}) {
    draw_inputs(p, data, o, stream.get());
    reference_gemm(p, o, stream.get());
    for (size_t i = 0; i < precisions.size(); ++i) {
      if (refused[i]) continue;
      const Precision& d = precisions[i];
      std::string why;
      const std::optional<NumericalError> e =
          d.dtype == DType::kFp8 ? fp8_error(d.recipe, p, data, o, device, stream.get(), why)
                                 : error_in(d.dtype, p, data, backend, o, device, stream.get(), why);
      if (e) {
        out.errors.push_back(*e);
        continue;
      }
      refused[i] = true;
      out.skipped.push_back(
          fmt::format("{}: {}", precision_name(d), why.empty() ? "the library offers no algorithm" : why));
    }
  }
  return out;
}

}  // namespace shapescope
