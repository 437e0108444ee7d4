// Every registered kernel of kernels/ against cuBLAS, element by element, on awkward shapes (1, 7,
// 127/129, K = 1, large K, sizes that are not tile multiples), both layouts, padded leading
// dimensions, odd offsets and a batch. cuBLAS is the oracle, as in SGEMM_CUDA: it is checked
// against a CPU reference in test_backends.cpp.
//
// Tolerance, per element: |got - want| <= 1e-2 * sqrt(K) * max(1, |want|). Both sides accumulate
// in fp32 (products of bf16 are exact in fp32) and round once to bf16, whose half-ulp is 2^-9 of
// the value: that rounding dominates, and the two differ by one bf16 ulp (2^-8 ~ 4e-3 relative)
// where their fp32 sums, summed in different orders, straddle a rounding boundary. The sqrt(K)
// allows for the fp32 summation error, which grows like sqrt(K) for random data; max(1, |want|)
// keeps sums that cancel to near zero from demanding a relative precision nobody has.
// That bound is loose for large K (at K = 1000 it allows 32% relative error), so each case also
// checks the relative Frobenius error over C against 1e-2: one product dropped from every K = 1000
// sum costs 3%.
// Elements of the C buffer outside the matrix (ldc padding, before the offset, after the end) must
// keep their poison bit for bit: the kernels' stores are bounds-checked.
// A variant may refuse a shape whose leading dimensions or offsets are not multiples of 8 elements
// (04 loads 16-byte chunks): that case is skipped with its reason on stderr. Every variant must
// run the shapes whose leading dimensions and offsets are multiples of 8, which repeat the awkward
// sizes for it (ld_multiple rounds the leading dimensions up).
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "common/check.hpp"
#include "gpu_test_util.hpp"
#include "kernels/registry.hpp"
#include "timing/device_kernels.hpp"

namespace shapescope::kernels {
namespace {

using testing::CublasHandle;

using shapescope::testing::bf16_to_float;

// Device memory freed on scope exit (a failed ASSERT returns early).
class DeviceBuffer {
 public:
  explicit DeviceBuffer(int64_t bytes) { CHECK_CUDA(cudaMalloc(&ptr_, size_t(bytes))); }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }
  template <typename T>
  T* at(int64_t offset_elements) const {
    return static_cast<T*>(ptr_) + offset_elements;
  }

 private:
  void* ptr_ = nullptr;
};

std::vector<uint16_t> download(const void* device_ptr, int64_t count) {
  std::vector<uint16_t> out(static_cast<size_t>(count));
  CHECK_CUDA(
      cudaMemcpy(out.data(), device_ptr, out.size() * sizeof(uint16_t), cudaMemcpyDeviceToHost));
  return out;
}

// C = A @ B by cuBLAS, row-major through the column-major mapping of backends/backend.hpp:
// C^T = B^T A^T, so m = N, n = M, B's buffer first; nt's B (stored N x K) is read with OP_T.
void cublas_reference(cublasHandle_t handle, const Problem& p, const void* a, const void* b,
                      void* c) {
  const float alpha = 1.0f, beta = 0.0f;
  const cublasOperation_t op_b = p.b_transposed() ? CUBLAS_OP_T : CUBLAS_OP_N;
  CHECK_CUBLAS(cublasGemmStridedBatchedEx(
      handle, op_b, CUBLAS_OP_N, int(p.n), int(p.m), int(p.k), &alpha, b, CUDA_R_16BF, int(p.ldb),
      p.stride_b(), a, CUDA_R_16BF, int(p.lda), p.stride_a(), &beta, c, CUDA_R_16BF, int(p.ldc),
      p.stride_c(), int(p.batch), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

struct Shape {
  int64_t m, n, k;
  int64_t pad = 0;     // added to every leading dimension
  int64_t offset = 0;  // elements before each operand's first (odd: misaligned rows)
  int64_t batch = 1;
  int64_t ld_multiple = 1;  // leading dimensions rounded up to a multiple of this, after the pad
  int64_t c_skew = 0;       // then added to ldc and C's offset only: C misaligned, A and B not
};

Problem make_problem(const Shape& s, Layout layout) {
  const auto round_up = [&](int64_t ld) {
    return (ld + s.ld_multiple - 1) / s.ld_multiple * s.ld_multiple;
  };
  Problem p;
  p.m = s.m; p.n = s.n; p.k = s.k; p.batch = s.batch;
  p.dtype = DType::kBf16;
  p.layout = layout;
  p.lda = round_up(p.a_cols() + s.pad);
  p.ldb = round_up(p.b_cols() + s.pad);
  p.ldc = round_up(p.n + s.pad) + s.c_skew;
  p.off_a = p.off_b = s.offset;
  p.off_c = s.offset + s.c_skew;
  return p;
}

// Rows of A, B and C, and their first elements, on 16-byte boundaries (the buffers are).
bool rows_of_16_bytes(const Problem& p) {
  return p.lda % 8 == 0 && p.ldb % 8 == 0 && p.ldc % 8 == 0 && p.off_a % 8 == 0 &&
         p.off_b % 8 == 0 && p.off_c % 8 == 0;
}

std::string describe(const Variant& v, const Problem& p) {
  std::ostringstream out;
  out << v.key() << " " << to_string(p.layout) << " " << p.shape_string() << " lda " << p.lda
      << " ldb " << p.ldb << " ldc " << p.ldc << " offset " << p.off_a;
  return out.str();
}

// Compares the kernel's C buffer with cuBLAS's, both poisoned alike before the runs.
void expect_matches(const Variant& v, const Problem& p, const std::vector<uint16_t>& got,
                    const std::vector<uint16_t>& want) {
  const double scale = 1e-2 * std::sqrt(double(p.k));
  int64_t wrong = 0, clobbered = 0;
  std::ostringstream first_wrong, first_clobbered;
  double err2 = 0, ref2 = 0;
  for (int64_t i = 0; i < int64_t(got.size()); ++i) {
    const int64_t rel = i - p.off_c;
    const int64_t batch = rel >= 0 ? rel / p.stride_c() : -1;
    const int64_t row = rel >= 0 ? rel % p.stride_c() / p.ldc : -1;
    const int64_t col = rel >= 0 ? rel % p.ldc : -1;
    const bool inside = rel >= 0 && batch < p.batch && col < p.n;
    if (!inside) {
      if (got[size_t(i)] != want[size_t(i)] && clobbered++ < 5)
        first_clobbered << "\n  element " << i << " (outside C): 0x" << std::hex << got[size_t(i)]
                        << ", poison was 0x" << want[size_t(i)] << std::dec;
      continue;
    }
    const double g = bf16_to_float(got[size_t(i)]), w = bf16_to_float(want[size_t(i)]);
    err2 += (g - w) * (g - w);
    ref2 += w * w;
    if (!(std::abs(g - w) <= scale * std::max(1.0, std::abs(w))) && wrong++ < 5) {
      first_wrong << "\n  ";
      if (p.batch > 1) first_wrong << "batch " << batch << " ";
      first_wrong << "row " << row << " col " << col << ": got " << g << ", want " << w;
    }
  }
  EXPECT_EQ(wrong, 0) << describe(v, p) << ": " << wrong << " of " << p.m * p.n * p.batch
                      << " elements off by more than 1e-2 * sqrt(K) * max(1, |want|); first:"
                      << first_wrong.str();
  EXPECT_EQ(clobbered, 0) << describe(v, p) << ": " << clobbered
                          << " elements outside C were written; first:" << first_clobbered.str();
  const double frobenius = std::sqrt(err2 / std::max(ref2, 1e-30));
  EXPECT_LT(frobenius, 1e-2) << describe(v, p) << ": relative Frobenius error";
}

const Shape kShapes[] = {
    {1, 1, 1},        {7, 7, 7},          {127, 129, 65},     {129, 127, 1},
    {300, 200, 1000}, {64, 64, 4096},     {1000, 1000, 1000},
    // Leading dimensions past the row, odd offsets (no 4-byte alignment anywhere), a batch.
    {100, 60, 40, 3, 1}, {33, 17, 70, 5, 7, 3}, {130, 70, 33, 1, 0, 2},
    // The awkward sizes again with leading dimensions and offsets that are multiples of 8, for
    // kernels that load 16-byte chunks: K = 1 and K tails that end inside a chunk (65, 70), M
    // and N not tile multiples, padding, offsets and batches.
    {1, 1, 1, 0, 0, 1, 8}, {7, 7, 7, 0, 0, 1, 8}, {127, 129, 65, 0, 8, 2, 8},
    {129, 127, 1, 0, 0, 1, 8}, {257, 263, 100, 8, 16, 1, 8},
    {130, 70, 33, 0, 8, 2, 8, 1},  // C's rows and start odd: element-wise stores
    // Enough tiles (x batch) that a persistent CTA computes several: 3 x 3 x 24 tiles of
    // 128 x 256 against one CTA per SM (132 on an H200).
    {264, 520, 70, 0, 0, 24, 8},
    // Stream-K: few tiles and many K-blocks, so that tiles are split among many CTAs (one 128 x
    // 128 tile of 160 K-blocks: up to 160 CTAs on one tile), and an uneven split over several.
    {100, 120, 10200, 0, 0, 1, 8}, {300, 260, 4100, 0, 8, 1, 8},
    // Hybrid stream-K: more than two waves of tiles with a partial last one, so that whole tiles
    // follow the split ones (576 tiles of 128 x 128 against 132 or 264 CTAs; 288 of 128 x 256).
    {3072, 3072, 192, 0, 0, 1, 8},
    // Stream-K's hybrid with whole tiles after the split ones (more than 2 waves): on 132 SMs
    // 600 tiles of 128 x 128 on 264 CTAs, 360 of 128 x 256 and 256 x 128 on 132, 1944 of 64 x 64
    // on 528.
    {520, 520, 1000, 0, 0, 24, 8},
};

// (variant key, layout name): strings, so that ctest and gtest print them.
using Param = std::tuple<std::string, std::string>;

class CustomKernelTest : public ::testing::TestWithParam<Param> {};

TEST_P(CustomKernelTest, MatchesCublasElementwise) {
  SKIP_WITHOUT_GPU();
  const Variant* v = find_variant(std::get<0>(GetParam()));
  ASSERT_NE(v, nullptr);
  const Layout layout = *parse_layout(std::get<1>(GetParam()));
  int device = 0;
  CHECK_CUDA(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  const int cc = prop.major * 10 + prop.minor;
  if (const std::string why = unsupported_gpu(*v, cc); !why.empty()) GTEST_SKIP() << why;
  if (const std::string why = missing_code(*v); !why.empty()) GTEST_SKIP() << why;
  CublasHandle cublas;
  // Poisoned elements after C's end catch stores past the last row.
  const int64_t kGuard = 1024;
  int ran = 0;
  for (const Shape& s : kShapes) {
    const Problem p = make_problem(s, layout);
    if (const std::string why = unsupported(*v, p, cc); !why.empty()) {
      if (rows_of_16_bytes(p)) {
        ADD_FAILURE() << describe(*v, p) << ": refused a shape with 16-byte rows: " << why;
      } else {
        std::cerr << "skipped " << describe(*v, p) << ": " << why << "\n";
      }
      continue;
    }
    ++ran;
    DeviceBuffer a(p.a_span() * 2), b(p.b_span() * 2);
    DeviceBuffer c(p.c_span() * 2 + kGuard * 2), c_ref(p.c_span() * 2 + kGuard * 2);
    const uint64_t seed = uint64_t(p.m * 1000003 + p.n * 1009 + p.k);
    fill_normal(a.get(), p.a_span(), DType::kBf16, false, seed, nullptr);
    fill_normal(b.get(), p.b_span(), DType::kBf16, false, seed + 1, nullptr);
    fill_normal(c.get(), p.c_span() + kGuard, DType::kBf16, true, 7, nullptr);  // poison, alike
    fill_normal(c_ref.get(), p.c_span() + kGuard, DType::kBf16, true, 7, nullptr);

    // Stream-K keeps partials and flags in a workspace: poisoned, since launch() must zero the
    // flags itself; and two launches, since the second must not depend on what the first left.
    const int64_t workspace_size = workspace_bytes(*v, p);
    DeviceBuffer workspace(std::max<int64_t>(workspace_size, 256));
    CHECK_CUDA(cudaMemset(workspace.get(), 0x7f, size_t(std::max<int64_t>(workspace_size, 256))));
    for (int run = 0; run < 2; ++run)
      launch(*v, p, a.at<uint16_t>(p.off_a), b.at<uint16_t>(p.off_b), c.at<uint16_t>(p.off_c),
             nullptr, workspace.get(), workspace_size);
    cublas_reference(cublas.get(), p, a.at<uint16_t>(p.off_a), b.at<uint16_t>(p.off_b),
                     c_ref.at<uint16_t>(p.off_c));
    CHECK_CUDA(cudaDeviceSynchronize());
    expect_matches(*v, p, download(c.get(), p.c_span() + kGuard),
                   download(c_ref.get(), p.c_span() + kGuard));
  }
  // 04 runs 3 of the first 10 shapes (300x200x1000, 64x64x4096, 1000^3) and the 9 after them.
  EXPECT_GE(ran, 10) << v->key() << " ran too few shapes";
}

// The oracle at large odd K: explain's control once saw 05 disagree with cuBLAS at 8191^3 with
// 16-byte rows (lda 8192) on ~1 % of the elements, by up to 10x the verification tolerance. Which
// side is off? Both against a CPU double reference on sampled elements (row 0 first: the first bad
// elements were there), each error in bf16 steps of the reference's magnitude.
TEST(LargeOddK, KernelAndCublasAgainstACpuReference) {
  SKIP_WITHOUT_GPU();
  const Variant* v = find_variant("05_wgmma_tma:128x256:dp");
  ASSERT_NE(v, nullptr);
  int device = 0;
  CHECK_CUDA(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  const int cc = prop.major * 10 + prop.minor;
  if (const std::string why = unsupported_gpu(*v, cc); !why.empty()) GTEST_SKIP() << why;
  if (const std::string why = missing_code(*v); !why.empty()) GTEST_SKIP() << why;
  Problem p;
  p.m = p.n = p.k = 8191;
  p.lda = p.ldb = p.ldc = 8192;
  DeviceBuffer a(p.a_span() * 2), b(p.b_span() * 2), c(p.c_span() * 2), c_ref(p.c_span() * 2);
  fill_normal(a.get(), p.a_span(), DType::kBf16, false, 11, nullptr);
  fill_normal(b.get(), p.b_span(), DType::kBf16, false, 12, nullptr);
  launch(*v, p, a.at<uint16_t>(0), b.at<uint16_t>(0), c.at<uint16_t>(0), nullptr, nullptr, 0);
  CublasHandle cublas;
  cublas_reference(cublas.get(), p, a.at<uint16_t>(0), b.at<uint16_t>(0), c_ref.at<uint16_t>(0));
  CHECK_CUDA(cudaDeviceSynchronize());
  const std::vector<uint16_t> ha = download(a.get(), p.a_span()), hb = download(b.get(), p.b_span());
  const std::vector<uint16_t> got = download(c.get(), p.c_span()), want = download(c_ref.get(), p.c_span());
  double worst_ours = 0, worst_cublas = 0;
  int64_t bad_ours = 0, bad_cublas = 0, samples = 0;
  for (int64_t row : {int64_t(0), int64_t(1), int64_t(4095), int64_t(8190)}) {
    for (int64_t col = 0; col < p.n; col += 61) {
      double exact = 0;
      for (int64_t k = 0; k < p.k; ++k)
        exact += double(bf16_to_float(ha[size_t(row * p.lda + k)])) * double(bf16_to_float(hb[size_t(k * p.ldb + col)]));
      // A bf16 step at the sum's scale: sqrt(K) (unit normal data) or the value, the larger.
      const double step = std::max(std::sqrt(double(p.k)), std::abs(exact)) / 128;
      const double ours = std::abs(bf16_to_float(got[size_t(row * p.ldc + col)]) - exact) / step;
      const double theirs = std::abs(bf16_to_float(want[size_t(row * p.ldc + col)]) - exact) / step;
      worst_ours = std::max(worst_ours, ours);
      worst_cublas = std::max(worst_cublas, theirs);
      bad_ours += ours > 1;
      bad_cublas += theirs > 1;
      ++samples;
    }
  }
  std::cerr << "8191^3, lda 8192, " << samples << " sampled elements against a CPU double sum: 05 worst "
            << worst_ours << " bf16 steps (" << bad_ours << " beyond one), cuBLAS worst " << worst_cublas
            << " steps (" << bad_cublas << " beyond one)\n";
  EXPECT_EQ(bad_ours, 0) << "05 is off at K = 8191";
  EXPECT_EQ(bad_cublas, 0) << "cuBLAS is off at K = 8191";
}

// The registry's threads and smem_bytes are what the compiler made of the kernels.
TEST_P(CustomKernelTest, RegistryMatchesTheCompiledKernel) {
  SKIP_WITHOUT_GPU();
  const Variant* v = find_variant(std::get<0>(GetParam()));
  ASSERT_NE(v, nullptr);
  const KernelAttributes attr = kernel_attributes(*v, *parse_layout(std::get<1>(GetParam())));
  EXPECT_EQ(attr.static_smem_bytes, v->smem_bytes) << v->key();
  EXPECT_EQ(attr.dynamic_smem_bytes, v->dynamic_smem_bytes) << v->key();
  EXPECT_GE(attr.max_threads_per_block, v->threads) << v->key() << " cannot launch its own CTA";
  std::cerr << v->key() << " " << std::get<1>(GetParam()) << ": "
            << attr.registers_per_thread << " registers/thread, " << attr.static_smem_bytes
            << " B static smem, " << attr.dynamic_smem_bytes << " B dynamic smem, "
            << attr.local_bytes_per_thread << " B local memory/thread\n";
}

std::vector<std::string> variant_keys() {
  std::vector<std::string> keys;
  // The grouped schedule runs grouped calls only: test_grouped_kernel.cpp checks it.
  for (const Variant& v : registry())
    if (v.schedule != Schedule::kGrouped) keys.push_back(v.key());
  return keys;
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  std::string name = std::get<0>(info.param) + "_" + std::get<1>(info.param);
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Registry, CustomKernelTest,
                         ::testing::Combine(::testing::ValuesIn(variant_keys()),
                                            ::testing::Values("nn", "nt")),
                         param_name);

}  // namespace
}  // namespace shapescope::kernels
