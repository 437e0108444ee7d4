// The kernels read from a captured graph (trace/graph_kernels.hpp) against CUPTI's records of the
// same call launched eagerly: the sweep annotates from the graph and asks CUPTI only where a call
// launches several kernels, so the two must name the same kernels with the same launch.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "common/check.hpp"
#include "device/device.hpp"
#include "gpu_test_util.hpp"
#include "timing/device_kernels.hpp"
#include "trace/graph_kernels.hpp"
#include "trace/kernel_trace.hpp"

namespace shapescope {
namespace {

struct Case {
  std::string backend, algo;
  int64_t m, n, k;
  DType dtype = DType::kBf16;
  Layout layout = Layout::kNN;
};

Problem make(const Case& c) {
  Problem p;
  p.m = c.m;
  p.n = c.n;
  p.k = c.k;
  p.dtype = c.dtype;
  p.layout = c.layout;
  p.lda = p.a_cols();
  p.ldb = p.b_cols();
  p.ldc = p.n;
  return p;
}

std::string text(const KernelRecord& k) {
  std::ostringstream out;
  out << k.name << " grid " << k.grid_x << "x" << k.grid_y << "x" << k.grid_z << " block " << k.block_x << "x"
      << k.block_y << "x" << k.block_z << " cluster " << k.cluster_x << "x" << k.cluster_y << "x" << k.cluster_z
      << " regs " << k.registers << " smem " << k.static_smem << "+" << k.dynamic_smem;
  return out.str();
}

TEST(GraphKernels, NameTheKernelsCuptiSees) {
  SKIP_WITHOUT_GPU();
  const DeviceContext device = query_device(0);
  std::vector<Case> cases = {
      {"cublas", "default", 1, 1, 1},          {"cublas", "default", 61, 61, 61},
      {"cublas", "default", 1793, 1793, 1793}, {"cublas", "default", 4096, 4096, 4096},
      {"cublas", "default", 64, 64, 16384},    {"cublas", "default", 128, 96, 30000},
      {"cublas", "default", 1000, 1000, 1000, DType::kFp32},
      {"cublas", "default", 768, 3072, 1024, DType::kBf16, Layout::kTN},
      {"cublaslt", "h0", 2048, 2048, 2048},    {"cublaslt", "h2", 2048, 2048, 2048},
      {"cublaslt", "h0", 32, 32, 32768},
  };
  if (device.cc_major == 9) cases.push_back({"custom:05_wgmma_tma:128x256", "", 2048, 2048, 2048});
  cases.push_back({"custom:04_mma_pipelined:128x128", "", 1024, 1024, 1024});
  DeviceBuffers buf;
  const int64_t elements = 32 << 20;
  CHECK_CUDA(cudaMalloc(&buf.a, size_t(elements * 4)));
  CHECK_CUDA(cudaMalloc(&buf.b, size_t(elements * 4)));
  CHECK_CUDA(cudaMalloc(&buf.c, size_t(elements * 4)));
  buf.workspace_bytes = 32 << 20;
  CHECK_CUDA(cudaMalloc(&buf.workspace, size_t(buf.workspace_bytes)));
  fill_normal(buf.a, elements, DType::kFp32, false, 1, nullptr);
  fill_normal(buf.b, elements, DType::kFp32, false, 2, nullptr);
  GraphKernels graphs;
  int several = 0;
  for (const Case& c : cases) {
    const Problem p = make(c);
    auto backend = make_backend(parse_backend_spec(c.backend), buf, 4);
    ASSERT_FALSE(backend->unsupported(p, device).has_value()) << c.backend << " " << p.shape_string();
    const std::string algo = c.algo.empty() ? backend->algo_keys().front() : c.algo;
    std::string why;
    auto calls = backend->prepare(p, {algo}, why);
    ASSERT_EQ(calls.size(), 1u) << c.backend << " " << algo << " " << p.shape_string() << ": " << why;
    GemmCall& call = *calls.front().call;
    const std::vector<KernelRecord> from_graph = graphs.of(call);
    std::vector<KernelRecord> from_cupti;
    {
      KernelTrace trace;
      trace.push(7);
      call.enqueue(nullptr);
      trace.pop();
      from_cupti = trace.collect()[7];
    }
    const std::string label = c.backend + " " + algo + " " + p.shape_string() + " " + std::string(to_string(p.dtype));
    ASSERT_FALSE(from_cupti.empty()) << label;
    ASSERT_EQ(from_graph.size(), from_cupti.size()) << label;
    if (from_graph.size() > 1) ++several;
    for (size_t i = 0; i < from_graph.size(); ++i) {
      EXPECT_EQ(text(from_graph[i]), text(from_cupti[i])) << label << " kernel " << i;
      EXPECT_EQ(from_graph[i].duration_us, 0.0) << "a graph has no durations";
    }
    std::cout << label << ": " << from_graph.size() << " kernel(s), first " << text(from_graph.front()) << "\n";
  }
  std::cout << several << " of " << cases.size() << " calls launched several kernels\n";
  cudaFree(buf.a);
  cudaFree(buf.b);
  cudaFree(buf.c);
  cudaFree(buf.workspace);
}

}  // namespace
}  // namespace shapescope
