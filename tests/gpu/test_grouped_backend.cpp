// The grouped backend (cublasGemmGroupedBatchedEx) against cublasGemmEx run group by group on the
// same operands: every group's C must agree within verify_tolerance, for every dtype the call takes
// and the layouts of an MoE layer's three passes (forward nt with M per expert, input gradient nn,
// weight gradient tn with K per expert), awkward sizes included.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <vector>

#include "backends/backend.hpp"
#include "common/check.hpp"
#include "core/backend_kind.hpp"
#include "gpu_test_util.hpp"
#include "measure/measure.hpp"
#include "measure/verify.hpp"
#include "model/workload.hpp"
#include "timing/device_kernels.hpp"

namespace shapescope {
namespace {

Problem packed(int64_t m, int64_t n, int64_t k, Layout layout, DType dtype) {
  return packed_problem(m, n, k, layout, dtype);
}

// Runs the grouped call, then each group with cuBLAS on the same operands, and compares C group by group.
void expect_groups_match(const Problem& p) {
  testing::FilledBuffers memory({p}, 11);
  auto grouped = make_backend(BackendSpec(BackendKind::kCublasGrouped), memory.buf, 1);
  auto cublas = make_backend(BackendSpec(BackendKind::kCublas), memory.buf, 1);
  std::string why;
  auto calls = grouped->prepare(p, grouped->algo_keys(), why);
  ASSERT_EQ(calls.size(), 1u) << why;
  // One GEMM per group; an ordinary problem's batch entries are its GEMMs.
  const size_t gemms = p.grouped() ? p.groups.size() : size_t(p.batch);
  for (size_t g = 0; g < gemms; ++g) {
    Problem q = p;
    if (p.grouped()) {
      q = p.group(g);
      q.off_a = p.group_a_start(g);
      q.off_b = p.group_b_start(g);
      q.off_c = p.group_c_start(g);
    } else {
      q.batch = 1;
      q.off_a += int64_t(g) * p.stride_a();
      q.off_b += int64_t(g) * p.stride_b();
      q.off_c += int64_t(g) * p.stride_c();
    }
    auto reference = cublas->prepare(q, cublas->algo_keys(), why);
    ASSERT_EQ(reference.size(), 1u) << why;
    // verify_against runs its `reference` (the grouped call) first, then `call` (cuBLAS, this group).
    const std::optional<std::string> failed = verify_against(*reference[0].call, *calls[0].call, q, memory.buf);
    EXPECT_FALSE(failed) << p.shape_string() << " " << to_string(p.dtype) << " " << to_string(p.layout) << " group "
                         << g << ": " << *failed;
  }
}

std::vector<Problem> groups_of(const std::vector<int64_t>& sizes, char which, int64_t a, int64_t b, Layout layout,
                               DType dtype) {
  std::vector<Problem> out;
  for (int64_t s : sizes)
    out.push_back(which == 'm' ? packed(s, a, b, layout, dtype) : packed(a, b, s, layout, dtype));
  return out;
}

TEST(GroupedBackend, EachGroupMatchesCublasGemmEx) {
  SKIP_WITHOUT_GPU();
  const std::vector<int64_t> rows = {129, 64, 1, 200, 7};  // uneven routing, an expert with one token
  for (DType dtype : {DType::kBf16, DType::kFp16, DType::kFp32, DType::kTf32}) {
    // Forward (nt) and input gradient (nn): M per expert; weight gradient (tn): K per expert.
    expect_groups_match(grouped_problem(groups_of(rows, 'm', 96, 72, Layout::kNT, dtype)));
    expect_groups_match(grouped_problem(groups_of(rows, 'm', 72, 96, Layout::kNN, dtype)));
    expect_groups_match(grouped_problem(groups_of(rows, 'k', 96, 72, Layout::kTN, dtype)));
    // K x 2 bytes not a multiple of 4 (odd K): the pointer rule asks nothing, the call must still be right.
    expect_groups_match(grouped_problem(groups_of({33, 17}, 'm', 40, 33, Layout::kNT, dtype)));
  }
}

TEST(GroupedBackend, AnOrdinaryProblemRunsAsOneGroupOfItsBatch) {
  SKIP_WITHOUT_GPU();
  Problem p = packed(127, 129, 64, Layout::kNN, DType::kBf16);
  p.batch = 3;
  p.off_a = p.off_b = 8;  // 16 bytes: allowed
  expect_groups_match(p);
}

TEST(GroupedBackend, MoeSizedExpertsMatch) {
  SKIP_WITHOUT_GPU();
  // One Mixtral-8x7B w1 forward at 8192 tokens, top-2, slightly uneven routing.
  expect_groups_match(grouped_problem(groups_of({2100, 2000, 2048, 1996, 2040, 2056, 2048, 2096}, 'm', 14336, 4096,
                                                Layout::kNT, DType::kBf16)));
}

// The engine times every call inside a CUDA graph (thread-local capture, then replays): the grouped
// call must capture, and the replay must compute what a direct call computes.
TEST(GroupedBackend, CapturesIntoACudaGraphAndReplays) {
  SKIP_WITHOUT_GPU();
  const Problem p = grouped_problem(groups_of({300, 17, 1024}, 'm', 512, 256, Layout::kNT, DType::kBf16));
  testing::FilledBuffers memory({p}, 11);
  auto grouped = make_backend(BackendSpec(BackendKind::kCublasGrouped), memory.buf, 1);
  std::string why;
  auto calls = grouped->prepare(p, grouped->algo_keys(), why);
  ASSERT_EQ(calls.size(), 1u) << why;
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  calls[0].call->enqueue(stream);  // outside a capture first, as the engine's warm-up does
  CHECK_CUDA(cudaStreamSynchronize(stream));
  const size_t c_bytes = size_t(p.c_span() * output_bytes(p.dtype));
  std::vector<unsigned char> direct(c_bytes), replayed(c_bytes);
  CHECK_CUDA(cudaMemcpy(direct.data(), memory.buf.c, c_bytes, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemset(memory.buf.c, 0, c_bytes));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  calls[0].call->enqueue(stream);
  CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 3; ++i) CHECK_CUDA(cudaGraphLaunch(exec, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  CHECK_CUDA(cudaMemcpy(replayed.data(), memory.buf.c, c_bytes, cudaMemcpyDeviceToHost));
  EXPECT_TRUE(direct == replayed) << "the graph replay wrote another C than the direct call";
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

// Refusals need no GPU: fp8, pointers the documentation's alignment rule forbids.
TEST(GroupedBackend, RefusesWhatTheCallCannotTake) {
  DeviceBuffers none;
  auto grouped = make_backend(BackendSpec(BackendKind::kCublasGrouped), none, 1);
  DeviceContext h100;
  Problem p = packed(64, 64, 64, Layout::kNT, DType::kFp8);
  EXPECT_EQ(grouped->unsupported(p, h100), "cublasGemmGroupedBatchedEx has no fp8");
  p.dtype = DType::kBf16;
  EXPECT_FALSE(grouped->unsupported(p, h100));
  p.off_a = 4;  // 8 bytes: K x 2 = 128 bytes needs 16-byte pointers
  EXPECT_EQ(grouped->unsupported(p, h100),
            "cublasGemmGroupedBatchedEx needs 16-byte aligned pointers when K x 2 bytes (128) is a multiple of 16; "
            "A's offset of 4 elements is 8 bytes");
  // The single-GEMM backends refuse a grouped call, naming the one that runs it.
  auto cublas = make_backend(BackendSpec(BackendKind::kCublas), none, 1);
  const Problem g = grouped_problem({packed(8, 8, 8, Layout::kNT, DType::kBf16), packed(9, 8, 8, Layout::kNT, DType::kBf16)});
  EXPECT_EQ(cublas->unsupported(g, h100),
            "a grouped call (2 groups) runs only on --backend cublas_grouped or custom:05_wgmma_tma:<BMxBN>:grouped");
}

}  // namespace
}  // namespace shapescope
