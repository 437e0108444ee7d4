// The numerical error of a GEMM in each precision against an fp64 reference of the same inputs
// (measure/precision_error.hpp). The bounds are the rounding arithmetic of each format for
// unit-normal inputs (precision_error.cpp's header): fp32 near 1e-7, tf32 and fp16 near 5e-4, bf16
// near 4e-3, e4m3 near 4e-2; a comparison that read the wrong elements would give ~1.4, one of C
// with itself 0.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <vector>

#include "device/device.hpp"
#include "gpu_test_util.hpp"
#include "measure/precision_error.hpp"
#include "timing/device_kernels.hpp"

namespace shapescope {
namespace {

Problem packed(int64_t m, int64_t n, int64_t k, DType dtype, Layout layout) {
  Problem p;
  p.m = m, p.n = n, p.k = k;
  p.dtype = dtype;
  p.layout = layout;
  p.lda = p.a_cols();
  p.ldb = p.b_cols();
  p.ldc = n;
  return p;
}

// The errors on unit-normal inputs, by dtype (the outlier-channel ones are tests/gpu/test_fp8.cpp's).
std::map<DType, NumericalError> by_dtype(const NumericalErrors& got) {
  std::map<DType, NumericalError> out;
  for (const NumericalError& e : got.errors)
    if (e.data == ErrorData::kGaussian) out[e.dtype] = e;
  return out;
}

TEST(NumericalError, Bf16IsOffMoreThanTf32AndFp32IsTiny) {
  SKIP_WITHOUT_GPU();
  const DeviceContext device = query_device(0);
  if (device.cc_major < 8) GTEST_SKIP() << "tf32 and bf16 need compute capability 8.0; " << device.gpu_name << " is "
                                        << device.cc_major << "." << device.cc_minor;
  // Sizes that are no tile multiple, K long enough for accumulation to matter.
  const Problem p = packed(512, 384, 1000, DType::kFp32, Layout::kNN);
  const NumericalErrors got =
      measure_numerical_errors(p, {DType::kFp32, DType::kTf32, DType::kBf16, DType::kFp16}, BackendSpec(BackendKind::kCublas), device);
  ASSERT_TRUE(got.skipped.empty()) << got.skipped.front();
  const auto e = by_dtype(got);
  ASSERT_EQ(e.size(), 4u);
  for (const auto& [dtype, x] : e) {
    // The whole problem, in its own dtype (the leading dimensions are in elements, the same for all).
    Problem in_dtype = p;
    in_dtype.dtype = dtype;
    EXPECT_TRUE(x.problem == in_dtype) << to_string(dtype) << ": measured at " << x.problem.shape_string() << " "
                                       << to_string(x.problem.dtype);
    EXPECT_EQ(x.elements, 512 * 384);
    EXPECT_EQ(x.non_finite, 0);
    // |C| ~ sqrt(K) = 32 per element; the largest of 196608 lies some 4-5 of those out.
    EXPECT_GT(x.reference_max, 60.0) << to_string(dtype);
    EXPECT_LT(x.reference_max, 300.0) << to_string(dtype);
  }
  const double fp32 = e.at(DType::kFp32).relative, tf32 = e.at(DType::kTf32).relative;
  const double bf16 = e.at(DType::kBf16).relative, fp16 = e.at(DType::kFp16).relative;
  EXPECT_GT(fp32, 0.0);  // fp32 sums round too: an exact zero would mean C was compared with itself
  EXPECT_LT(fp32, 1e-5);
  EXPECT_GT(tf32, 1e-4);
  EXPECT_LT(tf32, 2e-3);
  EXPECT_GT(fp16, 1e-4);
  EXPECT_LT(fp16, 2e-3);
  EXPECT_GT(bf16, 1e-3);
  EXPECT_LT(bf16, 1.5e-2);
  EXPECT_GT(bf16, 3 * tf32);
  EXPECT_GT(tf32, 10 * fp32);
  EXPECT_GT(e.at(DType::kBf16).max_abs, e.at(DType::kTf32).max_abs);
  EXPECT_GT(e.at(DType::kTf32).max_abs, e.at(DType::kFp32).max_abs);
}

// Transposed, padded, offset and batched operands: the reference reads the same elements as the
// GEMM under test, or fp32 would be off by ~1.4 instead of ~1e-7.
TEST(NumericalError, TheReferenceFollowsLayoutStridesOffsetsAndBatches) {
  SKIP_WITHOUT_GPU();
  const DeviceContext device = query_device(0);
  for (Layout layout : {Layout::kTN, Layout::kNT, Layout::kTT}) {
    Problem p = packed(129, 127, 257, DType::kFp32, layout);
    p.lda += 3;
    p.ldb += 5;
    p.ldc += 2;
    p.off_a = p.off_b = 1;
    p.batch = 3;
    const NumericalErrors got = measure_numerical_errors(p, {DType::kFp32, DType::kBf16}, BackendSpec(BackendKind::kCublas), device);
    ASSERT_TRUE(got.skipped.empty()) << got.skipped.front();
    const auto e = by_dtype(got);
    EXPECT_EQ(e.at(DType::kFp32).elements, 129 * 127 * 3);
    EXPECT_GT(e.at(DType::kFp32).relative, 0.0) << to_string(layout);
    EXPECT_LT(e.at(DType::kFp32).relative, 1e-5) << to_string(layout);
    EXPECT_GT(e.at(DType::kBf16).relative, 1e-3) << to_string(layout);
    EXPECT_LT(e.at(DType::kBf16).relative, 1.5e-2) << to_string(layout);
  }
}

// A bf16 GEMM's inputs are bf16 already: only the sums and the output round (~1e-3); fp8's inputs
// (quantized per tensor by its casts) lose all but 3 mantissa bits.
TEST(NumericalError, Fp8OfABf16Gemm) {
  SKIP_WITHOUT_GPU();
  const DeviceContext device = query_device(0);
  if (device.cc_major * 10 + device.cc_minor < 89)
    GTEST_SKIP() << "fp8 needs compute capability 8.9; " << device.gpu_name << " is " << device.cc_major << "."
                 << device.cc_minor;
  const Problem p = packed(256, 512, 4096, DType::kBf16, Layout::kNT);
  const NumericalErrors got = measure_numerical_errors(p, {DType::kBf16, DType::kFp8}, BackendSpec(BackendKind::kCublas), device);
  ASSERT_TRUE(got.skipped.empty()) << got.skipped.front();
  const auto e = by_dtype(got);
  const double bf16 = e.at(DType::kBf16).relative, fp8 = e.at(DType::kFp8).relative;
  EXPECT_GT(bf16, 1e-4);
  EXPECT_LT(bf16, 4e-3);
  EXPECT_GT(fp8, 1e-2);
  EXPECT_LT(fp8, 1.5e-1);
  EXPECT_GT(fp8, 10 * bf16);
}

// A request that mixes input types shares one buffer: every dtype must read it as finite numbers
// of a GEMM's usual scale, never NaN or infinite (an fp8 NaN in a paired pass would time a GEMM on
// NaNs against one on numbers).
TEST(FillForEveryDtype, EachDtypeReadsFiniteNumbers) {
  SKIP_WITHOUT_GPU();
  const int64_t bytes = (1 << 20) + 1;  // odd: the last byte is an fp8 buffer's
  void* data = nullptr;
  CHECK_CUDA(cudaMalloc(&data, size_t(bytes)));
  fill_for_every_dtype(data, bytes, 7, nullptr);
  std::vector<uint8_t> host(static_cast<size_t>(bytes));
  CHECK_CUDA(cudaMemcpy(host.data(), data, host.size(), cudaMemcpyDeviceToHost));
  cudaFree(data);
  double sum = 0, sum_sq = 0;
  size_t zeros = 0;
  const size_t words = host.size() / 2;
  for (size_t i = 0; i < words; ++i) {
    uint16_t w;
    std::memcpy(&w, &host[2 * i], 2);
    const float bf16 = testing::bf16_to_float(w), fp16 = testing::fp16_to_float(w);
    ASSERT_TRUE(std::isfinite(bf16)) << i;
    // Box-Muller gives an exact 0 where its cosine does (one draw in 2^23): as rare here as in fill_normal.
    if (bf16 == 0) {
      ++zeros;
      continue;
    }
    ASSERT_TRUE(std::isfinite(fp16) && std::fabs(fp16) >= 0.125f && std::fabs(fp16) < 8) << i << ": " << fp16;
    sum += bf16;
    sum_sq += double(bf16) * bf16;
  }
  EXPECT_LE(zeros, 4u);
  // bf16 reads a standard normal sample.
  EXPECT_NEAR(sum / double(words), 0.0, 0.01);
  EXPECT_NEAR(sum_sq / double(words), 1.0, 0.02);
  for (size_t i = 0; i + 4 <= host.size(); i += 4) {
    float fp32;
    std::memcpy(&fp32, &host[i], 4);
    ASSERT_TRUE(std::isfinite(fp32) && std::fabs(fp32) < 16) << i << ": " << fp32;
  }
  // e4m3's NaNs are 0x7f and 0xff; nothing else of it is infinite. e5m2's infinities and NaNs are
  // s.11111.xx (a gradient's format: explain's precision controls of an input or weight gradient).
  for (size_t i = 0; i < host.size(); ++i) {
    ASSERT_TRUE((host[i] & 0x7f) != 0x7f) << i;
    ASSERT_TRUE((host[i] & 0x7c) != 0x7c) << i;
  }
}

}  // namespace
}  // namespace shapescope
