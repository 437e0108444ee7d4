// The check that guards our kernels: cuBLAS against itself passes, and a call that writes a wrong
// result (zeros, or one corrupted element) is reported with the element, not accepted.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "backends/backend.hpp"
#include "common/check.hpp"
#include "gpu_test_util.hpp"
#include "measure/verify.hpp"
#include "timing/device_kernels.hpp"

namespace shapescope {
namespace {

// Runs the real cuBLAS call, then damages C: zeros everywhere, or a single element set to `byte`
// in both its bytes (0x7f: a huge bf16, 0xff: a NaN).
class DamagedCall : public GemmCall {
 public:
  DamagedCall(GemmCall& inner, void* c, size_t bytes, bool single, size_t element = 7, int byte = 0x7f)
      : inner_(inner), c_(c), bytes_(bytes), single_(single), element_(element), byte_(byte) {}
  void enqueue(cudaStream_t stream) override {
    if (single_) {
      inner_.enqueue(stream);
      CHECK_CUDA(cudaMemsetAsync(static_cast<char*>(c_) + 2 * element_, byte_, 2, stream));
    } else {
      CHECK_CUDA(cudaMemsetAsync(c_, 0, bytes_, stream));
    }
  }

 private:
  GemmCall& inner_;
  void* c_;
  size_t bytes_;
  bool single_;
  size_t element_;
  int byte_;
};

TEST(Verify, CatchesWrongResultsAndPassesCorrectOnes) {
  SKIP_WITHOUT_GPU();
  Problem p;
  p.m = 129, p.n = 127, p.k = 300;
  p.lda = p.k, p.ldb = p.n, p.ldc = p.n;
  DeviceBuffers buffers;
  const size_t a_bytes = size_t(p.m * p.k * 2), b_bytes = size_t(p.k * p.n * 2), c_bytes = size_t(p.m * p.n * 2);
  CHECK_CUDA(cudaMalloc(&buffers.a, a_bytes));
  CHECK_CUDA(cudaMalloc(&buffers.b, b_bytes));
  CHECK_CUDA(cudaMalloc(&buffers.c, c_bytes));
  fill_normal(buffers.a, int64_t(a_bytes / 2), DType::kBf16, false, 1, nullptr);
  fill_normal(buffers.b, int64_t(b_bytes / 2), DType::kBf16, false, 2, nullptr);
  CHECK_CUDA(cudaDeviceSynchronize());
  {
    auto cublas = make_backend("cublas", buffers, 1);
    std::string why;
    auto ref = cublas->prepare(p, {"default"}, why);
    auto same = cublas->prepare(p, {"default"}, why);
    ASSERT_EQ(ref.size(), 1u);
    EXPECT_FALSE(verify_against(*same.front().call, *ref.front().call, p, buffers).has_value());

    DamagedCall zeros(*same.front().call, buffers.c, c_bytes, false);
    auto failed = verify_against(zeros, *ref.front().call, p, buffers);
    ASSERT_TRUE(failed.has_value());
    EXPECT_NE(failed->find("failed verification against cuBLAS"), std::string::npos) << *failed;

    DamagedCall one(*same.front().call, buffers.c, c_bytes, true);
    failed = verify_against(one, *ref.front().call, p, buffers);
    ASSERT_TRUE(failed.has_value());
    EXPECT_NE(failed->find("1 of 16383 elements off"), std::string::npos) << *failed;
    EXPECT_NE(failed->find("first (row 0, col 7)"), std::string::npos) << *failed;

    // A NaN in the last row is caught and located (row 128 of 129, col 5: element 128 * 127 + 5).
    DamagedCall nan(*same.front().call, buffers.c, c_bytes, true, 128 * 127 + 5, 0xff);
    failed = verify_against(nan, *ref.front().call, p, buffers);
    ASSERT_TRUE(failed.has_value());
    EXPECT_NE(failed->find("1 of 16383 elements off (worst inf"), std::string::npos) << *failed;
    EXPECT_NE(failed->find("first (row 128, col 5): got nan"), std::string::npos) << *failed;
  }
  cudaFree(buffers.a);
  cudaFree(buffers.b);
  cudaFree(buffers.c);
}

// Checks queued together are read after one synchronization, each with its own verdict: a wrong
// result between two right ones is the only one reported.
TEST(Verify, QueuedChecksKeepTheirOwnVerdicts) {
  SKIP_WITHOUT_GPU();
  Problem p;
  p.m = 64, p.n = 96, p.k = 128;
  p.lda = p.k, p.ldb = p.n, p.ldc = p.n;
  DeviceBuffers buffers;
  const size_t c_bytes = size_t(p.m * p.n * 2);
  CHECK_CUDA(cudaMalloc(&buffers.a, size_t(p.m * p.k * 2)));
  CHECK_CUDA(cudaMalloc(&buffers.b, size_t(p.k * p.n * 2)));
  CHECK_CUDA(cudaMalloc(&buffers.c, c_bytes));
  void* reference = nullptr;
  CHECK_CUDA(cudaMalloc(&reference, c_bytes));
  fill_normal(buffers.a, p.m * p.k, DType::kBf16, false, 1, nullptr);
  fill_normal(buffers.b, p.k * p.n, DType::kBf16, false, 2, nullptr);
  CHECK_CUDA(cudaDeviceSynchronize());
  {
    auto cublas = make_backend("cublas", buffers, 1);
    std::string why;
    auto ref = cublas->prepare(p, {"default"}, why);
    auto same = cublas->prepare(p, {"default"}, why);
    ASSERT_EQ(ref.size(), 1u);
    DamagedCall zeros(*same.front().call, buffers.c, c_bytes, false);
    Verifier verifier(buffers, reference, int64_t(c_bytes));
    verifier.queue(*same.front().call, *ref.front().call, p);
    verifier.queue(zeros, *ref.front().call, p);
    verifier.queue(*same.front().call, *ref.front().call, p);
    const auto verdicts = verifier.results();
    ASSERT_EQ(verdicts.size(), 3u);
    EXPECT_FALSE(verdicts[0].has_value()) << *verdicts[0];
    ASSERT_TRUE(verdicts[1].has_value());
    EXPECT_NE(verdicts[1]->find("of 6144 elements off"), std::string::npos) << *verdicts[1];
    EXPECT_FALSE(verdicts[2].has_value()) << *verdicts[2];
  }
  cudaFree(reference);
  cudaFree(buffers.a);
  cudaFree(buffers.b);
  cudaFree(buffers.c);
}

TEST(Verify, ToleranceGrowsWithK) {
  EXPECT_LT(verify_tolerance(1.0, 16, DType::kBf16), verify_tolerance(1.0, 16384, DType::kBf16));
  EXPECT_NEAR(verify_tolerance(0.0, 10000, DType::kBf16), 0.1, 1e-12);
  EXPECT_NEAR(verify_tolerance(64.0, 1, DType::kBf16), 1.0 + 1e-3, 1e-12);
}

}  // namespace
}  // namespace shapescope
