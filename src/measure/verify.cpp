#include "measure/verify.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/check.hpp"
#include "timing/device_kernels.hpp"

namespace shapescope {

namespace {

constexpr size_t kBlock = 1024;  // verdicts per pinned block

cudaStream_t as_stream(void* stream) { return static_cast<cudaStream_t>(stream); }

// The relative and absolute parts of verify_tolerance(), for the comparison kernel.
double relative_tolerance(DType dtype) { return output_bytes(dtype) == 4 ? 1e-3 : 1.0 / 64; }  // two bf16 ulps
// Two bf16 steps (2^-7 each) at the sums' own scale, sqrt(K) for unit-normal operands: a library
// that splits K keeps its partial sums in the output type and rounds each (measured on an H100 at
// 8191^3: cuBLAS 0.84 and our 05 0.46 of a step from a double sum, yet 10x apart under a tolerance of
// 1e-3 sqrt(K)); a dropped K-block of 64 still costs ~8, far above it. fp32 outputs keep 1e-3.
double absolute_tolerance(int64_t k, DType dtype) {
  const double scale = std::sqrt(double(std::max<int64_t>(k, 1)));
  return (output_bytes(dtype) == 4 ? 1e-3 : 2.0 / 128) * scale;
}

// The C a check compares, as one matrix: a single GEMM's (batch 0); a grouped call's every group
// (one C buffer, each group's C after the previous one's), as the rows of one matrix where the groups
// share N and ldc and their starts need no rounding (ldc x bytes a multiple of 16: every group our
// grouped kernel runs), else as the buffer's whole span in one row (the padding between rows and
// groups is written by neither call, so it matches too). k: the largest, for the tolerance.
struct CheckedC {
  int64_t rows = 0, cols = 0, ld = 0, k = 0;
};

CheckedC checked_c(const Problem& p) {
  if (!p.grouped()) return {p.m, p.n, p.ldc, p.k};
  CheckedC c{0, p.n, p.ldc, 0};
  bool stacked = (p.ldc * output_bytes(p.dtype)) % 16 == 0;
  for (const GroupShape& g : p.groups) {
    c.rows += g.m;
    c.k = std::max(c.k, g.k);
    stacked = stacked && g.n == p.n && g.ldc == p.ldc;
  }
  if (!stacked) return {1, p.c_span(), p.c_span(), c.k};
  return c;
}

std::optional<std::string> fp8_verdict_text(const CompareResult& r, const Problem& p) {
  if (r.bad == 0) return std::nullopt;
  const uint64_t row = r.first / uint64_t(p.n), col = r.first % uint64_t(p.n);
  const int64_t checked = std::min(p.m, kFp8CheckedLines) * p.n + std::min(p.n, kFp8CheckedLines) * p.m;
  return fmt::format("failed verification against the product of its dequantized operands (recipe {}): {} of {} "
                     "checked elements off (worst {:.3g}x the tolerance); first (row {}, col {}): got {:.4g}, want {:.4g}",
                     recipe_text(p.recipe), r.bad, checked, r.worst, row, col, r.got, r.want);
}

std::optional<std::string> verdict_text(const CompareResult& r, const Problem& p) {
  if (r.bad == 0) return std::nullopt;
  const CheckedC checked = checked_c(p);
  const uint64_t row = r.first / uint64_t(checked.cols), col = r.first % uint64_t(checked.cols);
  std::string where = fmt::format("row {}, col {}", row, col);
  if (p.grouped() && checked.rows > 1) {
    size_t g = 0;
    for (uint64_t first = 0; g + 1 < p.groups.size() && row >= first + uint64_t(p.groups[g].m); ++g)
      first += uint64_t(p.groups[g].m);
    where = fmt::format("row {} of all groups' (group {}), col {}", row, g, col);
  } else if (p.grouped()) {
    where = fmt::format("element {} of C's span", col);
  }
  return fmt::format("failed verification against cuBLAS: {} of {} elements off (worst {:.3g}x the tolerance); "
                     "first ({}): got {:.4g}, want {:.4g}",
                     r.bad, checked.rows * checked.cols, r.worst, where, r.got, r.want);
}

}  // namespace

double verify_tolerance(double want, int64_t k, DType dtype) {
  return relative_tolerance(dtype) * std::fabs(want) + absolute_tolerance(k, dtype);
}

int64_t reference_bytes(const Problem& p) {
  const CheckedC c = checked_c(p);
  return c.rows * c.cols * output_bytes(p.dtype);
}

Verifier::Verifier(const DeviceBuffers& buffers, void* reference, int64_t reference_capacity)
    : buffers_(buffers), reference_(reference), capacity_(reference_capacity) {
  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  stream_ = stream;
}

Verifier::~Verifier() {
  if (stream_) {
    cudaStreamSynchronize(as_stream(stream_));
    cudaStreamDestroy(as_stream(stream_));
  }
  for (void* block : host_blocks_) cudaFreeHost(block);
  for (void* block : device_blocks_) cudaFree(block);
}

size_t Verifier::queue(GemmCall& call, GemmCall& reference, const Problem& p) {
  if (reference_bytes(p) > capacity_)
    throw Error(ExitCode::kInternal, fmt::format("verify: the reference copy of {} needs {} B, the buffer holds {} B",
                                                 p.shape_string(), reference_bytes(p), capacity_));
  const size_t index = checked_.size();
  if (index % kBlock == 0) {
    void* host = nullptr;
    void* device = nullptr;
    CHECK_CUDA(cudaMallocHost(&host, kBlock * sizeof(CompareResult)));
    host_blocks_.push_back(host);
    CHECK_CUDA(cudaMalloc(&device, kBlock * sizeof(CompareResult)));
    device_blocks_.push_back(device);
  }
  auto* verdict = static_cast<CompareResult*>(host_blocks_.back()) + index % kBlock;
  auto* device_verdict = static_cast<CompareResult*>(device_blocks_.back()) + index % kBlock;
  *verdict = CompareResult{};
  const cudaStream_t stream = as_stream(stream_);
  const int bytes = output_bytes(p.dtype);
  void* c = operand_pointers(p, buffers_).c;
  const CheckedC checked = checked_c(p);
  reference.enqueue(stream);
  CHECK_CUDA(cudaMemcpy2DAsync(reference_, size_t(checked.cols) * bytes, c, size_t(checked.ld) * bytes,
                               size_t(checked.cols) * bytes, size_t(checked.rows), cudaMemcpyDeviceToDevice, stream));
  call.enqueue(stream);
  // The verdict starts as CompareResult{} (copied from the pinned slot, which the result later
  // overwrites: both copies are ordered on the stream).
  CHECK_CUDA(cudaMemcpyAsync(device_verdict, verdict, sizeof(CompareResult), cudaMemcpyHostToDevice, stream));
  launch_compare(c, checked.ld, reference_, checked.cols, checked.rows, checked.cols, p.dtype, relative_tolerance(p.dtype),
                 absolute_tolerance(checked.k, p.dtype), device_verdict, stream);
  CHECK_CUDA(cudaMemcpyAsync(verdict, device_verdict, sizeof(CompareResult), cudaMemcpyDeviceToHost, stream));
  checked_.push_back(p);
  fp8_.push_back(false);
  return index;
}

size_t Verifier::queue_fp8(GemmCall& call, const Fp8Operands& o) {
  const size_t index = checked_.size();
  if (index % kBlock == 0) {
    void* host = nullptr;
    void* device = nullptr;
    CHECK_CUDA(cudaMallocHost(&host, kBlock * sizeof(CompareResult)));
    host_blocks_.push_back(host);
    CHECK_CUDA(cudaMalloc(&device, kBlock * sizeof(CompareResult)));
    device_blocks_.push_back(device);
  }
  auto* verdict = static_cast<CompareResult*>(host_blocks_.back()) + index % kBlock;
  auto* device_verdict = static_cast<CompareResult*>(device_blocks_.back()) + index % kBlock;
  *verdict = CompareResult{};
  const cudaStream_t stream = as_stream(stream_);
  const Problem& p = o.problem;
  call.enqueue(stream);
  CHECK_CUDA(cudaMemcpyAsync(device_verdict, verdict, sizeof(CompareResult), cudaMemcpyHostToDevice, stream));
  Fp8Check check;
  check.a = o.a;
  check.b = o.b;
  check.lda = p.lda;
  check.ldb = p.ldb;
  check.format_a = p.recipe.a;
  check.format_b = p.recipe.b;
  check.scale_a = o.scale_a;
  check.scale_b = o.scale_b;
  check.layout_a = scale_layout(p, CastOperand::kA);
  check.layout_b = scale_layout(p, CastOperand::kB);
  check.c = o.c;
  check.ldc = p.ldc;
  check.m = p.m;
  check.n = p.n;
  check.k = p.k;
  launch_fp8_check(check, kFp8WantRelative, kFp8SumRelative, device_verdict, stream);
  CHECK_CUDA(cudaMemcpyAsync(verdict, device_verdict, sizeof(CompareResult), cudaMemcpyDeviceToHost, stream));
  checked_.push_back(p);
  fp8_.push_back(true);
  return index;
}

std::vector<std::optional<std::string>> Verifier::results() {
  CHECK_CUDA(cudaStreamSynchronize(as_stream(stream_)));
  std::vector<std::optional<std::string>> out;
  for (size_t i = 0; i < checked_.size(); ++i) {
    const auto* verdict = static_cast<const CompareResult*>(host_blocks_[i / kBlock]) + i % kBlock;
    out.push_back(fp8_[i] ? fp8_verdict_text(*verdict, checked_[i]) : verdict_text(*verdict, checked_[i]));
  }
  return out;
}

std::optional<std::string> verify_against(GemmCall& call, GemmCall& reference, const Problem& problem,
                                          const DeviceBuffers& buffers) {
  void* copy = nullptr;
  CHECK_CUDA(cudaMalloc(&copy, size_t(std::max<int64_t>(reference_bytes(problem), 1))));
  try {
    std::optional<std::string> verdict;
    {
      Verifier verifier(buffers, copy, reference_bytes(problem));
      verifier.queue(call, reference, problem);
      verdict = verifier.results().front();
    }
    cudaFree(copy);
    return verdict;
  } catch (...) {
    cudaDeviceSynchronize();
    cudaFree(copy);
    throw;
  }
}

}  // namespace shapescope
