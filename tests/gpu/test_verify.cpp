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

// A packed bf16 M x N x K problem and its operands on the GPU (A and B random normal), freed at the end.
struct Operands {
  Problem p;
  DeviceBuffers buffers;
  size_t c_bytes = 0;
  Operands(int64_t m, int64_t n, int64_t k) {
    p.m = m, p.n = n, p.k = k;
    p.lda = k, p.ldb = n, p.ldc = n;
    c_bytes = size_t(m * n * 2);
    CHECK_CUDA(cudaMalloc(&buffers.a, size_t(m * k * 2)));
    CHECK_CUDA(cudaMalloc(&buffers.b, size_t(k * n * 2)));
    CHECK_CUDA(cudaMalloc(&buffers.c, c_bytes));
    fill_normal(buffers.a, m * k, DType::kBf16, false, 1, nullptr);
    fill_normal(buffers.b, k * n, DType::kBf16, false, 2, nullptr);
    CHECK_CUDA(cudaDeviceSynchronize());
  }
  ~Operands() {
    cudaFree(buffers.a);
    cudaFree(buffers.b);
    cudaFree(buffers.c);
  }
};

TEST(Verify, CatchesWrongResultsAndPassesCorrectOnes) {
  SKIP_WITHOUT_GPU();
  Operands o(129, 127, 300);
  const Problem& p = o.p;
  const DeviceBuffers& buffers = o.buffers;
  const size_t c_bytes = o.c_bytes;
  {
    auto cublas = make_backend(BackendSpec(BackendKind::kCublas), buffers, 1);
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
    // NaN's sign bit is the damage's: "nan" or "-nan".
    EXPECT_NE(failed->find("first (row 128, col 5): got "), std::string::npos) << *failed;
    EXPECT_NE(failed->find("nan, want"), std::string::npos) << *failed;
  }
}

// Checks queued together are read after one synchronization, each with its own verdict: a wrong
// result between two right ones is the only one reported.
TEST(Verify, QueuedChecksKeepTheirOwnVerdicts) {
  SKIP_WITHOUT_GPU();
  Operands o(64, 96, 128);
  void* reference = nullptr;
  CHECK_CUDA(cudaMalloc(&reference, o.c_bytes));
  {
    auto cublas = make_backend(BackendSpec(BackendKind::kCublas), o.buffers, 1);
    std::string why;
    auto ref = cublas->prepare(o.p, {"default"}, why);
    auto same = cublas->prepare(o.p, {"default"}, why);
    ASSERT_EQ(ref.size(), 1u);
    DamagedCall zeros(*same.front().call, o.buffers.c, o.c_bytes, false);
    Verifier verifier(o.buffers, reference, int64_t(o.c_bytes));
    verifier.queue(*same.front().call, *ref.front().call, o.p);
    verifier.queue(zeros, *ref.front().call, o.p);
    verifier.queue(*same.front().call, *ref.front().call, o.p);
    const auto verdicts = verifier.results();
    ASSERT_EQ(verdicts.size(), 3u);
    EXPECT_FALSE(verdicts[0].has_value()) << *verdicts[0];
    ASSERT_TRUE(verdicts[1].has_value());
    EXPECT_NE(verdicts[1]->find("of 6144 elements off"), std::string::npos) << *verdicts[1];
    EXPECT_FALSE(verdicts[2].has_value()) << *verdicts[2];
  }
  cudaFree(reference);
}

TEST(Verify, ToleranceGrowsWithK) {
  EXPECT_LT(verify_tolerance(1.0, 16, DType::kBf16), verify_tolerance(1.0, 16384, DType::kBf16));
  EXPECT_NEAR(verify_tolerance(0.0, 10000, DType::kBf16), 100.0 / 64, 1e-12);
  EXPECT_NEAR(verify_tolerance(64.0, 1, DType::kBf16), 1.0 + 1.0 / 64, 1e-12);
  EXPECT_NEAR(verify_tolerance(0.0, 10000, DType::kFp32), 0.1, 1e-12);
}

}  // namespace
}  // namespace shapescope
