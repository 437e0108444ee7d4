// Our grouped kernel (05_wgmma_tma's grouped schedule: one persistent launch over every group's
// tiles) against cuBLAS: each group's C against cublasGemmEx of that group on the same operands,
// for nn and nt, uneven groups (one row, 137 rows, tiles cut by a group's end) and small odd sizes,
// and for the weight gradient's tn (K per group: 1, 63, 64, 65, 137 ... tokens; per-group TMA maps);
// the measure pipeline's verification (against cublas_grouped) and timing of a grouped call; and
// the graph capture the engine times it in. Needs an sm_90 GPU and a build with sm_90a code.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <vector>

#include "backends/backend.hpp"
#include "backends/variants.hpp"
#include "common/check.hpp"
#include "core/backend_kind.hpp"
#include "device/device.hpp"
#include "gpu_test_util.hpp"
#include "kernels/registry.hpp"
#include "measure/measure.hpp"
#include "measure/verify.hpp"
#include "model/workload.hpp"
#include "store/store.hpp"
#include "timing/device_kernels.hpp"

namespace shapescope {
namespace {

namespace fs = std::filesystem;

const char* const kGroupedVariants[] = {"05_wgmma_tma:128x256:grouped", "05_wgmma_tma:128x128:grouped"};

// Our kernel's variant of this key as a backend.
BackendSpec ours(const std::string& key) { return parse_backend_spec("custom:" + key); }

// Why this GPU or build cannot run the grouped kernel, or "".
std::string cannot_run() {
  const DeviceContext device = query_device(0);
  const kernels::Variant* v = kernels::find_variant(kGroupedVariants[0]);
  std::string why = kernels::unsupported_gpu(*v, device.cc_major * 10 + device.cc_minor);
  if (why.empty()) why = kernels::missing_code(*v);
  return why;
}

#define SKIP_WITHOUT_SM90()                                     \
  do {                                                          \
    SKIP_WITHOUT_GPU();                                         \
    if (const std::string why = cannot_run(); !why.empty()) GTEST_SKIP() << why; \
  } while (0)

// An MoE call: rows[g] tokens for expert g, N x K weights, packed bf16.
Problem moe_call(const std::vector<int64_t>& rows, int64_t n, int64_t k, Layout layout) {
  std::vector<Problem> groups;
  for (int64_t m : rows) groups.push_back(packed_problem(m, n, k, layout, DType::kBf16));
  return grouped_problem(groups);
}

// 60 experts of 1 .. 300 tokens (a fixed pseudo-random routing; 1 and 137 among them).
std::vector<int64_t> uneven_60() {
  std::vector<int64_t> rows;
  uint32_t x = 12345;
  for (int g = 0; g < 60; ++g) {
    x = x * 1664525u + 1013904223u;
    rows.push_back(1 + int64_t(x >> 8) % 300);
  }
  rows[3] = 1;
  rows[7] = 137;
  rows[59] = 300;
  return rows;
}

// An MoE layer's weight-gradient call: k[g] tokens for expert g, an M x N gradient each (A_g stored
// K_g x M, B_g K_g x N), packed bf16.
Problem wgrad_call(const std::vector<int64_t>& k, int64_t m, int64_t n) {
  std::vector<Problem> groups;
  for (int64_t kg : k) groups.push_back(packed_problem(m, n, kg, Layout::kTN, DType::kBf16));
  Problem p = grouped_problem(groups);
  // (grouped_problem() keeps a single problem as it is: a grouped call of one group is written so)
  if (!p.grouped()) p.groups = {GroupShape{p.m, p.n, p.k, p.lda, p.ldb, p.ldc}};
  return p;
}

// 60 experts' tokens, 1 .. 300, with the K-block edges among them: 1, 63, 64, 65, 137 and 300.
std::vector<int64_t> uneven_k_60() {
  std::vector<int64_t> k = uneven_60();
  k[10] = 63;
  k[11] = 64;
  k[12] = 65;
  return k;
}

std::unique_ptr<GemmCall> prepared(Backend& backend, const Problem& p, const std::string& algo) {
  std::string why;
  auto calls = backend.prepare(p, {algo}, why);
  if (calls.size() != 1) ADD_FAILURE() << algo << " " << p.shape_string() << ": not prepared: " << why;
  return calls.empty() ? nullptr : std::move(calls.front().call);
}

// Our grouped call against cublasGemmEx group by group (each check runs cuBLAS on the group, then our
// whole call, and compares that group's C), then against the cublas_grouped call as measure() does.
void expect_matches_cublas(const std::string& variant, const Problem& p) {
  testing::FilledBuffers memory({p}, 21);
  const DeviceContext device = query_device(0);
  auto custom = make_backend(ours(variant), memory.buf, 1);
  ASSERT_FALSE(custom->unsupported(p, device)) << *custom->unsupported(p, device);
  ASSERT_EQ(custom->algo_keys_for(p), std::vector<std::string>{variant});
  auto ours = prepared(*custom, p, variant);
  ASSERT_TRUE(ours);
  auto cublas = make_backend(BackendSpec(BackendKind::kCublas), memory.buf, 1);
  for (size_t g = 0; g < p.groups.size(); ++g) {
    Problem q = p.group(g);
    q.off_a = p.group_a_start(g);
    q.off_b = p.group_b_start(g);
    q.off_c = p.group_c_start(g);
    auto reference = prepared(*cublas, q, "default");
    ASSERT_TRUE(reference);
    const std::optional<std::string> failed = verify_against(*ours, *reference, q, memory.buf);
    EXPECT_FALSE(failed) << variant << " " << to_string(p.layout) << " " << p.shape_string() << " group " << g
                         << " (" << q.m << " rows): " << *failed;
    if (failed) return;  // one group's message is enough
  }
  auto grouped = make_backend(BackendSpec(BackendKind::kCublasGrouped), memory.buf, 1);
  auto reference = prepared(*grouped, p, "default");
  ASSERT_TRUE(reference);
  const std::optional<std::string> failed = verify_against(*ours, *reference, p, memory.buf);
  EXPECT_FALSE(failed) << variant << " against cublas_grouped: " << *failed;
}

TEST(GroupedKernel, EachGroupMatchesCublas) {
  SKIP_WITHOUT_SM90();
  for (const char* variant : kGroupedVariants)
    for (Layout layout : {Layout::kNN, Layout::kNT}) {
      // An MoE layer's forward (nt) and input gradient (nn) at Qwen-MoE-like sizes.
      expect_matches_cublas(variant, moe_call(uneven_60(), 1408, 2048, layout));
      // Small odd sizes: N and K not multiples of the tile (TMA's zero fill per group), tiny groups.
      expect_matches_cublas(variant, moe_call({5, 1, 137, 64, 129, 3}, 200, 72, layout));
      // One group is an ordinary problem written as a grouped call.
      Problem one = moe_call({300}, 200, 72, layout);
      one.groups = {GroupShape{one.m, one.n, one.k, one.lda, one.ldb, one.ldc}};
      expect_matches_cublas(variant, one);
    }
}

// The weight gradient (tn): each tile runs its own group's K-blocks through that group's TMA maps,
// which fill zeros past K_g (a group's last K-block must not add the next group's rows), past M and
// past N; A is MN-major in shared memory (wgmma's transpose-A bit).
TEST(GroupedKernel, WeightGradientTnEachGroupMatchesCublas) {
  SKIP_WITHOUT_SM90();
  for (const char* variant : kGroupedVariants) {
    // Small M and N, 60 uneven groups: every K-block edge.
    expect_matches_cublas(variant, wgrad_call(uneven_k_60(), 512, 384));
    // Odd M and N (TMA's zero fill along M and N; C rows stored up to each group's M), K < 64.
    expect_matches_cublas(variant, wgrad_call({1, 63, 64, 65, 137, 300, 2}, 200, 72));
    // One group of K 1.
    expect_matches_cublas(variant, wgrad_call({1}, 136, 264));
    // Qwen1.5-MoE's two weight-gradient calls (60 experts).
    expect_matches_cublas(variant, wgrad_call(uneven_k_60(), 2048, 1408));
    expect_matches_cublas(variant, wgrad_call(uneven_k_60(), 2816, 2048));
  }
}

// The engine times calls inside CUDA graphs: the grouped launch must capture (its group table is a
// kernel parameter, baked into the graph) and the replay must write what the direct call wrote.
void expect_capture_replays_direct_call(const Problem& p) {
  testing::FilledBuffers memory({p}, 21);
  auto custom = make_backend(ours(kGroupedVariants[0]), memory.buf, 1);
  // measure() asks unsupported() first, which tells the backend the GPU's compute capability.
  ASSERT_FALSE(custom->unsupported(p, query_device(0)));
  auto call = prepared(*custom, p, kGroupedVariants[0]);
  ASSERT_TRUE(call);
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  call->enqueue(stream);
  CHECK_CUDA(cudaStreamSynchronize(stream));
  const size_t c_bytes = size_t(p.c_span() * 2);
  std::vector<unsigned char> direct(c_bytes), replayed(c_bytes);
  CHECK_CUDA(cudaMemcpy(direct.data(), memory.buf.c, c_bytes, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemset(memory.buf.c, 0, c_bytes));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  call->enqueue(stream);
  CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 3; ++i) CHECK_CUDA(cudaGraphLaunch(exec, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  CHECK_CUDA(cudaMemcpy(replayed.data(), memory.buf.c, c_bytes, cudaMemcpyDeviceToHost));
  EXPECT_TRUE(direct == replayed) << to_string(p.layout) << " " << p.shape_string()
                                  << ": the graph replay wrote another C than the direct call";
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

TEST(GroupedKernel, CapturesIntoACudaGraphAndReplays) {
  SKIP_WITHOUT_SM90();
  expect_capture_replays_direct_call(moe_call({300, 17, 1024, 1}, 512, 256, Layout::kNT));
  // tn: the per-group TMA maps were copied to the device when the call was prepared; the captured
  // launch reads them there.
  expect_capture_replays_direct_call(wgrad_call({300, 17, 1024, 1, 64}, 512, 256));
}

struct TempStore : testing::TempStore {
  TempStore() : testing::TempStore("grouped_kernel") {}
};

// measure() of one grouped call with our 128x256 grouped variant, 5 samples, no warm-up.
MeasureRequest grouped_request(const Problem& call) {
  MeasureRequest request;
  request.problems = {call};
  request.backends = {ours(kGroupedVariants[0])};
  request.measure.samples = 5;
  request.measure.warmup_ms = 0;
  return request;
}

// `--backend custom:05_wgmma_tma:128x256:grouped` through measure(): the call is verified (against
// cublas_grouped), timed and stored under its variant; `--backend custom` on the same grouped call
// measures the grouped variants only, and on an ordinary problem none of them (no skip line per
// grouped variant).
TEST(GroupedKernel, MeasureVerifiesAndTimesAGroupedCall) {
  SKIP_WITHOUT_SM90();
  const DeviceContext device = query_device(0);
  TempStore temp;
  Store store(temp.path.string());
  const MeasureRequest request = grouped_request(moe_call(uneven_60(), 1408, 2048, Layout::kNT));
  const MeasureOutcome outcome = measure(request, device, store, {}, nullptr);
  EXPECT_TRUE(outcome.skipped.empty()) << outcome.skipped.front();
  ASSERT_EQ(outcome.points.size(), 1u);
  EXPECT_EQ(outcome.points[0].key.backend, BackendKind::kCustom);
  EXPECT_EQ(outcome.points[0].key.algo, kGroupedVariants[0]);
  EXPECT_TRUE(outcome.points[0].key.problem == request.problems[0]);
  EXPECT_GT(outcome.points[0].result.timing.median_us, 0);

  MeasureRequest all = request;
  all.backends = {BackendSpec(BackendKind::kCustom)};
  all.problems.push_back(packed_problem(512, 512, 512, Layout::kNT, DType::kBf16));
  const MeasureOutcome broad = measure(all, device, store, {}, nullptr);
  for (const std::string& line : broad.skipped)
    EXPECT_EQ(line.find(":grouped"), std::string::npos) << "a grouped variant skipped on an ordinary problem: " << line;
  size_t grouped_points = 0;
  for (const StoredPoint& p : broad.points) {
    const bool grouped_variant = p.key.algo.find(":grouped") != std::string::npos;
    EXPECT_EQ(grouped_variant, p.key.problem.grouped()) << p.key.algo << " " << p.key.problem.shape_string();
    grouped_points += grouped_variant;
  }
  EXPECT_EQ(grouped_points, 2u) << "128x256 and 128x128 grouped on the grouped call";
}

// The weight gradient (tn) through measure(): verified against cublas_grouped, timed, stored.
TEST(GroupedKernel, MeasureVerifiesAndTimesATnGroupedCall) {
  SKIP_WITHOUT_SM90();
  const DeviceContext device = query_device(0);
  TempStore temp;
  Store store(temp.path.string());
  const MeasureRequest request = grouped_request(wgrad_call(uneven_k_60(), 2048, 1408));
  const MeasureOutcome outcome = measure(request, device, store, {}, nullptr);
  EXPECT_TRUE(outcome.skipped.empty()) << outcome.skipped.front();
  ASSERT_EQ(outcome.points.size(), 1u);
  EXPECT_EQ(outcome.points[0].key.algo, kGroupedVariants[0]);
  EXPECT_GT(outcome.points[0].result.timing.median_us, 0);
}

// The grouped kernels' (nn, nt: gemm_grouped; tn: gemm_grouped_k) shared memory is the registry's;
// their registers and local memory (spills) are printed.
TEST(GroupedKernel, RegistryMatchesTheCompiledKernels) {
  SKIP_WITHOUT_SM90();
  for (const char* key : kGroupedVariants)
    for (Layout layout : {Layout::kNN, Layout::kNT, Layout::kTN}) {
      const kernels::Variant* v = kernels::find_variant(key);
      const kernels::KernelAttributes attr = kernels::kernel_attributes(*v, layout);
      EXPECT_EQ(attr.static_smem_bytes, v->smem_bytes) << key;
      EXPECT_EQ(attr.dynamic_smem_bytes, v->dynamic_smem_bytes) << key;
      EXPECT_GE(attr.max_threads_per_block, v->threads) << key;
      std::cerr << key << " " << to_string(layout) << ": " << attr.registers_per_thread
                << " registers/thread, " << attr.local_bytes_per_thread << " B local memory/thread\n";
    }
}

}  // namespace
}  // namespace shapescope
