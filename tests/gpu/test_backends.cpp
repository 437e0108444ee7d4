// Every backend against a CPU reference (double accumulate) on random normal data, on awkward
// shapes and on every layout: the row-major -> column-major mapping is where GEMM wrappers go wrong.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backends/backend.hpp"
#include "common/check.hpp"
#include "gpu_test_util.hpp"
#include "timing/device_kernels.hpp"

namespace shapescope {
namespace {

using testing::bf16_to_float;
using testing::fp16_to_float;

std::vector<float> download(const void* device_ptr, int64_t count, DType dtype, bool output) {
  const int bytes = output ? output_bytes(dtype) : input_bytes(dtype);
  std::vector<uint8_t> raw(size_t(count * bytes));
  CHECK_CUDA(cudaMemcpy(raw.data(), device_ptr, raw.size(), cudaMemcpyDeviceToHost));
  std::vector<float> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const uint8_t* at = raw.data() + i * bytes;
    uint16_t half;
    if (bytes == 4) std::memcpy(&out[size_t(i)], at, 4);
    else {
      std::memcpy(&half, at, 2);
      out[size_t(i)] = dtype == DType::kFp16 ? fp16_to_float(half) : bf16_to_float(half);
    }
  }
  return out;
}

struct Case {
  int64_t m, n, k;
  Layout layout;
  int64_t pad = 0, offset = 0, batch = 1;
};

Problem make_problem(const Case& c, DType dtype) {
  Problem p;
  p.m = c.m; p.n = c.n; p.k = c.k; p.batch = c.batch;
  p.dtype = dtype;
  p.layout = c.layout;
  p.lda = p.a_cols() + c.pad;
  p.ldb = p.b_cols() + c.pad;
  p.ldc = p.n + c.pad;
  p.off_a = p.off_b = c.offset;
  return p;
}

// Relative Frobenius error of the device result against a double-precision reference.
double relative_error(const Problem& p, const DeviceBuffers& buf) {
  const auto a = download(buf.a, p.a_span(), p.dtype, false);
  const auto b = download(buf.b, p.b_span(), p.dtype, false);
  const auto c = download(buf.c, p.c_span(), p.dtype, true);
  double err = 0, ref_norm = 0;
  for (int64_t bi = 0; bi < p.batch; ++bi)
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) {
        double ref = 0;
        for (int64_t kk = 0; kk < p.k; ++kk) {
          const int64_t ai = p.off_a + bi * p.stride_a() + (p.a_transposed() ? kk * p.lda + i : i * p.lda + kk);
          const int64_t bj = p.off_b + bi * p.stride_b() + (p.b_transposed() ? j * p.ldb + kk : kk * p.ldb + j);
          ref += double(a[size_t(ai)]) * double(b[size_t(bj)]);
        }
        const double got = c[size_t(p.off_c + bi * p.stride_c() + i * p.ldc + j)];
        err += (got - ref) * (got - ref);
        ref_norm += ref * ref;
      }
  return std::sqrt(err / std::max(ref_norm, 1e-30));
}

class BackendTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BackendTest, MatchesCpuReferenceOnAwkwardShapes) {
  SKIP_WITHOUT_GPU();
  const std::vector<Case> cases = {
      {1, 1, 1, Layout::kNN},        {127, 129, 65, Layout::kNN}, {129, 127, 1, Layout::kNN},
      {7, 200, 33, Layout::kNT},     {64, 48, 96, Layout::kTN},   {33, 17, 70, Layout::kTT},
      {100, 60, 40, Layout::kNN, 3, 1}, {40, 24, 56, Layout::kNT, 0, 0, 3},
      {256, 256, 512, Layout::kNN},
  };
  DeviceBuffers buf;
  const int64_t max_elems = 1 << 20;
  CHECK_CUDA(cudaMalloc(&buf.a, size_t(max_elems * 4)));
  CHECK_CUDA(cudaMalloc(&buf.b, size_t(max_elems * 4)));
  CHECK_CUDA(cudaMalloc(&buf.c, size_t(max_elems * 4)));
  buf.workspace_bytes = 32 << 20;
  CHECK_CUDA(cudaMalloc(&buf.workspace, size_t(buf.workspace_bytes)));
  auto backend = make_backend(parse_backend_spec(GetParam()), buf, 1);
  for (DType dtype : {DType::kBf16, DType::kFp16, DType::kFp32, DType::kTf32}) {
    // Tolerances: output rounding (bf16 ~ 2^-8) dominates; tf32 inputs lose 13 mantissa bits.
    const double tolerance = dtype == DType::kBf16 ? 1e-2 : dtype == DType::kFp16 ? 2e-3
                             : dtype == DType::kTf32 ? 3e-3 : 1e-5;
    for (const auto& c : cases) {
      const Problem p = make_problem(c, dtype);
      ASSERT_LE(p.a_span(), max_elems);
      fill_normal(buf.a, p.a_span(), dtype, false, 100 + c.m, nullptr);
      fill_normal(buf.b, p.b_span(), dtype, false, 200 + c.n, nullptr);
      fill_normal(buf.c, p.c_span(), dtype, true, 300, nullptr);  // poison: every element rewritten
      std::string why;
      auto calls = backend->prepare(p, backend->algo_keys(), why);
      ASSERT_EQ(calls.size(), 1u) << why;
      calls[0].call->enqueue(nullptr);
      CHECK_CUDA(cudaDeviceSynchronize());
      const double err = relative_error(p, buf);
      EXPECT_LT(err, tolerance) << GetParam() << " " << to_string(dtype) << " " << p.shape_string()
                                << " " << to_string(p.layout) << " pad " << c.pad << " offset "
                                << c.offset << " batch " << c.batch;
    }
  }
  cudaFree(buf.a); cudaFree(buf.b); cudaFree(buf.c); cudaFree(buf.workspace);
}

INSTANTIATE_TEST_SUITE_P(Backends, BackendTest, ::testing::Values("cublas", "cublaslt"));

TEST(CublasLt, ReportsItsAlgorithmConfigAndSeveralChoices) {
  SKIP_WITHOUT_GPU();
  DeviceBuffers buf;
  CHECK_CUDA(cudaMalloc(&buf.a, 2048 * 2048 * 2));
  CHECK_CUDA(cudaMalloc(&buf.b, 2048 * 2048 * 2));
  CHECK_CUDA(cudaMalloc(&buf.c, 2048 * 2048 * 2));
  buf.workspace_bytes = 32 << 20;
  CHECK_CUDA(cudaMalloc(&buf.workspace, size_t(buf.workspace_bytes)));
  auto backend = make_backend(BackendSpec(BackendKind::kCublasLt), buf, 4);
  Problem p = make_problem({2048, 2048, 2048, Layout::kNN}, DType::kBf16);
  std::string why;
  auto calls = backend->prepare(p, backend->algo_keys(), why);
  ASSERT_GE(calls.size(), 2u) << why;
  const auto cfg = calls[0].call->lt_config();
  ASSERT_TRUE(cfg.has_value());
  EXPECT_GE(cfg->algo_id, 0);
  EXPECT_GT(cfg->waves_count, 0.0f);
  EXPECT_FALSE(cfg->tile.empty());
  cudaFree(buf.a); cudaFree(buf.b); cudaFree(buf.c); cudaFree(buf.workspace);
}

}  // namespace
}  // namespace shapescope
